"""Constrained studies of two objectives through Optuna: our sampler against Optuna's
GPSampler, TPE, NSGA-II and random search.

The problem: C2-DTLZ2 (Jain & Deb 2014, Section VI-A; BoTorch's ``C2DTLZ2``;
:func:`nbo_jax.benchmarks.multi_objective.c2dtlz2`), ``d = 6`` floats in ``[0, 1]``, two
objectives minimized, one constraint set with ``trial.set_constraint`` (``c <= 0``
feasible: the parts of DTLZ2's spherical front near its ends and its middle), evaluated in
float64; reference point ``(1.1, 1.1)``, the feasible front's hypervolume ``0.38233``. Each
method runs ``--seeds`` studies of ``--trials`` trials, the first ``--startup`` random (every
sampler's ``n_startup_trials``; NSGA-II's first generation, of ``population_size =
--startup``, is random too), study ``s`` seeded with ``s``:

- ``nbo``: :class:`~nbo_jax.integrations.optuna.NBOSampler` with its defaults (GP-EHVI-C,
  ``"gp-ehvi-c"``, once the trials carry constraints);
- ``nbo-unconstrained``: the same sampler on the objectives without the constraints (GP-EHVI,
  every proposal chosen as if unconstrained), scored with the constraints afterwards;
- ``gpsampler`` (``LogCEHVI``), ``tpe``, ``nsga2``: Optuna's samplers, which read
  ``trial.set_constraint`` too;
- ``random``.

Printed per method: the median [IQR] of ``log10(HV* - HV)`` of the feasible trials' values
(lower is better), the mean fraction of feasible trials after the start-up ones, and the
one-sided Welch p that ``nbo``'s mean is lower than each other method's, in parentheses the p
that the other's is lower where that is the smaller one. GPSampler needs torch, which is not
a dependency of nbo_jax::

    uv run --with torch python benchmarks/optuna_constrained_multi_objective.py --seeds 10
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np
from _optuna_study import optuna_sampler, run_studies, welch_cell

import nbo_jax as nbo

METHODS = ("nbo", "nbo-unconstrained", "gpsampler", "tpe", "nsga2", "random")
REFERENCE = (1.1, 1.1)


def _problem():
    return nbo.benchmarks.multi_objective.c2dtlz2(dim=6, n_objectives=2)


def _evaluate(trial, problem, set_constraints: bool) -> tuple[float, float]:
    x = np.array([trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(6)])
    with jax.enable_x64(True):
        f = np.asarray(problem.objective(jnp.asarray(x, jnp.float64)), dtype=float)
        c = np.asarray(problem.constraints(jnp.asarray(x, jnp.float64)), dtype=float)
    trial.set_user_attr("feasible", bool(np.all(c <= 0)))
    if set_constraints:
        for i, v in enumerate(c):
            trial.set_constraint(f"c{i}", float(v))
    return float(f[0]), float(f[1])


def _sampler(method: str, seed: int, startup: int):
    from nbo_jax.integrations.optuna import NBOSampler

    if method in ("nbo", "nbo-unconstrained"):
        return NBOSampler(seed=seed, n_startup_trials=startup)
    return optuna_sampler(method, seed, startup)


def feasible_hypervolume(values: np.ndarray, feasible: np.ndarray) -> float:
    """The hypervolume of the feasible rows of ``values (n, 2)`` below :data:`REFERENCE`."""
    Y = np.asarray(values, dtype=float)[np.asarray(feasible, dtype=bool)]
    if len(Y) == 0:
        return 0.0
    with jax.enable_x64(True):
        return float(nbo.pareto.hypervolume(jnp.asarray(Y), jnp.asarray(REFERENCE)))


def run(method: str, seeds: int, trials: int, startup: int) -> tuple[np.ndarray, np.ndarray, float]:
    """``(log10(HV* - HV) (seeds,), feasible fraction after the start-up trials (seeds,),
    seconds)``."""
    problem = _problem()
    studies, seconds = run_studies(lambda s: _sampler(method, s, startup),
                                   lambda t: _evaluate(t, problem, method != "nbo-unconstrained"), seeds, trials,
                                   directions=("minimize", "minimize"))
    gap, frac = [], []
    for study in studies:
        ok = np.array([t.user_attrs["feasible"] for t in study.trials])
        hv = feasible_hypervolume(np.array([t.values for t in study.trials]), ok)
        gap.append(np.log10(max(problem.max_hypervolume - hv, 1e-12)))
        frac.append(float(np.mean(ok[startup:])))
    return np.array(gap), np.array(frac), seconds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--startup", type=int, default=10)
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    args = ap.parse_args(argv)
    res = {m: run(m, args.seeds, args.trials, args.startup) for m in args.methods}
    print(f"C2-DTLZ2 (d = 6, m = 2, HV* = {_problem().max_hypervolume:.5f}), {args.seeds} seeds, {args.trials} trials "
          f"({args.startup} random)")
    print("| method | log10(HV* - HV), median [IQR] | feasible trials after start-up | p: nbo lower (other lower) "
          "| seconds |")
    print("|---|---|---|---|---|")
    for m, (g, f, sec) in res.items():
        q = np.percentile(g, [25, 50, 75])
        p = ""
        if m != "nbo" and "nbo" in res and args.seeds >= 2:
            p = welch_cell(res["nbo"][0], g)
        print(f"| {m} | {q[1]:.3f} [{q[0]:.3f}, {q[2]:.3f}] | {f.mean():.2f} | {p} | {sec:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
