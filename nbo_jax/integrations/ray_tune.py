"""The library's algorithms in Ray Tune: :class:`NBOSearcher`, a ``ray.tune.search.Searcher``.

Tune runs the trials (on a local or remote Ray cluster, with its schedulers, checkpoints
and loggers); the searcher proposes each trial's configuration. Float parameters
(``tune.uniform``, ``tune.loguniform``, ``tune.quniform``) are modelled by the algorithm
through an :class:`~nbo_jax.integrations.study.AsyncStudy`: trials still running are
pending points, a trial that errors or reports no finite metric is a failed evaluation.
Every other parameter (``tune.randint``, ``tune.choice``, ...) is drawn at random from its
domain, as Tune itself would, and constants (lists included, and domains inside lists) are
passed through. Grid search is refused.

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
    from ray.tune.search.sample import Domain, Float, LogUniform, Quantized
    from ray.tune.search.variant_generator import assign_value, parse_spec_vars
except ImportError as err:  # pragma: no cover - exercised without the extra
    raise ImportError("nbo_jax.integrations.ray_tune needs Ray Tune: pip install 'nbo-jax[ray]'") from err

from .._checks import check_int
from ..loop import _check_algorithm
from ..types import BOAlgorithm
from .study import AsyncStudy

__all__ = ["NBOSearcher"]


class NBOSearcher(Searcher):
    """A Ray Tune searcher backed by a library algorithm (default Neural-BO, Phan-Trong et
    al. 2023).

    Args:
        space: the search space, a dict of Tune domains and constants (nested dicts and
            lists); ``None`` to take the Tuner's ``param_space``. An algorithm passed here
            (``NBOSearcher(nbo.gp_bo())``) is taken as ``algorithm``.
        metric: the reported metric to optimize (or from the ``TuneConfig``).
        mode: ``"min"`` or ``"max"`` (or from the ``TuneConfig``).
        algorithm: an unconstrained :class:`~nbo_jax.types.BOAlgorithm`; default
            :func:`nbo_jax.neural_bo`.
        n_init: trials drawn uniformly (the initial design) before the algorithm proposes.
        seed: seeds the design, the algorithm and the random draws of the other parameters.
        capacity: the optimizer's first capacity (doubled when reached).

    Raises:
        TypeError / ValueError: bad arguments (each message names it: ``space`` not a dict,
        an algorithm given both as ``space`` and as ``algorithm``), a grid search in the
        space, or a float domain with a sampler other than uniform/log-uniform.
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
            from ..algorithms import neural_bo

            algorithm = neural_bo()
        _check_algorithm(algorithm)
        self._algorithm = algorithm
        self._n_init = check_int("n_init", n_init, 1)
        self._seed = check_int("seed", seed, 0)
        self._capacity = check_int("capacity", capacity, 1)
        self._study: Optional[AsyncStudy] = None
        self._live: Dict[str, np.ndarray] = {}
        self._rng = np.random.default_rng(self._seed)
        self._floats: list = []   # (path, log, quantum, lower, upper) per modelled coordinate
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
        lower, upper = [], []
        for path, domain in domains:
            name = _name(path)
            if isinstance(domain, Float):
                sampler = domain.get_sampler()
                quantum = None
                if isinstance(sampler, Quantized):
                    quantum, sampler = float(sampler.q), sampler.get_sampler()
                log = isinstance(sampler, LogUniform)
                if not log and type(sampler).__name__ not in ("_Uniform", "Uniform"):
                    raise ValueError(f"space: {name!r} uses the {sampler} sampler; NBOSearcher models uniform and "
                                     "log-uniform floats")
                lo, hi = float(domain.lower), float(domain.upper)
                self._floats.append((tuple(path), log, quantum, lo, hi))
                lower.append(math.log10(lo) if log else lo)
                upper.append(math.log10(hi) if log else hi)
            elif isinstance(domain, Domain):
                self._others.append((tuple(path), domain))
        if lower:
            self._study = AsyncStudy(self._algorithm, (np.array(lower), np.array(upper)), self._n_init,
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
            for (path, log, quantum, lo, hi), v in zip(self._floats, x):
                v = 10.0 ** v if log else float(v)
                if quantum is not None:
                    v = round(v / quantum) * quantum
                assign_value(config, path, float(min(max(v, lo), hi)))
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
        """The :class:`AsyncStudy` over the float parameters (values as minimized: negated
        for ``mode="max"``; log-uniform ones in log10 units), or ``None`` before a space."""
        return self._study

    # ------------------------------------------------------------------ checkpoints
    def get_state(self) -> Dict:
        return {"study": None if self._study is None else self._study.state_dict(), "live": self._live,
                "rng": self._rng.bit_generator.state, "floats": self._floats, "others": self._others,
                "template": self._template, "metric": self._metric, "mode": self._mode}

    def set_state(self, state: Dict) -> None:
        self._study = None if state["study"] is None else AsyncStudy.from_state_dict(state["study"], self._algorithm)
        self._live = dict(state["live"])
        self._rng.bit_generator.state = state["rng"]
        self._floats, self._others, self._template = state["floats"], state["others"], state["template"]
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
