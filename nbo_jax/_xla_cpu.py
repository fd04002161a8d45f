"""The two XLA CPU settings nbo_jax makes at import: the concurrency-optimized scheduler off,
and a larger thread pool where several host devices share the CPU.

With jaxlib 0.10.2's CPU backend, programs that run a loop (``lax.scan``/``while_loop``) of
batched linear algebra (a GP's MAP fit: a Cholesky per start per step) can hang forever: the
caller waits in ``BlockUntilReady`` while every XLA worker thread sits idle (gdb): in most runs
of an RBF fit and in every run of a Matern-5/2 fit of ``scripts/gp_fit_hang_repro.py``.
``--xla_cpu_enable_concurrency_optimized_scheduler=false`` (XLA's older, memory-minimizing
instruction order) removes the hang (15 of 15 runs finished); ``--xla_cpu_multi_thread_eigen=false``,
``--xla_cpu_use_xnnpack=false`` and ``--xla_cpu_use_fusion_emitters=false`` do not.

XLA reads ``XLA_FLAGS`` once, at its first compilation, so the flag is appended to the
environment when nbo_jax is imported. A user's own setting of the flag (either value) is kept.
When JAX has already compiled something before nbo_jax is imported, the flag can no longer
take effect and a warning says how to set it. Only the CPU backend reads it.

**Several host devices** (``XLA_FLAGS=--xla_force_host_platform_device_count=N`` or
``JAX_NUM_CPU_DEVICES=N``, ``N > 1``, as :func:`nbo_jax.sharding.run_bo_sharded` uses on a CPU)
share one intra-op thread pool, sized by default to the cores the process may run on. jaxlib
0.10.2's batched LAPACK kernels (``eigh``, Cholesky) split their batch into tasks on that pool
and block the calling pool thread until the tasks finish (``ParallelBatchMap``, gdb): when
every pool thread is such a caller, none is left to run the tasks and the program hangs
forever. On this 2-core machine Neural-BO with 4 seeds sharded over 2 host devices hung in
every try (``scripts/sharded_hang_repro.py``); each device's batched ``eigh`` held one of the
pool's two threads. XLA sizes the pool from the environment variable ``NPROC`` when it is set
(``DefaultThreadPoolSize``), so with more than one host device requested and ``NPROC`` unset,
nbo_jax sets ``NPROC`` to the usable cores plus the number of devices: every device can hold a
thread in a LAPACK call and the cores still have threads for the tasks. The repro then finishes
in about 9 s. A user's own ``NPROC`` is kept.
"""

from __future__ import annotations

import os
import re
import warnings

FLAG_NAME = "xla_cpu_enable_concurrency_optimized_scheduler"
FLAG = f"--{FLAG_NAME}=false"
POOL_VARIABLE = "NPROC"  # read by XLA's DefaultThreadPoolSize when the CPU client starts


def _jaxlib_knows_flag() -> bool:
    """The flag exists in the jaxlib we measured (0.10.2) and later; an unknown flag aborts XLA."""
    try:
        from jaxlib import version as _v

        return tuple(int(p) for p in _v.__version__.split(".")[:2]) >= (0, 10)
    except Exception:  # pragma: no cover - unusual jaxlib builds
        return False


def host_devices_requested(environ=None) -> int:
    """The number of CPU host devices the environment asks for: the last
    ``--xla_force_host_platform_device_count=N`` of ``XLA_FLAGS``, else ``JAX_NUM_CPU_DEVICES``,
    else 1 (an unreadable value counts as 1)."""
    environ = os.environ if environ is None else environ
    found = re.findall(r"--xla_force_host_platform_device_count=(\d+)", environ.get("XLA_FLAGS", ""))
    value = found[-1] if found else environ.get("JAX_NUM_CPU_DEVICES", "1")
    try:
        return max(int(value), 1)
    except ValueError:
        return 1


def pool_size(n_devices: int) -> int:
    """The intra-op pool size set for ``n_devices > 1`` host devices: the cores this process
    may run on plus ``n_devices``."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity
        cores = os.cpu_count() or 1
    return cores + n_devices


def apply() -> bool:
    """Append :data:`FLAG` to ``XLA_FLAGS`` unless the user set the flag, and set ``NPROC``
    to :func:`pool_size` when more than one host device is requested and ``NPROC`` is unset;
    returns True when the environment was changed. Warns (``RuntimeWarning``) when JAX's
    backends were already initialized, since XLA then no longer reads either."""
    changed = []
    n_devices = host_devices_requested()
    if n_devices > 1 and POOL_VARIABLE not in os.environ:
        os.environ[POOL_VARIABLE] = str(pool_size(n_devices))
        changed.append(f"{POOL_VARIABLE}={os.environ[POOL_VARIABLE]} (the thread pool of {n_devices} host devices)")
    flags = os.environ.get("XLA_FLAGS", "")
    if FLAG_NAME not in flags and _jaxlib_knows_flag():
        os.environ["XLA_FLAGS"] = " ".join([flags, FLAG]).strip()
        changed.append(f"XLA_FLAGS={FLAG}")
    if not changed:
        return False
    try:
        from jax._src import xla_bridge

        late = xla_bridge.backends_are_initialized()
    except Exception:  # pragma: no cover - private API moved
        late = False
    if late:
        warnings.warn(
            "nbo_jax was imported after JAX had started its backend, so XLA can no longer take "
            f"{' and '.join(changed)}: on CPU a GP fit or a sharded run may then hang (jaxlib 0.10). "
            "Import nbo_jax before running any JAX computation, or set them before starting Python.",
            RuntimeWarning,
            stacklevel=3,
        )
    return True
