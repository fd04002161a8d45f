"""The scalar argument checks every layer uses (``check_int``, ``check_positive``); the
algorithms' other shared validation lives in :mod:`nbo_jax.algorithms._common`, which
re-exports these. A module of its own so that :mod:`nbo_jax.batch` and the algorithms can both
import it without an import circle."""

from __future__ import annotations

import math

import numpy as np


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
    if isinstance(value, (str, bytes, bool, np.bool_)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}") from None
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>=' if allow_zero else '>'} 0 and finite, got {value}")
    return v
