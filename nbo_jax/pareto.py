"""Pareto dominance, non-dominated sorting, hypervolume and the box decomposition of the
non-dominated region, for MINIMIZATION, in JAX with fixed shapes.

Every objective is minimized, as everywhere in nbo_jax: ``a`` dominates ``b`` when
``a_j <= b_j`` for every objective ``j`` and ``a_j < b_j`` for one. BoTorch maximizes: its
``Hypervolume(ref_point)`` of ``-Y`` equals :func:`hypervolume` of ``Y`` with
``reference_point = -ref_point``. Observations live in fixed-capacity buffers, so every
function takes ``Y (n, m)`` with an optional validity ``mask (n,)``; masked rows and rows with
a non-finite value are ignored. Shapes are static and every function runs inside ``jit``,
``vmap`` and ``lax.scan``.

Algorithms (``n`` points, ``m`` objectives, reference point ``r``):

```
is_non_dominated : D[i, j] = all(Y_j <= Y_i) & any(Y_j < Y_i) over valid rows, O(n^2 m);
                   row i kept iff valid, no D[i, :] and no valid earlier duplicate
pareto_ranks     : peel fronts (Deb et al. 2002): rank k = the non-dominated rows among
                   those left after fronts 0..k-1
hypervolume m=2  : rows that do not strictly dominate r are moved onto r; sort by y_1;
                   HV = sum_i (r_1 - y_i1) * max(0, min_{k<i} y_k2 - y_i2)   (min over {} = r_2)
hypervolume m=3  : sort by y_3 (z_1 <= ... <= z_n, z_{n+1} = r_3);
                   HV = sum_k (z_{k+1} - z_k) * HV_2(first k points projected on (y_1, y_2))
boxes m=2        : sorted by y_1 (x_{n+1} = r_1): [-inf, x_1] x [-inf, r_2] and, for i = 1..n,
                   [x_i, x_{i+1}] x [-inf, min_{k<=i} y_k2]: n + 1 disjoint boxes
boxes m=3        : slab k = (z_k, z_{k+1}] (z_0 = -inf) times the m=2 boxes of the first k
                   points: (n + 1)^2 disjoint boxes
HVI(y)           : sum_b prod_j max(0, u_bj - max(l_bj, y_j)) over the boxes [l_b, u_b]
```

The boxes partition the part of ``{z <= r}`` that no point dominates (BoTorch's
``NondominatedPartitioning``; Couckuyt, Deschrijver & Dhaene 2014; Lacour, Klamroth & Fonseca
2017), padded to a fixed number: empty boxes have zero width. Points beyond the reference
point, dominated points and masked rows only add empty boxes. An expected hypervolume
improvement is then a sum over boxes (Emmerich, Giannakoglou & Naujoks 2006; Daulton,
Balandat & Bakshy 2020, Eq. 3).

References: Deb, Pratap, Agarwal & Meyarivan 2002, "A fast and elitist multiobjective
genetic algorithm: NSGA-II", IEEE TEVC 6(2) (non-dominated sorting); Zitzler & Thiele 1998
(hypervolume); While, Hingston, Barone & Huband 2006, "A faster algorithm for calculating
hypervolume", IEEE TEVC 10(1) (slicing objectives); Couckuyt, Deschrijver & Dhaene 2014,
"Fast calculation of multiobjective probability of improvement and expected improvement
criteria for Pareto optimization", J. Global Optim. 60; Lacour, Klamroth & Fonseca 2017,
"A box decomposition algorithm to compute the hypervolume indicator", Comput. Oper. Res. 79.
"""

from __future__ import annotations

import functools
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

Array = jax.Array

HYPERVOLUME_OBJECTIVES = (2, 3)
"""Numbers of objectives ``m`` for which :func:`hypervolume` and
:func:`nondominated_partitioning` are exact."""


class BoxDecomposition(NamedTuple):
    """Disjoint boxes ``[lower_b, upper_b]`` whose union is the part of ``{z <= r}`` that no
    point dominates (minimization). Empty (padding) boxes have ``lower_bj = upper_bj`` for
    some ``j``. Lower bounds may be ``-inf``.

    Attributes:
        lower: ``(B, m)`` lower corners.
        upper: ``(B, m)`` upper corners (``<= r``).
    """

    lower: Array
    upper: Array


def _check(Y, mask, reference_point=None, *, objectives=None):
    """Shapes and dtypes, checked at the call (at trace time inside a user's ``jit``);
    returns the arguments as arrays (``None`` stays ``None``)."""
    Y = jnp.asarray(Y)
    mask = None if mask is None else jnp.asarray(mask)
    shape, dtype = jnp.shape(Y), jnp.result_type(Y)
    if len(shape) != 2:
        raise ValueError(f"Y must have shape (n, m) (n points, m objectives), got shape {shape}")
    if not (jnp.issubdtype(dtype, jnp.floating) or jnp.issubdtype(dtype, jnp.integer)):
        raise TypeError(f"Y must hold real numbers, got dtype {dtype}")
    n, m = shape
    if objectives is not None and m not in objectives:
        raise ValueError(f"Y has m = {m} objectives (shape {shape}); this function supports m in {objectives}")
    if mask is not None:
        if jnp.shape(mask) != (n,):
            raise ValueError(f"mask must have shape (n,) = ({n},) like Y's rows, got shape {jnp.shape(mask)}")
        if jnp.result_type(mask) != jnp.bool_:
            raise TypeError(f"mask must be a bool array, got dtype {jnp.result_type(mask)}")
    if reference_point is not None:
        if jnp.shape(reference_point) != (m,):
            raise ValueError(f"reference_point must have shape (m,) = ({m},) like Y's columns, "
                             f"got shape {jnp.shape(reference_point)}")
        if not isinstance(reference_point, jax.core.Tracer) and not np.all(np.isfinite(np.asarray(reference_point))):
            raise ValueError(f"reference_point must be finite, got {reference_point}")
        reference_point = jnp.asarray(reference_point)
    return Y, mask, reference_point


def _prepare(Y, mask, reference_point=None):
    """``(Y, valid, r)``: ``Y`` as floats, ``valid (n,)`` = mask & every value finite, ``r``
    in ``Y``'s dtype (or None)."""
    Y = jnp.asarray(Y)
    if not jnp.issubdtype(Y.dtype, jnp.floating):
        Y = Y.astype(jnp.result_type(float))
    valid = jnp.all(jnp.isfinite(Y), axis=1)
    if mask is not None:
        valid = valid & mask
    r = None if reference_point is None else jnp.asarray(reference_point, dtype=Y.dtype)
    return Y, valid, r


def _checked(*, reference: bool, objectives=None):
    """Decorate a kernel ``(Y, [reference_point,] mask=None)``: the public function checks
    its arguments at the call (:func:`_check`), then runs the kernel compiled with ``jit``."""

    def wrap(kernel):
        compiled = jax.jit(kernel)
        if reference:
            @functools.wraps(kernel)
            def public(Y, reference_point, mask=None):
                Y, mask, r = _check(Y, mask, reference_point, objectives=objectives)
                return compiled(Y, r, mask)
        else:
            @functools.wraps(kernel)
            def public(Y, mask=None):
                Y, mask, _ = _check(Y, mask)
                return compiled(Y, mask)
        return public

    return wrap


@_checked(reference=False)
def dominance_matrix(Y: Array, mask: Optional[Array] = None) -> Array:
    """``D (n, n)`` bool: ``D[i, j]`` is True when valid row ``j`` dominates valid row ``i``
    (minimization: ``Y_j <= Y_i`` everywhere and ``<`` somewhere).

    Args:
        Y: ``(n, m)`` objective values (any float dtype; integers are promoted).
        mask: ``(n,)`` bool validity, or None (every finite row valid).

    Raises:
        ValueError: ``Y`` not 2-D, ``mask`` not ``(n,)``. TypeError: non-numeric ``Y``, non-bool ``mask``.
    """
    Y, valid, _ = _prepare(Y, mask)
    return _dominance(Y, valid)


def _dominance(Y, valid):
    le = jnp.all(Y[None, :, :] <= Y[:, None, :], axis=-1)
    lt = jnp.any(Y[None, :, :] < Y[:, None, :], axis=-1)
    return le & lt & valid[:, None] & valid[None, :]


@_checked(reference=False)
def is_non_dominated(Y: Array, mask: Optional[Array] = None) -> Array:
    """Which rows form the Pareto front (minimization), one row per set of duplicates.

    Row ``i`` is kept when it is valid, no valid row dominates it and no valid earlier row
    ``j < i`` equals it (BoTorch's ``is_non_dominated(deduplicate=True)``, moocore's
    ``is_nondominated(keep_weakly=False)``). Cost ``O(n^2 m)``.

    Args:
        Y: ``(n, m)`` objective values, ``m >= 1``.
        mask: ``(n,)`` bool validity, or None. Rows with a NaN or inf value are never kept.

    Returns:
        ``(n,)`` bool.

    Raises:
        ValueError: ``Y`` not 2-D, ``mask`` not ``(n,)``. TypeError: non-numeric ``Y``, non-bool ``mask``.
    """
    Y, valid, _ = _prepare(Y, mask)
    n = Y.shape[0]
    dominated = jnp.any(_dominance(Y, valid), axis=1)
    equal = jnp.all(Y[:, None, :] == Y[None, :, :], axis=-1) & valid[None, :]
    earlier = jnp.arange(n)[None, :] < jnp.arange(n)[:, None]
    duplicate = jnp.any(equal & earlier, axis=1)
    return valid & ~dominated & ~duplicate


@_checked(reference=False)
def pareto_ranks(Y: Array, mask: Optional[Array] = None) -> Array:
    """Non-dominated sorting (Deb, Pratap, Agarwal & Meyarivan 2002, NSGA-II, Section III-A):
    the index of each row's front, 0 for the Pareto front, 1 for the front of the rest, ...

    Duplicates share their rank. Cost ``O(n^2 m)`` for the dominance matrix plus ``O(n^2)``
    per front (a ``lax.while_loop`` over the fronts).

    Args:
        Y: ``(n, m)`` objective values.
        mask: ``(n,)`` bool validity, or None.

    Returns:
        ``(n,)`` int32 ranks; ``-1`` for masked rows and rows with a NaN or inf value.

    Raises:
        ValueError: ``Y`` not 2-D, ``mask`` not ``(n,)``. TypeError: non-numeric ``Y``, non-bool ``mask``.
    """
    Y, valid, _ = _prepare(Y, mask)
    D = _dominance(Y, valid)

    def cond(carry):
        _, left, _ = carry
        return jnp.any(left)

    def body(carry):
        ranks, left, k = carry
        front = left & ~jnp.any(D & left[None, :], axis=1)
        return jnp.where(front, k, ranks), left & ~front, k + 1

    ranks0 = jnp.full(Y.shape[0], -1, dtype=jnp.int32)
    ranks, _, _ = jax.lax.while_loop(cond, body, (ranks0, valid, jnp.int32(0)))
    return ranks


def _inside(Y, valid, r):
    """Rows that do not strictly dominate ``r`` (or are invalid) moved onto ``r``: they add
    no volume and only empty boxes."""
    keep = valid & jnp.all(Y < r, axis=1)
    return jnp.where(keep[:, None], Y, r[None, :])


def _hv2(Y, r):
    """Exact 2-D hypervolume of ``Y (n, 2)`` whose rows are all ``<= r`` (sort sweep)."""
    order = jnp.lexsort((Y[:, 1], Y[:, 0]))
    y1, y2 = Y[order, 0], Y[order, 1]
    before = jnp.concatenate([r[1:], jax.lax.cummin(y2)[:-1]])
    return jnp.sum((r[0] - y1) * jnp.maximum(before - y2, 0.0))


def _slices(Y, r):
    """Rows sorted by the last objective, the slab edges ``z_0 = -inf <= z_1 <= ... <= z_n
    <= z_{n+1} = r_m`` and, per slab ``k``, which sorted rows lie below it (``(n + 1, n)``)."""
    n = Y.shape[0]
    order = jnp.argsort(Y[:, -1])
    Ys = Y[order]
    z = jnp.concatenate([jnp.full((1,), -jnp.inf, Y.dtype), Ys[:, -1], r[-1:]])
    below = jnp.arange(n)[None, :] < jnp.arange(n + 1)[:, None]
    return Ys, z, below


@_checked(reference=True, objectives=HYPERVOLUME_OBJECTIVES)
def hypervolume(Y: Array, reference_point: Array, mask: Optional[Array] = None) -> Array:
    """The exact hypervolume dominated by ``Y`` and bounded by ``reference_point``
    (minimization): the Lebesgue measure of ``{z : z <= r, some valid y <= z}``
    (Zitzler & Thiele 1998).

    ``m = 2``: one sort and a sweep, ``O(n log n)``. ``m = 3``: slicing along the third
    objective (While et al. 2006), ``O(n^2 log n)`` time and ``O(n^2)`` memory. Masked rows,
    rows with a NaN/inf value and rows that do not strictly dominate ``reference_point``
    add nothing. Not meant to be differentiated.

    Args:
        Y: ``(n, m)`` objective values, ``m`` in (2, 3).
        reference_point: ``(m,)``, finite, in the units of ``Y`` (BoTorch's ``ref_point``
            negated, since BoTorch maximizes).
        mask: ``(n,)`` bool validity, or None.

    Returns:
        ``()`` hypervolume in the product of the objectives' units (``Y``'s float dtype).

    Raises:
        ValueError: ``Y`` not 2-D or ``m`` not in (2, 3); ``reference_point`` not ``(m,)``
            or not finite; ``mask`` not ``(n,)``. TypeError: non-numeric ``Y``, non-bool ``mask``.
    """
    Y, valid, r = _prepare(Y, mask, reference_point)
    Y = _inside(Y, valid, r)
    if Y.shape[1] == 2:
        return _hv2(Y, r)
    Ys, z, below = _slices(Y, r)
    areas = jax.vmap(lambda b: _hv2(jnp.where(b[:, None], Ys[:, :2], r[None, :2]), r[:2]))(below[1:])
    return jnp.sum(areas * (z[2:] - z[1:-1]))


def _boxes2(Y, r):
    """The ``n + 1`` boxes of the 2-D non-dominated region of ``Y (n, 2)`` (rows ``<= r``)."""
    order = jnp.lexsort((Y[:, 1], Y[:, 0]))
    x = jnp.concatenate([Y[order, 0], r[:1]])
    top = jnp.concatenate([r[1:], jax.lax.cummin(Y[order, 1])])
    lower = jnp.stack([jnp.concatenate([jnp.full((1,), -jnp.inf, Y.dtype), x[:-1]]),
                       jnp.full(x.shape, -jnp.inf, Y.dtype)], axis=1)
    upper = jnp.stack([x, top], axis=1)
    return lower, upper


@_checked(reference=True, objectives=HYPERVOLUME_OBJECTIVES)
def nondominated_partitioning(Y: Array, reference_point: Array, mask: Optional[Array] = None) -> BoxDecomposition:
    """Disjoint boxes covering the part of ``{z <= reference_point}`` that ``Y`` does not
    dominate (minimization), padded to a fixed number (BoTorch's ``NondominatedPartitioning``;
    Couckuyt, Deschrijver & Dhaene 2014; Lacour, Klamroth & Fonseca 2017).

    ``m = 2``: ``B = n + 1`` boxes, a staircase below the front sorted by the first
    objective. ``m = 3``: ``B = (n + 1)^2`` boxes, slabs between consecutive values of the
    third objective, each holding the 2-D boxes of the points below it. Boxes of masked,
    dominated or non-finite rows and of rows beyond ``reference_point`` are empty (zero
    width); the lower corners are ``-inf`` along the unbounded directions.

    Args:
        Y: ``(n, m)`` objective values, ``m`` in (2, 3).
        reference_point: ``(m,)``, finite.
        mask: ``(n,)`` bool validity, or None.

    Returns:
        :class:`BoxDecomposition` with ``lower``, ``upper`` of shape ``(B, m)``.

    Raises:
        ValueError: as :func:`hypervolume`. TypeError: non-numeric ``Y``, non-bool ``mask``.
    """
    Y, valid, r = _prepare(Y, mask, reference_point)
    Y = _inside(Y, valid, r)
    if Y.shape[1] == 2:
        return BoxDecomposition(*_boxes2(Y, r))
    n = Y.shape[0]
    Ys, z, below = _slices(Y, r)
    lo2, up2 = jax.vmap(lambda b: _boxes2(jnp.where(b[:, None], Ys[:, :2], r[None, :2]), r[:2]))(below)
    lo3 = jnp.broadcast_to(z[:-1, None, None], (n + 1, n + 1, 1))
    up3 = jnp.broadcast_to(z[1:, None, None], (n + 1, n + 1, 1))
    lower = jnp.concatenate([lo2, lo3], axis=-1).reshape(-1, 3)
    upper = jnp.concatenate([up2, up3], axis=-1).reshape(-1, 3)
    return BoxDecomposition(lower, upper)


def hypervolume_improvement(y_new: Array, boxes: BoxDecomposition) -> Array:
    """The hypervolume a new point adds to a front, from the front's
    :func:`nondominated_partitioning`: ``HVI(y) = sum_b prod_j max(0, u_bj - max(l_bj, y_j))``
    (Daulton, Balandat & Bakshy 2020, Eq. 3; the integrand of expected hypervolume
    improvement, Emmerich, Giannakoglou & Naujoks 2006).

    Equal to ``hypervolume(Y + [y]) - hypervolume(Y)`` with the partitioning's reference point;
    0 for a dominated point or one beyond the reference point.

    Args:
        y_new: ``(..., m)`` new points (a batch of candidates broadcasts).
        boxes: the :class:`BoxDecomposition` of the current front, ``(B, m)`` corners.

    Returns:
        ``(...)`` improvements, in the product of the objectives' units.

    Raises:
        ValueError: ``y_new``'s last axis is not the boxes' ``m``.
    """
    m = boxes.lower.shape[-1]
    if len(jnp.shape(y_new)) < 1 or jnp.shape(y_new)[-1] != m:
        raise ValueError(f"y_new must have shape (..., m) with m = {m} (the boxes' objectives), "
                         f"got shape {jnp.shape(y_new)}")
    return _hypervolume_improvement(jnp.asarray(y_new), boxes)


@jax.jit
def _hypervolume_improvement(y_new, boxes):
    y = jnp.asarray(y_new)[..., None, :]
    width = jnp.maximum(boxes.upper - jnp.maximum(boxes.lower, y), 0.0)
    return jnp.sum(jnp.prod(width, axis=-1), axis=-1)


def log_hypervolume_difference(hv: Array, max_hypervolume: float) -> Array:
    """``log10(max_hypervolume - hv)``, the regret measure of BoTorch's multi-objective
    tutorials (Daulton, Balandat & Bakshy 2020, Section 6): lower is better.

    A difference at or below 0 (``hv`` reaching a maximum that was itself approximated)
    gives ``-inf``.

    Args:
        hv: hypervolumes, any shape (e.g. ``(seeds, n)`` histories).
        max_hypervolume: the hypervolume of the true Pareto front against the same
            reference point (:attr:`nbo_jax.types.Problem.max_hypervolume`), finite.

    Returns:
        Array like ``hv``.

    Raises:
        ValueError: ``max_hypervolume`` None or not finite.
    """
    if max_hypervolume is None:
        raise ValueError("max_hypervolume must be a finite number (the problem's known maximum), got None")
    if not isinstance(max_hypervolume, jax.core.Tracer) and not np.all(np.isfinite(np.asarray(max_hypervolume))):
        raise ValueError(f"max_hypervolume must be finite, got {max_hypervolume}")
    hv = jnp.asarray(hv)
    return jnp.log10(jnp.maximum(max_hypervolume - hv, 0.0))


__all__ = [
    "BoxDecomposition",
    "HYPERVOLUME_OBJECTIVES",
    "dominance_matrix",
    "hypervolume",
    "hypervolume_improvement",
    "is_non_dominated",
    "log_hypervolume_difference",
    "nondominated_partitioning",
    "pareto_ranks",
]
