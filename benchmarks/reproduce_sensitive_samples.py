"""Sensitive samples for detecting a tampered digit classifier, 49-D (Phan-Trong 2024, PhD
thesis, Section 3.5.3.1, Figure 3.3, and Section 4.3.5, Figure 4.2; He, Zhang & Lee 2018):
detection rate against the number of samples ``N_S = 1..10``.

``sensitive_samples``: Neural-BO against GP-EI and random search (Figure 3.3).
``sensitive_samples_realism``: the same objective with a learned realism constraint
(autoencoder reconstruction error of the 7 x 7 image below the 95 % quantile of held-out real
digits, standing in for the thesis' human ratings): Neural-CBO against cEI and random search
(Figure 4.2). The classifier, its 1000 tampered copies and the autoencoder are built by
:mod:`nbo_jax.benchmarks.sensitive_samples` (scikit-learn's 8 x 8 digits by default, MNIST
with ``--dataset mnist --mnist-dir DIR``). Every method sees the same initial points per seed.

The default is CPU-sized: 10 initial points + 60 evaluations, 5 seeds. ``--large`` runs 20
initial points + 480 evaluations on 10 seeds (an accelerator's size, closer to the thesis'
runs); ``--n-init``, ``--iterations`` and ``--seeds`` set any other size.

Usage::

    uv run python benchmarks/reproduce_sensitive_samples.py --out results/sensitive_samples
    uv run python benchmarks/reproduce_sensitive_samples.py --large
    uv run python benchmarks/reproduce_sensitive_samples.py --dataset mnist --mnist-dir ~/data/mnist

Writes per problem the histories and tables of :func:`nbo_jax.comparison.compare` under
``--out/<problem>/``, and ``detection_rates.png`` (median detection rate with the 25-75 %
band over seeds, one panel per problem) and ``detection_rates.csv``; prints the median
detection rate per ``N_S`` and method.
"""

from __future__ import annotations

import argparse
import csv
import pathlib

import numpy as np
from _study import run_from_args, study_parser

import nbo_jax as nbo
from nbo_jax.benchmarks import sensitive_samples as ss

PROBLEMS = ["sensitive_samples", "sensitive_samples_realism"]
METHODS = ["neural-bo", "gp-ei", "random"]
CONSTRAINED_METHODS = ["neural-cbo", "gp-cei", "random"]
LARGE = {"n_init": 20, "iterations": 480, "seeds": 10}
FIGURES = {"sensitive_samples": "Figure 3.3", "sensitive_samples_realism": "Figure 4.2 (learned realism)"}


def per_seed_rates(problem, hist) -> np.ndarray:
    """``(S, 10)`` detection rates for ``N_S = 1..10`` of each seed of one method's history."""
    feasible = hist.get("feasible") if problem.constraints is not None else None
    return np.stack([ss.detection_rates(problem, hist["x"][s], hist["f"][s], ss.N_MAX,
                                        None if feasible is None else feasible[s]) for s in range(len(hist["f"]))])


def plot(rates: dict, path: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(rates), figsize=(5.5 * len(rates), 4), squeeze=False)
    n_s = np.arange(1, ss.N_MAX + 1)
    for ax, (name, by_method) in zip(axes[0], rates.items()):
        for method, r in by_method.items():
            q25, med, q75 = np.percentile(r, [25, 50, 75], axis=0)
            (line,) = ax.plot(n_s, med, marker="o", label=method)
            ax.fill_between(n_s, q25, q75, color=line.get_color(), alpha=0.2)
        ax.set_xlabel("number of sensitive samples N_S")
        ax.set_ylabel("detection rate (median, 25-75%)")
        ax.set_title(f"{name} ({FIGURES.get(name, '')})", fontsize=10)
        ax.set_xticks(n_s)
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main():
    ap = study_parser(__doc__, problems=PROBLEMS, methods=METHODS, iterations=60, out="results/sensitive_samples")
    ap.add_argument("--constrained-methods", nargs="+", default=CONSTRAINED_METHODS,
                    help="methods for sensitive_samples_realism (the first is the reference)")
    ap.add_argument("--dataset", default="digits", choices=("digits", "mnist"))
    ap.add_argument("--mnist-dir", default=None, help="directory of the MNIST IDX files (with --dataset mnist)")
    ap.add_argument("--n-tampered", type=int, default=1000, help="tampered copies of the classifier")
    ap.add_argument("--noise-std", type=float, default=0.0, help="observation noise of -sensitivity")
    ap.add_argument("--large", action="store_true", help=f"{LARGE['n_init']} initial points + {LARGE['iterations']} "
                    f"evaluations, {LARGE['seeds']} seeds (overrides --n-init, --iterations, --seeds)")
    args = ap.parse_args()
    if args.large:
        args.n_init, args.iterations, args.seeds = LARGE["n_init"], LARGE["iterations"], LARGE["seeds"]
    builders = {"sensitive_samples": ss.sensitive_samples, "sensitive_samples_realism": ss.sensitive_samples_realism}
    unknown = sorted(set(args.problems) - set(builders))
    if unknown:
        ap.error(f"unknown problems {unknown}; choose from {sorted(builders)}")

    out = pathlib.Path(args.out)
    rates, feasible_counts = {}, {}
    for name in args.problems:
        problem = builders[name](dataset=args.dataset, mnist_dir=args.mnist_dir, n_tampered=args.n_tampered,
                                 noise_std=args.noise_std)
        meta = problem.metadata
        print(f"\n== {name}: classifier accuracy {meta['accuracy']:.4f}; {meta['n_tampered']} tampered copies "
              f"(noise std {meta['tampering_scale']:.4g} on the weights) {meta['tampered_accuracy_mean']:.4f} "
              f"+- {meta['tampered_accuracy_std']:.4f}" + (f"; realism threshold {meta['realism_threshold']:.4g} "
              f"({meta['realism_feasible_heldout']:.1%} of held-out digits feasible)" if "realism_threshold" in meta
              else ""), flush=True)
        methods = args.constrained_methods if problem.constraints is not None else args.methods
        sub = argparse.Namespace(**{**vars(args), "methods": methods, "out": str(out / name)})
        results = run_from_args(sub, [(name, problem)], lambda p, methods=methods: {m: nbo.registry.get(m)
                                                                                    for m in methods},
                                script="reproduce_sensitive_samples",
                                welch_title="one-sided Welch t-tests vs {reference} (p, BH decision)")
        hists = results[0].histories
        rates[name] = {m: per_seed_rates(problem, h) for m, h in hists.items()}
        if problem.constraints is not None:
            feasible_counts[name] = {m: h["feasible"].sum(axis=1) for m, h in hists.items()}

    out.mkdir(parents=True, exist_ok=True)
    with open(out / "detection_rates.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["problem", "method", "seed"] + [f"N_S={k}" for k in range(1, ss.N_MAX + 1)])
        for name, by_method in rates.items():
            for method, r in by_method.items():
                for s, row in enumerate(r):
                    w.writerow([name, method, s] + [f"{v:.4f}" for v in row])
    plot(rates, out / "detection_rates.png")

    n_eval = args.n_init + args.iterations
    print(f"\ndetection rate vs N_S, median over {args.seeds} seeds ({args.n_init} initial + {args.iterations} "
          f"evaluations each):")
    for name, by_method in rates.items():
        print(f"\n{name} ({FIGURES.get(name, '')}):")
        print("| method | " + " | ".join(str(k) for k in range(1, ss.N_MAX + 1)) + " | N_S=10 [q25, q75] |")
        print("|---" * (ss.N_MAX + 2) + "|")
        for method, r in by_method.items():
            q25, q75 = np.percentile(r[:, -1], [25, 75])
            print(f"| {method} | " + " | ".join(f"{v:.3f}" for v in np.median(r, axis=0)) + f" | [{q25:.3f}, {q75:.3f}] |")
        for method, counts in feasible_counts.get(name, {}).items():
            print(f"  {method}: feasible evaluations per seed (of {n_eval}): {counts.tolist()}")
    print(f"\nplot: {out / 'detection_rates.png'}; per seed: {out / 'detection_rates.csv'}")


if __name__ == "__main__":
    main()
