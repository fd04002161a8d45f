"""Reproduce the thesis' Neural-BO comparison (Phan-Trong 2024, PhD thesis, Section 3.5,
Tables 3.1 and 3.2, Figure 3.1).

Thesis protocol (the defaults): Ackley, Levy, Michalewicz at d = 10, 20, 50, 100, paper noise
(variance = 1% of the range), 10 initial points + 2000 iterations, 10 seeds; Neural-BO with
the library defaults (the reference of the tests) and with the paper preset, against
NeuralGreedy, GP-UCB, GP-TS, GP-EI, the GP with the infinite-width NTK of Neural-BO's network
(``gp-ntk``), DNGO, the random forest (``rf-ei``, SMAC's surrogate with EI) and random search. Every method sees the same initial points per seed; runs are split
into ``--segments`` compiled parts of growing capacity (same results, cost that follows the
data). Each (problem, d, method) is cached in ``<out>/<problem>_d<d>/runs/``, so the study
resumes where it stopped; a different ``--seeds``/``--iterations`` reruns a method.

Usage::

    uv run python benchmarks/reproduce_neural_bo_table.py                           # the protocol
    uv run python benchmarks/reproduce_neural_bo_table.py --dims 10 20 --seeds 5 --iterations 200

Writes per problem a folder with histories and ``regret.png`` (Figure 3.1's curves), and at the
top ``table_summary.md``, ``table_ks.md``/``.csv`` (Table 3.1: KS normality p-values) and
``table_welch.md``/``.csv`` (Table 3.2: one-sided Welch t-tests of Neural-BO against each
method, Benjamini-Hochberg), and prints the three tables.
"""

from __future__ import annotations

from _study import run_from_args, study_parser

import nbo_jax as nbo

METHODS = ["neural-bo", "neural-bo-paper", "neural-greedy", "gp-ucb", "gp-ts", "gp-ei", "gp-ntk", "dngo", "rf-ei",
           "random"]


def main():
    ap = study_parser(__doc__, problems=["ackley", "levy", "michalewicz"], methods=METHODS, iterations=2000,
                      out="results/neural_bo_table")
    ap.set_defaults(seeds=10)
    ap.add_argument("--dims", type=int, nargs="+", default=[10, 20, 50, 100])
    ap.add_argument("--width", type=int, default=None,
                    help="width of Neural-BO and NeuralGreedy (default: the library's, 500)")
    args = ap.parse_args()
    dims = args.dims
    width = {} if args.width is None else {"width": args.width}

    def make(m):
        if m == "neural-bo-paper":
            return nbo.neural_bo(preset="paper", **width)
        return nbo.registry.get(m, **(width if m in ("neural-bo", "neural-greedy") else {}))

    def algorithms(problem):
        return {m: make(m) for m in args.methods}

    problems = ((f"{name}_d{d}", nbo.benchmarks.get(name, dim=d, noise_std="paper"))
                for name in args.problems for d in dims)
    run_from_args(args, problems, algorithms, script="reproduce_neural_bo_table",
                  welch_title="Table 3.2: one-sided Welch t-tests vs {reference} (p, BH decision)")


if __name__ == "__main__":
    main()
