"""Reproduce the XLA CPU compilation segfault of long-lived processes (tests/conftest.py).

Every loaded XLA CPU executable holds memory mappings (a compiled ``run_bo`` of GP-EI about
1400), and JAX's caches keep every compiled program alive (``run_bo`` is jitted with the
algorithm and budget as static arguments), so a process that compiles a few dozen BO loops
reaches Linux's ``vm.max_map_count`` (65530 by default) and the next compilation dies in
``backend_compile_and_load`` ("Fatal Python error: Segmentation fault").
``--clear-every N`` calls ``jax.clear_caches()`` every N programs, which releases them.

    uv run python scripts/map_count_repro.py                  # segfaults after ~45 programs
    uv run python scripts/map_count_repro.py --clear-every 10  # finishes
"""

import argparse

import jax

import nbo_jax as nbo


def map_count() -> int:
    """Memory mappings of this process (Linux)."""
    with open("/proc/self/maps") as f:
        return sum(1 for _ in f)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=80)
    parser.add_argument("--clear-every", type=int, default=0, help="0: never clear JAX's caches")
    args = parser.parse_args()
    with open("/proc/sys/vm/max_map_count") as f:
        print(f"vm.max_map_count = {f.read().strip()}", flush=True)
    algo, problem = nbo.gp_bo(), nbo.benchmarks.get("branin")
    for i in range(args.programs):  # each budget is a new program in run_bo's cache
        nbo.run_bo(jax.random.key(0), algo, problem, n_init=3, n_iter=i + 1).best_f.block_until_ready()
        if args.clear_every and (i + 1) % args.clear_every == 0:
            jax.clear_caches()
        print(f"{i + 1} programs compiled, {map_count()} mappings", flush=True)
    print(f"done: {args.programs} programs, {map_count()} mappings")


if __name__ == "__main__":
    main()
