"""GP-EI, GP-UCB and GP-TS: the Gaussian-process baselines (SPEC.md section 3).

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
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from .. import gp_model as gpm
from ..acquisition import SurrogatePosterior, expected_improvement
from ..optimize import argmax_point, candidate_set, projected_gradient_ascent
from ..types import BOAlgorithm, Dataset
from ._common import check_initial
from ._common import check_int as _check_int

Array = jax.Array

ACQUISITIONS = ("ei", "ucb", "ts")

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
    """Build GP-EI / GP-UCB / GP-TS as a :class:`~nbo_jax.types.BOAlgorithm` (SPEC.md section 3).

    Args:
        kernel: ``"matern52"`` or ``"rbf"`` (squared exponential), ARD; ``None`` takes the
            preset's (default: Matern-5/2, paper: RBF).
        acquisition: ``"ei"`` (Jones et al. 1998, minimization form
            ``sigma (z Phi(z) + phi(z))``, ``z = (y_best - mu)/sigma``), ``"ucb"`` (Srinivas
            et al. 2010 in minimization form: minimize ``mu - beta sigma``, i.e. maximize
            ``-(mu - beta sigma)``) or ``"ts"`` (Chowdhury & Gopalan 2017: one joint
            posterior draw over ``ts_candidates`` candidates, its argmin).
        preset: ``"default"`` or ``"paper"``; fills ``kernel`` and ``local_fraction`` where
            left ``None`` (module doc).
        beta: UCB exploration weight on ``sigma`` (>= 0); used by ``"ucb"`` only.
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
        refine_steps: projected Adam steps (lr ``refine_learning_rate``) on EI/UCB from the
            ``refine_starts`` best candidates; 0 disables (library default).
        jitter: added to the noise variance inside every Cholesky; default 0 in float64 and
            ``1e-6`` in float32.
        standardize: fit the GP to standardized targets (SPEC.md section 0); if False, to the
            raw ``y`` (then the outputscale bounds are in ``y``'s units).

    Returns:
        ``BOAlgorithm(init, ask, tell, name="gp-ei" | "gp-ucb" | "gp-ts", surrogate)``;
        ``init(key, x0, y0, *, bounds, capacity) -> GPState``, ``ask(state, key) -> (d,)``,
        ``tell(state, x, y) -> GPState``, ``surrogate(state, u (N, d)) ->
        SurrogatePosterior`` (latent mean/std, standardized units, incumbent = best
        standardized observation).

    Raises:
        ValueError: unknown ``kernel``, ``acquisition`` or ``preset``, or a number out of
            range (the message names the argument).
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

    n_pool = ts_candidates if acquisition == "ts" else n_candidates
    n_local = int(round(n_pool * lf))
    n_uniform = n_pool - n_local
    if n_uniform < 1:
        raise ValueError(f"local_fraction={lf} leaves no uniform candidates out of {n_pool}")
    n_refine = min(refine_starts, n_pool)

    def jit_of(dtype) -> float:
        if jitter is not None:
            return jitter
        return 0.0 if dtype == jnp.float64 else 1e-6

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
            u = argmax_point(vals, u_c)
            if refine_steps > 0:
                safe = jnp.where(jnp.isnan(vals), -jnp.inf, vals)
                _, top = jax.lax.top_k(safe, n_refine)
                one = lambda v: utility_values(state, v[None, :], best)[0]
                refined = projected_gradient_ascent(one, u_c[top], steps=refine_steps,
                                                    learning_rate=refine_learning_rate)
                pool = jnp.concatenate([u[None, :], refined], axis=0)
                u = argmax_point(utility_values(state, pool, best), pool)
        return state.lower + u * (state.upper - state.lower)

    def tell(state: GPState, x: Array, y: Array) -> GPState:
        return absorb(state, jnp.reshape(x, (1, -1)), jnp.reshape(y, (1,)), force_refit=False)

    return BOAlgorithm(init, ask, tell, f"gp-{acquisition}", surrogate_posterior)


__all__ = ["gp_bo", "GPState", "ACQUISITIONS", "PRESETS"]
