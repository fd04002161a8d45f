"""Acquisition errors at the call that caused them: a bad factory argument, and a custom
acquisition whose utility has the wrong shape (checked once, when ``ask`` is traced)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import nbo_jax as nbo

SMALL = dict(acq_optimizer=dict(raw_samples=32, num_restarts=2, steps=2))


@pytest.mark.parametrize("make, arg", [(lambda: nbo.acquisition.thompson("a"), "nu"),
                                       (lambda: nbo.acquisition.lcb(None), "beta"),
                                       (lambda: nbo.acquisition.ei("0.1"), "xi"),
                                       (lambda: nbo.acquisition.lcb_feasible(2.0, beta_c=["x"]), "beta_c")])
def test_bad_factory_argument_is_named_at_the_call(make, arg):
    with pytest.raises(TypeError, match=rf": {arg} must be a real number or a numeric array"):
        make()


def test_factories_accept_numbers_arrays_and_lists():
    for acq in (nbo.acquisition.thompson(2), nbo.acquisition.lcb(np.float32(1.0)),
                nbo.acquisition.lcb_feasible(1.0, beta_c=[1.0, 2.0]), nbo.acquisition.ei(jnp.asarray(0.1))):
        assert callable(acq)


def test_wrong_utility_shape_names_the_acquisition():
    def three_values(post, key):
        return post.mean[:3]

    algo = nbo.gp_bo(acquisition=three_values, fit_steps=2, **SMALL)
    x0 = np.array([[0.1, 0.2], [0.5, 0.9], [0.8, 0.3]])
    # init compiled (run op by op it costs seconds of per-op compiles); ask called as it is
    init = jax.jit(algo.init, static_argnames=("capacity",))
    state = init(jax.random.key(0), x0, np.array([1.0, 0.5, 2.0]),
                 bounds=nbo.types.as_bounds(([0.0, 0.0], [1.0, 1.0])), capacity=5)
    with pytest.raises(ValueError, match=r"acquisition '.*three_values' returned shape \(3,\) for 32 candidates.*"
                                         r"shape \(N,\) = \(32,\)"):
        algo.ask(state, jax.random.key(1))
