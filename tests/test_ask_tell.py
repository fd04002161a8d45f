"""AskTell for experiments (issue 12): the reproductions of what a lab hit, as tests.

1. a NaN coordinate told is refused (nothing recorded, the surrogate stays finite);
3. bounds as a list of (low, high) pairs are read per dimension in 2-D;
4. save/resume (bit-identical), pickling, capacity refused in ``ask`` or grown;
5. asks inside float64 bounds in the user's dtype;
and pending points, batches of results told one by one, failed evaluations kept.
"""

import pickle
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import nbo_jax as nbo
from nbo_jax.ask_tell import AskTell

X0 = np.array([[-1.5, 0.3], [0.7, -1.1], [1.2, 1.6], [-0.4, -0.2]])
SMALL_GP = dict(acq_optimizer=dict(raw_samples=64, num_restarts=2, steps=3))


def _f(x):
    x = np.asarray(x, dtype=float)
    return float(np.sum((x - 0.3) ** 2))


def _opt(algo=None, capacity=20, bounds=([-2.0, -2.0], [2.0, 2.0]), **kwargs):
    algo = nbo.gp_bo(**SMALL_GP) if algo is None else algo
    return AskTell(algo, bounds, capacity, jax.random.key(0), X0, [_f(x) for x in X0], **kwargs)


def _numpy(state):
    """The state's leaves as numpy arrays (PRNG keys by their key data)."""
    def conv(x):
        if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
            return np.asarray(jax.random.key_data(x))
        return np.asarray(x)

    return jax.tree.map(conv, state)


def _finite_leaves(state) -> bool:
    leaves = [x for x in jax.tree.leaves(state)
              if hasattr(x, "dtype") and jnp.issubdtype(x.dtype, jnp.inexact)]
    return all(bool(jnp.all(jnp.isfinite(x))) for x in leaves)


# ---------------------------------------------------------------- reproduction 1
def test_nan_coordinate_is_refused_and_nothing_is_recorded():
    opt = _opt()
    before = _numpy(opt.state)
    with pytest.raises(ValueError, match=r"x has NaN/inf coordinates in row\(s\) \[0\].*nothing was recorded"):
        opt.tell(np.array([np.nan, 0.0]), 1.0)
    with pytest.raises(ValueError, match="outside the bounds: coordinate 0 is 2.5"):
        opt.tell(np.array([2.5, 0.0]), 1.0)
    with pytest.raises(ValueError, match=r"x must have shape \(d,\) or \(n, d\) with d = 2"):
        opt.tell(np.array([0.0, 0.0, 0.0]), 1.0)
    with pytest.raises(ValueError, match="y must hold one value per point: 2 value"):
        opt.tell(np.array([0.0, 0.0]), [1.0, 2.0])
    assert len(opt.y) == 4
    jax.tree.map(np.testing.assert_array_equal, before, _numpy(opt.state))
    # the surrogate is still finite and the next ask is a real point, not a NaN/random one
    post = opt.algorithm.surrogate(opt.state, jnp.full((3, 2), 0.5))
    assert np.all(np.isfinite(post.mean)) and np.all(np.isfinite(post.std))
    x = opt.ask()
    assert np.all(np.isfinite(x))


def test_failed_evaluation_is_kept_as_information():
    opt = _opt()
    x = opt.ask()
    with pytest.warns(RuntimeWarning, match="1 failed evaluation"):
        opt.tell(x, float("nan"))
    assert opt.valid.tolist() == [True] * 4 + [False]
    data = opt.state.data
    assert bool(data.failed[4]) and bool(data.mask[4])
    # imputed with the worst value seen so far, so the model learns the point is bad
    assert float(data.y[4]) == pytest.approx(max(_f(r) for r in X0), rel=1e-6)
    assert _finite_leaves(opt.state)
    best_x, best_y = opt.best()
    assert best_y == pytest.approx(min(_f(r) for r in X0))


# ---------------------------------------------------------------- reproduction 3
def test_bounds_as_pairs_are_read_per_dimension_in_2d():
    opt = AskTell(nbo.random_search(), [(0.0, 1.0), (5.0, 10.0)], 10, jax.random.key(0),
                  np.array([[0.5, 7.0]]), [1.0])
    np.testing.assert_array_equal(opt.bounds.lower, [0.0, 5.0])
    np.testing.assert_array_equal(opt.bounds.upper, [1.0, 10.0])
    xs = np.array([opt.ask() for _ in range(5)])
    assert np.all((xs[:, 0] >= 0) & (xs[:, 0] <= 1) & (xs[:, 1] >= 5) & (xs[:, 1] <= 10))
    # the (lower, upper) form of the same box reads the same
    same = AskTell(nbo.random_search(), ([0.0, 5.0], [1.0, 10.0]), 10, jax.random.key(0),
                   np.array([[0.5, 7.0]]), [1.0])
    np.testing.assert_array_equal(same.bounds.lower, opt.bounds.lower)
    # pairs whose low >= high are an error naming the reading, never another box
    with pytest.raises(ValueError, match=r"read as a list of \(low, high\) pairs.*index \[1\]"):
        nbo.types.as_bounds([(0.0, 1.0), (10.0, 5.0)])


def test_problem_with_tuple_or_pair_bounds():
    p = nbo.Problem("q", 2, ([-1.0, -1.0], [1.0, 2.0]), lambda x: jnp.sum(x ** 2))  # (lower, upper)
    np.testing.assert_array_equal(p.bounds.upper, [1.0, 2.0])
    pairs = nbo.Problem("q", 2, [(-1.0, 1.0), (-1.0, 2.0)], lambda x: jnp.sum(x ** 2))  # (low, high) per dim
    np.testing.assert_array_equal(pairs.bounds.upper, [1.0, 2.0])
    with pytest.raises(ValueError, match=r"Problem.bounds \(read as a list of \(low, high\) pairs"):
        nbo.Problem("q", 2, ((-1.0, -1.0), (1.0, 2.0)), lambda x: jnp.sum(x ** 2))
    p3 = nbo.Problem("q3", 3, ([-1.0] * 3, [1.0, 2.0, 3.0]), lambda x: jnp.sum(x ** 2))
    np.testing.assert_array_equal(p3.bounds.upper, [1.0, 2.0, 3.0])
    hist = nbo.run_bo(jax.random.key(0), nbo.random_search(), p3, 2, 2)
    assert hist.x.shape == (4, 3)


# ---------------------------------------------------------------- reproduction 4
def test_save_and_resume_continue_bit_for_bit(tmp_path):
    opt = _opt(nbo.gp_bo(**SMALL_GP))
    for _ in range(2):
        x = opt.ask()
        opt.tell(x, _f(x))
    pending = opt.ask()  # an evaluation in flight when the lab shuts down
    opt.save(tmp_path / "run")
    resumed = AskTell.load(tmp_path / "run")  # rebuilt from the saved factory call
    assert resumed.algorithm.name == "gp-ei"
    np.testing.assert_array_equal(resumed.pending, opt.pending)
    for o in (opt, resumed):
        o.tell(pending, _f(pending))
    a, b = [], []
    for o, out in ((opt, a), (resumed, b)):
        for _ in range(2):
            x = o.ask()
            o.tell(x, _f(x))
            out.append(x)
    np.testing.assert_array_equal(np.array(a), np.array(b))
    np.testing.assert_array_equal(opt.y, resumed.y)


def test_pickle_round_trip_and_refusal_for_hand_made_algorithms():
    opt = _opt(nbo.random_search())
    again = pickle.loads(pickle.dumps(opt))
    np.testing.assert_array_equal(again.x, opt.x)
    np.testing.assert_array_equal(again.ask(), opt.ask())
    hand = _opt(nbo.random_search()._replace(config=None))
    with pytest.raises(TypeError, match="cannot pickle this AskTell.*opt.save"):
        pickle.dumps(hand)


def test_resume_from_history_when_the_algorithm_changed(tmp_path):
    opt = _opt(nbo.random_search())
    x = opt.ask()
    opt.tell(x, _f(x))
    opt.save(tmp_path)
    with pytest.warns(RuntimeWarning, match="starts from the saved history of 5 observation"):
        other = AskTell.load(tmp_path, algorithm=nbo.gp_bo(**SMALL_GP))
    assert int(other.state.data.count) == 5
    np.testing.assert_allclose(other.state.bounds.from_unit(other.state.data.u[:5]), opt.x, rtol=1e-6, atol=1e-6)
    with pytest.raises(FileNotFoundError, match="no saved AskTell"):
        AskTell.load(tmp_path / "nothing")


def test_capacity_is_refused_in_ask_before_the_experiment_or_grown():
    opt = _opt(nbo.random_search(), capacity=5)
    x = opt.ask()
    with pytest.raises(ValueError, match=r"capacity \(5\) reached: 4 told \+ 1 pending \+ 1 new.*nothing was asked"):
        opt.ask()
    opt.tell(x, _f(x))  # the point that was handed out can always be told
    opt.grow(8)
    for _ in range(3):
        x = opt.ask()
        opt.tell(x, _f(x))
    assert len(opt.y) == 8 and int(opt.state.data.count) == 8
    auto = _opt(nbo.random_search(), capacity=4, auto_grow=True)
    x = auto.ask()
    auto.tell(x, _f(x))
    assert auto.capacity == 8


# ---------------------------------------------------------------- reproduction 5
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_asks_are_inside_the_users_bounds_in_the_users_dtype(dtype):
    lo = np.array([0.1, -0.3], dtype)  # not representable in binary: float32 rounding would leave the box
    hi = np.array([0.7, 0.9], dtype)
    x0 = np.array([[0.3, 0.2]])
    opt = AskTell(nbo.gp_bo(**SMALL_GP), (lo, hi), 30, jax.random.key(1), x0, [1.0])
    for i in range(20):
        x = opt.ask()
        assert x.dtype == dtype
        assert np.all(x >= lo) and np.all(x <= hi), (i, x)
        opt.tell(x, float(np.sum((x.astype(float) - lo) ** 2)))  # minimum on the corner: asks hit the bounds


# ---------------------------------------------------------------- batches and pending points
def test_pending_points_are_not_asked_twice_and_results_come_one_by_one():
    opt = _opt(nbo.gp_bo(q=3, **SMALL_GP))
    X = opt.ask()
    assert X.shape == (3, 2) and len(opt.pending) == 3
    assert np.min(np.linalg.norm(X[:, None] - X[None], axis=-1) + 10 * np.eye(3)) > 1e-3
    Y = opt.ask()  # another worker asks while the first three are in flight
    dist = np.linalg.norm(X[:, None] - Y[None], axis=-1)
    assert np.min(dist) > 1e-3
    for row in np.concatenate([X, Y])[::-1]:
        opt.tell(row, _f(row))
    assert len(opt.pending) == 0 and len(opt.y) == 10


def test_add_pending_marks_points_another_process_asked():
    # a pending point added by hand is fantasized like an asked one: the next ask equals the
    # ask made while that point was pending from an ask of its own
    a, b = _opt(nbo.gp_bo(**SMALL_GP)), _opt(nbo.gp_bo(**SMALL_GP))
    x = a.ask()
    b._key = a._key  # same key stream for the second ask
    b.add_pending(x)
    np.testing.assert_array_equal(b.pending, a.pending)
    np.testing.assert_array_equal(b.ask(), a.ask())
    b.tell(x, _f(x))
    assert len(b.pending) == 1 and len(b.y) == 5
    with pytest.raises(ValueError, match="x row 0 is outside the bounds.*nothing was recorded"):
        b.add_pending([3.0, 0.0])
    with pytest.raises(ValueError, match=r"capacity \(6\) reached.*pending point\(s\) would not fit"):
        _opt(capacity=6).add_pending(np.zeros((3, 2)))
    assert len(b.pending) == 1


def test_constraint_values_are_data_not_a_flag():
    # an unconstrained algorithm records c (the history keeps it) and ignores it
    c0 = np.array([[0.1], [-0.2], [-0.3], [0.5]])
    opt = AskTell(nbo.random_search(), ([-2, -2], [2, 2]), 10, jax.random.key(0), X0, [_f(x) for x in X0], c0)
    x = opt.ask()
    with pytest.raises(ValueError, match="needs them"):
        opt.tell(x, 1.0)
    opt.tell(x, 1.0, [0.2])
    assert opt.c.shape == (5, 1)
    # a constrained algorithm needs them at init
    with pytest.raises(ValueError, match="c0: algorithm 'gp-cei' models constraints"):
        AskTell(nbo.gp_bo(acquisition="cei"), ([-2, -2], [2, 2]), 10, jax.random.key(0), X0, [_f(x) for x in X0])


def test_large_capacities_compile_at_xla_default_level():
    """On a CPU, AskTell's programs compile with LLVM at level 0 and without XLA:CPU's fusion
    emitters below OPTIMIZED_FROM_CAPACITY rows (the locked jaxlib knows the option) and at
    XLA's defaults from it; an optimizer grown across it takes the other programs; an option
    the installed XLA does not know is left out."""
    from nbo_jax.ask_tell import CPU_OPTIMIZATION_LEVEL, OPTIMIZED_FROM_CAPACITY, _compiled, compiler_options

    assert jax.default_backend() == "cpu"
    quick = {"xla_backend_optimization_level": CPU_OPTIMIZATION_LEVEL, "xla_cpu_use_fusion_emitters": False}
    assert CPU_OPTIMIZATION_LEVEL == 0 and OPTIMIZED_FROM_CAPACITY == 128
    assert compiler_options() == compiler_options(127) == quick
    assert compiler_options(128) is None and compiler_options(1024) is None
    algo = nbo.random_search()
    assert _compiled(algo, 8)[1] is _compiled(algo, 127)[1] is _compiled(algo)[1]
    assert _compiled(algo, 128)[1] is _compiled(algo, 256)[1] is not _compiled(algo, 127)[1]
    X0 = np.array([[0.5, 0.5], [-1.0, 1.0]])
    opt = AskTell(algo, ([-2, -2], [2, 2]), 4, jax.random.key(0), X0, [_f(x) for x in X0])
    assert opt._ask is _compiled(algo, 4)[1]
    opt.grow(200)
    assert opt._ask is _compiled(algo, 200)[1] and opt.ask().shape == (2,)
    from nbo_jax.ask_tell import _known

    assert _known("xla_cpu_use_fusion_emitters", False) and not _known("xla_cpu_no_such_option", True)


def test_the_gps_mixed_ask_compiles_at_level_0_at_every_capacity(monkeypatch):
    """LEVEL_0_MIXED_ASKS: on a CPU the GP's ``ask`` on a mixed space compiles with the small
    capacities' options at every capacity, while its ``init``, ``tell`` and fantasies take XLA's
    defaults from OPTIMIZED_FROM_CAPACITY rows; the GP's ``ask`` on a box and Neural-BO's on
    the space take XLA's defaults there too; AskTell passes its space."""
    from nbo_jax import ask_tell
    from nbo_jax.search_space import Categorical, Continuous, SearchSpace

    made = {}
    jit = jax.jit

    def spy(fun, **kwargs):
        program = jit(fun, **kwargs)
        made[id(program)] = kwargs.get("compiler_options")
        return program

    monkeypatch.setattr(ask_tell, "_COMPILED", {})
    monkeypatch.setattr(ask_tell.jax, "jit", spy)
    quick = ask_tell.compiler_options()
    assert quick is not None and ask_tell.LEVEL_0_MIXED_ASKS == ("gp",)
    space = SearchSpace((Continuous("x", -1.0, 1.0), Categorical("k", ("a", "b"))))
    box = nbo.Bounds(np.zeros(2), np.ones(2))
    gp, nn = nbo.gp_bo(), nbo.neural_bo()
    init, ask, tell, fantasies = ask_tell._compiled(gp, 256, space)
    assert made[id(ask)] == quick
    assert made[id(init)] is None and made[id(tell)] is None and made[id(fantasies)] is None
    assert [made[id(p)] for p in ask_tell._compiled(gp, 64, space)] == [quick] * 4
    assert made[id(ask_tell._compiled(gp, 256, box)[1])] is None
    assert made[id(ask_tell._compiled(nn, 256, space)[1])] is None
    # an optimizer on the space: random search's code with the GP as its model (nothing to fit)
    fake = nbo.random_search()._replace(model=gp.model)
    opt = AskTell(fake, space, 128, jax.random.key(0), np.array([[0.5, 1.0]]), [1.0])
    assert made[id(opt._ask)] == quick and made[id(opt._tell)] is None
    assert opt._ask is ask_tell._compiled(fake, 128, space)[1]


def _two_step_gp_case():
    """``(algo, box, X (6, 2), y (6,), init)``: a GP fitted by two L-BFGS steps (the start shows
    in the result), its box, six points and their values, and its ``init`` under ``jit``
    (``capacity`` static), for the tests of a fit's start."""
    algo = nbo.gp_bo(fit_steps=2, **SMALL_GP)
    X = np.array([[0.5, 0.5], [-1.0, 1.0], [1.5, -0.5], [0.0, -1.5], [-1.2, -0.3], [1.1, 1.7]])
    y = np.array([_f(x) for x in X])
    return algo, ([-2.0, -2.0], [2.0, 2.0]), X, y, jax.jit(algo.init, static_argnames="capacity")


def test_warm_start_fits_from_the_previous_optimizers_hyperparameters(x64):
    """``AskTell(..., warm_start=previous)``: the GP's first fit starts from ``previous``'s
    fitted hyperparameters (a different start than the prior mode, which the optimizer
    without it fits: the same data, other hyperparameters before the fit converges, and the
    state equal to an ``init`` given that start); errors name ``warm_start``."""
    algo, box, X, y, init = _two_step_gp_case()
    previous = AskTell(algo, box, 8, jax.random.key(0), X[:4], y[:4])
    start = previous.hyperparameters
    assert isinstance(start, nbo.gp_model.GPParams) and start.log_lengthscale.shape == (2,)
    warm = AskTell(algo, box, 16, jax.random.key(1), X, y, warm_start=previous)
    cold = AskTell(algo, box, 16, jax.random.key(1), X, y)
    assert not np.allclose(warm.hyperparameters.log_lengthscale, cold.hyperparameters.log_lengthscale)
    k0 = jax.random.split(jax.random.key(1))[1]  # the key AskTell gives init
    want = init(k0, jnp.asarray(X), jnp.asarray(y), capacity=16, bounds=nbo.Bounds(*map(jnp.asarray, box)),
                start=start)
    for g, w in zip(jax.tree.leaves(warm.hyperparameters), jax.tree.leaves(want.model.params)):
        np.testing.assert_allclose(g, w, rtol=1e-9)
    assert warm.ask().shape == (2,)
    with pytest.raises(TypeError, match="warm_start must be an AskTell"):
        AskTell(algo, box, 16, jax.random.key(1), X, y, warm_start=start)
    rs = _opt(nbo.random_search())
    assert rs.hyperparameters is None
    with pytest.raises(ValueError, match=r"warm_start must run this algorithm \('gp-ei'\), got one running 'random'"):
        AskTell(algo, box, 16, jax.random.key(1), X, y, warm_start=rs)
    with pytest.raises(ValueError, match="warm_start must be an optimizer on the same domain"):
        AskTell(algo, ([-2.0] * 3, [2.0] * 3), 16, jax.random.key(1), np.zeros((1, 3)), [1.0], warm_start=previous)
    with pytest.raises(TypeError, match="warm_start is given, but the algorithm 'random' has no surrogate"):
        AskTell(rs.algorithm, box, 16, jax.random.key(1), X, y, warm_start=rs)
    assert AskTell(nbo.gp_bo(warm_start=False, **SMALL_GP), box, 8, jax.random.key(0), X, y).hyperparameters is None


def test_grow_refits_from_the_current_hyperparameters(x64):
    """``grow``: the GP's refit on the history at the new capacity starts from the optimizer's
    current fitted hyperparameters (as ``warm_start``), not from the prior mode: the state
    equals an ``init`` given that start, and differs from the fit without it."""
    algo, box, X, y, init = _two_step_gp_case()
    opt = AskTell(algo, box, 8, jax.random.key(0), X, y)
    start, k = opt.hyperparameters, jax.random.split(opt._key)[1]  # the key grow gives init
    opt.grow(16)
    args = (k, jnp.asarray(X), jnp.asarray(y))
    bounds = nbo.Bounds(*map(jnp.asarray, box))
    want = init(*args, capacity=16, bounds=bounds, start=start)
    for g, w in zip(jax.tree.leaves(opt.hyperparameters), jax.tree.leaves(want.model.params)):
        np.testing.assert_allclose(g, w, rtol=1e-9)
    cold = init(*args, capacity=16, bounds=bounds)
    assert not np.allclose(opt.hyperparameters.log_lengthscale, cold.model.params.log_lengthscale)
    assert opt.capacity == 16 and opt.ask().shape == (2,)


def test_same_factory_call_shares_compiled_code():
    """Two algorithms from the same factory call with the same plain arguments share one
    canonical algorithm (one compile per process); other arguments, replaced code or
    non-plain arguments do not."""
    import jax.numpy as jnp

    from nbo_jax.ask_tell import _compiled, canonical

    a, b = nbo.gp_bo(acquisition="ucb"), nbo.gp_bo(acquisition="ucb")
    assert a is not b and canonical(b) is canonical(a)
    assert _compiled(a)[0] is _compiled(b)[0]
    assert canonical(nbo.gp_bo(acquisition="ei")) is not canonical(a)
    assert canonical(nbo.gp_bo(acquisition="ucb", beta=3.0)) is not canonical(a)
    mine = a._replace(ask=lambda state, key: state.data.u[0])
    assert canonical(mine) is mine
    arr = nbo.gp_bo(acquisition="ucb", beta=jnp.asarray(2.0))  # an array argument: its own
    assert canonical(arr) is arr


# ---------------------------------------------------------------- no lost work
def test_save_refuses_another_experiments_folder(tmp_path):
    first = _opt()
    first.save(tmp_path / "run")
    first.tell(first.ask(), 1.0)
    first.save(tmp_path / "run")  # the same experiment again: a checkpoint
    resumed = AskTell.load(tmp_path / "run")
    assert resumed.experiment_id == first.experiment_id and len(resumed.y) == 5
    resumed.save(tmp_path / "run")  # a resumed experiment is still the same one
    other = _opt(bounds=([-2.0, -2.0], [3.0, 3.0]))
    with pytest.raises(FileExistsError, match=r"run'.*another experiment.*overwrite=True.*nothing was written"):
        other.save(tmp_path / "run")
    assert len(AskTell.load(tmp_path / "run").y) == 5  # untouched
    other.save(tmp_path / "run", overwrite=True)
    assert AskTell.load(tmp_path / "run").bounds.upper.tolist() == [3.0, 3.0]


def test_load_of_a_damaged_save_names_the_folder_and_what_is_missing(tmp_path):
    import json

    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "meta.json").write_text(json.dumps({"name": "another tool"}))
    with pytest.raises(ValueError, match=r"save at '.*foreign' is damaged or not an AskTell save.*format None"):
        AskTell.load(foreign)

    opt = _opt()
    opt.save(tmp_path / "run")
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    broken = tmp_path / "no-algorithm"
    broken.mkdir()
    (broken / "arrays.npz").write_bytes((tmp_path / "run" / "arrays.npz").read_bytes())
    (broken / "meta.json").write_text(json.dumps({k: v for k, v in meta.items() if k != "algorithm"}))
    with pytest.raises(ValueError, match=r"save at '.*no-algorithm' is damaged: meta.json lacks the field 'algorithm'"):
        AskTell.load(broken)

    with np.load(tmp_path / "run" / "arrays.npz") as f:
        arrays = {k: f[k] for k in f.files}
    arrays["history_y"] = arrays["history_y"][:3]  # a truncated history
    np.savez(tmp_path / "run" / "arrays.npz", **arrays)
    with pytest.raises(ValueError, match=r"save at '.*run' is damaged: its history is truncated.*history_y \(3,\)"):
        AskTell.load(tmp_path / "run")
    (tmp_path / "run" / "arrays.npz").unlink()
    with pytest.raises(ValueError, match=r"save at '.*run' is damaged: arrays.npz is missing"):
        AskTell.load(tmp_path / "run")


def test_drop_pending_frees_the_capacity_of_a_crashed_worker_and_repr_is_readable():
    opt = _opt(algo=nbo.random_search(), capacity=6)
    a, b = opt.ask(), opt.ask()
    with pytest.raises(ValueError, match="capacity"):
        opt.ask()  # 4 told + 2 pending: full
    assert repr(opt) == f"AskTell('random', d=2, told=4, pending=2, best={min(opt.y):.6g}, capacity=6)"
    with pytest.raises(ValueError, match=r"x: 1 of its 1 point\(s\) are not pending.*nothing was dropped"):
        opt.drop_pending([0.0, 0.0])
    assert opt.drop_pending(a) == 1  # the worker that asked for a crashed
    np.testing.assert_array_equal(opt.pending, [b])
    with pytest.warns(RuntimeWarning, match="1 failed evaluation"):
        opt.tell(opt.ask(), float("nan"))
    assert "told=5 (1 failed), pending=1" in repr(opt)
    assert opt.drop_pending() == 1 and len(opt.pending) == 0


def test_values_the_model_cannot_hold_are_refused_or_failed():
    opt = _opt(algo=nbo.random_search())
    with pytest.raises(TypeError, match="y must be real: a complex value would lose its imaginary part"):
        opt.tell(opt.pending[0] if len(opt.pending) else X0[0] * 0.5, 1.0 + 2.0j)
    assert len(opt.y) == 4
    if jnp.zeros(()).dtype == jnp.float32:  # beyond float32: a failed evaluation, said once
        x = opt.ask()
        with pytest.warns(RuntimeWarning, match=r"1 finite value\(s\) of y beyond the model's float32 range"):
            opt.tell(x, -1e39)
        assert not opt.valid[-1] and bool(opt.state.data.failed[4])
        assert opt.best()[1] == min(opt.y[:4])  # -1e39 is never the best
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            with pytest.raises(RuntimeWarning, match="1 failed evaluation"):  # no second range warning first
                opt.tell(opt.ask(), 1e40)


def test_complex_objective_is_refused_by_run_bo():
    problem = nbo.Problem("complex", 2, ([0.0, 0.0], [1.0, 1.0]), lambda x: jnp.sum(x) * (1.0 + 1.0j))
    with pytest.raises(TypeError, match=r"objective of 'complex' returns a complex value.*must be real"):
        nbo.run_bo(jax.random.key(0), nbo.random_search(), problem, 2, 1)


@pytest.mark.parametrize("name", ["gp-ei", "neural-bo"])
def test_pending_points_are_padded_to_powers_of_two_without_changing_the_fantasy(name):
    """``ask`` fantasizes its pending points padded with NaN rows to the next power of two
    (one compiled ``tell`` per power of two, not per count): the fantasized data and the asked
    point are those of the unpadded points, and four asks in a row (1, 2, 3 and 4 pending
    points before the last three) compile the fantasy for 1, 2 and 4 points only."""
    from nbo_jax.ask_tell import padded_pending
    from nbo_jax.transforms.batch import fantasize
    from test_contract import _build

    pending = np.array([[0.5, 0.5], [-1.0, 1.0], [1.5, -0.5]])
    padded = padded_pending(pending)
    assert padded.shape == (4, 2) and np.all(np.isnan(padded[3]))
    np.testing.assert_array_equal(padded_pending(pending[:2]), pending[:2])
    algo = _build(name)
    opt = _opt(algo, capacity=16)
    k = jax.random.key(5)
    alone = fantasize(opt.algorithm, opt.state, jnp.asarray(pending, jnp.float32))
    with_nan = fantasize(opt.algorithm, opt.state, jnp.asarray(padded, jnp.float32))
    assert int(alone.data.count) == int(with_nan.data.count) == 7
    np.testing.assert_array_equal(np.asarray(alone.data.u), np.asarray(with_nan.data.u))
    np.testing.assert_array_equal(np.asarray(alone.data.y), np.asarray(with_nan.data.y))
    np.testing.assert_array_equal(np.asarray(opt._ask(alone, k)), np.asarray(opt._ask(with_nan, k)))

    if name == "gp-ei":
        fresh = _opt(nbo.gp_bo(acq_optimizer=dict(raw_samples=40, num_restarts=2, steps=3)), capacity=16)
        for _ in range(5):
            fresh.ask()
        assert len(fresh.pending) == 5 and fresh._fantasize._cache_size() == 3
