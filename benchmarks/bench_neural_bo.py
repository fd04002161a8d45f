"""Neural-BO speed: seconds per BO iteration vs number of observations t, per posterior mode;
compile time; 8 vmapped seeds against 8 sequential runs.

Usage (defaults are the issue's sizes: d = 10, width 500, 2048 raw samples, 50 epochs)::

    uv run python benchmarks/bench_neural_bo.py
    uv run python benchmarks/bench_neural_bo.py --ts 100 500 --modes dual --repeats 2
    # the authors' Ackley-2 settings (width 200, 10,000 candidates; their step: 2.56 s)
    uv run python benchmarks/bench_neural_bo.py --dim 2 --width 200 --candidates 10000 --ts 100

An iteration is one ``ask`` (the preset's acquisition: library default = pathwise Thompson
sample scored on the raw samples and climbed from the best ones; ``--preset paper`` =
candidate features, posterior variances, independent draws) plus one ``tell`` (TrainNN on all t observations for ``--epochs`` epochs, posterior update),
jit-compiled, timed after compilation with ``jax.block_until_ready``. The state at ``t``
holds t observations with capacity ``t + 10`` (a run that will go on). The vmap ratio is
the wall time of ``jax.vmap(run_bo)`` over 8 keys divided by that of 8 sequential
``run_bo`` calls (same compiled sizes; compilation excluded from both).
"""

from __future__ import annotations

import argparse
import platform
import time

import jax
import jax.numpy as jnp
import numpy as np

import nbo_jax as nbo
from nbo_jax import posterior as post_lib


def _time(fn, repeats):
    jax.block_until_ready(fn())  # warm (compiled already)
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        best = min(best, time.perf_counter() - t0)
    return best


def build(args, mode="auto"):
    """Neural-BO at the preset's settings with ``--candidates`` raw samples; the fitted scales
    (library default) run in dual form, so the other modes are timed with fixed scales."""
    from nbo_jax.algorithms.neural_bo import PRESETS

    aopt = PRESETS[args.preset]["acq_optimizer"]._replace(raw_samples=args.candidates)
    scales = None if mode in ("auto", "dual") else "fixed"
    return nbo.neural_bo(width=args.width, posterior=mode, preset=args.preset, acq_optimizer=aopt,
                         epochs=args.epochs, scales=scales)


def per_iteration(args, mode, t):
    problem = nbo.benchmarks.get("ackley", dim=args.dim, noise_std="paper")
    algo = build(args, mode)
    x0 = nbo.initial_design(jax.random.key(1), problem.bounds, t)
    y0 = jax.vmap(problem.objective)(x0)
    init = jax.jit(lambda k, x, y: algo.init(k, x, y, bounds=problem.bounds, capacity=t + 10))
    state = jax.block_until_ready(init(jax.random.key(0), x0, y0))

    @jax.jit
    def step(state, key):
        x = algo.ask(state, key)
        return algo.tell(state, x, problem.objective(x))

    t0 = time.perf_counter()
    jax.block_until_ready(step(state, jax.random.key(2)))
    compile_s = time.perf_counter() - t0
    secs = _time(lambda: step(state, jax.random.key(3)), args.repeats)
    ask = jax.jit(algo.ask)
    jax.block_until_ready(ask(state, jax.random.key(2)))
    ask_s = _time(lambda: ask(state, jax.random.key(3)), args.repeats)
    return secs, ask_s, compile_s


def num_params(args) -> int:
    """The network's parameter count as the algorithm builds it (biases and the preset's input
    embedding included: the quarter circle below d = 20 doubles the first layer's inputs), from
    the shapes of its ``init`` (``jax.eval_shape``: nothing is trained or computed)."""
    problem = nbo.benchmarks.get("ackley", dim=args.dim, noise_std="paper")
    algo = build(args)
    x0 = jax.ShapeDtypeStruct((4, args.dim), jnp.zeros(()).dtype)
    y0 = jax.ShapeDtypeStruct((4,), jnp.zeros(()).dtype)
    state = jax.eval_shape(lambda x, y: algo.init(jax.random.key(0), x, y, bounds=problem.bounds, capacity=5), x0, y0)
    return sum(int(np.prod(leaf.shape)) for leaf in jax.tree.leaves(state.params0))


def vmap_ratio(args):
    problem = nbo.benchmarks.get("ackley", dim=args.dim, noise_std="paper")
    algo = build(args)
    keys = jax.random.split(jax.random.key(0), args.seeds)
    run = lambda k: nbo.run_bo(k, algo, problem, n_init=10, n_iter=args.vmap_iters)
    t0 = time.perf_counter()
    jax.block_until_ready(run(keys[0]))
    compile_single = time.perf_counter() - t0
    batched = jax.jit(jax.vmap(run))
    t0 = time.perf_counter()
    jax.block_until_ready(batched(keys))
    compile_vmap = time.perf_counter() - t0
    seq = _time(lambda: [run(k) for k in keys], 1)
    vm = _time(lambda: batched(keys), 1)
    return seq, vm, compile_single, compile_vmap


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dim", type=int, default=10)
    ap.add_argument("--width", type=int, default=500)
    ap.add_argument("--candidates", type=int, default=2048)
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--preset", default="default", choices=["default", "paper"])
    ap.add_argument("--ts", type=int, nargs="+", default=[100, 500, 1000])
    ap.add_argument("--modes", nargs="+", default=["dual", "full", "diagonal"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--vmap-iters", type=int, default=20)
    ap.add_argument("--skip-vmap", action="store_true")
    args = ap.parse_args()

    p = num_params(args)
    dev = jax.devices()[0]
    print(f"# nbo_jax Neural-BO benchmark | jax {jax.__version__} | device {dev.platform}:{dev.device_kind} "
          f"| {platform.processor() or platform.machine()} | dtype {jnp.zeros(()).dtype}")
    print(f"# d={args.dim} width={args.width} p={p} raw samples={args.candidates} epochs={args.epochs} "
          f"preset={args.preset}")
    print(f"# auto mode picks: " + ", ".join(f"t={t}: {post_lib.choose_mode(p, t + 10)}" for t in args.ts))
    print()
    print("| mode | t | s / iteration (ask+tell) | s / ask | compile s |")
    print("|---|---|---|---|---|")
    for mode in args.modes:
        for t in args.ts:
            secs, ask_s, comp = per_iteration(args, mode, t)
            print(f"| {mode} | {t} | {secs:.3f} | {ask_s:.3f} | {comp:.1f} |", flush=True)
    if not args.skip_vmap:
        seq, vm, c1, cv = vmap_ratio(args)
        print()
        print(f"vmap: {args.seeds} seeds x (10 + {args.vmap_iters}) evaluations, auto posterior")
        print(f"  sequential {seq:.2f} s | vmapped {vm:.2f} s | ratio vmapped/sequential {vm / seq:.2f}")
        print(f"  compile: single run {c1:.1f} s (incl. first run) | vmapped {cv:.1f} s (incl. first run)")


if __name__ == "__main__":
    main()
