"""Shared driver of the Optuna study benchmarks (``optuna_constraints.py``,
``optuna_constrained_multi_objective.py``): Optuna's samplers by name, seeded studies run one
after another, and the one-sided Welch cell of their tables."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable

import numpy as np

from nbo_jax.analysis.stats import welch_one_sided


def optuna_sampler(method: str, seed: int, startup: int):
    """Optuna's sampler ``method`` (``"gpsampler"``, ``"tpe"``, ``"nsga2"`` or ``"random"``)
    seeded with ``seed``, its first ``startup`` trials random (NSGA-II: a first generation of
    ``population_size = startup``).

    Raises:
        ValueError: another ``method``."""
    import optuna

    if method == "gpsampler":
        return optuna.samplers.GPSampler(seed=seed, n_startup_trials=startup)
    if method == "tpe":
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=startup)
    if method == "nsga2":
        return optuna.samplers.NSGAIISampler(seed=seed, population_size=startup)
    if method == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    raise ValueError(f"method must be 'gpsampler', 'tpe', 'nsga2' or 'random', got {method!r}")


def run_studies(sampler: Callable[[int], object], objective: Callable, seeds: int, trials: int,
                directions=("minimize",)) -> tuple[list, float]:
    """``(studies, seconds)``: for ``s = 0, ..., seeds - 1`` a study of ``directions`` with
    ``sampler(s)``, optimized for ``trials`` trials (Optuna's and JAX's warnings silenced)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)  # the samplers' logged warnings too (optuna.nbo_jax's)
    studies, t0 = [], time.perf_counter()
    for s in range(seeds):
        study = optuna.create_study(directions=list(directions), sampler=sampler(s))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            study.optimize(objective, n_trials=trials)
        studies.append(study)
    return studies, time.perf_counter() - t0


def welch_cell(ours: np.ndarray, theirs: np.ndarray) -> str:
    """The one-sided Welch p that the mean of ``ours`` is lower than that of ``theirs``, or in
    parentheses the p that theirs is lower, whichever is smaller (lower is better)."""
    lower, higher = welch_one_sided(theirs, ours), welch_one_sided(ours, theirs)
    return f"{lower:.2g}" if lower <= higher else f"({higher:.2g})"
