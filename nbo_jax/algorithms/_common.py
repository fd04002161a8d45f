"""Helpers shared by the algorithm factories."""

from __future__ import annotations

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
