"""Wall seconds of whole ``run_bo`` runs in one compiled segment against several of growing
capacity (``run_bo(..., segments=k)``), and the compile time each costs.

Usage::

    uv run python benchmarks/bench_segments.py                                   # the defaults below
    uv run python benchmarks/bench_segments.py --algorithm gp-ei --n-iter 300 --segments 1 3
    uv run python benchmarks/bench_segments.py --algorithm gp-ei --n-iter 1000 --segments 4 \
        --set refit_every=10 --once

Each configuration is compiled ahead of time (``jit(...).lower(key).compile()``: compile
seconds), run once (run seconds) and run again with another key (a second run's seconds),
with the final best f of the last run (the median over seeds) so that the runs can be seen to be the same kind of
run (``--once``: no second run). ``--set
name=value`` passes a factory argument (a Python literal). Problem: Ackley-d with the paper's
noise. ``--seeds S`` runs ``S`` seeds vmapped in one program, split over every visible device
(:func:`nbo_jax.sharding.run_bo_sharded`); on a CPU, ``XLA_FLAGS=--xla_force_host_platform_device_count=2``
gives two devices, one per core::

    XLA_FLAGS=--xla_force_host_platform_device_count=2 uv run python benchmarks/bench_segments.py \
        --n-iter 2000 --segments 4 --seeds 10 --once

``--processes P`` (with ``--seeds S``) runs the seeds in ``P`` worker processes instead, each
pinned to one core before it starts (``os.sched_setaffinity``, so that XLA's thread pool has
one thread; a worker that pinned itself after ``import jax`` kept two threads on its core and
ran 6 times slower) and vmapping its share of the same ``S`` keys. The row gives the wall
seconds from the start of the workers to the last result (``compile s`` and ``run s`` are the
slowest worker's)::

    uv run python benchmarks/bench_segments.py --n-iter 2000 --segments 4 --seeds 10 --processes 2 --once
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import time

import jax
import numpy as np

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
    ap.add_argument("--seeds", type=int, default=1, help="seeds vmapped in one program, split over the devices")
    ap.add_argument("--processes", type=int, default=0,
                    help="run the seeds in this many worker processes, one pinned core each")
    ap.add_argument("--worker", type=int, nargs=3, metavar=("CORE", "FIRST", "STOP"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    if args.processes:
        if not 1 <= args.processes <= args.seeds:
            ap.error(f"--processes must be between 1 and --seeds ({args.seeds}), got {args.processes}")
        return in_processes(args)
    problem, algo, kwargs = _problem_and_algorithm(args)
    devices = jax.devices()
    print(f"{args.algorithm} {kwargs} on Ackley-{args.dim}, {args.n_init} + {args.n_iter}, {args.seeds} seed(s), "
          f"{len(devices)} {devices[0].platform} device(s)")
    print("| segments | plan (steps, capacity) | compile s | run s | compile + run s | second run s | best f |")
    print("|---|---|---|---|---|---|---|")
    for k in args.segments:
        if args.seeds == 1:
            run = jax.jit(lambda key, k=k: nbo.run_bo(key, algo, problem, args.n_init, args.n_iter, segments=k))
            inputs = [jax.random.key(0), jax.random.key(1)]
        else:  # one program: the sharded vmap (compiled ahead of time through its jit)
            from nbo_jax.sharding import _runner, seed_mesh

            run, sharding = _runner(algo, problem, args.n_init, args.n_iter, tuple(seed_mesh().devices.flat), k)
            n_dev = len(devices)
            padded = -(-args.seeds // n_dev) * n_dev  # run_bo_sharded's padding
            inputs = [jax.device_put(jax.random.split(jax.random.key(i), padded), sharding) for i in (0, 1)]
        compiled, compile_s, first, hist = _compile_and_run(run, inputs[0])
        second = float("nan")
        if not args.once:
            t0 = time.perf_counter()
            hist = jax.block_until_ready(compiled(inputs[1]))
            second = time.perf_counter() - t0
        plan = nbo.loop.segment_plan(args.n_init, args.n_iter, algo.q, k)
        best = np.atleast_1d(np.asarray(hist.best_f)[..., -1])[: args.seeds]  # one seed: a scalar
        print(f"| {k} | {plan} | {compile_s:.1f} | {first:.1f} | {compile_s + first:.1f} | {second:.1f} | "
              f"{np.median(best):.3f} |", flush=True)


def _problem_and_algorithm(args):
    """Ackley-``--dim`` and ``--algorithm`` built with the ``--set`` arguments (and those)."""
    kwargs = {k: ast.literal_eval(v) for k, v in (item.split("=", 1) for item in args.set)}
    return nbo.benchmarks.get("ackley", dim=args.dim), nbo.registry.get(args.algorithm, **kwargs), kwargs


def _compile_and_run(run, x):
    """``run`` compiled ahead of time for ``x`` and called once: ``(compiled, compile seconds,
    run seconds, result)``."""
    t0 = time.perf_counter()
    compiled = run.lower(x).compile()
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = jax.block_until_ready(compiled(x))
    return compiled, compile_s, time.perf_counter() - t0, out


def worker(args) -> None:
    """One pinned worker: seeds ``FIRST:STOP`` of ``split(key(0), --seeds)``, vmapped; prints
    one JSON line per ``--segments`` value."""
    core, first, stop = args.worker
    assert os.sched_getaffinity(0) == {core}, "the parent pins the worker before it starts"
    problem, algo, _ = _problem_and_algorithm(args)
    keys = jax.random.split(jax.random.key(0), args.seeds)[first:stop]
    for k in args.segments:
        run = jax.jit(jax.vmap(lambda key, k=k: nbo.run_bo(key, algo, problem, args.n_init, args.n_iter, segments=k)))
        _, compile_s, run_s, hist = _compile_and_run(run, keys)
        print("RESULT" + json.dumps({"segments": k, "compile_s": compile_s, "run_s": run_s, "end": time.time(),
                                     "best": np.asarray(hist.best_f)[:, -1].tolist()}), flush=True)


def in_processes(args) -> None:
    """``--processes P``: P pinned workers, the seeds split as evenly as possible."""
    cores = sorted(os.sched_getaffinity(0))
    pins = [cores[i % len(cores)] for i in range(args.processes)]
    bounds = np.linspace(0, args.seeds, args.processes + 1).round().astype(int)
    base = [sys.executable, os.path.abspath(__file__), "--algorithm", args.algorithm, "--dim", str(args.dim),
            "--n-init", str(args.n_init), "--n-iter", str(args.n_iter), "--seeds", str(args.seeds),
            "--segments", *map(str, args.segments), "--set", *args.set]
    env = {k: v for k, v in os.environ.items() if k != "NPROC"}  # XLA's pool from the pinned core
    print(f"{args.algorithm} on Ackley-{args.dim}, {args.n_init} + {args.n_iter}, {args.seeds} seeds in "
          f"{args.processes} processes pinned to cores {pins}, "
          f"seeds {bounds.tolist()}")
    print("| segments | compile s (slowest) | run s (slowest) | wall s, start to last result | best f (median) |")
    print("|---|---|---|---|---|")
    start = time.time()
    procs = []
    for i, core in enumerate(pins):
        # pinned before the worker starts: pinned after ``import jax``, XLA's pool kept two threads
        procs.append(subprocess.Popen(base + ["--worker", str(core), str(bounds[i]), str(bounds[i + 1])],
                                      stdout=subprocess.PIPE, text=True, env=env,
                                      # only a syscall runs between fork and exec
                                      preexec_fn=lambda core=core: os.sched_setaffinity(0, {core})))  # noqa: PLW1509
    results = []
    for p in procs:
        out, _ = p.communicate()
        if p.returncode:
            raise SystemExit(f"a worker failed (exit {p.returncode})")
        results.append([json.loads(ln[len("RESULT"):]) for ln in out.splitlines() if ln.startswith("RESULT")])
    for j, k in enumerate(args.segments):
        rows = [r[j] for r in results]
        best = [b for r in rows for b in r["best"]]
        wall = max(r["end"] for r in rows) - start
        print(f"| {k} | {max(r['compile_s'] for r in rows):.1f} | {max(r['run_s'] for r in rows):.1f} | "
              f"{wall:.1f} | {np.median(best):.3f} |", flush=True)


if __name__ == "__main__":
    main()
