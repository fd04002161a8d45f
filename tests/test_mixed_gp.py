"""The GP on mixed inputs (nbo_jax.gp_model.MixedKernel): the kernel against a numpy reference
of BoTorch's formulas (``MaternKernel`` on the continuous columns, ``CategoricalKernel`` on the
categories), its positive definiteness, and the GP surrogate choosing it from the search space."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from nbo_jax import gp_model as gpm
from nbo_jax.search_space import Categorical, Continuous, Integer, search_space
from nbo_jax.surrogates.gp import mixed_kernel

SPACE = search_space([Continuous("a", 0.0, 1.0), Categorical("c", ("p", "q", "r")), Integer("k", 0, 4),
                      Categorical("b", (0, 1))])  # columns: a | c c c | k | b b


def _reference(xa, xb, ls, weight):
    """numpy: BoTorch's MaternKernel(nu=2.5) on the ordinal columns (a, k) and CategoricalKernel
    on the category indices (``exp(-mean((z != z') / l))``), mixed as CoCaBO's eq. 5."""
    r = np.sqrt((((xa[:, None, [0, 4]] - xb[None, :, [0, 4]]) / ls[:2]) ** 2).sum(-1))
    k_c = (1 + math.sqrt(5) * r + 5 / 3 * r ** 2) * np.exp(-math.sqrt(5) * r)
    za = np.stack([xa[:, 1:4].argmax(1), xa[:, 5:7].argmax(1)], 1)
    zb = np.stack([xb[:, 1:4].argmax(1), xb[:, 5:7].argmax(1)], 1)
    k_h = np.exp(-((za[:, None, :] != zb[None, :, :]) / ls[2:]).mean(-1))
    return (1 - weight) * (k_c + k_h) / 2 + weight * k_c * k_h


def test_the_layout_of_a_space_and_none_without_a_category():
    kern = mixed_kernel(SPACE, "matern52")
    assert kern == gpm.MixedKernel("matern52", (0, 4), ((1, 3), (5, 2)))
    assert kern.n_lengthscales == 4 and gpm.n_lengthscales(kern, 7) == 4 and gpm.n_lengthscales("rbf", 7) == 7
    assert mixed_kernel(search_space([Continuous("a", 0.0, 1.0), Integer("k", 0, 4)]), "matern52") is None
    assert mixed_kernel(SPACE, gpm.NTKKernel()) is None and mixed_kernel(None, "matern52") is None
    np.testing.assert_array_equal(kern.column_lengthscales(jnp.array([1.0, 2.0, 3.0, 4.0]), 7),
                                  [1.0, 3.0, 3.0, 3.0, 2.0, 4.0, 4.0])


@pytest.mark.parametrize("weight", [0.0, 0.5, 1.0])
def test_the_kernel_is_botorchs_formulas_mixed_and_positive_definite(weight, x64):
    rng = np.random.default_rng(0)
    u = SPACE.round(jnp.asarray(rng.uniform(size=(40, SPACE.unit_dim))))
    ls = np.array([0.3, 0.7, 0.5, 2.0])
    kern = gpm.MixedKernel("matern52", (0, 4), ((1, 3), (5, 2)), weight)
    params = gpm.GPParams(jnp.log(jnp.asarray(ls)), jnp.log(2.0), jnp.log(1e-3))
    K = np.asarray(gpm.kernel_matrix(kern, params, u, u[:7]))
    np.testing.assert_allclose(K, 2.0 * _reference(np.asarray(u), np.asarray(u[:7]), ls, weight), rtol=1e-12)
    G = np.asarray(gpm.gram(kern, params, u))
    np.testing.assert_allclose(np.diag(G), 2.0, rtol=1e-12)  # k(u, u) = 1 on encodings
    assert np.linalg.eigvalsh(G).min() > -1e-10


def test_bad_mixed_kernels_are_refused():
    with pytest.raises(ValueError, match="base must be one of"):
        gpm.MixedKernel("ntk", (0,), ())
    with pytest.raises(ValueError, match="weight must be in"):
        gpm.MixedKernel("rbf", (0,), ((1, 2),), 1.5)
    with pytest.raises(ValueError, match="needs a continuous column or a categorical block"):
        gpm.MixedKernel("rbf")


def test_the_gp_surrogate_uses_the_mixed_kernel_on_a_space_with_a_category(x64):
    """The GP of gp_bo on mixed data: one lengthscale per continuous column and per category
    (4, not 7), per-column lengthscales in the posterior, and a posterior that tells the
    categories apart (the objective depends on the category only)."""
    from nbo_jax.dataset import Dataset
    from nbo_jax.surrogates import gp
    from nbo_jax.surrogates.gp import GPFit

    fit = GPFit("matern52", gpm.ParamBounds(), "botorch", "lbfgs", 2, 50, 0.05, None, True)
    surrogate = gp(fit)
    rng = np.random.default_rng(1)
    # compiled (op by op: hundreds of small compilations)
    u = jax.jit(SPACE.round)(jnp.asarray(rng.uniform(size=(24, SPACE.unit_dim))))
    y = jnp.asarray([0.0, 1.0, 2.0])[jnp.argmax(u[:, 1:4], axis=1)]  # the category "c" alone
    data = jax.jit(lambda u, y: Dataset.empty(24, SPACE.unit_dim, jnp.float64, space=SPACE).add_batch(u, y))(u, y)
    state = jax.jit(lambda k: surrogate.init(k, data, None))(jax.random.key(0))
    assert state.kernel == mixed_kernel(SPACE, "matern52") and state.params.log_lengthscale.shape == (4,)
    post = jax.jit(surrogate.posterior)(state, u[:5])
    assert post.lengthscales.shape == (7,)
    np.testing.assert_allclose(np.asarray(post.mean), np.asarray(y[:5]), atol=0.05)
