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


__all__ = [
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
