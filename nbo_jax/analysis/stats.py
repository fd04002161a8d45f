"""The statistics of the thesis' comparisons (Phan-Trong 2024 (PhD thesis), Section 3.5.2,
Tables 3.1 and 3.2; Section 4.3, Table 4.2).

- :func:`ks_normality`: Kolmogorov-Smirnov normality test of a method's final values;
- :func:`welch_one_sided`: one-sided Welch t-test, H0 ``mean_baseline <= mean_method``;
- :func:`benjamini_hochberg`: the Benjamini-Hochberg correction over several tests;
- :func:`statistics`: all three on the final values of several methods against a reference.

Samples are host arrays (any shape, flattened); smaller values are better (regret).
"""

from __future__ import annotations

import warnings
from typing import Mapping

import numpy as np


def _sample(x, name: str, minimum: int) -> np.ndarray:
    v = np.asarray(x, dtype=np.float64).reshape(-1)
    if v.size < minimum:
        raise ValueError(f"{name} needs at least {minimum} values, got {v.size}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} contains NaN/inf values; drop them first")
    return v


def ks_normality(x) -> float:
    """Kolmogorov-Smirnov normality test as the thesis reports it (Phan-Trong 2024 (PhD
    thesis), Section 3.5.2, Table 3.1): p-value of ``scipy.stats.kstest`` of the standardized
    sample ``(x - mean) / std`` (``std`` with ``ddof=1``) against ``N(0, 1)``.

    Standardizing with estimated parameters makes the plain KS test conservative (the
    Lilliefors situation).

    Args:
        x: sample, any shape (flattened), at least 3 finite values, not all equal.

    Returns:
        The two-sided p-value (Python float in [0, 1]); small values reject normality.

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
    """One-sided Welch t-test, H0: ``mean(baseline) <= mean(method)`` (Phan-Trong 2024 (PhD
    thesis), Section 3.5.2, Table 3.2).

    With regret (lower is better), a small p-value is evidence that ``method`` has lower
    mean regret than ``baseline``. Equals ``scipy.stats.ttest_ind(baseline, method,
    equal_var=False, alternative="greater").pvalue``.

    Args:
        baseline: the baseline's samples (e.g. final regret per seed, shape ``(S,)``; any
            shape is flattened), >= 2 finite values.
        method: the method's samples, as ``baseline``.

    Returns:
        The p-value (Python float in [0, 1]; ``nan`` when both samples have zero variance).

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
    """Benjamini-Hochberg step-up procedure (false discovery rate ``alpha``; Benjamini and
    Hochberg 1995, as used in Phan-Trong 2024 (PhD thesis), Section 3.5.2).

    With the ``m`` p-values sorted ``p_(1) <= ... <= p_(m)``, let ``k`` be the largest rank
    with ``p_(k) <= k alpha / m``; the hypotheses of ranks ``1..k`` are rejected. Adjusted
    p-values: ``p~_(i) = min_{j >= i} min(1, m p_(j) / j)`` (as
    ``scipy.stats.false_discovery_control``).

    Args:
        pvalues: p-values in [0, 1], any shape (kept in the outputs).
        alpha: false discovery rate, in (0, 1).

    Returns:
        ``(rejected, adjusted)``: bool array and float64 array, both shaped like ``pvalues``.

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


def statistics(final: Mapping[str, np.ndarray], reference: str, alpha: float = 0.05) -> tuple[dict, dict]:
    """The thesis' statistics on final values, smaller is better (Phan-Trong 2024 (PhD thesis),
    Section 3.5.2: Table 3.1 KS normality, Table 3.2 one-sided Welch t-tests with the
    Benjamini-Hochberg decision over the baselines).

    Args:
        final: method -> ``(S,)`` final values, ``S >= 3`` finite values each.
        reference: the method tested against (must be in ``final``).
        alpha: Benjamini-Hochberg level.

    Returns:
        ``(ks, welch)``: ``ks[method]`` KS p-value (float); ``welch[baseline] = {"p": float,
        "p_bh": float, "reject": bool}`` for every method except ``reference``.

    A test that is undefined for the data (constant samples, e.g. every seed at regret 0, or
    non-finite values) gives ``nan`` and never rejects.

    Raises:
        ValueError: ``reference`` missing, or ``alpha`` outside (0, 1).
    """
    if reference not in final:
        raise ValueError(f"reference {reference!r} is not among the methods {sorted(final)}")
    ks = {m: _or_nan(ks_normality, v) for m, v in final.items()}
    baselines = [m for m in final if m != reference]
    p = np.array([_or_nan(welch_one_sided, final[b], final[reference]) for b in baselines])
    welch = {}
    if baselines:
        # an undefined test (zero variances, non-finite values) can never reject
        reject, adjusted = benjamini_hochberg(np.where(np.isnan(p), 1.0, p), alpha)
        for b, pi, pa, r in zip(baselines, p, adjusted, reject):
            welch[b] = {"p": float(pi), "p_bh": float(pa) if np.isfinite(pi) else float("nan"),
                        "reject": bool(r) and bool(np.isfinite(pi))}
    return ks, welch


def _or_nan(test, *samples) -> float:
    """A test's p-value, or NaN where it is undefined (constant or non-finite samples)."""
    try:
        return float(test(*samples))
    except ValueError:
        return float("nan")
