"""The neural algorithms' shared network and training settings (checked once, at the factory)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._checks import check_bool, check_choice, check_int, check_scale
from ..networks import ACTIVATIONS, Network, mlp
from ..training import TrainConfig, make_optimizer

OPTIMIZERS = ("sgd", "adam")


def network_builder(width, depth, activation, *, build: Callable = mlp, min_width: int = 1, min_depth: int = 2,
                    use_bias=None, **options) -> Callable[[int, Any], Network]:
    """A factory's network, checked once and built once per input dimension and dtype.

    Checks ``width`` (an int ``>= min_width``), ``depth`` (an int ``>= min_depth``),
    ``activation`` (a name in :data:`nbo_jax.networks.ACTIVATIONS`) and, when given,
    ``use_bias`` (a bool), then returns the cached ``network(d, dtype)``: ``build(d, width,
    depth, activation=activation, dtype=dtype, **options)`` (with ``use_bias=`` when given);
    ``build`` is :func:`nbo_jax.networks.mlp` or, e.g. with ``gamma=``,
    :func:`nbo_jax.networks.ntk_mlp`.

    Raises:
        TypeError: ``width``/``depth`` not an int, ``use_bias`` not a bool.
        ValueError: ``width``/``depth`` too small, unknown ``activation`` (the messages name
        the argument)."""
    width = check_int("width", width, min_width)
    depth = check_int("depth", depth, min_depth)
    activation = check_choice("activation", activation, ACTIVATIONS)
    if use_bias is not None:
        options["use_bias"] = check_bool("use_bias", use_bias)

    @functools.cache
    def network(d: int, dtype) -> Network:
        return build(d, width, depth, activation=activation, dtype=dtype, **options)

    return network


def train_config(optimizer, learning_rate, epochs, minibatch_size, reg, *, min_epochs: int = 1) -> TrainConfig:
    """The network's training settings (:func:`nbo_jax.training.train_regression`), checked:
    ``optimizer`` (``"sgd"`` or ``"adam"``) at ``learning_rate`` (a float ``> 0``), ``epochs``
    (an int ``>= min_epochs``) of mini-batches of ``minibatch_size`` (an int ``>= 1``) and the
    pull ``reg`` toward the initial weights (as given: it may be a traced scalar).

    Raises:
        TypeError / ValueError: a bad argument (the message names it)."""
    optimizer = check_choice("optimizer", optimizer, OPTIMIZERS)
    learning_rate = check_scale("learning_rate", learning_rate, allow_zero=False, allow_array=False)
    epochs = check_int("epochs", epochs, min_epochs)
    minibatch_size = check_int("minibatch_size", minibatch_size, 1)
    return TrainConfig(epochs=epochs, batch_size=minibatch_size, optimizer=make_optimizer(optimizer, learning_rate),
                       reg=reg)
