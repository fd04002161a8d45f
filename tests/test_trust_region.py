"""TuRBO-1 and TuRBO-m (regions=m) as a transformation of any algorithm (nbo_jax.trust_region,
module nbo_jax.transforms.trust_region; Eriksson et al. 2019) and the acquisition optimizer
inside a region (ask's region, a SearchRegion; nbo_jax.optimize)."""

import dataclasses
import json
import pickle

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import nbo_jax as nbo
from nbo_jax.ask_tell import AskTell
from nbo_jax.optimize import acq_optimizer, candidate_set, optimize_acqf, random_point
from nbo_jax.transforms.trust_region import current_region, inner_lengthscales, region_box
from nbo_jax.transforms.trust_region import objective_units, owners, regions_now
from nbo_jax.base import SearchRegion
from nbo_jax.types import Dataset

BOX = ([-2.0, 0.0], [2.0, 5.0])
BOUNDS = nbo.as_bounds(BOX)
X0 = np.array([[-1.5, 0.5], [0.0, 2.5], [1.5, 4.0], [-0.5, 1.0]])
SMALL_GP = dict(acq_optimizer=dict(raw_samples=32, num_restarts=2, steps=3))
SMALL_NBO = dict(width=16, acq_optimizer=dict(raw_samples=32, steps=2), epochs=2, minibatch_size=8)


def _f(x):
    x = np.asarray(x, dtype=float)
    return float((x[0] - 0.7) ** 2 + (x[1] - 1.3) ** 2)


def _unit(x):
    lo, hi = np.asarray(BOX[0]), np.asarray(BOX[1])
    return (np.asarray(x, dtype=float) - lo) / (hi - lo)


# ---------------------------------------------------------------- the region's length
def test_default_failure_tolerance_is_the_papers_with_d_doubled():
    """tau_fail = ceil(max(4, 2 d) / q): the paper's ceil(max(4 / q, d / q)) at d <= 2, twice
    it from d = 4 on (docs, "TuRBO's failure tolerance"); a given failure_tolerance is kept."""
    from nbo_jax.transforms.trust_region import failure_limit

    assert [failure_limit(d, 1, None) for d in (1, 2, 3, 4, 5, 10, 50)] == [4, 4, 6, 8, 10, 20, 100]
    assert [failure_limit(10, q, None) for q in (2, 3, 4, 40)] == [10, 7, 5, 1]
    assert failure_limit(10, 1, 7) == 7


def test_region_halves_after_tau_fail_failures_doubles_after_tau_succ_successes_and_restarts(compiled):
    # d = 2, q = 1: tau_fail = 4, 4-point designs; the paper's success rule (1e-3 |f*|)
    algo = compiled(nbo.trust_region(nbo.random_search(), min_improvement=1e-3))
    s = algo.init(jax.random.key(0), jnp.asarray(X0), jnp.array([5.0, 3.0, 4.0, 6.0]), bounds=BOUNDS, capacity=80)
    x = jnp.array([0.3, 2.0])

    def tell(s, y):
        return algo.tell(s, x, jnp.asarray(y, jnp.float32))

    for _ in range(3):
        s = tell(s, 10.0)
    assert (float(s.length[0]), int(s.failures[0])) == (pytest.approx(0.8), 3)
    s = tell(s, 10.0)  # the 4th failure in a row halves L
    assert (float(s.length[0]), int(s.failures[0])) == (pytest.approx(0.4), 0)
    for i, y in enumerate([2.0, 1.0, 0.5]):  # three successes (best 3.0, then each one) double it
        s = tell(s, y)
        assert int(s.successes[0]) == (i + 1) % 3
    assert float(s.length[0]) == pytest.approx(0.8)
    s = tell(s, 0.5 * (1 - 5e-4))  # better by less than 1e-3 |best|: a failure
    s = tell(s, jnp.nan)  # a failed evaluation: a failure
    assert (int(s.successes[0]), int(s.failures[0])) == (0, 2)
    for y in [0.4, 0.3, 0.2, 0.1, 0.05, 0.01]:
        s = tell(s, y)
    assert float(s.length[0]) == pytest.approx(1.6)  # min(2 * 1.6, L_max)
    for _ in range(31):  # 1.6 / 2^7 = 0.0125 >= L_min = 0.5^7
        s = tell(s, 1.0)
    assert (float(s.length[0]), int(s.restarts[0]), bool(s.in_design[0])) == (pytest.approx(0.0125), 0, False)
    s = tell(s, 1.0)  # 1.6 / 2^8 < L_min: restart
    n_before = int(s.data.count)
    assert (float(s.length[0]), int(s.restarts[0]), bool(s.in_design[0]), int(s.start[0])) == (
        pytest.approx(0.8), 1, True, n_before)
    assert n_before == 4 + 4 + 3 + 2 + 6 + 32
    # a fresh design follows: the stored Sobol points, asked one at a time
    design = np.asarray(s.bounds.from_unit(s.design[0]))
    ys = [7.0, 2.0, 9.0, 8.0]
    for i in range(4):
        xi = algo.ask(s, jax.random.key(i))
        np.testing.assert_allclose(xi, design[i], rtol=1e-6)
        assert int(s.inner.data.count[0]) == n_before  # the old run's inner state, untouched during the design
        if i < 3:
            s = algo.tell(s, xi, ys[i])
    # the last design point told with one more point (results may come in any batches): the
    # inner algorithm is initialized on the design, then told the extra point
    extra = jnp.array([1.0, 1.0])
    s = algo.tell(s, jnp.stack([xi, extra]), jnp.array([ys[3], 9.5]))
    assert not bool(s.in_design[0])
    assert int(s.inner.data.count[0]) == 5  # the inner algorithm sees the new run only
    np.testing.assert_allclose(s.bounds.from_unit(s.inner.data.u[0, :5]), np.vstack([design, extra]), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(s.inner.data.y[0, :5], ys + [9.5])
    assert int(s.data.count) == n_before + 5
    info = nbo.trust_region(nbo.random_search()).info(s)
    assert (int(info["tr_observed"]), int(info["tr_restarts"]), float(info["tr_length"])) == (5, 1, pytest.approx(0.8))
    # the next region is centred at the new run's best point (design[1]), not the old runs' best
    box = np.asarray(current_region(s))
    centre = _unit(design[1])
    np.testing.assert_allclose(box, [np.clip(centre - 0.4, 0, 1), np.clip(centre + 0.4, 0, 1)], atol=1e-6)
    u = _unit(algo.ask(s, jax.random.key(9)))
    assert np.all((u >= box[0] - 1e-6) & (u <= box[1] + 1e-6))


def test_restart_keeps_data_tells_the_inner_algorithm_every_point_and_recentres_on_the_new_run(compiled):
    """With ``restart_keeps_data`` a restart asks the same fresh design, but the inner state is
    told every observation (the designs' too) instead of being initialized on the design alone;
    the region is still centred at the new run's best point."""
    algo = compiled(nbo.trust_region(nbo.random_search(), failure_tolerance=1, length_min=0.3,
                                     restart_points=3, restart_keeps_data=True))
    s = algo.init(jax.random.key(0), jnp.asarray(X0), jnp.array([5.0, 1.0, 4.0, 6.0]), bounds=BOUNDS, capacity=40)
    x = jnp.array([0.3, 2.0])
    for i in range(2):  # 0.8 -> 0.4 -> 0.2 < L_min: a restart
        s = algo.tell(s, x, jnp.asarray(10.0 + i, jnp.float32))
    assert (int(s.restarts[0]), bool(s.in_design[0]), int(s.start[0])) == (1, True, 6)
    design = np.asarray(s.bounds.from_unit(s.design[0]))
    ys = [7.0, 2.0, 9.0]
    for i in range(3):
        xi = algo.ask(s, jax.random.key(i))
        np.testing.assert_allclose(xi, design[i], rtol=1e-6)
        s = algo.tell(s, xi, ys[i])
        assert int(s.inner.data.count[0]) == 7 + i  # told as it comes, after all earlier points
    assert not bool(s.in_design[0])
    np.testing.assert_allclose(s.inner.data.y[0, :9], [5.0, 1.0, 4.0, 6.0, 10.0, 11.0] + ys)
    np.testing.assert_array_equal(s.inner.data.u[0, :9], s.data.u[:9])
    # centred at the new run's best (design[1], f = 2), not at the best of all (X0[1], f = 1)
    box = np.asarray(current_region(s))
    centre = _unit(design[1])
    np.testing.assert_allclose(box, [np.clip(centre - 0.4, 0, 1), np.clip(centre + 0.4, 0, 1)], atol=1e-6)
    with pytest.raises(ValueError, match="restart_keeps_data"):
        nbo.trust_region(nbo.random_search(), regions=2, restart_keeps_data=True)
    with pytest.raises(TypeError, match="restart_keeps_data"):
        nbo.trust_region(nbo.random_search(), restart_keeps_data=1)


# ---------------------------------------------------------------- SCBO: a constrained inner algorithm
def test_scbo_centres_the_region_at_the_best_feasible_point_and_counts_in_its_order(compiled):
    """With a constrained inner algorithm (GP-cEI) the region is centred at the run's best
    feasible point, or at the least violating one while none is feasible, and a batch succeeds
    when its best point improves in that order (Eriksson & Poloczek 2021, Section 3)."""
    algo = compiled(nbo.trust_region(nbo.gp_bo(acquisition="cei", **SMALL_GP), ard=False))
    y0 = jnp.array([5.0, 3.0, 4.0, 6.0])
    key = jax.random.key(0)

    def centre(s):
        box = np.asarray(current_region(s, ard=False))
        return box, 0.5 * (box[0] + box[1])

    # one feasible point (row 2), not the best objective (row 1): the centre is row 2
    s = algo.init(key, jnp.asarray(X0), y0, jnp.array([[1.0], [2.0], [-1.0], [0.5]]), bounds=BOUNDS, capacity=20)
    box, _ = centre(s)
    np.testing.assert_allclose(box, region_box(jnp.asarray(_unit(X0[2]), jnp.float32), s.length[0]), atol=1e-6)
    # nothing feasible: the smallest total violation (row 2, 0.3)
    c_none = jnp.array([[1.0, 0.0], [2.0, 1.0], [0.1, 0.2], [0.5, 0.0]])
    s = algo.init(key, jnp.asarray(X0), y0, c_none, bounds=BOUNDS, capacity=20)
    box, _ = centre(s)
    np.testing.assert_allclose(box, region_box(jnp.asarray(_unit(X0[2]), jnp.float32), s.length[0]), atol=1e-6)

    x = jnp.array([0.3, 2.0])
    s = algo.tell(s, x, -9.0, jnp.array([0.1, 0.1]))  # violation 0.2 < 0.3: a success
    assert (int(s.successes[0]), int(s.failures[0])) == (1, 0)
    np.testing.assert_allclose(centre(s)[0], region_box(jnp.asarray(_unit(x), jnp.float32), s.length[0]), atol=1e-6)
    s = algo.tell(s, x, -20.0, jnp.array([0.25, 0.0]))  # violation 0.25 > 0.2: a failure
    assert (int(s.successes[0]), int(s.failures[0])) == (0, 1)
    s = algo.tell(s, x, 100.0, jnp.array([0.0, -1.0]))  # the run's first feasible point: a success
    assert (int(s.successes[0]), int(s.failures[0])) == (1, 0)
    x_best = jnp.array([1.0, 3.0])
    s = algo.tell(s, jnp.stack([x, x_best]), jnp.array([200.0, 50.0]), jnp.array([[-1.0, -1.0], [-1.0, 0.0]]))
    assert (int(s.successes[0]), int(s.failures[0])) == (2, 0)  # the batch's best feasible 50 < 100
    box, _ = centre(s)
    np.testing.assert_allclose(box, region_box(jnp.asarray(_unit(x_best), jnp.float32), s.length[0]), atol=1e-6)
    s = algo.tell(s, x, -100.0, jnp.array([0.01, 0.0]))  # infeasible, however low: a failure
    s = algo.tell(s, x, 60.0, jnp.array([-1.0, -1.0]))  # feasible but worse than 50: a failure
    s = algo.tell(s, x, jnp.nan, jnp.array([-1.0, -1.0]))  # a failed evaluation: a failure
    assert (int(s.successes[0]), int(s.failures[0])) == (0, 3)
    np.testing.assert_allclose(centre(s)[0], box, atol=1e-6)  # still centred at the best feasible point
    assert int(s.inner.data.count[0]) == int(s.data.count) == 12  # the inner GP-cEI was told every point
    np.testing.assert_allclose(s.data.y[:12], s.inner.data.y[0, :12])
    with pytest.raises(ValueError, match="c: this algorithm models constraints"):
        nbo.trust_region(nbo.gp_bo(acquisition="cei")).tell(s, x, 1.0)


def test_scbo_asks_inside_the_region_in_run_bo_and_vmapped_equals_alone(x64):
    """TuRBO around GP-cEI in ``run_bo`` on a constrained problem: it runs through a restart,
    the history records the constraints, and vmapped seeds equal single runs in float64."""
    problem = nbo.benchmarks.get("branin_constrained")
    algo = nbo.trust_region(nbo.gp_bo(acquisition="cei", **SMALL_GP), failure_tolerance=1, length_min=0.2,
                            restart_points=3)
    assert algo.constrained and algo.name == "turbo-gp-cei"
    keys = jax.random.split(jax.random.key(1), 2)
    run = jax.jit(lambda k: nbo.run_bo(k, algo, problem, n_init=4, n_iter=10))
    batched = jax.vmap(run)(keys)
    for i, k in enumerate(keys):
        alone = run(k)
        np.testing.assert_allclose(batched.x[i], alone.x, rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(batched.info["tr_restarts"][i], alone.info["tr_restarts"])
    assert batched.c.shape == (2, 14, 1) and np.all(np.isfinite(batched.c))
    assert np.all(np.asarray(batched.info["tr_restarts"][:, -1]) >= 1)


def test_region_box_is_shaped_by_the_lengthscales():
    box = region_box(jnp.array([0.5, 0.5]), jnp.asarray(0.4), jnp.array([1.0, 4.0]))  # w = [1/2, 2]
    np.testing.assert_allclose(box, [[0.4, 0.1], [0.6, 0.9]], rtol=1e-6)
    np.testing.assert_allclose(region_box(jnp.array([0.05, 0.5]), jnp.asarray(0.4)), [[0.0, 0.3], [0.25, 0.7]],
                               rtol=1e-6)


# ---------------------------------------------------------------- asks inside the region
@pytest.mark.parametrize("make", [
    lambda: nbo.gp_bo(**SMALL_GP),
    lambda: nbo.random_search(),
    lambda: nbo.neural_bo(**SMALL_NBO),
], ids=["gp", "random", "neural-bo"])
def test_every_ask_lies_inside_the_region_and_the_box(compiled, make):
    inner = make()
    algo = compiled(nbo.trust_region(inner, failure_tolerance=1, length_min=0.1))
    s = algo.init(jax.random.key(0), jnp.asarray(X0), jnp.asarray([_f(x) for x in X0]), bounds=BOUNDS, capacity=20)
    regions = []
    for t in range(9):  # 0.8 -> 0.05 < 0.1 in four failures: a restart, its design, model-based asks
        box = np.asarray(current_region(s))
        x = np.asarray(algo.ask(s, jax.random.key(t)))
        assert np.all((x >= np.asarray(BOX[0])) & (x <= np.asarray(BOX[1])))
        if not bool(s.in_design[0]):
            u = _unit(x)
            assert np.all((u >= box[0] - 1e-5) & (u <= box[1] + 1e-5)), (t, u, box)
            regions.append(box)
        s = algo.tell(s, x, 10.0 + _f(x))  # worse than the initial design: a failure each time
    assert int(s.restarts[0]) >= 1 and int(s.data.count) == 13
    if inner.name.startswith("gp"):  # shaped by the GP's ARD lengthscales
        ls = np.asarray(s.lengthscales[0])
        # float32: XLA's exp and numpy's may differ by an ulp (1.2e-7 relative) on some CPU kinds
        np.testing.assert_allclose(ls, np.exp(np.asarray(s.inner.model.params.log_lengthscale[0])), rtol=1e-6)
        box = np.asarray(region_box(jnp.full(2, 0.5), s.length[0], jnp.asarray(ls)))
        np.testing.assert_allclose((box[1] - box[0]) / float(s.length[0]), ls / np.sqrt(np.prod(ls)), rtol=1e-5)
    else:
        assert s.lengthscales is None and inner_lengthscales(inner, jax.tree.map(lambda a: a[0], s.inner)) is None


def test_finite_domain_asks_are_unevaluated_choices_inside_the_region(compiled):
    grid = np.stack(np.meshgrid(np.linspace(-2, 2, 9), np.linspace(0, 5, 9)), -1).reshape(-1, 2)
    domain = nbo.FiniteDomain(np.asarray(BOX[0]), np.asarray(BOX[1]), grid)
    algo = nbo.trust_region(nbo.random_search(), failure_tolerance=1, length_min=0.1)
    init = jax.jit(lambda k, x, y: algo.init(k, x, y, bounds=domain, capacity=40))
    ask, tell = jax.jit(algo.ask), jax.jit(algo.tell)
    x0 = grid[[3, 40, 77]]
    s = init(jax.random.key(0), jnp.asarray(x0), jnp.asarray([_f(x) for x in x0]))
    seen = {tuple(r) for r in x0}
    pts = _unit(grid)
    for t in range(25):
        x = np.asarray(ask(s, jax.random.key(t)), dtype=float)
        row = np.nonzero(np.all(np.abs(grid - x) < 1e-5, axis=1))[0]
        assert row.size == 1, x  # one of the choices
        assert tuple(grid[row[0]]) not in seen  # never twice, across restarts too
        if not bool(s.in_design[0]):
            box = np.asarray(current_region(s))
            free = np.array([tuple(p) not in seen for p in grid])
            inside = free & np.all((pts >= box[0] - 1e-4) & (pts <= box[1] + 1e-4), axis=1)
            if inside.any():  # else: the region is widened to the whole domain
                assert inside[row[0]], (t, x, box)
        seen.add(tuple(grid[row[0]]))
        s = tell(s, x, _f(x))
    assert int(s.restarts[0]) >= 1
    assert int(jnp.sum(s.data.evaluated)) == 28


# ---------------------------------------------------------------- run_bo, AskTell
def test_the_default_success_rule_does_not_depend_on_the_objective_offset(x64):
    # any improvement is a success by default, so f and f + 1000 are searched alike (same
    # keys: the same asks, region sides and restarts); with the paper's 1e-3 |f*| the offset
    # turns the small late improvements into failures and the region shrinks sooner
    problem = nbo.benchmarks.get("branin")
    shifted = dataclasses.replace(problem, objective=lambda x: problem.objective(x) + 1000.0,
                                  optimal_value=problem.optimal_value + 1000.0)

    def history(p, **options):
        algo = nbo.trust_region(nbo.random_search(), **options)
        return nbo.run_bo(jax.random.key(5), algo, p, n_init=4, n_iter=60)

    a, b = history(problem), history(shifted)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.info["tr_length"], b.info["tr_length"])
    np.testing.assert_allclose(b.y, a.y + 1000.0, rtol=1e-12)
    paper, paper_shifted = history(problem, min_improvement=1e-3), history(shifted, min_improvement=1e-3)
    la, lb = np.asarray(paper.info["tr_length"]), np.asarray(paper_shifted.info["tr_length"])
    first = np.flatnonzero(la != lb)
    assert first.size and lb[first[0]] < la[first[0]]  # the offset run halved sooner (or grew later)


@pytest.mark.parametrize("case", ["gp-default", "neural-bo-default"])
def test_posterior_mean_incumbent_centres_and_counts_by_the_model(x64, case, compiled):
    # the defaults (incumbent="auto", success="auto") around a GP: after every tell the region
    # is centred at the run's point of smallest posterior mean; around Neural-BO (incumbent
    # "observed" there, success the posterior mean) at the run's best observation. In
    # both the counters moved as next_length says for "a batch point's mean is below every
    # earlier one's", read from the algorithm's own surrogate; on a noisy objective that
    # differs from the observed rule (else the test could not fail)
    from nbo_jax.transforms.trust_region import batch_improves, current_centre, failure_limit, next_length

    problem = nbo.benchmarks.get("branin", noise_std=20.0)
    by_mean = case == "gp-default"
    algo = compiled(nbo.trust_region(nbo.gp_bo(acquisition="ucb", **SMALL_GP), failure_tolerance=2) if by_mean
                    else nbo.trust_region(nbo.neural_bo(**SMALL_NBO), failure_tolerance=2, length_min=1e-6))
    key, k_noise = jax.random.split(jax.random.key(2))
    x0 = problem.bounds.from_unit(jax.random.uniform(key, (5, 2), jnp.float64))
    noisy = lambda x, k: float(problem.objective(x) + 20.0 * jax.random.normal(k))
    y0 = jnp.array([noisy(x, k) for x, k in zip(x0, jax.random.split(k_noise, 5))])
    state = algo.init(key, x0, y0, bounds=problem.bounds, capacity=40)
    assert (state.incumbent is not None) == by_mean
    ask, tell, surrogate = algo.ask, algo.tell, algo.surrogate
    differs = 0
    for i, k in enumerate(jax.random.split(jax.random.key(7), 20)):
        x = ask(state, k)
        new = tell(state, x, noisy(x, jax.random.fold_in(k, 1)))
        n = int(state.data.count)
        mean = np.asarray(surrogate(new, new.data.u).mean)[: n + 1]
        improved = bool(mean[n] < mean[:n].min())
        length, successes, failures = next_length(state.length[0], state.successes[0], state.failures[0],
                                                  jnp.asarray(improved), 3, 2, 1.6)
        assert (float(new.length[0]), int(new.successes[0]), int(new.failures[0])) == (
            float(length), int(successes), int(failures)), i
        assert int(new.restarts[0]) == 0  # one run: every row counts
        centre = int(np.argmin(mean)) if by_mean else int(np.argmin(np.asarray(new.data.y)[: n + 1]))
        np.testing.assert_array_equal(current_centre(new), new.data.u[centre])
        observed = batch_improves(state.data.y, jnp.arange(40) < n, new.data.y[n:n + 1], jnp.array([True]), 0.0)
        differs += bool(observed) != improved
        state = new
    assert differs >= 1 and failure_limit(2, 1, 2) == 2
    if by_mean:
        assert int(np.argmin(np.asarray(state.data.y)[: int(state.data.count)])) != int(state.incumbent[0])


def test_auto_incumbent_is_the_posterior_mean_around_a_gp_and_observed_otherwise(x64):
    # the default incumbent="auto": around an unconstrained GP in one region with
    # min_improvement = 0 the state carries the posterior mean's incumbent row from init on
    # (`test_posterior_mean_incumbent_centres_and_counts_by_the_model[gp-default]` steps a
    # default run and checks that rule's centre and counters); around a network, a
    # constrained GP, TuRBO-m or a nonzero min_improvement it is the observed rule, and
    # nothing is refused
    gp = nbo.gp_bo(acquisition="ucb", **SMALL_GP)
    key, cap = jax.random.key(0), 12
    x0, y0 = X0, jnp.array([_f(x) for x in X0])

    def resolved(algo, c0=None):  # the state's incumbent row: None means the observed rule
        # (a question of structure: traced by eval_shape, nothing fitted or run)
        return jax.eval_shape(lambda: algo.init(key, x0, y0, c0, bounds=BOUNDS, capacity=cap)).incumbent

    assert resolved(nbo.trust_region(gp)) is not None
    assert resolved(nbo.trust_region(gp, incumbent="observed")) is None
    assert resolved(nbo.trust_region(gp, min_improvement=1e-3)) is None  # not refused: observed
    assert resolved(nbo.trust_region(nbo.neural_bo(**SMALL_NBO))) is None
    assert resolved(nbo.trust_region(nbo.random_search())) is None
    assert resolved(nbo.trust_region(nbo.gp_bo(acquisition="cei", **SMALL_GP)), -jnp.ones((4, 1))) is None
    assert jax.eval_shape(lambda: nbo.trust_region(gp, regions=2).init(key, x0, y0, bounds=BOUNDS, capacity=cap))
    assert nbo.trust_region(gp).config.kwargs["incumbent"] == "auto"


@pytest.mark.parametrize("case", ["random", "model"])
def test_vmapped_run_bo_equals_single_runs(x64, case):
    """TuRBO in ``run_bo``: vmapped seeds equal single runs through restarts, around random
    search (observed incumbent, a fresh run after each restart) and around Neural-BO told every
    earlier point at a restart, centred at its posterior mean (``restart_keeps_data=True``,
    ``incumbent="posterior_mean"``: one case for both options, CI time)."""
    problem = nbo.benchmarks.get("branin", noise_std=0.1)
    keep = case == "model"
    inner = nbo.neural_bo(**SMALL_NBO) if keep else nbo.random_search()
    options = dict(incumbent="posterior_mean", restart_keeps_data=True) if keep else dict(restart_keeps_data=False)
    algo = nbo.trust_region(inner, failure_tolerance=1, length_min=0.3, restart_points=3, **options)
    keys = jax.random.split(jax.random.key(3), 3)
    run = lambda k: nbo.run_bo(k, algo, problem, n_init=3, n_iter=12)
    single = jax.jit(run)  # one compile for the three single runs
    separate = [single(k) for k in keys]
    batched = jax.jit(jax.vmap(run))(keys)
    assert batched.x.shape == (3, 15, 2)
    for i, h in enumerate(separate):
        if keep:  # a network: to rounding, as the contract test's (README)
            np.testing.assert_allclose(batched.x[i], h.x, rtol=1e-6, atol=1e-8)
        else:
            np.testing.assert_array_equal(batched.x[i], h.x)
        for k in ("tr_length", "tr_restarts", "tr_observed", "n_observed"):
            np.testing.assert_array_equal(batched.info[k][i], h.info[k])
    assert np.all(np.asarray(batched.info["tr_restarts"][:, -1]) >= 1)
    np.testing.assert_array_equal(batched.info["n_observed"][0], np.arange(3, 16))


@pytest.mark.parametrize("incumbent", ["observed", "posterior_mean"])
def test_ask_tell_save_resume_and_pickle_continue_bit_for_bit(tmp_path, incumbent):
    inner = nbo.random_search() if incumbent == "observed" else nbo.gp_bo(**SMALL_GP)
    algo = nbo.trust_region(inner, failure_tolerance=1, length_min=0.3, restart_points=2, incumbent=incumbent)
    opt = AskTell(algo, BOX, 30, jax.random.key(0), X0, [_f(x) for x in X0])
    for _ in range(3):
        x = opt.ask()
        opt.tell(x, _f(x))
    opt.save(tmp_path / "run")
    resumed = AskTell.load(tmp_path / "run")  # rebuilt from the saved factory call (inner's too)
    again = pickle.loads(pickle.dumps(opt))
    assert resumed.algorithm.name == again.algorithm.name == algo.name
    assert repr(resumed.algorithm.config) == repr(algo.config)  # incumbent too
    out = {id(o): [] for o in (opt, resumed, again)}
    for o in (opt, resumed, again):
        for _ in range(8):
            x = o.ask()
            o.tell(x, _f(x))
            out[id(o)].append(x)
    np.testing.assert_array_equal(np.array(out[id(opt)]), np.array(out[id(resumed)]))
    np.testing.assert_array_equal(np.array(out[id(opt)]), np.array(out[id(again)]))
    assert int(opt.state.restarts[0]) >= 1


def test_bad_arguments_name_the_argument():
    rs = nbo.random_search()
    with pytest.raises(TypeError, match="algorithm must be an nbo_jax.BOAlgorithm"):
        nbo.trust_region("gp")
    assert nbo.trust_region(nbo.neural_cbo()).constrained  # SCBO's rules
    with pytest.raises(ValueError, match="length_min <= length_init <= length_max"):
        nbo.trust_region(rs, length_init=2.0)
    with pytest.raises(ValueError, match="length_min"):
        nbo.trust_region(rs, length_min=0.0)
    with pytest.raises(TypeError, match="success_tolerance"):
        nbo.trust_region(rs, success_tolerance=2.5)
    with pytest.raises(ValueError, match="failure_tolerance"):
        nbo.trust_region(rs, failure_tolerance=0)
    with pytest.raises(ValueError, match="restart_points"):
        nbo.trust_region(rs, restart_points=0)
    with pytest.raises(ValueError, match="min_improvement"):
        nbo.trust_region(rs, min_improvement=-1.0)
    with pytest.raises(TypeError, match="ard"):
        nbo.trust_region(rs, ard="yes")
    with pytest.raises(ValueError, match="perturb_dims"):
        nbo.trust_region(rs, perturb_dims=0)
    with pytest.raises(ValueError, match="q=3 disagrees"):
        nbo.trust_region(nbo.random_search(q=2), q=3)
    with pytest.raises(ValueError, match="pass q=4 to its factory"):
        nbo.batched(nbo.trust_region(rs), 4)
    batch = nbo.trust_region(rs, q=4)
    assert (batch.q, batch.batch_rule, batch.config.kwargs["q"]) == (4, "native", 4)
    for rule in ("incumbent", "success"):  # the same conditions for both uses of the mean
        with pytest.raises(ValueError, match=f"{rule} must be one of"):
            nbo.trust_region(rs, **{rule: "mean"})
        mean = {rule: "posterior_mean"}
        with pytest.raises(ValueError, match=f"{rule}='posterior_mean' needs an algorithm with a surrogate; 'random'"):
            nbo.trust_region(rs, **mean)
        with pytest.raises(ValueError, match=f"{rule}='posterior_mean' needs an unconstrained algorithm"):
            nbo.trust_region(nbo.neural_cbo(), **mean)
        with pytest.raises(ValueError, match=f"{rule}='posterior_mean' needs regions=1"):
            nbo.trust_region(nbo.gp_bo(), regions=2, **mean)
        with pytest.raises(ValueError, match=f"{rule}='posterior_mean' needs min_improvement=0"):
            nbo.trust_region(nbo.neural_bo(), min_improvement=1e-3, **mean)
    assert nbo.trust_region(rs).config.kwargs["success"] == "auto"


# ---------------------------------------------------------------- the optimizer inside a box
def _data():
    u = jnp.array([[0.1, 0.1], [0.9, 0.2], [0.5, 0.5], [0.2, 0.8]])
    return Dataset.empty(6, 2).add_batch(u, jnp.array([3.0, 0.5, 1.0, 2.0]))


def test_optimize_acqf_stays_in_the_region_and_a_full_cube_region_changes_nothing():
    target = jnp.array([0.8, 0.9])
    utility = jax.jit(lambda u: -jnp.sum((u - target) ** 2, axis=-1))
    opts = acq_optimizer(raw_samples=64, num_restarts=3, steps=20)
    opt = jax.jit(lambda k, data, region=None: optimize_acqf(utility, k, data, opts, region))
    key, data = jax.random.key(0), _data()
    cube = SearchRegion(jnp.array([[0.0, 0.0], [1.0, 1.0]]))
    np.testing.assert_array_equal(opt(key, data), opt(key, data, cube))
    np.testing.assert_array_equal(candidate_set(key, data, 16, 16), candidate_set(key, data, 16, 16, region=cube))
    np.testing.assert_array_equal(random_point(key, data), random_point(key, data, cube))
    box = jnp.array([[0.2, 0.4], [0.5, 0.6]])
    region = SearchRegion(box)
    np.testing.assert_allclose(opt(key, data, region), [0.5, 0.6], atol=1e-4)  # the corner nearest the target
    for c in (candidate_set(key, data, 64, 64, region=region),
              jax.vmap(lambda k: random_point(k, data, region))(jax.random.split(key, 64))):
        assert np.all((c >= box[0]) & (c <= box[1]))


def test_candidate_set_varies_each_coordinate_of_the_region_centre_with_probability_region_perturb():
    """TuRBO's candidates (SearchRegion.centre): each spread raw sample takes its region value
    in a coordinate with probability region.perturb (at least one) and the centre's elsewhere;
    the local raw samples are untouched, and a probability of 1 changes nothing."""
    d, n, n_local = 40, 4096, 64
    key = jax.random.key(3)
    centre = jax.random.uniform(jax.random.key(1), (d,))
    region = region_box(centre, jnp.asarray(0.4))
    u = jnp.concatenate([centre[None], jax.random.uniform(jax.random.key(2), (4, d))])
    data = Dataset.empty(8, d).add_batch(u, jnp.arange(5.0))
    plain = np.asarray(candidate_set(key, data, n, n_local, region=SearchRegion(region)))
    masked = np.asarray(candidate_set(key, data, n, n_local, region=SearchRegion(region, centre, jnp.asarray(0.5))))
    varied = masked[:n] != np.asarray(centre)
    np.testing.assert_array_equal(masked[:n][varied], plain[:n][varied])  # the region's values where varied
    assert varied.any(axis=1).all()
    assert abs(varied.mean() - 0.5) < 0.01, varied.mean()
    np.testing.assert_array_equal(masked[n:], plain[n:])
    assert np.all((masked >= np.asarray(region[0])) & (masked <= np.asarray(region[1])))
    every = candidate_set(key, data, n, n_local, region=SearchRegion(region, centre, jnp.asarray(1.0)))
    np.testing.assert_array_equal(every, plain)


@pytest.mark.parametrize("d, perturb_dims, centre_kept", [(30, 20, True), (20, 20, False), (30, None, False)])
def test_trust_region_hands_its_centre_to_the_raw_samples_above_perturb_dims(d, perturb_dims, centre_kept):
    """An inner algorithm asking the first spread raw sample of candidate_set: above
    perturb_dims inputs it keeps the region centre's value in about 1 - perturb_dims / d of
    the coordinates, at or below it (or with perturb_dims=None) in none."""
    rs = nbo.random_search()
    inner = rs._replace(ask=lambda s, k, region=None: s.bounds.from_unit(candidate_set(k, s.data, 1, region=region)[0]))
    algo = nbo.trust_region(inner, perturb_dims=perturb_dims)
    assert algo.config.kwargs["perturb_dims"] == perturb_dims
    x0 = np.asarray(jax.random.uniform(jax.random.key(0), (6, d)))
    s = algo.init(jax.random.key(1), x0, np.sum(x0 ** 2, axis=1), bounds=([0.0] * d, [1.0] * d), capacity=8)
    centre = x0[np.argmin(np.sum(x0 ** 2, axis=1))]  # the best observation: the region's centre
    kept = [np.mean(np.asarray(algo.ask(s, jax.random.key(k))) == centre) for k in range(20)]
    if centre_kept:
        assert 0.2 < np.mean(kept) < 0.45 and min(kept) < 1.0, kept
    else:
        assert max(kept) == 0.0, kept


def test_finite_domain_region_picks_an_eligible_choice_or_falls_back():
    choices = jnp.array([[0.1, 0.1], [0.3, 0.5], [0.45, 0.55], [0.9, 0.9]])
    data = Dataset.empty(4, 2, choices=choices).add(choices[1], 1.0)  # choice 1 evaluated
    value = lambda u: u[:, 0] + u[:, 1]  # prefers choice 3
    region = jnp.array([[0.2, 0.4], [0.5, 0.6]])  # holds choices 1 (evaluated) and 2
    np.testing.assert_array_equal(data.eligible(region), [False, False, True, False])
    np.testing.assert_array_equal(optimize_acqf(value, jax.random.key(0), data, region=SearchRegion(region)), choices[2])
    np.testing.assert_array_equal(random_point(jax.random.key(1), data, SearchRegion(region)), choices[2])
    np.testing.assert_array_equal(optimize_acqf(value, jax.random.key(0), data), choices[3])
    # every choice of the region evaluated: the whole domain's unevaluated choices are eligible
    spent = data.add(choices[2], 2.0)
    np.testing.assert_array_equal(spent.eligible(region), [True, False, False, True])
    np.testing.assert_array_equal(optimize_acqf(value, jax.random.key(0), spent, region=SearchRegion(region)),
                                  choices[3])


# ---------------------------------------------------------------- registry names and the CLI
def test_registry_names_turbo_and_the_cli_compares_it(tmp_path, capsys):
    """``turbo-<name>`` builds ``trust_region(get(<name>, **kwargs))`` (``turbo<m>-<name>``
    with ``regions=m``; aliases and case normalized; a constrained one kept constrained, an unknown one named), and the command line
    takes it like any registry name: a comparison of TuRBO(random search) with random search on
    the same seeds writes both methods' histories, with the same initial designs."""
    from nbo_jax import registry as algorithms
    from nbo_jax.cli import main

    assert algorithms.canonical_name("TuRBO-NeuralBO") == "turbo-neural-bo"
    algo = algorithms.get("turbo-gp-ei", fit_steps=3)
    assert algo.name == "turbo-gp-ei" and algo.batch_rule == "native"
    assert algo.config.kwargs["algorithm"].config.kwargs["fit_steps"] == 3  # kwargs reach the inner factory
    assert algorithms.get("turbo-gp-cei").constrained
    with pytest.raises(ValueError, match="turbo-nope"):
        algorithms.canonical_name("turbo-nope")
    assert algorithms.canonical_name("TuRBO3-NeuralBO") == "turbo3-neural-bo"  # TuRBO-m: regions=3
    algo = algorithms.get("turbo2-gp-ei", fit_steps=3)
    assert algo.name == "turbo2-gp-ei" and algo.config.kwargs["regions"] == 2
    with pytest.raises(ValueError, match="one region is 'turbo-'"):
        algorithms.canonical_name("turbo1-gp-ei")
    out = tmp_path / "cmp"
    code = main(["compare", "--problem", "branin", "--algorithms", "turbo-random,random,turbo2-random", "--seeds",
                 "3", "--n-init", "3", "--iterations", "4", "--out", str(out)])
    assert code == 0
    histories, _ = nbo.analysis.load_results(out)
    assert sorted(histories) == ["random", "turbo-random", "turbo2-random"]
    assert histories["turbo2-random"]["x"].shape == (3, 7, 2)
    np.testing.assert_array_equal(histories["turbo-random"]["x"][:, :3], histories["random"]["x"][:, :3])
    assert histories["turbo-random"]["x"].shape == (3, 7, 2)
    assert "turbo-random" in capsys.readouterr().out


def test_trust_region_arguments_reach_turbo_names(tmp_path, capsys, benchmark_script):
    """``get("turbo-<name>", turbo={...})`` passes arguments to :func:`nbo_jax.trust_region`
    (the inner factory still gets the rest); the command line's ``ALGO.turbo.ARG=VALUE`` and
    ``reproduce_coco.py --option`` reach it, and the COCO campaign records them; a name
    without ``turbo-``, ``regions`` and an argument ``trust_region`` lacks are refused."""
    from nbo_jax import cli
    from nbo_jax import registry as algorithms

    algo = algorithms.get("turbo2-gp-ts", fit_steps=3, turbo={"min_improvement": 1e-3, "length_init": 0.4})
    kwargs = algo.config.kwargs
    assert (kwargs["min_improvement"], kwargs["length_init"], kwargs["regions"]) == (1e-3, 0.4, 2)
    assert kwargs["algorithm"].config.kwargs == {"acquisition": "ts", "fit_steps": 3}
    assert algorithms.get("turbo-gp-ts").config.kwargs["min_improvement"] == 0.0  # the default
    with pytest.raises(ValueError, match="turbo: trust_region arguments need a 'turbo-<name>' algorithm, got 'gp-ei'"):
        algorithms.get("gp-ei", turbo={"length_init": 0.4})
    with pytest.raises(ValueError, match="'regions' is set by the name"):
        algorithms.get("turbo3-gp-ei", turbo={"regions": 2})
    with pytest.raises(TypeError, match="turbo must be a dict"):
        algorithms.get("turbo-gp-ei", turbo=0.4)
    with pytest.raises(TypeError, match="length_inital"):
        algorithms.get("turbo-gp-ei", turbo={"length_inital": 0.4})

    parser = cli.build_parser()
    names = ["turbo-random", "random"]
    options = cli._parse_options(["turbo-random.turbo.min_improvement=0.001", "turbo-random.turbo.perturb_dims=None"],
                                 names, parser)
    assert options == {"turbo-random": {"turbo": {"min_improvement": 0.001, "perturb_dims": None}}, "random": {}}
    built = cli._build_with_options(names, options, parser)
    assert built["turbo-random"].config.kwargs["min_improvement"] == 0.001
    assert built["turbo-random"].config.kwargs["perturb_dims"] is None
    for bad, message in ((["random.turbo.length_init=0.4"], "random.turbo.ARG needs a 'turbo-<name>' algorithm"),
                         (["turbo-random.turbo.regions=2"], "ARG one of"),
                         (["turbo-random.turbo.length_inital=0.4"], "ARG one of")):
        with pytest.raises(SystemExit) as exc:
            cli._parse_options(bad, names, parser)
        assert exc.value.code == 2
        assert message in capsys.readouterr().err

    pytest.importorskip("cocoex")
    script = benchmark_script("reproduce_coco")
    out = tmp_path / "coco"
    argv = ["reproduce_coco.py", "--algorithms", "turbo-random", "--option", "turbo-random.turbo.length_init=0.4",
            "--dims", "2", "--instances", "1", "--functions", "1", "--budget-multiplier", "3", "--no-cocopp",
            "--out", str(out)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.argv", argv)
        script.main()
        recorded = json.loads((out / "campaign.json").read_text())["algorithms"]["turbo-random"]
        assert "'length_init': 0.4" in recorded and "'min_improvement': 0.0" in recorded
        patch.setattr("sys.argv", [*argv, "--table-only"])
        with pytest.raises(SystemExit) as exc:
            script.main()
    assert exc.value.code == 2
    assert "--option: --table-only runs nothing" in capsys.readouterr().err


# ---------------------------------------------------------------- the vmapped hang's cause
def _lapack_calls_are_ordered(hlo: str) -> tuple[int, list]:
    """In each computation of optimized HLO text: the number of LAPACK custom calls
    (eigendecompositions ``syevd``, Cholesky ``potrf``) and the pairs of them with no data path
    between them (either may run first)."""
    import re

    n_calls, unordered = 0, []
    for block in hlo.split("\n\n"):
        deps, calls = {}, []
        for line in block.split("\n"):
            m = re.match(r"\s*(?:ROOT )?(%[\w.\-]+) = (.*)", line)
            if m:
                deps[m.group(1)] = set(re.findall(r"%[\w.\-]+", m.group(2).split("metadata")[0])) - {m.group(1)}
                if re.search(r'custom_call_target="lapack_\w*(syevd|potrf)', line):
                    calls.append(m.group(1))
        n_calls += len(calls)
        ancestors = {}
        for name in calls:
            seen, stack = set(), [name]
            while stack:
                for d in deps.get(stack.pop(), ()):
                    if d not in seen:
                        seen.add(d)
                        stack.append(d)
            ancestors[name] = seen
        unordered += [(a, b) for i, a in enumerate(calls) for b in calls[i + 1:]
                      if a not in ancestors[b] and b not in ancestors[a]]
    return n_calls, unordered


def test_vmapped_turbo_orders_the_inner_linear_algebra():
    """Under vmap the restart's init runs on every step beside the inner tell; in the compiled
    program every pair of Neural-BO's batched eigendecompositions and Cholesky factorizations
    has a data path between them (two independent batched LAPACK calls deadlocked jaxlib's CPU
    backend: 10 vmapped seeds hung, scripts/turbo_vmap_hang_repro.py)."""
    problem = nbo.benchmarks.get("branin")
    algo = nbo.trust_region(nbo.neural_bo(width=16, epochs=2, acq_optimizer=dict(raw_samples=16, steps=0)))
    keys = jax.random.split(jax.random.key(0), 2)
    hlo = jax.jit(jax.vmap(lambda k: nbo.run_bo(k, algo, problem, n_init=4, n_iter=3))).lower(keys).compile().as_text()
    n_calls, unordered = _lapack_calls_are_ordered(hlo)
    assert n_calls >= 4  # the init before the loop, and the restart init and the tell inside it
    assert not unordered, unordered


# ---------------------------------------------------------------- TuRBO-m: several regions
Y0 = np.array([5.0, 3.0, 4.0, 6.0])


def _inside(u, box, tol=1e-5):
    return bool(np.all((u >= box[0] - tol) & (u <= box[1] + tol)))


def test_each_region_asks_its_own_design_then_counts_alone_and_restarts_alone(compiled):
    """Region 0 starts on init's points; regions 1 and 2 ask their own Sobol designs first
    (region 1's, then region 2's), are initialized on them alone, and from then on a point
    moves only the counters of the region whose box holds it: tau_fail failures halve that
    region's side, and below L_min that region alone restarts with a fresh design."""
    algo = compiled(nbo.trust_region(nbo.random_search(), regions=3, restart_points=3, failure_tolerance=2,
                                     length_min=0.3))
    s = algo.init(jax.random.key(0), jnp.asarray(X0), jnp.asarray(Y0), bounds=BOUNDS, capacity=60)
    np.testing.assert_array_equal(s.in_design, [False, True, True])
    np.testing.assert_array_equal(s.owner[:6], [0, 0, 0, 0, -1, -1])
    design = np.asarray(s.bounds.from_unit(s.design))  # (3, 3, 2)
    for j in (1, 2):
        for i in range(3):
            x = algo.ask(s, jax.random.key(10 * j + i))
            np.testing.assert_allclose(x, design[j, i], rtol=1e-6)
            s = algo.tell(s, x, 7.0 + j + 0.1 * i)
        assert not bool(s.in_design[j]) and int(s.inner.data.count[j]) == 3  # its own design only
    np.testing.assert_array_equal(s.owner[:10], [0] * 4 + [1] * 3 + [2] * 3)
    np.testing.assert_array_equal(s.inner.data.count, [4, 3, 3])
    np.testing.assert_allclose(s.inner.data.y[1, :3], [8.0, 8.1, 8.2])
    np.testing.assert_allclose(s.length, [0.8] * 3)

    # a point at region 1's centre (its best design point): only region 1 counts it
    centres, _ = regions_now(s)
    np.testing.assert_allclose(centres[1], _unit(design[1, 0]), atol=1e-6)
    x1 = s.bounds.from_unit(centres[1])
    s = algo.tell(s, x1, 100.0)
    np.testing.assert_array_equal(s.failures, [0, 1, 0])
    assert int(s.inner.data.count[1]) == 4 and int(s.owner[10]) == 1
    s = algo.tell(s, x1, 100.0)  # tau_fail = 2: region 1 halves
    np.testing.assert_allclose(s.length, [0.8, 0.4, 0.8])
    s = algo.tell(s, s.bounds.from_unit(centres[1]), 1.0)  # a success of region 1 (8.0 -> 1.0)
    np.testing.assert_array_equal(s.successes, [0, 1, 0])
    for _ in range(2):  # 0.4 -> 0.2 < L_min = 0.3 after two failures: region 1 restarts
        s = algo.tell(s, s.bounds.from_unit(regions_now(s)[0][1]), 100.0)
    np.testing.assert_array_equal(s.restarts, [0, 1, 0])
    np.testing.assert_array_equal(s.in_design, [False, True, False])
    assert int(s.start[1]) == int(s.data.count) == 4 + 6 + 3 + 2
    np.testing.assert_allclose(s.length, [0.8, 0.8, 0.8])
    x = algo.ask(s, jax.random.key(99))  # region 1's new design comes first
    np.testing.assert_allclose(x, s.bounds.from_unit(s.design[1, 0]), rtol=1e-6)


def test_a_point_belongs_to_the_region_whose_box_holds_it():
    centres = jnp.array([[0.2, 0.2], [0.8, 0.8], [0.25, 0.25]])
    boxes = jnp.stack([jnp.stack([c - 0.1, c + 0.1]) for c in centres])
    u = jnp.array([[0.2, 0.21], [0.79, 0.7], [0.6, 0.6], [0.26, 0.25], [0.26, 0.25]])
    usable = jnp.array([True, True, True])
    np.testing.assert_array_equal(owners(u, centres, boxes, usable)[:4], [0, 1, 1, 2])  # [2]: nearest of none
    np.testing.assert_array_equal(owners(u, centres, boxes, jnp.array([True, True, False]))[3:], [0, 0])


def test_the_choice_across_regions_reads_each_posterior_in_the_objective_units(compiled):
    """The Thompson draws of different regions are compared in the objective's units: a GP's
    posterior mean at its (noise-free) observations, mapped back by ``objective_units``, is
    the observed values; a posterior in the standardized units, or in the objective's own
    (``standardize=False``, told by its incumbent), maps back exactly."""
    algo = compiled(nbo.gp_bo(**SMALL_GP))
    x0 = jnp.asarray(np.vstack([X0, [[1.0, 3.0], [-1.0, 4.0]]]))
    y0 = jnp.asarray([100.0 + 20.0 * _f(x) for x in np.asarray(x0)])
    s = algo.init(jax.random.key(0), x0, y0, bounds=BOUNDS, capacity=8)
    post = algo.surrogate(s, s.data.u[:6])
    mean, std = objective_units(s.data, post.mean, post.std, post.incumbent)
    np.testing.assert_allclose(mean, y0, rtol=2e-2)
    assert float(jnp.max(std)) < 0.1 * float(jnp.std(y0))

    z, _, scale = s.data.standardized()
    z = z[:6]
    sd = jnp.full(6, 0.5)
    mean, std = objective_units(s.data, z, sd, jnp.min(z))
    np.testing.assert_allclose(mean, y0, rtol=1e-5)
    np.testing.assert_allclose(std, 0.5 * scale, rtol=1e-5)
    mean, std = objective_units(s.data, y0, sd, jnp.min(y0))
    np.testing.assert_array_equal(mean, y0)
    np.testing.assert_array_equal(std, sd)


def test_gp_regions_ask_inside_one_of_their_boxes_and_the_better_region_wins(compiled):
    """With GP-EI inside two regions, every model-based ask lies in the box of the region it is
    then counted in; with region 0 around the optimum of a quadratic and region 1 far off,
    the Thompson draws send most asks to region 0."""
    algo = compiled(nbo.trust_region(nbo.gp_bo(**SMALL_GP), regions=2, restart_points=4))
    s = algo.init(jax.random.key(1), jnp.asarray(X0), jnp.asarray([_f(x) for x in X0]), bounds=BOUNDS, capacity=40)
    far = np.array([[-2.0, 5.0], [-1.8, 4.6], [-1.6, 4.9], [-1.9, 4.4]])
    for x in far:  # region 1's design replaced by points far from the optimum (a design takes any points)
        s = algo.tell(s, jnp.asarray(x), _f(x))
    np.testing.assert_array_equal(s.owner[4:8], [1] * 4)
    counts = np.zeros(2, int)
    for t in range(12):
        _, boxes = regions_now(s)
        x = algo.ask(s, jax.random.key(t))
        s = algo.tell(s, x, _f(x))
        j = int(s.owner[int(s.data.count) - 1])
        assert _inside(_unit(x), np.asarray(boxes[j])), (t, j)
        counts[j] += 1
    assert counts[0] >= 9, counts


def test_vmapped_run_bo_equals_single_runs_and_q_batches(x64):
    problem = nbo.benchmarks.get("branin", noise_std=0.1)
    algo = nbo.trust_region(nbo.random_search(), regions=3, failure_tolerance=1, length_min=0.3, restart_points=2)
    keys = jax.random.split(jax.random.key(3), 3)
    run = lambda k: nbo.run_bo(k, algo, problem, n_init=3, n_iter=20)  # noqa: E731
    separate = [jax.jit(run)(k) for k in keys]
    batched = jax.jit(jax.vmap(run))(keys)
    for i, h in enumerate(separate):  # to rounding: the box's affine maps fuse differently when batched
        np.testing.assert_allclose(batched.x[i], h.x, rtol=1e-12, atol=1e-14)
        for k in ("tr_length", "tr_restarts", "tr_observed", "tr_regions_in_design"):
            np.testing.assert_array_equal(batched.info[k][i], h.info[k])
    assert np.all(np.asarray(batched.info["tr_restarts"][:, -1]) >= 1)
    np.testing.assert_array_equal(batched.info["tr_regions_in_design"][0, :5], [2, 2, 1, 1, 0])  # 2-point designs
    # in segments of growing capacity (the stacked inner states grow on their second axis)
    seg = jax.jit(lambda k: nbo.run_bo(k, algo, problem, n_init=3, n_iter=20, segments=3))(keys[0])
    np.testing.assert_allclose(seg.x, separate[0].x, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(seg.info["tr_length"], separate[0].info["tr_length"])

    batch = nbo.trust_region(nbo.gp_bo(**SMALL_GP), regions=2, q=3)
    assert (batch.name, batch.q) == ("turbo2-gp-ei", 3)
    h = jax.jit(lambda k: nbo.run_bo(k, batch, problem, n_init=4, n_iter=5))(jax.random.key(0))
    assert h.x.shape == (4 + 15, 2) and bool(jnp.all(jnp.isfinite(h.y)))
    lo, hi = np.asarray(problem.bounds.lower), np.asarray(problem.bounds.upper)
    assert np.all((np.asarray(h.x) >= lo) & (np.asarray(h.x) <= hi))
    assert len({tuple(r) for r in np.asarray(h.x).round(9)}) == 19


def test_ask_tell_save_resume_and_finite_domains(tmp_path):
    algo = nbo.trust_region(nbo.random_search(), regions=2, failure_tolerance=1, length_min=0.3, restart_points=2)
    opt = AskTell(algo, BOX, 30, jax.random.key(0), X0, [_f(x) for x in X0])
    for _ in range(3):
        x = opt.ask()
        opt.tell(x, _f(x))
    opt.save(tmp_path / "run")
    resumed = AskTell.load(tmp_path / "run")
    assert resumed.algorithm.name == "turbo2-random"
    out = {id(o): [] for o in (opt, resumed)}
    for o in (opt, resumed):
        for _ in range(8):
            x = o.ask()
            o.tell(x, _f(x))
            out[id(o)].append(x)
    np.testing.assert_array_equal(np.array(out[id(opt)]), np.array(out[id(resumed)]))

    grid = np.stack(np.meshgrid(np.linspace(-2, 2, 7), np.linspace(0, 5, 7)), -1).reshape(-1, 2)
    domain = nbo.FiniteDomain(np.asarray(BOX[0]), np.asarray(BOX[1]), grid)
    algo = nbo.trust_region(nbo.random_search(), regions=2, failure_tolerance=1, length_min=0.2)
    init = jax.jit(lambda k, x, y: algo.init(k, x, y, bounds=domain, capacity=30))
    ask, tell = jax.jit(algo.ask), jax.jit(algo.tell)
    s = init(jax.random.key(0), jnp.asarray(grid[[3, 40]]), jnp.asarray([_f(x) for x in grid[[3, 40]]]))
    seen = {tuple(r) for r in grid[[3, 40]]}
    for t in range(25):
        x = np.asarray(ask(s, jax.random.key(t)), dtype=float)
        row = np.nonzero(np.all(np.abs(grid - x) < 1e-5, axis=1))[0]
        assert row.size == 1 and tuple(grid[row[0]]) not in seen, (t, x)
        seen.add(tuple(grid[row[0]]))
        s = tell(s, x, _f(x))
    assert int(jnp.sum(s.data.evaluated)) == 27 and int(jnp.sum(s.restarts)) >= 1
    with pytest.raises(ValueError, match=r"regions=2 with q=2 on a finite domain"):
        nbo.trust_region(nbo.random_search(), regions=2, q=2).init(
            jax.random.key(0), jnp.asarray(grid[:2]), jnp.zeros(2), bounds=domain, capacity=10)


def test_bad_regions_are_refused_by_name():
    with pytest.raises(ValueError, match=r"regions must be >= 1"):
        nbo.trust_region(nbo.random_search(), regions=0)
    with pytest.raises(TypeError, match=r"regions"):
        nbo.trust_region(nbo.random_search(), regions=2.0)
    with pytest.raises(ValueError, match=r"regions=2: several trust regions need an unconstrained algorithm"):
        nbo.trust_region(nbo.gp_bo(acquisition="cei"), regions=2)
