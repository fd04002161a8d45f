"""NTK-PINN kernel blocks, interaction information (thesis Lemma 5.3.6) and the PINN loss
(eq. 5.1), float64."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from nbo_jax import pde, pinn
from nbo_jax.networks import ntk_mlp

pytestmark = pytest.mark.usefixtures("x64")


_features = jax.jit(pinn.pinn_features, static_argnums=(0, 2))


def _setup(seed=0, t=5, r=7, d=2, width=8, operator=pde.laplacian):
    net = ntk_mlp(d, width, 3, gamma=1.0, activation="tanh")
    params = net.init(jax.random.key(seed))
    lower, upper = jnp.zeros(d), jnp.array([2.0, 3.0])[:d]
    kx, kz = jax.random.split(jax.random.key(seed + 100))
    x = lower + jax.random.uniform(kx, (t, d)) * (upper - lower)
    z = lower + jax.random.uniform(kz, (r, d)) * (upper - lower)
    phi, omega = _features(net.apply, params, operator, lower, upper, x, z)
    return net, params, lower, upper, x, z, phi, omega


def _direct_pxp(phi, omega, l1, l2):
    """Lemma 5.3.6 as printed: p x p determinants."""
    p = phi.shape[1]
    eye = jnp.eye(p)
    a = phi.T @ phi / l1
    b = omega.T @ omega / l2
    ld = lambda m: jnp.linalg.slogdet(m)[1]  # noqa: E731
    return 0.5 * (ld(eye + a) + ld(eye + b) - ld(eye + a + b))


@pytest.mark.parametrize("l1,l2", [(1.0, 1.0), (0.1, 2.0), (5.0, 0.05)])
def test_interaction_information_equals_pxp_determinant_form(l1, l2):
    _, _, _, _, _, _, phi, omega = _setup()
    assert phi.shape == (5, ravel_pytree(ntk_mlp(2, 8, 3).init(jax.random.key(0)))[0].size)
    k_uu, k_ur, k_rr = pinn.ntk_pinn_kernel(phi, omega)
    got = pinn.interaction_information(k_uu, k_ur, k_rr, l1, l2)
    want = _direct_pxp(phi, omega, l1, l2)
    assert float(want) > 1e-3  # a non-trivial case
    np.testing.assert_allclose(float(got), float(want), rtol=1e-8)


def test_interaction_information_is_nonnegative_and_zero_without_shared_directions():
    values = []
    for seed in range(6):
        _, _, _, _, _, _, phi, omega = _setup(seed=seed, t=6, r=4)
        values.append(float(pinn.interaction_information(*pinn.ntk_pinn_kernel(phi, omega))))
    assert min(values) > 0.0
    # orthogonal feature spaces share no information: I = 0 exactly
    phi = jnp.concatenate([jax.random.normal(jax.random.key(1), (4, 3)), jnp.zeros((4, 3))], axis=1)
    omega = jnp.concatenate([jnp.zeros((5, 3)), jax.random.normal(jax.random.key(2), (5, 3))], axis=1)
    assert abs(float(pinn.interaction_information(*pinn.ntk_pinn_kernel(phi, omega)))) < 1e-12


def test_interaction_information_mask_drops_rows():
    _, _, _, _, _, _, phi, omega = _setup(t=6)
    k_uu, k_ur, k_rr = pinn.ntk_pinn_kernel(phi, omega)
    mask = jnp.array([True, False, True, True, False, True])
    got = pinn.interaction_information(k_uu, k_ur, k_rr, 0.5, 2.0, mask=mask)
    keep = np.flatnonzero(np.asarray(mask))
    want = _direct_pxp(phi[keep], omega, 0.5, 2.0)
    np.testing.assert_allclose(float(got), float(want), rtol=1e-8)


def test_information_terms_gain_and_conditional():
    _, _, _, _, _, _, phi, omega = _setup()
    k_uu, k_ur, k_rr = pinn.ntk_pinn_kernel(phi, omega)
    l1, l2 = 0.7, 1.3
    w = jax.scipy.linalg.solve_triangular(pinn.residual_factor(k_rr, l2), k_ur.T, lower=True)
    gain, cond = pinn.information_terms(k_uu, w, l1)
    np.testing.assert_allclose(float(gain), 0.5 * np.linalg.slogdet(np.eye(5) + np.asarray(k_uu) / l1)[1], rtol=1e-10)
    # conditional = 1/2 log det(I + S / l1), S the posterior covariance given the PDE data
    s = k_uu - k_ur @ np.linalg.solve(np.asarray(k_rr) + l2 * np.eye(7), np.asarray(k_ur).T)
    np.testing.assert_allclose(float(cond), 0.5 * np.linalg.slogdet(np.eye(5) + s / l1)[1], rtol=1e-8)
    assert float(cond) < float(gain)


def test_pinn_features_are_parameter_gradients_of_h_and_of_its_laplacian():
    net, params, lower, upper, x, z, phi, omega = _setup()
    flat, unravel = ravel_pytree(params)
    scale = 2.0 / (upper - lower)

    def h_box(th, xi):
        return net.apply(unravel(th), 2.0 * (xi - lower) / (upper - lower) - 1.0)

    # independent path: Laplacian as the trace of jax.hessian with the chain rule written out
    def lap(th, zi):
        zz = 2.0 * (zi - lower) / (upper - lower) - 1.0
        return jnp.sum(jnp.diag(jax.hessian(lambda q: net.apply(unravel(th), q))(zz)) * scale**2)

    # the references compiled (op by op, the Hessians are hundreds of small compilations)
    np.testing.assert_allclose(phi, jax.jit(jax.vmap(jax.grad(h_box), (None, 0)))(flat, x), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(omega, jax.jit(jax.vmap(jax.grad(lap), (None, 0)))(flat, z), rtol=1e-8, atol=1e-10)
    # finite differences of one entry of omega
    e = jnp.zeros_like(flat).at[3].set(1.0)
    lap_at = jax.jit(lap)
    fd = (lap_at(flat + 1e-6 * e, z[0]) - lap_at(flat - 1e-6 * e, z[0])) / 2e-6
    np.testing.assert_allclose(float(omega[0, 3]), float(fd), rtol=1e-5)


def test_vector_residual_gives_k_rows_per_point():
    _, _, _, _, _, _, phi, omega = _setup(r=4, operator=pde.gradient)
    assert omega.shape == (8, phi.shape[1])  # 4 points x 2 components


def test_kernel_blocks_form_a_psd_matrix():
    _, _, _, _, _, _, phi, omega = _setup()
    k_uu, k_ur, k_rr = pinn.ntk_pinn_kernel(phi, omega)
    full = jnp.block([[k_uu, k_ur], [k_ur.T, k_rr]])
    np.testing.assert_allclose(full, full.T, atol=1e-12)
    assert float(jnp.min(jnp.linalg.eigvalsh(full))) > -1e-8 * float(jnp.max(jnp.abs(full)))


def test_box_surrogate_chain_rule():
    net, params, lower, upper, *_ = _setup()
    f = pinn.box_surrogate(net.apply, params, lower, upper, offset=3.0, scale=2.0)
    x = jnp.array([0.5, 1.0])
    z = 2.0 * (x - lower) / (upper - lower) - 1.0
    np.testing.assert_allclose(float(f(x)), 3.0 + 2.0 * float(net.apply(params, z)), rtol=1e-12)
    lap_z = jnp.trace(jax.hessian(lambda q: net.apply(params, q))(z) * jnp.diag((2.0 / (upper - lower)) ** 2))
    np.testing.assert_allclose(float(pde.laplacian(f)(x)), 2.0 * float(lap_z), rtol=1e-9)


def test_pinn_loss_sum_and_weighted_forms():
    data_sq = jnp.array([1.0, 4.0, 9.0])
    mask = jnp.array([True, True, False])
    res_sq = jnp.array([[0.5], [1.5], [1.0], [1.0]])
    # eq. 5.1 as printed: the two sums (over the valid rows), per term
    np.testing.assert_allclose(float(pinn.pinn_loss(data_sq, mask, res_sq, "sum")), (1 + 4 + 4.0) / (2 + 4))
    np.testing.assert_allclose(float(pinn.pinn_loss(data_sq, mask, res_sq, 2.0)), 2.5 + 2.0 * 1.0)
    np.testing.assert_allclose(float(pinn.pinn_loss(data_sq, mask, None, 2.0)), 2.5)


def test_residual_values_shape_and_value():
    f = lambda x: jnp.sin(x[0]) * jnp.exp(x[1])  # noqa: E731  (Laplacian 0: harmonic)
    x = jnp.array([[0.3, 0.1], [1.0, -0.5]])
    r = pinn.residual_values(pde.laplacian, 0.0, f, x)
    assert r.shape == (2, 1)
    np.testing.assert_allclose(r, 0.0, atol=1e-12)
    g = pinn.residual_values(pde.gradient, lambda x: jnp.array([jnp.cos(x[0]) * jnp.exp(x[1]), 0.0]), f, x)
    np.testing.assert_allclose(g[:, 1], jnp.sin(x[:, 0]) * jnp.exp(x[:, 1]), rtol=1e-12)
    np.testing.assert_allclose(g[:, 0], 0.0, atol=1e-12)
