"""The landscape of a tuning task on a grid: its best configuration, and how rare good ones are.

Evaluates a task of :mod:`nbo_jax.benchmarks.tuning` at every configuration of a grid over its
space (every value of an integer parameter, every choice of a categorical one, ``--levels``
values of a continuous one, evenly spaced on its scale: log-spaced where it is log) and
prints, per task:

- the grid's size, its best loss and the configuration that takes it;
- random search's median best value after ``--budget`` evaluations drawn from the grid, the
  grid's ``1 - 2^(-1/B)`` quantile (the median of the minimum of ``B`` independent draws), which
  is the 0 of Bayesmark's normalized score (Turner et al. 2021) up to the grid's resolution;
- the share of the grid's configurations whose score ``(zero - loss) / (zero - best)`` reaches
  ``--score`` (1 = the grid's best): how rare the configurations are that a method must find to
  reach that score. A few configurations apart from their neighbours (a needle) leave a
  surrogate little to rank them by.

::

    uv run python benchmarks/landscape.py --tasks rf_diabetes rf_friedman1 --out results/landscape
    uv run python benchmarks/landscape.py --tasks svc_breast_cancer svc_breast_cancer_nll --levels 20

An evaluation takes 10-60 ms (Platt scaling makes ``svc_breast_cancer_nll``'s slower); the
forest's grid has 15 x 10 x 32 x 2 = 9600 configurations at 10 levels (about 4 minutes on one
core). ``--out DIR`` keeps each task's grid and losses as ``DIR/<task>.json`` (with
:func:`nbo_jax.analysis.environment_info`: versions, machine, source commit) and reuses them.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import pathlib

import numpy as np

from nbo_jax.analysis import environment_info
from nbo_jax.benchmarks import tuning
from nbo_jax.search_space import Categorical, Continuous, Integer, SearchSpace


def parameter_values(parameter, levels: int) -> list:
    """The grid values of one parameter: every value of an :class:`Integer` (its step), every
    choice of a :class:`Categorical`, ``levels`` values of a :class:`Continuous` from its low
    to its high end, evenly spaced on its (log) scale, as Python floats.

    Raises:
        ValueError: ``levels`` below 2; a parameter of another type."""
    if levels < 2:
        raise ValueError(f"levels must be at least 2, got {levels}")
    if isinstance(parameter, Integer):
        return list(range(parameter.low, parameter.high + 1, parameter.step))
    if isinstance(parameter, Categorical):
        return list(parameter.choices)
    if isinstance(parameter, Continuous):
        space = np.geomspace if parameter.log else np.linspace
        return [float(v) for v in space(parameter.low, parameter.high, levels)]
    raise ValueError(f"parameter must be Continuous, Integer or Categorical, got {type(parameter).__name__}")


def grid_losses(space: SearchSpace, loss, levels: int) -> tuple[list[list], np.ndarray]:
    """The grid's values per parameter and ``loss(config)`` at every configuration:
    ``(values, y)`` with ``y`` float64 of shape ``(len(values[0]), ..., len(values[P-1]))``;
    ``config`` a dict by parameter name (typed values, as :func:`nbo_jax.benchmarks.tuning.configuration`)."""
    values = [parameter_values(p, levels) for p in space.parameters]
    names = [p.name for p in space.parameters]
    y = np.array([loss(dict(zip(names, combo))) for combo in itertools.product(*values)], np.float64)
    return values, y.reshape([len(v) for v in values])


def random_search_median_best(y: np.ndarray, budget: int) -> float:
    """Random search's median best value after ``budget`` uniform draws from the grid (with
    replacement): the grid's ``1 - 2^(-1/budget)`` quantile (lower interpolation)."""
    return float(np.quantile(y.ravel(), 1.0 - 0.5 ** (1.0 / budget), method="lower"))


def summary(task: str, values: list[list], y: np.ndarray, budget: int, score: float) -> dict:
    """One task's row: ``configurations``, ``best`` and ``best_config`` (its values, one per
    parameter), ``random_median`` (at ``budget``) and ``share``: the fraction of the
    configurations whose normalized score reaches ``score`` (``reached`` of them)."""
    zero = random_search_median_best(y, budget)
    best = float(y.min())
    where = np.unravel_index(int(np.argmin(y)), y.shape)
    reached = (zero - y) >= score * (zero - best)
    return {"task": task, "configurations": int(y.size), "best": best,
            "best_config": [v[i] for v, i in zip(values, where)], "random_median": zero,
            "share": float(reached.mean()), "reached": int(reached.sum())}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", nargs="+", default=list(tuning.TUNING), help="tuning tasks (TUNING and SELECTION)")
    parser.add_argument("--levels", type=int, default=10, help="values per continuous parameter")
    parser.add_argument("--budget", type=int, default=45, help="evaluations of random search (its median best is the score's 0)")
    parser.add_argument("--score", type=float, default=0.5, help="normalized score whose share of the grid is printed")
    parser.add_argument("--out", default=None, help="folder to keep and reuse each task's grid")
    args = parser.parse_args(argv)
    known = {**tuning.TUNING, **tuning.SELECTION}
    for task in args.tasks:
        if task not in known:
            parser.error(f"--tasks: unknown task {task!r}; known: {sorted(known)}")
    if args.levels < 2:
        parser.error(f"--levels must be at least 2, got {args.levels}")
    if not 0 < args.score <= 1:
        parser.error(f"--score must be in (0, 1], got {args.score}")
    if args.budget < 1:
        parser.error(f"--budget must be at least 1, got {args.budget}")
    out = pathlib.Path(args.out) if args.out else None
    print(f"{args.levels} levels per continuous parameter; random search's median best after {args.budget} draws\n")
    print(f"| task | configurations | best | its configuration | random search's median best | score >= {args.score:g} |")
    print("|---|---|---|---|---|---|")
    for task in args.tasks:
        space = tuning.space(task)
        path = out / f"{task}.json" if out else None
        stored = json.loads(path.read_text()) if path is not None and path.exists() else None
        if stored is not None and stored["levels"] == args.levels:
            values, y = stored["values"], np.array(stored["y"], np.float64)
        else:
            values, y = grid_losses(space, functools.partial(tuning.cv_loss, task), args.levels)
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps({"levels": args.levels, "values": values, "y": y.tolist(),
                                            "environment": environment_info()}))
        row = summary(task, values, y, args.budget, args.score)
        config = ", ".join(f"{p.name}={v:.4g}" if isinstance(v, float) else f"{p.name}={v!r}"
                           for p, v in zip(space.parameters, row["best_config"]))
        print(f"| `{task}` | {row['configurations']} | {row['best']:.5g} | {config} | {row['random_median']:.5g} | "
              f"{100 * row['share']:.2g} % ({row['reached']}) |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
