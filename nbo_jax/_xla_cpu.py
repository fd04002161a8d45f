"""The one XLA flag nbo_jax sets: XLA's CPU concurrency-optimized scheduler off.

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
"""

from __future__ import annotations

import os
import warnings

FLAG_NAME = "xla_cpu_enable_concurrency_optimized_scheduler"
FLAG = f"--{FLAG_NAME}=false"


def _jaxlib_knows_flag() -> bool:
    """The flag exists in the jaxlib we measured (0.10.2) and later; an unknown flag aborts XLA."""
    try:
        from jaxlib import version as _v

        return tuple(int(p) for p in _v.__version__.split(".")[:2]) >= (0, 10)
    except Exception:  # pragma: no cover - unusual jaxlib builds
        return False


def apply() -> bool:
    """Append :data:`FLAG` to ``XLA_FLAGS`` unless the user set the flag; returns True when
    the environment was changed. Warns (``RuntimeWarning``) when JAX's backends were already
    initialized, since XLA then no longer reads the variable."""
    flags = os.environ.get("XLA_FLAGS", "")
    if FLAG_NAME in flags or not _jaxlib_knows_flag():
        return False
    os.environ["XLA_FLAGS"] = " ".join([flags, FLAG]).strip()
    try:
        from jax._src import xla_bridge

        late = xla_bridge.backends_are_initialized()
    except Exception:  # pragma: no cover - private API moved
        late = False
    if late:
        warnings.warn(
            "nbo_jax was imported after JAX had started its backend, so XLA_FLAGS can no longer "
            f"take {FLAG}: on CPU a GP fit may then hang (jaxlib 0.10). Import nbo_jax before "
            f"running any JAX computation, or set XLA_FLAGS={FLAG} before starting Python.",
            RuntimeWarning,
            stacklevel=3,
        )
    return True
