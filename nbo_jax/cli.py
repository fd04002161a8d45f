"""The ``nbo-jax`` command line: run a comparison of BO algorithms, re-plot saved results.

Examples::

    nbo-jax run --algorithm neural-bo,random --problem ackley --dim 10 --noise paper \\
        --n-init 10 --iterations 200 --seeds 4 --seed 0 --out results/ackley10
    nbo-jax plot results/ackley10

``run`` builds each algorithm once, runs it on ``--seeds`` seeds at once (``jax.vmap`` of
``run_bo`` over ``jax.random.split(jax.random.key(seed), seeds)``, so every algorithm sees
the same initial designs; :func:`nbo_jax.comparison.run_methods`, the loop ``compare`` uses
too), prints a summary table of the final simple regret, and writes ``histories.npz``,
``config.json``, ``summary.md`` and ``regret.png`` (see :mod:`nbo_jax.analysis`).

A problem of ``m >= 2`` objectives (``--problem branin_currin``, ``zdt2``, ``dtlz2``, ...;
with a multi-objective algorithm: ``gp-ehvi``, ``gp-parego``, ``neural-bo-mo``, ``random``;
``gp-ehvi-c`` where it has constraints, e.g. ``c2dtlz2``)
is reported by the log hypervolume difference ``log10(HV* - HV)`` to the true front's
hypervolume instead of the simple regret (lower is better; the statistics of ``compare`` test
it the same way), and ``run``, ``compare`` and ``plot`` also write ``pareto.png`` (the final
front of seed 0 per method, the true front where it is cheap to sample) and
``pareto_fronts.npz`` (the plotted fronts).

Errors in the options exit with status 2 before anything runs; so does an output folder
(``--out``) that cannot be created or written, which is checked with a probe file before any
computation.

Ctrl-C (SIGINT) during ``run`` or ``compare`` stops at the next step or between methods
(a compilation in progress finishes first): the methods that finished are written whole,
``config.json`` names the interrupted method and those not run (``"interrupted"``), the
folder is printed and the exit status is 130. A second Ctrl-C aborts at once without writing.
A method whose run is projected to take more than ten minutes (from its first steps) is
announced with the projection.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import math
import os
import pathlib
import signal
import sys
import tempfile
import threading
from typing import Optional, Sequence

from . import analysis

# the noise of the README's and the docs' runs (variance = 1% of the function range), for
# 'run' and 'compare' alike
NOISE_DEFAULT = "paper"
NEURAL_BO_OPTIONS = ("width", "depth", "nu", "lam", "posterior", "preset", "candidates", "epochs")
# the exit status of a run stopped by Ctrl-C (128 + SIGINT, the shell's convention)
EXIT_INTERRUPTED = 130
STOP_HELP = ("Ctrl-C stops the run at the next BO step (a compilation in progress finishes first), writes the "
             "methods that finished to --out (config.json names the interrupted one) and exits with status 130; "
             "a second Ctrl-C aborts at once. A method projected to run longer than ten minutes is announced "
             "after its first steps.")


# --------------------------------------------------------------------------- parser
def _noise(text: str):
    """``--noise``: ``"paper"`` or a float."""
    if text.strip().lower() == "paper":
        return "paper"
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 'paper' or a number, got {text!r}") from None


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows ``(default: ...)`` except for ``None``/``False`` defaults (described in the text)."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


def _add_experiment_options(group, *, noise, seeds: int, min_seeds: int, out: str) -> None:
    """The problem and run-size options shared by ``run`` and ``compare``."""
    from . import benchmarks

    group.add_argument("--problem", default="ackley", help=f"benchmark problem, one of {benchmarks.available(multi_objective=True, mixed_spaces=True)}")
    group.add_argument("--dim", type=int, default=None,
                       help="input dimension (required for any-dimension problems such as ackley)")
    group.add_argument("--problem-option", action="append", default=[], metavar="KEY=VALUE",
                       help="an argument for the problem's builder, e.g. path=train_40k.csv for "
                       "document_retrieval or mnist_dir=DIR for sensitive_samples (repeatable; VALUE parsed "
                       "as a Python literal when possible)")
    group.add_argument("--noise", type=_noise, default=noise,
                       help="observation noise std: a number >= 0, or 'paper' (variance = 1%% of the "
                       "function range, as in Phan-Trong et al. 2023, Section 7)")
    group.add_argument("--n-init", type=int, default=10, help="number of uniform initial points (>= 1)")
    group.add_argument("--iterations", type=int, default=200,
                       help="number of BO iterations after the initial design (>= 0)")
    group.add_argument("--seeds", type=int, default=seeds,
                       help=f"number of seeds (independent runs, vmapped) (>= {min_seeds})")
    group.add_argument("--seed", type=int, default=0, help="base seed: keys = split(key(seed), seeds)")
    group.add_argument("--out", default=None,
                       help=f"output folder, created and checked for writing before anything runs (default: {out})")
    group.add_argument("--force", action="store_true",
                       help="write into an --out folder that already holds results (they are replaced); "
                       "without it such a folder is refused before anything runs")
    group.add_argument("--segments", type=int, default=1,
                       help="run each method in this many compiled segments of growing capacity (run_bo's "
                       "segments): the cost of a long run follows its data")
    group.add_argument("--x64", action="store_true", help="enable float64 (jax_enable_x64) for the runs")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``nbo-jax`` (sub-commands ``run`` and ``plot``)."""
    from . import registry

    parser = argparse.ArgumentParser(
        prog="nbo-jax",
        description="Bayesian optimization with neural-network surrogates in JAX: run "
        "comparisons on benchmark problems and plot their regret.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser(
        "run",
        help="run algorithms on a benchmark over several seeds and save the results",
        description="Run each algorithm on a benchmark problem over several seeds (vmapped; "
        "all algorithms share the initial designs of a seed), print the final simple "
        "regret per method and write histories.npz, config.json, summary.md and regret.png.",
        formatter_class=_HelpFormatter,
        epilog=STOP_HELP,
    )
    g = run.add_argument_group("experiment")
    g.add_argument("--algorithm", default="neural-bo,random",
                   help=f"comma-separated algorithms, from {sorted(registry.REGISTRY)}")
    _add_experiment_options(g, noise=NOISE_DEFAULT, seeds=4, min_seeds=1, out="nbo_results/<problem>_d<dim>_<date-time>")

    nb = run.add_argument_group(
        "Neural-BO options (passed to neural-bo only; an option not given keeps nbo.neural_bo's default, "
        "so 'neural-bo' is the registry's algorithm, as in 'compare')")
    nb.add_argument("--width", type=int, default=None, help="hidden width m")
    nb.add_argument("--depth", type=int, default=None, help="number of weight layers L (>= 2)")
    nb.add_argument("--nu", type=float, default=None, help="Thompson-sampling exploration scale nu")
    nb.add_argument("--lam", type=float, default=None, help="regularization lambda (> 0)")
    nb.add_argument("--posterior", default=None, choices=("auto", "full", "diagonal", "dual"),
                    help="feature-space posterior: full (Sherman-Morrison), diagonal, dual (Cholesky), auto")
    nb.add_argument("--preset", default=None, choices=("default", "paper"),
                    help="'paper': the settings of Phan-Trong et al. 2023, Section 7 (no biases, SGD, "
                    "restart from theta_0, uniform candidates); "
                    "'default': biases, Adam, warm start, a quarter local candidates")
    nb.add_argument("--candidates", type=int, default=None,
                    help="raw samples scored per iteration (the acquisition optimizer's raw_samples; its other "
                    "settings stay the preset's); default: the preset's (2048)")
    nb.add_argument("--epochs", type=int, default=None, help="training epochs per iteration")
    run.set_defaults(subparser=run)

    cmp_ = sub.add_parser(
        "compare",
        help="compare algorithms on a benchmark with the statistics of Phan-Trong 2024 (PhD thesis): "
        "KS, Welch, BH",
        description="Run every algorithm on the same seeds (same initial points per seed, vmapped), "
        "then write the histories, regret.png, and the tables of Phan-Trong 2024 (PhD thesis), "
        "Section 3.5.2 (Table 3.1: KS normality p-values; Table 3.2: one-sided Welch t-tests of each "
        "baseline against --reference with Benjamini-Hochberg T/F; Table 4.2 for constrained "
        "problems) as Markdown and CSV.",
        formatter_class=_HelpFormatter,
        epilog=STOP_HELP,
    )
    c = cmp_.add_argument_group("experiment")
    c.add_argument("--algorithms", default="neural-bo,random",
                   help=f"comma-separated algorithms, from {sorted(registry.REGISTRY)}")
    c.add_argument("--reference", default=None,
                   help="method the others are tested against (default: the first of --algorithms)")
    _add_experiment_options(c, noise=NOISE_DEFAULT, seeds=10, min_seeds=3,
                            out="nbo_results/compare_<problem>_d<dim>_<date-time>")
    c.add_argument("--alpha", type=float, default=0.05, help="Benjamini-Hochberg level")
    c.add_argument("--option", action="append", default=[], metavar="ALGO.KEY=VALUE",
                   help="an argument for one algorithm's factory, e.g. neural-bo.width=200 or "
                   "gp-ei.kernel=rbf (repeatable; VALUE parsed as a Python literal when possible); "
                   "ALGO.acq_optimizer.FIELD=VALUE sets one field of the acquisition optimizer, e.g. "
                   "neural-bo.acq_optimizer.raw_samples=512 (the fields given form the dict passed as "
                   "acq_optimizer=; the others keep the algorithm preset's values); "
                   "ALGO.turbo.ARG=VALUE an argument of a turbo-<name> algorithm's trust region, e.g. "
                   "turbo-gp-ts.turbo.min_improvement=0.001")
    cmp_.set_defaults(subparser=cmp_)

    plot = sub.add_parser(
        "plot",
        help="re-draw regret.png (and pareto.png) and print the summary of saved results",
        description="Reload the results in DIR (written by 'nbo-jax run'), re-draw DIR/regret.png "
        "(and DIR/pareto.png for several objectives) and print the summary table.",
    )
    plot.add_argument("dir", metavar="DIR", help="results folder written by 'nbo-jax run'")
    plot.add_argument("--linear", action="store_true", help="linear y axis instead of log/symlog")
    plot.set_defaults(subparser=plot)

    coco = sub.add_parser(
        "coco",
        help="benchmark algorithms on COCO's BBOB suite, logged in COCO's data format (resumable)",
        description="Run each algorithm on every (function, dimension, instance) of a COCO suite with a "
        "budget of --budget-multiplier x d evaluations, all instances of a function vmapped in one "
        "compiled run_bo; values come from cocoex, and each run is replayed through COCO's observer into "
        "DIR/<algorithm>/. Rerunning with the same --out skips finished work; --batch K/N splits the "
        "campaign across N processes. Post-process with 'nbo-jax coco-plot DIR'.",
        formatter_class=_HelpFormatter,
    )
    coco.add_argument("--algorithms", default="neural-bo,gp-ei,random",
                      help=f"comma-separated algorithms, from {sorted(registry.REGISTRY)} (constrained ones "
                      "need --suite bbob-constrained; pinn-bo needs a PDE, which BBOB functions lack)")
    coco.add_argument("--suite", default="bbob", choices=("bbob", "bbob-constrained"), help="COCO suite")
    coco.add_argument("--functions", default=None,
                      help="function numbers, e.g. '1-24' or '1,8,20' (default: all: 1-24, or 1-54 constrained)")
    coco.add_argument("--dims", default="2,3,5,10", help="dimensions, from 2,3,5,10,20,40")
    coco.add_argument("--instances", default="1-15", help="COCO instance numbers")
    coco.add_argument("--budget-multiplier", type=float, default=20.0,
                      help="evaluations per dimension (Phan-Trong 2024, PhD thesis, Section 3.5: 20)")
    coco.add_argument("--n-init", type=int, default=None,
                      help="uniform initial points per run (default 2 (d + 1), at most half the budget)")
    coco.add_argument("--seed", type=int, default=0, help="base seed of the runs' keys")
    coco.add_argument("--batch", default="1/1", metavar="K/N",
                      help="run the K-th of N interleaved parts of the campaign (N processes split it)")
    coco.add_argument("--functions-per-run", type=int, default=1,
                      help="functions vmapped together in one compiled run (with all instances); raise it on a GPU")
    coco.add_argument("--in-sequence", action="store_true",
                      help="run a unit's problems one after another instead of vmapped (faster on a CPU for GP "
                           "algorithms)")
    coco.add_argument("--option", action="append", default=[], metavar="ALGO.KEY=VALUE",
                      help="an argument for one algorithm's factory, as in 'compare' (repeatable; "
                      "ALGO.turbo.ARG=VALUE for a turbo-<name> algorithm's trust region)")
    coco.add_argument("--x64", action="store_true", help="enable float64 (jax_enable_x64) for the runs")
    coco.add_argument("--out", required=True, metavar="DIR", help="campaign folder (created; an existing campaign is resumed)")
    coco.add_argument("--no-progress", action="store_true", help="no progress bar")
    coco.set_defaults(subparser=coco)

    coco_plot = sub.add_parser(
        "coco-plot",
        help="post-process a COCO campaign with cocopp (ECDFs, aRT tables) and print solved fractions",
        description="Run cocopp on every algorithm of the campaign in DIR (runtime ECDFs per dimension and "
        "function group, aRT tables, against the best algorithm of BBOB-2009 that cocopp ships), write "
        "its pages to DIR/ppdata (or --out) and print the fraction of (function, instance, target) "
        "triples solved per algorithm and dimension.",
        formatter_class=_HelpFormatter,
    )
    coco_plot.add_argument("dir", metavar="DIR", help="campaign folder written by 'nbo-jax coco'")
    coco_plot.add_argument("--out", default=None, help="cocopp's output folder (default: DIR/ppdata)")
    coco_plot.set_defaults(subparser=coco_plot)
    return parser


# --------------------------------------------------------------------------- helpers
def _option_of_problem_error(message: str) -> str:
    """Which option a ``benchmarks.get`` error is about (its messages start with the argument)."""
    low = message.lower()
    if low.startswith("noise"):
        return "--noise"
    if low.startswith("dim"):
        return "--dim"
    return "--problem"


@contextlib.contextmanager
def _float64_if(enabled: bool):
    """``--x64``: enable float64 (``jax_enable_x64``) inside the block when ``enabled``; the
    flag is restored on the way out."""
    import jax

    old = bool(jax.config.jax_enable_x64)
    if enabled:
        jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", old)


def _problem_from_args(args, parser):
    """Build the problem (inside :func:`_float64_if` for ``--x64``); a bad
    ``--problem``/``--dim``/``--noise`` exits with status 2 naming the option."""
    from . import benchmarks

    kwargs = {}
    for entry in getattr(args, "problem_option", []):
        key, sep, value = entry.partition("=")
        if not (sep and key.strip()):
            parser.error(f"--problem-option: expected KEY=VALUE, got {entry!r}")
        kwargs[key.strip().replace("-", "_")] = _literal(value)
    try:
        return benchmarks.get(args.problem, dim=args.dim, noise_std=args.noise, **kwargs)
    except (ValueError, TypeError) as err:
        option = "--problem-option" if kwargs and "unexpected keyword" in str(err) else _option_of_problem_error(str(err))
        parser.error(f"{option}: {err}")


def _literal(value: str):
    """``value`` as a Python literal when it is one (``"3"`` -> 3), else the string itself."""
    import ast

    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return value


def _check_constrained(algos, problem, parser, option) -> None:
    """A constrained algorithm (Neural-CBO, cEI) needs a problem with constraints."""
    from .loop import _check_pair

    for algo in algos.values():
        try:
            _check_pair(algo, problem)
        except ValueError as err:
            parser.error(f"{option}: {err}")


def _attach_pde(algos, problem, parser, option, options=None) -> None:
    """Build ``pinn-bo`` with the problem's PDE (``operator``/``source``) unless its options
    give one; a problem without a PDE is refused."""
    from . import registry

    if "pinn-bo" not in algos:
        return
    kwargs = dict((options or {}).get("pinn-bo", {}))
    if "operator" not in kwargs:
        if problem.operator is None:
            parser.error(f"{option}: pinn-bo needs a problem with a known PDE (Problem.operator); "
                         f"{problem.name!r} has none (PDE problems: heat_bc1..3, beam, drop_wave_pde, ...)")
        kwargs.update(operator=problem.operator, source=problem.source if problem.source is not None else 0.0)
    try:
        algos["pinn-bo"] = registry.get("pinn-bo", **kwargs)
    except (ValueError, TypeError) as err:
        parser.error(f"{option}: pinn-bo: {err}")


def _curves(histories, optimal_value, max_hypervolume=None):
    """(curves, ylabel, note): the run's metric per method (:func:`analysis.metric_curves`)."""
    curves, label = analysis.metric_curves(histories, optimal_value, max_hypervolume=max_hypervolume)
    note = f"optimal value unknown: plotting {label}" if "unknown" in label else None
    return curves, label, note


def _writable_dir(path: pathlib.Path, parser, option: str) -> pathlib.Path:
    """Create ``path`` (and its parents) and write and remove a probe file in it, so that an
    unwritable output folder fails before any computation; exits with status 2 naming
    ``option`` when it cannot be written."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".nbo-jax-write-probe-") as probe:
            probe.write(b"probe")
            probe.flush()
    except OSError as err:
        parser.error(f"{option} {str(path)!r} cannot be written ({err.strerror or err}); nothing was run")
    return path


RESULT_FILES = ("histories.npz", "config.json")


def _output_dir(args, parser, default_name: str) -> pathlib.Path:
    """``--out``, or ``nbo_results/<default_name>_<date-time>``, created and checked for writing
    (:func:`_writable_dir`). A folder that already holds results (``histories.npz`` or
    ``config.json``) exits with status 2 unless ``--force``, so a rerun does not replace an
    earlier experiment."""
    out = pathlib.Path(args.out) if args.out else pathlib.Path(
        "nbo_results", f"{default_name}_{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}")
    found = [name for name in RESULT_FILES if (out / name).exists()]
    if found and not getattr(args, "force", False):
        parser.error(f"--out {str(out)!r} already holds results ({', '.join(found)}); pass --force to replace "
                     "them, or choose another folder; nothing was run")
    return _writable_dir(out, parser, "--out")


def _title(cfg: dict) -> str:
    noise = cfg.get("noise")
    noise_txt = f"noise {noise}" if noise == "paper" else f"noise std {cfg.get('noise_std', noise)}"
    if noise == "paper" and cfg.get("noise_std") is not None:
        noise_txt = f"paper noise (std {float(cfg['noise_std']):.3g})"
    return f"{cfg.get('problem', '?')} (d={cfg.get('dim', '?')}), {noise_txt}, {cfg.get('n_seeds', '?')} seeds"


# --------------------------------------------------------------------------- Ctrl-C
@contextlib.contextmanager
def _stop_on_sigint():
    """Inside the block the first SIGINT sets the yielded :class:`threading.Event` (the run
    stops at its next step, :func:`nbo_jax.comparison.run_methods`' ``should_stop``) and a
    second one exits at once with status 130; the previous handler is restored on the way
    out. Outside the main thread (where no handler can be installed) the event is never set."""
    event = threading.Event()

    def handler(signum, frame):
        if event.is_set():
            print("\nnbo-jax: second Ctrl-C: aborted, nothing more written", file=sys.stderr, flush=True)
            os._exit(EXIT_INTERRUPTED)
        event.set()
        print("\nnbo-jax: Ctrl-C: stopping at the next step and writing the finished methods "
              "(Ctrl-C again aborts at once)", file=sys.stderr, flush=True)

    try:
        previous = signal.signal(signal.SIGINT, handler)
    except ValueError:  # not the main thread
        yield event
        return
    try:
        yield event
    finally:
        signal.signal(signal.SIGINT, previous)


def _run_methods_stoppable(problem, algos, keys, *, n_init: int, n_iter: int, segments: int):
    """:func:`nbo_jax.comparison.run_methods` under :func:`_stop_on_sigint`, in a worker thread
    while this (main) thread waits, so that a SIGINT is handled at once whatever JAX is doing.

    Returns ``(histories, timings, interrupted)``: ``interrupted`` is ``None``, or the
    :class:`~nbo_jax.comparison.RunInterrupted` whose finished methods are ``histories``."""
    from . import comparison
    from .comparison import RunInterrupted

    box: dict = {}
    with _stop_on_sigint() as stop:
        def work():
            try:
                box["result"] = comparison.run_methods(problem, algos, keys, n_init=n_init, n_iter=n_iter,
                                                       segments=segments, should_stop=stop.is_set,
                                                       long_run_s=comparison.LONG_RUN_S)
            except BaseException as err:  # handed to the main thread
                box["error"] = err

        worker = threading.Thread(target=work, name="nbo-jax-run", daemon=True)
        worker.start()
        while worker.is_alive():
            worker.join(0.1)
    if isinstance(box.get("error"), RunInterrupted):
        err = box["error"]
        return err.histories, err.timings, err
    if "error" in box:
        raise box["error"]
    return (*box["result"], None)


def _interrupted_record(stopped) -> dict:
    """``config["interrupted"]`` of a run stopped by Ctrl-C."""
    return {"by": "SIGINT (Ctrl-C)", "method": stopped.interrupted, "not_run": list(stopped.not_run),
            "finished": sorted(stopped.histories),
            "note": "the interrupted method's steps are not saved (a compiled run returns at its end); "
                    "the finished methods are whole"}


def _report_interrupted(stopped, out: Optional[pathlib.Path]) -> int:
    """Print what a Ctrl-C left (and where it was written); returns :data:`EXIT_INTERRUPTED`."""
    lost = ([f"{stopped.interrupted} (interrupted)"] if stopped.interrupted else []) + \
        [f"{n} (not run)" for n in stopped.not_run]
    where = f"wrote the finished methods ({', '.join(sorted(stopped.histories))}) to {out}" if out is not None \
        else "no method had finished: nothing was written"
    print(f"\nnbo-jax: stopped by Ctrl-C; {where}; left out: {', '.join(lost) or 'none'}", file=sys.stderr,
          flush=True)
    return EXIT_INTERRUPTED


# --------------------------------------------------------------------------- run
def _validate_counts(args, parser) -> None:
    checks = [("--n-init", args.n_init, 1), ("--seeds", args.seeds, 1), ("--iterations", args.iterations, 0),
              ("--width", args.width, 1), ("--depth", args.depth, 2), ("--candidates", args.candidates, 1),
              ("--epochs", args.epochs, 1), ("--segments", args.segments, 1)]
    for option, value, minimum in checks:
        if value is not None and value < minimum:
            parser.error(f"{option} must be >= {minimum}, got {value}")
    if args.dim is not None and args.dim < 1:
        parser.error(f"--dim must be >= 1, got {args.dim}")
    if args.lam is not None and not (math.isfinite(args.lam) and args.lam > 0):
        parser.error(f"--lam must be a finite number > 0, got {args.lam}")
    if args.nu is not None and not (math.isfinite(args.nu) and args.nu >= 0):
        parser.error(f"--nu must be a finite number >= 0, got {args.nu}")
    if args.noise != "paper" and not (math.isfinite(args.noise) and args.noise >= 0):
        parser.error(f"--noise must be 'paper' or a finite number >= 0, got {args.noise}")


def _build_algorithms(args, parser) -> dict:
    """Canonical name -> BOAlgorithm, validating ``--algorithm`` and the Neural-BO options."""
    from . import registry

    names = [s.strip() for s in args.algorithm.split(",")]
    if not args.algorithm.strip() or any(not s for s in names):
        parser.error(f"--algorithm: expected a comma-separated list such as 'neural-bo,random', got {args.algorithm!r}")
    nbo_kwargs = {k: getattr(args, k) for k in NEURAL_BO_OPTIONS if k != "candidates" and getattr(args, k) is not None}
    if args.candidates is not None:  # laid over the preset's acquisition optimizer
        nbo_kwargs["acq_optimizer"] = dict(raw_samples=args.candidates)
    built = {}
    for name in names:
        try:
            canonical = registry.get(name).name  # validates the name (building is cheap)
        except (ValueError, TypeError) as err:
            parser.error(f"--algorithm: {err}")
        if canonical in built:
            parser.error(f"--algorithm: {name!r} is given twice")
        try:
            built[canonical] = registry.get(name, **nbo_kwargs) if canonical == "neural-bo" else registry.get(name)
        except (ValueError, TypeError) as err:
            parser.error(f"Neural-BO options (--{'/--'.join(NEURAL_BO_OPTIONS)}): {err}")
    return built


def _cmd_run(args, parser, argv) -> int:

    _validate_counts(args, parser)
    algos = _build_algorithms(args, parser)
    with _float64_if(args.x64):
        problem = _problem_from_args(args, parser)
        _check_constrained(algos, problem, parser, "--algorithm")
        _attach_pde(algos, problem, parser, "--algorithm")
        out = _output_dir(args, parser, f"{problem.name}_d{problem.dim}")
        return _run_all(args, argv, algos, problem, out)


def _run_all(args, argv, algos, problem, out: pathlib.Path) -> int:
    import jax

    keys = jax.random.split(jax.random.key(args.seed), args.seeds)
    histories, timings, stopped = _run_methods_stoppable(problem, algos, keys, n_init=args.n_init,
                                                         n_iter=args.iterations, segments=args.segments)
    if stopped is not None and not histories:
        return _report_interrupted(stopped, None)

    fstar, top = problem.optimal_value, problem.max_hypervolume
    config = {
        "command": "run",
        "argv": list(argv) if argv is not None else sys.argv[1:],
        "algorithms": list(algos),
        "problem": problem.name,
        "dim": problem.dim,
        "noise": args.noise,
        "noise_std": problem.noise_std,
        "optimal_value": fstar,
        "n_init": args.n_init,
        "n_iter": args.iterations,
        "n_seeds": args.seeds,
        "seed": args.seed,
        "x64": bool(args.x64),
        "segments": args.segments,
        "neural_bo": ({k: getattr(args, k) for k in NEURAL_BO_OPTIONS if getattr(args, k) is not None}
                      if "neural-bo" in algos else None),
    }
    multi = problem.n_objectives > 1
    if multi:
        config.update(n_objectives=problem.n_objectives, reference_point=problem.reference_point, max_hypervolume=top)
    if stopped is not None:
        config["interrupted"] = _interrupted_record(stopped)
    rows = analysis.summary_rows(histories, fstar, analysis.wall_seconds(timings), max_hypervolume=top)
    curves, ylabel, note = _curves(histories, fstar, top)
    print(f"\nfinal {ylabel} after {args.n_init + args.iterations} evaluations, {args.seeds} seeds "
          "(wall_s: compile + run seconds):")
    print(analysis.format_table(rows))
    log = not multi
    if problem.metric is not None:  # the task's own metric (best reward, best hF1, detection rate)
        import numpy as np

        from .comparison import task_final_values

        final, label, higher, task_curves = task_final_values(problem, histories)
        print(f"\n{label} ({'higher' if higher else 'lower'} is better), median [q25, q75]:")
        for name, v in final.items():
            q25, med, q75 = np.quantile(v, [0.25, 0.5, 0.75])
            print(f"  {name}: {med:.4g} [{q25:.4g}, {q75:.4g}]")
        if task_curves is not None:
            curves, ylabel, log = task_curves, label, False
    paths = analysis.save_results(out, histories, config, optimal_value=fstar, max_hypervolume=top, seed=args.seed,
                                  keys=keys, timings=timings)
    if note:
        print(note)
    paths["plot"] = analysis.plot_regret(curves, out / "regret.png", title=_title(config), n_init=args.n_init,
                                         ylabel=ylabel, log=log)
    if multi:
        paths.update(analysis.write_fronts(out, histories, true_front=analysis.sampled_front(problem),
                                           reference_point=problem.reference_point, title=_title(config)))
    print("\nwrote:")
    for kind, path in paths.items():
        print(f"  {kind}: {path}")
    return 0 if stopped is None else _report_interrupted(stopped, out)


# --------------------------------------------------------------------------- compare
def _parse_options(entries, names, parser) -> dict:
    """``["neural-bo.width=200", "neural-bo.acq_optimizer.raw_samples=512", ...]`` ->
    ``{"neural-bo": {"width": 200, "acq_optimizer": {"raw_samples": 512}}}``.

    ``ALGO.acq_optimizer.FIELD=VALUE`` entries of one algorithm are collected into one dict
    (the fields of :class:`nbo_jax.optimize.AcqOptimizer`; an unknown field, or mixing them with
    a whole ``ALGO.acq_optimizer=...``, exits with status 2). ``ALGO.turbo.ARG=VALUE`` (ALGO a
    ``turbo-`` / ``turbo<m>-`` name) collects arguments of :func:`nbo_jax.trust_region` into
    ``{"turbo": {...}}`` (:func:`nbo_jax.registry.get`), e.g.
    ``turbo-gp-ts.turbo.min_improvement=0.001``; elsewhere, or with an argument it lacks, it
    exits with status 2."""
    import inspect

    from . import registry
    from .optimize import AcqOptimizer
    from .transforms.trust_region import trust_region

    region_args = [a for a in inspect.signature(trust_region).parameters if a not in ("algorithm", "regions")]

    out = {n: {} for n in names}
    fields: dict = {n: {} for n in names}
    for entry in entries:
        head, sep, value = entry.partition("=")
        algo, dot, key = head.partition(".")
        if not (sep and dot and key):
            parser.error(f"--option: expected ALGO.KEY=VALUE, got {entry!r}")
        try:
            algo = registry.canonical_name(algo)
        except ValueError as err:
            parser.error(f"--option {entry!r}: {err}")
        if algo not in out:
            parser.error(f"--option {entry!r}: {algo!r} is not in --algorithms")
        parsed = _literal(value)
        key = key.replace("-", "_")
        sub, dot, field = key.partition(".")
        if not dot:
            out[algo][key] = parsed
        elif sub == "acq_optimizer" and field in AcqOptimizer._fields:
            fields[algo][field] = parsed
        elif sub == "turbo":
            if not algo.startswith("turbo"):
                parser.error(f"--option {entry!r}: {algo}.turbo.ARG needs a 'turbo-<name>' algorithm")
            if field not in region_args:
                parser.error(f"--option {entry!r}: ALGO.turbo.ARG takes ARG one of {region_args}")
            out[algo].setdefault("turbo", {})[field] = parsed
        else:
            parser.error(f"--option {entry!r}: nested keys are ALGO.acq_optimizer.FIELD with FIELD one of "
                         f"{list(AcqOptimizer._fields)}, or ALGO.turbo.ARG (a trust_region argument)")
    for algo, given in fields.items():
        if given:
            if "acq_optimizer" in out[algo]:
                parser.error(f"--option: {algo}.acq_optimizer is given whole and by field; use one form")
            out[algo]["acq_optimizer"] = given
    return out


def _algorithm_names(text: str, parser, option: str = "--algorithms") -> list:
    """The canonical names of a comma-separated ``--algorithms`` list (exits 2 on an unknown
    or repeated name)."""
    from . import registry

    names = []
    for raw in text.split(","):
        try:
            name = registry.canonical_name(raw)
        except ValueError as err:
            parser.error(f"{option}: {err}")
        if name in names:
            parser.error(f"{option}: {raw!r} is given twice")
        names.append(name)
    return names


def _build_with_options(names, options, parser) -> dict:
    """``{name: registry.get(name, **options[name])}`` (exits 2 naming ``--option``)."""
    from . import registry

    built = {}
    for name in names:
        try:
            built[name] = registry.get(name, **options[name])
        except (ValueError, TypeError) as err:
            parser.error(f"--option for {name}: {err}")
    return built


def _cmd_compare(args, parser, argv) -> int:

    from . import comparison, registry

    for option, value, minimum in (("--n-init", args.n_init, 1), ("--seeds", args.seeds, 3),
                                   ("--iterations", args.iterations, 0), ("--segments", args.segments, 1)):
        if value < minimum:
            parser.error(f"{option} must be >= {minimum}, got {value}")
    if not 0 < args.alpha < 1:
        parser.error(f"--alpha must be in (0, 1), got {args.alpha}")
    names = _algorithm_names(args.algorithms, parser)
    reference = names[0]
    if args.reference is not None:
        try:
            reference = registry.canonical_name(args.reference)
        except ValueError as err:
            parser.error(f"--reference: {err}")
        if reference not in names:
            parser.error(f"--reference: {reference!r} is not in --algorithms")
    options = _parse_options(args.option, names, parser)
    built = _build_with_options(names, options, parser)
    with _float64_if(args.x64):
        problem = _problem_from_args(args, parser)
        _check_constrained(built, problem, parser, "--algorithms")
        _attach_pde(built, problem, parser, "--algorithms", options)
        out = _output_dir(args, parser, f"compare_{problem.name}_d{problem.dim}")
        import jax

        keys = jax.random.split(jax.random.key(args.seed), args.seeds)
        histories, timings, stopped = _run_methods_stoppable(problem, built, keys, n_init=args.n_init,
                                                             n_iter=args.iterations, segments=args.segments)
        config = {"command": "compare", "argv": list(argv) if argv is not None else sys.argv[1:],
                  "algorithms": names, "options": options, "noise": args.noise, "noise_std": problem.noise_std,
                  "n_seeds": args.seeds, "seed": args.seed, "alpha": args.alpha, "x64": bool(args.x64),
                  "segments": args.segments}
        title = f"{problem.name} (d={problem.dim}), {args.seeds} seeds, noise std {problem.noise_std:.3g}"
        if stopped is not None:
            return _save_interrupted_compare(stopped, problem, config, out, title, args.n_init)
        result = comparison.result_from_histories(problem, histories, timings, reference=reference,
                                                  n_init=args.n_init, n_evaluations=args.n_init + args.iterations,
                                                  alpha=args.alpha)
        paths = comparison.save(result, out, config, title=title)
        welch_no = "4.2" if problem.constraints is not None else "3.2"
        for name, fn in ((f"final {result.metric}, median [q25, q75]", comparison.summary_table),
                         ("Table 3.1 (Phan-Trong 2024, PhD thesis): KS normality p-values", comparison.ks_table),
                         (f"Table {welch_no} (Phan-Trong 2024, PhD thesis): one-sided Welch t-tests vs {reference} "
                          "(p, BH decision)", comparison.welch_table)):
            print(f"\n{name}:")
            print(analysis.markdown_table(*fn([result])))
        print("\nwrote:")
        for kind, path in paths.items():
            print(f"  {kind}: {path}")
        return 0


def _save_interrupted_compare(stopped, problem, config, out: pathlib.Path, title: str, n_init: int) -> int:
    """``compare`` stopped by Ctrl-C: the finished methods' histories, ``config.json`` (with
    ``"interrupted"``) and ``regret.png``, without the statistical tables (they need every
    method); returns :data:`EXIT_INTERRUPTED`."""
    if not stopped.histories:
        return _report_interrupted(stopped, None)
    config = dict(config, problem=problem.name, dim=problem.dim, n_init=n_init,
                  interrupted=_interrupted_record(stopped))
    top = problem.max_hypervolume
    paths = analysis.save_results(out, stopped.histories, config, optimal_value=problem.optimal_value,
                                  max_hypervolume=top, timings=stopped.timings)
    curves, label, _ = _curves(stopped.histories, problem.optimal_value, top)
    paths["plot"] = analysis.plot_regret(curves, out / "regret.png", title=title, n_init=n_init, ylabel=label,
                                         log=problem.n_objectives == 1)
    print("\nthe statistical tables are not written: the run was interrupted before every method finished")
    print("\nwrote:")
    for kind, path in paths.items():
        print(f"  {kind}: {path}")
    return _report_interrupted(stopped, out)


# --------------------------------------------------------------------------- plot
def _cmd_plot(args, parser) -> int:
    directory = pathlib.Path(args.dir)
    if not directory.is_dir():
        parser.error(f"DIR {str(directory)!r} is not a folder")
    try:
        histories, record = analysis.load_results(directory)
    except (FileNotFoundError, ValueError, OSError) as err:
        parser.error(f"DIR {str(directory)!r} has no readable results: {err}")
    cfg = record.get("config", {})
    fstar = record.get("optimal_value", cfg.get("optimal_value"))
    top = record.get("max_hypervolume", cfg.get("max_hypervolume"))
    rows = analysis.summary_rows(histories, fstar, analysis.wall_seconds(record.get("timings")), max_hypervolume=top)
    print(record.get("metric", "final simple regret") + f" ({directory}):")
    print(analysis.format_table(rows))
    curves, ylabel, note = _curves(histories, fstar, top)
    if note:
        print(note)
    _writable_dir(directory, parser, "DIR")
    multi = any(analysis.is_multi_objective(h) for h in histories.values())
    paths = {"plot": analysis.plot_regret(curves, directory / "regret.png", title=_title(cfg) if cfg else None,
                                          n_init=cfg.get("n_init"), log=not (args.linear or multi), ylabel=ylabel)}
    if multi:  # the fronts from the histories; the true front as the run wrote it
        true_front = analysis.load_fronts(directory)[1] if (directory / "pareto_fronts.npz").is_file() else None
        paths.update(analysis.write_fronts(directory, histories, true_front=true_front,
                                           reference_point=cfg.get("reference_point"),
                                           title=_title(cfg) if cfg else None))
    print("\nwrote:")
    for kind, path in paths.items():
        print(f"  {kind}: {path}")
    return 0


# --------------------------------------------------------------------------- coco
def _cmd_coco(args, parser) -> int:

    from . import coco
    from .benchmarks import bbob

    names = _algorithm_names(args.algorithms, parser)
    built = _build_with_options(names, _parse_options(args.option, names, parser), parser)
    parsed = {}
    default_functions = f"1-{bbob.n_functions(args.suite)}"
    for option, text in (("--functions", args.functions or default_functions), ("--dims", args.dims),
                         ("--instances", args.instances)):
        try:
            parsed[option] = coco.parse_range(text, option)
        except ValueError as err:
            parser.error(str(err))
    k, slash, n = args.batch.partition("/")
    if not (slash and k.strip().isdigit() and n.strip().isdigit() and 1 <= int(k) <= int(n)):
        parser.error(f"--batch: expected K/N with 1 <= K <= N, e.g. 2/4, got {args.batch!r}")
    out = _writable_dir(pathlib.Path(args.out), parser, "--out")
    with _float64_if(args.x64):
        kwargs = dict(suite=args.suite, functions=parsed["--functions"], dimensions=parsed["--dims"],
                      instances=parsed["--instances"], budget_multiplier=args.budget_multiplier,
                      n_init=args.n_init, seed=args.seed, batch=(int(k), int(n)),
                      functions_per_run=args.functions_per_run, in_sequence=args.in_sequence,
                      progress=not args.no_progress)
        try:
            report = coco.run_campaign(built, out, **kwargs)
        except (ValueError, TypeError) as err:
            parser.error(str(err))
    print(f"ran {len(report.ran)} units (algorithm, dimension, function), skipped {len(report.skipped)} already done")
    rows = [[name, report.evaluations[name], f"{report.run_seconds[name]:.1f}", f"{report.replay_seconds[name]:.2f}",
             report.folders.get(name, "-")] for name in built]
    print(analysis.markdown_table(["algorithm", "evaluations", "run_bo s (with compile)", "replay s", "COCO data"],
                                  rows))
    print(f"\npost-process with: nbo-jax coco-plot {out}")
    return 0


def _cmd_coco_plot(args, parser) -> int:
    from . import coco

    directory = pathlib.Path(args.dir)
    if not (directory / "campaign.json").is_file():
        parser.error(f"DIR {str(directory)!r} is not a campaign folder (no campaign.json)")
    if args.out is not None:
        _writable_dir(pathlib.Path(args.out), parser, "--out")
    try:
        index = coco.postprocess(directory, args.out)
    except FileNotFoundError as err:
        parser.error(f"DIR: {err}")
    print(coco.solved_fractions_table(directory))
    print(f"\nwrote: {index}")
    return 0


# --------------------------------------------------------------------------- entry point
def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of ``nbo-jax``; returns the exit status (errors in options raise
    ``SystemExit(2)`` through ``argparse``, with a message naming the option)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        parser.exit(2, "\nnbo-jax: error: a command is required (run, compare, plot, coco or coco-plot)\n")
    sub = args.subparser  # errors are reported with the sub-command's usage line
    if args.command == "run":
        return _cmd_run(args, sub, argv)
    if args.command == "compare":
        return _cmd_compare(args, sub, argv)
    if args.command == "coco":
        return _cmd_coco(args, sub)
    if args.command == "coco-plot":
        return _cmd_coco_plot(args, sub)
    return _cmd_plot(args, sub)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
