"""Helpers shared by the algorithm factories."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ..types import Bounds, make_bounds

Array = jax.Array


def check_int(name: str, value, minimum: int) -> int:
    """``value`` as an int ``>= minimum``.

    Raises:
        TypeError: not an integer (bools are refused). ValueError: below ``minimum``; both
        messages name the argument.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check_positive(name: str, value, *, allow_zero: bool = False) -> float:
    """``value`` as a finite float ``> 0`` (``>= 0`` with ``allow_zero``).

    Raises:
        TypeError: not a number. ValueError: out of range; both messages name the argument.
    """
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}") from None
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>=' if allow_zero else '>'} 0 and finite, got {value}")
    return v


def check_initial(x0, y0, bounds, capacity: int):
    """Validate an algorithm's ``init`` arguments (static shapes only; works under jit).

    Returns ``(x0 (n0, d), y0 (n0,), lower (d,), upper (d,))`` as default-float arrays.

    Raises:
        TypeError: ``bounds`` is not a :class:`Bounds` or ``(lower, upper)`` pair.
        ValueError: shapes disagree or ``capacity`` is too small (message names the argument).
    """
    if not isinstance(bounds, (Bounds, tuple, list)) or len(bounds) != 2:
        raise TypeError("bounds must be nbo_jax.Bounds(lower, upper) or a (lower, upper) pair")
    x0 = jnp.asarray(x0)
    if not jnp.issubdtype(x0.dtype, jnp.floating):
        x0 = x0.astype(jnp.zeros(()).dtype)
    if x0.ndim != 2:
        raise ValueError(f"x0 must have shape (n0, d), got {x0.shape}")
    lo, hi = bounds
    if isinstance(lo, jax.core.Tracer) or isinstance(hi, jax.core.Tracer):
        lower, upper = jnp.asarray(lo, x0.dtype), jnp.asarray(hi, x0.dtype)
    else:
        b = make_bounds(lo, hi, x0.shape[1], name="bounds")
        lower, upper = jnp.asarray(b.lower, x0.dtype), jnp.asarray(b.upper, x0.dtype)
    y0 = jnp.asarray(y0, x0.dtype).reshape(-1)
    if y0.shape[0] != x0.shape[0]:
        raise ValueError(f"y0 must have one value per row of x0: {y0.shape[0]} vs {x0.shape[0]}")
    if x0.shape[0] < 1:
        raise ValueError("x0 must hold at least one point (n_init >= 1)")
    if capacity < x0.shape[0]:
        raise ValueError(f"capacity ({capacity}) must be >= the number of initial points ({x0.shape[0]})")
    return x0, y0, lower, upper


def check_constraint_values(c0, n0: int, dtype) -> Array:
    """Validate the initial constraint observations of a constrained algorithm's ``init``.

    Returns ``c0`` as a ``(n0, K)`` array of ``dtype`` (``K >= 1``).

    Raises:
        ValueError: ``c0`` missing or not of shape ``(n0, K)`` (message names ``c0``).
    """
    if c0 is None:
        raise ValueError("c0: a constrained algorithm needs the observed constraint values of the "
                         "initial points, shape (n0, K) (run_bo passes them for a constrained problem)")
    c0 = jnp.asarray(c0, dtype)
    if c0.ndim != 2 or c0.shape[0] != n0 or c0.shape[1] < 1:
        raise ValueError(f"c0 must have shape (n0, K) = ({n0}, K) with K >= 1, got {c0.shape}")
    return c0


# ---------------------------------------------------------------- constrained algorithms
# Observations of J = K + 1 functions (column 0 the objective, then the K constraints) live in
# (cap, J) buffers ``Y`` with validity ``M`` (Neural-CBO, constrained GP-BO).


def observation_rows(y: Array, c: Array) -> Array:
    """``(q, J)`` rows ``[y, c_1..c_K]`` from ``y`` (``()`` or ``(q,)``) and ``c`` (``(K,)`` or
    ``(q, K)``)."""
    c = jnp.asarray(c)
    c = c.reshape((-1, c.shape[-1]))
    return jnp.concatenate([jnp.reshape(y, (-1, 1)).astype(c.dtype), c], axis=1)


def append_observations(u: Array, Y: Array, M: Array, count: Array, u_new: Array, Y_new: Array):
    """Write ``q`` rows (``u_new (q, d)``, ``Y_new (q, J)``) into the buffers with
    :meth:`nbo_jax.types.Dataset.add_batch` (non-finite entries masked one by one); returns
    ``(u, Y, M, count)``."""
    from ..types import Dataset

    data = Dataset(u, Y, M, count).add_batch(u_new, Y_new)
    return data.u, data.y, data.mask, data.count


def constrained_transform(Y: Array, M: Array) -> tuple[Array, Array]:
    """Target transform ``(v - shift) / scale`` per function, ``(J,)`` each: the objective
    standardized over its valid rows (SPEC.md section 0), each constraint divided by its
    root mean square and *not* centred, so that 0 stays the feasibility threshold. A
    spread below ``1e-12`` (fewer than two distinct values) gives scale 1."""
    n = jnp.maximum(jnp.sum(M, axis=0), 1)
    mean = jnp.sum(jnp.where(M, Y, 0.0), axis=0) / n
    var = jnp.sum(jnp.where(M, (Y - mean) ** 2, 0.0), axis=0) / n
    ms = jnp.sum(jnp.where(M, Y * Y, 0.0), axis=0) / n
    shift = jnp.zeros_like(mean).at[0].set(mean[0])
    spread = jnp.concatenate([var[:1], ms[1:]])
    scale = jnp.where(spread > 1e-12, jnp.sqrt(spread), 1.0)
    return shift, scale


def observed_feasible(Y: Array, M: Array) -> Array:
    """``(cap,)`` bool: rows with a valid objective whose observed constraints are all valid
    and ``<= 0``."""
    return jnp.all(M[:, 1:] & (Y[:, 1:] <= 0.0), axis=1) & M[:, 0]


def feasibility_ranked(u: Array, Y: Array, M: Array, scale: Array, count: Array):
    """A :class:`~nbo_jax.types.Dataset` whose ``y`` ranks the rows for local candidates
    (:func:`nbo_jax.optimize.candidate_set`): the feasible rows by objective value, or, while
    none is feasible, every row by its total scaled violation ``sum_k [c_k / scale_k]^+``."""
    from ..types import Dataset

    feas = observed_feasible(Y, M)
    viol = jnp.sum(jnp.where(M[:, 1:], jnp.maximum(Y[:, 1:] / scale[1:], 0.0), jnp.inf), axis=1)
    score = jnp.where(jnp.any(feas), jnp.where(feas, Y[:, 0], jnp.inf), viol)
    return Dataset(u, score, jnp.isfinite(score), count)
