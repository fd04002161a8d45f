"""Acquisition functions: closed forms, scipy agreement, composition."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from nbo_jax import acquisition as A


def _post(n=50, seed=0):
    k1, k2 = jax.random.split(jax.random.key(seed))
    mean = jax.random.normal(k1, (n,))
    std = jnp.abs(jax.random.normal(k2, (n,))) + 0.01
    return A.SurrogatePosterior(jnp.zeros((n, 2)), mean, std, jnp.asarray(-0.3))


def test_ei_matches_scipy_and_is_nonnegative(x64):
    post = _post()
    m, s, best = map(np.asarray, (post.mean, post.std, post.incumbent))
    z = (best - m) / s
    expected = s * (z * stats.norm.cdf(z) + stats.norm.pdf(z))
    got = A.ei()(post, jax.random.key(0))
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-300)
    assert np.all(np.asarray(got) >= 0)
    # sigma = 0: EI = max(best - mean, 0) exactly
    zero = A.expected_improvement(jnp.array([-1.0, 0.5]), jnp.zeros(2), jnp.asarray(0.0))
    np.testing.assert_array_equal(zero, [1.0, 0.0])
    # far from the incumbent EI underflows to 0, never negative
    assert float(A.expected_improvement(jnp.asarray(40.0), jnp.asarray(1.0), jnp.asarray(0.0))) >= 0.0
    # EI equals E[max(best - f, 0)] by Monte Carlo
    f = m[0] + s[0] * np.random.default_rng(0).standard_normal(400_000)
    assert abs(np.mean(np.maximum(best - f, 0)) - float(got[0])) < 5e-3 * max(1.0, float(got[0]))


def test_lcb_pi_greedy_closed_forms(x64):
    post = _post()
    key = jax.random.key(0)
    np.testing.assert_allclose(A.lcb(2.0)(post, key), -(post.mean - 2.0 * post.std))
    np.testing.assert_allclose(A.ucb(2.0)(post, key), A.lcb(2.0)(post, key))
    np.testing.assert_allclose(A.greedy()(post, key), -post.mean)
    np.testing.assert_allclose(A.pi()(post, key), stats.norm.cdf((-0.3 - np.asarray(post.mean)) / np.asarray(post.std)), rtol=1e-10)
    np.testing.assert_allclose(A.log_ei()(post, key), np.log(np.maximum(np.asarray(A.ei()(post, key)), 1e-30)), rtol=1e-10)


def test_thompson_sample_distribution():
    n = 200_000
    post = A.SurrogatePosterior(jnp.zeros((n, 1)), jnp.full((n,), 1.5), jnp.full((n,), 0.4), jnp.asarray(0.0))
    draws = -np.asarray(A.thompson(nu=2.0)(post, jax.random.key(1)))
    assert abs(draws.mean() - 1.5) < 0.01
    assert abs(draws.std() - 0.8) < 0.01  # nu * sigma
    # nu may be a traced array (vmapped exploration scale)
    nus = jnp.array([0.0, 1.0])
    out = jax.vmap(lambda nu: A.thompson(nu)(post, jax.random.key(1)))(nus)
    np.testing.assert_allclose(-out[0], 1.5)


def test_weighted_sum_composes():
    post = _post()
    key = jax.random.key(3)
    combo = A.weighted_sum([(1.0, A.ei()), (0.5, A.lcb(1.0)), (2.0, A.greedy())])
    expected = A.ei()(post, key) + 0.5 * A.lcb(1.0)(post, key) + 2.0 * A.greedy()(post, key)
    np.testing.assert_allclose(combo(post, key), expected, rtol=1e-6)
    with pytest.raises(ValueError, match="terms"):
        A.weighted_sum([])
