"""Expensive objectives evaluated in parallel on Ray: :func:`optimize`.

``n_workers`` evaluations are kept in flight as Ray tasks (``ray.remote``); ``ray.wait``
returns each one as it finishes, its value is told, and the next point is asked with the
others still pending (asynchronous BO, :class:`~nbo_jax.integrations.study.AsyncStudy`). A
task that raises, whose worker dies, or that runs past ``timeout_s`` is recorded as a failed
evaluation with its reason, and the study goes on. With ``checkpoint=`` the study is saved
after every result; calling :func:`optimize` again with the same file resumes it (the
evaluations that were in flight when the driver died are run again).

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

from ..algorithms._common import check_int, check_positive
from ..types import BOAlgorithm, as_bounds
from .study import AsyncStudy

__all__ = ["optimize"]


def _evaluator() -> Callable[[Callable, np.ndarray], float]:
    """The function a Ray worker runs: ``objective(x)`` as a float (NaN when it is not a
    number). A closure, so Ray pickles it by value: a worker needs numpy and the objective's
    own imports, never nbo_jax (whose import pulls in JAX, flax and py-pde: seconds and
    hundreds of MB per worker process)."""

    def evaluate(objective: Callable, x: np.ndarray) -> float:
        value = objective(x)
        try:
            return float(np.asarray(value).reshape(()))
        except (TypeError, ValueError):
            return float("nan")

    return evaluate


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
    verbose: bool = False,
) -> AsyncStudy:
    """Minimize ``objective`` with ``n_evaluations`` evaluations, ``n_workers`` at a time, as
    Ray tasks.

    Example::

        import nbo_jax as nbo
        from nbo_jax.integrations.ray import optimize

        study = optimize(simulate, [(0.0, 1.0)] * 6, n_evaluations=100, n_workers=8,
                         algorithm=nbo.neural_bo(), checkpoint="runs/sim.pkl")
        x_best, y_best = study.best()

    Args:
        objective: ``f(x) -> float`` for ``x`` a float64 numpy array ``(d,)``; runs on Ray
            workers (so it must be picklable: a module-level function, or a closure over
            picklable values). Raising, returning NaN/inf, or a value that is not a number
            are failed evaluations.
        bounds: the box, ``(lower, upper)`` or a list of ``(low, high)`` pairs.
        n_evaluations: the total number of evaluations, the initial design included (a
            resumed study counts the ones already told).
        algorithm: an unconstrained :class:`~nbo_jax.types.BOAlgorithm`; default
            :func:`nbo_jax.neural_bo` (Phan-Trong et al. 2023).
        n_init: the size of the uniform initial design.
        n_workers: evaluations in flight at once (Ray runs as many as the cluster has room
            for at ``num_cpus``/``num_gpus`` each).
        key: a PRNG key (default ``jax.random.key(0)``).
        timeout_s: an evaluation still running after this many seconds is cancelled
            (``ray.cancel(force=True)``) and recorded as failed.
        checkpoint: a file path: the study is saved there after every result
            (:meth:`AsyncStudy.save`) and, if the file exists, resumed from it.
        address: the Ray cluster to connect to when Ray is not initialized yet (``None``
            starts a local one).
        num_cpus, num_gpus: the resources one evaluation asks Ray for.
        verbose: print a line per result.

    Returns:
        The :class:`~nbo_jax.integrations.study.AsyncStudy`: ``x``, ``y``, ``best()``,
        ``failures`` (index, point and reason of every failed evaluation).

    Raises:
        TypeError / ValueError: bad arguments (each message names it), or a checkpoint whose
        bounds differ from ``bounds``.
    """
    if not callable(objective):
        raise TypeError(f"objective must be callable, got {type(objective).__name__}")
    n_evaluations = check_int("n_evaluations", n_evaluations, 1)
    n_workers = check_int("n_workers", n_workers, 1)
    if timeout_s is not None:
        timeout_s = check_positive("timeout_s", timeout_s)
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
    task = ray.remote(num_cpus=num_cpus, num_gpus=num_gpus, max_retries=0)(_evaluator())
    objective_ref = ray.put(objective)

    rerun = [x for x in study.busy]  # in flight when an earlier driver stopped
    running: dict = {}  # ObjectRef -> (x, start time)

    def record(x, y, error=None):
        study.tell(x, y, error)
        if verbose:
            print(f"[{study.n_told}/{n_evaluations}] y = {y:.6g}" + (f" ({error})" if error else ""))
        if path is not None:
            study.save(path)

    while study.n_told < n_evaluations:
        while len(running) < n_workers and study.n_told + len(running) < n_evaluations:
            x = rerun.pop(0) if rerun else study.suggest()
            running[task.remote(objective_ref, x)] = (x, time.monotonic())
        wait_s = None
        if timeout_s is not None:
            first = min(start for _, start in running.values())
            wait_s = max(0.0, first + timeout_s - time.monotonic())
        ready, _ = ray.wait(list(running), num_returns=1, timeout=wait_s)
        for ref in ready:
            x, _ = running.pop(ref)
            try:
                y, error = ray.get(ref), None
                if not math.isfinite(y):
                    error = f"objective returned {y}"
            except ray.exceptions.RayError as err:  # the task raised, its worker died, ...
                y, error = float("nan"), f"{type(err).__name__}: {str(err).strip().splitlines()[-1][:300]}"
            record(x, y, error)
        if timeout_s is not None:
            now = time.monotonic()
            for ref in [r for r, (_, start) in running.items() if now - start >= timeout_s]:
                x, _ = running.pop(ref)
                ray.cancel(ref, force=True)
                record(x, float("nan"), f"timed out after {timeout_s:g} s")
    return study
