"""The library's algorithms in Ray Tune: :class:`NBOSearcher`, a ``ray.tune.search.Searcher``.

Tune runs the trials (on a local or remote Ray cluster, with its schedulers, checkpoints
and loggers); the searcher proposes each trial's configuration. Float, integer and
categorical parameters (``tune.uniform``, ``tune.loguniform``, ``tune.quniform``,
``tune.randint``, ``tune.lograndint``, ``tune.qrandint``, ``tune.qlograndint``,
``tune.choice``) are modelled by the algorithm over their mixed search space
(:class:`nbo_jax.search_space.SearchSpace`: log scales in log space, a quantized float or
integer as the integer count ``k`` of its quanta, the value ``k q``, categories one-hot; the
acquisition optimizer rounds inside its search) through an
:class:`~nbo_jax.integrations.study.AsyncStudy`: trials still running are pending points, a
trial that errors or reports no finite metric is a failed evaluation. Other domains
(``tune.sample_from``, custom samplers) are drawn at random, as Tune itself would, and
constants (lists included, and domains inside lists) are passed through. Grid search is
refused.

Example::

    from ray import tune
    from nbo_jax.integrations.ray_tune import NBOSearcher

    tuner = tune.Tuner(train, param_space={"lr": tune.loguniform(1e-4, 1e-1), "wd": tune.uniform(0, 0.1)},
                       tune_config=tune.TuneConfig(search_alg=NBOSearcher(), metric="loss", mode="min",
                                                   num_samples=50, max_concurrent_trials=4))

Needs the extra: ``pip install 'nbo-jax[ray]'``. The interface is Ray Tune's
(``suggest``, ``on_trial_complete``, ``save``/``restore``).
"""

from __future__ import annotations

import copy
import math
import pickle
from typing import Dict, Optional

import jax
import numpy as np

try:
    from ray.tune.search import UNDEFINED_METRIC_MODE, UNDEFINED_SEARCH_SPACE, Searcher
    from ray.tune.search.sample import Categorical as TuneCategorical
    from ray.tune.search.sample import Domain, Float, LogUniform, Quantized
    from ray.tune.search.sample import Integer as TuneInteger
    from ray.tune.search.variant_generator import assign_value, parse_spec_vars
except ImportError as err:  # pragma: no cover - exercised without the extra
    raise ImportError("nbo_jax.integrations.ray_tune needs Ray Tune: pip install 'nbo-jax[ray]'") from err

from .._checks import check_int
from ..loop import _check_algorithm
from ..search_space import Categorical, Continuous, Integer, float32_decimal, search_space, stepped_value
from ..types import BOAlgorithm
from .study import AsyncStudy

__all__ = ["NBOSearcher"]


class NBOSearcher(Searcher):
    """A Ray Tune searcher backed by a library algorithm (default GP-EI,
    :func:`nbo_jax.gp_bo`).

    Args:
        space: the search space, a dict of Tune domains and constants (nested dicts and
            lists); ``None`` to take the Tuner's ``param_space``. An algorithm passed here
            (``NBOSearcher(nbo.gp_bo())``) is taken as ``algorithm``.
        metric: the reported metric to optimize (or from the ``TuneConfig``).
        mode: ``"min"`` or ``"max"`` (or from the ``TuneConfig``).
        algorithm: an unconstrained :class:`~nbo_jax.types.BOAlgorithm`; default
            :func:`nbo_jax.gp_bo` (GP-EI, the documentation's pick for integer and categorical
            parameters and small budgets, as :class:`nbo_jax.integrations.optuna.NBOSampler`'s).
        n_init: trials drawn uniformly (the initial design) before the algorithm proposes.
        seed: seeds the design, the algorithm and the random draws of the other parameters.
        capacity: the optimizer's first capacity (doubled when reached).

    Raises:
        TypeError / ValueError: bad arguments (each message names it: ``space`` not a dict,
        an algorithm given both as ``space`` and as ``algorithm``), a grid search in the
        space, or a float or integer domain with a sampler other than uniform/log-uniform.
    """

    def __init__(self, space: Optional[Dict] = None, metric: Optional[str] = None, mode: Optional[str] = None, *,
                 algorithm: Optional[BOAlgorithm] = None, n_init: int = 10, seed: int = 0, capacity: int = 64):
        if isinstance(space, BOAlgorithm):  # NBOSearcher(nbo.gp_bo()): the algorithm, passed first
            if algorithm is not None:
                raise TypeError(f"space must be a dict of Tune domains, got the algorithm {space.name!r} as well as "
                                f"algorithm={algorithm.name!r}")
            space, algorithm = None, space
        _check_space("space", space)
        if metric is not None and not isinstance(metric, str):
            raise TypeError(f"metric must be a str (the reported metric's name), got {type(metric).__name__}")
        if mode not in (None, "min", "max"):
            raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
        super().__init__(metric=metric, mode=mode)
        if algorithm is None:
            from ..registry import STUDY_DEFAULT, get

            algorithm = get(STUDY_DEFAULT)
        _check_algorithm(algorithm)
        self._algorithm = algorithm
        self._n_init = check_int("n_init", n_init, 1)
        self._seed = check_int("seed", seed, 0)
        self._capacity = check_int("capacity", capacity, 1)
        self._study: Optional[AsyncStudy] = None
        self._live: Dict[str, np.ndarray] = {}
        self._rng = np.random.default_rng(self._seed)
        self._modelled: list = []  # (path, kind, quantum or categories, lower, upper) per parameter
        self._others: list = []   # (path, Domain) drawn at random
        self._template: dict = {}  # the space: its constants, its domains replaced at each suggest
        if space:
            self._setup(space)

    # ------------------------------------------------------------------ the space
    def _setup(self, space: Dict) -> None:
        _, domains, grids = parse_spec_vars(space)  # paths: tuples of dict keys and list indices
        if grids:
            raise ValueError(f"space: grid search ({[_name(p) for p, _ in grids]}) cannot be combined with "
                             "NBOSearcher; use tune.choice or a float range")
        self._template = copy.deepcopy(space)
        params = []
        for path, domain in domains:
            name = _name(path)
            if isinstance(domain, TuneCategorical):
                categories = list(domain.categories)
                params.append(Categorical(name, tuple(range(len(categories)))))  # indices: JSON-able
                self._modelled.append((tuple(path), "choice", categories, 0, len(categories) - 1))
            elif isinstance(domain, (Float, TuneInteger)):
                sampler = domain.get_sampler()
                quantum = None
                if isinstance(sampler, Quantized):
                    quantum, sampler = sampler.q, sampler.get_sampler()
                log = isinstance(sampler, LogUniform)
                if not log and type(sampler).__name__ not in ("_Uniform", "Uniform"):
                    raise ValueError(f"space: {name!r} uses the {sampler} sampler; NBOSearcher models uniform and "
                                     "log-uniform domains")
                if isinstance(domain, Float) and quantum is None:
                    lo, hi = float(domain.lower), float(domain.upper)
                    params.append(Continuous(name, lo, hi, log))
                    self._modelled.append((tuple(path), "float", None, lo, hi))
                elif isinstance(domain, Float):  # tune.quniform / qloguniform: the count k of quanta, value k q
                    q = float(quantum)
                    # Tune refuses bounds that are not multiples of q
                    lo, hi = math.ceil(float(domain.lower) / q - 1e-9), math.floor(float(domain.upper) / q + 1e-9)
                    params.append(Integer(name, lo, hi, 1, log))  # log: lower > 0, so lo >= 1
                    self._modelled.append((tuple(path), "quantized", q, lo, hi))
                elif quantum is None:  # tune.randint / lograndint: upper exclusive
                    lo, hi = int(domain.lower), int(domain.upper) - 1
                    params.append(Integer(name, lo, hi, 1, log))
                    self._modelled.append((tuple(path), "int", None, lo, hi))
                else:  # tune.qrandint / qlograndint: the multiples k q between the bounds (upper exclusive
                    # for q = 1), drawn uniformly or log-uniformly over k, as Tune draws them: the count k
                    q = int(quantum)
                    lo = math.ceil(domain.lower / q)
                    hi = math.floor(domain.upper / q) - (1 if q == 1 else 0)
                    if hi < lo:
                        raise ValueError(f"space: {name!r} has no multiple of q={q} between {domain.lower} and "
                                         f"{domain.upper}")
                    params.append(Integer(name, lo, hi, 1, log))  # log: lower > 0, so lo >= 1
                    self._modelled.append((tuple(path), "quantized_int", q, lo, hi))
            elif isinstance(domain, Domain):
                self._others.append((tuple(path), domain))
        if params:
            self._study = AsyncStudy(self._algorithm, search_space(params), self._n_init,
                                     jax.random.key(self._seed), capacity=self._capacity)

    def set_search_properties(self, metric: Optional[str], mode: Optional[str], config: Dict, **spec) -> bool:
        """Take the Tuner's ``param_space``, metric and mode (Tune calls this); ``False``
        when the searcher already has a space."""
        if self._study is not None or self._others:
            return False
        _check_space("config (the Tuner's param_space)", config)
        self._setup(config)
        if metric:
            self._metric = metric
        if mode:
            self._mode = mode
        return True

    # ------------------------------------------------------------------ the loop
    def suggest(self, trial_id: str) -> Optional[Dict]:
        """The configuration of trial ``trial_id`` (a nested dict like the space)."""
        if self._study is None and not self._others:
            raise RuntimeError(UNDEFINED_SEARCH_SPACE.format(cls=type(self).__name__, space="space"))
        if not self._metric or not self._mode:
            raise RuntimeError(UNDEFINED_METRIC_MODE.format(cls=type(self).__name__, metric=self._metric,
                                                            mode=self._mode))
        config = copy.deepcopy(self._template)
        if self._study is not None:
            x = self._study.suggest()
            self._live[trial_id] = x
            for (path, kind, extra, lo, hi), v in zip(self._modelled, x):
                if kind == "choice":
                    assign_value(config, path, extra[int(round(v))])
                elif kind == "int":  # (also a checkpoint's qrandint entry, written before they were counts)
                    assign_value(config, path, int(min(max(round(v), lo), hi)))
                elif kind == "quantized_int":  # k q
                    assign_value(config, path, int(min(max(round(v), lo), hi)) * extra)
                elif kind == "quantized":  # k q written exactly in the decimals of q (0.3, not 0.30000000000000004)
                    assign_value(config, path, stepped_value(0.0, int(min(max(round(v), lo), hi)), extra))
                elif extra is None:  # a float32 value (the design's, the algorithm's) as its shortest decimal
                    v = float32_decimal(v) if np.float32(v) == v else float(v)
                    assign_value(config, path, float(min(max(v, lo), hi)))
                else:  # a "float" entry with a q: a checkpoint written before quantized floats were counts
                    assign_value(config, path, float(min(max(round(float(v) / extra) * extra, lo), hi)))
        for path, domain in self._others:
            value = domain.cast(domain.sample(random_state=np.random.RandomState(self._rng.integers(2**31))))
            assign_value(config, path, value)
        return config

    def on_trial_complete(self, trial_id: str, result: Optional[Dict] = None, error: bool = False) -> None:
        """Tell the trial's metric (negated for ``mode="max"``); an errored trial, or one
        without a finite metric, is a failed evaluation."""
        x = self._live.pop(trial_id, None)
        if x is None or self._study is None:
            return
        value, reason = float("nan"), None
        if error:
            reason = "the trial raised an error"
        elif not result or self._metric not in result:
            reason = f"the trial reported no {self._metric!r}"
        else:
            try:
                value = float(result[self._metric])
            except (TypeError, ValueError):
                reason = f"{self._metric!r} is not a number: {result[self._metric]!r}"
            if reason is None and not math.isfinite(value):
                reason = f"{self._metric!r} = {value}"
        y = value if self._mode == "min" else -value
        self._study.tell(x, y, reason)

    @property
    def study(self) -> Optional[AsyncStudy]:
        """The :class:`AsyncStudy` over the modelled parameters (one coordinate each, in the
        space's order: a category as its index, a quantized float or integer as its count of
        quanta ``k``, the value ``k q``; values as minimized: negated for
        ``mode="max"``), or ``None`` before a space."""
        return self._study

    # ------------------------------------------------------------------ checkpoints
    def get_state(self) -> Dict:
        return {"study": None if self._study is None else self._study.state_dict(), "live": self._live,
                "rng": self._rng.bit_generator.state, "modelled": self._modelled, "others": self._others,
                "template": self._template, "metric": self._metric, "mode": self._mode}

    def set_state(self, state: Dict) -> None:
        self._study = None if state["study"] is None else AsyncStudy.from_state_dict(state["study"], self._algorithm)
        self._live = dict(state["live"])
        self._rng.bit_generator.state = state["rng"]
        self._modelled, self._others, self._template = state["modelled"], state["others"], state["template"]
        self._metric, self._mode = state["metric"], state["mode"]

    def save(self, checkpoint_path: str) -> None:
        """Pickle the searcher's state (the study, the running trials) to ``checkpoint_path``."""
        with open(checkpoint_path, "wb") as f:
            pickle.dump(self.get_state(), f)

    def restore(self, checkpoint_path: str) -> None:
        """Restore a state written by :meth:`save` (this searcher's algorithm continues it)."""
        with open(checkpoint_path, "rb") as f:
            self.set_state(pickle.load(f))


def _name(path) -> str:
    """A parameter's name in messages: its path's keys and list indices joined by ``/``."""
    return "/".join(str(part) for part in path)


def _check_space(argument: str, space) -> None:
    """Refuse a search space that is not a dict (or ``None``), naming ``argument``."""
    if space is not None and not isinstance(space, dict):
        raise TypeError(f"{argument} must be a dict of Tune domains and constants, got {type(space).__name__}"
                        + (": pass the algorithm as algorithm=" if callable(space) else ""))
