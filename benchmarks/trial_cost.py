"""The cost of a practitioner's study: wall time of 30-trial Optuna studies of a cheap objective
with a float, an integer and a categorical parameter, the first study in a fresh process and
the next ones (which reuse compiled code), for Optuna's TPE and GPSampler and our samplers.

Run one sampler per process (the first study's time includes the process's compilations)::

    uv run --with torch python benchmarks/trial_cost.py --sampler tpe
    uv run --with torch python benchmarks/trial_cost.py --sampler gp-optuna
    uv run python benchmarks/trial_cost.py --sampler gp-ei
    uv run python benchmarks/trial_cost.py --sampler neural-bo
"""

from __future__ import annotations

import argparse
import math
import time


def objective(trial) -> float:
    x = trial.suggest_float("x", -3.0, 3.0)
    n = trial.suggest_int("n", 1, 8)
    kind = trial.suggest_categorical("kind", ["a", "b", "c"])
    return (x - 1.0) ** 2 + 0.1 * (n - 3) ** 2 + {"a": 0.5, "b": 0.0, "c": 0.3}[kind] + 0.01 * math.sin(5 * x)


def sampler_of(name: str, seed: int):
    import optuna

    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if name == "gp-optuna":
        return optuna.samplers.GPSampler(seed=seed)
    from nbo_jax.integrations.optuna import NBOSampler

    return NBOSampler(name, seed=seed)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sampler", required=True, help="tpe, gp-optuna, or a registry name (gp-ei, neural-bo, ...)")
    parser.add_argument("--studies", type=int, default=3)
    parser.add_argument("--trials", type=int, default=30)
    args = parser.parse_args(argv)
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    for s in range(args.studies):
        t0 = time.perf_counter()
        study = optuna.create_study(sampler=sampler_of(args.sampler, s))
        study.optimize(objective, n_trials=args.trials)
        print(f"{args.sampler} study {s + 1}: {time.perf_counter() - t0:.1f} s, best {study.best_value:.4f} "
              f"{study.best_params}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
