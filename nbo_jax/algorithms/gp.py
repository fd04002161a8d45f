"""GP-EI, GP-UCB and GP-TS, and the constrained GP-cEI / GP-LCB-C: the Gaussian-process
baselines (SPEC.md sections 3 and 4).

The model (:mod:`nbo_jax.gp_model`) is an exact zero-mean GP with an ARD Matern-5/2 or
squared-exponential kernel on unit-cube inputs ``u = (x - lower)/(upper - lower)``, fitted
to standardized targets (``Dataset.standardized()``). Per iteration (minimization form)::

    theta_t = argmax_theta log p(y | U, theta)          Adam from R starts (one warm start)
    (mu_t, sigma_t) = GP posterior of the latent f      (GPML Algorithm 2.1)
    EI : x_t = argmax  sigma (z Phi(z) + phi(z)),  z = (y_best - mu)/sigma     (Jones et al. 1998)
    UCB: x_t = argmin  mu - beta sigma                                       (Srinivas et al. 2010)
    TS : x_t = argmin  f~,  f~ ~ GP posterior jointly over a candidate set     (Chowdhury & Gopalan 2017)

The arg-max/min runs over :func:`nbo_jax.optimize.candidate_set` (uniform points plus local
perturbations of the best observations), optionally refined for EI/UCB by projected Adam
steps from the best candidates (BoTorch's raw samples -> restarts -> gradient steps).

**Paper preset** (``preset="paper"``): squared-exponential ("SE") kernel as in seed 000,
Section 7 (GPyTorch/BoTorch implementations) and seed 002, Appendix F (GPflow, ML-II
hyperparameters); uniform candidates only. The papers give no acquisition optimizer, no
``beta`` and no hyperparameter-fitting schedule; those stay at the library values.

**Library defaults** (``preset="default"``): Matern-5/2 kernel (BoTorch's default and the
thesis's Ch. 5 choice), a quarter of the candidates local around the 5 best observations,
hyperparameters refitted every iteration from 4 starts (the previous fit + 3 random) for 100
Adam steps at lr 0.05, and no gradient refinement of the acquisition (``refine_steps=0``).
Measured (10 seeds, 5 initial + 30 iterations, ``noise_std="paper"``, median final regret,
no refinement / ``refine_steps=20``): EI on Ackley-2 2.40 / 2.75, Hartmann-6 1.03 / 1.12,
Branin 0.056 / 0.039; UCB on Ackley-2 2.26 / 0.67, Hartmann-6 0.44 / 0.82, Branin
0.019 / 0.053 (random search: 13.4, 1.66, 0.55). No consistent gain, so the cheaper
setting is the default. TS on the same problems: 1.68, 0.63, 0.031.

**Decisions where the papers are silent.** ``beta`` multiplies ``sigma`` directly (the
Srinivas et al. ``beta_t`` is the square of ours; the papers do not state a value; BoTorch
users typically fix it): default 2. EI's incumbent is the best *observed* standardized
value (BoTorch's ``best_f = Y.max()``), and EI/UCB use the latent (noise-free) standard
deviation. A TS draw is joint over its candidates (Cholesky of the posterior covariance
with a jitter of ``1e-6`` / float32 ``1e-4`` times the outputscale, an eigendecomposition
when that fails). Hyperparameter box limits: lengthscales ``[1e-2, 1e1]`` (unit cube),
outputscale ``[1e-2, 1e2]`` (standardized units), noise variance ``[noise_floor, 1]``.

**Cost.** The Gram matrix is ``capacity x capacity`` (masked rows are identity dummies), so
each step costs ``O(capacity^3)`` for every Cholesky (``n_restarts * fit_steps`` of them
per refit) whatever the number of observations so far. ``refit_every > 1`` skips refits in
a plain (un-vmapped) run; under ``vmap`` the ``lax.cond`` becomes a select and both
branches run, so it saves nothing there.

**Constrained baselines** (``acquisition="cei"`` or ``"lcb-c"``; SPEC.md section 4, the
Neural-CBO comparisons). The problem has black-box constraints ``c_k(x) <= 0``
(``k = 1..K``, feasible when all hold); the returned algorithm is ``constrained=True``
(``init(..., c0=(n0, K))``, ``tell(state, x, y, c (K,))``, as :mod:`nbo_jax.algorithms.neural_cbo`).
One independent GP per function, ``J = K + 1`` (objective first), each with its own
hyperparameters fitted by the same machinery (warm start + random restarts); the ``J``
fits and factorizations run as *one* batched (vmapped over the functions) call, never as
``J`` independent calls (the jaxlib CPU deadlock of ``gp_model._serial_note``). Targets
follow Neural-CBO: the objective standardized, each constraint divided by its root mean
square over its valid rows but *not* centred, so 0 stays the feasibility threshold (the
zero prior mean then sits on the threshold). NaN/inf values are masked per function::

    cEI   (Gardner et al. 2014, ICML, "Bayesian optimization with inequality constraints",
           eqs. 5-6):  x_t = argmax  EI(x; y_best) * prod_k Phi(-mu_k(x) / sigma_k(x)),
           y_best = best observed feasible standardized objective value; with no feasible
           observation yet the utility is the probability of feasibility alone (Section 3).
    LCB-C (ConfigOpt, Xu et al. 2023; UCB-C, Nguyen et al. 2023; minimization form):
           x_t = argmin  mu_f(x) - beta sigma_f(x)
                 over  {x : mu_k(x) - beta_c sigma_k(x) <= 0 for every k};
           no candidate passes: argmin sum_k [mu_k(x) - beta_c sigma_k(x)]^+.

(:func:`nbo_jax.acquisition.cei`, :func:`nbo_jax.acquisition.lcb_feasible`.) **Decisions**
(papers silent): "feasible observation" = every *observed* (noisy) constraint value
``<= 0`` and the objective valid (noisy feasibility is not modelled further); the sigmas
are the latent (noise-free) posterior standard deviations; ``beta_c`` defaults to ``beta``
(= 2); a quarter of the candidates (library default) are local around the ``n_best`` best
feasible observations, or the least-violating ones (total scaled violation
``sum_k [c_k / rms_k]^+``) while none is feasible, as in Neural-CBO. The LCB-C utility is
a hard filter (discontinuous), so ``refine_steps > 0`` is refused for it; for cEI the
refinement climbs ``EI * PoF``.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from .. import gp_model as gpm
from ..acquisition import SurrogatePosterior, cei, expected_improvement, lcb_feasible
from ..optimize import argmax_point, candidate_set, refine_argmax
from ..types import BOAlgorithm, Dataset
from ._common import (
    append_observations,
    check_constraint_values,
    check_initial,
    constrained_transform,
    feasibility_ranked,
    observation_rows,
)
from ._common import observed_feasible as _observed_feasible
from ._common import check_int as _check_int

Array = jax.Array

ACQUISITIONS = ("ei", "ucb", "ts", "cei", "lcb-c")
CONSTRAINED_ACQUISITIONS = ("cei", "lcb-c")

PRESETS = {
    "paper": dict(kernel="rbf", local_fraction=0.0),
    "default": dict(kernel="matern52", local_fraction=0.25),
}


class GPState(NamedTuple):
    """GP-BO state (a pytree; fixed shapes).

    Attributes:
        data: :class:`~nbo_jax.types.Dataset` (unit-cube inputs, raw observations).
        params: fitted :class:`~nbo_jax.gp_model.GPParams` (standardized-target units).
        posterior: :class:`~nbo_jax.gp_model.GPPosterior` conditioned on ``data`` with
            ``params`` (the Cholesky factor is kept, so ``ask`` does not refactorize).
        lml: ``()`` log marginal likelihood of the fit (standardized targets).
        lower, upper: ``(d,)`` box bounds. key: PRNG key for the random restarts.
    """

    data: Dataset
    params: gpm.GPParams
    posterior: gpm.GPPosterior
    lml: Array
    lower: Array
    upper: Array
    key: Array


class GPConstrainedState(NamedTuple):
    """State of the constrained GP baselines (a pytree; fixed shapes; ``J = K + 1``
    functions, objective first).

    Attributes:
        u: ``(cap, d)`` inputs in the unit cube. Y: ``(cap, J)`` observed values (0 where
            masked). M: ``(cap, J)`` bool validity, per function. count: ``()`` rows written.
        params: :class:`~nbo_jax.gp_model.GPParams` stacked over the ``J`` functions
            (leading axis ``J``; transformed-target units).
        posterior: :class:`~nbo_jax.gp_model.GPPosterior` stacked over ``J`` (each
            conditioned on its own function's valid rows).
        lml: ``(J,)`` log marginal likelihoods of the fits.
        shift, scale: ``(J,)`` target transform ``(Y - shift) / scale`` (objective:
            mean/std; constraints: 0/root mean square).
        lower, upper: ``(d,)`` box bounds. key: PRNG key for the random restarts.
    """

    u: Array
    Y: Array
    M: Array
    count: Array
    params: gpm.GPParams
    posterior: gpm.GPPosterior
    lml: Array
    shift: Array
    scale: Array
    lower: Array
    upper: Array
    key: Array


def _default_jitter(jitter: Optional[float], dtype) -> float:
    """The Cholesky jitter: ``jitter`` when given, else 0 in float64 and ``1e-6`` in float32."""
    if jitter is not None:
        return jitter
    return 0.0 if dtype == jnp.float64 else 1e-6


def _check_float(name: str, value, low: float, high: float, *, low_open=False, high_open=False) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a float, got {type(value).__name__}") from None
    ok = (v > low if low_open else v >= low) and (v < high if high_open else v <= high)
    if not ok:
        lb, hb = "(" if low_open else "[", ")" if high_open else "]"
        raise ValueError(f"{name} must be in {lb}{low}, {high}{hb}, got {value}")
    return v


def gp_bo(
    kernel: Optional[str] = None,
    acquisition: str = "ei",
    *,
    preset: str = "default",
    beta: float = 2.0,
    beta_c=None,
    n_candidates: int = 2048,
    ts_candidates: int = 512,
    local_fraction: Optional[float] = None,
    local_std: float = 0.05,
    n_best: int = 5,
    n_restarts: int = 4,
    fit_steps: int = 100,
    fit_learning_rate: float = 0.05,
    refit_every: int = 1,
    noise_floor: float = 1e-6,
    lengthscale_bounds: tuple = (1e-2, 1e1),
    outputscale_bounds: tuple = (1e-2, 1e2),
    refine_steps: int = 0,
    refine_starts: int = 4,
    refine_learning_rate: float = 0.01,
    jitter: Optional[float] = None,
    standardize: bool = True,
) -> BOAlgorithm:
    """Build GP-EI / GP-UCB / GP-TS (SPEC.md section 3) or the constrained GP-cEI / GP-LCB-C
    (SPEC.md section 4) as a :class:`~nbo_jax.types.BOAlgorithm`.

    Args:
        kernel: ``"matern52"`` or ``"rbf"`` (squared exponential), ARD; ``None`` takes the
            preset's (default: Matern-5/2, paper: RBF).
        acquisition: ``"ei"`` (Jones et al. 1998, minimization form
            ``sigma (z Phi(z) + phi(z))``, ``z = (y_best - mu)/sigma``), ``"ucb"`` (Srinivas
            et al. 2010 in minimization form: minimize ``mu - beta sigma``, i.e. maximize
            ``-(mu - beta sigma)``) or ``"ts"`` (Chowdhury & Gopalan 2017: one joint
            posterior draw over ``ts_candidates`` candidates, its argmin); constrained:
            ``"cei"`` (Gardner et al. 2014, ICML, eqs. 5-6: EI over the best observed
            feasible value times the probability of feasibility; PoF alone while nothing
            feasible is observed) or ``"lcb-c"`` (ConfigOpt, Xu et al. 2023; UCB-C, Nguyen
            et al. 2023: minimize ``mu - beta sigma`` over the candidates whose constraint
            LCBs ``mu_k - beta_c sigma_k`` are all ``<= 0``, else the smallest total LCB
            violation); see the module doc.
        preset: ``"default"`` or ``"paper"``; fills ``kernel`` and ``local_fraction`` where
            left ``None`` (module doc).
        beta: UCB / LCB exploration weight on ``sigma`` (>= 0); used by ``"ucb"`` and
            ``"lcb-c"`` (the objective's LCB) only.
        beta_c: ``"lcb-c"`` only: the constraints' LCB weight, a float ``>= 0`` or one per
            constraint (length checked against ``K`` at ``init``); ``None`` = ``beta``.
        n_candidates: candidates scored per ask for EI/UCB; ts_candidates: for TS (the
            joint draw forms a ``ts_candidates^2`` covariance).
        local_fraction: share of candidates drawn around the ``n_best`` best observations
            (Gaussian, std ``local_std`` in unit-cube units), in ``[0, 1)``.
        n_restarts: hyperparameter fits per refit: the previous fit (warm start) plus
            ``n_restarts - 1`` random starts (:func:`nbo_jax.gp_model.random_params`), vmapped;
            the best log marginal likelihood wins.
        fit_steps, fit_learning_rate: Adam steps / learning rate on the log parameters.
        refit_every: refit the hyperparameters when the number of observations is a multiple
            of this (the posterior is always updated); 1 = every iteration.
        noise_floor: lower limit of the noise variance (standardized units), in ``(0, 1)``.
        lengthscale_bounds, outputscale_bounds: ``(low, high)`` box limits.
        refine_steps: projected Adam steps (lr ``refine_learning_rate``) on EI/UCB/cEI from
            the ``refine_starts`` best candidates; 0 disables (library default); not
            available for ``"lcb-c"`` (a hard feasibility filter has no useful gradient).
        jitter: added to the noise variance inside every Cholesky; default 0 in float64 and
            ``1e-6`` in float32.
        standardize: fit the GP to standardized targets (SPEC.md section 0); if False, to the
            raw ``y`` (then the outputscale bounds are in ``y``'s units). Constrained: the
            constraints are RMS-scaled when True, raw when False.

    Returns:
        ``BOAlgorithm(init, ask, tell, name="gp-ei" | "gp-ucb" | "gp-ts", surrogate)``;
        ``init(key, x0, y0, *, bounds, capacity) -> GPState``, ``ask(state, key) -> (d,)``,
        ``tell(state, x, y) -> GPState``, ``surrogate(state, u (N, d)) ->
        SurrogatePosterior`` (latent mean/std, standardized units, incumbent = best
        standardized observation).

        For ``"cei"`` / ``"lcb-c"``: ``BOAlgorithm(..., name="gp-cei" | "gp-lcb-c",
        constrained=True)`` with ``init(key, x0 (n0, d), y0 (n0,), *, bounds, capacity,
        c0 (n0, K)) -> GPConstrainedState``, ``ask(state, key) -> (d,)``,
        ``tell(state, x (d,), y (), c (K,)) -> GPConstrainedState`` (``c <= 0`` feasible,
        NaN/inf entries masked per function), ``surrogate(state, u (N, d)) ->
        SurrogatePosterior`` with ``constraint_mean``/``constraint_std`` ``(N, K)`` (RMS-scaled
        units, 0 = threshold) and ``incumbent`` = best observed feasible standardized
        objective value (``+inf`` when none).

    Raises:
        ValueError: unknown ``kernel``, ``acquisition`` or ``preset``, or a number out of
            range (the message names the argument); ``beta_c`` with an acquisition other than
            ``"lcb-c"``; ``refine_steps > 0`` with ``"lcb-c"``. At ``init`` of a constrained
            algorithm: ``c0`` missing or not ``(n0, K)``, or a ``beta_c`` sequence whose
            length is not ``K``.
        TypeError: a count that is not an int.
    """
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {preset!r}")
    chosen = dict(PRESETS[preset])
    if kernel is not None:
        chosen["kernel"] = kernel
    if local_fraction is not None:
        chosen["local_fraction"] = local_fraction
    kind = chosen["kernel"]
    if not isinstance(kind, str) or kind not in gpm.KERNELS:
        raise ValueError(f"kernel must be one of {gpm.KERNELS}, got {kind!r}")
    if not isinstance(acquisition, str) or acquisition not in ACQUISITIONS:
        raise ValueError(
            f"acquisition must be one of {ACQUISITIONS}, got {acquisition!r} (for a custom "
            "acquisition function use the surrogate: algo.surrogate(state, u))"
        )
    beta = _check_float("beta", beta, 0.0, float("inf"), high_open=True)
    for name, val, lo in (("n_candidates", n_candidates, 1), ("ts_candidates", ts_candidates, 1),
                          ("n_best", n_best, 1), ("n_restarts", n_restarts, 1), ("fit_steps", fit_steps, 0),
                          ("refit_every", refit_every, 1), ("refine_steps", refine_steps, 0),
                          ("refine_starts", refine_starts, 1)):
        _check_int(name, val, lo)
    lf = _check_float("local_fraction", chosen["local_fraction"], 0.0, 1.0, high_open=True)
    _check_float("local_std", local_std, 0.0, float("inf"), low_open=True, high_open=True)
    _check_float("fit_learning_rate", fit_learning_rate, 0.0, float("inf"), low_open=True, high_open=True)
    _check_float("refine_learning_rate", refine_learning_rate, 0.0, float("inf"), low_open=True, high_open=True)
    noise_floor = _check_float("noise_floor", noise_floor, 0.0, 1.0, low_open=True, high_open=True)
    if jitter is not None:
        jitter = _check_float("jitter", jitter, 0.0, float("inf"), high_open=True)
    try:
        pb = gpm.ParamBounds(tuple(lengthscale_bounds), tuple(outputscale_bounds), (noise_floor, 1.0)).validate()
    except (TypeError, ValueError) as e:
        raise ValueError(f"lengthscale_bounds/outputscale_bounds: {e}") from None
    if not isinstance(standardize, bool):
        raise TypeError(f"standardize must be a bool, got {type(standardize).__name__}")
    if beta_c is not None and acquisition != "lcb-c":
        raise ValueError(f"beta_c is used by acquisition='lcb-c' only, got acquisition={acquisition!r}")
    if acquisition == "lcb-c":
        if refine_steps > 0:
            raise ValueError("refine_steps must be 0 with acquisition='lcb-c' (its utility is a hard "
                             "feasibility filter, with no useful gradient)")
        try:
            bc = np.asarray(beta if beta_c is None else beta_c, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"beta_c must be a float or a sequence of floats, got {beta_c!r}") from None
        if bc.ndim > 1 or bc.size == 0 or not np.all(np.isfinite(bc) & (bc >= 0)):
            raise ValueError(f"beta_c must be a float >= 0 or a sequence of them (one per constraint), "
                             f"got {beta_c!r}")
        beta_c = bc if bc.ndim else float(bc)

    n_pool = ts_candidates if acquisition == "ts" else n_candidates
    n_local = int(round(n_pool * lf))
    n_uniform = n_pool - n_local
    if n_uniform < 1:
        raise ValueError(f"local_fraction={lf} leaves no uniform candidates out of {n_pool}")
    n_refine = min(refine_starts, n_pool)
    if acquisition in CONSTRAINED_ACQUISITIONS:
        return _constrained_gp_bo(
            kind, acquisition, beta=beta, beta_c=beta_c, pb=pb, n_uniform=n_uniform, n_local=n_local,
            local_std=float(local_std), n_best=n_best, n_restarts=n_restarts, fit_steps=fit_steps,
            fit_learning_rate=float(fit_learning_rate), refit_every=refit_every, refine_steps=refine_steps,
            n_refine=n_refine, refine_learning_rate=float(refine_learning_rate), jitter=jitter,
            standardize=standardize)

    def jit_of(dtype) -> float:
        return _default_jitter(jitter, dtype)

    def targets(data: Dataset) -> Array:
        return data.standardized()[0] if standardize else jnp.where(data.mask, data.y, 0.0)

    def refit(data: Dataset, params: gpm.GPParams, key: Array) -> gpm.GPParams:
        y = targets(data)
        d = data.u.shape[1]
        starts = jax.tree.map(lambda a: a[None], params)  # the warm start comes first
        if n_restarts > 1:
            rand = gpm.random_params(key, n_restarts - 1, d, pb, data.u.dtype)
            starts = jax.tree.map(lambda a, b: jnp.concatenate([a, b], axis=0), starts, rand)
        params, _ = gpm.fit(kind, starts, data.u, y, data.mask, steps=fit_steps, learning_rate=fit_learning_rate,
                            bounds=pb, jitter=jit_of(data.u.dtype))
        return params

    def absorb(state: GPState, x_new: Array, y_new: Array, force_refit: bool) -> GPState:
        u_new = (x_new - state.lower) / (state.upper - state.lower)
        data = state.data.add_batch(u_new, y_new)
        key, k_fit = jax.random.split(state.key)
        y = targets(data)
        if force_refit or refit_every == 1:
            params = refit(data, state.params, k_fit)
        else:
            # under vmap this cond becomes a select and both branches run; the kept branch
            # does no linear algebra, so no two factorizations run side by side
            params = jax.lax.cond(data.count % refit_every == 0,
                                  lambda: refit(data, state.params, k_fit), lambda: state.params)
        post = gpm.condition(kind, params, data.u, y, data.mask, jit_of(data.u.dtype))
        lml = gpm.posterior_lml(post, y)
        return state._replace(data=data, params=params, posterior=post, lml=lml, key=key)

    def init(key: Array, x0: Array, y0: Array, *, bounds, capacity: int) -> GPState:
        x0, y0, lower, upper = check_initial(x0, y0, bounds, capacity)
        d = x0.shape[1]
        dtype = x0.dtype
        data = Dataset.empty(capacity, d, dtype)
        params = gpm.default_params(d, pb, dtype)
        post = gpm.condition(kind, params, data.u, data.y, data.mask)
        state = GPState(data, params, post, jnp.zeros((), dtype), lower, upper, key)
        return absorb(state, x0, y0, force_refit=True)

    def incumbent(state: GPState) -> Array:
        return jnp.min(jnp.where(state.data.mask, targets(state.data), jnp.inf))

    def surrogate_posterior(state: GPState, u_c: Array) -> SurrogatePosterior:
        mean, var = gpm.predict(kind, state.posterior, u_c)
        return SurrogatePosterior(u_c, mean, jnp.sqrt(var), incumbent(state))

    def utility_values(state: GPState, u_c: Array, best: Array) -> Array:
        mean, var = gpm.predict(kind, state.posterior, u_c)
        if acquisition == "ei":
            # floor the variance so the gradient of sqrt stays finite at observed points
            std = jnp.sqrt(jnp.maximum(var, jnp.finfo(var.dtype).eps * 1e-3))
            return expected_improvement(mean, std, best)
        return -(mean - beta * jnp.sqrt(jnp.maximum(var, jnp.finfo(var.dtype).eps * 1e-3)))

    def ask(state: GPState, key: Array) -> Array:
        k_c, k_a = jax.random.split(key)
        u_c = candidate_set(k_c, state.data, n_uniform, n_local, local_std=local_std, n_best=n_best)
        if acquisition == "ts":
            draw = gpm.sample_joint(kind, state.posterior, u_c, k_a)
            u = argmax_point(-draw, u_c)
        else:
            best = incumbent(state)
            vals = utility_values(state, u_c, best)
            u = refine_argmax(vals, u_c, lambda v: utility_values(state, v[None, :], best)[0],
                              n_starts=n_refine, steps=refine_steps, learning_rate=refine_learning_rate,
                              pool_utility=lambda pool: utility_values(state, pool, best))
        return state.lower + u * (state.upper - state.lower)

    def tell(state: GPState, x: Array, y: Array) -> GPState:
        return absorb(state, jnp.reshape(x, (1, -1)), jnp.reshape(y, (1,)), force_refit=False)

    return BOAlgorithm(init, ask, tell, f"gp-{acquisition}", surrogate_posterior)


def _constrained_gp_bo(
    kind: str,
    acquisition: str,
    *,
    beta: float,
    beta_c,
    pb: gpm.ParamBounds,
    n_uniform: int,
    n_local: int,
    local_std: float,
    n_best: int,
    n_restarts: int,
    fit_steps: int,
    fit_learning_rate: float,
    refit_every: int,
    refine_steps: int,
    n_refine: int,
    refine_learning_rate: float,
    jitter: Optional[float],
    standardize: bool,
) -> BOAlgorithm:
    """GP-cEI / GP-LCB-C (module doc, "Constrained baselines"); arguments already validated
    by :func:`gp_bo`. One GP per function, all ``J`` handled in one vmap over the functions
    (their factorizations form one batched call; ``gp_model._serial_note``)."""
    acq = cei() if acquisition == "cei" else lcb_feasible(beta, beta_c)
    beta_c_len = None if acquisition != "lcb-c" or np.ndim(beta_c) == 0 else int(np.shape(beta_c)[0])

    def jit_of(dtype) -> float:
        return _default_jitter(jitter, dtype)

    def transform(Y: Array, M: Array) -> tuple[Array, Array]:
        """``(shift, scale)`` per function ``(J,)``: the objective standardized over its valid
        rows (``Dataset.standardized`` rules: std 1 when fewer than two distinct values), each
        constraint divided by its root mean square (not centred: 0 stays the threshold)."""
        J = Y.shape[1]
        if not standardize:
            return jnp.zeros((J,), Y.dtype), jnp.ones((J,), Y.dtype)
        return constrained_transform(Y, M)

    def targets(Y: Array, M: Array, shift: Array, scale: Array) -> Array:
        """Transformed targets ``(cap, J)``, 0 on masked entries."""
        return jnp.where(M, (Y - shift) / scale, 0.0)

    def refit(u: Array, T: Array, M: Array, params: gpm.GPParams, key: Array) -> gpm.GPParams:
        """ML-II fit of every function's hyperparameters, vmapped over the ``J`` functions
        (warm start from ``params`` + ``n_restarts - 1`` random starts each)."""
        d = u.shape[1]
        jit = jit_of(u.dtype)

        def one(p, y, m, k):
            starts = jax.tree.map(lambda a: a[None], p)
            if n_restarts > 1:
                rand = gpm.random_params(k, n_restarts - 1, d, pb, u.dtype)
                starts = jax.tree.map(lambda a, b: jnp.concatenate([a, b], axis=0), starts, rand)
            return gpm.fit(kind, starts, u, y, m, steps=fit_steps, learning_rate=fit_learning_rate,
                           bounds=pb, jitter=jit)[0]

        return jax.vmap(one)(params, T.T, M.T, jax.random.split(key, T.shape[1]))

    def absorb(state: GPConstrainedState, x_new: Array, Y_new: Array, force_refit: bool) -> GPConstrainedState:
        u_new = (x_new - state.lower) / (state.upper - state.lower)
        u, Y, M, count = append_observations(state.u, state.Y, state.M, state.count, u_new, Y_new)
        shift, scale = transform(Y, M)
        T = targets(Y, M, shift, scale)
        key, k_fit = jax.random.split(state.key)
        if force_refit or refit_every == 1:
            params = refit(u, T, M, state.params, k_fit)
        else:
            # under vmap this cond becomes a select and both branches run; the kept branch
            # does no linear algebra, so no two factorizations run side by side
            params = jax.lax.cond(count % refit_every == 0,
                                  lambda: refit(u, T, M, state.params, k_fit), lambda: state.params)
        jit = jit_of(u.dtype)
        post = jax.vmap(lambda p, y, m: gpm.condition(kind, p, u, y, m, jit))(params, T.T, M.T)
        lml = jax.vmap(gpm.posterior_lml)(post, T.T)
        return state._replace(u=u, Y=Y, M=M, count=count, params=params, posterior=post, lml=lml,
                              shift=shift, scale=scale, key=key)

    def init(key: Array, x0: Array, y0: Array, *, bounds, capacity: int, c0=None) -> GPConstrainedState:
        x0, y0, lower, upper = check_initial(x0, y0, bounds, capacity)
        c0 = check_constraint_values(c0, x0.shape[0], x0.dtype)
        K = c0.shape[1]
        if beta_c_len is not None and beta_c_len != K:
            raise ValueError(f"beta_c has {beta_c_len} values but the problem has K = {K} constraints")
        J, d, dtype = K + 1, x0.shape[1], x0.dtype
        params = jax.tree.map(lambda a: jnp.broadcast_to(a, (J,) + a.shape), gpm.default_params(d, pb, dtype))
        u = jnp.zeros((capacity, d), dtype)
        M = jnp.zeros((capacity, J), bool)
        # placeholder posterior (replaced by absorb; built without a factorization)
        post = gpm.GPPosterior(params, jnp.broadcast_to(u, (J, capacity, d)), M.T,
                               jnp.broadcast_to(jnp.eye(capacity, dtype=dtype), (J, capacity, capacity)),
                               jnp.zeros((J, capacity), dtype))
        state = GPConstrainedState(u, jnp.zeros((capacity, J), dtype), M, jnp.zeros((), jnp.int32), params, post,
                                   jnp.zeros((J,), dtype), jnp.zeros((J,), dtype), jnp.ones((J,), dtype),
                                   lower, upper, key)
        return absorb(state, x0, observation_rows(y0, c0), force_refit=True)

    def observed_feasible(state: GPConstrainedState) -> Array:
        return _observed_feasible(state.Y, state.M)

    def incumbent(state: GPConstrainedState) -> Array:
        t0 = (state.Y[:, 0] - state.shift[0]) / state.scale[0]
        return jnp.min(jnp.where(observed_feasible(state), t0, jnp.inf))

    def posterior_at(state: GPConstrainedState, u_c: Array, floor: bool = False) -> SurrogatePosterior:
        mean, var = jax.vmap(lambda p: gpm.predict(kind, p, u_c))(state.posterior)  # (J, N) each
        if floor:  # keeps the gradient of sqrt finite at observed points (refinement only)
            var = jnp.maximum(var, jnp.finfo(var.dtype).eps * 1e-3)
        std = jnp.sqrt(var)
        return SurrogatePosterior(u_c, mean[0], std[0], incumbent(state), mean[1:].T, std[1:].T)

    def surrogate_posterior(state: GPConstrainedState, u_c: Array) -> SurrogatePosterior:
        return posterior_at(state, u_c)

    def ask(state: GPConstrainedState, key: Array) -> Array:
        k_c, k_a = jax.random.split(key)
        # local candidates around the best feasible observations, or the least violating
        # ones while none is feasible (as Neural-CBO)
        ranked = feasibility_ranked(state.u, state.Y, state.M, state.scale, state.count)
        u_c = candidate_set(k_c, ranked, n_uniform, n_local, local_std=local_std, n_best=n_best)
        # refine_steps > 0 only for cEI (refused for lcb-c at factory time)
        u = refine_argmax(acq(posterior_at(state, u_c), k_a), u_c,
                          lambda v: acq(posterior_at(state, v[None, :], floor=True), k_a)[0],
                          n_starts=n_refine, steps=refine_steps, learning_rate=refine_learning_rate,
                          pool_utility=lambda pool: acq(posterior_at(state, pool), k_a))
        return state.lower + u * (state.upper - state.lower)

    def tell(state: GPConstrainedState, x: Array, y: Array, c: Array) -> GPConstrainedState:
        return absorb(state, jnp.reshape(x, (1, -1)), observation_rows(y, c).astype(state.Y.dtype),
                      force_refit=False)

    return BOAlgorithm(init, ask, tell, f"gp-{acquisition}", surrogate_posterior, constrained=True)


__all__ = ["gp_bo", "GPState", "GPConstrainedState", "ACQUISITIONS", "CONSTRAINED_ACQUISITIONS", "PRESETS"]
