"""Phan-Trong 2024 (PhD thesis), Figure 3.2: BO methods on COCO's 24 noiseless BBOB functions.

The thesis protocol (``--full``): dimensions 2, 3, 5, 10, instances 1-15, a budget of
20 x d evaluations. The default is CPU-sized: all 24 functions, d = 2, 3, 5, instances 1-5
(about half an hour on a 2-core machine for the three default methods). Prints the fraction
of (function, instance, target) triples solved per method and dimension, with the best
algorithm of BBOB-2009 (the reference ``cocopp`` ships), draws ``ecdf.png`` and runs
``cocopp`` (``ppdata/index.html``). Resumable: rerun with the same ``--out``.

    uv run python benchmarks/reproduce_coco.py                       # CPU-sized
    uv run python benchmarks/reproduce_coco.py --full --functions-per-run 24   # the thesis, on a GPU

``--option ALGO.KEY=VALUE`` passes a factory argument as ``nbo-jax coco`` does, e.g.
``--option turbo-gp-ts.turbo.min_improvement=0.001`` (TuRBO with the paper's success rule);
the campaign records each algorithm's factory call in ``campaign.json``.

``--groups`` adds the table per BBOB function group (separable f1-f5, moderate f6-f9, ...);
``--pairs A:B,...`` the paired Wilcoxon test of A against B run by run (same function, instance
and initial design: :func:`nbo_jax.coco.paired_comparison`) over all functions and per group,
e.g. ``--pairs turbo-gp-ei:gp-ei,turbo-neural-bo:neural-bo``; ``--table-only`` prints from the
records in ``--out`` without running (a folder whose algorithm folders are links to other
campaigns' compares across campaigns, e.g. two versions of the library). The tables and tests
cover the functions of ``--functions``: ``--table-only --functions 1-9 --pairs ...`` tests the
separable and moderate functions together; with ``--table-only``, ``--dims``, ``--instances``
and ``--algorithms`` select the runs too when given (all of the folder's when not; the
reference of a pair is always read).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

import jax

import nbo_jax as nbo
from nbo_jax import cli, coco


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--algorithms", default=None,
                        help="comma-separated registry names (default neural-bo,gp-ei,random; with --table-only, all)")
    parser.add_argument("--full", action="store_true", help="the thesis protocol: d = 2,3,5,10, instances 1-15")
    parser.add_argument("--dims", default=None, help="override the dimensions, e.g. 2,3")
    parser.add_argument("--instances", default=None, help="override the instances, e.g. 1-5")
    parser.add_argument("--functions", default="1-24")
    parser.add_argument("--budget-multiplier", type=float, default=20.0)
    parser.add_argument("--functions-per-run", type=int, default=1, help="24 on a GPU")
    parser.add_argument("--in-sequence", action="store_true",
                        help="run each function's instances one after another, not vmapped (faster on a CPU for "
                             "GP-EI: a vmapped L-BFGS-B loop runs until its slowest instance stops)")
    parser.add_argument("--option", action="append", default=[], metavar="ALGO.KEY=VALUE",
                        help="an argument for one algorithm's factory, as in 'nbo-jax coco' (repeatable), e.g. "
                             "turbo-gp-ts.turbo.min_improvement=0.001 (recorded in campaign.json)")
    parser.add_argument("--batch", default="1/1", metavar="K/N")
    parser.add_argument("--out", default=None)
    parser.add_argument("--no-cocopp", action="store_true", help="skip cocopp (e.g. on a machine without it)")
    parser.add_argument("--groups", action="store_true", help="also the table per BBOB function group")
    parser.add_argument("--pairs", default=None, metavar="A:B,...", help="paired Wilcoxon tests of A against B")
    parser.add_argument("--table-only", action="store_true",
                        help="print from the records in --out (of the --functions), run nothing")
    args = parser.parse_args()
    pairs = [tuple(p.split(":")) for p in args.pairs.split(",")] if args.pairs else []
    if any(len(p) != 2 or not all(p) for p in pairs):
        parser.error(f"--pairs: expected A:B,... got {args.pairs!r}")
    try:  # once, for the run and the tables; a bad range is a usage error, as in `nbo-jax coco`
        functions = coco.parse_range(args.functions, "--functions")
        chosen = dict(dims=args.dims and coco.parse_range(args.dims, "--dims"),
                      instances=args.instances and coco.parse_range(args.instances, "--instances"))
    except ValueError as err:
        parser.error(str(err))
    out = pathlib.Path(args.out or ("results/coco_full" if args.full else "results/coco_cpu"))
    if args.table_only and args.option:
        parser.error("--option: --table-only runs nothing (the records say each run's options in campaign.json)")
    if args.table_only:  # the folder names as given: a linked folder may have any name
        names = args.algorithms and [n.strip() for n in args.algorithms.split(",")]
        tables(out, args, pairs, functions, dims=chosen["dims"], instances=chosen["instances"], algorithms=names)
        return
    try:
        names = [nbo.registry.canonical_name(n) for n in (args.algorithms or "neural-bo,gp-ei,random").split(",")]
    except ValueError as err:
        parser.error(str(err))

    dims = chosen["dims"] or coco.parse_range("2,3,5,10" if args.full else "2,3,5", "--dims")
    instances = chosen["instances"] or coco.parse_range("1-15" if args.full else "1-5", "--instances")
    algos = cli._build_with_options(names, cli._parse_options(args.option, names, parser), parser)
    k, n = (int(v) for v in args.batch.split("/"))
    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}); dims {dims}; instances "
          f"{instances[0]}-{instances[-1]}; budget {args.budget_multiplier:g} x d; {names}")
    start = time.perf_counter()
    report = coco.run_campaign(algos, out, functions=functions,
                               dimensions=dims, instances=instances, budget_multiplier=args.budget_multiplier,
                               functions_per_run=args.functions_per_run, batch=(k, n),
                               in_sequence=args.in_sequence)
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
    tables(out, args, pairs, functions)
    print(f"\nECDF picture: {coco.plot_ecdf(out, out / 'ecdf.png', reference=not args.no_cocopp)}")
    if not args.no_cocopp:
        print(f"cocopp pages: {coco.postprocess(out)}")


def range_text(numbers) -> str:
    """``(1, 2, 3, 5)`` -> ``"1-3,5"``: sorted integers as the ranges :func:`nbo_jax.coco.parse_range` reads."""
    numbers, parts = sorted(numbers), []
    for n in numbers:
        if parts and n == parts[-1][1] + 1:
            parts[-1][1] = n
        else:
            parts.append([n, n])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in parts)


def selected_groups(functions: tuple) -> dict:
    """The tables' rows of functions: ``{"all": None}`` and the BBOB groups when ``functions`` are
    all 24, else ``{"f<list>": functions}`` and each group's part of ``functions``, named as the
    group when whole and ``"<group> f<list>"`` when not (groups without a selected function left
    out), so ``--table-only --functions 1-9`` tests f1-f9."""
    if set(functions) == set(range(1, 25)):
        return {"all": None, **coco.BBOB_GROUPS}
    out = {"f" + range_text(functions): tuple(functions)}
    for group, fs in coco.BBOB_GROUPS.items():
        part = tuple(f for f in fs if f in functions)
        if part:
            out[group if part == fs else f"{group} f{range_text(part)}"] = part
    return out


def tables(out: pathlib.Path, args, pairs: list, functions: tuple, dims=None, instances=None,
           algorithms=None) -> None:
    """The solved fractions of ``functions`` (``--functions``; per group with ``--groups``) and
    the paired tests over them and per group; ``dims``, ``instances``, ``algorithms``: only
    these runs (``None``: all in ``out``)."""
    from nbo_jax.analysis import markdown_table

    chosen = dict(dimensions=dims, instances=instances, algorithms=algorithms)
    groups = selected_groups(functions)
    (label, selection), *parts = groups.items()
    print()
    if selection is not None:
        print(f"{label}:")
    print(coco.solved_fractions_table(out, reference=not args.no_cocopp, functions=selection, **chosen))
    if args.groups:
        for group, fs in parts:
            print(f"\n{group} (f{range_text(fs)}):" if group in coco.BBOB_GROUPS else f"\n{group}:")
            print(coco.solved_fractions_table(out, reference=not args.no_cocopp, functions=fs, **chosen))
    if pairs:
        # one paired_comparison per (reference, group) serves every pair with that reference
        compared = {(b, group): coco.paired_comparison(out, b, functions=fs, **chosen)
                    for b in dict.fromkeys(b for _, b in pairs) for group, fs in groups.items()}
        rows = [[f"{a} vs {b}", group, d, mean_a, mean_b, wins, losses, f"{p:.2g}"]
                for a, b in pairs for group in groups
                for name, d, mean_a, mean_b, wins, losses, p in compared[(b, group)] if name == a]
        print("\npaired by run (function, instance), fraction of targets solved at the end of the run, "
              "two-sided Wilcoxon signed-rank p:")
        print(markdown_table(["pair", "functions", "d", "mean A", "mean B", "A better", "B better", "p"], rows,
                             floatfmt=".3f"))


if __name__ == "__main__":
    main()
