"""Reproduces a hang of jaxlib's CPU backend with seeds sharded over host devices, and its cure.

    uv run python scripts/sharded_hang_repro.py            # finishes in about 10 s (2 cores)
    NPROC=2 uv run python scripts/sharded_hang_repro.py    # hangs (every try on 2 cores)

Neural-BO (width 64, the lam refit at every tell: a batched eigh per step) on Ackley-4, 4 seeds
x 40 iterations, ``run_bo_sharded`` over 2 host devices (set here unless ``XLA_FLAGS`` names a
device count). Measured on the 2-core CI VM (jax and jaxlib 0.10.2, as locked): with XLA's
default intra-op pool of 2 threads (one per core; ``NPROC=2`` forces it) both threads wait in
jaxlib's ``ParallelBatchMap`` under ``lapack_ssyevd_ffi`` for batch tasks that no free thread
can run (gdb), and the process never finishes. With the pool of cores + devices that importing
nbo_jax sets (``nbo_jax/_xla_cpu.py``; ``NPROC=3`` or ``4`` here) it finishes in about 9 s.
The cure is 4 threads on 2 cores, not faster arithmetic: on this CPU, seeds in one pinned
process per core run 2.3 times faster than the same seeds sharded over host devices
(``docs/benchmarks.md``, "Cost").
"""

import os
import sys
import time

if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = " ".join([os.environ.get("XLA_FLAGS", ""),
                                        "--xla_force_host_platform_device_count=2"]).strip()

import jax  # noqa: E402

import nbo_jax as nbo  # noqa: E402  (sets NPROC for the host devices: nbo_jax._xla_cpu)
from nbo_jax.sharding import run_bo_sharded  # noqa: E402


def main(seeds: int = 4, n_iter: int = 40) -> None:
    problem = nbo.benchmarks.get("ackley", dim=4)
    algo = nbo.neural_bo(width=64, refit_every=1, acq_optimizer=dict(raw_samples=64, num_restarts=2, steps=5))
    t0 = time.perf_counter()
    hist = jax.block_until_ready(run_bo_sharded(jax.random.split(jax.random.key(0), seeds), algo, problem, 5, n_iter))
    print(f"{len(jax.devices())} host devices, NPROC={os.environ.get('NPROC')}: {seeds} seeds x {n_iter} "
          f"iterations in {time.perf_counter() - t0:.1f} s; best f {hist.best_f[:, -1].tolist()}", flush=True)


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
