"""Shared driver of the reproduction scripts: run :func:`nbo_jax.comparison.compare` on a list
of problems, save each, write and print the thesis' tables."""

from __future__ import annotations

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
