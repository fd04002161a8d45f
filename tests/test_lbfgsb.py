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
