"""Neural-BO end to end (Phan-Trong et al. 2023, Algorithm 1)."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import nbo_jax as nbo
from nbo_jax import posterior as P
from nbo_jax.base import SearchRegion

SMALL = dict(width=32, acq_optimizer=dict(raw_samples=128, steps=0), epochs=5, minibatch_size=16)
SMALL_NET = {k: v for k, v in SMALL.items() if k != "acq_optimizer"}  # SMALL without its optimizer
PAPER_TS = dict(thompson="independent", scales="fixed")  # the paper's draws: identical across exact modes


def _state(algo, n=6, capacity=10, seed=0, problem=None):
    problem = nbo.benchmarks.get("branin") if problem is None else problem
    x0 = nbo.initial_design(jax.random.key(seed), problem.bounds, n)
    return problem, algo.init(jax.random.key(1), x0, jax.vmap(problem.objective)(x0),
                              bounds=problem.bounds, capacity=capacity)


def test_full_and_dual_give_the_same_run(x64):
    """Exact modes are interchangeable: same posterior, same proposals, same history."""
    problem = nbo.benchmarks.get("branin", noise_std=0.1)
    hists = {mode: nbo.run_bo(jax.random.key(2), nbo.neural_bo(**SMALL, **PAPER_TS, posterior=mode), problem,
                              n_init=4, n_iter=6)
             for mode in ("full", "dual")}
    np.testing.assert_allclose(hists["full"].x, hists["dual"].x, rtol=1e-7, atol=1e-9)


def test_state_posterior_matches_direct_computation(x64, compiled):
    for feature_params in ("initial", "current"):
        algo = compiled(nbo.neural_bo(**SMALL, posterior="dual", scales="fixed", feature_params=feature_params,
                                      input_embedding="linear"))
        problem, state = _state(algo)
        for i in range(2):
            x = algo.ask(state, jax.random.key(10 + i))
            state = algo.tell(state, x, problem.objective(x))
        u = jax.random.uniform(jax.random.key(5), (20, 2))
        post = algo.surrogate(state, u)
        if feature_params == "initial":
            net = nbo.networks.mlp(2, SMALL["width"], 2, use_bias=True)

            @jax.jit  # the references compiled (op by op: hundreds of small compilations)
            def reference(state):
                G = nbo.features.gradient_features(net.apply, state.model.params0, 2 * state.data.u - 1)
                Gc = nbo.features.gradient_features(net.apply, state.model.params0, 2 * u - 1)
                return (P.direct_variance(G, state.data.mask, Gc, 0.01, float(SMALL["width"])),
                        nbo.features.predict(net.apply, state.model.params, 2 * u - 1))

            direct, mean = reference(state)
            np.testing.assert_allclose(post.std ** 2, direct, rtol=1e-8)
            np.testing.assert_allclose(post.mean, mean, rtol=1e-12)
        assert np.all(np.asarray(post.std) > 0) and post.mean.shape == (20,)
        assert int(state.data.count) == 8


def test_training_fits_the_data(x64, compiled):
    """TrainNN reduces the squared error on the (standardized) observations."""
    algo = compiled(nbo.neural_bo(width=64, epochs=200, minibatch_size=8, learning_rate=1e-2,
                         acq_optimizer=dict(raw_samples=16), input_embedding="linear"))
    problem, state = _state(algo, n=8, capacity=8)
    net = nbo.networks.mlp(2, 64, 2, use_bias=True)
    z = 2 * state.data.u - 1
    y = state.data.standardized()[0]
    before = jnp.mean((nbo.features.predict(net.apply, state.model.params0, z) - y) ** 2)
    after = jnp.mean((nbo.features.predict(net.apply, state.model.params, z) - y) ** 2)
    assert float(after) < 0.2 * float(before), (float(before), float(after))


def test_custom_acquisition_is_used(compiled):
    """A user's acquisition decides: 'closest to the box center' must propose the center-most candidate."""
    center = lambda post, key: -jnp.linalg.norm(post.u - 0.5, axis=-1)
    algo = compiled(nbo.neural_bo(**{**SMALL, "acq_optimizer": dict(raw_samples=4096, steps=0)}, acquisition=center))
    problem, state = _state(algo)
    x = algo.ask(state, jax.random.key(0))
    u = problem.bounds.to_unit(x)
    assert float(jnp.linalg.norm(u - 0.5)) < 0.05
    with pytest.raises(TypeError, match="acquisition"):
        nbo.neural_bo(acquisition="ei")


def test_paper_preset_settings(compiled):
    """Paper preset: independent draws over uniform raw samples, no gradient steps, fixed scales;
    all posterior modes run and propose points in the box."""
    for mode in ("full", "diagonal", "dual"):
        algo = compiled(nbo.neural_bo(**SMALL_NET, preset="paper", posterior=mode))
        problem, state = _state(algo)
        x = algo.ask(state, jax.random.key(0))
        assert np.all(x >= problem.bounds.lower) and np.all(x <= problem.bounds.upper)
        assert type(state.model.posterior).__name__.lower().startswith(mode)


def test_nu_with_acquisition_is_refused():
    with pytest.raises(ValueError, match="nu"):
        nbo.neural_bo(nu=2.0, acquisition=nbo.acquisition.ei())
    with pytest.raises(ValueError, match="thompson='independent' .*acquisition= given"):
        nbo.neural_bo(thompson="independent", acquisition=nbo.acquisition.ei())


def test_pathwise_sample_of_the_algorithm_matches_its_posterior(x64, compiled):
    """The Thompson sample that ask maximizes: over many draws at fixed points, its mean is the
    network h(x; theta_t) and its variance (nu s)^2 sigma^2(x) of the surrogate (fitted scales)."""
    algo = compiled(nbo.neural_bo(**SMALL, nu=0.7, input_embedding="linear"))
    problem, state = _state(algo)
    assert type(state.model.posterior).__name__ == "DualState"  # scales="fit" runs in dual form
    u = jax.random.uniform(jax.random.key(4), (5, 2))
    post = algo.surrogate(state, u)
    net = nbo.networks.mlp(2, SMALL["width"], 2, use_bias=True)
    m = float(SMALL["width"])

    @jax.jit  # the references compiled (op by op: hundreds of small compilations)
    def reference(state):
        delta = jax.vmap(lambda k: P.sample_weights(state.model.posterior, k, state.model.post_lam, m))(
            jax.random.split(jax.random.key(5), 40_000))
        jvp = jax.vmap(lambda d: nbo.features.jacobian_vector_product(net.apply, state.model.params0, 2 * u - 1,
                                                                      d))(delta)
        r = state.data.standardized()[0] - nbo.features.predict(net.apply, state.model.params0,
                                                                2 * state.data.u - 1)
        lam, s2, _ = P.fit_scales(state.model.posterior.G, state.data.mask, r, m)
        Gc = nbo.features.gradient_features(net.apply, state.model.params0, 2 * u - 1)
        return jvp, lam, s2, P.direct_variance(state.model.posterior.G, state.data.mask, Gc, lam, m)

    jvp, lam, s2, direct = reference(state)
    draws = post.mean + 0.7 * state.model.post_scale * jvp / np.sqrt(m)
    np.testing.assert_allclose(draws.mean(axis=0), post.mean, atol=0.03 * float(jnp.max(0.7 * post.std)))
    np.testing.assert_allclose(draws.std(axis=0), 0.7 * post.std, rtol=0.03)
    # the fitted scales are the exact grid maximizer of the linearized network's likelihood
    np.testing.assert_allclose([state.model.post_lam, state.model.post_scale ** 2], [lam, s2], rtol=1e-10)
    # and the posterior is the exact one at the fitted lam: s^2 lam g^T U^{-1} g / m
    np.testing.assert_allclose(post.std ** 2, s2 * direct, rtol=1e-8)


def test_lam_refit_schedule_keeps_lam_and_refits_s2_between_refits(x64, compiled):
    """refit_every=3 (fitted scales): at tells 1 and 2 ``lam`` is kept, the factor extended
    row by row equals a new factorization at that ``lam`` and ``s^2`` is the likelihood's best
    for it (fit_scales on a one-point grid); at tell 3 both are the full grid fit again."""
    algo = compiled(nbo.neural_bo(**SMALL, refit_every=3, input_embedding="linear"))
    problem, state = _state(algo)
    net = nbo.networks.mlp(2, SMALL["width"], 2, use_bias=True)
    m = float(SMALL["width"])
    lam0 = float(state.model.post_lam)
    for i in range(3):
        x = algo.ask(state, jax.random.key(10 + i))
        state = algo.tell(state, x, problem.objective(x))
        G, mask = state.model.posterior.G, state.data.mask
        r = state.data.standardized()[0] - nbo.features.predict(net.apply, state.model.params0, 2 * state.data.u - 1)
        lam, s2, _ = P.fit_scales(G, mask, r, m)
        if i < 2:
            assert float(state.model.post_lam) == lam0
            lam_kept, s2_kept, _ = P.fit_scales(G, mask, r, m, lam_range=(lam0, lam0), n_grid=1)
            np.testing.assert_allclose(state.model.post_scale ** 2, s2_kept, rtol=1e-10)
            np.testing.assert_allclose(state.model.posterior.L, P.rebuild(state.model.posterior, G, mask, lam0, m).L,
                                       rtol=0, atol=1e-10)
        else:
            np.testing.assert_allclose([state.model.post_lam, state.model.post_scale ** 2], [lam, s2], rtol=1e-10)
    assert (int(state.tells), int(state.rows_told)) == (3, 9)


def test_circle_embedding_feeds_the_network_points_of_one_norm(x64, compiled):
    """``input_embedding="circle"``: the network sees ``(cos(pi u / 2), sin(pi u / 2))`` (2d
    inputs of squared norm d), in training, the features and the posterior alike."""
    u = jax.random.uniform(jax.random.key(3), (7, 3))
    z = nbo.networks.embed_inputs(u, "circle")
    assert z.shape == (7, 6)
    np.testing.assert_allclose(jnp.sum(z ** 2, axis=1), 3.0, rtol=1e-12)
    np.testing.assert_allclose(z[:, :3], np.cos(np.pi * np.asarray(u) / 2), rtol=1e-12)
    np.testing.assert_array_equal(nbo.networks.embed_inputs(u, "linear"), 2 * u - 1)
    algo = compiled(nbo.neural_bo(**SMALL, posterior="dual", scales="fixed", input_embedding="circle"))
    problem, state = _state(algo)
    net = nbo.networks.mlp(4, SMALL["width"], 2, use_bias=True)  # branin: d = 2 -> 4 inputs
    assert jax.tree.structure(net.init(jax.random.key(0))) == jax.tree.structure(state.model.params0)
    uc = jax.random.uniform(jax.random.key(5), (20, 2))
    post = algo.surrogate(state, uc)
    emb = lambda v: nbo.networks.embed_inputs(v, "circle")  # noqa: E731
    G = nbo.features.gradient_features(net.apply, state.model.params0, emb(state.data.u))
    Gc = nbo.features.gradient_features(net.apply, state.model.params0, emb(uc))
    np.testing.assert_allclose(post.std ** 2, P.direct_variance(G, state.data.mask, Gc, 0.01, float(SMALL["width"])),
                               rtol=1e-8)
    np.testing.assert_allclose(post.mean, nbo.features.predict(net.apply, state.model.params, emb(uc)), rtol=1e-12)
    with pytest.raises(ValueError, match="input_embedding must be one of"):
        nbo.neural_bo(input_embedding="sphere")


def _abstract_state(algo, n=8, problem=None):
    """The state's shapes and dtypes (``jax.eval_shape``: init traced, not run), for
    structure checks and :class:`Program` comparisons of ``ask``."""
    return jax.eval_shape(lambda: _state(algo, n=n, problem=problem)[1])


def test_default_input_embedding_is_the_circle_only_below_circle_below_dim(program):
    """The default preset's ``input_embedding="auto"`` is ``"circle"`` below ``CIRCLE_BELOW_DIM``
    (20) inputs and ``"linear"`` from there on (the network's input width says which: 2d or
    d); the paper preset's is ``"linear"``; an embedding given is kept at every dimension."""
    from nbo_jax.algorithms.neural_bo import CIRCLE_BELOW_DIM

    def first_layer_inputs(algo, d):  # the state's structure only: traced, not run
        state = _abstract_state(algo, problem=nbo.benchmarks.get("styblinski_tang", dim=d))
        return {leaf.shape[0] for leaf in jax.tree.leaves(state.model.params0) if leaf.ndim == 2} & {d, 2 * d}

    for d, default in ((5, "circle"), (CIRCLE_BELOW_DIM - 1, "circle"), (CIRCLE_BELOW_DIM, "linear")):
        width = {"circle": 2 * d, "linear": d}
        assert first_layer_inputs(nbo.neural_bo(**SMALL), d) == {width[default]}
        assert first_layer_inputs(nbo.neural_bo(**SMALL, input_embedding="auto"), d) == {width[default]}
        for given in ("circle", "linear"):
            assert first_layer_inputs(nbo.neural_bo(**SMALL, input_embedding=given), d) == {width[given]}
    paper = nbo.neural_bo(preset="paper", width=SMALL["width"])
    assert first_layer_inputs(paper, 5) == {5}
    # NeuralUCB and NeuralTS keep the bandit papers' inputs unless told otherwise
    for bandit in (nbo.neural_ucb, nbo.neural_ts):
        assert first_layer_inputs(bandit(**SMALL), 5) == {5}
        assert first_layer_inputs(bandit(**SMALL, input_embedding="circle"), 5) == {10}
    # the same computation as the option named: the same ask
    algos = [nbo.neural_bo(**SMALL, **kw) for kw in ({}, dict(input_embedding="circle"))]
    state = _abstract_state(algos[0], problem=nbo.benchmarks.get("styblinski_tang", dim=5))
    assert program(algos[0].ask, state, jax.random.key(2)) == program(algos[1].ask, state, jax.random.key(2))


def test_default_pathwise_sample_is_climbed_only_below_climb_below_dim(program):
    """Default Thompson sampling climbs its pathwise sample from the restarts below
    ``CLIMB_BELOW_DIM`` (20) inputs and takes the best raw sample from there on: its ``ask`` is
    the program of ``steps=200`` below and of ``steps=0`` from there on (and not the other);
    an ``acq_optimizer`` that names ``steps`` is kept at every dimension."""
    from nbo_jax.algorithms.neural_bo import CLIMB_BELOW_DIM

    for d, climbs in ((5, True), (CLIMB_BELOW_DIM, False)):
        algos = {name: nbo.neural_bo(**SMALL_NET, acq_optimizer=dict(raw_samples=128, **steps))
                 for name, steps in (("default", {}), ("steps=0", dict(steps=0)), ("steps=200", dict(steps=200)))}
        # the acquisition optimizer leaves init alone: one state serves the three asks
        state = _abstract_state(algos["default"], problem=nbo.benchmarks.get("styblinski_tang", dim=d))
        asks = {name: program(algo.ask, state, jax.random.key(2)) for name, algo in algos.items()}
        same, other = ("steps=200", "steps=0") if climbs else ("steps=0", "steps=200")
        assert asks["default"] == asks[same] and asks["default"] != asks[other], d


def test_the_climb_moves_the_pathwise_samples_minimum(compiled):
    """The programs above differ in what they ask: at ``d = 5`` the climbed sample's minimum
    is not the best raw sample."""
    algos = [compiled(nbo.neural_bo(**SMALL_NET, acq_optimizer=dict(raw_samples=128, steps=s))) for s in (0, 200)]
    _, state = _state(algos[0], n=8, problem=nbo.benchmarks.get("styblinski_tang", dim=5))
    asks = [np.asarray(algo.ask(state, jax.random.key(2))) for algo in algos]
    assert np.abs(asks[1] - asks[0]).max() > 1e-3


def test_default_nu_by_dimension(program):
    """The default preset's pathwise sample takes ``nu = HIGH_DIM_NU`` (0.1) from
    ``CLIMB_BELOW_DIM`` inputs on, ``MID_DIM_NU`` (0.25) from ``MID_NU_FROM_DIM`` (0.5 inside
    a trust region) and the preset's 0.5 below; a ``nu`` given is kept. The default's ``ask``
    is the program of its ``nu`` and not of the two others."""
    from nbo_jax.algorithms.neural_bo import CLIMB_BELOW_DIM, HIGH_DIM_NU, MID_DIM_NU, MID_NU_FROM_DIM, default_nu

    dims = (2, MID_NU_FROM_DIM - 1, MID_NU_FROM_DIM, CLIMB_BELOW_DIM - 1, CLIMB_BELOW_DIM, 50)
    assert [default_nu(d) for d in dims] == [0.5, 0.5, 0.25, 0.25, 0.1, 0.1]
    # inside a trust region the region keeps the asks local: 0.5 up to CLIMB_BELOW_DIM
    assert [default_nu(d, in_region=True) for d in dims] == [0.5, 0.5, 0.5, 0.5, 0.1, 0.1]
    nus = (0.5, MID_DIM_NU, HIGH_DIM_NU)
    for d, nu in ((5, 0.5), (MID_NU_FROM_DIM, MID_DIM_NU), (CLIMB_BELOW_DIM, HIGH_DIM_NU)):
        # the linear embedding at every dimension: the nu rule alone differs
        algos = {name: nbo.neural_bo(**SMALL, input_embedding="linear", **kw)
                 for name, kw in (("default", {}), *((v, dict(nu=v)) for v in nus))}
        state = _abstract_state(algos["default"], problem=nbo.benchmarks.get("styblinski_tang", dim=d))
        asks = {name: program(algo.ask, state, jax.random.key(2)) for name, algo in algos.items()}
        assert [v for v in nus if asks[v] == asks["default"]] == [nu], d


def test_default_nu_and_climb_count_a_mixed_space_parameters(program):
    """On a mixed space the exploration scale's and the climb's ``d`` is the number of
    parameters, not of unit-cube columns: two continuous inputs and a category of
    ``CLIMB_BELOW_DIM`` choices (3 parameters, 22 columns) take the preset's ``nu = 0.5`` and
    the climb, as a 3-input box does. The default's ``ask`` is the program of ``nu=0.5`` and
    not that of the 22-column rule (``HIGH_DIM_NU``, no climb). The pathwise Thompson sample is
    asked with ``categorical_acquisition="thompson"`` (the default asks EI on a space with a
    category)."""
    from nbo_jax.algorithms.neural_bo import CLIMB_BELOW_DIM, HIGH_DIM_NU
    from nbo_jax.search_space import Categorical, Continuous, search_space

    space = search_space([Continuous("a", -1.0, 1.0), Continuous("b", -1.0, 1.0),
                          Categorical("c", tuple(range(CLIMB_BELOW_DIM)))])
    problem = nbo.Problem("mixed", 3, space, lambda p: (p[0] - 0.3) ** 2 + (p[1] + 0.2) ** 2 + 0.01 * p[2])
    assert (space.dim, space.unit_dim) == (3, CLIMB_BELOW_DIM + 2)
    algos = {name: nbo.neural_bo(**SMALL_NET, acq_optimizer=dict(raw_samples=128, **opt),
                                 categorical_acquisition="thompson", **kw)
             for name, kw, opt in (("default", {}, {}), ("0.5", dict(nu=0.5), {}),
                                   ("by columns", dict(nu=HIGH_DIM_NU), dict(steps=0)))}
    state = _abstract_state(algos["default"], problem=problem)
    asks = {name: program(algo.ask, state, jax.random.key(2)) for name, algo in algos.items()}
    assert asks["default"] == asks["0.5"] and asks["default"] != asks["by columns"]


def test_default_nu_inside_a_trust_region(program):
    """Asked inside a trust region (``ask(..., region=...)``, as ``trust_region`` does), the
    default's pathwise sample at ``MID_NU_FROM_DIM`` inputs takes the preset's 0.5, not
    ``MID_DIM_NU``: its ``ask`` is the program of ``nu=0.5`` there, and over the whole box
    that of ``MID_DIM_NU``."""
    from nbo_jax.algorithms.neural_bo import MID_DIM_NU, MID_NU_FROM_DIM

    d = MID_NU_FROM_DIM
    algos = {name: nbo.neural_bo(**SMALL, **kw)
             for name, kw in (("default", {}), ("0.5", dict(nu=0.5)), ("mid", dict(nu=MID_DIM_NU)))}
    state = _abstract_state(algos["default"], problem=nbo.benchmarks.get("styblinski_tang", dim=d))
    region = SearchRegion(jax.ShapeDtypeStruct((2, d), jnp.float32))  # a box of the unit cube, as trust_region's
    inside = {name: program(algo.ask, state, jax.random.key(2), region) for name, algo in algos.items()}
    assert inside["default"] == inside["0.5"] and inside["default"] != inside["mid"]
    whole = {name: program(algo.ask, state, jax.random.key(2)) for name, algo in algos.items()}
    assert whole["default"] == whole["mid"] and whole["default"] != whole["0.5"]


def test_options_are_checked_at_the_factory():
    for kw, name in [(dict(thompson="joint"), "thompson"), (dict(scales="auto"), "scales"),
                     (dict(nu=float("nan")), "nu"), (dict(nu=-1.0), "nu"), (dict(lam=0.0), "lam"),
                     (dict(posterior="full"), "scales='fit' needs"),
                     (dict(thompson="independent", acq_optimizer=dict(steps=3)), "steps"),
                     (dict(acq_optimizer=dict(raw_samples=0)), "raw_samples"),
                     (dict(refit_every=0), "refit_every"),
                     (dict(scales="fixed", refit_every=5), "refit_every schedules the scale fit")]:
        with pytest.raises(ValueError, match=name):
            nbo.neural_bo(**kw)
    with pytest.raises(TypeError, match="acq_optimizer"):
        nbo.neural_bo(acq_optimizer=512)


@pytest.mark.parametrize("kw,name", [
    (dict(width=2.7), "width"), (dict(depth=2.0), "depth"), (dict(epochs=True), "epochs"),
    (dict(minibatch_size=16.0), "minibatch_size"), (dict(chunk_size=0.5), "chunk_size"), (dict(nu="1"), "nu"),
    (dict(lam="0.01"), "lam"), (dict(learning_rate="1e-3"), "learning_rate"), (dict(warm_start="yes"), "warm_start"),
    (dict(use_bias=1), "use_bias"), (dict(standardize=None), "standardize"), (dict(q=2.0), "q"),
    (dict(batch_size=16), "minibatch_size"), (dict(n_candidates=16), "n_candidates"),
    (dict(refit_every="never"), "refit_every"), (dict(refit_every=2.0), "refit_every"),
])
def test_wrong_types_raise_type_errors_naming_the_argument(kw, name):
    with pytest.raises(TypeError, match=name):
        nbo.neural_bo(**kw)


@pytest.mark.parametrize("kw,name", [
    (dict(lam=float("nan")), "lam"), (dict(lam=-1.0), "lam"), (dict(nu=float("inf")), "nu"),
    (dict(learning_rate=float("nan")), "learning_rate"), (dict(learning_rate=0.0), "learning_rate"),
    (dict(depth=1), "depth"), (dict(epochs=0), "epochs"), (dict(minibatch_size=0), "minibatch_size"),
    (dict(chunk_size=0), "chunk_size"), (dict(q=0), "q"), (dict(preset="fast"), "preset"),
    (dict(optimizer="rmsprop"), "optimizer"), (dict(activation="swish"), "activation"),
    (dict(feature_params="last"), "feature_params"), (dict(lam=jnp.array([0.1, 0.2])), "lam"),
])
def test_out_of_range_values_raise_value_errors_naming_the_argument(kw, name):
    with pytest.raises(ValueError, match=name):
        nbo.neural_bo(**kw)


def test_batch_rules_and_vmappable_scales():
    """Thompson sampling batches by independent draws, a user's (deterministic) acquisition
    by the constant liar; nu and lam may be scalar arrays (vmapped hyperparameters)."""
    assert nbo.neural_bo().batch_rule == "independent"
    assert nbo.neural_bo(preset="paper").batch_rule == "independent"
    algo = nbo.neural_bo(acquisition=nbo.acquisition.ei(), q=2)
    assert (algo.batch_rule, algo.q) == ("fantasy", 2)
    algo = nbo.neural_bo(nu=jnp.asarray(0.3), lam=jnp.asarray(0.02), q=3)
    assert (algo.q, algo.config.kwargs["q"]) == (3, 3)


def test_nan_observations_are_imputed_and_the_state_stays_finite():
    """A failed evaluation (initial or told) is stored as the worst observed value (flagged
    failed, never the incumbent); every state leaf stays finite (the fitted scales too) and
    the next ask is a finite point in the box; a point with a NaN coordinate is not recorded.
    (Fixed scales: tests/test_neural_ucb.py.)"""
    problem = nbo.benchmarks.get("branin")
    algo = nbo.neural_bo(width=16, epochs=2, acq_optimizer=dict(raw_samples=32, num_restarts=2, steps=2))
    x0 = nbo.initial_design(jax.random.key(0), problem.bounds, 5)
    y0 = jax.vmap(problem.objective)(x0).at[1].set(jnp.nan)
    init = jax.jit(lambda k, x, y: algo.init(k, x, y, bounds=problem.bounds, capacity=8))
    state = init(jax.random.key(1), x0, y0)
    ask, tell = jax.jit(algo.ask), jax.jit(algo.tell)
    state = tell(state, ask(state, jax.random.key(2)), jnp.inf)
    state = tell(state, jnp.array([jnp.nan, 1.0]), 3.0)
    assert int(state.data.count) == 6
    assert state.data.failed[:6].tolist() == [False, True, False, False, False, True]
    worst = float(jnp.max(jnp.where(state.data.failed, -jnp.inf, state.data.y)))
    np.testing.assert_array_equal(state.data.y[jnp.array([1, 5])], [worst, worst])
    assert all(np.all(np.isfinite(np.asarray(leaf))) for leaf in jax.tree.leaves(state)
               if jnp.issubdtype(leaf.dtype, jnp.inexact))
    x = ask(state, jax.random.key(3))
    assert bool(jnp.all(jnp.isfinite(x))) and bool(problem.bounds.contains(x))
    # the incumbent is the best real measurement (standardized), never an imputed failure
    best = int(np.nanargmin(np.asarray(y0)))
    incumbent, y_std = jax.jit(lambda s: (algo.surrogate(s, s.data.u[:6]).incumbent, s.data.standardized()[0]))(state)
    assert float(incumbent) == float(y_std[best])


def test_category_weights_scale_the_one_hot_columns_inputs(x64, compiled):
    """``category_weight``: the network sees each one-hot column's embedding times the weight
    (``2u - 1`` or its cosine and sine), the other columns as they are, in training, the
    features and the posterior alike; a box, a space of integers or a weight of 1 keeps every
    column's weight at 1; a wrong length or a weight <= 0 is refused, naming the argument."""
    from nbo_jax.networks import category_weights, embed_inputs
    from nbo_jax.search_space import Categorical, Continuous, Integer, search_space

    space = search_space([Continuous("a", -1.0, 1.0), Categorical("c", ("x", "y", "z")), Integer("k", 0, 3)])
    np.testing.assert_array_equal(category_weights(space, 0.25), [1.0, 0.25, 0.25, 0.25, 1.0])
    assert category_weights(None, 0.25) is None
    assert category_weights(search_space([Continuous("a", 0.0, 1.0), Integer("k", 0, 3)]), 0.25) is None
    u = jax.random.uniform(jax.random.key(3), (7, 5))
    w = np.array([1.0, 0.25, 0.25, 0.25, 1.0])
    np.testing.assert_allclose(embed_inputs(u, "linear", tuple(w)), (2 * np.asarray(u) - 1) * w, rtol=1e-12)
    z = np.asarray(embed_inputs(u, "circle", tuple(w)))
    np.testing.assert_allclose(z[:, :5], np.cos(np.pi * np.asarray(u) / 2) * w, rtol=1e-12)
    np.testing.assert_allclose(z[:, 5:], np.sin(np.pi * np.asarray(u) / 2) * w, rtol=1e-12)
    with pytest.raises(ValueError, match="column_weights must hold one weight per column"):
        embed_inputs(u, "circle", (1.0, 0.5))
    with pytest.raises(ValueError, match="category_weight"):
        nbo.neural_bo(category_weight=0.0)

    problem = nbo.Problem("mixed", 3, space, lambda p: (p[0] - 0.3) ** 2 + 0.1 * p[1] + 0.05 * (p[2] - 1) ** 2)
    algo = compiled(nbo.neural_bo(**SMALL, posterior="dual", scales="fixed", category_weight=0.25))
    _, state = _state(algo, n=8, capacity=10, problem=problem)
    assert state.model.space is space
    net = nbo.networks.mlp(10, SMALL["width"], 2, use_bias=True)  # 5 columns on the quarter circle
    emb = lambda v: embed_inputs(v, "circle", tuple(w))  # noqa: E731

    @jax.jit  # the references compiled (op by op: a hundred small compilations)
    def reference(state):
        uc = jax.vmap(space.round)(jax.random.uniform(jax.random.key(5), (20, 5)))
        G = nbo.features.gradient_features(net.apply, state.model.params0, emb(state.data.u))
        Gc = nbo.features.gradient_features(net.apply, state.model.params0, emb(uc))
        return (uc, P.direct_variance(G, state.data.mask, Gc, 0.01, float(SMALL["width"])),
                nbo.features.predict(net.apply, state.model.params, emb(uc)))

    uc, variance, mean = reference(state)
    post = algo.surrogate(state, uc)
    np.testing.assert_allclose(post.std ** 2, variance, rtol=1e-8)
    np.testing.assert_allclose(post.mean, mean, rtol=1e-12)


def test_default_asks_expected_improvement_on_a_space_with_a_category(program):
    """The default preset (``categorical_acquisition="ei"``, ``q = 1``) on a space with a
    categorical parameter asks the best raw sample by expected improvement: its ``ask`` is the
    program of ``acquisition=nbo.acquisition.ei()`` with ``steps=0``, not that of the pathwise
    Thompson sample's minimum (``categorical_acquisition="thompson"``); with ``steps`` given in
    ``acq_optimizer`` it climbs EI as ``acquisition=ei()`` with those steps does. A given ``nu``
    asks with the Thompson sample there (it is not dropped). On a box and on a space of
    integers every one of them is the Thompson sample's program."""
    from nbo_jax.search_space import Categorical, Continuous, Integer, search_space

    opt = dict(raw_samples=128)
    mixed = search_space([Continuous("a", -1.0, 1.0), Continuous("b", -1.0, 1.0), Categorical("c", (0, 1, 2))])
    integers = search_space([Continuous("a", -1.0, 1.0), Continuous("b", -1.0, 1.0), Integer("c", 0, 2)])
    for space, expect_ei in ((mixed, True), (integers, False), (None, False)):
        problem = (nbo.benchmarks.get("branin") if space is None else
                   nbo.Problem("mixed", 3, space, lambda p: (p[0] - 0.3) ** 2 + (p[1] + 0.2) ** 2 + 0.1 * p[2]))
        algos = {name: nbo.neural_bo(**SMALL_NET, acq_optimizer=dict(opt, **extra), **kw)
                 for name, kw, extra in (("categories", {}, {}), ("thompson", dict(categorical_acquisition="thompson"), {}),
                                         ("ei", dict(acquisition=nbo.acquisition.ei()), dict(steps=0)),
                                         ("nu given", dict(nu=0.5), {}),
                                         ("categories, 5 steps", {}, dict(steps=5)),
                                         ("ei, 5 steps", dict(acquisition=nbo.acquisition.ei()), dict(steps=5)))}
        state = _abstract_state(algos["thompson"], problem=problem)
        asks = {name: program(algo.ask, state, jax.random.key(2)) for name, algo in algos.items()}
        same, apart = ("ei", "thompson") if expect_ei else ("thompson", "ei")
        assert asks["categories"] == asks[same] and asks["categories"] != asks[apart], space
        assert asks["nu given"] == asks["thompson"], space
        if expect_ei:
            assert asks["categories, 5 steps"] == asks["ei, 5 steps"] != asks["ei"]
    with pytest.raises(ValueError, match="categorical_acquisition"):
        nbo.neural_bo(categorical_acquisition="ucb")


@pytest.mark.parametrize("kw, given", [(dict(acquisition=nbo.acquisition.ei()), "acquisition="),
                                       (dict(multi_objective=True), "multi_objective=True"),
                                       (dict(q=2), "q=2"), (dict(thompson="independent"), "thompson='independent'")])
def test_categorical_acquisition_that_would_not_ask_is_refused(kw, given):
    """A given ``categorical_acquisition`` where another rule asks on every space is refused,
    naming both arguments, not dropped: any value with ``acquisition=`` or several objectives,
    ``"ei"`` with ``q > 1`` or independent draws (``"thompson"`` is what those ask with)."""
    with pytest.raises(ValueError, match=rf"categorical_acquisition='ei' .*{re.escape(given)}"):
        nbo.neural_bo(categorical_acquisition="ei", **kw)
    if "acquisition" in kw or "multi_objective" in kw:
        with pytest.raises(ValueError, match=rf"categorical_acquisition='thompson' .*{re.escape(given)}"):
            nbo.neural_bo(categorical_acquisition="thompson", **kw)
    else:
        assert nbo.neural_bo(categorical_acquisition="thompson", **kw).q == kw.get("q", 1)


def test_fitted_category_weight_maximizes_the_ntk_marginal_likelihood(x64, compiled):
    """``category_weight="fit"`` (the default): the weight of ``CATEGORY_WEIGHT_GRID`` whose
    empirical-NTK GP at ``theta_0`` gives the targets the largest marginal likelihood, each
    weight's ``(lam, s^2)`` maximized on ``fit_scales``' grid; against numpy's log density of
    ``N(r, s^2 (K + lam I))``. A category that decides the objective gets the weight 1, one
    that does not a weight below 1; ``info`` reports it; ``"fit"`` needs fitted scales."""
    from nbo_jax.networks import category_weights, embed_inputs
    from nbo_jax.search_space import Categorical, Continuous, search_space
    from nbo_jax.surrogates.neural_linear import CATEGORY_WEIGHT_GRID

    space = search_space([Continuous("a", -1.0, 1.0), Continuous("b", -1.0, 1.0), Categorical("c", (0, 1, 2, 3))])
    chosen = {}
    for name, f in (("matters", lambda p: (p[0] - 0.2) ** 2 + 3.0 * (p[2] != 1)),
                    ("does not", lambda p: (p[0] - 0.2) ** 2 + (p[1] + 0.3) ** 2 + 0.0 * p[2])):
        problem = nbo.Problem("mixed", 3, space, f)
        algo = compiled(nbo.neural_bo(**SMALL))
        _, state = _state(algo, n=12, capacity=12, problem=problem)
        model, data = state.model, state.data
        lams = np.exp(np.linspace(np.log(1e-4), np.log(10.0), 64))
        best = []
        for w in CATEGORY_WEIGHT_GRID:
            net = nbo.networks.mlp(12, SMALL["width"], 2, use_bias=True)  # 6 columns on the quarter circle
            z = embed_inputs(data.u, "circle", category_weights(space, w))
            G = np.asarray(nbo.features.gradient_features(net.apply, model.params0, z))
            r = np.asarray(data.y) - np.asarray(nbo.features.predict(net.apply, model.params0, z))
            K = G @ G.T / SMALL["width"]
            lml = []
            for lam in lams:
                C = K + lam * np.eye(len(r))
                s2 = np.clip(r @ np.linalg.solve(C, r) / len(r), 1e-2, 1e2)
                lml.append(-0.5 * (r @ np.linalg.solve(s2 * C, r) + np.linalg.slogdet(s2 * C)[1]
                                   + len(r) * np.log(2 * np.pi)))
            best.append(max(lml))
        chosen[name] = float(model.category_weight)
        assert chosen[name] == CATEGORY_WEIGHT_GRID[int(np.argmax(best))], (name, best)
        assert float(algo.info(state)["category_weight"]) == chosen[name]
    assert chosen["matters"] == 1.0 and chosen["does not"] < 1.0, chosen
    with pytest.raises(ValueError, match="category_weight"):
        nbo.neural_bo(category_weight="fit", scales="fixed")


def test_boundary_penalty_is_the_mean_squared_inward_slope_at_the_faces(x64):
    """:func:`nbo_jax.training.boundary_penalty` of a linear function ``a . u`` with ``a = (1,
    -2, 5)`` on columns 0 and 1: at the faces ``u_0 = 0`` (slope 1 rises inward: 1) and ``u_1 =
    1`` (slope -2 falls toward it: 4), 0 on the other two, so ``5 / (2 * 2)`` per row whatever
    the row; column 2 is not penalized; a padded row (weight 0) adds nothing. A bowl centred in
    the cube rises toward every face: 0."""
    from nbo_jax.training import boundary_penalty

    a = jnp.array([1.0, -2.0, 5.0])
    u = jax.random.uniform(jax.random.key(0), (4, 3), jnp.float64)
    w = jnp.array([1.0, 1.0, 1.0, 0.0])
    linear = lambda p, x: jnp.dot(p, x)  # noqa: E731
    assert float(boundary_penalty(linear, a, u, w, (0, 1))) == pytest.approx(1.25, rel=1e-12)
    assert float(boundary_penalty(linear, a, u, w, (0,))) == pytest.approx(0.5, rel=1e-12)
    bowl = lambda p, x: jnp.sum((x - 0.5) ** 2) + jnp.dot(p, x) * 0.0  # noqa: E731
    assert float(boundary_penalty(bowl, a, u, w, (0, 1, 2))) == 0.0


def test_boundary_penalty_moves_the_trained_network_and_only_where_asked(x64):
    """``train_regression`` with the boundary penalty: fitted to targets that fall linearly
    toward ``u_0 = 1`` the network extrapolates the fall to the face without it, and its slope
    there is pulled up with ``kappa = 10`` (smaller penalty); no columns or ``kappa = 0``:
    the same parameters as without."""
    from nbo_jax.networks import mlp
    from nbo_jax.training import boundary_penalty, train_config, train_regression

    net = mlp(2, 32, 2, use_bias=True, dtype=jnp.float64)
    p0 = net.init(jax.random.key(0))
    u = jax.random.uniform(jax.random.key(1), (40, 2), jnp.float64) * jnp.array([0.7, 1.0])
    y = -u[:, 0]
    mask = jnp.ones(40, bool)
    cfg = train_config("adam", 1e-2, 200, 40, 0.0)
    plain = train_regression(net.apply, p0, p0, u, y, mask, jax.random.key(2), cfg)
    pulled = train_regression(net.apply, p0, p0, u, y, mask, jax.random.key(2), cfg,
                              boundary_columns=(0,), boundary_weight=10.0)
    w = jnp.ones(40)
    assert float(boundary_penalty(net.apply, pulled, u, w, (0,))) < 0.5 * float(boundary_penalty(net.apply, plain, u, w, (0,)))
    for kw in (dict(boundary_columns=(), boundary_weight=10.0), dict(boundary_columns=(0,), boundary_weight=0.0)):
        same = train_regression(net.apply, p0, p0, u, y, mask, jax.random.key(2), cfg, **kw)
        jax.tree.map(np.testing.assert_array_equal, same, plain)


def test_default_boundary_penalty_acts_on_discrete_spaces_only(program):
    """The default preset's ``boundary_penalty=None`` is ``DISCRETE_BOUNDARY_PENALTY`` on a
    search space with an integer or categorical parameter (its ``tell`` is the program of
    ``boundary_penalty=1.0``, not of 0) and 0 on a box (the program of 0); a given value acts on
    a box too; the paper preset's is 0, also on the integer space, where the default's is not."""
    from nbo_jax.algorithms.neural_bo import DISCRETE_BOUNDARY_PENALTY
    from nbo_jax.search_space import Continuous, Integer, search_space

    assert DISCRETE_BOUNDARY_PENALTY == 1.0
    integers = search_space([Continuous("a", -1.0, 1.0), Continuous("b", -1.0, 1.0), Integer("c", 0, 2)])
    for space, penalized in ((None, False), (integers, True)):  # the integer space last: the paper preset's below
        problem = (nbo.benchmarks.get("branin") if space is None else
                   nbo.Problem("mixed", 3, space, lambda p: (p[0] - 0.3) ** 2 + (p[1] + 0.2) ** 2 + 0.1 * p[2]))
        algos = {k: nbo.neural_bo(**SMALL, **kw) for k, kw in (
            ("default", {}), ("0", dict(boundary_penalty=0.0)), ("1", dict(boundary_penalty=1.0)))}
        state = _abstract_state(algos["0"], problem=problem)
        x = jnp.zeros(problem.dim)
        tells = {k: program(a.tell, state, x, jnp.zeros(())) for k, a in algos.items()}
        same, apart = ("1", "0") if penalized else ("0", "1")
        assert tells["default"] == tells[same] and tells["default"] != tells[apart], space
    paper = nbo.neural_bo(**SMALL, preset="paper")
    state = _abstract_state(paper, problem=problem)
    assert program(paper.tell, state, x, jnp.zeros(())) == program(
        nbo.neural_bo(**SMALL, preset="paper", boundary_penalty=0.0).tell, state, x, jnp.zeros(()))
    with pytest.raises(ValueError, match="boundary_penalty"):
        nbo.neural_bo(boundary_penalty=-1.0)
    with pytest.raises(TypeError, match="boundary_penalty"):
        nbo.neural_bo(boundary_penalty="yes")


def test_warm_start_continues_the_previous_networks_training(x64):
    """``AskTell(..., warm_start=previous)`` with the default preset (``warm_start=True``): the
    network's training starts from ``previous``'s trained weights, and its anchor ``theta_0`` is
    ``previous``'s, not a fresh draw from the new key. A start of the key's own initial weights
    is the cold ``init`` bit for bit; rebuilt over a growing history, the warm network fits the
    data better than networks retrained from ``theta_0`` each time (one tell's epochs). The
    paper preset (``warm_start=False``) takes no start; a start of another network is refused."""
    from nbo_jax.ask_tell import AskTell
    from nbo_jax.surrogates.neural_linear import NeuralLinearStart

    algo = nbo.neural_bo(**SMALL, outcome_transform="none")  # the network fits y as told
    box = ([-2.0, -2.0], [2.0, 2.0])
    X = np.asarray(jax.random.uniform(jax.random.key(3), (12, 2), minval=-2.0, maxval=2.0), np.float64)
    y = np.sin(2.0 * X[:, 0]) + X[:, 1] ** 2
    previous = AskTell(algo, box, 16, jax.random.key(0), X[:6], y[:6])
    start = previous.hyperparameters
    assert isinstance(start, NeuralLinearStart)
    jax.tree.map(np.testing.assert_array_equal, start.params, previous.state.model.params)
    warm = AskTell(algo, box, 16, jax.random.key(1), X[:7], y[:7], warm_start=previous)
    cold = AskTell(algo, box, 16, jax.random.key(1), X[:7], y[:7])
    jax.tree.map(np.testing.assert_array_equal, warm.state.model.params0, start.params0)
    assert not np.allclose(jax.tree.leaves(cold.state.model.params0)[0], jax.tree.leaves(start.params0)[0])
    init = jax.jit(algo.init, static_argnames="capacity")
    k0 = jax.random.split(jax.random.key(1))[1]  # the key AskTell gives init
    args = (k0, jnp.asarray(X[:7]), jnp.asarray(y[:7]))
    bounds = nbo.Bounds(*map(jnp.asarray, box))
    fresh = cold.state.model.params0  # the cold network's theta_0, drawn from k0
    again = init(*args, capacity=16, bounds=bounds, start=NeuralLinearStart(fresh, fresh))
    jax.tree.map(np.testing.assert_array_equal, again.model.params, cold.state.model.params)

    def fit_error(opt):
        return float(np.mean((np.asarray(opt.algorithm.surrogate(opt.state, opt.state.data.u).mean)
                              - np.asarray(opt.state.data.y))[: len(opt.y)] ** 2))

    chained, errors = previous, {}
    for n in (7, 12, 12, 12):  # an optimizer rebuilt from the history, as a sampler's trials rebuild it
        chained = AskTell(algo, box, 16, jax.random.key(n), X[:n], y[:n], warm_start=chained)
    errors["warm"] = fit_error(chained)
    errors["cold"] = fit_error(AskTell(algo, box, 16, jax.random.key(12), X, y))
    assert errors["warm"] < 0.5 * errors["cold"], errors
    assert algo.model.hyperparameters is not None and nbo.neural_bo(**SMALL, preset="paper").model.hyperparameters is None
    narrow = jax.tree.map(lambda a: a[..., :1], start)  # another network's weights
    with pytest.raises(ValueError, match="start must be the linearized network's NeuralLinearStart"):
        init(*args, capacity=16, bounds=bounds, start=narrow)
