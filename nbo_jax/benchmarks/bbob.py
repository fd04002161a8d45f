"""BBOB problems of the COCO platform, evaluated by COCO's own code (``cocoex``).

The 24 noiseless functions of the ``"bbob"`` suite (Hansen, Finck, Ros & Auger 2009,
"Real-parameter black-box optimization benchmarking 2009: noiseless functions definitions",
INRIA RR-6829) and the 54 functions of ``"bbob-constrained"`` (Dufossé, Atamna, Brockhoff,
Hansen, Tušar 2022), on the box ``[-5, 5]^d``, as :class:`~nbo_jax.types.Problem` objects
that ``run_bo`` can jit and ``vmap``. The platform is COCO (Hansen, Auger, Ros, Mersmann,
Tušar & Brockhoff 2021, "COCO: a platform for comparing continuous optimizers in a
black-box setting", Optimization Methods and Software 36(1)).

**How values are computed.** Every value comes from ``cocoex`` (the ``coco-experiment``
package, install the ``coco`` extra), called from inside JAX with
:func:`jax.pure_callback`: there is no second implementation of the functions to drift
from COCO's, and the instance transformations (optimum location, rotations, ``f_opt``) are
COCO's by construction. A callback moves the points to the host and back once per step
(one call for a whole vmapped batch); a BBOB evaluation itself costs about a microsecond.
Points are evaluated in float64 and the values cast to the dtype of ``x``.

**Vmapping over functions and instances.** ``function`` and ``instance`` may be traced
integer scalars, so one compilation of ``run_bo`` serves every (function, instance) pair of
a dimension::

    algo = nbo.registry.get("gp-ei")

    @jax.jit
    def campaign(keys, functions, instances):
        def one(key, f, i):
            return nbo.run_bo(key, algo, bbob.problem(f, 2, i), n_init=6, n_iter=34)
        return jax.vmap(one)(keys, functions, instances)

    histories = campaign(keys, jnp.array([1, 1, 8, 8]), jnp.array([1, 2, 1, 2]))
    regret = histories.best_f - bbob.optimal_values([1, 1, 8, 8], [1, 2, 1, 2], 2)[:, None]

A problem with a traced function or instance has ``optimal_value=None`` (it differs per
instance): :func:`optimal_values` gives them as an array. Dimensions are COCO's
(:data:`DIMENSIONS`); instances are any integers >= 1 (COCO's campaigns use 1-15).

For a COCO benchmarking campaign with COCO's data format and ``cocopp`` post-processing,
see :mod:`nbo_jax.coco` and ``nbo-jax coco``.
"""

from __future__ import annotations

import functools
import os
import tempfile
import threading
from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np

from nbo_jax.types import Problem

from .synthetic import _as_float

__all__ = [
    "SUITES",
    "DIMENSIONS",
    "FUNCTION_NAMES",
    "FUNCTION_GROUPS",
    "problem",
    "optimal_values",
    "n_functions",
    "evaluate",
    "cocoex_problem",
    "suite_problem",
    "import_cocoex",
]

SUITES = ("bbob", "bbob-constrained")
"""The COCO suites supported: the 24 noiseless BBOB functions and their constrained versions."""

DIMENSIONS = (2, 3, 5, 10, 20, 40)
"""The dimensions COCO's ``bbob`` and ``bbob-constrained`` suites define."""

FUNCTION_NAMES = {
    1: "sphere", 2: "separable ellipsoid", 3: "Rastrigin", 4: "Bueche-Rastrigin", 5: "linear slope",
    6: "attractive sector", 7: "step ellipsoid", 8: "Rosenbrock", 9: "rotated Rosenbrock",
    10: "ellipsoid", 11: "discus", 12: "bent cigar", 13: "sharp ridge", 14: "different powers",
    15: "rotated Rastrigin", 16: "Weierstrass", 17: "Schaffer F7", 18: "ill-conditioned Schaffer F7",
    19: "composite Griewank-Rosenbrock", 20: "Schwefel", 21: "Gallagher 101 peaks",
    22: "Gallagher 21 peaks", 23: "Katsuura", 24: "Lunacek bi-Rastrigin",
}
"""BBOB function number -> name (Hansen et al. 2009)."""

FUNCTION_GROUPS = {
    "separable": (1, 2, 3, 4, 5),
    "low or moderate conditioning": (6, 7, 8, 9),
    "high conditioning and unimodal": (10, 11, 12, 13, 14),
    "multi-modal with adequate global structure": (15, 16, 17, 18, 19),
    "multi-modal with weak global structure": (20, 21, 22, 23, 24),
}
"""COCO's five function groups of the ``bbob`` suite (the groups of ``cocopp``'s ECDFs)."""

_N_FUNCTIONS = {"bbob": 24, "bbob-constrained": 54}
_LOCK = threading.RLock()
_SUITE_OBJECTS: dict = {}  # keeps the suites alive while their problems are in use
_COCO_PROBLEMS: dict = {}


def import_cocoex():
    """Import ``cocoex`` (the ``coco-experiment`` package) or raise an ImportError that says how
    to install it."""
    try:
        import cocoex
    except ImportError as err:  # pragma: no cover - the test environment has the extra
        raise ImportError(
            "COCO benchmarks need the 'coco-experiment' and 'cocopp' packages: install the "
            "'coco' extra (uv sync --extra coco, or pip install 'nbo-jax[coco]')") from err
    return cocoex


def _check_suite(suite) -> str:
    if suite not in SUITES:
        raise ValueError(f"suite must be one of {SUITES}, got {suite!r}")
    return suite


def n_functions(suite: str = "bbob") -> int:
    """Number of functions of ``suite``: 24 for ``"bbob"``, 54 for ``"bbob-constrained"``."""
    return _N_FUNCTIONS[_check_suite(suite)]


def _check_index(name: str, value, low: int, high: Optional[int]):
    """A concrete integer in [low, high] (returned as int); a traced or array value is
    returned as an int32 array unchecked (the callback checks it)."""
    if isinstance(value, jax.core.Tracer):
        if not jnp.issubdtype(value.dtype, jnp.integer) or value.ndim != 0:
            raise TypeError(f"{name} must be an integer scalar, got a traced {value.dtype} of shape {value.shape}")
        return value.astype(jnp.int32)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) and not (
            isinstance(value, (np.ndarray, jax.Array)) and np.ndim(value) == 0
            and np.issubdtype(np.asarray(value).dtype, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < low or (high is not None and value > high):
        bound = f"in [{low}, {high}]" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value


def _check_dimension(dimension) -> int:
    if isinstance(dimension, bool) or not isinstance(dimension, (int, np.integer)):
        raise TypeError(f"dimension must be an int, one of {DIMENSIONS}, got {dimension!r}")
    if int(dimension) not in DIMENSIONS:
        raise ValueError(f"dimension must be one of COCO's {DIMENSIONS}, got {dimension}")
    return int(dimension)


def suite_problem(suite: str, function: int, dimension: int, instance: int):
    """``(suite, problem)``: a new ``cocoex.Suite`` holding one problem and that
    ``cocoex.Problem`` (the suite must stay alive while the problem is used). Arguments are
    not checked here: see :func:`cocoex_problem`."""
    s = import_cocoex().Suite(suite, f"instances: {instance}", f"dimensions: {dimension} function_indices: {function}")
    return s, s.get_problem_by_function_dimension_instance(function, dimension, instance)


def cocoex_problem(function: int, dimension: int, instance: int, suite: str = "bbob"):
    """The (unobserved, cached) ``cocoex.Problem`` of one function, dimension and instance.

    Nothing here attaches an observer: the returned problem only evaluates. For logging in
    COCO's format, :mod:`nbo_jax.coco` takes a fresh problem from a suite and observes it.

    Raises:
        ValueError / TypeError: a suite, function, dimension or instance out of range.
        ImportError: ``cocoex`` is not installed.
    """
    suite = _check_suite(suite)
    function = _check_index("function", function, 1, _N_FUNCTIONS[suite])
    dimension = _check_dimension(dimension)
    instance = _check_index("instance", instance, 1, None)
    key = (suite, function, dimension, instance)
    with _LOCK:
        if key not in _COCO_PROBLEMS:
            _SUITE_OBJECTS[key], _COCO_PROBLEMS[key] = suite_problem(suite, function, dimension, instance)
        return _COCO_PROBLEMS[key]


@functools.lru_cache(maxsize=None)
def _optimum(suite: str, function: int, dimension: int, instance: int) -> tuple[np.ndarray, float]:
    """(x_opt (d,), f_opt) of one problem, from COCO's own record of the optimum.

    ``cocoex`` exposes the optimizer only through ``Problem._best_parameter("print")``, which
    writes it to a file in the working directory; it is read back from a temporary folder.
    ``f_opt = f(x_opt)`` (COCO logs ``f - f_opt`` against the same value)."""
    p = cocoex_problem(function, dimension, instance, suite)
    with _LOCK, tempfile.TemporaryDirectory() as folder:
        old = os.getcwd()
        os.chdir(folder)
        try:
            p._best_parameter("print")
            names = os.listdir(folder)
            if len(names) != 1:
                raise RuntimeError(f"cocoex wrote {names} for the best parameter of {p.id}; expected one file")
            x_opt = np.atleast_1d(np.loadtxt(os.path.join(folder, names[0]), dtype=np.float64))
        finally:
            os.chdir(old)
    return x_opt, float(p(x_opt))


def optimal_values(functions, instances, dimension: int, suite: str = "bbob") -> np.ndarray:
    """``f_opt`` of each (function, instance) pair, float64 of the broadcast shape of
    ``functions`` and ``instances`` (the minimum COCO's targets are relative to:
    a target precision ``1e-8`` means ``f <= f_opt + 1e-8``).

    Raises:
        ValueError / TypeError: an out-of-range suite, function, dimension or instance.
    """
    suite, dimension = _check_suite(suite), _check_dimension(dimension)
    f, i = np.broadcast_arrays(np.asarray(functions), np.asarray(instances))
    out = np.empty(f.shape, np.float64)
    for idx in np.ndindex(f.shape):
        out[idx] = _optimum(suite, _check_index("functions", f[idx], 1, _N_FUNCTIONS[suite]), dimension,
                            _check_index("instances", i[idx], 1, None))[1]
    return out


def evaluate(x, function, instance, suite: str = "bbob", *, constraints: bool = False) -> np.ndarray:
    """Evaluate points with ``cocoex`` on the host (the function :func:`problem` calls back).

    Args:
        x: ``(..., d)`` points (any float dtype; evaluated in float64).
        function: function numbers, integers broadcastable to ``x.shape[:-1]`` (one per point).
        instance: instance numbers, integers broadcastable to ``x.shape[:-1]``.
        suite: ``"bbob"`` or ``"bbob-constrained"``.
        constraints: return the constraint values ``(..., K)`` (``c <= 0`` feasible) instead
            of the objective ``(...,)``.

    Returns:
        float64 numpy array: ``(...,)`` objective values, or ``(..., K)`` constraint values.

    Raises:
        ValueError: a function or instance out of range, or points of a dimension COCO does
            not define.
    """
    x = np.asarray(x, np.float64)
    batch = x.shape[:-1]
    f = np.broadcast_to(np.asarray(function), batch).reshape(-1)
    i = np.broadcast_to(np.asarray(instance), batch).reshape(-1)
    rows = x.reshape(-1, x.shape[-1])
    values = [None] * rows.shape[0]
    d = x.shape[-1]
    for r in range(rows.shape[0]):
        # the callback's hot path: a cached problem is read without re-checking its arguments
        p = _COCO_PROBLEMS.get((suite, int(f[r]), d, int(i[r]))) or cocoex_problem(int(f[r]), d, int(i[r]), suite)
        values[r] = np.asarray(p.constraint(rows[r]), np.float64) if constraints else p(rows[r])
    if constraints:
        k = {v.shape[0] for v in values}
        if len(k) > 1:
            raise ValueError(f"the points' problems have different numbers of constraints {sorted(k)}")
        return np.stack(values).reshape(*batch, -1) if values else np.zeros((*batch, 0))
    return np.asarray(values, np.float64).reshape(batch)


def _callback(suite: str, constraints: bool):
    def host(x, function, instance):
        return evaluate(x, function, instance, suite, constraints=constraints).astype(x.dtype)
    return host


@functools.lru_cache(maxsize=None)
def _concrete_problem(suite: str, function: int, dimension: int, instance: int) -> Problem:
    x_opt, f_opt = _optimum(suite, function, dimension, instance)
    return _build(suite, function, dimension, instance, f_opt, x_opt)


def _build(suite, function, dimension, instance, f_opt, x_opt) -> Problem:
    f_arg = jnp.asarray(function, jnp.int32)
    i_arg = jnp.asarray(instance, jnp.int32)
    objective_host = _callback(suite, False)

    def objective(x):
        x = _as_float(x)
        return jax.pure_callback(objective_host, jax.ShapeDtypeStruct(x.shape[:-1], x.dtype), x, f_arg, i_arg,
                                 vmap_method="broadcast_all")

    constraints = None
    if suite == "bbob-constrained":
        n_con = cocoex_problem(function, dimension, 1, suite).number_of_constraints  # the same for every instance
        constraint_host = _callback(suite, True)

        def constraints(x):
            x = _as_float(x)
            return jax.pure_callback(constraint_host, jax.ShapeDtypeStruct((*x.shape[:-1], n_con), x.dtype), x,
                                     f_arg, i_arg, vmap_method="broadcast_all")

    known_f = function if isinstance(function, int) else None  # None when traced
    known_i = instance if isinstance(instance, int) else None
    box = np.full(dimension, 5.0)
    return Problem(
        name=suite + (f"_f{known_f:03d}" if known_f else "") + (f"_i{known_i:02d}" if known_i else "")
        + f"_d{dimension:02d}",
        dim=dimension,
        bounds=(-box, box),
        objective=objective,
        optimal_value=f_opt,  # None unless both are known (_concrete_problem)
        optimizer=x_opt,
        constraints=constraints,
        metadata=dict(suite=suite, function=known_f, instance=known_i, dimension=dimension,
                      function_name=FUNCTION_NAMES.get(known_f) if suite == "bbob" else None),
    )


def problem(function, dimension: int, instance=1, suite: str = "bbob") -> Problem:
    """A COCO problem as a :class:`~nbo_jax.types.Problem` (minimized on ``[-5, 5]^d``).

    Args:
        function: the function number, 1-24 for ``"bbob"`` (names in
            :data:`FUNCTION_NAMES`), 1-54 for ``"bbob-constrained"``; an int, or a traced
            int32 scalar to vmap over functions (``"bbob"`` only: the number of constraints
            of a constrained problem depends on the function).
        dimension: ``d``, one of :data:`DIMENSIONS` (a Python int).
        instance: COCO's instance number (>= 1; campaigns use 1-15): an int, or a traced
            int32 scalar to vmap over instances.
        suite: ``"bbob"`` (noiseless, unconstrained) or ``"bbob-constrained"``
            (``constraints(x) -> (K,)``, ``c <= 0`` feasible).

    Returns:
        A :class:`~nbo_jax.types.Problem` named like COCO's ids (``"bbob_f003_i02_d05"``)
        with ``optimal_value = f_opt`` and ``optimizer = x_opt`` when ``function`` and
        ``instance`` are Python ints (``None`` when traced: see :func:`optimal_values`) and
        ``metadata`` with ``suite``, ``function``, ``instance``, ``dimension`` and
        ``function_name``. Problems of concrete arguments are cached (the identical object),
        which keeps ``run_bo``'s jit cache.

    Raises:
        ValueError / TypeError: an out-of-range or non-integer argument, or a traced function
            for ``"bbob-constrained"``.
        ImportError: ``cocoex`` is not installed.
    """
    suite = _check_suite(suite)
    dimension = _check_dimension(dimension)
    function = _check_index("function", function, 1, _N_FUNCTIONS[suite])
    instance = _check_index("instance", instance, 1, None)
    import_cocoex()
    if isinstance(function, int) and isinstance(instance, int):
        return _concrete_problem(suite, function, dimension, instance)
    if suite == "bbob-constrained" and not isinstance(function, int):
        raise TypeError("function must be a Python int for suite='bbob-constrained' (the number of "
                        "constraints depends on the function); only the instance may be traced")
    return _build(suite, function, dimension, instance, None, None)
