"""Comparisons of several algorithms on one problem, with the statistics of Phan-Trong 2024
(PhD thesis).

:func:`compare` runs every algorithm on the same seeds (so on the same initial points:
``run_bo`` draws them from the key), vmapped over seeds (:func:`run_methods`, which the
``nbo-jax run`` command uses too), and computes

- Table 3.1 of Phan-Trong 2024 (PhD thesis), Section 3.5.2: the Kolmogorov-Smirnov normality
  p-value of each method's final values over the seeds;
- Table 3.2 (same section): for each baseline, the one-sided Welch t-test p-value of
  ``H0: mean_baseline <= mean_reference`` against ``Ha: mean_baseline > mean_reference`` on the
  final values, and the Benjamini-Hochberg decision at level ``alpha`` over the baselines of
  the row ("T" = H0 rejected: the reference method is significantly better).

The final value is the simple regret ``min_s f(x_s) - f*`` after the last evaluation (or the
best ``f`` itself when ``f*`` is unknown); smaller is better. A problem with its own metric
(:class:`~nbo_jax.types.TaskMetric`, ``problem.metric``: the best reward of robot pushing, the
best hierarchical F1 of document retrieval, a detection rate) is reported in that metric
instead, and the Welch tests then test its better direction (larger when
``higher_is_better``). For a constrained problem it is
``log10`` of the best positive regret plus violation (Phan-Trong 2024 (PhD thesis), Section
4.3, Table 4.2 and Figure 4.1), floored at ``LOG_FLOOR`` so that a seed that reaches 0 stays
finite. For a problem of ``m >= 2`` objectives it is the log hypervolume difference
``log10(HV* - HV)`` of the final front (Daulton, Balandat & Bakshy 2020, Section 6;
:func:`nbo_jax.analysis.hypervolume_regret`, floored likewise), lower is better, and
:func:`save` also draws each method's final front (``pareto.png``).
"""

from __future__ import annotations

import csv
import contextlib
import dataclasses
import logging
import math
import pathlib
import time
from functools import partial
from typing import Callable, Collection, Mapping, Optional, Sequence

import numpy as np

from . import analysis
from .analysis.metrics import LOG_FLOOR
from .analysis.stats import statistics
from .analysis.tables import markdown_table as markdown  # the one table renderer, under its old name here
from .types import BOAlgorithm, Problem

# a method whose projected run time exceeds this many seconds is announced (run_methods' long_run_s)
LONG_RUN_S = 600.0


class RunInterrupted(Exception):
    """Raised by :func:`run_methods` when its ``should_stop`` returned True: the run stopped at
    a step or method boundary.

    Attributes:
        histories: the methods that finished, as :func:`run_methods` returns them (whole).
        timings: their timings.
        interrupted: the method stopped during its run (its steps are lost: a compiled run
            returns nothing until its last step), or ``None`` when the stop came between methods.
        not_run: the methods that were not started.
    """

    def __init__(self, histories: dict, timings: dict, interrupted: Optional[str], not_run: list):
        self.histories, self.timings, self.interrupted, self.not_run = histories, timings, interrupted, not_run
        stopped = f"during {interrupted!r}" if interrupted else "between methods"
        super().__init__(f"run stopped {stopped}; finished: {sorted(histories)}, not run: {not_run}")


class _Stop(Exception):
    """Raised inside a step hook to end a compiled run at that step."""


class _StepHook:
    """The host-side step hook of one method in :func:`run_methods`: the progress bar, the
    projected run time (announced once when longer than ``long_run_s``) and the stop check.

    Called with the step index ``t`` (``0..n_iter-1``) after each step; runs whose seeds go in
    sequence call it ``runs`` times over (``t`` starts again at 0 for each seed)."""

    def __init__(self, name: str, n_iter: int, runs: int, *, progress: bool, should_stop, long_run_s,
                 verbose: bool, clock=time.perf_counter):
        self.name, self.n_iter, self.total = name, n_iter, max(1, n_iter * runs)
        self.progress, self.should_stop, self.long_run_s, self.verbose = progress, should_stop, long_run_s, verbose
        self.clock = clock
        self.start = clock()
        self.last, self.wraps, self.estimated = -1, 0, False
        self.projected_s: Optional[float] = None
        self.stopped = False

    def __call__(self, t) -> None:
        now = self.clock()
        if self.progress:
            from .loop import _tick

            _tick(t, self.n_iter)
        step = int(np.max(np.asarray(t)))
        if step < self.last:  # the next seed of a run in sequence
            self.wraps += 1
        self.last = step
        done = self.wraps * self.n_iter + step + 1
        elapsed = now - self.start
        if not self.estimated and (done >= 3 or elapsed >= 2.0 or done >= self.total):
            self.estimated = True
            self.projected_s = elapsed / done * self.total
            if self.verbose and self.long_run_s is not None and self.projected_s > self.long_run_s:
                print(f"\n  {self.name}: this run is projected to take about {_duration(self.projected_s)} "
                      f"({elapsed / done:.3g} s per step from its first {done} of {self.total} steps). For a "
                      "shorter run: fewer iterations or seeds, a smaller network (width, candidates, epochs), or "
                      "segments of growing capacity (segments=; --segments in nbo-jax); Ctrl-C in nbo-jax stops "
                      "at the next step and writes the finished methods.", flush=True)
        if done < self.total and self.should_stop is not None and self.should_stop():  # the last step finishes
            self.stopped = True
            raise _Stop(f"{self.name}: stopped at step {step + 1} of {self.n_iter}")


def _duration(seconds: float) -> str:
    """``3725.0`` -> ``"1.0 h"``; ``90`` -> ``"1.5 min"``; ``12`` -> ``"12 s"``."""
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.0f} s"


@dataclasses.dataclass
class ComparisonResult:
    """What :func:`compare` returns.

    Attributes:
        problem: the problem's name; dim: its dimension; optimal_value: ``f*`` or None.
        histories: method -> dict of numpy arrays ``x (S, n, d)``, ``y``, ``f``, ``best_f``,
            ``valid`` (``S`` seeds, ``n`` evaluations).
        final: method -> ``(S,)`` final simple regret (or final best f).
        ks: method -> KS normality p-value (thesis Table 3.1).
        welch: baseline -> ``{"p": ..., "p_bh": ..., "reject": bool}`` (thesis Table 3.2).
        reference: the method the baselines are tested against.
        timings: method -> ``{"compile_s", "run_s", "wall_s"}`` seconds (:func:`run_methods`).
        n_init, n_evaluations: per seed.
        metric: what ``final`` holds (e.g. ``"simple regret"`` or
            ``"log10 best positive regret plus violation"``, or a task's own label).
        higher_is_better: direction of ``final`` (True for a task metric such as a reward);
            the Welch tests test that direction.
        curves: method -> ``(S, n)`` curves of a task metric for plots (``None``: the
            simple-regret curves of :func:`nbo_jax.analysis.metric_curves`).
        n_objectives: ``m``; with ``m >= 2`` also ``reference_point`` ``(m,)``,
            ``max_hypervolume`` (``None`` when unknown) and ``true_front`` ``(k, m)`` (the
            sampled front of :func:`nbo_jax.analysis.sampled_front`, or ``None``).
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
    higher_is_better: bool = False
    curves: Optional[dict] = None
    n_objectives: int = 1
    reference_point: Optional[tuple] = None
    max_hypervolume: Optional[float] = None
    true_front: Optional[np.ndarray] = None


def run_methods(
    problem: Problem,
    algorithms: Mapping[str, BOAlgorithm],
    keys,
    *,
    n_init: int,
    n_iter: int,
    segments: int = 1,
    progress: bool = True,
    verbose: bool = True,
    vmap_seeds: bool | Collection[str] = True,
    should_stop: Optional[Callable[[], bool]] = None,
    long_run_s: Optional[float] = LONG_RUN_S,
) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict[str, float]]]:
    """Run each algorithm on ``problem`` for every key and time compilation and run apart.

    The one timing loop of nbo_jax: :func:`compare` and the ``nbo-jax run`` command use it.
    Every method gets the same keys, hence the same initial design per seed, and is run with
    ``jax.jit(jax.vmap(run_bo))`` compiled ahead of time (``lower(keys).compile()``), so the
    compile time is not counted in the run time; a method left out of ``vmap_seeds`` runs its
    seeds one after another in the same single compiled program (``jax.lax.map``). A batch
    algorithm (``q = BOAlgorithm.q > 1`` points per iteration) gets ``ceil(n_iter / q)`` iterations so that it has at least
    ``n_init + n_iter`` evaluations; every history is cut to that length.

    Args:
        problem: the problem (minimized).
        algorithms: name -> :class:`BOAlgorithm` (names without ``"__"``, the separator of
            :func:`nbo_jax.analysis.save_results`).
        keys: ``(S,)`` PRNG keys, one per seed (e.g. ``jax.random.split(jax.random.key(seed), S)``).
        n_init: initial points per seed.
        n_iter: evaluations after them, per seed.
        segments: :func:`nbo_jax.run_bo`'s ``segments`` (compiled parts of growing
            capacity, so that the cost follows the data; the results are the same).
        progress: tqdm bars per method; verbose: print a line per method before and after
            its run (seconds, and the number of NaN/inf observations).
        vmap_seeds: ``True`` (all methods), ``False`` (none) or the names of the methods whose
            seeds run batched by ``jax.vmap``; the others run them in sequence with
            ``jax.lax.map``. Batching pays for a neural surrogate; a GP's seeds, whose fits and
            climbs stop at different iterations (a batched while-loop waits for the slowest),
            can run faster in sequence on a CPU (GP-UCB on Ackley-10, 10 seeds of 10 + 200, one
            core: 697 s vmapped, 137 s in sequence). The results agree in float64; in float32
            a batched seed may drift from the same seed run alone.
        should_stop: a callable checked before each method, after its compilation and after
            every step (a host callback, like the progress bar's): when it returns True the run
            stops there and :class:`RunInterrupted` is raised with the methods that finished.
            The ``nbo-jax`` command line passes a flag set by Ctrl-C. A compiled run returns
            nothing until its last step, so the method stopped mid-run is lost; the finished
            ones are whole.
        long_run_s: when a method's run is projected to take longer than this many seconds
            (from its first 3 steps, or its first steps of 2 s or more) a line says so, with
            the projection and what shortens it (``verbose`` only; ``None``: never). The
            projection is made by the step hook, so only with ``progress`` or ``should_stop``;
            with ``segments > 1`` the first steps are the cheapest and it is a lower bound.

    Returns:
        ``(histories, timings)``: ``histories[name]`` the numpy fields of the vmapped
        :class:`~nbo_jax.types.History` (:func:`nbo_jax.analysis.history_to_numpy`; ``x``
        ``(S, n_init + n_iter, d)``, ``y``/``f``/``best_f``/``valid`` ``(S, n_init + n_iter)``);
        ``timings[name] = {"compile_s", "run_s", "wall_s"}`` in seconds (``wall_s`` is
        their sum).

    Raises:
        ValueError / TypeError: no algorithms, a name with ``"__"``, ``vmap_seeds`` naming a
            method not in ``algorithms`` or neither a bool nor a collection of names, or the errors of
        :func:`nbo_jax.run_bo` on the algorithms, the problem or the counts, all raised
        before anything runs.
        RunInterrupted: ``should_stop()`` returned True (carries the finished methods).
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
    if isinstance(vmap_seeds, bool):
        vmapped = set(algorithms) if vmap_seeds else set()
    elif isinstance(vmap_seeds, Collection) and not isinstance(vmap_seeds, str) and all(
            isinstance(n, str) for n in vmap_seeds):
        vmapped = set(vmap_seeds)
        if vmapped - set(algorithms):
            raise ValueError(f"vmap_seeds names {sorted(vmapped - set(algorithms))}, which are not among the "
                             f"algorithms {sorted(algorithms)}")
    else:
        raise TypeError(f"vmap_seeds must be a bool or a collection of algorithm names, got {vmap_seeds!r}")

    if should_stop is not None and not callable(should_stop):
        raise TypeError(f"should_stop must be a callable returning a bool, got {should_stop!r}")
    if long_run_s is not None and not (isinstance(long_run_s, (int, float)) and long_run_s >= 0):
        raise ValueError(f"long_run_s must be a number >= 0 or None, got {long_run_s!r}")

    n_seeds = len(keys)
    n_total = n_init + n_iter
    histories, timings = {}, {}
    names = list(algorithms)
    for i, (name, algo) in enumerate(algorithms.items()):
        if should_stop is not None and should_stop():
            raise RunInterrupted(histories, timings, None, names[i:])
        q = algo.q
        iters = -(-n_iter // q)
        batched = name in vmapped
        if verbose:
            print(f"running {name} on {problem.name} (d={problem.dim}) x {n_seeds} seeds "
                  f"{'vmapped' if batched else 'in sequence'} ({n_init} initial + {iters * q} evaluations each)",
                  flush=True)

        hook = (_StepHook(name, iters, 1 if batched else n_seeds, progress=progress, should_stop=should_stop,
                          long_run_s=long_run_s, verbose=verbose)
                if progress or should_stop is not None else False)

        def one(key, algo=algo, iters=iters, hook=hook):
            return run_bo(key, algo, problem, n_init=n_init, n_iter=iters, progress=hook, segments=segments)

        t0 = time.perf_counter()
        compiled = jax.jit(jax.vmap(one) if batched else partial(jax.lax.map, one)).lower(keys).compile()
        t1 = time.perf_counter()
        if should_stop is not None and should_stop():
            raise RunInterrupted(histories, timings, None, names[i:])
        if hook:
            hook.start = hook.clock()
        try:
            with _quiet_stop_logs():
                hist = jax.block_until_ready(compiled(keys))
        except Exception as err:
            if hook and hook.stopped:  # the step hook ended the run (JAX wraps its _Stop in its own error)
                raise RunInterrupted(histories, timings, name, names[i + 1:]) from None
            raise
        t2 = time.perf_counter()
        arrays = analysis.history_to_numpy(hist)
        histories[name] = {k: v[:, :n_total] for k, v in arrays.items()}
        timings[name] = {"compile_s": t1 - t0, "run_s": t2 - t1, "wall_s": t2 - t0}
        if verbose:
            n_bad = int(np.sum(~histories[name]["valid"]))
            print(f"  {name}: compile {t1 - t0:.2f} s, run {t2 - t1:.2f} s; "
                  f"NaN/inf observations: {n_bad} of {n_seeds * n_total}", flush=True)
    return histories, timings


class _DropStopRecords(logging.Filter):
    """Drops the log record of a step hook's :class:`_Stop` (``jax.debug.callback failed``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], _Stop))


@contextlib.contextmanager
def _quiet_stop_logs():
    """Inside the block, JAX does not log the traceback of a stop raised by a step hook."""
    logger, drop = logging.getLogger("jax._src.debugging"), _DropStopRecords()
    logger.addFilter(drop)
    try:
        yield
    finally:
        logger.removeFilter(drop)


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
    segments: int = 1,
    progress: bool = True,
    verbose: bool = True,
    vmap_seeds: bool | Collection[str] = True,
) -> ComparisonResult:
    """Run ``algorithms`` on ``problem`` over ``seeds`` seeds and compute the statistics of
    Phan-Trong 2024 (PhD thesis), Section 3.5.2, Tables 3.1 and 3.2.

    Every method gets the keys ``split(key(seed), seeds)``, hence the same initial design per
    seed, and is run by :func:`run_methods` (vmapped over the keys, one compilation per
    method; a batch algorithm gets ``ceil(n_iter / q)`` iterations, cut to the same length).

    Args:
        problem: the problem (minimized).
        algorithms: name -> :class:`BOAlgorithm` (names label tables and plots).
        n_init: initial points per seed.
        n_iter: evaluations after them, per seed.
        seeds: number of seeds ``S`` (>= 3 for the statistics).
        seed: base seed.
        reference: method the baselines are tested against (default: the first one).
        alpha: Benjamini-Hochberg level.
        segments: :func:`nbo_jax.run_bo`'s ``segments`` (:func:`run_methods`).
        progress: tqdm bars per method; verbose: print a line per method.
        vmap_seeds: which methods run their seeds batched (:func:`run_methods`).

    Returns:
        :class:`ComparisonResult`.

    Raises:
        ValueError / TypeError: empty ``algorithms``, an unknown ``reference``, ``seeds < 3``,
        or the errors of :func:`run_methods` (all raised before anything runs).
    """
    import jax

    from .loop import _check_count

    if not algorithms:
        raise ValueError("algorithms must name at least one method")
    seeds = _check_count("seeds", seeds, 3)
    reference = reference or next(iter(algorithms))
    if reference not in algorithms:
        raise ValueError(f"reference {reference!r} is not among the algorithms {sorted(algorithms)}")

    keys = jax.random.split(jax.random.key(seed), seeds)
    histories, timings = run_methods(problem, algorithms, keys, n_init=n_init, n_iter=n_iter, segments=segments,
                                     progress=progress, verbose=verbose, vmap_seeds=vmap_seeds)
    return result_from_histories(problem, histories, timings, reference=reference, n_init=n_init,
                                 n_evaluations=n_init + n_iter, alpha=alpha)


def result_from_histories(problem: Problem, histories: Mapping[str, Mapping[str, np.ndarray]],
                          timings: Mapping[str, Mapping[str, float]], *, reference: str, n_init: int,
                          n_evaluations: int, alpha: float = 0.05) -> ComparisonResult:
    """The :class:`ComparisonResult` of histories already run (:func:`run_methods`'s output,
    e.g. cached per method and loaded back): the final values and the statistics as
    :func:`compare` computes them.

    Raises:
        ValueError: ``reference`` not among the ``histories``."""
    if reference not in histories:
        raise ValueError(f"reference {reference!r} is not among the methods {sorted(histories)}")
    final, metric, higher, curves = task_final_values(problem, histories)
    ks, welch = statistics({m: -v for m, v in final.items()} if higher else final, reference, alpha)
    m = problem.n_objectives
    front = analysis.sampled_front(problem) if m > 1 else None
    return ComparisonResult(problem.name, problem.dim, problem.optimal_value, dict(histories), final, ks, welch,
                            reference, dict(timings), n_init, n_evaluations, metric, higher, curves, m,
                            problem.reference_point, problem.max_hypervolume, front)


def task_final_values(problem: Problem, histories: Mapping[str, Mapping[str, np.ndarray]]):
    """The final values :func:`compare` reports for ``problem``: ``(final, label,
    higher_is_better, curves)``.

    - ``problem.metric`` set (a :class:`~nbo_jax.types.TaskMetric`): its ``final`` per method
      (``(S,)``), its label and direction, and its ``curve`` per method (or ``None``);
    - ``m >= 2`` objectives: the log hypervolume difference to ``problem.max_hypervolume``
      (:func:`nbo_jax.analysis.hypervolume_regret`), its curves per method, smaller is
      better; the hypervolume itself, larger is better, when the maximum is unknown;
    - otherwise the simple regret (:func:`nbo_jax.analysis.final_values`), or for a
      constrained problem with known ``f*`` ``log10`` of the best positive regret plus
      violation (floored at ``LOG_FLOOR``); smaller is better, ``curves`` is ``None``.

    Raises:
        ValueError: a task metric that does not return one finite-or-NaN value per seed."""
    metric = problem.metric
    if metric is not None:
        final = {}
        for m, h in histories.items():
            v = np.asarray(metric.final(h), dtype=np.float64).reshape(-1)
            n_seeds = np.shape(h["best_f"])[0]
            if v.shape != (n_seeds,):
                raise ValueError(f"problem.metric.final must return one value per seed ({n_seeds}), got shape "
                                 f"{v.shape} for {m!r}")
            final[m] = v
        curves = None
        if metric.curve is not None:
            curves = {m: np.asarray(metric.curve(h), dtype=np.float64) for m, h in histories.items()}
        return final, metric.label, bool(metric.higher_is_better), curves
    if problem.n_objectives > 1:
        curves, label = analysis.metric_curves(histories, None, max_hypervolume=problem.max_hypervolume)
        final = {m: np.atleast_1d(c[..., -1]).reshape(-1) for m, c in curves.items()}
        return final, label, problem.max_hypervolume is None, curves
    fstar = problem.optimal_value
    final = analysis.final_values(histories, fstar)
    label = analysis.metric_curves(histories, fstar)[1]
    if problem.constraints is not None and fstar is not None:
        final = {m: np.log10(np.maximum(v, LOG_FLOOR)) for m, v in final.items()}
        label = "log10 " + label
    return final, label, False, None


# --------------------------------------------------------------------------- tables
def _p(p: float) -> str:
    return f"{p:.3g}" if math.isfinite(p) else "nan"


def ks_table(results: Sequence[ComparisonResult]) -> tuple[list[str], list[list[str]]]:
    """Table 3.1 of Phan-Trong 2024 (PhD thesis), Section 3.5.2: one row per (problem, d), one
    column per method: the KS normality p-value of the final values.

    Args:
        results: the comparisons, one per problem.

    Returns:
        ``(header, rows)`` of strings, for :func:`markdown` (``nbo_jax.analysis.markdown_table``).
    """
    methods = _methods(results)
    rows = [[r.problem, str(r.dim)] + [_p(r.ks[m]) if m in r.ks else "" for m in methods] for r in results]
    return ["problem", "d"] + methods, rows


def welch_table(results: Sequence[ComparisonResult]) -> tuple[list[str], list[list[str]]]:
    """Table 3.2 of Phan-Trong 2024 (PhD thesis), Section 3.5.2 (Table 4.2 for constrained
    problems): one row per (problem, d), one column per baseline: ``(p, T|F)`` with the raw
    one-sided Welch p-value and the Benjamini-Hochberg decision.

    Args:
        results: the comparisons, one per problem.

    Returns:
        ``(header, rows)`` of strings, for :func:`markdown` (``nbo_jax.analysis.markdown_table``).
    """
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
    """Median [q25, q75] of the final metric (``result.metric``) per (problem, d) and method.

    Args:
        results: the comparisons, one per problem.

    Returns:
        ``(header, rows)`` of strings, for :func:`markdown` (``nbo_jax.analysis.markdown_table``).
    """
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


def write_tables(results: Sequence[ComparisonResult], out_dir, *, reference: Optional[str] = None) -> dict:
    """Write ``table_summary.md``, ``table_ks.md``/``.csv`` and ``table_welch.md``/``.csv``.

    Args:
        results: the comparisons, one per problem (rows of the tables).
        out_dir: output folder (created if needed; files overwritten).
        reference: named in the Welch caption; default: the first result's reference.

    Returns:
        ``{"summary_md", "ks_md", "welch_md", "welch_csv", "ks_csv"}`` -> paths. The Welch CSV
        has numeric columns ``p``, ``p_bh``, ``reject``; the KS CSV ``ks_p``, ``median``,
        ``q25``, ``q75``.

    Raises:
        OSError: ``out_dir`` cannot be created or written.
    """
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ref = reference or (results[0].reference if results else "")
    paths = {}
    metric = " / ".join(sorted({r.metric for r in results})) or "simple regret"
    constrained = "violation" in metric
    higher = any(r.higher_is_better for r in results)
    h0 = f"mean_baseline >= mean_{ref} (larger is better)" if higher else f"mean_baseline <= mean_{ref}"
    captions = {
        "ks": f"Table 3.1 analogue (Phan-Trong 2024, PhD thesis, Section 3.5.2): Kolmogorov-Smirnov "
              f"normality p-values of the final {metric}.",
        "welch": f"Table {'4.2' if constrained else '3.2'} analogue (Phan-Trong 2024, PhD thesis, Section "
                 f"{'4.3' if constrained else '3.5.2'}): one-sided Welch t-tests on the final "
                 f"{metric}, H0: {h0}; "
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
    """Write a comparison: histories (``histories.npz``, ``config.json``, ``summary.md`` via
    :func:`nbo_jax.analysis.save_results`), the regret plot ``regret.png`` and the tables
    (:func:`write_tables`); for ``m >= 2`` objectives also the final fronts of seed 0
    (``pareto.png``, ``pareto_fronts.npz``: :func:`nbo_jax.analysis.write_fronts`).

    Args:
        result: what :func:`compare` returned.
        out_dir: output folder (created if needed; files overwritten).
        config: extra configuration stored in ``config.json`` (the problem, dimension,
            reference and counts are added).
        title: plot title; default ``"<problem> (d=<dim>)"``.

    Returns:
        name -> path of every file written.

    Raises:
        OSError: ``out_dir`` cannot be created or written.
    """
    out = pathlib.Path(out_dir)
    cfg = dict(config or {})
    cfg.update(problem=result.problem, dim=result.dim, reference=result.reference, n_init=result.n_init,
               n_evaluations=result.n_evaluations)
    if result.n_objectives > 1:
        cfg.update(reference_point=result.reference_point, max_hypervolume=result.max_hypervolume)
    paths = analysis.save_results(out, result.histories, cfg, optimal_value=result.optimal_value,
                                  max_hypervolume=result.max_hypervolume, timings=result.timings)
    if result.curves is not None:
        curves, label, log = result.curves, result.metric, False
    else:
        curves, label = analysis.metric_curves(result.histories, result.optimal_value)
        log = True
    paths["plot"] = analysis.plot_regret(
        curves, out / "regret.png", title=title or f"{result.problem} (d={result.dim})", n_init=result.n_init,
        ylabel=label, log=log)
    if result.n_objectives > 1:
        paths.update(analysis.write_fronts(out, result.histories, true_front=result.true_front,
                                           reference_point=result.reference_point,
                                           title=title or f"{result.problem} (d={result.dim})"))
    paths.update(write_tables([result], out))
    return paths
