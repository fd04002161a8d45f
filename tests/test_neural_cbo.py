"""Neural-CBO (Phan-Trong 2024, PhD thesis, Chapter 4, Algorithm 4): network, posterior,
acquisition, loop."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree
from scipy.stats import norm

import nbo_jax as nbo
from nbo_jax import acquisition as acq_lib
from nbo_jax.acquisition import SurrogatePosterior
from nbo_jax.algorithms.neural_cbo import neural_cbo
from nbo_jax.networks import factor_diag, factor_kernel, zero_init_mlp
from nbo_jax.optimize import candidate_set

BRANIN_C = lambda x: jnp.array([(x[0] - 2.5) ** 2 + (x[1] - 7.5) ** 2 - 50.0])


def _branin_constrained(noise=0.0, cnoise=0.0):
    base = nbo.benchmarks.get("branin")
    return dataclasses.replace(base, constraints=BRANIN_C, noise_std=noise, constraint_noise_std=cnoise)


# ------------------------------------------------------------------ network
@pytest.mark.parametrize("use_bias", [False, True])
@pytest.mark.parametrize("width,depth", [(8, 1), (16, 2), (64, 3)])
def test_zero_init_output_is_exactly_zero(use_bias, width, depth):
    net = zero_init_mlp(5, width, depth, use_bias=use_bias)
    params, q = net.init(jax.random.key(width + depth))
    z = jax.random.normal(jax.random.key(1), (500, 5)) * 3.0
    out = jax.vmap(lambda zz: net.apply(params, q, zz))(z)
    assert np.all(np.asarray(out) == 0.0)
    # the halves are equal and q = (q^, -q^), q^ in {-1, 1}
    k = width // 2
    assert np.array_equal(np.abs(np.asarray(q)), np.ones(width))
    assert np.array_equal(np.asarray(q[:k]), -np.asarray(q[k:]))
    assert np.array_equal(np.asarray(params[0]["W"][:k]), np.asarray(params[0]["W"][k:]))
    flat, _ = ravel_pytree(params)
    assert flat.size == net.num_params
    # after one gradient step the output is no longer zero (the network can learn)
    g = jax.grad(lambda p: (net.apply(p, q, z[0]) - 1.0) ** 2)(params)
    moved = jax.tree.map(lambda a, b: a - 0.1 * b, params, g)
    assert abs(float(net.apply(moved, q, z[0]))) > 1e-6


def test_factor_kernel_equals_jacobian_gram(x64):
    net = zero_init_mlp(3, 10, 2, use_bias=True)
    params, q = net.init(jax.random.key(0))
    flat, unravel = ravel_pytree(params)
    params = unravel(flat + 0.5 * jax.random.normal(jax.random.key(2), flat.shape))  # away from init
    flat = ravel_pytree(params)[0]
    za = jax.random.uniform(jax.random.key(3), (7, 3), minval=-1, maxval=1)
    zb = jax.random.uniform(jax.random.key(4), (4, 3), minval=-1, maxval=1)
    jac = jax.vmap(jax.grad(lambda f, z: net.apply(unravel(f), q, z)), in_axes=(None, 0))

    @jax.jit  # both sides compiled (op by op: hundreds of small compilations)
    def both(flat, params):
        Ga, Gb = jac(flat, za), jac(flat, zb)
        Fa = jax.vmap(lambda z: net.ntk_factors(params, q, z))(za)
        Fb = jax.vmap(lambda z: net.ntk_factors(params, q, z))(zb)
        return factor_kernel(Fa, Fb), Ga @ Gb.T, factor_diag(Fa), jnp.sum(Ga * Ga, 1)

    kernel, gram, diag, norms = both(flat, params)
    np.testing.assert_allclose(kernel, gram, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(diag, norms, rtol=1e-10)


def test_network_errors():
    with pytest.raises(ValueError, match="even"):
        zero_init_mlp(2, 7)
    with pytest.raises(ValueError, match="depth"):
        zero_init_mlp(2, 8, 0)


# ------------------------------------------------------------------ posterior
def _init_state(algo, n=12, seed=0, nan_row=None):
    problem = _branin_constrained()
    x0 = nbo.initial_design(jax.random.key(seed), problem.bounds, n)
    y0 = jax.vmap(problem.objective)(x0)
    c0 = jax.vmap(problem.constraints)(x0)
    if nan_row is not None:
        c0 = c0.at[nan_row, 0].set(jnp.nan)
    init = jax.jit(lambda k, x, y, c: algo.init(k, x, y, c, bounds=problem.bounds, capacity=n + 3))
    state = init(jax.random.key(seed + 1), x0, y0, c0)
    return problem, state, x0, y0, c0


@pytest.mark.parametrize("lam", [1.0, 0.05])
def test_sigma_matches_direct_feature_space_computation(x64, lam):
    """sigma(x)^2 = lam g^T U^{-1} g with U = lam I + sum_t g_t g_t^T (eqs. 4.3-4.4 at lam = 1), g at theta_0;
    the row with a failed (NaN) constraint value is imputed (the column's worst value), so it is in
    both networks' U."""
    algo = neural_cbo(width=8, lam=lam, acq_optimizer=dict(raw_samples=16))
    problem, state, x0, _, c0 = _init_state(algo, nan_row=3)
    net = zero_init_mlp(2, 8, 2, use_bias=True)
    u_c = jax.random.uniform(jax.random.key(9), (6, 2))
    post = jax.jit(algo.surrogate)(state, u_c)
    z_obs = 2.0 * problem.bounds.to_unit(x0) - 1.0

    @jax.jit  # the reference compiled (op by op: hundreds of small compilations)
    def direct_std(params0, q):
        flat, unravel = ravel_pytree(params0)
        jac = jax.vmap(jax.grad(lambda f, z: net.apply(unravel(f), q, z)), in_axes=(None, 0))
        G = jac(flat, z_obs)
        U = lam * jnp.eye(flat.size) + G.T @ G
        Gc = jac(flat, 2.0 * u_c - 1.0)
        return jnp.sqrt(lam * jnp.sum(Gc * jnp.linalg.solve(U, Gc.T).T, axis=1))

    for j in range(2):
        direct = direct_std(jax.tree.map(lambda a: a[j], state.model.params0), state.model.q[j])
        got = post.std if j == 0 else post.constraint_std[:, 0]
        np.testing.assert_allclose(got, direct, rtol=1e-8)
    assert bool(state.data.failed[3]) and bool(jnp.all(state.data.mask[:12]))
    assert float(state.data.y[3, 1]) == float(jnp.nanmax(c0[:, 0]))


def test_mean_is_trained_network_and_constraints_keep_zero_threshold(x64, compiled):
    algo = compiled(neural_cbo(width=16, acq_optimizer=dict(raw_samples=16)))
    problem, state, x0, y0, c0 = _init_state(algo, n=15)
    # the transform: objective standardized, constraint divided by its RMS (not centred)
    np.testing.assert_allclose(state.model.shift, [np.mean(y0), 0.0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(state.model.scale, [np.std(y0), np.sqrt(np.mean(np.asarray(c0) ** 2))], rtol=1e-10)
    u0 = problem.bounds.to_unit(x0)
    post = algo.surrogate(state, u0)
    net = zero_init_mlp(2, 16, 2, use_bias=True)
    p1 = jax.tree.map(lambda a: a[1], state.model.params)
    expect = jax.vmap(lambda z: net.apply(p1, state.model.q[1], z))(2.0 * u0 - 1.0)
    np.testing.assert_allclose(post.constraint_mean[:, 0], expect, rtol=1e-10)
    # the fit on the initial design is good: the constraint's sign is right on most points
    agree = np.mean(np.sign(np.asarray(post.constraint_mean[:, 0])) == np.sign(np.asarray(c0[:, 0])))
    assert agree >= 0.8


# ------------------------------------------------------------------ acquisition
def test_expected_improvement_minimization_closed_form(x64):
    rng = np.random.default_rng(0)
    mean = rng.normal(size=50)
    std = np.abs(rng.normal(size=50))
    std[:10] = 0.0
    best = 0.3
    got = np.asarray(acq_lib.expected_improvement(jnp.asarray(mean), jnp.asarray(std), best))
    u = best - mean
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = u * norm.cdf(u / std) + std * norm.pdf(u / std)
    rho = np.where(std > 0, rho, np.maximum(u, 0.0))
    np.testing.assert_allclose(got, rho, rtol=1e-12, atol=1e-15)
    assert np.all(got >= 0)


def test_constrained_ei_rule_and_fallback(x64):
    mean = jnp.array([0.0, -1.0, 0.5, -2.0])
    std = jnp.array([1.0, 0.0, 0.2, 0.5])
    cm = jnp.array([[-1.0, 0.5], [-0.5, -0.5], [0.2, 0.1], [2.0, 0.0]])
    cs = jnp.array([[0.1, 1.0], [0.1, 0.1], [0.1, 0.1], [0.5, 0.5]])
    post = SurrogatePosterior(jnp.zeros((4, 2)), mean, std, jnp.asarray(0.2), cm, cs)
    util = np.asarray(acq_lib.constrained_ei(beta=1.0)(post, None))
    lcb = np.asarray(cm - cs)
    feas = np.all(lcb <= 0, axis=1)
    assert feas.tolist() == [True, True, False, False]
    ei = np.asarray(acq_lib.expected_improvement(mean, std, 0.2))
    np.testing.assert_allclose(util[feas], ei[feas])
    assert np.all(np.isneginf(util[~feas]))
    # nothing LCB-feasible: the utility is minus the total LCB violation
    post2 = post._replace(constraint_mean=cm + 5.0)
    util2 = np.asarray(acq_lib.constrained_ei(beta=1.0)(post2, None))
    viol = np.sum(np.maximum(np.asarray(cm + 5.0 - cs), 0.0), axis=1)
    np.testing.assert_allclose(util2, -viol)
    assert int(np.argmax(util2)) == int(np.argmin(viol))
    # per-constraint beta, through its square root (mean - sqrt(beta) std, as lcb)
    util3 = np.asarray(acq_lib.constrained_ei(beta=jnp.array([0.0, 100.0]))(post, None))
    assert np.isfinite(util3[2]) == bool(np.all(np.asarray(cm[2] - jnp.array([0.0, 10.0]) * cs[2]) <= 0))
    # beta = 4 is a two-standard-deviation bound; lcb_violation is the same test
    viol4 = np.sum(np.maximum(np.asarray(cm - 2.0 * cs), 0.0), axis=1)
    np.testing.assert_allclose(acq_lib.lcb_violation(post, 4.0), viol4)
    util4 = np.asarray(acq_lib.constrained_ei(beta=4.0)(post, None))
    np.testing.assert_array_equal(np.isfinite(util4), viol4 <= 0)


def test_ask_picks_minimum_violation_when_nothing_is_lcb_feasible(x64, compiled):
    """A constraint that no point satisfies (c = 50 + 0.1 |x|^2, 20 + x_1) and beta = 0: the chosen point
    minimizes the total LCB violation over the raw samples (library decision)."""
    base = nbo.benchmarks.get("branin")
    problem = dataclasses.replace(base, constraints=lambda x: jnp.array([50.0 + 0.1 * x @ x, 20.0 + x[0]]))
    algo = compiled(neural_cbo(width=16, beta=0.0, acq_optimizer=dict(raw_samples=64, local_fraction=0.0)))
    x0 = nbo.initial_design(jax.random.key(0), problem.bounds, 10)
    c0 = jax.vmap(problem.constraints)(x0)
    state = algo.init(jax.random.key(1), x0, jax.vmap(problem.objective)(x0), bounds=problem.bounds,
                      capacity=12, c0=c0)
    key = jax.random.key(5)
    x = algo.ask(state, key)
    k_c, _ = jax.random.split(key)  # ask: (optimizer, acquisition) keys
    k_raw, _ = jax.random.split(k_c)  # optimize_acqf: (raw samples, restarts) keys
    u_c = candidate_set(k_raw, nbo.Dataset.empty(12, 2), 64, sampler="sobol")  # what ask scores
    post = algo.surrogate(state, u_c)
    viol = np.sum(np.maximum(np.asarray(post.constraint_mean), 0.0), axis=1)
    assert np.all(viol > 0)
    expected = problem.bounds.from_unit(u_c[int(np.argmin(viol))])
    np.testing.assert_allclose(x, expected, rtol=1e-12)


def _assert_sgd_step(state, new, net, z, targets, lr=1e-3):
    """Eq. 4.2 per network j: W <- W + lr (target_j - a(z; W)) grad_W a(z; W)."""
    for j in range(len(targets)):
        pj = jax.tree.map(lambda a: a[j], state.model.params)
        a, g = jax.value_and_grad(lambda p: net.apply(p, state.model.q[j], z))(pj)
        expect = jax.tree.map(lambda w, gw: w + lr * (targets[j] - a) * gw, pj, g)
        got = jax.tree.map(lambda a: a[j], new.model.params)
        np.testing.assert_allclose(ravel_pytree(got)[0], ravel_pytree(expect)[0], rtol=1e-12)


def test_paper_preset_is_one_sgd_step_per_observation(x64):
    """Eq. 4.2: W <- W + alpha (y - a(x; W)) grad_W a(x; W), per network, per new point; a
    failed constraint value is imputed first (the column's worst value)."""
    algo = neural_cbo(preset="paper", acq_optimizer=dict(raw_samples=16))
    problem, state, _, _, c0 = _init_state(algo, n=6)
    assert state.model.q.shape == (2, 10)  # m = T = capacity (9) rounded up to even
    x = jnp.array([1.0, 2.0])
    y, c = problem.objective(x), problem.constraints(x)
    new = algo.tell(state, x, y, c)
    net = zero_init_mlp(2, 10, 2, use_bias=False)
    z = 2.0 * problem.bounds.to_unit(x) - 1.0
    targets = (jnp.concatenate([y[None], c]) - state.model.shift) / state.model.scale
    _assert_sgd_step(state, new, net, z, targets)
    # the transform is frozen after init in the one-pass mode
    np.testing.assert_array_equal(new.model.shift, state.model.shift)
    # a failed (NaN) constraint value is imputed with the column's worst value (the
    # Dataset's rule) and the constraint's network steps toward it like any observation
    failed = algo.tell(state, x, y, jnp.array([jnp.nan]))
    worst = float(jnp.max(c0[:, 0]))
    assert bool(failed.data.failed[6]) and float(failed.data.y[6, 1]) == worst
    _assert_sgd_step(state, failed, net, z, (jnp.array([y, worst]) - state.model.shift) / state.model.scale)


# ------------------------------------------------------------------ loop
def test_run_bo_vmapped_records_constraints():
    """The constraint values a vmapped run records are the problem's, and ``feasible`` is
    their sign (2 seeds, 5 + 5). How well Neural-CBO optimizes is measured by
    ``benchmarks/beats_random.py``."""
    problem = nbo.benchmarks.get("branin_constrained", noise_std="paper")
    keys = jax.random.split(jax.random.key(0), 2)
    algo = neural_cbo(width=64, acq_optimizer=dict(raw_samples=512))
    hist = jax.vmap(lambda k: nbo.run_bo(k, algo, problem, n_init=5, n_iter=5))(keys)
    assert hist.c.shape == (2, 10, 1) and hist.c_true.shape == (2, 10, 1)
    np.testing.assert_allclose(hist.c_true[..., 0], jax.vmap(jax.vmap(BRANIN_C))(hist.x)[..., 0], rtol=1e-5, atol=1e-3)
    assert np.array_equal(np.asarray(hist.feasible), np.asarray(hist.c_true[..., 0] <= 0))


def test_errors():
    with pytest.raises(ValueError, match="width"):
        neural_cbo(width=7)
    with pytest.raises(ValueError, match="training"):
        neural_cbo(training="adam")
    with pytest.raises(ValueError, match="incumbent"):
        neural_cbo(incumbent="best")
    with pytest.raises(ValueError, match="beta"):
        neural_cbo(beta=-1.0)
    with pytest.raises(ValueError, match="acquisition"):
        neural_cbo(beta=2.0, acquisition=acq_lib.cei())
    with pytest.raises(ValueError, match="preset"):
        neural_cbo(preset="fast")
    # the one acquisition optimizer: checked at the factory, fields named
    with pytest.raises(ValueError, match=r"acq_optimizer\.steps"):
        neural_cbo(acq_optimizer=dict(steps=5))  # constrained EI under the LCB test: a hard filter
    with pytest.raises(TypeError, match="acq_optimizer"):
        neural_cbo(acq_optimizer=dict(n_candidates=64))
    with pytest.raises(ValueError, match="raw_samples"):
        neural_cbo(acq_optimizer=dict(raw_samples=0))
    neural_cbo(acq_optimizer=dict(steps=5), acquisition=acq_lib.cei())  # a smooth custom one may climb
    algo = neural_cbo(width=8, beta=[1.0, 2.0])
    problem = _branin_constrained()
    with pytest.raises(ValueError, match="beta has 2 values"):
        nbo.run_bo(jax.random.key(0), algo, problem, 3, 1)
    with pytest.raises(ValueError, match="has none"):
        nbo.run_bo(jax.random.key(0), neural_cbo(width=8), nbo.benchmarks.get("branin"), 3, 1)
    x0 = np.zeros((2, 2))
    with pytest.raises(ValueError, match="c0"):
        algo.init(jax.random.key(0), x0, np.zeros(2), bounds=problem.bounds, capacity=4)


def test_every_argument_is_checked_at_the_factory():
    """Types, ranges and NaN of every argument give an error that names it, before any run;
    the SGD mini-batch is minibatch_size (batch_size= is refused, naming the new names)."""
    nan = float("nan")
    for name, value in [("width", 8.0), ("depth", 2.5), ("beta", "1"), ("beta", ["1"]), ("nu", "1"), ("nu", True),
                        ("lam", "0.01"), ("learning_rate", True), ("train_steps", 1.5), ("init_steps", "5"),
                        ("minibatch_size", 32.0), ("approx_error", "0"), ("use_bias", 1), ("q", 2.0),
                        ("acquisition", 3)]:
        with pytest.raises(TypeError, match=name):
            neural_cbo(**{name: value})
    for name, value in [("nu", nan), ("nu", 0.0), ("lam", nan), ("lam", -1.0), ("learning_rate", nan),
                        ("approx_error", nan), ("approx_error", -1.0), ("beta", nan), ("beta", [1.0, nan]),
                        ("beta", []), ("depth", 0), ("width", 0), ("train_steps", 0), ("minibatch_size", 0),
                        ("q", 0), ("optimizer", "rmsprop"), ("training", 1), ("preset", None)]:
        with pytest.raises(ValueError, match=name):
            neural_cbo(**{name: value})
    with pytest.raises(TypeError, match="minibatch_size"):
        neural_cbo(batch_size=16)
    assert neural_cbo(nu=jnp.asarray(0.7)).name == "neural-cbo"  # nu may be a (vmappable) JAX scalar
    algo = neural_cbo(width=8, q=2)
    assert (algo.q, algo.batch_rule, algo.constrained) == (2, "fantasy", True)
    assert algo.config.build().q == 2  # the factory call is recorded


def test_ask_tell_driver_with_constraints():
    problem = _branin_constrained()
    x0 = np.asarray(nbo.initial_design(jax.random.key(0), problem.bounds, 4))
    y0 = np.asarray(jax.vmap(problem.objective)(x0))
    c0 = np.asarray(jax.vmap(problem.constraints)(x0))
    opt = nbo.AskTell(neural_cbo(width=8, acq_optimizer=dict(raw_samples=32)), problem.bounds, capacity=7,
                      key=jax.random.key(1), x0=x0, y0=y0, c0=c0)
    for i in range(3):
        x = opt.ask()  # the ask after a failed evaluation is finite and in the box
        assert np.all(np.isfinite(x)) and problem.bounds.contains(x)
        if i == 1:  # a failed evaluation leaves every state leaf finite
            with pytest.warns(RuntimeWarning, match="failed"):
                opt.tell(x, float(problem.objective(x)), [np.nan])
            assert all(bool(jnp.all(jnp.isfinite(leaf))) for leaf in jax.tree.leaves(opt.state)
                       if jnp.issubdtype(leaf.dtype, jnp.floating))
        else:
            opt.tell(x, float(problem.objective(x)), np.asarray(problem.constraints(x)))
    xb, yb = opt.best()
    feasible = [bool(np.all(c <= 0)) for c in opt.c]
    ys = np.where(feasible, opt.y, np.inf)
    assert yb == pytest.approx(float(np.min(ys)))
    with pytest.raises(ValueError, match="capacity"):
        opt.tell(x, 1.0, [0.0])
    with pytest.raises(ValueError, match="c0"):
        nbo.AskTell(neural_cbo(width=8), problem.bounds, capacity=7, key=jax.random.key(1), x0=x0, y0=y0)


def test_paper_preset_masks_a_nan_observation(x64):
    """While a constraint has no finite value yet, a failed (NaN) value of it stays masked
    (the Dataset's rule) and one-pass SGD must skip it (not multiply it by a zero step: 0 * NaN
    is NaN), while still taking the objective's step for the same point. Run without jit: XLA
    may fold ``0 * g`` to 0 in a compiled graph and hide the NaN, which other backends need
    not."""
    algo = neural_cbo(preset="paper", acq_optimizer=dict(raw_samples=16))
    problem, state, _, _, _ = _init_state(algo, n=6, nan_row=slice(None))  # no finite constraint value
    assert not bool(jnp.any(state.data.mask[:, 1]))
    x = jnp.array([8.0, 3.0])  # a point where the constraint network's gradient is not zero
    net = zero_init_mlp(2, 10, 2, use_bias=False)
    g = jax.grad(lambda p: net.apply(p, state.model.q[1], 2.0 * problem.bounds.to_unit(x) - 1.0))(
        jax.tree.map(lambda a: a[1], state.model.params))
    assert float(jnp.sum(jnp.abs(ravel_pytree(g)[0]))) > 0.1
    with jax.disable_jit():
        new = algo.tell(state, x, problem.objective(x), jnp.array([jnp.nan]))
    assert not bool(new.data.mask[6, 1]) and bool(new.data.mask[6, 0])
    flat_new = ravel_pytree(new.model.params)[0]
    assert np.all(np.isfinite(np.asarray(flat_new)))
    p_old = [ravel_pytree(jax.tree.map(lambda a: a[j], state.model.params))[0] for j in range(2)]
    p_new = [ravel_pytree(jax.tree.map(lambda a: a[j], new.model.params))[0] for j in range(2)]
    assert not np.array_equal(p_new[0], p_old[0])  # the objective's network stepped
    np.testing.assert_array_equal(p_new[1], p_old[1])  # the constraint's did not
