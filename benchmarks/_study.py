"""Shared driver of the reproduction scripts: run :func:`nbo_jax.comparison.compare` on a list
of problems, save each, write and print the thesis' tables."""

from __future__ import annotations

import argparse
import pathlib
import time
from typing import Callable, Iterable

from nbo_jax import comparison


def run_study(problems: Iterable, make_algorithms: Callable, *, out, reference: str, n_init: int,
              n_iter: int, seeds: int, config: dict, welch_title: str) -> list:
    """``problems``: ``(label, Problem)`` pairs; ``make_algorithms(problem) -> {name: BOAlgorithm}``.
    Saves ``out/<label>/`` per problem and the tables in ``out``; prints them; returns the
    :class:`~nbo_jax.comparison.ComparisonResult` list."""
    out = pathlib.Path(out)
    results = []
    t_start = time.perf_counter()
    for label, problem in problems:
        res = comparison.compare(problem, make_algorithms(problem), n_init=n_init, n_iter=n_iter, seeds=seeds,
                                 reference=reference, progress=False)
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
    ``--out``; scripts add their own."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", nargs="+", default=problems)
    ap.add_argument("--methods", nargs="+", default=methods)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--n-init", type=int, default=10)
    ap.add_argument("--iterations", type=int, default=iterations)
    ap.add_argument("--out", default=out)
    return ap


def run_from_args(args, problems: Iterable, make_algorithms: Callable, *, script: str, welch_title: str) -> list:
    """:func:`run_study` with the settings of :func:`study_parser`; ``welch_title`` may use
    ``{reference}``."""
    reference = args.methods[0]
    return run_study(problems, make_algorithms, out=args.out, reference=reference, n_init=args.n_init,
                     n_iter=args.iterations, seeds=args.seeds, config={"script": script, **vars(args)},
                     welch_title=welch_title.format(reference=reference))
