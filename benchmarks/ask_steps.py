"""How far a run's asks step from its incumbent, and how near its best point gets to the optimizer.

For each method (a ``sample_efficiency.py`` method string) and seed, one ``run_bo`` history
(the same keys as ``sample_efficiency.py``: ``jax.random.split(key(--seed), --seeds)``, seeds
one after another); for every BO step the RMS per coordinate, in unit-cube units, of the ask
minus the incumbent before it (the point of smallest noisy observation so far). Printed per
method: the median over seeds of each run's median step in three phases of the run, the
median final best noise-free ``f``, and the RMS distance per coordinate of the best point
(smallest noise-free ``f``) to the problem's known optimizer. A diagnostic of how a surrogate
moves, not a figure of merit.

    uv run python benchmarks/ask_steps.py --problem ackley --seeds 10 \\
        --methods neural-bo gp-ucb turbo-neural-bo turbo-gp-ts
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sample_efficiency import make_algorithm, setting


def step_lengths(u: np.ndarray, y: np.ndarray, n_init: int) -> np.ndarray:
    """``(n - n_init,)`` RMS per coordinate of ``u[t] - u[argmin y[:t]]`` for ``t >= n_init``
    (unit cube; ``u (n, d)``, ``y (n,)`` observed values, non-finite ones never the
    incumbent)."""
    y = np.where(np.isfinite(y), y, np.inf)
    before = np.concatenate([[np.inf], np.minimum.accumulate(y)[:-1]])  # min y[:t]
    first_best = np.maximum.accumulate(np.where(y < before, np.arange(len(y)), 0))  # argmin y[:t + 1]
    best = first_best[n_init - 1:-1]  # the incumbent before each ask t >= n_init
    return np.sqrt(np.mean((u[n_init:] - u[best]) ** 2, axis=1))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problem", default="ackley")
    ap.add_argument("--dim", type=int, default=None)
    ap.add_argument("--noise", default=None)
    ap.add_argument("--methods", nargs="+", default=["neural-bo", "gp-ucb"])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-init", type=int, default=10)
    ap.add_argument("--iterations", type=int, default=200)
    args = ap.parse_args(argv)

    import jax

    import nbo_jax as nbo

    _, dim, noise, _, _ = setting(args.problem, argparse.Namespace(dim=args.dim, noise=args.noise))
    problem = nbo.benchmarks.get(args.problem, dim=dim, noise_std=noise)
    to_unit = lambda x: np.asarray(problem.bounds.to_unit(np.asarray(x, float)), float)
    x_star = None if problem.optimizer is None else to_unit(problem.optimizer)
    keys = jax.random.split(jax.random.key(args.seed), args.seeds)
    edges = [e for e in (0, 50, 100) if e < args.iterations] + [args.iterations]
    print(f"{problem.name}-{problem.dim}, noise {problem.noise_std}, {args.n_init} + {args.iterations}, "
          f"{args.seeds} seeds: median over seeds of each run's median step |ask - incumbent| "
          f"(RMS per coordinate, unit cube)")
    print("| method | " + " | ".join(f"steps {a + 1}-{b}" for a, b in zip(edges[:-1], edges[1:]))
          + " | final best f | best point to the optimizer |")
    print("|---" * (len(edges) + 2) + "|")
    for method in args.methods:
        algo = make_algorithm(method)
        run = jax.jit(lambda k, algo=algo: nbo.run_bo(k, algo, problem, n_init=args.n_init, n_iter=args.iterations))
        t0 = time.perf_counter()
        phases, finals, dists = [], [], []
        for k in keys:
            h = jax.block_until_ready(run(k))
            u = to_unit(h.x)
            steps = step_lengths(u, np.asarray(h.y, float), args.n_init)
            phases.append([np.median(steps[a:b]) for a, b in zip(edges[:-1], edges[1:])])
            finals.append(float(h.best_f[-1]))
            if x_star is not None:
                best = int(np.nanargmin(np.asarray(h.f, float)))
                dists.append(float(np.sqrt(np.mean((u[best] - x_star) ** 2))))
        med = np.median(np.asarray(phases), axis=0)
        dist = f"{np.median(dists):.4f}" if dists else "-"
        print(f"| {method} | " + " | ".join(f"{v:.4f}" for v in med) + f" | {np.median(finals):.4g} | {dist} |"
              f"  ({time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
