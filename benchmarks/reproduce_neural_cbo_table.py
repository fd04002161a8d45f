"""Reproduce the thesis' Neural-CBO comparison (seed 004, Section 4.3, Figure 4.1 and
Table 4.2) at a size a 2-core CPU finishes in under an hour.

Problems (Table 4.1 and Sections 4.3.3-4.3.4): constrained Branin (d=2, K=1), Simionescu
(2, 1), Ackley (5, 2), Hartmann (6, 1), gas transmission compressor (4, 1), speed reducer
(7, 11); paper noise (variance = 1% of the range, objective and each constraint). Methods:
Neural-CBO (reference) against cEI (GP), the ConfigOpt/UCB-C-style LCB rule on GPs and random
search (ADMMBO is not in this library). Every method sees the same initial points per seed.
The metric is log10 of the best positive regret plus violation; the Welch tests are on it.

Usage::

    uv run python benchmarks/reproduce_neural_cbo_table.py --out results/neural_cbo_table
    uv run python benchmarks/reproduce_neural_cbo_table.py --seeds 20 --iterations 200

Writes per problem a folder with histories and ``regret.png``, and at the top
``table_summary.md``, ``table_ks.md``/``.csv`` and ``table_welch.md``/``.csv`` (Table 4.2),
and prints the tables.
"""

from __future__ import annotations

from _study import run_from_args, study_parser

import nbo_jax as nbo

PROBLEMS = ["branin_constrained", "simionescu", "ackley_constrained", "hartmann6_constrained",
            "gas_transmission", "speed_reducer"]
METHODS = ["neural-cbo", "gp-cei", "gp-lcb-c", "random"]


def main():
    ap = study_parser(__doc__, problems=PROBLEMS, methods=METHODS, iterations=60, out="results/neural_cbo_table")
    ap.add_argument("--width", type=int, default=128, help="width of the Neural-CBO networks")
    ap.add_argument("--preset", default="default", choices=("default", "paper"), help="Neural-CBO preset")
    args = ap.parse_args()

    def algorithms(problem):
        kw = {"neural-cbo": {"width": args.width, "preset": args.preset}}
        return {m: nbo.registry.get(m, **kw.get(m, {})) for m in args.methods}

    problems = ((name, nbo.benchmarks.get(name, noise_std="paper")) for name in args.problems)
    run_from_args(args, problems, algorithms, script="reproduce_neural_cbo_table",
                  welch_title="Table 4.2: one-sided Welch t-tests vs {reference} (p, BH decision)")


if __name__ == "__main__":
    main()
