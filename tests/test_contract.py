"""One contract for every registry algorithm (issue 12), in the manner of optax's
``alias_test.py``: one table of algorithms feeding shared tests.

Each algorithm, at small settings and with batches of ``q = 3``, goes through ``run_bo``
under ``jit`` and ``vmap`` in float64 on a constrained problem (constraint values are passed
to every algorithm as data) whose evaluations fail on part of the box, where a vmapped seed
must equal the seed run alone; then, in float32, through :class:`~nbo_jax.ask_tell.AskTell`
with the same ``init``/``ask``/``tell``: a failed initial evaluation, pending points, failed
told points (flagged, imputed, every state leaf finite), and save/resume continuing bit for
bit. Compilations are the cost of this file: two of ``run_bo`` and four of AskTell's programs
per algorithm.
"""

import dataclasses
import pathlib
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import nbo_jax as nbo
from nbo_jax.registry import REGISTRY
from nbo_jax.ask_tell import AskTell
from nbo_jax.types import BATCH_RULES

GOLDEN = pathlib.Path(__file__).parent / "golden"  # test_golden.py's histories
GOLDEN_N_ITER = 10  # the golden runs' BO steps (after 5 initial points)
FAILING_SEED = 7  # the key of the golden branin_failing_q3 run, the vmapped-seed test's second seed

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
    "gp-ntk": dict(fit_steps=5, **_ACQ),
    "gp-cei": dict(fit_steps=5, **_ACQ),
    "gp-lcb-c": dict(fit_steps=5, **_ACQ_NO_STEPS),
    "random": dict(),
    "neural-cbo": dict(width=8, train_steps=5, init_steps=5, **_ACQ_NO_STEPS),
    "pinn-bo": dict(width=8, n_residual=16, residual_batch=8, epochs=2, init_epochs=2, info_points=8,
                    **_ACQ_NO_STEPS),
    "rf-ei": dict(n_estimators=10, raw_samples=32),
    "ensemble-ts": dict(members=2, width=8, epochs=2, **_ACQ),
    "vbll-ts": dict(width=8, steps=5, init_steps=5, **_ACQ),
}
NAMES = sorted(REGISTRY)


def test_the_table_covers_every_registry_algorithm():
    assert sorted(SMALL) == NAMES


def _build(name, q=1):
    kwargs = dict(SMALL[name])
    if q > 1 and nbo.registry.get(name, **kwargs).batch_rule == "native":
        kwargs.update(_ACQ_NO_STEPS)  # a native batch rule selects among raw samples
    return nbo.registry.get(name, **kwargs, q=q)


CUT = 6.0


def _failing_problem():
    """Constrained Branin whose evaluations fail (NaN objective) for x_1 > 6: every algorithm
    is called with constraint values (data, ignored by those that do not model them) and sees
    failed evaluations."""
    base = nbo.benchmarks.get("branin_constrained")
    return dataclasses.replace(base, name="failing_branin_constrained",
                               objective=lambda x: jnp.where(x[0] > CUT, jnp.nan, base.objective(x)))


def _finite(tree) -> bool:
    leaves = [x for x in jax.tree.leaves(tree) if hasattr(x, "dtype") and jnp.issubdtype(x.dtype, jnp.inexact)]
    return all(bool(jnp.all(jnp.isfinite(x))) for x in leaves)


def _inside(x, problem) -> bool:
    x = np.asarray(x)
    return bool(np.all(x >= problem.bounds.lower) and np.all(x <= problem.bounds.upper))


def _distinct(X) -> bool:
    X = np.asarray(X).reshape(-1, 2)
    gaps = np.linalg.norm(X[:, None] - X[None], axis=-1) + np.eye(len(X))
    return bool(np.min(gaps) > 1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_contract(name, tmp_path):
    algo = _build(name, q=3)
    assert algo.batch_rule in BATCH_RULES and algo.q == 3 and algo.config is not None
    problem = _failing_problem()

    # AskTell: the same init/ask/tell with a failed initial evaluation, pending points,
    # a failed told batch, save/resume bit for bit
    x0 = np.array(nbo.initial_design(jax.random.key(3), problem.bounds, 5))
    x0[0, 0] = 8.0  # fails
    y0 = np.asarray(jax.vmap(problem.objective)(jnp.asarray(x0)))
    c0 = np.asarray(problem.constraint_values(jnp.asarray(x0)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        opt = AskTell(algo, problem.bounds, 20, jax.random.key(4), x0, y0, c0)
    state = opt.state
    assert isinstance(state.data, nbo.Dataset) and isinstance(state.bounds, nbo.Bounds)
    assert int(state.data.count) == 5 and state.data.failed.tolist()[:5] == [True] + [False] * 4
    assert _finite(state)
    X = opt.ask()
    assert X.shape == (3, 2) and _inside(X, problem) and _distinct(X)
    Y = opt.ask()  # three points pending: fantasized, so the next batch goes elsewhere
    assert _inside(Y, problem) and _distinct(np.concatenate([X, Y]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        opt.tell(X, [np.nan, 1.0, 2.0], np.zeros((3, 1)))
        opt.tell(Y, [3.0, np.nan, 4.0], np.zeros((3, 1)))
    assert len(opt.pending) == 0 and int(opt.state.data.count) == 11
    assert opt.state.data.failed.tolist()[:11] == [True] + [False] * 4 + [True, False, False, False, True, False]
    assert _finite(opt.state)
    opt.save(tmp_path)
    resumed = AskTell.load(tmp_path, algorithm=algo)
    a, b = opt.ask(), resumed.ask()
    np.testing.assert_array_equal(a, b)
    assert _inside(a, problem) and bool(np.all(np.isfinite(a)))


# bit for bit in float64; the others agree to rounding (README): XLA's CPU backend compiles a
# reduction fused with elementwise arithmetic differently for a batched shape (measured: the GP's
# sum_k ((a_k - b_k) / l_k)^2 differs by 1.8e-15 between a vmapped and a single program), and
# every GP fit, network and climb is full of such reductions
BIT_FOR_BIT = ("neural-cbo", "neural-ts", "pinn-bo", "random")

# the algorithms whose vmapped run below is also a run in segments: one per state structure
# (state type, tree and leaf shapes at both capacities), which is all that
# ``nbo_jax.loop.grow_state`` acts on; the others run in one segment (segments cost 2.5 times
# a one-segment compile: CI time). test_segmented_algorithms_cover_every_state_structure keeps
# this list complete.
SEGMENTED = ("adaptive-basis", "ensemble-ts", "gp-lcb-c", "gp-ts", "neural-bo", "neural-cbo", "neural-greedy",
             "neural-ts", "pinn-bo", "random", "rf-ei", "vbll-ts")


def _state_structure(algo, problem, capacity):
    state = jax.eval_shape(lambda: algo.init(jax.random.key(0), jnp.ones((5, 2)), jnp.ones(5), jnp.zeros((5, 2)),
                                             bounds=problem.bounds, capacity=capacity))
    leaves, treedef = jax.tree_util.tree_flatten(state)
    return type(state).__name__, str(treedef), tuple((getattr(x, "shape", None), str(getattr(x, "dtype", "")))
                                                     for x in leaves)


def test_segmented_algorithms_cover_every_state_structure(x64):
    structures, problem = {}, _failing_problem()
    for name in NAMES:
        algo = _build(name, q=3)
        structures.setdefault(tuple(_state_structure(algo, problem, c) for c in (11, 23)), []).append(name)
    uncovered = [names for names in structures.values() if not set(names) & set(SEGMENTED)]
    assert not uncovered, f"add one of each to SEGMENTED: {uncovered}"
    assert set(SEGMENTED) <= set(NAMES)


# presets that share a sibling's model and code path and differ only in their acquisition or
# settings (the sibling in parentheses runs the test): CI's 15 minutes
SHARED_PATH = {"gp-ucb",  # (gp-ei)
               "gp-cei",  # (gp-lcb-c)
               "neural-ucb",  # (neural-bo, neural-ts)
               "dngo",  # (adaptive-basis)
               "neural-greedy-posterior",  # (neural-greedy)
               "gp-ntk"}  # (gp-ei; the NTK kernel's own tests: test_gp.py, test_features_ntk.py)


@pytest.mark.parametrize("name", [n for n in NAMES if n not in SHARED_PATH])
def test_run_bo_jit_vmap_and_a_vmapped_seed_equals_the_seed_run_alone_in_float64(name, x64):
    """``run_bo`` under ``jit`` and ``vmap`` over two seeds, batches of ``q = 3``, constraint
    values passed as data, some evaluations failing (shapes, bounds, distinct batches, the
    counts in ``info``); and the README promise: in float64 a seed run inside ``jax.vmap``
    gives the run of the same seed alone: bit for bit for :data:`BIT_FOR_BIT`, to rounding
    (relative 1e-6) for the others. The second seed is the golden history's
    (``tests/golden/<name>.npz``, case ``branin_failing_q3``: the same run alone, which
    ``test_golden.py`` runs only for :data:`SHARED_PATH`: this test is that history's check),
    so only the bit-for-bit algorithms compile the single run here (and compare it with the
    history to relative 1e-9). For :data:`SEGMENTED` (one algorithm per state
    structure) the vmapped run is also a run in two segments of growing capacity
    (``segments=2``) and the single one is not, so the same comparison checks that segments
    give the one-segment run (to rounding, and bit for bit for :data:`BIT_FOR_BIT`)."""
    algo = _build(name, q=3)
    problem = _failing_problem()
    n_iter = GOLDEN_N_ITER
    run = lambda k: nbo.run_bo(k, algo, problem, n_init=5, n_iter=n_iter)  # noqa: E731
    keys = jnp.stack([jax.random.split(jax.random.key(FAILING_SEED))[0], jax.random.key(FAILING_SEED)])
    n = 5 + 3 * n_iter
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        segments = 2 if name in SEGMENTED else 1
        hist = jax.jit(jax.vmap(lambda k: nbo.run_bo(k, algo, problem, n_init=5, n_iter=n_iter,
                                                     segments=segments)))(keys)
        alone = jax.jit(run)(keys[1]) if name in BIT_FOR_BIT else None
    assert hist.x.shape == (2, n, 2) and _inside(hist.x, problem) and bool(jnp.all(jnp.isfinite(hist.x)))
    assert not np.allclose(hist.x[0], hist.x[1])
    for seed in range(2):
        for t in range(n_iter):
            assert _distinct(hist.x[seed, 5 + 3 * t: 8 + 3 * t]), hist.x[seed]
    np.testing.assert_array_equal(hist.info["n_observed"], [list(range(5, n + 1, 3))] * 2)
    failed = ~np.asarray(hist.valid)
    assert failed.any(), "the test problem should produce failed evaluations"
    np.testing.assert_array_equal(hist.info["n_failed"][:, -1], failed.sum(axis=1))
    golden = np.load(GOLDEN / f"{name}.npz")
    if name in BIT_FOR_BIT:
        np.testing.assert_array_equal(hist.x[1], alone.x)
        np.testing.assert_array_equal(hist.y[1], alone.y)
        for v in ("x", "y"):  # the golden history's own check (test_golden.py runs this case only for SHARED_PATH)
            np.testing.assert_allclose(getattr(alone, v), golden[f"branin_failing_q3.{v}"], rtol=1e-9, atol=1e-12)
    else:
        np.testing.assert_allclose(hist.x[1], golden["branin_failing_q3.x"], rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(hist.y[1], golden["branin_failing_q3.y"], rtol=1e-6, atol=1e-8)
