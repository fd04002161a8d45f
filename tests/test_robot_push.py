"""Robot pushing (Wang and Jegelka 2017): determinism, physics identities, the JAX problem,
the ask/tell example, and runs from stdin and from a script without a main guard (issue 24:
the library starts no process pool)."""

import math
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import nbo_jax as nbo
from nbo_jax.benchmarks import robot_push as rp

PARK1 = (5.0, 5.0, 0.0, 0.0, 2.0, 0.0)      # hand at rest, far from both objects
PARK2 = (5.0, -5.0, 0.0, 0.0, 2.0, 0.0)


def point(hand1, hand2, omegas=(0.0, 0.0)):
    return np.array([*hand1, *hand2, *omegas], dtype=np.float64)


def analytic_reward(p):
    """``f_max - |g1 - p1| - |g2 - p2|`` from positions ``p (2, 2)``, written out."""
    return (math.hypot(4.0, 1.5) + math.hypot(4.0, 5.5)
            - math.hypot(4.0 - p[0][0], 3.5 - p[0][1]) - math.hypot(-4.0 - p[1][0], 3.5 - p[1][1]))


@pytest.fixture(scope="module")
def batch():
    """Random points, their rewards one by one, and evaluate_batch's."""
    X = np.random.default_rng(0).uniform(rp.LOWER, rp.UPPER, size=(6, rp.DIM))
    X[0] = point((-2.5, 1.5, 8.0, 2.0, 6.0, np.pi / 2), PARK2)  # a push that surely moves the square
    sequential = np.array([rp.push_reward(x) for x in X])
    return X, sequential, rp.evaluate_batch(X)


def test_constants_from_the_authors_code():
    assert rp.F_MAX == math.hypot(4.0, 1.5) + math.hypot(4.0, 5.5)
    np.testing.assert_allclose(rp.F_MAX, 11.072737127026487, rtol=1e-15)
    problem = rp.robot_push()
    assert (problem.name, problem.dim, problem.optimal_value) == ("robot_push", 14, -rp.F_MAX)
    np.testing.assert_array_equal(problem.bounds.lower, [-5, -5, -10, -10, 2, 0, -5, -5, -10, -10, 2, 0, -5, -5])
    np.testing.assert_array_equal(problem.bounds.upper[[4, 5, 12]], [30, 2 * np.pi, 5])
    assert problem.metadata["goals"] == [[4.0, 3.5], [-4.0, 3.5]]
    assert problem.metadata["starts"] == [[0.0, 2.0], [0.0, -2.0]]
    assert rp.robot_push() is problem  # cached per arguments
    assert rp.robot_push(noise_std=0.1).noise_std == 0.1


def test_deterministic_and_batch_equals_one_by_one(batch):
    X, sequential, batched = batch
    assert rp.push_reward(X[0]) == sequential[0]
    np.testing.assert_array_equal(batched, sequential)  # bit for bit
    assert batched.dtype == np.float64 and batched.shape == (6,)
    assert np.all(sequential <= rp.F_MAX)
    assert sequential[0] > 1.0  # the designed push brings the square 2.5 m closer
    assert rp.evaluate_batch(np.zeros((0, 14))).shape == (0,)


def test_reward_is_f_max_minus_final_distances(batch):
    X, sequential, _ = batch
    for x, r in zip(X, sequential):
        p = rp.simulate_push(x)
        assert p.shape == (2, 2) and p.dtype == np.float64
        assert r == rp.F_MAX - np.linalg.norm(rp.GOALS[0] - p[0]) - np.linalg.norm(rp.GOALS[1] - p[1])
        assert r == pytest.approx(analytic_reward(p), abs=1e-12)


@pytest.mark.parametrize("x", [
    point(PARK1, PARK2),  # both hands commanded to rest (zero force)
    point((5.0, 5.0, 10.0, 10.0, 2.0, 0.0), (-5.0, -5.0, -10.0, -10.0, 2.0, 0.0)),  # minimum duration, away
    point((5.0, 5.0, 10.0, 10.0, 30.0, 1.0), (-5.0, -5.0, -10.0, -10.0, 30.0, 2.0), (5.0, -5.0)),  # longest, away
], ids=["at-rest", "min-duration-away", "max-duration-away"])
def test_untouched_objects_stay_where_they_started(x):
    p = rp.simulate_push(x)
    np.testing.assert_array_equal(p, rp.STARTS)  # exactly: no contact, no motion
    r = rp.push_reward(x)
    assert r == analytic_reward(rp.STARTS.tolist())
    assert abs(r) < 1e-12


def test_only_the_touched_object_moves():
    # hand 1 (long side vertical) pushes the square along +x; hand 2 parked
    p = rp.simulate_push(point((-2.5, 2.0, 5.0, 0.0, 5.0, np.pi / 2), PARK2))
    np.testing.assert_array_equal(p[1], rp.STARTS[1])
    assert 0.2 < p[0][0] < 1.0 and p[0][1] == pytest.approx(2.0, abs=1e-3)
    assert analytic_reward(p) > 0  # toward its goal (4, 3.5)
    # hand 2 pushes the circle along +x, away from its goal (-4, 3.5); hand 1 parked
    x = point(PARK1, (-3.0, -2.0, 5.0, 0.0, 5.0, np.pi / 2))
    p = rp.simulate_push(x)
    np.testing.assert_array_equal(p[0], rp.STARTS[0])
    assert p[1][0] > 0.2 and p[1][1] == pytest.approx(-2.0, abs=1e-3)
    assert rp.push_reward(x) == pytest.approx(analytic_reward(p), abs=1e-12) and rp.push_reward(x) < 0


def test_velocity_noise_is_explicit():
    x = point((-2.5, 2.0, 5.0, 0.0, 5.0, np.pi / 2), PARK2)
    np.testing.assert_array_equal(rp.simulate_push(x, velocity_noise=np.zeros((2, 2))), rp.simulate_push(x))
    faster = rp.simulate_push(x, velocity_noise=[[2.0, 0.0], [0.0, 0.0]])
    assert faster[0][0] > rp.simulate_push(x)[0][0]  # a faster push moves the square farther
    with pytest.raises(ValueError, match="velocity_noise"):
        rp.simulate_push(x, velocity_noise=np.zeros(2))


def test_argument_errors():
    with pytest.raises(ValueError, match=r"x must have shape \(14,\)"):
        rp.push_reward(np.zeros(13))
    with pytest.raises(ValueError, match="NaN"):
        rp.push_reward(np.full(14, np.nan))
    with pytest.raises(ValueError, match="coordinate 4 is 1000.0, outside the box"):
        rp.push_reward(point((0, 0, 0, 0, 1000.0, 0), PARK2))
    with pytest.raises(ValueError, match=r"X must have shape \(n, 14\)"):
        rp.evaluate_batch(np.zeros(14))
    with pytest.raises(TypeError, match="processes"):  # gone: the library starts no processes
        rp.robot_push(processes=2)
    with pytest.raises(ValueError, match="noise_std"):
        rp.robot_push(noise_std=-1.0)


def test_objective_under_jit_vmap_equals_minus_reward(batch):
    X = batch[0]
    problem = rp.robot_push()
    X32 = jnp.asarray(X, jnp.float32)
    f = jax.jit(jax.vmap(problem.objective))(X32)
    assert f.dtype == jnp.float32 and f.shape == (6,)
    expected = np.array([-rp.push_reward(np.asarray(x, np.float64)) for x in np.asarray(X32)], np.float32)
    np.testing.assert_array_equal(np.asarray(f), expected)
    with pytest.raises(ValueError, match=r"x must have shape \(14,\)"):
        problem.objective(jnp.zeros(3))


def test_run_bo_records_minus_reward_and_metric(batch):
    problem = rp.robot_push()
    algo = nbo.registry.get("random")
    keys = jax.random.split(jax.random.key(0), 2)
    hist = jax.jit(jax.vmap(lambda k: nbo.run_bo(k, algo, problem, n_init=3, n_iter=2)))(keys)
    x, f = np.asarray(hist.x), np.asarray(hist.f)
    assert x.shape == (2, 5, 14) and f.dtype == np.float32
    reward = np.array([[rp.push_reward(np.asarray(row, np.float64)) for row in seed] for seed in x])
    np.testing.assert_array_equal(f, (-reward).astype(np.float32))
    final = problem.metric.final({"best_f": np.asarray(hist.best_f)})
    np.testing.assert_array_equal(final, np.max((-f), axis=1))
    assert problem.metric.higher_is_better and problem.metric.label == "best reward"
    np.testing.assert_array_equal(problem.metric.curve({"best_f": np.asarray(hist.best_f)}),
                                  np.maximum.accumulate(-f, axis=1))


def test_ask_tell_example_records_every_batch(batch, benchmark_script):
    optimize_with_ask_tell = benchmark_script("reproduce_robot_push").optimize_with_ask_tell
    x, reward = optimize_with_ask_tell("random", n_init=3, n_iter=2, q=2, seed=0)
    assert x.shape == (7, 14) and reward.shape == (7,)
    np.testing.assert_array_equal(x[:3], np.random.default_rng(0).uniform(rp.LOWER, rp.UPPER, size=(3, 14)))
    np.testing.assert_array_equal(reward, [rp.push_reward(row) for row in x])
    assert np.all((x >= rp.LOWER) & (x <= rp.UPPER))
    assert len(np.unique(x, axis=0)) == 7  # two new batches of two distinct points
    with pytest.raises(ValueError, match="q = 1 points per batch, but q = 2"):
        optimize_with_ask_tell(nbo.registry.get("random"), n_init=3, n_iter=1, q=2, seed=0)


_USER_CODE = ('import jax, nbo_jax as nbo; p = nbo.benchmarks.get("robot_push"); '
              'print(nbo.run_bo(jax.random.key(0), nbo.neural_bo(width=16), p, n_init=3, n_iter=2).best_f[-1])')


@pytest.mark.parametrize("how", ["stdin", "unguarded script"])
def test_runs_from_stdin_and_from_a_script_without_a_main_guard(how, tmp_path):
    """Issue 24's reproduction: a spawn pool re-imported the user's __main__ and every worker
    died (BrokenProcessPool). Now the simulations run in the calling process."""
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    if how == "stdin":
        out = subprocess.run([sys.executable, "-"], input=_USER_CODE, env=env, capture_output=True, text=True,
                             timeout=600)
    else:
        script = tmp_path / "push.py"
        script.write_text(_USER_CODE + "\n")
        out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    best = float(out.stdout.strip().splitlines()[-1])
    assert -rp.F_MAX <= best <= 0.5  # -reward of the best of 5 points; the reward is at most F_MAX
