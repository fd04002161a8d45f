"""Box-constrained L-BFGS (nbo_jax.lbfgsb) against scipy's L-BFGS-B."""

import jax
import jax.numpy as jnp
import numpy as np
from scipy.optimize import minimize

from nbo_jax.lbfgsb import minimize_lbfgsb


def _scipy(f, x0, lo, hi):
    vg = jax.jit(jax.value_and_grad(f))
    res = minimize(lambda x: tuple(np.asarray(a, dtype=float) for a in vg(jnp.asarray(x))), np.asarray(x0), jac=True,
                   method="L-BFGS-B", bounds=list(zip(lo, hi)))
    return res.fun


def test_minima_equal_scipy_lbfgsb_inside_and_on_the_box(x64):
    """Three problems with minima inside the box, on its faces (a convex one), and the Rosenbrock valley
    clipped by the box: every row reaches scipy's minimum from the same start (1e-8), the
    iterates stay in the box, and a row's answer does not depend on the other rows or on an
    outer vmap (float64: bit for bit)."""
    n = 6
    c = jnp.linspace(-0.5, 1.5, n)
    w = jnp.linspace(1.0, 10.0, n)
    quad = lambda x: jnp.sum(w * (x - c) ** 2) + 0.1 * jnp.sum(jnp.cos(3 * x))
    rosen = lambda x: jnp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    x0 = jax.random.uniform(jax.random.key(0), (5, n))
    for f, lo, hi, starts in [(quad, 0.0, 1.0, x0), (rosen, -2.0, 0.5, 2 * x0 - 2), (rosen, -2.0, 2.0, 4 * x0 - 2)]:
        res = jax.jit(lambda X: minimize_lbfgsb(jax.vmap(f), X, lo, hi, max_iter=500))(starts)
        assert np.all(np.asarray(res.x) >= lo) and np.all(np.asarray(res.x) <= hi)
        assert bool(jnp.all(res.converged))
        for i in range(starts.shape[0]):
            ref = _scipy(f, starts[i], [lo] * n, [hi] * n)
            assert float(res.value[i]) <= ref + 1e-8, (i, float(res.value[i]), ref)
        alone = jax.jit(lambda X: minimize_lbfgsb(jax.vmap(f), X, lo, hi, max_iter=500))(starts[:1])
        batched = jax.jit(jax.vmap(lambda X: minimize_lbfgsb(jax.vmap(f), X, lo, hi, max_iter=500)))(
            jnp.stack([starts, starts[::-1]]))
        np.testing.assert_array_equal(alone.x[0], res.x[0])
        np.testing.assert_array_equal(batched.x[0], res.x)


def test_fixed_coordinates_nonfinite_values_and_budget(x64):
    """lower == upper fixes a coordinate; a NaN region is never entered; a non-finite start
    stays where it is, unconverged; max_iter = 0 returns the clipped starts."""
    f = lambda x: jnp.where(x[0] > 0.6, jnp.nan, jnp.sum((x - 0.9) ** 2))
    x0 = jnp.array([[0.1, 0.2], [0.5, 0.5], [0.8, 0.1]])
    res = minimize_lbfgsb(jax.vmap(f), x0, jnp.array([0.0, 0.3]), jnp.array([1.0, 0.3]))
    assert np.all(np.asarray(res.x[:, 1]) == 0.3)
    assert np.all(np.asarray(res.x[:2, 0]) <= 0.6) and float(res.x[0, 0]) > 0.5
    np.testing.assert_array_equal(res.x[2], [0.8, 0.3])
    assert not bool(res.converged[2]) and res.value[2] == jnp.inf
    none = minimize_lbfgsb(jax.vmap(f), x0 + 1.0, 0.0, 1.0, max_iter=0)
    np.testing.assert_array_equal(none.x, jnp.clip(x0 + 1.0, 0.0, 1.0))


def _counting(fun, calls):
    """``fun`` that appends 1 to ``calls`` per batched evaluation (a host callback)."""
    def counted(X):
        jax.debug.callback(lambda v: calls.append(1), X[0, 0])
        return fun(X)
    return counted


def test_line_search_interpolates_instead_of_halving(x64):
    """A first step 100 times too long: from ``x = 1`` on ``(x - 0.99)^2`` the quadratic through
    f, its slope and each failed trial shrinks the step by its largest allowed factor (alpha 1
    -> 1/16), then by 1/8 (its minimizer's nearest power of two), and the Armijo step is
    accepted at the third trial (x = 1 - 1/128), where halving alone needed seven."""
    calls = []
    f = _counting(lambda X: jnp.sum((X - 0.99) ** 2, axis=-1), calls)
    res = minimize_lbfgsb(f, jnp.array([[1.0]]), -10.0, 10.0, max_iter=1)
    jax.effects_barrier()
    assert int(res.iterations[0]) == 1
    np.testing.assert_allclose(res.x[0, 0], 1.0 - 1.0 / 128, atol=1e-15)
    assert len(calls) == 1 + 3  # the start, then trials at alpha = 1, 1/16, 1/128


def test_float32_gp_fit_reaches_scipys_float64_optimum(monkeypatch):
    """A float32 GP marginal-likelihood fit (100 noisy points, 6 inputs, BoTorch's priors, the
    GP fit's call): it ends converged (a tolerance stops it, not a failed line search) at the
    optimum of scipy's L-BFGS-B on the same objective in float64, within 0.05 nats."""
    from jax.flatten_util import ravel_pytree

    from nbo_jax import gp_model as gpm

    results = []

    def spy(fun, x0, lower, upper, **kw):
        res = minimize_lbfgsb(fun, x0, lower, upper, **kw)
        results.append(res)
        return res

    monkeypatch.setattr(gpm, "minimize_lbfgsb", spy)
    rng = np.random.default_rng(0)
    u = rng.random((100, 6))
    y = np.sin(3 * u[:, 0]) + u[:, 1] ** 2 + 0.5 * u[:, 2] * u[:, 3] - u[:, 5] + 0.1 * rng.standard_normal(100)
    y = (y - y.mean()) / y.std()
    prior = gpm.botorch_prior(6)
    bounds = gpm.ParamBounds()
    start = gpm.prior_mode(6, prior, bounds, jnp.float32)
    mask = jnp.ones(100, bool)
    _, value = gpm.fit("rbf", jax.tree.map(lambda a: a[None], start), jnp.asarray(u, jnp.float32),
                       jnp.asarray(y, jnp.float32), mask, steps=200, bounds=bounds, prior=prior, optimizer="lbfgs",
                       jitter=1e-6)
    (res,) = results
    assert bool(res.converged[0])
    # scipy's L-BFGS-B on the float64 objective from the same start
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        start64 = jax.tree.map(lambda a: jnp.asarray(a, jnp.float64), start)
        x0, unravel = ravel_pytree(start64)
        lo, hi = (np.asarray(ravel_pytree(t)[0]) for t in gpm._log_box(bounds, start64, False))  # constant fixed
        objective = jax.jit(jax.value_and_grad(lambda x: -gpm.map_objective("rbf", unravel(x), jnp.asarray(u),
                                                                             jnp.asarray(y), mask, prior, 1e-6)))
        ref = minimize(lambda x: tuple(np.asarray(a, float) for a in objective(jnp.asarray(x))), np.asarray(x0),
                       jac=True, method="L-BFGS-B", bounds=list(zip(lo, hi)))
    finally:
        jax.config.update("jax_enable_x64", previous)
    assert abs(float(value) - (-ref.fun)) <= 0.05, (float(value), -ref.fun)
