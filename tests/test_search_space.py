"""Mixed search spaces (nbo_jax.search_space): the unit-cube encoding's round trips for every
parameter kind (log, step, edge values), the JAX rounding map against the host decoding, and
the errors that name the parameter."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbo_jax.search_space import Categorical, Continuous, Integer, search_space

SPACE = search_space([
    Continuous("lr", 1e-5, 1e-1, log=True),
    Integer("layers", 1, 7, step=2),
    Categorical("optimizer", ("adam", "sgd", 3)),
    Integer("batch", 1, 1024, log=True),
    Continuous("dropout", 0.0, 0.5),
])


def test_columns_dims_and_the_points_box():
    assert SPACE.unit_dim == 1 + 1 + 3 + 1 + 1 and SPACE.dim == 5
    assert SPACE.names == ("lr", "layers", "optimizer", "batch", "dropout")
    np.testing.assert_array_equal(SPACE.lower, [1e-5, 1, 0, 1, 0.0])
    np.testing.assert_array_equal(SPACE.upper, [1e-1, 7, 2, 1024, 0.5])
    assert SPACE == search_space(list(SPACE.parameters)) and hash(SPACE) == hash(search_space(SPACE.parameters))
    leaves = jax.tree.leaves(SPACE)  # static under jit: no leaves
    assert leaves == []


@pytest.mark.parametrize("config", [
    dict(lr=1e-5, layers=1, optimizer="adam", batch=1, dropout=0.0),           # every low edge
    dict(lr=1e-1, layers=7, optimizer=3, batch=1024, dropout=0.5),              # every high edge
    dict(lr=3.3e-3, layers=5, optimizer="sgd", batch=37, dropout=0.123456789),  # inside
])
def test_encode_decode_round_trips_typed_values(config):
    u = SPACE.encode([config])
    assert u.shape == (1, SPACE.unit_dim) and np.all((u >= 0) & (u <= 1))
    back = SPACE.decode(u)[0]
    assert back["layers"] == config["layers"] and type(back["layers"]) is int
    assert back["batch"] == config["batch"] and type(back["batch"]) is int
    assert back["optimizer"] == config["optimizer"] and type(back["optimizer"]) is type(config["optimizer"])
    assert type(back["lr"]) is float and back["lr"] == config["lr"]  # not 0.0033000000000000004
    assert type(back["dropout"]) is float and back["dropout"] == config["dropout"]
    np.testing.assert_array_equal(u[0, 2:5], np.eye(3)[("adam", "sgd", 3).index(config["optimizer"])])


def test_decoded_floats_carry_no_arithmetic_noise():
    """A float32 encoding (the algorithms' dtype) decodes to the shortest decimal of its float32
    value (``0.3``, not ``0.30000001192092896``); a float64 one to the shortest decimal that
    encodes to the same point (a user's value back); both stay inside the range."""
    space = search_space([Continuous("w", 0.0, 1.0), Continuous("lr", 1e-4, 1e-1, log=True),
                          Continuous("s", -2.0, 7.0)])
    x = jnp.asarray([0.3, 0.001, 6.1], jnp.float32)
    got = space.decode(space.to_unit(x))[0]
    assert (got["w"], got["lr"]) == (0.3, 0.001), got
    # 6.1's encoding (6.1 + 2) / 9 in float32 holds 6.1 to float32's precision only: 6.1000004
    assert got["s"] == pytest.approx(6.1, abs=1e-6) and len(repr(got["s"])) <= 10, got
    assert space.decode(np.float32([1.0, 1.0, 1.0]))[0] == dict(w=1.0, lr=0.1, s=7.0)
    rng = np.random.default_rng(0)
    draws = rng.uniform(0, 1, 200).round(4), 10 ** rng.uniform(-4, -1, 200), rng.uniform(-2, 7, 200).round(6)
    for w, lr, s in zip(*draws):
        config = dict(w=float(w), lr=float(f"{lr:.4g}"), s=float(s))  # values as a user writes them
        assert space.decode(space.encode([config]))[0] == config
    u = rng.uniform(0, 1, (50, 3))  # a float64 point of no short decimal: its full value, to rounding
    for row, config in zip(u, space.decode(u)):
        np.testing.assert_allclose(space.encode([config])[0], row, rtol=0, atol=1e-15)


def test_integers_own_equal_intervals_and_log_integers_log_intervals():
    step = search_space([Integer("k", 0, 6, step=2)])
    # 4 values, each owning a quarter of the column
    assert [step.decode([[u]])[0]["k"] for u in (0.0, 0.24, 0.26, 0.49, 0.51, 0.74, 0.76, 1.0)] == [0, 0, 2, 2, 4, 4, 6, 6]
    log = search_space([Integer("n", 1, 100, log=True)])
    lo, hi = math.log(0.5), math.log(100.5)
    u_of = lambda x: (math.log(x) - lo) / (hi - lo)  # noqa: E731
    assert log.decode([[u_of(1.49)]])[0]["n"] == 1 and log.decode([[u_of(1.51)]])[0]["n"] == 2
    assert log.decode([[u_of(99.6)]])[0]["n"] == 100


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.floats(0.0, 1.0), min_size=SPACE.unit_dim, max_size=SPACE.unit_dim))
def test_round_is_the_encoding_of_the_decoded_configuration(u):
    """Any point of the cube: the JAX rounding map gives the encoding of what the host decodes
    it to, and it is idempotent (a projection)."""
    u = np.asarray(u, np.float32).astype(np.float64)  # the cube's points as float32 holds them
    rounded = np.asarray(jax.jit(SPACE.round)(jnp.asarray(u, jnp.float32)), np.float64)
    np.testing.assert_allclose(rounded[[1, 2, 3, 4, 5]], SPACE.encode(SPACE.decode(u))[0][[1, 2, 3, 4, 5]],
                               rtol=0, atol=1e-6)
    np.testing.assert_allclose(rounded[[0, 6]], u[[0, 6]], rtol=0, atol=1e-37)  # continuous columns unchanged (XLA flushes subnormals)
    np.testing.assert_array_equal(np.asarray(SPACE.round(jnp.asarray(rounded))), rounded)
    # the JAX decoding is the host one, with categories as indices, and encodes back to round(u)
    x = np.asarray(SPACE.from_unit(jnp.asarray(u, jnp.float32)), np.float64)
    config = SPACE.decode(u)[0]
    expect = [config["lr"], config["layers"], ("adam", "sgd", 3).index(config["optimizer"]), config["batch"],
              config["dropout"]]
    np.testing.assert_allclose(x, expect, rtol=1e-5, atol=1e-30)  # XLA flushes subnormals
    assert SPACE.contains(x, atol=1e-4)
    np.testing.assert_allclose(np.asarray(SPACE.to_unit(jnp.asarray(x, jnp.float32)))[1:6], rounded[1:6], atol=1e-5)


def test_neighbours_move_one_discrete_parameter_one_step():
    u = jnp.asarray(SPACE.encode([dict(lr=1e-3, layers=1, optimizer="sgd", batch=8, dropout=0.1)])[0])
    nb = SPACE.neighbours(u)
    assert nb.shape == (2 + 2 + 2, SPACE.unit_dim)  # layers -/+, optimizer's two others, batch -/+
    got = [SPACE.decode(np.asarray(row))[0] for row in nb]
    assert [g["layers"] for g in got[:2]] == [1, 3]  # at its lower bound: itself, then one step up
    assert [g["optimizer"] for g in got[2:4]] == ["adam", 3]
    assert [g["batch"] for g in got[4:]] == [7, 9]
    np.testing.assert_array_equal(np.asarray(nb)[:, [0, 6]], np.tile(np.asarray(u)[[0, 6]], (6, 1)))
    assert search_space([Continuous("a", 0, 1)]).neighbours(jnp.zeros(1)).shape == (0, 1)

def test_round_runs_under_vmap_on_a_batch(x64):
    u = jax.random.uniform(jax.random.key(0), (5, 4, SPACE.unit_dim), jnp.float64)
    batched = jax.jit(jax.vmap(SPACE.round))(u)
    for i in range(5):
        np.testing.assert_array_equal(batched[i], SPACE.round(u[i]))
    assert np.all(np.asarray(batched)[..., 2:5].sum(axis=-1) == 1.0)


@pytest.mark.parametrize("params, error, match", [
    ([], ValueError, "at least one"),
    ([Continuous("a", 0, 1), Integer("a", 0, 3)], ValueError, r"duplicate names \['a'\]"),
    ([Continuous("a", 1, 1)], ValueError, "'a': need finite low < high"),
    ([Continuous("a", 0, 1, log=True)], ValueError, "'a': log=True needs low > 0"),
    ([Integer("k", 0, 5, step=2)], ValueError, "'k': need step >= 1, low <= high and high - low a multiple"),
    ([Integer("k", 0.5, 5)], TypeError, "'k': low must be an int"),
    ([Integer("k", 0, 5, log=True)], ValueError, "'k': log=True needs low >= 1"),
    ([Categorical("c", ())], ValueError, "'c': choices must hold at least one"),
    ([Categorical("c", ("x", "x"))], ValueError, "'c': choices must be distinct"),
    ([(0.0, 1.0)], TypeError, "must be Continuous, Integer or Categorical"),
])
def test_bad_parameters_are_named(params, error, match):
    with pytest.raises(error, match=match):
        search_space(params)


def test_bad_values_are_named():
    good = dict(lr=1e-3, layers=3, optimizer="adam", batch=8, dropout=0.1)
    with pytest.raises(ValueError, match=r"'layers': 4 is not low \+ a multiple of step=2"):
        SPACE.encode([{**good, "layers": 4}])
    with pytest.raises(ValueError, match=r"'optimizer': 'rmsprop' is not one of its choices"):
        SPACE.encode([{**good, "optimizer": "rmsprop"}])
    with pytest.raises(ValueError, match=r"'dropout': 0.9 is outside \[0.0, 0.5\]"):
        SPACE.encode([{**good, "dropout": 0.9}])
    with pytest.raises(KeyError, match="no value for parameter 'batch'"):
        SPACE.encode([{k: v for k, v in good.items() if k != "batch"}])
    with pytest.raises(ValueError, match=r"u must have 7 columns"):
        SPACE.decode(np.zeros((2, 3)))


def _mixed_problem():
    import nbo_jax as nbo

    space = search_space([Continuous("a", -2.0, 2.0), Integer("k", 0, 10), Categorical("c", ("x", "y", "z"))])
    offset = jnp.array([0.0, 1.0, 0.3])
    f = lambda x: (x[0] - 0.7) ** 2 + (x[1] - 3.0) ** 2 / 10 + offset[x[2].astype(jnp.int32)]  # noqa: E731
    return nbo.Problem("mixed", 3, space, f, optimal_value=0.0)


@pytest.mark.parametrize("name", ["gp-ei"])
def test_run_bo_on_a_mixed_space_asks_valid_configurations_and_vmaps(name, x64):
    """Every algorithm searches the space's encodings: each asked point is a valid
    configuration (integers on their step, categories as indices), the GP finds the optimum's
    integer and category, and a vmapped seed equals the seed run alone to rounding (float64;
    docs "Running BO": bit for bit is promised for random search and the neural TS/CBO/PINN
    algorithms only, and GP-EI's power-transformed targets on this space part in the last
    bits, 4e-14 after 10 steps, with the same integers and categories)."""
    import nbo_jax as nbo
    from test_contract import _build

    problem = _mixed_problem()
    algo = _build(name)
    run = jax.jit(lambda k: nbo.run_bo(k, algo, problem, n_init=4, n_iter=10))
    keys = jax.random.split(jax.random.key(0), 2)
    many = jax.jit(jax.vmap(lambda k: nbo.run_bo(k, algo, problem, n_init=4, n_iter=10)))(keys)
    one = run(keys[1])
    np.testing.assert_allclose(many.x[1], one.x, rtol=1e-9, atol=1e-12)
    x = np.asarray(one.x)
    assert np.all(problem.bounds.contains(x)) and np.all(x[:, 2] == np.round(x[:, 2]))
    if name == "gp-ei":
        best = x[np.argmin(np.asarray(one.y))]
        assert (best[1], best[2]) == (3.0, 0.0), best


def test_the_mixed_optimizer_finds_the_enumerated_maximum(x64):
    """optimize_acqf on a mixed space: raw samples rounded, the continuous columns climbed,
    then the discrete local search; the answer is a valid configuration with the utility of
    the exhaustive search over every integer and category (the continuous part in closed
    form), from far starts."""
    from nbo_jax.dataset import Dataset
    from nbo_jax.optimize import acq_optimizer, optimize_acqf

    space = search_space([Integer("k", 0, 9), Categorical("c", ("p", "q", "r", "s")), Continuous("a", 0.0, 1.0)])
    bonus = jnp.array([0.0, 0.4, 0.1, 0.3])

    def utility(u):  # (N, 6) encodings -> (N,): best at k = 7, c = "q", a = 0.25
        x = space.from_unit(u)
        return -(x[:, 0] - 7.0) ** 2 / 20 + bonus[x[:, 1].astype(jnp.int32)] - (x[:, 2] - 0.25) ** 2

    data = Dataset.empty(8, space.unit_dim, jnp.float64, space=space)
    data = data.add_batch(jnp.asarray(space.encode([dict(k=0, c="p", a=0.9)])), jnp.array([1.0]))
    opts = acq_optimizer(raw_samples=16, num_restarts=2, steps=30, local_fraction=0.0)
    for seed in range(3):
        u = jax.jit(lambda k: optimize_acqf(utility, k, data, opts))(jax.random.key(seed))
        np.testing.assert_array_equal(np.asarray(space.round(u)), np.asarray(u))  # a valid encoding
        config = space.decode(np.asarray(u))[0]
        assert (config["k"], config["c"]) == (7, "q"), config
        assert config["a"] == pytest.approx(0.25, abs=1e-4)


@pytest.mark.parametrize("limit", [64, 0])
def test_few_category_combinations_are_enumerated(limit, x64, monkeypatch):
    """Two categories that pay only together (a deceptive utility: every single move from the
    start loses): one category at a time stays at the start, the enumeration of the 12
    combinations (BoTorch's optimize_acqf_mixed) finds the pair and climbs its continuous part."""
    import nbo_jax.optimize as opt
    from nbo_jax.dataset import Dataset

    monkeypatch.setattr(opt, "MIXED_ENUMERATION_LIMIT", limit)
    space = search_space([Categorical("c", ("p", "q", "r")), Categorical("e", (0, 1, 2, 3)), Continuous("a", 0.0, 1.0)])

    def utility(u):  # best at c = "r", e = 3, a = 0.75; 0.5 at the start (p, 0); else 0
        x = space.from_unit(u)
        pair = jnp.where((x[:, 0] == 2) & (x[:, 1] == 3), 1.0, jnp.where((x[:, 0] == 0) & (x[:, 1] == 0), 0.5, 0.0))
        return pair - (x[:, 2] - 0.75) ** 2

    start = jnp.asarray(space.encode([dict(c="p", e=0, a=0.1)]))
    data = Dataset.empty(4, space.unit_dim, jnp.float64, space=space)
    u = opt.refine_argmax(jax.random.key(0), utility(start), start, utility,
                          opt.acq_optimizer(raw_samples=8, num_restarts=2, steps=30), data)
    config = space.decode(np.asarray(u))[0]
    if limit:
        assert (config["c"], config["e"]) == ("r", 3) and config["a"] == pytest.approx(0.75, abs=1e-4)
    else:
        assert (config["c"], config["e"]) == ("p", 0)


@pytest.mark.parametrize("discrete_search", [True, False])
def test_discrete_search_without_a_climb_matches_exhaustive_enumeration(discrete_search, x64):
    """steps = 0 with discrete_search: the best raw sample takes the best combination of its
    categories (all 12 scored) and the integer moves, and lands on the exhaustive grid's
    maximum over the discrete values (its continuous column stays the raw sample's, as no
    climb runs); without discrete_search the best raw sample is the answer."""
    import itertools

    import nbo_jax.optimize as opt
    from nbo_jax.dataset import Dataset

    space = search_space([Categorical("c", ("p", "q", "r")), Categorical("e", (0, 1, 2, 3)), Integer("k", 0, 6),
                          Continuous("a", 0.0, 1.0)])

    def utility(u):  # the pair (r, 3) pays only together; k best at 4
        x = space.from_unit(u)
        pair = jnp.where((x[:, 0] == 2) & (x[:, 1] == 3), 1.0, jnp.where((x[:, 0] == 0) & (x[:, 1] == 0), 0.5, 0.0))
        return pair - (x[:, 2] - 4.0) ** 2 / 10 - (x[:, 3] - 0.75) ** 2

    start = jnp.asarray(space.encode([dict(c="p", e=0, k=1, a=0.5)]))
    data = Dataset.empty(4, space.unit_dim, jnp.float64, space=space)
    options = opt.acq_optimizer(raw_samples=8, steps=0, discrete_search=discrete_search)
    u = jax.jit(lambda v: opt.refine_argmax(jax.random.key(0), utility(v), v, utility, options, data))(start)
    grid = jnp.asarray(space.encode([dict(c=c, e=e, k=k, a=0.5) for c, e, k in
                                     itertools.product(("p", "q", "r"), range(4), range(7))]))
    best = grid[jnp.argmax(utility(grid))]
    np.testing.assert_array_equal(np.asarray(u), np.asarray(best if discrete_search else start[0]))
    assert space.decode(np.asarray(best))[0] == dict(c="r", e=3, k=4, a=0.5)


def test_discrete_search_is_checked():
    from nbo_jax.optimize import acq_optimizer

    with pytest.raises(TypeError, match="discrete_search must be True or False"):
        acq_optimizer(discrete_search=1)


def test_local_moves_move_every_other_local_raw_sample_one_discrete_step():
    """candidate_set(local_moves=True) on a mixed space: the spread raw samples and the even
    local ones are those without it; each odd local one keeps its continuous columns and
    differs from the one without it in exactly one discrete parameter, by one integer step or
    another category (the best observation's value otherwise, with local_std this small)."""
    import nbo_jax.optimize as opt
    from nbo_jax.dataset import Dataset

    space = search_space([Integer("k", 0, 6), Categorical("c", ("p", "q", "r")), Continuous("a", 0.0, 1.0)])
    best = jnp.asarray(space.encode([dict(k=3, c="q", a=0.5)]))[0]
    data = jax.jit(lambda u: Dataset.empty(4, space.unit_dim, jnp.float32, space=space).add(u, jnp.float32(0.0)))(best)
    candidate_set = jax.jit(opt.candidate_set, static_argnames=("n_uniform", "n_local", "local_std", "local_moves"))
    from_unit = jax.jit(space.from_unit)
    n_uniform, n_local = 6, 40
    plain, moved = (candidate_set(jax.random.key(1), data, n_uniform, n_local, local_std=1e-4, local_moves=m)
                    for m in (False, True))
    np.testing.assert_array_equal(moved[:n_uniform], plain[:n_uniform])
    np.testing.assert_array_equal(moved[n_uniform::2], plain[n_uniform::2])
    x_plain = from_unit(plain[n_uniform:])
    assert np.all(np.asarray(x_plain[:, :2]) == [3, 1])  # the centre's integer and category
    x_moved = np.asarray(from_unit(moved[n_uniform + 1::2]))
    np.testing.assert_array_equal(x_moved[:, 2], np.asarray(x_plain[1::2, 2]))
    step = np.abs(x_moved[:, 0] - 3)
    other = x_moved[:, 1] != 1
    assert np.all((step == 1) ^ other) and np.all(step <= 1)
    assert step.sum() > 0 and other.sum() > 0  # both kinds of move drawn among 20
    with pytest.raises(TypeError, match="local_moves must be True or False"):
        opt.acq_optimizer(local_moves=1)
    # inside a region whose box holds only k = 3, no move leaves it: only the category moves
    from nbo_jax.base import SearchRegion

    box = jnp.stack([jnp.zeros(space.unit_dim), jnp.ones(space.unit_dim)]).at[:, 0].set(jnp.asarray([0.45, 0.55]))
    boxed = candidate_set(jax.random.key(1), data, n_uniform, n_local, local_std=1e-4, local_moves=True,
                          region=SearchRegion(box))
    x_boxed = np.asarray(from_unit(boxed[n_uniform + 1::2]))
    assert np.all(x_boxed[:, 0] == 3) and np.any(x_boxed[:, 1] != 1)


def test_local_integer_std_perturbs_an_integer_by_its_steps():
    """candidate_set(local_integer_std=1): an integer's column (7 values, 1/7 of the column
    each) is perturbed by a std of one step, so a local raw sample leaves the centre's value
    with probability P(|z| > 1/2) = 0.617 (0.153 with local_std = 0.05 alone, which needs
    |z| > (1/14) / 0.05); the continuous column and the spread raw samples are unchanged."""
    import nbo_jax.optimize as opt
    from nbo_jax.dataset import Dataset

    space = search_space([Integer("k", 0, 6), Continuous("a", 0.0, 1.0)])
    best = jnp.asarray(space.encode([dict(k=3, a=0.5)]))[0]
    data = Dataset.empty(4, space.unit_dim, jnp.float32, space=space).add(best, jnp.float32(0.0))
    n_uniform, n_local = 16, 4000
    plain, wide = (opt.candidate_set(jax.random.key(2), data, n_uniform, n_local, local_std=0.05, local_integer_std=s)
                   for s in (0.0, 1.0))
    np.testing.assert_array_equal(wide[:n_uniform], plain[:n_uniform])
    np.testing.assert_array_equal(wide[n_uniform:, 1], plain[n_uniform:, 1])
    k_plain, k_wide = (np.asarray(space.from_unit(u[n_uniform:]))[:, 0] for u in (plain, wide))
    assert abs(np.mean(k_plain != 3) - 0.153) < 0.03
    assert abs(np.mean(k_wide != 3) - 0.617) < 0.03
    assert abs(np.mean(np.abs(k_wide - 3) == 1) - (0.617 - 0.134)) < 0.03  # one step: 1/2 < |z| < 3/2
    assert opt.AcqOptimizer().local_integer_std == 0.0
    with pytest.raises(ValueError, match="local_integer_std must be >= 0"):
        opt.acq_optimizer(local_integer_std=-1.0)


def test_mixed_problems_reach_their_published_minima(x64):
    from nbo_jax.benchmarks.mixed import PROBLEMS

    at = {"func2c": [1, 1, 0.0898 / 2, -0.7126 / 2], "func3c": [1, 1, 0, -0.0898 / 2, 0.7126 / 2],
          "ackley_mixed": [0.0] * 6}
    for name, build in PROBLEMS.items():
        problem = build()
        assert problem.bounds.contains(np.asarray(at[name]))
        assert float(problem.objective(jnp.asarray(at[name]))) == pytest.approx(problem.optimal_value, abs=1e-4)
        # a grid over the discrete values and a coarse continuous grid finds nothing lower
        u = jax.random.uniform(jax.random.key(0), (4096, problem.bounds.unit_dim), jnp.float64)
        x = problem.bounds.from_unit(problem.bounds.round(u))
        assert float(jnp.min(jax.vmap(problem.objective)(x))) >= problem.optimal_value - 1e-4


def test_ask_tell_on_a_mixed_space_asks_valid_points_saves_and_refuses_invalid_ones(tmp_path):
    """AskTell takes a SearchSpace as its bounds: asks are valid configurations, a save
    restores the space and continues bit for bit, and a told point off an integer's step is
    refused by name."""
    import nbo_jax as nbo

    problem = _mixed_problem()
    space, f = problem.bounds, jax.jit(problem.objective)
    x0 = np.array([[0.0, 1, 0], [1.0, 5, 1], [-1.0, 9, 2]])
    algo = nbo.gp_bo(fit_steps=5, acq_optimizer=dict(raw_samples=64, num_restarts=2, steps=5))
    opt = nbo.AskTell(algo, space, 12, jax.random.key(0), x0, [float(f(x)) for x in x0])
    for _ in range(3):
        x = np.reshape(opt.ask(), -1)
        assert space.contains(x) and x[2] == round(x[2])
        opt.tell(x, float(f(jnp.asarray(x))))
    opt.save(tmp_path / "s")
    again = nbo.AskTell.load(tmp_path / "s")
    assert again.space == space
    np.testing.assert_array_equal(again.ask(), opt.ask())
    with pytest.raises(ValueError, match="not a configuration of the search space"):
        opt.tell([0.5, 2.5, 0.0], 1.0)


def test_mixed_problems_are_benchmarks_and_the_cli_runs_one(tmp_path):
    """``benchmarks.get`` builds the mixed-space problems (and checks ``dim``); ``nbo-jax run``
    runs one and writes valid configurations (categories as indices, inside the space)."""
    import nbo_jax as nbo
    from nbo_jax import cli

    problem = nbo.benchmarks.get("func2c", noise_std="paper")
    assert problem.dim == 4 and problem.bounds == nbo.benchmarks.mixed.func2c().bounds and problem.noise_std == 0
    assert {"func2c", "func3c", "ackley_mixed", "knn_wine"} <= set(nbo.benchmarks.available(mixed_spaces=True))
    assert "func2c" not in nbo.benchmarks.available()
    with pytest.raises(ValueError, match="dim: problem 'func2c' has 4 parameters"):
        nbo.benchmarks.get("func2c", dim=3)
    out = tmp_path / "run"
    assert cli.main(["run", "--problem", "func2c", "--algorithm", "random", "--iterations", "2", "--n-init", "3",
                     "--seeds", "2", "--out", str(out)]) == 0
    x = np.load(out / "histories.npz")["random__x"]
    assert x.shape == (2, 5, 4) and np.all(problem.bounds.contains(x.reshape(-1, 4)))
    assert np.all(x[..., :2] == np.round(x[..., :2]))


def test_trust_region_on_a_mixed_space_bounds_the_ordered_columns_only(x64, compiled):
    """TuRBO around an algorithm on a mixed space: the region's box bounds the continuous and
    integer columns (side ``length_init`` = 0.8 of the cube, no lengthscales around random
    search) and leaves the categories' one-hot columns free, ``[0, 1]``; a point in problem
    coordinates (one index per category) is told, and every asked point is a valid
    configuration (the category never clipped between two corners' decodings)."""
    import nbo_jax as nbo
    from nbo_jax.transforms.regions import categorical_columns
    from nbo_jax.transforms.trust_region import regions_now

    problem = _mixed_problem()
    algo = nbo.trust_region(nbo.random_search())
    hist = jax.jit(lambda k: nbo.run_bo(k, algo, problem, n_init=4, n_iter=12))(jax.random.key(3))
    x = np.asarray(hist.x)
    assert np.all(problem.bounds.contains(x)) and np.all(x[:, 1] == np.round(x[:, 1]))
    assert set(np.unique(x[:, 2])) <= {0.0, 1.0, 2.0} and len(np.unique(x[4:, 2])) > 1

    fast = compiled(algo)  # op by op, init and tell are hundreds of small compilations
    state = fast.init(jax.random.key(0), x[:4], np.asarray(hist.y)[:4], bounds=problem.bounds, capacity=16)
    state = fast.tell(state, x[4], np.asarray(hist.y)[4])
    _, boxes = jax.jit(regions_now)(state)
    categories = categorical_columns(problem.bounds)
    np.testing.assert_array_equal(categories, [False, False, True, True, True])
    np.testing.assert_array_equal(np.asarray(boxes[0][:, categories]), [[0.0] * 3, [1.0] * 3])
    width = np.asarray(boxes[0][1, ~categories] - boxes[0][0, ~categories])
    assert np.all(width > 0.0) and np.all(width <= 0.8 + 1e-12), width
    assert categorical_columns(nbo.make_bounds([0.0], [1.0])) is None


def test_stepped_value_is_the_float_nearest_to_the_exact_decimal():
    """``low + k step`` written as its exact decimal: where float arithmetic gives
    ``0.30000000000000004`` or ``0.7000000000000001``, the value is ``0.3`` / ``0.7``; in every
    case it is the float nearest to the exact sum of ``low`` and ``k step`` as decimals."""
    from decimal import Decimal

    from nbo_jax.search_space import stepped_value

    assert 3 * 0.1 != 0.3 and stepped_value(0.0, 3, 0.1) == 0.3
    assert 0.1 + 6 * 0.1 != 0.7 and stepped_value(0.1, 6, 0.1) == 0.7
    assert stepped_value(-1.5, 7, 0.25) == 0.25 and stepped_value(1e-3, 5, 1e-3) == 0.006
    rng = np.random.default_rng(0)
    draws = rng.uniform(-5, 5, 200).round(3), rng.uniform(0.01, 1, 200).round(2), rng.integers(0, 500, 200)
    for low, step, k in zip(*draws):
        exact = Decimal(repr(float(low))) + int(k) * Decimal(repr(float(step)))
        assert stepped_value(low, k, step) == float(exact)
        assert abs(stepped_value(low, k, step) - (low + k * step)) <= 1e-12 * max(1.0, abs(low) + k * step)
