"""Multi-objective BO: our algorithms against BoTorch's qLogNEHVI and Optuna's NSGA-II and TPE.

The problems of :mod:`nbo_jax.benchmarks.multi_objective` (default: Branin-Currin, DTLZ2 with
``d = 6, m = 2`` and ZDT2 with ``d = 6``, the targets of issue 60), noise-free, ``--n-init`` +
``--n-iter`` evaluations per seed for every method, ``--seeds`` seeds, every method MINIMIZING
every objective against the problem's ``reference_point``.

- Ours (``gp-ehvi``, ``gp-parego``, ``neural-bo-mo``, ``random``): ``nbo.registry.get(name,
  reference_point=...)`` vmapped over the seeds in one ``run_bo`` (float32; the keys
  ``jax.random.split(jax.random.key(0), seeds)``, so every method of ours starts from the same
  uniform initial design per seed); with ``--sequential``, one seed after another in one
  compiled program with the same keys (GP-EHVI on ZDT2, 10 seeds: 260 s on 2 CPU cores
  instead of more than 30 minutes vmapped); with ``--float64``, under ``jax_enable_x64`` (BoTorch's
  precision), stored as ``<method>-float64``.
- Optuna (``nsga2``, ``tpe``): ``NSGAIISampler(seed=s)`` / ``TPESampler(seed=s)`` with their
  default settings (NSGA-II: population 50) in a study with ``directions=["minimize"] * m``,
  ``n_init + n_iter`` trials.
- BoTorch (``qlognehvi``; needs ``uv run --with botorch``): BoTorch's multi-objective tutorial
  in float64 on the negated objectives (BoTorch maximizes): a ``SingleTaskGP`` with
  ``Standardize`` per objective in a ``ModelListGP`` fitted by ``fit_gpytorch_mll`` every
  step, ``qLogNoisyExpectedHypervolumeImprovement(ref_point = -reference_point,
  X_baseline = the observed points, prune_baseline=True)`` with 128 Sobol QMC samples,
  maximized by ``optimize_acqf(q=1, num_restarts=10, raw_samples=512)`` (Daulton, Balandat &
  Bakshy 2021, "Parallel Bayesian optimization of multiple noisy objectives with expected
  hypervolume improvement", NeurIPS; Ament et al. 2023, "Unexpected improvements to expected
  improvement for Bayesian optimization", NeurIPS). Its initial points per seed are ours (the
  first ``n_init`` rows of our random search's history for that seed). Seeds are written to
  the JSON as they finish, so an interrupted run keeps those it finished.

The metric: the hypervolume of the noise-free objective values of all evaluated points
(recomputed in float64 with :func:`nbo_jax.pareto.hypervolume` for every method) and its log10
difference to the problem's ``max_hypervolume`` at the end
(:func:`nbo_jax.pareto.log_hypervolume_difference`, floored at ``-12``); lower is better.
Printed per problem and method: the median [IQR] of the final log hypervolume difference and
one-sided Welch p-values (:func:`nbo_jax.analysis.stats.welch_one_sided`) that the method's
mean is LOWER than qLogNEHVI's, NSGA-II's and TPE's; for "gp-ehvi level with qLogNEHVI" both
directions are printed (``p(ours lower)`` and ``p(BoTorch lower)``). ``--timing`` prints the
seconds per BO step at ``--timing-n`` observations, mean [min, max] of ``--timing-repeats``
steps: ours consecutive jitted ``ask`` + ``tell`` from a state holding them (after
compilation; the surrogate's scheduled refits fall among them), BoTorch's model fit plus
acquisition optimization. BoTorch's runs write each step's points to
``qlognehvi_<problem>_seed<s>.npy`` in ``--out`` and resume from them::

    uv run python benchmarks/multi_objective.py --out results/multi_objective      # ours + Optuna
    uv run --with botorch python benchmarks/multi_objective.py --methods qlognehvi --update
    uv run python benchmarks/multi_objective.py --table-only
    uv run --with botorch python benchmarks/multi_objective.py --timing --methods gp-ehvi neural-bo-mo qlognehvi
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

import jax
import jax.numpy as jnp
import numpy as np

import nbo_jax as nbo
from nbo_jax import comparison, pareto
from nbo_jax.analysis.stats import welch_one_sided
from nbo_jax.benchmarks.multi_objective import PROBLEMS

OURS = ("gp-ehvi", "gp-parego", "neural-bo-mo", "random")
OPTUNA = ("nsga2", "tpe")
BOTORCH = ("qlognehvi",)
METHODS = OURS + OPTUNA + BOTORCH
TARGETS = ("branin_currin", "dtlz2", "zdt2")
CHOICES = [p for p in PROBLEMS if p != "c2dtlz2"]  # constrained: not compared here
FLOOR = -12.0
"""The log10 hypervolume difference of a run that reaches ``max_hypervolume`` (itself an
approximation for Branin-Currin) is reported as this floor instead of ``-inf``."""


def make_problem(name: str):
    """The problem ``name`` with the issue's sizes (``d = 6``, ``m = 2`` for the DTLZ and ZDT
    families)."""
    six = {"dim": 6}
    kwargs = {"dtlz1": {**six, "n_objectives": 2}, "dtlz2": {**six, "n_objectives": 2},
              "zdt1": six, "zdt2": six, "zdt3": six}.get(name, {})
    return PROBLEMS[name](**kwargs)


def hypervolumes(problem, X: np.ndarray) -> np.ndarray:
    """``(seeds, n)`` float64 hypervolume of the noise-free values of the first ``t + 1``
    evaluated points ``X (seeds, n, d)``, for each ``t`` (:func:`nbo_jax.pareto.hypervolume`)."""
    ref = np.asarray(problem.reference_point, np.float64)
    with jax.enable_x64(True):
        F = jax.vmap(jax.vmap(problem.objective))(jnp.asarray(X, jnp.float64))
        n = F.shape[1]
        prefix = jnp.arange(n)[None, :] <= jnp.arange(n)[:, None]  # (t, row)
        hv = jax.jit(jax.vmap(lambda f: jax.lax.map(lambda rows: pareto.hypervolume(f, ref, rows), prefix)))(F)
        return np.asarray(hv, np.float64)


def log_difference(problem, hv: np.ndarray) -> np.ndarray:
    """log10(max_hypervolume - hv), floored at :data:`FLOOR`."""
    with jax.enable_x64(True):
        out = np.asarray(pareto.log_hypervolume_difference(jnp.asarray(hv, jnp.float64), problem.max_hypervolume))
    return np.maximum(out, FLOOR)


def our_algorithm(name: str, problem):
    return nbo.registry.get(name) if name == "random" else nbo.registry.get(name, reference_point=problem.reference_point)


def run_ours(name: str, problem, seeds: int, n_init: int, n_iter: int, sequential: bool = False) -> np.ndarray:
    """``(seeds, n, d)`` the evaluated points per seed, the seeds vmapped or, with
    ``sequential``, one after another in one compiled program
    (:func:`nbo_jax.comparison.run_methods`)."""
    keys = jax.random.split(jax.random.key(0), seeds)
    hists, _ = comparison.run_methods(problem, {name: our_algorithm(name, problem)}, keys, n_init=n_init,
                                      n_iter=n_iter, progress=False, verbose=False, vmap_seeds=not sequential)
    return np.asarray(hists[name]["x"], np.float64)


def initial_designs(problem, seeds: int, n_init: int) -> np.ndarray:
    """``(seeds, n_init, d)`` the initial points ``run_bo`` draws for our methods per seed."""
    keys = jax.random.split(jax.random.key(0), seeds)
    hist = jax.jit(jax.vmap(lambda k: nbo.run_bo(k, nbo.registry.get("random"), problem, n_init=n_init, n_iter=0)))(keys)
    return np.asarray(hist.x, np.float64)


def run_optuna(name: str, problem, seed: int, n_trials: int) -> np.ndarray:
    """``(n_trials, d)`` the points of one multi-objective Optuna study (NSGA-II or TPE)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    lower, upper = np.asarray(problem.bounds.lower, float), np.asarray(problem.bounds.upper, float)
    objective = jax.jit(problem.objective)
    points = []

    def values(trial):
        x = [trial.suggest_float(f"x{i}", lower[i], upper[i]) for i in range(problem.dim)]
        points.append(x)
        return tuple(float(v) for v in objective(jnp.asarray(x, jnp.float32)))

    sampler = (optuna.samplers.NSGAIISampler(seed=seed) if name == "nsga2"
               else optuna.samplers.TPESampler(seed=seed))
    study = optuna.create_study(directions=["minimize"] * problem.n_objectives, sampler=sampler)
    study.optimize(values, n_trials=n_trials)
    return np.asarray(points, np.float64)


def _botorch_model(train_x, train_obj):
    """BoTorch's tutorial model: one ``SingleTaskGP`` (``Standardize``) per objective,
    fitted (returns the ``ModelListGP``)."""
    from botorch import fit_gpytorch_mll
    from botorch.models import ModelListGP, SingleTaskGP
    from botorch.models.transforms.outcome import Standardize
    from gpytorch.mlls import SumMarginalLogLikelihood

    models = [SingleTaskGP(train_x, train_obj[:, i:i + 1], outcome_transform=Standardize(m=1))
              for i in range(train_obj.shape[-1])]
    model = ModelListGP(*models)
    fit_gpytorch_mll(SumMarginalLogLikelihood(model.likelihood, model))
    return model


def _botorch_step(model, train_x, ref_point, dim: int):
    """One qLogNEHVI candidate ``(1, d)`` in the unit cube."""
    import torch
    from botorch.acquisition.multi_objective.logei import (
        qLogNoisyExpectedHypervolumeImprovement,
    )
    from botorch.optim import optimize_acqf
    from botorch.sampling.normal import SobolQMCNormalSampler

    acq = qLogNoisyExpectedHypervolumeImprovement(
        model=model, ref_point=ref_point, X_baseline=train_x, prune_baseline=True,
        sampler=SobolQMCNormalSampler(sample_shape=torch.Size([128])))
    unit = torch.stack([torch.zeros(dim), torch.ones(dim)]).to(train_x)
    cand, _ = optimize_acqf(acq, bounds=unit, q=1, num_restarts=10, raw_samples=512,
                            options={"batch_limit": 5, "maxiter": 200}, sequential=True)
    return cand


def run_botorch(problem, seed: int, x0: np.ndarray, n_iter: int, checkpoint=None, log=None) -> np.ndarray:
    """``(n_init + n_iter, d)`` the points of one qLogNEHVI run from the initial design
    ``x0 (n_init, d)`` (box coordinates), on the unit cube, float64. ``checkpoint``: a
    ``.npy`` path holding the unit-cube points so far, written after every step and resumed
    from when it exists (a run that is stopped loses one step at most)."""
    import torch

    lower, upper = np.asarray(problem.bounds.lower, float), np.asarray(problem.bounds.upper, float)
    with jax.enable_x64(True):
        f = jax.jit(jax.vmap(problem.objective))

        def negated(u):  # unit-cube points -> BoTorch's objectives to maximize
            return torch.as_tensor(-np.asarray(f(jnp.asarray(lower + u.numpy() * (upper - lower)))))

        train_x = torch.as_tensor((x0 - lower) / (upper - lower), dtype=torch.float64)
        if checkpoint is not None and checkpoint.exists():
            train_x = torch.as_tensor(np.load(checkpoint), dtype=torch.float64)
        train_obj = negated(train_x)
        ref_point = (-np.asarray(problem.reference_point, float)).tolist()
        for t in range(train_x.shape[0] - x0.shape[0], n_iter):
            torch.manual_seed(1000 * seed + t)
            t0 = time.perf_counter()
            model = _botorch_model(train_x, train_obj)
            cand = _botorch_step(model, train_x, ref_point, problem.dim).detach()
            train_x = torch.cat([train_x, cand])
            train_obj = torch.cat([train_obj, negated(cand)])
            if checkpoint is not None:
                np.save(checkpoint, train_x.numpy())
            if log is not None:
                line = f"  qlognehvi seed {seed}: step {t + 1}/{n_iter} ({time.perf_counter() - t0:.1f} s)"
                if (t + 1) % 10 == 0:  # one hypervolume compilation per shape
                    hv = hypervolumes(problem, (lower + train_x.numpy() * (upper - lower))[None])[0, -1]
                    line += f", log10 HV difference {float(log_difference(problem, hv)):.3f}"
                log(line)
    return lower + train_x.numpy() * (upper - lower)


def time_ours(name: str, problem, n: int, repeats: int) -> list:
    """Seconds of each of ``repeats`` consecutive jitted ``ask`` + ``tell`` steps from a state
    holding ``n`` observations (capacity ``n + repeats``), after compilation: the surrogate's
    refit schedule decides which of them refit the hyperparameters (``"auto"``: every second
    tell from 100 rows), so their mean is the cost per step at ``n`` observations."""
    algo = our_algorithm(name, problem)
    key = jax.random.key(1)
    lower, upper = np.asarray(problem.bounds.lower), np.asarray(problem.bounds.upper)
    x0 = jnp.asarray(lower + np.random.default_rng(0).random((n, problem.dim)) * (upper - lower), jnp.float32)
    y0 = jax.vmap(problem.objective)(x0)
    state = algo.init(key, x0, y0, bounds=problem.bounds, capacity=n + repeats)

    @jax.jit
    def step(state, key):
        x = jnp.reshape(algo.ask(state, key), (algo.q, -1))
        return algo.tell(state, x, jax.vmap(problem.objective)(x))

    jax.block_until_ready(step(state, key))
    times = []
    for r in range(repeats):
        t0 = time.perf_counter()
        state = jax.block_until_ready(step(state, jax.random.key(2 + r)))
        times.append(time.perf_counter() - t0)
    return times


def time_botorch(problem, n: int, repeats: int) -> list:
    """Seconds of ``repeats`` BoTorch steps (model fit + qLogNEHVI optimization) at ``n``
    observations."""
    import torch

    torch.manual_seed(0)
    train_x = torch.as_tensor(np.random.default_rng(0).random((n, problem.dim)), dtype=torch.float64)
    lower, upper = np.asarray(problem.bounds.lower, float), np.asarray(problem.bounds.upper, float)
    with jax.enable_x64(True):
        train_obj = torch.as_tensor(-np.asarray(jax.vmap(problem.objective)(
            jnp.asarray(lower + train_x.numpy() * (upper - lower)))))
    ref_point = (-np.asarray(problem.reference_point, float)).tolist()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        _botorch_step(_botorch_model(train_x, train_obj), train_x, ref_point, problem.dim)
        times.append(time.perf_counter() - t0)
    return times


def _load(path: pathlib.Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {"args": {}, "results": {}}


def _save(path: pathlib.Path, stored: dict, mine: set) -> None:
    """Write ``stored``'s entries ``(problem, method)`` in ``mine`` (and its args and timing)
    over the file's current content, so that processes running other methods in parallel
    (``--update``) keep theirs."""
    current = _load(path)
    for pname, m in mine:
        current["results"].setdefault(pname, {})[m] = stored["results"][pname][m]
    current["args"] = stored["args"]
    if "timing" in stored:
        current["timing"] = stored["timing"]
    tmp = path.with_suffix(f".{id(stored)}.tmp")
    tmp.write_text(json.dumps(current, indent=1))
    tmp.replace(path)


def _record(problem, X: np.ndarray, seeds: list, seconds: float) -> dict:
    hv = hypervolumes(problem, X)
    return {"seeds": seeds, "final_log_hv_difference": log_difference(problem, hv[:, -1]).tolist(),
            "final_hypervolume": hv[:, -1].tolist(), "hypervolume": hv.tolist(), "seconds": seconds}


def _welch(per: dict, m: str, b: str, reverse: bool) -> float:
    """One-sided Welch p that method ``m``'s mean final log HV difference is lower than
    ``b``'s (``reverse``: that ``b``'s is lower); NaN without two seeds of each."""
    if b not in per or b == m or len(per[b]["seeds"]) < 2 or len(per[m]["seeds"]) < 2:
        return float("nan")
    v, w = (np.asarray(per[k]["final_log_hv_difference"]) for k in (m, b))
    # welch_one_sided(baseline, method): small when mean(method) < mean(baseline)
    return welch_one_sided(v, w) if reverse else welch_one_sided(w, v)


def print_table(stored: dict) -> None:
    a = stored["args"]
    print(f"\n{a['seeds']} seeds, {a['n_init']} + {a['n_iter']} evaluations, noise-free; final log10 hypervolume "
          f"difference to the true front (lower is better): median [25%, 75%]; one-sided Welch p that the "
          f"method's mean is lower than the named baseline's ('BoTorch lower': qLogNEHVI's lower than the "
          f"method's)\n")
    print("| problem | method | seeds | log10 HV difference | p < qLogNEHVI | p BoTorch lower | p < NSGA-II "
          "| p < TPE |")
    print("|---|---|---|---|---|---|---|---|")
    for pname, per in stored["results"].items():
        for m, r in per.items():
            v = np.asarray(r["final_log_hv_difference"])
            q = np.percentile(v, [25, 50, 75])

            ps = [_welch(per, m, b, reverse) for b, reverse in
                  (("qlognehvi", False), ("qlognehvi", True), ("nsga2", False), ("tpe", False))]
            print(f"| {pname} | {m} | {len(v)} | {q[1]:.3f} [{q[0]:.3f}, {q[2]:.3f}] | "
                  + " | ".join(f"{x:.3g}" for x in ps) + " |")
    timing = stored.get("timing")
    if timing:
        print(f"\nseconds per BO step at {timing['n']} observations: mean [min, max] of {timing['repeats']} steps "
              "(ours: consecutive jitted ask + tell after compilation, the scheduled refits included; qLogNEHVI: "
              "model fit + optimize_acqf)\n")
        print("| problem | " + " | ".join(timing["methods"]) + " |")
        print("|---|" + "---|" * len(timing["methods"]))
        for pname, per in timing["seconds"].items():
            print(f"| {pname} | " + " | ".join(f"{np.mean(per[m]):.3g} [{np.min(per[m]):.3g}, {np.max(per[m]):.3g}]"
                                               if m in per else "" for m in timing["methods"]) + " |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", choices=CHOICES, default=list(TARGETS))
    parser.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(OURS + OPTUNA),
                        help="default: ours and Optuna's (qlognehvi needs uv run --with botorch)")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--n-init", type=int, default=10)
    parser.add_argument("--n-iter", type=int, default=100)
    parser.add_argument("--out", default="results/multi_objective")
    parser.add_argument("--table-only", action="store_true", help="print the tables of the stored JSON")
    parser.add_argument("--update", action="store_true",
                        help="run the given methods and problems only, keeping the stored results of the others")
    parser.add_argument("--sequential", action="store_true",
                        help="run our methods seed after seed instead of vmapped over the seeds")
    parser.add_argument("--float64", action="store_true",
                        help="run our methods with jax_enable_x64, stored as '<method>-float64'")
    parser.add_argument("--timing", action="store_true", help="time one BO step per method instead of running")
    parser.add_argument("--timing-n", type=int, default=100)
    parser.add_argument("--timing-repeats", type=int, default=5)
    args = parser.parse_args(argv)
    if args.float64:
        if any(m not in OURS for m in args.methods) or args.timing or args.table_only:
            raise SystemExit("--float64 runs our methods only (--methods among " + ", ".join(OURS) + ")")
        jax.config.update("jax_enable_x64", True)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "multi_objective.json"
    stored = _load(path) if (args.table_only or args.update or args.timing) else {"args": {}, "results": {}}
    if args.table_only:
        print_table(stored)
        return 0
    for k in ("seeds", "n_init", "n_iter"):
        if args.update and stored["args"] and getattr(args, k) != stored["args"][k]:
            raise SystemExit(f"--update needs the stored {k} ({stored['args'][k]}), got {getattr(args, k)}")
    if args.timing:
        seconds = {}
        for pname in args.problems:
            problem = make_problem(pname)
            for m in args.methods:
                s = (time_botorch(problem, args.timing_n, args.timing_repeats) if m in BOTORCH
                     else time_ours(m, problem, args.timing_n, args.timing_repeats) if m in OURS else None)
                if s is not None:
                    seconds.setdefault(pname, {})[m] = s
                    print(f"{pname} {m}: {np.mean(s):.3g} s per step (each: {np.round(s, 3).tolist()})", flush=True)
        stored["timing"] = {"n": args.timing_n, "repeats": args.timing_repeats,
                            "methods": [m for m in args.methods if m not in OPTUNA], "seconds": seconds}
        stored["args"] = stored["args"] or {k: getattr(args, k) for k in ("seeds", "n_init", "n_iter")}
        _save(path, stored, set())
        print_table(_load(path))
        return 0
    if not args.update:
        path.unlink(missing_ok=True)
    mine = set()
    stored["args"] = {k: getattr(args, k) for k in ("seeds", "n_init", "n_iter")}
    for pname in args.problems:
        problem = make_problem(pname)
        for m in args.methods:
            t0 = time.perf_counter()
            name = f"{m}-float64" if args.float64 else m  # the stored name (--float64: ours only)
            if m in OURS:
                X = run_ours(m, problem, args.seeds, args.n_init, args.n_iter, args.sequential)
                stored["results"].setdefault(pname, {})[name] = _record(problem, X, list(range(args.seeds)),
                                                                        time.perf_counter() - t0)
            else:
                x0 = initial_designs(problem, args.seeds, args.n_init) if m in BOTORCH else None
                rows = []
                for s in range(args.seeds):
                    rows.append(run_optuna(m, problem, s, args.n_init + args.n_iter) if m in OPTUNA
                                else run_botorch(problem, s, x0[s], args.n_iter, log=lambda t: print(t, flush=True),
                                                 checkpoint=out / f"qlognehvi_{pname}_seed{s}.npy"))
                    stored["results"].setdefault(pname, {})[m] = _record(problem, np.stack(rows), list(range(s + 1)),
                                                                         time.perf_counter() - t0)
                    mine.add((pname, m))
                    _save(path, stored, mine)
                    print(f"{pname} {m} seed {s}: log10 HV difference "
                          f"{stored['results'][pname][m]['final_log_hv_difference'][-1]:.3f}", flush=True)
            mine.add((pname, name))
            _save(path, stored, mine)
            v = stored["results"][pname][name]["final_log_hv_difference"]
            print(f"{pname} {name}: median log10 HV difference {np.median(v):.3f} ({time.perf_counter() - t0:.0f} s)",
                  flush=True)
    print_table(_load(path))
    print(f"written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
