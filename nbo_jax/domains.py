"""Search domains: the box (:class:`Bounds`, built by :func:`make_bounds` or read from the usual
forms by :func:`as_bounds`) and the finite set of points (:class:`FiniteDomain`, built by
:func:`finite_domain`), with :func:`choice_tolerance`, the distance at which a told point is
one of a finite domain's choices.

Numpy arrays (static constants); ``d`` is the input dimension.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

Array = jax.Array


class Bounds(NamedTuple):
    """A box ``[lower, upper]`` in ``R^d``; both ``(d,)`` float arrays, ``lower < upper``."""

    lower: Array
    upper: Array

    @property
    def dim(self) -> int:
        return int(np.shape(self.lower)[0])

    def to_unit(self, x: Array) -> Array:
        """Map points of the box to the unit cube: ``u = (x - lower) / (upper - lower)``."""
        return (x - self.lower) / (self.upper - self.lower)

    def from_unit(self, u: Array) -> Array:
        """Map points of the unit cube back to the box, clipped to ``[lower, upper]`` so that
        rounding (e.g. float32 arithmetic on float64 bounds) never leaves the box."""
        lower = jnp.asarray(self.lower, jnp.result_type(u))
        upper = jnp.asarray(self.upper, jnp.result_type(u))
        return jnp.clip(lower + u * (upper - lower), lower, upper)

    def contains(self, x, atol: float = 0.0):
        """``(...,)`` bool: ``lower - atol <= x <= upper + atol`` in every coordinate of
        ``x (..., d)`` (numpy in, numpy out; False for NaN)."""
        x = np.asarray(x, dtype=np.float64)
        lo = np.asarray(self.lower, np.float64)
        hi = np.asarray(self.upper, np.float64)
        return np.all((x >= lo - atol) & (x <= hi + atol), axis=-1)


def make_bounds(lower, upper, dim: Optional[int] = None, *, name: str = "bounds") -> Bounds:
    """Validate and build :class:`Bounds` (float64 numpy arrays, so they are static constants).

    ``lower``/``upper`` may be scalars (broadcast to ``dim``) or sequences of length ``d``.

    Raises:
        ValueError: shapes disagree, a bound is NaN/inf, or ``lower >= upper`` somewhere.
    """
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    if dim is not None:
        if lo.ndim == 0:
            lo = np.full((dim,), float(lo))
        if hi.ndim == 0:
            hi = np.full((dim,), float(hi))
    if lo.ndim != 1 or hi.ndim != 1 or lo.shape != hi.shape:
        raise ValueError(
            f"{name}: lower and upper must be 1-D arrays of the same length, got shapes "
            f"{lo.shape} and {hi.shape}"
        )
    if dim is not None and lo.shape[0] != dim:
        raise ValueError(f"{name}: expected {dim} dimensions, got {lo.shape[0]}")
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError(f"{name}: bounds must be finite, got lower={lo}, upper={hi}")
    bad = np.nonzero(lo >= hi)[0]
    if bad.size:
        raise ValueError(
            f"{name}: lower must be < upper in every dimension; violated at index "
            f"{bad.tolist()} (lower={lo[bad].tolist()}, upper={hi[bad].tolist()})"
        )
    return Bounds(lo, hi)


def _is_pair_list(bounds) -> bool:
    """True for a sequence of ``(low, high)`` *tuples* (scipy / skopt / Optuna habit)."""
    return (isinstance(bounds, (list, tuple)) and len(bounds) > 0
            and all(isinstance(b, tuple) and len(b) == 2 for b in bounds))


def as_bounds(bounds, dim: Optional[int] = None, *, name: str = "bounds") -> Bounds:
    """Read a box given in any of the usual forms, without guessing.

    Accepted forms:

    - :class:`Bounds` (or anything with ``lower``/``upper``, or scipy's ``lb``/``ub``); a
      :class:`FiniteDomain` gives the box that holds its points;
    - a list of ``(low, high)`` **tuples**, one per dimension (scipy.optimize, skopt,
      Optuna): ``[(0., 1.), (5., 10.)]`` is ``x_0 in [0, 1]``, ``x_1 in [5, 10]``;
    - a pair ``(lower, upper)`` of arrays or lists of length ``d`` (BoTorch's ``2 x d``
      bounds tensor reads the same way): ``([-2, -2], [2, 2])``;
    - an array of shape ``(2, d)`` (rows ``lower``, ``upper``) or ``(d, 2)`` (one
      ``(low, high)`` row per dimension) when only one of the two readings has that shape.

    A ``2 x 2`` array or list of lists fits both readings; it is read as ``(lower, upper)``
    rows (BoTorch's convention) and the error message, if that box is empty, says so. Give
    ``(low, high)`` pairs as tuples to be read per dimension.

    Returns:
        :class:`Bounds` with float64 numpy ``(d,)`` arrays.

    Raises:
        ValueError: no reading fits, a bound is NaN/inf, ``lower >= upper`` somewhere, or
        ``dim`` disagrees (the message names ``name`` and the reading used).
        TypeError: ``bounds`` is not array-like.
    """
    if isinstance(bounds, (Bounds, FiniteDomain)):
        return make_bounds(bounds.lower, bounds.upper, dim, name=name)
    if hasattr(bounds, "lb") and hasattr(bounds, "ub"):  # scipy.optimize.Bounds
        return make_bounds(bounds.lb, bounds.ub, dim, name=name)
    if hasattr(bounds, "lower") and hasattr(bounds, "upper") and not isinstance(bounds, (list, tuple)):
        return make_bounds(bounds.lower, bounds.upper, dim, name=name)
    if _is_pair_list(bounds):
        arr = np.asarray(bounds, dtype=np.float64)
        return make_bounds(arr[:, 0], arr[:, 1], dim,
                           name=f"{name} (read as a list of (low, high) pairs, one per dimension)")
    try:
        arr = np.asarray(bounds, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be nbo_jax.Bounds, (lower, upper) arrays or a list of (low, high) "
                        f"pairs, got {type(bounds).__name__}") from None
    if arr.ndim != 2 or 2 not in arr.shape:
        raise ValueError(f"{name} must be (lower, upper) arrays of shape (d,) or a list of d (low, high) "
                         f"pairs, got an array of shape {arr.shape}")
    if arr.shape[0] == 2 and (dim is None or arr.shape[1] == dim):
        return make_bounds(arr[0], arr[1], dim, name=f"{name} (read as (lower, upper) rows; give "
                           "(low, high) pairs as a list of tuples to be read per dimension)")
    return make_bounds(arr[:, 0], arr[:, 1], dim, name=f"{name} (read as (low, high) pairs, one per dimension)")


class FiniteDomain(NamedTuple):
    """A finite domain: ``N`` points of ``R^d`` (a corpus of documents, a grid), inside the
    box ``[lower, upper]`` that holds them (the second kind of search domain, beside the box).

    Accepted wherever a box is (``init(..., bounds=domain)``, :class:`~nbo_jax.AskTell`):
    algorithms then score their acquisition on the points that were not evaluated yet instead
    of on raw samples of the box, with no gradient refinement, and never propose a point twice
    (BoTorch's ``optimize_acqf_discrete(choices, unique=True)``).

    Attributes:
        lower, upper: ``(d,)`` float64 numpy arrays, the box of the unit-cube map.
        points: ``(N, d)`` float64 numpy array, distinct rows, inside the box.
    """

    lower: Array
    upper: Array
    points: Array

    @property
    def dim(self) -> int:
        return int(np.shape(self.lower)[0])

    @property
    def size(self) -> int:
        """``N``, the number of points."""
        return int(np.shape(self.points)[0])

    @property
    def bounds(self) -> Bounds:
        return Bounds(self.lower, self.upper)

    def nearest(self, x) -> tuple[np.ndarray, np.ndarray]:
        """The rows of :attr:`points` nearest to ``x (..., d)`` (Euclidean, numpy, float64)
        and their largest per-coordinate distance in unit-cube units: ``((...) int, (...)
        float)``. For host-side lookups (histories, :class:`~nbo_jax.AskTell`)."""
        span = np.asarray(self.upper) - np.asarray(self.lower)
        x = np.asarray(x, dtype=np.float64)
        flat = (x.reshape(-1, x.shape[-1]) - self.lower) / span
        pts = (np.asarray(self.points) - self.lower) / span
        rows = np.array([np.argmin(np.sum((pts - ui) ** 2, axis=1)) for ui in flat], dtype=np.int64)
        dist = np.max(np.abs(pts[rows] - flat), axis=1) if len(rows) else np.zeros(0)
        return rows.reshape(x.shape[:-1]), dist.reshape(x.shape[:-1])


def finite_domain(points, bounds=None, *, name: str = "choices") -> FiniteDomain:
    """Validate and build a :class:`FiniteDomain` from ``points (N, d)``.

    Args:
        points: ``(N, d)`` array-like of finite numbers, ``N >= 1``, no two rows equal.
        bounds: the box of the unit-cube map (any form :func:`as_bounds` reads); by default
            the points' bounding box, widened to ``[v - 0.5, v + 0.5]`` in a coordinate where
            every point has the same value ``v`` (such a coordinate carries no information).
        name: the argument's name for error messages.

    Raises:
        ValueError: not ``(N, d)``, NaN/inf entries, duplicated rows (their indices are
        named: a finite domain is a set, and equal inputs cannot be told apart by any
        surrogate), or points outside ``bounds``.
    """
    pts = np.asarray(points, dtype=np.float64)
    if pts.ndim != 2 or pts.shape[0] < 1 or pts.shape[1] < 1:
        raise ValueError(f"{name} must be an (N, d) array with N, d >= 1, got shape {pts.shape}")
    if not np.all(np.isfinite(pts)):
        bad = np.nonzero(~np.all(np.isfinite(pts), axis=1))[0]
        raise ValueError(f"{name} has NaN/inf entries in rows {bad[:10].tolist()}")
    _, first, counts = np.unique(pts, axis=0, return_index=True, return_counts=True)
    if np.any(counts > 1):
        dup = np.sort(first[counts > 1])[:10]
        raise ValueError(f"{name} has duplicated rows (first occurrences at {dup.tolist()}); a finite domain is "
                         "a set of distinct points: drop or merge the duplicates")
    if bounds is None:
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        flat = lo == hi
        box = make_bounds(np.where(flat, lo - 0.5, lo), np.where(flat, hi + 0.5, hi), pts.shape[1], name=name)
    else:
        box = as_bounds(bounds, pts.shape[1], name="bounds")
        outside = np.nonzero(~box.contains(pts))[0]
        if outside.size:
            raise ValueError(f"{name} rows {outside[:10].tolist()} lie outside bounds")
    return FiniteDomain(box.lower, box.upper, pts)


def choice_tolerance(dtype) -> float:
    """Largest per-coordinate difference (unit-cube units) at which a told point is one of a
    finite domain's choices: ``sqrt(eps)`` of ``dtype`` (3.5e-4 in float32, 1.5e-8 in
    float64), far above the rounding of the box <-> unit-cube maps and far below the spacing
    of distinct points of any data set stored at that precision."""
    return float(np.sqrt(np.finfo(np.dtype(dtype)).eps))
