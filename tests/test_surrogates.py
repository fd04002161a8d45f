"""One table of every surrogate (:mod:`nbo_jax.surrogates`) feeding shared tests, as the
contract table does for the algorithms: posterior shapes, rows outside the mask never fitted,
``vmap`` over seeds, pathwise draws; then the seam's promises: an acquisition is a function
of the posterior (a callable gives the run of the same named acquisition), a posterior that
lacks what an acquisition reads is refused by name, and the two neural surrogates' posteriors
against their formulas."""

import importlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import nbo_jax as nbo
from nbo_jax import gp_model as gpm
from nbo_jax.algorithms.surrogate_bo import surrogate_names
from nbo_jax.base import Surrogate
from nbo_jax.bo import bo_algorithm
from nbo_jax.dataset import Dataset
from nbo_jax.optimize import acq_optimizer
import optax

from nbo_jax import pde
from nbo_jax.networks import ACTIVATIONS, network_builder, ntk_mlp
from nbo_jax.surrogates import (GPFit, adaptive_basis, gp, gp_columns, independent, neural_linear, pinn, random_forest,
                                sample_then_optimize, zero_init_columns)
from nbo_jax.surrogates.random_forest import ForestSettings
from nbo_jax.training import TrainConfig, make_optimizer
from nbo_jax.surrogates.vbll import chol_factor

_FIT = GPFit("rbf", gpm.ParamBounds((2.5e-2, 1e3), (1.0, 1.0), (1e-4, 1.0)), "botorch", "lbfgs", 2, 10, 0.05, None,
             True)


def _small(name, **options):
    module = importlib.import_module(f"nbo_jax.surrogates.{name}")
    build, defaults = module.from_options, module.DEFAULTS
    small = dict(ensemble=dict(members=3, width=8, epochs=20, learning_rate=1e-2), vbll=dict(width=8, steps=5, init_steps=20))[name]
    return build(**{**defaults, **small, **options})


TABLE = {
    "gp": lambda: gp(_FIT),
    "gp_columns": lambda: gp_columns(_FIT),
    "independent": lambda: independent(gp(_FIT)),
    "ensemble": lambda: _small("ensemble"),
    "vbll": lambda: _small("vbll"),
    "adaptive_basis": lambda: adaptive_basis(hidden=(8, 8), activation=ACTIVATIONS["tanh"], head="bayesian",
                                             train=TrainConfig(20, 8, make_optimizer("adam", 1e-2), 0.0),
                                             retrain_every=1, evidence_iters=5),
    "neural_linear": lambda: neural_linear(network_builder(16, 2, "relu", use_bias=True), width=16, lam=0.01,
                                           train=TrainConfig(20, 8, make_optimizer("adam", 1e-2), 0.16),
                                           warm_start=True, feature_params="initial", fit_scales=True),
    "random_forest": lambda: random_forest(ForestSettings(n_estimators=10)),
    "pinn": lambda: pinn(network_builder(16, 3, "tanh", build=ntk_mlp, gamma=1.0), pde.laplacian,
                         optimizer=optax.adam(1e-2), n_residual=16, residual_batch=8, epochs=20,
                         init_epochs=50, info_points=8),
    "sample_then_optimize": lambda: sample_then_optimize(network_builder(16, 2, "tanh", build=ntk_mlp, gamma=2.0),
                                                         variant="posterior", nu=1.0, sigma2=0.01, steps=50,
                                                         optimizer=make_optimizer("adam", 1e-2), samples=4),
    "zero_init_columns": lambda: zero_init_columns(width=16, depth=2, lam=0.01, use_bias=True, training="retrain",
                                                   learning_rate=1e-2,
                                                   train=TrainConfig(1, 8, make_optimizer("adam", 1e-2), 0.01),
                                                   train_steps=20, init_steps=100),
}
N, D, CAP = 7, 3, 12


def _data(outputs=None, junk=False):
    """``N`` observed rows of a smooth function, and (``junk``) three rows written after them
    with huge values that are not in the mask."""
    u = jax.random.uniform(jax.random.key(0), (N, D))
    y = jnp.sum((u - 0.3) ** 2, axis=1)
    Y = y if outputs is None else jnp.stack([y] + [u[:, k] - 0.5 for k in range(outputs - 1)], axis=1)
    data = Dataset.empty(CAP, D, u.dtype, outputs=outputs).add_batch(u, Y)
    if junk:
        extra = jax.random.uniform(jax.random.key(9), (3, D))
        rows = N + jnp.arange(3)
        data = data._replace(u=data.u.at[rows].set(extra), y=data.y.at[rows].set(1e6), count=data.count + 3)
    return data


def test_the_table_covers_every_surrogate():
    # every surrogate factory the package exports has a row (the states and GPFit are not factories)
    factories = {name for name in nbo.surrogates.__all__ if name[0].islower()}
    assert factories == set(TABLE), factories ^ set(TABLE)
    assert {"ensemble", "vbll"} == set(surrogate_names())


@pytest.mark.parametrize("name", sorted(TABLE))
def test_posterior_shapes_masked_rows_and_vmap_over_seeds(name, x64):
    surrogate = TABLE[name]()
    assert isinstance(surrogate, Surrogate)
    outputs = 3 if surrogate.multi_output else None
    data = _data(outputs)
    init = jax.jit(lambda key, data: surrogate.init(key, data, jnp.arange(N)))
    state = init(jax.random.key(1), data)
    u = jax.random.uniform(jax.random.key(2), (5, D))
    post = jax.jit(surrogate.posterior)(state, u)
    assert post.mean.shape == (5,) and post.std.shape == (5,) and post.incumbent is None
    assert bool(jnp.all(jnp.isfinite(post.mean))) and bool(jnp.all(post.std > 0))
    if surrogate.multi_output:
        assert post.constraint_mean.shape == (5, 2) and post.constraint_std.shape == (5, 2)
    if name.startswith("gp") or name == "independent":  # independent(gp): column 0's
        assert post.lengthscales.shape == (D,)
    else:
        assert post.lengthscales is None
    # rows outside the mask (written, with huge values) are never fitted
    junk = init(jax.random.key(1), _data(outputs, junk=True))
    other = jax.jit(surrogate.posterior)(junk, u)
    np.testing.assert_allclose(other.mean, post.mean, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(other.std, post.std, rtol=1e-7, atol=1e-9)
    # an update with the new rows: the model follows the data there
    grown = data.add_batch(u[:2], jnp.zeros((2,) if outputs is None else (2, outputs)) - 1.0)
    new = jax.jit(surrogate.update, static_argnums=3)(state, grown, N + jnp.arange(2), True)
    assert float(jnp.mean(jax.jit(surrogate.posterior)(new, u[:2]).mean)) < float(jnp.mean(post.mean[:2]))
    # vmap over seeds: each seed's model is the one fitted alone
    keys = jax.random.split(jax.random.key(4), 2)
    many = jax.jit(jax.vmap(init, in_axes=(0, None)))(keys, data)
    for i in range(2):
        one = init(keys[i], data)
        for a, b in zip(jax.tree.leaves(jax.tree.map(lambda a: a[i], many)), jax.tree.leaves(one)):
            if jnp.issubdtype(b.dtype, jnp.inexact):  # every fitted number, not only the first leaf
                np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", ["ensemble", "vbll", "adaptive_basis", "neural_linear", "sample_then_optimize"])
def test_pathwise_draws_are_one_function(name, x64):
    """A pathwise draw gives each point the same value whatever other points it is called
    with (so an acquisition on it can be climbed); different keys give different draws."""
    surrogate = TABLE[name]()
    assert surrogate.pathwise and surrogate.sample is not None
    state = jax.jit(surrogate.init)(jax.random.key(1), _data(), jnp.arange(N))
    u = jax.random.uniform(jax.random.key(2), (6, D))
    drawn = jax.jit(lambda key, u: surrogate.sample(state, key)(u))  # the draw at u, one compile per shape
    at_u = drawn(jax.random.key(5), u)
    np.testing.assert_allclose(drawn(jax.random.key(5), u[:2]), at_u[:2], rtol=1e-12)
    others = [drawn(jax.random.key(k), u) for k in range(6, 12)]
    assert any(not np.allclose(o, at_u) for o in others)


def test_the_gp_draw_is_joint_and_refused_for_a_climb():
    assert not gp(_FIT).pathwise and gp_columns(_FIT).sample is None
    with pytest.raises(ValueError, match="acq_optimizer.steps must be 0"):
        bo_algorithm(gp(_FIT), nbo.acquisition.thompson_sampling(), acq_optimizer=acq_optimizer(steps=5), name="x")


def test_a_posterior_that_lacks_what_the_acquisition_reads_is_refused():
    plain = Surrogate(lambda k, d, r: None, lambda s, d, r, f: s, lambda s, u: None, name="mine")
    with pytest.raises(ValueError, match="'mine' surrogate's posterior has none"):
        bo_algorithm(plain, nbo.acquisition.thompson_sampling(), acq_optimizer=acq_optimizer(), name="x")
    with pytest.raises(ValueError, match="models no constraints"):
        bo_algorithm(gp(_FIT), nbo.acquisition.log_cei(), acq_optimizer=acq_optimizer(), name="x")
    with pytest.raises(ValueError, match="multi_output=True"):
        bo_algorithm(gp(_FIT), nbo.acquisition.log_cei(), acq_optimizer=acq_optimizer(), name="x", constrained=True)
    with pytest.raises(TypeError, match="surrogate must be an nbo_jax.base.Surrogate"):
        bo_algorithm(lambda: 0, nbo.acquisition.log_ei(), acq_optimizer=acq_optimizer(), name="x")
    with pytest.raises(TypeError, match="has no option"):
        nbo.algorithms.surrogate_bo("vbll", members=3)
    with pytest.raises(ValueError, match="surrogate must be one of"):
        nbo.algorithms.surrogate_bo("transformer")


@pytest.mark.parametrize("factory", ["gp", "vbll", "dngo"])
def test_an_acquisition_function_gives_the_run_of_the_same_named_acquisition(factory, x64, program):
    """``acquisition=`` takes any function of the posterior: the library's own UCB passed as a
    function gives the same run as the name (the same ``run_bo`` program, hence bit for bit),
    for the GP, VBLL and DNGO."""
    problem = nbo.benchmarks.get("branin")
    small = dict(acq_optimizer=dict(raw_samples=32, num_restarts=2, steps=3))
    if factory == "gp":
        named = nbo.gp_bo(acquisition="ucb", beta=3.0, fit_steps=5, **small)
        given = nbo.gp_bo(acquisition=nbo.acquisition.lcb(3.0), fit_steps=5, **small)
    elif factory == "dngo":
        opts = dict(hidden=(8, 8), epochs=2, evidence_iters=5, acq_optimizer=dict(raw_samples=32, steps=3))
        named = nbo.adaptive_basis("bayesian", acquisition=nbo.acquisition.lcb(3.0), **opts)
        given = nbo.adaptive_basis("bayesian", acquisition=lambda post, key: -(post.mean - jnp.sqrt(3.0) * post.std),
                                   **opts)
    else:
        opts = dict(width=8, steps=5, init_steps=10, **small)
        named = nbo.algorithms.surrogate_bo("vbll", "ucb", beta=3.0, **opts)
        given = nbo.algorithms.surrogate_bo("vbll", nbo.acquisition.lcb(3.0), **opts)
    assert given.name == factory and named.batch_rule == "fantasy"
    runs = [program(lambda k, a=a: nbo.run_bo(k, a, problem, n_init=4, n_iter=3), jax.random.key(0))
            for a in (named, given)]
    assert runs[0] == runs[1]


def test_vbll_posterior_is_the_last_layer_gaussian(x64):
    """Mean ``w_bar^T phi(u)``, latent variance ``phi^T S phi`` with ``S = L L^T``, and a draw
    ``phi^T (w_bar + L eps)``: against numpy from the trained parameters; with no training
    steps the last layer is its prior, ``S = s_p^2 I``."""
    surrogate = _small("vbll", prior_scale=0.5, init_steps=0)
    state = surrogate.init(jax.random.key(1), _data(), jnp.arange(N))
    L = np.asarray(chol_factor(state.params.w_chol))
    np.testing.assert_allclose(L @ L.T, 0.25 * np.eye(8), atol=1e-12)
    trained = _small("vbll").init(jax.random.key(1), _data(), jnp.arange(N))
    u = jax.random.uniform(jax.random.key(2), (4, D))

    from nbo_jax.networks import embed_inputs
    z = np.asarray(embed_inputs(u, "circle"))  # "auto" below 20 inputs
    h = z
    for k in range(2):
        layer = trained.params.features[f"Dense_{k}"]
        h = np.tanh(h @ np.asarray(layer["kernel"]) + np.asarray(layer["bias"]))
    L = np.asarray(chol_factor(trained.params.w_chol))
    post = _small("vbll").posterior(trained, u)
    np.testing.assert_allclose(post.mean, h @ np.asarray(trained.params.w_mean), rtol=1e-9)
    np.testing.assert_allclose(post.std ** 2, np.sum((h @ L) ** 2, axis=1), rtol=1e-9)
    eps = np.asarray(jax.random.normal(jax.random.key(3), (8,)))
    draw = _small("vbll").sample(trained, jax.random.key(3))(u)
    np.testing.assert_allclose(draw, h @ (np.asarray(trained.params.w_mean) + L @ eps), rtol=1e-9)


def test_ensemble_posterior_is_the_members_mean_and_spread(x64):
    surrogate = _small("ensemble")
    state = surrogate.init(jax.random.key(1), _data(), jnp.arange(N))
    u = jax.random.uniform(jax.random.key(2), (4, D))
    from nbo_jax.features import predict
    from nbo_jax.networks import embedded, mlp

    net = embedded(lambda d, dtype: mlp(d, 8, 3, use_bias=True, dtype=dtype), D, u.dtype, "circle")
    f = np.stack([np.asarray(predict(net.apply, jax.tree.map(lambda a: a[j], state.params), u)) for j in range(3)])
    post = surrogate.posterior(state, u)
    np.testing.assert_allclose(post.mean, f.mean(0), rtol=1e-9)
    np.testing.assert_allclose(post.std, f.std(0), rtol=1e-9)
    assert np.max(f.std(0)) > 1e-3  # the members disagree away from the data


@pytest.mark.parametrize("columns", [False, True])
def test_init_fits_the_prior_mode_once_with_the_result_of_the_duplicate_pair(columns, x64, monkeypatch):
    """The GP's first fit (``init``): its warm start is the prior mode, which the starts list
    again, so with ``n_restarts=2`` (the default preset's) it is fitted once, as a batch of one
    start, and gives the fit from the pair of identical starts; a later refit takes two
    starts (the previous fit and the prior mode)."""
    batches = []
    real = gpm.fit

    def spy(kind, starts, *args, **kwargs):
        batches.append(int(starts.log_noise.shape[0]))
        return real(kind, starts, *args, **kwargs)

    monkeypatch.setattr(gpm, "fit", spy)
    data = _data(outputs=2 if columns else None)
    surrogate = (gp_columns if columns else gp)(_FIT)
    state = jax.jit(lambda k, d: surrogate.init(k, d, None))(jax.random.key(0), data)
    assert batches == [1]
    jax.jit(lambda s, d: surrogate.update(s, d, None, True)).lower(state, data)  # traced: the starts it fits
    assert batches == [1, 2]
    # the pair of identical prior modes, fitted as before: the same hyperparameters
    mode = _FIT.initial(D, data.u.dtype)
    _assert_fitted_from(real, lambda j: jax.tree.map(lambda a: jnp.stack([a, a]), mode), state, data, columns)


def _assert_fitted_from(fit, starts_of, state, data, columns):
    """Each column's fitted hyperparameters in ``state`` equal ``fit`` (``gp_model.fit``) from
    the stacked starts ``starts_of(j)`` of column ``j``, to 1e-9 (float64)."""
    ys = data.y[:, None] if not columns else data.y
    for j in range(ys.shape[1]):
        mask = data.mask if not columns else data.mask[:, j]
        want = jax.jit(lambda y, m: fit(_FIT.kind, starts_of(j), data.u, y, m, steps=_FIT.steps, bounds=_FIT.pb,
                                        jitter=0.0, prior=_FIT.gp_prior(D), optimizer="lbfgs",
                                        learn_constant=True)[0])(ys[:, j], mask)
        got = state.params if not columns else jax.tree.map(lambda a: a[j], state.params)
        for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("columns", [False, True])
def test_init_from_a_start_fits_that_one_start(columns, x64, monkeypatch):
    """``init(..., start=hyperparameters(state))``: the fit's one start is the given
    hyperparameters (not the prior mode), with the result of ``gp_model.fit`` from it alone;
    a start of another space's shapes is refused naming ``start``; a GP fitted without warm
    starts takes none (its ``hyperparameters`` field is ``None``)."""
    starts = []
    real = gpm.fit

    def spy(kind, s, *args, **kwargs):
        starts.append(s)
        return real(kind, s, *args, **kwargs)

    data = _data(outputs=2 if columns else None)
    surrogate = (gp_columns if columns else gp)(_FIT)
    earlier = jax.jit(lambda k, d: surrogate.init(k, d, None))(jax.random.key(0),
                                                                 data._replace(mask=data.mask.at[N - 2:N].set(False)))
    start = surrogate.hyperparameters(earlier)
    assert all(a is b for a, b in zip(start, earlier.params))
    monkeypatch.setattr(gpm, "fit", spy)
    state = jax.jit(lambda k, d, p: surrogate.init(k, d, None, start=p))(jax.random.key(1), data, start)
    assert [int(s.log_noise.shape[0]) for s in starts] == [1]  # one fit of one start (vmapped over columns)
    _assert_fitted_from(real, lambda j: jax.tree.map(lambda a: (a if not columns else a[j])[None], start), state,
                        data, columns)
    wrong = start._replace(log_lengthscale=jnp.zeros(start.log_lengthscale.shape[:-1] + (D + 1,)))
    with pytest.raises(ValueError, match=r"start must be the GP's fitted hyperparameters on this space"):
        jax.eval_shape(lambda k, d, p: surrogate.init(k, d, None, start=p), jax.random.key(1), data, wrong)
    assert (gp_columns if columns else gp)(_FIT._replace(warm_start=False)).hyperparameters is None
