"""The exact Gaussian process as a :class:`~nbo_jax.base.Surrogate` (the model of
:mod:`nbo_jax.gp_model`: a GP with a learned constant mean on unit-cube inputs).

Per ``update`` (GPML Algorithm 2.1; the fit of Hvarfner, Hellsten & Nardi 2024 in BoTorch)::

    refit : theta = argmax_theta log p(y | U, theta) + log p(theta) from the warm start, the
            prior mode and random starts (L-BFGS-B, or Adam); L = chol(K_theta + s_n^2 I)
    else  : theta kept, L extended by the new rows (a rank-n Cholesky update)

The posterior is GPML eqs. 2.25-2.26 (its standard deviation floored at ``sqrt(eps 1e-3)`` so
the gradient of ``sqrt`` stays finite at the observations, where the acquisition optimizer
climbs); ``sample`` is an exact joint draw over the points it is called on (Chowdhury &
Gopalan 2017), not pathwise: an acquisition on it scores the raw samples only.
:func:`independent` stacks one GP per column of a constrained dataset.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp

from .. import gp_model as gpm
from .._checks import check_start
from ..base import Surrogate, SurrogatePosterior
from ..dataset import Dataset
from ..search_space import Categorical

Array = jax.Array


class GPFit(NamedTuple):
    """How the GP's hyperparameters are fitted (checked by the preset,
    :func:`nbo_jax.algorithms.gp.gp_bo`).

    Attributes:
        kind: the kernel (:data:`nbo_jax.gp_model.Kind`: ``"rbf"``, ``"matern52"`` or an
            :class:`~nbo_jax.gp_model.NTKKernel`).
        pb: :class:`~nbo_jax.gp_model.ParamBounds` of the hyperparameters.
        prior: ``"botorch"`` (:func:`nbo_jax.gp_model.botorch_prior`) or ``"none"``.
        optimizer: ``"lbfgs"`` or ``"adam"``; steps, learning_rate: its iterations and
            (Adam) step size.
        n_restarts: starts of each fit (warm start, prior mode, then random ones).
        jitter: the Cholesky jitter, or ``None`` (0 in float64, ``1e-6`` in float32).
        learn_constant: fit the constant mean (else zero mean).
        warm_start: start each fit from the previous hyperparameters.
    """

    kind: gpm.Kind
    pb: gpm.ParamBounds
    prior: str
    optimizer: str
    n_restarts: int
    steps: int
    learning_rate: float
    jitter: Optional[float]
    learn_constant: bool
    warm_start: bool = True

    def on(self, space) -> "GPFit":
        """This fit for data on ``space`` (``Dataset.space``): with a categorical parameter and
        a stationary kernel, the kernel becomes :func:`mixed_kernel` of the space; else ``self``."""
        kind = mixed_kernel(space, self.kind)
        return self if kind is None else self._replace(kind=kind)

    def gp_prior(self, d: int) -> Optional[gpm.GPPrior]:
        return gpm.botorch_prior(d) if self.prior == "botorch" else None

    def jitter_of(self, dtype) -> float:
        """The Cholesky jitter: ``jitter`` when given, else 0 in float64 and ``1e-6`` in float32."""
        if self.jitter is not None:
            return self.jitter
        return 0.0 if dtype == jnp.float64 else 1e-6

    def initial(self, d: int, dtype) -> gpm.GPParams:
        """The first start: the prior mode (BoTorch's initialization) or the neutral point."""
        gp_prior = self.gp_prior(d)
        if gp_prior is None:
            return gpm.default_params(d, self.pb, dtype)
        return gpm.prior_mode(d, gp_prior, self.pb, dtype)

    def refit(self, u: Array, y: Array, mask: Array, params: gpm.GPParams, key: Array,
              first: bool = False) -> gpm.GPParams:
        """Fit from the warm start ``params`` (with ``warm_start``), then the prior mode (with
        a prior; without a warm start, the neutral point when there is no prior), then random
        starts: ``n_restarts`` in all, vmapped; the best objective wins. ``first`` (a Python
        bool): the fit of ``init``, whose one start ``params`` (:meth:`initial`, or the start
        ``init`` was given) counts as both the warm start and the prior mode (from
        :meth:`initial` the pair is two identical starts, which reach the same optimum; on 200
        points of a mixed space the pair took 0.44 s, one 0.19 s)."""
        d = gpm.n_lengthscales(self.kind, u.shape[1])
        starts = [params] if self.warm_start else []
        counted = len(starts)
        if counted < self.n_restarts and (self.prior != "none" or not starts):
            counted += 1
            if not (first and starts):
                starts.append(self.initial(d, u.dtype))
        starts = jax.tree.map(lambda *a: jnp.stack(a), *starts)
        n_random = self.n_restarts - counted
        if n_random > 0:
            rand = gpm.random_params(key, n_random, d, self.pb, u.dtype)
            starts = jax.tree.map(lambda a, b: jnp.concatenate([a, b], axis=0), starts, rand)
        return gpm.fit(self.kind, starts, u, y, mask, steps=self.steps, learning_rate=self.learning_rate,
                       bounds=self.pb, jitter=self.jitter_of(u.dtype), prior=self.gp_prior(d),
                       optimizer=self.optimizer, learn_constant=self.learn_constant)[0]


class GPSurrogateState(NamedTuple):
    """The GP surrogate's state (a pytree; fixed shapes).

    Attributes:
        params: fitted :class:`~nbo_jax.gp_model.GPParams` (target units).
        posterior: :class:`~nbo_jax.gp_model.GPPosterior` conditioned on the data with
            ``params`` (the Cholesky factor is kept, so an ask does not refactorize).
        lml: ``()`` log marginal likelihood of the fit.
        key: PRNG key for the random restarts of the next fit.
    """

    params: gpm.GPParams
    posterior: gpm.GPPosterior
    lml: Array
    key: Array
    kernel: Optional[gpm.MixedKernel] = None


def mixed_kernel(space, base: gpm.Kind) -> Optional[gpm.MixedKernel]:
    """The :class:`~nbo_jax.gp_model.MixedKernel` of a mixed search space (``Dataset.space``,
    a :class:`~nbo_jax.search_space.SearchSpace`) with a categorical parameter, over the
    stationary kernel ``base``: its continuous and integer columns under ``base``, each
    categorical parameter's one-hot block under the overlap kernel; ``None`` for no space, a
    space without a category, or a kernel that is not stationary (the NTK reads the one-hot
    columns as they are)."""
    if space is None or not isinstance(base, str) or base not in gpm.STATIONARY_KERNELS:
        return None
    continuous, categorical = [], []
    for p, cols in space.columns():
        if isinstance(p, Categorical):
            categorical.append((cols.start, cols.stop - cols.start))
        else:
            continuous.append(cols.start)
    if not categorical:
        return None
    return gpm.MixedKernel(base, tuple(continuous), tuple(categorical))


def _lengthscales(state: "GPSurrogateState", params: gpm.GPParams, d: int) -> Array:
    """``(d,)`` per unit-cube column (a mixed kernel's expanded by its blocks)."""
    if state.kernel is None:
        return params.lengthscale
    return state.kernel.column_lengthscales(params.lengthscale, d)


def hyperparameters(state: GPSurrogateState) -> gpm.GPParams:
    """The fitted :class:`~nbo_jax.gp_model.GPParams` of a state (stacked over the columns for
    :func:`gp_columns`): what :attr:`Surrogate.hyperparameters <nbo_jax.base.Surrogate>` reads,
    and the start an ``init(..., start=...)`` of the same surrogate on the same space takes."""
    return state.params


# what a start of the GP's fit must be (check_start's message)
_GP_START = "the GP's fitted hyperparameters on this space"


def when(refit, refitted, kept):
    """``refitted()`` when ``refit`` is the Python ``True``, else ``lax.cond(refit, refitted,
    kept)`` (a real branch when ``refit`` is unbatched under ``vmap``)."""
    if refit is True:
        return refitted()
    return jax.lax.cond(refit, refitted, kept)


def gp(fit: GPFit) -> Surrogate:
    """The exact GP (module doc) as a :class:`~nbo_jax.base.Surrogate` whose state is a
    :class:`GPSurrogateState`: posterior mean and std at ``(N, d)`` points (``(N,)`` each),
    the ARD lengthscales (``(d,)``, not for the NTK kernel), a joint posterior draw. On a
    mixed space with a categorical parameter the kernel is :func:`mixed_kernel`'s (kept in
    ``state.kernel``). ``init(key, data, rows, start=None)``: ``start``, the
    :func:`hyperparameters` of an earlier state on the same space, is its fit's one start
    instead of the prior mode (:meth:`GPFit.refit` with ``first``; a GP fitted without warm
    starts, ``fit.warm_start=False``, takes none: its ``hyperparameters`` field is ``None``).

    Raises:
        ValueError: (``init``) a ``start`` of other shapes than this space's hyperparameters."""
    has_lengthscales = not isinstance(fit.kind, gpm.NTKKernel)

    def update(state: GPSurrogateState, data: Dataset, rows, refit, first: bool = False) -> GPSurrogateState:
        f = fit.on(data.space)
        kind = f.kind
        key, k_fit = jax.random.split(state.key)
        y = data.y
        jit = fit.jitter_of(data.u.dtype)

        def refitted():
            params = f.refit(data.u, y, data.mask, state.params, k_fit, first)
            return gpm.condition(kind, params, data.u, y, data.mask, jit)

        post = when(refit, refitted,
                    lambda: gpm.append_rows(kind, state.posterior, data.u, y, data.mask, rows, jit))
        return GPSurrogateState(post.params, post, gpm.posterior_lml(post, y), key, state.kernel)

    def init(key: Array, data: Dataset, rows: Array, start: Optional[gpm.GPParams] = None) -> GPSurrogateState:
        f = fit.on(data.space)
        d, dtype = data.u.shape[1], data.u.dtype
        params = check_start(start, f.initial(gpm.n_lengthscales(f.kind, d), dtype), _GP_START)
        # placeholder posterior of the right shapes (no data), replaced by the fit
        post = gpm.condition(f.kind, params, data.u, data.y, jnp.zeros_like(data.mask))
        kernel = f.kind if isinstance(f.kind, gpm.MixedKernel) else None
        return update(GPSurrogateState(params, post, jnp.zeros((), dtype), key, kernel), data, None, True, True)

    def kind_of(state: GPSurrogateState) -> gpm.Kind:
        return fit.kind if state.kernel is None else state.kernel

    def posterior(state: GPSurrogateState, u: Array) -> SurrogatePosterior:
        mean, var = gpm.predict(kind_of(state), state.posterior, u)
        std = jnp.sqrt(jnp.maximum(var, jnp.finfo(var.dtype).eps * 1e-3))
        ls = _lengthscales(state, state.params, u.shape[-1]) if has_lengthscales else None
        return SurrogatePosterior(u, mean, std, None, lengthscales=ls)

    def sample(state: GPSurrogateState, key: Array):
        return lambda u: gpm.sample_joint(kind_of(state), state.posterior, u, key)

    return Surrogate(init, update, posterior, sample, pathwise=False, name="gp", counts_by_mean=has_lengthscales,
                     hyperparameters=hyperparameters if fit.warm_start else None)


def gp_columns(fit: GPFit, *, std_floor: bool = True) -> Surrogate:
    """One independent GP per column of a ``(cap, J)`` dataset (the objective, then ``K``
    constraints), fitted and factorized in one ``vmap`` over the columns (Gardner et al.
    2014's model); a multi-output :class:`~nbo_jax.base.Surrogate` whose state is a
    :class:`GPSurrogateState` stacked over ``J`` (each column conditioned on its own rows of
    ``data.mask``). Its posterior at ``(N, d)`` points: the objective's mean/std ``(N,)`` and
    the constraints' ``constraint_mean``/``constraint_std`` ``(N, K)``; ``lengthscales`` the
    objective's (as BoTorch's SCBO tutorial). ``std_floor``: floor the variance at
    ``eps 1e-3`` (for climbs; False keeps the exact marginals). On a mixed space with a
    categorical parameter every column's kernel is :func:`mixed_kernel`'s. ``init``'s
    ``start`` is as :func:`gp`'s, stacked over the ``J`` columns."""
    has_lengthscales = not isinstance(fit.kind, gpm.NTKKernel)

    def update(state: GPSurrogateState, data: Dataset, rows, refit, first: bool = False) -> GPSurrogateState:
        f = fit.on(data.space)
        kind = f.kind
        T, M, u = data.y, data.mask, data.u
        key, k_fit = jax.random.split(state.key)
        jit = f.jitter_of(u.dtype)

        def refitted():
            params = jax.vmap(lambda p, y, m, k: f.refit(u, y, m, p, k, first))(
                state.params, T.T, M.T, jax.random.split(k_fit, T.shape[1]))
            return jax.vmap(lambda p, y, m: gpm.condition(kind, p, u, y, m, jit))(params, T.T, M.T)

        def appended():
            return jax.vmap(lambda p, y, m: gpm.append_rows(kind, p, u, y, m, rows, jit))(state.posterior, T.T, M.T)

        post = when(refit, refitted, appended)
        return GPSurrogateState(post.params, post, jax.vmap(gpm.posterior_lml)(post, T.T), key, state.kernel)

    def init(key: Array, data: Dataset, rows: Array, start: Optional[gpm.GPParams] = None) -> GPSurrogateState:
        f = fit.on(data.space)
        (cap, J), d, dtype = data.y.shape, data.u.shape[1], data.u.dtype
        initial = f.initial(gpm.n_lengthscales(f.kind, d), dtype)
        params = check_start(start, jax.tree.map(lambda a: jnp.broadcast_to(a, (J,) + a.shape), initial), _GP_START)
        # placeholder posterior of the right shapes (replaced by the fit; no factorization)
        post = gpm.GPPosterior(params, jnp.broadcast_to(data.u, (J, cap, d)), jnp.zeros((J, cap), bool),
                               jnp.broadcast_to(jnp.eye(cap, dtype=dtype), (J, cap, cap)), jnp.zeros((J, cap), dtype))
        kernel = f.kind if isinstance(f.kind, gpm.MixedKernel) else None
        return update(GPSurrogateState(params, post, jnp.zeros((J,), dtype), key, kernel), data, None, True, True)

    def posterior(state: GPSurrogateState, u: Array) -> SurrogatePosterior:
        kind = fit.kind if state.kernel is None else state.kernel
        mean, var = jax.vmap(lambda p: gpm.predict(kind, p, u))(state.posterior)  # (J, N) each
        if std_floor:
            var = jnp.maximum(var, jnp.finfo(var.dtype).eps * 1e-3)
        std = jnp.sqrt(var)
        ls = jax.tree.map(lambda a: a[0], state.params)
        ls = _lengthscales(state, ls, u.shape[-1]) if has_lengthscales else None
        return SurrogatePosterior(u, mean[0], std[0], None, mean[1:].T, std[1:].T, lengthscales=ls)

    return Surrogate(init, update, posterior, multi_output=True, name="gp",
                     hyperparameters=hyperparameters if fit.warm_start else None)


__all__ = ["GPFit", "GPSurrogateState", "gp", "gp_columns", "hyperparameters", "mixed_kernel", "when"]
