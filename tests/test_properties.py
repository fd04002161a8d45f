"""Property-based tests (hypothesis) of the public entry points (issue 12): random shapes,
bounds, dtypes, NaN/inf patterns and batch sizes. Nothing may crash with a JAX-internal
error and nothing may leave the box; every bad input is a TypeError/ValueError naming the
argument. Plus an exhaustive check of every numeric argument of every registry factory."""

import inspect
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nbo_jax as nbo
from nbo_jax.registry import REGISTRY
from nbo_jax.ask_tell import AskTell
from nbo_jax.types import Dataset, as_bounds

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# float32 values without subnormals: the tests compare float32 arrays, and XLA's CPU backend
# flushes float32 subnormals to zero (y = [1.4e-45, 0.0] made best() and the failure fill differ)
finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, allow_subnormal=False, width=32)
special = st.sampled_from([np.nan, np.inf, -np.inf])


@st.composite
def boxes(draw, max_dim=4):
    d = draw(st.integers(1, max_dim))
    lower = np.array(draw(st.lists(finite, min_size=d, max_size=d)))
    width = np.array(draw(st.lists(st.floats(1e-3, 1e3), min_size=d, max_size=d)))
    return lower, lower + width


# ---------------------------------------------------------------- bounds
@SETTINGS
@given(boxes())
def test_every_form_of_a_box_reads_the_same(box):
    lower, upper = box
    forms = [(lower, upper), (list(lower), list(upper)), [(float(a), float(b)) for a, b in zip(lower, upper)],
             nbo.Bounds(lower, upper), np.stack([lower, upper])]
    for form in forms:
        b = as_bounds(form)
        np.testing.assert_array_equal(b.lower, lower)
        np.testing.assert_array_equal(b.upper, upper)


@SETTINGS
@given(boxes(), st.integers(0, 3), special)
def test_bad_boxes_are_value_errors_naming_bounds(box, i, value):
    lower, upper = box
    lower = lower.copy()
    lower[i % lower.shape[0]] = value
    with pytest.raises(ValueError, match="bounds"):
        as_bounds((lower, upper))
    with pytest.raises(ValueError, match="lower must be < upper"):
        as_bounds((upper, box[0]))


# ---------------------------------------------------------------- Dataset
@jax.jit
def _add_batch(u, y):
    """An empty dataset of capacity 8 after ``add_batch(u, y)``, and its best value."""
    ds = Dataset.empty(8, u.shape[1]).add_batch(u, y)
    return ds, ds.best()[1]


@SETTINGS
@given(st.integers(1, 3), st.integers(1, 6), st.data())
def test_dataset_add_batch_keeps_counts_masks_and_failures(d, q, data):
    u = np.array(data.draw(st.lists(st.lists(st.floats(0, 1) | special, min_size=d, max_size=d),
                                    min_size=q, max_size=q)))
    y = np.array(data.draw(st.lists(finite | special, min_size=q, max_size=q)))
    ds, best = _add_batch(jnp.asarray(u, jnp.float32), jnp.asarray(y, jnp.float32))
    row_ok = np.all(np.isfinite(u), axis=1)
    n = int(row_ok.sum())
    assert int(ds.count) == n
    kept_y = y[row_ok]
    fails = ~np.isfinite(kept_y)
    np.testing.assert_array_equal(np.asarray(ds.failed)[:n], fails)
    assert np.all(np.isfinite(np.asarray(ds.y))) and np.all(np.isfinite(np.asarray(ds.u)))
    if np.isfinite(kept_y).any():
        worst = np.float32(kept_y[np.isfinite(kept_y)].max())
        assert np.all(np.asarray(ds.mask)[:n])  # failures are imputed ...
        np.testing.assert_array_equal(np.asarray(ds.y)[:n][fails], worst)  # ... with the worst value
        assert float(best) == np.float32(kept_y[np.isfinite(kept_y)].min())
    else:
        assert not np.any(np.asarray(ds.mask))
        assert float(best) == np.inf
    assert not np.any(np.asarray(ds.mask)[n:])


# ---------------------------------------------------------------- AskTell
@SETTINGS
@given(boxes(max_dim=3), st.sampled_from([np.float32, np.float64]), st.integers(1, 3), st.data())
def test_ask_tell_stays_in_the_box_and_refuses_bad_points(box, dtype, q, data):
    lower, upper = (np.asarray(b, dtype) for b in box)
    if not np.all(lower < upper):  # float32 rounding merged the bounds
        return
    d = lower.shape[0]
    x0 = (lower + 0.5 * (upper - lower))[None].astype(float)
    opt = AskTell(nbo.random_search(q=q), (lower, upper), 4 + 3 * q, jax.random.key(0), x0, [0.0])
    for _ in range(3):
        x = opt.ask()
        assert x.dtype == dtype and x.shape == ((d,) if q == 1 else (q, d))
        assert np.all(x >= lower) and np.all(x <= upper)
        y = np.array(data.draw(st.lists(finite | special, min_size=q, max_size=q)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            opt.tell(x, y)
    bad = np.array(x0[0])
    bad[data.draw(st.integers(0, d - 1))] = data.draw(special)
    with pytest.raises(ValueError, match="x has NaN/inf coordinates|outside the bounds"):
        opt.tell(bad, 1.0)
    n_valid = int(np.sum(np.isfinite(opt.y)))
    assert int(opt.valid.sum()) == n_valid
    assert all(np.all(np.isfinite(leaf)) for leaf in jax.tree.leaves(opt.state) if jnp.issubdtype(leaf.dtype, jnp.inexact))


# ---------------------------------------------------------------- run_bo
@settings(max_examples=10, deadline=None)
@given(boxes(max_dim=3), st.integers(1, 3), st.integers(1, 4), st.integers(0, 3), st.floats(0.1, 0.9))
def test_run_bo_with_failures_and_batches(box, q, n_init, n_iter, cut):
    lower, upper = box
    d = lower.shape[0]

    def objective(x):
        u = (x[0] - lower[0]) / (upper[0] - lower[0])
        return jnp.where(u > cut, jnp.nan, jnp.sum(x ** 2))

    problem = nbo.Problem("failing", d, (lower, upper), objective)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        hist = nbo.run_bo(jax.random.key(1), nbo.random_search(q=q), problem, n_init, n_iter)
    n = n_init + n_iter * q
    assert hist.x.shape == (n, d)
    x = np.asarray(hist.x)  # float32 run: inside the box as float32 numbers
    assert np.all(x >= lower.astype(x.dtype)) and np.all(x <= upper.astype(x.dtype))
    np.testing.assert_array_equal(np.asarray(hist.valid), np.isfinite(np.asarray(hist.y)))
    np.testing.assert_array_equal(hist.info["n_failed"][-1], np.sum(~np.asarray(hist.valid)))


# ---------------------------------------------------------------- every factory argument
def _numeric_parameters():
    cases = []
    for name, build in sorted(REGISTRY.items()):
        for p in inspect.signature(build.factory).parameters.values():
            if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) or p.name in build.fixed:
                continue
            if isinstance(p.default, (int, float)) and not isinstance(p.default, bool):
                cases.append((name, p.name, p.default))
    return cases


NUMERIC = _numeric_parameters()


def test_the_table_of_numeric_arguments_is_not_empty():
    assert len({n for n, _, _ in NUMERIC}) >= 10 and len(NUMERIC) >= 30


@pytest.mark.parametrize("name,arg,default", NUMERIC, ids=[f"{n}.{a}" for n, a, _ in NUMERIC])
def test_factories_refuse_nan_strings_and_fractions_naming_the_argument(name, arg, default):
    build = REGISTRY[name]
    for bad in (math.nan, "1", [1]):
        with pytest.raises((TypeError, ValueError), match=arg):
            build(**{arg: bad})
    if isinstance(default, int):
        with pytest.raises((TypeError, ValueError), match=arg):
            build(**{arg: 2.7})
