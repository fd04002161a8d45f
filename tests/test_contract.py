"""One contract for every registry algorithm (issue 12), in the manner of optax's
``alias_test.py``: one table of algorithms feeding shared tests.

Each algorithm, at small settings, goes through: ``run_bo`` under ``jit`` and ``vmap`` with
the uniform ``init``/``ask``/``tell`` signatures; NaN observations (failures are imputed,
every state leaf stays finite, the next ask is a finite point in the box); batch asks of
``q = 3`` distinct points in the box; pending points; save/resume through
:class:`~nbo_jax.ask_tell.AskTell` continuing bit for bit.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import nbo_jax as nbo
from nbo_jax.algorithms import REGISTRY
from nbo_jax.ask_tell import AskTell
from nbo_jax.batch import batched, fantasize
from nbo_jax.types import BATCH_RULES

_NET = dict(width=16)
_ACQ = dict(acq_optimizer=dict(raw_samples=32, num_restarts=2, steps=2))
_ACQ_NO_STEPS = dict(acq_optimizer=dict(raw_samples=32, num_restarts=2))
SMALL = {
    "neural-bo": dict(**_NET, epochs=2, **_ACQ),
    "neural-ucb": dict(**_NET, epochs=2, **_ACQ),
    "neural-ts": dict(**_NET, epochs=2, **_ACQ_NO_STEPS),
    "neural-greedy": dict(**_NET, train_steps=5, **_ACQ),
    "neural-greedy-posterior": dict(**_NET, train_steps=5, **_ACQ_NO_STEPS),
    "adaptive-basis": dict(hidden=(8, 8), epochs=2, **_ACQ),
    "dngo": dict(hidden=(8, 8), epochs=2, evidence_iters=5, **_ACQ),
    "gp-ei": dict(fit_steps=5, **_ACQ),
    "gp-ucb": dict(fit_steps=5, **_ACQ),
    "gp-ts": dict(fit_steps=5, **_ACQ_NO_STEPS),
    "gp-cei": dict(fit_steps=5, **_ACQ),
    "gp-lcb-c": dict(fit_steps=5, **_ACQ_NO_STEPS),
    "random": dict(),
    "neural-cbo": dict(width=8, train_steps=5, init_steps=5, **_ACQ_NO_STEPS),
    "pinn-bo": dict(width=8, n_residual=16, residual_batch=8, epochs=2, init_epochs=2, info_points=8,
                    **_ACQ_NO_STEPS),
}
NAMES = sorted(REGISTRY)


def test_the_table_covers_every_registry_algorithm():
    assert sorted(SMALL) == NAMES


def _build(name, **extra):
    return nbo.algorithms.get(name, **SMALL[name], **extra)


def _problem(algo):
    return nbo.benchmarks.get("branin_constrained" if algo.constrained else "branin")


def _finite(tree) -> bool:
    leaves = [x for x in jax.tree.leaves(tree) if hasattr(x, "dtype") and jnp.issubdtype(x.dtype, jnp.inexact)]
    return all(bool(jnp.all(jnp.isfinite(x))) for x in leaves)


def _inside(x, problem) -> bool:
    x = np.asarray(x)
    return bool(np.all(x >= problem.bounds.lower) and np.all(x <= problem.bounds.upper))


def _data(problem, n, key=0):
    x = np.asarray(nbo.initial_design(jax.random.key(key), problem.bounds, n))
    y = np.asarray(jax.vmap(problem.objective)(jnp.asarray(x)))
    c = None if problem.constraints is None else np.asarray(problem.constraint_values(jnp.asarray(x)))
    return x, y, c


@pytest.mark.parametrize("name", NAMES)
def test_run_bo_jit_and_vmap(name):
    algo = _build(name)
    assert algo.batch_rule in BATCH_RULES and algo.q == 1 and algo.config is not None
    problem = _problem(algo)
    keys = jax.random.split(jax.random.key(0), 2)
    hist = jax.vmap(lambda k: nbo.run_bo(k, algo, problem, n_init=4, n_iter=2))(keys)
    assert hist.x.shape == (2, 6, 2) and _inside(hist.x, problem)
    assert bool(jnp.all(jnp.isfinite(hist.y)))
    # the per-step diagnostics every algorithm reports
    np.testing.assert_array_equal(hist.info["n_observed"], [[4, 5, 6]] * 2)
    np.testing.assert_array_equal(hist.info["n_failed"], 0)
    # the seeds are different runs sharing nothing but the compiled code
    assert not np.allclose(hist.x[0], hist.x[1])


@pytest.mark.parametrize("name", NAMES)
def test_uniform_signatures_nan_observations_batches_and_pending_points(name):
    algo = _build(name)
    problem = _problem(algo)
    x0, y0, c0 = _data(problem, 5)
    y0 = y0.copy()
    y0[1] = np.nan  # a failed initial evaluation
    if c0 is not None:
        c0 = c0.copy()
        c0[3, 0] = np.inf
    cap = 12
    state = algo.init(jax.random.key(1), x0, y0, c0, bounds=problem.bounds, capacity=cap)
    assert isinstance(state.data, nbo.Dataset) and isinstance(state.bounds, nbo.Bounds)
    assert int(state.data.count) == 5
    assert state.data.failed.tolist()[:5] == ([False, True, False, c0 is not None, False])
    assert _finite(state)
    ask, tell = jax.jit(algo.ask), jax.jit(algo.tell)
    x = ask(state, jax.random.key(2))
    assert x.shape == (2,) and _inside(x, problem) and bool(jnp.all(jnp.isfinite(x)))
    c = None if c0 is None else jnp.full((problem.n_constraints,), jnp.nan)
    state = tell(state, x, jnp.nan, c)  # a failed evaluation is information, never NaN in the state
    assert int(state.data.count) == 6 and bool(state.data.failed[5]) and _finite(state)
    # a point with a NaN coordinate is not recorded at all
    bad = tell(state, jnp.array([jnp.nan, 0.5]), 1.0, None if c is None else jnp.zeros_like(c))
    assert int(bad.data.count) == 6 and _finite(bad)
    x2 = ask(state, jax.random.key(3))
    assert _inside(x2, problem) and bool(jnp.all(jnp.isfinite(x2)))
    # constraint values are data: an algorithm that models them refuses a tell without them
    if algo.constrained:
        with pytest.raises(ValueError, match="c"):
            algo.tell(state, x2, 1.0)
    else:
        kept = algo.tell(state, x2, 1.0, jnp.zeros((2,)))  # ignored by an unconstrained algorithm
        assert int(kept.data.count) == 7
    # a batch of q = 3 distinct points in the box (the algorithm's batch rule)
    q_algo = batched(algo, 3) if algo.batch_rule != "native" else _build(name, q=3)
    X = jax.jit(q_algo.ask)(state, jax.random.key(4))
    assert X.shape == (3, 2) and _inside(X, problem)
    gaps = np.linalg.norm(np.asarray(X)[:, None] - np.asarray(X)[None], axis=-1) + np.eye(3)
    assert np.min(gaps) > 1e-6, X
    cq = None if c0 is None else jnp.zeros((3, problem.n_constraints))
    after = q_algo.tell(state, X, jnp.ones(3), cq)
    assert int(after.data.count) == 9
    # pending points: the same key asks elsewhere once the first point is pending
    pend = fantasize(algo, state, jnp.reshape(x2, (1, 2)))
    assert int(pend.data.count) == 7
    x3 = ask(pend, jax.random.key(3))
    assert _inside(x3, problem) and float(jnp.linalg.norm(x3 - x2)) > 1e-6


@pytest.mark.parametrize("name", NAMES)
def test_save_resume_continues_bit_for_bit(name, tmp_path):
    algo = _build(name)
    problem = _problem(algo)
    x0, y0, c0 = _data(problem, 4, key=5)

    def measure(x):
        y = float(problem.objective(jnp.asarray(x)))
        c = None if c0 is None else np.asarray(problem.constraint_values(jnp.asarray(x)))
        return y, c

    opt = AskTell(algo, problem.bounds, 8, jax.random.key(6), x0, y0, c0)
    x = opt.ask()
    opt.tell(x, *measure(x))
    opt.save(tmp_path)
    resumed = AskTell.load(tmp_path, algorithm=algo)
    a, b = [], []
    for o, out in ((opt, a), (resumed, b)):
        for _ in range(2):
            x = o.ask()
            o.tell(x, *measure(x))
            out.append(x)
    np.testing.assert_array_equal(np.array(a), np.array(b))
