"""Time to target (issue 25, item 5): for each problem, the wall seconds each method needs to
first reach the best value the GP reaches at its own budget, in the same run.

Usage::

    uv run python benchmarks/time_to_target.py                                  # the defaults below
    uv run python benchmarks/time_to_target.py --problems ackley --dims 10 20 --iterations 300
    uv run python benchmarks/time_to_target.py --problems michalewicz --in-sequence gp-ei neural-bo
    uv run python benchmarks/time_to_target.py --methods neural-bo dngo gp-ei --seeds 2 --iterations 20 \
        --out /tmp/ttt --force

Problems: Ackley, Levy, Michalewicz at ``--dims`` (10), the paper's noise. Methods:
``--methods`` (``neural-bo gp-ei``; any registry name, each with its library defaults). The
target of a seed is the best noise-free ``f`` the ``--target-method`` (``gp-ei``, run even when
not among ``--methods``) reaches after its ``--iterations`` iterations in that seed; a method's
time to target in that seed is the wall seconds from the start of its run to the first
iteration whose best-so-far noise-free ``f`` is ``<=`` the target. A method that never gets
there within its own ``--iterations`` iterations is "not reached" in that seed.

How a run is timed: the seeds (keys ``split(key(--seed), --seeds)``) run vmapped, with
``run_bo``'s initial design, noise and keys (so the same initial points per seed for every
method, and the same history as ``run_bo(key, algo, problem, n_init, n_iter,
segments=--segments)``), but stepped by a Python loop over a jit-compiled vmapped step (ask,
evaluate, tell) so that the wall clock can be read after every iteration
(``jax.block_until_ready``). The capacity follows the data as in ``run_bo(..., segments=k)``
(``nbo_jax.loop.segment_plan``, ``grow_state`` between segments). Every program (the start:
initial design, observation and ``init``; each segment's step; each growth) is compiled ahead
of time (``jit(...).lower(...).compile()``, the compiled step reused for every iteration of
its segment) before the clock starts, so the run seconds hold no compilation; the "with
compile" figures add the whole compile time up front, as ``run_bo`` compiles its whole loop
before its first step. A batch method (``q > 1``) gets ``ceil(--iterations / q)`` iterations.
``--in-sequence METHOD ...`` runs those methods' seeds one after another instead, through the
programs compiled for one seed, each seed timed from its own start: on a CPU a vmapped GP-EI
step waits for the slowest seed's fit and L-BFGS-B climb, so its vmapped clock charges every
seed with the others' work.

Per problem a markdown table is printed: seeds reaching the target, median time to target
[25%, 75%] over the seeds that reach it (seeds that do not are left out of the quantiles and
counted in the first column), the same with the compile time, median iterations to target, the
total run seconds of all iterations and the compile seconds. A JSON per (problem, d, method)
goes to ``--out`` (``results/time_to_target``): the curves and, once the target's is known,
the times to target; a cached run with the same settings is reused unless ``--force``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time
from collections.abc import Mapping

import jax
import jax.numpy as jnp
import numpy as np

import nbo_jax as nbo
from nbo_jax.loop import grow_state, initial_design, observe, segment_plan

PROBLEMS = ["ackley", "levy", "michalewicz"]
METHODS = ["neural-bo", "gp-ei"]


# --------------------------------------------------------------------------- the numpy core
def time_to_target(best: np.ndarray, times: np.ndarray, target: np.ndarray) -> dict:
    """First iteration at which each seed's best-so-far curve reaches its target.

    Args:
        best: ``(S, T)`` best-so-far values per seed after each iteration (index 0: after the
            initial design), non-increasing.
        times: ``(T,)`` or ``(S, T)`` seconds from the start of the run to the end of each
            iteration.
        target: ``(S,)`` target per seed (reached when ``best <= target``).

    Returns:
        ``{"reached": (S,) bool, "iterations": (S,) int (-1 when not reached), "seconds":
        (S,) float (NaN when not reached)}``.
    """
    best = np.asarray(best, float)
    if best.ndim != 2:
        raise ValueError(f"best must be (S, T), got shape {best.shape}")
    times = np.broadcast_to(np.asarray(times, float), best.shape)
    target = np.asarray(target, float).reshape(-1)
    if target.shape[0] != best.shape[0]:
        raise ValueError(f"target must hold one value per seed ({best.shape[0]}), got {target.shape[0]}")
    hit = best <= target[:, None]
    reached = hit.any(axis=1)
    first = np.argmax(hit, axis=1)
    iterations = np.where(reached, first, -1)
    seconds = np.where(reached, times[np.arange(best.shape[0]), first], np.nan)
    return {"reached": reached, "iterations": iterations, "seconds": seconds}


def median_iqr(values) -> tuple[float, float, float]:
    """``(median, q25, q75)`` of the finite entries (NaNs when there are none), by
    :func:`nbo_jax.analysis.summarize`."""
    v = np.asarray(values, float).reshape(-1)
    if v.size == 0:
        return (float("nan"),) * 3
    row = nbo.analysis.summarize({"values": v})[0]
    return row["median"], row["q25"], row["q75"]


# --------------------------------------------------------------------------- one timed run
def run_timed(algo, problem, *, seeds: int, seed: int = 0, n_init: int, n_iter: int, segments: int,
              in_sequence: bool = False) -> dict:
    """``run_bo``'s run of ``algo`` on ``problem`` for the keys ``split(key(seed), seeds)``,
    vmapped, stepped iteration by iteration with the wall clock read after each. With
    ``in_sequence`` the seeds run one after another through the programs compiled for one
    seed, each with its own clock.

    Returns a dict of plain values: ``best_f`` ``(S, n_iter + 1)`` (best-so-far noise-free
    ``f`` after the initial design and after each iteration), ``run_s`` ``(n_iter + 1,)``
    (seconds from the start of the run to the end of that iteration, no compilation; ``(S,
    n_iter + 1)``, each seed's own, with ``in_sequence``), ``compile_s`` (all programs,
    compiled before the clock starts), ``plan``, ``q``, ``n_iter``, ``in_sequence``.
    """
    dtype = jnp.zeros(()).dtype
    q = algo.q
    plan = segment_plan(n_init, n_iter, q, segments)
    keys = jax.random.split(jax.random.key(seed), seeds)
    batches = [keys[j:j + 1] for j in range(seeds)] if in_sequence else [keys]

    def init_at(key, capacity):  # run_bo's start, per seed
        k_init, k_noise0, k_alg, k_loop = jax.random.split(key, 4)
        x0 = initial_design(k_init, problem.domain, n_init, dtype)
        f0, y0, _, c0 = observe(problem, x0, k_noise0, dtype)
        state = algo.init(k_alg, x0, y0, c0, bounds=problem.domain, capacity=capacity)
        return state, f0, jax.random.split(k_loop, n_iter)

    shapes = [jax.eval_shape(lambda k, c=c: init_at(k, c)[0], keys[0]) for _, c in plan]

    def start(key):
        full, f0, loop_keys = init_at(key, plan[-1][1])
        state = grow_state(None, full, shapes[0]) if len(plan) > 1 else full
        return state, (full if len(plan) > 1 else None), f0, loop_keys

    def step(state, loop_keys, t):  # run_bo's loop body, per seed
        k_ask, k_noise = jax.random.split(loop_keys[t])
        x = jnp.reshape(jnp.asarray(algo.ask(state, k_ask), dtype), (q, -1))
        f, y, _, c = observe(problem, x, k_noise, dtype)
        return algo.tell(state, x, y, c), f

    vstep = jax.vmap(step, in_axes=(0, 0, None))
    t0 = time.perf_counter()
    start_c = jax.jit(jax.vmap(start)).lower(batches[0]).compile()
    state_a, full_a, _, keys_a = jax.eval_shape(jax.vmap(start), batches[0])
    t_arg = np.int32(0)
    steps_c, grows_c = [], [None]
    for j in range(len(plan)):
        if j:
            grow = jax.vmap(lambda s, f, sh=shapes[j]: grow_state(s, f, sh))
            grows_c.append(jax.jit(grow).lower(state_a, full_a).compile())
            state_a = jax.eval_shape(grow, state_a, full_a)
        steps_c.append(jax.jit(vstep, donate_argnums=0).lower(state_a, keys_a, t_arg).compile())
    compile_s = time.perf_counter() - t0

    def timed(batch):
        fs, run_s = [], np.zeros(n_iter + 1)
        t0 = time.perf_counter()
        state, full, f0, loop_keys = jax.block_until_ready(start_c(batch))
        run_s[0] = time.perf_counter() - t0
        t = 0
        for j, (length, _) in enumerate(plan):
            if j:
                state = grows_c[j](state, full)
            for _ in range(length):
                state, f = jax.block_until_ready(steps_c[j](state, loop_keys, np.int32(t)))
                fs.append(f)
                t += 1
                run_s[t] = time.perf_counter() - t0
        b = batch.shape[0]
        return np.concatenate([np.asarray(f0)] + [np.asarray(f).reshape(b, -1) for f in fs], axis=1), run_s

    runs = [timed(batch) for batch in batches]
    f_all = np.concatenate([f for f, _ in runs], axis=0)
    run_s = np.stack([r for _, r in runs]) if in_sequence else runs[0][1]
    best_all = np.minimum.accumulate(np.where(np.isfinite(f_all), f_all, np.inf), axis=1)
    best_f = best_all[:, n_init - 1::q]  # after the initial design, then after each iteration's q points
    return {"best_f": best_f.tolist(), "run_s": run_s.tolist(), "compile_s": compile_s,
            "plan": [list(p) for p in plan], "q": q, "n_iter": n_iter, "in_sequence": in_sequence}


# --------------------------------------------------------------------------- the study
def _path(out, label: str, method: str) -> pathlib.Path:
    return pathlib.Path(out) / f"{label}__{method}.json"


def study(problems, algorithms: Mapping, *, target_method: str, seeds: int, seed: int = 0, n_init: int,
          iterations: int, segments: int, out, force: bool = False, verbose: bool = True,
          in_sequence=()) -> dict:
    """Run (or load) every method on every problem, compute the times to target, save and print.

    ``problems``: ``(label, Problem)`` pairs; ``algorithms``: name -> :class:`BOAlgorithm`
    (must include ``target_method``); ``in_sequence``: the methods whose seeds run one after
    another (:func:`run_timed`). Returns ``{label: {method: record}}``, the records as
    saved in ``out/<label>__<method>.json``.
    """
    if target_method not in algorithms:
        raise ValueError(f"target method {target_method!r} is not among the methods {sorted(algorithms)}")
    order = [target_method] + [m for m in algorithms if m != target_method]
    settings = {"seeds": seeds, "seed": seed, "n_init": n_init, "iterations": iterations, "segments": segments}
    results = {}
    for label, problem in problems:
        records = {}
        for m in order:
            algo = algorithms[m]
            path = _path(out, label, m)
            cached = json.loads(path.read_text()) if path.exists() and not force else None
            m_settings = dict(settings, algorithm=repr(getattr(algo, "config", None)))
            if m in in_sequence:
                m_settings["in_sequence"] = True
            if cached is not None and cached.get("settings") != m_settings:
                if verbose:
                    print(f"  {label} {m}: cached with other settings {cached.get('settings')}; running again")
                cached = None
            if cached is not None:
                rec = cached
                if verbose:
                    print(f"  {label} {m}: cached ({path})", flush=True)
            else:
                n_iter = -(-iterations // algo.q)
                if verbose:
                    print(f"  {label} {m}: {seeds} seeds x ({n_init} + {n_iter} x {algo.q})", flush=True)
                run = run_timed(algo, problem, seeds=seeds, seed=seed, n_init=n_init, n_iter=n_iter,
                                segments=segments, in_sequence=m in in_sequence)
                rec = {"problem": problem.name, "dim": problem.dim, "label": label, "method": m,
                       "settings": m_settings, "device": jax.devices()[0].platform, **run}
                if verbose:
                    print(f"    compile {rec['compile_s']:.1f} s, run {total_run_s(rec):.1f} s, "
                          f"final best f median {np.median(np.asarray(rec['best_f'])[:, -1]):.4g}", flush=True)
            records[m] = rec
        target = np.asarray(records[target_method]["best_f"])[:, -1]
        for m, rec in records.items():
            res = time_to_target(np.asarray(rec["best_f"]), np.asarray(rec["run_s"]), target)
            rec.update(target_method=target_method, target=target.tolist(), reached=res["reached"].tolist(),
                       iterations_to_target=res["iterations"].tolist(),
                       time_to_target_s=[None if not r else float(s) for r, s in zip(res["reached"], res["seconds"])],
                       time_to_target_with_compile_s=[None if not r else float(s) + rec["compile_s"]
                                                      for r, s in zip(res["reached"], res["seconds"])])
            path = _path(out, label, m)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(rec))
        results[label] = records
        if verbose:
            print(table(label, records), flush=True)
    return results


def total_run_s(rec) -> float:
    """The run seconds of all seeds: the vmapped run's, or the sum of the seeds' own."""
    run_s = np.asarray(rec["run_s"])
    return float(run_s[..., -1].sum())


def _fmt(med, q25, q75) -> str:
    return "not reached" if not np.isfinite(med) else f"{med:.3g} [{q25:.3g}, {q75:.3g}]"


def table(label: str, records: Mapping) -> str:
    """The markdown table of one problem (records as :func:`study` returns them)."""
    first = next(iter(records.values()))
    lines = [(f"\n### {label}: time to the {first['target_method']} final best f, per seed "
              f"(targets {np.array2string(np.asarray(first['target']), precision=4)})"),
             "",
             ("| method | seeds reaching the target | time to target s, median [25%, 75%] | with compile s "
              "| iterations to target, median | total run s | compile s |"),
             "|---|---|---|---|---|---|---|"]
    for m, rec in records.items():
        reached = np.asarray(rec["reached"])
        secs = np.array([np.nan if s is None else s for s in rec["time_to_target_s"]])
        iters = np.where(reached, np.asarray(rec["iterations_to_target"]), np.nan)
        med_it = median_iqr(iters)[0]
        lines.append(f"| {m} | {int(reached.sum())}/{reached.size} | {_fmt(*median_iqr(secs))} "
                     f"| {_fmt(*median_iqr(secs + rec['compile_s']))} "
                     f"| {'-' if not np.isfinite(med_it) else f'{med_it:g}'} "
                     f"| {total_run_s(rec):.3g} | {rec['compile_s']:.3g} |")
    lines.append("\n(quantiles over the seeds that reach the target; the others are left out and only counted "
                 "in the second column; times exclude compilation unless marked)")
    return "\n".join(lines)


def main(argv: list | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", nargs="+", default=PROBLEMS)
    ap.add_argument("--dims", type=int, nargs="+", default=[10])
    ap.add_argument("--methods", nargs="+", default=METHODS)
    ap.add_argument("--target-method", default="gp-ei")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0, help="base seed of the keys")
    ap.add_argument("--n-init", type=int, default=10)
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--segments", type=int, default=4)
    ap.add_argument("--out", default="results/time_to_target")
    ap.add_argument("--force", action="store_true", help="run again even when cached")
    ap.add_argument("--in-sequence", nargs="*", default=[], metavar="METHOD",
                    help="methods whose seeds run one after another, each timed alone (default: vmapped)")
    args = ap.parse_args(argv)
    names = list(dict.fromkeys(args.methods + [args.target_method]))
    algorithms = {m: nbo.registry.get(m) for m in names}
    problems = ((f"{p}_d{d}", nbo.benchmarks.get(p, dim=d, noise_std="paper")) for p in args.problems
                for d in args.dims)
    dev = jax.devices()[0]
    print(f"# time to target | {args.seeds} seeds, {args.n_init} + {args.iterations} iterations, "
          f"{args.segments} segments | jax {jax.__version__} | device {dev.platform}:{dev.device_kind}", flush=True)
    t0 = time.perf_counter()
    res = study(problems, algorithms, target_method=args.target_method, seeds=args.seeds, seed=args.seed,
                n_init=args.n_init, iterations=args.iterations, segments=args.segments, out=args.out,
                force=args.force, in_sequence=tuple(args.in_sequence))
    print(f"\ntotal {time.perf_counter() - t0:.0f} s; JSON in {args.out}")
    return res


if __name__ == "__main__":
    main()
