"""NeuralUCB (Zhou, Li & Gu 2020) and NeuralTS (Zhang, Zhou, Li & Gu 2021) on Neural-BO's
machinery: batch rules, factory errors, the recorded factory call, batches through run_bo
and failed evaluations."""

import sys

import jax
import jax.numpy as jnp
import pytest

import nbo_jax as nbo

TINY = dict(width=16, epochs=2, acq_optimizer=dict(raw_samples=32, num_restarts=2))
# a bowl with its minimum inside the box (no vertex that every draw climbs to)
BOWL = nbo.Problem("bowl", 2, ([-1.0, -1.0], [2.0, 2.0]), lambda x: jnp.sum((x - 0.3) ** 2))


def test_batch_rules_and_q():
    """NeuralUCB's bound is deterministic given the state: constant-liar batches; NeuralTS
    draws: independent batches, also when built through the registry."""
    ucb, ts = nbo.neural_ucb(q=2), nbo.neural_ts(q=3)
    assert (ucb.name, ucb.q, ucb.batch_rule) == ("neural-ucb", 2, "fantasy")
    assert (ts.name, ts.q, ts.batch_rule) == ("neural-ts", 3, "independent")
    assert nbo.neural_ts().batch_rule == "independent" and nbo.neural_ts().q == 1
    assert nbo.registry.get("neural-ts", q=2).batch_rule == "independent"


@pytest.mark.parametrize("factory", [nbo.neural_ucb, nbo.neural_ts])
def test_factory_errors_name_the_argument(factory):
    who = factory.__name__
    for kw, name in [(dict(nu="1"), "nu"), (dict(nu=None), "nu"), (dict(q=1.5), "q"), (dict(width=2.5), "width"),
                     (dict(batch_size=8), "minibatch_size"), (dict(n_candidates=8), "n_candidates")]:
        with pytest.raises(TypeError, match=name):
            factory(**kw)
    with pytest.raises(TypeError, match=who):
        factory(batch_size=8)
    for kw, name in [(dict(nu=float("nan")), "nu"), (dict(nu=-1.0), "nu"), (dict(q=0), "q"),
                     (dict(lam=float("nan")), "lam"), (dict(acquisition=nbo.acquisition.ei()), "acquisition"),
                     (dict(feature_params="initial"), "feature_params"), (dict(posterior="exact"), "posterior"),
                     (dict(thompson="pathwise"), "thompson is fixed"),
                     (dict(categorical_acquisition="ei"), "categorical_acquisition is fixed")]:
        with pytest.raises(ValueError, match=name):
            factory(**kw)
    assert factory(nu=jnp.asarray(0.5)).name == who.replace("_", "-")  # nu may be a scalar array


@pytest.mark.parametrize("factory", [nbo.neural_ucb, nbo.neural_ts])
def test_recorded_call_rebuilds_the_algorithm(factory):
    """The forwarded keyword arguments are recorded one by one, so the call can be replayed
    (save/resume rebuilds algorithms this way)."""
    algo = factory(0.5, width=16, epochs=2, q=2)
    assert algo.config.kwargs == {"nu": 0.5, "width": 16, "epochs": 2, "q": 2}
    again = algo.config.build()
    assert again.config.kwargs == algo.config.kwargs
    assert (again.name, again.q, again.batch_rule) == (algo.name, algo.q, algo.batch_rule)


def test_nan_observations_leave_the_state_finite():
    """NeuralTS with the papers' diagonal U: a failed evaluation (initial or told) is imputed,
    every state leaf stays finite and the next ask is a finite point in the box."""
    algo = nbo.neural_ts(posterior="diagonal", **TINY)
    problem = nbo.benchmarks.get("branin")
    x0 = nbo.initial_design(jax.random.key(0), problem.bounds, 5)
    y0 = jax.vmap(problem.objective)(x0).at[2].set(jnp.nan)
    state = jax.jit(lambda k, x, y: algo.init(k, x, y, bounds=problem.bounds, capacity=8))(jax.random.key(1), x0, y0)
    ask, tell = jax.jit(algo.ask), jax.jit(algo.tell)
    state = tell(state, ask(state, jax.random.key(2)), jnp.nan)
    assert int(state.data.count) == 6 and state.data.failed[:6].tolist() == [False, False, True, False, False, True]
    assert all(bool(jnp.all(jnp.isfinite(leaf))) for leaf in jax.tree.leaves(state)
               if jnp.issubdtype(leaf.dtype, jnp.inexact))
    x = ask(state, jax.random.key(3))
    assert bool(jnp.all(jnp.isfinite(x))) and bool(problem.bounds.contains(x))


def test_neural_ts_takes_no_acquisition_gradient_steps(monkeypatch):
    """NeuralTS's draws are independent per raw sample: its acq_optimizer keeps steps = 0
    when a dict of other fields is given, and steps > 0 is refused."""
    neural_bo_module = sys.modules["nbo_jax.algorithms.neural_bo"]  # the package exports the factory
    bo_module = sys.modules["nbo_jax.bo"]  # NeuralTS asks through the one BO step
    used = []
    real = bo_module.optimize_acqf
    monkeypatch.setattr(bo_module, "optimize_acqf", lambda f, key, data, opts, region=None: used.append(opts) or real(
        f, key, data, opts, region))
    algo = nbo.neural_ts(**TINY)
    problem = nbo.benchmarks.get("branin")
    x0 = nbo.initial_design(jax.random.key(0), problem.bounds, 4)
    y0 = jax.vmap(problem.objective)(x0)
    state = jax.eval_shape(lambda: algo.init(jax.random.key(1), x0, y0, bounds=problem.bounds, capacity=5))
    jax.eval_shape(algo.ask, state, jax.random.key(2))
    default = neural_bo_module.PRESETS["default"]["acq_optimizer"]
    assert used == [default._replace(raw_samples=32, num_restarts=2, steps=0)]
    with pytest.raises(ValueError, match="steps"):
        nbo.neural_ts(acq_optimizer=dict(steps=5))
