"""Many seeds across devices: ``run_bo`` vmapped over seeds, the seeds split over every
visible device with :mod:`jax.sharding` (one compilation; each device runs its share).

This is data parallelism over independent runs: the seeds never communicate, so the sharded
run computes exactly what ``jax.vmap(run_bo)`` computes (bit for bit in float64; in float32 a
device's smaller batch may round differently, as any change of vmapped batch size can).
"""

from __future__ import annotations

import functools
import os
import warnings
from typing import Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from . import _xla_cpu
from ._checks import check_int
from .loop import _check_run, run_bo
from .types import BOAlgorithm, History, Problem

Array = jax.Array
AXIS = "seeds"


def seed_mesh(devices: Optional[Sequence] = None) -> Mesh:
    """A one-axis :class:`jax.sharding.Mesh` named ``"seeds"`` over ``devices`` (default:
    ``jax.devices()``, every visible device of the default backend).

    Raises:
        ValueError: an empty device list."""
    devices = list(jax.devices() if devices is None else devices)
    if not devices:
        raise ValueError("devices must hold at least one device")
    return Mesh(np.asarray(devices), (AXIS,))


def run_bo_sharded(
    keys: Array,
    algorithm: BOAlgorithm,
    problem: Problem,
    n_init: int,
    n_iter: int,
    *,
    devices: Optional[Sequence] = None,
    segments: int = 1,
) -> History:
    """``jax.vmap(run_bo)`` over ``keys``, with the seeds split across ``devices``.

    The keys are padded (by repeating the last one) to a multiple of the number of devices,
    sharded along the ``"seeds"`` mesh axis, and one jit-compiled program runs every shard;
    the padding is dropped from the result. With one device this is the plain vmapped run.

    Args:
        keys: ``(S,)`` PRNG keys, one per seed (``jax.random.split(jax.random.key(0), S)``).
        algorithm: as :func:`nbo_jax.run_bo`.
        problem: as :func:`nbo_jax.run_bo`.
        n_init: as :func:`nbo_jax.run_bo`.
        n_iter: as :func:`nbo_jax.run_bo`.
        devices: the devices to use (default: ``jax.devices()``).
        segments: compiled parts of growing capacity, as :func:`nbo_jax.run_bo`'s.

    Returns:
        :class:`~nbo_jax.types.History` with a leading axis ``S`` on every field, equal to
        ``jax.vmap(lambda k: run_bo(k, algorithm, problem, n_init, n_iter, segments=segments))(keys)``; its arrays
        are sharded over the devices along that axis.

    Raises:
        TypeError / ValueError: ``keys`` not a 1-D array of keys, or the errors of
        :func:`nbo_jax.run_bo` (before anything compiles).

    Warns:
        RuntimeWarning: several CPU devices and ``NPROC`` unset (the devices were made after
            nbo_jax was imported, e.g. by ``jax.config.update("jax_num_cpu_devices", n)``):
            XLA's thread pool then has one thread per core and a batched ``eigh`` or
            Cholesky on every device can hang the run (:mod:`nbo_jax._xla_cpu`).

    On a CPU, host devices share the cores: seeds in one process per core, each pinned to its
    core (``os.sched_setaffinity``) and vmapping its share of the seeds, measured 2.3 times
    faster than the same seeds over 2 host devices in one process (``docs/benchmarks.md``, "Cost").
    """
    n_init, n_iter = _check_run(algorithm, problem, n_init, n_iter)
    segments = check_int("segments", segments, 1)
    keys = jnp.asarray(keys) if not isinstance(keys, jax.Array) else keys
    is_key = jax.dtypes.issubdtype(keys.dtype, jax.dtypes.prng_key)
    if not ((is_key and keys.ndim == 1) or (not is_key and keys.ndim == 2 and keys.shape[1] == 2
                                            and keys.dtype == jnp.uint32)):
        raise TypeError(f"keys must be (S,) PRNG keys (jax.random.split(jax.random.key(seed), S)), got "
                        f"{keys.dtype}{tuple(keys.shape)}")
    n_seeds = keys.shape[0]
    if n_seeds < 1:
        raise ValueError("keys must hold at least one key")
    mesh = seed_mesh(devices)
    n_dev = mesh.devices.size
    if n_dev > 1 and mesh.devices.flat[0].platform == "cpu" and _xla_cpu.POOL_VARIABLE not in os.environ:
        warnings.warn(
            f"run_bo_sharded on {n_dev} CPU devices with XLA's default thread pool (one thread per core): "
            f"a batched eigh or Cholesky on every device can hang jaxlib 0.10. Set "
            f"{_xla_cpu.POOL_VARIABLE}={_xla_cpu.pool_size(n_dev)} (or ask for the devices with "
            f"XLA_FLAGS=--xla_force_host_platform_device_count={n_dev} before importing nbo_jax, which sets it) "
            "before starting Python.",
            RuntimeWarning,
            stacklevel=2,
        )
    padded = -(-n_seeds // n_dev) * n_dev
    if padded > n_seeds:
        keys = jnp.concatenate([keys, jnp.repeat(keys[-1:], padded - n_seeds, axis=0)], axis=0)
    run, sharding = _runner(algorithm, problem, n_init, n_iter, tuple(mesh.devices.flat), segments)
    history = run(jax.device_put(keys, sharding))
    if padded > n_seeds:
        history = jax.tree_util.tree_map(lambda a: a[:n_seeds], history)
    return history


@functools.lru_cache(maxsize=32)
def _runner(algorithm, problem, n_init, n_iter, devices, segments):
    """The jit-compiled sharded vmap of ``run_bo`` and its sharding, cached per settings (jit's
    own cache then compiles once per seed count)."""
    sharding = NamedSharding(seed_mesh(devices), PartitionSpec(AXIS))
    run = jax.jit(jax.vmap(lambda k: run_bo(k, algorithm, problem, n_init=n_init, n_iter=n_iter, segments=segments)),
                  in_shardings=sharding, out_shardings=sharding)
    return run, sharding


__all__ = ["run_bo_sharded", "seed_mesh", "AXIS"]
