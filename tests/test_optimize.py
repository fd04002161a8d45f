"""Candidate sets and projected gradient ascent (nbo_jax.optimize)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from nbo_jax.optimize import argmax_point, candidate_set, projected_gradient_ascent
from nbo_jax.types import Dataset


def test_candidate_set_local_points_surround_best_observations():
    u = jnp.array([[0.1, 0.1], [0.9, 0.2], [0.5, 0.5], [0.2, 0.8]])
    y = jnp.array([3.0, jnp.nan, 1.0, 2.0])  # the NaN row must never be a centre
    data = Dataset.empty(6, 2).add_batch(u, y)
    cand = candidate_set(jax.random.key(0), data, 100, 300, local_std=0.01, n_best=2)
    assert cand.shape == (400, 2)
    assert np.all((cand >= 0) & (cand <= 1))
    local = np.asarray(cand[100:])
    d_best = np.linalg.norm(local - np.array([0.5, 0.5]), axis=1)
    d_second = np.linalg.norm(local - np.array([0.2, 0.8]), axis=1)
    assert np.all(np.minimum(d_best, d_second) < 0.06)
    assert abs(np.mean(d_best < 0.06) - 0.5) < 0.01  # spread evenly over the 2 best
    # with no valid observation the local points fall back to uniform ones
    empty = Dataset.empty(3, 2).add(jnp.array([0.5, 0.5]), jnp.nan)
    c2 = candidate_set(jax.random.key(1), empty, 10, 1000, local_std=0.001)
    assert np.std(np.asarray(c2[10:, 0])) > 0.2


def test_projected_gradient_ascent_finds_interior_and_boundary_maxima():
    target = jnp.array([0.3, 0.7])
    u0 = jax.random.uniform(jax.random.key(0), (4, 2))
    out = projected_gradient_ascent(lambda u: -jnp.sum((u - target) ** 2), u0, steps=300, learning_rate=0.02)
    np.testing.assert_allclose(out, jnp.broadcast_to(target, (4, 2)), atol=1e-3)
    edge = projected_gradient_ascent(lambda u: u[0] - u[1], u0, steps=200, learning_rate=0.05)
    np.testing.assert_allclose(edge, jnp.broadcast_to(jnp.array([1.0, 0.0]), (4, 2)), atol=1e-6)


def test_argmax_point_ignores_nan():
    cand = jnp.arange(8.0).reshape(4, 2)
    assert np.array_equal(argmax_point(jnp.array([1.0, jnp.nan, 3.0, 2.0]), cand), cand[2])


def test_refine_argmax_climbs_from_the_best_candidates():
    from nbo_jax.optimize import refine_argmax

    target = jnp.array([0.3, 0.7])
    utility = lambda u: -jnp.sum((u - target) ** 2)
    cand = jax.random.uniform(jax.random.key(0), (64, 2))
    vals = jax.vmap(utility)(cand).at[5].set(jnp.nan)
    best = cand[int(jnp.nanargmax(vals))]
    # no steps: the best candidate itself (NaN never wins)
    assert np.array_equal(refine_argmax(vals, cand, utility, n_starts=4, steps=0, learning_rate=0.05), best)
    out = refine_argmax(vals, cand, utility, n_starts=4, steps=300, learning_rate=0.02)
    np.testing.assert_allclose(out, target, atol=1e-3)
    # a pool utility that prefers the unclimbed point keeps it
    keep = refine_argmax(vals, cand, utility, n_starts=4, steps=50, learning_rate=0.02,
                         pool_utility=lambda pool: -jnp.sum((pool - best) ** 2, axis=1))
    assert np.array_equal(keep, best)


def test_optimize_acqf_finds_the_known_maximum():
    """A smooth acquisition with its maximum at a known interior point: raw samples alone land
    near it, gradient steps reach it; NaN utilities never win."""
    from nbo_jax.optimize import acq_optimizer, optimize_acqf

    target = jnp.array([0.31, 0.77, 0.55])
    utility = lambda u: -jnp.sum((u - target) ** 2, axis=-1)
    data = Dataset.empty(4, 3)
    raw = optimize_acqf(utility, jax.random.key(0), data, acq_optimizer(raw_samples=256, steps=0, local_fraction=0.0))
    climbed = optimize_acqf(utility, jax.random.key(0), data,
                            acq_optimizer(raw_samples=256, num_restarts=3, steps=200, learning_rate=0.02))
    assert float(jnp.linalg.norm(raw - target)) < 0.25
    np.testing.assert_allclose(climbed, target, atol=2e-3)
    nan_left = lambda u: jnp.where(u[:, 0] < 0.5, jnp.nan, -jnp.sum((u - target) ** 2, axis=-1))
    out = optimize_acqf(nan_left, jax.random.key(1), data, acq_optimizer(raw_samples=512, steps=0))
    assert float(out[0]) >= 0.5


def test_acq_optimizer_checks_its_arguments():
    from nbo_jax.optimize import AcqOptimizer, acq_optimizer, as_acq_optimizer

    for kw, name in [(dict(raw_samples=0), "raw_samples"), (dict(num_restarts=0), "num_restarts"),
                     (dict(steps=-1), "steps"), (dict(learning_rate=0.0), "learning_rate"),
                     (dict(local_fraction=1.0), "local_fraction"), (dict(local_std=-1.0), "local_std")]:
        with pytest.raises(ValueError, match=name):
            acq_optimizer(**kw)
    with pytest.raises(TypeError, match="raw_samples"):
        acq_optimizer(raw_samples=2.5)
    with pytest.raises(TypeError, match="unknown keys"):
        as_acq_optimizer(dict(n_candidates=4))
    assert as_acq_optimizer(dict(raw_samples=64)) == AcqOptimizer(raw_samples=64)
    assert acq_optimizer(raw_samples=100, local_fraction=0.25).n_local == 25
    # an acquisition without a gradient: the default's steps become 0, asking for steps is refused
    climbing = AcqOptimizer(steps=30)
    assert as_acq_optimizer(None, default=climbing, no_gradient="why").steps == 0
    assert as_acq_optimizer(dict(raw_samples=8), default=climbing, no_gradient="why").steps == 0
    with pytest.raises(ValueError, match=r"acq_optimizer\.steps must be 0 \(why\); got steps=3"):
        as_acq_optimizer(dict(steps=3), default=climbing, no_gradient="why")
