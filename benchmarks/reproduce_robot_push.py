"""Robot pushing, 14-D (Wang and Jegelka 2017; Phan-Trong 2024, PhD thesis, Section 3.5,
Figure 3.5): median best reward against evaluations, Neural-BO against GP-EI and random search.

The thesis setting (``--thesis``): 15 initial points, up to 6000 evaluations, 10 seeds. The
default is CPU-sized: 15 initial points + 100 evaluations, 5 seeds. Every method sees the
same initial points per seed. Simulations run in this process (about 2 ms each); the
simulator is deterministic (the authors' velocity noise is off, see
:mod:`nbo_jax.benchmarks.robot_push`), ``--noise-std`` adds observation noise.

Usage::

    uv run python benchmarks/reproduce_robot_push.py --out results/robot_push
    uv run python benchmarks/reproduce_robot_push.py --seeds 5 --iterations 60
    uv run python benchmarks/reproduce_robot_push.py --thesis          # 10 x 6000, days on a CPU
    uv run python benchmarks/reproduce_robot_push.py --ask-tell-batches 5 --ask-tell-q 4

Writes the histories and tables of :func:`nbo_jax.comparison.compare` under ``--out``, and
``robot_push_best_reward.png`` (median best reward with the 25-75% band); prints the time
per simulation and the median [q25, q75] best reward per method. With
``--ask-tell-batches B`` it also runs :func:`optimize_with_ask_tell` (below)
(the reference method through ``nbo.AskTell``, ``B`` batches of ``--ask-tell-q`` points).
"""

from __future__ import annotations

import pathlib
import time

import numpy as np
from _study import run_from_args, study_parser

import nbo_jax as nbo
from nbo_jax.benchmarks import robot_push as rp

METHODS = ["neural-bo", "gp-ei", "random"]
THESIS = {"n_init": 15, "iterations": 6000 - 15, "seeds": 10}



def optimize_with_ask_tell(algorithm, n_init: int, n_iter: int, q: int,
                           seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Maximize the reward with :class:`nbo_jax.AskTell`, simulating each batch of ``q``
    asked points with :func:`nbo_jax.benchmarks.robot_push.evaluate_batch` (the pattern for any simulator outside JAX;
    replace ``evaluate_batch`` by a call to your own cluster to run a batch in parallel).

    ``n_init`` points are drawn uniformly in the box (``numpy.random.default_rng(seed)``),
    then ``n_iter`` batches of ``q`` points are asked and told (``y = -reward``).

    Args:
        algorithm: a registry name (built with ``q``, e.g. ``"gp-ei"``) or a
            :class:`~nbo_jax.types.BOAlgorithm` whose ``q`` equals ``q``.
        n_init: initial points (>= 1); n_iter: batches (>= 0); q: points per batch (>= 1);
        seed: seeds the initial design and the algorithm's key.

    Returns:
        ``(x, reward)``: ``(n_init + n_iter q, 14)`` float64 points in evaluation order and
        their ``(n_init + n_iter q,)`` float64 rewards.

    Raises:
        ValueError / TypeError: bad counts, an unknown algorithm name, ``algorithm.q != q``.
    """
    import jax

    import nbo_jax as nbo
    from nbo_jax._checks import check_int

    n_init, n_iter, q = check_int("n_init", n_init, 1), check_int("n_iter", n_iter, 0), check_int("q", q, 1)
    seed = check_int("seed", seed, 0)
    algo = nbo.registry.get(algorithm, q=q) if isinstance(algorithm, str) else algorithm
    if getattr(algo, "q", q) != q:
        raise ValueError(f"algorithm {algo.name!r} asks q = {algo.q} points per batch, but q = {q}")
    x0 = np.random.default_rng(seed).uniform(rp.LOWER, rp.UPPER, size=(n_init, rp.DIM))
    opt = nbo.AskTell(algo, (rp.LOWER, rp.UPPER), capacity=n_init + n_iter * q, key=jax.random.key(seed),
                  x0=x0, y0=-rp.evaluate_batch(x0))
    for _ in range(n_iter):
        X = np.asarray(opt.ask()).reshape(q, rp.DIM)
        opt.tell(X, -rp.evaluate_batch(X))
    return opt.x, -opt.y


def time_simulations(n: int) -> tuple[float, float]:
    """Seconds per simulation of ``n`` random points in this process: wall and CPU time."""
    X = np.random.default_rng(123).uniform(rp.LOWER, rp.UPPER, size=(n, rp.DIM))
    w0, c0 = time.perf_counter(), time.process_time()
    rp.evaluate_batch(X)
    return (time.perf_counter() - w0) / n, (time.process_time() - c0) / n


def plot_best_reward(results, path: pathlib.Path, metric) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for res in results:
        for method, hist in res.histories.items():
            curve = metric.curve(hist)  # (S, n)
            n = np.arange(1, curve.shape[1] + 1)
            q25, med, q75 = np.percentile(curve, [25, 50, 75], axis=0)
            (line,) = ax.plot(n, med, label=method)
            ax.fill_between(n, q25, q75, color=line.get_color(), alpha=0.2)
    ax.axhline(rp.F_MAX, color="k", ls=":", lw=1, label=f"f_max = {rp.F_MAX:.2f} (upper bound)")
    ax.set_xlabel("evaluations")
    ax.set_ylabel("best reward (median, 25-75%)")
    ax.set_title("Robot pushing 14-D (Wang and Jegelka 2017)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main():
    ap = study_parser(__doc__, problems=["robot_push"], methods=METHODS, iterations=100, out="results/robot_push")
    ap.set_defaults(n_init=15)
    ap.add_argument("--thesis", action="store_true",
                    help=f"the thesis setting: {THESIS['n_init']} initial points, {THESIS['n_init'] + THESIS['iterations']} "
                         f"evaluations, {THESIS['seeds']} seeds (overrides --n-init, --iterations, --seeds)")
    ap.add_argument("--noise-std", type=float, default=0.0, help="observation noise on -reward (m)")
    ap.add_argument("--ask-tell-batches", type=int, default=0, help="also run the ask/tell example (0: skip)")
    ap.add_argument("--ask-tell-q", type=int, default=4, help="points per ask/tell batch")
    args = ap.parse_args()
    if args.thesis:
        args.n_init, args.iterations, args.seeds = THESIS["n_init"], THESIS["iterations"], THESIS["seeds"]
    args.problems = ["robot_push"]

    wall, cpu = time_simulations(200)
    print(f"simulation: {wall * 1e3:.2f} ms wall ({cpu * 1e3:.2f} ms CPU) each, in this process", flush=True)

    problem = rp.robot_push(noise_std=args.noise_std)
    results = run_from_args(args, [("robot_push", problem)],
                            lambda p: {m: nbo.registry.get(m) for m in args.methods},
                            script="reproduce_robot_push",
                            welch_title="one-sided Welch t-tests vs {reference} (p, BH decision)")
    out = pathlib.Path(args.out)
    plot_best_reward(results, out / "robot_push_best_reward.png", problem.metric)
    print(f"\nbest reward after {args.n_init + args.iterations} evaluations, median [q25, q75] over {args.seeds} "
          f"seeds (f_max = {rp.F_MAX:.4f}):")
    for method, hist in results[0].histories.items():
        final = problem.metric.final(hist)
        q25, med, q75 = np.percentile(final, [25, 50, 75])
        print(f"  {method:>10}: {med:.3f} [{q25:.3f}, {q75:.3f}]")
    print(f"plot: {out / 'robot_push_best_reward.png'}")

    if args.ask_tell_batches > 0:
        t0 = time.perf_counter()
        _, reward = optimize_with_ask_tell(args.methods[0], n_init=args.n_init, n_iter=args.ask_tell_batches,
                                              q=args.ask_tell_q, seed=0)
        print(f"\nask/tell ({args.methods[0]}, {args.ask_tell_batches} batches of {args.ask_tell_q}): best reward "
              f"{reward.max():.3f} after {len(reward)} evaluations, {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
