"""NeuralGreedy: SimpleSMB / PosteriorSMB (Paria et al. 2022, "Be Greedy", Algorithms 1-3,
Appendix F.2)."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jax.flatten_util import ravel_pytree

import nbo_jax as nbo
from nbo_jax.algorithms.neural_greedy import (
    PRESETS,
    exploration_steps,
    fit_smb,
    linearize,
    neural_greedy,
    ntk_mlp,
    perturbation,
    smb_loss,
    zero_last_layer,
)
from nbo_jax.transforms.batch import batched
from nbo_jax.features import gradient_features, predict

# One small algorithm shared by several tests (jitted once: compilation dominates test time).
MID_KW = dict(width=32, train_steps=100, surrogate_samples=6,
              acq_optimizer=dict(raw_samples=256, num_restarts=4, steps=100, learning_rate=0.02))
MID = neural_greedy(**MID_KW)
MID_ASK, MID_TELL, MID_SURROGATE = jax.jit(MID.ask), jax.jit(MID.tell), jax.jit(MID.surrogate)


def _state(algo, n=6, capacity=10, seed=0, problem=None):
    problem = problem or nbo.benchmarks.get("branin")
    x0 = nbo.initial_design(jax.random.key(seed), problem.bounds, n)
    init = jax.jit(lambda k, x, y: algo.init(k, x, y, bounds=problem.bounds, capacity=capacity))
    return problem, init(jax.random.key(1), x0, jax.vmap(problem.objective)(x0))


# --------------------------------------------------------------------------- network
def test_ntk_parameterization_by_hand(x64):
    """f(z) = g/sqrt(m) W2 tanh(g/sqrt(d) W1 z + g b1) + g b2 (Paria et al. 2022, Appendix A), N(0,1)
    weights, final bias 0 at init (Appendix F.2)."""
    gamma, d, m = 1.7, 3, 2000
    net = ntk_mlp(d, m, 2, gamma=gamma)
    params = jax.jit(net.init)(jax.random.key(0))
    W1, b1 = np.asarray(params["layer_0"]["kernel"]), np.asarray(params["layer_0"]["bias"])
    W2, b2 = np.asarray(params["layer_1"]["kernel"]), np.asarray(params["layer_1"]["bias"])
    assert np.all(b2 == 0.0)
    assert abs(W1.std() - 1.0) < 0.03 and abs(b1.std() - 1.0) < 0.05 and abs(W2.std() - 1.0) < 0.05
    z = np.array([0.3, -0.8, 0.5])
    b2 = np.array([0.4])  # a non-zero output bias, to check it is scaled by gamma
    params["layer_1"]["bias"] = jnp.asarray(b2)
    hand = gamma / np.sqrt(m) * np.tanh(gamma / np.sqrt(d) * z @ W1 + gamma * b1) @ W2 + gamma * b2
    np.testing.assert_allclose(net.apply(params, jnp.asarray(z)), hand[0], rtol=1e-12)
    assert net.num_params == ravel_pytree(params)[0].size
    assert ntk_mlp(2, 5, 3).num_params == ravel_pytree(ntk_mlp(2, 5, 3).init(jax.random.key(0)))[0].size


# --------------------------------------------------------------------------- exact check
@pytest.mark.parametrize("posterior", [False, True])
def test_linearized_fit_equals_ntk_closed_form(x64, posterior):
    """The linearized network trained to convergence on the SMB loss is kernel ridge regression
    with the empirical NTK (Paria et al. 2022, Propositions 1-2).

    Derivation. Let g(x) = grad_theta f(x; theta_0) (length p), G the (n, p) matrix of the
    valid rows, f_lin(x; theta) = f_0(x) + g(x).Delta with Delta = theta - theta_0, and
    r = Y' - nu f_0(X) - nu delta(X) (delta = 0 for SimpleSMB), Y' = Y + nu eps. The loss
    ||r - nu G Delta||^2 + sigma2 nu^2 ||Delta||^2 is a ridge problem with design nu G:
        Delta* = (nu^2 G^T G + sigma2 nu^2 I)^{-1} nu G^T r = nu^{-1} G^T (G G^T + sigma2 I)^{-1} r.
    The acquisition nu (f_lin(x; theta*) + delta(x)) is therefore
        nu f_0(x) + nu delta(x) + g(x) G^T (G G^T + sigma2 I)^{-1} r
      = nu (f_0 + delta)(x) + Theta_xX (Theta_XX + nu^2 sigma2 I)^{-1} (Y + nu eps - nu (f_0 + delta)(X))
    with Theta = nu^2 <g, g'>: the propositions' sigma^2 becomes nu^2 sigma2 in that scaling (it is
    exactly the propositions' form with Theta = <g, g'>). nu = 2 below makes a wrong factor fail.
    Masked rows (a NaN-like garbage target and an empty row) must not count.
    """
    nu, sigma2, d, m = 2.0, 0.5, 2, 8
    net = ntk_mlp(d, m, 2, gamma=1.3)
    k = jax.random.split(jax.random.key(3), 6)
    params0 = jax.jit(net.init)(k[0])
    tilde = jax.jit(lambda kk: zero_last_layer(net.init(kk), 2))(k[1]) if posterior else None
    cap = 8
    z = jax.random.uniform(k[2], (cap, d), minval=-1, maxval=1)
    y = jnp.sin(3 * z[:, 0]) + z[:, 1] ** 2
    mask = jnp.array([True] * 6 + [False, False])
    y = y.at[6].set(1e6)  # garbage in a masked row
    eps = jnp.sqrt(sigma2) * jax.random.normal(k[3], (cap,))
    y_pert = y + nu * eps
    delta = jax.jit(perturbation, static_argnums=0)(net.apply, params0, tilde, z) if posterior else None
    f_lin = linearize(net.apply, params0)

    zt = jax.random.uniform(k[4], (5, d), minval=-1, maxval=1)

    @jax.jit
    def closed_form():
        G = gradient_features(net.apply, params0, z[:6])
        Gt = gradient_features(net.apply, params0, zt)
        f0, f0t = predict(net.apply, params0, z[:6]), predict(net.apply, params0, zt)
        if posterior:
            f0 = f0 + delta[:6]
            f0t = f0t + perturbation(net.apply, params0, tilde, zt)
        Theta = nu ** 2 * G @ G.T
        Theta_t = nu ** 2 * Gt @ G.T
        return nu * f0t + Theta_t @ jnp.linalg.solve(Theta + nu ** 2 * sigma2 * jnp.eye(6), y_pert[:6] - nu * f0)

    @jax.jit
    def acquisition(params):
        out = predict(f_lin, params, zt)
        return nu * (out + perturbation(net.apply, params0, tilde, zt)) if posterior else nu * out

    closed = closed_form()
    # (a) exact minimizer of the module's loss (quadratic in theta: one Newton step)
    theta0, unravel = ravel_pytree(params0)
    loss = lambda th: smb_loss(f_lin, unravel(th), params0, z, y_pert, mask, nu=nu, sigma2=sigma2, delta=delta)
    H = jax.jit(jax.hessian(loss))(theta0)
    grad = jax.jit(jax.grad(loss))
    theta_star = theta0 - jnp.linalg.solve(H, grad(theta0))
    np.testing.assert_allclose(acquisition(unravel(theta_star)), closed, rtol=1e-8, atol=1e-10)

    # (b) the module's training routine (full-batch steps on the masked rows), run to convergence
    #     with gradient descent at step 1/L of its normalized loss smb_loss / (2 n nu^2)
    lr = 1.0 / float(jnp.linalg.eigvalsh(H / (2 * 6 * nu ** 2))[-1])
    fitted = jax.jit(lambda p0: fit_smb(f_lin, p0, z, y_pert, mask, jax.random.key(0), nu=nu, sigma2=sigma2,
                                        steps=6000, optimizer=optax.sgd(lr), delta=delta))(params0)
    np.testing.assert_allclose(acquisition(fitted), closed, rtol=1e-6, atol=1e-6)
    # and the loss the routine minimizes is the module's loss: theta* has zero gradient
    assert float(jnp.linalg.norm(grad(ravel_pytree(fitted)[0]))) < 1e-6


# --------------------------------------------------------------------------- PosteriorSMB delta
def test_delta_jvp_equals_gradient_inner_product(x64):
    net = ntk_mlp(3, 32, 3, gamma=0.8)
    z = jax.random.uniform(jax.random.key(2), (7, 3), minval=-1, maxval=1)

    @jax.jit
    def both():
        p0, pt = net.init(jax.random.key(0)), zero_last_layer(net.init(jax.random.key(1)), 3)
        explicit = gradient_features(net.apply, p0, z) @ ravel_pytree(pt)[0]
        return perturbation(net.apply, p0, pt, z), explicit, pt

    via_jvp, explicit, pt = both()
    np.testing.assert_allclose(via_jvp, explicit, rtol=1e-10, atol=1e-12)
    assert np.all(np.asarray(pt["layer_2"]["kernel"]) == 0) and np.all(np.asarray(pt["layer_2"]["bias"]) == 0)
    assert np.any(np.asarray(pt["layer_0"]["kernel"]) != 0)


def test_delta_has_zero_mean_and_the_hidden_layer_gradient_variance(x64):
    """E[delta(x)] = 0 over initializations; given theta_0, Var_{theta~}[delta(x)] =
    ||grad_{hidden layers} f(x; theta_0)||^2 (theta~ is N(0, I) off the last layer)."""
    d, m, N = 2, 16, 4000
    net = ntk_mlp(d, m, 2, gamma=1.0)
    z = jnp.array([[0.2, -0.5], [-0.9, 0.7], [0.0, 0.0]])
    keys = jax.random.split(jax.random.key(5), (N, 2))

    def one(k, fixed_theta0):
        p0 = net.init(jax.random.key(99) if fixed_theta0 else k[0])
        return perturbation(net.apply, p0, zero_last_layer(net.init(k[1]), 2), z)

    # (N, 3) each: theta_0 and theta~_0 both random; theta_0 fixed and theta~_0 random
    deltas, deltas_c = jax.jit(jax.vmap(lambda k: (one(k, False), one(k, True))))(keys)
    se = deltas.std(0) / np.sqrt(N)
    assert np.all(np.abs(deltas.mean(0)) < 4 * se), (deltas.mean(0), se)
    assert np.all(deltas.std(0) > 0.1)  # not trivially zero

    p0 = net.init(jax.random.key(99))
    g = gradient_features(net.apply, p0, z)
    n_hidden = d * m + m  # layer_0 kernel and bias come first in ravel order
    expected_var = jnp.sum(g[:, :n_hidden] ** 2, axis=1)
    np.testing.assert_allclose(jnp.mean(deltas_c ** 2, 0), expected_var, rtol=0.1)
    assert np.all(np.abs(deltas_c.mean(0)) < 4 * jnp.sqrt(expected_var / N))


# --------------------------------------------------------------------------- exploration phase
def test_exploration_steps_formula():
    cases = {(2, 25): 2, (2, 1000): 25, (10, 1000): 50, (20, 1000): 75, (3, 400): 15, (1, 10): 1, (2, 0): 0}
    for (d, T), want in cases.items():
        assert exploration_steps(d, T) == want, (d, T)


def test_exploration_phase_then_greedy_minimizer(x64):
    """During the first T_e iterations ask returns the uniform point of its key (Paria et al. 2022,
    Alg. 1, lines 2-5; here T = capacity - n_init = 20, d = 2: T_e = round(clip(10, 0.5, 1.5))
    = 2). Afterwards the greedy point: its acquisition value is no worse than that of any of
    4096 fresh uniform points (Alg. 1, line 8), for the network ask fitted (rebuilt here from
    the same key path), and it is the point of the optimizer's stages run by hand (raw samples
    -> 4 restarts by Boltzmann sampling -> L-BFGS-B of at most 100 iterations -> best of the
    pool)."""
    import sys

    ng = sys.modules["nbo_jax.algorithms.neural_greedy"]  # the module (the package exports the factory)

    problem, state = _state(MID, n=4, capacity=24)
    assert int(state.n_explore) == 2
    lo, hi = problem.bounds

    def uniform_of(key):
        return lo + jax.random.uniform(jax.random.split(key)[0], (2,)) * (hi - lo)

    for i in range(3):
        key = jax.random.key(40 + i)
        x = MID_ASK(state, key)
        if i < 2:
            np.testing.assert_allclose(x, uniform_of(key), rtol=1e-12)
            state = MID_TELL(state, x, problem.objective(x))
    assert not np.allclose(x, uniform_of(key))

    # ask's key path: split(key)[1] -> split(.) = (k_fit, k_cand); split(k_fit, 4) = (init, tilde, eps, train)
    k_fit, k_cand = jax.random.split(jax.random.split(key)[1])
    net = ntk_mlp(2, MID_KW["width"], 2, gamma=PRESETS["default"]["gamma"])
    k_init, _, _, k_train = jax.random.split(k_fit, 4)
    data = state.data
    grid = jax.random.uniform(jax.random.key(0), (4096, 2))
    u = problem.bounds.to_unit(x)

    @jax.jit
    def check():
        params = ng.fit_smb(net.apply, net.init(k_init), 2 * data.u - 1, data.standardized()[0], data.mask,
                            k_train, nu=1.0, sigma2=0.0, steps=MID_KW["train_steps"],
                            optimizer=optax.adam(PRESETS["default"]["learning_rate"]))
        util = lambda v: -net.apply(params, 2 * v - 1)  # noqa: E731
        aopt = nbo.optimize.as_acq_optimizer(MID_KW["acq_optimizer"], default=PRESETS["default"]["acq_optimizer"])
        assert (aopt.n_uniform, aopt.n_local, aopt.method, aopt.raw_sampler) == (192, 64, "lbfgsb", "sobol")
        k_raw, k_start = jax.random.split(k_cand)
        raw = nbo.optimize.candidate_set(k_raw, data, 192, 64, local_std=0.05, n_best=5, sampler="sobol")
        by_hand = nbo.optimize.refine_argmax(k_start, jax.vmap(util)(raw), raw, jax.vmap(util), aopt)
        return net.apply(params, 2 * u - 1), predict(net.apply, params, 2 * grid - 1), by_hand

    at_x, on_grid, by_hand = check()
    assert float(at_x) <= float(jnp.min(on_grid)) + 1e-9, (float(at_x), float(jnp.min(on_grid)))
    np.testing.assert_allclose(u, by_hand, rtol=1e-10, atol=1e-12)


def test_exploration_phase_in_a_batch(x64):
    """With q > 1 (constant liar) the fantasized points count as evaluations: a batch asked
    with T_e = 2 evaluations of exploration left is two uniform points (those of the batch's
    keys) and one greedy point; with T_e larger than q it is q uniform points."""
    problem, state = _state(MID, n=4, capacity=24)
    assert int(state.n_explore) == 2
    ask3 = jax.jit(batched(MID, 3).ask)
    lo, hi = problem.bounds
    key = jax.random.key(7)
    uniform = [lo + jax.random.uniform(jax.random.split(k)[0], (2,)) * (hi - lo) for k in jax.random.split(key, 3)]
    X = ask3(state, key)
    np.testing.assert_allclose(X[:2], uniform[:2], rtol=1e-12)
    assert not np.allclose(X[2], uniform[2])
    np.testing.assert_allclose(ask3(state._replace(n_explore=jnp.asarray(5, jnp.int32)), key), uniform, rtol=1e-12)


def test_exploration_argument():
    x0 = jnp.full((4, 2), 0.5)
    for exploration, want in (("auto", 2), (0, 0), (5, 5)):
        algo = neural_greedy(width=4, exploration=exploration)
        state = algo.init(jax.random.key(0), x0, jnp.zeros(4), bounds=(jnp.zeros(2), jnp.ones(2)), capacity=24)
        assert int(state.n_explore) == want


def test_exploration_counts_a_mixed_space_parameters():
    """``exploration="auto"``'s ``d`` is the number of parameters: a continuous input and a
    category of 12 choices (2 parameters, 13 unit-cube columns) with ``T = 1000`` explore for
    ``clip(5 * 2, 25, 75) = 25`` steps, not the 13-column count's ``5 * 13 = 65``."""
    from nbo_jax.search_space import Categorical, Continuous, search_space

    space = search_space([Continuous("a", 0.0, 1.0), Categorical("c", tuple(range(12)))])
    assert (space.dim, space.unit_dim) == (2, 13)
    x0 = jnp.asarray([[0.2, 0.0], [0.7, 5.0], [0.4, 11.0]])
    state = neural_greedy(width=4).init(jax.random.key(0), x0, jnp.zeros(3), bounds=space, capacity=1003)
    assert int(state.n_explore) == exploration_steps(2, 1000) == 25
    assert exploration_steps(13, 1000) == 65


# --------------------------------------------------------------------------- algorithm
def test_nan_observation_is_imputed_and_surrogate_fits_data(x64):
    """A NaN observation is a failed evaluation: stored as the worst observed value (flagged
    failed, never the incumbent), every state leaf stays finite; ``surrogate`` (mean/std over
    independent fits) reproduces the standardized data, the imputed row included (a failure
    away from the other points), and is more uncertain away from it."""
    problem, state = _state(MID, n=8, capacity=24)
    state = MID_TELL(state, jnp.array([-4.5, 14.0]), jnp.nan)
    assert bool(state.data.failed[8]) and bool(state.data.mask[8]) and int(state.data.count) == 9
    assert float(state.data.y[8]) == float(jnp.max(state.data.y[:8]))
    assert all(bool(jnp.all(jnp.isfinite(leaf))) for leaf in jax.tree.leaves(state)
               if jnp.issubdtype(leaf.dtype, jnp.inexact))
    state = state._replace(n_explore=jnp.asarray(0, jnp.int32))
    x = MID_ASK(state, jax.random.key(0))
    assert np.all(np.isfinite(x)) and np.all(x >= problem.bounds.lower) and np.all(x <= problem.bounds.upper)
    far = jax.random.uniform(jax.random.key(3), (16, 2))
    post = MID_SURROGATE(state, jnp.concatenate([state.data.u[:9], far]))
    y_std = state.data.standardized()[0][:9]
    assert float(jnp.max(jnp.abs(post.mean[:9] - y_std))) < 0.15, post.mean[:9] - y_std
    assert float(jnp.mean(post.std[:9])) < float(jnp.mean(post.std[9:]))
    assert float(post.incumbent) == float(jnp.min(y_std))


def test_presets():
    """Paper preset = Paria et al. 2022, Appendix F.2 (train steps: our decision)."""
    p = PRESETS["paper"]
    a = p["acq_optimizer"]
    assert (p["width"], p["gamma"], p["learning_rate"], a.num_restarts, a.steps, a.learning_rate) == (
        5000, 1.0, 1e-3, 10, 500, 0.01)
    assert a.raw_samples == a.num_restarts and a.local_fraction == 0.0  # uniform random starts
    d = PRESETS["default"]["acq_optimizer"]
    assert (d.raw_samples, d.num_restarts, d.steps, d.method, d.raw_sampler, d.restarts, d.local_fraction,
            d.local_std, d.n_best) == (512, 10, 200, "lbfgsb", "sobol", "boltzmann", 0.25, 0.05, 5)
    assert (a.method, a.raw_sampler, a.restarts) == ("adam", "uniform", "top")
    algo = neural_greedy(preset="paper", width=32, train_steps=20)
    problem, state = _state(algo, n=5, capacity=6)
    x = jax.jit(algo.ask)(state, jax.random.key(0))
    assert np.all(x >= problem.bounds.lower) and np.all(x <= problem.bounds.upper)


@pytest.mark.parametrize("kwargs,name", [
    (dict(variant="thompson"), "variant"), (dict(preset="fast"), "preset"), (dict(width=0), "width"),
    (dict(depth=1), "depth"), (dict(gamma=0.0), "gamma"), (dict(nu=-1.0), "nu"), (dict(sigma2=-0.1), "sigma2"),
    (dict(activation="swish"), "activation"), (dict(learning_rate=0.0), "learning_rate"),
    (dict(train_steps=0), "train_steps"), (dict(exploration="always"), "exploration"),
    (dict(exploration=-1), "exploration"), (dict(acq_optimizer=dict(raw_samples=0)), "raw_samples"),
    (dict(acq_optimizer=dict(steps=-1)), "steps"), (dict(acq_optimizer=dict(learning_rate=-0.1)), "learning_rate"),
    (dict(acq_optimizer=dict(local_fraction=1.0)), "local_fraction"), (dict(surrogate_samples=0), "surrogate_samples"),
    (dict(nu=float("nan")), "nu"), (dict(gamma=float("inf")), "gamma"), (dict(sigma2=float("nan")), "sigma2"),
    (dict(learning_rate=float("nan")), "learning_rate"), (dict(q=0), "q"), (dict(nu=jnp.zeros(2)), "nu"),
])
def test_bad_arguments_raise(kwargs, name):
    with pytest.raises(ValueError, match=name):
        neural_greedy(**kwargs)


def test_wrong_types_raise():
    for kw, name in [(dict(width=2.5), "width"), (dict(gamma="big"), "gamma"), (dict(nu="1"), "nu"),
                     (dict(sigma2=True), "sigma2"), (dict(learning_rate="0.01"), "learning_rate"),
                     (dict(depth=2.0), "depth"), (dict(train_steps=10.0), "train_steps"),
                     (dict(exploration=2.5), "exploration"), (dict(surrogate_samples=None), "surrogate_samples"),
                     (dict(standardize=1), "standardize"), (dict(q=2.0), "q"), (dict(batch_size=8), "q=.*full-batch")]:
        with pytest.raises(TypeError, match=name):
            neural_greedy(**kw)
    with pytest.raises(TypeError, match="acq_optimizer"):
        neural_greedy(acq_optimizer=512)
    with pytest.raises(TypeError, match="acq_optimizer"):
        neural_greedy(acq_optimizer=dict(n_raw=512))
    with pytest.raises(TypeError):
        neural_greedy(n_raw=512)  # the old option names are gone


def test_both_variants_are_deterministic_per_key_under_run_bo_vmap():
    """Branin, noise 'paper', 5 initial + 5 iterations, 2 seeds vmapped (library defaults): the
    same keys give the same histories, different keys different ones. How well they optimize
    is measured by ``benchmarks/beats_random.py``."""
    problem = nbo.benchmarks.get("branin", noise_std="paper")
    keys = jax.random.split(jax.random.key(2024), 2)
    for variant in ("simple", "posterior"):
        algo = neural_greedy(variant)
        assert algo.name == ("neural-greedy" if variant == "simple" else "neural-greedy-posterior")
        run = jax.jit(jax.vmap(lambda k: nbo.run_bo(k, algo, problem, n_init=5, n_iter=5)))
        h = run(keys)
        assert h.x.shape == (2, 10, 2)
        assert np.all(h.x >= problem.bounds.lower) and np.all(h.x <= problem.bounds.upper)
        np.testing.assert_array_equal(run(keys).x, h.x)
        assert not np.allclose(h.x[0, 5:], h.x[1, 5:])
