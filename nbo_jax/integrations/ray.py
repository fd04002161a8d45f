"""Expensive objectives evaluated in parallel on Ray: :func:`optimize`.

``n_workers`` evaluations are kept in flight on as many Ray workers (actors made with
``ray.remote``, each holding the objective and evaluating one point at a time);
``ray.wait`` returns each evaluation as it finishes, its value is told, and the next point
is asked with the others still pending (asynchronous BO,
:class:`~nbo_jax.integrations.study.AsyncStudy`). An evaluation that raises, whose worker
dies, or that runs past ``timeout_s`` is recorded as a failed evaluation with its reason,
and the study goes on (a worker that died or was stopped is replaced by a new one).
Workers that stay up for the whole study mean that ``timeout_s`` counts from the moment an
evaluation starts, never the seconds Ray needs to start a worker process. With
``checkpoint=`` the study is saved after every result; calling :func:`optimize` again with
the same file resumes it (the evaluations that were in flight when the driver died are run
again).

Ray does the scheduling: ``ray.init()`` on this machine starts a local cluster; on an
existing cluster pass ``address="auto"`` or ``"ray://host:10001"`` (or call ``ray.init``
yourself first). Needs the extra: ``pip install 'nbo-jax[ray]'``.
"""

from __future__ import annotations

import math
import pathlib
import time
from typing import Callable, Optional

import jax
import numpy as np

try:
    import ray
    import ray.exceptions
except ImportError as err:  # pragma: no cover - exercised without the extra
    raise ImportError("nbo_jax.integrations.ray needs Ray: pip install 'nbo-jax[ray]'") from err

from .._checks import check_int, check_positive
from ..types import BOAlgorithm, as_bounds
from .study import AsyncStudy

__all__ = ["optimize"]


def _evaluator_class() -> type:
    """The class of a Ray worker: holds the objective and evaluates it, ``evaluate(x)`` as a
    float (NaN when it is not a number). Defined inside a function, so Ray pickles it by
    value: a worker needs numpy and the objective's own imports, never nbo_jax (whose import
    pulls in JAX, flax and py-pde: seconds and hundreds of MB per worker process)."""

    class Evaluator:
        def __init__(self, objective: Callable):
            self.objective = objective

        def ready(self) -> bool:
            return True

        def evaluate(self, x: np.ndarray) -> float:
            value = self.objective(x)
            try:
                return float(np.asarray(value).reshape(()))
            except (TypeError, ValueError):
                return float("nan")

    return Evaluator


def _reason(err: Exception) -> str:
    """One line for ``study.failures``: the error's type and the last line of its message."""
    lines = str(err).strip().splitlines() or [""]
    return f"{type(err).__name__}: {lines[-1][:300]}"


def optimize(
    objective: Callable[[np.ndarray], float],
    bounds,
    n_evaluations: int,
    *,
    algorithm: Optional[BOAlgorithm] = None,
    n_init: int = 10,
    n_workers: int = 4,
    key=None,
    timeout_s: Optional[float] = None,
    checkpoint=None,
    address: Optional[str] = None,
    num_cpus: float = 1,
    num_gpus: float = 0,
    worker_start_timeout_s: Optional[float] = 600.0,
    verbose: bool = False,
) -> AsyncStudy:
    """Minimize ``objective`` with ``n_evaluations`` evaluations, ``n_workers`` at a time, on
    Ray workers (asynchronous BO: the next point is asked with the running ones pending).

    Example::

        import nbo_jax as nbo
        from nbo_jax.integrations.ray import optimize

        study = optimize(simulate, [(0.0, 1.0)] * 6, n_evaluations=100, n_workers=8,
                         algorithm=nbo.neural_bo(), checkpoint="runs/sim.pkl")
        x_best, y_best = study.best()

    Args:
        objective: ``f(x) -> float`` for ``x`` a float64 numpy array ``(d,)``; runs on Ray
            workers, each of which unpickles it once (so it must be picklable: a
            module-level function, or a closure over picklable values). Raising, returning
            NaN/inf, a value that is not a number, or killing its process are failed
            evaluations.
        bounds: the box, ``(lower, upper)`` or a list of ``(low, high)`` pairs.
        n_evaluations: the total number of evaluations, the initial design included (a
            resumed study counts the ones already told).
        algorithm: an unconstrained :class:`~nbo_jax.types.BOAlgorithm`; default
            :func:`nbo_jax.neural_bo` (Phan-Trong et al. 2023).
        n_init: the size of the uniform initial design.
        n_workers: evaluations in flight at once, on as many Ray workers, each holding
            ``num_cpus``/``num_gpus`` of the cluster for the whole study.
        key: a PRNG key (default ``jax.random.key(0)``).
        timeout_s: an evaluation still running this many seconds after it started is
            stopped (its worker is killed, ``ray.kill``, and replaced) and recorded as
            failed. ``None``: no limit.
        checkpoint: a file path: the study is saved there after every result
            (:meth:`AsyncStudy.save`) and, if the file exists, resumed from it.
        address: the Ray cluster to connect to when Ray is not initialized yet (``None``
            starts a local one).
        num_cpus: the CPUs one worker asks Ray for.
        num_gpus: the GPUs one worker asks Ray for.
        worker_start_timeout_s: when no evaluation is running and no worker has started
            for this many seconds (the cluster lacks the resources, or worker processes
            fail to start), a ``RuntimeError`` says so instead of waiting on. ``None``:
            wait as long as it takes (e.g. for an autoscaler).
        verbose: print a line per result.

    Returns:
        The :class:`~nbo_jax.integrations.study.AsyncStudy`: ``x``, ``y``, ``best()``,
        ``failures`` (index, point and reason of every failed evaluation).

    Raises:
        TypeError / ValueError: bad arguments (each message names it), or a checkpoint whose
        bounds differ from ``bounds``.
        RuntimeError: a worker's start failed (e.g. the objective does not unpickle there:
        a module the workers lack), or no worker started within ``worker_start_timeout_s``.
    """
    if not callable(objective):
        raise TypeError(f"objective must be callable, got {type(objective).__name__}")
    n_evaluations = check_int("n_evaluations", n_evaluations, 1)
    n_workers = check_int("n_workers", n_workers, 1)
    if timeout_s is not None:
        timeout_s = check_positive("timeout_s", timeout_s)
    if worker_start_timeout_s is not None:
        worker_start_timeout_s = check_positive("worker_start_timeout_s", worker_start_timeout_s)
    num_cpus = check_positive("num_cpus", num_cpus, allow_zero=True)
    num_gpus = check_positive("num_gpus", num_gpus, allow_zero=True)
    if algorithm is None:
        from ..algorithms import neural_bo

        algorithm = neural_bo()
    key = jax.random.key(0) if key is None else key
    path = None if checkpoint is None else pathlib.Path(checkpoint)
    if path is not None and path.exists():
        check_int("n_init", n_init, 1)
        box = as_bounds(bounds, name="bounds")
        study = AsyncStudy.load(path, algorithm)
        if not (np.array_equal(box.lower, study.bounds.lower) and np.array_equal(box.upper, study.bounds.upper)):
            raise ValueError(f"checkpoint: {str(path)!r} holds a study over other bounds "
                             f"({study.bounds.lower.tolist()}, {study.bounds.upper.tolist()})")
    else:
        study = AsyncStudy(algorithm, bounds, n_init, key)

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False)
    worker_cls = ray.remote(num_cpus=num_cpus, num_gpus=num_gpus, max_restarts=0, max_task_retries=0)(
        _evaluator_class())
    objective_ref = ray.put(objective)

    rerun = list(study.busy)  # in flight when an earlier driver stopped
    starting: dict = {}  # ObjectRef of a new worker's ready() -> (worker, time it was asked for)
    idle: list = []  # started workers without an evaluation
    running: dict = {}  # ObjectRef of an evaluation -> (worker, x, start time)

    def workers_wanted() -> int:
        left = n_evaluations - study.n_told - len(running)
        return max(0, min(n_workers - len(running), left) - len(idle) - len(starting))

    def start_workers():
        for _ in range(workers_wanted()):
            worker = worker_cls.remote(objective_ref)
            starting[worker.ready.remote()] = (worker, time.monotonic())

    def record(x, y, error=None):
        study.tell(x, y, error)
        if verbose:
            print(f"[{study.n_told}/{n_evaluations}] y = {y:.6g}" + (f" ({error})" if error else ""))
        if path is not None:
            study.save(path)

    try:
        start_workers()
        while study.n_told < n_evaluations:
            while idle and study.n_told + len(running) < n_evaluations:
                worker = idle.pop()
                x = rerun.pop(0) if rerun else study.suggest()
                running[worker.evaluate.remote(x)] = (worker, x, time.monotonic())
            # nothing can progress until a worker starts: since when that has been so
            stalled_since = min((asked for _, asked in starting.values()), default=None) if not running else None
            deadlines = []
            if timeout_s is not None:
                deadlines += [start + timeout_s for _, _, start in running.values()]
            if stalled_since is not None and worker_start_timeout_s is not None:
                deadlines.append(stalled_since + worker_start_timeout_s)
            wait_s = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
            ready, _ = ray.wait(list(running) + list(starting), num_returns=1, timeout=wait_s)
            for ref in ready:
                if ref in starting:
                    worker, _ = starting.pop(ref)
                    try:
                        ray.get(ref)
                    except ray.exceptions.RayError as err:  # e.g. the objective does not unpickle there
                        raise RuntimeError(f"Ray could not start a worker for the objective: {_reason(err)}") from err
                    idle.append(worker)
                    continue
                worker, x, _ = running.pop(ref)
                try:
                    y, error = ray.get(ref), None
                    if not math.isfinite(y):
                        error = f"objective returned {y}"
                    idle.append(worker)
                except ray.exceptions.RayTaskError as err:  # the objective raised; its worker goes on
                    y, error = float("nan"), _reason(err)
                    idle.append(worker)
                except ray.exceptions.RayError as err:  # the worker died: a new one replaces it
                    y, error = float("nan"), _reason(err)
                    ray.kill(worker, no_restart=True)
                record(x, y, error)
            now = time.monotonic()
            if timeout_s is not None:
                for ref in [r for r, (_, _, start) in running.items() if now - start >= timeout_s]:
                    worker, x, _ = running.pop(ref)
                    ray.kill(worker, no_restart=True)  # stops the evaluation: its process ends
                    record(x, float("nan"), f"timed out after {timeout_s:g} s")
            if stalled_since is not None and worker_start_timeout_s is not None and not ready:
                if now - stalled_since >= worker_start_timeout_s:
                    raise RuntimeError(
                        f"Ray started none of {len(starting)} workers within worker_start_timeout_s="
                        f"{worker_start_timeout_s:g} s: the cluster may lack the resources one asks for "
                        f"(num_cpus={num_cpus:g}, num_gpus={num_gpus:g}; it has {ray.cluster_resources()}), "
                        f"or worker processes fail to start (see raylet.err in Ray's log directory; a "
                        f"driver run with `uv run` gets workers built by `uv run` with the same flags in a "
                        f"copy of the project: pass the extras it needs, e.g. `uv run --extra ray`, or set "
                        f"RAY_ENABLE_UV_RUN_RUNTIME_ENV=0 before Ray starts to use the driver's environment)")
            start_workers()
    finally:
        for worker in idle + [w for w, _, _ in running.values()] + [w for w, _ in starting.values()]:
            ray.kill(worker, no_restart=True)
    return study
