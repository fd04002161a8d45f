"""Per-example parameter gradients (Jacobians) as feature matrices.

``g(z) = grad_theta h(z; theta)`` flattened to length ``p`` is the gradient feature of
Neural-BO (Phan-Trong et al. 2023, Algorithm 1, line 3) and NeuralUCB/TS. A feature matrix stacks them:
``G[i] = g(z_i)``, shape ``(n, p)``.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import jax
from jax.flatten_util import ravel_pytree

Array = jax.Array


def flat_apply(apply: Callable[[Any, Array], Array], params: Any):
    """``(theta_flat (p,), unravel)`` and ``h(theta_flat, z)`` for one point ``z (d,)``."""
    theta, unravel = ravel_pytree(params)

    def h(flat: Array, z: Array) -> Array:
        return apply(unravel(flat), z)

    return theta, h


def gradient_features(
    apply: Callable[[Any, Array], Array],
    params: Any,
    z: Array,
    *,
    chunk_size: Optional[int] = None,
) -> Array:
    """Gradient features ``G[i] = grad_theta h(z_i; params)`` via ``vmap(jacrev)``.

    Args:
        apply: ``apply(params, z (d,)) -> ()``.
        params: network parameters (any pytree).
        z: ``(n, d)`` network inputs.
        chunk_size: evaluate in chunks of this many points (``lax.map`` with
            ``batch_size``) to bound memory; ``None`` does all at once.

    Returns:
        ``(n, p)`` array, dtype of the parameters; ``p`` is the number of parameters in
        ``ravel_pytree`` order.
    """
    theta, h = flat_apply(apply, params)
    g = jax.jacrev(h)
    if chunk_size is None or chunk_size >= z.shape[0]:
        return jax.vmap(g, in_axes=(None, 0))(theta, z)
    return jax.lax.map(lambda zi: g(theta, zi), z, batch_size=int(chunk_size))


def jacobian_vector_product(apply: Callable[[Any, Array], Array], params: Any, z: Array, v: Array) -> Array:
    """``G v`` without forming ``G``: ``g(z_i)^T v`` for ``z (n, d)`` and a flat parameter
    direction ``v (p,)`` (``ravel_pytree`` order), by one forward-mode ``jvp`` per point
    (about the cost of two forward passes). Differentiable in ``z``. Returns ``(n,)``."""
    theta, h = flat_apply(apply, params)
    v = v.astype(theta.dtype)

    def one(zi):
        return jax.jvp(lambda t: h(t, zi), (theta,), (v,))[1]

    return jax.vmap(one)(z)


def predict(apply: Callable[[Any, Array], Array], params: Any, z: Array) -> Array:
    """Network outputs ``h(z_i)`` for ``z (n, d)`` -> ``(n,)``."""
    return jax.vmap(apply, in_axes=(None, 0))(params, z)
