"""The linearized network with NTK gradient features (Neural-BO, Phan-Trong et al. 2023,
Algorithms 1-2; NeuralUCB, Zhou et al. 2020; NeuralTS, Zhang et al. 2021) as a
:class:`~nbo_jax.base.Surrogate`::

    theta_t = TrainNN(data, from theta_{t-1} (warm start) or theta_0; pull toward theta_0)
    g(x)    = grad_theta h(x; theta_0)   (or at theta_t: feature_params="current")
    U_t     = lam I + sum_i g(x_i) g(x_i)^T / m                (nbo_jax.posterior)
    mean(x) = h(x; theta_t),   std(x) = s sqrt(lam g(x)^T U_t^{-1} g(x) / m)
    f~(x)   = h(x; theta_t) + nu s g(x)^T delta / sqrt(m),  delta ~ N(0, lam U_t^{-1})

With fitted scales (``fit_scales``) the linearized network is Bayesian linear regression on
``g``, a GP with the empirical NTK, and ``(lam, s^2)`` maximize its marginal likelihood of
``y - h(x; theta_0)`` (:func:`nbo_jax.posterior.fit_scales`): both when ``update`` is told to
refit, ``s^2`` alone otherwise (the new rows appended with the kept ``lam``). Fixed scales:
``lam`` as given and ``s = 1``, the rows appended one by one (rank-one updates). The draw is
pathwise: one function of ``x``, a Jacobian-vector product per point. The preset
(:func:`nbo_jax.algorithms.neural_bo.neural_bo`) holds the settings and their measurements.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from .. import posterior as post_lib
from .._checks import check_start
from ..base import Surrogate, SurrogatePosterior
from ..dataset import Dataset
from ..features import gradient_features, jacobian_vector_product, predict
from ..networks import Network, auto_embedding, category_weights, embedded, has_categories
from ..training import TrainConfig, train_regression
from .gp import when

Array = jax.Array

CATEGORY_WEIGHT_GRID = (0.125, 0.25, 0.5, 1.0)
"""The weights among which ``category_weight="fit"`` chooses (:func:`select_category_weight`)."""


class NeuralLinearState(NamedTuple):
    """The linearized network's state (a pytree; fixed shapes).

    Attributes:
        params0: initial weights ``theta_0``; params: current weights ``theta_t``.
        posterior: ``FullState | DiagonalState | DualState`` (:mod:`nbo_jax.posterior`).
        key: PRNG key used for training shuffles.
        post_lam: ``()`` the ``lam`` of the posterior (``lam``, or fitted with fitted scales).
        post_scale: ``()`` multiplier ``s`` of ``sigma`` (1, or fitted).
        space: the mixed search space of the data (``Dataset.space``; static), whose
            categorical columns the network sees weighted by ``category_weight``; ``None``
            for a box.
        category_weight: ``()`` that weight (given, or fitted with ``category_weight="fit"``).
    """

    params0: Any
    params: Any
    posterior: Any
    key: Array
    post_lam: Array
    post_scale: Array
    space: Optional[Any] = None
    category_weight: Optional[Array] = None


class NeuralLinearStart(NamedTuple):
    """Where a linearized network's fit starts: what :attr:`Surrogate.hyperparameters
    <nbo_jax.base.Surrogate>` of :func:`neural_linear` with ``warm_start`` reads from a state,
    and what its ``init(key, data, rows, start=...)`` takes (pytrees of the network's weights,
    whose shapes do not depend on the capacity).

    Attributes:
        params0: the initial weights ``theta_0``: the features' point with
            ``feature_params="initial"`` and the anchor of the training's pull.
        params: the trained weights ``theta_t``, where the next training starts.
    """

    params0: Any
    params: Any


def select_category_weight(network: Callable[[int, Any], Network], embedding: str, state: "NeuralLinearState",
                           data: Dataset, m: float) -> Array:
    """``()`` the weight of :data:`CATEGORY_WEIGHT_GRID` under which the empirical-NTK GP at
    ``theta_0`` (:func:`nbo_jax.posterior.fit_scales`, its ``lam`` and ``s^2`` fitted for each
    weight) gives ``data``'s targets ``y - h(x; theta_0)`` the largest marginal likelihood: a
    categorical parameter's scale chosen by type-II maximum likelihood, as a GP chooses its
    lengthscales. The weights are tried one after another (:func:`jax.lax.map`: one
    eigendecomposition at a time)."""
    d = data.u.shape[-1]
    emb = auto_embedding(d, embedding)

    def lml(w):
        apply = embedded(network, d, data.u.dtype, emb, category_weights(state.space, w)).apply
        G = gradient_features(apply, state.params0, data.u)
        r = data.y - predict(apply, state.params0, data.u)
        return post_lib.fit_scales(G, data.mask, r, m)[2]

    grid = jnp.asarray(CATEGORY_WEIGHT_GRID, data.u.dtype)
    return grid[jnp.argmax(jax.lax.map(lml, grid))]


def neural_linear(network: Callable[[int, Any], Network], *, width: int, lam, train: TrainConfig, warm_start: bool,
                  feature_params: str, fit_scales: bool, mode: str = "auto", embedding: str = "auto",
                  chunk_size: Optional[int] = None, category_weight: float | str = 1.0,
                  boundary_penalty: float = 0.0, boundary_discrete_only: bool = False) -> Surrogate:
    """The linearized network (module doc) of ``network(d, dtype)`` (hidden width ``m =
    width``) seeing unit-cube points through ``embedding`` (:func:`nbo_jax.networks.embed_inputs`;
    ``"auto"``: :func:`nbo_jax.networks.auto_embedding`; on a mixed space each categorical
    one-hot column's inputs times ``category_weight``, :func:`nbo_jax.networks.category_weights`;
    ``"fit"``, with ``fit_scales``: the value of :data:`CATEGORY_WEIGHT_GRID` of largest marginal
    likelihood, chosen whenever ``lam`` is refitted: :func:`select_category_weight`),
    trained by ``train``, features at
    ``theta_0`` (``feature_params="initial"``) or ``theta_t`` (``"current"``), scales fitted
    (``fit_scales``) or fixed at ``lam`` and 1, the posterior in ``mode`` (``"full"``,
    ``"diagonal"``, ``"dual"`` or ``"auto"``: :func:`nbo_jax.posterior.choose_mode`, ``"dual"``
    with fitted scales), candidate features in chunks of ``chunk_size``; with
    ``boundary_penalty = kappa > 0`` the training adds the boundary penalty on every unit-cube
    column that is not a category's (:func:`nbo_jax.training.boundary_penalty`: the network
    should rise toward the box's faces; Siivola et al. 2018), on every domain or, with
    ``boundary_discrete_only``, only on a search space with an integer or categorical
    parameter. Arguments are checked by the preset (:func:`nbo_jax.algorithms.neural_bo.neural_bo`).

    Returns:
        :class:`~nbo_jax.base.Surrogate` with a :class:`NeuralLinearState`: posterior mean
        ``h(x; theta_t)`` and std ``s sigma(x)`` at ``u (N, d)``; ``sample(state, key, nu=1.0)``
        the pathwise draw with exploration scale ``nu``; ``info`` (fitted scales):
        ``post_lam`` and ``post_scale``. With ``warm_start``, ``hyperparameters(state)`` is the
        state's :class:`NeuralLinearStart` (``theta_0`` and ``theta_t``), and ``init(key, data,
        rows, start=...)`` takes one as the start of its training instead of fresh weights
        drawn from ``key``: a network rebuilt from a growing history (``AskTell(warm_start=)``,
        :class:`~nbo_jax.integrations.optuna.NBOSampler`) continues its training as a
        ``tell`` does, instead of starting over from ``theta_0`` with one tell's epochs.
        Without ``warm_start`` it takes no start (``hyperparameters`` is ``None``).

    Raises:
        ValueError: (``init``) a ``start`` that is not a :class:`NeuralLinearStart` of this
        network's weights.
    """
    m = float(width)

    fit_weight = isinstance(category_weight, str)
    if fit_weight and (category_weight != "fit" or not fit_scales):
        raise ValueError(f"category_weight is a float > 0, or 'fit' with fitted scales; got {category_weight!r}")

    weighted = fit_weight or float(category_weight) != 1.0  # a weight of 1 is the plain embedding

    def fits_weight(space) -> bool:
        """Whether the category weight is fitted on ``space`` (static): ``"fit"`` and a category."""
        return fit_weight and has_categories(space)

    def net_for(u: Array, state) -> Network:
        d = u.shape[-1]
        return embedded(network, d, u.dtype, auto_embedding(d, embedding),
                        category_weights(state.space, state.category_weight) if weighted else None)

    def penalized_columns(space, d: int) -> tuple:
        """The columns whose faces the training penalizes (static): none without a penalty or,
        with ``boundary_discrete_only``, on a box or a space of floats; else every column but
        the categories' one-hot columns."""
        if boundary_penalty <= 0.0 or (boundary_discrete_only and (space is None or not space.discrete)):
            return ()
        if space is None:
            return tuple(range(d))
        return tuple(int(j) for j in np.flatnonzero(~space.categorical_columns()))

    def weights(state: NeuralLinearState):
        return state.params0 if feature_params == "initial" else state.params

    def append_rows(state, G_new, rows, mask_new):
        """The features ``G_new (n, p)`` of the new ``rows`` added one by one (a row outside
        ``mask_new`` leaves the posterior unchanged)."""

        def add_row(post, j):
            return post_lib.update(post, G_new[j], rows[j], mask_new[j], state.post_lam, m), None

        post, _ = jax.lax.scan(add_row, state.posterior, jnp.arange(G_new.shape[0]))
        return state._replace(posterior=post)

    def refit_scales(state, data, apply, G_new, rows, written):
        """The new rows' features written into the dual posterior (every row's, when the
        category weight is fitted: it may have changed), ``(lam, s^2)`` refitted and the factor
        rebuilt for the new ``lam`` (one Gram matrix serves both)."""
        if fits_weight(state.space):
            G = gradient_features(apply, weights(state), data.u).astype(state.posterior.G.dtype)
        else:
            G = state.posterior.G.at[jnp.where(written, rows, data.capacity)].set(
                G_new.astype(state.posterior.G.dtype), mode="drop")
        K0 = post_lib.feature_gram(G, data.mask, m)
        r = data.y - predict(apply, state.params0, data.u)
        lam_t, s2, _ = post_lib.fit_scales(G, data.mask, r, m, gram=K0)
        post = post_lib.rebuild(state.posterior, G, data.mask, lam_t, m, gram=K0)
        return state._replace(posterior=post, post_lam=lam_t, post_scale=jnp.sqrt(s2))

    def extend_scales(state, data, apply, G_new, rows, mask_new):
        """Between refits of ``lam``: the new rows appended with the kept ``lam`` and ``s^2``
        refitted for it (:func:`nbo_jax.posterior.fit_output_scale`)."""
        state = append_rows(state, G_new, rows, mask_new)
        r = data.y - predict(apply, state.params0, data.u)
        s2 = post_lib.fit_output_scale(state.posterior, data.mask, r)
        return state._replace(post_scale=jnp.sqrt(s2).astype(state.post_scale.dtype))

    def update(state: NeuralLinearState, data: Dataset, rows: Array, refit) -> NeuralLinearState:
        if fits_weight(state.space):
            w = when(refit, lambda: select_category_weight(network, embedding, state, data, m),
                     lambda: state.category_weight)
            state = state._replace(category_weight=w)
        net = net_for(data.u, state)
        written = (rows < data.count) & (rows < data.capacity)
        u_new = jnp.take(data.u, rows, axis=0, mode="clip")
        mask_new = written & jnp.take(data.mask, rows, mode="clip")
        key, k_train = jax.random.split(state.key)
        start = state.params if warm_start else state.params0
        params = train_regression(net.apply, start, state.params0, data.u, data.y, data.mask, k_train, train,
                                  boundary_columns=penalized_columns(data.space, data.u.shape[-1]),
                                  boundary_weight=boundary_penalty)
        state = state._replace(params=params, key=key)
        G_new = gradient_features(net.apply, weights(state), u_new)
        if not fit_scales:
            return append_rows(state, G_new, rows, mask_new)
        return when(refit, lambda: refit_scales(state, data, net.apply, G_new, rows, written),
                    lambda: extend_scales(state, data, net.apply, G_new, rows, mask_new))

    def init(key: Array, data: Dataset, rows: Array, start: Optional[NeuralLinearStart] = None) -> NeuralLinearState:
        chosen = mode
        dtype = data.u.dtype
        w0 = 1.0 if fit_weight else category_weight
        net = embedded(network, data.u.shape[-1], dtype, auto_embedding(data.u.shape[-1], embedding))
        if mode == "auto":
            chosen = "dual" if fit_scales else post_lib.choose_mode(net.num_params, data.capacity)
        k_net, k_state = jax.random.split(key)
        params0 = net.init(k_net)
        params0, params = check_start(start, NeuralLinearStart(params0, params0),
                                      "the linearized network's NeuralLinearStart of this network's weights")
        state = NeuralLinearState(params0, params, post_lib.init(chosen, net.num_params, data.capacity, lam, dtype),
                                  k_state, jnp.asarray(lam, dtype), jnp.ones((), dtype), data.space,
                                  jnp.asarray(w0, dtype))
        return update(state, data, rows, True)

    def posterior(state: NeuralLinearState, u: Array) -> SurrogatePosterior:
        apply = net_for(u, state).apply
        G_c = gradient_features(apply, weights(state), u, chunk_size=chunk_size)
        var = post_lib.variance(state.posterior, G_c, state.post_lam, m)
        return SurrogatePosterior(u, predict(apply, state.params, u), state.post_scale * jnp.sqrt(var), None)

    def sample(state: NeuralLinearState, key: Array, nu=1.0) -> Callable[[Array], Array]:
        delta = post_lib.sample_weights(state.posterior, key, state.post_lam, m)
        scale = nu * state.post_scale / jnp.sqrt(m)

        def f(u: Array) -> Array:
            apply = net_for(u, state).apply
            return predict(apply, state.params, u) + scale * jacobian_vector_product(apply, weights(state), u, delta)

        return f

    def info(state: NeuralLinearState) -> dict:
        out = {"post_lam": state.post_lam, "post_scale": state.post_scale}
        if fit_weight:
            out["category_weight"] = state.category_weight
        return out

    def hyperparameters(state: NeuralLinearState) -> NeuralLinearStart:
        return NeuralLinearStart(state.params0, state.params)

    return Surrogate(init, update, posterior, sample, pathwise=True, info=info if fit_scales else None,
                     name="neural-linear", counts_by_mean=True,
                     hyperparameters=hyperparameters if warm_start else None)


__all__ = ["CATEGORY_WEIGHT_GRID", "NeuralLinearStart", "NeuralLinearState", "neural_linear", "select_category_weight"]
