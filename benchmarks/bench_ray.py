"""Wall time of parallel evaluation on a local Ray cluster against sequential evaluation
(:func:`nbo_jax.integrations.ray.optimize`), for an objective that waits (a simulator, a
queue) and computes.

Usage::

    uv run --extra ray python benchmarks/bench_ray.py                 # 24 evaluations of 1 s, 1/2/4 workers
    uv run --extra ray python benchmarks/bench_ray.py --sleep 5 --evaluations 40 --workers 1,8

Each algorithm runs once unmeasured first (compiles the proposals), then once per worker
count with the same key; each run's wall time includes starting its workers (Ray actors
that stay up for the run). Prints a table: algorithm, workers, wall
seconds, the ratio to 1 worker, the ideal ratio (``min(workers, evaluations)``-fold
evaluation parallelism) and the best value found. The proposal work (the surrogate's
training and the acquisition optimization) runs in the driver between results, so it is
what keeps the ratio below the ideal.
"""

from __future__ import annotations

import argparse
import time

import jax
import numpy as np
import ray

import nbo_jax as nbo
from nbo_jax.integrations.ray import optimize


def make_objective(sleep_s: float):
    def objective(x):
        time.sleep(sleep_s)
        a = np.random.default_rng(0).normal(size=(200, 200))
        np.linalg.eigvalsh(a @ a.T)  # a little real work
        return float(np.sum((np.asarray(x) - 0.3) ** 2) + np.sum(np.cos(8 * np.asarray(x))) / 8)
    return objective


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sleep", type=float, default=1.0, help="seconds each evaluation waits")
    ap.add_argument("--evaluations", type=int, default=24)
    ap.add_argument("--n-init", type=int, default=8)
    ap.add_argument("--dim", type=int, default=4)
    ap.add_argument("--workers", default="1,2,4", help="comma-separated worker counts (1 first)")
    ap.add_argument("--algorithms", default="random,gp-ei,neural-bo", help="registry names")
    ap.add_argument("--address", default=None, help="an existing Ray cluster (default: a local one)")
    args = ap.parse_args()
    workers = [int(w) for w in args.workers.split(",")]
    ray.init(address=args.address, num_cpus=None if args.address else max(workers), include_dashboard=False,
             log_to_driver=False)
    objective = make_objective(args.sleep)
    box = [(0.0, 1.0)] * args.dim
    print(f"{args.evaluations} evaluations ({args.n_init} initial) of {args.sleep:g} s + compute, d = {args.dim}; "
          f"cluster CPUs {ray.cluster_resources().get('CPU')}, driver on {jax.devices()[0].device_kind}")
    print("| algorithm | workers | wall s | speed-up vs 1 worker | ideal | best y |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in args.algorithms.split(","):
        algo = nbo.registry.get(name)
        optimize(objective, box, max(workers) + 2, algorithm=algo, n_init=2, n_workers=max(workers))  # warm-up
        base = None
        for w in workers:
            t = time.perf_counter()
            study = optimize(objective, box, args.evaluations, algorithm=algo, n_init=args.n_init, n_workers=w,
                             key=jax.random.key(0))
            wall = time.perf_counter() - t
            base = wall if base is None else base
            print(f"| {name} | {w} | {wall:.1f} | {base / wall:.2f} | {min(w, args.evaluations)} | "
                  f"{study.best()[1]:.4f} |", flush=True)


if __name__ == "__main__":
    main()
