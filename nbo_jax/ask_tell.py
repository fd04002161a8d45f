"""Ask/tell for experiments outside JAX (a simulator, a lab): :class:`AskTell`.

The algorithm's own pure ``init``/``ask``/``tell`` drive a Python loop, with what a lab
needs around them: batches and pending points for asynchronous workers, validation of every
told point (nothing bad is recorded), failed evaluations kept as information, asks inside
the user's bounds in the user's dtype, a capacity that is refused up front (or grown), and
save/resume to a directory (npz + JSON) that continues bit for bit.

With ``m >= 2`` objectives (an algorithm with ``BOAlgorithm.multi_objective``, given
``y0 (n0, m)``) every told value is a row ``(m,)``, every objective minimized; the results
are the observed Pareto front (:meth:`AskTell.pareto_front`: the valid rows that no other
valid row dominates, :func:`nbo_jax.pareto.is_non_dominated`) and the hypervolume it
dominates (:meth:`AskTell.hypervolume`).
"""

from __future__ import annotations

import contextlib
import json
import pathlib
import uuid
import warnings
from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np

from ._checks import check_bool, check_int
from .search_space import SearchSpace
from .transforms.batch import fantasize
from .loop import _check_algorithm, _check_key
from .types import (
    BOAlgorithm,
    Bounds,
    FactoryCall,
    FiniteDomain,
    as_bounds,
    choice_tolerance,
    finite_domain,
)

Array = jax.Array
FORMAT = "nbo_jax.AskTell/1"


def _user_dtype(bounds) -> np.dtype:
    """The float dtype the user gave the bounds in (float64 for Python numbers)."""
    arrays = [np.asarray(b) for b in (bounds if isinstance(bounds, (tuple, list, Bounds)) else [bounds])]
    kinds = [a.dtype for a in arrays if np.issubdtype(a.dtype, np.floating)]
    return np.result_type(*kinds) if kinds and all(k == kinds[0] for k in kinds) else np.dtype(np.float64)


def _jsonable(value):
    """JSON form of a factory argument, or raise TypeError (tags namedtuples and arrays)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (np.generic,)):
        return value.item()
    if isinstance(value, BOAlgorithm):  # an algorithm argument (trust_region's): its factory call
        call = _config_json(value)
        if call is None:
            raise TypeError(f"algorithm {value.name!r} was built by hand or with arguments that are not "
                            "JSON-serializable")
        return {"__algorithm__": call}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        cls = type(value)
        return {"__namedtuple__": f"{cls.__module__}:{cls.__qualname__}",
                "fields": {k: _jsonable(v) for k, v in value._asdict().items()}}
    if isinstance(value, (list, tuple)):
        return {"__tuple__": [_jsonable(v) for v in value]} if isinstance(value, tuple) else [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {"__dict__": {str(k): _jsonable(v) for k, v in value.items()}}
    if isinstance(value, (np.ndarray, jax.Array)) and not isinstance(value, jax.core.Tracer):
        a = np.asarray(value)
        return {"__array__": a.tolist(), "dtype": str(a.dtype)}
    raise TypeError(f"{type(value).__name__} is not JSON-serializable")


def _from_json(value):
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__tuple__" in value:
        return tuple(_from_json(v) for v in value["__tuple__"])
    if "__algorithm__" in value:
        call = value["__algorithm__"]
        return FactoryCall(call["factory"], {k: _from_json(v) for k, v in call["kwargs"].items()},
                           call["name"]).build()
    if "__dict__" in value:
        return {k: _from_json(v) for k, v in value["__dict__"].items()}
    if "__array__" in value:
        return np.asarray(value["__array__"], dtype=value["dtype"])
    if "__namedtuple__" in value:
        import importlib

        module, _, qualname = value["__namedtuple__"].partition(":")
        cls = importlib.import_module(module)
        for part in qualname.split("."):
            cls = getattr(cls, part)
        return cls(**{k: _from_json(v) for k, v in value["fields"].items()})
    return value


def _config_json(algorithm: BOAlgorithm) -> Optional[dict]:
    """``{"factory", "kwargs", "name"}`` of the algorithm, or ``None`` if not JSON-able."""
    call = algorithm.config
    if call is None:
        return None
    try:
        kwargs = {k: _jsonable(v) for k, v in call.kwargs.items()}
    except TypeError:
        return None
    return {"factory": call.factory, "kwargs": kwargs, "name": algorithm.name}


def _model_dtype() -> np.dtype:
    """The float dtype the model computes in (float32 unless ``jax_enable_x64``)."""
    return np.dtype(jnp.zeros(()).dtype)


def _holdable(values: np.ndarray) -> np.ndarray:
    """Elementwise: finite and within the range of :func:`_model_dtype` (a value the model
    can hold; any other is a failed evaluation)."""
    return np.isfinite(values) & (np.abs(np.nan_to_num(values)) <= np.finfo(_model_dtype()).max)


def _rows_holdable(y: np.ndarray) -> np.ndarray:
    """``(n,)``: each value of ``y (n,)``, or every objective of a row of ``y (n, m)``, is
    :func:`_holdable`."""
    ok = _holdable(y)
    return ok if ok.ndim == 1 else np.all(ok, axis=1)


def _leaf_to_numpy(leaf) -> tuple[np.ndarray, Optional[str]]:
    if hasattr(leaf, "dtype") and jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
        return np.asarray(jax.random.key_data(leaf)), str(jax.random.key_impl(leaf))
    return np.asarray(leaf), None


def _leaf_from_numpy(a: np.ndarray, impl: Optional[str]):
    if impl is not None:
        return jax.random.wrap_key_data(jnp.asarray(a), impl=impl)
    return jnp.asarray(a)


def _spec(leaf) -> list:
    """``[shape, dtype]`` of a state leaf (keys by their key dtype)."""
    return [list(np.shape(leaf)), str(leaf.dtype)]


@contextlib.contextmanager
def quiet_failures():
    """Silence :class:`AskTell`'s ``RuntimeWarning`` about failed evaluations, for callers that
    expect failures and record them themselves (an asynchronous study, the Optuna sampler)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="AskTell: .* failed evaluation", category=RuntimeWarning)
        yield


_COMPILED: dict[str, dict] = {}  # by repr of (compiler_options, the ask's), then per_algorithm's key
_CANONICAL: dict = {}


def _plain(value) -> bool:
    """``value`` is built of None, bools, numbers, strings, tuples, lists and str-keyed dicts
    (so its ``repr`` identifies it)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (tuple, list)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def canonical(algorithm: BOAlgorithm) -> BOAlgorithm:
    """The first algorithm seen in this process that the same factory built from the same
    plain arguments (:class:`~nbo_jax.types.FactoryCall`), with the same code for ``init``,
    ``ask`` and ``tell`` and the same name and ``q``; else ``algorithm`` itself. Two
    ``nbo.gp_bo()`` calls then share one compiled ``ask`` (an Optuna study or a new
    :class:`AskTell` does not compile again). An algorithm whose factory arguments hold arrays
    or functions, or whose parts were replaced by other code, is its own canonical one."""
    call = algorithm.config
    if call is None or not _plain(call.kwargs):
        return algorithm
    code = tuple(getattr(f, "__code__", None) for f in (algorithm.init, algorithm.ask, algorithm.tell))
    if any(c is None for c in code):
        return algorithm
    key = (call.factory, repr(sorted(call.kwargs.items())), call.name, code, algorithm.name, algorithm.q,
           algorithm.batch_rule, algorithm.constrained)
    return _CANONICAL.setdefault(key, algorithm)


CPU_OPTIMIZATION_LEVEL = 0
"""LLVM's optimization level for :class:`AskTell`'s programs on a CPU below
:data:`OPTIMIZED_FROM_CAPACITY` rows (XLA's ``xla_backend_optimization_level``; XLA's default
is 2). An ask-tell study compiles its programs in the user's process, once per configuration
and capacity, and runs each a few dozen times: measured on a 2-core CPU
(``benchmarks/trial_cost.py``), level 0 compiles a GP's mixed-space ``ask`` in 2.4 s instead
of 3.4 s and its ``init`` in 0.8 s instead of 1.3 s, and a compiled 100-trial study runs in
4.5 s instead of 3.0 s. ``run_bo`` and other accelerators keep XLA's default."""

OPTIMIZED_FROM_CAPACITY = 128
"""From this capacity on, :class:`AskTell`'s programs on a CPU compile at XLA's default level:
there the programs run long enough to repay it. Measured on a 2-core CPU for GP-EI on a
float, an integer and a category (200 observations at capacity 256): a trial's ``init`` and
``ask`` took 0.13 s instead of 0.31 s, and compiling both 7.0 s instead of 5.6 s."""


LEVEL_0_MIXED_ASKS = ("gp",)
"""Surrogates (:attr:`Surrogate.name <nbo_jax.base.Surrogate>`) whose ``ask`` on a mixed
:class:`~nbo_jax.search_space.SearchSpace` compiles on a CPU at :data:`CPU_OPTIMIZATION_LEVEL`
at every capacity, not at XLA's default level from :data:`OPTIMIZED_FROM_CAPACITY` rows. The
GP's mixed ``ask`` (continuous climbs alternating with a discrete neighbourhood search, its
time mostly in library calls) compiled in 2.8 s instead of 4.3 s at level 2 and ran in 18 ms
instead of 11 ms (a float, an integer and a category; 200 observations at capacity 256; 2-core
CPU): level 2 repays its compilation after about 200 asks, more than a capacity holds. Over
200-trial studies of ``NBOSampler("gp-ei")`` (``benchmarks/trial_cost.py``'s objective, medians
of 6 fresh processes) the first study took 34.2 s instead of 41.4 s and the next one 14.5 s
instead of 14.3 s. Not for the others measured: Neural-BO's mixed ``ask`` (expected
improvement on raw samples, no climb) compiled in 0.9 s at either level and ran in 21 ms
instead of 14 ms at level 0 (its 200-trial studies 24.8 s and 12.8 s instead of 23.2 s and
11.5 s, medians of 6 and 9), and the GP's ``ask`` on a box (3 and 10 dimensions) ran in 20-24 ms
instead of 9-11 ms for 0.5-0.9 s less compilation."""


CPU_FUSION_EMITTERS = False
"""Whether :class:`AskTell`'s programs on a CPU below :data:`OPTIMIZED_FROM_CAPACITY` rows use
XLA:CPU's fusion emitters (XLA's ``xla_cpu_use_fusion_emitters``, on by default) or its
elemental emitters. Measured on a 2-core CPU for GP-EI on a float, an integer and a category,
at capacity 64: without them the ``ask`` compiled in 2.2 s instead of 3.7 s and ran as fast
(6 ms), the ``init`` compiled in 0.6 s instead of 1.9 s and ran in 17 ms instead of 9 ms
(with 49 observations). Where the installed XLA does not know the option it is left out."""


_OPTION_KNOWN: dict[str, bool] = {}


def _known(option: str, value) -> bool:
    """Whether the default backend's XLA takes the debug option ``option`` (a trivial program
    compiled with it once per process)."""
    if option not in _OPTION_KNOWN:
        try:
            jax.jit(lambda x: x + 1, compiler_options={option: value}).lower(np.float32(0)).compile()
            _OPTION_KNOWN[option] = True
        except Exception:  # noqa: BLE001 - an XLA without the option refuses it, whatever the error type
            _OPTION_KNOWN[option] = False
    return _OPTION_KNOWN[option]


def compiler_options(capacity: Optional[int] = None) -> Optional[dict]:
    """XLA compile options of :class:`AskTell`'s programs for ``capacity`` rows on the default
    backend: on a CPU, below :data:`OPTIMIZED_FROM_CAPACITY` (and for ``None``), LLVM at
    :data:`CPU_OPTIMIZATION_LEVEL` and the fusion emitters as :data:`CPU_FUSION_EMITTERS`
    says; else ``None`` (XLA's defaults)."""
    if jax.default_backend() == "cpu" and (capacity is None or capacity < OPTIMIZED_FROM_CAPACITY):
        options = {"xla_backend_optimization_level": CPU_OPTIMIZATION_LEVEL}
        if _known("xla_cpu_use_fusion_emitters", CPU_FUSION_EMITTERS):
            options["xla_cpu_use_fusion_emitters"] = CPU_FUSION_EMITTERS
        return options
    return None


def fits_from_start(algorithm: BOAlgorithm) -> bool:
    """Whether ``algorithm``'s surrogate fits from a given start (its ``model`` has
    :attr:`Surrogate.hyperparameters <nbo_jax.base.Surrogate>`): what ``AskTell(warm_start=)``
    needs."""
    return algorithm.model is not None and algorithm.model.hyperparameters is not None


def domain_key(domain):
    """What compiled code and a surrogate's hyperparameters depend on in a domain: a mixed
    :class:`~nbo_jax.search_space.SearchSpace` itself, or a box's dimension (``int``)."""
    return domain if isinstance(domain, SearchSpace) else int(np.shape(domain.lower)[0])


def padded_pending(pending: np.ndarray) -> np.ndarray:
    """Pending points ``(n, d)`` padded with NaN rows to the next power of two (``n >= 1``),
    so that :class:`AskTell` compiles its fantasizing ``tell`` once per power of two rather
    than once per number of pending points (an Optuna study with parallel workers has a
    varying number of running trials). A NaN row is never written to a dataset
    (:meth:`nbo_jax.dataset.Dataset.add_batch`), so the fantasized data are those of the
    ``n`` points."""
    n = pending.shape[0]
    size = 1 << max(n - 1, 0).bit_length()
    if size == n:
        return pending
    return np.concatenate([pending, np.full((size - n,) + pending.shape[1:], np.nan, pending.dtype)], axis=0)


def _level_0_ask(algorithm: BOAlgorithm, domain) -> bool:
    """Whether ``algorithm``'s ``ask`` on ``domain`` compiles at :data:`CPU_OPTIMIZATION_LEVEL`
    at every capacity (:data:`LEVEL_0_MIXED_ASKS`)."""
    return (isinstance(domain, SearchSpace) and algorithm.model is not None
            and algorithm.model.name in LEVEL_0_MIXED_ASKS)


def _compiled(algorithm: BOAlgorithm, capacity: Optional[int] = None, domain=None) -> tuple:
    """``(init, ask, tell, fantasize)`` of ``algorithm``, jit-compiled once per
    :func:`canonical` algorithm and set of :func:`compiler_options` (those of ``capacity``;
    the ``ask``'s those of no capacity where :func:`_level_0_ask` says so for ``domain``, a
    :class:`~nbo_jax.search_space.SearchSpace` or a box),
    so optimizers rebuilt from a history (an Optuna sampler, a resumed study, a second study
    of the same factory call) reuse the compiled code instead of tracing new functions
    (:func:`per_algorithm`). ``init`` is compiled too (static ``capacity``, the bounds an
    argument): run eagerly, a GP's ``init`` took 9.5 s on a 2-core CPU, compiled 1.5 s, and
    0.04 s for a second optimizer of the same shapes."""
    options = compiler_options(capacity)
    ask_options = compiler_options() if _level_0_ask(algorithm, domain) else options

    def make(a):
        # an init that pads to a fixed shape on the host and compiles itself (the Optuna
        # sampler's, once per (capacity, d)) is called as it is
        init = (a.init if getattr(a.init, "compiles_itself", False)
                else jax.jit(a.init, static_argnames=("capacity",), compiler_options=options))
        return (init, jax.jit(a.ask, compiler_options=ask_options), jax.jit(a.tell, compiler_options=options),
                jax.jit(lambda s, x: fantasize(a, s, x), compiler_options=options))

    return per_algorithm(_COMPILED.setdefault(repr((options, ask_options)), {}), algorithm, make)


def per_algorithm(cache: dict, algorithm: BOAlgorithm, make):
    """``make(a)`` for ``a = canonical(algorithm)``, made once per process and kept in ``cache``
    (keyed by ``id(a)``; the entry keeps ``a`` alive, so the id is not reused while cached)."""
    algorithm = canonical(algorithm)
    entry = cache.get(id(algorithm))
    if entry is None or entry[0] is not algorithm:
        entry = cache[id(algorithm)] = (algorithm, make(algorithm))
    return entry[1]


_META_FIELDS = {"algorithm": ("name", "q", "config"), "bounds": ("lower", "upper", "dtype"), "capacity": (),
                "auto_grow": (), "key_impl": (), "state": ("treedef", "leaves", "key_impls")}


def _check_meta(meta, where: str) -> None:
    """Raise ``ValueError`` naming ``where`` unless ``meta`` is an AskTell ``meta.json`` with
    every field :meth:`AskTell.load` reads."""
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        found = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise ValueError(f"{where} is damaged or not an AskTell save: meta.json has format {found!r}, "
                         f"expected {FORMAT!r}")
    for field, inner in _META_FIELDS.items():
        if field not in meta:
            raise ValueError(f"{where} is damaged: meta.json lacks the field {field!r}")
        missing = [k for k in inner if not isinstance(meta[field], dict) or k not in meta[field]]
        if missing:
            raise ValueError(f"{where} is damaged: meta.json's {field!r} lacks {missing}")


def _check_arrays(arrays: dict, meta: dict, where: str) -> None:
    """Raise ``ValueError`` naming ``where`` unless ``arrays`` (``arrays.npz``) holds every
    array ``meta`` announces, with a consistent history."""
    names = ["history_x", "history_y", "pending", "key"]
    names += [f"state_{i:04d}" for i in range(len(meta["state"]["leaves"]))]
    if meta["bounds"].get("finite"):
        names.append("domain_points")
    missing = [n for n in names if n not in arrays]
    if missing:
        raise ValueError(f"{where} is damaged: arrays.npz lacks {missing}")
    d = len(meta["bounds"]["lower"])
    x, y, c = arrays["history_x"], arrays["history_y"], arrays.get("history_c")
    rows_ok = y.shape[:1] == (x.shape[0],) and (y.ndim == 1 or (y.ndim == 2 and y.shape[1] >= 2))
    if x.ndim != 2 or x.shape[1] != d or not rows_ok or (c is not None and c.shape[:1] != y.shape[:1]):
        shapes = f"history_x {x.shape}, history_y {y.shape}" + ("" if c is None else f", history_c {c.shape}")
        raise ValueError(f"{where} is damaged: its history is truncated or inconsistent ({shapes}; expected "
                         f"(n, {d}) points and one value, or one row of m objectives, per point)")
    if arrays["pending"].ndim != 2 or arrays["pending"].shape[1] != d:
        raise ValueError(f"{where} is damaged: pending has shape {arrays['pending'].shape}, expected (P, {d})")


class AskTell:
    """Drive a :class:`~nbo_jax.types.BOAlgorithm` from Python, for objectives outside JAX
    (a simulator, a lab). ``ask`` and ``tell`` are the algorithm's own functions,
    jit-compiled once.

    Example::

        opt = nbo.AskTell(nbo.gp_bo(q=4), [(0.0, 1.0), (5.0, 10.0)], capacity=60,
                          key=jax.random.key(0), x0=x0, y0=[run(x) for x in x0])
        X = opt.ask()                  # (4, 2): four points for four workers
        opt.tell(X[0], run(X[0]))      # tell results one by one, as they come;
        opt.tell(X[1], float("nan"))   #   a failed run is information, not an error
        opt.drop_pending(X[2])         # a crashed worker: its point will never be told
        opt.save("run1")               # ... later, in another process:
        opt = nbo.AskTell.load("run1")

    Args:
        algorithm: the :class:`BOAlgorithm`; its ``q`` is the number of points per ask.
        bounds: the box: ``(lower, upper)`` arrays, a list of ``(low, high)`` tuples, or
            :class:`~nbo_jax.types.Bounds` (:func:`nbo_jax.types.as_bounds` says how a
            ``2 x 2`` input is read). Asks are returned in the bounds' float dtype
            (float64 for Python numbers) and clipped to them. A
            :class:`~nbo_jax.types.FiniteDomain` (:func:`nbo_jax.types.finite_domain`) makes
            the optimizer choose among its points: every ask is one of them (returned
            exactly), never one told or pending before, and every told ``x`` must be one.
        capacity: the largest number of observations (initial ones included) the optimizer
            holds; ``ask`` refuses, before the experiment, to hand out a point whose result
            could not be told (see ``auto_grow`` and :meth:`grow`).
        key: a PRNG key (``jax.random.key(seed)``).
        x0: ``(n0, d)`` initial points inside the box. y0: ``(n0,)`` their observed values
            (NaN/inf for failed runs); ``(n0, m)`` for ``m >= 2`` objectives, which needs an
            algorithm with ``multi_objective`` (e.g. ``nbo.registry.get("gp-ehvi")``, random
            search); a row with a NaN/inf in any objective is a failed run.
        c0: ``(n0, K)`` observed constraint values (``c <= 0`` feasible): required by an
            algorithm that models constraints; recorded (and ignored by the algorithm)
            otherwise; then every ``tell`` must give ``c`` too.
        auto_grow: when the capacity is reached, double it (:meth:`grow`) instead of
            refusing.
        warm_start: another optimizer of the same algorithm on the same domain (and the same
            numbers of objectives and constraints): the surrogate's first fit starts from its
            fitted hyperparameters (:attr:`hyperparameters`) instead of the surrogate's default
            start, as Optuna's ``GPSampler`` starts each trial's fit from the previous one's
            (Neural-BO's default network: its training continues from ``warm_start``'s weights,
            with the same initial weights ``theta_0``).
            For an optimizer rebuilt from a growing history: the GP's fit from the previous
            hyperparameters on 199 observations of a mixed space took 0.05 s against 0.19 s
            from the prior mode, to the same hyperparameters. ``None``: the default start.

    Raises:
        TypeError / ValueError: bad arguments (messages name them), e.g. ``x0`` outside the
        box, NaN in ``x0``, ``c0`` missing for a constrained algorithm, an ``x0`` row that
        is not one of a finite domain's points, ``y0 (n0, m)`` for an algorithm of one
        objective (or ``y0 (n0,)`` for one that needs ``m >= 2``), a ``warm_start`` that is
        not an optimizer of this algorithm and domain, or whose surrogate takes no start.

    Attributes:
        experiment_id: a random hex id made at creation and kept by :meth:`load` and
            pickling; :meth:`save` replaces a folder only when it holds this id.
    """

    def __init__(self, algorithm: BOAlgorithm, bounds, capacity: int, key: Array, x0, y0, c0=None, *,
                 auto_grow: bool = False, warm_start: Optional["AskTell"] = None):
        _check_algorithm(algorithm)
        _check_key(key)
        self.algorithm = algorithm
        self.domain = None
        self.space = bounds if isinstance(bounds, SearchSpace) else None
        if isinstance(bounds, FiniteDomain):
            self.domain = finite_domain(bounds.points, (bounds.lower, bounds.upper), name="bounds.points")
            self.dtype = _user_dtype((bounds.lower, bounds.upper))
        elif self.space is not None:
            self.dtype = np.dtype(np.float64)
        else:
            self.dtype = _user_dtype(bounds)
        # a mixed space's box of its points (a category as its index; possibly one value wide)
        self.bounds = Bounds(bounds.lower, bounds.upper) if self.space is not None else as_bounds(bounds, name="bounds")
        self.capacity = check_int("capacity", capacity, 1)
        self.auto_grow = check_bool("auto_grow", auto_grow)
        self._warned_range = False
        x0, y0, c0 = self._check_rows(x0, y0, c0, "x0", "y0", "c0", first=True)
        if x0.shape[0] > self.capacity:
            raise ValueError(f"capacity ({self.capacity}) must be >= the number of initial points ({x0.shape[0]})")
        self._x, self._y = x0, y0
        self._c = c0
        self._pending = np.zeros((0, self.bounds.dim))
        self.experiment_id = uuid.uuid4().hex
        self._key, k0 = jax.random.split(key)
        self._compile()
        start = None if warm_start is None else self._warm_start(warm_start)
        self.state = self._init_state(k0, self.capacity, start=start)

    # ------------------------------------------------------------------ internals
    def _compile(self) -> None:
        self._init, self._ask, self._tell, self._fantasize = _compiled(self.algorithm, self.capacity,
                                                                       self.space)

    def _jnp(self, a: Optional[np.ndarray]):
        if a is None:
            return None
        # cast by numpy, then a plain transfer: jnp.asarray compiles a program per shape
        with np.errstate(over="ignore"):  # a value beyond the model's range is a failure (_holdable)
            return jax.device_put(np.asarray(a, _model_dtype()))

    def _init_state(self, key, capacity: int, *, abstract: bool = False, start=None):
        """The algorithm's initial state of the history; with ``abstract``, for
        :func:`jax.eval_shape` (the algorithm's own ``init``: a program compiled with
        :func:`compiler_options` cannot be traced inside another); ``start``: the surrogate's
        fit starts there (``init(..., start=start)``)."""
        c = self._c if self.algorithm.constrained else None
        args = (key, self._jnp(self._x), self._jnp(self._y), self._jnp(c))
        started = {} if start is None else {"start": start}
        if self.domain is None:  # a mixed space is static: compiled once per space and capacity
            init = getattr(self.algorithm.init, "uncompiled", self.algorithm.init) if abstract else self._init
            return init(*args, bounds=self.bounds if self.space is None else self.space, capacity=capacity, **started)
        # a finite domain is checked on its concrete points: compiled with it as a constant
        return jax.jit(lambda *a, **k: self.algorithm.init(*a, bounds=self.domain, capacity=capacity, **k))(
            *args, **started)

    def _warm_start(self, other) -> object:
        """The start ``other`` (the ``warm_start`` argument) gives this optimizer's first fit.

        Raises:
            TypeError: ``other`` is not an :class:`AskTell`, or this algorithm's surrogate
            takes no start. ValueError: ``other`` runs another algorithm, domain or number of
            objectives or constraints."""
        if not isinstance(other, AskTell):
            raise TypeError(f"warm_start must be an AskTell (a previous optimizer of this algorithm), got "
                            f"{type(other).__name__}")
        if not fits_from_start(self.algorithm):
            raise TypeError(f"warm_start is given, but the algorithm {self.algorithm.name!r} has no surrogate that "
                            "takes a start for its fit (BOAlgorithm.model.hyperparameters is None)")
        if canonical(other.algorithm) is not canonical(self.algorithm):
            raise ValueError(f"warm_start must run this algorithm ({self.algorithm.name!r}), got one running "
                             f"{other.algorithm.name!r} (or another configuration of it)")
        mine = (self._fitted_on(), self.n_objectives, self.n_constraints if self.algorithm.constrained else None)
        theirs = (other._fitted_on(), other.n_objectives, other.n_constraints if other.algorithm.constrained else None)
        if mine != theirs:
            raise ValueError("warm_start must be an optimizer on the same domain with the same numbers of objectives "
                             "and constraints as this one")
        return other.hyperparameters

    def _fitted_on(self):
        """:func:`domain_key` of this optimizer's domain (a finite domain's by its box)."""
        return domain_key(self.space if self.space is not None else self.bounds)

    @property
    def hyperparameters(self):
        """The surrogate's fitted hyperparameters (:attr:`Surrogate.hyperparameters
        <nbo_jax.base.Surrogate>`, e.g. the GP's :class:`~nbo_jax.gp_model.GPParams`, the
        linearized network's
        :class:`~nbo_jax.surrogates.neural_linear.NeuralLinearStart`), which
        another optimizer's ``warm_start=self`` starts from; ``None`` when the algorithm's
        surrogate has none (:func:`fits_from_start`)."""
        if not fits_from_start(self.algorithm):
            return None
        return self.algorithm.model.hyperparameters(self.state.model)

    @property
    def n_objectives(self) -> int:
        """``m``: 1, or the number of objectives of ``y0 (n0, m)``."""
        return 1 if self._y.ndim == 1 else self._y.shape[1]

    @property
    def n_constraints(self) -> Optional[int]:
        """``K``, or ``None`` when no constraint values are recorded."""
        return None if self._c is None else self._c.shape[1]

    def _check_points(self, x, xn: str, first: bool = False) -> np.ndarray:
        """Validated points ``x (n, d)`` as a float64 numpy array (finite, inside the box, a
        finite domain's points)."""
        d = self.bounds.dim
        try:
            x = np.array(x, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{xn} must be a float array of shape (d,) or (n, d) with d = {d}") from None
        if x.ndim == 1 and not first:
            x = x[None]
        if x.ndim != 2 or x.shape[1] != d or x.shape[0] < 1:
            want = "(n0, d)" if first else "(d,) or (n, d)"
            raise ValueError(f"{xn} must have shape {want} with d = {d}, got {x.shape}; nothing was recorded")
        bad = np.nonzero(~np.all(np.isfinite(x), axis=1))[0]
        if bad.size:
            raise ValueError(f"{xn} has NaN/inf coordinates in row(s) {bad.tolist()}: a point must be finite "
                             "(a failed *evaluation* is told as y = NaN); nothing was recorded")
        outside = np.nonzero(~self.bounds.contains(x))[0]
        if outside.size:
            i = int(outside[0])
            j = int(np.nonzero((x[i] < self.bounds.lower) | (x[i] > self.bounds.upper))[0][0])
            raise ValueError(f"{xn} row {i} is outside the bounds: coordinate {j} is {float(x[i, j])!r}, the box "
                             f"is [{float(self.bounds.lower[j])!r}, {float(self.bounds.upper[j])!r}]; nothing was recorded")
        if self.space is not None:
            off = np.nonzero(~self.space.contains(x, atol=1e-9))[0]
            if off.size:
                raise ValueError(f"{xn} row {int(off[0])} is not a configuration of the search space (an integer "
                                 "parameter off its step or a category index that is not an int); nothing was "
                                 "recorded")
        if self.domain is not None:
            _, dist = self.domain.nearest(x)
            off = np.nonzero(dist > choice_tolerance(np.float32))[0]
            if off.size:
                raise ValueError(f"{xn} row {int(off[0])} is not one of the finite domain's points (nearest one is "
                                 f"{float(dist[off[0]]):.3g} away in unit-cube units); nothing was recorded")
        return x

    def _check_values(self, y, n: int, yn: str, first: bool) -> np.ndarray:
        """Validated values of ``n`` points as float64: ``(n,)``, or ``(n, m)`` with ``m >= 2``
        objectives (``m`` read from ``y0`` when ``first``, else :attr:`n_objectives`)."""
        if np.iscomplexobj(y) or (isinstance(y, (list, tuple)) and any(isinstance(v, complex) for v in y)):
            raise TypeError(f"{yn} must be real: a complex value would lose its imaginary part; nothing was "
                            "recorded")
        try:
            y = np.array(y, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{yn} must be a number or an array of {n} numbers (n rows of m numbers for m "
                            "objectives)") from None
        name = self.algorithm.name
        if first:
            m = y.shape[1] if y.ndim == 2 and y.shape[1] >= 2 else 1
            if m > 1 and not self.algorithm.multi_objective:
                raise ValueError(f"{yn} has shape {y.shape}: {m} objectives per point, and algorithm {name!r} "
                                 "optimizes one; use a multi-objective algorithm (e.g. nbo.registry.get('gp-ehvi'), "
                                 f"'gp-parego', 'neural-bo-mo', random search) or pass {yn} of shape (n0,)")
        else:
            m = self.n_objectives
        if m == 1:
            if not first and y.ndim == 2 and y.shape == (n, y.shape[1]) and y.shape[1] >= 2:
                raise ValueError(f"{yn} has shape {y.shape}: {y.shape[1]} values per point, and this optimizer has "
                                 f"one objective (it was created with y0 of shape (n0,)); tell one value per "
                                 "point; nothing was recorded")
            y = y.reshape(-1)
            if y.shape[0] != n:
                raise ValueError(f"{yn} must hold one value per point: {y.shape[0]} value(s) for {n} point(s) (this "
                                 "optimizer has one objective); nothing was recorded")
            return y
        if y.ndim == 0:
            raise ValueError(f"{yn} is a single number, and this optimizer has {m} objectives: tell one row of {m} "
                             f"values per point, shape ({m},) or (n, {m}); nothing was recorded")
        if y.shape[-1] != m or y.size != n * m or y.ndim > 2:
            raise ValueError(f"{yn} must hold {m} objective values per point, shape ({m},) for one point or "
                             f"(n, {m}) for n = {n}, got shape {y.shape}; nothing was recorded")
        return y.reshape(n, m)

    def _check_rows(self, x, y, c, xn: str, yn: str, cn: str, first: bool = False):
        """Validated ``(x (n, d), y (n,) | (n, m), c (n, K) | None)`` as float64 numpy arrays."""
        x = self._check_points(x, xn, first)
        n = x.shape[0]
        y = self._check_values(y, n, yn, first)
        K = None if first else self.n_constraints
        if c is None:
            if first and self.algorithm.constrained:
                raise ValueError(f"{cn}: algorithm {self.algorithm.name!r} models constraints; pass the observed "
                                 "constraint values of the initial points, shape (n0, K)")
            if K is not None:
                raise ValueError(f"{cn}: this optimizer records {K} constraint value(s) per point; "
                                 "tell(x, y, c) needs them; nothing was recorded")
        else:
            try:
                c = np.array(c, dtype=np.float64)
            except (TypeError, ValueError):
                raise TypeError(f"{cn} must be a float array of constraint values") from None
            if first:
                if c.ndim != 2 or c.shape[0] != n or c.shape[1] < 1:
                    raise ValueError(f"{cn} must have shape (n0, K) = ({n}, K), got {c.shape}")
            else:
                if K is None:
                    raise ValueError(f"{cn}: this optimizer was created without constraint values (c0); drop "
                                     f"{cn}; nothing was recorded")
                if c.size != n * K:
                    raise ValueError(f"{cn} must hold {K} constraint value(s) per point, got shape {c.shape}; "
                                     "nothing was recorded")
                c = c.reshape(n, K)
        ok = _rows_holdable(y) if c is None else _rows_holdable(y) & np.all(_holdable(c), axis=1)
        beyond = int(np.sum(np.isfinite(y) & ~_holdable(y)))
        if beyond and not self._warned_range:
            self._warned_range = True
            warnings.warn(f"AskTell: {beyond} finite value(s) of {yn} beyond the model's {_model_dtype()} range "
                          f"(|y| > {float(np.finfo(_model_dtype()).max):.4g}) are treated as failed evaluations "
                          "(AskTell.valid flags them; best() skips them); enable float64 "
                          "(jax_enable_x64) or rescale y to use them", RuntimeWarning, stacklevel=3)
        failed = int(np.sum(~ok))  # rows, each counted once
        if failed:
            warnings.warn(f"AskTell: {failed} failed evaluation(s) (NaN/inf) recorded: they are kept as failures "
                          "(the model treats the point as bad; AskTell.valid flags it)", RuntimeWarning,
                          stacklevel=3)
        return x, y, c

    def _room(self, extra: int, refusal: str) -> None:
        """Make sure ``extra`` more rows fit beside the told and pending points: grow with
        ``auto_grow``, else raise ``ValueError(refusal)`` (prefixed with the counts)."""
        need = len(self._y) + len(self._pending) + extra
        if need <= self.capacity:
            return
        if self.auto_grow:
            self.grow(max(2 * self.capacity, need))
            return
        raise ValueError(f"capacity ({self.capacity}) reached: {len(self._y)} told + {len(self._pending)} pending + "
                         f"{extra} {refusal}")

    # ------------------------------------------------------------------ the loop
    def ask(self) -> np.ndarray:
        """The next point to evaluate: ``(d,)``, or ``(q, d)`` for an algorithm with
        ``q > 1``; in the bounds' dtype, inside the bounds. The points become *pending*
        until told; the next ``ask`` treats pending points as observed with a fantasized
        value (:func:`nbo_jax.transforms.batch.fantasize`), so asynchronous workers are not sent to the
        same place.

        Raises:
            ValueError: the capacity cannot hold the told, pending and new points (nothing
            is asked; see :meth:`grow`), or a finite domain has fewer than ``q`` points that
            were neither told nor asked."""
        q = self.algorithm.q
        if self.domain is not None:
            used = int(np.sum(np.asarray(self.state.data.evaluated))) + len(self._pending)
            if used + q > self.domain.size:
                raise ValueError(f"the finite domain has {self.domain.size - used} point(s) left that were not told "
                                 f"or asked, fewer than q = {q}; nothing was asked")
        self._room(q, "new point(s) would not fit, so the result could not be told. Call opt.grow(capacity) "
                      "first (or create AskTell with auto_grow=True); nothing was asked")
        state = self.state
        if len(self._pending):
            state = self._fantasize(state, self._jnp(padded_pending(self._pending)))
        self._key, k = jax.random.split(self._key)
        x = np.asarray(self._ask(state, k), dtype=np.float64).reshape(q, -1)
        # clipped in float64, then cast: rounding is monotone, so the cast stays inside the
        # bounds as the user's dtype holds them
        x = np.clip(x, self.bounds.lower, self.bounds.upper).astype(self.dtype)
        if self.domain is not None:  # the point itself, not its rounded unit-cube image
            x = self.domain.points[self.domain.nearest(x)[0]].astype(self.dtype)
        self._pending = np.concatenate([self._pending, x.astype(np.float64)], axis=0)
        return x[0] if q == 1 else x

    def tell(self, x, y, c=None) -> None:
        """Record observations: ``x (d,)`` and a scalar ``y``, or ``x (n, d)`` and ``y (n,)``
        (any ``n``: results may come one by one); with ``m`` objectives ``y (m,)`` or
        ``(n, m)``; ``c (K,)`` / ``(n, K)`` when constraint values are recorded. NaN/inf
        ``y`` (in any objective) or ``c`` is a failed evaluation: recorded, flagged in
        :attr:`valid`, and the model learns the point is bad. Told points leave the pending
        list.

        Raises:
            TypeError / ValueError: ``x`` of the wrong shape, NaN/inf in ``x``, ``x``
            outside the bounds, ``y``/``c`` of the wrong size (a scalar ``y`` for ``m``
            objectives, ``m`` values for one), or no room left; in every case nothing is
            recorded."""
        x, y, c = self._check_rows(x, y, c, "x", "y", "c")
        matched = self._pending_rows(x)
        self._room(x.shape[0] - len(matched), "point(s) that were not asked would not fit: call "
                   "opt.grow(capacity) first; nothing was recorded")
        self._pending = np.delete(self._pending, matched, axis=0)
        args = [self._jnp(x), self._jnp(y), self._jnp(c) if self.algorithm.constrained else None]
        self.state = self._tell(self.state, *args)
        self._x = np.concatenate([self._x, x], axis=0)
        self._y = np.concatenate([self._y, y], axis=0)
        if self._c is not None:
            self._c = np.concatenate([self._c, c], axis=0)

    def add_pending(self, x) -> None:
        """Mark points as being evaluated without asking for them: ``x (d,)`` or ``(n, d)``,
        e.g. points another process proposed (a running Optuna trial, a Ray task started
        before this optimizer existed). Like asked points, they are fantasized by the next
        :meth:`ask` and leave the pending list when told.

        Raises:
            TypeError / ValueError: ``x`` of the wrong shape, NaN/inf, outside the bounds,
            not a finite domain's point, or no room left (see :meth:`grow`); nothing is
            recorded."""
        x = self._check_points(x, "x")
        self._room(x.shape[0], "pending point(s) would not fit: call opt.grow(capacity) first; nothing was recorded")
        self._pending = np.concatenate([self._pending, x], axis=0)

    def drop_pending(self, x=None) -> int:
        """Forget pending points that will never be told (a crashed worker, an abandoned
        trial), so that they no longer hold capacity nor steer the next :meth:`ask`:
        ``x (d,)`` or ``(n, d)``, each matched to one pending point as :meth:`tell` matches
        them; ``x=None`` drops every pending point. Nothing is recorded as observed.

        Returns:
            The number of pending points dropped.

        Raises:
            TypeError / ValueError: ``x`` of the wrong shape or NaN/inf, or a row of ``x``
            that is not pending (nothing is dropped)."""
        if x is None:
            n = len(self._pending)
            self._pending = self._pending[:0]
            return n
        x = self._check_points(x, "x")
        matched = self._pending_rows(x)
        if len(matched) != x.shape[0]:
            raise ValueError(f"x: {x.shape[0] - len(matched)} of its {x.shape[0]} point(s) are not pending "
                             f"(opt.pending holds {len(self._pending)}); nothing was dropped")
        self._pending = np.delete(self._pending, matched, axis=0)
        return len(matched)

    def __repr__(self) -> str:
        valid = self.valid
        m = self.n_objectives
        try:
            best = f"best={self.best()[1]:.6g}" if m == 1 else f"m={m}, front={len(self.pareto_front()[1])}"
        except ValueError:
            best = "best=none" if m == 1 else f"m={m}, front=0"
        failed = int(np.sum(~valid))
        return (f"AskTell({self.algorithm.name!r}, d={self.bounds.dim}, told={len(self._y)}"
                f"{f' ({failed} failed)' if failed else ''}, pending={len(self._pending)}, {best}, "
                f"capacity={self.capacity})")

    def _pending_rows(self, x: np.ndarray) -> list[int]:
        """Indices of the pending points that the told points ``x (n, d)`` answer (each
        pending point answers at most one told point)."""
        free = np.ones(len(self._pending), bool)
        for row in x:
            hit = np.nonzero(free & np.all(np.isclose(self._pending, row, rtol=1e-6, atol=1e-9), axis=1))[0]
            if hit.size:
                free[hit[0]] = False
        return np.nonzero(~free)[0].tolist()

    def grow(self, capacity: int) -> None:
        """Raise the capacity to ``capacity``. The algorithm's state is rebuilt from the
        history (``init`` on every observation so far: a retrained surrogate; a surrogate that
        fits from a start, such as the GP or Neural-BO's default network, fits from its current
        hyperparameters, :attr:`hyperparameters`, as ``AskTell(warm_start=...)`` does), so the
        run continues correctly but not bit for bit as if the capacity had been larger from the
        start.

        Raises:
            ValueError: ``capacity`` below the told plus pending points."""
        capacity = check_int("capacity", capacity, 1)
        if capacity < len(self._y) + len(self._pending):
            raise ValueError(f"capacity ({capacity}) must hold the {len(self._y)} told and {len(self._pending)} "
                             "pending points")
        start = self.hyperparameters
        self.capacity = capacity
        self._compile()  # the compile options of the new capacity
        self._key, k = jax.random.split(self._key)
        self.state = self._init_state(k, capacity, start=start)

    # ------------------------------------------------------------------ results
    @property
    def x(self) -> np.ndarray:
        """``(n, d)`` every told point (initial ones first), float64."""
        return self._x.copy()

    @property
    def y(self) -> np.ndarray:
        """``(n,)`` observed values as told (NaN/inf for failed evaluations); ``(n, m)`` with
        ``m`` objectives."""
        return self._y.copy()

    @property
    def c(self) -> Optional[np.ndarray]:
        """``(n, K)`` observed constraint values, or ``None``."""
        return None if self._c is None else self._c.copy()

    @property
    def valid(self) -> np.ndarray:
        """``(n,)`` bool: False for failed evaluations (a NaN/inf value, or a finite one beyond
        the range of the model's float dtype, e.g. ``|y| > 3.4e38`` in float32)."""
        ok = _rows_holdable(self._y)
        if self._c is not None:
            ok &= np.all(_holdable(self._c), axis=1)
        return ok

    @property
    def pending(self) -> np.ndarray:
        """``(P, d)`` points asked but not yet told."""
        return self._pending.copy()

    def best(self) -> tuple[np.ndarray, float]:
        """``(x, y)`` of the smallest valid observation; with constraint values, the smallest
        among the valid observations whose constraints are all ``<= 0`` (the smallest valid
        one when none is feasible).

        Raises:
            ValueError: no valid observation yet, or several objectives (no single best:
            :meth:`pareto_front`)."""
        m = self.n_objectives
        if m > 1:
            raise ValueError(f"best(): this optimizer has {m} objectives, so no single observation is best; "
                             f"opt.pareto_front() returns the observed non-dominated points (x (k, d), y (k, {m})) "
                             "and opt.hypervolume(reference_point) the hypervolume they dominate")
        y = np.where(self.valid, self._y, np.inf)
        if self._c is not None:
            feasible = np.all(self._c <= 0, axis=1) & self.valid
            if feasible.any():
                y = np.where(feasible, y, np.inf)
        if not np.isfinite(y).any():
            raise ValueError("no valid observation yet: every evaluation so far failed")
        i = int(np.argmin(y))
        return self._x[i].astype(self.dtype), float(self._y[i])

    def _candidates(self) -> np.ndarray:
        """``(n,)`` bool: the rows :meth:`best` and :meth:`pareto_front` choose from: the valid
        ones, and among them the feasible ones when constraint values are recorded and one is
        feasible."""
        keep = self.valid
        if self._c is not None:
            feasible = keep & np.all(self._c <= 0, axis=1)
            if feasible.any():
                keep = feasible
        return keep

    def _padded(self, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(Y (N, m), mask (N,))``: the told objectives padded to ``N = max(capacity, n)``
        rows (one compiled Pareto kernel per capacity), rows outside ``keep`` masked."""
        n, m = self._y.shape
        Y = np.zeros((max(self.capacity, n), m))
        Y[:n] = np.where(keep[:, None], self._y, 0.0)
        mask = np.zeros(Y.shape[0], bool)
        mask[:n] = keep
        return Y, mask

    def _objectives_only(self, method: str) -> None:
        if self.n_objectives == 1:
            raise ValueError(f"{method}(): this optimizer has one objective (y0 of shape (n0,)); use opt.best()")

    def pareto_front(self) -> tuple[np.ndarray, np.ndarray]:
        """The observed Pareto front of an optimizer of ``m >= 2`` objectives (every one
        minimized): ``(x (k, d), y (k, m))``, the valid observations that no other valid one
        dominates (:func:`nbo_jax.pareto.is_non_dominated`; one row per repeated point), in
        the order told; with constraint values, among the feasible ones (``c <= 0``) when
        one is feasible, as :meth:`best`. ``x`` in the bounds' dtype, ``y`` as told (float64).

        Raises:
            ValueError: one objective (use :meth:`best`), or no valid observation yet."""
        from .pareto import is_non_dominated

        self._objectives_only("pareto_front")
        keep = self._candidates()
        if not keep.any():
            raise ValueError("no valid observation yet: every evaluation so far failed")
        front = np.asarray(is_non_dominated(*self._padded(keep)))[:len(self._y)]
        return self._x[front].astype(self.dtype), self._y[front].copy()

    def hypervolume(self, reference_point) -> float:
        """The hypervolume that the observed Pareto front (:meth:`pareto_front`) dominates
        up to ``reference_point`` (:func:`nbo_jax.pareto.hypervolume`; Zitzler & Thiele
        1998), in the product of the objectives' units; 0.0 before any valid observation.

        Args:
            reference_point: ``(m,)`` finite floats, one per objective, worse than the
                points of interest (e.g. a benchmark's ``Problem.reference_point``).

        Raises:
            ValueError: one objective, ``reference_point`` not ``(m,)`` finite floats, or
            ``m`` not in :data:`nbo_jax.pareto.HYPERVOLUME_OBJECTIVES` (2 or 3)."""
        from .pareto import HYPERVOLUME_OBJECTIVES, hypervolume

        self._objectives_only("hypervolume")
        m = self.n_objectives
        try:
            ref = np.array(reference_point, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"reference_point must be {m} floats, got {reference_point!r}") from None
        if ref.shape != (m,) or not np.all(np.isfinite(ref)):
            raise ValueError(f"reference_point must be {m} finite floats (one per objective), got "
                             f"{ref.tolist()} of shape {ref.shape}")
        if m not in HYPERVOLUME_OBJECTIVES:
            raise ValueError(f"hypervolume(): exact for m in {HYPERVOLUME_OBJECTIVES} objectives, this optimizer "
                             f"has m = {m}")
        Y, mask = self._padded(self._candidates())
        return float(hypervolume(Y, ref, mask))

    # ------------------------------------------------------------------ save / resume
    def _snapshot(self) -> tuple[dict, dict]:
        leaves, treedef = jax.tree_util.tree_flatten(self.state)
        arrays, impls = {}, []
        for i, leaf in enumerate(leaves):
            arrays[f"state_{i:04d}"], impl = _leaf_to_numpy(leaf)
            impls.append(impl)
        key_data, key_impl = _leaf_to_numpy(self._key)
        arrays.update(history_x=self._x, history_y=self._y, pending=self._pending, key=key_data)
        if self._c is not None:
            arrays["history_c"] = self._c
        if self.domain is not None:
            arrays["domain_points"] = self.domain.points
        meta = {
            "format": FORMAT,
            "experiment_id": self.experiment_id,
            "algorithm": {"name": self.algorithm.name, "q": self.algorithm.q,
                          "config": _config_json(self.algorithm)},
            "bounds": {"lower": self.bounds.lower.tolist(), "upper": self.bounds.upper.tolist(),
                       "dtype": str(self.dtype), "finite": self.domain is not None,
                       "space": None if self.space is None else self.space.to_json()},
            "capacity": self.capacity,
            "auto_grow": self.auto_grow,
            "key_impl": key_impl,
            "state": {"treedef": str(treedef), "leaves": [_spec(leaf) for leaf in leaves], "key_impls": impls},
        }
        return arrays, meta

    def save(self, directory, *, overwrite: bool = False) -> pathlib.Path:
        """Write the optimizer to ``directory`` (created): ``arrays.npz`` (the state's arrays,
        the history, the pending points, the key) and ``meta.json`` (the algorithm's factory
        call, bounds, capacity, the state's structure). :meth:`load` continues bit for bit.

        Saving again to the folder of the same experiment (a checkpoint) replaces it. The
        same experiment is the one that :attr:`experiment_id` names: a random id made when
        the :class:`AskTell` is created, stored in ``meta.json`` and kept by :meth:`load`
        and pickling. A folder holding another experiment's save (another id, or a save
        without one) is refused unless ``overwrite=True``.

        Args:
            directory: the folder (``str`` or path).
            overwrite: replace a save of another experiment found there.

        Returns:
            The directory path.

        Raises:
            FileExistsError: ``directory`` holds a save of another experiment and
            ``overwrite`` is False (nothing is written)."""
        path = pathlib.Path(directory)
        overwrite = check_bool("overwrite", overwrite)
        if not overwrite:
            other = self._saved_id(path)
            if other is not None and other != self.experiment_id:
                raise FileExistsError(
                    f"directory {str(path)!r} holds the save of another experiment ({other}); pass "
                    "overwrite=True to replace it, or choose another directory; nothing was written")
        path.mkdir(parents=True, exist_ok=True)
        arrays, meta = self._snapshot()
        np.savez(path / "arrays.npz", **arrays)
        (path / "meta.json").write_text(json.dumps(meta, indent=1))
        return path

    @staticmethod
    def _saved_id(path: pathlib.Path) -> Optional[str]:
        """The experiment id of the save in ``path``; ``"unknown"`` for files of a save
        without one (or unreadable); ``None`` when ``path`` holds no save."""
        meta, arrays = path / "meta.json", path / "arrays.npz"
        if not meta.exists():
            return "unknown" if arrays.exists() else None
        try:
            found = json.loads(meta.read_text()).get("experiment_id")
        except (OSError, ValueError, AttributeError):
            found = None
        return found if isinstance(found, str) else "unknown"

    @classmethod
    def load(cls, directory, algorithm: Optional[BOAlgorithm] = None) -> "AskTell":
        """Resume an optimizer saved by :meth:`save`.

        With ``algorithm=None`` the saved factory call is rebuilt (algorithms made by the
        library's factories with JSON-able arguments). If ``algorithm`` is given and is the
        same algorithm (same factory call, or same name and state structure when the call is
        unknown), the state is restored exactly and the run continues bit for bit; if it
        differs, the new algorithm starts from the saved history alone (``init`` on every
        observation; a ``RuntimeWarning`` says so).

        Raises:
            FileNotFoundError: no saved optimizer there. ValueError: not a saved optimizer,
            a damaged save (the message names the folder and what is missing or
            inconsistent: ``arrays.npz``, a field of ``meta.json``, a history whose arrays
            disagree), or ``algorithm=None`` but the saved call cannot be rebuilt."""
        path = pathlib.Path(directory)
        if not (path / "meta.json").exists():
            raise FileNotFoundError(f"directory: no saved AskTell in {str(path)!r} (meta.json missing)")
        where = f"the save at {str(path)!r}"
        try:
            meta = json.loads((path / "meta.json").read_text())
        except (ValueError, UnicodeDecodeError) as err:
            raise ValueError(f"{where} is damaged: meta.json is not readable JSON ({err})") from None
        _check_meta(meta, where)
        if not (path / "arrays.npz").exists():
            raise ValueError(f"{where} is damaged: arrays.npz is missing (meta.json alone was found)")
        try:
            with np.load(path / "arrays.npz") as f:
                arrays = {k: f[k] for k in f.files}
        except (OSError, ValueError, EOFError) as err:
            raise ValueError(f"{where} is damaged: arrays.npz cannot be read ({err})") from None
        return cls._restore(arrays, meta, algorithm, where)

    @classmethod
    def _restore(cls, arrays: dict, meta: dict, algorithm: Optional[BOAlgorithm],
                 where: str = "the saved AskTell") -> "AskTell":
        _check_meta(meta, where)
        _check_arrays(arrays, meta, where)
        saved = meta["algorithm"]
        if algorithm is None:
            config = saved["config"]
            if config is None:
                raise ValueError(f"the saved algorithm {saved['name']!r} cannot be rebuilt (built by hand or with "
                                 "arguments that are not JSON-serializable): pass algorithm=")
            algorithm = FactoryCall(config["factory"], {k: _from_json(v) for k, v in config["kwargs"].items()},
                                    config["name"]).build()
        _check_algorithm(algorithm)
        self = cls.__new__(cls)
        self.algorithm = algorithm
        b = meta["bounds"]
        self.space = SearchSpace.from_json(b["space"]) if b.get("space") else None
        self.bounds = (Bounds(self.space.lower, self.space.upper) if self.space is not None
                       else as_bounds((b["lower"], b["upper"]), name="bounds"))
        self.domain = None
        if b.get("finite"):
            self.domain = FiniteDomain(self.bounds.lower, self.bounds.upper, arrays["domain_points"])
        self.dtype = np.dtype(b["dtype"])
        self.capacity = int(meta["capacity"])
        self.auto_grow = bool(meta["auto_grow"])
        self._x, self._y = arrays["history_x"], arrays["history_y"]
        self._c = arrays.get("history_c")
        self._pending = arrays["pending"]
        self._key = _leaf_from_numpy(arrays["key"], meta["key_impl"])
        self.experiment_id = meta.get("experiment_id") or uuid.uuid4().hex
        self._warned_range = False
        self._compile()
        same = (_config_json(algorithm) == saved["config"]) if saved["config"] is not None else (
            algorithm.name == saved["name"])
        expected = jax.eval_shape(lambda: self._init_state(jax.random.key(0), self.capacity, abstract=True))
        leaves, treedef = jax.tree_util.tree_flatten(expected)
        st = meta["state"]
        if same and str(treedef) == st["treedef"] and [_spec(x) for x in leaves] == st["leaves"]:
            restored = [_leaf_from_numpy(arrays[f"state_{i:04d}"], impl) for i, impl in enumerate(st["key_impls"])]
            self.state = jax.tree_util.tree_unflatten(treedef, restored)
        else:
            warnings.warn(f"AskTell.load: the algorithm differs from the saved one ({saved['name']!r}); "
                          f"{algorithm.name!r} starts from the saved history of {len(self._y)} observation(s)",
                          RuntimeWarning, stacklevel=3)
            self._key, k = jax.random.split(self._key)
            self.state = self._init_state(k, self.capacity)
        return self

    def __getstate__(self) -> dict:
        arrays, meta = self._snapshot()
        if meta["algorithm"]["config"] is None:
            raise TypeError(f"cannot pickle this AskTell: its algorithm {self.algorithm.name!r} was built by hand or "
                            "with arguments that are not JSON-serializable; use opt.save(directory) and "
                            "AskTell.load(directory, algorithm=...)")
        return {"arrays": arrays, "meta": meta}

    def __setstate__(self, snapshot: dict) -> None:
        other = AskTell._restore(snapshot["arrays"], snapshot["meta"], None, "the pickled AskTell")
        self.__dict__.update(other.__dict__)
