"""Asynchronous BO from no data: :class:`AsyncStudy`, the state that parallel evaluation on
Ray (:func:`nbo_jax.integrations.ray.optimize`) and the Ray Tune searcher
(:class:`nbo_jax.integrations.ray_tune.NBOSearcher`) share.

Workers finish in any order, so the study hands out one point at a time (``suggest``) and
takes results one at a time (``tell``). The first ``n_init`` points are a uniform initial
design (:func:`nbo_jax.initial_design`); after that an :class:`~nbo_jax.AskTell` is built
from the results told so far, with the points still being evaluated as pending points
(fantasized, :func:`nbo_jax.transforms.batch.fantasize`), so busy workers are not sent to the same
place: asynchronous BO in the sense of Kandasamy et al. 2018 and Snoek et al. 2012 (sec. 3.3).
A failed evaluation (an exception, a crash, a timeout, a NaN value) is told as a failure:
recorded with its reason, kept in the history, and the model learns that the point is bad.
With a multi-objective algorithm (``BOAlgorithm.multi_objective``) each value is a row of
``m >= 2`` objectives; the results are then the observed Pareto front
(:meth:`AsyncStudy.pareto_front`).

Nothing here needs Ray; the state round-trips through :meth:`AsyncStudy.state_dict` (numpy
arrays and JSON-able values) for checkpoints.
"""

from __future__ import annotations

import os
import pathlib
import pickle
from typing import Optional

import jax
import numpy as np

from .._checks import check_int
from ..ask_tell import AskTell, _leaf_from_numpy, _leaf_to_numpy, quiet_failures
from ..loop import _check_algorithm, _check_key, initial_design
from ..search_space import SearchSpace
from ..types import BOAlgorithm, Bounds, as_bounds

FORMAT = "nbo_jax.AsyncStudy/1"


def _finite_rows(y: np.ndarray) -> np.ndarray:
    """``(n,)``: each value of ``y (n,)``, or every objective of a row of ``y (n, m)``, is finite."""
    ok = np.isfinite(y)
    return ok if ok.ndim == 1 else np.all(ok, axis=1)


class AsyncStudy:
    """An asynchronous BO study: ``suggest`` a point, evaluate it anywhere, ``tell`` its value.

    Example::

        study = AsyncStudy(nbo.gp_bo(), [(0.0, 1.0)] * 3, n_init=8, key=jax.random.key(0))
        a, b = study.suggest(), study.suggest()     # two workers busy
        study.tell(b, f(b))                          # results in any order
        study.tell(a, float("nan"), error="worker crashed")

    Args:
        algorithm: a :class:`~nbo_jax.types.BOAlgorithm` without constraints. With ``q > 1``
            each ``ask`` yields ``q`` points, handed out one by one.
        bounds: the box, as :class:`~nbo_jax.AskTell` reads it, or a mixed
            :class:`~nbo_jax.search_space.SearchSpace`; points are float64 numpy arrays
            ``(d,)`` inside it (for a space: one number per parameter, a category as its
            index).
        n_init: the size of the initial design (uniform in the box), >= 1. If every one of
            its results failed, further points are uniform too, until one succeeds.
        key: a PRNG key (``jax.random.key(seed)``).
        capacity: the optimizer's first capacity (doubled when reached, :meth:`AskTell.grow`).

    Raises:
        TypeError / ValueError: bad arguments, each message naming it (a constrained
        algorithm is refused: parallel evaluation returns one value per point).
    """

    def __init__(self, algorithm: BOAlgorithm, bounds, n_init: int, key, *, capacity: int = 64):
        _check_algorithm(algorithm)
        _check_key(key)
        if algorithm.constrained:
            raise ValueError(f"algorithm: {algorithm.name!r} models constraints; an AsyncStudy records one value "
                             "per point (use nbo_jax.AskTell to tell constraint values)")
        self.algorithm = algorithm
        self.space = bounds if isinstance(bounds, SearchSpace) else None
        self.bounds = Bounds(bounds.lower, bounds.upper) if self.space is not None else as_bounds(bounds, name="bounds")
        self.n_init = check_int("n_init", n_init, 1)
        self.capacity = check_int("capacity", capacity, 1)
        self._key, k_design = jax.random.split(key)
        self.design = np.asarray(initial_design(k_design, self._domain, self.n_init, np.float32), np.float64)
        self.design = np.clip(self.design, self.bounds.lower, self.bounds.upper)
        self.n_suggested = 0
        self._x = np.zeros((0, self.bounds.dim))   # told points until the optimizer starts; it holds them after
        self._y = np.zeros(0)
        self._busy = np.zeros((0, self.bounds.dim))  # suggested, not told
        self._queue = np.zeros((0, self.bounds.dim))  # asked by a q > 1 algorithm, not yet handed out
        self.failures: list[dict] = []
        self.optimizer: Optional[AskTell] = None

    # ------------------------------------------------------------------ the loop
    def suggest(self) -> np.ndarray:
        """The next point to evaluate, ``(d,)`` float64; it is *busy* until told.

        Returns the initial design first; then the algorithm's ask, with every busy point
        pending."""
        if self.n_suggested < self.n_init:
            x = self.design[self.n_suggested]
        elif self.optimizer is None and not _finite_rows(self._told()[1]).any():
            # nothing to model yet (no result, or only failures): more uniform points
            k = jax.random.fold_in(self._key, self.n_suggested)
            x = np.asarray(initial_design(k, self._domain, 1, np.float32)[0], np.float64)
            x = np.clip(x, self.bounds.lower, self.bounds.upper)
        else:
            if self.optimizer is None:
                self._start()
            if not len(self._queue):
                self._queue = np.atleast_2d(np.asarray(self.optimizer.ask(), np.float64))
            x, self._queue = self._queue[0], self._queue[1:]
        self.n_suggested += 1
        self._busy = np.concatenate([self._busy, x[None]], axis=0)
        return x.copy()

    def _start(self) -> None:
        self._key, k = jax.random.split(self._key)
        capacity = max(self.capacity, len(self._y) + len(self._busy) + self.algorithm.q)
        with quiet_failures():  # failures are expected here and recorded in self.failures
            self.optimizer = AskTell(self.algorithm, self._domain, capacity, k, self._x, self._y, auto_grow=True)
        self._x = self._y = None  # the optimizer's history from now on
        if len(self._busy):
            self.optimizer.add_pending(self._busy)

    def tell(self, x, y, error: Optional[str] = None) -> None:
        """Record the value ``y`` of a suggested point ``x (d,)``: a float, or ``(m,)``
        objectives for a multi-objective algorithm (the first value told fixes ``m``). A
        failed evaluation is ``y = NaN`` (or inf, in any objective; a single NaN fails the
        whole row), with ``error`` saying why (kept in :attr:`failures`).

        Raises:
            ValueError: ``x`` is not a busy point (never suggested, or already told), or ``y``
            holds another number of objectives than the values told before; nothing is
            recorded."""
        x = np.asarray(x, np.float64).reshape(-1)
        y = self._value(y)
        hit = np.nonzero(np.all(np.isclose(self._busy, x, rtol=1e-12, atol=1e-12), axis=1))[0] \
            if x.shape == (self.bounds.dim,) else np.zeros(0, int)
        if not hit.size:
            raise ValueError(f"x: {x.tolist()} is not a point this study suggested and is waiting for; "
                             "nothing was recorded")
        if not np.all(np.isfinite(y)):
            self.failures.append({"index": self.n_told, "x": x.tolist(), "error": error or f"value {y}"})
        if self.optimizer is not None:
            with quiet_failures():
                self.optimizer.tell(x, y)
        else:
            self._x = np.concatenate([self._x, x[None]], axis=0)
            self._y = np.concatenate([self._y.reshape((0,) + y.shape) if not len(self._y) else self._y, y[None]])
        self._busy = np.delete(self._busy, hit[0], axis=0)

    def _value(self, y) -> np.ndarray:
        """``y`` as a float64 ``()`` array, or ``(m,)`` for ``m >= 2`` objectives, checked
        against the values told before."""
        y = np.asarray(y, np.float64)
        y = y.reshape(()) if y.size == 1 else y.reshape(-1)
        told = self._told()[1]
        if told.ndim == 2 and y.shape == () and not np.isfinite(y):  # a failure told as one NaN: the whole row
            y = np.full(told.shape[1:], y)
        if len(told) and told.shape[1:] != y.shape:
            want = "one number" if told.ndim == 1 else f"{told.shape[1]} objective values"
            raise ValueError(f"y: this study's values are {want} per point, got shape {y.shape}; nothing was "
                             "recorded")
        return y
    @property
    def _domain(self):
        """The search domain: the mixed space, or the box."""
        return self.bounds if self.space is None else self.space

    def _told(self) -> tuple[np.ndarray, np.ndarray]:
        """``(x (n, d), y (n,))`` told so far, without copies: the study's own arrays until the
        optimizer starts, the optimizer's history (the same rows, in the same order) after."""
        if self.optimizer is not None:
            return self.optimizer._x, self.optimizer._y
        return self._x, self._y

    # ------------------------------------------------------------------ results
    @property
    def x(self) -> np.ndarray:
        """``(n, d)`` every told point, in the order told (float64)."""
        return self._told()[0].copy()

    @property
    def y(self) -> np.ndarray:
        """``(n,)`` the told values (NaN/inf for failures); ``(n, m)`` for ``m`` objectives."""
        return self._told()[1].copy()

    @property
    def busy(self) -> np.ndarray:
        """``(P, d)`` points suggested and not yet told (being evaluated, or lost with a
        killed driver: evaluate them again after :meth:`load`)."""
        return self._busy.copy()

    @property
    def n_told(self) -> int:
        """How many results (failures included) were told."""
        return len(self._told()[1])

    def best(self) -> tuple[np.ndarray, float]:
        """``(x (d,), y)`` of the smallest finite value told.

        Raises:
            ValueError: no successful evaluation yet, or several objectives (no single best:
            :meth:`pareto_front`)."""
        x, y = self._told()
        if y.ndim == 2:
            raise ValueError(f"best(): the study has {y.shape[1]} objectives, so no single value is best; "
                             "study.pareto_front() returns the observed non-dominated points")
        ok = np.isfinite(y)
        if not ok.any():
            raise ValueError("no successful evaluation yet")
        i = int(np.argmin(np.where(ok, y, np.inf)))
        return x[i].copy(), float(y[i])

    def pareto_front(self) -> tuple[np.ndarray, np.ndarray]:
        """``(x (k, d), y (k, m))``: the told points with finite values that no other one
        dominates (every objective minimized; :func:`nbo_jax.pareto.is_non_dominated`).

        Raises:
            ValueError: one objective (use :meth:`best`), or no successful evaluation yet."""
        from ..pareto import is_non_dominated

        x, y = self._told()
        if y.ndim != 2:
            raise ValueError("pareto_front(): the study has one objective; use study.best()")
        ok = _finite_rows(y)
        if not ok.any():
            raise ValueError("no successful evaluation yet")
        front = np.asarray(is_non_dominated(np.where(ok[:, None], y, 0.0), ok))
        return x[front].copy(), y[front].copy()

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict:
        """The study as numpy arrays and JSON-able values (the optimizer's full state
        included), for :meth:`from_state_dict`, :meth:`save` and pickling."""
        key_data, key_impl = _leaf_to_numpy(self._key)
        state = {
            "format": FORMAT, "algorithm": self.algorithm.name, "n_init": self.n_init,
            "capacity": self.capacity, "lower": self.bounds.lower.tolist(), "upper": self.bounds.upper.tolist(),
            "design": self.design, "n_suggested": self.n_suggested, "x": self.x, "y": self.y,
            "busy": self._busy, "queue": self._queue, "failures": list(self.failures),
            "key": key_data, "key_impl": key_impl, "optimizer": None,
            "space": None if self.space is None else self.space.to_json(),
        }
        if self.optimizer is not None:
            state["optimizer"] = self.optimizer._snapshot()
        return state

    @classmethod
    def from_state_dict(cls, state: dict, algorithm: BOAlgorithm) -> "AsyncStudy":
        """Rebuild a study from :meth:`state_dict`. ``algorithm`` is the study's algorithm
        (the optimizer continues bit for bit when it is the same one; see
        :meth:`AskTell.load` for a different one).

        Raises:
            ValueError: not a study's state."""
        if not isinstance(state, dict) or state.get("format") != FORMAT:
            raise ValueError(f"state: not an AsyncStudy state (format {FORMAT!r} expected)")
        _check_algorithm(algorithm)
        self = cls.__new__(cls)
        self.algorithm = algorithm
        self.space = SearchSpace.from_json(state["space"]) if state.get("space") else None
        self.bounds = (Bounds(self.space.lower, self.space.upper) if self.space is not None
                       else as_bounds((state["lower"], state["upper"]), name="bounds"))
        self.n_init, self.capacity = int(state["n_init"]), int(state["capacity"])
        self.design, self.n_suggested = np.asarray(state["design"]), int(state["n_suggested"])
        self._x, self._y = np.asarray(state["x"]), np.asarray(state["y"])
        self._busy, self._queue = np.asarray(state["busy"]), np.asarray(state["queue"])
        self.failures = list(state["failures"])
        self._key = _leaf_from_numpy(state["key"], state["key_impl"])
        self.optimizer = None
        if state["optimizer"] is not None:
            arrays, meta = state["optimizer"]
            self.optimizer = AskTell._restore(arrays, meta, algorithm)
            self._x = self._y = None  # the optimizer's history
        return self

    def save(self, path) -> pathlib.Path:
        """Write the study to the file ``path`` (a pickle of :meth:`state_dict`), atomically:
        a driver killed while saving leaves the previous checkpoint intact."""
        path = pathlib.Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            pickle.dump(self.state_dict(), f)
        os.replace(tmp, path)
        return path

    @classmethod
    def load(cls, path, algorithm: BOAlgorithm) -> "AsyncStudy":
        """Read a study written by :meth:`save` (see :meth:`from_state_dict`).

        Raises:
            FileNotFoundError: no file at ``path``. ValueError: not a study's checkpoint."""
        with open(path, "rb") as f:
            state = pickle.load(f)
        return cls.from_state_dict(state, algorithm)
