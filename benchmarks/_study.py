"""Shared driver of the reproduction scripts: run every method on a list of problems
(:func:`nbo_jax.comparison.run_methods`, each (problem, method) cached so that a long study
resumes where it stopped), save each problem, write and print the thesis' tables."""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import time
from typing import Callable, Iterable

import numpy as np

from nbo_jax import comparison


def runs_in_sequence(method: str, vmap_gp: bool = False) -> bool:
    """Whether a method's seeds run one after another rather than vmapped: GP methods and
    TuRBO around anything, unless ``vmap_gp`` (a GPU). On the 2-core CPU a vmapped GP waits for
    its slowest seed in every fit and climb, and a vmapped TuRBO's batched restart predicate
    computes the inner init on every step (10 TuRBO(Neural-BO) seeds: 471 s vmapped beside
    another benchmark, 49 s in sequence)."""
    return (method.startswith("gp-") or re.match(r"turbo\d*-", method) is not None) and not vmap_gp


def _cached_run(problem, name: str, algo, cache: pathlib.Path, settings: dict, force: bool, vmap_gp: bool = False):
    """``(history, timing)`` of one method on one problem: loaded from ``cache`` when it was run
    with the same ``settings`` (seeds, counts, segments, the algorithm's recorded factory
    call), else run (seeds vmapped or in sequence, :func:`runs_in_sequence`; the cache records
    which) and written there."""
    import jax

    hist_path, meta_path = cache / f"{name}.npz", cache / f"{name}.json"
    if not force and hist_path.exists() and meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if meta.get("settings") == settings:
            with np.load(hist_path) as z:
                return {k: z[k] for k in z.files}, meta["timing"]
    keys = jax.random.split(jax.random.key(settings["seed"]), settings["seeds"])
    vmapped = not runs_in_sequence(name, vmap_gp)
    hists, timings = comparison.run_methods(problem, {name: algo}, keys, n_init=settings["n_init"],
                                            n_iter=settings["n_iter"], segments=settings["segments"],
                                            progress=False, vmap_seeds=vmapped)
    cache.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(hist_path, **hists[name])
    meta_path.write_text(json.dumps({"settings": settings, "timing": timings[name],
                                     "seeds_vmapped": vmapped}))
    return hists[name], timings[name]


def run_study(problems: Iterable, make_algorithms: Callable, *, out, reference: str, n_init: int,
              n_iter: int, seeds: int, config: dict, welch_title: str, segments: int = 1, seed: int = 0,
              force: bool = False, vmap_gp: bool = False) -> list:
    """``problems``: ``(label, Problem)`` pairs; ``make_algorithms(problem) -> {name: BOAlgorithm}``.
    Every (problem, method) runs its ``seeds`` seeds, vmapped except GP and TuRBO methods
    (:func:`runs_in_sequence`; all vmapped with ``vmap_gp``), and is cached in
    ``out/<label>/runs/`` (reused when run with the same settings, unless ``force``); saves
    ``out/<label>/`` per problem and the tables in ``out``; prints them; returns the
    :class:`~nbo_jax.comparison.ComparisonResult` list."""
    out = pathlib.Path(out)
    results = []
    t_start = time.perf_counter()
    settings = dict(seeds=seeds, seed=seed, n_init=n_init, n_iter=n_iter, segments=segments)
    for label, problem in problems:
        histories, timings = {}, {}
        for name, algo in make_algorithms(problem).items():
            run_settings = dict(settings, algorithm=repr(getattr(algo, "config", None)))
            histories[name], timings[name] = _cached_run(problem, name, algo, out / label / "runs", run_settings,
                                                         force, vmap_gp)
        res = comparison.result_from_histories(problem, histories, timings, reference=reference, n_init=n_init,
                                               n_evaluations=n_init + n_iter)
        comparison.save(res, out / label, config)
        results.append(res)
        print(f"== {label} done ({time.perf_counter() - t_start:.0f} s so far)", flush=True)
    paths = comparison.write_tables(results, out)
    metric = results[0].metric if results else ""
    for title, fn in ((f"final {metric}, median [q25, q75]", comparison.summary_table),
                      ("KS normality p-values", comparison.ks_table),
                      (welch_title, comparison.welch_table)):
        print(f"\n{title}:")
        print(comparison.markdown(*fn(results)))
    print(f"\ntotal {time.perf_counter() - t_start:.0f} s; tables in {out}: {sorted(p.name for p in paths.values())}")
    return results


def study_parser(doc: str, *, problems: list, methods: list, iterations: int, out: str) -> argparse.ArgumentParser:
    """The arguments every reproduction script takes: ``--problems``, ``--methods`` (the first
    is the reference of the Welch tests), ``--seeds`` (5), ``--n-init`` (10), ``--iterations``,
    ``--segments`` (4), ``--out``, ``--force``, ``--vmap-gp``; scripts add their own."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", nargs="+", default=problems)
    ap.add_argument("--methods", nargs="+", default=methods)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--n-init", type=int, default=10)
    ap.add_argument("--iterations", type=int, default=iterations)
    ap.add_argument("--segments", type=int, default=4,
                    help="compiled parts of growing capacity per run (run_bo's segments; same results)")
    ap.add_argument("--out", default=out)
    ap.add_argument("--force", action="store_true", help="rerun cached (problem, method) runs")
    ap.add_argument("--vmap-gp", action="store_true",
                    help="vmap the seeds of GP and TuRBO methods too (a GPU); by default they run in sequence")
    return ap


def run_from_args(args, problems: Iterable, make_algorithms: Callable, *, script: str, welch_title: str) -> list:
    """:func:`run_study` with the settings of :func:`study_parser`; ``welch_title`` may use
    ``{reference}``."""
    reference = args.methods[0]
    return run_study(problems, make_algorithms, out=args.out, reference=reference, n_init=args.n_init,
                     n_iter=args.iterations, seeds=args.seeds, config={"script": script, **vars(args)},
                     welch_title=welch_title.format(reference=reference), segments=args.segments, force=args.force,
                     vmap_gp=args.vmap_gp)
