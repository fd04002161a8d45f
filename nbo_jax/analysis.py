"""Analysis of BO runs: regret, summary tables, the thesis statistics, plots, result files.

Everything here works on host (numpy) arrays after a run; JAX arrays are accepted and
converted with ``np.asarray``. Shapes use ``S`` for the number of seeds and ``n`` for the
number of evaluations (``n_init + n_iter``); any leading shape is allowed where stated.

Metrics (SPEC.md section 0), all on the noise-free values ``f(x_t)``:

- simple regret ``r_t = min_{s<=t} f(x_s) - f*`` (:func:`simple_regret`);
- cumulative regret ``R_t = sum_{s<=t} (f(x_s) - f*)`` (:func:`cumulative_regret`);
- for constrained problems, the best positive regret plus violation
  ``min_{s<=t} ([f(x_s) - f*]^+ + sum_k [c_k(x_s)]^+)`` (:func:`regret_plus_violation`;
  thesis Figure 4.1), which :func:`metric_curves` and :func:`final_values` use whenever a
  history carries constraint values.

Statistics as in the thesis: a Kolmogorov-Smirnov normality test (:func:`ks_normality`),
one-sided Welch t-tests with H0 ``mean_baseline <= mean_method`` (:func:`welch_one_sided`)
and the Benjamini-Hochberg correction over several tests (:func:`benjamini_hochberg`).

Result files (:func:`save_results` / :func:`load_results`): ``histories.npz`` (arrays
``<method>__x``, ``__y``, ``__f``, ``__best_f``, ``__valid`` and, for constrained runs,
``__c``, ``__c_true``, ``__feasible``, ``__best_feasible_f``), ``config.json`` (the run's
configuration, library versions, device, seeds, timings, summary) and ``summary.md``.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata as _metadata
import json
import math
import pathlib
import platform
import sys
import warnings
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np


PathLike = Union[str, pathlib.Path]

HISTORY_FIELDS = ("x", "y", "f", "best_f", "valid")
CONSTRAINED_FIELDS = ("c", "c_true", "feasible", "best_feasible_f")
SUMMARY_COLUMNS = ("method", "n", "median", "q25", "q75", "iqr", "mean")

__all__ = [
    "simple_regret",
    "cumulative_regret",
    "regret_plus_violation",
    "metric_curves",
    "final_values",
    "summarize",
    "summary_rows",
    "format_table",
    "ks_normality",
    "welch_one_sided",
    "benjamini_hochberg",
    "plot_regret",
    "save_results",
    "load_results",
    "environment_info",
    "history_to_numpy",
]


# --------------------------------------------------------------------------- metrics
def _check_optimal_value(optimal_value) -> float:
    if optimal_value is None:
        raise ValueError("optimal_value is None: regret needs the known optimum f* of the problem")
    try:
        value = float(optimal_value)
    except (TypeError, ValueError):
        raise TypeError(f"optimal_value must be a real number, got {type(optimal_value).__name__}") from None
    if not math.isfinite(value):
        raise ValueError(f"optimal_value must be finite, got {value}")
    return value


def simple_regret(best_f, optimal_value: float) -> np.ndarray:
    """Simple regret ``r_t = best_f_t - f*``.

    Args:
        best_f: running minimum of the noise-free objective, shape ``(..., n)`` (any shape;
            ``History.best_f``, e.g. ``(S, n)`` for vmapped runs). Units of ``f``.
        optimal_value: the known global minimum ``f*`` (``problem.optimal_value``).

    Returns:
        float numpy array of the same shape as ``best_f`` (``inf`` where no finite value
        was observed yet).

    Raises:
        ValueError: ``optimal_value`` is ``None`` or not finite. TypeError: not a number.
    """
    fstar = _check_optimal_value(optimal_value)
    return np.asarray(best_f, dtype=np.float64) - fstar


def cumulative_regret(f, optimal_value: float) -> np.ndarray:
    """Cumulative regret ``R_t = sum_{s<=t} (f(x_s) - f*)`` along the last axis.

    Args:
        f: noise-free objective values ``(..., n)`` (``History.f``). Non-finite entries
            contribute 0 (as in :meth:`nbo_jax.History.cumulative_regret`).
        optimal_value: the known global minimum ``f*``.

    Returns:
        float numpy array of shape ``(..., n)``.

    Raises:
        ValueError: ``optimal_value`` is ``None``/not finite, or ``f`` is a scalar.
    """
    fstar = _check_optimal_value(optimal_value)
    f = np.asarray(f, dtype=np.float64)
    if f.ndim == 0:
        raise ValueError("f must have at least one axis (evaluations on the last axis), got a scalar")
    inst = np.where(np.isfinite(f), f - fstar, 0.0)
    return np.cumsum(inst, axis=-1)


def _field(history, name: str) -> np.ndarray:
    if isinstance(history, Mapping):
        if name not in history:
            raise ValueError(f"history is missing the field {name!r} (has {sorted(history)})")
        return np.asarray(history[name])
    if not hasattr(history, name):
        raise TypeError(f"history must be an nbo_jax.History or a mapping with {name!r}, got {type(history).__name__}")
    return np.asarray(getattr(history, name))


def regret_plus_violation(f, c_true, optimal_value: float) -> np.ndarray:
    """Best positive regret plus violation (SPEC.md section 0; thesis Figure 4.1).

    Args:
        f: noise-free objective values ``(..., n)`` (``History.f``).
        c_true: noise-free constraint values ``(..., n, K)`` (``History.c_true``), ``c <= 0``
            feasible.
        optimal_value: ``f*``, the best feasible value.

    Returns:
        ``(..., n)`` float array ``min_{s<=t} ([f_s - f*]^+ + sum_k [c_{k,s}]^+)`` (the sum is
        taken at one point, then the running minimum); non-finite terms count as ``inf``.

    Raises:
        ValueError: ``optimal_value`` not finite, or shapes that disagree.
    """
    fstar = _check_optimal_value(optimal_value)
    f = np.asarray(f, dtype=np.float64)
    c = np.asarray(c_true, dtype=np.float64)
    if c.shape[:-1] != f.shape:
        raise ValueError(f"c_true must have shape f.shape + (K,) = {f.shape} + (K,), got {c.shape}")
    inst = np.maximum(f - fstar, 0.0) + np.sum(np.maximum(c, 0.0), axis=-1)
    inst = np.where(np.isfinite(inst), inst, np.inf)
    return np.minimum.accumulate(inst, axis=-1)


def _get(history, name: str):
    """A field of a History or mapping, or ``None`` when absent."""
    value = history.get(name) if isinstance(history, Mapping) else getattr(history, name, None)
    return None if value is None else np.asarray(value)


def is_constrained(history) -> bool:
    """True when ``history`` (History or mapping) carries noise-free constraint values."""
    return _get(history, "c_true") is not None


def metric_curves(histories: Mapping[str, Any], optimal_value: Optional[float]) -> tuple[dict, str]:
    """Per-method curves of the run's metric and its label.

    - constrained histories (with ``c_true``) and a known ``f*``: best positive regret plus
      violation (:func:`regret_plus_violation`);
    - otherwise simple regret ``best_f - f*``, or ``best_f`` itself when ``f*`` is unknown
      (for a constrained history: the best *feasible* ``f``).

    Returns:
        ``(curves, label)``: method -> ``(S, n)`` (or ``(n,)``) float arrays.
    """
    curves, labels = {}, set()
    for method, hist in histories.items():
        if is_constrained(hist) and optimal_value is not None:
            curves[method] = regret_plus_violation(_field(hist, "f"), _field(hist, "c_true"), optimal_value)
            labels.add("best positive regret plus violation")
        elif is_constrained(hist):
            curves[method] = np.asarray(_field(hist, "best_feasible_f"), dtype=np.float64)
            labels.add("best feasible f (optimal value unknown)")
        elif optimal_value is not None:
            curves[method] = simple_regret(_field(hist, "best_f"), optimal_value)
            labels.add("simple regret (best f - f*)")
        else:
            curves[method] = np.asarray(_field(hist, "best_f"), dtype=np.float64)
            labels.add("best f (optimal value unknown)")
    return curves, " / ".join(sorted(labels))


def final_values(histories: Mapping[str, Any], optimal_value: Optional[float] = None) -> dict[str, np.ndarray]:
    """Final value of the run's metric per seed for each method (:func:`metric_curves`):
    simple regret, or the best positive regret plus violation for constrained runs.

    Args:
        histories: method name -> :class:`~nbo_jax.types.History` (or a mapping with a
            ``"best_f"`` array, as returned by :func:`load_results`), ``best_f`` of shape
            ``(S, n)`` or ``(n,)`` for a single run.
        optimal_value: ``f*``; when ``None`` the final ``best_f`` itself is returned.

    Returns:
        method -> ``(S,)`` float array: ``best_f[..., -1] - f*`` (or ``best_f[..., -1]``).

    Raises:
        ValueError: a history with no evaluations.
    """
    out = {}
    curves, _ = metric_curves(histories, optimal_value)
    for method, curve in curves.items():
        if curve.ndim == 0 or curve.shape[-1] == 0:
            raise ValueError(f"{method}: the history has no evaluations (shape {curve.shape})")
        out[method] = np.atleast_1d(curve[..., -1]).reshape(-1)
    return out


# --------------------------------------------------------------------------- summaries
def summarize(results: Mapping[str, Any]) -> list[dict]:
    """Per-method summary of a final metric (usually final simple regret), one row each.

    Args:
        results: method name -> values per seed, shape ``(S,)`` (any shape is flattened).

    Returns:
        A list of dicts (in the order of ``results``) with keys ``method``, ``n`` (number of
        finite values used), ``median``, ``q25``, ``q75`` (25% and 75% quantiles, numpy's
        default linear interpolation), ``iqr`` (``q75 - q25``) and ``mean``; plus
        ``n_nonfinite`` when some values were NaN/inf (they are left out). All statistics
        are ``nan`` when no value is finite.

    Raises:
        ValueError: ``results`` is empty or a method has no values.
    """
    if not results:
        raise ValueError("results is empty: pass {method: final values per seed}")
    rows = []
    for method, values in results.items():
        v = np.asarray(values, dtype=np.float64).reshape(-1)
        if v.size == 0:
            raise ValueError(f"results[{method!r}] has no values")
        finite = v[np.isfinite(v)]
        if finite.size:
            q25, med, q75 = (float(q) for q in np.quantile(finite, [0.25, 0.5, 0.75]))
            mean = float(np.mean(finite))
        else:
            q25 = med = q75 = mean = float("nan")
        row = dict(method=str(method), n=int(finite.size), median=med, q25=q25, q75=q75, iqr=q75 - q25, mean=mean)
        if finite.size < v.size:
            row["n_nonfinite"] = int(v.size - finite.size)
        rows.append(row)
    return rows


def summary_rows(
    histories: Mapping[str, Any],
    optimal_value: Optional[float] = None,
    timings: Optional[Mapping[str, float]] = None,
) -> list[dict]:
    """:func:`summarize` of :func:`final_values`, with ``wall_s`` added from ``timings``.

    Args:
        histories: method -> History (or mapping with ``best_f``), ``best_f (S, n)``.
        optimal_value: ``f*``, or ``None`` to summarize the final ``best_f``.
        timings: optional method -> wall seconds; stored as the row's ``wall_s``.
    """
    rows = summarize(final_values(histories, optimal_value))
    if timings:
        for row in rows:
            if row["method"] in timings:
                row["wall_s"] = float(timings[row["method"]])
    return rows


def _fmt(value, floatfmt: str) -> str:
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return format(float(value), floatfmt)
    return "" if value is None else str(value)


def format_table(rows: Sequence[Mapping[str, Any]], columns: Optional[Sequence[str]] = None,
                 floatfmt: str = ".4g") -> str:
    """A Markdown (and plain-text readable) table of ``rows``.

    Args:
        rows: dicts, e.g. from :func:`summarize`.
        columns: column order; default: the keys of all rows in first-seen order.
        floatfmt: format spec for floats (default ``".4g"``).

    Returns:
        The table as a string (header, separator, one line per row; no trailing newline).
        Missing entries are left blank.

    Raises:
        ValueError: ``rows`` is empty.
    """
    if not rows:
        raise ValueError("rows is empty")
    if columns is None:
        columns = []
        for row in rows:
            columns.extend(k for k in row if k not in columns)
    cells = [[_fmt(row.get(c), floatfmt) for c in columns] for row in rows]
    widths = [max(len(str(c)), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    numeric = [all(_is_number(row.get(c)) for row in rows if row.get(c) is not None) for c in columns]

    def line(values):
        parts = [v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)]
        return "| " + " | ".join(parts) + " |"

    sep = "|" + "|".join(("-" * (w + 1) + ":") if num else ("-" * (w + 2)) for w, num in zip(widths, numeric)) + "|"
    return "\n".join([line([str(c) for c in columns]), sep, *(line(r) for r in cells)])


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


# --------------------------------------------------------------------------- statistics
def _sample(x, name: str, minimum: int) -> np.ndarray:
    v = np.asarray(x, dtype=np.float64).reshape(-1)
    if v.size < minimum:
        raise ValueError(f"{name} needs at least {minimum} values, got {v.size}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} contains NaN/inf values; drop them first")
    return v


def ks_normality(x) -> float:
    """Kolmogorov-Smirnov normality test (thesis statistics): p-value of ``kstest`` of the
    standardized sample ``(x - mean) / std`` (``std`` with ``ddof=1``) against ``N(0, 1)``.

    Standardizing with estimated parameters makes the plain KS test conservative (the
    Lilliefors situation); this is the test as the thesis reports it.

    Args:
        x: sample, any shape (flattened), at least 3 finite values, not all equal.

    Returns:
        The two-sided p-value (float in [0, 1]); small values reject normality.

    Raises:
        ValueError: fewer than 3 values, NaN/inf, or zero standard deviation.
    """
    from scipy import stats

    v = _sample(x, "x", 3)
    std = float(np.std(v, ddof=1))
    if not std > 0:
        raise ValueError("x has zero standard deviation; normality cannot be tested")
    return float(stats.kstest((v - v.mean()) / std, "norm").pvalue)


def welch_one_sided(baseline, method) -> float:
    """One-sided Welch t-test, H0: ``mean(baseline) <= mean(method)``.

    With regret (lower is better), a small p-value is evidence that ``method`` has lower
    mean regret than ``baseline``. Equals ``scipy.stats.ttest_ind(baseline, method,
    equal_var=False, alternative="greater").pvalue``.

    Args:
        baseline, method: samples (e.g. final regret per seed), each >= 2 finite values.

    Returns:
        The p-value (float in [0, 1]; ``nan`` when both samples have zero variance).

    Raises:
        ValueError: fewer than 2 values or NaN/inf in a sample.
    """
    from scipy import stats

    a = _sample(baseline, "baseline", 2)
    b = _sample(method, "method", 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(stats.ttest_ind(a, b, equal_var=False, alternative="greater").pvalue)


def benjamini_hochberg(pvalues, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Benjamini-Hochberg step-up procedure (false discovery rate ``alpha``).

    With the ``m`` p-values sorted ``p_(1) <= ... <= p_(m)``, let ``k`` be the largest rank
    with ``p_(k) <= k alpha / m``; the hypotheses of ranks ``1..k`` are rejected. Adjusted
    p-values: ``p~_(i) = min_{j >= i} min(1, m p_(j) / j)`` (as
    ``scipy.stats.false_discovery_control``).

    Args:
        pvalues: p-values in [0, 1], any shape (kept in the outputs).
        alpha: false discovery rate, in (0, 1).

    Returns:
        ``(rejected, adjusted)``: bool array and float array, both shaped like ``pvalues``.

    Raises:
        ValueError: empty input, a value outside [0, 1] or NaN, or ``alpha`` outside (0, 1).
    """
    p = np.asarray(pvalues, dtype=np.float64)
    if p.size == 0:
        raise ValueError("pvalues is empty")
    if not np.all((p >= 0) & (p <= 1)):
        raise ValueError(f"pvalues must lie in [0, 1] (no NaN), got {p.reshape(-1).tolist()}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    flat = p.reshape(-1)
    m = flat.size
    order = np.argsort(flat, kind="stable")
    p_sorted = flat[order]
    ranks = np.arange(1, m + 1)
    below = np.nonzero(p_sorted <= ranks * alpha / m)[0]
    rejected_sorted = np.zeros(m, bool)
    if below.size:
        rejected_sorted[: below[-1] + 1] = True
    adjusted_sorted = np.minimum.accumulate((p_sorted * m / ranks)[::-1])[::-1]
    adjusted_sorted = np.minimum(adjusted_sorted, 1.0)
    rejected = np.empty(m, bool)
    adjusted = np.empty(m, np.float64)
    rejected[order] = rejected_sorted
    adjusted[order] = adjusted_sorted
    return rejected.reshape(p.shape), adjusted.reshape(p.shape)


# --------------------------------------------------------------------------- plots
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


# --------------------------------------------------------------------------- result files
def _version(dist: str) -> Optional[str]:
    try:
        return _metadata.version(dist)
    except _metadata.PackageNotFoundError:
        return None


def environment_info() -> dict:
    """Versions (python, jax, jaxlib, flax, optax, numpy, scipy, matplotlib, nbo_jax),
    platform, JAX backend, device kind and count, and whether float64 is enabled."""
    import jax

    from . import __version__

    info = {
        "python": sys.version.split()[0],
        "jax": jax.__version__,
        "jaxlib": _version("jaxlib"),
        "flax": _version("flax"),
        "optax": _version("optax"),
        "numpy": np.__version__,
        "scipy": _version("scipy"),
        "matplotlib": _version("matplotlib"),
        "nbo_jax": __version__,
        "platform": platform.platform(),
        "machine": platform.machine(),
    }
    try:
        devices = jax.devices()
        info.update(backend=jax.default_backend(), device_kind=devices[0].device_kind, device_count=len(devices))
    except RuntimeError as err:  # no usable backend
        info.update(backend=None, device_kind=None, device_count=0, device_error=str(err))
    info["x64"] = bool(jax.config.jax_enable_x64)
    return info


def _key_data(keys) -> Optional[list]:
    if keys is None:
        return None
    import jax

    k = keys
    if hasattr(k, "dtype") and jax.dtypes.issubdtype(k.dtype, jax.dtypes.prng_key):
        k = jax.random.key_data(k)
    return np.asarray(k).tolist()


def _jsonable(obj):
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, pathlib.PurePath):
        return str(obj)
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if math.isfinite(f) else str(f)  # JSON has no NaN/inf
    if isinstance(obj, np.ndarray) or hasattr(obj, "__array__"):
        return _jsonable(np.asarray(obj).tolist())
    if obj is None or isinstance(obj, (str, int)):
        return obj
    return repr(obj)


def save_results(
    out_dir: PathLike,
    histories: Mapping[str, Any],
    config: Mapping[str, Any],
    *,
    optimal_value: Optional[float] = None,
    seed: Optional[int] = None,
    keys=None,
    timings: Optional[Mapping[str, Any]] = None,
) -> dict[str, pathlib.Path]:
    """Write a comparison's results to ``out_dir`` (created if needed; files overwritten).

    Files:
        - ``histories.npz``: for each method the arrays ``<method>__x (S, n, d)``,
          ``<method>__y (S, n)``, ``<method>__f (S, n)``, ``<method>__best_f (S, n)``,
          ``<method>__valid (S, n)`` exactly as given (dtypes kept).
        - ``config.json``: ``{"config": config, "environment": environment_info(),
          "seeds": {...}, "timings": timings, "metric": ..., "optimal_value": ...,
          "summary": rows, "methods": [...], "created": ISO time}``.
        - ``summary.md``: the summary table (:func:`summary_rows`, :func:`format_table`).

    Args:
        out_dir: output folder.
        histories: method name -> :class:`~nbo_jax.types.History` (vmapped, arrays with a
            leading seed axis) or a mapping with the same fields.
        config: JSON-serializable description of the run (numpy values are converted).
        optimal_value: ``f*`` for the regret summary; default ``config.get("optimal_value")``;
            when ``None`` the summary is of the final ``best_f``.
        seed: the integer seed; keys: the PRNG keys used (one per run; their raw key data
            is stored).
        timings: e.g. method -> wall seconds, or method -> {"compile_s", "run_s"}; the
            ``wall_s`` column of the summary is ``timings[method]`` when that is a number,
            or ``timings[method]["wall_s"]``.

    Returns:
        ``{"histories": path, "config": path, "summary": path}``.

    Raises:
        ValueError: no histories, an empty or non-string method name, or a method name with
            ``"__"`` (the npz key separator). TypeError: a history without the fields.
    """
    if not histories:
        raise ValueError("histories is empty: pass {method: History}")
    out = pathlib.Path(out_dir)
    arrays = {}
    for method, hist in histories.items():
        if not isinstance(method, str) or not method or "__" in method:
            raise ValueError(f"method names must be non-empty strings without '__', got {method!r}")
        for name, value in history_to_numpy(hist).items():
            arrays[f"{method}__{name}"] = value
        if isinstance(hist, Mapping):  # already converted: keep its per-step diagnostics
            for name, value in hist.items():
                if str(name).startswith("info."):
                    arrays[f"{method}__{name}"] = np.asarray(value)
    if optimal_value is None:
        optimal_value = config.get("optimal_value")
    wall = {}
    for method, t in (timings or {}).items():
        if isinstance(t, Mapping):
            if "wall_s" in t:
                wall[method] = float(t["wall_s"])
        elif t is not None:
            wall[method] = float(t)
    rows = summary_rows(histories, optimal_value, wall)
    n_evals = {m: int(np.shape(_field(h, "best_f"))[-1]) for m, h in histories.items()}
    metric = "final " + metric_curves(histories, optimal_value)[1]

    out.mkdir(parents=True, exist_ok=True)
    paths = {"histories": out / "histories.npz", "config": out / "config.json", "summary": out / "summary.md"}
    np.savez_compressed(paths["histories"], **arrays)
    key_data = _key_data(keys)
    record = {
        "config": dict(config),
        "methods": list(histories),
        "optimal_value": optimal_value,
        "metric": metric,
        "n_evaluations": n_evals,
        "seeds": {
            "seed": seed,
            "n_seeds": len(key_data) if key_data is not None else None,
            "derivation": "jax.random.split(jax.random.key(seed), n_seeds); run i uses key i",
            "key_data": key_data,
        },
        "timings": dict(timings) if timings else None,
        "summary": rows,
        "environment": environment_info(),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    paths["config"].write_text(json.dumps(_jsonable(record), indent=2) + "\n")
    lines = [
        "# nbo_jax results",
        "",
        f"Metric: {metric}, over seeds (median, 25%/75% quantiles, IQR, mean);"
        + (" wall_s: wall-clock seconds per method." if wall else ""),
        "",
        format_table(rows),
        "",
        "Config: " + ", ".join(f"{k}={_jsonable(v)}" for k, v in config.items()),
        "",
    ]
    paths["summary"].write_text("\n".join(lines))
    return paths


def load_results(out_dir: PathLike) -> tuple[dict[str, dict[str, np.ndarray]], dict]:
    """Read what :func:`save_results` wrote.

    Args:
        out_dir: the results folder.

    Returns:
        ``(histories, record)``: ``histories[method][field]`` numpy arrays (fields
        ``x, y, f, best_f, valid``), methods in saved order; ``record`` the parsed
        ``config.json`` (its ``"config"`` entry is the config that was given), or ``{}``
        when there is no ``config.json``.

    Raises:
        FileNotFoundError: ``out_dir`` has no ``histories.npz``.
        ValueError: the file holds no ``<method>__<field>`` arrays.
    """
    out = pathlib.Path(out_dir)
    npz = out / "histories.npz"
    if not npz.is_file():
        raise FileNotFoundError(f"no results in {str(out)!r}: {npz.name} not found (write them with save_results)")
    histories: dict[str, dict[str, np.ndarray]] = {}
    with np.load(npz, allow_pickle=False) as data:
        for key in data.files:
            method, sep, field = key.rpartition("__")
            if not sep or not method:
                continue
            histories.setdefault(method, {})[field] = data[key]
    if not histories:
        raise ValueError(f"{npz} holds no '<method>__<field>' arrays")
    cfg_path = out / "config.json"
    record = json.loads(cfg_path.read_text()) if cfg_path.is_file() else {}
    order = [m for m in record.get("methods", []) if m in histories]
    order += [m for m in histories if m not in order]
    return {m: histories[m] for m in order}, record


def history_to_numpy(history) -> dict[str, np.ndarray]:
    """The fields of a :class:`~nbo_jax.types.History` as numpy arrays (host copy); the
    constraint fields are included when present, and each per-step diagnostic of
    ``History.info`` as ``"info.<name>"``."""
    out = {name: _field(history, name) for name in HISTORY_FIELDS}
    for name in CONSTRAINED_FIELDS:
        value = _get(history, name)
        if value is not None:
            out[name] = value
    info = history.get("info") if isinstance(history, Mapping) else getattr(history, "info", None)
    for name, value in (info or {}).items():
        out[f"info.{name}"] = np.asarray(value)
    return out


# --------------------------------------------------------------------------- comparisons
def compare(problem, algorithms, **kwargs):
    """Run several algorithms on one problem with shared seeds and compute the thesis'
    statistics (Tables 3.1 / 3.2). See :func:`nbo_jax.comparison.compare` for the arguments;
    returns a :class:`nbo_jax.comparison.ComparisonResult`."""
    from .comparison import compare as _compare

    return _compare(problem, algorithms, **kwargs)
