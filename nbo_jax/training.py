"""Training a network on masked, fixed-capacity data, inside ``lax`` loops (optax).

Neural-BO's TrainNN (Phan-Trong et al. 2023, Algorithm 2, line 1) minimizes

    L(theta) = 1/2 sum_i (h(x_i; theta) - y_i)^2 + 1/2 m lam ||theta - theta_0||^2 .

We minimize ``L / n`` (same minimizer, learning rates independent of ``n``) by mini-batch
gradient steps: each epoch shuffles the ``n`` valid rows and takes ``ceil(n / batch_size)``
steps on ``1/(2|B|) sum_{i in B} (h - y)^2 + reg / (2 n) ||theta - theta_0||^2``, whose
expectation is ``L / n`` with ``reg = m lam``.

With ``boundary_weight = kappa > 0`` each step adds the boundary penalty
(:func:`boundary_penalty`): the function should rise toward the box's faces, as the virtual
derivative-sign observations at the boundary that Siivola et al. 2018 ("Correcting boundary
over-exploration deficiencies in Bayesian optimization with virtual derivative sign
observations", IEEE MLSP) add to a GP say, written here as a hinge on the network's slopes::

    P(theta) = kappa / (2 C |B|) sum_{i in B} sum_{j in cols} [relu(dh/du_j(u_i | u_j = 0))^2
                                                               + relu(-dh/du_j(u_i | u_j = 1))^2]

at the mini-batch's rows ``u_i`` moved onto both faces of each penalized column ``j`` (``C``
columns); a slope that already rises outward costs nothing.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from ._checks import check_choice, check_int, check_scale

Array = jax.Array

OPTIMIZERS = ("sgd", "adam")
"""The optimizers a network is trained with (:func:`make_optimizer`)."""


class TrainConfig(NamedTuple):
    """Static training settings.

    Attributes:
        epochs: passes over the valid data (paper: 50).
        batch_size: mini-batch size (paper: 50).
        optimizer: an optax ``GradientTransformation`` (paper: ``optax.sgd(1e-3)``).
        reg: coefficient of ``1/2 ||theta - theta_0||^2`` in the full-data loss
            (``m * lam`` for Neural-BO).
    """

    epochs: int
    batch_size: int
    optimizer: optax.GradientTransformation
    reg: float


def make_optimizer(name: str, learning_rate: float) -> optax.GradientTransformation:
    """``"sgd"`` or ``"adam"`` at ``learning_rate``.

    Raises:
        ValueError: unknown name or non-positive learning rate.
    """
    if not learning_rate > 0:
        raise ValueError(f"learning_rate must be > 0, got {learning_rate}")
    table = {"sgd": optax.sgd, "adam": optax.adam}
    if name not in table:
        raise ValueError(f"optimizer must be one of {sorted(table)}, got {name!r}")
    return table[name](learning_rate)


def train_regression(
    apply: Callable[[Any, Array], Array],
    params: Any,
    anchor: Any,
    z: Array,
    y: Array,
    mask: Array,
    key: Array,
    config: TrainConfig,
    *,
    epochs: Any = None,
    boundary_columns: tuple = (),
    boundary_weight: float = 0.0,
) -> Any:
    """Fit ``apply(params, z_i) ~ y_i`` on the rows with ``mask`` True.

    Args:
        apply: ``apply(params, z (d,)) -> ()``.
        params: starting parameters; anchor: ``theta_0`` of the regularizer.
        z: ``(cap, d)`` inputs; y: ``(cap,)`` targets; mask: ``(cap,)`` bool.
        key: PRNG key for shuffling.
        config: :class:`TrainConfig`.
        epochs: optional number of epochs overriding ``config.epochs``; may be a traced int
            (e.g. ``where(retrain, E, 0)``, so that steps without retraining cost nothing
            under ``vmap``). Epoch keys are then ``fold_in(key, e)`` instead of a split.
        boundary_columns: the input columns whose faces are penalized (ints; static), each
            input a unit-cube point (``z`` in ``[0, 1]`` on them).
        boundary_weight: ``kappa >= 0`` of the boundary penalty (module doc; a Python float,
            static); 0 or no columns: none.

    Returns:
        Trained parameters (same pytree as ``params``). With no valid rows, ``params``.
    """
    cap = y.shape[0]
    B = min(config.batch_size, cap)
    n = jnp.sum(mask)
    n_f = jnp.maximum(n, 1).astype(y.dtype)
    num_batches = (n + B - 1) // B
    opt = config.optimizer

    penalized = bool(boundary_columns) and float(boundary_weight) > 0.0

    def loss_fn(p, idx, w):
        zb = z[idx]
        pred = jax.vmap(apply, in_axes=(None, 0))(p, zb)
        data = 0.5 * jnp.sum(w * (pred - y[idx]) ** 2) / jnp.maximum(jnp.sum(w), 1.0)
        if penalized:
            data = data + boundary_weight * boundary_penalty(apply, p, zb, w, boundary_columns)
        if config.reg == 0.0:
            return data
        sq = sum(jnp.sum((a - b) ** 2) for a, b in zip(jax.tree.leaves(p), jax.tree.leaves(anchor)))
        return data + 0.5 * config.reg * sq / n_f

    grad_fn = jax.grad(loss_fn)

    def run_epoch(carry, k):
        p, s = carry
        order = jnp.argsort(jnp.where(mask, jax.random.uniform(k, (cap,)), 2.0))
        order = jnp.concatenate([order, jnp.zeros((B,), order.dtype)])

        def step(b, c):
            p, s = c
            idx = jax.lax.dynamic_slice(order, (b * B,), (B,))
            w = (b * B + jnp.arange(B) < n).astype(y.dtype)
            updates, s = opt.update(grad_fn(p, idx, w), s, p)
            return optax.apply_updates(p, updates), s

        return jax.lax.fori_loop(0, num_batches, step, (p, s))

    carry = (params, opt.init(params))
    if epochs is None:
        carry, _ = jax.lax.scan(lambda c, k: (run_epoch(c, k), None), carry, jax.random.split(key, config.epochs))
    else:
        carry = jax.lax.fori_loop(0, epochs, lambda e, c: run_epoch(c, jax.random.fold_in(key, e)), carry)
    return carry[0]


def boundary_penalty(apply: Callable[[Any, Array], Array], params: Any, u: Array, w: Array,
                     columns: tuple) -> Array:
    """``()`` the boundary penalty of the module doc without ``kappa``: the weighted mean over
    the rows ``u (B, D)`` (weights ``w (B,)``, 0 for padding) and the ``2 C`` faces of
    ``columns`` (ints, static) of ``relu(-s dh/du_j)^2``, ``s = -1`` with ``u_j`` set to 0 and
    ``+1`` with it set to 1: the squared slope toward the box's inside (Siivola et al. 2018's
    virtual derivative-sign observations, as a hinge). ``apply(params, u (D,)) -> ()``."""
    cols = jnp.asarray(columns)
    directions = jnp.eye(u.shape[-1], dtype=u.dtype)[cols]  # (C, D)

    def slope(v, e):
        return jax.jvp(lambda x: apply(params, x), (v,), (e,))[1]

    def row(v):
        def column(e):
            low, high = jnp.where(e > 0, 0.0, v), jnp.where(e > 0, 1.0, v)
            return jax.nn.relu(slope(low, e)) ** 2 + jax.nn.relu(-slope(high, e)) ** 2
        return jnp.sum(jax.vmap(column)(directions))

    per_row = jax.vmap(row)(u)
    return jnp.sum(w * per_row) / (jnp.maximum(jnp.sum(w), 1.0) * 2 * len(columns))


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
