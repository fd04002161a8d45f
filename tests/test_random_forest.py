"""Random-forest BO (``rf_bo``, registry ``"rf-ei"``): the callback's posterior is
scikit-learn's forest, masked rows are never fitted, ``ask`` is the argmax of EI over the
shared candidates, vmapped seeds equal seeds alone, and bad arguments are refused."""

import functools
import importlib.util
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor

import nbo_jax as nbo
from nbo_jax.acquisition import expected_improvement
from nbo_jax.algorithms import random_forest as rf
from nbo_jax.optimize import candidate_set

SETTINGS = rf.ForestSettings(n_estimators=12, min_samples_split=3, min_samples_leaf=2, max_features=0.5)


def _sklearn_mean_std(u, y, seed, x, settings=SETTINGS, total=False):
    """The reference: scikit-learn's own forest and its trees, fitted the public way."""
    forest = RandomForestRegressor(n_estimators=settings.n_estimators, min_samples_split=settings.min_samples_split,
                                   min_samples_leaf=settings.min_samples_leaf, max_features=settings.max_features,
                                   bootstrap=settings.bootstrap, random_state=seed).fit(u, y)
    preds = np.stack([tree.predict(x) for tree in forest.estimators_])
    np.testing.assert_allclose(preds.mean(axis=0), forest.predict(x), rtol=1e-12, atol=1e-12)
    var = preds.var(axis=0)
    if total:
        var = var + np.mean([tree.tree_.impurity[tree.apply(x)] for tree in forest.estimators_], axis=0)
    return preds.mean(axis=0), np.sqrt(var)


def _data(rng, n=30, cap=40, d=3):
    u = np.zeros((cap, d))
    y = np.zeros(cap)
    u[:n] = rng.uniform(size=(n, d))
    y[:n] = np.sin(6 * u[:n, 0]) + u[:n, 1] ** 2 - u[:n, 2] + 0.1 * rng.normal(size=n)
    mask = np.arange(cap) < n
    return u, y, mask


def test_the_callback_is_scikit_learns_forest_mean_and_spread_over_its_trees(x64):
    rng = np.random.default_rng(0)
    u, y, mask, x = *_data(rng), rng.uniform(size=(50, 3))
    post = jax.jit(rf.forest_posterior, static_argnums=5)
    for variance in rf.VARIANCES:
        settings = SETTINGS._replace(variance=variance)
        mean, std = post(jnp.asarray(u), jnp.asarray(y), jnp.asarray(mask), jnp.int32(17), jnp.asarray(x), settings)
        assert mean.dtype == std.dtype == jnp.float64 and mean.shape == std.shape == (50,)
        ref_mean, ref_std = _sklearn_mean_std(u[mask], y[mask], 17, x, settings, total=variance == "total")
        np.testing.assert_allclose(mean, ref_mean, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(std, ref_std, rtol=1e-6, atol=1e-9)
        assert np.all(np.asarray(std) > 0)
    # batched (vmap, broadcast_all: one forest per seed) equals the calls one by one, exactly;
    # another seed is another forest
    us, ys = np.stack([u, u[::-1]]), np.stack([y, y[::-1]])
    masks, seeds = np.stack([mask, mask[::-1]]), jnp.asarray([17, 3], jnp.int32)
    batched = jax.jit(jax.vmap(lambda a, b, c, s: rf.forest_posterior(a, b, c, s, jnp.asarray(x), SETTINGS)))(
        us, ys, masks, seeds)
    for i in range(2):
        alone = post(jnp.asarray(us[i]), jnp.asarray(ys[i]), jnp.asarray(masks[i]), seeds[i], jnp.asarray(x), SETTINGS)
        np.testing.assert_array_equal(batched[0][i], alone[0])
        np.testing.assert_array_equal(batched[1][i], alone[1])
    assert not np.allclose(batched[1][0], batched[1][1])
    # no valid row: the prior of standardized targets
    m0, s0 = post(jnp.asarray(u), jnp.asarray(y), jnp.zeros(40, bool), jnp.int32(0), jnp.asarray(x), SETTINGS)
    np.testing.assert_array_equal(m0, 0.0)
    np.testing.assert_array_equal(s0, 1.0)


def test_masked_rows_are_never_fitted_and_a_failure_is_fitted_at_its_imputed_value(x64):
    rng = np.random.default_rng(1)
    x0 = rng.uniform(size=(12, 2))
    y0 = np.sum(x0**2, axis=1)
    y0[3] = np.nan  # a failed evaluation: imputed with the worst value
    algo = nbo.rf_bo(n_estimators=8, raw_samples=16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        state = algo.init(jax.random.key(0), x0, y0, bounds=[(0.0, 1.0)] * 2, capacity=20)
    data = state.data
    assert bool(data.failed[3]) and bool(data.mask[3]) and float(data.y[3]) == np.nanmax(y0)
    x = jnp.asarray(rng.uniform(size=(30, 2)))
    surrogate = jax.jit(algo.surrogate)
    post = surrogate(state, x)
    # the rows past count (and any masked row) of the data the forest fits (the surrogate's
    # state) may hold anything: nothing changes
    fitted = state.model.data
    fit_on = lambda d: state._replace(model=state.model._replace(data=d))  # noqa: E731
    junk = fitted._replace(u=fitted.u.at[12:].set(0.5), y=fitted.y.at[12:].set(-1e6))
    np.testing.assert_array_equal(surrogate(fit_on(junk), x).mean, post.mean)
    np.testing.assert_array_equal(surrogate(fit_on(junk), x).std, post.std)
    masked = junk._replace(mask=junk.mask.at[5].set(False))
    moved = masked._replace(y=masked.y.at[5].set(1e6), u=masked.u.at[5].set(0.0))
    np.testing.assert_array_equal(surrogate(fit_on(masked), x).mean, surrogate(fit_on(moved), x).mean)
    assert not np.allclose(surrogate(fit_on(masked), x).mean, post.mean)
    # the reference: the 12 rows (the failure at the worst value), standardized, the state's seed
    y_fit = np.where(np.isnan(y0), np.nanmax(y0), y0)
    y_std = (y_fit - y_fit.mean()) / y_fit.std()
    ref_mean, ref_std = _sklearn_mean_std(x0, y_std, int(state.model.seed), np.asarray(x),
                                          rf.ForestSettings(n_estimators=8))
    np.testing.assert_allclose(post.mean, ref_mean, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(post.std, ref_std, rtol=1e-6, atol=1e-9)
    # the incumbent is the best finite observation, never the imputed failure
    assert float(post.incumbent) == pytest.approx(float(np.min(y_std[~np.isnan(y0)])))


@functools.partial(jax.jit, static_argnums=2)
def _reference_inputs(key, data, aopt):
    """The raw samples of ``ask`` from ``key``'s split, the standardized targets and the
    observed rows of ``data``."""
    k_raw, _ = jax.random.split(key)
    u_c = candidate_set(jax.random.split(k_raw)[0], data, aopt.n_uniform, aopt.n_local,
                        local_std=aopt.local_std, n_best=aopt.n_best, sampler=aopt.raw_sampler)
    return u_c, data.standardized()[0], data.observed()


def _ask_reference(state, key, aopt, n_estimators):
    """ask, recomputed outside: the state's seed, the raw samples from the same key split,
    scikit-learn's forest, EI, argmax."""
    seed = int(state.model.seed)
    data = state.data
    u_c, y, observed = (np.asarray(a) for a in _reference_inputs(key, data, aopt))
    mask = np.asarray(data.mask)
    mean, std = _sklearn_mean_std(np.asarray(data.u)[mask], y[mask], seed, u_c, rf.ForestSettings(n_estimators=n_estimators))
    best = np.min(np.where(observed, y, np.inf))
    ei = np.array(jax.jit(expected_improvement)(jnp.asarray(mean), jnp.asarray(std), best))
    return u_c, ei


def test_ask_is_the_argmax_of_expected_improvement_over_the_candidates(x64, compiled):
    problem = nbo.benchmarks.get("branin")
    x0 = nbo.initial_design(jax.random.key(2), problem.bounds, 15)
    y0 = jax.vmap(problem.objective)(x0)
    base = nbo.rf_bo(n_estimators=10, raw_samples=256)
    algo = compiled(base)
    state = algo.init(jax.random.key(0), x0, y0, bounds=problem.bounds, capacity=20)
    aopt = rf.DEFAULT_ACQ._replace(raw_samples=256)
    for k in range(2):
        key = jax.random.key(10 + k)
        x = algo.ask(state, key)
        u_c, ei = _ask_reference(state, key, aopt, 10)
        # a forest is piecewise constant: candidates in the same cell tie, and the first wins
        assert ei.max() > 0
        np.testing.assert_allclose(state.bounds.to_unit(x), u_c[np.argmax(ei)], rtol=1e-12, atol=1e-12)
        state = algo.tell(state, x, problem.objective(x))
    # a finite domain (its points are static: init runs eagerly): the unevaluated choice of largest EI
    points = np.asarray(nbo.initial_design(jax.random.key(5), problem.bounds, 60))
    domain = nbo.finite_domain(points)
    fstate = base.init(jax.random.key(0), points[:10], jax.vmap(problem.objective)(jnp.asarray(points[:10])),
                       bounds=domain, capacity=20)
    x = algo.ask(fstate, jax.random.key(3))
    u_c, ei = _ask_reference(fstate, jax.random.key(3), aopt, 10)
    ei[:10] = -np.inf
    np.testing.assert_allclose(x, points[np.argmax(ei)], rtol=1e-12)


def test_a_vmapped_seed_equals_the_seed_run_alone_and_batches_are_distinct(x64):
    problem = nbo.benchmarks.get("branin")
    algo = nbo.registry.get("rf-ei", n_estimators=8, raw_samples=32, q=2)
    assert algo.name == "rf-ei" and algo.q == 2 and algo.batch_rule == "fantasy"
    run = lambda k: nbo.run_bo(k, algo, problem, n_init=4, n_iter=4)  # noqa: E731
    keys = jax.random.split(jax.random.key(0), 2)
    hist = jax.jit(jax.vmap(run))(keys)
    assert hist.x.shape == (2, 12, 2) and not np.allclose(hist.x[0], hist.x[1])
    for i in range(2):
        alone = jax.jit(run)(keys[i])
        np.testing.assert_allclose(hist.x[i], alone.x, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(hist.y[i], alone.y, rtol=1e-12, atol=1e-12)
        for t in range(4):
            a, b = hist.x[i, 4 + 2 * t: 6 + 2 * t]
            assert np.max(np.abs(a - b)) > 1e-6


@pytest.mark.parametrize("kwargs,name", [
    (dict(n_estimators=0), "n_estimators"), (dict(n_estimators=2.5), "n_estimators"),
    (dict(min_samples_leaf=0), "min_samples_leaf"), (dict(min_samples_split=1), "min_samples_split"),
    (dict(max_features=0.0), "max_features"), (dict(max_features=1.5), "max_features"),
    (dict(max_features=float("nan")), "max_features"), (dict(variance="law"), "variance"),
    (dict(bootstrap=1), "bootstrap"), (dict(raw_samples=0), "raw_samples"),
    (dict(raw_samples=2, q=3), "raw_samples"), (dict(q=0), "q"),
    (dict(acq_optimizer=dict(steps=5)), "acq_optimizer.steps"),
    (dict(raw_samples=64, acq_optimizer=dict(raw_samples=32)), "raw_samples"),
    (dict(acquisition="ei"), "acquisition"),
])
def test_bad_arguments_are_refused_naming_them(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        nbo.rf_bo(**kwargs)


def test_without_scikit_learn_the_factory_names_the_extra(monkeypatch):
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a, **k: None if name == "sklearn" else find_spec(name, *a, **k))
    with pytest.raises(ImportError, match=r"nbo-jax\[tasks\]"):
        nbo.rf_bo()
