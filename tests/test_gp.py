"""GP model and GP-EI / GP-UCB / GP-TS (GPML Algorithm 2.1, eqs. 2.25-2.30; BoTorch's
SingleTaskGP priors and MAP fit)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import lognorm, multivariate_normal

import nbo_jax as nbo
from nbo_jax import gp_model as gpm
from nbo_jax.acquisition import expected_improvement
from nbo_jax.algorithms.gp import ACQUISITIONS, gp_bo
from nbo_jax.optimize import candidate_set

RNG = np.random.default_rng(1234)
# small settings so the whole file stays fast on a 2-core CPU
FAST = dict(n_restarts=2, fit_steps=20)
RAW = dict(acq_optimizer=dict(raw_samples=512, steps=0))  # raw-sample argmax only


def _params(ls, outputscale=1.0, noise=1e-2):
    return gpm.GPParams(jnp.log(jnp.asarray(ls, jnp.float64)), jnp.log(jnp.asarray(outputscale, jnp.float64)),
                        jnp.log(jnp.asarray(noise, jnp.float64)))


def _np_kernel(kind, a, b, ls, outputscale):
    r = np.sqrt(np.sum(((a[:, None, :] - b[None, :, :]) / ls) ** 2, axis=-1))
    if kind == "rbf":
        return outputscale * np.exp(-0.5 * r ** 2)
    s5 = math.sqrt(5.0)
    return outputscale * (1 + s5 * r + 5.0 / 3.0 * r ** 2) * np.exp(-s5 * r)


@pytest.mark.parametrize("kind", gpm.STATIONARY_KERNELS)
def test_kernels_match_closed_forms(x64, kind):
    a, b = RNG.random((7, 3)), RNG.random((5, 3))
    ls, s2 = np.array([0.1, 0.4, 2.0]), 1.7
    K = np.asarray(gpm.kernel_matrix(kind, _params(ls, s2), jnp.asarray(a), jnp.asarray(b)))
    np.testing.assert_allclose(K, _np_kernel(kind, a, b, ls, s2), rtol=1e-12, atol=1e-14)
    # one hand-computed value: r = 1 along one axis
    one = gpm.kernel_matrix(kind, _params([0.5, 1.0]), jnp.zeros((1, 2)), jnp.array([[0.5, 0.0]]))[0, 0]
    expected = math.exp(-0.5) if kind == "rbf" else (1 + math.sqrt(5) + 5 / 3) * math.exp(-math.sqrt(5))
    assert abs(float(one) - expected) < 1e-14
    # the diagonal is the outputscale and the gradient at r = 0 is finite
    diag = jnp.diag(gpm.kernel_matrix(kind, _params(ls, s2), jnp.asarray(a), jnp.asarray(a)))
    np.testing.assert_allclose(diag, s2, rtol=1e-14)
    g = jax.grad(lambda p: jnp.sum(gpm.kernel_matrix(kind, p, jnp.asarray(a), jnp.asarray(a))))(_params(ls, s2))
    assert all(np.all(np.isfinite(leaf)) for leaf in jax.tree.leaves(g))


def _masked_problem(cap=14, d=2, n_invalid=4, seed=0):
    rng = np.random.default_rng(seed)
    u, y = rng.random((cap, d)), rng.normal(size=cap)
    mask = np.ones(cap, bool)
    mask[rng.choice(cap, n_invalid, replace=False)] = False
    y_stored = np.where(mask, y, 1e3)  # whatever invalid rows hold must not matter
    return u, y, y_stored, mask


@pytest.mark.parametrize("kind", gpm.STATIONARY_KERNELS)
@pytest.mark.parametrize("n_invalid", [0, 4])
def test_posterior_equals_textbook_formulas(x64, kind, n_invalid):
    """mean = k*^T (K + s2 I)^-1 y, var = k** - k*^T (K + s2 I)^-1 k* on the valid subset."""
    u, y, y_stored, mask = _masked_problem(n_invalid=n_invalid)
    ls, s2f, s2n = np.array([0.3, 0.6]), 1.3, 0.02
    params = _params(ls, s2f, s2n)
    post = gpm.condition(kind, params, jnp.asarray(u), jnp.asarray(y_stored), jnp.asarray(mask))
    uc = RNG.random((9, 2))
    mean, var = gpm.predict(kind, post, jnp.asarray(uc))
    uv, yv = u[mask], y[mask]
    A = _np_kernel(kind, uv, uv, ls, s2f) + s2n * np.eye(len(yv))
    ks = _np_kernel(kind, uv, uc, ls, s2f)
    np.testing.assert_allclose(mean, ks.T @ np.linalg.solve(A, yv), atol=1e-8)
    np.testing.assert_allclose(gpm.predict_mean(kind, post, jnp.asarray(uc)), mean, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(var, s2f - np.sum(ks * np.linalg.solve(A, ks), axis=0), atol=1e-8)
    C = gpm.joint_covariance(kind, post, jnp.asarray(uc))
    np.testing.assert_allclose(C, _np_kernel(kind, uc, uc, ls, s2f) - ks.T @ np.linalg.solve(A, ks), atol=1e-8)
    np.testing.assert_allclose(jnp.diag(C), var, atol=1e-10)


@pytest.mark.parametrize("kind", gpm.STATIONARY_KERNELS)
def test_masked_lml_equals_scipy_logpdf_on_valid_rows(x64, kind):
    u, y, y_stored, mask = _masked_problem(n_invalid=5, seed=3)
    ls, s2f, s2n = np.array([0.25, 0.9]), 0.8, 0.05
    params = _params(ls, s2f, s2n)
    lml = float(gpm.log_marginal_likelihood(kind, params, jnp.asarray(u), jnp.asarray(y_stored), jnp.asarray(mask)))
    uv = u[mask]
    cov = _np_kernel(kind, uv, uv, ls, s2f) + s2n * np.eye(mask.sum())
    direct = multivariate_normal(np.zeros(mask.sum()), cov).logpdf(y[mask])
    assert abs(lml - direct) < 1e-8, (lml, direct)
    # the constant of the dummy rows: the full-size Gaussian density of the masked system
    # is lower by exactly 1/2 log(2 pi) per invalid row
    Km = np.asarray(gpm.masked_gram(kind, params, jnp.asarray(u), jnp.asarray(mask)))
    full = multivariate_normal(np.zeros(len(y)), Km).logpdf(np.where(mask, y, 0.0))
    assert abs((lml - full) - 0.5 * (~mask).sum() * math.log(2 * math.pi)) < 1e-8


def test_joint_draws_have_the_posterior_moments(x64):
    u, y, y_stored, mask = _masked_problem(n_invalid=2, seed=5)
    post = gpm.condition("matern52", _params([0.3, 0.3], 1.0, 1e-2), jnp.asarray(u), jnp.asarray(y_stored),
                         jnp.asarray(mask))
    uc = jnp.asarray(RNG.random((4, 2)))
    mean, _ = gpm.predict("matern52", post, uc)
    C = np.asarray(gpm.joint_covariance("matern52", post, uc))
    scale = np.sqrt(np.max(np.diag(C)))
    keys = jax.random.split(jax.random.key(0), 20000)
    # jitter=-10 makes the Cholesky fail on purpose: the eigendecomposition branch must
    # give the same distribution
    for jitter in (None, -10.0):
        draws = jax.jit(jax.vmap(lambda k: gpm.sample_joint("matern52", post, uc, k, jitter)))(keys)
        np.testing.assert_allclose(np.mean(draws, 0), mean, atol=5 * scale / np.sqrt(20000))
        np.testing.assert_allclose(np.cov(np.asarray(draws).T), C, atol=0.05 * scale ** 2)


def _gp_draws(kind, ls, n, d, seeds, noise=1e-3):
    """Standardized samples of a GP with lengthscales ``ls`` at ``n`` uniform points."""
    us, ys = [], []
    for s in seeds:
        rng = np.random.default_rng(100 + s)
        u = rng.random((n, d))
        K = _np_kernel(kind, u, u, np.asarray(ls, float), 1.0) + noise * np.eye(n)
        y = np.linalg.cholesky(K) @ rng.normal(size=n)
        us.append(u)
        ys.append((y - y.mean()) / y.std())
    return jnp.asarray(np.stack(us)), jnp.asarray(np.stack(ys))


@pytest.mark.parametrize("kind", gpm.STATIONARY_KERNELS)
def test_fit_recovers_a_known_lengthscale(x64, kind):
    """100 points of a 1-D GP with lengthscale 0.2 (unit cube, noise variance 1e-3), 3 draws:
    the ML lengthscale is within 30% (median; every draw within 45%, the spread of the
    maximum-likelihood estimator itself on one sample path); lengthscale 0.5 gives a clearly
    larger fit; ARD separates (0.2, 0.8) in 2-D. The optimizer reaches the likelihood's
    maximum (at least the best value on a grid) and never ends below its warm start."""
    n, seeds = 100, range(3)

    def fit_all(us, ys, key):
        d = us.shape[-1]

        def one(u, y, k):
            warm = jax.tree.map(lambda a: a[None], gpm.default_params(d))
            starts = jax.tree.map(lambda a, b: jnp.concatenate([a, b]), warm, gpm.random_params(k, 1, d))
            p, lml = gpm.fit(kind, starts, u, y, jnp.ones(n, bool), steps=100, learning_rate=0.05)
            return p.lengthscale, p.noise, lml

        # one data set per call (one compile, a Python loop over the sets)
        one = jax.jit(one)
        lml0 = jax.jit(lambda u, y: gpm.log_marginal_likelihood(kind, gpm.default_params(d), u, y,
                                                                jnp.ones(n, bool)))
        keys = jax.random.split(key, us.shape[0])
        fits = [one(u, y, k) for u, y, k in zip(us, ys, keys)]
        return (*(jnp.stack(f) for f in zip(*fits)), jnp.stack([lml0(u, y) for u, y in zip(us, ys)]))

    u02, y02 = _gp_draws(kind, [0.2], n, 1, seeds)
    u05, y05 = _gp_draws(kind, [0.5], n, 1, seeds)
    ls, noise, lml, lml0 = fit_all(jnp.concatenate([u02, u05]), jnp.concatenate([y02, y05]), jax.random.key(0))
    ls02, ls05 = np.ravel(ls[:3]), np.ravel(ls[3:])
    ls_ard, *_ = fit_all(*_gp_draws(kind, [0.2, 0.8], n, 2, seeds), jax.random.key(2))
    print(f"{kind}: fitted l for 0.2: {ls02}, for 0.5: {ls05}, ARD (0.2, 0.8): {np.asarray(ls_ard).tolist()}")
    assert abs(np.median(ls02) / 0.2 - 1) < 0.3 and np.all(np.abs(ls02 / 0.2 - 1) < 0.45)
    assert np.median(ls05) > 1.5 * np.median(ls02)
    assert np.all(ls_ard[:, 1] > 2.5 * ls_ard[:, 0]) and np.all(np.abs(ls_ard[:, 0] / 0.2 - 1) < 0.3)
    assert np.all(np.asarray(noise[:3]) < 0.02)  # true noise variance 1e-3 / var(y) ~ 1e-3
    assert np.all(np.asarray(lml) >= np.asarray(lml0))
    # the fit is the maximum: no point of a (lengthscale, outputscale, noise) grid does better
    grid = [gpm.GPParams(jnp.log(jnp.array([a])), jnp.log(jnp.asarray(b)), jnp.log(jnp.asarray(c)))
            for a in (0.1, 0.15, 0.2, 0.3) for b in (0.5, 1.0, 2.0) for c in (1e-3, 3e-3)]
    stacked = jax.tree.map(lambda *xs: jnp.stack(xs), *grid)
    lml_of = jax.vmap(lambda p: gpm.log_marginal_likelihood(kind, p, u02[0], y02[0], jnp.ones(n, bool)))
    grid_lml = jax.jit(lml_of)(stacked)
    assert float(lml[0]) >= float(jnp.max(grid_lml)) - 1e-6


def test_masked_lml_gradient_equals_valid_subset_gradient(x64):
    """The fit only sees the LML and its gradient: on a padded buffer with invalid rows both
    equal those of the valid rows alone (so the fitted hyperparameters are the same)."""
    us, ys = _gp_draws("rbf", [0.3, 0.3], 30, 2, [0])
    u, y = us[0], ys[0]
    mask = jnp.asarray(np.arange(30) % 3 != 0)
    pad_u, pad_y = jnp.where(mask[:, None], u, 0.77), jnp.where(mask, y, -5.0)
    vg = jax.jit(jax.value_and_grad(gpm.log_marginal_likelihood, argnums=1), static_argnums=0)
    for kind in gpm.STATIONARY_KERNELS:
        for p in (_params([0.2, 0.5], 1.3, 1e-2), _params([1.0, 0.05], 0.4, 1e-4)):
            v_m, g_m = vg(kind, p, pad_u, pad_y, mask)
            v_s, g_s = vg(kind, p, u[mask], y[mask], jnp.ones(20, bool))
            assert abs(float(v_m - v_s)) < 1e-9
            for a, b in zip(g_m, g_s):
                np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


def test_map_objective_is_lml_plus_lognormal_log_priors(x64):
    """MAP objective = LML + log LogNormal densities (scipy.stats.lognorm) of every
    lengthscale and of the noise variance, with BoTorch's SingleTaskGP priors: lengthscale
    LogNormal(sqrt2 + log(d)/2, sqrt3), noise LogNormal(-4, 1); the start is the prior mode."""
    u, y, y_stored, mask = _masked_problem(n_invalid=3, seed=7)
    d = u.shape[1]
    prior = gpm.botorch_prior(d)
    loc_l, s_l = math.sqrt(2) + 0.5 * math.log(d), math.sqrt(3)
    assert prior.lengthscale == pytest.approx((loc_l, s_l)) and prior.noise == (-4.0, 1.0)
    assert prior.outputscale is None
    for ls, s2f, s2n in (([0.3, 0.7], 1.0, 1e-2), ([2.0, 0.05], 1.0, 3e-4)):
        params = _params(ls, s2f, s2n)
        args = (jnp.asarray(u), jnp.asarray(y_stored), jnp.asarray(mask))
        lml = float(gpm.log_marginal_likelihood("rbf", params, *args))
        expected = (lml + np.sum(lognorm(s=s_l, scale=math.exp(loc_l)).logpdf(ls))
                    + lognorm(s=1.0, scale=math.exp(-4.0)).logpdf(s2n))
        assert float(gpm.map_objective("rbf", params, *args, prior)) == pytest.approx(expected, rel=1e-12)
        assert float(gpm.map_objective("rbf", params, *args)) == pytest.approx(lml, rel=1e-12)  # no prior: ML
    pb = gpm.ParamBounds((2.5e-2, 1e3), (1.0, 1.0), (1e-4, 1.0))
    mode = gpm.prior_mode(d, prior, pb)
    np.testing.assert_allclose(mode.lengthscale, math.exp(loc_l - s_l ** 2), rtol=1e-12)
    assert float(mode.noise) == pytest.approx(math.exp(-5.0)) and float(mode.outputscale) == 1.0
    # the mode maximizes the prior density (scipy's lognorm has it at exp(loc - s^2))
    grid = math.exp(loc_l - s_l ** 2) * np.array([0.9, 1.0, 1.1])
    assert np.argmax(lognorm(s=s_l, scale=math.exp(loc_l)).pdf(grid)) == 1


def test_lbfgs_map_fit_reaches_the_scipy_lbfgsb_optimum(x64):
    """gp_model.fit(optimizer="lbfgs") from the prior mode ends at the MAP value that scipy's
    L-BFGS-B (what BoTorch's fit_gpytorch_mll uses) finds on the same objective and bounds;
    the outputscale, fixed by its bounds, stays 1."""
    us, ys = _gp_draws("rbf", [0.2, 0.6], 40, 2, [4])
    cap = 48
    u = jnp.zeros((cap, 2)).at[:40].set(us[0])
    y = jnp.zeros(cap).at[:40].set(ys[0])
    mask = jnp.arange(cap) < 40
    prior, pb = gpm.botorch_prior(2), gpm.ParamBounds((2.5e-2, 1e3), (1.0, 1.0), (1e-4, 1.0))
    start = jax.tree.map(lambda a: a[None], gpm.prior_mode(2, prior, pb))
    p, value = jax.jit(lambda s: gpm.fit("rbf", s, u, y, mask, steps=50, bounds=pb, prior=prior,
                                         optimizer="lbfgs"))(start)
    assert float(p.outputscale) == 1.0
    vg = jax.jit(jax.value_and_grad(lambda x: -gpm.map_objective(
        "rbf", gpm.GPParams(x[:2], jnp.zeros(()), x[2]), u, y, mask, prior)))
    x0 = np.concatenate([np.asarray(start.log_lengthscale[0]), [float(start.log_noise[0])]])
    box = [(math.log(2.5e-2), math.log(1e3))] * 2 + [(math.log(1e-4), 0.0)]
    res = minimize(lambda x: tuple(np.asarray(v, float) for v in vg(jnp.asarray(x))), x0, jac=True,
                   method="L-BFGS-B", bounds=box)
    assert float(value) >= -res.fun - 1e-6, (float(value), -res.fun)
    np.testing.assert_allclose(np.log(p.lengthscale), res.x[:2], atol=1e-2)
    start_value = float(gpm.map_objective("rbf", jax.tree.map(lambda a: a[0], start), u, y, mask, prior))
    assert float(value) > start_value + 1.0  # it moved


def _branin_state(algo, n=8, capacity=12, seed=0):
    problem = nbo.benchmarks.get("branin")
    x0 = nbo.initial_design(jax.random.key(seed), problem.bounds, n)
    init = jax.jit(lambda k, x, y: algo.init(k, x, y, bounds=problem.bounds, capacity=capacity))
    return problem, init(jax.random.key(1), x0, jax.vmap(problem.objective)(x0))


@pytest.fixture(scope="module")
def ei_setup():
    algo = gp_bo(acquisition="ei", **FAST, **RAW)
    problem, state = _branin_state(algo)
    return algo, problem, state


def test_state_surrogate_and_refinement(ei_setup):
    """The state's posterior is the GP conditioned on the standardized data with the fitted
    hyperparameters; EI refinement never returns a worse EI than the raw candidate argmax."""
    algo, problem, state = ei_setup
    u_c = jax.random.uniform(jax.random.key(3), (16, 2))

    @jax.jit  # the references compiled (op by op: hundreds of small compilations)
    def reference(state):
        y_std = state.data.standardized()[0]
        direct = gpm.condition("rbf", state.model.params, state.data.u, y_std, state.data.mask, 1e-6)
        lml = gpm.log_marginal_likelihood("rbf", state.model.params, state.data.u, y_std, state.data.mask, 1e-6)
        return y_std, gpm.predict("rbf", direct, u_c), lml

    y_std, (mean, var), lml = reference(state)
    post = jax.jit(algo.surrogate)(state, u_c)
    np.testing.assert_allclose(post.mean, mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(post.std ** 2, var, atol=1e-5)  # float32: var = s_f^2 - ||v||^2 cancels
    assert float(post.incumbent) == float(jnp.min(y_std[:8]))
    assert float(state.model.params.outputscale) == 1.0  # BoTorch's kernel: no outputscale
    assert float(state.model.params.noise) >= 1e-4 and np.all(np.asarray(state.model.params.lengthscale) >= 2.5e-2)
    assert float(state.model.lml) == pytest.approx(float(lml), rel=1e-5)

    refined = gp_bo(acquisition="ei", acq_optimizer=dict(raw_samples=512, num_restarts=4, steps=30), **FAST)
    lo, hi = problem.bounds

    @jax.jit
    def ei_of(x):
        p = algo.surrogate(state, ((x - lo) / (hi - lo))[None, :].astype(jnp.float32))
        return expected_improvement(p.mean, p.std, p.incumbent)[0]

    ei_at = lambda x: float(ei_of(x))  # noqa: E731

    ask_raw, ask_ref = jax.jit(algo.ask), jax.jit(refined.ask)
    gains = []
    for s in range(3):
        k = jax.random.key(10 + s)
        x_raw, x_ref = ask_raw(state, k), ask_ref(state, k)
        assert ei_at(x_ref) >= ei_at(x_raw) * (1 - 1e-5)
        assert np.all((x_ref >= lo) & (x_ref <= hi))
        gains.append(ei_at(x_ref) - ei_at(x_raw))
    assert max(gains) > 0  # the gradient steps do move uphill


def test_local_rank_mean_hands_the_posterior_mean_at_the_rows_to_the_optimizer(ei_setup, monkeypatch):
    """``acq_optimizer=dict(local_rank="mean")``: ask hands ``optimize_acqf`` the data with
    ``y`` the GP's posterior mean at the observations (BoTorch's ``sample_around_best``
    ranking); the default hands the data as observed; constrained acquisitions refuse it."""
    import nbo_jax.bo as gp_module  # the one BO step calls the optimizer

    _, problem, state = ei_setup
    seen = []
    real = gp_module.optimize_acqf
    monkeypatch.setattr(gp_module, "optimize_acqf", lambda *a: seen.append(a[2]) or real(*a))

    def handed(rank):
        """The data ask hands the optimizer (a compiled ask returns it: eager, the ask is
        hundreds of small compilations)."""
        ask = gp_bo(acquisition="ei", acq_optimizer=dict(raw_samples=64, local_rank=rank, steps=5), **FAST).ask
        return jax.jit(lambda s, k: (ask(s, k), seen[-1]))(state, jax.random.key(0))[1]

    mean_ranked, observed = handed("mean"), handed("observed")
    written = np.asarray(state.data.mask)
    expected = gpm.predict("rbf", state.model.posterior, state.data.u)[0]
    np.testing.assert_allclose(np.asarray(mean_ranked.y)[written], np.asarray(expected)[written], rtol=1e-5,
                               atol=1e-6)
    assert not np.allclose(np.asarray(mean_ranked.y)[written], np.asarray(state.data.y)[written])
    for a, b in zip(jax.tree.leaves(observed), jax.tree.leaves(state.data)):  # the data as observed
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="local_rank='mean' is not available"):
        gp_bo(acquisition="cei", acq_optimizer=dict(local_rank="mean"))


def _fit_from_the_prior_mode(state, noise):
    """``(params, value)``: gp_model.fit of ``state``'s standardized data from the prior mode
    alone (the default preset's bounds, the noise variance's ``noise``), asserted equal to
    ``state``'s fitted hyperparameters."""
    data, prior = state.data, gpm.botorch_prior(2)
    pb = gpm.ParamBounds((2.5e-2, 1e3), (1.0, 1.0), noise)
    mode = jax.tree.map(lambda a: jnp.asarray(a)[None], gpm.prior_mode(2, prior, pb, jnp.float64))
    expected, value = jax.jit(lambda u, y, mask: gpm.fit("rbf", mode, u, y, mask, steps=200, bounds=pb, prior=prior,
                                                         optimizer="lbfgs", learn_constant=True))(
        data.u, data.standardized()[0], data.mask)
    for a, b in zip(jax.tree.leaves(state.model.params), jax.tree.leaves(expected)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    return expected, value


def test_warm_start_false_fits_from_the_prior_mode_alone(x64):
    """``warm_start=False, n_restarts=1``: every refit is gp_model.fit from the prior mode
    alone (BoTorch's new SingleTaskGP per iteration), whatever the previous fit was; the
    default starts from the previous fit and the prior mode and is never worse in MAP."""
    fresh = gp_bo(acquisition="ei", warm_start=False, n_restarts=1, **RAW)
    problem, state = _branin_state(fresh, n=8, capacity=12)
    x = nbo.initial_design(jax.random.key(5), problem.bounds, 2)
    for xi in x:
        state = jax.jit(fresh.tell)(state, xi, problem.objective(xi))
    data = state.data
    prior = gpm.botorch_prior(2)
    expected, value = _fit_from_the_prior_mode(state, (1e-4, 1.0))
    warm = gp_bo(acquisition="ei", **RAW)
    _, wstate = _branin_state(warm, n=8, capacity=12)
    for xi in x:
        wstate = jax.jit(warm.tell)(wstate, xi, problem.objective(xi))
    map_of = lambda p: float(gpm.map_objective("rbf", p, data.u, data.standardized()[0], data.mask, prior))
    assert map_of(wstate.model.params) >= float(value) - 1e-8


def test_deterministic_fixes_the_noise_at_its_floor(x64):
    """``deterministic=True``: every fit is gp_model.fit with the noise variance's bounds
    ``(noise_floor, noise_floor)`` (here from the prior mode alone), so the noise is the
    floor, the posterior mean passes through the observations and EI where a point was
    observed is at most ``phi(0) sqrt(floor)``; the default fits the noise, and on a step
    function more of it, and asks again where it observed with more than twice that EI."""
    floor = 1e-3
    det = gp_bo(acquisition="ei", deterministic=True, noise_floor=floor, warm_start=False, n_restarts=1, **RAW)
    fitted = gp_bo(acquisition="ei", noise_floor=floor, warm_start=False, n_restarts=1, **RAW)
    problem = nbo.benchmarks.get("branin")
    x0 = nbo.initial_design(jax.random.key(0), problem.bounds, 10)
    y0 = jnp.floor(x0[:, 0] / 3.0) + 0.01 * x0[:, 1]  # steps in x_1: a GP with a fitted noise calls them noise
    init = lambda algo: jax.jit(lambda k: algo.init(k, x0, y0, bounds=problem.bounds, capacity=12))(jax.random.key(1))
    state, other = init(det), init(fitted)
    data = state.data
    _fit_from_the_prior_mode(state, (floor, floor))
    assert float(state.model.params.noise) == pytest.approx(floor, rel=1e-12)
    assert float(other.model.params.noise) > 5 * floor
    post = jax.jit(det.surrogate)(state, data.u[:10])
    np.testing.assert_allclose(post.mean, data.standardized()[0][:10], atol=0.05)
    # EI at the observed points: at most phi(0) sqrt(floor), a std of the floor's at the incumbent
    ei_det = float(jnp.max(expected_improvement(post.mean, post.std, post.incumbent)))
    assert ei_det <= 0.4 * floor ** 0.5
    post = jax.jit(fitted.surrogate)(other, data.u[:10])
    assert float(jnp.max(expected_improvement(post.mean, post.std, post.incumbent))) > 2 * ei_det


def test_refit_every_keeps_hyperparameters_between_refits(ei_setup):
    """refit_every=3: hyperparameters are refitted only at every third tell;
    a NaN observation at a refit is a failed evaluation: stored as the worst value observed so
    far (the Dataset's imputation), and the fit is the fit of the data with that value told."""
    _, problem, state = ei_setup                              # 8 observations
    state = state._replace(tells=jnp.asarray(2, jnp.int32))   # as after two tells
    tell = jax.jit(gp_bo(acquisition="ei", refit_every=3, **FAST).tell)
    x9 = jnp.array([3.0, 2.0])
    s9 = tell(state, x9, problem.objective(x9))               # third tell: refit
    assert int(s9.tells) == 3
    assert not np.allclose(s9.model.params.log_lengthscale, state.model.params.log_lengthscale)
    n9 = tell(state, x9, jnp.nan)                             # third tell: refit, with a failed row
    worst = float(jnp.max(state.data.y[:8]))
    assert bool(n9.data.mask[8]) and bool(n9.data.failed[8]) and int(n9.data.count) == 9
    assert float(n9.data.y[8]) == worst
    leaves = jax.tree.leaves((n9.model.params, n9.model.posterior, n9.model.lml, n9.data))
    assert all(bool(jnp.all(jnp.isfinite(leaf))) for leaf in leaves if jnp.issubdtype(leaf.dtype, jnp.floating))
    # the failed row is the worst value told at that x: the same fit as telling it
    w9 = tell(state, x9, worst)
    for a, b in zip(jax.tree.leaves(n9.model.params), jax.tree.leaves(w9.model.params)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)
    assert not np.allclose(n9.model.params.log_lengthscale, s9.model.params.log_lengthscale)  # the 9th row counts in s9
    y_std = n9.data.standardized()[0]  # LML of the 9 rows, the imputed one included
    lml_all = gpm.log_marginal_likelihood("rbf", n9.model.params, n9.data.u[:9], y_std[:9], jnp.ones(9, bool), 1e-6)
    assert float(n9.model.lml) == pytest.approx(float(lml_all), rel=1e-5)
    # the incumbent stays the best finite observation (the imputed value is no measurement),
    # and the next ask is finite and in the box
    algo = ei_setup[0]
    assert float(algo.surrogate(n9, n9.data.u[:1]).incumbent) == float(jnp.min(y_std[:8]))
    x_next = jax.jit(algo.ask)(n9, jax.random.key(4))
    assert np.all(np.isfinite(np.asarray(x_next))) and problem.bounds.contains(x_next)
    assert int(tell(state, jnp.array([jnp.nan, 2.0]), 1.0).data.count) == 8  # a NaN x is not recorded
    x = jnp.array([0.0, 5.0])
    s10 = tell(s9, x, problem.objective(x))                  # fourth tell: no refit
    for a, b in zip(jax.tree.leaves(s9.model.params), jax.tree.leaves(s10.model.params)):
        np.testing.assert_array_equal(a, b)
    assert bool(s10.data.mask[9]) and not np.allclose(s10.model.posterior.alpha, s9.model.posterior.alpha)


@pytest.fixture
def fit_calls(monkeypatch):
    """A list that grows by one at every hyperparameter fit that runs (a host callback inside
    ``gp_model.fit``, so it counts executions, not traces)."""
    calls = []
    original = gpm.fit

    def counting_fit(*args, **kwargs):
        jax.debug.callback(lambda: calls.append(1))
        return original(*args, **kwargs)

    monkeypatch.setattr(gpm, "fit", counting_fit)
    return calls


def test_refit_schedule_stays_a_branch_under_vmap(fit_calls):
    """The refit schedule reads the tell counter, which depends on no data: in a run vmapped
    over seeds the skipped refits are skipped (a real ``lax.cond``), not run and discarded
    (a select). Counted with a host callback inside the fit: init + tells 3 and 6 = 3 fits
    in 6 steps (a select would run 7)."""
    calls = fit_calls
    algo = gp_bo(acquisition="ei", refit_every=3, **FAST)
    problem = nbo.benchmarks.get("branin")
    hist = jax.vmap(lambda k: nbo.run_bo(k, algo, problem, 3, 6))(jax.random.split(jax.random.key(0), 2))
    jax.block_until_ready(hist.x)
    jax.effects_barrier()
    assert len(calls) == 3, len(calls)


@pytest.mark.parametrize("kind", gpm.KERNELS)
def test_append_rows_equals_a_new_factorization(x64, kind):
    """gp_model.append_rows (the factor extended row by row between refits) gives the factor,
    ``alpha`` and marginal likelihood of a new factorization with the same hyperparameters:
    a valid new row, a masked one and one past the capacity (both leave the factor alone),
    and new targets for the old rows (standardization moves them)."""
    k1, k2 = jax.random.split(jax.random.key(5))
    cap, d = 12, 3
    u = jax.random.uniform(k1, (cap, d), jnp.float64)
    y = jax.random.normal(k2, (cap,), jnp.float64)
    params = _params([0.3, 0.5, 0.8], outputscale=1.3, noise=1e-3)._replace(constant=jnp.asarray(0.2))
    old = (jnp.arange(cap) < 6).at[2].set(False)
    post = gpm.condition(kind, params, u, y, old, 1e-8)
    new = old.at[6].set(True).at[8].set(True)                 # row 7 stays masked
    y2 = 1.7 * y - 0.4
    got = gpm.append_rows(kind, post, u, y2, new, jnp.array([6, 7, 8, cap]), 1e-8)
    ref = gpm.condition(kind, params, u, y2, new, 1e-8)
    np.testing.assert_allclose(got.chol, ref.chol, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.alpha, ref.alpha, rtol=1e-10, atol=1e-12)
    assert float(gpm.posterior_lml(got, y2)) == pytest.approx(float(gpm.posterior_lml(ref, y2)), rel=1e-12)
    assert np.array_equal(got.mask, new)


def test_run_between_refits_equals_the_refactorized_run(x64, monkeypatch):
    """A float64 GP-EI run with refit_every=3 extends the factor between refits; with every
    extension replaced by a new factorization (the code before append_rows) the run is the
    same up to rounding: the same points, values and hyperparameters."""
    problem = nbo.benchmarks.get("branin")
    small = dict(acq_optimizer=dict(raw_samples=128, num_restarts=2, steps=20))

    def run():
        algo = gp_bo(acquisition="ei", refit_every=3, **FAST, **small)
        return jax.jit(lambda k: nbo.run_bo(k, algo, problem, 4, 7))(jax.random.key(3))

    appended = run()
    monkeypatch.setattr(gpm, "append_rows", lambda kind, post, u, y, mask, rows, jitter=0.0:
                        gpm.condition(kind, post.params, u, y, mask, jitter))
    refactorized = run()
    np.testing.assert_allclose(appended.x, refactorized.x, rtol=0, atol=1e-7)
    np.testing.assert_allclose(appended.y, refactorized.y, rtol=0, atol=1e-7)


def test_auto_refit_schedule_follows_the_rows_held(fit_calls):
    """refit_every="auto" (default preset): a refit at every tell while the GP holds fewer
    than 100 rows, then every (rows // 50)-th tell; between refits the hyperparameters are
    kept. Counted from the rows received, not the data, so it matches under vmap. Fits are
    counted with a host callback inside the fit."""
    calls = fit_calls
    algo = gp_bo(acquisition="ei", **FAST, **RAW)
    problem = nbo.benchmarks.get("branin")
    lo, hi = problem.bounds.lower, problem.bounds.upper
    tell = jax.jit(algo.tell)

    def states(n0):
        calls.clear()
        x0 = nbo.initial_design(jax.random.key(1), problem.bounds, n0)
        s0 = jax.jit(lambda x, y: algo.init(jax.random.key(0), x, y, bounds=problem.bounds, capacity=n0 + 2))(
            x0, jax.vmap(problem.objective)(x0))
        x1, x2 = lo + 0.3 * (hi - lo), lo + 0.7 * (hi - lo)
        s1 = tell(s0, x1, problem.objective(x1))
        s2 = jax.block_until_ready(tell(s1, x2, problem.objective(x2)))
        jax.effects_barrier()
        return s0, s1, s2

    s0, s1, s2 = states(97)                      # period 1: init and both tells fit
    assert len(calls) == 3 and int(s1.rows_told) == 98
    s0, s1, s2 = states(110)                     # period 2: init and the second tell fit
    assert len(calls) == 2 and int(s2.tells) == 2 and int(s2.rows_told) == 112
    for a, b in zip(jax.tree.leaves(s0.model.params), jax.tree.leaves(s1.model.params)):
        np.testing.assert_array_equal(a, b)      # kept between refits
    assert not np.array_equal(s1.model.posterior.alpha, s0.model.posterior.alpha)  # the new row is in the posterior
    with pytest.raises(TypeError, match="refit_every"):
        gp_bo(refit_every="sometimes")


KEYS = jax.random.split(jax.random.key(2024), 3)


def test_gp_ts_is_deterministic_per_key():
    """Branin with the paper's noise, 5 initial + 5 iterations, 3 seeds vmapped: the same keys
    in reverse order (cached compilation) give the same runs in reverse order; seeds differ.
    Thompson sampling, whose ask draws the most from its key (CI time): EI's vmapped seed is
    checked against its single run in ``tests/test_contract.py``, and UCB, which shares EI's
    model and loop, against its golden history in ``tests/test_golden.py``. How well it
    optimizes (median regret against random search) is measured by
    ``benchmarks/beats_random.py``."""
    problem = nbo.benchmarks.get("branin", noise_std="paper")
    algo = gp_bo(acquisition="ts", acq_optimizer=dict(raw_samples=128), **FAST)
    assert algo.name == "gp-ts"
    run = jax.jit(jax.vmap(lambda k: nbo.run_bo(k, algo, problem, n_init=5, n_iter=5)))
    hists = run(KEYS)
    np.testing.assert_array_equal(hists.x, run(KEYS[::-1]).x[::-1])
    assert len({tuple(np.asarray(h)) for h in hists.x[:, -1]}) == hists.x.shape[0]  # seeds differ
    assert np.all((hists.x >= problem.bounds.lower) & (hists.x <= problem.bounds.upper))


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="kernel"):
        gp_bo(kernel="laplace")
    with pytest.raises(ValueError, match="acquisition"):
        gp_bo(acquisition="pi")
    with pytest.raises(ValueError, match="preset"):
        gp_bo(preset="botorch")
    for kw, name in [(dict(n_restarts=0), "n_restarts"), (dict(beta=-1.0), "beta"),
                     (dict(noise_floor=0.0), "noise_floor"), (dict(prior="gamma"), "prior"),
                     (dict(fit_optimizer="sgd"), "fit_optimizer"),
                     (dict(acq_optimizer=dict(local_fraction=1.0)), "local_fraction"),
                     (dict(refit_every=0), "refit_every"), (dict(fit_learning_rate=0.0), "fit_learning_rate"),
                     (dict(lengthscale_bounds=(1.0, 0.1)), "lengthscale"),
                     (dict(acq_optimizer=dict(raw_samples=0)), "raw_samples"),
                     (dict(acquisition="ts", acq_optimizer=dict(steps=5)), r"acq_optimizer\.steps")]:
        with pytest.raises(ValueError, match=name):
            gp_bo(**kw)
    with pytest.raises(TypeError, match="fit_steps"):
        gp_bo(fit_steps=10.5)
    with pytest.raises(TypeError, match="acq_optimizer"):
        gp_bo(acq_optimizer=dict(n_candidates=512))  # the old option name is not a field
    with pytest.raises(TypeError, match="acq_optimizer"):
        gp_bo(acq_optimizer=512)
    with pytest.raises(ValueError, match="kernel"):
        gpm.kernel_matrix("cosine", gpm.default_params(1), jnp.zeros((1, 1)), jnp.zeros((1, 1)))
    with pytest.raises(ValueError, match="optimizer"):
        gpm.fit("rbf", jax.tree.map(lambda a: a[None], gpm.default_params(1)), jnp.zeros((2, 1)), jnp.zeros(2),
                jnp.ones(2, bool), optimizer="newton")


def test_every_argument_is_checked_at_the_factory():
    """Types, ranges and NaN of every argument give an error that names it, before any run."""
    nan = float("nan")
    type_errors = [("beta", "2"), ("beta", True), ("n_restarts", 2.0), ("refit_every", True), ("fit_steps", "20"),
                   ("fit_learning_rate", "0.05"), ("noise_floor", "1e-4"), ("jitter", "0"),
                   ("learn_outputscale", 1), ("standardize", "yes"), ("lengthscale_bounds", ("a", 1.0)),
                   ("outputscale_bounds", 1.0), ("q", 2.0), ("q", True),
                   ("warm_start", 1), ("deterministic", 1)]
    for name, value in type_errors:
        with pytest.raises(TypeError, match=name):
            gp_bo(**{name: value})
    value_errors = [("beta", nan), ("beta", float("inf")), ("fit_learning_rate", nan), ("noise_floor", nan),
                    ("noise_floor", 1.0), ("jitter", -1.0), ("jitter", nan), ("lengthscale_bounds", (nan, 1.0)),
                    ("outputscale_bounds", (0.0, 1.0)), ("q", 0), ("kernel", 3), ("prior", 1),
                    ("fit_optimizer", "LBFGS"), ("preset", None)]
    for name, value in value_errors:
        with pytest.raises(ValueError, match=name):
            gp_bo(**{name: value})
    with pytest.raises(ValueError, match="beta_c"):
        gp_bo(acquisition="lcb-c", beta_c=nan)
    with pytest.raises(TypeError, match="beta_c"):
        gp_bo(acquisition="lcb-c", beta_c=["1"])
    with pytest.raises(TypeError, match=r"batch_size.*\bq="):  # the points per ask are q
        gp_bo(batch_size=4)
    assert gp_bo(beta=jnp.asarray(3.0)).name == "gp-ei"  # beta may be a (vmappable) JAX scalar
    algo = gp_bo(acquisition="ucb", q=3)
    assert (algo.q, algo.batch_rule, algo.constrained) == (3, "fantasy", False)
    assert algo.config.build().q == 3  # the factory call is recorded
    assert [gp_bo(acquisition=a).batch_rule for a in ACQUISITIONS] == [
        "fantasy", "fantasy", "independent", "fantasy", "fantasy", "fantasy", "fantasy", "fantasy"]
    with pytest.raises(TypeError, match="reference_point"):
        gp_bo(acquisition="ehvi", reference_point=("a", 1.0))
    with pytest.raises(ValueError, match="reference_point"):
        gp_bo(acquisition="ehvi", reference_point=(1.0, nan))


def test_ucb_is_mean_minus_sqrt_beta_sigma(ei_setup):
    """gp_bo(acquisition="ucb", beta) minimizes mean - sqrt(beta) std (Srinivas et al. 2010;
    BoTorch's UpperConfidenceBound(beta)) over the raw samples when steps = 0."""
    _, _, state = ei_setup
    key = jax.random.key(21)
    for beta in (2.0, 9.0):
        algo = gp_bo(acquisition="ucb", beta=beta, acq_optimizer=dict(raw_samples=64, steps=0, local_fraction=0.0),
                     **FAST)
        # what ask scores: optimize_acqf's raw-sample key is the first half of ask's first half
        k_raw = jax.random.split(jax.random.split(key)[0])[0]
        u_c = candidate_set(k_raw, state.data, 64, sampler="sobol")
        post = algo.surrogate(state, u_c)
        j = int(np.argmin(np.asarray(post.mean) - math.sqrt(beta) * np.asarray(post.std)))
        np.testing.assert_allclose(jax.jit(algo.ask)(state, key), state.bounds.from_unit(u_c[j]), rtol=1e-6)


def test_presets_pick_the_documented_models(ei_setup):
    """Default: BoTorch's SingleTaskGP (RBF, LogNormal priors, no outputscale, learned constant
    mean, MAP by L-BFGS-B) and optimize_acqf (512 raw samples, a quarter around the best, Sobol,
    10 Boltzmann restarts, L-BFGS-B climb); paper:
    SE kernel, ML-II with a learned outputscale, raw-sample argmax (Phan-Trong et al. 2023)."""
    import nbo_jax.algorithms.gp as gp_mod

    dflt, paper = gp_mod.PRESETS["default"], gp_mod.PRESETS["paper"]
    assert (dflt["kernel"], dflt["prior"], dflt["learn_outputscale"], dflt["fit_optimizer"]) == (
        "rbf", "botorch", False, "lbfgs")
    assert dflt["mean"] == "constant" and paper["mean"] == "zero"
    assert dflt["outcome_transform"] == "discrete_half_rank" and paper["outcome_transform"] == "standardize"
    assert dflt["noise_floor"] == 1e-4 and dflt["lengthscale_bounds"][0] == 2.5e-2
    ei = dflt["acq_optimizer"]["ei"]
    assert (ei.raw_samples, ei.num_restarts) == (512, 10) and ei.steps > 0 and ei.local_fraction == 0.25
    assert (ei.method, ei.raw_sampler, ei.restarts) == ("lbfgsb", "sobol", "boltzmann")
    assert dflt["acq_optimizer"]["ts"].steps == 0 and dflt["acq_optimizer"]["lcb-c"].steps == 0
    assert (paper["kernel"], paper["prior"], paper["learn_outputscale"]) == ("rbf", "none", True)
    assert all(a.steps == 0 and a.local_fraction == 0.0 for a in paper["acq_optimizer"].values())
    _, _, state = ei_setup
    u_c = jax.random.uniform(jax.random.key(0), (5, 2))
    for algo, kind in ((gp_bo(preset="paper"), "rbf"), (gp_bo(), "rbf"), (gp_bo(kernel="matern52"), "matern52")):
        np.testing.assert_allclose(algo.surrogate(state, u_c).mean, gpm.predict(kind, state.model.posterior, u_c)[0])
    assert not np.allclose(gp_bo(kernel="matern52").surrogate(state, u_c).mean, gp_bo().surrogate(state, u_c).mean)


# ---------------------------------------------------------------- the NTK kernel (issue 25, item 4)
def _np_relu_ntk(z1, z2, depth, use_bias):
    """The ReLU NTK of Neural-BO's network from scratch in numpy (Arora et al. 2019, Appendix
    E, with weight variance 1 and bias variance ``beta``): ``Sigma_1 = z.z' + beta``,
    ``Theta_1 = Sigma_1``; per further layer, with ``c = Sigma / sqrt(q q')``,
    ``t = arccos c``: ``Sigma <- sqrt(q q') (sin t + (pi - t) c) / (2 pi) + beta``,
    ``Theta <- Sigma + Theta (pi - t) / (2 pi)``, ``q <- q / 2 + beta``; ``c = 1`` exactly
    where the two points are identical."""
    beta = 1.0 if use_bias else 0.0
    sigma = z1 @ z2.T + beta
    q1, q2 = np.sum(z1 * z1, 1) + beta, np.sum(z2 * z2, 1) + beta
    same = np.all(z1[:, None, :] == z2[None, :, :], axis=-1)
    theta = sigma.copy()
    for _ in range(depth - 1):
        norm = np.sqrt(np.outer(q1, q2))
        # c = 1 exactly at identical points: arccos has an infinite slope there, so the
        # rounding of sigma / norm (1e-16) would move t by sqrt(2e-16) ~ 1.5e-8
        ratio = np.divide(sigma, norm, out=np.zeros_like(sigma), where=norm > 0)  # z = 0: Sigma = 0
        c = np.where(same, 1.0, np.clip(ratio, -1.0, 1.0))
        t = np.arccos(c)
        sigma = norm * (np.sin(t) + (np.pi - t) * c) / (2 * np.pi) + beta
        theta = sigma + theta * (np.pi - t) / (2 * np.pi)
        q1, q2 = q1 / 2 + beta, q2 / 2 + beta
    return theta


NTK_CASES = [(2, True), (3, False), (3, True)]


@pytest.mark.parametrize("depth,use_bias", NTK_CASES)
def test_ntk_kernel_is_the_normalized_relu_ntk(x64, depth, use_bias):
    """kernel_matrix(NTKKernel) = s_f^2 Theta(2u - 1, 2u' - 1) / Theta(z*, z*), Theta the ReLU
    NTK (the numpy recursion above, independent of neural-tangents) and the normalizer by hand
    (depth 2 with biases: Theta(z, z) = |z|^2 + 2; depth 3 without: 3/4 |z|^2; depth 3 with:
    3/4 |z|^2 + 11/4; at |z|^2 = d/3); it is the mean prior variance over the cube; the
    lengthscales change nothing; "ntk" is NTKKernel()."""
    d = 3
    a, b = RNG.random((7, d)), RNG.random((5, d))
    spec = gpm.NTKKernel(depth, "relu", use_bias)
    norm = {(2, True): d / 3 + 2, (3, False): 0.75 * d / 3, (3, True): 0.75 * d / 3 + 2.75}[(depth, use_bias)]
    assert spec.normalizer(d) == pytest.approx(norm, rel=1e-15)
    expected = 1.7 * _np_relu_ntk(2 * a - 1, 2 * b - 1, depth, use_bias) / norm
    for ls in ([0.1, 0.4, 2.0], [5.0, 5.0, 0.01]):
        K = gpm.kernel_matrix(spec, _params(ls, 1.7), jnp.asarray(a), jnp.asarray(b))
        np.testing.assert_allclose(K, expected, rtol=1e-12, atol=1e-14)
    # the diagonal (closed form, no arccos) is the kernel's diagonal; its mean over the cube is 1
    Kaa = gpm.kernel_matrix(spec, _params([1.0] * d, 1.7), jnp.asarray(a), jnp.asarray(a))
    # (neural-tangents forms sin t as sqrt(q q' - Sigma^2): at identical points that cancels,
    # and XLA's code generation leaves up to ~1e-8 relative there; the closed form is exact)
    np.testing.assert_allclose(gpm.prior_variance(spec, _params([1.0] * d, 1.7), jnp.asarray(a)), jnp.diag(Kaa),
                               rtol=1e-7)
    cube = jax.random.uniform(jax.random.key(0), (200_000, d), jnp.float64)
    assert float(jnp.mean(spec.diagonal(cube))) == pytest.approx(1.0, abs=3e-3)
    if (depth, use_bias) == (2, True):
        np.testing.assert_array_equal(gpm.kernel_matrix("ntk", _params([1.0] * d), jnp.asarray(a), jnp.asarray(b)),
                                      gpm.kernel_matrix(spec, _params([1.0] * d), jnp.asarray(a), jnp.asarray(b)))
    # not stationary: the prior variance varies (the centre u = 1/2 is the minimum)
    pv = spec.diagonal(jnp.array([[0.5] * d, [1.0] * d]))
    assert float(pv[0]) < 0.8 * float(pv[1])


@pytest.mark.parametrize("depth,use_bias", NTK_CASES)
@pytest.mark.parametrize("n_invalid", [0, 4])
def test_ntk_posterior_equals_textbook_formulas(x64, depth, use_bias, n_invalid):
    """mean = c + k*^T (K + s2 I)^-1 (y - c), var = k(x, x) - k*^T (K + s2 I)^-1 k* with the
    NTK's non-constant prior variance k(x, x) (a stationary s_f^2 in its place would be wrong
    by O(0.1)), the joint covariance and the LML, on the valid subset, against numpy. (With
    neural-tangents' own diagonal in K instead of the closed form, gp_model.gram, the errors
    were up to 1e-8, the LML's 1e-7: sqrt(q q' - Sigma^2) cancels at identical points.)"""
    u, y, y_stored, mask = _masked_problem(n_invalid=n_invalid, d=3)
    spec = gpm.NTKKernel(depth, "relu", use_bias)
    s2f, s2n, c = 1.3, 0.02, 0.3
    params = _params([0.3, 0.6, 0.9], s2f, s2n)._replace(constant=jnp.asarray(c))
    post = gpm.condition(spec, params, jnp.asarray(u), jnp.asarray(y_stored), jnp.asarray(mask))
    uc = np.concatenate([RNG.random((8, 3)), u[mask][:1], [[0.5, 0.5, 0.5]]])  # a data point and the centre
    mean, var = gpm.predict(spec, post, jnp.asarray(uc))
    k = lambda p, q: s2f * _np_relu_ntk(2 * p - 1, 2 * q - 1, depth, use_bias) / spec.normalizer(3)  # noqa: E731
    uv, yv = u[mask], y[mask]
    A = k(uv, uv) + s2n * np.eye(len(yv))
    ks = k(uv, uc)
    prior_var = np.diag(k(uc, uc))
    np.testing.assert_allclose(mean, c + ks.T @ np.linalg.solve(A, yv - c), atol=1e-10)
    np.testing.assert_allclose(var, prior_var - np.sum(ks * np.linalg.solve(A, ks), axis=0), atol=1e-10)
    assert np.ptp(prior_var) > 0.1 * np.mean(prior_var)  # the identity tests the prior variance
    C = gpm.joint_covariance(spec, post, jnp.asarray(uc))
    np.testing.assert_allclose(C, k(uc, uc) - ks.T @ np.linalg.solve(A, ks), atol=1e-10)
    np.testing.assert_allclose(jnp.diag(C), var, atol=1e-12)
    lml = float(gpm.log_marginal_likelihood(spec, params, jnp.asarray(u), jnp.asarray(y_stored), jnp.asarray(mask)))
    assert lml == pytest.approx(multivariate_normal(np.full(len(yv), c), A).logpdf(yv), rel=1e-11)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ntk_posterior_gradients_are_finite_under_jit_and_vmap(dtype):
    """The acquisition optimizer differentiates the posterior in the candidate: the gradients
    of the mean and the variance are finite at a training point (the ReLU NTK's arccos has an
    infinite derivative at cos = 1), at the centre (z = 0: no direction, for the bias-free
    kernel), at a corner and at a random point; float32 and float64, under jit and vmap (a
    vmapped posterior equals each one alone)."""
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", dtype == "float64")
    try:
        u, _, y_stored, mask = _masked_problem(cap=10, d=2, n_invalid=2, seed=11)
        u, y_stored, mask = jnp.asarray(u, dtype), jnp.asarray(y_stored, dtype), jnp.asarray(mask)
        train = u[int(np.argmax(np.asarray(mask)))]
        points = jnp.stack([train, jnp.full(2, 0.5, dtype), jnp.ones(2, dtype), jnp.asarray([0.3, 0.8], dtype)])
        params = gpm.GPParams(jnp.zeros(2, dtype), jnp.asarray(0.2, dtype), jnp.asarray(math.log(1e-3), dtype))

        def check(spec):
            post = jax.jit(lambda p, y: gpm.condition(spec, p, u, y, mask, 1e-6))(params, y_stored)
            assert all(bool(jnp.all(jnp.isfinite(leaf))) for leaf in jax.tree.leaves(post))

            def mean_var(x):
                m, v = gpm.predict(spec, post, x[None])
                return m[0], v[0]

            grads = jax.jit(jax.vmap(jax.jacrev(mean_var)))(points)
            assert grads[0].dtype == jnp.dtype(dtype)
            for g in grads:
                assert bool(jnp.all(jnp.isfinite(g))), (spec, dtype, g)
            # the posterior variance at a training point is at most the noise (+ rounding)
            assert float(jax.jit(mean_var)(train)[1]) < 2e-3
            # vmap over two posteriors (two data sets) equals each alone (all compiled: op by op,
            # the references were hundreds of small compilations)
            y2 = jnp.stack([y_stored, 2.0 * y_stored])
            posts = jax.jit(jax.vmap(lambda y: gpm.condition(spec, params, u, y, mask, 1e-6)))(y2)
            mv = jax.jit(jax.vmap(lambda p: gpm.predict(spec, p, points)))(posts)
            tol = 1e-10 if dtype == "float64" else 1e-4
            one = jax.jit(lambda y: gpm.predict(spec, gpm.condition(spec, params, u, y, mask, 1e-6), points))
            for i in range(2):
                alone = one(y2[i])
                np.testing.assert_allclose(mv[0][i], alone[0], rtol=tol, atol=tol)
                np.testing.assert_allclose(mv[1][i], alone[1], rtol=tol, atol=tol)

        check(gpm.NTKKernel())
        check(gpm.NTKKernel(3, "relu", False))
    finally:
        jax.config.update("jax_enable_x64", previous)


def test_ntk_ignores_the_lengthscales_and_their_prior(x64):
    """For the NTK the MAP objective is the LML plus the noise prior only: the lengthscales
    (and BoTorch's lengthscale prior) change nothing, so fit never moves them."""
    u, _, y_stored, mask = _masked_problem(n_invalid=3, seed=7)
    args = (jnp.asarray(u), jnp.asarray(y_stored), jnp.asarray(mask))
    prior = gpm.botorch_prior(2)
    map_objective = jax.jit(lambda p: gpm.map_objective("ntk", p, *args, prior))  # one compile for both
    values = [float(map_objective(_params(ls, 0.8, 1e-2))) for ls in ([0.03, 0.03], [9.0, 1.0])]
    lml = float(jax.jit(lambda p: gpm.log_marginal_likelihood("ntk", p, *args))(_params([1.0, 1.0], 0.8, 1e-2)))
    noise_prior = lognorm(s=1.0, scale=math.exp(-4.0)).logpdf(1e-2)
    assert values[0] == values[1] == pytest.approx(lml + noise_prior, rel=1e-12)
    start = jax.tree.map(lambda a: jnp.asarray(a)[None], _params([0.03, 3.0], 1.0, 1e-2))
    for optimizer in gpm.FIT_OPTIMIZERS:
        p, _ = jax.jit(lambda s, o=optimizer: gpm.fit("ntk", s, *args, steps=20, prior=prior, optimizer=o))(start)
        np.testing.assert_array_equal(p.log_lengthscale, start.log_lengthscale[0])
        assert float(p.outputscale) != 1.0  # the outputscale is learned


def test_gp_ntk_state_is_the_ntk_posterior(x64):
    """gp_bo(kernel="ntk") (and the registry's "ntk-gp" alias of "gp-ntk"): the state's kernel
    is Neural-BO's default network's NTK (a posterior equal to one conditioned directly),
    lengthscales fixed at 1, the outputscale learned unless ``learn_outputscale=False``. Its
    ``run_bo`` runs are checked in ``tests/test_contract.py`` and ``tests/test_golden.py``."""
    small = dict(fit_steps=10, acq_optimizer=dict(raw_samples=64, num_restarts=2, steps=5))
    algo = nbo.registry.get("ntk-gp", **small)
    assert algo.name == "gp-ntk"
    paper_net = gp_bo(kernel="ntk", ntk_depth=3, ntk_use_bias=False, **small)
    for a, spec in ((algo, gpm.NTKKernel()), (paper_net, gpm.NTKKernel(3, "relu", False))):
        _, state = _branin_state(a)
        assert np.all(np.asarray(state.model.params.lengthscale) == 1.0) and float(state.model.params.outputscale) != 1.0
        u_c = jax.random.uniform(jax.random.key(3), (6, 2), jnp.float64)
        direct = gpm.condition(spec, state.model.params, state.data.u, state.data.standardized()[0], state.data.mask)
        mean, var = gpm.predict(spec, direct, u_c)
        post = a.surrogate(state, u_c)
        np.testing.assert_allclose(post.mean, mean, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(post.std ** 2, var, rtol=1e-9, atol=1e-12)
    _, state = _branin_state(gp_bo(kernel="ntk", learn_outputscale=False, **small), n=5, capacity=6)
    assert float(state.model.params.outputscale) == 1.0


def test_gp_ntk_arguments_are_checked_and_named(x64):
    """The ntk_* arguments are validated (messages name them) and refused with another
    kernel; lengthscale_bounds is refused with the NTK (it has no lengthscales); the registry
    name fixes the kernel."""
    for kwargs, err, name in [
        (dict(kernel="rbf", ntk_depth=3), ValueError, "ntk_depth"),
        (dict(ntk_activation="relu"), ValueError, "ntk_activation"),  # the preset's kernel: rbf
        (dict(kernel="matern52", ntk_use_bias=False), ValueError, "ntk_use_bias"),
        (dict(kernel="ntk", ntk_depth=1), ValueError, "ntk_depth"),
        (dict(kernel="ntk", ntk_depth=2.0), TypeError, "ntk_depth"),
        (dict(kernel="ntk", ntk_depth=True), TypeError, "ntk_depth"),
        (dict(kernel="ntk", ntk_activation="tanh"), ValueError, "ntk_activation"),
        (dict(kernel="ntk", ntk_use_bias=1), TypeError, "ntk_use_bias"),
        (dict(kernel="ntk", lengthscale_bounds=(0.1, 1.0)), ValueError, "lengthscale_bounds"),
        (dict(kernel="NTK"), ValueError, "kernel"),
    ]:
        with pytest.raises(err, match=name):
            gp_bo(**kwargs)
    with pytest.raises(ValueError, match="fixes"):
        nbo.registry.get("gp-ntk", kernel="rbf")
    with pytest.raises(ValueError, match="kernel"):
        gpm.kernel_matrix("laplace", _params([1.0]), jnp.zeros((1, 1)), jnp.zeros((1, 1)))
    with pytest.raises(ValueError, match="activation"):
        gpm.NTKKernel(activation="gelu")
    assert gp_bo(kernel="ntk", ntk_depth=3, ntk_use_bias=False, preset="paper").config.build().name == "gp-ei"
