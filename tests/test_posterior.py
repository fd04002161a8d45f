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
