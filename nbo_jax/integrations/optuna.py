"""An Optuna sampler backed by any nbo_jax algorithm: :class:`NBOSampler` and
:class:`NeuralBOSampler` (Neural-BO, Phan-Trong et al. 2023).

Implements Optuna's :class:`optuna.samplers.BaseSampler` interface (relative sampling of a
trial's parameters at once, with an independent sampler for the rest)::

    import optuna
    from nbo_jax.integrations.optuna import NeuralBOSampler

    study = optuna.create_study(sampler=NeuralBOSampler(seed=0))
    study.optimize(objective, n_trials=50)

What the nbo_jax algorithm samples (the *relative search space*): the float and integer
parameters (``suggest_float``/``suggest_int``, with ``log=True`` or ``step=`` too) that every
completed trial suggested with the same distribution
(:class:`optuna.search_space.IntersectionSearchSpace`), except single-valued ones; an integer
is modelled as a continuous coordinate and the proposal rounded to its step (returned as a
Python ``int``). Categorical parameters, and the first ``n_startup_trials`` trials, go to the
independent sampler (default :class:`optuna.samplers.RandomSampler`); so does a categorical
that a caller passes to ``sample_relative`` itself.

The sampler is stateless between trials: every relative sample rebuilds the optimizer from
the study's history (:class:`nbo_jax.AskTell`), so it works with any Optuna storage (in
memory, RDB, journal) and with many processes or study handles sharing one study:

- log-scale parameters are modelled in ``log10`` (bounds ``[log10 low, log10 high]``);
- COMPLETE trials are the observations (values negated for ``direction="maximize"``:
  nbo_jax algorithms minimize);
- FAIL and PRUNED trials are failed evaluations (``y = NaN``): the model learns the point is
  bad;
- RUNNING trials (other than the one being sampled) are pending points, fantasized by the
  algorithm's batch rule (:func:`nbo_jax.transforms.batch.fantasize`), so parallel workers are not sent
  to the same place. Each relative sample is also written to the trial's system attributes,
  so other processes see a running trial's point before its parameters are suggested (as
  Optuna's ``GPSampler`` does).

The optimizer's capacity is rounded up to a multiple of ``capacity_step``, so the
jit-compiled ``ask`` is reused across trials (its shapes change once every
``capacity_step`` trials). The algorithm's PRNG key for trial ``t`` is
``fold_in(key(seed), t)``: a seeded study with the same trials samples the same points.
Single-objective studies only; Optuna's trial constraints are not modelled. An algorithm
whose schedule counts the steps since ``init`` (NeuralGreedy's exploration phase, which is
also sized by the number of initial points) restarts it at every trial; the model-based
algorithms (Neural-BO, GP-BO, NeuralUCB/TS, adaptive basis) lose nothing by the rebuild.
"""

from __future__ import annotations

import decimal
import functools
import json
import math
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

try:
    import optuna
    from optuna.distributions import (
        BaseDistribution,
        FloatDistribution,
        IntDistribution,
    )
    from optuna.samplers import BaseSampler
    from optuna.study import Study, StudyDirection
    from optuna.trial import FrozenTrial, TrialState
except ImportError as err:  # pragma: no cover - the extra is installed in the test env
    raise ImportError("nbo_jax.integrations.optuna needs Optuna: pip install 'nbo-jax[optuna]'") from err

from .._checks import check_int
from ..registry import get as _get_algorithm
from ..algorithms import neural_bo
from ..ask_tell import AskTell, per_algorithm, quiet_failures
from ..types import BOAlgorithm, Bounds

# a trial's relative sample, shared with other processes through the storage (chunks below
# the RDB storage's length limit of a system attribute value, as Optuna's samplers do)
_RELATIVE_PARAMS_KEY = "nbo_jax:relative_params"
_SYSTEM_ATTR_MAX_LENGTH = 2045
_FINISHED = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)


def _check_algorithm(algorithm) -> BOAlgorithm:
    """The algorithm to sample with: a :class:`BOAlgorithm` or a registry name; one point per
    ask and no constraint model."""
    if algorithm is None:
        algorithm = neural_bo()
    elif isinstance(algorithm, str):
        algorithm = _get_algorithm(algorithm)
    elif not isinstance(algorithm, BOAlgorithm):
        raise TypeError("algorithm must be an nbo_jax.BOAlgorithm (e.g. nbo_jax.neural_bo()), a registry name "
                        f"(nbo_jax.registry.REGISTRY) or None, got {type(algorithm).__name__}")
    if algorithm.q != 1:
        raise ValueError(f"algorithm must ask one point (q = 1), got q = {algorithm.q}: Optuna asks one point per "
                         "trial; parallel trials are handled as pending points")
    if algorithm.constrained:
        raise ValueError(f"algorithm {algorithm.name!r} models constraints, which NBOSampler does not pass; use an "
                         "unconstrained algorithm")
    return algorithm


@functools.partial(jax.jit, static_argnames=("init", "capacity"))
def _padded_init(key, x, y, lower, upper, *, init, capacity: int):
    return init(key, x, y, None, bounds=Bounds(lower, upper), capacity=capacity)


_FIXED_SHAPE: dict[int, tuple] = {}


def _fixed_shape_init(algorithm: BOAlgorithm) -> BOAlgorithm:
    """``algorithm`` whose ``init`` is compiled once per ``(capacity, d)``: ``x0 (n0, d)`` is
    padded to ``(capacity, d)`` with NaN rows, which are not recorded
    (:meth:`nbo_jax.dataset.Dataset.add_batch`), so the state is the one of ``x0`` alone. (:class:`nbo_jax.AskTell`
    compiles an ``init`` per shape of ``x0``: here once per trial, as every trial adds a row.)"""
    init = algorithm.init

    def fixed(key, x0, y0, c0=None, *, bounds, capacity: int):
        x0, y0 = np.asarray(x0), np.asarray(y0)
        x = np.full((capacity, x0.shape[1]), np.nan, x0.dtype)
        x[: x0.shape[0]] = x0
        y = np.zeros((capacity,), y0.dtype)
        y[: y0.shape[0]] = y0
        return _padded_init(key, x, y, np.asarray(bounds.lower), np.asarray(bounds.upper), init=init,
                            capacity=capacity)

    fixed.compiles_itself = True  # AskTell calls it as it is (no jit around the host padding)
    return algorithm._replace(init=fixed)


_NUMERIC = (FloatDistribution, IntDistribution)


def _modelled(dist: BaseDistribution) -> bool:
    """A float or integer distribution with more than one value (the relative search space)."""
    return isinstance(dist, _NUMERIC) and not dist.single()


def _to_internal(value: float, dist: FloatDistribution | IntDistribution) -> float:
    return math.log10(value) if dist.log else float(value)


def _internal_bounds(search_space: dict[str, FloatDistribution]) -> tuple[np.ndarray, np.ndarray]:
    """``(lower (d,), upper (d,))`` of the internal coordinates (``log10`` for log scales)."""
    lower = np.array([_to_internal(d.low, d) for d in search_space.values()], dtype=np.float64)
    upper = np.array([_to_internal(d.high, d) for d in search_space.values()], dtype=np.float64)
    return lower, upper


def _decimals(value: float) -> int:
    """The number of decimals of ``value``'s shortest repr (``0.25`` -> 2, ``3.0`` -> 0)."""
    exponent = decimal.Decimal(repr(float(value))).normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def _from_internal(x: np.ndarray, search_space: dict) -> dict[str, float | int]:
    """The parameters of an internal point ``x (d,)`` (float32 or float64): ``10**x`` for log
    scales, stepped values rounded to ``low + k step`` (an integer's step is 1 unless given;
    a float's is written with the decimals of ``low`` and ``step``, so ``0.3``, not
    ``0.30000000000000004``); all clipped to ``[low, high]``, as Python floats, or Python
    ints for :class:`IntDistribution`. A float32 coordinate is read as the shortest decimal
    that rounds to it (``1.1584198``, not ``1.1584198474884033``): the float64 value has no
    float32 artefact."""
    x = np.asarray(x)
    short = x.dtype == np.float32
    params = {}
    for v, (name, dist) in zip(x.tolist(), search_space.items()):
        v = float(str(np.float32(v))) if short else float(v)
        v = 10.0 ** v if dist.log else v
        if dist.step is not None:
            v = dist.low + round((v - dist.low) / dist.step) * dist.step
            if isinstance(dist, FloatDistribution):
                v = round(v, max(_decimals(dist.low), _decimals(dist.step)))
        v = min(max(v, dist.low), dist.high)
        params[name] = int(round(v)) if isinstance(dist, IntDistribution) else float(v)
    return params


def _points(params_list: Sequence[dict], search_space: dict[str, FloatDistribution],
            lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(X (n, d), usable (len(params_list),) bool)``: internal coordinates of the parameter
    dicts that hold every parameter of the space with a value inside its box (a trial of a
    dynamic search space may lack one or have suggested another range)."""
    names = list(search_space)
    rows, usable = [], []
    for params in params_list:
        ok = all(name in params for name in names)
        if ok:
            try:
                row = np.array([_to_internal(float(params[n]), search_space[n]) for n in names], dtype=np.float64)
            except (TypeError, ValueError):  # log10 of a value <= 0, a non-number
                ok = False
            else:
                span = upper - lower
                ok = bool(np.all(np.isfinite(row)) and np.all(row >= lower - 1e-9 * span)
                          and np.all(row <= upper + 1e-9 * span))
        if ok:
            rows.append(np.clip(row, lower, upper))
        usable.append(ok)
    X = np.array(rows, dtype=np.float64).reshape(len(rows), len(names))
    return X, np.array(usable, dtype=bool)


def _base_key(seed: int):
    """``jax.random.key(seed)``, with the bits of a seed ``>= 2**32`` folded in (without x64,
    ``jax.random.key`` keeps only the low 32 bits)."""
    key = jax.random.key(seed % 2**32)
    seed >>= 32
    while seed:
        key = jax.random.fold_in(key, seed % 2**32)
        seed >>= 32
    return key


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
    """An Optuna sampler that proposes a trial's float and integer parameters with an nbo_jax
    algorithm (the module doc says how the study's history is read; an integer is modelled as
    a continuous coordinate and rounded to its step), everything else (categorical,
    single-valued and dynamic parameters) with an independent sampler. Implements Optuna's
    :class:`optuna.samplers.BaseSampler`.

    Example::

        sampler = NBOSampler(nbo_jax.gp_bo(), n_startup_trials=10, seed=0)
        study = optuna.create_study(sampler=sampler, direction="maximize")

    Args:
        algorithm: a :class:`~nbo_jax.types.BOAlgorithm` with ``q = 1`` (e.g.
            ``nbo_jax.neural_bo(width=128)``, ``nbo_jax.gp_bo()``), or a registry name built
            with its defaults (:func:`nbo_jax.registry.get`, e.g. ``"gp-ei"``); ``None``:
            ``nbo_jax.neural_bo()``.
        n_startup_trials: the independent sampler proposes every parameter until this many
            trials finished (COMPLETE, PRUNED or FAIL; int >= 0); the algorithm also waits
            for one COMPLETE trial in its search space.
        seed: seed of the algorithm's PRNG keys and of the default independent sampler (int
            >= 0); ``None``: drawn at random once.
        independent_sampler: the sampler of parameters outside the relative search space
            (categorical, single-valued and dynamic ones) and of the startup trials; default
            ``optuna.samplers.RandomSampler(seed=seed)``.
        capacity_step: the optimizer's capacity is the number of observations and pending
            points plus one, rounded up to a multiple of this (int >= 1), so compiled code is
            reused across trials.

    Raises:
        TypeError / ValueError: bad arguments (the message names the argument): an
        ``algorithm`` that is not a BOAlgorithm or known name, asks ``q != 1`` points (Optuna
        asks one point per trial; parallel trials are pending points) or models constraints.
    """

    def __init__(self, algorithm: BOAlgorithm | str | None = None, *, n_startup_trials: int = 10,
                 seed: int | None = None, independent_sampler: BaseSampler | None = None,
                 capacity_step: int = 32):
        self._algorithm = _check_algorithm(algorithm)
        # one padded init per factory call and process: samplers of the same call share its compiles
        self._fast = per_algorithm(_FIXED_SHAPE, self._algorithm, _fixed_shape_init)
        self._n_startup_trials = check_int("n_startup_trials", n_startup_trials, 0)
        self._capacity_step = check_int("capacity_step", capacity_step, 1)
        if seed is not None:
            seed = check_int("seed", seed, 0)
        if independent_sampler is not None and not isinstance(independent_sampler, BaseSampler):
            raise TypeError("independent_sampler must be an optuna.samplers.BaseSampler or None, got "
                            f"{type(independent_sampler).__name__}")
        self._seed = seed if seed is not None else int(np.random.default_rng().integers(2**31))
        self._independent_sampler = independent_sampler or optuna.samplers.RandomSampler(seed=seed)
        self._intersection_search_space = optuna.search_space.IntersectionSearchSpace()

    @property
    def algorithm(self) -> BOAlgorithm:
        """The nbo_jax algorithm that samples the relative search space."""
        return self._algorithm

    def reseed_rng(self) -> None:
        """Draw a new seed for the algorithm's keys and reseed the independent sampler
        (Optuna calls this for each thread of ``study.optimize(n_jobs > 1)``)."""
        self._seed = int(np.random.default_rng().integers(2**31))
        self._independent_sampler.reseed_rng()

    def infer_relative_search_space(self, study: Study, trial: FrozenTrial) -> dict[str, BaseDistribution]:
        """The float and integer parameters (``log`` and ``step`` allowed) that every completed
        trial suggested with the same distribution, except single-valued ones (``low ==
        high``), sorted by name."""
        return {name: dist for name, dist in self._intersection_search_space.calculate(study).items()
                if _modelled(dist)}

    def sample_relative(self, study: Study, trial: FrozenTrial,
                        search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
        """The algorithm's next point for ``trial`` from the study's history: a dict with a
        value for every parameter of ``search_space``, of its distribution's type, inside its
        range and on its step (floats and integers from the algorithm; categorical and
        single-valued ones from the independent sampler); ``{}`` (independent sampling) when
        the space is empty, fewer than ``n_startup_trials`` trials finished, or no COMPLETE
        trial holds the space's float and integer parameters.

        Raises:
            ValueError: a multi-objective study (nbo_jax algorithms minimize one value).
        """
        self._refuse_multi_objective(study)
        if not search_space:
            return {}
        space = {name: dist for name, dist in search_space.items() if _modelled(dist)}
        independent = lambda name: self._independent_sampler.sample_independent(study, trial, name,
                                                                                 search_space[name])
        if not space:
            return {name: independent(name) for name in search_space}
        trials = study.get_trials(deepcopy=False, states=_FINISHED + (TrialState.RUNNING,))
        finished = [t for t in trials if t.state in _FINISHED]
        if len(finished) < self._n_startup_trials:
            return {}

        lower, upper = _internal_bounds(space)
        sign = -1.0 if study.direction == StudyDirection.MAXIMIZE else 1.0
        X, usable = _points([t.params for t in finished], space, lower, upper)
        y = np.array([sign * float(t.value) if t.state == TrialState.COMPLETE and t.value is not None else np.nan
                      for t, ok in zip(finished, usable) if ok], dtype=np.float64)
        if not np.any(np.isfinite(y)):
            return {}
        running = [_shared_params(t) for t in trials if t.state == TrialState.RUNNING and t.number != trial.number]
        P, _ = _points(running, space, lower, upper)

        need = X.shape[0] + P.shape[0] + 1
        capacity = -(-need // self._capacity_step) * self._capacity_step
        key = jax.random.fold_in(_base_key(self._seed), trial.number)
        with quiet_failures():  # failed trials are expected here, not news
            opt = AskTell(self._fast, (lower, upper), capacity, key, X, y)
        if P.shape[0]:
            opt.add_pending(P)
        # the algorithm's own dtype (float32 without x64), read as the shortest decimal
        asked = _from_internal(np.asarray(opt.ask(), dtype=opt.state.data.u.dtype), space)
        params = {name: asked[name] if name in asked else independent(name) for name in search_space}

        # share the point with other processes before the objective suggests it
        text = json.dumps(params)
        for i in range(0, len(text), _SYSTEM_ATTR_MAX_LENGTH):
            name = f"{_RELATIVE_PARAMS_KEY}:{i // _SYSTEM_ATTR_MAX_LENGTH}"
            study._storage.set_trial_system_attr(trial._trial_id, name, text[i:i + _SYSTEM_ATTR_MAX_LENGTH])
        return params

    def sample_independent(self, study: Study, trial: FrozenTrial, param_name: str,
                           param_distribution: BaseDistribution) -> Any:
        """A parameter outside the relative search space, from the independent sampler.

        Raises:
            ValueError: a multi-objective study (as Optuna's single-objective samplers do).
        """
        self._refuse_multi_objective(study)
        return self._independent_sampler.sample_independent(study, trial, param_name, param_distribution)

    def _refuse_multi_objective(self, study: Study) -> None:
        if len(study.directions) > 1:
            raise ValueError(f"{type(self).__name__} supports single-objective studies only: this study has "
                             f"{len(study.directions)} objectives, and nbo_jax algorithms minimize one value")

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        self._independent_sampler.before_trial(study, trial)

    def after_trial(self, study: Study, trial: FrozenTrial, state: TrialState,
                    values: Sequence[float] | None) -> None:
        self._independent_sampler.after_trial(study, trial, state, values)


class NeuralBOSampler(NBOSampler):
    """:class:`NBOSampler` with Neural-BO (Phan-Trong et al. 2023):
    ``NBOSampler(nbo_jax.neural_bo(**algorithm_kwargs), ...)``.

    Example::

        study = optuna.create_study(sampler=NeuralBOSampler(width=128, seed=0))

    Args:
        n_startup_trials: as :class:`NBOSampler`.
        seed: as :class:`NBOSampler`.
        independent_sampler: as :class:`NBOSampler`.
        capacity_step: as :class:`NBOSampler`.
        **algorithm_kwargs: arguments of :func:`nbo_jax.neural_bo` (``width``, ``nu``,
            ``epochs``, ``acq_optimizer``, ...; ``q`` must stay 1).

    Raises:
        TypeError / ValueError: bad arguments, of the sampler or of :func:`nbo_jax.neural_bo`
        (messages name them).
    """

    def __init__(self, *, n_startup_trials: int = 10, seed: int | None = None,
                 independent_sampler: BaseSampler | None = None, capacity_step: int = 32, **algorithm_kwargs):
        super().__init__(neural_bo(**algorithm_kwargs), n_startup_trials=n_startup_trials, seed=seed,
                         independent_sampler=independent_sampler, capacity_step=capacity_step)


__all__ = ["NBOSampler", "NeuralBOSampler"]
