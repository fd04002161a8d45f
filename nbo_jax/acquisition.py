"""Acquisition functions: plain, composable functions of a surrogate posterior.

An acquisition function has the signature ``acq(post: SurrogatePosterior, key) -> (N,)``
and returns a utility to **maximize** (BoTorch's convention) for a **minimization**
problem. The factories below close over their parameters (optax style); parameters may be
Python floats or traced arrays (so ``nu`` can be vmapped). Compose with ordinary arithmetic
inside a lambda, or with :func:`weighted_sum`::

    acq = nbo.acquisition.weighted_sum([(1.0, nbo.acquisition.ei()),
                                        (0.1, nbo.acquisition.lcb(2.0))])
    algo = nbo.neural_bo(acquisition=acq)

**One meaning of ``beta``.** Every confidence bound here is ``mean -/+ sqrt(beta) * std``
(Srinivas et al. 2010, GP-UCB: ``mu + beta_t^{1/2} sigma``; BoTorch's
``UpperConfidenceBound(beta)``): ``lcb(beta)``/``ucb(beta)``, :func:`lcb_feasible`,
:func:`lcb_violation` and :func:`constrained_ei`. ``beta = 1`` is one standard deviation,
``beta = 4`` two. ``nu`` (Thompson sampling, the ``std`` inside constrained EI) multiplies
``std`` directly.
"""

from __future__ import annotations

import math
from typing import Sequence

import jax
import jax.numpy as jnp
from jax.scipy.special import erfcx, log_ndtr, ndtr

from .base import AcquisitionFn, SurrogatePosterior  # noqa: F401 - the contract (nbo_jax.base)
from .pareto import nondominated_partitioning

Array = jax.Array


CONSTRAINTS = ("constraint_mean", "constraint_std")
"""The ``requires`` of the constrained acquisitions: they read the constraints' posterior."""


def _number(factory: str, **params) -> None:
    """Raise ``TypeError`` naming ``factory`` and the argument unless each value is a real
    number or a numeric array (traced ones included)."""
    for name, value in params.items():
        dtype = getattr(value, "dtype", None)
        if isinstance(value, (list, tuple)):  # per-constraint values, (K,)
            try:
                dtype = jnp.asarray(value).dtype
            except (TypeError, ValueError):
                dtype = None
        ok = (isinstance(value, (int, float)) and not isinstance(value, bool)) or (
            dtype is not None and jnp.issubdtype(dtype, jnp.number) and not jnp.issubdtype(dtype, jnp.complexfloating))
        if not ok:
            raise TypeError(f"{factory}: {name} must be a real number or a numeric array, got "
                            f"{type(value).__name__} {value!r}")


def thompson(nu=1.0) -> AcquisitionFn:
    """Thompson sampling, independent per candidate (Phan-Trong et al. 2023, Neural-BO,
    Algorithm 1, lines 3-4):
    ``f~(x) ~ N(mean, nu^2 std^2)``; utility ``-f~(x)`` (so the argmax is ``argmin f~``).

    Raises:
        TypeError: ``nu`` is not a number or a numeric array."""
    _number("thompson", nu=nu)

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        eps = jax.random.normal(key, post.mean.shape, post.mean.dtype)
        return -(post.mean + nu * post.std * eps)

    return acq


def lcb(beta=2.0) -> AcquisitionFn:
    """Lower confidence bound for minimization: utility ``-(mean - sqrt(beta) std)``.

    GP-UCB's optimistic rule (Srinivas et al. 2010: ``mu + beta^{1/2} sigma``) written for
    minimization; ``lcb(beta)`` ranks points exactly as BoTorch's
    ``UpperConfidenceBound(beta)`` on the negated objective. ``beta >= 0`` (a float or a
    traced array); a rule written as ``mean - nu std`` is ``lcb(nu ** 2)``.

    Raises:
        TypeError: ``beta`` is not a number or a numeric array."""
    _number("lcb", beta=beta)

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        return -(post.mean - jnp.sqrt(beta) * post.std)

    return acq


ucb = lcb
"""``ucb(beta)``: the papers' UCB (maximization) in minimization form, i.e. :func:`lcb`
(``mean - sqrt(beta) std`` minimized)."""


def thompson_sampling() -> AcquisitionFn:
    """Thompson sampling on the surrogate's own posterior draw (Thompson 1933; Chowdhury &
    Gopalan 2017 for the GP, Kandasamy et al. 2018): utility ``-f~(u)`` with ``f~`` the draw
    in :attr:`SurrogatePosterior.sample` (one per ask). It reads ``sample``
    (``requires = ("sample",)``), so it runs with the surrogates that draw one: a GP's joint
    draw over the raw samples (scored, not climbed), or a pathwise draw of a weight-space model
    (climbed). For independent draws per point from the marginals use :func:`thompson`."""

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        return -post.sample

    acq.requires = ("sample",)
    return acq


def greedy() -> AcquisitionFn:
    """Posterior mean only (NeuralGreedy, PINN-BO): utility ``-mean``."""

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        return -post.mean

    return acq


def expected_improvement(mean: Array, std: Array, best: Array) -> Array:
    """EI for minimization (Jones et al. 1998): ``std (z Phi(z) + phi(z))``,
    ``z = (best - mean) / std``; equals ``max(best - mean, 0)`` where ``std == 0``.
    Never negative."""
    safe = jnp.where(std > 0, std, 1.0)
    z = (best - mean) / safe
    ei_pos = safe * (z * ndtr(z) + jnp.exp(-0.5 * z * z) / jnp.sqrt(2 * jnp.pi))
    return jnp.maximum(jnp.where(std > 0, ei_pos, jnp.maximum(best - mean, 0.0)), 0.0)


_LOG_2PI_HALF = 0.5 * math.log(2.0 * math.pi)
_LOG_PI_2_HALF = 0.5 * math.log(math.pi / 2.0)


def _log1mexp(a: Array) -> Array:
    """``log(1 - exp(a))`` for ``a < 0``, accurate at both ends (Maechler 2012)."""
    return jnp.where(a > -math.log(2.0), jnp.log(-jnp.expm1(a)), jnp.log1p(-jnp.exp(a)))


def log_h(z: Array) -> Array:
    """``log(phi(z) + z Phi(z))`` computed without underflow for very negative ``z`` (Ament
    et al. 2023, "Unexpected improvements to expected improvement for Bayesian
    optimization", NeurIPS, eq. 9): the direct formula for ``z > -1``; below, ``-z^2/2 -
    log(2 pi)/2 + log1mexp(log(erfcx(-z/sqrt2) |z|) + log(pi/2)/2)``; below ``-1/sqrt(eps)``
    the asymptote ``-z^2/2 - log(2 pi)/2 - 2 log|z|``. Each branch sees only inputs in its
    range (double ``where``), so values and gradients are finite everywhere."""
    tail = -1.0 / math.sqrt(float(jnp.finfo(z.dtype).eps))
    is_hi, is_mid = z > -1.0, (z <= -1.0) & (z > tail)
    z_hi = jnp.where(is_hi, z, 0.0)
    direct = jnp.log(z_hi * ndtr(z_hi) + jnp.exp(-0.5 * z_hi * z_hi - _LOG_2PI_HALF))
    z_mid = jnp.where(is_mid, z, -2.0)
    mid = (-0.5 * z_mid * z_mid - _LOG_2PI_HALF
           + _log1mexp(jnp.log(erfcx(-z_mid / math.sqrt(2.0)) * jnp.abs(z_mid)) + _LOG_PI_2_HALF))
    z_lo = jnp.where(is_hi | is_mid, 2.0 * tail, z)
    asym = -0.5 * z_lo * z_lo - _LOG_2PI_HALF - 2.0 * jnp.log(jnp.abs(z_lo))
    return jnp.where(is_hi, direct, jnp.where(is_mid, mid, asym))


def log_expected_improvement(mean: Array, std: Array, best: Array) -> Array:
    """``log EI`` for minimization, ``log(std) + log_h((best - mean) / std)`` (Ament et al.
    2023, LogEI; BoTorch's ``LogExpectedImprovement``): finite with useful gradients where
    EI itself underflows to 0. Where ``std == 0`` it is ``log(max(best - mean, 0))``
    (``-inf`` when no improvement is possible)."""
    pos = std > 0
    safe = jnp.where(pos, std, 1.0)
    z = (best - mean) / safe
    gap = best - mean
    at_zero = jnp.where(gap > 0, jnp.log(jnp.where(gap > 0, gap, 1.0)), -jnp.inf)
    return jnp.where(pos, jnp.log(safe) + log_h(z), at_zero)


def ei(xi=0.0) -> AcquisitionFn:
    """Expected improvement over ``incumbent - xi`` (minimization form).

    Raises:
        TypeError: ``xi`` is not a number or a numeric array."""
    _number("ei", xi=xi)

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        return expected_improvement(post.mean, post.std, post.incumbent - xi)

    return acq


def log_ei(xi=0.0) -> AcquisitionFn:
    """``log EI`` over ``incumbent - xi`` (:func:`log_expected_improvement`; Ament et al.
    2023): ranks like EI, and still ranks (and has gradients) where EI underflows.

    Raises:
        TypeError: ``xi`` is not a number or a numeric array."""
    _number("log_ei", xi=xi)

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        return log_expected_improvement(post.mean, post.std, post.incumbent - xi)

    return acq


def pi(xi=0.0) -> AcquisitionFn:
    """Probability of improvement ``Phi((incumbent - xi - mean) / std)`` (minimization).

    Raises:
        TypeError: ``xi`` is not a number or a numeric array."""
    _number("pi", xi=xi)

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        safe = jnp.where(post.std > 0, post.std, 1.0)
        z = (post.incumbent - xi - post.mean) / safe
        return jnp.where(post.std > 0, ndtr(z), (post.mean < post.incumbent - xi).astype(post.mean.dtype))

    return acq


def _constraints_of(post: SurrogatePosterior, who: str) -> tuple[Array, Array]:
    if post.constraint_mean is None or post.constraint_std is None:
        raise ValueError(f"{who} needs a constrained surrogate (posterior.constraint_mean/std are None); "
                         "use it with a constrained algorithm such as nbo.neural_cbo()")
    return post.constraint_mean, post.constraint_std


def lcb_violation(post: SurrogatePosterior, beta=1.0) -> Array:
    """Total optimistic violation ``sum_k [mean_k - sqrt(beta_k) std_k]^+``, ``(N,)``; 0
    exactly where every constraint's lower confidence bound is ``<= 0`` (Neural-CBO's
    feasibility test, thesis eq. 4.5 and Algorithm 4, line 4). ``beta >= 0`` is a scalar or
    ``(K,)``; the bound is ``mean - sqrt(beta) std`` as in :func:`lcb`."""
    cm, cs = _constraints_of(post, "lcb_violation")
    return jnp.sum(jnp.maximum(cm - jnp.sqrt(beta) * cs, 0.0), axis=-1)


def probability_of_feasibility(post: SurrogatePosterior) -> Array:
    """``prod_k Phi(-mean_k / std_k)``, ``(N,)``: the chance that every constraint is
    ``<= 0`` under independent Gaussian posteriors (Gardner et al. 2014, eq. 5); where
    ``std_k = 0`` the factor is ``1[mean_k <= 0]``."""
    cm, cs = _constraints_of(post, "probability_of_feasibility")
    safe = jnp.where(cs > 0, cs, 1.0)
    p = jnp.where(cs > 0, ndtr(-cm / safe), (cm <= 0).astype(cm.dtype))
    return jnp.prod(p, axis=-1)


def _feasible_first(score: Array, violation: Array) -> Array:
    """Utility that ranks the candidates with ``violation == 0`` by ``score`` and, when there
    are none, every candidate by ``-violation`` (the smallest-violation fallback)."""
    ok = violation <= 0.0
    return jnp.where(jnp.any(ok), jnp.where(ok, score, -jnp.inf), -violation)


def constrained_ei(beta=1.0, nu=1.0, approx_error=0.0) -> AcquisitionFn:
    """Neural-CBO's rule (thesis Ch. 4, Algorithm 4, line 4), minimization form:
    maximize ``EI(x) = rho(incumbent - mean(x) + E, nu std(x))`` over the candidates whose
    constraint LCBs ``mean_k - sqrt(beta_k) std_k - E`` are all ``<= 0``; ``rho(u, s) =
    u Phi(u/s) + s phi(u/s)`` (``max(u, 0)`` at ``s = 0``). When no candidate passes, the
    utility is ``-sum_k [LCB_k]^+`` (library decision: the smallest total LCB violation;
    the authors' code takes a random candidate). An infinite ``incumbent`` (no reference
    value) makes the utility ``nu * std`` on the LCB-feasible candidates.

    Args:
        beta: constraint confidence parameter ``beta_k >= 0`` (scalar or ``(K,)``; the
            thesis's ``beta_{c_i,t}`` of Lemma 4.1.5, treated as a parameter); the bound is
            ``mean_k - sqrt(beta_k) std_k`` as in :func:`lcb` (``beta = 1``: one std).
        nu: scale of the objective's ``sigma`` inside EI (multiplies ``std`` directly).
        approx_error: the network approximation term ``E(m)/(T+1)`` (thesis Corollary 4.1.6);
            0 by default.

    Raises:
        TypeError: an argument that is not a number or a numeric array.
    """
    _number("constrained_ei", beta=beta, nu=nu, approx_error=approx_error)

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        cm, cs = _constraints_of(post, "constrained_ei")
        viol = jnp.sum(jnp.maximum(cm - jnp.sqrt(beta) * cs - approx_error, 0.0), axis=-1)
        finite = jnp.isfinite(post.incumbent)
        best = jnp.where(finite, post.incumbent, 0.0)
        ei_val = expected_improvement(post.mean, nu * post.std, best + approx_error)
        # no incumbent (nothing observed yet): explore, largest sigma among the LCB-feasible
        return _feasible_first(jnp.where(finite, ei_val, nu * post.std), viol)

    acq.requires = CONSTRAINTS
    return acq


def cei(xi=0.0) -> AcquisitionFn:
    """Constrained EI (Gardner et al. 2014, eq. 6): ``EI(x) * prod_k P(c_k(x) <= 0)`` with
    the incumbent the best feasible observation; with no feasible observation yet
    (``incumbent = inf``) the utility is the probability of feasibility alone (Gardner et
    al. 2014, Section 3).

    Raises:
        TypeError: ``xi`` is not a number or a numeric array."""
    _number("cei", xi=xi)

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        pof = probability_of_feasibility(post)
        finite = jnp.isfinite(post.incumbent)
        best = jnp.where(finite, post.incumbent, 0.0)
        return jnp.where(finite, expected_improvement(post.mean, post.std, best - xi) * pof, pof)

    acq.requires = CONSTRAINTS
    return acq


def log_probability_of_feasibility(post: SurrogatePosterior) -> Array:
    """``log`` of :func:`probability_of_feasibility`, ``sum_k log Phi(-mean_k / std_k)``,
    ``(N,)``, without underflow (``log_ndtr``); where ``std_k = 0`` the term is 0 or
    ``-inf``."""
    cm, cs = _constraints_of(post, "log_probability_of_feasibility")
    safe = jnp.where(cs > 0, cs, 1.0)
    term = jnp.where(cs > 0, log_ndtr(-cm / safe), jnp.where(cm <= 0, 0.0, -jnp.inf))
    return jnp.sum(term, axis=-1)


def log_cei(xi=0.0) -> AcquisitionFn:
    """``log`` of :func:`cei` (BoTorch's ``LogConstrainedExpectedImprovement``): ``log EI +
    log PoF`` (:func:`log_expected_improvement`, :func:`log_probability_of_feasibility`),
    ``log PoF`` alone while no observation is feasible. Same ranking as :func:`cei` where that
    does not underflow (in float32 PoF does, far from the feasible region), and useful
    gradients everywhere.

    Raises:
        TypeError: ``xi`` is not a number or a numeric array."""
    _number("log_cei", xi=xi)

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        log_pof = log_probability_of_feasibility(post)
        finite = jnp.isfinite(post.incumbent)
        best = jnp.where(finite, post.incumbent, 0.0)
        return jnp.where(finite, log_expected_improvement(post.mean, post.std, best - xi) + log_pof, log_pof)

    acq.requires = CONSTRAINTS
    return acq


def lcb_feasible(beta=2.0, beta_c=None) -> AcquisitionFn:
    """Optimistic constrained rule (ConfigOpt, Xu et al. 2023; UCB-C, Nguyen et al. 2023,
    in minimization form): minimize ``LCB_f = mean - sqrt(beta) std`` over the candidates
    whose constraint LCBs ``mean_k - sqrt(beta_c) std_k`` are all ``<= 0``; with none, the
    smallest total LCB violation (:func:`lcb_violation`). ``beta``, ``beta_c >= 0`` (``beta_c``
    a scalar or ``(K,)``) carry the meaning of :func:`lcb`; ``beta_c`` defaults to ``beta``.

    Raises:
        TypeError: ``beta`` or ``beta_c`` is not a number or a numeric array."""
    bc = beta if beta_c is None else beta_c
    _number("lcb_feasible", beta=beta, beta_c=bc)

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        return _feasible_first(lcb(beta)(post, key), lcb_violation(post, bc))

    acq.requires = CONSTRAINTS
    return acq


def weighted_sum(terms: Sequence[tuple[float, AcquisitionFn]]) -> AcquisitionFn:
    """``sum_k w_k acq_k``; each term gets its own PRNG key (split from the one given).

    Raises:
        ValueError: empty ``terms``.
    """
    terms = list(terms)
    if not terms:
        raise ValueError("terms must hold at least one (weight, acquisition) pair")

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        keys = jax.random.split(key, len(terms))
        return sum(w * a(post, k) for (w, a), k in zip(terms, keys))

    return acq


# ---------------------------------------------------------------- several objectives
OBJECTIVES = ("objectives",)
"""The ``requires`` of the multi-objective acquisitions: the posterior holds ``m >= 2``
objectives (``mean``, ``std``, ``sample`` ``(N, m)``, ``incumbent`` ``(cap, m)``, a
``reference_point``; :class:`~nbo_jax.base.SurrogatePosterior`)."""


def _multi(factory: str, reference_point, constraints: bool, extra=()) -> tuple:
    """Check a multi-objective factory's common arguments; its ``requires``."""
    if reference_point is not None:
        try:
            reference_point = tuple(float(v) for v in reference_point)
        except (TypeError, ValueError):
            raise TypeError(f"{factory}: reference_point must be a sequence of m numbers (the objectives' units) "
                            f"or None, got {reference_point!r}") from None
        if len(reference_point) < 2 or not all(math.isfinite(v) for v in reference_point):
            raise ValueError(f"{factory}: reference_point must hold m >= 2 finite numbers, got {reference_point}")
    if not isinstance(constraints, bool):
        raise TypeError(f"{factory}: constraints must be True or False, got {constraints!r}")
    return reference_point, OBJECTIVES + tuple(extra) + (CONSTRAINTS if constraints else ())


def _front(post: SurrogatePosterior) -> tuple[Array, Array]:
    """``(Y (cap, m), ok (cap,))``: the incumbent's observed feasible targets and their rows."""
    Y = post.incumbent
    if Y is None or jnp.ndim(Y) != 2:
        raise ValueError("a multi-objective acquisition needs a posterior of m >= 2 objectives (incumbent (cap, m)); "
                         "build the algorithm with it (e.g. nbo.gp_bo(acquisition=nbo.acquisition.ehvi())) and "
                         "give it y (n, m)")
    return Y, jnp.all(jnp.isfinite(Y), axis=1)


def _with_feasibility(log_utility: Array, post: SurrogatePosterior) -> Array:
    """``log_utility + log PoF`` when the posterior has constraints, else ``log_utility``."""
    if post.constraint_mean is None:
        return log_utility
    return log_utility + log_probability_of_feasibility(post)


def random_scalarization(constraints: bool = False, reference_point=None) -> AcquisitionFn:
    """Random-scalarization Thompson sampling (Paria, Kandasamy & Poczos 2019, "A flexible
    framework for multi-objective Bayesian optimization using random scalarizations", UAI,
    Algorithm 1 with the Chebyshev scalarization): per ask, weights ``lambda ~
    Dirichlet(1, ..., 1)`` (uniform on the simplex) and one posterior draw ``f~_j`` per
    objective; utility ``-max_j lambda_j (f~_j(x) - z_j)``, ``z`` the ideal point of the
    observed front (targets' units). With ``constraints``, the draws' scalarization on the
    candidates whose constraint means are all ``<= 0`` (or the smallest total violation when
    none is; :func:`lcb_violation` with ``beta = 0``). Reads a posterior draw
    (``requires = ("objectives", "sample")``): Neural-BO's pathwise draws per objective make
    it the multi-objective Neural-BO.

    Args:
        constraints: the algorithm models constraints (``requires`` the constraints' posterior).
        reference_point: ``(m,)`` the hypervolume reference point in the objectives' units
            (``None``: inferred); not used by the rule itself, kept by the algorithm.

    Raises:
        TypeError / ValueError: a bad ``reference_point`` or ``constraints``."""
    reference_point, needs = _multi("random_scalarization", reference_point, constraints, ("sample",))

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        Y, ok = _front(post)
        m = Y.shape[1]
        lam = jax.random.dirichlet(jax.random.fold_in(key, 1), jnp.ones((m,), post.sample.dtype))
        ideal = jnp.min(jnp.where(ok[:, None], Y, jnp.inf), axis=0)
        ideal = jnp.where(jnp.isfinite(ideal), ideal, jnp.min(post.sample, axis=0))
        score = -jnp.max(lam * (post.sample - ideal), axis=1)
        if post.constraint_mean is None:
            return score
        return _feasible_first(score, lcb_violation(post, 0.0))

    acq.requires = needs
    acq.reference_point = reference_point
    return acq


def parego(rho: float = 0.05, samples: int = 64, constraints: bool = False, reference_point=None) -> AcquisitionFn:
    """ParEGO (Knowles 2006, "ParEGO: a hybrid algorithm with on-line landscape approximation
    for expensive multiobjective optimization problems", IEEE TEVC 10(1)) in BoTorch's qParEGO
    form (Daulton, Balandat & Bakshy 2020, Section 5): per ask, weights ``lambda ~
    Dirichlet(1, ..., 1)`` and the augmented Chebyshev scalarization of the objectives
    normalized to the observed front's range ``[0, 1]``,
    ``s(y) = max_j lambda_j y~_j + rho sum_j lambda_j y~_j``; utility the log of the Monte
    Carlo expected improvement of ``s`` over the best observed ``s``, with ``samples`` common
    normal draws per objective (the improvement smoothed by a softplus of width ``1e-3`` so
    that the climb has a gradient where no draw improves). With ``constraints``, plus the log
    probability of feasibility.

    Raises:
        TypeError / ValueError: ``rho`` not a number ``>= 0``, ``samples`` not an int
        ``>= 1``, a bad ``reference_point`` or ``constraints``."""
    _number("parego", rho=rho)
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise ValueError(f"parego: samples must be an int >= 1, got {samples!r}")
    reference_point, needs = _multi("parego", reference_point, constraints)

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        Y, ok = _front(post)
        m = Y.shape[1]
        dtype = post.mean.dtype
        lam = jax.random.dirichlet(jax.random.fold_in(key, 1), jnp.ones((m,), dtype))
        lo = jnp.min(jnp.where(ok[:, None], Y, jnp.inf), axis=0)
        hi = jnp.max(jnp.where(ok[:, None], Y, -jnp.inf), axis=0)
        lo = jnp.where(jnp.isfinite(lo), lo, 0.0)
        span = jnp.where(hi > lo, hi - lo, 1.0)

        def scalarized(v):
            z = lam * (v - lo) / span
            return jnp.max(z, axis=-1) + rho * jnp.sum(z, axis=-1)

        best = jnp.min(jnp.where(ok, scalarized(jnp.where(ok[:, None], Y, 0.0)), jnp.inf))
        best = jnp.where(jnp.isfinite(best), best, 1.0 + rho)  # nothing observed: the range's corner
        eps = jax.random.normal(jax.random.fold_in(key, 2), (samples, m), dtype)
        draws = post.mean[:, None, :] + post.std[:, None, :] * eps[None]
        width = 1e-3
        gain = width * jax.nn.softplus((best - scalarized(draws)) / width)
        return _with_feasibility(jnp.log(jnp.mean(gain, axis=1)), post)

    acq.requires = needs
    acq.reference_point = reference_point
    return acq


def _log_box_factor(lower: Array, upper: Array, mean: Array, std: Array) -> Array:
    """``log E[max(0, u - max(l, Y))]`` for ``Y ~ N(mean, std^2)``, elementwise:
    ``log(std) + log(h(b) - h(a))``, ``a = (l - mean)/std``, ``b = (u - mean)/std``, ``h`` the
    EI function (:func:`log_h`); ``l = -inf`` allowed (``h(a) = 0``); ``-inf`` for ``u <= l``."""
    empty = upper <= lower
    finite = jnp.isfinite(lower)
    a = jnp.where(finite, (jnp.where(finite, lower, 0.0) - mean) / std, -1e4)
    b = jnp.where(empty, a + 1.0, (upper - mean) / std)
    la, lb = log_h(a), log_h(b)
    value = jnp.log(std) + lb + _log1mexp(jnp.minimum(la - lb, -1e-30))
    return jnp.where(empty, -jnp.inf, value)


def ehvi(constraints: bool = False, reference_point=None) -> AcquisitionFn:
    """Log expected hypervolume improvement, analytic for independent Gaussian posteriors
    (Emmerich, Giannakoglou & Naujoks 2006; Yang, Emmerich, Deutz & Baeck 2019; in log form
    as BoTorch's ``qLogExpectedHypervolumeImprovement``, Ament et al. 2023). With the
    non-dominated region of the observed front below the reference point ``r`` split into
    disjoint boxes ``[l_b, u_b]`` (:func:`nbo_jax.pareto.nondominated_partitioning`)::

        EHVI(x) = sum_b prod_j E[max(0, u_bj - max(l_bj, Y_j))]
                = sum_b prod_j std_j (h(b_bj) - h(a_bj)),  a = (l - mean)/std, b = (u - mean)/std

    with ``h(z) = z Phi(z) + phi(z)``; the utility is ``log EHVI`` (a logsumexp over the
    boxes of sums of :func:`log_h` terms: finite gradients where EHVI underflows). ``m = 2``
    or 3 objectives; the reference point in the targets' units is the posterior's (the
    algorithm's ``reference_point``, or one inferred from the front). With ``constraints``,
    plus the log probability of feasibility (Daulton et al. 2020's constrained EHVI).

    Args:
        constraints: the algorithm models constraints.
        reference_point: ``(m,)`` in the objectives' units (BoTorch's ``ref_point`` of the
            negated problem); ``None``: the front's nadir plus 10 % of its range at each ask
            (:func:`nbo_jax.observations.infer_reference_point`).

    Raises:
        TypeError / ValueError: a bad ``reference_point`` or ``constraints``."""
    reference_point, needs = _multi("ehvi", reference_point, constraints)

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        Y, ok = _front(post)
        boxes = nondominated_partitioning(jnp.where(ok[:, None], Y, 0.0), post.reference_point, ok)
        lower, upper = boxes.lower[None], boxes.upper[None]  # (1, B, m)
        logs = _log_box_factor(lower, upper, post.mean[:, None, :], post.std[:, None, :])  # (N, B, m)
        return _with_feasibility(jax.nn.logsumexp(jnp.sum(logs, axis=-1), axis=-1), post)

    acq.requires = needs
    acq.reference_point = reference_point
    return acq


__all__ = [
    "OBJECTIVES",
    "random_scalarization",
    "parego",
    "ehvi",
    "SurrogatePosterior",
    "AcquisitionFn",
    "thompson",
    "lcb",
    "ucb",
    "greedy",
    "ei",
    "log_ei",
    "pi",
    "expected_improvement",
    "log_expected_improvement",
    "log_h",
    "weighted_sum",
    "constrained_ei",
    "cei",
    "log_cei",
    "log_probability_of_feasibility",
    "lcb_feasible",
    "lcb_violation",
    "probability_of_feasibility",
]
