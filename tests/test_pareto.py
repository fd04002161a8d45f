"""nbo_jax.pareto against moocore (an independent C implementation of the hypervolume, the
non-dominated filter and non-dominated sorting), on random fronts with duplicates, masked
rows and points beyond the reference point, for m = 2 and 3 in float64; a hand-computed
front; the box decomposition's identities; jit + vmap + scan; bad arguments' messages."""

import jax
import jax.numpy as jnp
import moocore
import numpy as np
import pytest

from nbo_jax import pareto


def _front(m, n=24, seed=0):
    """Random points in [0, 1]^m with duplicates and ties, a mask and a reference point that
    some points do not dominate."""
    rng = np.random.default_rng(seed + m)
    Y = np.round(rng.random((n, m)), 2)  # rounding makes ties in single coordinates
    Y[:4] = Y[4:8]                        # exact duplicates
    mask = rng.random(n) < 0.8
    ref = np.full(m, 0.85)
    return Y, mask, ref


@pytest.mark.parametrize("m", [2, 3])
def test_matches_moocore(x64, m):
    Y, mask, ref = _front(m)
    Yv = Y[mask]
    assert np.any(np.any(Yv >= ref, axis=1)), "the case must hold points beyond the reference point"
    np.testing.assert_allclose(float(pareto.hypervolume(Y, ref, mask)), moocore.hypervolume(Yv, ref=ref),
                               rtol=1e-12)
    nd = np.asarray(pareto.is_non_dominated(Y, mask))
    assert not nd[~mask].any()
    np.testing.assert_array_equal(nd[mask], moocore.is_nondominated(Yv))
    ranks = np.asarray(pareto.pareto_ranks(Y, mask))
    np.testing.assert_array_equal(ranks[~mask], -1)
    np.testing.assert_array_equal(ranks[mask], moocore.pareto_rank(Yv))
    assert ranks.max() >= 2  # several fronts were peeled

    # the boxes: disjoint, and with the dominated volume they fill [ideal, ref]
    boxes = pareto.nondominated_partitioning(Y, ref, mask)
    assert boxes.lower.shape == ((len(Y) + 1) ** (m - 1), m)
    ideal = Yv.min(axis=0)
    lo, up = np.maximum(np.asarray(boxes.lower), ideal), np.minimum(np.asarray(boxes.upper), ref)
    volume = np.prod(np.clip(up - lo, 0.0, None), axis=1)
    np.testing.assert_allclose(np.prod(ref - ideal) - volume.sum(), moocore.hypervolume(Yv, ref=ref), rtol=1e-12)
    overlap = np.prod(np.clip(np.minimum(up[:, None], up[None]) - np.maximum(lo[:, None], lo[None]), 0.0, None), -1)
    np.testing.assert_allclose(overlap.sum() - np.trace(overlap), 0.0, atol=1e-15)

    # hypervolume improvement of new points (one dominated, one beyond the reference point)
    rng = np.random.default_rng(7)
    new = np.vstack([rng.random((4, m)) * 0.8, Yv[0] + 0.01, np.full(m, 0.9)])
    hvi = np.asarray(pareto.hypervolume_improvement(new, boxes))
    base = moocore.hypervolume(Yv, ref=ref)
    expected = [moocore.hypervolume(np.vstack([Yv, y]), ref=ref) - base for y in new]
    np.testing.assert_allclose(hvi, expected, rtol=1e-10, atol=1e-15)
    assert hvi[-1] == 0.0 and hvi[-2] == 0.0 and hvi[:4].max() > 0.0


def test_hand_computed_front(x64):
    Y = np.array([[1.0, 2.0], [2.0, 1.0], [1.5, 1.5], [3.0, 3.0], [1.0, 2.0], [np.nan, 0.0], [0.5, 5.0]])
    ref = np.array([4.0, 4.0])
    # sweep by y_1: 3 * 2 + 2.5 * 0.5 + 2 * 0.5; (3, 3) is dominated, NaN and (0.5, 5) add nothing
    assert float(pareto.hypervolume(Y, ref)) == pytest.approx(8.25, rel=1e-14)
    np.testing.assert_array_equal(pareto.is_non_dominated(Y), [True, True, True, False, False, False, True])
    np.testing.assert_array_equal(pareto.pareto_ranks(Y), [0, 0, 0, 1, 0, -1, 0])
    assert float(pareto.hypervolume(Y, ref, mask=np.zeros(7, bool))) == 0.0
    boxes = pareto.nondominated_partitioning(Y, ref)
    assert float(pareto.hypervolume_improvement(jnp.array([1.0, 1.0]), boxes)) == pytest.approx(9.0 - 8.25)
    # 3-D, reference point (2, 2, 2): the point (1, 1, 1) dominates a unit cube; the three
    # points e_i-shifted dominate boxes of volume 2 whose pairwise and triple overlaps are the
    # unit cube: 3 * 2 - 3 * 1 + 1 (inclusion-exclusion)
    assert float(pareto.hypervolume(np.ones((1, 3)), np.full(3, 2.0))) == pytest.approx(1.0, rel=1e-14)
    Y3 = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    assert float(pareto.hypervolume(Y3, np.full(3, 2.0))) == pytest.approx(4.0, rel=1e-14)


def test_log_hypervolume_difference():
    np.testing.assert_allclose(pareto.log_hypervolume_difference(jnp.array([1.9, 1.0]), 2.0), [-1.0, 0.0],
                               rtol=1e-5)
    assert float(pareto.log_hypervolume_difference(2.5, 2.0)) == -np.inf
    with pytest.raises(ValueError, match="max_hypervolume"):
        pareto.log_hypervolume_difference(1.0, None)


def test_jit_vmap_scan_history():
    """The hypervolume after each evaluation of a fixed-capacity buffer, for 2 seeds: one
    jit(vmap(scan)) program in the default float32, against moocore on each prefix."""
    rng = np.random.default_rng(3)
    Ys = rng.random((2, 12, 2)).astype(np.float32)
    ref = jnp.array([1.0, 1.0])

    def history(Y):
        def step(_, t):
            mask = jnp.arange(Y.shape[0]) <= t
            boxes = pareto.nondominated_partitioning(Y, ref, mask)
            hvi = pareto.hypervolume_improvement(Y[jnp.minimum(t + 1, Y.shape[0] - 1)], boxes)
            return None, (pareto.hypervolume(Y, ref, mask), jnp.sum(pareto.is_non_dominated(Y, mask)), hvi)
        return jax.lax.scan(step, None, jnp.arange(Y.shape[0]))[1]

    hv, n_front, hvi = jax.jit(jax.vmap(history))(jnp.asarray(Ys))
    assert hv.shape == (2, 12) and hv.dtype == jnp.float32
    for s in range(2):
        expected = [moocore.hypervolume(Ys[s, : t + 1].astype(np.float64), ref=[1.0, 1.0]) for t in range(12)]
        np.testing.assert_allclose(hv[s], expected, rtol=1e-5)
        np.testing.assert_array_equal(n_front[s], [moocore.is_nondominated(Ys[s, : t + 1]).sum() for t in range(12)])
        np.testing.assert_allclose(hvi[s, :-1], np.diff(expected), rtol=1e-4, atol=1e-6)
    assert np.all(np.diff(np.asarray(hv), axis=1) >= 0)


def test_bad_arguments():
    Y = jnp.zeros((5, 2))
    with pytest.raises(ValueError, match=r"Y must have shape \(n, m\)"):
        pareto.hypervolume(jnp.zeros(5), jnp.zeros(2))
    with pytest.raises(ValueError, match=r"Y has m = 4 objectives.*m in \(2, 3\)"):
        pareto.hypervolume(jnp.zeros((5, 4)), jnp.zeros(4))
    with pytest.raises(ValueError, match=r"Y has m = 1"):
        pareto.nondominated_partitioning(jnp.zeros((5, 1)), jnp.zeros(1))
    with pytest.raises(ValueError, match=r"reference_point must have shape \(m,\) = \(2,\)"):
        pareto.hypervolume(Y, jnp.zeros(3))
    with pytest.raises(ValueError, match="reference_point must be finite"):
        pareto.hypervolume(Y, jnp.array([1.0, jnp.nan]))
    with pytest.raises(ValueError, match=r"mask must have shape \(n,\) = \(5,\)"):
        pareto.is_non_dominated(Y, jnp.ones(4, bool))
    with pytest.raises(TypeError, match="mask must be a bool array"):
        pareto.pareto_ranks(Y, jnp.ones(5))
    with pytest.raises(TypeError, match="Y must hold real numbers"):
        pareto.is_non_dominated(jnp.zeros((5, 2), bool))
    boxes = pareto.nondominated_partitioning(Y, jnp.ones(2))
    with pytest.raises(ValueError, match=r"y_new must have shape \(\.\.\., m\) with m = 2"):
        pareto.hypervolume_improvement(jnp.zeros(3), boxes)
