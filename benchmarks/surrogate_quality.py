"""Surrogate accuracy at a BO-sized data set: why one method finds better optima than another.

Fits Neural-BO's network (library defaults) and the GP of ``gp_bo`` to ``n`` points of a
problem (uniform, or uniform plus points concentrated around the optimum region as a BO run
produces them), and scores both posteriors on held-out points: the Spearman rank correlation
of the posterior mean with the true ``f`` (what an argmin needs) and the standardized RMSE,
on uniform test points and on test points near the best training point (std 0.05 in
unit-cube units), plus the calibration ``mean((f - mean)^2 / std^2)`` (1 when calibrated).
Then where each posterior mean has its minimum over the box (what a greedy or low-noise
Thompson step asks; :func:`nbo_jax.optimize.optimize_acqf`, 2048 raw samples, 10 restarts, 200
steps): the true ``f`` there against the best training point's, and its distance to the
nearest training point (unit cube; the box's diagonal is ``sqrt(d)``). ``--data gp-ucb`` trains
on the first ``n`` points of a GP-UCB run instead (the data a good BO run collects).

    uv run python benchmarks/surrogate_quality.py --problems ackley levy michalewicz --n 210
    uv run python benchmarks/surrogate_quality.py --problems ackley --n 150 --data gp-ucb --seeds 10
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np
from scipy import stats

import nbo_jax as nbo
from nbo_jax.optimize import AcqOptimizer, optimize_acqf

NOISE = {"ackley": 0.046304, "levy": 3.525403, "michalewicz": 0.043429}


def score(post, f_true, y_mean, y_std):
    z = (f_true - y_mean) / y_std
    mean, std = np.asarray(post.mean), np.asarray(post.std)
    rho = stats.spearmanr(mean, f_true).statistic
    rmse = float(np.sqrt(np.mean((mean - z) ** 2)))
    calib = float(np.mean((z - mean) ** 2 / np.maximum(std, 1e-12) ** 2))
    return rho, rmse, calib


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", nargs="+", default=list(NOISE))
    ap.add_argument("--dim", type=int, default=10)
    ap.add_argument("--n", type=int, default=210)
    ap.add_argument("--local-share", type=float, default=0.5,
                    help="share of training points drawn around the best uniform point (a BO run's focus)")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--data", choices=("synthetic", "gp-ucb"), default="synthetic",
                    help="training points: uniform plus --local-share around the best (synthetic), or the first "
                         "--n of a GP-UCB run (10 initial points)")
    args = ap.parse_args()
    methods = {"neural-bo": nbo.neural_bo(), "gp (gp_bo default)": nbo.gp_bo()}
    print("| problem | method | spearman uniform | spearman local | RMSE uniform | RMSE local | calibration local "
          "| f at the mean's argmin | best training f | argmin to nearest training point | argmins > 0.25 away |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    climb = AcqOptimizer(raw_samples=2048, num_restarts=10, steps=200)
    ucb = nbo.gp_bo(acquisition="ucb")  # one object: run_bo compiles once for all seeds
    for name in args.problems:
        problem = nbo.benchmarks.get(name, dim=args.dim, noise_std=NOISE.get(name, 0.0))
        lo, hi = problem.bounds.lower, problem.bounds.upper
        rows = {m: [] for m in methods}
        for seed in range(args.seeds):
            k = jax.random.split(jax.random.key(seed), 8)
            if args.data == "gp-ucb":
                run = nbo.run_bo(k[6], ucb, problem, 10, args.n - 10)
                x, f, y = run.x, run.f, run.y
                u = (x - lo) / (hi - lo)
            else:
                n_loc = int(args.n * args.local_share)
                u_uni = jax.random.uniform(k[0], (args.n - n_loc, args.dim))
                f_uni = jax.vmap(problem.objective)(lo + u_uni * (hi - lo))
                centre = u_uni[jnp.argmin(f_uni)]
                u_loc = jnp.clip(centre + 0.1 * jax.random.normal(k[1], (n_loc, args.dim)), 0, 1)
                u = jnp.concatenate([u_uni, u_loc])
                x = lo + u * (hi - lo)
                f = jax.vmap(problem.objective)(x)
                y = f + problem.noise_std * jax.random.normal(k[2], f.shape)
            test_uni = jax.random.uniform(k[3], (1000, args.dim))
            test_loc = jnp.clip(u[jnp.argmin(y)] + 0.05 * jax.random.normal(k[4], (1000, args.dim)), 0, 1)
            f_tu = np.asarray(jax.vmap(problem.objective)(lo + test_uni * (hi - lo)))
            f_tl = np.asarray(jax.vmap(problem.objective)(lo + test_loc * (hi - lo)))
            y_mean, y_std = float(jnp.mean(y)), float(jnp.std(y))
            best_f = float(jnp.min(f))
            for m, algo in methods.items():
                state = jax.jit(lambda kk, xx, yy: algo.init(kk, xx, yy, bounds=problem.bounds, capacity=args.n))(
                    k[5], x, y)
                su = score(algo.surrogate(state, test_uni), f_tu, y_mean, y_std)
                sl = score(algo.surrogate(state, test_loc), f_tl, y_mean, y_std)
                u_min = optimize_acqf(lambda uc: -algo.surrogate(state, uc).mean, k[7], state.data, climb)
                f_min = float(problem.objective(lo + u_min * (hi - lo)))
                gap = float(jnp.min(jnp.linalg.norm(u - u_min, axis=1)))
                rows[m].append((su[0], sl[0], su[1], sl[1], sl[2], f_min, best_f, gap))
        for m, vals in rows.items():
            vals = np.array(vals)
            v = np.median(vals, axis=0)
            far = int(np.sum(vals[:, 7] > 0.25))
            print(f"| {name}-{args.dim} | {m} | {v[0]:.3f} | {v[1]:.3f} | {v[2]:.3f} | {v[3]:.3f} | {v[4]:.2f} "
                  f"| {v[5]:.3f} | {v[6]:.3f} | {v[7]:.3f} | {far} of {len(vals)} |", flush=True)


if __name__ == "__main__":
    main()
