"""Problems on a finite domain: the objective is known only at ``N`` given
points, e.g. a corpus of documents as word-frequency vectors, or a grid of settings.

:func:`finite_problem` builds such a :class:`~nbo_jax.types.Problem` from the points and one
value per point; :func:`index_of` maps evaluated points back to their rows. Every algorithm
that scores an acquisition runs on it unchanged: ``run_bo`` draws the initial design from the
points (without repetition), the acquisition is scored on the points not evaluated yet (no
gradient steps) and no point is proposed twice (:mod:`nbo_jax.optimize`).
"""

from __future__ import annotations

from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import check_positive
from ..types import Problem, TaskMetric, finite_domain

Array = jax.Array


SHORTLIST = 8


def nearest_index(points: Array, x: Array) -> Array:
    """Row of ``points (N, d)`` nearest to ``x (d,)`` in Euclidean distance, ``()`` int32.

    Two stages, so that a vmapped batch of ``B`` points costs ``O(B N)`` memory, not
    ``O(B N d)``: the ``SHORTLIST`` rows nearest by the expanded square ``|p|^2 - 2 p.x`` (one
    matrix product for the batch) are re-ranked by their exact differences, so rounding in
    the expanded form cannot pick a wrong row when ``x`` is one of the points."""
    dtype = jnp.result_type(x)
    pts = jnp.asarray(points, dtype)
    sq = jnp.asarray(np.sum(np.asarray(points, np.float64) ** 2, axis=1), dtype)
    k = min(SHORTLIST, int(np.shape(points)[0]))
    _, short = jax.lax.top_k(-(sq - 2.0 * (pts @ x)), k)
    exact = jnp.sum((pts[short] - x) ** 2, axis=1)
    return short[jnp.argmin(exact)].astype(jnp.int32)


def index_of(problem: Problem, x) -> np.ndarray:
    """Rows of ``problem.choices`` that the points ``x (..., d)`` are (the nearest row; a point
    of a run's history is one of the choices up to rounding), as an int numpy array of shape
    ``(...)``.

    Raises:
        ValueError: ``problem`` is not a finite problem, or ``x`` is not ``(..., d)``."""
    if problem.choices is None:
        raise ValueError(f"problem {problem.name!r} has no finite domain (problem.choices is None)")
    x = np.asarray(x, dtype=np.float64)
    if x.shape[-1:] != (problem.dim,):
        raise ValueError(f"x must be (..., d) with d = {problem.dim}, got shape {x.shape}")
    return problem.domain.nearest(x)[0]


def finite_problem(
    name: str,
    choices,
    values,
    *,
    bounds=None,
    noise_std: float = 0.0,
    optimal_value: Optional[float] = None,
    metric: Optional[TaskMetric] = None,
    metadata: Optional[dict] = None,
) -> Problem:
    """A minimization problem on the finite domain ``choices``, with ``f(choices[i]) = values[i]``.

    The objective looks the point up (nearest row, :func:`nearest_index`), so it is a pure jnp
    function: ``run_bo`` stays one ``lax.scan``, jit-compiled and vmappable over seeds. The
    points and values become constants of the compiled program (memory ``O(N d)`` once, not
    per seed).

    Args:
        name: the problem's name.
        choices: ``(N, d)`` distinct points (e.g. documents as word-frequency vectors).
        values: ``(N,)`` finite objective values, minimized.
        bounds: box of the unit-cube map; default the points' bounding box
            (:func:`nbo_jax.domains.finite_domain`).
        noise_std: observation noise standard deviation (same units as ``values``).
        optimal_value: ``f*``; default ``min(values)`` (exact on a finite domain).
        metric: the task's own :class:`~nbo_jax.types.TaskMetric`, if any.
        metadata: extra facts; ``"n_choices"`` and ``"argmin"`` (row of the minimum) are added.

    Returns:
        :class:`~nbo_jax.types.Problem` with ``choices`` set and ``optimizer`` the best row.

    Raises:
        ValueError: bad ``choices`` (:func:`~nbo_jax.domains.finite_domain`), ``values`` not
        ``(N,)`` or not finite, negative ``noise_std``.
    """
    dom = finite_domain(choices, bounds)
    vals = np.asarray(values, dtype=np.float64)
    if vals.shape != (dom.size,):
        raise ValueError(f"values must hold one value per row of choices: shape ({dom.size},), got {vals.shape}")
    if not np.all(np.isfinite(vals)):
        raise ValueError(f"values must be finite; rows {np.nonzero(~np.isfinite(vals))[0][:10].tolist()} are not")
    noise_std = check_positive("noise_std", noise_std, allow_zero=True)
    best = int(np.argmin(vals))
    pts = dom.points

    def objective(x: Array) -> Array:
        return jnp.asarray(vals, x.dtype)[nearest_index(pts, x)]

    meta = dict(metadata or {})
    meta.update(n_choices=dom.size, argmin=best)
    return Problem(
        name=name, dim=dom.dim, bounds=dom.bounds, objective=objective, noise_std=float(noise_std),
        optimal_value=float(vals[best]) if optimal_value is None else float(optimal_value),
        optimizer=pts[best].copy(), choices=pts, metric=metric, metadata=meta)


__all__ = ["finite_problem", "index_of", "nearest_index"]
