"""Posterior modes (SPEC.md section 1): full (Sherman-Morrison) == direct solve == dual."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from nbo_jax import features, networks
from nbo_jax import posterior as P

LAM, N_UPDATES = 0.01, 200


def _features(dtype_seed=0, n=N_UPDATES, n_cand=64):
    net = networks.mlp(4, 64, 2)
    params = net.init(jax.random.key(dtype_seed))
    z = jax.random.uniform(jax.random.key(1), (n + n_cand, 4), minval=-1, maxval=1)
    G = features.gradient_features(net.apply, params, z)
    return G[:n], G[n:], float(net.width)


def _run(mode, G, mask, m):
    state = P.init(mode, G.shape[1], G.shape[0], LAM, G.dtype)
    update = jax.jit(P.update, static_argnums=())
    for i in range(G.shape[0]):
        state = update(state, G[i], jnp.asarray(i), mask[i], LAM, m)
    return state


def _mask(n):
    return jnp.ones(n, bool).at[jnp.array([17, 101])].set(False)  # two masked (NaN) rows


def test_full_dual_direct_agree_float64(x64):
    G, Gc, m = _features()
    mask = _mask(G.shape[0])
    direct = P.direct_variance(G, mask, Gc, LAM, m)
    full = P.variance(_run("full", G, mask, m), Gc, LAM, m)
    dual = P.variance(_run("dual", G, mask, m), Gc, LAM, m)
    np.testing.assert_allclose(full, direct, rtol=1e-8)
    np.testing.assert_allclose(dual, direct, rtol=1e-8)
    # the rebuilt states (a direct factorization) agree too
    np.testing.assert_allclose(P.variance(P.rebuild(P.init("full", G.shape[1], 1, LAM), G, mask, LAM, m), Gc, LAM, m), direct, rtol=1e-8)
    # masked rows have no effect: same as dropping them
    keep = np.asarray(mask)
    np.testing.assert_allclose(P.direct_variance(G[keep], jnp.ones(int(keep.sum()), bool), Gc, LAM, m), direct, rtol=1e-10)


def test_float32_drift_is_bounded():
    """Sherman-Morrison in float32 drifts; measured drift after 200 updates must stay small.

    Reference: float64 direct solve on the same (float32) features."""
    G, Gc, m = _features()
    mask = _mask(G.shape[0])
    G64, Gc64 = np.asarray(G, np.float64), np.asarray(Gc, np.float64)
    U = LAM * np.eye(G.shape[1]) + (G64 * np.asarray(mask)[:, None]).T @ (G64 * np.asarray(mask)[:, None]) / m
    ref = LAM * np.sum(Gc64 * np.linalg.solve(U, Gc64.T).T, axis=1) / m
    full = np.asarray(P.variance(_run("full", G, mask, m), Gc, LAM, m), np.float64)
    dual = np.asarray(P.variance(_run("dual", G, mask, m), Gc, LAM, m), np.float64)
    drift_full = np.max(np.abs(full - ref) / ref)
    drift_dual = np.max(np.abs(dual - ref) / ref)
    print(f"float32 relative drift after {N_UPDATES} updates: full {drift_full:.2e}, dual {drift_dual:.2e}")
    assert drift_full < 5e-2 and drift_dual < 5e-2
    # the posterior stays a variance: positive and below the prior variance k(x, x)
    prior = np.sum(Gc64 * Gc64, axis=1) / m
    assert np.all(full >= 0) and np.all(full <= prior * (1 + 1e-4))


def test_diagonal_is_the_diagonal_approximation(x64):
    G, Gc, m = _features(n=30)
    mask = jnp.ones(30, bool)
    state = _run("diagonal", G, mask, m)
    U_diag = LAM + np.sum(np.asarray(G) ** 2, axis=0) / m
    np.testing.assert_allclose(state.U, U_diag, rtol=1e-12)
    np.testing.assert_allclose(P.variance(state, Gc, LAM, m), LAM * np.sum(np.asarray(Gc) ** 2 / U_diag, axis=1) / m, rtol=1e-12)


def test_prior_variance_is_kernel_diagonal(x64):
    G, Gc, m = _features(n=5)
    for mode in P.MODES:
        state = P.init(mode, G.shape[1], 5, LAM)
        np.testing.assert_allclose(P.variance(state, Gc, LAM, m), np.sum(np.asarray(Gc) ** 2, axis=1) / m, rtol=1e-12)


def test_choose_mode_and_errors():
    assert P.choose_mode(5500, 210) == "dual"       # t < p: the Gram matrix is smaller
    assert P.choose_mode(100, 5000) == "full"       # t >> p: U is smaller
    assert P.choose_mode(50_500, 100_000) == "dual"  # U would need 10 GB
    with pytest.raises(ValueError, match="posterior mode"):
        P.init("svd", 3, 3, 0.1)
    with pytest.raises(ValueError, match="lam"):
        P.init("full", 3, 3, 0.0)


# ---------------------------------------------------------------- pathwise samples, scales
def _small_state(mode, seed=0, cap=9, p=6, m=3.0, lam=0.3):
    G = jax.random.normal(jax.random.key(seed), (cap, p))
    mask = jnp.ones(cap, bool).at[jnp.array([2, 7])].set(False)
    state = P.init(mode, p, cap, lam, G.dtype)
    for i in range(cap - 1):  # the last row stays unused
        state = P.update(state, G[i], jnp.asarray(i), mask[i], lam, m)
    return state, G, mask.at[cap - 1].set(False), m, lam


@pytest.mark.parametrize("mode", ["full", "dual", "diagonal"])
def test_pathwise_sample_has_the_posterior_mean_and_covariance(x64, mode):
    """g(x)^T delta / sqrt(m) over 100,000 draws of delta: mean 0 and covariance equal to the
    posterior covariance lam g^T U^{-1} g' / m (diagonal: its own diagonal-U posterior)."""
    state, G, mask, m, lam = _small_state(mode)
    Gc = jax.random.normal(jax.random.key(9), (4, G.shape[1]))
    Gm = jnp.where(mask[:, None], G, 0.0)
    if mode == "diagonal":
        U = jnp.diag(lam + jnp.sum(Gm * Gm, axis=0) / m)
    else:
        U = lam * jnp.eye(G.shape[1]) + Gm.T @ Gm / m
    cov = lam * Gc @ jnp.linalg.solve(U, Gc.T) / m
    np.testing.assert_allclose(jnp.diag(cov), P.variance(state, Gc, lam, m), rtol=1e-10)
    keys = jax.random.split(jax.random.key(3), 100_000)
    F = np.asarray(jax.vmap(lambda k: P.sample_weights(state, k, lam, m))(keys) @ Gc.T) / np.sqrt(m)
    scale = float(jnp.max(jnp.diag(cov)))
    # 100,000 draws: Monte Carlo error of a (co)variance about 4.5e-3 relative, of a mean 3e-3 std
    assert np.max(np.abs(F.mean(axis=0))) < 0.02 * np.sqrt(scale)
    np.testing.assert_allclose(np.cov(F.T), cov, atol=0.03 * scale)


def test_full_and_dual_samples_agree_in_distribution(x64):
    """Same seed, same draws e1, e2: the full (N(0, U) trick) and dual (Matheron) constructions
    are different linear maps of the noise, but both have covariance lam U^{-1}: compare the
    sample covariances of delta itself."""
    covs = []
    for mode in ("full", "dual"):
        state, G, mask, m, lam = _small_state(mode, seed=4)
        keys = jax.random.split(jax.random.key(5), 100_000)
        D = np.asarray(jax.vmap(lambda k: P.sample_weights(state, k, lam, m))(keys))
        covs.append(np.cov(D.T))
    Gm = jnp.where(mask[:, None], G, 0.0)
    exact = lam * np.linalg.inv(lam * np.eye(G.shape[1]) + Gm.T @ Gm / m)
    for c in covs:
        np.testing.assert_allclose(c, exact, atol=0.03 * np.max(np.abs(exact)))


def test_marginal_likelihood_is_the_multivariate_normal_density(x64):
    from scipy.stats import multivariate_normal

    _, G, mask, m, lam = _small_state("dual")
    r = jax.random.normal(jax.random.key(1), (G.shape[0],)).at[2].set(jnp.nan)  # masked rows ignored
    v = np.asarray(mask)
    Gv = np.asarray(G)[v]
    K = 1.7 * (Gv @ Gv.T / m + lam * np.eye(v.sum()))
    want = multivariate_normal(np.zeros(v.sum()), K).logpdf(np.asarray(r)[v])
    np.testing.assert_allclose(P.log_marginal_likelihood(G, mask, r, lam, 1.7, m), want, rtol=1e-12)


def test_fit_scales_maximizes_the_marginal_likelihood(x64):
    """The eigendecomposition form equals the direct density at the returned (lam, s^2), and no
    grid point or perturbed s^2 does better; targets drawn from the model recover its scales."""
    cap, p, m = 60, 20, 10.0  # p < n: the null space of G G^T identifies the noise
    G = jax.random.normal(jax.random.key(0), (cap, p))
    mask = jnp.ones(cap, bool).at[jnp.arange(50, 60)].set(False)
    true_lam, true_s2 = 0.05, 4.0
    Gv = G[:50]
    K = true_s2 * (Gv @ Gv.T / m + true_lam * jnp.eye(50))
    r = jnp.zeros(cap).at[:50].set(jnp.linalg.cholesky(K) @ jax.random.normal(jax.random.key(1), (50,)))
    lam, s2, lml = P.fit_scales(G, mask, r, m)
    np.testing.assert_allclose(lml, P.log_marginal_likelihood(G, mask, r, lam, s2, m), rtol=1e-10)
    for lam2, s22 in [(lam * 1.5, s2), (lam / 1.5, s2), (lam, s2 * 1.2), (lam, s2 / 1.2)]:
        assert float(P.log_marginal_likelihood(G, mask, r, lam2, s22, m)) < float(lml)
    assert 0.2 * true_s2 < float(s2) < 5 * true_s2 and 0.01 < float(lam) < 0.5
    empty = P.fit_scales(G, jnp.zeros(cap, bool), r, m)
    assert float(empty[2]) == 0.0 and np.isfinite(float(empty[0]))


def test_solve_lower_and_cho_solve_lower_equal_scipy(x64):
    """The triangular solves that read ``L`` as ``L^T`` transposed (no column-major copy) give
    scipy's ``L^{-1} b`` and ``(L L^T)^{-1} b``, for a vector and a matrix, alone and vmapped."""
    import scipy.linalg

    rng = np.random.default_rng(0)
    A = rng.normal(size=(3, 7, 7))
    K = A @ np.swapaxes(A, 1, 2) + 7 * np.eye(7)
    L = np.linalg.cholesky(K)
    b, B = rng.normal(size=(3, 7)), rng.normal(size=(3, 7, 4))
    for i in range(3):
        for rhs in (b[i], B[i]):
            np.testing.assert_allclose(P.solve_lower(jnp.asarray(L[i]), jnp.asarray(rhs)),
                                       scipy.linalg.solve_triangular(L[i], rhs, lower=True), rtol=1e-12)
            np.testing.assert_allclose(P.cho_solve_lower(jnp.asarray(L[i]), jnp.asarray(rhs)),
                                       np.linalg.solve(K[i], rhs), rtol=1e-10)
    np.testing.assert_allclose(jax.vmap(P.cho_solve_lower)(jnp.asarray(L), jnp.asarray(B)),
                               np.linalg.solve(K, B), rtol=1e-10)
