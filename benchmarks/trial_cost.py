"""The cost of a practitioner's study: wall time of 30-trial Optuna studies of a cheap objective
with a float, an integer and a categorical parameter, the first study in a fresh process and
the next ones (which reuse compiled code), for Optuna's TPE and GPSampler and our samplers.

Every sampler, each in its own fresh process, interleaved over repetitions; one table of
medians with the ratios to GPSampler (GPSampler needs torch)::

    uv run --with torch python benchmarks/trial_cost.py --all --repeats 3

One sampler in this process (the first study's time includes the process's compilations)::

    uv run python benchmarks/trial_cost.py --sampler gp-ei

``--cache-dir DIR`` turns on JAX's persistent compilation cache in the processes
(``jax_compilation_cache_dir``): with ``--all`` a first pass fills it, and the table is the
first study with a warm disk cache. ``--objective-seconds S`` makes every evaluation sleep
``S`` seconds (a practitioner's objective); the table then reports each study's time beyond
the objective's (the sampler's own cost).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

SAMPLERS = ("tpe", "gp-optuna", "gp-ei", "neural-bo")
_SLEEP = [0.0]


def objective(trial) -> float:
    x = trial.suggest_float("x", -3.0, 3.0)
    n = trial.suggest_int("n", 1, 8)
    kind = trial.suggest_categorical("kind", ["a", "b", "c"])
    if _SLEEP[0]:
        time.sleep(_SLEEP[0])
    return (x - 1.0) ** 2 + 0.1 * (n - 3) ** 2 + {"a": 0.5, "b": 0.0, "c": 0.3}[kind] + 0.01 * math.sin(5 * x)


def sampler_of(name: str, seed: int):
    import optuna

    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if name == "gp-optuna":
        return optuna.samplers.GPSampler(seed=seed)
    from nbo_jax.integrations.optuna import NBOSampler

    return NBOSampler(name, seed=seed)


def run_studies(sampler: str, studies: int, trials: int, quiet: bool = False) -> list[float]:
    """Seconds of each of ``studies`` consecutive studies in this process, beyond the objective's
    sleep (the first one includes importing the sampler's library and compiling)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    times = []
    for s in range(studies):
        t0 = time.perf_counter()
        study = optuna.create_study(sampler=sampler_of(sampler, s))
        study.optimize(objective, n_trials=trials)
        times.append(time.perf_counter() - t0 - trials * _SLEEP[0])
        if not quiet:
            print(f"{sampler} study {s + 1}: {times[-1]:.1f} s, best {study.best_value:.4f} {study.best_params}",
                  flush=True)
    return times


def _fresh(sampler: str, args, env) -> list[float]:
    """The study times of one fresh process."""
    cmd = [sys.executable, __file__, "--sampler", sampler, "--studies", str(args.studies), "--trials",
           str(args.trials), "--objective-seconds", str(args.objective_seconds), "--json"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def run_all(args) -> None:
    """Every sampler in fresh processes, interleaved over ``args.repeats`` repetitions; prints
    the table of medians and the ratios to GPSampler."""
    env = dict(os.environ)
    if args.cache_dir:
        env["JAX_COMPILATION_CACHE_DIR"] = os.path.abspath(args.cache_dir)
        for s in args.samplers:  # fill the disk cache
            if s not in ("tpe", "gp-optuna"):
                _fresh(s, args, env)
    first = {s: [] for s in args.samplers}
    later = {s: [] for s in args.samplers}
    for r in range(args.repeats):
        for s in args.samplers:
            times = _fresh(s, args, env)
            first[s].append(times[0])
            later[s].extend(times[1:])
            print(f"repeat {r + 1}: {s}: " + ", ".join(f"{t:.1f}" for t in times) + " s", flush=True)
    ref_first = statistics.median(first["gp-optuna"]) if "gp-optuna" in first else float("nan")
    ref_later = statistics.median(later["gp-optuna"]) if later.get("gp-optuna") else float("nan")
    what = f"seconds beyond the objective's {args.objective_seconds} s each" if args.objective_seconds else "wall seconds"
    cache = f", JAX compilation cache warm ({args.cache_dir})" if args.cache_dir else ""
    print(f"\n{args.trials}-trial studies, {what}, medians of {args.repeats} fresh processes{cache}\n")
    print("| sampler | first study (s) | later studies (s) | first / GPSampler's | later / GPSampler's |")
    print("|---|---:|---:|---:|---:|")
    for s in args.samplers:
        f = statistics.median(first[s])
        later_s = statistics.median(later[s]) if later[s] else float("nan")
        print(f"| {s} | {f:.1f} | {later_s:.2f} | {f / ref_first:.2f} | {later_s / ref_later:.2f} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sampler", help="tpe, gp-optuna, or a registry name (gp-ei, neural-bo, ...)")
    parser.add_argument("--all", action="store_true", help="every sampler, each in fresh processes; one table")
    parser.add_argument("--samplers", nargs="+", default=list(SAMPLERS), help="the samplers of --all")
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per sampler with --all")
    parser.add_argument("--studies", type=int, default=3)
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--objective-seconds", type=float, default=0.0, help="each evaluation sleeps this long")
    parser.add_argument("--cache-dir", help="JAX's persistent compilation cache (filled first) with --all")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    _SLEEP[0] = args.objective_seconds
    if args.all:
        run_all(args)
    elif args.sampler:
        times = run_studies(args.sampler, args.studies, args.trials, quiet=args.json)
        if args.json:
            print(json.dumps(times))
    else:
        parser.error("give --sampler NAME or --all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
