"""Conditional parameters through Optuna: our sampler against Optuna's TPE, GPSampler and random
search on spaces whose parameters depend on a categorical choice.

The problems (``--problem``):

- ``jenatton``: the tree-structured function of Jenatton, Archambeau, Gonzalez and Seeger
  (2017, "Bayesian optimization with tree-structured dependencies", ICML, Section 5.1):
  binary ``x1``, then ``x2`` (if ``x1 = 0``) or ``x3`` (if ``x1 = 1``), then one of
  ``x4, ..., x7`` in ``[-1, 1]`` and the shared ``r8`` (under ``x1 = 0``) or ``r9`` (under
  ``x1 = 1``) in ``[0, 1]``: ``f = x_leaf^2 + c_leaf + r`` with ``c = 0.1, 0.2, 0.3, 0.4`` for
  the leaves ``x4, ..., x7``; minimum 0.1 at ``x1 = x2 = 0``, ``x4 = 0``, ``r8 = 0``.
- ``cash``: combined algorithm selection and hyperparameter optimization (CASH; Thornton,
Hutter, Hoos and Leyton-Brown 2013, "Auto-WEKA") of two of the benchmarks' tuning tasks on
breast cancer with the log loss (:mod:`nbo_jax.benchmarks.tuning`): a categorical
``classifier`` in ``{svc, sgd}``, then the chosen model's own parameters, suggested only when
it is chosen (the SVC's ``C``, ``gamma``, ``kernel``; the SGD classifier's ``alpha``,
``eta0``, ``learning_rate``, ``penalty``); the loss is that task's 3-fold log loss
(``svc_breast_cancer_nll``'s or ``sgd_breast_cancer_nll``'s). Each method runs ``--seeds``
studies of ``--trials`` trials, the first ``--startup`` random, study ``s`` seeded with ``s``:

- ``nbo``: :class:`~nbo_jax.integrations.optuna.NBOSampler` with its defaults (GP-EI; the
  conditional parameters, which only some trials suggest, from the independent sampler, as
  Optuna's ``GPSampler`` samples them);
- ``nbo-impute``: ``NBOSampler(conditional_parameters="impute")``, which models every
  parameter (a trial's unused ones at the values the sampler proposed, or drew);
- ``nbo-flat``: ``NBOSampler()`` on the same problem written flat (every trial suggests every
  parameter and the objective uses the chosen model's);
- ``tpe``, ``tpe-flat``, ``gpsampler``, ``random``: Optuna's samplers (TPE on both forms).

Printed per method: the median [IQR] and mean of the best loss, and the one-sided Welch p that
``nbo-impute``'s mean best loss is lower than each other method's, in parentheses the p that the
other's is lower where that is the smaller one. GPSampler needs torch, which is not a
dependency of nbo_jax::

    uv run --with torch python benchmarks/optuna_conditional.py --problem cash --seeds 30
    uv run --with torch python benchmarks/optuna_conditional.py --problem jenatton --seeds 30
"""

from __future__ import annotations

import argparse

import numpy as np
from _optuna_study import optuna_sampler, run_studies, welch_cell

from nbo_jax.benchmarks import tuning

METHODS = ("nbo", "nbo-impute", "nbo-flat", "tpe", "tpe-flat", "gpsampler", "random")
REFERENCE = "nbo-impute"


def _svc(trial) -> dict:
    return {"C": trial.suggest_float("C", 1e-2, 1e3, log=True),
            "gamma": trial.suggest_float("gamma", 1e-4, 1.0, log=True),
            "kernel": trial.suggest_categorical("kernel", ["rbf", "poly", "sigmoid"])}


def _sgd(trial) -> dict:
    return {"alpha": trial.suggest_float("alpha", 1e-6, 1.0, log=True),
            "eta0": trial.suggest_float("eta0", 1e-4, 1.0, log=True),
            "learning_rate": trial.suggest_categorical("learning_rate", ["optimal", "constant", "invscaling", "adaptive"]),
            "penalty": trial.suggest_categorical("penalty", ["l2", "l1", "elasticnet"])}


def jenatton(trial, flat: bool = False) -> float:
    """Jenatton et al. (2017)'s tree-structured function (module doc); ``flat``: every
    parameter suggested, the branch's used."""
    if flat:
        v = {name: trial.suggest_categorical(name, [0, 1]) for name in ("x1", "x2", "x3")}
        v |= {f"x{i}": trial.suggest_float(f"x{i}", -1.0, 1.0) for i in range(4, 8)}
        v |= {name: trial.suggest_float(name, 0.0, 1.0) for name in ("r8", "r9")}
        get = v.__getitem__
    else:
        def get(name):
            if name in ("x1", "x2", "x3"):
                return trial.suggest_categorical(name, [0, 1])
            return trial.suggest_float(name, *((0.0, 1.0) if name.startswith("r") else (-1.0, 1.0)))
    if get("x1") == 0:
        leaf = 4 if get("x2") == 0 else 5
        r = get("r8")
    else:
        leaf = 6 if get("x3") == 0 else 7
        r = get("r9")
    return get(f"x{leaf}") ** 2 + 0.1 * (leaf - 3) + r


def conditional(trial) -> float:
    """The CASH objective as a practitioner writes it: the model's parameters only when chosen."""
    if trial.suggest_categorical("classifier", ["svc", "sgd"]) == "svc":
        return tuning.cv_loss("svc_breast_cancer_nll", _svc(trial))
    return tuning.cv_loss("sgd_breast_cancer_nll", _sgd(trial))


def flat(trial) -> float:
    """The same objective written flat: every parameter suggested, the chosen model's used."""
    svc = trial.suggest_categorical("classifier", ["svc", "sgd"]) == "svc"
    config_svc, config_sgd = _svc(trial), _sgd(trial)
    return tuning.cv_loss("svc_breast_cancer_nll", config_svc) if svc else tuning.cv_loss("sgd_breast_cancer_nll",
                                                                                          config_sgd)


def _sampler(method: str, seed: int, startup: int):
    from nbo_jax.integrations.optuna import NBOSampler

    if method in ("nbo", "nbo-flat", "nbo-impute"):
        return NBOSampler(seed=seed, n_startup_trials=startup,
                          conditional_parameters="impute" if method == "nbo-impute" else "independent")
    return optuna_sampler(method.removesuffix("-flat"), seed, startup)


PROBLEMS = {"cash": (conditional, flat), "jenatton": (jenatton, lambda trial: jenatton(trial, flat=True))}


def run(method: str, seeds: int, trials: int, startup: int, problem: str = "cash") -> tuple[np.ndarray, float]:
    """``(best value (seeds,), seconds)``."""
    objective = PROBLEMS[problem][method.endswith("-flat")]
    studies, seconds = run_studies(lambda s: _sampler(method, s, startup), objective, seeds, trials)
    return np.array([study.best_value for study in studies]), seconds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problem", default="cash", choices=sorted(PROBLEMS))
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--trials", type=int, default=45)
    ap.add_argument("--startup", type=int, default=10)
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    args = ap.parse_args(argv)
    res = {m: run(m, args.seeds, args.trials, args.startup, args.problem) for m in args.methods}
    what = {"cash": "CASH (SVC or SGD on breast cancer, log loss)", "jenatton": "Jenatton et al. 2017 (minimum 0.1)"}
    print(f"{what[args.problem]}, {args.seeds} seeds, {args.trials} trials ({args.startup} random)")
    print(f"| method | best value, median [IQR] | mean | p: {REFERENCE} lower (other lower) | seconds |")
    print("|---|---|---|---|---|")
    for m, (best, sec) in res.items():
        q = np.percentile(best, [25, 50, 75])
        p = welch_cell(res[REFERENCE][0], best) if m != REFERENCE and REFERENCE in res and args.seeds >= 2 else ""
        print(f"| {m} | {q[1]:.5f} [{q[0]:.5f}, {q[2]:.5f}] | {best.mean():.5f} | {p} | {sec:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
