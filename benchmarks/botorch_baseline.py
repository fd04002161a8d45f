"""BoTorch's GP-BO measured the same way as ours: the baseline column of ``sample_efficiency.py``.

The issues quote BoTorch's medians over 3 seeds; a claim needs at least 10 seeds of the baseline
too. This script runs BoTorch's standard loop seed by seed and writes the same JSON record as
``sample_efficiency.py`` (``<out>/<problem>__botorch-gp-ei.json`` or ``...-gp-ucb``), so its
``--table-only`` mode can put BoTorch's seeds beside ours and test them:

    python3 -m uv run --no-project --with botorch python benchmarks/botorch_baseline.py \\
        --problems levy --acquisition ei --seeds 10 --out results/se
    uv run python benchmarks/sample_efficiency.py --table-only --problems levy \\
        --methods botorch-gp-ei gp-ei gp-ucb neural-bo --out results/se

The loop (BoTorch 0.18, float64, as in issue 11): ``n_init`` scrambled Sobol points, then per
iteration ``SingleTaskGP`` on unit-cube inputs with its default priors and a ``Standardize``
outcome transform refitted by ``fit_gpytorch_mll``, ``LogExpectedImprovement(best_f = max of
the noisy observations)`` or ``UpperConfidenceBound(beta=2)``, and ``optimize_acqf(q=1,
num_restarts=10, raw_samples=512)``. BoTorch maximizes, so it sees ``-(f + noise)``; the record
holds the best noise-free ``f`` among the evaluated points, as ``History.best_f`` does. The test
functions are BoTorch's own (same definitions and domains as ``nbo_jax.benchmarks``).

BoTorch and torch are not dependencies of nbo_jax; ``uv run --with botorch`` installs them
into a throwaway environment.
"""

import argparse
import json
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from sample_efficiency import BOTORCH  # problem -> dim, noise std, quoted medians


def botorch_functions() -> dict:
    """Problem name -> BoTorch's test-function class (imported on call: BoTorch is optional)."""
    from botorch.test_functions import Ackley, Levy, Michalewicz

    return {"ackley": Ackley, "levy": Levy, "michalewicz": Michalewicz}


def run_seed(problem_name: str, acquisition: str, seed: int, n_init: int, iterations: int) -> float:
    """One BoTorch run; returns the best noise-free ``f`` (minimization) over all evaluations."""
    import torch
    from botorch import fit_gpytorch_mll
    from botorch.acquisition import LogExpectedImprovement, UpperConfidenceBound
    from botorch.models import SingleTaskGP
    from botorch.models.transforms.outcome import Standardize
    from botorch.optim import optimize_acqf
    from botorch.utils.transforms import unnormalize
    from gpytorch.mlls import ExactMarginalLogLikelihood
    from torch.quasirandom import SobolEngine

    dim, noise, _, _ = BOTORCH[problem_name]
    cls = botorch_functions()[problem_name]
    fn = cls(dim=dim, noise_std=noise, negate=True).to(torch.float64)
    torch.manual_seed(seed)
    unit = torch.stack([torch.zeros(dim), torch.ones(dim)]).to(torch.float64)
    x = SobolEngine(dim, scramble=True, seed=seed).draw(n_init).to(torch.float64)
    y = fn(unnormalize(x, fn.bounds)).unsqueeze(-1)  # noisy, negated
    f = fn.evaluate_true(unnormalize(x, fn.bounds))  # noise-free (negate applies to forward only)
    for _ in range(iterations):
        model = SingleTaskGP(x, y, outcome_transform=Standardize(m=1))
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        if acquisition == "ei":
            acqf = LogExpectedImprovement(model, best_f=y.max())
        else:
            acqf = UpperConfidenceBound(model, beta=2.0)
        cand, _ = optimize_acqf(acqf, bounds=unit, q=1, num_restarts=10, raw_samples=512)
        xu = unnormalize(cand, fn.bounds)
        x = torch.cat([x, cand])
        y = torch.cat([y, fn(xu).unsqueeze(-1)])
        f = torch.cat([f, fn.evaluate_true(xu)])
    return float(f.min())


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", nargs="+", default=list(BOTORCH), choices=list(BOTORCH))
    ap.add_argument("--acquisition", choices=["ei", "ucb"], default="ei")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0, help="first seed; seeds are seed, seed + 1, ...")
    ap.add_argument("--n-init", type=int, default=10)
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument("--out", default="results/sample_efficiency")
    args = ap.parse_args(argv)
    import botorch
    import torch

    torch.set_num_threads(args.threads)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    method = f"botorch-gp-{args.acquisition}"
    run_seeds(out, method, args, lambda p, s: run_seed(p, args.acquisition, s, args.n_init, args.iterations),
              botorch=botorch.__version__, torch=torch.__version__)


def run_seeds(out: pathlib.Path, method: str, args, one_seed, **extra) -> None:
    """``one_seed(problem, seed) -> best f`` for every problem of ``args.problems`` and seed
    ``args.seed, ..., args.seed + args.seeds - 1`` in sequence, printing each; then
    :func:`write_record` per problem (``extra`` joins the record)."""
    for p in args.problems:
        finals, t0 = [], time.perf_counter()
        for s in range(args.seed, args.seed + args.seeds):
            finals.append(one_seed(p, s))
            print(f"  {p} {method} seed {s}: best f {finals[-1]:.4g} ({time.perf_counter() - t0:.0f} s)", flush=True)
        write_record(out, p, method, finals, time.perf_counter() - t0, args, **extra)


def write_record(out: pathlib.Path, problem: str, method: str, finals: list, run_s: float, args, **extra) -> None:
    """Write ``<out>/<problem>__<method>.json`` in ``sample_efficiency.py``'s record format
    (float64, CPU, seeds in sequence; ``args`` gives the seeds and budget) and print the median."""
    dim, noise, _, _ = BOTORCH[problem]
    rec = dict(problem=problem, method=method, dim=dim, noise_std=noise,
               optimal_value=float(botorch_functions()[problem](dim=dim).optimal_value), final_best_f=finals,
               compile_s=0.0, run_s=run_s, seeds=args.seeds, seed=args.seed, n_init=args.n_init,
               iterations=args.iterations, precision="float64", device="cpu", seeds_vmapped=False, **extra)
    (out / f"{problem}__{method}.json").write_text(json.dumps(rec, indent=1))
    print(f"{problem} {method}: median best f {np.median(finals):.4g} [{np.percentile(finals, 25):.4g}, "
          f"{np.percentile(finals, 75):.4g}] over {len(finals)} seeds, {run_s:.0f} s", flush=True)


if __name__ == "__main__":
    main()
