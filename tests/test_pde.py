"""nbo_jax.pde: residual operators against analytic derivatives (float64)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from nbo_jax import pde
from nbo_jax.networks import mlp

pytestmark = pytest.mark.usefixtures("x64")

X = np.random.default_rng(0).uniform(-1.5, 1.5, size=(7, 3))


def poly(x):  # u = x0^3 x1 + 2 x1^2 x2 - x2^4 + x0
    return x[0] ** 3 * x[1] + 2 * x[1] ** 2 * x[2] - x[2] ** 4 + x[0]


def poly_grad(x):
    return np.array([3 * x[0] ** 2 * x[1] + 1, x[0] ** 3 + 4 * x[1] * x[2], 2 * x[1] ** 2 - 4 * x[2] ** 3])


def poly_hess(x):
    return np.array([[6 * x[0] * x[1], 3 * x[0] ** 2, 0.0],
                     [3 * x[0] ** 2, 4 * x[2], 4 * x[1]],
                     [0.0, 4 * x[1], -12 * x[2] ** 2]])


def trig(x):  # u = sin(x0) cos(2 x1) + exp(x2 / 2)
    return jnp.sin(x[0]) * jnp.cos(2 * x[1]) + jnp.exp(x[2] / 2)


def trig_lap(x):
    return -np.sin(x[0]) * np.cos(2 * x[1]) - 4 * np.sin(x[0]) * np.cos(2 * x[1]) + 0.25 * np.exp(x[2] / 2)


def _each(fn):
    return np.stack([np.asarray(fn(jnp.asarray(x))) for x in X])


def test_gradient_hessian_laplacian_on_polynomial_and_trig():
    np.testing.assert_allclose(_each(pde.gradient(poly)), np.stack([poly_grad(x) for x in X]), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(_each(pde.hessian(poly)), np.stack([poly_hess(x) for x in X]), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(_each(pde.laplacian(poly)), [np.trace(poly_hess(x)) for x in X], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(_each(pde.laplacian(trig)), [trig_lap(x) for x in X], rtol=1e-8, atol=1e-10)
    # the laplacian equals the trace of jax.hessian
    np.testing.assert_allclose(_each(pde.laplacian(trig)), [np.trace(jax.hessian(trig)(jnp.asarray(x))) for x in X],
                               rtol=1e-10)


def test_partial_derivatives_of_each_order():
    for xn in X:
        x = jnp.asarray(xn)
        x0, x1 = float(xn[0]), float(xn[1])
        assert float(pde.partial(poly, 0)(x)) == pytest.approx(3 * x0 ** 2 * x1 + 1, rel=1e-10)
        assert float(pde.partial(poly, 0, 2)(x)) == pytest.approx(6 * x0 * x1, rel=1e-10, abs=1e-12)
        assert float(pde.partial(poly, 0, 3)(x)) == pytest.approx(6 * x1, rel=1e-10, abs=1e-12)
        assert float(pde.partial(poly, 2, 4)(x)) == pytest.approx(-24.0, rel=1e-10)
        assert float(pde.partial(trig, 1, 2)(x)) == pytest.approx(-4 * np.sin(x0) * np.cos(2 * x1), rel=1e-8, abs=1e-12)
        # mixed partial by composition
        assert float(pde.partial(pde.partial(poly, 0), 1)(x)) == pytest.approx(3 * x0 ** 2, rel=1e-10)


def test_directional_and_divergence():
    v = lambda x: jnp.array([x[1], -x[0], 2.0 * x[2]])
    for x in X:
        xj = jnp.asarray(x)
        assert float(pde.directional(poly, v)(xj)) == pytest.approx(float(v(xj) @ poly_grad(x)), rel=1e-10)
        const = jnp.array([1.0, 2.0, 3.0])
        assert float(pde.directional(trig, const)(xj)) == pytest.approx(
            float(const @ jax.grad(trig)(xj)), rel=1e-10)
        # div(grad u) = laplacian u
        assert float(pde.divergence(pde.gradient(trig))(xj)) == pytest.approx(trig_lap(x), rel=1e-8)
        # div of (x1 x2, x0^2 x2, x2^3) = 0 + 0 + 3 x2^2
        w = lambda y: jnp.array([y[1] * y[2], y[0] ** 2 * y[2], y[2] ** 3])
        assert float(pde.divergence(w)(xj)) == pytest.approx(3 * x[2] ** 2, rel=1e-10)


def test_field_arithmetic_one_liners():
    x1, x2 = pde.coordinate(0), pde.coordinate(1)
    rotation = lambda u: x1 * pde.partial(u, 1) - x2 * pde.partial(u, 0)
    radial = lambda x: jnp.cos(x[0] ** 2 + x[1] ** 2)
    for x in X:
        xj = jnp.asarray(x[:2])
        assert abs(float(rotation(radial)(xj))) < 1e-12  # Drop-Wave's PDE holds for radial functions
        u = lambda y: y[0] ** 2 * y[1]
        # x0 * x0^2 - x1 * 2 x0 x1
        assert float(rotation(u)(xj)) == pytest.approx(x[0] ** 3 - 2 * x[0] * x[1] ** 2, rel=1e-10)
    # (EI(x) w'')'' with EI = exp(x), w = x^4: 12 exp(x) (x^2 + 4x + 2)
    EI = pde.Field(lambda x: jnp.exp(x[0]))
    beam = lambda w: pde.partial(EI * pde.partial(w, 0, 2), 0, 2)
    for t in (-0.7, 0.1, 1.3):
        got = float(beam(lambda y: y[0] ** 4)(jnp.array([t])))
        assert got == pytest.approx(12 * np.exp(t) * (t * t + 4 * t + 2), rel=1e-10)
    # constants, reversed operands, powers, negation, division
    f = 2.0 - (x1 ** 2) / (1.0 + x2) + (-x1) * 3.0
    x = jnp.array([0.5, 0.25])
    assert float(f(x)) == pytest.approx(2.0 - 0.25 / 1.25 - 1.5)
    res = pde.residual(lambda u: pde.laplacian(u), lambda x: 4.0)
    assert float(res(lambda y: y[0] ** 2 + y[1] ** 2)(x)) == pytest.approx(0.0, abs=1e-12)


def test_operators_jit_vmap_and_parameter_gradients_match_finite_differences():
    net = mlp(2, 16, 3, activation="tanh", use_bias=True)
    params = net.init(jax.random.key(0))
    flat, unravel = ravel_pytree(params)
    x1, x2 = pde.coordinate(0), pde.coordinate(1)
    operator = lambda u: pde.laplacian(u) + x1 * pde.partial(u, 1) - x2 ** 2 * pde.partial(u, 0, 2)
    z = jnp.asarray(np.random.default_rng(1).uniform(-1, 1, size=(5, 2)))

    def loss(theta):
        h = lambda x: net.apply(unravel(theta), x)
        r = jax.vmap(operator(h))(z)
        return jnp.sum((r - 0.3) ** 2)

    g = jax.jit(jax.grad(loss))(flat)
    rng = np.random.default_rng(2)
    for idx in rng.choice(flat.size, 6, replace=False):
        e = jnp.zeros_like(flat).at[idx].set(1.0)
        eps = 1e-6
        fd = (loss(flat + eps * e) - loss(flat - eps * e)) / (2 * eps)
        assert float(g[idx]) == pytest.approx(float(fd), rel=1e-5, abs=1e-8)


def test_errors():
    with pytest.raises(TypeError, match="u must be a function"):
        pde.laplacian(3.0)
    with pytest.raises(ValueError, match="order"):
        pde.partial(poly, 0, 0)
    with pytest.raises(ValueError, match="i must be"):
        pde.coordinate(-1)
    with pytest.raises(TypeError, match="expected a Field"):
        pde.coordinate(0) + "a"


def test_corrected_pdes_of_the_synthetic_functions_hold():
    """SPEC.md section 5 (App. C.1.1, corrected): each PDE, written with these operators, holds
    for the library's objective at random points (relative residual < 1e-6)."""
    from nbo_jax.benchmarks import synthetic as syn

    rng = np.random.default_rng(3)

    def check(f, operator, source, d, lo, hi):
        lhs, r = pde.Field(operator(f)), pde.residual(operator, source)(f)
        for x in rng.uniform(lo, hi, size=(20, d)):
            x = jnp.asarray(x)
            rel = np.max(np.abs(np.asarray(r(x)))) / (1.0 + np.max(np.abs(np.asarray(lhs(x)))))
            assert rel < 1e-6, (f.__name__, rel)

    x1, x2 = pde.coordinate(0), pde.coordinate(1)
    check(syn.drop_wave, lambda u: x1 * pde.partial(u, 1) - x2 * pde.partial(u, 0), 0.0, 2, -5.12, 5.12)
    d = 10
    check(syn.styblinski_tang, lambda u: pde.directional(u, jnp.ones(d)),
          lambda x: jnp.sum(2 * x**3 - 16 * x + 2.5), d, -5, 5)
    d = 20
    check(syn.rastrigin, lambda u: 0.5 * pde.directional(u, lambda x: x) - u,
          lambda x: 10 * jnp.sum(jnp.cos(2 * jnp.pi * x) + jnp.pi * x * jnp.sin(2 * jnp.pi * x) - 1), d, -5.12, 5.12)
    d, m = 30, 10
    i = jnp.arange(1, d + 1)
    h = lambda x: 1.0 / (1.0 / jnp.tan(x) + (4 * m * i * x / jnp.pi) / jnp.tan(i * x**2 / jnp.pi))
    check(syn.michalewicz, lambda u: pde.directional(u, h) - u, 0.0, d, 0.1, 3.0)
    # Cosine Mixture as minimized here, f = -0.1 sum cos(5 pi x) + sum x^2: per coordinate
    # df/dx_i - 2 x_i - 0.5 pi sin(5 pi x_i) = 0 (SPEC prints the +0.1 form, whose sign flips)
    d = 50
    check(syn.cosine_mixture, lambda u: pde.gradient(u), lambda x: 2 * x + 0.5 * jnp.pi * jnp.sin(5 * jnp.pi * x),
          d, -1, 1)


def test_partial_along_a_missing_coordinate_is_an_error():
    f = pde.partial(lambda x: jnp.sum(x**2), 3)
    with pytest.raises(ValueError, match="x_3 of a function of d=2"):
        f(jnp.ones(2))
