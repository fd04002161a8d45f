"""Wall seconds of whole ``run_bo`` runs in one compiled segment against several of growing
capacity (``run_bo(..., segments=k)``), and the compile time each costs.

Usage::

    uv run python benchmarks/bench_segments.py                                   # the defaults below
    uv run python benchmarks/bench_segments.py --algorithm gp-ei --n-iter 300 --segments 1 3
    uv run python benchmarks/bench_segments.py --algorithm gp-ei --n-iter 1000 --segments 4 \
        --set refit_every=10 --once

Each configuration is compiled ahead of time (``jit(...).lower(key).compile()``: compile
seconds), run once (run seconds) and run again with another key (a second run's seconds),
with the final best f of the last run so that the runs can be seen to be the same kind of
run (``--once``: no second run). ``--set
name=value`` passes a factory argument (a Python literal). Problem: Ackley-d with the paper's
noise.
"""

from __future__ import annotations

import argparse
import ast
import time

import jax

import nbo_jax as nbo


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--algorithm", default="neural-bo")
    ap.add_argument("--dim", type=int, default=10)
    ap.add_argument("--n-init", type=int, default=10)
    ap.add_argument("--n-iter", type=int, default=1000)
    ap.add_argument("--segments", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE", help="factory arguments")
    ap.add_argument("--once", action="store_true", help="time the first call (compile + run) only")
    args = ap.parse_args()
    problem = nbo.benchmarks.get("ackley", dim=args.dim)
    kwargs = {k: ast.literal_eval(v) for k, v in (item.split("=", 1) for item in args.set)}
    algo = nbo.algorithms.get(args.algorithm, **kwargs)
    print(f"{args.algorithm} {kwargs} on Ackley-{args.dim}, {args.n_init} + {args.n_iter}, {jax.devices()[0].platform}")
    print("| segments | plan (steps, capacity) | compile s | run s | compile + run s | second run s | best f |")
    print("|---|---|---|---|---|---|---|")
    for k in args.segments:
        run = jax.jit(lambda key: nbo.run_bo(key, algo, problem, args.n_init, args.n_iter, segments=k))
        t0 = time.perf_counter()
        compiled = run.lower(jax.random.key(0)).compile()
        compile_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        hist = jax.block_until_ready(compiled(jax.random.key(0)))
        first = time.perf_counter() - t0
        second = float("nan")
        if not args.once:
            t0 = time.perf_counter()
            hist = jax.block_until_ready(compiled(jax.random.key(1)))
            second = time.perf_counter() - t0
        plan = nbo.loop.segment_plan(args.n_init, args.n_iter, algo.q, k)
        print(f"| {k} | {plan} | {compile_s:.1f} | {first:.1f} | {compile_s + first:.1f} | {second:.1f} | "
              f"{float(hist.best_f[-1]):.3f} |", flush=True)


if __name__ == "__main__":
    main()
