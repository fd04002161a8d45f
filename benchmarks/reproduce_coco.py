"""Phan-Trong 2024 (PhD thesis), Figure 3.2: BO methods on COCO's 24 noiseless BBOB functions.

The thesis protocol (``--full``): dimensions 2, 3, 5, 10, instances 1-15, a budget of
20 x d evaluations. The default is CPU-sized: all 24 functions, d = 2, 3, 5, instances 1-5
(about half an hour on a 2-core machine for the three default methods). Prints the fraction
of (function, instance, target) triples solved per method and dimension, with the best
algorithm of BBOB-2009 (the reference ``cocopp`` ships), draws ``ecdf.png`` and runs
``cocopp`` (``ppdata/index.html``). Resumable: rerun with the same ``--out``.

    uv run python benchmarks/reproduce_coco.py                       # CPU-sized
    uv run python benchmarks/reproduce_coco.py --full --functions-per-run 24   # the thesis, on a GPU
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

import jax

import nbo_jax as nbo
from nbo_jax import coco


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--algorithms", default="neural-bo,gp-ei,random")
    parser.add_argument("--full", action="store_true", help="the thesis protocol: d = 2,3,5,10, instances 1-15")
    parser.add_argument("--dims", default=None, help="override the dimensions, e.g. 2,3")
    parser.add_argument("--instances", default=None, help="override the instances, e.g. 1-5")
    parser.add_argument("--functions", default="1-24")
    parser.add_argument("--budget-multiplier", type=float, default=20.0)
    parser.add_argument("--functions-per-run", type=int, default=1, help="24 on a GPU")
    parser.add_argument("--batch", default="1/1", metavar="K/N")
    parser.add_argument("--out", default=None)
    parser.add_argument("--no-cocopp", action="store_true", help="skip cocopp (e.g. on a machine without it)")
    args = parser.parse_args()

    dims = coco.parse_range(args.dims or ("2,3,5,10" if args.full else "2,3,5"), "--dims")
    instances = coco.parse_range(args.instances or ("1-15" if args.full else "1-5"), "--instances")
    out = pathlib.Path(args.out or ("results/coco_full" if args.full else "results/coco_cpu"))
    names = [nbo.algorithms.canonical_name(n) for n in args.algorithms.split(",")]
    algos = {n: nbo.algorithms.get(n) for n in names}
    k, n = (int(v) for v in args.batch.split("/"))
    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}); dims {dims}; instances "
          f"{instances[0]}-{instances[-1]}; budget {args.budget_multiplier:g} x d; {names}")
    start = time.perf_counter()
    report = coco.run_campaign(algos, out, functions=coco.parse_range(args.functions, "--functions"),
                               dimensions=dims, instances=instances, budget_multiplier=args.budget_multiplier,
                               functions_per_run=args.functions_per_run, batch=(k, n))
    wall = time.perf_counter() - start
    print(f"\nran {len(report.ran)} units, skipped {len(report.skipped)} in {wall:.0f} s")
    for name in names:
        evals = report.evaluations[name]
        per = report.run_seconds[name] / evals * 1e3 if evals else float("nan")
        print(f"  {name}: {evals} evaluations, run_bo {report.run_seconds[name]:.1f} s (with compilation; "
              f"{per:.2f} ms per evaluation), replay through COCO's observer {report.replay_seconds[name]:.2f} s")
    (out / "timings.json").write_text(json.dumps(
        {"device": jax.devices()[0].device_kind, "wall_s": wall, "run_s": report.run_seconds,
         "replay_s": report.replay_seconds, "evaluations": report.evaluations}, indent=2))
    print()
    print(coco.solved_fractions_table(out, reference=not args.no_cocopp))
    print(f"\nECDF picture: {coco.plot_ecdf(out, out / 'ecdf.png', reference=not args.no_cocopp)}")
    if not args.no_cocopp:
        print(f"cocopp pages: {coco.postprocess(out)}")


if __name__ == "__main__":
    main()
