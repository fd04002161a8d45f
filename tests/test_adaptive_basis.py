"""Adaptive-basis BO (Brofos, Shu & Jin, eqs. 6-8) and DNGO (Snoek et al. 2015)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.stats import multivariate_normal, norm

import nbo_jax as nbo
from nbo_jax.acquisition import expected_improvement
from nbo_jax.algorithms.adaptive_basis import (
    adaptive_basis,
    bayesian_head,
    head_predict,
    log_evidence,
    ols_head,
    select_batch,
)

SMALL = dict(hidden=(16, 16), epochs=5, minibatch_size=8, acq_optimizer=dict(raw_samples=64))


def _random_features(rng, rows, p, n_valid):
    Phi = rng.normal(size=(rows, p))
    y = Phi @ rng.normal(size=p) + 0.3 * rng.normal(size=rows)
    mask = np.zeros(rows, bool)
    mask[rng.permutation(rows)[:n_valid]] = True
    # masked rows hold garbage that must be ignored
    Phi[~mask] = 1e3 * rng.normal(size=((~mask).sum(), p))
    y[~mask] = 1e4
    return Phi, y, mask


def test_ols_head_equals_least_squares_closed_form(x64):
    """beta_hat by lstsq, s^2 = RSS/(n - p), sigma^2 = s^2 (1 + nu^T (Phi^T Phi)^{-1} nu)."""
    rng = np.random.default_rng(0)
    Phi, y, mask = _random_features(rng, 40, 6, 30)
    P, Y = Phi[mask], y[mask]
    beta, *_ = np.linalg.lstsq(P, Y, rcond=None)
    s2 = np.sum((Y - P @ beta) ** 2) / (30 - 6)
    nu = rng.normal(size=(7, 6))
    var = s2 * (1 + np.einsum("ij,jk,ik->i", nu, np.linalg.inv(P.T @ P), nu))

    head = ols_head(jnp.asarray(Phi), jnp.asarray(y), jnp.asarray(mask), ridge=1e-12)
    mean_j, var_j = head_predict(head, jnp.asarray(nu))
    np.testing.assert_allclose(head.weights, beta, rtol=1e-8)
    np.testing.assert_allclose(head.noise_var, s2, rtol=1e-8)
    np.testing.assert_allclose(head.dof, 24.0, rtol=1e-9)
    np.testing.assert_allclose(mean_j, nu @ beta, rtol=1e-8)
    np.testing.assert_allclose(var_j, var, rtol=1e-8)
    # the maximum-likelihood variant (Brofos, Shu & Jin, below eq. 7): RSS / n
    head_n = ols_head(jnp.asarray(Phi), jnp.asarray(y), jnp.asarray(mask), ridge=1e-12, noise_dof="n")
    np.testing.assert_allclose(head_n.noise_var, s2 * 24 / 30, rtol=1e-8)


@pytest.mark.parametrize("n_valid", [30, 4])
def test_ols_head_with_ridge_and_n_below_p(x64, n_valid):
    """Documented rule: ridge regression, s^2 = RSS / max(n - df, 1), df = tr(hat matrix),
    for n > p and for n <= p alike."""
    rng = np.random.default_rng(1)
    p, ridge = 10, 0.7
    Phi, y, mask = _random_features(rng, 40, p, n_valid)
    P, Y = Phi[mask], y[mask]
    A = P.T @ P + ridge * np.eye(p)
    beta = np.linalg.solve(A, P.T @ Y)
    df = np.trace(P @ np.linalg.solve(A, P.T))
    dof = max(n_valid - df, 1.0)
    s2 = np.sum((Y - P @ beta) ** 2) / dof
    nu = rng.normal(size=(5, p))
    var = s2 * (1 + np.einsum("ij,jk,ik->i", nu, np.linalg.inv(A), nu))

    head = ols_head(jnp.asarray(Phi), jnp.asarray(y), jnp.asarray(mask), ridge=ridge)
    mean_j, var_j = head_predict(head, jnp.asarray(nu))
    np.testing.assert_allclose(head.dof, dof, rtol=1e-10)
    np.testing.assert_allclose(head.weights, beta, rtol=1e-9)
    np.testing.assert_allclose(mean_j, nu @ beta, rtol=1e-9)
    np.testing.assert_allclose(head.noise_var, s2, rtol=1e-9)
    np.testing.assert_allclose(var_j, var, rtol=1e-9)
    assert (float(head.dof) == 1.0) == (n_valid <= p)  # the guard binds only when n <= p here


def test_ols_head_interpolates_when_n_below_p_and_ridge_tiny(x64):
    """With n <= p and a tiny ridge the fit is the minimum-norm interpolant, s^2 ~ 0 (so EI
    vanishes and the largest-sigma fallback explores), and every quantity stays finite."""
    rng = np.random.default_rng(1)
    Phi, y, mask = _random_features(rng, 40, 10, 4)
    P, Y = Phi[mask], y[mask]
    head = ols_head(jnp.asarray(Phi), jnp.asarray(y), jnp.asarray(mask), ridge=1e-9)
    # (accuracy ~ eps * norm(Phi) * norm(y) / ridge: the null space is resolved only to that)
    np.testing.assert_allclose(head.weights, np.linalg.pinv(P) @ Y, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(head_predict(head, jnp.asarray(P))[0], Y, rtol=1e-6)
    assert float(head.dof) == 1.0 and float(head.noise_var) < 1e-12
    _, var = head_predict(head, jnp.asarray(rng.normal(size=(5, 10))))
    assert np.all(np.isfinite(var)) and np.all(np.asarray(var) >= 0)


def test_bayesian_head_fixed_hyperparameters_is_bishop(x64):
    """PRML 3.53-3.54, 3.58-3.59 with given alpha, beta; log evidence equals the Gaussian
    marginal N(y | 0, I/beta + Phi Phi^T / alpha) (PRML 3.86, checked with scipy)."""
    rng = np.random.default_rng(2)
    Phi, y, mask = _random_features(rng, 30, 8, 20)
    P, Y = Phi[mask], y[mask]
    alpha, beta = 0.7, 3.0
    S = np.linalg.inv(alpha * np.eye(8) + beta * P.T @ P)
    m = beta * S @ P.T @ Y
    nu = rng.normal(size=(6, 8))
    head = bayesian_head(jnp.asarray(Phi), jnp.asarray(y), jnp.asarray(mask), alpha, beta)
    mean_j, var_j = head_predict(head, jnp.asarray(nu))
    np.testing.assert_allclose(head.weights, m, rtol=1e-9)
    np.testing.assert_allclose(mean_j, nu @ m, rtol=1e-9)
    np.testing.assert_allclose(var_j, 1 / beta + np.einsum("ij,jk,ik->i", nu, S, nu), rtol=1e-9)
    ref = multivariate_normal(np.zeros(20), np.eye(20) / beta + P @ P.T / alpha).logpdf(Y)
    ev = log_evidence(jnp.asarray(Phi), jnp.asarray(y), jnp.asarray(mask), alpha, beta)
    np.testing.assert_allclose(ev, ref, rtol=1e-10)


def test_evidence_maximization_recovers_noise_precision(x64):
    rng = np.random.default_rng(3)
    n, p, beta_true = 400, 6, 100.0
    Phi = rng.normal(size=(n, p))
    y = Phi @ rng.normal(size=p) + rng.normal(size=n) / np.sqrt(beta_true)
    args = (jnp.asarray(Phi), jnp.asarray(y), jnp.ones(n, bool))
    head = bayesian_head(*args)
    ev = float(log_evidence(*args, head.alpha, head.beta))
    assert ev > float(log_evidence(*args, 1.0, 1.0)) + 100.0
    assert abs(float(head.beta) / beta_true - 1) < 0.2, float(head.beta)
    np.testing.assert_allclose(head.noise_var, 1 / head.beta)


def test_evidence_maximum_matches_scipy(x64):
    """The fixed point is the maximizer of the Gaussian marginal likelihood (small n, so that
    n - gamma differs from n), found independently by scipy on N(y | 0, I/b + Phi Phi^T/a)."""
    from scipy.optimize import minimize

    rng = np.random.default_rng(5)
    n, p = 25, 8
    Phi = rng.normal(size=(n, p))
    y = Phi @ (0.5 * rng.normal(size=p)) + 0.3 * rng.normal(size=n)

    def neg_ev(t):
        a, b = np.exp(t)
        return -multivariate_normal(np.zeros(n), np.eye(n) / b + Phi @ Phi.T / a).logpdf(y)

    ref = minimize(neg_ev, np.zeros(2), method="Nelder-Mead", options=dict(xatol=1e-10, fatol=1e-12, maxiter=4000))
    head = bayesian_head(jnp.asarray(Phi), jnp.asarray(y), jnp.ones(n, bool))
    np.testing.assert_allclose([float(head.alpha), float(head.beta)], np.exp(ref.x), rtol=1e-4)
    np.testing.assert_allclose(head.dof, n - np.sum(1 - head.alpha * np.asarray(head.cov_diag)), rtol=1e-8)


def test_ei_fallback_picks_largest_sigma():
    """All means far above the incumbent with tiny sigma: EI is 0 everywhere, so the
    candidate of largest sigma is chosen (Brofos, Shu & Jin, Section 3.1)."""
    std = jnp.asarray([1e-3, 3e-3, 2e-3, 5e-4])
    mean = jnp.full((4,), 50.0)
    ei = expected_improvement(mean, std, jnp.asarray(0.0))
    assert np.all(np.asarray(ei) == 0.0)
    assert int(select_batch(ei, mean, std, 1)[0]) == 1
    # with a positive EI somewhere the argmax EI wins instead
    mean2 = mean.at[3].set(0.0)
    ei2 = expected_improvement(mean2, std, jnp.asarray(0.0))
    assert int(select_batch(ei2, mean2, std, 1)[0]) == 3


def _reference_batch(ei, mean, std, q, tol=0.0):
    """Plain-Python statement of the rule: greedy over candidates sorted by EI."""
    chosen = []
    for c in np.argsort(-ei, kind="stable"):
        if len(chosen) == q or ei[c] <= tol:
            break
        if all(2 * norm.cdf(-abs(mean[c] - mean[s]) / std[s]) < 0.5 for s in chosen):
            chosen.append(int(c))
    rest = [int(i) for i in np.argsort(-std, kind="stable") if i not in chosen]
    return chosen + rest[: q - len(chosen)]


def test_batch_rule_hand_made_posterior():
    ei = jnp.asarray([5.0, 4.0, 3.0, 2.0, 1.0, 0.5])
    mean = jnp.asarray([0.0, 0.1, 2.0, 2.05, 5.0, -3.0])
    std = jnp.asarray([1.0, 2.0, 1.0, 1.5, 1.0, 10.0])
    # 0 first; 1 is within 0.674 sigma(0) of 0; 2 passes; 3 is too close to 2; 4, 5 pass;
    # then no candidate passes against 5 (sigma 10): fill by largest sigma, 1 then 3
    idx = [int(i) for i in select_batch(ei, mean, std, 6)]
    assert idx == [0, 2, 4, 5, 1, 3]
    assert idx == _reference_batch(np.asarray(ei), np.asarray(mean), np.asarray(std), 6)
    greedy = idx[:4]
    for j, c in enumerate(greedy):  # each accepted c against every s selected before it
        for s in greedy[:j]:
            assert 2 * norm.cdf(-abs(float(mean[c] - mean[s])) / float(std[s])) < 0.5
    rng = np.random.default_rng(4)
    for _ in range(5):
        e, m, s = rng.exponential(size=40), rng.normal(size=40), rng.uniform(0.1, 1.0, size=40)
        e[rng.uniform(size=40) < 0.3] = 0.0
        got = [int(i) for i in select_batch(jnp.asarray(e), jnp.asarray(m), jnp.asarray(s), 8)]
        assert got == _reference_batch(e, m, s, 8) and len(set(got)) == 8


def _start(algo, n=6, capacity=12, seed=0):
    """Problem, initial state and the jitted ``tell`` (eager lax loops are slow)."""
    problem = nbo.benchmarks.get("branin")
    x0 = nbo.initial_design(jax.random.key(seed), problem.bounds, n)
    init = jax.jit(lambda k, x, y, lo, hi: algo.init(k, x, y, bounds=nbo.Bounds(lo, hi), capacity=capacity))
    state = init(jax.random.key(1), x0, jax.vmap(problem.objective)(x0), *problem.bounds)
    return problem, state, jax.jit(algo.tell)


@pytest.mark.parametrize("head", ["ols", "bayesian"])
def test_surrogate_is_the_head_on_the_last_hidden_layer(x64, head):
    """Posterior = linear head refitted on nu(x) = (last hidden layer, 1) of the trained net."""
    algo = adaptive_basis(head, **SMALL, retrain_every=2)
    problem, state, tell = _start(algo)
    assert algo.name == {"ols": "adaptive-basis", "bayesian": "dngo"}[head]
    xs = nbo.initial_design(jax.random.key(7), problem.bounds, 3)
    for i in range(3):
        params_before = state.model.params
        state = tell(state, xs[i], problem.objective(xs[i]))  # x (d,), y ()
        changed = any(bool(jnp.any(a != b)) for a, b in zip(jax.tree.leaves(params_before),
                                                           jax.tree.leaves(state.model.params)))
        assert changed == (i % 2 == 1), i  # retrain every 2 new observations
        assert int(state.model.since_train) == (i + 1) % 2
    from nbo_jax.algorithms.adaptive_basis import _BasisMLP

    net = _BasisMLP((16, 16), jnp.tanh, jnp.float64)
    feats = lambda u: jnp.concatenate([net.apply({"params": state.model.params}, 2 * u - 1)[1],
                                       jnp.ones((u.shape[0], 1))], axis=1)
    y_std = state.data.standardized()[0]
    fit = ols_head if head == "ols" else bayesian_head
    kw = dict(ridge=0.1) if head == "ols" else {}
    ref_head = fit(feats(state.data.u), y_std, state.data.mask, **kw)
    u = jax.random.uniform(jax.random.key(5), (20, 2))
    post = jax.jit(algo.surrogate)(state, u)
    m_ref, v_ref = head_predict(ref_head, feats(u))
    np.testing.assert_allclose(post.mean, m_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(post.std, np.sqrt(v_ref), rtol=1e-9)
    np.testing.assert_allclose(post.incumbent, np.min(np.asarray(y_std)[:9]), rtol=1e-12)
    assert np.all(np.asarray(expected_improvement(post.mean, post.std, post.incumbent)) >= 0)


def test_presets_acq_optimizer():
    from nbo_jax.algorithms.adaptive_basis import PRESETS

    p, d = PRESETS["paper"]["acq_optimizer"], PRESETS["default"]["acq_optimizer"]
    assert (p.raw_samples, p.steps, p.local_fraction) == (2048, 0, 0.0)  # uniform candidates only
    assert (d.raw_samples, d.steps, d.local_fraction, d.local_std, d.n_best) == (2048, 0, 0.25, 0.05, 5)


def test_single_ask_is_the_rule_on_the_raw_samples_then_climbs_ei():
    """q = 1, steps = 0: the raw sample :func:`select_batch` picks (argmax EI, or argmax sigma);
    steps > 0: the climbed point's EI is at least that raw sample's."""
    algo = adaptive_basis("ols", **SMALL)
    problem, state, _ = _start(algo)
    key = jax.random.key(3)
    x = jax.jit(algo.ask)(state, key)
    k_raw, _ = jax.random.split(key)  # ask's split: raw samples, then restarts

    @jax.jit  # the reference compiled (op by op: hundreds of small compilations)
    def reference(state):
        u_c = nbo.optimize.candidate_set(k_raw, state.data, 48, 16, local_std=0.05, n_best=5, sampler="sobol")
        post = algo.surrogate(state, u_c)
        ei = expected_improvement(post.mean, post.std, post.incumbent)
        return u_c, ei, select_batch(ei, post.mean, post.std, 1)[0]

    u_c, ei, i = reference(state)
    i = int(i)
    np.testing.assert_allclose(x, problem.bounds.from_unit(u_c[i]), rtol=1e-6)
    climb = adaptive_basis("ols", **{**SMALL, "acq_optimizer": dict(raw_samples=64, num_restarts=4, steps=30)})
    x2 = jax.jit(climb.ask)(state, key)
    p2 = jax.jit(climb.surrogate)(state, problem.bounds.to_unit(x2)[None])
    assert float(expected_improvement(p2.mean, p2.std, p2.incumbent)[0]) >= float(ei[i]) * (1 - 1e-5)
    assert not np.allclose(x2, x)


def test_batch_ask_tell_shapes_and_failed_evaluation():
    algo = adaptive_basis("bayesian", **SMALL, q=3)
    assert (algo.q, algo.batch_rule) == (3, "native")
    problem, state, tell = _start(algo, capacity=15)
    x = jax.jit(algo.ask)(state, jax.random.key(0))
    assert x.shape == (3, 2) and len({tuple(r) for r in np.asarray(x).tolist()}) == 3
    assert np.all(x >= problem.bounds.lower) and np.all(x <= problem.bounds.upper)
    y = jax.vmap(problem.objective)(x).at[1].set(jnp.nan)
    y_before = np.asarray(state.data.y[:6])
    state = tell(state, x, y)
    # the failed row is trained on at the worst value observed, flagged, and never observed
    assert int(state.data.count) == 9 and int(state.data.mask.sum()) == 9
    assert int(state.data.observed().sum()) == 8 and np.flatnonzero(state.data.failed).tolist() == [7]
    np.testing.assert_allclose(state.data.y[7], max(y_before.max(), float(np.nanmax(np.asarray(y)))))
    assert int(state.model.head.n) == 9 and np.all(np.isfinite(np.asarray(state.model.head.weights)))
    x = jax.jit(algo.ask)(state, jax.random.key(1))
    assert np.all(np.isfinite(x)) and np.all(problem.bounds.contains(x))


def test_failed_evaluation_leaves_state_and_next_ask_finite():
    """A NaN observation (q = 1): every state leaf stays finite, the failed row is never the
    incumbent, and the next ask is finite and in the box; a NaN point is not recorded. (The
    Bayesian head on a failed row: test_batch_ask_tell_shapes_and_failed_evaluation.)"""
    algo = adaptive_basis("ols", **SMALL)
    problem, state, tell = _start(algo, n=4, capacity=8)
    x = jnp.asarray([1.0, 5.0])
    state = tell(state, x, jnp.nan)
    assert int(state.data.count) == 5 and bool(state.data.failed[4]) and bool(state.data.mask[4])
    assert all(bool(jnp.all(jnp.isfinite(a))) for a in jax.tree.leaves(state) if jnp.issubdtype(a.dtype, jnp.floating))
    post = algo.surrogate(state, state.data.u[:5])
    y_std = np.asarray(state.data.standardized()[0])
    np.testing.assert_allclose(post.incumbent, y_std[:4].min(), rtol=1e-6)
    x_next = jax.jit(algo.ask)(state, jax.random.key(9))
    assert np.all(np.isfinite(x_next)) and bool(problem.bounds.contains(x_next))
    same = tell(state, jnp.asarray([jnp.nan, 1.0]), 3.0)
    assert int(same.data.count) == 5 and int(same.model.since_train) == int(state.model.since_train)


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(batch_size=8), TypeError, "minibatch_size"),  # renamed: the SGD mini-batch, or q
    (dict(head=3), ValueError, "head"),
    (dict(hidden=(16, 2.5)), TypeError, r"hidden\[1\]"),
    (dict(hidden=(16, 0)), ValueError, r"hidden\[1\]"),
    (dict(epochs=2.5), TypeError, "epochs"),
    (dict(epochs=-1), ValueError, "epochs"),
    (dict(minibatch_size=0), ValueError, "minibatch_size"),
    (dict(minibatch_size=8.0), TypeError, "minibatch_size"),
    (dict(learning_rate="0.01"), TypeError, "learning_rate"),
    (dict(learning_rate=float("nan")), ValueError, "learning_rate"),
    (dict(learning_rate=0.0), ValueError, "learning_rate"),
    (dict(ridge="0.1"), TypeError, "ridge"),
    (dict(ridge=float("nan")), ValueError, "ridge"),
    (dict(ridge=-1.0), ValueError, "ridge"),
    (dict(evidence_iters=1.5), TypeError, "evidence_iters"),
    (dict(q=0), ValueError, "q"),
    (dict(ei_tol=-1.0), ValueError, "ei_tol"),
    (dict(ei_tol=float("nan")), ValueError, "ei_tol"),
    (dict(ei_tol="0"), TypeError, "ei_tol"),
    (dict(ei_tol=0.0, acquisition=nbo.acquisition.lcb()), ValueError, r"ei_tol=0\.0 .*acquisition= given"),
    (dict(warm_start=1), TypeError, "warm_start"),
    (dict(standardize="yes"), TypeError, "standardize"),
    (dict(optimizer="rmsprop"), ValueError, "optimizer"),
    (dict(activation=None), ValueError, "activation"),
    (dict(preset=3), ValueError, "preset"),
])
def test_factory_errors_name_the_argument(kwargs, error, match):
    with pytest.raises(error, match=match):
        adaptive_basis(**kwargs)


def test_factory_records_config_and_accepts_array_scales():
    algo = nbo.registry.get("dngo", q=2, **SMALL)
    assert (algo.name, algo.q, algo.batch_rule) == ("dngo", 2, "native")
    rebuilt = algo.config.build()
    assert (rebuilt.name, rebuilt.q, rebuilt.batch_rule) == ("dngo", 2, "native")
    assert adaptive_basis(ridge=jnp.asarray(0.3), ei_tol=np.float64(0.0)).q == 1
    with pytest.raises(ValueError, match="ridge"):
        adaptive_basis(ridge=jnp.asarray([0.1, 0.2]))


def test_factory_errors():
    with pytest.raises(ValueError, match="head"):
        adaptive_basis("gp")
    with pytest.raises(ValueError, match="preset"):
        adaptive_basis(preset="fast")
    with pytest.raises(ValueError, match="ridge"):
        adaptive_basis("bayesian", ridge=1e-3)
    with pytest.raises(ValueError, match="ridge"):
        adaptive_basis("ols", ridge=0.0)
    with pytest.raises(TypeError, match="q"):
        adaptive_basis(q=2.0)
    with pytest.raises(ValueError, match=r"acq_optimizer\.raw_samples"):
        adaptive_basis(q=8, acq_optimizer=dict(raw_samples=4))
    with pytest.raises(ValueError, match=r"acq_optimizer\.steps"):
        adaptive_basis(q=2, acq_optimizer=dict(steps=5))
    with pytest.raises(TypeError, match="acq_optimizer"):
        adaptive_basis(acq_optimizer=64)
    with pytest.raises(TypeError):
        adaptive_basis(n_candidates=64)  # the old option names are gone
    with pytest.raises(ValueError, match="retrain_every"):
        adaptive_basis(retrain_every=0)
    with pytest.raises(ValueError, match="activation"):
        adaptive_basis(activation="swish")
    with pytest.raises(TypeError, match="hidden"):
        adaptive_basis(hidden=50)
    with pytest.raises(ValueError, match="noise_dof"):
        adaptive_basis(noise_dof="mle")
    with pytest.raises(ValueError, match="local_fraction"):
        adaptive_basis(acq_optimizer=dict(local_fraction=1.0))
