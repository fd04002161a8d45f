"""Reproduction: TuRBO(Neural-BO) vmapped over 10 seeds hangs on a CPU (issue 26's note).

    uv run python scripts/turbo_vmap_hang_repro.py                  # 10 seeds, Ackley-10, 10 + 200
    uv run python scripts/turbo_vmap_hang_repro.py --seeds 4 --width 32 --iterations 30   # finishes

Measured on the 2-core CPU (jaxlib 0.10.2, nbo_jax's XLA flag set): compiled in 15-17 s, then
the run stopped using CPU after about 30 s (process CPU time frozen, every XLA thread waiting
in Eigen's thread pool, the main thread in ``ExecuteReplicated``); with ``--seeds 4 --width 32
--iterations 30`` it finished in 0.6 s, and the same 10 seeds run one after another finish
(``benchmarks/sample_efficiency.py`` does so for ``turbo-*`` methods). Under ``vmap`` the
trust region's batched restart predicate makes ``lax.cond`` a select, so the inner
algorithm's ``init`` (network training, Gram eigendecomposition and Cholesky) runs on every
step beside its ``tell``; with ``neural_bo(scales="fixed")`` (no eigendecomposition) the 10
vmapped seeds finished (80 s), so the fitted scales' ``eigh`` is involved; an
``optimization_barrier`` between the restart's ``init`` and the ``tell`` did not help.
``--timeout`` makes a hang exit with status 3.
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
    algo = nbo.trust_region(nbo.algorithms.get(args.inner, **kwargs))
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
