"""COCO benchmarking campaigns: BO algorithms on the BBOB suites, logged in COCO's data format.

COCO (Hansen, Auger, Ros, Mersmann, Tušar & Brockhoff 2021) scores an optimizer by the
fraction of (function, target) pairs it solves within a budget of evaluations (runtime
ECDFs). :func:`run_campaign` runs every algorithm on every (function, dimension, instance)
of a suite with a budget of ``budget_multiplier * d`` evaluations, and :func:`postprocess`
calls ``cocopp`` on the result (ECDFs per dimension and function group, aRT tables, against
the best algorithm of BBOB-2009 that ``cocopp`` ships).

**How the data is made exact.** For each algorithm, dimension and function, ``run_bo`` runs
all instances at once (``jax.vmap``, one compilation per algorithm and dimension), with
every value computed by ``cocoex`` through :func:`jax.pure_callback`
(:mod:`nbo_jax.benchmarks.bbob`). The points of each run are then *replayed*, in the order
they were evaluated, through a fresh ``cocoex`` problem observed by COCO's own ``Observer``:
the logs are written by COCO's code, and every replayed value is checked to equal the value
the algorithm saw (a mismatch raises). A replay costs one extra evaluation per point
(about a microsecond each); the callback lets one compiled program run a whole vmapped
batch, which a Python ask/tell loop over problems would not.

**Layout of ``out``**::

    out/campaign.json                   the settings (a resumed campaign must match them)
    out/<algorithm>/<batch>[-NNN]/      COCO's data folder of one process (.info, data_f*/)
    out/<algorithm>/nbo-jax/done-<batch>.txt    units finished: "function dimension instance"
    out/<algorithm>/nbo-jax/f003_d02.npz        the runs' x, f (float64, as logged; and c), for our tables

**Resuming and splitting.** A unit (algorithm, dimension, ``functions_per_run`` functions with
all their instances) is
recorded as done after its replay; a rerun with the same ``out`` skips done units and logs
the rest into a new data folder beside the old (COCO appends ``-001``), and ``cocopp``
merges the folders of an algorithm. ``batch=(k, n)`` runs every n-th unit starting at the
k-th, so n processes split a campaign (COCO's own batch mechanism does the same per problem).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
import pathlib
import re
import time
from typing import Callable, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from .benchmarks import bbob
from .loop import run_bo
from .types import BOAlgorithm

__all__ = [
    "CampaignSettings",
    "CampaignReport",
    "ECDF_TARGETS",
    "default_n_init",
    "parse_range",
    "unit_key",
    "run_campaign",
    "read_runs",
    "solved_fractions",
    "reference_solved_fractions",
    "solved_fractions_table",
    "run_fractions",
    "paired_comparison",
    "BBOB_GROUPS",
    "plot_ecdf",
    "postprocess",
]

BBOB_GROUPS = {
    "separable": tuple(range(1, 6)),
    "moderate": tuple(range(6, 10)),
    "ill-conditioned": tuple(range(10, 15)),
    "multimodal": tuple(range(15, 20)),
    "weakly structured": tuple(range(20, 25)),
}
"""BBOB's five function groups (Hansen et al. 2009, "Real-parameter black-box optimization
benchmarking 2009: noiseless functions definitions"), as ``cocopp`` groups its ECDFs."""

ECDF_TARGETS = 10.0 ** np.linspace(2, -8, 51)
"""COCO's default ECDF targets for ``bbob``: 51 precisions ``f - f_opt`` from 1e2 to 1e-8."""


def default_n_init(dimension: int, budget: int) -> int:
    """Initial design size: ``2 (d + 1)`` uniform points (BoTorch's tutorials' convention),
    at most half the budget."""
    return max(1, min(2 * (dimension + 1), budget // 2))


def parse_range(text: str, name: str) -> tuple[int, ...]:
    """``"1-5,10,12-13"`` -> ``(1, 2, 3, 4, 5, 10, 12, 13)`` (sorted, unique).

    Raises:
        ValueError: a malformed item or an empty range (the message names ``name``)."""
    out = set()
    for item in str(text).split(","):
        item = item.strip()
        low, dash, high = item.partition("-")
        try:
            lo = int(low)
            hi = int(high) if dash else lo
        except ValueError:
            raise ValueError(f"{name}: expected integers and ranges like '1-5,10', got {text!r}") from None
        if hi < lo:
            raise ValueError(f"{name}: empty range {item!r} in {text!r}")
        out.update(range(lo, hi + 1))
    return tuple(sorted(out))


@dataclasses.dataclass(frozen=True)
class CampaignSettings:
    """What a campaign's results depend on (stored as ``campaign.json``; a resumed campaign
    must have the same). ``algorithms`` maps each name to the repr of its factory call."""

    suite: str
    instances: tuple
    budget_multiplier: float
    n_init: Optional[int]
    seed: int
    x64: bool
    algorithms: dict

    def to_json(self) -> dict:
        return dict(dataclasses.asdict(self), instances=list(self.instances))


@dataclasses.dataclass
class CampaignReport:
    """What :func:`run_campaign` did: units run and skipped (already done), seconds of
    ``run_bo`` (compilation included) and of replay through COCO's observer, per algorithm."""

    ran: list
    skipped: list
    run_seconds: dict
    replay_seconds: dict
    evaluations: dict
    folders: dict


def unit_key(seed: int, function: int, dimension: int, instance: int):
    """The PRNG key of one run: the same for every algorithm (so all share the initial design
    of a problem) and independent of how a campaign is batched or resumed."""
    key = jax.random.key(seed)
    for value in (function, dimension, instance):
        key = jax.random.fold_in(key, value)
    return key


def _budget(multiplier: float, dimension: int) -> int:
    return int(math.floor(multiplier * dimension + 1e-9))


def _sizes(settings: CampaignSettings, q: int, dimension: int) -> tuple[int, int]:
    budget = _budget(settings.budget_multiplier, dimension)
    n_init = settings.n_init if settings.n_init is not None else default_n_init(dimension, budget)
    if n_init > budget:
        raise ValueError(f"n_init={n_init} exceeds the budget {settings.budget_multiplier} x {dimension} = {budget}")
    return n_init, (budget - n_init) // q


class _Runner:
    """One jit-compiled, instance-vmapped ``run_bo`` per (algorithm, dimension) (per function
    too on ``bbob-constrained``, whose constraint count depends on the function)."""

    def __init__(self):
        self._compiled: dict = {}

    def __call__(self, algorithm: BOAlgorithm, suite, functions, dimension, instances, n_init, n_iter, keys,
                 in_sequence: bool = False):
        """Run every (function, instance) pair of ``functions x instances`` (vmapped, in
        that order; with ``in_sequence`` one after another by ``jax.lax.map`` in the same
        single program, as :func:`nbo_jax.comparison.run_methods` runs seeds in sequence)."""
        static_f = functions[0] if suite == "bbob-constrained" else None
        cache_key = (id(algorithm), suite, dimension, n_init, n_iter, static_f, in_sequence)
        if cache_key not in self._compiled:
            def one(key, f, i):
                problem = bbob.problem(static_f if static_f is not None else f, dimension, i, suite)
                return run_bo(key, algorithm, problem, n_init, n_iter)
            many = (lambda k, f, i: jax.lax.map(lambda a: one(*a), (k, f, i))) if in_sequence else jax.vmap(one)
            self._compiled[cache_key] = (algorithm, jax.jit(many))
        fs = jnp.repeat(jnp.asarray(functions, jnp.int32), len(instances))
        ins = jnp.tile(jnp.asarray(instances, jnp.int32), len(functions))
        return self._compiled[cache_key][1](keys, fs, ins)


def _done_units(folder: pathlib.Path) -> set:
    done = set()
    for path in sorted((folder / "nbo-jax").glob("done-*.txt")):
        for line in path.read_text().splitlines():
            parts = line.split()
            if len(parts) == 3:
                done.add(tuple(int(p) for p in parts))
    return done


def _check_settings(out: pathlib.Path, settings: CampaignSettings) -> None:
    path = out / "campaign.json"
    new = settings.to_json()
    if path.exists():
        old = json.loads(path.read_text())
        for key in ("suite", "instances", "budget_multiplier", "n_init", "seed", "x64"):
            if old.get(key) != new[key]:
                raise ValueError(f"out: {str(out)!r} holds a campaign with {key}={old.get(key)!r}, not {new[key]!r}; "
                                 "resume with the same settings or use a new folder")
        for name, config in new["algorithms"].items():
            if name in old.get("algorithms", {}) and old["algorithms"][name] != config:
                raise ValueError(f"out: {str(out)!r} holds {name!r} built as {old['algorithms'][name]}, not {config}; "
                                 "resume with the same options or use a new folder")
        new["algorithms"] = {**old.get("algorithms", {}), **new["algorithms"]}
    out.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".campaign-{os.getpid()}.json")  # atomic: batches may start together
    tmp.write_text(json.dumps(new, indent=2) + "\n")
    os.replace(tmp, path)


_OBSERVER_INFO = "nbo-jax"  # COCO's algorithm_info; the settings are in campaign.json
# cocoex 2.8.2 aborts the whole process ("COCO FATAL ERROR: coco_vstrdupf(): string is too
# long") when outer folder + result folder + algorithm info exceed 154 characters (measured;
# 5 go to the "-0001" COCO appends on a resume): run_campaign refuses longer ones first.
_COCO_PATH_LIMIT = 154 - 5


def _observer(cocoex, suite: str, out: pathlib.Path, name: str, batch_tag: str):
    # Options as COCO's own "key: value" string: cocoex 2.8's dict form drops a trailing "u"
    # from values (an out folder "coco_cpu" became "coco_cp", an algorithm "menu" "men").
    # Values cannot hold whitespace; run_campaign checks that before anything runs.
    options = (f"outer_folder: {out.resolve()} result_folder: {name}/{batch_tag} algorithm_name: {name} "
               f"algorithm_info: {_OBSERVER_INFO}")
    return cocoex.Observer(cocoex.default_observers()[suite], options)


def _replay(observer, suite, function, dimension, instance, x, f, c) -> np.ndarray:
    """Evaluate the points of one run, in order, through an observed ``cocoex`` problem, check
    each value against the one the run saw (in the run's dtype) and return the float64
    values COCO logged ``(n,)``."""
    _suite, problem = bbob.suite_problem(suite, function, dimension, instance)  # the suite must outlive the problem
    problem.observe_with(observer)
    logged = np.empty(x.shape[0], np.float64)
    try:
        for r in range(x.shape[0]):
            point = np.asarray(x[r], np.float64)
            if c is not None:
                got_c = np.asarray(problem.constraint(point), np.float64).astype(c.dtype)
                if not np.array_equal(got_c, c[r]):
                    raise RuntimeError(f"replay of {problem.id}, evaluation {r + 1}: cocoex gives constraints "
                                       f"{got_c}, the run saw {c[r]}")
            logged[r] = problem(point)
            if logged[r].astype(f.dtype) != f[r]:
                raise RuntimeError(f"replay of {problem.id}, evaluation {r + 1}: cocoex gives f = {logged[r]!r}, "
                                   f"the run saw {f[r]!r}")
    finally:
        problem.free()
    return logged


def run_campaign(
    algorithms: dict,
    out,
    *,
    suite: str = "bbob",
    functions: Sequence[int] = tuple(range(1, 25)),
    dimensions: Sequence[int] = (2, 3, 5, 10),
    instances: Sequence[int] = tuple(range(1, 16)),
    budget_multiplier: float = 20.0,
    n_init: Optional[int] = None,
    seed: int = 0,
    batch: tuple[int, int] = (1, 1),
    functions_per_run: int = 1,
    in_sequence: bool = False,
    progress: bool | Callable = True,
) -> CampaignReport:
    """Run a COCO campaign and log it in COCO's data format under ``out``.

    Args:
        algorithms: ``{name: BOAlgorithm}``; ``name`` becomes COCO's algorithm id and the
            folder ``out/<name>``. Constrained algorithms need ``suite="bbob-constrained"``;
            algorithms needing a known PDE (PINN-BO) cannot run on BBOB.
        out: the campaign folder (created; a folder holding a campaign is resumed).
        suite: ``"bbob"`` or ``"bbob-constrained"``.
        functions: function numbers (1-24, or 1-54 on ``bbob-constrained``).
        dimensions: from :data:`nbo_jax.benchmarks.bbob.DIMENSIONS`.
        instances: COCO instance numbers (the thesis and COCO's 2009 protocol: 1-15).
        budget_multiplier: evaluations per dimension: a run makes
            ``floor(budget_multiplier * d)`` evaluations (Phan-Trong 2024, PhD thesis,
            Section 3.5: ``20 d``), fewer when ``q`` does not divide the rest.
        n_init: uniform initial points (default :func:`default_n_init`: ``2 (d + 1)``).
        seed: the base seed of :func:`unit_key`.
        batch: ``(k, n)``: this process runs units ``k-1, k-1+n, ...`` of the campaign.
        functions_per_run: functions per unit: one compiled call runs ``functions_per_run x
            len(instances)`` problems vmapped (raise it on an accelerator; 1 on a CPU, where
            a unit is also the granularity of resuming). Always 1 on ``bbob-constrained``.
        in_sequence: run a unit's problems one after another (``jax.lax.map`` in the one
            compiled program) instead of vmapped together. The runs are the same (in
            float64 to rounding; float32 runs may part, as a vmapped seed may from the same
            seed alone). On a CPU it is much faster for algorithms whose steps loop until a
            tolerance (the GP's MAP fit, the acquisition optimizer's L-BFGS-B climb): a
            vmapped loop runs until its slowest member stops, for every member (GP-EI on f1
            at d = 10, three instances).
        progress: ``True`` for a tqdm bar over units; a callable ``hook(done, total, unit)``
            instead; ``False`` for none.

    Returns:
        :class:`CampaignReport`.

    Raises:
        ValueError / TypeError: an unknown suite, out-of-range function, dimension or
            instance, a constrained algorithm on ``bbob`` (or an unconstrained problem), an
            algorithm that needs a PDE, a bad ``batch`` or ``in_sequence``, or an ``out``
            holding a campaign with other settings; all before anything runs.
        RuntimeError: a replayed value differs from the one the run saw.
    """
    cocoex = bbob.import_cocoex()
    suite = bbob._check_suite(suite)
    if not isinstance(algorithms, dict) or not algorithms:
        raise TypeError("algorithms must be a non-empty dict {name: BOAlgorithm}")
    for name, algo in algorithms.items():
        if not isinstance(algo, BOAlgorithm):
            raise TypeError(f"algorithms[{name!r}] must be a BOAlgorithm, got {type(algo).__name__}")
        if algo.constrained and suite != "bbob-constrained":
            raise ValueError(f"algorithms[{name!r}] is a constrained algorithm: run it with suite='bbob-constrained'")
        if getattr(algo.config, "factory", "").endswith(":pinn_bo"):
            raise ValueError(f"algorithms[{name!r}]: PINN-BO needs the PDE an objective satisfies; BBOB functions "
                             "have none")
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]*", name):
            raise ValueError(f"algorithms: name {name!r} must be a plain folder name (letters, digits, '.', '_', '+', "
                             "'-'; COCO's options cannot hold spaces or colons)")
    functions = tuple(bbob._check_index("functions", f, 1, bbob.n_functions(suite)) for f in functions)
    dimensions = tuple(bbob._check_dimension(d) for d in dimensions)
    instances = tuple(bbob._check_index("instances", i, 1, None) for i in instances)
    if not functions or not dimensions or not instances:
        raise ValueError("functions, dimensions and instances must each be non-empty")
    if len(set(instances)) != len(instances):
        raise ValueError(f"instances must be distinct, got {instances}")
    if not (isinstance(batch, tuple) and len(batch) == 2 and all(isinstance(b, int) for b in batch)
            and 1 <= batch[0] <= batch[1]):
        raise ValueError(f"batch must be (k, n) with 1 <= k <= n, got {batch!r}")
    if isinstance(functions_per_run, bool) or not isinstance(functions_per_run, int) or functions_per_run < 1:
        raise ValueError(f"functions_per_run must be an int >= 1, got {functions_per_run!r}")
    if not isinstance(in_sequence, bool):
        raise TypeError(f"in_sequence must be a bool, got {type(in_sequence).__name__}")
    if not (isinstance(budget_multiplier, (int, float)) and math.isfinite(budget_multiplier) and budget_multiplier > 0):
        raise ValueError(f"budget_multiplier must be a finite number > 0, got {budget_multiplier!r}")
    if n_init is not None and (isinstance(n_init, bool) or not isinstance(n_init, int) or n_init < 1):
        raise ValueError(f"n_init must be an int >= 1 or None, got {n_init!r}")
    out = pathlib.Path(out)
    if re.search(r"[\s:]", str(out.resolve())):
        raise ValueError(f"out: COCO's observer cannot write to a path with spaces or colons, got {str(out.resolve())!r}")
    batch_tag = "all" if batch == (1, 1) else f"batch-{batch[0]}-of-{batch[1]}"
    longest = max(len(f"{out.resolve()}{name}/{batch_tag}{_OBSERVER_INFO}") for name in algorithms)
    if longest > _COCO_PATH_LIMIT:
        raise ValueError(f"out: COCO's observer (cocoex) aborts the process when its folder path and algorithm "
                         f"name exceed about {_COCO_PATH_LIMIT} characters; here {longest}: use a shorter out "
                         f"folder ({str(out.resolve())!r}) or shorter algorithm names")
    settings = CampaignSettings(suite, instances, float(budget_multiplier), n_init, int(seed),
                                bool(jax.config.jax_enable_x64),
                                {name: repr(algo.config) if algo.config is not None else name
                                 for name, algo in algorithms.items()})
    for d in dimensions:
        for algo in algorithms.values():
            n0, n_iter = _sizes(settings, algo.q, d)
            if n_iter < 1:
                raise ValueError(f"budget {budget_multiplier} x {d} leaves no BO iteration after {n0} initial points")
    _check_settings(out, settings)

    per_run = 1 if suite == "bbob-constrained" else functions_per_run
    groups = [functions[j:j + per_run] for j in range(0, len(functions), per_run)]
    units = [(name, d, g) for d in dimensions for g in groups for name in algorithms]
    mine = units[batch[0] - 1::batch[1]]
    done = {name: _done_units(out / name) for name in algorithms}
    todo = [u for u in mine if not all((f, u[1], i) in done[u[0]] for f in u[2] for i in instances)]
    skipped = [u for u in mine if u not in todo]
    report = CampaignReport([], skipped, {n: 0.0 for n in algorithms}, {n: 0.0 for n in algorithms},
                            {n: 0 for n in algorithms}, {})
    bar = None
    if progress is True and todo:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(todo), desc="COCO", unit="unit")
    runner = _Runner()
    observers: dict = {}
    log_level = cocoex.log_level("warning")  # COCO's "INFO: results will be output to ..." lines
    try:
        for count, (name, d, fs) in enumerate(todo):
            algo = algorithms[name]
            if bar is not None:
                bar.set_postfix_str(f"{name} d{d} f{fs[0]}" + (f"-{fs[-1]}" if len(fs) > 1 else ""))
            n0, n_iter = _sizes(settings, algo.q, d)
            keys = jnp.stack([unit_key(settings.seed, f, d, i) for f in fs for i in instances])
            start = time.perf_counter()
            hist = runner(algo, suite, fs, d, instances, n0, n_iter, keys, in_sequence)
            n_inst = len(instances)
            xs = np.asarray(hist.x).reshape(len(fs), n_inst, -1, d)
            fvs = np.asarray(hist.f).reshape(len(fs), n_inst, -1)
            cs = np.asarray(hist.c_true).reshape(len(fs), n_inst, fvs.shape[2], -1) if hist.c_true is not None else None
            report.run_seconds[name] += time.perf_counter() - start
            start = time.perf_counter()
            if name not in observers:
                observers[name] = _observer(cocoex, suite, out, name, batch_tag)
                report.folders[name] = observers[name].result_folder
            folder = out / name / "nbo-jax"
            folder.mkdir(parents=True, exist_ok=True)
            for a, f in enumerate(fs):
                x, fv, c = xs[a], fvs[a], None if cs is None else cs[a]
                logged = np.empty(fv.shape, np.float64)
                for b, i in enumerate(instances):
                    if (f, d, i) in done[name]:
                        logged[b] = bbob.evaluate(x[b], f, i, suite)
                        continue
                    logged[b] = _replay(observers[name], suite, f, d, i, x[b], fv[b],
                                        None if c is None else c[b])
                    with open(folder / f"done-{batch_tag}.txt", "a") as fh:
                        fh.write(f"{f} {d} {i}\n")
                    report.evaluations[name] += x.shape[1]
                # f: the float64 values COCO logged (a float32 run sees them rounded)
                arrays = dict(x=x, f=logged, instances=np.asarray(instances),
                              f_opt=bbob.optimal_values(f, instances, d, suite))
                if c is not None:
                    arrays["c"] = c
                np.savez(folder / f"f{f:03d}_d{d:02d}.npz", **arrays)
            report.replay_seconds[name] += time.perf_counter() - start
            report.ran.append((name, d, fs))
            if bar is not None:
                bar.update(1)
            elif callable(progress) and progress is not True:
                progress(count + 1, len(todo), (name, d, fs))
    finally:
        if bar is not None:
            bar.close()
        observers.clear()
        cocoex.log_level(log_level)
    return report


def _algorithm_names(algorithms) -> list:
    """``algorithms`` as a list of folder names; a bare string (which would select its
    characters) is refused by name."""
    if isinstance(algorithms, str):
        raise TypeError(f"algorithms must be a sequence of names, e.g. [{algorithms!r}], got the string "
                        f"{algorithms!r}")
    return [str(a) for a in algorithms]


def read_runs(out, functions: Optional[Sequence[int]] = None, *, dimensions: Optional[Sequence[int]] = None,
              instances: Optional[Sequence[int]] = None, algorithms: Optional[Sequence[str]] = None) -> dict:
    """The runs of a campaign folder, from the ``.npz`` records :func:`run_campaign` writes:
    ``{algorithm: {(function, dimension): {"x": (I, n, d), "f": (I, n), "instances": (I,),
    "f_opt": (I,)}}}`` (and ``"c": (I, n, K)`` on ``bbob-constrained``); ``f`` holds the
    float64 values COCO logged, ``x`` the points in the run's dtype. ``functions``,
    ``dimensions``, ``instances``, ``algorithms``: only these function numbers (e.g. a group
    of :data:`BBOB_GROUPS`), dimensions, instance numbers and algorithm names (the folder
    names); ``None``, all. A unit left without a selected instance is left out.

    Raises:
        TypeError: ``algorithms`` is a string, not a sequence of names."""
    out = pathlib.Path(out)
    runs: dict = {}
    fs = None if functions is None else {int(f) for f in functions}
    ds = None if dimensions is None else {int(d) for d in dimensions}
    names = None if algorithms is None else set(_algorithm_names(algorithms))
    wanted = None if instances is None else np.asarray([int(i) for i in instances])
    for path in sorted(out.glob("*/nbo-jax/f*_d*.npz")):
        name = path.parent.parent.name
        f, d = (int(v) for v in path.stem[1:].split("_d"))
        if ((fs is not None and f not in fs) or (ds is not None and d not in ds)
                or (names is not None and name not in names)):
            continue
        with np.load(path) as data:
            run = {k: data[k] for k in data.files}
        if wanted is not None:
            rows = np.isin(run["instances"], wanted)
            if not rows.any():
                continue
            run = {k: v[rows] for k, v in run.items()}  # every record's first axis is the instance
        runs.setdefault(name, {})[(f, d)] = run
    return runs


def _precision(run: dict, n: int) -> np.ndarray:
    """``(I,)`` f - f_opt of each run's best point among its first ``n`` evaluations."""
    return run["f"][:, :n].min(axis=1) - run["f_opt"]


def _functions_by_dimension(runs: dict) -> dict:
    """``{d: sorted functions}`` that any algorithm of ``runs`` (:func:`read_runs`) ran."""
    found: dict = {}
    for units in runs.values():
        for f, d in units:
            found.setdefault(d, set()).add(f)
    return {d: sorted(fs) for d, fs in sorted(found.items())}


def _suite_of(out) -> Optional[str]:
    """The suite recorded in ``out/campaign.json`` (``None`` without one)."""
    path = pathlib.Path(out) / "campaign.json"
    return json.loads(path.read_text()).get("suite") if path.exists() else None


def _fractions_of_runs(runs: dict, budgets_per_dim, targets) -> dict:
    fractions: dict = {}
    for name, units in runs.items():
        per_dim: dict = {}
        for (f, d), run in units.items():
            for b in budgets_per_dim:
                n = max(1, int(round(b * d)))
                if n > run["f"].shape[1]:
                    continue  # beyond this campaign's budget
                solved = _precision(run, n)[:, None] <= targets[None, :]
                per_dim.setdefault(d, {}).setdefault(b, []).append(solved)
        fractions[name] = {d: {b: float(np.mean(np.concatenate(v))) for b, v in by_b.items()}
                           for d, by_b in sorted(per_dim.items())}
    return fractions


def solved_fractions(out, budgets_per_dim: Sequence[float] = (1, 2, 5, 10, 20),
                     targets: np.ndarray = ECDF_TARGETS, functions: Optional[Sequence[int]] = None,
                     *, dimensions: Optional[Sequence[int]] = None, instances: Optional[Sequence[int]] = None,
                     algorithms: Optional[Sequence[str]] = None) -> dict:
    """Fraction of (function, instance, target) triples solved, per algorithm and dimension,
    after ``b * d`` evaluations for each ``b`` in ``budgets_per_dim``: the y value of COCO's
    runtime ECDF (fixed targets ``f - f_opt <= target``, :data:`ECDF_TARGETS`) at that budget.

    ``functions``, ``dimensions``, ``instances``, ``algorithms``: only these runs
    (:func:`read_runs`).

    Returns:
        ``{algorithm: {dimension: {b: fraction}}}``; budgets beyond the runs' length are
        left out.
    """
    runs = read_runs(out, functions, dimensions=dimensions, instances=instances, algorithms=algorithms)
    return _fractions_of_runs(runs, budgets_per_dim, targets)


@functools.lru_cache(maxsize=1)
def _best2009():
    """cocopp's bundled best-2009 reference, loaded once per process."""
    import cocopp

    cocopp.genericsettings.verbose = False
    return cocopp.bestalg.load_reference_algorithm("refalgs/best2009-bbob.tar.gz", force=True)


def reference_solved_fractions(dimensions: Sequence[int], functions: Sequence[int] = tuple(range(1, 25)),
                               budgets_per_dim: Sequence[float] = (1, 2, 5, 10, 20),
                               targets: np.ndarray = ECDF_TARGETS) -> dict:
    """The same fractions for the best algorithm of BBOB-2009 that ``cocopp`` ships, from its
    average runtimes (aRT): a (function, target) pair counts as solved at budget ``b d`` when
    its aRT is at most ``b d`` evaluations. (The artificial best-2009 algorithm has aRTs, not
    runs: this is an approximation of its ECDF, which ``cocopp`` draws by simulated restarts.)

    Returns:
        ``{dimension: {b: fraction}}``.
    """
    reference = _best2009()
    out: dict = {}
    for d in dimensions:
        art = []
        for f in functions:
            entry = reference[(d, f)]
            art.append(np.asarray(entry.detERT(list(targets)), float))
        art = np.stack(art)
        out[d] = {b: float(np.mean(np.where(np.isfinite(art), art, np.inf) <= b * d)) for b in budgets_per_dim}
    return out


def run_fractions(out, budget_per_dim: Optional[float] = None, targets: np.ndarray = ECDF_TARGETS,
                  functions: Optional[Sequence[int]] = None, *, dimensions: Optional[Sequence[int]] = None,
                  instances: Optional[Sequence[int]] = None, algorithms: Optional[Sequence[str]] = None) -> dict:
    """Per run, the fraction of the targets it solved after ``budget_per_dim x d``
    evaluations (the whole run when ``None``); ``functions``, ``dimensions``, ``instances``,
    ``algorithms``: only these runs (:func:`read_runs`).

    Returns:
        ``{algorithm: {dimension: (keys, fractions)}}`` with ``keys`` the ``(function,
        instance)`` of each run, sorted, and ``fractions`` a float array in the same order
        (so two algorithms' arrays are paired run by run when they ran the same problems).
    """
    result: dict = {}
    runs = read_runs(out, functions, dimensions=dimensions, instances=instances, algorithms=algorithms)
    for name, units in runs.items():
        per_dim: dict = {}
        for (f, d), run in sorted(units.items()):
            n = run["f"].shape[1] if budget_per_dim is None else min(run["f"].shape[1], int(round(budget_per_dim * d)))
            best = _precision(run, n)
            keys, values = per_dim.setdefault(d, ([], []))
            for i, b in zip(run["instances"], best):
                keys.append((f, int(i)))
                values.append(float(np.mean(b <= targets)))
        result[name] = {d: (kv[0], np.asarray(kv[1])) for d, kv in sorted(per_dim.items())}
    return result


def paired_comparison(out, reference: str, budget_per_dim: Optional[float] = None,
                      functions: Optional[Sequence[int]] = None, *, dimensions: Optional[Sequence[int]] = None,
                      instances: Optional[Sequence[int]] = None, algorithms: Optional[Sequence[str]] = None) -> list:
    """Each algorithm against ``reference``, per dimension, paired run by run (same function,
    instance and initial design): mean fraction of targets solved per run for both, the runs
    where the algorithm solved more / fewer targets, and the two-sided Wilcoxon signed-rank
    p-value (``scipy.stats.wilcoxon``, ties dropped; NaN when every pair ties).
    ``functions``: only these function numbers, e.g. ``BBOB_GROUPS["separable"]``;
    ``dimensions``, ``instances``: only these; ``algorithms``: only these against
    ``reference`` (:func:`read_runs`).

    Returns:
        rows ``[algorithm, d, mean, reference mean, wins, losses, p]``.

    Raises:
        KeyError: ``reference`` has no runs in ``out``.
    """
    from scipy.stats import wilcoxon

    chosen = None if algorithms is None else [*_algorithm_names(algorithms), reference]
    fractions = run_fractions(out, budget_per_dim, functions=functions, dimensions=dimensions, instances=instances,
                              algorithms=chosen)
    if reference not in fractions:
        raise KeyError(f"reference {reference!r} has no runs in {str(out)!r}; it has {sorted(fractions)}")
    rows = []
    for name, per_dim in fractions.items():
        if name == reference:
            continue
        for d, (keys, values) in per_dim.items():
            mine = dict(zip(keys, values))
            theirs = dict(zip(*fractions[reference].get(d, ([], []))))
            common = sorted(set(mine) & set(theirs))
            if not common:
                continue
            a = np.asarray([mine[k] for k in common])
            b = np.asarray([theirs[k] for k in common])
            diff = a - b
            p = float(wilcoxon(a, b).pvalue) if np.any(diff != 0) else float("nan")
            rows.append([name, d, float(a.mean()), float(b.mean()), int(np.sum(diff > 0)), int(np.sum(diff < 0)), p])
    return rows


def solved_fractions_table(out, budgets_per_dim: Sequence[float] = (1, 2, 5, 10, 20), reference: bool = True,
                           functions: Optional[Sequence[int]] = None, *, dimensions: Optional[Sequence[int]] = None,
                           instances: Optional[Sequence[int]] = None,
                           algorithms: Optional[Sequence[str]] = None) -> str:
    """A Markdown table of :func:`solved_fractions` (one row per algorithm and dimension,
    one column per budget ``b x d``), with the best-2009 rows of
    :func:`reference_solved_fractions` on the same functions when ``reference`` (and the
    suite is ``bbob``); ``functions``, ``dimensions``, ``instances``, ``algorithms``: only
    these runs (:func:`read_runs`)."""
    from .analysis import markdown_table

    runs = read_runs(out, functions, dimensions=dimensions, instances=instances, algorithms=algorithms)
    fractions = _fractions_of_runs(runs, budgets_per_dim, ECDF_TARGETS)
    rows = [[name, d, *[by_b.get(b, "-") for b in budgets_per_dim]]
            for name, per_dim in fractions.items() for d, by_b in per_dim.items()]
    if reference and _suite_of(out) == "bbob":
        for d, fs in _functions_by_dimension(runs).items():
            ref = reference_solved_fractions([d], fs, budgets_per_dim)[d]
            rows.append(["best 2009 (aRT <= budget)", d, *[ref[b] for b in budgets_per_dim]])
    rows.sort(key=lambda r: (r[1], str(r[0])))
    header = ["algorithm", "d", *[f"{b:g} x d" for b in budgets_per_dim]]
    return ("fraction of (function, instance, target) triples solved, 51 targets 1e2..1e-8, "
            "after b x d evaluations:\n" + markdown_table(header, rows, floatfmt=".3f"))


def plot_ecdf(out, path, reference: bool = True) -> pathlib.Path:
    """Draw the runtime ECDFs of a campaign (one panel per dimension: fraction of (function,
    instance, target) triples solved against evaluations / d, :func:`solved_fractions`), with
    the best-2009 approximation of :func:`reference_solved_fractions` dashed, to ``path``
    (PNG). ``cocopp``'s own figures are in :func:`postprocess`'s pages."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = read_runs(out)
    longest = max(run["f"].shape[1] / d for units in runs.values() for (_, d), run in units.items())
    budgets = tuple(np.unique(np.round(np.geomspace(0.5, longest, 40), 3)))
    fractions = _fractions_of_runs(runs, budgets, ECDF_TARGETS)
    functions_by_d = _functions_by_dimension(runs)
    dims = list(functions_by_d)
    with_reference = reference and _suite_of(out) == "bbob"
    fig, axes = plt.subplots(1, len(dims), figsize=(4.2 * len(dims), 3.6), squeeze=False)
    for ax, d in zip(axes[0], dims):
        for name, per_dim in fractions.items():
            if d in per_dim:
                b = sorted(per_dim[d])
                ax.plot(b, [per_dim[d][v] for v in b], label=name)
        if with_reference:
            ref = reference_solved_fractions([d], functions_by_d[d], budgets)[d]
            ax.plot(budgets, [ref[b] for b in budgets], "k--", label="best 2009 (aRT)")
        ax.set_xscale("log")
        ax.set_ylim(0, min(1.0, 0.05 + max([max(line.get_ydata()) for line in ax.get_lines()] + [0.0])))
        ax.set_xlabel("evaluations / dimension")
        ax.set_title(f"d = {d}")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("fraction of (f, instance, target) solved")
    axes[0][-1].legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    path = pathlib.Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def postprocess(out, folder: Optional[str] = None) -> pathlib.Path:
    """Run ``cocopp`` on every algorithm folder of campaign ``out`` (each ``out/<name>``
    merges the data folders of all batches and resumes) and return the path of its
    ``index.html``: runtime ECDFs per dimension and function group, aRT tables and scaling
    plots, with the best algorithm of BBOB-2009 (bundled with ``cocopp``) as reference.

    Args:
        out: the campaign folder. folder: where ``cocopp`` writes (default ``out/ppdata``).

    Raises:
        FileNotFoundError: ``out`` holds no COCO data.
    """
    import matplotlib

    matplotlib.use("Agg")
    import cocopp

    out = pathlib.Path(out)
    algos = sorted(p.parent for p in out.glob("*/nbo-jax") if any(p.parent.glob("*/*.info")))
    if not algos:
        raise FileNotFoundError(f"{str(out)!r} holds no COCO data (no <algorithm>/<run>/*.info)")
    target = pathlib.Path(folder) if folder is not None else out / "ppdata"
    cocopp.genericsettings.verbose = False
    cocopp.main(["-o", str(target), *[str(a) for a in algos]])
    return target / "index.html"
