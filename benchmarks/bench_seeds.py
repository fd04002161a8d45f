"""Seeds per second: many independent BO runs of Ackley-10, vmapped and sharded over every
visible device (:func:`nbo_jax.sharding.run_bo_sharded`; one compilation per seed count).

Usage::

    uv run python benchmarks/bench_seeds.py                       # CPU size: 1, 10, 100 seeds x 50 iterations
    uv run python benchmarks/bench_seeds.py --full                # 1, 10, 100, 1000 seeds x 200 iterations
    XLA_FLAGS=--xla_force_host_platform_device_count=2 uv run python benchmarks/bench_seeds.py   # 2 CPU "devices"

Prints a table: seeds, devices, compile seconds, run seconds (after compilation,
``block_until_ready``), seeds per second and evaluations per second. The target of the
accelerator run is 1000 seeds of Ackley-10 x 200 iterations in under 10 minutes on one H100.
"""

from __future__ import annotations

import argparse
import time

import jax

import nbo_jax as nbo
from nbo_jax.sharding import run_bo_sharded


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="1,10,100", help="comma-separated seed counts")
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--n-init", type=int, default=10)
    ap.add_argument("--algorithm", default="neural-bo", help="registry name")
    ap.add_argument("--width", type=int, default=None, help="network width (neural algorithms); default: the preset's")
    ap.add_argument("--full", action="store_true", help="1, 10, 100, 1000 seeds x 200 iterations")
    args = ap.parse_args()
    if args.full:
        args.seeds, args.iterations = "1,10,100,1000", 200
    kwargs = {"width": args.width} if args.width is not None else {}
    algo = nbo.registry.get(args.algorithm, **kwargs)
    problem = nbo.benchmarks.get("ackley", dim=10)
    devices = jax.devices()
    print(f"{args.algorithm} on Ackley-10, {args.n_init} initial + {args.iterations} iterations per seed; "
          f"{len(devices)} device(s): {devices[0].device_kind}", flush=True)
    print("| seeds | devices | compile s | run s | seeds/s | evaluations/s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for s in (int(v) for v in args.seeds.split(",")):
        keys = jax.random.split(jax.random.key(0), s)
        t0 = time.perf_counter()
        jax.block_until_ready(run_bo_sharded(keys, algo, problem, args.n_init, args.iterations))  # compile + run
        t1 = time.perf_counter()
        jax.block_until_ready(run_bo_sharded(keys, algo, problem, args.n_init, args.iterations))  # run only
        t2 = time.perf_counter()
        run = t2 - t1
        compile_s = max((t1 - t0) - run, 0.0)
        n_eval = s * (args.n_init + args.iterations)
        print(f"| {s} | {len(devices)} | {compile_s:.1f} | {run:.2f} | {s / run:.2f} | "
              f"{n_eval / run:.0f} |", flush=True)


if __name__ == "__main__":
    main()
