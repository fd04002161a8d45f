"""Plots of BO runs: regret curves (the median and the 25-75% band over seeds per method) and
Pareto fronts of runs with several objectives."""

from __future__ import annotations

import pathlib
import warnings
from typing import Any, Mapping, Optional

import numpy as np

from .results import PathLike


def plot_regret(
    curves: Mapping[str, Any],
    path: PathLike,
    *,
    title: Optional[str] = None,
    log: bool = True,
    n_init: Optional[int] = None,
    ylabel: str = "simple regret",
) -> pathlib.Path:
    """Plot the median and the 25-75% band over seeds of each method's curve; save a PNG.

    Args:
        curves: method -> ``(S, n)`` array (e.g. simple regret per seed and evaluation;
            ``(n,)`` is one seed). Methods may have different ``n``. NaN/inf entries (e.g.
            ``best_f`` before the first finite value) are ignored per evaluation.
        path: output file (``.png``); parent folders are created.
        title: figure title (optional).
        log: log y axis when every finite value is > 0, else symlog; ``False``: linear.
        n_init: draw a dashed vertical line at evaluation ``n_init`` (end of the initial
            design) when given.
        ylabel: y-axis label.

    Returns:
        ``path`` as a :class:`pathlib.Path`.

    The x axis is the number of evaluations ``1..n``. Uses matplotlib's Agg canvas
    directly (no pyplot, so it neither needs a display nor changes the user's backend).

    Raises:
        ValueError: ``curves`` empty, or a curve that is not 1-D/2-D or has no evaluations.
        OSError: ``path`` cannot be written.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not curves:
        raise ValueError("curves is empty: pass {method: (n_seeds, n) array}")
    data = {}
    for method, c in curves.items():
        a = np.asarray(c, dtype=np.float64)
        if a.ndim == 1:
            a = a[None, :]
        if a.ndim != 2 or a.shape[1] == 0:
            raise ValueError(f"curves[{method!r}] must have shape (n_seeds, n) with n >= 1, got {a.shape}")
        data[method] = np.where(np.isfinite(a), a, np.nan)

    fig = Figure(figsize=(7, 4.5), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    all_stats = []
    for method, a in data.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
            q25, med, q75 = np.nanquantile(a, [0.25, 0.5, 0.75], axis=0)
        xs = np.arange(1, a.shape[1] + 1)
        (line,) = ax.plot(xs, med, label=f"{method} (median, {a.shape[0]} seeds)", lw=1.8)
        ax.fill_between(xs, q25, q75, color=line.get_color(), alpha=0.2, lw=0)
        all_stats.append(np.concatenate([q25, med, q75]))
    values = np.concatenate(all_stats)
    values = values[np.isfinite(values)]
    if log and values.size:
        if np.all(values > 0):
            ax.set_yscale("log")
        else:
            nonzero = np.abs(values[values != 0])
            linthresh = max(float(nonzero.min()), 1e-6 * float(nonzero.max())) if nonzero.size else 1.0
            ax.set_yscale("symlog", linthresh=linthresh)
    if n_init is not None:
        ax.axvline(n_init, color="0.4", ls="--", lw=1, label=f"end of initial design ({n_init})")
    return _finish(fig, ax, "number of evaluations", ylabel, title, path)


def plot_pareto_fronts(
    fronts: Mapping[str, Any],
    path: PathLike,
    *,
    true_front=None,
    reference_point=None,
    title: Optional[str] = None,
    seed: Optional[int] = 0,
) -> pathlib.Path:
    """Plot each method's Pareto front (objectives 1 and 2, both minimized) as a staircase of
    its points, with the true front and the reference point when given; save a PNG.

    Args:
        fronts: method -> ``(k, m)`` non-dominated objective values (e.g.
            :func:`nbo_jax.analysis.fronts.final_fronts`), ``m >= 2``; with ``m > 2`` the
            first two objectives are drawn.
        path: output file (``.png``); parent folders are created.
        true_front: ``(k, m)`` the problem's front (drawn as a grey line), or ``None``.
        reference_point: ``(m,)`` the hypervolume's reference point (a marker), or ``None``.
        title: figure title (optional). seed: the seed the fronts come from, for the legend
            (``None``: not named).

    Returns:
        ``path`` as a :class:`pathlib.Path`. The legend names every method of ``fronts``.

    Raises:
        ValueError: ``fronts`` empty or a front not ``(k, m)`` with ``m >= 2``.
        OSError: ``path`` cannot be written.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not fronts:
        raise ValueError("fronts is empty: pass {method: (k, m) front}")
    fig = Figure(figsize=(6, 5), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    if true_front is not None:
        t = np.asarray(true_front, np.float64)
        t = t[np.argsort(t[:, 0])]
        ax.plot(t[:, 0], t[:, 1], color="0.55", lw=1.5, label="true front (sampled)")
    of_seed = "" if seed is None else f", seed {seed}"
    for method, front in fronts.items():
        a = np.asarray(front, np.float64)
        if a.ndim != 2 or a.shape[1] < 2:
            raise ValueError(f"fronts[{method!r}] must have shape (k, m) with m >= 2, got {a.shape}")
        a = a[np.argsort(a[:, 0])]
        (line,) = ax.step(a[:, 0], a[:, 1], where="post", lw=1.2, label=f"{method} ({len(a)} points{of_seed})")
        ax.plot(a[:, 0], a[:, 1], "o", ms=4, color=line.get_color())
    if reference_point is not None:
        r = np.asarray(reference_point, np.float64)
        ax.plot([r[0]], [r[1]], "kx", ms=8, label="reference point")
    return _finish(fig, ax, "objective 1 (minimized)", "objective 2 (minimized)", title, path)


def _finish(fig, ax, xlabel: str, ylabel: str, title: Optional[str], path: PathLike) -> pathlib.Path:
    """Label, grid and legend ``ax``; save ``fig`` as a PNG at ``path`` (parents created)."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    return path
