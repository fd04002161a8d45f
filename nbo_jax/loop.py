"""Running BO: ``run_bo``, one ``lax.scan``, jit-compiled and vmappable (the ask/tell driver
for objectives outside JAX is :class:`nbo_jax.ask_tell.AskTell`).

``run_bo`` draws ``n_init`` uniform initial points from the key (the same for every
algorithm given the same key, so methods are compared on shared initial designs), observes them with the problem's noise,
calls ``algorithm.init`` and then scans ``ask -> objective -> tell`` for ``n_iter`` steps.
"""

from __future__ import annotations

import math
import warnings
from typing import Callable, Optional, Union

import jax
import jax.numpy as jnp
import numpy as np

from ._checks import check_int as _check_count
from .observations import data_info
from .pareto import hypervolume
from .search_space import SearchSpace
from .types import (
    BATCH_RULES,
    BOAlgorithm,
    Bounds,
    FiniteDomain,
    History,
    Problem,
    make_bounds,
)

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
    try:
        out = jax.eval_shape(problem.objective, jax.ShapeDtypeStruct((problem.dim,), jnp.zeros(()).dtype))
    except Exception as err:  # noqa: BLE001 - re-raised with the problem's name
        raise ValueError(f"problem.objective of {problem.name!r} failed on one point of shape "
                         f"({problem.dim},): {type(err).__name__}: {err}") from err
    if jnp.issubdtype(getattr(out, "dtype", jnp.float32), jnp.complexfloating):
        raise TypeError(f"problem.objective of {problem.name!r} returns a complex value ({out.dtype}); the "
                        "objective must be real (return jnp.real(...) or jnp.abs(...) explicitly)")
    shape = getattr(out, "shape", None)
    if shape != () and not (shape is not None and len(shape) == 1 and shape[0] >= 2):
        raise ValueError(f"problem.objective of {problem.name!r} must map one point (d,) = ({problem.dim},) "
                         f"to a scalar (), or to (m,) for m >= 2 objectives, got output shape "
                         f"{getattr(out, 'shape', type(out).__name__)}; e.g. return f(x)[0] or jnp.squeeze(...)")
    if problem.constraints is not None:
        k = problem.n_constraints
        std = np.asarray(problem.constraint_noise_std, dtype=float)
        if std.ndim > 1 or (std.ndim == 1 and std.shape[0] != k):
            raise ValueError(
                f"problem.constraint_noise_std must be a float or {k} floats (one per constraint), "
                f"got shape {std.shape}")
        if not np.all(np.isfinite(std) & (std >= 0)):
            raise ValueError(f"problem.constraint_noise_std must be finite and >= 0, got {std.tolist()}")


def _check_pair(algorithm, problem) -> None:
    """A constrained algorithm needs a problem with constraints; a problem of several
    objectives needs an algorithm that takes them."""
    if problem.n_objectives > 1 and not algorithm.multi_objective:
        raise ValueError(
            f"problem {problem.name!r} has {problem.n_objectives} objectives and algorithm {algorithm.name!r} "
            "optimizes one; use a multi-objective algorithm (e.g. nbo.registry.get('gp-ehvi'), "
            "nbo.gp_bo(acquisition=nbo.acquisition.ehvi())) or random search")
    if algorithm.constrained and problem.constraints is None:
        raise ValueError(
            f"algorithm {algorithm.name!r} models black-box constraints but problem {problem.name!r} "
            "has none (problem.constraints is None); use an unconstrained algorithm or a constrained "
            "problem such as nbo.benchmarks.get('branin_constrained')")


def _check_finite_budget(problem, n_init: int, n_after: int) -> None:
    """On a finite domain every evaluation is a distinct point: ``n_init + n_after <= N``."""
    if problem.choices is not None and n_init + n_after > problem.choices.shape[0]:
        raise ValueError(
            f"n_init + n_iter * q = {n_init + n_after} evaluations exceed the {problem.choices.shape[0]} points of "
            f"the finite problem {problem.name!r} (no point is evaluated twice); lower n_iter")


def _check_algorithm(algorithm) -> None:
    if not isinstance(algorithm, BOAlgorithm):
        raise TypeError(
            f"algorithm must be an nbo_jax.BOAlgorithm (e.g. nbo.neural_bo()), got {type(algorithm).__name__}"
        )
    _check_count("algorithm.q", algorithm.q, 1)
    if algorithm.batch_rule not in BATCH_RULES:
        raise ValueError(f"algorithm.batch_rule must be one of {BATCH_RULES}, got {algorithm.batch_rule!r}")


def _check_run(algorithm, problem, n_init, n_iter) -> tuple[int, int]:
    """The checks every ``run_bo``-shaped entry point makes on its arguments; returns
    ``(n_init, n_iter)`` as ints."""
    _check_algorithm(algorithm)
    _check_problem(problem)
    _check_pair(algorithm, problem)
    n_init = _check_count("n_init", n_init, 1)
    n_iter = _check_count("n_iter", n_iter, 0)
    _check_finite_budget(problem, n_init, n_iter * algorithm.q)
    return n_init, n_iter


def _check_x0_values(x0: np.ndarray, bounds) -> None:
    """Raise ``ValueError`` unless every row of the concrete ``x0 (n, d)`` is finite and
    inside ``bounds`` (the message names the first bad row and coordinate)."""
    bad = np.nonzero(~np.all(np.isfinite(x0), axis=1))[0]
    if bad.size:
        raise ValueError(f"x0 has NaN/inf coordinates in row(s) {bad.tolist()}: initial points must be finite")
    lower, upper = np.asarray(bounds.lower, np.float64), np.asarray(bounds.upper, np.float64)
    out = (x0 < lower) | (x0 > upper)
    if out.any():
        i, j = (int(v) for v in np.argwhere(out)[0])
        raise ValueError(f"x0 row {i} is outside problem.bounds: coordinate {j} is {float(x0[i, j])!r}, the box is "
                         f"[{float(lower[j])!r}, {float(upper[j])!r}]")


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
            f"run_bo: {n} observation(s) held NaN/inf values (failed evaluations); the surrogate trains on "
            "each as the worst value observed so far (masked only while no finite value exists yet, "
            "nbo_jax.dataset.Dataset.failed), and they are flagged False in History.valid",
            RuntimeWarning,
            stacklevel=2,
        )


# --------------------------------------------------------------------------- run_bo
def initial_design(key: Array, bounds: Union[Bounds, FiniteDomain], n: int, dtype=None) -> Array:
    """``n`` points uniform in the box, ``(n, d)`` (the initial design; the same for every
    algorithm given the same key); for a :class:`~nbo_jax.domains.FiniteDomain`, ``n`` distinct
    points drawn uniformly from its points (``n <= N``)."""
    dtype = dtype or jnp.zeros(()).dtype
    if isinstance(bounds, FiniteDomain):
        rows = jax.random.choice(key, bounds.size, (n,), replace=False)
        return jnp.asarray(bounds.points, dtype)[rows]
    if isinstance(bounds, SearchSpace):  # uniform encodings, rounded to valid configurations
        return bounds.from_unit(bounds.round(jax.random.uniform(key, (n, bounds.unit_dim), dtype)))
    box = Bounds(*bounds)
    return box.from_unit(jax.random.uniform(key, (n, np.shape(box.lower)[0]), dtype))


def observe(problem: Problem, x: Array, key: Array, dtype=None):
    """Evaluate ``problem`` at ``x (n, d)`` with its observation noise.

    Returns ``(f, y, c_true, c)``: noise-free ``f (n,)`` (``(n, m)`` for ``m`` objectives),
    observed ``y`` like ``f`` and, for a
    constrained problem, noise-free ``c_true (n, K)`` and observed ``c (n, K)`` (``None``
    otherwise). The objective and constraint noises are independent Gaussians.
    """
    dtype = dtype or x.dtype
    k_f, k_c = jax.random.split(key)
    f = jax.vmap(problem.objective)(x).astype(dtype)
    y = f + problem.noise_std * jax.random.normal(k_f, f.shape, dtype)
    if problem.constraints is None:
        return f, y, None, None
    c_true = jax.vmap(problem.constraints)(x).astype(dtype)
    std = jnp.asarray(problem.constraint_noise_std, dtype)
    c = c_true + std * jax.random.normal(k_c, c_true.shape, dtype)
    return f, y, c_true, c


def step_info(algorithm: BOAlgorithm, state) -> dict:
    """The per-step diagnostics of ``state``: the observation counts every algorithm reports
    (``n_observed``, ``n_failed``) and the algorithm's own (``BOAlgorithm.info``), as arrays."""
    info = dict(data_info(state))
    if algorithm.info is not None:
        info.update(algorithm.info(state))
    return {k: jnp.asarray(v) for k, v in info.items()}


def segment_plan(n_init: int, n_iter: int, q: int, segments: int) -> list[tuple[int, int]]:
    """The compiled segments of a run in ``segments`` parts of growing capacity: a list of
    ``(steps, capacity)``, the capacity doubling from one segment to the next up to the full
    ``n_init + n_iter * q`` (each segment ends with its buffers full). Fewer than ``segments``
    parts when the run is too short to halve that often; one part when ``segments == 1``."""
    ends = [n_iter]  # steps done at the end of each segment, last first
    while len(ends) < segments:
        half = -(-((n_init + ends[-1] * q) // 2 - n_init) // q)  # steps until half the rows
        if half < 1 or half >= ends[-1]:
            break
        ends.append(half)
    ends = ends[::-1]
    return [(e - b, n_init + e * q) for b, e in zip([0] + ends[:-1], ends)]


def grow_state(state, full, shapes):
    """The state of a run's next segment: ``state`` (the previous segment's) in buffers of
    ``shapes`` (the shapes ``init`` gives at the next capacity, a pytree like ``state``).

    ``full`` is the state ``init`` built at the run's full capacity from the same initial
    design. Every leaf whose shape changes with the capacity gets ``state``'s values in its
    leading block and ``full``'s leading block elsewhere (the empty-row values: masked rows,
    identity blocks of factors); every other leaf is ``state``'s (``state=None``: ``full``'s,
    so settings that depend on the whole budget, like NeuralGreedy's exploration steps, keep
    their full-run values). Exact where an algorithm's empty rows do not interact with its
    observed ones (masked rows are identity dummies with zero cross terms); the test of
    ``run_bo(..., segments=...)`` checks it for every registry algorithm.

    Raises:
        ValueError: a leaf whose shape does not grow by whole leading blocks with the capacity.
    """
    def leaf(old, big, shape):
        if not hasattr(big, "shape"):
            return big if old is None else old
        if big.ndim != len(shape.shape) or any(s > b for s, b in zip(shape.shape, big.shape)):
            raise ValueError(f"a state leaf of shape {big.shape} at full capacity has shape {shape.shape} at a "
                             "smaller one: it cannot be grown by segments (run with segments=1)")
        block = big[tuple(slice(0, s) for s in shape.shape)]
        if old is None:
            return block
        if old.shape == block.shape:
            return old
        return block.at[tuple(slice(0, o) for o in old.shape)].set(old.astype(block.dtype))

    if state is None:
        return jax.tree.map(lambda b, s: leaf(None, b, s), full, shapes)
    return jax.tree.map(leaf, state, full, shapes)


def _run_bo_impl(key, x0, *, algorithm, problem, n_init, n_iter, progress, segments=1):
    dtype = jnp.zeros(()).dtype
    k_init, k_noise0, k_alg, k_loop = jax.random.split(key, 4)
    if x0 is None:
        x0 = initial_design(k_init, problem.domain, n_init, dtype)
    x0 = jnp.asarray(x0, dtype)
    f0, y0, ct0, c0 = observe(problem, x0, k_noise0, dtype)
    q = algorithm.q
    plan = segment_plan(n_init, n_iter, q, segments)
    init = lambda capacity: algorithm.init(k_alg, x0, y0, c0, bounds=problem.domain, capacity=capacity)  # noqa: E731
    state = init(plan[-1][1])
    if len(plan) > 1:  # the first segment's buffers: the full state's leading blocks
        full = state
        state = grow_state(None, full, jax.eval_shape(lambda: init(plan[0][1])))
    info0 = step_info(algorithm, state)

    def step(state, inp):
        t, k = inp
        k_ask, k_noise = jax.random.split(k)
        x = jnp.reshape(jnp.asarray(algorithm.ask(state, k_ask), dtype), (q, -1))
        f, y, c_true, c = observe(problem, x, k_noise, dtype)
        state = algorithm.tell(state, x, y, c)
        if progress is True:
            jax.debug.callback(_tick, t, n_iter)
        elif progress:
            jax.debug.callback(progress, t)
        return state, (x, y, f, c_true, c, step_info(algorithm, state))

    steps, keys = jnp.arange(n_iter), jax.random.split(k_loop, n_iter)
    outs, start = [], 0
    for j, (length, capacity) in enumerate(plan):
        if j:  # the next segment's buffers: the state so far, grown
            state = grow_state(state, full, jax.eval_shape(lambda: init(capacity)))
        state, out = jax.lax.scan(step, state, (steps[start:start + length], keys[start:start + length]))
        outs.append(out)
        start += length
    xs, ys, fs, cts, cs, infos = jax.tree.map(lambda *a: jnp.concatenate(a, axis=0), *outs) if len(outs) > 1 \
        else outs[0]
    d = x0.shape[1]
    per_row = y0.shape[1:]  # () or (m,)
    x = jnp.concatenate([x0, xs.reshape(-1, d)], axis=0)
    y = jnp.concatenate([y0, ys.reshape((-1,) + per_row)], axis=0)
    f = jnp.concatenate([f0, fs.reshape((-1,) + per_row)], axis=0)
    best_f = jax.lax.cummin(jnp.where(jnp.isfinite(f), f, jnp.inf), axis=0)
    valid = jnp.isfinite(y) if not per_row else jnp.all(jnp.isfinite(y), axis=1)
    extra = {}
    if problem.constraints is not None:
        K = ct0.shape[1]
        c = jnp.concatenate([c0, cs.reshape(-1, K)], axis=0)
        c_true = jnp.concatenate([ct0, cts.reshape(-1, K)], axis=0)
        valid = valid & jnp.all(jnp.isfinite(c), axis=1)
        finite_f = jnp.all(jnp.isfinite(f), axis=1) if per_row else jnp.isfinite(f)
        feasible = jnp.all(c_true <= 0.0, axis=1) & finite_f
        best_feasible_f = jax.lax.cummin(jnp.where(feasible[:, None] if per_row else feasible, f, jnp.inf), axis=0)
        extra = dict(c=c, c_true=c_true, feasible=feasible, best_feasible_f=best_feasible_f)
    if per_row and problem.reference_point is not None:
        keep = valid & jnp.all(jnp.isfinite(f), axis=1) & extra.get("feasible", True)
        extra["hypervolume"] = running_hypervolume(f, keep, problem.reference_point)
    extra["info"] = {k: jnp.concatenate([info0[k][None], infos[k]], axis=0) for k in info0}
    jax.debug.callback(_report_invalid, jnp.sum(~valid))
    return History(x, y, f, best_f, valid, **extra)


def running_hypervolume(f: Array, keep: Array, reference_point) -> Array:
    """``(n,)``: the hypervolume dominated by the rows of ``f (n, m)`` in ``keep (n,)`` among
    the first ``t + 1``, for each ``t`` (:func:`nbo_jax.pareto.hypervolume`)."""
    ref = jnp.asarray(reference_point, f.dtype)
    n = f.shape[0]
    prefix = jnp.arange(n)[None, :] <= jnp.arange(n)[:, None]
    return jax.lax.map(lambda rows: hypervolume(f, ref, keep & rows), prefix)


_run_bo_jit = jax.jit(
    _run_bo_impl, static_argnames=("algorithm", "problem", "n_init", "n_iter", "progress", "segments")
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
    segments: int = 1,
) -> History:
    """Run one BO loop, jit-compiled: ``n_init`` initial points then ``n_iter`` ask/tell steps.

    Args:
        key: a single PRNG key (``jax.random.key(seed)``); vmap ``run_bo`` over keys for
            many seeds (one compilation serves them all).
        algorithm: a :class:`BOAlgorithm` (``nbo.neural_bo(...)``, ``nbo.random_search()``).
        problem: a :class:`Problem` (``nbo.benchmarks.get(...)``); minimized.
        n_init: number of initial points (>= 1), uniform in the box unless ``x0`` is given
            (on a finite problem: distinct points drawn uniformly from ``problem.choices``).
        n_iter: number of BO iterations (>= 0); each evaluates ``algorithm.q``
            points.
        x0: optional ``(n_init, d)`` initial design in box coordinates: finite and inside
            ``problem.bounds`` (checked before compiling when ``x0`` is a concrete array; an
            ``x0`` traced by an outer ``jit``/``vmap`` cannot be checked and is evaluated as
            given).
        progress: ``True`` shows a tqdm bar (host callback per iteration); a callable
            ``hook(step: int)`` is called after each iteration instead (reuse the same
            callable to avoid recompiling).
        segments: run in this many compiled segments of growing capacity (doubling up to
            ``n_init + n_iter * q``, :func:`segment_plan`), so that the early steps factorize
            small matrices instead of full-capacity ones: the cost of a long run follows its
            data. Each segment compiles its own loop body; in float64 the results equal
            the one-segment run's up to float rounding (a different matrix size rounds
            differently), in float32 a long run may drift from it as a vmapped seed may.
            ``1`` (default): one scan.

    Returns:
        :class:`History` with ``n = n_init + n_iter * q`` rows: ``x (n, d)``, ``y (n,)``,
        ``f (n,)``, ``best_f (n,)``, ``valid (n,)``; for a constrained problem also
        ``c (n, K)`` (observed), ``c_true (n, K)``, ``feasible (n,)`` and
        ``best_feasible_f (n,)``; for an algorithm with per-step diagnostics
        (``BOAlgorithm.info``, e.g. PINN-BO's interaction information) also ``info``, a dict
        of ``(n_iter + 1,)`` arrays. NaN/inf observations are failed evaluations: the
        surrogate trains on each as the worst value observed so far (masked only while no
        finite value exists yet; :class:`~nbo_jax.dataset.Dataset`'s ``failed``); they are
        flagged in ``valid`` and reported by a ``RuntimeWarning``.

    A constrained algorithm (``algorithm.constrained``) receives the observed constraint
    values with the objective's; any other algorithm runs on a constrained problem as if it
    had none (its history still records the constraints).

    Raises:
        TypeError / ValueError: before compiling, for a wrong key, algorithm, problem (a
        complex-valued objective included),
        ``n_init < 1``, ``n_iter < 0``, ``segments < 1``, bad bounds, an ``x0`` of the wrong shape,
        with NaN/inf or outside the box, a
        constrained algorithm on a problem without constraints, or, on a finite problem, more
        evaluations than points.

    On a finite problem (``problem.choices``, e.g. :func:`nbo_jax.benchmarks.finite.finite_problem`)
    the algorithm receives the :class:`~nbo_jax.domains.FiniteDomain` as ``bounds``: its
    acquisition is scored on the points not evaluated yet and no point is evaluated twice.

    The jit cache is keyed on the identity of ``algorithm`` and ``problem``: build them once
    and reuse them.
    """
    _check_key(key)
    n_init, n_iter = _check_run(algorithm, problem, n_init, n_iter)
    if not (progress is True or progress is False or callable(progress)):
        raise TypeError("progress must be a bool or a callable hook(step)")
    segments = _check_count("segments", segments, 1)
    if x0 is not None:
        shape = tuple(np.shape(x0))
        if shape != (n_init, problem.dim):
            raise ValueError(f"x0 must have shape (n_init, d) = {(n_init, problem.dim)}, got {shape}")
        if not isinstance(x0, jax.core.Tracer):
            _check_x0_values(np.asarray(x0, dtype=np.float64), problem.bounds)
    return _run_bo_jit(
        key, x0, algorithm=algorithm, problem=problem, n_init=n_init, n_iter=n_iter, progress=progress,
        segments=segments,
    )
