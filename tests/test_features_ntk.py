"""Gradient features and NTKs (issue 2: features = per-example grad; our NTK = neural-tangents')."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from nbo_jax import features, networks, ntk
from nbo_jax._compat import neural_tangents as nt


def _points(n, d, seed=0):
    return jax.random.uniform(jax.random.key(seed), (n, d), minval=-1.0, maxval=1.0)


@pytest.mark.parametrize("depth,use_bias", [(2, False), (3, True)])
def test_features_equal_per_example_grad(x64, depth, use_bias):
    net = networks.mlp(4, 32, depth, use_bias=use_bias)
    params = net.init(jax.random.key(1))
    z = _points(7, 4)
    G = features.gradient_features(net.apply, params, z)
    assert G.shape == (7, net.num_params)
    for i in range(z.shape[0]):
        g = ravel_pytree(jax.grad(net.apply)(params, z[i]))[0]
        np.testing.assert_allclose(G[i], g, rtol=1e-12, atol=1e-12)
    # chunked evaluation gives the same matrix
    np.testing.assert_allclose(features.gradient_features(net.apply, params, z, chunk_size=3), G, rtol=1e-12)


def test_num_params_matches_paper_formula():
    # seed 000, Section 4: p = m d + m^2 (L - 2) + m
    for d, m, L in [(3, 10, 2), (5, 8, 4)]:
        net = networks.mlp(d, m, L)
        params = net.init(jax.random.key(0))
        assert ravel_pytree(params)[0].size == net.num_params == m * d + m * m * (L - 2) + m


def test_paper_initialization_statistics():
    net = networks.mlp(10, 2000, 2)
    params = net.init(jax.random.key(3))
    for leaf in jax.tree.leaves(params):
        assert abs(float(jnp.std(leaf)) - np.sqrt(1 / 2000)) < 0.03 * np.sqrt(1 / 2000)


def test_empirical_ntk_equals_neural_tangents(x64):
    net = networks.mlp(3, 64, 2)
    params = net.init(jax.random.key(2))
    z1, z2 = _points(5, 3, 1), _points(4, 3, 2)
    ours = jax.jit(lambda p: ntk.empirical_ntk(net.apply, p, z1, z2))(params)  # compiled: op by op, many programs
    apply_batched = lambda p, x: jax.vmap(net.apply, in_axes=(None, 0))(p, x)
    for impl in (nt.NtkImplementation.JACOBIAN_CONTRACTION, nt.NtkImplementation.NTK_VECTOR_PRODUCTS):
        fn = jax.jit(nt.empirical_ntk_fn(apply_batched, trace_axes=(), vmap_axes=0, implementation=impl))
        theirs = fn(z1, z2, params)
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)


def test_empirical_ntk_converges_to_analytic(x64):
    z = _points(6, 3, 5)
    exact = ntk.analytic_ntk(z, depth=2)
    assert np.all(np.linalg.eigvalsh(np.asarray(exact)) > 0)

    def mean_rel_error(m):
        net = networks.mlp(3, m, 2)
        errs = []
        for s in range(4):
            K = ntk.empirical_ntk(net.apply, net.init(jax.random.key(100 + s)), z, scale=m)
            errs.append(float(jnp.linalg.norm(K - exact) / jnp.linalg.norm(exact)))
        return np.mean(errs)

    e64, e4096 = mean_rel_error(64), mean_rel_error(4096)
    # Monte Carlo error shrinks like 1/sqrt(m): a factor 8 from 64 to 4096.
    assert e4096 < 0.06, e4096
    assert e4096 < e64 / 3, (e64, e4096)


@pytest.mark.parametrize("depth,width", [(2, 4096), (3, 2048)])
def test_analytic_ntk_with_biases_is_the_wide_network_limit(x64, depth, width):
    """lim G G^T / m of mlp(..., use_bias=True) (the bias gradients included) is
    analytic_ntk(use_bias=True): the mean of the empirical NTK over 4 initializations is
    within 3% (relative Frobenius norm; measured about 0.7%) at width 4096 (depth 2) / 2048
    (depth 3), while the bias-free kernel, the wrong model, is off by more than 20%."""
    z = _points(6, 3, 5)
    exact = ntk.analytic_ntk(z, depth=depth, use_bias=True)
    net = networks.mlp(3, width, depth, use_bias=True)
    mean = sum(ntk.empirical_ntk(net.apply, net.init(jax.random.key(200 + s)), z, scale=width)
               for s in range(4)) / 4
    rel = lambda K: float(jnp.linalg.norm(mean - K) / jnp.linalg.norm(K))  # noqa: E731
    assert rel(exact) < 0.03, rel(exact)
    assert rel(ntk.analytic_ntk(z, depth=depth, use_bias=False)) > 0.2


@pytest.mark.parametrize("depth", [2, 3, 5])
@pytest.mark.parametrize("use_bias", [False, True])
def test_relu_ntk_diagonal_is_the_analytic_diagonal(x64, depth, use_bias):
    """relu_ntk_diagonal(|z|^2) (no arccos) is the diagonal of analytic_ntk, z = 0 included
    (the depths' diagonals differ by O(1)); depth 2 with biases by hand: |z|^2 + 2."""
    z = jnp.concatenate([_points(6, 3, 8), jnp.zeros((1, 3))])
    diag = ntk.relu_ntk_diagonal(jnp.sum(z * z, axis=1), depth=depth, use_bias=use_bias)
    # rtol 1e-7: neural-tangents forms sin t as sqrt(q q' - Sigma^2), which cancels at
    # identical points (up to ~1e-8 relative, depending on XLA's code generation)
    np.testing.assert_allclose(diag, jnp.diag(ntk.analytic_ntk(z, depth=depth, use_bias=use_bias)), rtol=1e-7,
                               atol=1e-12)
    if (depth, use_bias) == (2, True):
        np.testing.assert_allclose(diag, jnp.sum(z * z, axis=1) + 2.0, rtol=1e-15)


def test_analytic_ntk_rejects_bad_arguments():
    z = _points(2, 2)
    with pytest.raises(ValueError, match="activation"):
        ntk.analytic_ntk(z, activation="swish")
    with pytest.raises(ValueError, match="depth"):
        ntk.analytic_ntk(z, depth=1)
    with pytest.raises(ValueError, match="depth"):
        ntk.relu_ntk_diagonal(jnp.ones(2), depth=1)


def test_mlp_rejects_bad_arguments():
    with pytest.raises(ValueError, match="depth"):
        networks.mlp(2, 10, 1)
    with pytest.raises(ValueError, match="width"):
        networks.mlp(2, 0, 2)
    with pytest.raises(ValueError, match="activation"):
        networks.mlp(2, 10, 2, activation="nope")


def test_analytic_ntk_without_neural_tangents_names_the_extra(monkeypatch):
    # neural-tangents is the optional extra "ntk" (issue 15): without it the error says
    # how to install it, and nothing else in the package needs it
    import importlib
    import sys

    monkeypatch.setitem(sys.modules, "neural_tangents", None)  # "not installed"
    monkeypatch.delitem(sys.modules, "nbo_jax._compat")
    with pytest.raises(ImportError, match=r"pip install 'nbo-jax\[ntk\]'"):
        ntk.analytic_ntk(jnp.ones((2, 3)))
    with pytest.raises(ImportError, match="--no-deps neural-tangents==0.6.5"):
        importlib.import_module("nbo_jax._compat")


def test_plain_install_does_not_require_neural_tangents_or_tensorflow():
    from importlib.metadata import requires

    reqs = requires("nbo-jax")
    base = [r for r in reqs if "extra ==" not in r]
    assert not [r for r in base if r.lower().startswith(("neural-tangents", "tensorflow", "tf2jax"))], base
    assert any(r.startswith("neural-tangents") and r.replace('"', "'").endswith("extra == 'ntk'") for r in reqs), reqs
