"""Running BO: ``run_bo`` (one ``lax.scan``, jit-compiled, vmappable) and an ask/tell driver
for objectives outside JAX.

``run_bo`` draws ``n_init`` uniform initial points from the key (the same for every
algorithm given the same key, SPEC.md section 0), observes them with the problem's noise,
calls ``algorithm.init`` and then scans ``ask -> objective -> tell`` for ``n_iter`` steps.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable, Optional, Union

import jax
import jax.numpy as jnp
import numpy as np

from .algorithms._common import check_int as _check_count
from .types import BOAlgorithm, Bounds, History, Problem, make_bounds

Array = jax.Array
ProgressHook = Callable[[int], None]


# --------------------------------------------------------------------------- validation


def _check_problem(problem) -> None:
    if not isinstance(problem, Problem):
        raise TypeError(
            f"problem must be an nbo_jax.Problem (e.g. nbo.benchmarks.get('ackley', dim=10)), "
            f"got {type(problem).__name__}"
        )
    make_bounds(problem.bounds.lower, problem.bounds.upper, problem.dim, name="problem.bounds")
    if not (problem.noise_std >= 0 and math.isfinite(problem.noise_std)):
        raise ValueError(f"problem.noise_std must be finite and >= 0, got {problem.noise_std}")


def _check_algorithm(algorithm) -> None:
    if not isinstance(algorithm, BOAlgorithm):
        raise TypeError(
            f"algorithm must be an nbo_jax.BOAlgorithm (e.g. nbo.neural_bo()), got {type(algorithm).__name__}"
        )
    _check_count("algorithm.batch_size", algorithm.batch_size, 1)


def _check_key(key) -> None:
    k = jnp.asarray(key) if not hasattr(key, "dtype") else key
    if jax.dtypes.issubdtype(k.dtype, jax.dtypes.prng_key):
        if k.shape != ():
            raise ValueError(f"key must be a single PRNG key, got shape {k.shape}; vmap over keys instead")
    elif k.shape != (2,) or k.dtype != jnp.uint32:
        raise TypeError(f"key must be a jax.random.key(...) (or legacy PRNGKey), got {k.dtype}{k.shape}")


# --------------------------------------------------------------------------- progress
class _ProgressState:
    bar = None


def _tick(step, total):
    """Host side of ``progress=True``: one tqdm bar per run (vmapped runs share it)."""
    from tqdm.auto import tqdm

    done = int(np.max(np.asarray(step))) + 1
    total = int(np.max(np.asarray(total)))
    bar = _ProgressState.bar
    if bar is None or bar.total != total or (done < bar.n and done == 1):
        if bar is not None:
            bar.close()
        bar = _ProgressState.bar = tqdm(total=total, desc="BO iterations", leave=True)
    if done > bar.n:
        bar.update(done - bar.n)
    if bar.n >= total:
        bar.close()
        _ProgressState.bar = None


def _report_invalid(n_invalid) -> None:
    n = int(np.sum(np.asarray(n_invalid)))
    if n:
        warnings.warn(
            f"run_bo: {n} observation(s) were NaN/inf; they were masked (never trained on) "
            "and are flagged False in History.valid",
            RuntimeWarning,
            stacklevel=2,
        )


# --------------------------------------------------------------------------- run_bo
def initial_design(key: Array, bounds: Bounds, n: int, dtype=None) -> Array:
    """``n`` points uniform in the box, ``(n, d)`` (SPEC.md section 0, initial design)."""
    dtype = dtype or jnp.zeros(()).dtype
    lo = jnp.asarray(bounds.lower, dtype)
    hi = jnp.asarray(bounds.upper, dtype)
    return lo + jax.random.uniform(key, (n, lo.shape[0]), dtype) * (hi - lo)


def _run_bo_impl(key, x0, *, algorithm, problem, n_init, n_iter, progress):
    dtype = jnp.zeros(()).dtype
    k_init, k_noise0, k_alg, k_loop = jax.random.split(key, 4)
    if x0 is None:
        x0 = initial_design(k_init, problem.bounds, n_init, dtype)
    x0 = jnp.asarray(x0, dtype)
    f0 = jax.vmap(problem.objective)(x0).astype(dtype)
    y0 = f0 + problem.noise_std * jax.random.normal(k_noise0, f0.shape, dtype)
    q = algorithm.batch_size
    state = algorithm.init(k_alg, x0, y0, bounds=problem.bounds, capacity=n_init + n_iter * q)

    def step(state, inp):
        t, k = inp
        k_ask, k_noise = jax.random.split(k)
        x = jnp.asarray(algorithm.ask(state, k_ask), dtype)
        if q == 1:
            f = jnp.asarray(problem.objective(x), dtype)
            y = f + problem.noise_std * jax.random.normal(k_noise, (), dtype)
        else:
            f = jax.vmap(problem.objective)(x).astype(dtype)
            y = f + problem.noise_std * jax.random.normal(k_noise, (q,), dtype)
        state = algorithm.tell(state, x, y)
        if progress is True:
            jax.debug.callback(_tick, t, n_iter)
        elif progress:
            jax.debug.callback(progress, t)
        return state, (x, y, f)

    _, (xs, ys, fs) = jax.lax.scan(step, state, (jnp.arange(n_iter), jax.random.split(k_loop, n_iter)))
    xs, ys, fs = xs.reshape(-1, x0.shape[1]), ys.reshape(-1), fs.reshape(-1)
    x = jnp.concatenate([x0, xs], axis=0)
    y = jnp.concatenate([y0, ys], axis=0)
    f = jnp.concatenate([f0, fs], axis=0)
    best_f = jax.lax.cummin(jnp.where(jnp.isfinite(f), f, jnp.inf))
    valid = jnp.isfinite(y)
    jax.debug.callback(_report_invalid, jnp.sum(~valid))
    return History(x, y, f, best_f, valid)


_run_bo_jit = jax.jit(
    _run_bo_impl, static_argnames=("algorithm", "problem", "n_init", "n_iter", "progress")
)


def run_bo(
    key: Array,
    algorithm: BOAlgorithm,
    problem: Problem,
    n_init: int,
    n_iter: int,
    *,
    x0: Optional[Array] = None,
    progress: Union[bool, ProgressHook] = False,
) -> History:
    """Run one BO loop, jit-compiled: ``n_init`` initial points then ``n_iter`` ask/tell steps.

    Args:
        key: a single PRNG key (``jax.random.key(seed)``); vmap ``run_bo`` over keys for
            many seeds (one compilation serves them all).
        algorithm: a :class:`BOAlgorithm` (``nbo.neural_bo(...)``, ``nbo.random_search()``).
        problem: a :class:`Problem` (``nbo.benchmarks.get(...)``); minimized.
        n_init: number of initial points (>= 1), uniform in the box unless ``x0`` is given.
        n_iter: number of BO iterations (>= 0); each evaluates ``algorithm.batch_size``
            points.
        x0: optional ``(n_init, d)`` initial design in box coordinates.
        progress: ``True`` shows a tqdm bar (host callback per iteration); a callable
            ``hook(step: int)`` is called after each iteration instead (reuse the same
            callable to avoid recompiling).

    Returns:
        :class:`History` with ``n = n_init + n_iter * batch_size`` rows: ``x (n, d)``, ``y (n,)``,
        ``f (n,)``, ``best_f (n,)``, ``valid (n,)``. NaN/inf observations are masked from
        the surrogate, flagged in ``valid`` and reported by a ``RuntimeWarning``.

    Raises:
        TypeError / ValueError: before compiling, for a wrong key, algorithm, problem,
        ``n_init < 1``, ``n_iter < 0``, bad bounds or an ``x0`` of the wrong shape.

    The jit cache is keyed on the identity of ``algorithm`` and ``problem``: build them once
    and reuse them.
    """
    _check_key(key)
    _check_algorithm(algorithm)
    _check_problem(problem)
    n_init = _check_count("n_init", n_init, 1)
    n_iter = _check_count("n_iter", n_iter, 0)
    if not (progress is True or progress is False or callable(progress)):
        raise TypeError("progress must be a bool or a callable hook(step)")
    if x0 is not None:
        shape = tuple(np.shape(x0))
        if shape != (n_init, problem.dim):
            raise ValueError(f"x0 must have shape (n_init, d) = {(n_init, problem.dim)}, got {shape}")
    return _run_bo_jit(
        key, x0, algorithm=algorithm, problem=problem, n_init=n_init, n_iter=n_iter, progress=progress
    )


# --------------------------------------------------------------------------- ask/tell
class AskTell:
    """Drive a :class:`BOAlgorithm` from Python, for objectives outside JAX (a simulator,
    a lab). ``ask`` and ``tell`` are the algorithm's own functions, jit-compiled once.

    Example::

        opt = nbo.AskTell(nbo.neural_bo(), bounds, capacity=60, key=jax.random.key(0),
                          x0=x0, y0=[my_simulator(x) for x in x0])
        for _ in range(50):
            x = opt.ask()
            opt.tell(x, my_simulator(x))
        opt.best()   # (x, y) of the best valid observation

    Raises:
        ValueError: capacity exceeded on ``tell`` (message says to raise ``capacity``), or
        bad initial data. Warns (``RuntimeWarning``) when a NaN/inf is told (it is masked).
    """

    def __init__(self, algorithm: BOAlgorithm, bounds, capacity: int, key: Array, x0, y0):
        _check_algorithm(algorithm)
        lo, hi = bounds
        self.bounds = make_bounds(lo, hi, name="bounds")
        self.capacity = _check_count("capacity", capacity, 1)
        x0 = np.asarray(x0, dtype=float)
        y0 = np.asarray(y0, dtype=float).reshape(-1)
        if x0.ndim != 2 or x0.shape[1] != self.bounds.dim:
            raise ValueError(f"x0 must have shape (n0, {self.bounds.dim}), got {x0.shape}")
        self._warn_invalid(y0)
        self.algorithm = algorithm
        self._key, k0 = jax.random.split(key)
        self.state = algorithm.init(k0, x0, y0, bounds=self.bounds, capacity=self.capacity)
        self._ask = jax.jit(algorithm.ask)
        self._tell = jax.jit(algorithm.tell)
        self.x = [row for row in x0]
        self.y = list(y0)

    @staticmethod
    def _warn_invalid(y) -> None:
        bad = int(np.sum(~np.isfinite(np.asarray(y, dtype=float))))
        if bad:
            warnings.warn(f"AskTell: {bad} NaN/inf observation(s) masked (never trained on)",
                          RuntimeWarning, stacklevel=3)

    def ask(self) -> np.ndarray:
        """The next point to evaluate, a ``(d,)`` numpy array in box coordinates (``(q, d)``
        for a batch algorithm with ``batch_size = q > 1``)."""
        self._key, k = jax.random.split(self._key)
        return np.asarray(self._ask(self.state, k))

    def tell(self, x, y) -> None:
        """Record ``y = f(x)``: ``x (d,)`` and a scalar ``y``, or for a batch algorithm
        ``x (q, d)`` and ``y (q,)``. NaN/inf is masked and reported."""
        q = self.algorithm.batch_size
        x = np.asarray(x, dtype=float).reshape(q, -1)
        y = np.asarray(y, dtype=float).reshape(q)
        if len(self.y) + q > self.capacity:
            raise ValueError(f"capacity ({self.capacity}) exceeded: create AskTell with a larger capacity")
        if x.shape[1] != self.bounds.dim:
            raise ValueError(f"x must have {self.bounds.dim} coordinates, got {x.shape[1]}")
        self._warn_invalid(y)
        if q == 1:
            self.state = self._tell(self.state, jnp.asarray(x[0]), jnp.asarray(y[0]))
        else:
            self.state = self._tell(self.state, jnp.asarray(x), jnp.asarray(y))
        self.x.extend(list(x))
        self.y.extend(float(v) for v in y)

    def best(self) -> tuple[np.ndarray, float]:
        """``(x, y)`` of the smallest finite observation so far."""
        y = np.where(np.isfinite(self.y), self.y, np.inf)
        i = int(np.argmin(y))
        return np.asarray(self.x[i]), float(self.y[i])
