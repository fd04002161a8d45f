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
    # one beta convention (Srinivas et al. 2010, BoTorch UCB): mean -/+ sqrt(beta) std
    np.testing.assert_allclose(A.lcb(2.0)(post, key), -(post.mean - np.sqrt(2.0) * post.std))
    np.testing.assert_allclose(A.lcb(4.0)(post, key), -(post.mean - 2.0 * post.std))
    np.testing.assert_allclose(A.lcb(0.0)(post, key), -post.mean)
    np.testing.assert_allclose(A.ucb(2.0)(post, key), A.lcb(2.0)(post, key))
    np.testing.assert_allclose(A.greedy()(post, key), -post.mean)
    np.testing.assert_allclose(A.pi()(post, key), stats.norm.cdf((-0.3 - np.asarray(post.mean)) / np.asarray(post.std)), rtol=1e-10)
    np.testing.assert_allclose(A.log_ei()(post, key), np.log(np.asarray(A.ei()(post, key))), rtol=1e-10)


def test_log_ei_is_accurate_where_ei_underflows(x64):
    """LogEI (Ament et al. 2023): log(phi(z) + z Phi(z)) against scipy where that is
    computable, the asymptote -z^2/2 - log(2 pi)/2 - 2 log|z| far out, finite gradients."""
    log_h, ei, log_ei = jax.jit(A.log_h), jax.jit(A.expected_improvement), jax.jit(A.log_expected_improvement)
    z = np.concatenate([np.linspace(-25.0, 5.0, 301), [-1.0]])
    ref = np.log(stats.norm.pdf(z) + z * stats.norm.cdf(z))
    np.testing.assert_allclose(log_h(jnp.asarray(z)), ref, rtol=1e-9)
    far = np.array([-1e3, -1e6, -1e9])
    asym = -0.5 * far ** 2 - 0.5 * np.log(2 * np.pi) - 2 * np.log(-far)
    np.testing.assert_allclose(log_h(jnp.asarray(far)), asym, rtol=1e-10)  # next term: -3 / z^2
    g = jax.jit(jax.vmap(jax.grad(A.log_h)))(jnp.asarray(np.concatenate([z, far])))
    assert np.all(np.isfinite(g)) and np.all(np.asarray(g) > 0)  # log_h increases
    # d/dz log h = Phi(z) / h(z); at z = -1 both sides of the branch switch agree
    np.testing.assert_allclose(g[-4], stats.norm.cdf(-1.0) / np.exp(ref[-1]), rtol=1e-9)
    # log EI = log std + log_h(z); plain EI underflows to 0 there, log EI still ranks
    mean, std = jnp.array([40.0, 41.0]), jnp.array([1.0, 1.0])
    assert float(ei(mean, std, jnp.asarray(0.0))[0]) == 0.0
    lei = np.asarray(log_ei(mean, std, jnp.asarray(0.0)))
    assert np.all(np.isfinite(lei)) and lei[0] > lei[1]
    # std = 0: log of the certain improvement, -inf without one
    np.testing.assert_allclose(log_ei(jnp.array([-1.0, 0.5]), jnp.zeros(2), jnp.asarray(0.0)),
                               [0.0, -np.inf])


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


def test_log_cei_is_log_of_cei_and_survives_underflow(x64):
    """log cEI = log EI + sum_k log Phi(-m_k/s_k) (BoTorch's LogConstrainedExpectedImprovement);
    far from feasibility, where float32 cEI is 0 everywhere, it still ranks the points."""
    post = _post(n=40, seed=2)
    rng = np.random.default_rng(0)
    cm, cs = rng.normal(size=(40, 2)), np.abs(rng.normal(size=(40, 2))) + 0.05
    post = post._replace(constraint_mean=jnp.asarray(cm), constraint_std=jnp.asarray(cs))
    key = jax.random.key(0)
    cei, log_cei = jax.jit(A.cei()), jax.jit(A.log_cei())
    plain = np.asarray(cei(post, key))
    logs = np.asarray(log_cei(post, key))
    assert np.all(np.isfinite(logs)) and np.any(plain == 0.0)  # EI underflows somewhere, its log does not
    np.testing.assert_allclose(logs[plain > 0], np.log(plain[plain > 0]), rtol=1e-9)
    pof = np.prod(stats.norm.cdf(-cm / cs), axis=1)
    none = post._replace(incumbent=jnp.asarray(np.inf))
    np.testing.assert_allclose(log_cei(none, key), np.log(pof), rtol=1e-9)
    far = post._replace(constraint_mean=jnp.asarray(cm + 30.0, jnp.float32),
                        constraint_std=jnp.asarray(cs * 0.5, jnp.float32), mean=post.mean.astype(jnp.float32),
                        std=post.std.astype(jnp.float32), incumbent=jnp.asarray(-0.3, jnp.float32))
    assert np.all(np.asarray(cei(far, key)) == 0.0)
    logs = np.asarray(log_cei(far, key))
    log_ei = jax.jit(A.log_expected_improvement)
    exact = (np.asarray(log_ei(post.mean, post.std, post.incumbent))  # float64, tested above
             + np.sum(stats.norm.logcdf(-(cm + 30.0) / (cs * 0.5)), axis=1))
    assert np.all(np.isfinite(logs)) and int(np.argmax(logs)) == int(np.argmax(exact))
    np.testing.assert_allclose(logs, exact, rtol=1e-4)
