"""Reproduction of the vmapped TuRBO(Neural-BO) hang on a CPU (issue 26), now a regression check.

    uv run python scripts/turbo_vmap_hang_repro.py                  # 10 seeds, Ackley-10, 10 + 200
    uv run python scripts/turbo_vmap_hang_repro.py --inner random   # no linear algebra

Measured on the 2-core CPU (jaxlib 0.10.2, nbo_jax's XLA flag set), before the fix: compiled in
15-17 s, then the run stopped using CPU after about 30 s (process CPU time frozen, every XLA
thread waiting in Eigen's thread pool, the main thread in ``ExecuteReplicated``). With
``neural_bo(scales="fixed")`` (no eigendecomposition) or with the seeds in sequence it finished.
Under ``vmap`` the trust region's batched restart predicate makes ``lax.cond`` a select, so the
inner ``init`` runs on every step; its ``eigh`` and the inner ``tell``'s were independent in the
compiled loop body (the optimized HLO: no path between them), two batched LAPACK calls on which
the CPU backend can deadlock. An ``optimization_barrier`` did not help; making every leaf of the
selected inner state depend on all of them (``nbo_jax.transforms.trust_region._after_all_of``) orders the calls,
and the run finishes (471 s beside another benchmark). ``--timeout`` makes a hang exit with
status 3.
"""

from __future__ import annotations

import argparse
import faulthandler
import sys
import threading
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--width", type=int, default=None, help="Neural-BO width (default: the library's)")
    ap.add_argument("--inner", default="neural-bo", help="registry name of the inner algorithm")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds before a run counts as hung")
    args = ap.parse_args(argv)
    import jax

    import nbo_jax as nbo

    problem = nbo.benchmarks.get("ackley", dim=10, noise_std=0.046304)
    kwargs = {} if args.width is None else dict(width=args.width)
    algo = nbo.trust_region(nbo.registry.get(args.inner, **kwargs))
    keys = jax.random.split(jax.random.key(0), args.seeds)
    run = jax.jit(jax.vmap(lambda k: nbo.run_bo(k, algo, problem, n_init=10, n_iter=args.iterations)))
    t0 = time.perf_counter()
    compiled = run.lower(keys).compile()
    print(f"compiled in {time.perf_counter() - t0:.1f} s", flush=True)
    done = threading.Event()

    def watchdog():
        if not done.wait(args.timeout):
            print(f"HUNG: no result after {args.timeout:g} s; thread stacks follow", flush=True)
            faulthandler.dump_traceback(all_threads=True)
            import os

            os._exit(3)

    threading.Thread(target=watchdog, daemon=True).start()
    t0 = time.perf_counter()
    hist = jax.block_until_ready(compiled(keys))
    done.set()
    print(f"ran in {time.perf_counter() - t0:.1f} s; final best f {hist.best_f[:, -1]}; restarts "
          f"{hist.info['tr_restarts'][:, -1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
