"""Sample efficiency against BoTorch's GP-BO: best value found within a fixed budget.

Runs Neural-BO (library defaults and the paper preset), the GP baselines, NeuralGreedy and
random search on Ackley-10, Levy-10 and Michalewicz-10 at the noise of the BoTorch runs quoted
in issue 11 (10 initial points + 200 iterations, seeds vmapped), and prints the table of median
final best noise-free ``f`` [25%, 75%] with BoTorch's medians beside ours, then the one-sided
Welch p-values of Neural-BO (defaults) against each GP (H0: the GP's mean final ``f`` <= ours;
small p = Neural-BO better), as :func:`nbo_jax.comparison.statistics` computes them.

Each (problem, method) is cached in ``--out`` as ``<problem>__<method>.json`` (final values,
seconds, settings), so a long study can be split over processes and resumed; ``--table-only``
prints the table from the cache.

Other problems and sizes (issue 26's d = 50, 1000 evaluations): ``--problems`` takes any
benchmark name with ``--dim`` and ``--noise`` (then cached as ``<problem>-d<dim>__<method>.json``
with no BoTorch column), and ``--segments`` compiles long runs in parts of growing capacity.
BoTorch's own seeds, measured the same way: ``botorch_baseline.py`` writes ``botorch-gp-ei`` /
``botorch-gp-ucb`` records that ``--table-only`` reads like ours.

    uv run python benchmarks/sample_efficiency.py                       # full: 5 seeds, 10 + 200
    uv run python benchmarks/sample_efficiency.py --methods neural-bo random --iterations 20
    uv run python benchmarks/sample_efficiency.py --problems ackley --dim 50 --noise paper \
        --iterations 990 --segments 4 --seeds 10 --methods turbo-neural-bo neural-bo gp-ei
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

import numpy as np
from _study import runs_in_sequence

# problem -> (dim, noise std, BoTorch GP-EI (LogEI) median, BoTorch GP-UCB (beta 2) median), 3 seeds,
# BoTorch 0.18.1 SingleTaskGP defaults, optimize_acqf(num_restarts=10, raw_samples=512) (issue 11)
BOTORCH = {
    "ackley": (10, 0.046304, 6.657, 2.963),
    "levy": (10, 3.525403, 1.797, 1.875),
    "michalewicz": (10, 0.043429, -4.063, -4.204),
}
METHODS = ["neural-bo", "neural-bo-paper", "gp-ei", "gp-ucb", "neural-greedy", "random"]


def make_algorithm(name: str):
    """A method name: a registry name, ``neural-bo-paper``, or ``turbo-<one of those>`` (the
    inner algorithm in a TuRBO-1 trust region with its defaults, :func:`nbo_jax.trust_region`);
    ``<name>:key=value,...`` passes factory arguments (values as Python literals), e.g.
    ``gp-ei:refit_every=1``; ``key.field=value`` one field of a dict argument, e.g.
    ``gp-ei:acq_optimizer.local_fraction=0``; ``acquisition=lcb(2.0)`` calls that factory of
    :mod:`nbo_jax.acquisition` (one literal argument at most), e.g. ``neural-bo:acquisition=lcb(2.0)``;
    with ``turbo-`` / ``turbo<m>-``, ``turbo.key=value`` passes an argument of
    :func:`nbo_jax.trust_region` (:func:`nbo_jax.registry.get`'s ``turbo``), e.g.
    ``turbo-neural-bo:turbo.perturb_dims=None``."""
    import ast

    import nbo_jax as nbo

    if ":" in name:
        base, _, spec = name.partition(":")
        kwargs = {}
        for item in spec.split(","):
            key, eq, value = item.partition("=")
            if not eq:
                raise ValueError(f"method {name!r}: expected key=value after ':', got {item!r}")
            try:
                value = ast.literal_eval(value.strip())
            except (ValueError, SyntaxError):
                value = value.strip()
            if key.strip() == "acquisition":  # acquisition=lcb(2.0): a factory of nbo.acquisition
                fn, _, arg = str(value).partition("(")
                arg = arg.rstrip(")")
                value = getattr(nbo.acquisition, fn)(*([ast.literal_eval(arg)] if arg else []))
            head, dot, field = key.strip().partition(".")  # acq_optimizer.raw_samples=2048
            if dot:
                kwargs.setdefault(head, {})[field] = value
            else:
                kwargs[head] = value
        return nbo.registry.get(base, **kwargs)  # turbo.perturb_dims=None: trust_region's arguments
    if name.startswith("turbo-"):
        return nbo.trust_region(make_algorithm(name[len("turbo-"):]))
    if name == "neural-bo":
        return nbo.neural_bo()
    if name == "neural-bo-paper":
        return nbo.neural_bo(preset="paper", nu=1.0)
    return nbo.registry.get(name)


def setting(problem_name: str, args) -> tuple[str, int | None, float | str, float, float]:
    """``(cache name, dim, noise std, BoTorch GP-EI median, BoTorch GP-UCB median)`` of a
    problem: the issue-11 setting for the BoTorch problems unless ``--dim`` / ``--noise``
    override it (then no BoTorch medians, NaN)."""
    if problem_name in BOTORCH and args.dim is None and args.noise is None:
        return (problem_name, *BOTORCH[problem_name])
    dim = args.dim if args.dim is not None else BOTORCH.get(problem_name, (None,))[0]
    noise = args.noise if args.noise is not None else BOTORCH.get(problem_name, (None, 0.0))[1]
    noise = noise if noise == "paper" else float(noise)
    return f"{problem_name}-d{dim}" if dim is not None else problem_name, dim, noise, float("nan"), float("nan")


def run_one(problem_name: str, method: str, args, out: pathlib.Path) -> dict:
    import jax

    import nbo_jax as nbo

    cache, dim, noise, _, _ = setting(problem_name, args)
    path = out / f"{cache}__{method}.json"
    if path.exists() and not args.force:
        return json.loads(path.read_text())
    problem = nbo.benchmarks.get(problem_name, dim=dim, noise_std=noise)
    algo = make_algorithm(method)
    keys = jax.random.split(jax.random.key(args.seed), args.seeds)
    one = lambda k: nbo.run_bo(k, algo, problem, n_init=args.n_init, n_iter=args.iterations, segments=args.segments)
    sequential = runs_in_sequence(method, args.vmap_gp)
    t0 = time.perf_counter()
    if sequential:
        # one compile, seeds one after another, as the published GP figures were measured
        # (--vmap-gp vmaps them; nbo_jax/_xla_cpu.py sets the XLA CPU flag that keeps a vmapped
        # GP run from hanging on a 2-core CPU).
        # each seed's final best f is saved to a partial file as it ends, so a study stopped
        # midway resumes at the next seed (the partial's settings must match)
        compiled = jax.jit(one).lower(keys[0]).compile()
        t1 = time.perf_counter()
        partial = out / f"{cache}__{method}.partial.json"
        meta = dict(seed=args.seed, seeds=args.seeds, n_init=args.n_init, iterations=args.iterations,
                    segments=args.segments, x64=bool(args.x64))
        done = json.loads(partial.read_text()) if partial.exists() and not args.force else {}
        finals = done.get("final_best_f", []) if done.get("settings") == meta else []
        run_s = done.get("run_s", 0.0) if finals else 0.0
        for k in keys[len(finals):]:
            t = time.perf_counter()
            finals.append(float(np.asarray(jax.block_until_ready(compiled(k)).best_f[-1])))
            run_s += time.perf_counter() - t
            partial.write_text(json.dumps(dict(settings=meta, final_best_f=finals, run_s=run_s)))
    else:
        compiled = jax.jit(jax.vmap(one)).lower(keys).compile()
        t1 = time.perf_counter()
        hist = jax.block_until_ready(compiled(keys))
        finals, run_s = np.asarray(hist.best_f[:, -1], dtype=float).tolist(), time.perf_counter() - t1
    rec = dict(problem=problem_name, method=method, dim=problem.dim, noise_std=float(problem.noise_std),
               optimal_value=problem.optimal_value, segments=args.segments, final_best_f=finals,
               compile_s=t1 - t0, run_s=run_s, seeds=args.seeds, seed=args.seed, n_init=args.n_init,
               iterations=args.iterations, precision=str(jax.numpy.zeros(()).dtype), device=str(jax.devices()[0]),
               seeds_vmapped=not sequential)
    path.write_text(json.dumps(rec, indent=1))
    if sequential:
        partial.unlink()
    print(f"  {cache} {method}: median best f {np.median(rec['final_best_f']):.4g} "
          f"(compile {t1 - t0:.0f} s, run {run_s:.0f} s = {run_s / args.iterations:.2f} s per "
          f"step of {args.seeds} seeds, {'sequential' if sequential else 'vmapped'})", flush=True)
    return rec


def table(records: dict, problems, methods, args) -> str:
    from nbo_jax import comparison

    def cell(v):
        v = np.asarray(v)
        q1, q3 = np.percentile(v, [25, 75])
        return f"{np.median(v):.3f} [{q1:.3f}, {q3:.3f}]"

    head = ["problem (optimum)", "noise std", "BoTorch GP-EI", "BoTorch GP-UCB"] + methods
    rows = []
    for p in problems:
        _, dim, _, bt_ei, bt_ucb = setting(p, args)
        rec = next((r for (pp, _), r in records.items() if pp == p), {})
        fstar, dim, noise = rec.get("optimal_value", float("nan")), rec.get("dim", dim), rec.get("noise_std", float("nan"))
        row = [f"{p.capitalize()}-{dim} ({fstar:.4g})", f"{noise:.4g}", *("-" if np.isnan(v) else f"{v:g}" for v in (bt_ei, bt_ucb))]
        rows.append(row + [cell(records[(p, m)]["final_best_f"]) if (p, m) in records else "-" for m in methods])
    ref, baselines = methods[0], methods[1:]
    welch_rows = []
    for p in problems:
        final = {m: np.asarray(records[(p, m)]["final_best_f"]) for m in methods if (p, m) in records}
        if ref not in final or len(final) < 2:
            continue
        _, welch = comparison.statistics(final, ref)
        welch_rows.append([p] + [f"{welch[m]['p']:.3g} (BH {welch[m]['p_bh']:.3g})" if m in welch else "-"
                                 for m in baselines])
    return "\n".join([comparison.markdown(head, rows), "",
                      f"one-sided Welch p-values, H0: mean final f of the baseline <= {ref}'s (small p: {ref} "
                      "better); Benjamini-Hochberg over the baselines of a problem",
                      comparison.markdown(["problem"] + baselines, welch_rows)])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", nargs="+", default=list(BOTORCH),
                    help=f"benchmark names (default: {' '.join(BOTORCH)}, the problems of BoTorch's quoted runs)")
    ap.add_argument("--dim", type=int, default=None, help="input dimension (default: 10 for BoTorch's problems)")
    ap.add_argument("--noise", default=None, help="noise std, a number or 'paper' (default: BoTorch's runs', else 0)")
    ap.add_argument("--segments", type=int, default=1, help="run_bo's segments (compiled parts of growing capacity)")
    ap.add_argument("--methods", nargs="+", default=METHODS,
                    help="registry names, 'neural-bo-paper' for the paper preset, 'turbo-<name>' for one in a TuRBO-1 trust region; the first is the Welch reference")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-init", type=int, default=10)
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--out", default="results/sample_efficiency")
    ap.add_argument("--force", action="store_true", help="recompute cached results")
    ap.add_argument("--table-only", action="store_true", help="print the table from the cache, run nothing")
    ap.add_argument("--x64", action="store_true", help="float64 (BoTorch runs in float64)")
    ap.add_argument("--vmap-gp", action="store_true",
                    help="vmap the GP baselines over seeds too (default: seeds in sequence, see run_one)")
    args = ap.parse_args(argv)
    if args.seeds < 3:
        ap.error(f"--seeds must be >= 3 for the Welch tests, got {args.seeds}")
    from nbo_jax import benchmarks

    unknown = [p for p in args.problems if p not in benchmarks.available()]
    if unknown:
        ap.error(f"--problems: unknown {unknown}; choose from {benchmarks.available()}")
    if args.noise is not None and args.noise != "paper":
        try:
            float(args.noise)
        except ValueError:
            ap.error(f"--noise must be a number or 'paper', got {args.noise!r}")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import jax

    if args.x64:
        jax.config.update("jax_enable_x64", True)
    records = {}
    for p in args.problems:
        for m in args.methods:
            path = out / f"{setting(p, args)[0]}__{m}.json"
            if args.table_only:
                if path.exists():
                    records[(p, m)] = json.loads(path.read_text())
                continue
            records[(p, m)] = run_one(p, m, args, out)
    print(f"\nmedian final best f [25%, 75%] over seeds, {args.n_init} initial + {args.iterations} iterations:")
    print(table(records, args.problems, args.methods, args))


if __name__ == "__main__":
    main()
