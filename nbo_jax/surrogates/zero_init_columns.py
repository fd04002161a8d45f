"""One zero-initialized network per column (the objective and ``K`` constraints), each with
the linear posterior of its NTK features (Phan-Trong 2024, PhD thesis, Chapter 4, eqs.
4.1-4.4: Neural-CBO's model) as a multi-output :class:`~nbo_jax.base.Surrogate`.

Per column ``j`` a network ``h_j(x; theta_j)`` (:func:`nbo_jax.networks.zero_init_mlp`: exactly
0 at ``theta_j^0``, fixed outer layer), with ``g_j`` its parameter gradient at ``theta_j^0``::

    T_j      = (y_j - shift_j) / scale_j          (constrained_transform: the objective
               standardized, each constraint divided by its root mean square, 0 kept)
    theta_j  = TrainNN(T_j)                        ("retrain": all rows, warm start, ridge
               lam ||theta - theta^0||^2;  "sgd": one plain step per new row, eq. 4.2)
    mean_j(x) = h_j(x; theta_j)
    std_j(x)^2 = k_j(x, x) - k_j(x)^T (K_j + lam I)^{-1} k_j(x),   k_j(x, x') = g_j(x)^T g_j(x')
               = lam g_j(x)^T U_j^{-1} g_j(x),  U_j = lam I + sum_i g_j(x_i) g_j(x_i)^T   (eqs. 4.3-4.4)

The posterior is the NTK-feature linear posterior of :mod:`nbo_jax.surrogates.neural_linear`
at feature scale ``m = 1`` (the network already divides by ``sqrt(m)``) with fixed scales, in
its dual form, the kernel evaluated layer by layer from activations and back-propagated errors
(:func:`nbo_jax.networks.factor_kernel`: ``O(L m)`` per entry instead of ``O(p)``, no feature
matrix); each new row is appended to the Cholesky factor of ``K_j + lam I``
(:func:`nbo_jax.posterior.chol_append`). All ``J`` networks have the same shapes and are
trained and evaluated in one ``vmap``.

The model fits the column values as observed (``outcome_transform="none"`` in
:func:`nbo_jax.bo.bo_algorithm`) and scales them itself, since one-pass SGD cannot redo
earlier steps: ``"retrain"`` recomputes ``(shift, scale)`` at every update, ``"sgd"`` keeps
the initial design's (``shift``/``scale`` in the state). Its posterior is in the units of
the values it is given; :func:`scaled_posterior` is the same in the scaled units, where
Neural-CBO's rule works. Failed evaluations hold imputed values inside ``data.mask`` and are fitted like any
row; rows outside the mask are never fitted.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple, Optional

import jax
import jax.numpy as jnp

from .. import posterior as post_lib
from ..base import Surrogate, SurrogatePosterior
from ..dataset import Dataset
from ..networks import ZeroInitNetwork, factor_diag, factor_kernel, zero_init_mlp
from ..observations import constrained_transform
from ..training import TrainConfig, train_regression

Array = jax.Array

TRAINING = ("sgd", "retrain")


class ZeroInitColumnsState(NamedTuple):
    """The model's state (a pytree; fixed shapes; ``J`` columns, objective first).

    Attributes:
        params0, params: initial / current weights, stacked over the ``J`` networks.
        q: ``(J, m)`` fixed outer weights.
        factors: per layer ``(h (J, cap, a_l), delta (J, cap, m))``: NTK factors of the
            fitted rows at ``params0`` (zero on rows outside ``data.mask``).
        chol: ``(J, cap, cap)`` lower Cholesky factors of ``K_j + lam I``.
        shift, scale: ``(J,)`` the target transform ``(y - shift) / scale`` of the last fit.
        key: PRNG key for training shuffles.
    """

    params0: Any
    params: Any
    q: Array
    factors: Any
    chol: Array
    shift: Array
    scale: Array
    key: Array


@functools.lru_cache(maxsize=None)
def _network(d: int, m: int, depth: int, use_bias: bool, dtype) -> ZeroInitNetwork:
    return zero_init_mlp(d, m, depth, use_bias=use_bias, dtype=dtype)


def network_of(state: ZeroInitColumnsState, d: int) -> ZeroInitNetwork:
    """The network of ``state`` for ``d`` inputs (its width, depth and biases read from the
    weights' shapes)."""
    return _network(d, state.q.shape[1], len(state.params0), "b" in state.params0[0], state.q.dtype)


def _factors(params0, q, net: ZeroInitNetwork, z: Array):
    """NTK factors of points ``z (n, d)`` for one network."""
    return jax.vmap(lambda zz: net.ntk_factors(params0, q, zz))(z)


def fitted_mean(state: ZeroInitColumnsState, u: Array, column: int = 0) -> Array:
    """``(N,)`` the trained network of ``column`` at unit-cube points ``u (N, d)`` (scaled
    units): the posterior mean without the posterior's std."""
    net = network_of(state, u.shape[1])
    p = jax.tree.map(lambda a: a[column], state.params)
    return jax.vmap(lambda z: net.apply(p, state.q[column], z))(2.0 * u - 1.0)


def scaled_posterior(state: ZeroInitColumnsState, u: Array) -> SurrogatePosterior:
    """The posterior at unit-cube points ``u (N, d)`` in the model's scaled units (``(y -
    shift) / scale``, 0 still the feasibility threshold): each network's mean and NTK std,
    ``(N,)`` for the objective and ``(N, J - 1)`` for the constraints; ``incumbent`` None."""
    net = network_of(state, u.shape[1])
    z = 2.0 * u - 1.0

    def per_net(params, params0, q, factors, L):
        mean = jax.vmap(lambda zz: net.apply(params, q, zz))(z)
        F = _factors(params0, q, net, z)
        return mean, jnp.sqrt(post_lib.chol_variance(L, factor_kernel(factors, F), factor_diag(F)))

    mean, std = jax.vmap(per_net)(state.params, state.params0, state.q, state.factors, state.chol)
    return SurrogatePosterior(u, mean[0], std[0], None, mean[1:].T, std[1:].T)


def zero_init_columns(*, width: Optional[int], depth: int, lam: float, use_bias: bool, training: str,
                      learning_rate: float, train: TrainConfig, train_steps: int, init_steps: int) -> Surrogate:
    """The model of the module doc: ``J`` networks of hidden width ``width`` (even; ``None``:
    the dataset's capacity rounded up to even, the thesis's ``m = T``) and ``depth`` weight
    layers, biases when ``use_bias``; posterior noise (and ridge) ``lam``; ``training``
    ``"retrain"`` (``train``'s optimizer and mini-batch, about ``train_steps`` steps per update
    and ``init_steps`` at ``init``: ``ceil(steps / batches per epoch)`` epochs over the fitted
    rows) or ``"sgd"`` (one step of ``learning_rate`` per new row and network). Arguments
    are checked by the preset (:func:`nbo_jax.algorithms.neural_cbo.neural_cbo`).

    Returns:
        multi-output :class:`~nbo_jax.base.Surrogate` over ``(cap, J)`` datasets with a
        :class:`ZeroInitColumnsState`: at ``u (N, d)`` the objective's ``mean``/``std``
        ``(N,)`` and ``constraint_mean``/``constraint_std`` ``(N, J - 1)`` in the units of the
        values it was given (:func:`scaled_posterior` in its own scaled units).
    """
    sgd = training == "sgd"

    def absorb(state: ZeroInitColumnsState, data: Dataset, rows: Array, steps: int) -> ZeroInitColumnsState:
        """Each new row of ``rows (n,)`` enters every network's Cholesky factor (a row past
        ``data.count``, not written, is dropped), then the networks train."""
        net = network_of(state, data.u.shape[1])
        n = rows.shape[0]
        new = rows < data.count
        u_new = data.u.at[rows].get(mode="fill", fill_value=0.0)
        Y_new = data.y.at[rows].get(mode="fill", fill_value=0.0)  # (n, J), failures imputed
        ok = data.mask.at[rows].get(mode="fill", fill_value=False) & new[:, None]  # (n, J)
        z_new = 2.0 * u_new - 1.0

        def per_net(p0, q, factors, L, ok_j):
            F = _factors(p0, q, net, z_new)
            F = jax.tree.map(lambda a: a * ok_j.reshape((-1,) + (1,) * (a.ndim - 1)), F)

            def add(carry, i):
                factors, L = carry
                Fi = jax.tree.map(lambda a: a[i][None], F)
                j = jnp.where(new[i], rows[i], L.shape[0])  # a row not written: dropped
                L = post_lib.chol_append(L, factor_kernel(factors, Fi)[:, 0], factor_diag(Fi)[0], j, lam)
                factors = jax.tree.map(lambda a, b: a.at[j].set(b[0], mode="drop"), factors, Fi)
                return (factors, L), None

            return jax.lax.scan(add, (factors, L), jnp.arange(n))[0]

        factors, chol = jax.vmap(per_net)(state.params0, state.q, state.factors, state.chol, ok.T)
        key, k_train = jax.random.split(state.key)
        if sgd:
            shift, scale = state.shift, state.scale
            targets = jnp.where(ok, (Y_new - shift) / scale, 0.0)  # outside the mask: no step

            def sgd_net(params, q, t_j, ok_j):
                def step(p, i):
                    g = jax.grad(lambda pp: 0.5 * (net.apply(pp, q, z_new[i]) - t_j[i]) ** 2)(p)
                    return jax.tree.map(lambda a, b: a - jnp.where(ok_j[i], learning_rate * b, 0.0), p, g), None

                return jax.lax.scan(step, params, jnp.arange(n))[0]

            params = jax.vmap(sgd_net)(state.params, state.q, targets.T, ok.T)
        else:
            Y, M = data.y, data.mask
            shift, scale = constrained_transform(Y, M)
            targets = jnp.where(M, (Y - shift) / scale, 0.0)
            z_all = 2.0 * data.u - 1.0

            def fit_net(params, params0, q, t_j, m_j, k):
                batches = jnp.maximum((jnp.sum(m_j) + train.batch_size - 1) // train.batch_size, 1)
                epochs = (steps + batches - 1) // batches
                return train_regression(lambda p, z: net.apply(p, q, z), params, params0, z_all, t_j, m_j, k, train,
                                        epochs=epochs)

            keys = jax.random.split(k_train, Y.shape[1])
            params = jax.vmap(fit_net)(state.params, state.params0, state.q, targets.T, M.T, keys)
        return state._replace(params=params, factors=factors, chol=chol, shift=shift, scale=scale, key=key)

    def init(key: Array, data: Dataset, rows: Array) -> ZeroInitColumnsState:
        (cap, J), d, dtype = data.y.shape, data.u.shape[1], data.u.dtype
        m = width if width is not None else cap + (cap % 2)
        net = _network(d, int(m), depth, use_bias, dtype)
        k_net, k_state = jax.random.split(key)
        params0, q = jax.vmap(net.init)(jax.random.split(k_net, J))
        shift, scale = constrained_transform(data.y, data.mask)  # the initial design's (kept by "sgd")
        shapes = _factors(jax.tree.map(lambda a: a[0], params0), q[0], net, jnp.zeros((1, d), dtype))
        factors = jax.tree.map(lambda a: jnp.zeros((J, cap) + a.shape[1:], dtype), shapes)
        chol = jnp.broadcast_to(jnp.sqrt(jnp.asarray(lam, dtype)) * jnp.eye(cap, dtype=dtype), (J, cap, cap))
        state = ZeroInitColumnsState(params0, params0, q, factors, chol, shift, scale, k_state)
        return absorb(state, data, rows, init_steps)

    def update(state: ZeroInitColumnsState, data: Dataset, rows: Array, refit) -> ZeroInitColumnsState:
        return absorb(state, data, rows, train_steps)  # every update trains: no refit schedule

    def posterior(state: ZeroInitColumnsState, u: Array) -> SurrogatePosterior:
        post, shift, scale = scaled_posterior(state, u), state.shift, state.scale
        return post._replace(mean=post.mean * scale[0] + shift[0], std=post.std * scale[0],
                             constraint_mean=post.constraint_mean * scale[1:] + shift[1:],
                             constraint_std=post.constraint_std * scale[1:])

    return Surrogate(init, update, posterior, multi_output=True, name="zero-init-columns")


__all__ = ["TRAINING", "ZeroInitColumnsState", "fitted_mean", "network_of", "scaled_posterior", "zero_init_columns"]
