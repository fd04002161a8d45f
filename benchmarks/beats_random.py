"""Each algorithm against random search on the small problems of the test suite.

The sample-efficiency claims that the unit tests used to assert (issue 24: CI keeps the
tests of what the code does; claims about how well it optimizes live here): for each claim,
the algorithm and random search run the same seeds (vmapped, shared keys), and the table
prints the median final simple regret (regret plus constraint violation on a constrained
problem) with its 25-75% range, the ratio of the medians, the claimed ratio, and the
one-sided Welch p-value of the algorithm against random search
(:func:`nbo_jax.analysis.stats.welch_one_sided`; small p: the algorithm is better).

    uv run python benchmarks/beats_random.py               # every claim, 10 seeds (about 10 min)
    uv run python benchmarks/beats_random.py --claims gp-ei neural-cbo --seeds 16

Exits with status 1 when a claim does not hold.
"""

from __future__ import annotations

import argparse
import sys
import time

import jax
import numpy as np

BRANIN = ("branin", None)
BRANIN_C = ("branin_constrained", None)


def _claims():
    """name -> (problem (name, dim), algorithm factory call (name, kwargs), n_init, n_iter,
    claimed ratio of medians against random search). The settings are those the tests used."""
    gp_fast = dict(n_restarts=2, fit_steps=20)
    return {
        "gp-ei": (BRANIN, ("gp-ei", dict(acq_optimizer=dict(raw_samples=256, num_restarts=4, steps=30), **gp_fast)),
                  5, 25, 0.5),
        "gp-ucb": (BRANIN, ("gp-ucb", dict(acq_optimizer=dict(raw_samples=256, num_restarts=4, steps=30),
                                           **gp_fast)), 5, 25, 0.5),
        "gp-ts": (BRANIN, ("gp-ts", dict(acq_optimizer=dict(raw_samples=128), **gp_fast)), 5, 25, 0.5),
        "gp-cei": (BRANIN_C, ("gp-cei", dict(fit_steps=20)), 5, 20, 0.25),
        "gp-lcb-c": (BRANIN_C, ("gp-lcb-c", dict(fit_steps=20)), 5, 20, 0.25),
        "adaptive-basis": (BRANIN, ("adaptive-basis", dict(acq_optimizer=dict(raw_samples=512))), 5, 25, 0.5),
        "dngo": (BRANIN, ("dngo", dict(acq_optimizer=dict(raw_samples=512))), 5, 25, 0.5),
        "neural-greedy": (BRANIN, ("neural-greedy", {}), 5, 15, 1.0),
        "neural-greedy-posterior": (BRANIN, ("neural-greedy-posterior", {}), 5, 15, 1.0),
        "neural-cbo": (BRANIN_C, ("neural-cbo", dict(width=64, acq_optimizer=dict(raw_samples=512))), 5, 20, 1.0),
        "neural-ucb": (BRANIN, ("neural-ucb", dict(width=100, acq_optimizer=dict(raw_samples=512, steps=0))),
                       5, 30, 1.0),
        "neural-ts": (BRANIN, ("neural-ts", dict(width=100, acq_optimizer=dict(raw_samples=512, steps=0))),
                      5, 30, 1.0),
        "neural-bo": (BRANIN, ("neural-bo", dict(width=100, acq_optimizer=dict(raw_samples=512, steps=10))),
                      5, 30, 1.0),
        "neural-bo-ackley-2": (("ackley", 2), ("neural-bo", dict(width=100, acq_optimizer=dict(raw_samples=512,
                                                                                                steps=10))),
                               5, 30, 1.0),
    }


def _final(algo, problem, keys, n_init, n_iter) -> np.ndarray:
    import nbo_jax as nbo

    hist = jax.jit(jax.vmap(lambda k: nbo.run_bo(k, algo, problem, n_init=n_init, n_iter=n_iter)))(keys)
    if problem.constraints is not None:
        return np.asarray(hist.regret_plus_violation(problem.optimal_value))[:, -1]
    return np.asarray(hist.best_f[:, -1] - problem.optimal_value)


def main(argv=None) -> int:
    import nbo_jax as nbo
    from nbo_jax.analysis.stats import welch_one_sided

    claims = _claims()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--claims", nargs="+", default=list(claims), choices=list(claims))
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args(argv)
    keys = jax.random.split(jax.random.key(args.seed), args.seeds)
    random_cache: dict = {}
    held = True
    print(f"{'claim':26s} {'problem':20s} {'budget':>7s} {'median [25%, 75%]':>26s} "
          f"{'random':>26s} {'ratio':>6s} {'claim':>6s} {'p':>8s}  s")
    for name in args.claims:
        (pname, dim), (algo_name, kwargs), n_init, n_iter, ratio = claims[name]
        problem = nbo.benchmarks.get(pname, dim=dim, noise_std="paper")
        t0 = time.perf_counter()
        ours = _final(nbo.registry.get(algo_name, **kwargs), problem, keys, n_init, n_iter)
        seconds = time.perf_counter() - t0
        if (pname, dim, n_init, n_iter) not in random_cache:
            random_cache[pname, dim, n_init, n_iter] = _final(nbo.random_search(), problem, keys, n_init, n_iter)
        rand = random_cache[pname, dim, n_init, n_iter]
        got = np.median(ours) / np.median(rand)
        ok = got < ratio
        held &= ok
        q = lambda v: f"{np.median(v):.3f} [{np.percentile(v, 25):.3f}, {np.percentile(v, 75):.3f}]"  # noqa: E731
        label = f"{pname}" + (f"-{dim}" if dim else "")
        print(f"{name:26s} {label:20s} {n_init:>3d}+{n_iter:<3d} {q(ours):>26s} {q(rand):>26s} {got:6.3f} "
              f"<{ratio:<5g} {welch_one_sided(rand, ours):8.2g}  {seconds:.0f}" + ("" if ok else "  MISSED"),
              flush=True)
    print(f"\n{args.seeds} seeds; {'every claim holds' if held else 'a claim is MISSED'}")
    return 0 if held else 1


if __name__ == "__main__":
    sys.exit(main())
