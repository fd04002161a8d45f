import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats as st

from nbo_jax import outcome
from nbo_jax.dataset import Dataset

SAMPLES = {  # a heavy right tail (Rosenbrock-like), a normal sample, a heavy left tail
    "lognormal": np.exp(np.random.default_rng(0).normal(size=40)) * 100,
    "normal": np.random.default_rng(1).normal(size=40),
    "left_tail": -np.exp(np.random.default_rng(2).normal(size=40)),
}


def _data(y, capacity=48):
    """``y`` in the first rows of a larger buffer (rows past it are outside the mask)."""
    u = jnp.linspace(0, 1, len(y))[:, None]
    return Dataset.empty(capacity, 1).add_batch(u, jnp.asarray(y))


@pytest.mark.parametrize("lam", [-1.5, 0.0, 0.7, 2.0, 3.3])
def test_yeo_johnson_is_scipys(x64, lam):
    z = np.linspace(-3, 5, 41)
    np.testing.assert_allclose(outcome.yeo_johnson(jnp.asarray(z), lam), st.yeojohnson(z, lam), rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("name", SAMPLES)
def test_power_transform_is_scipys_maximum_likelihood_on_the_rows_held(x64, name):
    y = SAMPLES[name]
    data = _data(y)
    z = (y - y.mean()) / y.std()
    lam_ref = st.yeojohnson_normmax(z)
    lam = float(outcome.power_lambda(data.standardized()[0], data.mask))
    assert abs(lam - lam_ref) <= 0.05 + 1e-9, (lam, lam_ref)  # the grid's half step
    t = np.asarray(outcome.targets(data, "power"))
    ref = st.yeojohnson(z, lam)
    np.testing.assert_allclose(t[:40], (ref - ref.mean()) / ref.std(), rtol=1e-9, atol=1e-9)
    assert np.all(t[40:] == 0)
    assert np.all(np.diff(t[:40][np.argsort(y)]) > 0)  # increasing in y
    if name == "lognormal":  # the heavy tail is pulled in: the best rows spread apart
        assert lam_ref < 0.5 and (t[:40].max() < ((y - y.mean()) / y.std()).max())


def test_copula_is_the_normal_quantile_of_the_mean_rank(x64):
    y = np.array([3.0, -1.0, 7.0, 3.0, 0.5])
    data = _data(y, capacity=8)
    expected = st.norm.ppf((st.rankdata(y) - 0.5) / 5)  # rankdata: 1-based, ties their mean
    np.testing.assert_allclose(outcome.targets(data, "copula")[:5], expected, rtol=1e-12)
    assert np.all(np.asarray(outcome.targets(data, "copula")[5:]) == 0)


def _half_rank_reference(y):
    """The half-rank warping written out with numpy and scipy (``outcome.half_rank``'s doc)."""
    m = np.median(y)
    good, bad = y <= m, y > m
    s = np.sqrt(np.mean((y[good] - m) ** 2))
    r = st.rankdata(-y[bad])  # 1 = the worst; ties their mean rank
    out = y.astype(float).copy()
    out[bad] = m - s * st.norm.ppf((r - 0.5) / (2 * bad.sum()))
    return out


@pytest.mark.parametrize("name", SAMPLES)
def test_half_rank_keeps_the_good_half_and_rank_warps_the_worse(x64, name):
    y = SAMPLES[name]
    data = _data(y)
    warped = np.asarray(outcome.half_rank(data.y, data.mask))
    ref = _half_rank_reference(y)
    np.testing.assert_allclose(warped[:40], ref, rtol=1e-12, atol=1e-12)
    assert np.all(warped[40:] == 0)
    assert float(outcome.masked_median(data.y, data.mask)) == np.median(y)
    np.testing.assert_array_equal(warped[:40][y <= np.median(y)], y[y <= np.median(y)])  # kept as observed
    assert np.all(np.diff(warped[:40][np.argsort(y)]) > 0)  # increasing in y
    t = np.asarray(outcome.targets(data, "half_rank"))
    np.testing.assert_allclose(t[:40], (ref - ref.mean()) / ref.std(), rtol=1e-9, atol=1e-9)
    if name == "lognormal":  # the heavy tail is pulled in to a half normal of the good half's scale
        assert warped[:40].max() < np.median(y) + 3 * np.sqrt(np.mean((y[y <= np.median(y)] - np.median(y)) ** 2))
        assert warped[:40].max() < 0.5 * y.max()
    # an odd count, a tie in the worse half, and the median itself a row
    y = np.array([5.0, 1.0, 9.0, 9.0, 2.0, 3.0, 40.0])
    np.testing.assert_allclose(outcome.half_rank(jnp.asarray(y), jnp.ones(7, bool)), _half_rank_reference(y),
                               rtol=1e-12)


def test_standardize_and_none_are_the_data_and_bad_names_are_refused(x64):
    data = _data(SAMPLES["normal"])
    np.testing.assert_array_equal(outcome.targets(data, "standardize"), data.standardized()[0])
    np.testing.assert_array_equal(outcome.targets(data, "none")[:40], SAMPLES["normal"])
    with pytest.raises(ValueError, match=r"outcome_transform must be one of .*'power'.*got 'log'"):
        outcome.targets(data, "log")


def test_transforms_run_under_jit_and_vmap():
    ys = jnp.asarray(np.stack([SAMPLES["lognormal"], SAMPLES["normal"]]), jnp.float32)
    for kind in ("power", "copula", "half_rank"):
        batched = jax.jit(jax.vmap(lambda y, kind=kind: outcome.targets(_data(y), kind)))(ys)
        alone = [outcome.targets(_data(y), kind) for y in ys]
        np.testing.assert_allclose(batched, np.stack(alone), rtol=1e-5, atol=1e-6)


def _branin_state(algo, n=8, capacity=10):
    import nbo_jax as nbo

    problem = nbo.benchmarks.get("branin")
    x0 = nbo.initial_design(jax.random.key(0), problem.bounds, n)
    return jax.jit(lambda x, y: algo.init(jax.random.key(1), x, y, bounds=problem.bounds,
                                          capacity=capacity))(x0, jax.vmap(problem.objective)(x0))


@pytest.mark.parametrize("transform", ["power", "copula"])
def test_gp_and_neural_bo_are_fitted_to_the_transformed_targets(x64, transform):
    import nbo_jax as nbo
    from nbo_jax import gp_model as gpm

    gp = nbo.gp_bo(outcome_transform=transform, n_restarts=2, fit_steps=20)
    state = _branin_state(gp)
    u_c = jax.random.uniform(jax.random.key(3), (16, 2), jnp.float64)

    @jax.jit  # the references compiled (op by op: hundreds of small compilations)
    def reference(state):
        t = outcome.targets(state.data, transform)
        return t, state.data.standardized()[0], gpm.predict(
            "rbf", gpm.condition("rbf", state.model.params, state.data.u, t, state.data.mask), u_c)

    t, standardized, (mean, var) = reference(state)
    assert not np.allclose(t, standardized)  # Branin's 8 values are skewed
    post = jax.jit(gp.surrogate)(state, u_c)
    np.testing.assert_allclose(post.mean, mean, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(post.std ** 2, var, rtol=1e-9, atol=1e-12)
    assert float(post.incumbent) == float(jnp.min(t[:8]))  # EI's y_best in the same units
    assert gp.config.kwargs["outcome_transform"] == transform

    nb = nbo.neural_bo(width=16, epochs=30, outcome_transform=transform)
    state = _branin_state(nb)
    post, t = jax.jit(lambda s: (nb.surrogate(s, u_c), outcome.targets(s.data, transform)))(state)
    assert float(post.incumbent) == float(jnp.min(t[:8]))
    same = _branin_state(nbo.neural_bo(width=16, epochs=30))  # standardized: another network
    trained_apart = post.mean - jax.jit(nbo.neural_bo(width=16, epochs=30).surrogate)(same, u_c).mean
    assert float(jnp.max(jnp.abs(trained_apart))) > 1e-4  # same key and theta_0: only the targets differ


def test_outcome_transform_errors_name_the_arguments():
    import nbo_jax as nbo

    for factory in (nbo.gp_bo, nbo.neural_bo):
        with pytest.raises(ValueError, match=r"outcome_transform must be one of .* got 'log'"):
            factory(outcome_transform="log")
        with pytest.raises(ValueError, match=r"standardize=False .* outcome_transform='power'"):
            factory(outcome_transform="power", standardize=False)
        assert factory(outcome_transform="none", standardize=False) is not None
    with pytest.raises(ValueError, match=r"outcome_transform='copula' is for the unconstrained.*'cei'"):
        nbo.gp_bo(acquisition="cei", outcome_transform="copula")
    with pytest.raises(ValueError, match=r"regions=2: .* outcome_transform='power'"):
        nbo.trust_region(nbo.neural_bo(outcome_transform="power"), regions=2)
    assert nbo.trust_region(nbo.gp_bo(outcome_transform="power")).name == "turbo-gp-ei"


def test_auto_is_power_on_a_space_with_a_discrete_parameter_and_standardize_elsewhere(x64):
    """``"auto"``: the power transform's targets on a search space with an integer or a
    categorical parameter, the standardized ones on a box and on a space of floats only;
    gp_bo's paper preset and its constrained and multi-objective acquisitions default to
    ``"standardize"`` (its default preset: the next test); TuRBO-m refuses ``"auto"`` at
    ``init`` on a discrete space, where it has no affine map back to the objective's units."""
    import nbo_jax as nbo
    from nbo_jax.search_space import Categorical, Continuous, Integer, search_space

    y = SAMPLES["lognormal"]
    box = _data(y)
    floats = search_space([Continuous("a", 0.0, 1.0)])
    for space, expected in ((None, "standardize"), (floats, "standardize"),
                            (search_space([Integer("k", 0, 9)]), "power"),
                            (search_space([Categorical("c", ("x", "y"))]), "power")):
        assert outcome.resolved("auto", space) == expected
        assert outcome.resolved("copula", space) == "copula"
        data = box._replace(space=space)
        np.testing.assert_array_equal(outcome.targets(data, "auto"), outcome.targets(data, expected))
    power = outcome.targets(box, "power")
    assert not np.allclose(power, outcome.targets(box, "standardize"))  # a heavy tail: they differ

    assert nbo.gp_bo(preset="paper").outcome_transform == "standardize"
    assert nbo.gp_bo(acquisition="cei").outcome_transform == "standardize"
    assert nbo.gp_bo(acquisition="ehvi").outcome_transform == "standardize"
    assert nbo.gp_bo(standardize=False).outcome_transform == "none"
    assert nbo.gp_bo(outcome_transform="standardize").outcome_transform == "standardize"

    space = search_space([Continuous("x", 0.0, 1.0), Integer("k", 0, 4)])
    x0 = space.from_unit(jax.random.uniform(jax.random.key(0), (6, space.unit_dim), jnp.float64))
    y0 = jnp.sum(x0, axis=1)
    turbo_m = nbo.trust_region(nbo.gp_bo(outcome_transform="auto"), regions=2)
    with pytest.raises(ValueError, match=r"regions=2: .*outcome_transform='auto' is 'power'"):
        turbo_m.init(jax.random.key(1), x0, y0, bounds=space, capacity=8)
    standardized = nbo.trust_region(nbo.gp_bo(outcome_transform="standardize"), regions=2)
    state = jax.eval_shape(lambda: standardized.init(jax.random.key(1), x0, y0, bounds=space, capacity=8))
    assert state.length.shape == (2,)  # built: one side per region


def test_discrete_half_rank_is_half_rank_on_a_discrete_space_and_the_default(x64):
    """``"discrete_half_rank"`` (Neural-BO's and the GP's default): the half-rank targets on a
    search space with an integer or a categorical parameter, the standardized ones on a box and
    a space of floats; the paper presets, a multi-objective acquisition and
    ``standardize=False`` keep theirs; TuRBO-m refuses it at ``init`` on a discrete space and
    names what it resolved to, around either default."""
    import nbo_jax as nbo
    from nbo_jax.search_space import Categorical, Continuous, Integer, search_space

    box = _data(SAMPLES["lognormal"])
    floats = search_space([Continuous("a", 0.0, 1.0)])
    for space, expected in ((None, "standardize"), (floats, "standardize"),
                            (search_space([Integer("k", 0, 9)]), "half_rank"),
                            (search_space([Categorical("c", ("x", "y"))]), "half_rank")):
        assert outcome.resolved("discrete_half_rank", space) == expected
        data = box._replace(space=space)
        np.testing.assert_array_equal(outcome.targets(data, "discrete_half_rank"), outcome.targets(data, expected))
    assert not np.allclose(outcome.targets(box, "half_rank"), outcome.targets(box, "standardize"))

    assert nbo.neural_bo().outcome_transform == "discrete_half_rank"
    assert nbo.neural_bo(preset="paper").outcome_transform == "standardize"
    assert nbo.neural_bo(multi_objective=True).outcome_transform == "standardize"
    assert nbo.neural_bo(standardize=False).outcome_transform == "none"
    assert nbo.neural_bo(outcome_transform="copula").outcome_transform == "copula"
    assert nbo.neural_ucb().outcome_transform == nbo.neural_ts().outcome_transform == "standardize"  # the papers'
    assert nbo.neural_ucb(standardize=False).outcome_transform == "none"
    assert nbo.neural_bo().config.kwargs.get("outcome_transform") is None  # the user's call, as given
    assert nbo.gp_bo().outcome_transform == "discrete_half_rank"
    assert nbo.gp_bo().config.kwargs.get("outcome_transform") is None

    space = search_space([Continuous("x", 0.0, 1.0), Integer("k", 0, 4)])
    x0 = space.from_unit(jax.random.uniform(jax.random.key(0), (6, space.unit_dim), jnp.float64))
    for default in (nbo.neural_bo(width=16, epochs=5), nbo.gp_bo()):
        turbo_m = nbo.trust_region(default, regions=2)
        with pytest.raises(ValueError, match=r"regions=2: .*outcome_transform='discrete_half_rank' is 'half_rank'"):
            turbo_m.init(jax.random.key(1), x0, jnp.sum(x0, axis=1), bounds=space, capacity=8)
