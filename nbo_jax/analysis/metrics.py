"""Regret metrics of BO runs and their per-method summaries (host numpy arrays).

All metrics are computed on the noise-free values ``f(x_t)`` of a minimization problem with
the known optimum ``f*``:

- simple regret ``r_t = min_{s<=t} f(x_s) - f*`` (:func:`simple_regret`; Phan-Trong 2024
  (PhD thesis), Section 2.3.6.1, written there for maximization);
- cumulative regret ``R_t = sum_{s<=t} (f(x_s) - f*)`` (:func:`cumulative_regret`; thesis
  Section 2.3.6.2);
- for constrained problems, the best positive regret plus violation
  ``min_{s<=t} ([f(x_s) - f*]^+ + sum_k [c_k(x_s)]^+)`` (:func:`regret_plus_violation`;
  thesis Section 4.3, Figure 4.1), which :func:`metric_curves` and :func:`final_values` use
  whenever a history carries constraint values;
- for ``m >= 2`` objectives (a history with a ``hypervolume`` field), the log hypervolume
  difference ``log10(HV* - HV_t)`` to the true front's hypervolume ``HV*``
  (:func:`hypervolume_regret`; Daulton, Balandat & Bakshy 2020, Section 6).

Shapes use ``S`` for the number of seeds and ``n`` for the number of evaluations
(``n_init + n_iter``). JAX arrays are accepted and converted with ``np.asarray``.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional

import numpy as np

SUMMARY_COLUMNS = ("method", "n", "median", "q25", "q75", "iqr", "mean")
LOG_FLOOR = 1e-12
HYPERVOLUME_REGRET = "log10 hypervolume difference (max hypervolume - hypervolume)"
"""The smallest difference a log10 metric takes (a seed that reaches 0 stays finite)."""


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


def field(history, name: str) -> np.ndarray:
    """The field ``name`` of a :class:`~nbo_jax.types.History` or of a mapping of arrays
    (as :func:`nbo_jax.analysis.load_results` returns), as a numpy array.

    Raises:
        ValueError: a mapping without ``name``. TypeError: an object without the attribute.
    """
    if isinstance(history, Mapping):
        if name not in history:
            raise ValueError(f"history is missing the field {name!r} (has {sorted(history)})")
        return np.asarray(history[name])
    if not hasattr(history, name):
        raise TypeError(f"history must be an nbo_jax.History or a mapping with {name!r}, got {type(history).__name__}")
    return np.asarray(getattr(history, name))


def optional_field(history, name: str) -> Optional[np.ndarray]:
    """The field ``name`` of a History or mapping as a numpy array, or ``None`` when absent."""
    value = history.get(name) if isinstance(history, Mapping) else getattr(history, name, None)
    return None if value is None else np.asarray(value)


def simple_regret(best_f, optimal_value: float) -> np.ndarray:
    """Simple regret ``r_t = best_f_t - f*`` (Phan-Trong 2024 (PhD thesis), Section 2.3.6.1).

    Args:
        best_f: running minimum of the noise-free objective, shape ``(..., n)`` (any shape;
            ``History.best_f``, e.g. ``(S, n)`` for vmapped runs). Units of ``f``.
        optimal_value: the known global minimum ``f*`` (``problem.optimal_value``).

    Returns:
        float64 numpy array of the same shape as ``best_f`` (``inf`` where no finite value
        was observed yet).

    Raises:
        ValueError: ``optimal_value`` is ``None`` or not finite. TypeError: not a number.
    """
    fstar = _check_optimal_value(optimal_value)
    return np.asarray(best_f, dtype=np.float64) - fstar


def cumulative_regret(f, optimal_value: float) -> np.ndarray:
    """Cumulative regret ``R_t = sum_{s<=t} (f(x_s) - f*)`` along the last axis
    (Phan-Trong 2024 (PhD thesis), Section 2.3.6.2).

    Args:
        f: noise-free objective values ``(..., n)`` (``History.f``). Non-finite entries
            contribute 0 (as in :meth:`nbo_jax.History.cumulative_regret`).
        optimal_value: the known global minimum ``f*``.

    Returns:
        float64 numpy array of shape ``(..., n)``.

    Raises:
        ValueError: ``optimal_value`` is ``None``/not finite, or ``f`` is a scalar.
        TypeError: ``optimal_value`` is not a number.
    """
    fstar = _check_optimal_value(optimal_value)
    f = np.asarray(f, dtype=np.float64)
    if f.ndim == 0:
        raise ValueError("f must have at least one axis (evaluations on the last axis), got a scalar")
    inst = np.where(np.isfinite(f), f - fstar, 0.0)
    return np.cumsum(inst, axis=-1)


def regret_plus_violation(f, c_true, optimal_value: float) -> np.ndarray:
    """Best positive regret plus violation (Phan-Trong 2024 (PhD thesis), Section 4.3,
    Figure 4.1).

    Args:
        f: noise-free objective values ``(..., n)`` (``History.f``).
        c_true: noise-free constraint values ``(..., n, K)`` (``History.c_true``), ``c <= 0``
            feasible.
        optimal_value: ``f*``, the best feasible value.

    Returns:
        ``(..., n)`` float64 array ``min_{s<=t} ([f_s - f*]^+ + sum_k [c_{k,s}]^+)`` (the sum
        is taken at one point, then the running minimum); non-finite terms count as ``inf``.

    Raises:
        ValueError: ``optimal_value`` not finite, or shapes that disagree.
        TypeError: ``optimal_value`` is not a number.
    """
    fstar = _check_optimal_value(optimal_value)
    f = np.asarray(f, dtype=np.float64)
    c = np.asarray(c_true, dtype=np.float64)
    if c.shape[:-1] != f.shape:
        raise ValueError(f"c_true must have shape f.shape + (K,) = {f.shape} + (K,), got {c.shape}")
    inst = np.maximum(f - fstar, 0.0) + np.sum(np.maximum(c, 0.0), axis=-1)
    inst = np.where(np.isfinite(inst), inst, np.inf)
    return np.minimum.accumulate(inst, axis=-1)


def hypervolume_regret(hypervolume, max_hypervolume: float) -> np.ndarray:
    """Log hypervolume difference ``log10(max(HV* - HV_t, LOG_FLOOR))`` (Daulton, Balandat &
    Bakshy 2020, "Differentiable expected hypervolume improvement for parallel
    multi-objective Bayesian optimization", NeurIPS, Section 6; lower is better); the
    difference is floored at :data:`LOG_FLOOR` so that a seed reaching ``HV*`` stays finite.

    Args:
        hypervolume: dominated hypervolumes ``(..., n)`` (``History.hypervolume``), in the
            product of the objectives' units.
        max_hypervolume: ``HV*``, the true front's hypervolume against the same reference
            point (``problem.max_hypervolume``).

    Returns:
        float64 numpy array like ``hypervolume``.

    Raises:
        ValueError: ``max_hypervolume`` None or not finite. TypeError: not a number.
    """
    if max_hypervolume is None:
        raise ValueError("max_hypervolume is None: the hypervolume regret needs the true front's hypervolume")
    top = _check_optimal_value(max_hypervolume)
    return np.log10(np.maximum(top - np.asarray(hypervolume, dtype=np.float64), LOG_FLOOR))


def is_multi_objective(history) -> bool:
    """True when ``history`` (History or mapping) carries a ``hypervolume`` field that is not
    ``None`` (a run of ``m >= 2`` objectives with a reference point)."""
    return optional_field(history, "hypervolume") is not None


def is_constrained(history) -> bool:
    """True when ``history`` (History or mapping) carries noise-free constraint values
    (a ``c_true`` field that is not ``None``)."""
    return optional_field(history, "c_true") is not None


def metric_curves(histories: Mapping[str, Any], optimal_value: Optional[float], *,
                  max_hypervolume: Optional[float] = None) -> tuple[dict, str]:
    """Per-method curves of the run's metric and its label.

    - histories of ``m >= 2`` objectives (:func:`is_multi_objective`): the log hypervolume
      difference (:func:`hypervolume_regret`) when ``max_hypervolume`` is given, else the
      hypervolume itself (larger is better);
    - constrained histories (with ``c_true``) and a known ``f*``: best positive regret plus
      violation (:func:`regret_plus_violation`);
    - otherwise simple regret ``best_f - f*``, or ``best_f`` itself when ``f*`` is unknown
      (for a constrained history: the best *feasible* ``f``).

    Args:
        histories: method -> History or mapping of arrays, fields ``(S, n)`` or ``(n,)``
            (``c_true``: ``(S, n, K)``).
        optimal_value: ``f*``, or ``None`` when unknown.
        max_hypervolume: the true front's hypervolume for multi-objective histories, or
            ``None``.

    Returns:
        ``(curves, label)``: method -> ``(S, n)`` (or ``(n,)``) float64 arrays, and the
        labels of the metrics used, joined by ``" / "``.

    Raises:
        ValueError / TypeError: a history without the needed fields, or the errors of
        :func:`regret_plus_violation`.
    """
    curves, labels = {}, set()
    for method, hist in histories.items():
        if is_multi_objective(hist) and max_hypervolume is not None:
            curves[method] = hypervolume_regret(field(hist, "hypervolume"), max_hypervolume)
            labels.add(HYPERVOLUME_REGRET)
        elif is_multi_objective(hist):
            curves[method] = np.asarray(field(hist, "hypervolume"), dtype=np.float64)
            labels.add("hypervolume (maximum unknown; larger is better)")
        elif is_constrained(hist) and optimal_value is not None:
            curves[method] = regret_plus_violation(field(hist, "f"), field(hist, "c_true"), optimal_value)
            labels.add("best positive regret plus violation")
        elif is_constrained(hist):
            curves[method] = np.asarray(field(hist, "best_feasible_f"), dtype=np.float64)
            labels.add("best feasible f (optimal value unknown)")
        elif optimal_value is not None:
            curves[method] = simple_regret(field(hist, "best_f"), optimal_value)
            labels.add("simple regret (best f - f*)")
        else:
            curves[method] = np.asarray(field(hist, "best_f"), dtype=np.float64)
            labels.add("best f (optimal value unknown)")
    return curves, " / ".join(sorted(labels))


def final_values(histories: Mapping[str, Any], optimal_value: Optional[float] = None, *,
                 max_hypervolume: Optional[float] = None) -> dict[str, np.ndarray]:
    """Final value of the run's metric per seed for each method (:func:`metric_curves`):
    simple regret, the best positive regret plus violation for constrained runs, the log
    hypervolume difference for runs of several objectives (given ``max_hypervolume``).

    Args:
        histories: method name -> :class:`~nbo_jax.types.History` (or a mapping with a
            ``"best_f"`` array, as returned by :func:`nbo_jax.analysis.load_results`),
            ``best_f`` of shape ``(S, n)`` or ``(n,)`` for a single run.
        optimal_value: ``f*``; when ``None`` the final ``best_f`` itself is returned.
        max_hypervolume: the true front's hypervolume, for histories of several objectives.

    Returns:
        method -> ``(S,)`` float64 array: ``best_f[..., -1] - f*`` (or ``best_f[..., -1]``;
        for several objectives the final log hypervolume difference, or hypervolume).

    Raises:
        ValueError: a history with no evaluations (or the errors of :func:`metric_curves`).
    """
    out = {}
    curves, _ = metric_curves(histories, optimal_value, max_hypervolume=max_hypervolume)
    for method, curve in curves.items():
        if curve.ndim == 0 or curve.shape[-1] == 0:
            raise ValueError(f"{method}: the history has no evaluations (shape {curve.shape})")
        out[method] = np.atleast_1d(curve[..., -1]).reshape(-1)
    return out


def summarize(results: Mapping[str, Any]) -> list[dict]:
    """Per-method summary of a final metric (usually final simple regret), one row each.

    Args:
        results: method name -> values per seed, shape ``(S,)`` (any shape is flattened).

    Returns:
        A list of dicts (in the order of ``results``) with keys ``method``, ``n`` (number of
        finite values used), ``median``, ``q25``, ``q75`` (25% and 75% quantiles, numpy's
        default linear interpolation), ``iqr`` (``q75 - q25``) and ``mean`` (Python floats);
        plus ``n_nonfinite`` when some values were NaN/inf (they are left out). All
        statistics are ``nan`` when no value is finite.

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
    *,
    max_hypervolume: Optional[float] = None,
) -> list[dict]:
    """:func:`summarize` of :func:`final_values`, with ``wall_s`` added from ``timings``.

    Args:
        histories: method -> History (or mapping with ``best_f``), ``best_f (S, n)``.
        optimal_value: ``f*``, or ``None`` to summarize the final ``best_f``.
        timings: optional method -> wall seconds; stored as the row's ``wall_s``.
        max_hypervolume: for runs of several objectives (:func:`final_values`).

    Returns:
        The rows of :func:`summarize`, one per method.

    Raises:
        ValueError: no histories, or the errors of :func:`final_values`.
    """
    rows = summarize(final_values(histories, optimal_value, max_hypervolume=max_hypervolume))
    if timings:
        for row in rows:
            if row["method"] in timings:
                row["wall_s"] = float(timings[row["method"]])
    return rows
