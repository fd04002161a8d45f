"""Swap one component between BoTorch's GP-EI loop and ours: which one holds the gap?

Issue 23's Levy-10 GP-EI gap (ours 3.2, BoTorch 1.0 over 10 seeds) survived every change
made to our loop alone. This script runs one BO loop in Python per seed, float64, in which
each step's **hyperparameter fit** and **acquisition maximizer** come from either library:

- ``--fit ours``: ``gp_bo(acquisition="ei")``'s state, told every observation (its own
  refit schedule and MAP fit); ``--fit botorch``: ``SingleTaskGP`` with ``Standardize``
  refitted by ``fit_gpytorch_mll`` at every step, as ``botorch_baseline.py``.
- ``--optimizer ours``: ``gp_bo``'s ``ask`` on our posterior with the chosen hyperparameters
  (with our fit: the state exactly as ``gp_bo`` keeps it); ``--optimizer botorch``: ``optimize_acqf(LogExpectedImprovement,
  num_restarts=10, raw_samples=512)`` on a ``SingleTaskGP`` holding the chosen
  hyperparameters and the same standardized targets, ``best_f`` the best one.

Both fits model the same standardized targets: ours divides by the population standard
deviation, BoTorch's ``Standardize`` by the unbiased one, so a BoTorch fit ``(l, s_n^2, c)``
on ``z = -(y - m) / s_unb`` is the GP ``(l, s_f^2 = 1/r^2, s_n^2/r^2, -c/r)`` on ours,
``r = s_pop / s_unb`` (exact, not an approximation). The initial design is BoTorch's loop's
(scrambled Sobol, seeded by the seed) and the noise is BoTorch's test function's, so
``--fit botorch --optimizer botorch`` is ``botorch_baseline.py``'s loop (its LogEI maximized on
the same posterior written without the outcome transform).

    python3 -m uv run --with botorch python benchmarks/botorch_swap.py --fit botorch \\
        --optimizer ours --seeds 10 --out results/swap

Prints each seed's best noise-free ``f`` and writes ``<out>/levy__swap-<fit>-fit-<optimizer>-opt.json``
in ``sample_efficiency.py``'s record format (its ``--table-only`` mode compares them);
``--trace`` also maximizes every step's LogEI with the other optimizer and saves both values.
"""

import argparse
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from botorch_baseline import botorch_functions, run_seeds
from sample_efficiency import BOTORCH


def run_seed(problem: str, fit: str, optimizer: str, seed: int, n_init: int, iterations: int,
             trace: list | None = None) -> float:
    """One swapped loop; returns the best noise-free ``f`` (minimization) over all evaluations.

    With ``trace`` (a list), both optimizers maximize every step's LogEI and a row ``[n,
    LogEI at our ask, LogEI at BoTorch's, max-norm distance]`` is appended per step (LogEI of
    the step's GP in BoTorch's twin, :func:`botorch_twin`); the step goes on with ``optimizer``'s."""
    import jax
    import jax.numpy as jnp
    import torch
    from botorch import fit_gpytorch_mll
    from botorch.acquisition import LogExpectedImprovement
    from botorch.models import SingleTaskGP
    from botorch.models.transforms.outcome import Standardize
    from botorch.optim import optimize_acqf
    from botorch.utils.transforms import unnormalize
    from gpytorch.mlls import ExactMarginalLogLikelihood
    from torch.quasirandom import SobolEngine

    import nbo_jax as nbo
    from nbo_jax import gp_model as gpm

    dim, noise, _, _ = BOTORCH[problem]
    fn = botorch_functions()[problem](dim=dim, noise_std=noise, negate=True).to(torch.float64)
    torch.manual_seed(seed)
    unit = torch.stack([torch.zeros(dim), torch.ones(dim)]).to(torch.float64)
    x = SobolEngine(dim, scramble=True, seed=seed).draw(n_init).to(torch.float64)
    y = -fn(unnormalize(x, fn.bounds))  # noisy, minimization
    f = fn.evaluate_true(unnormalize(x, fn.bounds))

    algo = nbo.gp_bo(acquisition="ei")
    box = nbo.Bounds(jnp.zeros(dim), jnp.ones(dim))
    state = jax.jit(algo.init, static_argnames="capacity")(
        jax.random.key(seed), jnp.asarray(x.numpy()), jnp.asarray(y.numpy()), bounds=box, capacity=n_init + iterations)
    tell, ask = jax.jit(algo.tell), jax.jit(algo.ask)
    condition = jax.jit(gpm.condition, static_argnums=0)
    key = jax.random.key(10_000 + seed)

    def botorch_twin(params, y_std, n):
        """A ``SingleTaskGP`` (no outcome transform) equal to our GP ``params`` on ``y_std``:
        targets ``w = -a y_std``, ``a = 1 / s_f`` (BoTorch's RBF has no outputscale), noise
        ``a^2 s_n^2``, constant ``-a c``; returns it with its LogEI (``best_f = max w``), whose
        maximizer is our LogEI's."""
        a = float(np.exp(-0.5 * params.log_outputscale))
        w = -a * torch.as_tensor(np.array(y_std[:n]))[:, None]
        model = SingleTaskGP(x, w)
        model.covar_module.lengthscale = torch.as_tensor(np.exp(np.array(params.log_lengthscale)))[None]
        model.likelihood.noise = torch.as_tensor([a * a * float(np.exp(params.log_noise))])
        model.mean_module.constant = torch.as_tensor(-a * float(params.constant))
        model.eval()
        return LogExpectedImprovement(model, best_f=w.max())

    for _ in range(iterations):
        n = x.shape[0]
        data = state.data
        y_std = data.standardized()[0]
        if fit == "botorch":
            r = float(np.sqrt((n - 1) / n))  # population / unbiased standard deviation
            model = SingleTaskGP(x, -y.unsqueeze(-1), outcome_transform=Standardize(m=1))
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
            ls = model.covar_module.lengthscale.detach().reshape(-1).numpy()
            params = gpm.GPParams(jnp.log(jnp.asarray(ls)), jnp.asarray(-2.0 * np.log(r)),
                                  jnp.asarray(np.log(model.likelihood.noise.item()) - 2.0 * np.log(r)),
                                  jnp.asarray(-model.mean_module.constant.item() / r))
            asked = state._replace(params=params, posterior=condition("rbf", params, data.u, y_std, data.mask, 0.0))
        else:  # the state as gp_bo keeps it: its own fit and factor
            params, asked = state.params, state
        cands = {}
        if optimizer == "ours" or trace is not None:
            key, k = jax.random.split(key)
            cands["ours"] = torch.as_tensor(np.array(ask(asked, k)))[None]
        if optimizer == "botorch" or trace is not None:
            acqf = botorch_twin(params, y_std, n)
            cands["botorch"] = optimize_acqf(acqf, bounds=unit, q=1, num_restarts=10, raw_samples=512)[0].detach()
        if trace is not None:
            with torch.no_grad():
                trace.append([n] + [acqf(cands[o][None]).item() for o in ("ours", "botorch")]
                             + [float((cands["ours"] - cands["botorch"]).abs().max())])
        cand = cands[optimizer].clamp(0.0, 1.0)
        xu = unnormalize(cand, fn.bounds)
        y_new = -fn(xu)
        x, y, f = torch.cat([x, cand]), torch.cat([y, y_new]), torch.cat([f, fn.evaluate_true(xu)])
        state = tell(state, jnp.asarray(cand.numpy()), jnp.asarray(y_new.numpy()))
    return float(f.min())


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", nargs="+", default=["levy"], choices=list(BOTORCH))
    ap.add_argument("--fit", choices=["ours", "botorch"], required=True)
    ap.add_argument("--optimizer", choices=["ours", "botorch"], required=True)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0, help="first seed; seeds are seed, seed + 1, ...")
    ap.add_argument("--n-init", type=int, default=10)
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--out", default="results/swap")
    ap.add_argument("--trace", action="store_true",
                    help="maximize each step's LogEI with both optimizers; write <out>/<problem>__<method>__trace<seed>.npy "
                         "(rows: n, LogEI at our ask, at BoTorch's, max-norm distance)")
    args = ap.parse_args(argv)
    import jax
    import torch

    jax.config.update("jax_enable_x64", True)
    torch.set_num_threads(1)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    method = f"swap-{args.fit}-fit-{args.optimizer}-opt"

    def one_seed(p, s):
        trace = [] if args.trace else None
        best = run_seed(p, args.fit, args.optimizer, s, args.n_init, args.iterations, trace)
        if trace is not None:
            np.save(out / f"{p}__{method}__trace{s}.npy", np.asarray(trace))
        return best

    run_seeds(out, method, args, one_seed)


if __name__ == "__main__":
    main()
