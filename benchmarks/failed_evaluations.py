"""Failed evaluations are information: how much of a run goes where the objective fails.

The objective is Branin (d = 2) on its usual box, except that every evaluation with
``x_1 > 2.5`` (the right half of the box, holding two of Branin's three global minima)
fails and returns NaN. A method that merely masks failures never learns where they happen
and keeps asking there; with failures imputed as the worst value seen (nbo_jax.types.Dataset)
the model learns the region is bad.

Prints, per algorithm, the share of the BO iterations (initial design excluded) that were
spent in the failing half: median and [min, max] over seeds, and the best valid value found.

Usage::

    uv run python benchmarks/failed_evaluations.py                    # 5 seeds, 5 + 25
    uv run python benchmarks/failed_evaluations.py --seeds 10 --n-iter 50 --algorithms gp-ei
"""

from __future__ import annotations

import argparse
import warnings

import jax
import jax.numpy as jnp
import numpy as np

import nbo_jax as nbo

CUT = 2.5


def failing_branin() -> nbo.Problem:
    """Branin whose evaluations fail (NaN) for ``x_1 > 2.5``."""
    branin = nbo.benchmarks.get("branin")
    return nbo.Problem("branin_failing_right_half", 2, branin.bounds,
                       lambda x: jnp.where(x[0] > CUT, jnp.nan, branin.objective(x)))


def share_in_failing_half(algo, problem, seeds: int, n_init: int, n_iter: int):
    keys = jax.random.split(jax.random.key(0), seeds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        hist = [nbo.run_bo(k, algo, problem, n_init, n_iter) for k in keys]
    share = np.array([np.mean(np.asarray(h.x[n_init:, 0]) > CUT) for h in hist])
    best = np.array([np.nanmin(np.where(np.asarray(h.valid), np.asarray(h.y), np.nan)) for h in hist])
    return share, best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--algorithms", nargs="+", default=["gp-ei", "gp-ucb", "neural-bo", "neural-greedy", "random"])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--n-init", type=int, default=5)
    ap.add_argument("--n-iter", type=int, default=25)
    args = ap.parse_args()
    problem = failing_branin()
    print(f"Branin, evaluations fail for x_1 > {CUT}; {args.n_init} + {args.n_iter} evaluations, {args.seeds} seeds")
    print("| algorithm | share of BO iterations in the failing half, median [min, max] | best valid y, median |")
    print("|---|---|---|")
    for name in args.algorithms:
        share, best = share_in_failing_half(nbo.registry.get(name), problem, args.seeds, args.n_init, args.n_iter)
        print(f"| {name} | {np.median(share):.2f} [{share.min():.2f}, {share.max():.2f}] | {np.median(best):.3f} |",
              flush=True)


if __name__ == "__main__":
    main()
