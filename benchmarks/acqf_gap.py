"""How close ``optimize_acqf``'s answer is to the acquisition's maximum (float64).

For posteriors taken from real runs (GP-EI, GP-UCB and GP-cEI states, Neural-BO pathwise
Thompson samples, NeuralUCB bounds), the utility that ``ask`` maximizes is captured (the
algorithm module's ``optimize_acqf`` is wrapped while ``ask`` runs un-jitted) and compared with
a scipy L-BFGS-B multi-start maximum of the same utility (jax gradient; starts: the best
``scipy_starts`` of 4096 scrambled Sobol points and the observed points). The gap is

    gap = (scipy maximum - utility at our answer) / (max - min of the utility over the Sobol points)

and a case passes when ``gap <= 1e-3`` (negative: ours is higher). ``tests/test_optimize.py``
runs this at a small size; the command below prints the distribution at a larger one.

    uv run python benchmarks/acqf_gap.py                 # d = 6, 30 + 30 points, 3 seeds
    uv run python benchmarks/acqf_gap.py --dim 10 --n-iter 60 --seeds 2
    uv run python benchmarks/acqf_gap.py --activation gelu     # smooth neural utilities
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import time

import jax
import jax.numpy as jnp
import numpy as np

TOL = 1e-3


@contextlib.contextmanager
def captured_utilities(module_name: str, store: list, optimize: bool = True):
    """Wrap ``optimize_acqf`` in the algorithm module ``module_name`` so that every call appends
    ``(utility, data, answer)`` to ``store`` (call ``ask`` un-jitted inside). With
    ``optimize=False`` the optimizer is not run (``answer`` is the first observed point): the
    utility alone is captured, and the answer comes from a jitted ``ask`` with the same key."""
    module = importlib.import_module(module_name)
    real = module.optimize_acqf

    def spy(utility, key, data, options, region=None):
        u = real(utility, key, data, options, region) if optimize else data.u[0]
        store.append((utility, data, u))
        return u

    module.optimize_acqf = spy
    try:
        yield store
    finally:
        module.optimize_acqf = real


def scipy_maximum(utility, data, n_sobol: int = 4096, n_starts: int = 32, seed: int = 0) -> tuple[float, float]:
    """``(maximum, spread)``: scipy L-BFGS-B from the best ``n_starts`` scrambled Sobol points and
    the observed points; ``spread`` = max - min of the finite utilities over the Sobol points."""
    from scipy.optimize import minimize
    from scipy.stats import qmc

    d = data.u.shape[1]
    sob = qmc.Sobol(d, seed=seed).random(n_sobol)
    f = jax.jit(utility)
    vals = np.asarray(f(jnp.asarray(sob)), dtype=float)
    fin = np.isfinite(vals)
    spread = float(vals[fin].max() - vals[fin].min())
    obs = np.asarray(data.u)[np.asarray(data.observed())]
    starts = np.concatenate([sob[np.argsort(-np.where(fin, vals, -np.inf))[:n_starts]], obs])
    vg = jax.jit(jax.value_and_grad(lambda u: -utility(u[None, :])[0]))

    def fg(u):
        v, g = vg(jnp.asarray(u))
        v = float(v)
        return (v, np.asarray(g, dtype=float)) if np.isfinite(v) else (1e30, np.zeros(d))

    best = -np.inf
    for s in starts:
        r = minimize(fg, s, jac=True, method="L-BFGS-B", bounds=[(0.0, 1.0)] * d)
        best = max(best, -float(r.fun), float(f(jnp.asarray(np.clip(r.x, 0, 1))[None])[0]))
    return best, spread


def _replayed(init, tell, x, y, c, n_init: int, wanted: set, replay: str):
    """``(t, state)`` for each ``t`` in ``wanted`` (increasing): the state on the run's first
    ``t`` points, by ``init`` on them at once (``replay="init"``) or by ``init`` on the first
    ``n_init`` and ``tell`` of the rest one by one (``"tell"``)."""
    if replay == "init":
        for t in sorted(wanted):
            yield t, init(x[:t], y[:t], c[:t])
        return
    state = init(x[:n_init], y[:n_init], c[:n_init])
    for t in range(n_init, x.shape[0] + 1):
        if t > n_init:
            state = tell(state, x[t - 1], y[t - 1], c[t - 1])
        if t in wanted:
            yield t, state


def cases(dim: int, n_init: int, n_iter: int, seeds: int, prefixes: int, neural_width: int = 64,
          gp_problems=("ackley", "levy"), neural_activation: str = "relu", replay: str = "tell"):
    """Posteriors from real runs: yields ``(label, module_name, algorithm, state)``. Each
    algorithm's state is built by ``init`` on a run's first ``n_init`` points and ``tell`` of
    the rest one by one (``replay="tell"``: as in the run, one compile of each, capacity the
    run's length), or by ``init`` on each prefix at once (``replay="init"``: one compile, the
    fits from scratch), and ``prefixes`` states from the second half of the run are yielded.
    GP-UCB/EI run on ``gp_problems``; the Neural-BO and NeuralUCB networks use
    ``neural_activation`` (the default ReLU makes their utilities piecewise smooth, with kinks;
    ``"gelu"`` smooth). Raises ``ValueError`` (when iterated) for another ``replay``."""
    import nbo_jax as nbo

    if replay not in ("tell", "init"):
        raise ValueError(f"replay must be 'tell' or 'init', got {replay!r}")
    net = dict(width=neural_width, epochs=50, activation=neural_activation)  # Neural-BO's and NeuralUCB's
    specs = [
        ("gp-ucb", "nbo_jax.bo", nbo.gp_bo(acquisition="ucb"), tuple(gp_problems), ("ucb", "ei")),
        ("gp-cei", "nbo_jax.bo", nbo.gp_bo(acquisition="cei"), ("hartmann6_constrained",), ("cei",)),
        ("neural-bo", "nbo_jax.algorithms.neural_bo", nbo.neural_bo(**net), ("ackley",), ("neural-bo", "neural-ucb")),
    ]
    for run_name, module, algo, problems, acqs in specs:
        for pname in problems:
            if pname.endswith("_constrained"):
                problem = nbo.benchmarks.get(pname)
            else:
                problem = nbo.benchmarks.get(pname, dim=dim, noise_std=0.01)
            for seed in range(seeds):
                hist = jax.jit(lambda k: nbo.run_bo(k, algo, problem, n_init=n_init, n_iter=n_iter))(
                    jax.random.key(seed))
                n = hist.x.shape[0]
                c = hist.c if hist.c is not None else jnp.zeros((n, 0))
                constrained = hist.c is not None
                for acq in acqs:
                    if acq == "neural-ucb":
                        a = nbo.neural_ucb(**net)
                    elif acq == "neural-bo":
                        a = algo
                    else:
                        a = nbo.gp_bo(acquisition=acq)
                    init = jax.jit(lambda x, y, c: a.init(jax.random.key(1), x, y, c if constrained else None,
                                                          bounds=problem.bounds, capacity=n))
                    tell = jax.jit(lambda s, x, y, c: a.tell(s, x, y, c if constrained else None))
                    wanted = set(np.linspace(n_init + n_iter // 2, n, prefixes).astype(int).tolist())
                    where = "nbo_jax.bo" if acq == "neural-ucb" else module  # NeuralUCB asks through the one BO step
                    for t, state in _replayed(init, tell, hist.x, hist.y, c, n_init, wanted, replay):
                        yield f"{acq} {pname}-{problem.dim} seed {seed} t={t}", where, a, state


def _captured(module: str, algo, state, key, u):
    """The utility that ``algo.ask(state, key)`` maximizes, at ``u (N, d)``; with ``u=None``, the
    data it was given (traced inside ``jit``: the ask's work after the capture is dropped)."""
    store = []
    with captured_utilities(module, store, optimize=False):
        algo.ask(state, key)
    utility, data, _ = store[-1]
    return data if u is None else utility(u)


def gaps(dim=6, n_init=30, n_iter=30, seeds=3, prefixes=2, asks=1, n_sobol=4096, n_starts=32, verbose=True,
         gp_problems=("ackley", "levy"), neural_activation="relu", replay="tell"):
    """The gap of every case (module doc; ``replay``: :func:`cases`): list of ``(label, gap)``."""
    out = []
    ask, ask_of = None, None
    for label, module, algo, state in cases(dim, n_init, n_iter, seeds, prefixes, gp_problems=gp_problems,
                                           neural_activation=neural_activation, replay=replay):
        if algo is not ask_of:  # cases come grouped by algorithm: one compiled ask per group
            ask, ask_of = jax.jit(algo.ask), algo
            captured = jax.jit(functools.partial(_captured, module, algo))
        for k in range(asks):
            key = jax.random.key(100 + k)
            data = captured(state, key, None)
            utility = functools.partial(captured, state, key)
            u = state.bounds.to_unit(ask(state, key))
            ours = float(utility(u[None])[0])
            best, spread = scipy_maximum(utility, data, n_sobol, n_starts)
            gap = (best - ours) / spread if spread > 0 else 0.0
            out.append((f"{label} ask {k}", gap))
            if verbose:
                print(f"{label} ask {k}: ours {ours:.5g}, scipy {best:.5g}, spread {spread:.3g}, gap {gap:.2e}",
                      flush=True)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dim", type=int, default=6)
    ap.add_argument("--n-init", type=int, default=30)
    ap.add_argument("--n-iter", type=int, default=30)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--prefixes", type=int, default=2)
    ap.add_argument("--asks", type=int, default=2)
    ap.add_argument("--activation", default="relu", help="the neural cases' activation (gelu: smooth utilities)")
    args = ap.parse_args(argv)
    jax.config.update("jax_enable_x64", True)
    t0 = time.perf_counter()
    res = gaps(args.dim, args.n_init, args.n_iter, args.seeds, args.prefixes, args.asks,
               neural_activation=args.activation)
    g = np.array([r[1] for r in res])
    print(f"\n{len(g)} cases in {time.perf_counter() - t0:.0f} s: gap <= {TOL:g} in {np.mean(g <= TOL):.0%}; "
          f"median {np.median(g):.2e}, 90th percentile {np.percentile(g, 90):.2e}, max {g.max():.2e}")
    by = {}
    for label, v in res:
        by.setdefault(label.split()[0], []).append(v)
    for k, v in by.items():
        v = np.array(v)
        print(f"  {k}: {np.mean(v <= TOL):.0%} of {len(v)} within {TOL:g}; max gap {v.max():.2e}")


if __name__ == "__main__":
    main()
