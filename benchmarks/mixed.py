"""Mixed search spaces: our algorithms against Optuna's TPE and GPSampler and random search.

The problems of :mod:`nbo_jax.benchmarks.mixed` (CoCaBO's Func2C and Func3C, Ackley-6 with
three integer inputs; ``--suite synthetic``, the default) and the scikit-learn tuning tasks of
:mod:`nbo_jax.benchmarks.tuning` (``--suite tuning``; ``all`` for both), noise-free,
``--n-init`` + ``--n-iter`` evaluations (Optuna: the same number of trials, its samplers' own
start-up designs), ``--seeds`` seeds. Our algorithms run vmapped over the seeds in one
``run_bo`` (float32; ``--sequential``: one seed after another in one compiled program); each
Optuna study runs alone with ``seed=s`` and suggests floats, integers and categories natively.

Reported per problem and method: the median [IQR] of the best value found, and the
normalized score of Bayesmark (Turner et al. 2021): ``(m_random - best) / (m_random -
best_any)``, 1 = the best value any method found on any seed, 0 = random search's median; and
one-sided Welch p-values that a method's scores are higher than TPE's and than GPSampler's
(:func:`nbo_jax.analysis.stats.welch_one_sided`). Results go to ``--out`` as JSON, each method's with the
:func:`nbo_jax.analysis.environment_info` of its run (versions, machine, source commit). Optuna's
GPSampler needs torch, which is not a dependency of nbo_jax (``--with torch`` adds it)::

    uv run --with torch python benchmarks/mixed.py --seeds 10 --out results/mixed
    uv run python benchmarks/mixed.py --out results/mixed --table-only   # the table again
    uv run python benchmarks/mixed.py --methods gp-ei --update   # rerun one method, keep the others
    uv run --with torch python benchmarks/mixed.py --suite tuning --update   # add the tuning tasks
    uv run --with torch --with botorch python benchmarks/mixed.py --methods botorch --update

``--methods nbo-sampler neural-bo-sampler`` (not run by default) runs our Optuna samplers with
their defaults, as a practitioner's study does (:data:`SAMPLERS`).
``--methods gp-ei-det gp-optuna-det`` (not run by default) runs GP-EI and GPSampler told that
the objective is deterministic (``gp_bo(deterministic=True)``,
``GPSampler(deterministic_objective=True)``).
``--methods botorch`` (not run by default) adds BoTorch's loop for mixed spaces
(``MixedSingleTaskGP``, ``LogExpectedImprovement``, ``optimize_acqf_mixed_alternating``;
:func:`run_botorch`), the reference our GP is compared with.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import time
import warnings

import jax
import jax.numpy as jnp
import numpy as np

import nbo_jax as nbo
from nbo_jax import comparison
from nbo_jax.analysis import environment_info
from nbo_jax.analysis.stats import welch_one_sided
from nbo_jax.benchmarks.mixed import PROBLEMS
from nbo_jax.benchmarks.tuning import TUNING
from nbo_jax.search_space import Categorical, Integer

OURS = ("gp-ei", "neural-bo", "random")
IN_TRUST_REGION = ("gp-ei-tr", "neural-bo-tr")
"""Not run by default: ``<name>-tr`` is ``nbo.trust_region(nbo.registry.get(name))``."""
DIAGNOSTIC = ("gp-ts", "gp-ntk")
"""Not run by default: the GP with Thompson sampling, and with the NTK kernel (and EI), which
separate Neural-BO's acquisition from its kernel (docs, "Mixed search spaces")."""
VARIANTS = {"neural-bo-cat": ("neural-bo", dict(category_weight=0.25, categorical_acquisition="ei")),
            "neural-bo-search": ("neural-bo", dict(acq_optimizer=dict(discrete_search=True))),
            "gp-ei-det": ("gp-ei", dict(deterministic=True)),
            "neural-bo-flat": ("neural-bo", dict(boundary_penalty=0.0))}
"""Not run by default: ``name -> (registry name, options)``; ``neural-bo-cat`` is Neural-BO with
the one-hot columns weighted 0.25 and expected improvement on a space with a category (docs,
"Neural-BO on categories"); ``neural-bo-search`` is Neural-BO whose expected improvement on a
space with a category also takes the optimizer's discrete search (``discrete_search=True``:
the best combination of the categories, then the neighbour search); ``gp-ei-det`` is GP-EI
told that the objective is deterministic (``gp_bo(deterministic=True)``: the noise variance
fixed at its floor), as every problem here is; ``neural-bo-flat`` is Neural-BO without the
boundary penalty on its network (``boundary_penalty=0.0``, its default before; docs "Neural-BO
at the box's faces")."""
RUN_BY_US = OURS + IN_TRUST_REGION + DIAGNOSTIC + tuple(VARIANTS)
"""The methods :func:`run_ours` runs (the others are Optuna's)."""
OPTUNA = ("tpe", "gp-optuna")
OPTUNA_VARIANTS = ("gp-optuna-det",)
"""Not run by default: ``GPSampler(deterministic_objective=True)``, the noise variance fixed at
its minimum (the counterpart of ``gp-ei-det``)."""
SAMPLERS = ("nbo-sampler", "neural-bo-sampler")
"""Not run by default: our samplers through Optuna as a practitioner runs them, with their
defaults (``NBOSampler(seed=s)``: GP-EI after 10 random start-up trials; ``NeuralBOSampler(seed=s)``),
each study alone like TPE's and GPSampler's."""
BOTORCH = ("botorch",)
"""Not run by default (needs ``--with botorch``): BoTorch's mixed-space loop, :func:`run_botorch`."""
BOTORCH_RESTARTS, BOTORCH_RAW_SAMPLES = 10, 512
"""``optimize_acqf_mixed_alternating``'s ``num_restarts`` and ``raw_samples`` in :func:`run_botorch`
(BoTorch's defaults are 20 and 1024; these are the GP baselines' of ``botorch_baseline.py``)."""
SUITES = {"synthetic": list(PROBLEMS), "tuning": list(TUNING), "all": list(PROBLEMS) + list(TUNING)}
ALL = {**PROBLEMS, **TUNING}


def run_ours(name: str, problem, seeds: int, n_init: int, n_iter: int, sequential: bool = False) -> np.ndarray:
    """``(seeds,)`` the best value each seed found, the seeds vmapped or, with ``sequential``,
    one after another in one compiled program (:func:`nbo_jax.comparison.run_methods`)."""
    if name in VARIANTS:
        algo = nbo.registry.get(VARIANTS[name][0], **VARIANTS[name][1])
    elif name.endswith("-tr"):
        algo = nbo.trust_region(nbo.registry.get(name[:-3]))
    else:
        algo = nbo.registry.get(name)
    keys = jax.random.split(jax.random.key(0), seeds)
    hists, _ = comparison.run_methods(problem, {name: algo}, keys, n_init=n_init, n_iter=n_iter, progress=False,
                                      verbose=False, vmap_seeds=not sequential)
    return np.asarray(hists[name]["best_f"][:, -1], np.float64)  # the running minimum of f at the end


def run_optuna(name: str, problem, seeds: int, n_trials: int) -> np.ndarray:
    """``(seeds,)`` the best value of an Optuna study per seed (TPE, GPSampler, one of
    :data:`OPTUNA_VARIANTS` or of :data:`SAMPLERS`)."""
    import optuna

    from nbo_jax.integrations.optuna import NBOSampler, NeuralBOSampler

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    space = problem.bounds
    objective = jax.jit(problem.objective)

    def value(trial):
        x = []
        for p in space.parameters:
            if isinstance(p, Categorical):
                x.append(p.choices.index(trial.suggest_categorical(p.name, list(p.choices))))
            elif isinstance(p, Integer):
                x.append(trial.suggest_int(p.name, p.low, p.high, step=p.step, log=p.log))
            else:
                x.append(trial.suggest_float(p.name, p.low, p.high, log=p.log))
        return float(objective(jnp.asarray(x, jnp.float32)))

    make = {"tpe": optuna.samplers.TPESampler, "gp-optuna": optuna.samplers.GPSampler,
            "gp-optuna-det": lambda seed: optuna.samplers.GPSampler(seed=seed, deterministic_objective=True),
            "nbo-sampler": NBOSampler, "neural-bo-sampler": NeuralBOSampler}[name]
    best = []
    for s in range(seeds):
        study = optuna.create_study(sampler=make(seed=s))
        study.optimize(value, n_trials=n_trials)
        best.append(study.best_value)
    return np.asarray(best, np.float64)


def botorch_encoding(space):
    """``(discrete_dims, cat_dims, to_x)`` of a search space for :func:`run_botorch`: a continuous
    or integer parameter as a column in ``[0, 1]`` (on the log scale when ``log``), an integer's
    allowed values on that scale (``discrete_dims``, column -> values), a category as its index
    (``cat_dims``, column -> ``0.0, ..., k - 1``); ``to_x(z (P,)) -> x (P,)`` float64, the
    point :class:`~nbo_jax.types.Problem` objectives take (an integer rounded to its step, every
    number clipped to its range, an index unchanged). Not the library's unit-cube encoding
    (``SearchSpace.to_unit``): that gives a category one-hot columns and each integer value a
    cell of its column, where a BoTorch user normalizes an integer's range to ``[0, 1]`` and
    passes a category's index."""
    scale, discrete, categorical = [], {}, {}
    for j, p in enumerate(space.parameters):
        if isinstance(p, Categorical):
            categorical[j] = [float(i) for i in range(len(p.choices))]
            continue
        lo, hi = (math.log(p.low), math.log(p.high)) if p.log else (float(p.low), float(p.high))
        scale.append((j, lo, hi, p.log))
        if isinstance(p, Integer):
            vals = np.arange(p.low, p.high + 1, p.step, dtype=np.float64)
            discrete[j] = (((np.log(vals) if p.log else vals) - lo) / (hi - lo)).tolist()

    def to_x(z: np.ndarray) -> np.ndarray:
        x = np.asarray(z, np.float64).copy()
        for j, lo, hi, log in scale:
            p = space.parameters[j]
            v = lo + x[j] * (hi - lo)
            v = math.exp(v) if log else v
            if j in discrete:
                v = p.low + p.step * round((v - p.low) / p.step)
            x[j] = min(max(v, p.low), p.high)  # exp(log(high)) may exceed high by an ulp
        return x

    return discrete, categorical, to_x


def run_botorch(problem, seeds: int, n_init: int, n_iter: int) -> np.ndarray:
    """``(seeds,)`` the best value of BoTorch's loop for mixed spaces (BoTorch >= 0.12, float64),
    seed ``s`` seeding torch with ``s``: ``n_init`` uniformly drawn configurations, then per
    iteration ``MixedSingleTaskGP`` (its default kernel: a sum and a product of a Matern-5/2 on
    the continuous and integer columns and a ``CategoricalKernel`` on the categories, its
    default priors, ``Standardize``; ``SingleTaskGP`` on a space without a category) refitted by ``fit_gpytorch_mll``,
    ``LogExpectedImprovement(best_f = best observation)`` and
    ``optimize_acqf_mixed_alternating`` (:data:`BOTORCH_RESTARTS` restarts from
    :data:`BOTORCH_RAW_SAMPLES` raw samples; Daulton et al. 2022's alternation of L-BFGS-B on
    the continuous columns and a neighbour search on the discrete ones). BoTorch sees a
    continuous or integer parameter in ``[0, 1]`` (log-scaled when ``log``; an integer's allowed
    values on that scale as ``discrete_dims``) and a category as its index (``cat_dims``), and
    maximizes ``-f``."""
    import torch
    from botorch.acquisition import LogExpectedImprovement
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import MixedSingleTaskGP, SingleTaskGP
    from botorch.optim import optimize_acqf_mixed_alternating
    from gpytorch.mlls import ExactMarginalLogLikelihood

    space = problem.bounds
    objective = jax.jit(problem.objective)
    discrete, categorical, to_x = botorch_encoding(space)
    bounds = torch.zeros(2, space.dim, dtype=torch.float64)
    bounds[1] = 1.0
    for j, vals in categorical.items():
        bounds[1, j] = vals[-1]

    allowed = {**discrete, **categorical}  # column -> its values, for the initial design

    def draw(rng) -> np.ndarray:
        z = rng.uniform(size=space.dim)
        for j, vals in allowed.items():
            z[j] = vals[rng.integers(len(vals))]
        return z

    best = []
    with warnings.catch_warnings():  # BoTorch's notices of retried restarts, at every ask
        warnings.filterwarnings("ignore", module="botorch")
        warnings.filterwarnings("ignore", module="linear_operator")
        for s in range(seeds):
            torch.manual_seed(s)
            rng = np.random.default_rng(s)
            Z = np.stack([draw(rng) for _ in range(n_init)])
            f = [float(objective(jnp.asarray(to_x(z), jnp.float32))) for z in Z]
            for _ in range(n_iter):
                X = torch.tensor(Z, dtype=torch.float64)
                Y = -torch.tensor(f, dtype=torch.float64)[:, None]
                model = (MixedSingleTaskGP(X, Y, cat_dims=list(categorical)) if categorical
                         else SingleTaskGP(X, Y))  # no category: BoTorch's standard GP
                fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
                acq = LogExpectedImprovement(model, best_f=Y.max())
                z, _ = optimize_acqf_mixed_alternating(acq, bounds, discrete_dims=discrete or None,
                                                       cat_dims=categorical or None, num_restarts=BOTORCH_RESTARTS,
                                                       raw_samples=BOTORCH_RAW_SAMPLES)
                z = z[0].detach().numpy()
                Z = np.concatenate([Z, z[None]])
                f.append(float(objective(jnp.asarray(to_x(z), jnp.float32))))
            best.append(min(f))
    return np.asarray(best, np.float64)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", choices=list(ALL), help="default: those of --suite")
    parser.add_argument("--suite", choices=list(SUITES), default="synthetic",
                        help="the problems when --problems is not given: synthetic (default), tuning or all")
    parser.add_argument("--methods", nargs="+", default=list(OURS + OPTUNA),
                        choices=list(RUN_BY_US + OPTUNA + OPTUNA_VARIANTS + SAMPLERS + BOTORCH))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--n-init", type=int, default=5)
    parser.add_argument("--n-iter", type=int, default=40)
    parser.add_argument("--out", default="results/mixed")
    parser.add_argument("--table-only", action="store_true", help="print the table of the stored mixed.json")
    parser.add_argument("--update", action="store_true",
                        help="run the given methods and problems only, keeping the stored results of the others")
    parser.add_argument("--sequential", action="store_true",
                        help="run our methods seed after seed instead of vmapped over the seeds")
    args = parser.parse_args(argv)
    args.problems = args.problems or SUITES[args.suite]
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    finals, seconds, environments = {}, {}, {}
    if args.table_only or args.update:
        stored = json.loads((out / "mixed.json").read_text())
        for pname, per in stored["results"].items():
            finals[pname] = {m: np.asarray(r["final"]) for m, r in per.items()}
            seconds[pname] = {m: r["seconds"] for m, r in per.items()}
            environments[pname] = {m: r.get("environment") for m, r in per.items()}  # None: stored before it was kept
        for k in ("seeds", "n_init", "n_iter"):
            if args.table_only or getattr(args, k) != stored["args"][k]:
                if args.update:
                    raise SystemExit(f"--update needs the stored {k} ({stored['args'][k]}), got {getattr(args, k)}")
                setattr(args, k, stored["args"][k])
    for pname in [] if args.table_only else args.problems:
        problem = ALL[pname]()
        for m in args.methods:
            t0 = time.perf_counter()
            if m in RUN_BY_US:
                final = run_ours(m, problem, args.seeds, args.n_init, args.n_iter, args.sequential)
            elif m in BOTORCH:
                final = run_botorch(problem, args.seeds, args.n_init, args.n_iter)
            else:
                final = run_optuna(m, problem, args.seeds, args.n_init + args.n_iter)
            finals.setdefault(pname, {})[m] = final
            seconds.setdefault(pname, {})[m] = time.perf_counter() - t0
            environments.setdefault(pname, {})[m] = environment_info()
            print(f"{pname} {m}: median {np.median(final):.4g} ({seconds[pname][m]:.0f} s)", flush=True)
    results = {}
    for pname, per in finals.items():
        best_any = min(float(np.min(v)) for v in per.values())
        m_random = float(np.median(per["random"])) if "random" in per else float("nan")
        results[pname] = {m: {"final": v.tolist(), "score": ((m_random - v) / (m_random - best_any)).tolist(),
                              "seconds": seconds[pname][m], "environment": environments[pname][m]}
                          for m, v in per.items()}
    methods = list(dict.fromkeys(m for per in results.values() for m in per))
    if not args.table_only:
        args.methods, args.problems = methods, list(results)
        (out / "mixed.json").write_text(json.dumps(dict(args=vars(args), results=results), indent=1))
    print(f"\n{args.seeds} seeds, {args.n_init} + {args.n_iter} evaluations (Optuna's samplers and ours: "
          f"{args.n_init + args.n_iter} trials with their own start-up trials), noise-free; "
          "median [25%, 75%] of the best value; normalized score (Bayesmark) median; "
          "one-sided Welch p that the method's scores are higher than TPE's / GPSampler's\n")
    print("| problem | method | best value | score | p vs TPE | p vs GPSampler |")
    print("|---|---|---|---|---|---|")
    for pname, per in results.items():
        for m, r in per.items():
            f, s = np.asarray(r["final"]), np.asarray(r["score"])
            q = np.percentile(f, [25, 50, 75])
            # welch_one_sided(a, b): small when mean(b) < mean(a); here a = this method's scores
            p = [welch_one_sided(s, np.asarray(per[b]["score"])) if b in per and b != m else float("nan")
                 for b in ("tpe", "gp-optuna")]
            print(f"| {pname} | {m} | {q[1]:.4g} [{q[0]:.4g}, {q[2]:.4g}] | {np.median(s):.3f} | "
                  f"{p[0]:.3g} | {p[1]:.3g} |")
    mean = {m: float(np.mean([np.median(per[m]["score"]) for per in results.values() if m in per]))
            for m in methods}
    print("\nmean over problems of the median score: " + ", ".join(f"{m} {v:.3f}" for m, v in mean.items()))
    print(f"written to {out / 'mixed.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
