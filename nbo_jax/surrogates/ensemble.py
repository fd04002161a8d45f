"""A deep ensemble (Lakshminarayanan, Pritzel & Blundell 2017, "Simple and scalable predictive
uncertainty estimation using deep ensembles", NeurIPS) as a :class:`~nbo_jax.base.Surrogate`.

``M`` networks ``h_1..h_M`` of the same architecture from independent random initializations
``theta_j^0``, each trained on the same targets (mini-batch Adam or SGD; its own shuffles)
with a pull toward its own initialization (anchored ensembling, Pearce et al. 2020, "Uncertainty
in neural networks: approximately Bayesian ensembling", AISTATS)::

    theta_j = argmin 1/2 sum_i (h_j(x_i) - y_i)^2 + reg/2 ||theta_j - theta_j^0||^2
    mean(x) = 1/M sum_j h_j(x)        std(x)^2 = 1/M sum_j (h_j(x) - mean(x))^2
    f~(x)   = h_J(x),  J ~ Uniform{1..M}    (ensemble sampling, Lu & Van Roy 2017)

A member is one function, so the posterior draw is pathwise: Thompson sampling on it is
climbed like any acquisition. Every ``update`` trains the members again, from their current
weights (``warm_start``) or from their initializations. Practitioners try this surrogate
first (Li, Rudner & Wilson 2024, "A study of Bayesian neural network surrogates for Bayesian
optimization", ICLR, compare it with GPs and other neural surrogates).
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp

from ..base import Surrogate, SurrogatePosterior
from ..dataset import Dataset
from ..features import predict
from .._checks import check_bool, check_choice, check_int, check_scale
from ..networks import INPUT_EMBEDDINGS, Network, auto_embedding, embedded, mlp, network_builder
from ..training import TrainConfig, train_config, train_regression

Array = jax.Array


class EnsembleState(NamedTuple):
    """The ensemble's state (a pytree; every leaf of ``params`` and ``anchor`` has a leading
    axis of size ``M``).

    Attributes:
        params: the members' trained weights. anchor: their initial weights
            ``theta_j^0`` (the pull's centre and, without ``warm_start``, each training's
            start).
        key: PRNG key for the next training's shuffles.
    """

    params: Any
    anchor: Any
    key: Array


def ensemble(network: Callable[[int, Any], Network], *, members: int, train: TrainConfig,
             embedding: str = "auto", warm_start: bool = True) -> Surrogate:
    """A deep ensemble (module doc) of ``members`` networks ``network(d, dtype)`` (e.g. from
    :func:`nbo_jax.networks.mlp`), each seeing a unit-cube point through ``embedding``
    (:func:`nbo_jax.networks.embed_inputs`; ``"auto"``: :func:`nbo_jax.networks.auto_embedding`)
    and trained by ``train`` (:class:`nbo_jax.training.TrainConfig`; its ``reg`` is the pull
    toward each member's initialization). Arguments are checked by the preset
    (:func:`nbo_jax.algorithms.model_bo.model_bo`).

    Returns:
        :class:`~nbo_jax.base.Surrogate` with an :class:`EnsembleState`; its posterior at
        ``u (N, d)``: the members' mean and standard deviation ``(N,)`` each (floored at
        ``sqrt(eps 1e-3)`` for the climb's gradient), a pathwise draw (one member).
    """

    def net_for(u: Array) -> Network:
        d = u.shape[-1]
        return embedded(network, d, u.dtype, auto_embedding(d, embedding))

    def fit(start: Any, anchor: Any, data: Dataset, key: Array) -> Any:
        apply = net_for(data.u).apply
        one = lambda p, a, k: train_regression(apply, p, a, data.u, data.y, data.mask, k, train)  # noqa: E731
        return jax.vmap(one)(start, anchor, jax.random.split(key, members))

    def init(key: Array, data: Dataset, rows: Array) -> EnsembleState:
        k_init, k_fit, key = jax.random.split(key, 3)
        anchor = jax.vmap(net_for(data.u).init)(jax.random.split(k_init, members))
        return EnsembleState(fit(anchor, anchor, data, k_fit), anchor, key)

    def update(state: EnsembleState, data: Dataset, rows, refit) -> EnsembleState:
        key, k_fit = jax.random.split(state.key)
        start = state.params if warm_start else state.anchor
        return EnsembleState(fit(start, state.anchor, data, k_fit), state.anchor, key)

    def posterior(state: EnsembleState, u: Array) -> SurrogatePosterior:
        apply = net_for(u).apply
        f = jax.vmap(lambda p: predict(apply, p, u))(state.params)  # (M, N)
        mean = jnp.mean(f, axis=0)
        var = jnp.mean((f - mean) ** 2, axis=0)
        return SurrogatePosterior(u, mean, jnp.sqrt(jnp.maximum(var, jnp.finfo(var.dtype).eps * 1e-3)), None)

    def sample(state: EnsembleState, key: Array) -> Callable[[Array], Array]:
        member = jax.tree.map(lambda a: a[jax.random.randint(key, (), 0, members)], state.params)
        return lambda u: predict(net_for(u).apply, member, u)

    return Surrogate(init, update, posterior, sample, pathwise=True, name="ensemble")


DEFAULTS = dict(members=5, width=64, depth=3, activation="relu", optimizer="adam", learning_rate=1e-3, epochs=50,
                minibatch_size=50, lam=0.01, warm_start=True, input_embedding="auto")
"""The options of :func:`from_options`: five members of Neural-BO's network and training (Adam
1e-3, 50 epochs of mini-batches of 50, ``lam = 0.01`` toward each member's initialization),
inputs seen through ``"auto"`` (:func:`nbo_jax.networks.auto_embedding`)."""


def from_options(members, width, depth, activation, optimizer, learning_rate, epochs, minibatch_size, lam, warm_start,
                 input_embedding) -> Surrogate:
    """:func:`ensemble` from checked options (:data:`DEFAULTS`; the preset
    :func:`nbo_jax.algorithms.surrogate_bo.surrogate_bo` lays a user's over them): ``members``
    (int >= 2) networks :func:`nbo_jax.networks.mlp` with biases of ``width`` and ``depth``
    (weight layers, >= 2) and ``activation``, trained by ``optimizer`` (``"adam"``/``"sgd"``)
    at ``learning_rate`` for ``epochs`` of ``minibatch_size``, pulled toward their
    initializations by ``lam * width``, from their current weights (``warm_start``).

    Raises:
        TypeError / ValueError: an option of the wrong type or out of range (names it)."""
    network = network_builder(width, depth, activation, build=mlp, use_bias=True)
    reg = check_scale("lam", lam, allow_array=False) * float(width)
    return ensemble(network, members=check_int("members", members, 2),
                    train=train_config(optimizer, learning_rate, epochs, minibatch_size, reg),
                    embedding=check_choice("input_embedding", input_embedding, INPUT_EMBEDDINGS + ("auto",)),
                    warm_start=check_bool("warm_start", warm_start))


__all__ = ["DEFAULTS", "EnsembleState", "ensemble", "from_options"]
