"""Reproduce the thesis' Neural-BO comparison (seed 004, Section 3.4, Tables 3.1 and 3.2) at a
size a 2-core CPU finishes in under an hour.

Problems: Ackley, Levy, Michalewicz at d = 10 and 20 (``--large`` adds d = 50 and 100), paper
noise (variance = 1% of the range). Methods: Neural-BO (reference) against NeuralGreedy,
GP-UCB, GP-TS, GP-EI, DNGO, the random forest (``rf-ei``, SMAC's surrogate with EI) and random
search. Every method sees the same initial points per seed.

Usage::

    uv run python benchmarks/reproduce_neural_bo_table.py --out results/neural_bo_table
    uv run python benchmarks/reproduce_neural_bo_table.py --seeds 10 --iterations 300 --large

Writes per problem a folder with histories and ``regret.png``, and at the top
``table_summary.md``, ``table_ks.md``/``.csv`` (Table 3.1) and ``table_welch.md``/``.csv``
(Table 3.2), and prints the three tables.
"""

from __future__ import annotations

from _study import run_from_args, study_parser

import nbo_jax as nbo

METHODS = ["neural-bo", "neural-greedy", "gp-ucb", "gp-ts", "gp-ei", "dngo", "rf-ei", "random"]


def main():
    ap = study_parser(__doc__, problems=["ackley", "levy", "michalewicz"], methods=METHODS, iterations=100,
                      out="results/neural_bo_table")
    ap.add_argument("--dims", type=int, nargs="+", default=[10, 20])
    ap.add_argument("--large", action="store_true", help="add d = 50 and 100")
    ap.add_argument("--width", type=int, default=200, help="width of Neural-BO and NeuralGreedy")
    args = ap.parse_args()

    dims = list(args.dims) + ([50, 100] if args.large else [])

    def algorithms(problem):
        return {m: nbo.algorithms.get(m, **({"width": args.width} if m in ("neural-bo", "neural-greedy") else {}))
                for m in args.methods}

    problems = ((f"{name}_d{d}", nbo.benchmarks.get(name, dim=d, noise_std="paper"))
                for name in args.problems for d in dims)
    run_from_args(args, problems, algorithms, script="reproduce_neural_bo_table",
                  welch_title="Table 3.2: one-sided Welch t-tests vs {reference} (p, BH decision)")


if __name__ == "__main__":
    main()
