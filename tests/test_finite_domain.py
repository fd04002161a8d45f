"""Finite domains (SPEC section 0): FiniteDomain, finite_problem, the acquisition scored on the
unevaluated choices, no repeated point (run_bo, batches, AskTell), task metrics in compare."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import nbo_jax as nbo
from nbo_jax import comparison
from nbo_jax.benchmarks.finite import finite_problem, index_of
from nbo_jax.optimize import acq_optimizer, best_available, optimize_acqf, random_point
from nbo_jax.types import Dataset, FiniteDomain, TaskMetric, finite_domain

N, D = 24, 3


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    pts = rng.random((N, D)) * np.array([2.0, 10.0, 1.0]) - np.array([1.0, 0.0, 5.0])
    vals = np.sum((pts - pts[7]) ** 2, axis=1)  # minimum 0 at row 7
    return finite_problem("bowl_set", pts, vals)


def test_finite_domain_checks_and_bounding_box():
    pts = np.array([[0.0, 1.0], [2.0, 1.0], [1.0, 1.0]])
    dom = finite_domain(pts)
    np.testing.assert_array_equal(dom.lower, [0.0, 0.5])  # constant column widened by 0.5
    np.testing.assert_array_equal(dom.upper, [2.0, 1.5])
    assert dom.size == 3 and dom.dim == 2
    with pytest.raises(ValueError, match=r"choices has duplicated rows \(first occurrences at \[0\]\)"):
        finite_domain(np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0]]))
    with pytest.raises(ValueError, match="NaN/inf entries in rows \\[1\\]"):
        finite_domain(np.array([[1.0, 2.0], [np.nan, 4.0]]))
    with pytest.raises(ValueError, match="must be an \\(N, d\\) array"):
        finite_domain(np.zeros(3))
    with pytest.raises(ValueError, match="rows \\[1\\] lie outside bounds"):
        finite_domain(np.array([[0.5], [2.0]]), bounds=([0.0], [1.0]))


def test_finite_problem_values_and_lookup(problem):
    vals = np.sum((problem.choices - problem.choices[7]) ** 2, axis=1)
    got = jax.jit(jax.vmap(problem.objective))(jnp.asarray(problem.choices, jnp.float32))
    np.testing.assert_allclose(np.asarray(got), vals, rtol=1e-6)
    assert problem.optimal_value == 0.0 and problem.metadata["argmin"] == 7
    np.testing.assert_array_equal(problem.optimizer, problem.choices[7])
    np.testing.assert_array_equal(index_of(problem, problem.choices[[5, 2, 7]]), [5, 2, 7])
    assert isinstance(problem.domain, FiniteDomain) and problem.domain.size == N
    with pytest.raises(ValueError, match=r"values must hold one value per row of choices: shape \(24,\)"):
        finite_problem("bad", problem.choices, np.zeros(N - 1))
    with pytest.raises(ValueError, match="values must be finite; rows \\[2\\]"):
        finite_problem("bad", problem.choices, np.where(np.arange(N) == 2, np.inf, 0.0))
    with pytest.raises(ValueError, match="has no finite domain"):
        index_of(nbo.benchmarks.get("branin"), np.zeros(2))


def test_optimize_acqf_scores_only_unevaluated_choices():
    choices = jnp.linspace(0.0, 1.0, 11)[:, None]
    data = Dataset.empty(5, 1, choices=choices).add_batch(choices[jnp.array([10, 9])], jnp.array([0.0, 1.0]))
    np.testing.assert_array_equal(np.nonzero(np.asarray(data.evaluated))[0], [9, 10])
    utility = lambda u: u[:, 0]  # increasing: the best unevaluated choice is 0.8
    opts = acq_optimizer(raw_samples=4, steps=5)  # steps ignored on a finite domain
    u = optimize_acqf(utility, jax.random.key(0), data, opts)
    np.testing.assert_allclose(np.asarray(u), [0.8])
    # NaN and -inf utilities of unevaluated points still beat evaluated ones
    bad = jnp.full((11,), -jnp.inf).at[3].set(jnp.nan)
    picked = float(best_available(bad, data)[0])
    assert picked not in (0.9, 1.0)
    # random draws stay among the unevaluated choices
    draws = jax.vmap(lambda k: random_point(k, data))(jax.random.split(jax.random.key(1), 200))
    assert float(jnp.max(draws)) <= 0.8 + 1e-6 and len(np.unique(np.round(np.asarray(draws), 4))) == 9


@pytest.mark.parametrize("name,q", [("random", 3), ("neural-ts", 4), ("gp-ei", 1), ("dngo", 3)])
def test_run_bo_never_repeats_a_point(problem, name, q):
    """Every point evaluated exactly once when the budget equals the domain's size: the rows of
    the history are a permutation of the choices (independent, fantasy and native batches)."""
    algo = nbo.registry.get(name, q=q)
    n_iter = (N - 4) // q
    n_init = N - n_iter * q
    h = nbo.run_bo(jax.random.key(3), algo, problem, n_init=n_init, n_iter=n_iter)
    rows = index_of(problem, np.asarray(h.x))
    assert sorted(rows.tolist()) == list(range(N))
    np.testing.assert_allclose(np.asarray(h.x), problem.choices[rows], atol=1e-5 * 10)
    assert float(h.best_f[-1]) == pytest.approx(0.0, abs=1e-6)


def test_constrained_algorithm_on_finite_domain(problem):
    cprob = dataclasses.replace(problem, name="bowl_set_c", constraints=lambda x: jnp.array([x[0]]))
    h = nbo.run_bo(jax.random.key(0), nbo.registry.get("gp-cei"), cprob, n_init=4, n_iter=10)
    rows = index_of(cprob, np.asarray(h.x))
    assert len(set(rows.tolist())) == 14
    feasible = problem.choices[:, 0] <= 0
    best = np.min(np.where(feasible, np.sum((problem.choices - problem.choices[7]) ** 2, 1), np.inf))
    assert float(h.best_feasible_f[-1]) >= best - 1e-6


def test_vmapped_seeds_equal_single_runs_and_initial_design(problem):
    algo = nbo.random_search()
    keys = jax.random.split(jax.random.key(5), 3)
    hs = jax.jit(jax.vmap(lambda k: nbo.run_bo(k, algo, problem, n_init=5, n_iter=6)))(keys)
    for i in range(3):
        h = nbo.run_bo(keys[i], algo, problem, n_init=5, n_iter=6)
        np.testing.assert_array_equal(np.asarray(hs.x[i]), np.asarray(h.x))
    x0 = nbo.initial_design(jax.random.key(0), problem.domain, N)
    assert sorted(index_of(problem, np.asarray(x0)).tolist()) == list(range(N))
    with pytest.raises(ValueError, match=r"n_init \+ n_iter \* q = 25 evaluations exceed the 24 points"):
        nbo.run_bo(jax.random.key(0), algo, problem, n_init=5, n_iter=20)


def test_ask_tell_on_finite_domain(tmp_path, problem):
    dom = problem.domain
    vals = np.sum((problem.choices - problem.choices[7]) ** 2, axis=1)
    opt = nbo.AskTell(nbo.gp_bo(q=2), dom, capacity=N, key=jax.random.key(0), x0=dom.points[:2], y0=vals[:2])
    pending = opt.ask()  # asked, not told: must not come back
    rows = [int(np.nonzero(np.all(dom.points == x, axis=1))[0][0]) for x in pending]  # exact points
    seen = [0, 1] + rows
    opt.save(tmp_path / "opt")
    opt = nbo.AskTell.load(tmp_path / "opt")
    while len(seen) < N:
        X = opt.ask()
        r = [int(np.nonzero(np.all(dom.points == x, axis=1))[0][0]) for x in X]
        seen += r
        opt.tell(X, vals[r])
    assert sorted(seen) == list(range(N))
    with pytest.raises(ValueError, match="the finite domain has 0 point\\(s\\) left"):
        opt.ask()
    with pytest.raises(ValueError, match="x row 0 is not one of the finite domain's points"):
        opt.tell(dom.points[0] + 0.05 * (dom.upper - dom.lower), 1.0)


def test_compare_reports_a_task_metric(problem):
    metric = TaskMetric("best score", final=lambda h: 1.0 - h["best_f"][:, -1], higher_is_better=True,
                        curve=lambda h: 1.0 - h["best_f"])
    task = dataclasses.replace(problem, name="bowl_task", metric=metric)
    res = comparison.compare(task, {"random": nbo.random_search(), "random2": nbo.random_search(q=2)},
                             n_init=3, n_iter=4, seeds=3, progress=False, verbose=False)
    assert res.metric == "best score" and res.higher_is_better
    for m, h in res.histories.items():
        np.testing.assert_allclose(res.final[m], 1.0 - h["best_f"][:, -1])
        np.testing.assert_allclose(res.curves[m], 1.0 - h["best_f"])
    # the Welch test runs on the better direction: the p-value of H0 "baseline >= reference"
    from nbo_jax.analysis.stats import welch_one_sided
    p = welch_one_sided(-res.final["random2"], -res.final["random"])
    assert res.welch["random2"]["p"] == pytest.approx(p, nan_ok=True)
    with pytest.raises(ValueError, match="one value per seed"):
        comparison.task_final_values(dataclasses.replace(task, metric=metric._replace(final=lambda h: [0.0])),
                                     res.histories)
