"""Acquisition maximization over the unit cube.

Two pieces, used by the algorithms:

- :func:`candidate_set`: ``n_uniform`` uniform points plus ``n_local`` Gaussian
  perturbations (std ``local_std``, clipped to the cube) of the ``n_best`` best observed
  points. The authors' Neural-BO code scores one uniform set (SPEC.md section 1); the local
  points are a library addition (as in BoTorch's raw samples around incumbents).
- :func:`projected_gradient_ascent`: refine points of a differentiable utility by gradient
  steps projected onto ``[0, 1]^d`` (raw candidates -> top-k -> gradient steps).
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
import optax

from .types import Dataset

Array = jax.Array


def candidate_set(
    key: Array, data: Dataset, n_uniform: int, n_local: int = 0, *, local_std: float = 0.05,
    n_best: int = 5,
) -> Array:
    """Candidates in the unit cube, ``(n_uniform + n_local, d)``.

    Local candidates are spread evenly over the ``n_best`` best valid observations (fewer if
    fewer are valid; with none, they are uniform).
    """
    d = data.u.shape[1]
    k_u, k_pick, k_eps = jax.random.split(key, 3)
    dtype = data.u.dtype
    uniform = jax.random.uniform(k_u, (n_uniform, d), dtype)
    if n_local == 0:
        return uniform
    n_best = min(n_best, data.capacity)
    score = jnp.where(data.mask, data.y, jnp.inf)
    _, best_idx = jax.lax.top_k(-score, n_best)
    n_valid = jnp.minimum(jnp.sum(data.mask), n_best)
    which = jnp.arange(n_local) % jnp.maximum(n_valid, 1)
    centers = data.u[best_idx[which]]
    local = jnp.clip(centers + local_std * jax.random.normal(k_eps, (n_local, d), dtype), 0.0, 1.0)
    fallback = jax.random.uniform(k_pick, (n_local, d), dtype)
    local = jnp.where(n_valid > 0, local, fallback)
    return jnp.concatenate([uniform, local], axis=0)


def projected_gradient_ascent(
    utility: Callable[[Array], Array], u0: Array, *, steps: int = 50, learning_rate: float = 0.01
) -> Array:
    """Maximize ``utility(u (d,)) -> ()`` from each start ``u0 (k, d)`` with Adam steps
    projected onto ``[0, 1]^d`` (vmapped over starts). Returns ``(k, d)``."""
    opt = optax.adam(learning_rate)
    grad = jax.grad(lambda u: -utility(u))

    def one(u):
        def step(c, _):
            u, s = c
            upd, s = opt.update(grad(u), s, u)
            return (jnp.clip(optax.apply_updates(u, upd), 0.0, 1.0), s), None

        (u, _), _ = jax.lax.scan(step, (u, opt.init(u)), None, length=steps)
        return u

    return jax.vmap(one)(u0)


def refine_argmax(
    values: Array,
    candidates: Array,
    utility: Callable[[Array], Array],
    *,
    n_starts: int,
    steps: int,
    learning_rate: float,
    pool_utility: Callable[[Array], Array] | None = None,
) -> Array:
    """Raw candidates -> top-k -> projected gradient steps -> the best point ``(d,)``.

    Args:
        values: ``(N,)`` utilities of ``candidates (N, d)`` (NaN never wins).
        utility: ``u (d,) -> ()``, the utility the gradient steps climb.
        n_starts: how many of the best candidates start a climb; steps, learning_rate:
            :func:`projected_gradient_ascent` settings (``steps = 0``: no climb).
        pool_utility: ``(M, d) -> (M,)`` scoring the final pool (the best candidate and the
            climbed points); default ``vmap(utility)``.

    Returns:
        The pool point with the largest ``pool_utility`` (the best candidate itself when
        ``steps = 0``): never worse than the best candidate, which is in the pool.
    """
    best = argmax_point(values, candidates)
    if steps == 0:
        return best
    safe = jnp.where(jnp.isnan(values), -jnp.inf, values)
    _, top = jax.lax.top_k(safe, n_starts)
    refined = projected_gradient_ascent(utility, candidates[top], steps=steps, learning_rate=learning_rate)
    pool = jnp.concatenate([best[None, :], refined], axis=0)
    score = pool_utility if pool_utility is not None else jax.vmap(utility)
    return argmax_point(score(pool), pool)


def argmax_point(utility_values: Array, candidates: Array) -> Array:
    """The candidate ``(d,)`` with the largest utility (NaN utilities never win)."""
    vals = jnp.where(jnp.isnan(utility_values), -jnp.inf, utility_values)
    return candidates[jnp.argmax(vals)]
