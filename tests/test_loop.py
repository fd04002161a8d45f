"""run_bo: determinism, vmap, one compilation, input errors, NaN masking (issue 2)."""

import dataclasses
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import nbo_jax as nbo
from nbo_jax.types import Bounds, Problem


def _counting(algo):
    """Wrap an algorithm so that each trace of `ask` increments a counter (compilations)."""
    count = {"ask": 0}

    def ask(state, key):
        count["ask"] += 1
        return algo.ask(state, key)

    return algo._replace(ask=ask), count


SMALL_NBO = dict(width=16, acq_optimizer=dict(raw_samples=64, steps=2), epochs=3, minibatch_size=8)


def test_history_shapes_and_running_minimum():
    problem = nbo.benchmarks.get("branin", noise_std=0.5)
    hist = nbo.run_bo(jax.random.key(0), nbo.random_search(), problem, n_init=4, n_iter=6)
    assert hist.x.shape == (10, 2) and hist.y.shape == hist.f.shape == hist.best_f.shape == (10,)
    np.testing.assert_allclose(hist.f, jax.vmap(problem.objective)(hist.x), rtol=1e-6)
    np.testing.assert_allclose(hist.best_f, np.minimum.accumulate(np.asarray(hist.f)), rtol=1e-7)
    assert np.all(hist.x >= problem.bounds.lower) and np.all(hist.x <= problem.bounds.upper)
    # noise is really added to y and not to f
    assert float(jnp.std(hist.y - hist.f)) > 0.1
    assert bool(jnp.all(hist.valid))


def test_deterministic_and_initial_design_shared():
    problem = nbo.benchmarks.get("branin")
    algo = nbo.neural_bo(**SMALL_NBO)
    h1 = nbo.run_bo(jax.random.key(3), algo, problem, n_init=3, n_iter=4)
    h2 = nbo.run_bo(jax.random.key(3), algo, problem, n_init=3, n_iter=4)
    np.testing.assert_array_equal(h1.x, h2.x)
    np.testing.assert_array_equal(h1.y, h2.y)
    h3 = nbo.run_bo(jax.random.key(4), algo, problem, n_init=3, n_iter=4)
    assert not np.allclose(h1.x, h3.x)
    # every algorithm gets the same initial points (and noise) for the same key
    hr = nbo.run_bo(jax.random.key(3), nbo.random_search(), problem, n_init=3, n_iter=4)
    np.testing.assert_array_equal(h1.x[:3], hr.x[:3])
    np.testing.assert_array_equal(h1.y[:3], hr.y[:3])


def test_vmap_equals_separate_runs_and_compiles_once(x64):
    problem = nbo.benchmarks.get("branin", noise_std=0.1)
    algo, count = _counting(nbo.neural_bo(**SMALL_NBO))
    keys = jax.random.split(jax.random.key(7), 3)
    run = lambda k: nbo.run_bo(k, algo, problem, n_init=3, n_iter=4)
    separate = [run(k) for k in keys]
    assert count["ask"] == 1, "different keys must reuse one compilation"
    batched = jax.vmap(run)(keys)
    assert batched.x.shape == (3, 7, 2)
    for i, h in enumerate(separate):
        np.testing.assert_allclose(batched.x[i], h.x, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(batched.best_f[i], h.best_f, rtol=1e-9)


def test_progress_hook_called_once_per_iteration():
    problem = nbo.benchmarks.get("branin")
    steps = []
    hook = lambda t: steps.append(int(t))
    nbo.run_bo(jax.random.key(0), nbo.random_search(), problem, n_init=2, n_iter=5, progress=hook)
    assert steps == [0, 1, 2, 3, 4]


# ---------------------------------------------------------------- errors before compiling
def test_bad_input_raises_before_compiling():
    problem = nbo.benchmarks.get("branin")
    algo, count = _counting(nbo.random_search())
    key = jax.random.key(0)
    with pytest.raises(ValueError, match="n_init"):
        nbo.run_bo(key, algo, problem, n_init=0, n_iter=3)
    with pytest.raises(ValueError, match="n_iter"):
        nbo.run_bo(key, algo, problem, n_init=2, n_iter=-1)
    with pytest.raises(TypeError, match="n_init"):
        nbo.run_bo(key, algo, problem, n_init=2.5, n_iter=3)
    with pytest.raises(ValueError, match="x0"):
        nbo.run_bo(key, algo, problem, n_init=2, n_iter=3, x0=np.zeros((2, 3)))
    with pytest.raises(TypeError, match="algorithm"):
        nbo.run_bo(key, "neural-bo", problem, n_init=2, n_iter=3)
    with pytest.raises(TypeError, match="problem"):
        nbo.run_bo(key, algo, "branin", n_init=2, n_iter=3)
    with pytest.raises(ValueError, match="key"):
        nbo.run_bo(jax.random.split(key, 2), algo, problem, n_init=2, n_iter=3)
    # a Problem whose bounds disagree with its dim is refused where it is made
    with pytest.raises(ValueError, match="Problem.bounds.*expected 3 dimensions, got 2"):
        dataclasses.replace(problem, dim=3)
    with pytest.raises(ValueError, match="lower must be < upper"):
        dataclasses.replace(problem, bounds=Bounds(np.array([1.0, 0.0]), np.array([0.0, 1.0])))
    assert count["ask"] == 0, "nothing may be traced or compiled before the checks"


def test_unknown_names_and_bad_bounds():
    with pytest.raises(ValueError, match="name"):
        nbo.benchmarks.get("no-such-problem", dim=2)
    with pytest.raises(ValueError, match="algorithm"):
        nbo.registry.get("no-such-algorithm")
    with pytest.raises(ValueError, match="lower must be < upper"):
        nbo.make_bounds([0.0, 1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="finite"):
        nbo.make_bounds([0.0, -np.inf], [1.0, 1.0])
    with pytest.raises(ValueError, match="preset"):
        nbo.neural_bo(preset="fast")
    with pytest.raises(ValueError, match="posterior"):
        nbo.neural_bo(posterior="exact")
    with pytest.raises(ValueError, match="lam"):
        nbo.neural_bo(lam=0.0)


# ---------------------------------------------------------------- NaN / inf observations
def _holey_problem():
    """Branin that returns NaN on the right third of the box and +inf in a corner."""
    base = nbo.benchmarks.get("branin")

    def f(x):
        v = base.objective(x)
        v = jnp.where(x[0] > 5.0, jnp.nan, v)
        return jnp.where((x[0] < -4.0) & (x[1] > 14.0), jnp.inf, v)

    return dataclasses.replace(base, name="holey-branin", objective=f)


def test_nan_observations_are_flagged_reported_and_learned_from():
    problem = _holey_problem()
    algo = nbo.neural_bo(**SMALL_NBO)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hist = nbo.run_bo(jax.random.key(1), algo, problem, n_init=8, n_iter=12)
        jax.block_until_ready(hist)
    n_bad = int(np.sum(~np.asarray(hist.valid)))
    assert n_bad > 0, "the test problem should produce some NaN observations"
    np.testing.assert_array_equal(hist.valid, np.isfinite(hist.y))
    assert any("NaN/inf" in str(w.message) and str(n_bad) in str(w.message) for w in caught)
    assert np.all(np.isfinite(hist.x)), "a NaN must never reach the proposals"
    f = np.asarray(hist.f)
    first = int(np.argmax(np.isfinite(f)))
    assert np.all(np.isfinite(hist.best_f[first:])) and np.all(np.isinf(hist.best_f[:first]))
    np.testing.assert_allclose(hist.best_f[-1], np.nanmin(np.where(np.isfinite(f), f, np.nan)))


def test_nan_tell_is_a_failure_imputed_with_the_worst_value(compiled):
    algo = compiled(nbo.neural_bo(**SMALL_NBO, posterior="full", scales="fixed"))
    bounds = nbo.benchmarks.get("branin").bounds
    x0 = np.array([[0.0, 5.0], [5.0, 5.0], [-2.0, 10.0]])
    state = algo.init(jax.random.key(0), x0, np.array([1.0, 2.0, 3.0]), bounds=bounds, capacity=6)
    after = algo.tell(state, jnp.array([1.0, 1.0]), jnp.nan)
    assert int(after.data.count) == 4 and bool(after.data.failed[3]) and bool(after.data.mask[3])
    assert float(after.data.y[3]) == 3.0  # the worst value seen: the model learns the point is bad
    assert float(after.data.best()[1]) == 1.0  # a failure is never the incumbent
    for leaf in jax.tree.leaves(after):
        if jnp.issubdtype(leaf.dtype, jnp.inexact):
            assert np.all(np.isfinite(leaf))
    # the posterior variance shrinks at the failed point, as at any observed point
    u = bounds.to_unit(jnp.array([[1.0, 1.0]]))
    assert float(algo.surrogate(after, u).std[0]) < float(algo.surrogate(state, u).std[0])
    # a NaN coordinate is not recorded at all
    same = algo.tell(after, jnp.array([jnp.nan, 1.0]), 0.5)
    assert int(same.data.count) == 4
    # the next proposal is finite and inside the box
    x = algo.ask(after, jax.random.key(5))
    assert np.all(np.isfinite(x)) and np.all(x >= bounds.lower) and np.all(x <= bounds.upper)


def test_objective_of_the_wrong_output_shape_is_named():
    bad = nbo.Problem("vector", 2, ([0.0, 0.0], [1.0, 1.0]), lambda x: jnp.sum(x, keepdims=True))
    with pytest.raises(ValueError, match=r"must map one point \(d,\) = \(2,\) to a scalar \(\), or to \(m,\) for m >= 2 objectives, got output shape \(1,\)"):
        nbo.run_bo(jax.random.key(0), nbo.random_search(), bad, 2, 2)


def test_failed_half_of_the_box_is_avoided(benchmark_script):
    """Reproduction 2 of issue 12: with the objective failing on half the box, GP-EI spent 96% of 25
    iterations there when failures were only masked; imputed as the worst value, it avoids them."""
    bench = benchmark_script("failed_evaluations")
    algo = nbo.gp_bo(fit_steps=20, acq_optimizer=dict(raw_samples=256, num_restarts=4, steps=10))
    share, best = bench.share_in_failing_half(algo, bench.failing_branin(), seeds=2, n_init=5, n_iter=25)
    assert np.all(share < 0.25), share
    assert np.all(best < 2.0), best  # and it still finds the valid half's minimum (0.398 at (-pi, 12.275))


def test_ask_tell_driver_matches_protocol():
    problem = nbo.benchmarks.get("branin")
    f = lambda x: float(problem.objective(jnp.asarray(x)))
    x0 = np.asarray(nbo.initial_design(jax.random.key(0), problem.bounds, 4))
    opt = nbo.AskTell(nbo.neural_bo(**SMALL_NBO), problem.bounds, capacity=7, key=jax.random.key(1),
                      x0=x0, y0=[f(x) for x in x0])
    for _ in range(3):
        x = opt.ask()
        opt.tell(x, f(x))
    best_x, best_y = opt.best()
    assert best_y == min(opt.y) and len(opt.y) == 7
    with pytest.raises(ValueError, match="capacity"):
        opt.ask()
    with pytest.warns(RuntimeWarning, match="NaN"):
        opt2 = nbo.AskTell(nbo.random_search(), problem.bounds, capacity=5, key=jax.random.key(1),
                           x0=x0[:2], y0=[np.nan, 1.0])
    assert opt2.best()[1] == 1.0


def test_independent_draws_of_a_batch_are_distinct_when_they_share_a_maximizer():
    """``batched`` with ``batch_rule="independent"`` on a box: a rule whose every draw has the
    same maximizer (the corner (1, 1) of the unit cube: utility sum(u)) still returns ``q``
    distinct points, each drawn point being excluded from the later draws; the state the
    caller holds is unchanged (nothing is told)."""
    from typing import NamedTuple

    from nbo_jax.transforms.batch import batched
    from nbo_jax.dataset import Dataset
    from nbo_jax.optimize import acq_optimizer, optimize_acqf

    class State(NamedTuple):
        data: Dataset
        bounds: Bounds

    bounds = Bounds(jnp.zeros(2), jnp.ones(2))
    options = acq_optimizer(raw_samples=16, num_restarts=2, steps=5)

    def init(key, x0, y0, c0=None, *, bounds, capacity):
        data = Dataset.empty(capacity, 2).add_batch(bounds.to_unit(x0), y0)
        return State(data, bounds)

    def ask(state, key):
        return state.bounds.from_unit(optimize_acqf(lambda u: jnp.sum(u, axis=-1), key, state.data, options))

    one = nbo.BOAlgorithm(init, ask, lambda s, x, y, c=None: s, name="corner", batch_rule="independent")
    state = init(None, jnp.array([[0.2, 0.3], [0.6, 0.1]]), jnp.array([1.0, 2.0]), bounds=bounds, capacity=8)
    np.testing.assert_allclose(ask(state, jax.random.key(0)), [1.0, 1.0])  # every draw's answer alone
    x = jax.jit(batched(one, 3).ask)(state, jax.random.key(0))
    assert x.shape == (3, 2)
    np.testing.assert_allclose(x[0], [1.0, 1.0])
    gaps = np.max(np.abs(np.asarray(x)[:, None] - np.asarray(x)[None]), axis=-1) + np.eye(3)
    assert gaps.min() > 1e-6, x
    assert int(state.data.count) == 2


def test_segment_plan_doubles_the_capacity_and_fills_each_segment():
    from nbo_jax.loop import segment_plan

    assert segment_plan(10, 2000, 1, 5) == [(115, 125), (126, 251), (251, 502), (503, 1005), (1005, 2010)]
    assert segment_plan(5, 6, 3, 2) == [(2, 11), (4, 23)]  # the contract test's plan
    assert segment_plan(10, 200, 1, 1) == [(200, 210)]
    assert segment_plan(5, 3, 1, 8) == [(3, 8)]  # half of 8 rows is fewer than the 5 initial ones
    assert segment_plan(5, 20, 1, 8) == [(1, 6), (6, 12), (13, 25)]
    for n_init, n_iter, q, k in [(3, 50, 2, 4), (1, 7, 1, 3), (20, 0, 1, 3), (7, 1000, 4, 6)]:
        plan = segment_plan(n_init, n_iter, q, k)
        assert sum(s for s, _ in plan) == n_iter and plan[-1][1] == n_init + n_iter * q
        assert all(c == n_init + q * sum(s for s, _ in plan[: i + 1]) for i, (_, c) in enumerate(plan))
        assert len(plan) <= k and all(s >= 1 for s, _ in plan[:-1] or [(1, 0)])


def test_segments_give_the_one_segment_run_through_trust_region_restarts(x64):
    """A transformation's state (TuRBO: the inner state and its own data) grows by segments
    too, across region restarts (which re-init the inner algorithm at the segment's capacity),
    and vmapped; random search inside is exact, so the runs agree bit for bit. (Every registry
    algorithm is compared in ``test_contract``.)"""
    problem = nbo.benchmarks.get("branin", noise_std=0.1)
    algo = nbo.trust_region(nbo.random_search(), failure_tolerance=1, length_min=0.3, restart_points=3)
    keys = jax.random.split(jax.random.key(3), 2)
    one = jax.vmap(lambda k: nbo.run_bo(k, algo, problem, n_init=3, n_iter=20))(keys)
    three = jax.vmap(lambda k: nbo.run_bo(k, algo, problem, n_init=3, n_iter=20, segments=3))(keys)
    np.testing.assert_array_equal(three.x, one.x)
    for k in ("tr_length", "tr_restarts", "tr_observed", "n_observed"):
        np.testing.assert_array_equal(three.info[k], one.info[k])
    assert np.all(np.asarray(one.info["tr_restarts"][:, -1]) >= 2)  # restarts in later segments too


def test_segments_argument_and_a_state_that_cannot_grow():
    problem = nbo.benchmarks.get("branin")
    with pytest.raises(ValueError, match="segments"):
        nbo.run_bo(jax.random.key(0), nbo.random_search(), problem, 3, 4, segments=0)
    base = nbo.random_search()

    def init(key, x0, y0, c0=None, *, bounds, capacity):  # a leaf that shrinks as the capacity grows
        return (base.init(key, x0, y0, c0, bounds=bounds, capacity=capacity), jnp.zeros(100 - capacity))

    odd = base._replace(init=init, ask=lambda s, k: base.ask(s[0], k),
                        tell=lambda s, x, y, c=None: (base.tell(s[0], x, y, c), s[1]), info=None)
    with pytest.raises(ValueError, match="cannot be grown by segments"):
        nbo.run_bo(jax.random.key(0), odd, problem, 3, 8, segments=2)


def test_x0_outside_the_box_or_nan_is_refused_before_compiling():
    problem = nbo.benchmarks.get("branin")  # box [-5, 10] x [0, 15]
    algo, count = _counting(nbo.random_search())
    key = jax.random.key(0)
    with pytest.raises(ValueError, match=r"x0 row 0 is outside problem.bounds: coordinate 1 is 20.0, the box is "
                                         r"\[0.0, 15.0\]"):
        nbo.run_bo(key, algo, problem, n_init=2, n_iter=1, x0=jnp.array([[0.0, 20.0], [1.0, 1.0]]))
    with pytest.raises(ValueError, match=r"x0 has NaN/inf coordinates in row\(s\) \[1\]"):
        nbo.run_bo(key, algo, problem, n_init=2, n_iter=1, x0=np.array([[0.0, 1.0], [np.nan, 1.0]]))
    assert count["ask"] == 0
    hist = nbo.run_bo(key, algo, problem, n_init=2, n_iter=1, x0=np.array([[-5.0, 0.0], [10.0, 15.0]]))
    np.testing.assert_allclose(hist.x[:2], [[-5.0, 0.0], [10.0, 15.0]])


def test_failed_observation_warning_says_what_the_state_holds():
    """The warning matches Dataset: a failure is trained on as the worst value, not dropped."""
    from nbo_jax.loop import _report_invalid

    with pytest.warns(RuntimeWarning) as caught:
        _report_invalid(np.array([2, 1]))
    (w,) = caught
    text = str(w.message)
    assert "3 observation(s) held NaN/inf" in text and "as the worst value observed so far" in text
    assert "never trained on" not in text
