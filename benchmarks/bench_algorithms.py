"""Seconds per BO iteration against the number of observations t, for every algorithm, and
the growth exponent (log-log slope) of each, GP's against Neural-BO's.

Usage::

    uv run python benchmarks/bench_algorithms.py                       # t = 100, 500, 1000
    uv run python benchmarks/bench_algorithms.py --ts 50 100 200 --algorithms gp-ei neural-bo

An iteration is one jit-compiled ``ask`` plus ``tell``; the figure is the mean over
``max(--steps, t / 50)`` consecutive iterations from a state holding t observations (capacity
t + steps + 1), after one compiling iteration, so that it includes the work scheduled every
few iterations: ``refit_every="auto"`` (the GP's hyperparameters, Neural-BO's ``lam``) refits
every ``t // 50``-th tell, once in such a window. Problem: Ackley-d with
the paper's noise. Each algorithm runs with its library defaults unless ``--width`` is given
(applied to the neural methods that take a width). NeuralGreedy runs with ``exploration=0``
so that its fit-and-minimize step is what is timed.

``--constrained`` times the constrained algorithms (Neural-CBO, GP-cEI, GP-LCB-C) on the speed
reducer (d = 7, K = 11 constraints, so 12 networks or GPs per step)::

    uv run python benchmarks/bench_algorithms.py --constrained --ts 50 100 200

``--pde NAME`` times PINN-BO (given the problem's PDE), Neural-BO and GP-EI on a PDE problem
(e.g. ``heat_bc1``, ``cosine_mixture_pde``)::

    uv run python benchmarks/bench_algorithms.py --pde heat_bc1 --ts 50 100 200
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

import nbo_jax as nbo
from nbo_jax._checks import AUTO_ROWS_PER_REFIT

DEFAULT_ALGOS = ["neural-bo", "neural-ucb", "neural-ts", "neural-greedy", "adaptive-basis", "dngo",
                 "gp-ei", "gp-ucb", "gp-ts", "gp-ntk", "random"]
CONSTRAINED_ALGOS = ["neural-cbo", "gp-cei", "gp-lcb-c"]
PDE_ALGOS = ["pinn-bo", "neural-bo", "gp-ei"]
WIDTH_ALGOS = {"neural-bo", "neural-ucb", "neural-ts", "neural-greedy", "neural-greedy-posterior", "neural-cbo",
               "pinn-bo"}


def seconds_per_iteration(algo, problem, t: int, steps: int) -> tuple[float, float]:
    x0 = nbo.initial_design(jax.random.key(1), problem.bounds, t)
    y0 = jax.vmap(problem.objective)(x0)
    cap = t + (steps + 1) * algo.q
    c0 = None if problem.constraints is None or not algo.constrained else jax.vmap(problem.constraints)(x0)
    init = jax.jit(lambda k, x, y: algo.init(k, x, y, c0, bounds=problem.bounds, capacity=cap))
    state = jax.block_until_ready(init(jax.random.key(0), x0, y0))

    @jax.jit
    def step(state, key):
        x = jnp.reshape(algo.ask(state, key), (algo.q, -1))
        c = jax.vmap(problem.constraints)(x) if c0 is not None else None
        return algo.tell(state, x, jax.vmap(problem.objective)(x), c)

    t0 = time.perf_counter()
    state = jax.block_until_ready(step(state, jax.random.key(2)))
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for r in range(steps):
        state = step(state, jax.random.key(3 + r))
    jax.block_until_ready(state)
    return (time.perf_counter() - t0) / steps, compile_s


def slope(ts, secs) -> float:
    """Least-squares slope of log(seconds) on log(t)."""
    return float(np.polyfit(np.log(ts), np.log(secs), 1)[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dim", type=int, default=10)
    ap.add_argument("--ts", type=int, nargs="+", default=[100, 500, 1000])
    ap.add_argument("--algorithms", nargs="+", default=None, help="default: all unconstrained ones, "
                    "or the constrained ones with --constrained")
    ap.add_argument("--constrained", action="store_true", help="speed reducer and the constrained algorithms")
    ap.add_argument("--pde", default=None, metavar="NAME", help="a PDE problem, with PINN-BO among the algorithms")
    ap.add_argument("--width", type=int, default=None, help="width for the neural methods (default: theirs)")
    ap.add_argument("--steps", type=int, default=20, help="iterations averaged per t (after a compiling one)")
    args = ap.parse_args()

    if args.constrained:
        problem = nbo.benchmarks.get("speed_reducer", noise_std="paper")
        args.algorithms = args.algorithms or CONSTRAINED_ALGOS
    elif args.pde:
        problem = nbo.benchmarks.get(args.pde, noise_std="paper")
        args.algorithms = args.algorithms or PDE_ALGOS
    else:
        problem = nbo.benchmarks.get("ackley", dim=args.dim, noise_std="paper")
        args.algorithms = args.algorithms or DEFAULT_ALGOS
    dev = jax.devices()[0]
    print(f"# seconds per iteration (ask + tell) | {problem.name} d={problem.dim} | jax {jax.__version__} | "
          f"device {dev.platform}:{dev.device_kind}")
    print("| algorithm | " + " | ".join(f"t={t}" for t in args.ts) + " | log-log slope | compile s (first t) |")
    print("|---|" + "---|" * (len(args.ts) + 2))
    slopes = {}
    for name in args.algorithms:
        kwargs = {"width": args.width} if args.width and name in WIDTH_ALGOS else {}
        if nbo.registry.canonical_name(name) == "pinn-bo":
            kwargs.update(operator=problem.operator, source=problem.source)
        if name.startswith("neural-greedy"):
            kwargs["exploration"] = 0  # time the greedy step, not the random exploration phase
        algo = nbo.registry.get(name, **kwargs)
        secs, comp = [], None
        for t in args.ts:
            steps = max(args.steps, -(-t // AUTO_ROWS_PER_REFIT))
            s, c = seconds_per_iteration(algo, problem, t, steps)
            secs.append(s)
            comp = comp if comp is not None else c
        slopes[name] = slope(args.ts, secs) if len(args.ts) > 1 else float("nan")
        print(f"| {name} | " + " | ".join(f"{s:.4f}" for s in secs) + f" | {slopes[name]:.2f} | {comp:.1f} |",
              flush=True)
    gp = [slopes[n] for n in slopes if n.startswith("gp-")]
    if gp and "neural-bo" in slopes:
        print(f"\ngrowth exponent: GP {np.mean(gp):.2f} (mean over {len(gp)} GP variants) vs "
              f"Neural-BO {slopes['neural-bo']:.2f}")


if __name__ == "__main__":
    main()
