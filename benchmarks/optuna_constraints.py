"""Constrained studies through Optuna: our sampler against Optuna's GPSampler, TPE and random
search on a mixed problem with black-box constraints.

The problem: the pressure vessel design (Coello Coello & Mezura Montes 2002; BoTorch's
``PressureVessel``, :mod:`nbo_jax.benchmarks.constrained`): shell and head thickness as
stepped floats (``suggest_float(..., step=0.0625)``, 161 values each), radius and length
continuous, four constraints set with ``trial.set_constraint`` (``c <= 0`` feasible; the
volume constraint divided by ``1e6`` so that the four have comparable scales, which changes no
sign; cost and constraints evaluated in float64). With the thicknesses on their step the
constraints see the values the cost sees, and the minimum is the literature's 6059.714 (Yang
et al. 2013, at ``(0.8125, 0.4375, 42.0984, 176.6366)``;
``nbo_jax.benchmarks.constrained.pressure_vessel``, whose constraints see unrounded
thicknesses, goes lower). Each method runs ``--seeds`` studies of ``--trials`` trials, the
first ``--startup`` random (every sampler's ``n_startup_trials``), study ``s`` seeded with
``s``:

- ``nbo``: :class:`~nbo_jax.integrations.optuna.NBOSampler` with its defaults (GP-cEI once the
  trials carry constraints);
- ``nbo-unconstrained``: the same sampler on the objective without the constraints (what
  it did before it read them: GP-EI, every proposal chosen as if unconstrained), scored by
  the constraints afterwards;
- ``gpsampler``, ``tpe``: Optuna's samplers, which read ``trial.set_constraint`` too;
- ``random``;
- ``neural-cbo`` (not run by default): ``NBOSampler("neural-cbo")``, Neural-CBO with its
  defaults (:class:`~nbo_jax.integrations.optuna.NeuralBOSampler` refuses a study with
  constraints).

Printed per method: the median [IQR] of the best feasible value (``inf`` when a study found no
feasible point; counted), the mean fraction of feasible trials after the start-up ones, and the
one-sided Welch p that ``nbo``'s mean best feasible value is lower than each other method's,
in parentheses the p that the other's is lower where that is the smaller one (studies without
a feasible point take the worst feasible value any study found). GPSampler
needs torch, which is not a dependency of nbo_jax::

    uv run --with torch python benchmarks/optuna_constraints.py --seeds 10
"""

from __future__ import annotations

import argparse

import jax
import numpy as np
from _optuna_study import optuna_sampler, run_studies, welch_cell

import nbo_jax as nbo

METHODS = ("nbo", "nbo-unconstrained", "gpsampler", "tpe", "random", "neural-cbo")
DEFAULT_METHODS = METHODS[:5]
F_STAR = 6059.714335  # the minimum with stepped thicknesses (Yang et al. 2013)
SCALE = np.array([1.0, 1.0, 1e-6, 1.0])  # the volume constraint in units of 1e6


def _evaluate(trial, set_constraints: bool) -> float:
    x = np.array([trial.suggest_float("shell", 0.0, 10.0, step=0.0625),
                  trial.suggest_float("head", 0.0, 10.0, step=0.0625),
                  trial.suggest_float("radius", 10.0, 50.0),
                  trial.suggest_float("length", 150.0, 200.0)])
    with jax.enable_x64(True):  # float64: at the optimum two constraints are active
        c = np.asarray(nbo.benchmarks.constrained.pressure_vessel_constraints(x)) * SCALE
        f = float(nbo.benchmarks.constrained.pressure_vessel(x))
    trial.set_user_attr("feasible", bool(np.all(c <= 0)))
    if set_constraints:
        for i, v in enumerate(c):
            trial.set_constraint(f"c{i}", float(v))
    return f


def _sampler(method: str, seed: int, startup: int):
    from nbo_jax.integrations.optuna import NBOSampler

    if method == "neural-cbo":
        return NBOSampler("neural-cbo", seed=seed, n_startup_trials=startup)
    if method in ("nbo", "nbo-unconstrained"):
        return NBOSampler(seed=seed, n_startup_trials=startup)
    return optuna_sampler(method, seed, startup)


def run(method: str, seeds: int, trials: int, startup: int) -> tuple[np.ndarray, np.ndarray, float]:
    """``(best (seeds,), feasible fraction after the start-up trials (seeds,), seconds)``."""
    studies, seconds = run_studies(lambda s: _sampler(method, s, startup),
                                   lambda t: _evaluate(t, method != "nbo-unconstrained"), seeds, trials)
    best, frac = [], []
    for study in studies:
        ok = [t.user_attrs["feasible"] for t in study.trials]
        values = [t.value for t, f in zip(study.trials, ok) if f]
        best.append(min(values) if values else np.inf)
        frac.append(float(np.mean(ok[startup:])))
    return np.array(best), np.array(frac), seconds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--startup", type=int, default=10)
    ap.add_argument("--methods", nargs="+", default=list(DEFAULT_METHODS), choices=METHODS)
    args = ap.parse_args(argv)
    res = {m: run(m, args.seeds, args.trials, args.startup) for m in args.methods}
    worst = max((v for b, _, _ in res.values() for v in b if np.isfinite(v)), default=np.inf)
    print(f"pressure vessel (f* = {F_STAR:.2f}), {args.seeds} seeds, {args.trials} trials ({args.startup} random)")
    print("| method | best feasible value, median [IQR] | studies without a feasible point "
          "| feasible trials after start-up | p: nbo lower (other lower) | seconds |")
    print("|---|---|---|---|---|---|")
    for m, (b, f, sec) in res.items():
        q = np.percentile(b, [25, 50, 75], method="nearest")  # inf (no feasible point) stays inf
        p = ""
        if m != "nbo" and "nbo" in res and args.seeds >= 2:
            p = welch_cell(np.minimum(res["nbo"][0], worst), np.minimum(b, worst))
        print(f"| {m} | {q[1]:.1f} [{q[0]:.1f}, {q[2]:.1f}] | {int(np.sum(~np.isfinite(b)))} | {f.mean():.2f} | {p} "
              f"| {sec:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
