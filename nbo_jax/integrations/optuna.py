"""An Optuna sampler backed by any nbo_jax algorithm: :class:`NBOSampler` and
:class:`NeuralBOSampler` (Neural-BO, Phan-Trong et al. 2023).

Implements Optuna's :class:`optuna.samplers.BaseSampler` interface (relative sampling of a
trial's parameters at once, with an independent sampler for the rest)::

    import optuna
    from nbo_jax.integrations.optuna import NeuralBOSampler

    study = optuna.create_study(sampler=NeuralBOSampler(seed=0))
    study.optimize(objective, n_trials=50)

What the nbo_jax algorithm samples (the *relative search space*): the float, integer and
categorical parameters (``suggest_float``/``suggest_int``, with ``log=True`` or ``step=`` too,
and ``suggest_categorical``) that every completed trial suggested with the same distribution
(:class:`optuna.search_space.IntersectionSearchSpace`), except single-valued ones. With an
integer, stepped float or categorical parameter the algorithm searches their mixed search
space (:class:`nbo_jax.search_space.SearchSpace`: a log-scaled parameter in log space, an
integer on its step, a stepped float as the integer count of its steps, a category one-hot;
the acquisition optimizer rounds inside its search, so every proposal is a valid
configuration), compiled once per space; with floats only, a box of coordinates (``log10`` of
a log-scaled parameter), compiled once per dimension. Integers are returned as Python
``int``, categories as the choice itself. Parameters outside that space (conditional ones,
which some trials do not suggest, as Optuna's ``GPSampler`` treats them) and the first
``n_startup_trials`` trials go to the independent sampler (default
:class:`optuna.samplers.RandomSampler`). After the startup trials, each parameter the
independent sampler proposes is logged as a warning naming it, as ``GPSampler`` logs it
(``warn_independent_sampling=False`` turns this off), on the logger ``optuna.nbo_jax``, a
child of Optuna's, which ``optuna.logging.set_verbosity`` controls. With
``conditional_parameters="impute"`` the relative search space is every parameter any
completed trial suggested (with one distribution throughout): a trial that did not suggest
one is read at the value this sampler proposed for it, or at a seeded uniform draw (startup
trials), as if the objective had suggested it and left it unused (the space written flat).

The sampler is stateless between trials: every relative sample rebuilds the optimizer from
the study's history (:class:`nbo_jax.AskTell`), so it works with any Optuna storage (in
memory, RDB, journal) and with many processes or study handles sharing one study:

- COMPLETE trials are the observations (values negated for ``direction="maximize"``:
  nbo_jax algorithms minimize); a study of ``m >= 2`` objectives (``directions=[...]``) gives
  rows ``y (m,)``, each "maximize" objective negated;
- FAIL and PRUNED trials are failed evaluations (``y = NaN``, every objective): the model
  learns the point is bad;
- RUNNING trials (other than the one being sampled) are pending points, fantasized by the
  algorithm's batch rule (:func:`nbo_jax.transforms.batch.fantasize`), so parallel workers are not sent
  to the same place. Each relative sample is also written to the trial's system attributes,
  so other processes see a running trial's point before its parameters are suggested (as
  Optuna's ``GPSampler`` does).

The optimizer's capacity starts at ``capacity`` and doubles when the trials outgrow it, so
the jit-compiled ``ask`` is reused across trials (its shapes change at 32, 64, 128, ...
trials: a 200-trial study compiles four capacities). Compiled code is kept per process and
configuration (the factory call, the space, the capacity), so a second study of the same
configuration compiles nothing.
While the startup trials run (``n_startup_trials``), a background thread compiles the
algorithm's ``init`` and ``ask`` for the space and the capacity of the first model-based
trial (``precompile``), so an objective that takes seconds hides the compilation. The algorithm's PRNG key for trial ``t`` is
``fold_in(key(seed), t)``: a seeded study with the same trials samples the same points.
Multi-objective studies (``m >= 2`` directions) run an algorithm of several objectives
(:data:`nbo_jax.registry.MULTI_OBJECTIVE`, or random search): by default GP-EHVI (expected
hypervolume improvement; Daulton et al. 2021) for :class:`NBOSampler` and Neural-BO with random
scalarizations (Paria et al. 2019) for :class:`NeuralBOSampler`, whose reference point is
inferred from the observed front at every trial (the algorithm's default) unless the
algorithm was built with one, in the minimized values (a "maximize" objective's negated).
An algorithm of one objective on a study of several, or one that needs several on a study of
one, is refused at the study's first sample, naming it.

Constraints (``c <= 0`` feasible, Optuna's convention and nbo_jax's), as Optuna's
``GPSampler`` takes them: values the objective sets with ``trial.set_constraint(name, value)``
(Optuna >= 5), or a sampler's ``constraints_func(frozen_trial) -> values``, called after each
COMPLETE or PRUNED trial. Once the study has any, :class:`NBOSampler` runs a constrained
algorithm (:attr:`nbo_jax.types.BOAlgorithm.constrained`): by default GP-cEI (expected
improvement over the best feasible value times the probability of feasibility, one GP per
constraint; Gardner et al. 2014, as ``GPSampler``'s constrained log EI), or the one given,
e.g. ``"neural-cbo"`` (Neural-CBO; Phan-Trong 2024, PhD thesis, Chapter 4). A given algorithm
without a constraint model, and :class:`NeuralBOSampler` (Neural-BO), are refused there with
an error naming the way out, rather than ignoring the constraints. The constraint values are
the columns of ``c`` in the order of their sorted names; a FAIL or PRUNED trial without them
is a failed evaluation (as its objective value). With several objectives and constraints,
:class:`NBOSampler` runs GP-EHVI-C by default (``"gp-ehvi-c"``: log expected hypervolume
improvement over the feasible front plus the log probability of feasibility, as
``GPSampler``'s ``LogCEHVI``; Daulton et al. 2020). An algorithm
whose schedule counts the steps since ``init`` (NeuralGreedy's exploration phase, which is
also sized by the number of initial points) restarts it at every trial; the model-based
algorithms (Neural-BO, GP-BO, NeuralUCB/TS, adaptive basis) lose nothing by the rebuild.
"""

from __future__ import annotations

import atexit
import json
import math
import threading
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

try:
    import optuna
    from optuna.distributions import (
        BaseDistribution,
        CategoricalDistribution,
        FloatDistribution,
        IntDistribution,
    )
    from optuna.samplers import BaseSampler
    from optuna.samplers._base import _CONSTRAINTS_KEY, _process_constraints_after_trial
    from optuna.study import Study, StudyDirection
    from optuna.trial import FrozenTrial, TrialState
except ImportError as err:  # pragma: no cover - the extra is installed in the test env
    raise ImportError("nbo_jax.integrations.optuna needs Optuna: pip install 'nbo-jax[optuna]'") from err

from .._checks import check_bool, check_choice, check_int, refuse_renamed
from ..registry import MULTI_OBJECTIVE as _MULTI_OBJECTIVE, STUDY_DEFAULT, get as _get_algorithm
from ..algorithms import neural_bo
from ..ask_tell import (AskTell, _compiled, compiler_options, domain_key, fits_from_start, per_algorithm,
                        quiet_failures)
from ..search_space import (Categorical, Continuous, Integer, SearchSpace, float32_decimal,
                            search_space as _search_space, stepped_value)
from ..types import BOAlgorithm, Bounds

# a trial's relative sample, shared with other processes through the storage (chunks below
# the RDB storage's length limit of a system attribute value, as Optuna's samplers do)
_RELATIVE_PARAMS_KEY = "nbo_jax:relative_params"
_SYSTEM_ATTR_MAX_LENGTH = 2045
_FINISHED = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)
_CONDITIONAL = ("independent", "impute")
CAPACITY_RENAMED = {"capacity_step": "the optimizer's capacity now doubles when the trials outgrow it; pass "
                                     "capacity=..., its first value (default 32)"}
# a child of Optuna's library logger: optuna.logging.set_verbosity and its handler apply
_LOGGER = optuna.logging.get_logger("optuna.nbo_jax")


def _check_algorithm(algorithm) -> BOAlgorithm:
    """The algorithm to sample with: a :class:`BOAlgorithm` or a registry name; one point per
    ask."""
    if isinstance(algorithm, str):
        algorithm = _get_algorithm(algorithm)
    elif not isinstance(algorithm, BOAlgorithm):
        raise TypeError("algorithm must be an nbo_jax.BOAlgorithm (e.g. nbo_jax.neural_bo()), a registry name "
                        f"(nbo_jax.registry.REGISTRY) or None, got {type(algorithm).__name__}")
    if algorithm.q != 1:
        raise ValueError(f"algorithm must ask one point (q = 1), got q = {algorithm.q}: Optuna asks one point per "
                         "trial; parallel trials are handled as pending points")
    return algorithm


def _constraints(trial: FrozenTrial) -> dict[str, float]:
    """A trial's constraint values by name: those its objective set with
    ``trial.set_constraint`` (Optuna >= 5) and those a ``constraints_func`` stored after it
    (named ``"0"``, ``"1"``, ...); ``{}`` if none."""
    if hasattr(trial, "constraints"):  # Optuna >= 5 reads both kinds
        return dict(trial.constraints)
    values = trial.system_attrs.get(_CONSTRAINTS_KEY)
    return {} if values is None else {str(i): float(v) for i, v in enumerate(values)}


def _constraint_rows(trials: Sequence[FrozenTrial],
                     values: Sequence[dict]) -> tuple[np.ndarray | None, tuple[str, ...]]:
    """``(C (n, K), names)``: the constraint values of ``trials`` (``values``, each trial's
    :func:`_constraints`; ``c <= 0`` feasible, as in Optuna and nbo_jax) in the order of their
    sorted names, ``NaN`` where a FAIL or PRUNED trial has none; ``(None, ())`` when no trial
    has any.

    Raises:
        ValueError: a COMPLETE trial lacks a constraint another trial set (as Optuna's
        ``GPSampler``, which needs the same constraints in every trial)."""
    names = tuple(sorted(set().union(*values)))
    if not names:
        return None, ()
    for t, v in zip(trials, values):
        if t.state == TrialState.COMPLETE and len(v) != len(names):
            raise ValueError(f"trial {t.number} set the constraint(s) {sorted(v)} and the study's trials set "
                             f"{list(names)}: every COMPLETE trial must set the same constraints")
    return np.array([[v.get(k, np.nan) for k in names] for v in values], np.float64).reshape(-1, len(names)), names


def _needs_several(algorithm: BOAlgorithm) -> bool:
    """Whether ``algorithm`` models ``m >= 2`` objectives only: a multi-objective model
    (random search, which has no model, takes any number)."""
    return algorithm.multi_objective and algorithm.model is not None


def _padded_init(key, x, y, c, lower, upper, start=None, *, init, capacity: int, space=None):
    started = {} if start is None else {"start": start}
    return init(key, x, y, c, bounds=Bounds(lower, upper) if space is None else space, capacity=capacity, **started)


_PADDED_INIT: dict[str, Callable] = {}  # by repr(compiler_options), as AskTell's own programs


def _padded_init_compiled(capacity: int) -> Callable:
    """:func:`_padded_init` under ``jit`` with :class:`AskTell`'s compile options for
    ``capacity`` (:func:`nbo_jax.ask_tell.compiler_options`), one program per set of options
    (made at the first call: choosing them starts JAX's backend)."""
    options = compiler_options(capacity)
    program = _PADDED_INIT.get(repr(options))
    if program is None:
        made = jax.jit(_padded_init, static_argnames=("init", "capacity", "space"), compiler_options=options)
        program = _PADDED_INIT.setdefault(repr(options), made)
    return program


_FIXED_SHAPE: dict[int, tuple] = {}


def _fixed_shape_init(algorithm: BOAlgorithm) -> BOAlgorithm:
    """``algorithm`` whose ``init`` is compiled once per ``(capacity, d)``: ``x0 (n0, d)`` is
    padded to ``(capacity, d)`` with NaN rows, which are not recorded
    (:meth:`nbo_jax.dataset.Dataset.add_batch`), so the state is the one of ``x0`` alone; ``y0 (n0,)``
    or ``(n0, m)`` is padded likewise. (:class:`nbo_jax.AskTell`
    compiles an ``init`` per shape of ``x0``: here once per trial, as every trial adds a row.)
    Constraint values ``c0 (n0, K)``, when given, are padded with zeros."""
    init = algorithm.init

    def fixed(key, x0, y0, c0=None, *, bounds, capacity: int, start=None):
        x0, y0 = np.asarray(x0), np.asarray(y0)
        x = np.full((capacity, x0.shape[1]), np.nan, x0.dtype)
        x[: x0.shape[0]] = x0
        y = np.zeros((capacity,) + y0.shape[1:], y0.dtype)  # (capacity,) or (capacity, m)
        y[: y0.shape[0]] = y0
        c = None
        if c0 is not None:
            c0 = np.asarray(c0)
            c = np.zeros((capacity, c0.shape[1]), c0.dtype)
            c[: c0.shape[0]] = c0
        space = bounds if isinstance(bounds, SearchSpace) else None
        return _padded_init_compiled(capacity)(key, x, y, c, np.asarray(bounds.lower), np.asarray(bounds.upper),
                                               start, init=init, capacity=capacity, space=space)

    fixed.compiles_itself = True  # AskTell calls it as it is (no jit around the host padding)
    fixed.uncompiled = init  # the same state's shapes, traceable inside jax.eval_shape
    return algorithm._replace(init=fixed)


# background compilations, by (id of the canonical padded algorithm, domain, capacity, objectives,
# constraints)
_WARMING: dict[tuple, threading.Thread] = {}
_WARMING_LOCK = threading.Lock()


def _warm_up(fast: BOAlgorithm, domain: Bounds | SearchSpace, capacity: int, m: int, k: int = 0,
             warm: bool = False) -> None:
    """Compile ``fast``'s ``init`` and ``ask`` (as :class:`AskTell` calls them) for ``domain``,
    ``capacity``, ``m`` objectives and ``k`` constraints, and with ``warm`` the ``init`` from a
    previous optimizer's hyperparameters (``warm_start``) too: an optimizer of one dummy
    observation runs ``init`` and lowers and compiles ``ask`` for its state (``jit``'s cache
    keeps the program for the real calls). Best effort: an error leaves the compilation to the
    first real call."""
    try:
        lower = np.asarray(domain.lower, np.float64)
        rows = (fast, domain, capacity, jax.random.key(0), lower[None], np.zeros(1) if m == 1 else np.zeros((1, m)),
                np.zeros((1, k)) if k else None)
        with quiet_failures():
            opt = AskTell(*rows)
            if warm and fits_from_start(fast):
                AskTell(*rows, warm_start=opt)
        ask = _compiled(fast, capacity, domain)[1]
        ask.trace(opt.state, jax.random.key(0)).lower().compile()
    except Exception:  # noqa: BLE001 - the real call compiles (and raises) itself
        pass


def _warming_key(fast: BOAlgorithm, domain: Bounds | SearchSpace, capacity: int, m: int, k: int) -> tuple:
    """The key of a configuration's background compilation in ``_WARMING``."""
    return id(fast), domain_key(domain), capacity, m, k


def _start_warm_up(fast: BOAlgorithm, domain: Bounds | SearchSpace, capacity: int, m: int, k: int = 0,
                   warm: bool = False) -> None:
    """Start :func:`_warm_up` in a background thread, once per process and configuration."""
    key = _warming_key(fast, domain, capacity, m, k)
    with _WARMING_LOCK:
        if key in _WARMING:
            return
        thread = _WARMING[key] = threading.Thread(target=_warm_up, args=(fast, domain, capacity, m, k, warm),
                                                  daemon=True, name="nbo_jax-optuna-compile")
    thread.start()


def _wait_for_warm_up(fast: BOAlgorithm, domain: Bounds | SearchSpace, capacity: int, m: int, k: int = 0) -> None:
    """Wait for a background compilation of this configuration (no work done twice)."""
    thread = _WARMING.get(_warming_key(fast, domain, capacity, m, k))
    if thread is not None:
        thread.join()


@atexit.register
def _join_warm_ups() -> None:  # a compilation is not cut off by the interpreter's exit
    for thread in list(_WARMING.values()):
        thread.join()


_NUMERIC = (FloatDistribution, IntDistribution)


def _modelled(dist: BaseDistribution) -> bool:
    """A float, integer or categorical distribution with more than one value (the relative
    search space)."""
    return isinstance(dist, _NUMERIC + (CategoricalDistribution,)) and not dist.single()


def _boxed(search_space: dict[str, BaseDistribution]) -> bool:
    """Whether the optimizer works in a box (floats without a step only): every parameter a
    coordinate (``log10`` of a log-scaled one), so one compiled optimizer serves every space
    of the same dimension (the bounds are arrays); else in the mixed search space
    (:func:`_space_of`), compiled per space, whose acquisition optimizer rounds integers and
    steps inside its search (not after it)."""
    return all(isinstance(d, FloatDistribution) and d.step is None for d in search_space.values())


def _stepped_float(dist: BaseDistribution) -> bool:
    """Whether ``dist`` is a float distribution with a ``step``."""
    return isinstance(dist, FloatDistribution) and dist.step is not None


def _coordinate(value: float, dist: BaseDistribution, boxed: bool) -> float:
    """A numeric parameter's coordinate: ``log10`` of a log-scaled one in a box; the count of
    steps ``(value - low) / step`` of a stepped float in the mixed space; else itself."""
    if boxed and dist.log:
        return math.log10(value)
    if _stepped_float(dist):
        return (float(value) - dist.low) / dist.step
    return float(value)


def _domain_of(search_space: dict[str, BaseDistribution]) -> Bounds | SearchSpace:
    """The optimizer's domain (:func:`_boxed`): the box of the coordinates, or the mixed space."""
    if not _boxed(search_space):
        return _space_of(search_space)
    lower = [_coordinate(d.low, d, True) for d in search_space.values()]
    upper = [_coordinate(d.high, d, True) for d in search_space.values()]
    return Bounds(np.array(lower, np.float64), np.array(upper, np.float64))


def _space_of(search_space: dict[str, BaseDistribution]) -> SearchSpace:
    """The mixed search space of Optuna distributions: a stepped float is the integer count of
    its steps above ``low`` (:func:`_coordinate`), so the optimizer searches its values only."""
    params = []
    for name, dist in search_space.items():
        if isinstance(dist, CategoricalDistribution):
            params.append(Categorical(name, tuple(dist.choices)))
        elif _stepped_float(dist):
            params.append(Integer(name, 0, int(round((dist.high - dist.low) / dist.step))))
        elif isinstance(dist, IntDistribution):
            params.append(Integer(name, int(dist.low), int(dist.high), int(dist.step), bool(dist.log)))
        else:
            params.append(Continuous(name, float(dist.low), float(dist.high), bool(dist.log)))
    return _search_space(params)


def _params_of(x: np.ndarray, search_space: dict) -> dict[str, Any]:
    """The parameters of a point ``x (P,)`` of :func:`_domain_of` (float32 or float64): a
    category's choice by its index; ``10**x`` for a log scale in a box; ``low + k step`` for a
    stepped float's count of steps ``k``, written as the float nearest to its exact decimal
    value (``0.3``, not ``0.30000000000000004``; :func:`nbo_jax.search_space.stepped_value`);
    a stepped integer on ``low + k step``; numbers clipped to ``[low, high]``, as Python floats, or Python
    ints for :class:`IntDistribution`. A value from a float32 point is written as the shortest
    decimal that rounds to its float32 (``1.1584198``, not ``1.1584198474884033``; a log scale's
    ``10**x`` too, ``0.0010111272``, not ``0.0010111272154621675``): the float64 value has no
    float32 artefact."""
    x = np.asarray(x)
    short = x.dtype == np.float32
    boxed = _boxed(search_space)
    params = {}
    for v, (name, dist) in zip(x.tolist(), search_space.items()):
        if isinstance(dist, CategoricalDistribution):
            params[name] = dist.choices[min(max(int(round(v)), 0), len(dist.choices) - 1)]
            continue
        v = 10.0 ** float(v) if boxed and dist.log else float(v)
        v = float32_decimal(v) if short else v
        if _stepped_float(dist):  # its coordinate is its count of steps
            v = stepped_value(dist.low, round(v), dist.step)
        elif dist.step is not None:
            v = dist.low + round((v - dist.low) / dist.step) * dist.step
        v = min(max(v, dist.low), dist.high)
        params[name] = int(round(v)) if isinstance(dist, IntDistribution) else float(v)
    return params


def _points(params_list: Sequence[dict], search_space: dict[str, BaseDistribution],
            space: Bounds | SearchSpace) -> tuple[np.ndarray, np.ndarray]:
    """``(X (n, P), usable (len(params_list),) bool)``: the points of :func:`_domain_of` (a
    category as its index, a stepped float as its count of steps, ``log10`` of a log scale in
    a box) of
    the parameter dicts that hold every parameter of the space with a valid value (a trial of
    a dynamic search space may lack one or have suggested another range)."""
    rows, complete = [], []
    for params in params_list:
        row = []
        for name, dist in search_space.items():
            if name not in params:
                break
            value = params[name]
            if isinstance(dist, CategoricalDistribution):
                if value not in dist.choices:
                    break
                row.append(float(dist.choices.index(value)))
            else:
                try:
                    row.append(_coordinate(float(value), dist, isinstance(space, Bounds)))
                except (TypeError, ValueError):  # log10 of a value <= 0, a non-number
                    break
        complete.append(len(row) == len(search_space))
        if complete[-1]:
            rows.append(row)
    X = np.array(rows, dtype=np.float64).reshape(len(rows), len(search_space))
    lower, upper = np.asarray(space.lower, np.float64), np.asarray(space.upper, np.float64)
    slack = 1e-9 * (upper - lower)
    inside = np.all(np.isfinite(X) & (X >= lower - slack) & (X <= upper + slack), axis=1)
    usable = np.array(complete, dtype=bool)
    usable[np.flatnonzero(usable)[~inside]] = False
    return np.clip(X[inside], lower, upper), usable


def _base_key(seed: int):
    """``jax.random.key(seed)``, with the bits of a seed ``>= 2**32`` folded in (without x64,
    ``jax.random.key`` keeps only the low 32 bits)."""
    key = jax.random.key(seed % 2**32)
    seed >>= 32
    while seed:
        key = jax.random.fold_in(key, seed % 2**32)
        seed >>= 32
    return key


def _union_search_space(trials: Sequence[FrozenTrial]) -> dict[str, BaseDistribution]:
    """The modelled parameters (:func:`_modelled`) that any of ``trials`` suggested, each with
    one distribution in every trial that suggested it (one suggested with two is left out, as
    a dynamic search space), sorted by name."""
    seen: dict[str, BaseDistribution | None] = {}
    for t in trials:
        for name, dist in t.distributions.items():
            seen[name] = dist if seen.get(name, dist) == dist else None
    return {name: seen[name] for name in sorted(seen) if seen[name] is not None and _modelled(seen[name])}


def _shared_params(trial: FrozenTrial) -> dict[str, Any]:
    """A running trial's parameters: its relative sample (written by another process's
    sampler, possibly before the objective suggested them) updated with those suggested."""
    chunks, i = [], 0
    while (chunk := trial.system_attrs.get(f"{_RELATIVE_PARAMS_KEY}:{i}")) is not None:
        chunks.append(chunk)
        i += 1
    params = json.loads("".join(chunks)) if chunks else {}
    params.update(trial.params)
    return params


class NBOSampler(BaseSampler):
    """An Optuna sampler that proposes a trial's float, integer and categorical parameters with
    an nbo_jax algorithm over their mixed search space (the module doc says how the study's
    history is read), the single-valued and conditional ones with an independent sampler.
    Implements Optuna's :class:`optuna.samplers.BaseSampler`, for studies of one objective
    (``direction=``) and of ``m >= 2`` (``directions=``; every "maximize" objective negated,
    the algorithm one of several objectives, :meth:`algorithm_for`).

    Example::

        sampler = NBOSampler(nbo_jax.gp_bo(), n_startup_trials=10, seed=0)
        study = optuna.create_study(sampler=sampler, direction="maximize")
        # two objectives: GP-EHVI by default (or e.g. "gp-parego", "neural-bo-mo"); with
        # constraints (trial.set_constraint) GP-EHVI-C
        study = optuna.create_study(sampler=NBOSampler(seed=0), directions=["minimize", "maximize"])

    Args:
        algorithm: a :class:`~nbo_jax.types.BOAlgorithm` with ``q = 1`` (e.g.
            ``nbo_jax.neural_bo(width=128)``, ``nbo_jax.gp_bo()``, for several objectives
            ``nbo_jax.gp_bo(acquisition="ehvi", reference_point=...)`` with the reference
            point in the minimized values), or a registry name built with its defaults
            (:func:`nbo_jax.registry.get`, e.g. ``"gp-ei"``, ``"gp-ehvi"``); ``None``:
            ``"gp-ei"`` (``nbo_jax.gp_bo()``) for a study of one objective, ``"gp-ehvi"``
            (GP-EHVI, its reference point inferred; Daulton et al. 2021) for a study of
            several; with constraints ``"gp-cei"`` and ``"gp-ehvi-c"``. GP-EI is the
            documentation's pick for integer and categorical parameters and for budgets below
            ~50 trials, chosen over Neural-BO on the mixed selection
            problems; through this sampler, over 30 seeds of the eight mixed test problems (45
            trials), its mean normalized score was 0.61 against TPE's 0.43 and GPSampler's 0.42
            (docs, "Benchmarks", "Our samplers through Optuna"). :class:`NeuralBOSampler` runs
            Neural-BO.
        n_startup_trials: the independent sampler proposes every parameter until this many
            trials finished (COMPLETE, PRUNED or FAIL; int >= 0); the algorithm also waits
            for one COMPLETE trial in its search space.
        seed: seed of the algorithm's PRNG keys and of the default independent sampler (int
            >= 0); ``None``: drawn at random once.
        independent_sampler: the sampler of parameters outside the relative search space
            (single-valued and conditional ones) and of the startup trials; default
            ``optuna.samplers.RandomSampler(seed=seed)``.
        capacity: the optimizer's first capacity (int >= 1), doubled until it holds the
            observations, the pending points and the new one, as the ``capacity`` of
            :class:`~nbo_jax.integrations.study.AsyncStudy` and ``NBOSearcher``, so compiled
            code is reused across trials (docs, "Benchmarks", "Trial cost": a 200-trial
            study). ``capacity_step`` (a capacity rounded up to its multiples) is refused
            with a TypeError that names ``capacity``.
        precompile: while the startup trials run, compile the algorithm for the first
            model-based trial in a background thread (bool; once per process and
            configuration; the process's exit waits for a compilation under way);
            ``False``: compile at that trial.
        constraints_func: ``constraints_func(frozen_trial) -> Sequence[float]``, the trial's
            constraint values (``c <= 0`` feasible), stored after each COMPLETE or PRUNED
            trial, as the argument of Optuna's samplers (deprecated there since Optuna 5 in
            favour of ``trial.set_constraint``, which this sampler reads too); ``None``: the
            constraints the objective sets, if any (module doc).
        conditional_parameters: how parameters that some trials do not suggest (conditional
            ones) are sampled: ``"independent"`` (default) by the independent sampler, as
            Optuna's ``GPSampler`` does (the model covers the parameters every completed trial
            suggested); ``"impute"``: the model covers every parameter a completed trial
            suggested (with one distribution throughout), and a trial that did not suggest
            one is given the value this sampler proposed for it (its relative sample), or in a
            startup trial a uniform draw from its distribution (a ``RandomSampler`` seeded with
            ``seed`` and the trial's number), as if the objective had suggested it and left it
            unused. On Jenatton et al. (2017)'s tree-structured function
            (``benchmarks/optuna_conditional.py``, 30 seeds of 45 trials) ``"impute"`` was
            ahead of ``"independent"`` and of ``GPSampler`` (both level with random search)
            and level with TPE; on its CASH problem the means were level (docs,
            "Benchmarks", "Conditional parameters through Optuna").
        warm_start: start each trial's surrogate fit from the previous trial's fitted
            hyperparameters (bool; ``AskTell(warm_start=...)``: the previous optimizer of the
            same study, search space and algorithm in this process), as Optuna's ``GPSampler``
            starts each fit from the previous trial's kernel parameters; without one (the
            first model-based trial, a new search space, a new process) from the surrogate's
            default start, the GP's prior mode. Only for algorithms whose surrogate takes a
            start: the GP presets, and Neural-BO's default preset, whose network continues
            its training from the previous trial's weights (with the same ``theta_0``), as
            its ``tell`` does in :func:`nbo_jax.run_bo` (the paper preset retrains from
            ``theta_0`` each trial, as the paper does). Retrained from ``theta_0`` on one
            trial's epochs, the default network underfits: on ``knn_iris_nll``, 30 studies of
            45 trials, ``NeuralBOSampler()``'s mean score was 0.06 cold against 0.90 warm
            (TPE 0.76; docs, "Benchmarks", "Neural-BO's network through Optuna").
            On a 200-trial study of a float, an integer and a category a trial's GP fit took
            0.05 s instead of 0.19 s at 199 observations (docs, "Benchmarks", "Trial cost").
            ``False``: every fit from the default start, so a trial's proposal depends on the
            study's trials alone, not on which process sampled the trials before it.
        deterministic_objective: the objective returns the same values for the same
            parameters (bool), as the argument of Optuna's ``GPSampler``: the default
            algorithms' GP fixes its noise variance at its floor instead of fitting it
            (:func:`nbo_jax.gp_bo`'s ``deterministic``); with an ``algorithm`` given, refused
            (build that one with ``deterministic=True``). Better or level on the mixed
            selection problems, not on the mixed test problems (docs, "Benchmarks", "A
            deterministic objective"); not the default.
        warn_independent_sampling: log a warning (logger ``optuna.nbo_jax``) naming each
            parameter that the independent sampler proposes once ``n_startup_trials`` trials
            finished, i.e. a parameter outside the relative search space, which the algorithm
            does not model (bool; as the argument of Optuna's ``GPSampler``).

    Raises:
        TypeError / ValueError: bad arguments (the message names the argument): an
        ``algorithm`` that is not a BOAlgorithm or known name, or asks ``q != 1`` points
        (Optuna asks one point per trial; parallel trials are pending points); a
        ``constraints_func`` that is not callable. Sampling raises ValueError for an
        algorithm that does not fit the study's objectives or constraints
        (:meth:`algorithm_for`) and for a COMPLETE trial that lacks a constraint other trials
        set.
    """

    def __init__(self, algorithm: BOAlgorithm | str | None = None, *, n_startup_trials: int = 10,
                 seed: int | None = None, independent_sampler: BaseSampler | None = None,
                 capacity: int = 32, precompile: bool = True,
                 constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
                 warn_independent_sampling: bool = True, conditional_parameters: str = "independent",
                 warm_start: bool = True, deterministic_objective: bool = False, **renamed):
        refuse_renamed(renamed, CAPACITY_RENAMED, type(self).__name__)
        self._given = None if algorithm is None else _check_algorithm(algorithm)
        self._deterministic = check_bool("deterministic_objective", deterministic_objective)
        if self._deterministic and algorithm is not None:
            raise ValueError("deterministic_objective=True sets the default algorithms' noise; with an algorithm "
                             "given, build it deterministic (e.g. NBOSampler(nbo_jax.gp_bo(deterministic=True)))")
        if constraints_func is not None and not callable(constraints_func):
            raise TypeError("constraints_func must be a function of an optuna.trial.FrozenTrial returning its "
                            f"constraint values, or None, got {type(constraints_func).__name__}")
        self._constraints_func = constraints_func
        # the defaults by (several objectives?, constrained?), built when a study needs them
        self._defaults: dict[tuple[bool, bool], BOAlgorithm] = {}
        if algorithm is None:
            self._defaults[False, constraints_func is not None] = self._default(False, constraints_func is not None)
        self._n_startup_trials = check_int("n_startup_trials", n_startup_trials, 0)
        self._first_capacity = check_int("capacity", capacity, 1)
        self._precompile = check_bool("precompile", precompile)
        self._warn_independent_sampling = check_bool("warn_independent_sampling", warn_independent_sampling)
        self._impute = check_choice("conditional_parameters", conditional_parameters, _CONDITIONAL) == "impute"
        self._warm_start = check_bool("warm_start", warm_start)
        self._previous: tuple | None = None  # (what it fitted, the last optimizer): warm_start's
        if seed is not None:
            seed = check_int("seed", seed, 0)
        if independent_sampler is not None and not isinstance(independent_sampler, BaseSampler):
            raise TypeError("independent_sampler must be an optuna.samplers.BaseSampler or None, got "
                            f"{type(independent_sampler).__name__}")
        self._seed = seed if seed is not None else int(np.random.default_rng().integers(2**31))
        self._independent_sampler = independent_sampler or optuna.samplers.RandomSampler(seed=seed)
        self._intersection_search_space = optuna.search_space.IntersectionSearchSpace()

    def __getstate__(self) -> dict:
        """The sampler without its previous optimizer (the warm start is this process's: a
        copy starts its next trial's fit from the surrogate's default start)."""
        return {**self.__dict__, "_previous": None}

    def _default(self, several: bool, constrained: bool) -> BOAlgorithm:
        """The algorithm when none was given: GP-EI for one objective, GP-EHVI for several,
        GP-cEI for one objective with constraints, GP-EHVI-C for several with constraints."""
        options = {"deterministic": True} if self._deterministic else {}
        if constrained:
            return _get_algorithm("gp-ehvi-c" if several else "gp-cei", **options)
        return _get_algorithm("gp-ehvi" if several else STUDY_DEFAULT, **options)

    @property
    def algorithm(self) -> BOAlgorithm:
        """The nbo_jax algorithm given, or the default of a study of one objective (with
        constraints if ``constraints_func`` was given; other studies: :meth:`algorithm_for`)."""
        if self._given is not None:
            return self._given
        return self._defaults[False, self._constraints_func is not None]

    def algorithm_for(self, study: Study) -> BOAlgorithm:
        """The nbo_jax algorithm that samples ``study``: the one given, or the default for the
        study's number of objectives ``m = len(study.directions)`` and its constraints (the
        sampler's ``constraints_func``, or values a finished trial set with
        ``trial.set_constraint``): ``m = 1``: GP-EI, with constraints GP-cEI
        (:class:`NeuralBOSampler`: Neural-BO; constraints refused); ``m >= 2``: GP-EHVI, with
        constraints GP-EHVI-C (:class:`NeuralBOSampler`: Neural-BO with random
        scalarizations; constraints refused).

        Raises:
            ValueError: an algorithm of one objective and a study of ``m >= 2``, or an
            algorithm that needs ``m >= 2`` and a study of one; an algorithm without a
            constraint model and a study with constraints, or one with a constraint model and
            a study whose COMPLETE trials set none; :class:`NeuralBOSampler` and a study
            with constraints. The message names the algorithm and the way out.
        """
        finished = study.get_trials(deepcopy=False, states=_FINISHED)
        return self._algorithm_for(study, finished, [_constraints(t) for t in finished])

    def _algorithm_for(self, study: Study, finished: Sequence[FrozenTrial], values: Sequence[dict]) -> BOAlgorithm:
        """:meth:`algorithm_for` given the study's finished trials and their constraint values
        (:func:`_constraints`), which :meth:`sample_relative` reads once for both."""
        m = len(study.directions)
        several = m > 1
        constrained = self._constraints_func is not None or any(values)
        if self._given is None:
            algorithm = self._defaults.get((several, constrained))
            if algorithm is None:
                algorithm = self._defaults.setdefault((several, constrained), self._default(several, constrained))
            return algorithm
        name = self._given.name
        if constrained and not self._given.constrained:
            examples = "'gp-ehvi-c'" if several else "'gp-cei', 'neural-cbo'"
            raise ValueError(f"this study has constraints (set by trial.set_constraint or constraints_func), and "
                             f"algorithm {name!r} does not model them: pass an algorithm that does to "
                             f"{type(self).__name__} (e.g. {examples}), or none for the default")
        if self._given.constrained and not constrained and any(t.state == TrialState.COMPLETE for t in finished):
            raise ValueError(f"algorithm {name!r} models constraints, and no trial of this study set any: set them in "
                             "the objective with trial.set_constraint(name, value) (c <= 0 feasible), pass "
                             f"constraints_func to {type(self).__name__}, or use an algorithm without constraints")
        if several and not self._given.multi_objective:
            raise ValueError(f"algorithm {name!r} optimizes one objective, and this study has {m}: pass one of "
                             f"several objectives to {type(self).__name__} (a name of "
                             f"nbo_jax.registry.MULTI_OBJECTIVE: {sorted(_MULTI_OBJECTIVE)}, or random search), or "
                             "no algorithm for the default")
        if not several and _needs_several(self._given):
            raise ValueError(f"algorithm {name!r} optimizes m >= 2 objectives, and this study has one: pass an "
                             f"algorithm of one objective to {type(self).__name__} (e.g. 'gp-ei', 'neural-bo') or "
                             "none for the default, or create the study with directions=[...] for several")
        return self._given

    def reseed_rng(self) -> None:
        """Draw a new seed for the algorithm's keys and reseed the independent sampler
        (Optuna calls this for each thread of ``study.optimize(n_jobs > 1)``)."""
        self._seed = int(np.random.default_rng().integers(2**31))
        self._independent_sampler.reseed_rng()

    def infer_relative_search_space(self, study: Study, trial: FrozenTrial) -> dict[str, BaseDistribution]:
        """The float, integer (``log`` and ``step`` allowed) and categorical parameters that
        every completed trial suggested with the same distribution, except single-valued ones
        (``low == high``, one choice), sorted by name; with ``conditional_parameters="impute"``
        those that any completed trial suggested, each with one distribution throughout."""
        if self._impute:
            return _union_search_space(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)))
        return {name: dist for name, dist in self._intersection_search_space.calculate(study).items()
                if _modelled(dist)}

    def sample_relative(self, study: Study, trial: FrozenTrial,
                        search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
        """The algorithm's next point for ``trial`` from the study's history: a dict with a
        value for every parameter of ``search_space``, of its distribution's type, inside its
        range and on its step, a category among its choices (from the algorithm; single-valued
        ones from the independent sampler); ``{}`` (independent sampling) when the space is
        empty, fewer than ``n_startup_trials`` trials finished, or no COMPLETE trial holds the
        space's parameters. The observations are ``y (n,)``, or ``(n, m)`` for ``m``
        objectives, each negated for ``"maximize"``; a failed or pruned trial's row is NaN.

        Raises:
            ValueError: the algorithm does not fit the study's number of objectives
            (:meth:`algorithm_for`).
        """
        trials = study.get_trials(deepcopy=False, states=_FINISHED + (TrialState.RUNNING,))
        finished = [t for t in trials if t.state in _FINISHED]
        values = [_constraints(t) for t in finished]  # read once: the algorithm's choice and its c
        algorithm = self._algorithm_for(study, finished, values)
        if not search_space:
            return {}
        space = {name: dist for name, dist in search_space.items() if _modelled(dist)}
        independent = lambda name: self._independent_sampler.sample_independent(study, trial, name,
                                                                                 search_space[name])
        if not space:
            return {name: independent(name) for name in search_space}
        # one padded init per factory call and process: samplers of the same call share its compiles
        fast = per_algorithm(_FIXED_SHAPE, algorithm, _fixed_shape_init)
        m = len(study.directions)
        mixed = _domain_of(space)
        C, names = _constraint_rows(finished, values) if algorithm.constrained else (None, ())
        if len(finished) < self._n_startup_trials:
            if self._precompile and (names or not algorithm.constrained):
                # the first model-based trial's optimizer, compiled meanwhile (with constraints
                # once a trial has told how many)
                _start_warm_up(fast, mixed, self._capacity(self._n_startup_trials + 1), m, len(names),
                               self._warm_start)
            return {}

        sign = np.array([-1.0 if d == StudyDirection.MAXIMIZE else 1.0 for d in study.directions])
        X, usable = _points([self._imputed(study, t, space) for t in finished], space, mixed)
        y = np.array([sign * np.asarray(t.values, np.float64) if t.state == TrialState.COMPLETE and t.values
                      else np.full(m, np.nan) for t, ok in zip(finished, usable) if ok],
                     dtype=np.float64).reshape(-1, m)
        if not np.any(np.all(np.isfinite(y), axis=1)) or (algorithm.constrained and not names):
            return {}
        y = y[:, 0] if m == 1 else y
        C = None if C is None else C[usable]
        running = [self._imputed(study, t, space) for t in trials
                   if t.state == TrialState.RUNNING and t.number != trial.number]
        P, _ = _points(running, space, mixed)

        capacity = self._capacity(X.shape[0] + P.shape[0] + 1)
        key = jax.random.fold_in(_base_key(self._seed), trial.number)
        _wait_for_warm_up(fast, mixed, capacity, m, len(names))
        fitted = (id(study._storage), study._study_id, id(fast), domain_key(mixed), m, len(names))
        previous = self._previous
        warm = previous[1] if previous is not None and previous[0] == fitted else None
        with quiet_failures():  # failed trials are expected here, not news
            opt = AskTell(fast, mixed, capacity, key, X, y, c0=C, warm_start=warm)
        if self._warm_start and fits_from_start(fast):
            self._previous = (fitted, opt)
        if P.shape[0]:
            opt.add_pending(P)
        # the algorithm's own dtype (float32 without x64), read as the shortest decimal
        asked = _params_of(np.asarray(opt.ask(), dtype=opt.state.data.u.dtype).reshape(-1), space)
        params = {name: asked[name] if name in asked else independent(name) for name in search_space}

        # share the point with other processes before the objective suggests it
        text = json.dumps(params)
        for i in range(0, len(text), _SYSTEM_ATTR_MAX_LENGTH):
            name = f"{_RELATIVE_PARAMS_KEY}:{i // _SYSTEM_ATTR_MAX_LENGTH}"
            study._storage.set_trial_system_attr(trial._trial_id, name, text[i:i + _SYSTEM_ATTR_MAX_LENGTH])
        return params

    def sample_independent(self, study: Study, trial: FrozenTrial, param_name: str,
                           param_distribution: BaseDistribution) -> Any:
        """A parameter outside the relative search space, from the independent sampler; once
        ``n_startup_trials`` trials finished, logged as a warning naming it
        (``warn_independent_sampling``).

        Raises:
            ValueError: the algorithm does not fit the study's number of objectives
            (:meth:`algorithm_for`; as Optuna's single-objective samplers refuse a study of
            several).
        """
        self.algorithm_for(study)
        # at most trial.number trials finished before this one: no storage query in the startup trials
        if (self._warn_independent_sampling and trial.number >= self._n_startup_trials
                and len(study.get_trials(deepcopy=False, states=_FINISHED)) >= self._n_startup_trials):
            _LOGGER.warning(
                f"The parameter `{param_name}` in Trial#{trial.number} is sampled independently using "
                f"`{type(self._independent_sampler).__name__}` instead of `{type(self).__name__}`'s model: it is outside "
                "the model's search space (a conditional or dynamic parameter; "
                + ("no completed trial suggested it with one distribution yet). " if self._impute else
                   "not every completed trial suggested it with this distribution; conditional_parameters='impute' "
                   "models conditional ones). ")
                + f"Set `warn_independent_sampling=False` in the constructor of `{type(self).__name__}` if this is "
                "intended.")
        return self._independent_sampler.sample_independent(study, trial, param_name, param_distribution)

    def _imputed(self, study: Study, trial: FrozenTrial, space: dict[str, BaseDistribution]) -> dict[str, Any]:
        """``trial``'s parameters as the model reads them: those suggested (a running trial's
        over its relative sample, which may precede the suggestions); with
        ``conditional_parameters="impute"``, for a COMPLETE or RUNNING trial, each parameter of
        ``space`` it lacks at its relative sample's value, else drawn uniformly from its
        distribution, the same draw at every call (a FAIL or PRUNED trial may have stopped
        before suggesting it: one that lacks a parameter is not an observation)."""
        params = _shared_params(trial) if trial.state == TrialState.RUNNING else dict(trial.params)
        if not self._impute or trial.state not in (TrialState.COMPLETE, TrialState.RUNNING):
            return params
        missing = [name for name in space if name not in params]
        if missing and trial.state == TrialState.COMPLETE:  # its relative sample: read only when needed
            params = _shared_params(trial)
            missing = [name for name in space if name not in params]
        if missing:
            draw = optuna.samplers.RandomSampler(seed=(self._seed * 1_000_003 + trial.number) % 2**32)
            params.update({name: draw.sample_independent(study, trial, name, space[name]) for name in missing})
        return params

    def _capacity(self, need: int) -> int:
        """The first capacity doubled until it holds ``need`` rows."""
        capacity = self._first_capacity
        while capacity < need:
            capacity *= 2
        return capacity

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        self._independent_sampler.before_trial(study, trial)

    def after_trial(self, study: Study, trial: FrozenTrial, state: TrialState,
                    values: Sequence[float] | None) -> None:
        """Store the trial's ``constraints_func`` values (COMPLETE and PRUNED trials, as Optuna's
        samplers do) and pass the trial on to the independent sampler."""
        if self._constraints_func is not None:
            _process_constraints_after_trial(self._constraints_func, study, trial, state)
        self._independent_sampler.after_trial(study, trial, state, values)


class NeuralBOSampler(NBOSampler):
    """:class:`NBOSampler` with Neural-BO (Phan-Trong et al. 2023):
    ``NBOSampler(nbo_jax.neural_bo(**algorithm_kwargs), ...)`` for a study of one objective;
    for a study of ``m >= 2`` objectives ``nbo_jax.neural_bo(multi_objective=True,
    **algorithm_kwargs)`` (random-scalarization Thompson sampling; Paria, Kandasamy and Poczos
    2019).

    Example::

        study = optuna.create_study(sampler=NeuralBOSampler(width=128, seed=0))

    Args:
        n_startup_trials: as :class:`NBOSampler`.
        seed: as :class:`NBOSampler`.
        independent_sampler: as :class:`NBOSampler`.
        capacity: as :class:`NBOSampler`.
        precompile: as :class:`NBOSampler`.
        warn_independent_sampling: as :class:`NBOSampler`.
        conditional_parameters: as :class:`NBOSampler`.
        **algorithm_kwargs: arguments of :func:`nbo_jax.neural_bo` (``width``, ``nu``,
            ``epochs``, ``acq_optimizer``, ...; ``q`` must stay 1); with
            ``multi_objective=True`` (and e.g. a ``reference_point``, in the minimized values)
            the sampler serves studies of several objectives only.

    Neural-BO does not model constraints: a study whose trials set them
    (``trial.set_constraint``) is refused at its first sample, and there is no
    ``constraints_func``. ``NBOSampler()`` runs GP-cEI there, ``NBOSampler("neural-cbo")``
    Neural-CBO (on the benchmarks' pressure vessel, 10 seeds of 40 trials, Neural-CBO's trials
    after the random ones were feasible in 1% against GP-cEI's 83%, and its median best feasible
    cost was above random search's; docs, "Benchmarks", "Constraints through Optuna").

    Raises:
        TypeError / ValueError: bad arguments, of the sampler or of :func:`nbo_jax.neural_bo`
        (messages name them), ``constraints_func`` among them; for a study of several
        objectives the arguments are checked when it is first sampled; a study with
        constraints is refused then.
    """

    def __init__(self, *, n_startup_trials: int = 10, seed: int | None = None,
                 independent_sampler: BaseSampler | None = None, capacity: int = 32,
                 precompile: bool = True, warn_independent_sampling: bool = True,
                 conditional_parameters: str = "independent", **algorithm_kwargs):
        if "constraints_func" in algorithm_kwargs:
            raise TypeError(f"NeuralBOSampler takes no constraints_func: {_NO_NEURAL_CONSTRAINTS}")
        refuse_renamed({k: algorithm_kwargs[k] for k in CAPACITY_RENAMED if k in algorithm_kwargs}, CAPACITY_RENAMED,
                       "NeuralBOSampler")
        self._algorithm_kwargs = algorithm_kwargs
        given = neural_bo(**algorithm_kwargs) if algorithm_kwargs.get("multi_objective") else None
        super().__init__(given, n_startup_trials=n_startup_trials, seed=seed,
                         independent_sampler=independent_sampler, capacity=capacity,
                         precompile=precompile, warn_independent_sampling=warn_independent_sampling,
                         conditional_parameters=conditional_parameters)

    def _default(self, several: bool, constrained: bool) -> BOAlgorithm:
        """Neural-BO with the sampler's arguments, with random scalarizations for several
        objectives; a study with constraints is refused."""
        if constrained:
            raise ValueError(f"this study has constraints, and NeuralBOSampler runs Neural-BO, which does not model "
                             f"them: {_NO_NEURAL_CONSTRAINTS}")
        return _check_algorithm(neural_bo(**{**self._algorithm_kwargs, "multi_objective": several}))


_NO_NEURAL_CONSTRAINTS = ("NBOSampler() runs GP-cEI on a study with constraints (NBOSampler('neural-cbo'): "
                          "Neural-CBO, which asked feasible points far less often on the benchmarks' pressure vessel)")


__all__ = ["NBOSampler", "NeuralBOSampler"]
