"""Pareto fronts of runs with ``m >= 2`` objectives (every objective minimized): the final
front of one seed per method, a problem's true front sampled on a grid when that is cheap,
and the files ``pareto.png`` / ``pareto_fronts.npz`` that ``nbo-jax run``, ``compare`` and
``plot`` write.

```
final front of a run : the rows of f (n, m) (noise-free) that are valid (and feasible) and
                       that no other such row dominates (nbo_jax.pareto.is_non_dominated)
sampled true front   : d <= 2, m = 2, no constraints: f on a G^d grid of the box; sorted by
                       (f_0, f_1), a point is kept when its f_1 is below every f_1 before it
                       (the m = 2 sweep of Kung, Luccio & Preparata 1975), O(G^d log G^d);
                       Branin-Currin, G = 501: 370 points, 99.2% of BoTorch's max hypervolume
```

References: Kung, Luccio & Preparata 1975, "On finding the maxima of a set of vectors",
J. ACM 22(4) (the sweep).
"""

from __future__ import annotations

import pathlib
from typing import Any, Mapping, Optional

import numpy as np

from .metrics import field, optional_field
from .results import PathLike

GRID_POINTS = 501
"""Grid points per dimension of :func:`sampled_front`."""


def final_fronts(histories: Mapping[str, Any], seed: int = 0) -> dict[str, np.ndarray]:
    """The final Pareto front of seed ``seed`` of each method.

    Args:
        histories: method -> History or mapping with ``f (S, n, m)`` (or ``(n, m)`` for one
            run), ``valid (S, n)`` and, for a constrained run, ``feasible (S, n)``.
        seed: the seed's index on the leading axis (ignored for one run).

    Returns:
        method -> ``(k, m)`` float64 noise-free objective values of the non-dominated valid
        (and feasible) rows (:func:`nbo_jax.pareto.is_non_dominated`), sorted by the first
        objective.

    Raises:
        ValueError: a history whose ``f`` is not ``(S, n, m)`` or ``(n, m)`` with ``m >= 2``,
        or ``seed`` outside its seeds.
    """
    from ..pareto import is_non_dominated

    out = {}
    for method, hist in histories.items():
        f, keep = field(hist, "f"), field(hist, "valid")
        feasible = optional_field(hist, "feasible")
        if feasible is not None:
            keep = keep & feasible
        if f.ndim == 3:
            if not 0 <= seed < f.shape[0]:
                raise ValueError(f"seed must index one of the {f.shape[0]} seeds of {method!r}, got {seed}")
            f, keep = f[seed], keep[seed]
        if f.ndim != 2 or f.shape[1] < 2:
            raise ValueError(f"histories[{method!r}]['f'] must have shape (S, n, m) or (n, m) with m >= 2 "
                             f"objectives, got {field(hist, 'f').shape}")
        f = np.asarray(f, np.float64)
        keep = keep & np.all(np.isfinite(f), axis=1)
        front = f[np.asarray(is_non_dominated(np.where(keep[:, None], f, 0.0), keep))]
        out[method] = front[np.argsort(front[:, 0], kind="stable")]
    return out


def sampled_front(problem, points_per_dim: int = GRID_POINTS) -> Optional[np.ndarray]:
    """The true Pareto front of a cheap problem, sampled: ``problem``'s noise-free objectives
    on a ``points_per_dim^d`` grid of its box, filtered to the non-dominated points (the
    module's sweep); ``None`` unless ``d <= 2``, ``m = 2`` and the problem has no constraints.

    Args:
        problem: a :class:`~nbo_jax.types.Problem` with ``m`` objectives.
        points_per_dim: grid points per dimension (>= 2).

    Returns:
        ``(k, 2)`` float64 front points sorted by the first objective, or ``None``.

    Raises:
        ValueError: ``points_per_dim`` < 2.
    """
    if not isinstance(points_per_dim, int) or points_per_dim < 2:
        raise ValueError(f"points_per_dim must be an int >= 2, got {points_per_dim!r}")
    if problem.dim > 2 or problem.n_objectives != 2 or problem.constraints is not None:
        return None
    lower, upper = np.asarray(problem.bounds.lower, np.float64), np.asarray(problem.bounds.upper, np.float64)
    axes = [np.linspace(lower[j], upper[j], points_per_dim) for j in range(problem.dim)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, problem.dim)
    f = np.asarray(problem(grid), np.float64)
    f = f[np.all(np.isfinite(f), axis=1)]
    f = f[np.lexsort((f[:, 1], f[:, 0]))]
    before = np.concatenate([[np.inf], np.minimum.accumulate(f[:, 1])[:-1]])
    return f[f[:, 1] < before]


def write_fronts(out_dir: PathLike, histories: Mapping[str, Any], *, true_front: Optional[np.ndarray] = None,
                 reference_point=None, title: Optional[str] = None, seed: int = 0) -> dict[str, pathlib.Path]:
    """Write ``pareto_fronts.npz`` (``front__<method>`` ``(k, m)`` arrays of
    :func:`final_fronts`, and ``true_front`` when given) and ``pareto.png``
    (:func:`nbo_jax.analysis.plots.plot_pareto_fronts`) to ``out_dir``.

    Args:
        out_dir: the results folder (created if needed; files overwritten).
        histories: method -> History or mapping with ``f (S, n, m)`` (:func:`final_fronts`).
        true_front: ``(k, m)`` the problem's front (e.g. :func:`sampled_front`), or ``None``.
        reference_point: ``(m,)`` drawn as a marker, or ``None``.
        title: the plot's title; seed: the seed whose fronts are drawn.

    Returns:
        ``{"fronts": npz path, "pareto": png path}``.

    Raises:
        ValueError: the errors of :func:`final_fronts`. OSError: ``out_dir`` not writable.
    """
    from .plots import plot_pareto_fronts

    fronts = final_fronts(histories, seed)
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    arrays = {f"front__{m}": v for m, v in fronts.items()}
    if true_front is not None:
        arrays["true_front"] = np.asarray(true_front, np.float64)
    npz = out / "pareto_fronts.npz"
    np.savez(npz, **arrays)
    png = plot_pareto_fronts(fronts, out / "pareto.png", true_front=true_front, reference_point=reference_point,
                             title=title, seed=seed)
    return {"fronts": npz, "pareto": png}


def load_fronts(out_dir: PathLike) -> tuple[dict[str, np.ndarray], Optional[np.ndarray]]:
    """Read ``pareto_fronts.npz`` written by :func:`write_fronts`: ``(fronts, true_front)``
    (method -> ``(k, m)``; ``None`` when no true front was written).

    Raises:
        FileNotFoundError: no ``pareto_fronts.npz`` in ``out_dir``."""
    path = pathlib.Path(out_dir) / "pareto_fronts.npz"
    if not path.is_file():
        raise FileNotFoundError(f"no {path.name} in {str(out_dir)!r} (written by write_fronts)")
    with np.load(path, allow_pickle=False) as data:
        fronts = {k[len("front__"):]: data[k] for k in data.files if k.startswith("front__")}
        true_front = data["true_front"] if "true_front" in data.files else None
    return fronts, true_front
