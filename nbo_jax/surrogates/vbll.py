"""Variational Bayesian last layers (VBLL; Harrison, Willes & Snoek 2024, "Variational Bayesian
last layers", ICLR; for BO: Brunzema, Jordahn, Willes, Trimpe, Snoek & Harrison 2025, "Bayesian
optimization via continual variational last layer training", ICLR) as a
:class:`~nbo_jax.base.Surrogate`.

A network's last hidden layer gives features ``phi(x) (m,)``; the last layer is a Gaussian
``q(w) = N(w_bar, S)``, ``S = L L^T``, with prior ``p(w) = N(0, s_p^2 I)`` and noise variance
``sigma^2``. Features, ``(w_bar, L)`` and ``sigma^2`` are trained together by Adam on the
variational bound of Harrison et al. (2024, Theorem 1, regression), per observation::

    loss = 1/n sum_i [ 1/2 log(2 pi sigma^2) + ((y_i - w_bar^T phi_i)^2 + phi_i^T S phi_i) / (2 sigma^2) ]
           + KL(q(w) || p(w)) / n
    KL   = 1/2 [ (tr S + ||w_bar||^2) / s_p^2 - m + m log s_p^2 - log det S ]

The posterior is analytic: ``mean(x) = w_bar^T phi(x)``, ``std(x)^2 = phi(x)^T S phi(x)`` (the
latent function's), and a Thompson sample ``f~(x) = w~^T phi(x)``, ``w~ ~ N(w_bar, S)``, is one
function of ``x`` (pathwise: climbed like any acquisition). Every ``update`` continues the
training from the current parameters for ``steps`` full-batch steps (Brunzema et al.'s
continual training, without their recursive last-layer updates between trainings).
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

from ..base import Surrogate, SurrogatePosterior
from ..dataset import Dataset
from .._checks import check_choice, check_int, check_scale
from ..networks import ACTIVATIONS, INPUT_EMBEDDINGS, auto_embedding, embed_inputs

Array = jax.Array


class _Features(nn.Module):
    """The feature network ``phi``: ``len(widths)`` dense layers with ``activation``."""

    widths: tuple
    activation: Callable
    param_dtype: Any

    @nn.compact
    def __call__(self, z):
        for w in self.widths:
            z = self.activation(nn.Dense(w, param_dtype=self.param_dtype)(z))
        return z


class VBLLParams(NamedTuple):
    """The trained parameters.

    Attributes:
        features: the feature network's weights (flax).
        w_mean: ``(m,)`` the last layer's mean ``w_bar``.
        w_chol: ``(m, m)`` the factor ``L`` of ``S = L L^T`` as trained: its strict lower
            triangle, and the log of its diagonal on the diagonal (:func:`chol_factor`).
        log_noise: ``()`` ``log(sigma^2 - noise_floor)``.
    """

    features: Any
    w_mean: Array
    w_chol: Array
    log_noise: Array


class VBLLState(NamedTuple):
    """The VBLL surrogate's state: ``params`` (:class:`VBLLParams`) and the PRNG ``key``."""

    params: VBLLParams
    key: Array


def chol_factor(raw: Array) -> Array:
    """``L (m, m)`` lower triangular with a positive diagonal from the trained ``raw (m, m)``:
    the strict lower triangle of ``raw`` plus ``diag(exp(diag(raw)))``."""
    return jnp.tril(raw, -1) + jnp.diag(jnp.exp(jnp.diag(raw)))


def vbll(*, width: int, depth: int, activation: Callable, prior_scale: float, learning_rate: float,
         steps: int, init_steps: int, noise_floor: float, embedding: str = "auto") -> Surrogate:
    """VBLL (module doc) with ``depth - 1`` hidden layers of ``width`` units and ``activation``
    (``m = width`` features), the last layer's prior scale ``s_p = prior_scale``, Adam at
    ``learning_rate`` for ``init_steps`` full-batch steps at ``init`` and ``steps`` at every
    ``update``, ``sigma^2 >= noise_floor`` (target units) and inputs seen through
    ``embedding`` (:func:`nbo_jax.networks.embed_inputs`; ``"auto"``:
    :func:`nbo_jax.networks.auto_embedding`). Arguments are checked by the preset
    (:func:`nbo_jax.algorithms.model_bo.model_bo`).

    Returns:
        :class:`~nbo_jax.base.Surrogate` with a :class:`VBLLState`; its posterior at
        ``u (N, d)``: mean and latent standard deviation ``(N,)`` each (floored at
        ``sqrt(eps 1e-3)``), a pathwise draw of the last layer; ``info``: the noise
        standard deviation ``vbll_noise`` (target units).
    """
    adam = optax.adam(learning_rate)
    log_prior_var = 2.0 * math.log(prior_scale)

    def module(dtype) -> _Features:
        return _Features((width,) * (depth - 1), activation, dtype)

    def phi(features: Any, u: Array) -> Array:
        z = embed_inputs(u, auto_embedding(u.shape[-1], embedding))
        return module(u.dtype).apply({"params": features}, z)

    def loss(params: VBLLParams, data: Dataset) -> Array:
        n = jnp.maximum(jnp.sum(data.mask), 1).astype(data.y.dtype)
        F = phi(params.features, data.u)  # (cap, m)
        L = chol_factor(params.w_chol)
        noise = noise_floor + jnp.exp(params.log_noise)
        quad = jnp.sum((F @ L) ** 2, axis=1)
        nll = 0.5 * jnp.log(2.0 * jnp.pi * noise) + ((data.y - F @ params.w_mean) ** 2 + quad) / (2.0 * noise)
        kl = 0.5 * ((jnp.sum(L * L) + jnp.sum(params.w_mean ** 2)) * jnp.exp(-log_prior_var) - width
                    + width * log_prior_var - 2.0 * jnp.sum(jnp.diag(params.w_chol)))
        return (jnp.sum(jnp.where(data.mask, nll, 0.0)) + kl) / n

    def train(params: VBLLParams, data: Dataset, n_steps: int) -> VBLLParams:
        grad = jax.grad(loss)

        def step(carry, _):
            p, s = carry
            updates, s = adam.update(grad(p, data), s, p)
            return (optax.apply_updates(p, updates), s), None

        (params, _), _ = jax.lax.scan(step, (params, adam.init(params)), None, length=n_steps)
        return params

    def init(key: Array, data: Dataset, rows: Array) -> VBLLState:
        k_net, key = jax.random.split(key)
        dtype = data.u.dtype
        z = embed_inputs(jnp.zeros(data.u.shape[1:], dtype), auto_embedding(data.u.shape[1], embedding))
        features = module(dtype).init(k_net, z)["params"]
        raw = jnp.diag(jnp.full((width,), math.log(prior_scale), dtype))
        params = VBLLParams(features, jnp.zeros((width,), dtype), raw, jnp.asarray(math.log(0.1), dtype))
        return VBLLState(train(params, data, init_steps), key)

    def update(state: VBLLState, data: Dataset, rows, refit) -> VBLLState:
        return VBLLState(train(state.params, data, steps), state.key)

    def posterior(state: VBLLState, u: Array) -> SurrogatePosterior:
        F = phi(state.params.features, u)
        var = jnp.sum((F @ chol_factor(state.params.w_chol)) ** 2, axis=1)
        std = jnp.sqrt(jnp.maximum(var, jnp.finfo(var.dtype).eps * 1e-3))
        return SurrogatePosterior(u, F @ state.params.w_mean, std, None)

    def sample(state: VBLLState, key: Array) -> Callable[[Array], Array]:
        eps = jax.random.normal(key, (width,), state.params.w_mean.dtype)
        w = state.params.w_mean + chol_factor(state.params.w_chol) @ eps
        return lambda u: phi(state.params.features, u) @ w

    def info(state: VBLLState) -> dict:
        return {"vbll_noise": jnp.sqrt(noise_floor + jnp.exp(state.params.log_noise))}

    return Surrogate(init, update, posterior, sample, pathwise=True, info=info, name="vbll")


DEFAULTS = dict(width=64, depth=3, activation="tanh", prior_scale=1.0, learning_rate=1e-2, steps=100, init_steps=500,
                noise_floor=1e-4, input_embedding="auto")
"""The options of :func:`from_options` (not tuned: Adam at 1e-2, 500 steps at ``init`` and 100
per update, two hidden tanh layers of 64 features, a unit prior on the last layer)."""


def from_options(width, depth, activation, prior_scale, learning_rate, steps, init_steps, noise_floor,
                 input_embedding) -> Surrogate:
    """:func:`vbll` from checked options (:data:`DEFAULTS`; the preset
    :func:`nbo_jax.algorithms.surrogate_bo.surrogate_bo` lays a user's over them): ``width``
    features, ``depth`` weight layers (the last layer included, >= 2), ``activation`` (a name
    of :data:`nbo_jax.networks.ACTIVATIONS`), ``prior_scale``, ``learning_rate``, ``steps``,
    ``init_steps``, ``noise_floor``, ``input_embedding``.

    Raises:
        TypeError / ValueError: an option of the wrong type or out of range (names it)."""
    return vbll(width=check_int("width", width, 1), depth=check_int("depth", depth, 2),
                activation=ACTIVATIONS[check_choice("activation", activation, tuple(ACTIVATIONS))],
                prior_scale=check_scale("prior_scale", prior_scale, allow_zero=False, allow_array=False),
                learning_rate=check_scale("learning_rate", learning_rate, allow_zero=False, allow_array=False),
                steps=check_int("steps", steps, 0), init_steps=check_int("init_steps", init_steps, 0),
                noise_floor=check_scale("noise_floor", noise_floor, allow_zero=False, allow_array=False),
                embedding=check_choice("input_embedding", input_embedding, INPUT_EMBEDDINGS + ("auto",)))


__all__ = ["DEFAULTS", "VBLLParams", "VBLLState", "chol_factor", "from_options", "vbll"]
