"""Several objectives: the per-column surrogate, the multi-objective acquisitions against Monte
Carlo and numpy references, and run_bo / the registry with m = 2 objectives (float64)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import nbo_jax as nbo
from nbo_jax import gp_model as gpm
from nbo_jax import pareto
from nbo_jax.base import SurrogatePosterior
from nbo_jax.dataset import Dataset


def _fit():
    from nbo_jax.surrogates.gp import GPFit

    return GPFit("rbf", gpm.ParamBounds(), "botorch", "lbfgs", 1, 30, 0.05, None, True)


def test_independent_columns_equal_each_column_fitted_alone(x64):
    from nbo_jax.surrogates import gp, independent

    rng = np.random.default_rng(0)
    u = jnp.asarray(rng.uniform(size=(12, 2)))
    Y = jnp.stack([jnp.sin(5 * u[:, 0]), u[:, 1] ** 2 - u[:, 0]], axis=1)
    data = Dataset.empty(16, 2, jnp.float64, outputs=2).add_batch(u, Y)
    many = independent(gp(_fit()))
    state = jax.jit(many.init)(jax.random.key(0), data, None)  # jitted: the fits compile once
    post = many.posterior(state, u[:5])
    # column 1 (the vmapped program's second copy) against the GP fitted to it alone
    one_gp = gp(_fit())
    one = jax.jit(one_gp.init)(jax.random.split(jax.random.key(0), 2)[1], data.column(1), None)
    alone = one_gp.posterior(one, u[:5])
    np.testing.assert_allclose(post.constraint_mean[:, 0], alone.mean, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(post.constraint_std[:, 0], alone.std, rtol=1e-9, atol=1e-12)
    assert not np.allclose(post.mean, alone.mean)  # column 0 is another model
    with pytest.raises(ValueError, match="models every column already"):
        independent(many)


def test_ehvi_is_the_monte_carlo_mean_of_the_hypervolume_improvement(x64):
    front = jnp.array([[0.0, 1.0], [0.4, 0.5], [1.0, 0.1], [0.7, 0.9]])
    ref = jnp.array([1.5, 1.4])
    mean = jnp.array([[0.3, 0.3], [1.2, 1.2], [0.5, 0.9], [-0.5, 2.0]])
    std = jnp.array([[0.2, 0.3], [0.1, 0.1], [0.4, 0.05], [0.3, 0.3]])
    post = SurrogatePosterior(None, mean, std, front, reference_point=ref)
    log_ehvi = jax.jit(nbo.acquisition.ehvi())(post, jax.random.key(0))

    @jax.jit
    def monte_carlo(front, ref, mean, std):
        boxes = pareto.nondominated_partitioning(front, ref)
        draws = mean + std * jax.random.normal(jax.random.key(1), (200_000,) + mean.shape, jnp.float64)
        return jnp.mean(pareto.hypervolume_improvement(draws, boxes), axis=0)

    np.testing.assert_allclose(np.exp(log_ehvi), monte_carlo(front, ref, mean, std), rtol=0.02, atol=1e-9)
    grad = jax.jit(jax.grad(lambda m: jnp.sum(nbo.acquisition.ehvi()(post._replace(mean=m), None))))
    assert np.all(np.isfinite(grad(mean)))


def test_gp_ehvi_c_adds_the_log_probability_of_feasibility_to_log_ehvi(x64):
    """``gp_bo(acquisition="ehvi-c")`` (registry ``gp-ehvi-c``, alias ``cehvi``) models several
    objectives and constraints; its acquisition is log EHVI plus ``sum_k log Phi(-mu_k /
    sigma_k)`` (Daulton et al. 2020; Optuna's LogCEHVI), against scipy's normal CDF."""
    from scipy.stats import norm

    algo = nbo.registry.get("cehvi", reference_point=(1.5, 1.4))
    assert (algo.name, algo.constrained, algo.multi_objective) == ("gp-ehvi-c", True, True)
    assert nbo.gp_bo(acquisition="ehvi-c").name == "gp-ehvi-c"
    front = jnp.array([[0.0, 1.0], [0.4, 0.5], [1.0, 0.1]])
    mean = jnp.array([[0.3, 0.3], [1.2, 1.2], [0.5, 0.9]])
    std = jnp.array([[0.2, 0.3], [0.1, 0.1], [0.4, 0.05]])
    c_mean, c_std = jnp.array([[-1.0, 0.5], [0.2, -0.3], [0.0, 2.0]]), jnp.array([[0.5, 1.0], [0.1, 0.2], [1.0, 0.3]])
    post = SurrogatePosterior(None, mean, std, front, reference_point=jnp.array([1.5, 1.4]),
                              constraint_mean=c_mean, constraint_std=c_std)
    got = nbo.acquisition.ehvi(constraints=True)(post, None)
    plain = nbo.acquisition.ehvi()(post._replace(constraint_mean=None, constraint_std=None), None)
    log_pof = np.sum(norm.logcdf(-np.asarray(c_mean) / np.asarray(c_std)), axis=1)
    np.testing.assert_allclose(got, np.asarray(plain) + log_pof, rtol=1e-9)
    assert nbo.acquisition.ehvi(constraints=True).requires == ("objectives", "constraint_mean", "constraint_std")
    with pytest.raises(ValueError, match="beta_c is used by acquisition='lcb-c' only"):
        nbo.gp_bo(acquisition="ehvi-c", beta_c=1.0)


def test_random_scalarization_and_parego_follow_their_formulas(x64):
    key = jax.random.key(3)
    front = jnp.array([[0.0, 2.0], [1.0, 1.0], [jnp.inf, jnp.inf]])
    mean = jnp.array([[0.5, 0.5], [2.0, -1.0]])
    std = jnp.array([[0.1, 0.2], [0.3, 0.1]])
    sample = jnp.array([[0.4, 0.7], [1.9, -0.8]])
    post = SurrogatePosterior(None, mean, std, front, sample=sample)
    lam = np.asarray(jax.random.dirichlet(jax.random.fold_in(key, 1), jnp.ones(2)))
    expect = -np.max(lam * (np.asarray(sample) - np.array([0.0, 1.0])), axis=1)
    np.testing.assert_allclose(nbo.acquisition.random_scalarization()(post, key), expect, rtol=1e-12)
    # ParEGO: normalized to the front's range [0, 1], augmented Chebyshev, MC expected improvement
    eps = np.asarray(jax.random.normal(jax.random.fold_in(key, 2), (64, 2), jnp.float64))
    z = lambda v: lam * (v - np.array([0.0, 1.0])) / np.array([1.0, 1.0])  # noqa: E731
    s = lambda v: np.max(z(v), -1) + 0.05 * np.sum(z(v), -1)  # noqa: E731
    best = min(s(np.array([0.0, 2.0])), s(np.array([1.0, 1.0])))
    draws = np.asarray(mean)[:, None] + np.asarray(std)[:, None] * eps[None]
    gain = 1e-3 * np.logaddexp(0.0, (best - s(draws)) / 1e-3)
    np.testing.assert_allclose(nbo.acquisition.parego()(post, key), np.log(gain.mean(1)), rtol=1e-9)


def test_run_bo_with_two_objectives_records_the_front_and_its_hypervolume(x64):
    from nbo_jax.benchmarks.multi_objective import PROBLEMS

    problem = PROBLEMS["branin_currin"]()
    algo = nbo.gp_bo(acquisition="ehvi", reference_point=problem.reference_point, fit_steps=20,
                     acq_optimizer=dict(raw_samples=64, num_restarts=2, steps=10))
    keys = jax.random.split(jax.random.key(0), 2)
    many = jax.jit(jax.vmap(lambda k: nbo.run_bo(k, algo, problem, n_init=5, n_iter=3)))(keys)
    assert not np.allclose(many.x[0], many.x[1])
    one = jax.tree.map(lambda a: a[1], many)
    assert one.y.shape == (8, 2) and one.f.shape == (8, 2) and one.best_f.shape == (8, 2)
    hv = np.asarray(one.hypervolume)
    assert np.all(np.diff(hv) >= 0)
    assert hv[-1] == pytest.approx(float(pareto.hypervolume(one.f, jnp.asarray(problem.reference_point))))
    front = np.asarray(one.pareto_front())
    assert hv[-1] == pytest.approx(float(pareto.hypervolume(one.f[front], jnp.asarray(problem.reference_point))))
    np.testing.assert_array_equal(np.asarray(one.best_f[-1]), np.min(np.asarray(one.f), axis=0))


def test_several_objectives_are_refused_or_required_by_name():
    from nbo_jax.benchmarks.multi_objective import PROBLEMS

    problem = PROBLEMS["zdt1"]()
    with pytest.raises(ValueError, match="has 2 objectives and algorithm 'gp-ei' optimizes one"):
        nbo.run_bo(jax.random.key(0), nbo.registry.get("gp-ei"), problem, n_init=3, n_iter=1)
    algo = nbo.registry.get("gp-ehvi")
    with pytest.raises(ValueError, match=r"y0 must have shape \(n0, m\) with m >= 2"):
        algo.init(jax.random.key(0), jnp.zeros((3, 2)), jnp.zeros(3), bounds=nbo.Bounds([0, 0], [1, 1]), capacity=4)
    with pytest.raises(ValueError, match=r"reference_point must hold one value per objective, shape \(3,\)"):
        nbo.gp_bo(acquisition="ehvi", reference_point=(1.0, 1.0)).init(
            jax.random.key(0), jnp.zeros((3, 2)), jnp.zeros((3, 3)), bounds=nbo.Bounds([0, 0], [1, 1]), capacity=4)
    with pytest.raises(ValueError, match="reference_point is used by the multi-objective acquisitions"):
        nbo.gp_bo(reference_point=(1.0, 1.0))
    with pytest.raises(ValueError, match="wrap it in nbo.surrogates.independent"):
        nbo.bo_algorithm(nbo.surrogates.gp(_fit()), nbo.acquisition.ehvi(), acq_optimizer=nbo.optimize.acq_optimizer(),
                         name="x")
