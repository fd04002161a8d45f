"""Constrained studies of two objectives through Optuna: our sampler against Optuna's
GPSampler, TPE, NSGA-II and random search.

Two problems (``--problem``). ``srn`` (Srinivas & Deb 1994; BoTorch's ``SRN``): ``x in [-20,
20]^2``, ``f_1 = 2 + (x_1 - 2)^2 + (x_2 - 1)^2``, ``f_2 = 9 x_1 - (x_2 - 1)^2``, feasible where
``x_1^2 + x_2^2 <= 225`` and ``x_1 - 3 x_2 + 10 <= 0``; part of its constrained front lies on
the constraints' boundaries (the unconstrained front ``x_1 = -2.5`` is cut by the second), so
the constraints decide where the front is. Reference point ``(250, 0)``; the hypervolume of
the feasible front, ``30694.70``, is that of points along ``x_1 = -2.5`` and both constraint
boundaries (400001 each; 4 million uniform random points added to them change it by 6e-4).
``c2dtlz2``: C2-DTLZ2 (Jain & Deb 2014, Section VI-A; BoTorch's ``C2DTLZ2``;
:func:`nbo_jax.benchmarks.multi_objective.c2dtlz2`), ``d = 6`` floats in ``[0, 1]``, two
objectives minimized, one constraint set with ``trial.set_constraint`` (``c <= 0``
feasible: the parts of DTLZ2's spherical front near its ends and its middle, so that the
unconstrained front holds the feasible one), evaluated in float64; reference point ``(1.1,
1.1)``, the feasible front's hypervolume ``0.38233``. Each
method runs ``--seeds`` studies of ``--trials`` trials, the first ``--startup`` random (every
sampler's ``n_startup_trials``; NSGA-II's first generation, of ``population_size =
--startup``, is random too), study ``s`` seeded with ``s``:

- ``nbo``: :class:`~nbo_jax.integrations.optuna.NBOSampler` with its defaults (GP-EHVI-C,
  ``"gp-ehvi-c"``, once the trials carry constraints);
- ``nbo-reference``: ``NBOSampler(nbo.gp_bo(acquisition="ehvi-c", reference_point=...))``,
  GP-EHVI-C given the problem's reference point (``nbo`` infers one from the observed front
  at each trial);
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

    uv run --with torch python benchmarks/optuna_constrained_multi_objective.py --problem srn --seeds 10
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np
from _optuna_study import optuna_sampler, run_studies, welch_cell

import nbo_jax as nbo

METHODS = ("nbo", "nbo-reference", "nbo-unconstrained", "gpsampler", "tpe", "nsga2", "random")
PROBLEMS = ("srn", "c2dtlz2")
SRN_HV_STAR = 30694.70


def srn(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SRN's ``(f (2,), c (2,))`` at ``x (2,)`` (Srinivas & Deb 1994; ``c <= 0`` feasible)."""
    f = np.array([2.0 + (x[0] - 2.0) ** 2 + (x[1] - 1.0) ** 2, 9.0 * x[0] - (x[1] - 1.0) ** 2])
    return f, np.array([x[0] ** 2 + x[1] ** 2 - 225.0, x[0] - 3.0 * x[1] + 10.0])


def _problem(name: str = "c2dtlz2"):
    """``(dimension, lower, upper, reference point, HV*, f_and_c)``."""
    if name == "srn":
        return 2, -20.0, 20.0, (250.0, 0.0), SRN_HV_STAR, srn
    problem = nbo.benchmarks.multi_objective.c2dtlz2(dim=6, n_objectives=2)

    def f_and_c(x):
        with jax.enable_x64(True):
            u = jnp.asarray(x, jnp.float64)
            return np.asarray(problem.objective(u), dtype=float), np.asarray(problem.constraints(u), dtype=float)

    return 6, 0.0, 1.0, problem.reference_point, problem.max_hypervolume, f_and_c


def _evaluate(trial, problem, set_constraints: bool) -> tuple[float, float]:
    dim, lower, upper, _, _, f_and_c = problem
    f, c = f_and_c(np.array([trial.suggest_float(f"x{i}", lower, upper) for i in range(dim)]))
    trial.set_user_attr("feasible", bool(np.all(c <= 0)))
    if set_constraints:
        for i, v in enumerate(c):
            trial.set_constraint(f"c{i}", float(v))
    return float(f[0]), float(f[1])


def _sampler(method: str, seed: int, startup: int, reference=None):
    from nbo_jax.integrations.optuna import NBOSampler

    if method == "nbo-reference":
        return NBOSampler(nbo.gp_bo(acquisition="ehvi-c", reference_point=reference), seed=seed,
                          n_startup_trials=startup)
    if method in ("nbo", "nbo-unconstrained"):
        return NBOSampler(seed=seed, n_startup_trials=startup)
    return optuna_sampler(method, seed, startup)


def feasible_hypervolume(values: np.ndarray, feasible: np.ndarray, reference) -> float:
    """The hypervolume of the feasible rows of ``values (n, 2)`` below ``reference (2,)``
    (:func:`nbo_jax.pareto.hypervolume` with ``feasible`` as its mask; 0 when none is)."""
    with jax.enable_x64(True):
        return float(nbo.pareto.hypervolume(jnp.asarray(values, jnp.float64), jnp.asarray(reference, jnp.float64),
                                            jnp.asarray(feasible, bool)))


def run(method: str, seeds: int, trials: int, startup: int, name: str = "c2dtlz2"
        ) -> tuple[np.ndarray, np.ndarray, float]:
    """``(log10(HV* - HV) (seeds,), feasible fraction after the start-up trials (seeds,),
    seconds)`` on problem ``name``."""
    problem = _problem(name)
    _, _, _, reference, hv_star, _ = problem
    studies, seconds = run_studies(lambda s: _sampler(method, s, startup, reference),
                                   lambda t: _evaluate(t, problem, method != "nbo-unconstrained"), seeds, trials,
                                   directions=("minimize", "minimize"))
    gap, frac = [], []
    for study in studies:
        ok = np.array([t.user_attrs["feasible"] for t in study.trials])
        hv = feasible_hypervolume(np.array([t.values for t in study.trials]), ok, reference)
        gap.append(np.log10(max(hv_star - hv, 1e-12)))
        frac.append(float(np.mean(ok[startup:])))
    return np.array(gap), np.array(frac), seconds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--startup", type=int, default=10)
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--problem", default="srn", choices=PROBLEMS)
    ap.add_argument("--per-seed", action="store_true", help="also print each method's value per seed")
    args = ap.parse_args(argv)
    res = {m: run(m, args.seeds, args.trials, args.startup, args.problem) for m in args.methods}
    dim, _, _, reference, hv_star, _ = _problem(args.problem)
    print(f"{args.problem} (d = {dim}, m = 2, reference point {reference}, HV* = {hv_star:.6g}), {args.seeds} seeds, "
          f"{args.trials} trials ({args.startup} random)")
    print("| method | log10(HV* - HV), median [IQR] | feasible trials after start-up | p: nbo lower (other lower) "
          "| seconds |")
    print("|---|---|---|---|---|")
    for m, (g, f, sec) in res.items():
        q = np.percentile(g, [25, 50, 75])
        p = ""
        if m != "nbo" and "nbo" in res and args.seeds >= 2:
            p = welch_cell(res["nbo"][0], g)
        print(f"| {m} | {q[1]:.3f} [{q[0]:.3f}, {q[2]:.3f}] | {f.mean():.2f} | {p} | {sec:.0f} |")
    if args.per_seed:
        for m, (g, _, _) in res.items():
            print(f"{m}: {' '.join(f'{v:.4f}' for v in g)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
