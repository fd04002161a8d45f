"""Regret plots of BO runs: the median and the 25-75% band over seeds per method."""

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
    ax.set_xlabel("number of evaluations")
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
