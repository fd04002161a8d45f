"""Observations in and out of an algorithm's state: the checks of ``init``'s and ``tell``'s
arguments, their rows in a :class:`~nbo_jax.dataset.Dataset`, and the bookkeeping of
constrained data (``J = K + 1`` columns: the objective, then ``K`` constraints, ``c <= 0``
feasible)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ._checks import check_int
from .dataset import Dataset
from .domains import Bounds, FiniteDomain, as_bounds
from .pareto import is_non_dominated
from .search_space import SearchSpace

Array = jax.Array


def initial_data(x0, y0, c0, bounds, capacity: int, *, constrained: bool) -> tuple[Dataset, Bounds]:
    """Validate an ``init``'s arguments and store them: the one way every algorithm starts.

    Args:
        x0: ``(n0, d)`` initial points in the box. y0: ``(n0,)`` observed values, or
            ``(n0, m)`` for ``m >= 2`` objectives (stored as the first ``m`` columns).
        c0: ``(n0, K)`` observed constraint values or ``None``; stored only when
            ``constrained`` (then required), as columns ``1..K`` of the dataset.
        bounds: :class:`Bounds` or anything :func:`nbo_jax.domains.as_bounds` reads; a
            :class:`~nbo_jax.domains.FiniteDomain` makes the dataset hold its points
            (``Dataset.choices``), so the acquisition is scored on them; a
            :class:`~nbo_jax.search_space.SearchSpace` (``x0 (n0, P)``, a categorical
            parameter as its choice's index) makes it hold the points' encodings
            (``u (cap, D)``; ``Dataset.space`` when it has an integer or categorical
            parameter) and is returned as the bounds.
        capacity: total rows (Python int ``>= n0``).

    Returns:
        ``(data, bounds)``: a :class:`Dataset` of ``capacity`` rows holding the ``n0``
        observations (unit-cube inputs; ``y (cap,)``, or ``(cap, K + 1)`` when
        ``constrained``) and the :class:`Bounds` as arrays of ``x0``'s float dtype.

    Raises:
        TypeError / ValueError: wrong shapes or types, bad bounds, ``capacity < n0``,
        ``c0`` missing for a constrained algorithm (messages name the argument).
    """
    x0, y0, lower, upper = check_initial(x0, y0, bounds, capacity)
    space = bounds if isinstance(bounds, SearchSpace) else None
    box = space if space is not None else Bounds(lower, upper)  # a space maps x (P,) to u (D,) itself
    if space is not None and not space.discrete:  # continuous parameters only: searched as a box
        space = None
    u0 = box.to_unit(x0)
    choices = None
    if isinstance(bounds, FiniteDomain):
        choices = box.to_unit(jnp.asarray(bounds.points, x0.dtype))
    d = u0.shape[1]
    if constrained or y0.ndim == 2:
        Y0 = y0
        if constrained:
            c0 = check_constraint_values(c0, x0.shape[0], x0.dtype)
            Y0 = observation_rows(y0, c0)
        data = Dataset.empty(capacity, d, x0.dtype, outputs=Y0.shape[1], choices=choices,
                             space=space).add_batch(u0, Y0)
    else:
        data = Dataset.empty(capacity, d, x0.dtype, choices=choices, space=space).add_batch(u0, y0)
    return data, box


def told_rows(bounds: Bounds, x, y, c, *, constrained: bool, objectives: int = 1) -> tuple[Array, Array]:
    """``tell``'s arguments as dataset rows: ``(u (n, d), y (n,) or (n, m + K))`` from
    ``x (d,) | (n, d)``, ``y () | (n,)`` (``(m,) | (n, m)`` for ``objectives = m >= 2``) and
    ``c (K,) | (n, K)`` (used only when ``constrained``; then required).

    Raises:
        ValueError: ``c`` missing for a constrained algorithm, or shapes disagree."""
    d = np.shape(bounds.lower)[0]
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        x = x.astype(jnp.asarray(bounds.lower).dtype if jnp.issubdtype(jnp.asarray(bounds.lower).dtype, jnp.floating)
                     else jnp.zeros(()).dtype)
    if x.shape[-1] != d or x.ndim > 2:
        raise ValueError(f"x must be (d,) or (n, d) with d = {d}, got shape {x.shape}")
    x = jnp.reshape(x, (-1, d))
    y = jnp.asarray(y, x.dtype)
    if objectives > 1:
        if y.shape[-1:] != (objectives,) or y.size != x.shape[0] * objectives:
            raise ValueError(f"y must hold {objectives} objective values per point, shape (n, {objectives}) for "
                             f"{x.shape[0]} point(s), got shape {y.shape}")
        y = jnp.reshape(y, (-1, objectives))
    else:
        y = jnp.reshape(y, (-1,))
    if y.shape[0] != x.shape[0]:
        raise ValueError(f"y must hold one value per point: {y.shape[0]} values for {x.shape[0]} points")
    u = bounds.to_unit(x)
    if not constrained:
        return u, y
    if c is None:
        raise ValueError("c: this algorithm models constraints; tell(state, x, y, c) needs the observed "
                         "constraint values (K,) per point")
    c = jnp.reshape(jnp.asarray(c, x.dtype), (x.shape[0], -1))
    return u, observation_rows(y, c)


def data_info(state) -> dict:
    """Diagnostics every algorithm reports (:attr:`nbo_jax.types.History.info`):
    ``n_observed`` (rows in ``state.data``) and ``n_failed`` (failed evaluations among them)."""
    data = state.data
    return {"n_observed": data.count, "n_failed": jnp.sum(data.failed & data.written)}


def check_initial(x0, y0, bounds, capacity: int):
    """Validate an algorithm's ``init`` arguments (static shapes only; works under jit).

    Returns ``(x0 (n0, d), y0 (n0,), lower (d,), upper (d,))`` as default-float arrays
    (``y0 (n0, m)`` when given with ``m >= 2`` objectives per row).

    Raises:
        TypeError: ``bounds`` is not a :class:`Bounds`, ``(lower, upper)`` pair or list of
        ``(low, high)`` pairs.
        ValueError: shapes disagree or ``capacity`` is too small (message names the argument).
    """
    x0 = jnp.asarray(x0)
    if not jnp.issubdtype(x0.dtype, jnp.floating):
        x0 = x0.astype(jnp.zeros(()).dtype)
    if x0.ndim != 2:
        raise ValueError(f"x0 must have shape (n0, d), got {x0.shape}")
    if isinstance(bounds, Bounds) and any(isinstance(b, jax.core.Tracer) for b in bounds):
        lower, upper = jnp.asarray(bounds.lower, x0.dtype), jnp.asarray(bounds.upper, x0.dtype)
    else:
        b = as_bounds(bounds, x0.shape[1], name="bounds")
        lower, upper = jnp.asarray(b.lower, x0.dtype), jnp.asarray(b.upper, x0.dtype)
    y0 = jnp.asarray(y0, x0.dtype)
    if not (y0.ndim == 2 and y0.shape[1] >= 2):  # (n0, m >= 2): m objectives per row
        y0 = y0.reshape(-1)
    if y0.shape[0] != x0.shape[0]:
        raise ValueError(f"y0 must have one value (or one row of m objectives) per row of x0: {y0.shape[0]} vs "
                         f"{x0.shape[0]}")
    if x0.shape[0] < 1:
        raise ValueError("x0 must hold at least one point (n_init >= 1)")
    capacity = check_int("capacity", capacity, 1)
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
    """``(q, J)`` rows ``[y, c_1..c_K]`` from ``y`` (``()`` or ``(q,)``; ``(q, m)`` for ``m``
    objectives) and ``c`` (``(K,)`` or ``(q, K)``)."""
    c = jnp.asarray(c)
    c = c.reshape((-1, c.shape[-1]))
    return jnp.concatenate([jnp.reshape(y, (c.shape[0], -1)).astype(c.dtype), c], axis=1)


def constrained_transform(Y: Array, M: Array) -> tuple[Array, Array]:
    """Target transform ``(v - shift) / scale`` per function, ``(J,)`` each: the objective
    standardized over its valid rows, each constraint divided by its
    root mean square and *not* centred, so that 0 stays the feasibility threshold. A
    spread below ``1e-12`` (fewer than two distinct values) gives scale 1
    (:func:`objective_scaling` with one objective)."""
    return objective_scaling(Y, M, 1)


def observed_feasible(data: Dataset) -> Array:
    """``(cap,)`` bool: rows of a ``(cap, J)`` dataset whose objective and constraints were
    all observed (failures excluded) with every constraint ``<= 0``."""
    ok = data.observed()
    return jnp.all(ok[:, 1:] & (data.y[:, 1:] <= 0.0), axis=1) & ok[:, 0]


def feasibility_ranked(data: Dataset, scale: Array) -> Dataset:
    """A single-output :class:`~nbo_jax.dataset.Dataset` whose ``y`` ranks the rows of the
    ``(cap, J)`` ``data`` for local candidates (:func:`nbo_jax.optimize.candidate_set`):
    the feasible rows by objective value, or, while none is feasible, every row by its total
    scaled violation ``sum_k [c_k / scale_k]^+`` (``scale (J,)``)."""
    feas = observed_feasible(data)
    M, Y = data.mask, data.y
    viol = jnp.sum(jnp.where(M[:, 1:], jnp.maximum(Y[:, 1:] / scale[1:], 0.0), jnp.inf), axis=1)
    score = jnp.where(jnp.any(feas), jnp.where(feas, Y[:, 0], jnp.inf), viol)
    return data._replace(y=score, mask=jnp.isfinite(score), failed=jnp.zeros_like(data.failed))


# ---------------------------------------------------------------- several objectives
# Observations of m >= 2 objectives (columns 0..m-1) and K constraints (columns m..m+K-1).


def objective_scaling(Y: Array, M: Array, m: int) -> tuple[Array, Array]:
    """Target transform ``(v - shift) / scale`` per column of a ``(cap, m + K)`` dataset,
    ``(m + K,)`` each: every objective standardized over its valid rows, every constraint
    divided by its root mean square (0 stays the feasibility threshold), as
    :func:`constrained_transform` does for one objective."""
    n = jnp.maximum(jnp.sum(M, axis=0), 1)
    mean = jnp.sum(jnp.where(M, Y, 0.0), axis=0) / n
    var = jnp.sum(jnp.where(M, (Y - mean) ** 2, 0.0), axis=0) / n
    ms = jnp.sum(jnp.where(M, Y * Y, 0.0), axis=0) / n
    is_objective = jnp.arange(Y.shape[1]) < m
    spread = jnp.where(is_objective, var, ms)
    return jnp.where(is_objective, mean, 0.0), jnp.where(spread > 1e-12, jnp.sqrt(spread), 1.0)


def observed_pareto_rows(data: Dataset, m: int) -> Array:
    """``(cap,)`` bool: rows of a ``(cap, m + K)`` dataset whose ``m`` objectives were all
    observed (failures excluded) and, with constraints, every constraint observed ``<= 0``:
    the rows a Pareto front is made of."""
    ok = data.observed()
    return jnp.all(ok[:, :m], axis=1) & jnp.all(ok[:, m:] & (data.y[:, m:] <= 0.0), axis=1)


def infer_reference_point(Y: Array, mask: Array, scale: float = 0.1) -> Array:
    """A hypervolume reference point from observations ``Y (n, m)`` (minimized) with validity
    ``mask (n,)``: the nadir of their Pareto front plus ``scale`` times its range, ``(m,)``
    (BoTorch's ``infer_reference_point`` for maximization, mirrored; Ishibuchi et al. 2018,
    "How to specify a reference point in hypervolume calculation"). A front of one point
    (zero range) is widened by ``scale`` times its magnitude, at least ``scale``; no valid
    row gives the largest finite values observed (0 if none)."""
    nd = is_non_dominated(Y, mask)
    nadir = jnp.max(jnp.where(nd[:, None], Y, -jnp.inf), axis=0)
    ideal = jnp.min(jnp.where(nd[:, None], Y, jnp.inf), axis=0)
    span = jnp.where(nadir > ideal, nadir - ideal, jnp.maximum(jnp.abs(nadir), 1.0))
    ref = nadir + scale * span
    fallback = jnp.max(jnp.where(jnp.isfinite(Y), Y, -jnp.inf), axis=0)
    return jnp.where(jnp.any(nd), ref, jnp.where(jnp.isfinite(fallback), fallback, 0.0))


def pareto_ranked(data: Dataset, m: int, scale: Array) -> Dataset:
    """A single-output :class:`~nbo_jax.dataset.Dataset` whose ``y`` ranks the rows of a
    ``(cap, m + K)`` ``data`` for local candidates (:func:`nbo_jax.optimize.candidate_set`):
    the non-dominated observed feasible rows first (``y = 0``), then the other feasible rows
    (``y = 1``); while none is feasible, every row by its total scaled violation
    (``scale (m + K,)``), as :func:`feasibility_ranked`."""
    ok = observed_pareto_rows(data, m)
    nd = is_non_dominated(data.y[:, :m], ok)
    viol = jnp.sum(jnp.where(data.mask[:, m:], jnp.maximum(data.y[:, m:] / scale[m:], 0.0), jnp.inf), axis=1)
    score = jnp.where(jnp.any(ok), jnp.where(ok, jnp.where(nd, 0.0, 1.0), jnp.inf), viol)
    return data._replace(y=score, mask=jnp.isfinite(score), failed=jnp.zeros_like(data.failed))


__all__ = ["check_constraint_values", "check_initial", "constrained_transform", "data_info", "feasibility_ranked", "initial_data", "observation_rows", "observed_feasible", "told_rows",
           "objective_scaling", "observed_pareto_rows", "infer_reference_point", "pareto_ranked"]
