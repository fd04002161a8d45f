"""Mixed selection problems: where Neural-BO's defaults for mixed spaces are chosen.

Two mixed problems that are not in the mixed benchmark (``benchmarks/mixed.py``, whose problems
are the test problems), so that a default chosen here is measured there on problems it was not
chosen on:

- ``additive_terms``: three categorical parameters (4, 4 and 5 choices) each choose one of
  five terms of two continuous inputs ``x in [-1, 1]^2``, ``z = 2x``: three-hump camel / 10 -
  0.3, Booth / 100, Styblinski-Tang / 200, ``||z - (0.5, -0.5)||^2 / 4`` and Rastrigin / 40;
  ``f`` is their sum (the structure of CoCaBO's Func3C with other terms); minimum -0.9 at the
  three three-hump camel choices and ``z = 0`` (15 unit-cube columns, 5 parameters).
- ``permuted_hartmann``: Hartmann-3 whose first category (3 choices) permutes its inputs and
  whose second (5 choices) adds ``0.3 |k - 2| mean(x) + 0.2 [k = 4]`` (11 columns, 5 parameters).
- ``wide_terms`` (only when named in ``--problems``): ``additive_terms`` with 8, 8 and 6
  choices, the extra choices repeating terms; minimum -0.9 (24 unit-cube columns, 5
  parameters: more columns than ``CIRCLE_BELOW_DIM``, fewer parameters).
- Integer spaces (only when named in ``--problems``; ``--problems integer`` names the four),
  where Neural-BO's acquisition on spaces without a category is chosen: ``integer_levy`` and
  ``integer_styblinski_tang`` (Levy and Styblinski-Tang in 6-D, three continuous inputs in
  ``[-5, 5]`` and three integers in ``{-5, ..., 5}``), ``integer_hartmann6`` (Hartmann-6,
  three continuous inputs in ``[0, 1]`` and three integers ``k in {0, ..., 10}`` read as
  ``k / 10``) and ``integer_rosenbrock`` (Rosenbrock / 100 in 4-D, two continuous inputs in
  ``[-2, 2]`` and two integers in ``{-2, ..., 2}``).
- ``sgd_breast_cancer_nll`` and ``knn_iris_nll`` (only when named in ``--problems``):
  scikit-learn tuning tasks with heavy-tailed losses (:data:`nbo_jax.benchmarks.tuning.SELECTION`:
  the log loss of logistic regression by SGD, two log-scaled floats and two categories; the log
  loss of k nearest neighbours on iris, two integers and two categories), where an outcome
  transform is chosen; the mixed benchmark's tuning tasks are their test tasks.
  ``rf_breast_cancer`` (only when named): the random forest's space as a classifier, 1 -
  3-fold accuracy, flat between steps of ``max_features`` and of one sample: the twin of the
  tuning tasks that end in ties.
  ``rf_friedman1`` (only when named): the forest's regression space on Friedman #1 (442 x 10,
  generated), 3-fold mean squared error, flat between steps of ``max_features``: the twin of
  ``rf_diabetes``.
  ``rf_friedman1_noisy`` (only when named): the same with five times the noise (``noise=5``),
  where shallow trees come near the best as on ``rf_diabetes``: its second twin.
  ``svc_wine_nll`` (only when named): ``svc_breast_cancer_nll``'s SVC on wine, log loss, where a
  third of every method's runs end at the box's edge ``gamma = 1e-4``, most after asking the
  sigmoid kernel again and again: the twin of ``svc_breast_cancer_nll``.

Each combination of ``--nu``, ``--input-embedding``, ``--category-weight``,
``--categorical-acquisition``, ``--outcome-transform``, ``--boundary-penalty`` and ``--acquisition`` (``thompson``: the
preset's; ``ei``: ``acquisition=nbo.acquisition.ei()`` at the best of 512 raw samples, no climb,
``nu`` unused; ``nu`` scales the Thompson sample where it asks: on a space with a category only
with ``--categorical-acquisition thompson``, the preset's EI asking there otherwise)
runs Neural-BO (its default preset with them given) vmapped over
``--seeds`` seeds from ``jax.random.key(--key)``,
float32, noise-free, ``--n-init`` + ``--n-iter`` evaluations; printed: the median [IQR] and mean
of the best value per problem and setting, and the one-sided Welch p that each setting's mean is
lower than the first one's::

    uv run python benchmarks/mixed_selection.py --nu 0.25 0.5 --seeds 30
    uv run python benchmarks/mixed_selection.py --nu 0.25 0.5 --seeds 10 --n-iter 150 --problems additive_terms
    uv run python benchmarks/mixed_selection.py --nu 0.5 --input-embedding linear circle --problems wide_terms
    uv run python benchmarks/mixed_selection.py --nu 0.5 --category-weight 1 0.25 fit --categorical-acquisition thompson ei --key 3
    uv run python benchmarks/mixed_selection.py --nu 0.5 --acquisition thompson ei --problems integer --key 3
    uv run python benchmarks/mixed_selection.py --nu 0.5 --outcome-transform standardize copula --key 3 \
        --problems additive_terms permuted_hartmann integer
    uv run python benchmarks/mixed_selection.py --nu 0.5 --boundary-penalty 0 1 --key 3 --problems additive_terms \
        permuted_hartmann integer
    uv run python benchmarks/mixed_selection.py --nu 0.5 --boundary-penalty 0 1 --key 3 --sequential \
        --problems svc_wine_nll rf_friedman1 rf_breast_cancer knn_iris_nll sgd_breast_cancer_nll

``--algorithm NAME`` (a registry name other than ``neural-bo``, e.g. ``gp-ei``) screens that
algorithm instead: each ``--options`` JSON object is one setting, the keyword arguments of
``nbo.registry.get(NAME, **options)`` (``{}``: its defaults, the baseline the others are tested
against); the Neural-BO flags above are refused with it. ``--sequential`` runs the seeds one
after another (the library's tuning tasks call scikit-learn through a host callback). Printed
besides: how many asks after the initial design repeat a value observed before them in the same
run (the same configuration re-asked, or one on a plateau)::

    uv run python benchmarks/mixed_selection.py --algorithm gp-ei --options '{}' \
        '{"acq_optimizer": {"min_distance": 0.05}}' --key 3 --sequential \
        --problems rf_friedman1 rf_breast_cancer knn_iris_nll sgd_breast_cancer_nll additive_terms \
        permuted_hartmann integer

With ``--out FILE`` each setting's per-seed best values and repeated asks are kept in the JSON
file ``FILE`` under the problem, algorithm, options, seeds, key, budget and ``--sequential``,
and a setting found there is read instead of run (its row says ``stored``), so a later screen
compares new settings against the stored baseline without running it again. The file does not
know the library's version: remove it when a change moves the runs.
"""

from __future__ import annotations

import argparse
import itertools
import json
import pathlib
import time

import jax
import jax.numpy as jnp
import numpy as np

import nbo_jax as nbo
from nbo_jax import comparison
from nbo_jax.algorithms.neural_bo import CATEGORICAL_EI_RAW_SAMPLES, PRESETS
from nbo_jax.analysis import environment_info
from nbo_jax.analysis.stats import welch_one_sided
from nbo_jax.benchmarks.synthetic import hartmann6, levy, rastrigin, rosenbrock, styblinski_tang
from nbo_jax.benchmarks.tuning import SELECTION
from nbo_jax.search_space import Categorical, Continuous, Integer, search_space
from nbo_jax.types import Problem


def _three_hump_camel(z):
    return 2.0 * z[0] ** 2 - 1.05 * z[0] ** 4 + z[0] ** 6 / 6.0 + z[0] * z[1] + z[1] ** 2


def _booth(z):
    return (z[0] + 2.0 * z[1] - 7.0) ** 2 + (2.0 * z[0] + z[1] - 5.0) ** 2


TERMS = (lambda z: _three_hump_camel(z) / 10.0 - 0.3, lambda z: _booth(z) / 100.0,
         lambda z: styblinski_tang(z) / 200.0, lambda z: jnp.sum((z - jnp.array([0.5, -0.5])) ** 2) / 4.0,
         lambda z: rastrigin(z) / 40.0)
"""``additive_terms``' five terms of ``z (2,)``: three-hump camel (minimum at 0), Booth (its
minimum outside the box), Styblinski-Tang (at a corner), a shifted sphere and Rastrigin."""
CHOICES = ((0, 3, 1, 4), (1, 0, 2, 3), (2, 4, 1, 0, 3))
"""The term each choice of the three categorical parameters of ``additive_terms`` takes."""


WIDE_CHOICES = ((0, 3, 1, 4, 2, 1, 3, 4), (1, 0, 2, 3, 4, 2, 1, 3), (2, 4, 1, 0, 3, 4))
"""The term each choice of the three categorical parameters of ``wide_terms`` takes."""


def additive_terms(choices=CHOICES, name: str = "additive_terms") -> Problem:
    """Three categories choosing additive terms of two continuous inputs (module doc); minimum
    -0.9 at ``(0, 1, 3, 0, 0)`` (with ``choices``' default, :data:`CHOICES`)."""
    space = search_space([Categorical(f"h{i + 1}", tuple(range(len(c)))) for i, c in enumerate(choices)]
                         + [Continuous("x1", -1.0, 1.0), Continuous("x2", -1.0, 1.0)])
    choices = [jnp.asarray(c) for c in choices]

    def f(p):
        z = 2.0 * p[3:]
        h = jnp.round(p[:3]).astype(jnp.int32)
        values = jnp.stack([t(z) for t in TERMS])  # (5,) every term at z, once
        return sum(values[c[h[i]]] for i, c in enumerate(choices))

    return Problem(name, 5, space, f, optimal_value=-0.9)


def wide_terms() -> Problem:
    """``additive_terms`` with 8, 8 and 6 choices (:data:`WIDE_CHOICES`; 24 unit-cube columns);
    minimum -0.9 at ``(0, 1, 3, 0, 0)``."""
    return additive_terms(WIDE_CHOICES, "wide_terms")


_HARTMANN_A = ((3.0, 10.0, 30.0), (0.1, 10.0, 35.0), (3.0, 10.0, 30.0), (0.1, 10.0, 35.0))
_HARTMANN_P = ((0.3689, 0.1170, 0.2673), (0.4699, 0.4387, 0.7470), (0.1091, 0.8732, 0.5547),
               (0.0381, 0.5743, 0.8828))
_HARTMANN_ALPHA = (1.0, 1.2, 3.0, 3.2)
PERMUTATIONS = ((0, 1, 2), (2, 0, 1), (1, 2, 0))


def permuted_hartmann() -> Problem:
    """Hartmann-3 (Dixon & Szego 1978) whose categories permute its inputs and add a penalty
    (module doc); minimum about -3.86 (the penalty-free choice ``k = 2``)."""
    space = search_space([Categorical("perm", (0, 1, 2)), Categorical("k", (0, 1, 2, 3, 4)),
                          Continuous("a", 0.0, 1.0), Continuous("b", 0.0, 1.0), Continuous("c", 0.0, 1.0)])
    A, P, alpha = jnp.asarray(_HARTMANN_A), jnp.asarray(_HARTMANN_P), jnp.asarray(_HARTMANN_ALPHA)
    perms = jnp.asarray(PERMUTATIONS)

    def f(p):
        x = p[2:][perms[jnp.round(p[0]).astype(jnp.int32)]]
        k = jnp.round(p[1])
        h = -jnp.sum(alpha * jnp.exp(-jnp.sum(A * (x - P) ** 2, axis=1)))
        return h + 0.3 * jnp.abs(k - 2.0) * jnp.mean(x) + 0.2 * (k == 4)

    return Problem("permuted_hartmann", 5, space, f, optimal_value=None)


def _half_integer(name: str, f, low: float, high: float, n_int: int, k_low: int, k_high: int, dim: int = 6,
                  scale: float = 1.0) -> Problem:
    """``f`` of ``dim`` inputs, the first ``dim - n_int`` continuous in ``[low, high]``, the
    last ``n_int`` integers in ``{k_low, ..., k_high}`` divided by ``scale``."""
    space = search_space([Continuous(f"x{i}", low, high) for i in range(dim - n_int)]
                         + [Integer(f"k{i}", k_low, k_high) for i in range(n_int)])
    c = dim - n_int
    return Problem(name, dim, space, lambda p: f(jnp.concatenate([p[:c], p[c:] / scale])), optimal_value=None)


def integer_levy() -> Problem:
    """Levy-6 with three integer inputs (module doc); minimum 0 at ``(1, ..., 1)``."""
    return _half_integer("integer_levy", levy, -5.0, 5.0, 3, -5, 5)


def integer_styblinski_tang() -> Problem:
    """Styblinski-Tang-6 with three integer inputs (module doc)."""
    return _half_integer("integer_styblinski_tang", styblinski_tang, -5.0, 5.0, 3, -5, 5)


def integer_hartmann6() -> Problem:
    """Hartmann-6 (Dixon & Szego 1978) with three inputs on the grid ``k / 10`` (module doc)."""
    return _half_integer("integer_hartmann6", hartmann6, 0.0, 1.0, 3, 0, 10, scale=10.0)


def integer_rosenbrock() -> Problem:
    """Rosenbrock-4 / 100 with two integer inputs (module doc); minimum 0 at ``(1, 1, 1, 1)``."""
    return _half_integer("integer_rosenbrock", lambda x: rosenbrock(x) / 100.0, -2.0, 2.0, 2, -2, 2, dim=4)


PROBLEMS = {"additive_terms": additive_terms, "permuted_hartmann": permuted_hartmann}
"""The problems run when ``--problems`` is not given."""
INTEGER = {"integer_levy": integer_levy, "integer_styblinski_tang": integer_styblinski_tang,
           "integer_hartmann6": integer_hartmann6, "integer_rosenbrock": integer_rosenbrock}
"""The integer-space problems (``--problems integer``)."""
ALL = {**PROBLEMS, "wide_terms": wide_terms, **INTEGER, **SELECTION}


def best_values(problem: Problem, nu: float | None, seeds: int, key: int, n_init: int, n_iter: int,
                sequential: bool = False, **options) -> np.ndarray:
    """``(seeds,)`` the best value of each seed of Neural-BO with ``nu`` and ``options`` (e.g.
    ``input_embedding``, ``category_weight``, ``categorical_acquisition``), the seeds vmapped
    unless ``sequential`` (:func:`nbo_jax.comparison.run_methods`)."""
    if nu is not None and options.get("categorical_acquisition") is None and "acquisition" not in options:
        # a given nu alone makes the Thompson sample ask on categories; the preset's EI asks there
        options = dict(options, categorical_acquisition=PRESETS["default"]["categorical_acquisition"])
    return algorithm_best_values(problem, "neural-bo", dict(options, nu=nu), seeds, key, n_init, n_iter, sequential)[0]


def repeated_asks(y: np.ndarray, n_init: int) -> int:
    """How many asks after the first ``n_init`` rows of ``y (seeds, n)`` equal a value observed
    before them in the same seed's run (a configuration re-asked, or another on a plateau)."""
    return sum(int(np.any(row[:i] == row[i])) for row in y for i in range(n_init, row.shape[0]))


def algorithm_best_values(problem: Problem, name: str, options: dict, seeds: int, key: int, n_init: int, n_iter: int,
                          sequential: bool = False) -> tuple[np.ndarray, int]:
    """``((seeds,) best values, repeated asks)`` of ``nbo.registry.get(name, **options)`` on
    ``problem`` (:func:`nbo_jax.comparison.run_methods`, the seeds vmapped unless
    ``sequential``; :func:`repeated_asks`)."""
    keys = jax.random.split(jax.random.key(key), seeds)
    algo = nbo.registry.get(name, **options)
    hists, _ = comparison.run_methods(problem, {name: algo}, keys, n_init=n_init, n_iter=n_iter, progress=False,
                                      verbose=False, vmap_seeds=not sequential)
    h = hists[name]
    return np.asarray(h["best_f"][:, -1], np.float64), repeated_asks(np.asarray(h["y"], np.float64), n_init)


def _json_options(text: str) -> dict:
    """One ``--options`` value: a JSON object (``argparse`` reports the error naming the flag)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"not JSON ({err}): {text!r}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"must be a JSON object of keyword arguments, got {text!r}")
    return value


NEURAL_BO_FLAGS = ("nu", "input_embedding", "category_weight", "categorical_acquisition", "outcome_transform",
                   "boundary_penalty", "acquisition", "raw_samples")
"""The flags that set Neural-BO only (refused with another ``--algorithm``)."""


def screen(args) -> int:
    """``--algorithm`` other than Neural-BO: each ``--options`` setting on each problem."""
    print(f"{args.algorithm}, {args.seeds} seeds from key {args.key}, {args.n_init} + {args.n_iter} evaluations, "
          f"noise-free; median [25%, 75%] and mean of the best value, asks repeating an earlier value; "
          f"one-sided Welch p that the mean is lower, then higher, than with the first setting\n")
    print("| problem | options | best value | mean | repeated asks | p lower | p higher |\n|---|---|---|---|---|---|---|")
    path = pathlib.Path(args.out) if args.out else None
    stored = json.loads(path.read_text()) if path is not None and path.exists() else {}
    for name in args.problems:
        problem = None
        first = None
        for options in args.options:
            t0 = time.perf_counter()
            entry = stored_key(name, args, options)
            if entry in stored:
                v, repeats, took = np.asarray(stored[entry]["best"], np.float64), stored[entry]["repeats"], "stored"
            else:
                problem = ALL[name]() if problem is None else problem  # built once, only when run
                v, repeats = algorithm_best_values(problem, args.algorithm, options, args.seeds, args.key,
                                                   args.n_init, args.n_iter, args.sequential)
                took = f"{time.perf_counter() - t0:.0f} s"
                if path is not None:
                    stored[entry] = {"best": v.tolist(), "repeats": repeats, "environment": environment_info()}
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(json.dumps(stored, indent=1))
            q = np.percentile(v, [50, 25, 75])
            p = " | " if first is None else f"{welch_one_sided(first, v):.3g} | {welch_one_sided(v, first):.3g}"
            first = v if first is None else first
            print(f"| {name} | `{json.dumps(options)}` | {q[0]:.5g} [{q[1]:.5g}, {q[2]:.5g}] | {v.mean():.5g} | "
                  f"{repeats}/{args.seeds * args.n_iter} | {p} |  ({took})", flush=True)
    return 0


def stored_key(problem: str, args, options: dict) -> str:
    """The ``--out`` file's key of one screened setting: every flag that moves its runs."""
    return json.dumps([problem, nbo.registry.canonical_name(args.algorithm), options, args.seeds, args.key,
                       args.n_init, args.n_iter, args.sequential], sort_keys=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problems", nargs="+", choices=list(ALL) + ["integer"], default=list(PROBLEMS))
    parser.add_argument("--nu", nargs="+", type=float, default=[0.25, 0.5])
    parser.add_argument("--input-embedding", nargs="+", default=["auto"], choices=["auto", "circle", "linear"])
    parser.add_argument("--category-weight", nargs="+", type=lambda v: v if v == "fit" else float(v), default=[None],
                        help="floats or 'fit'; default: the preset's (fit)")
    parser.add_argument("--categorical-acquisition", nargs="+", default=[None], choices=["ei", "thompson"],
                        help="default: the preset's (ei)")
    parser.add_argument("--outcome-transform", nargs="+", default=[None],
                        help="outcome transforms (nbo_jax.outcome.OUTCOME_TRANSFORMS); default: the preset's")
    parser.add_argument("--boundary-penalty", nargs="+", type=float, default=[None],
                        help="the network's boundary penalty kappa (neural_bo(boundary_penalty=)); default: the preset's")
    parser.add_argument("--acquisition", nargs="+", default=["thompson"], choices=["thompson", "ei"],
                        help="thompson: the preset's; ei: expected improvement at the best of 512 raw samples")
    parser.add_argument("--raw-samples", type=int, default=None,
                        help="acq_optimizer raw_samples (default: the preset's; 512 for the categories' EI)")
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--key", type=int, default=0)
    parser.add_argument("--n-init", type=int, default=5)
    parser.add_argument("--n-iter", type=int, default=40)
    parser.add_argument("--algorithm", default="neural-bo",
                        help="a registry name (nbo.registry.get); default neural-bo, set by the flags above")
    parser.add_argument("--options", nargs="+", type=_json_options, default=None,
                        help="with another --algorithm: JSON objects of its keyword arguments, one per setting "
                             "(default: '{}')")
    parser.add_argument("--sequential", action="store_true", help="run the seeds one after another")
    parser.add_argument("--out", default=None,
                        help="with another --algorithm: a JSON file to keep and reuse each setting's per-seed results "
                             "(each with nbo_jax.analysis.environment_info(): versions, machine, source commit)")
    args = parser.parse_args(argv)
    args.problems = [n for name in args.problems for n in (INTEGER if name == "integer" else [name])]
    try:
        algorithm = nbo.registry.canonical_name(args.algorithm)
    except ValueError as err:
        parser.error(f"--algorithm: {err}")
    if algorithm != "neural-bo":
        given = [f"--{flag.replace('_', '-')}" for flag in NEURAL_BO_FLAGS
                 if getattr(args, flag) != parser.get_default(flag)]
        if given:
            parser.error(f"{', '.join(given)} set(s) Neural-BO only; with --algorithm {args.algorithm} give "
                         f"settings as --options")
        args.options = args.options or [{}]
        return screen(args)
    if args.options is not None:
        parser.error("--options sets the keyword arguments of another --algorithm; Neural-BO's are the flags")
    if args.out is not None:
        parser.error("--out keeps the settings of another --algorithm's screen; Neural-BO's flags print only")
    print(f"Neural-BO, {args.seeds} seeds, {args.n_init} + {args.n_iter} evaluations, noise-free; "
          f"median [25%, 75%] and mean of the best value; one-sided Welch p that the mean is lower "
          f"than with the first setting\n")
    print("| problem | nu | input_embedding | category_weight | categorical_acquisition | acquisition | "
          "outcome_transform | boundary_penalty | best value | mean | p |\n|---|---|---|---|---|---|---|---|---|---|---|")
    settings = list(itertools.product(args.nu, args.input_embedding, args.category_weight, args.categorical_acquisition,
                                      args.acquisition, args.outcome_transform, args.boundary_penalty))
    extra = {} if args.raw_samples is None else {"acq_optimizer": {"raw_samples": args.raw_samples}}
    ei = dict(acquisition=nbo.acquisition.ei(),
              acq_optimizer=dict(raw_samples=args.raw_samples or CATEGORICAL_EI_RAW_SAMPLES, steps=0))
    for name in args.problems:
        problem = ALL[name]()
        finals = {}
        for setting in settings:
            nu, e, w, a, acq, tr, bp = setting
            t0 = time.perf_counter()
            finals[setting] = v = best_values(problem, None if acq == "ei" else nu, args.seeds, args.key, args.n_init,
                                              args.n_iter, args.sequential, input_embedding=e, category_weight=w,
                                              categorical_acquisition=a, outcome_transform=tr, boundary_penalty=bp,
                                              **(ei if acq == "ei" else extra))
            q = np.percentile(v, [50, 25, 75])
            p = "" if setting == settings[0] else f"{welch_one_sided(finals[settings[0]], v):.3g}"
            print(f"| {name} | {'-' if acq == 'ei' else f'{nu:g}'} | {e} | {'preset' if w is None else w} | "
                  f"{a or 'preset'} | {acq} | {tr or 'preset'} | {'preset' if bp is None else f'{bp:g}'} | "
                  f"{q[0]:.4g} [{q[1]:.4g}, {q[2]:.4g}] | {v.mean():.4g} | {p} |"
                  f"  ({time.perf_counter() - t0:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
