"""Comparisons of several algorithms on one problem, with the thesis' statistics.

:func:`compare` runs every algorithm on the same seeds (so on the same initial points:
``run_bo`` draws them from the key), vmapped over seeds, and computes

- Table 3.1 of the thesis (seed 004, Section 3.4): the Kolmogorov-Smirnov normality p-value of
  each method's final values over the seeds;
- Table 3.2: for each baseline, the one-sided Welch t-test p-value of
  ``H0: mean_baseline <= mean_reference`` against ``Ha: mean_baseline > mean_reference`` on the
  final values, and the Benjamini-Hochberg decision at level ``alpha`` over the baselines of
  the row ("T" = H0 rejected: the reference method is significantly better).

The final value is the simple regret ``min_s f(x_s) - f*`` after the last evaluation (or the
best ``f`` itself when ``f*`` is unknown); smaller is better. For a constrained problem it is
``log10`` of the best positive regret plus violation (thesis Section 4.3, Table 4.2 and
Figure 4.1), floored at ``LOG_FLOOR`` so that a seed that reaches 0 stays finite.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import pathlib
import time
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from . import analysis
from .types import BOAlgorithm, Problem

LOG_FLOOR = 1e-12


@dataclasses.dataclass
class ComparisonResult:
    """What :func:`compare` returns.

    Attributes:
        problem: the problem's name; dim: its dimension; optimal_value: ``f*`` or None.
        histories: method -> dict of numpy arrays ``x (S, n, d)``, ``y``, ``f``, ``best_f``,
            ``valid`` (``S`` seeds, ``n`` evaluations).
        final: method -> ``(S,)`` final simple regret (or final best f).
        ks: method -> KS normality p-value (Table 3.1).
        welch: baseline -> ``{"p": ..., "p_bh": ..., "reject": bool}`` (Table 3.2).
        reference: the method the baselines are tested against.
        timings: method -> ``{"compile_s", "run_s"}``.
        n_init, n_evaluations: per seed.
        metric: what ``final`` holds (e.g. ``"simple regret"`` or
            ``"log10 best positive regret plus violation"``).
    """

    problem: str
    dim: int
    optimal_value: Optional[float]
    histories: dict
    final: dict
    ks: dict
    welch: dict
    reference: str
    timings: dict
    n_init: int
    n_evaluations: int
    metric: str = "simple regret"


def statistics(final: Mapping[str, np.ndarray], reference: str, alpha: float = 0.05) -> tuple[dict, dict]:
    """The thesis' statistics on final values (smaller is better).

    Args:
        final: method -> ``(S,)`` final values, ``S >= 3`` finite values each.
        reference: the method tested against (must be in ``final``).
        alpha: Benjamini-Hochberg level.

    Returns:
        ``(ks, welch)``: ``ks[method]`` KS p-value; ``welch[baseline] = {"p", "p_bh",
        "reject"}`` for every method except ``reference``.

    A test that is undefined for the data (constant samples, e.g. every seed at regret 0, or
    non-finite values) gives ``nan`` and never rejects.

    Raises:
        ValueError: ``reference`` missing.
    """
    if reference not in final:
        raise ValueError(f"reference {reference!r} is not among the methods {sorted(final)}")
    ks = {m: _or_nan(analysis.ks_normality, v) for m, v in final.items()}
    baselines = [m for m in final if m != reference]
    p = np.array([_or_nan(analysis.welch_one_sided, final[b], final[reference]) for b in baselines])
    welch = {}
    if baselines:
        # an undefined test (zero variances, non-finite values) can never reject
        reject, adjusted = analysis.benjamini_hochberg(np.where(np.isnan(p), 1.0, p), alpha)
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


def compare(
    problem: Problem,
    algorithms: Mapping[str, BOAlgorithm],
    *,
    n_init: int,
    n_iter: int,
    seeds: int,
    seed: int = 0,
    reference: Optional[str] = None,
    alpha: float = 0.05,
    progress: bool = True,
    verbose: bool = True,
) -> ComparisonResult:
    """Run ``algorithms`` on ``problem`` over ``seeds`` seeds and compute Tables 3.1/3.2.

    Every method gets the keys ``split(key(seed), seeds)``, hence the same initial design per
    seed, and is run with ``jax.vmap`` over the keys (one compilation per method). A batch
    algorithm (``batch_size = q > 1``) gets ``ceil(n_iter / q)`` iterations so that every
    method has at least ``n_init + n_iter`` evaluations; all are cut to the same length.

    Args:
        problem: the problem (minimized).
        algorithms: name -> :class:`BOAlgorithm` (names label tables and plots).
        n_init, n_iter: initial points and evaluations after them, per seed.
        seeds: number of seeds ``S`` (>= 3 for the statistics).
        seed: base seed.
        reference: method the baselines are tested against (default: the first one).
        alpha: Benjamini-Hochberg level.
        progress: tqdm bars per method; verbose: print a line per method.

    Returns:
        :class:`ComparisonResult`.

    Raises:
        ValueError / TypeError: empty ``algorithms``, an unknown ``reference``, ``seeds < 3``,
        or the errors of :func:`nbo_jax.run_bo` (raised before anything runs).
    """
    import jax

    from .loop import _check_algorithm, _check_count, _check_pair, _check_problem, run_bo

    if not algorithms:
        raise ValueError("algorithms must name at least one method")
    for name, algo in algorithms.items():
        if "__" in name:
            raise ValueError(f"algorithm name {name!r} may not contain '__'")
        _check_algorithm(algo)
    _check_problem(problem)
    for algo in algorithms.values():
        _check_pair(algo, problem)
    n_init = _check_count("n_init", n_init, 1)
    n_iter = _check_count("n_iter", n_iter, 0)
    seeds = _check_count("seeds", seeds, 3)
    reference = reference or next(iter(algorithms))
    if reference not in algorithms:
        raise ValueError(f"reference {reference!r} is not among the algorithms {sorted(algorithms)}")

    keys = jax.random.split(jax.random.key(seed), seeds)
    n_total = n_init + n_iter
    histories, timings = {}, {}
    for name, algo in algorithms.items():
        q = algo.batch_size
        iters = -(-n_iter // q)
        if verbose:
            print(f"running {name} on {problem.name} (d={problem.dim}) x {seeds} seeds "
                  f"({n_init} initial + {iters * q} evaluations)", flush=True)

        def one(key, algo=algo, iters=iters):
            return run_bo(key, algo, problem, n_init=n_init, n_iter=iters, progress=progress)

        t0 = time.perf_counter()
        compiled = jax.jit(jax.vmap(one)).lower(keys).compile()
        t1 = time.perf_counter()
        hist = jax.block_until_ready(compiled(keys))
        t2 = time.perf_counter()
        arrays = analysis.history_to_numpy(hist)
        histories[name] = {k: v[:, :n_total] for k, v in arrays.items()}
        timings[name] = {"compile_s": t1 - t0, "run_s": t2 - t1}
        if verbose:
            print(f"  {name}: compile {t1 - t0:.1f} s, run {t2 - t1:.1f} s", flush=True)

    fstar = problem.optimal_value
    final = analysis.final_values(histories, fstar)
    metric = analysis.metric_curves(histories, fstar)[1]
    if problem.constraints is not None and fstar is not None:
        final = {m: np.log10(np.maximum(v, LOG_FLOOR)) for m, v in final.items()}
        metric = "log10 " + metric
    ks, welch = statistics(final, reference, alpha) if seeds >= 3 else ({}, {})
    return ComparisonResult(problem.name, problem.dim, fstar, histories, final, ks, welch, reference,
                            timings, n_init, n_total, metric)


# --------------------------------------------------------------------------- tables
def _p(p: float) -> str:
    return f"{p:.3g}" if math.isfinite(p) else "nan"


def ks_table(results: Sequence[ComparisonResult]) -> tuple[list[str], list[list[str]]]:
    """Table 3.1: one row per (problem, d), one column per method: the KS p-value."""
    methods = _methods(results)
    rows = [[r.problem, str(r.dim)] + [_p(r.ks[m]) if m in r.ks else "" for m in methods] for r in results]
    return ["problem", "d"] + methods, rows


def welch_table(results: Sequence[ComparisonResult]) -> tuple[list[str], list[list[str]]]:
    """Table 3.2: one row per (problem, d), one column per baseline: ``(p, T|F)`` with the
    raw one-sided Welch p-value and the Benjamini-Hochberg decision."""
    baselines = [m for m in _methods(results) if all(m != r.reference for r in results)]
    rows = []
    for r in results:
        cells = []
        for b in baselines:
            w = r.welch.get(b)
            cells.append(f"({_p(w['p'])}, {'T' if w['reject'] else 'F'})" if w else "")
        rows.append([r.problem, str(r.dim)] + cells)
    return ["problem", "d"] + baselines, rows


def summary_table(results: Sequence[ComparisonResult]) -> tuple[list[str], list[list[str]]]:
    """Median [q25, q75] of the final metric (``result.metric``) per (problem, d) and method."""
    methods = _methods(results)
    rows = []
    for r in results:
        cells = []
        for m in methods:
            v = r.final.get(m)
            if v is None:
                cells.append("")
                continue
            q25, med, q75 = np.quantile(v, [0.25, 0.5, 0.75])
            cells.append(f"{med:.3g} [{q25:.3g}, {q75:.3g}]")
        rows.append([r.problem, str(r.dim)] + cells)
    return ["problem", "d"] + methods, rows


def _methods(results) -> list[str]:
    seen = []
    for r in results:
        for m in r.final:
            if m not in seen:
                seen.append(m)
    return seen


def markdown(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def write_tables(results: Sequence[ComparisonResult], out_dir, *, reference: Optional[str] = None) -> dict:
    """Write ``table_summary.md``, ``table_ks.md``/``.csv`` and ``table_welch.md``/``.csv``
    (the Welch CSV has numeric columns ``p``, ``p_bh``, ``reject``); return their paths."""
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ref = reference or (results[0].reference if results else "")
    paths = {}
    metric = " / ".join(sorted({r.metric for r in results})) or "simple regret"
    constrained = "violation" in metric
    captions = {
        "ks": f"Table 3.1 analogue: Kolmogorov-Smirnov normality p-values of the final {metric}.",
        "welch": f"Table {'4.2' if constrained else '3.2'} analogue: one-sided Welch t-tests on the final "
                 f"{metric}, H0: mean_baseline <= mean_{ref}; "
                 "cell = (p-value, Benjamini-Hochberg decision at 0.05; T = H0 rejected).",
        "summary": f"Final {metric}: median [25%, 75%] over seeds.",
    }
    for name, fn in (("summary", summary_table), ("ks", ks_table), ("welch", welch_table)):
        header, rows = fn(results)
        md = out / f"table_{name}.md"
        md.write_text(captions[name] + "\n\n" + markdown(header, rows) + "\n")
        paths[f"{name}_md"] = md
    welch_rows = [[r.problem, r.dim, r.reference, b, v["p"], v["p_bh"], v["reject"]]
                  for r in results for b, v in r.welch.items()]
    paths["welch_csv"] = _write_csv(out / "table_welch.csv",
                                    ["problem", "d", "reference", "baseline", "p", "p_bh", "reject"], welch_rows)
    ks_rows = [[r.problem, r.dim, m, r.ks.get(m, float("nan")), *np.quantile(v, [0.5, 0.25, 0.75])]
               for r in results for m, v in r.final.items()]
    paths["ks_csv"] = _write_csv(out / "table_ks.csv", ["problem", "d", "method", "ks_p", "median", "q25", "q75"],
                                 ks_rows)
    return paths


def _write_csv(path: pathlib.Path, header: Sequence[str], rows) -> pathlib.Path:
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def save(result: ComparisonResult, out_dir, config: Optional[dict] = None, *, title: Optional[str] = None) -> dict:
    """Histories (``histories.npz``, ``config.json``, ``summary.md`` via
    :func:`nbo_jax.analysis.save_results`), the regret plot ``regret.png`` and the tables."""
    out = pathlib.Path(out_dir)
    cfg = dict(config or {})
    cfg.update(problem=result.problem, dim=result.dim, reference=result.reference, n_init=result.n_init,
               n_evaluations=result.n_evaluations)
    paths = analysis.save_results(out, result.histories, cfg, optimal_value=result.optimal_value,
                                  timings=result.timings)
    curves, label = analysis.metric_curves(result.histories, result.optimal_value)
    paths["plot"] = analysis.plot_regret(
        curves, out / "regret.png", title=title or f"{result.problem} (d={result.dim})", n_init=result.n_init,
        ylabel=label)
    paths.update(write_tables([result], out))
    return paths
