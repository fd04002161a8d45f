"""Constrained GP baselines: GP-cEI (Gardner et al. 2014, eqs. 5-6) and GP-LCB-C
(ConfigOpt, Xu et al. 2023; UCB-C, Nguyen et al. 2023)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.stats import norm

import nbo_jax as nbo
from nbo_jax import gp_model as gpm
from nbo_jax.acquisition import cei
from nbo_jax.algorithms.gp import gp_bo
from nbo_jax.observations import constrained_transform, observed_feasible
from nbo_jax.optimize import candidate_set

# small settings; local_fraction=0 and steps=0 so an ask scores plain uniform raw samples
# that the tests can rebuild from the key
RAW = 256
FAST = dict(acq_optimizer=dict(raw_samples=RAW, local_fraction=0.0, steps=0), n_restarts=2, fit_steps=30)
PROBLEM = nbo.benchmarks.get("branin_constrained", noise_std="paper")
LO, HI = PROBLEM.bounds


def _two_constraints(x):
    """K = 2 constraint values of the test data: the Branin disc and a half-plane."""
    c1 = jax.vmap(PROBLEM.constraints)(x)[:, 0]
    return jnp.stack([c1, x[:, 0] + x[:, 1] - 12.0], axis=1)


def _data(n=10, seed=0):
    x0 = nbo.initial_design(jax.random.key(seed), PROBLEM.bounds, n)
    # row 0: a global minimizer of Branin outside the disc, so the best observed value is
    # infeasible (the cEI incumbent must skip it)
    x0 = x0.at[0].set(jnp.array([9.42478, 2.475]))
    return x0, jax.vmap(PROBLEM.objective)(x0), _two_constraints(x0)


_JITTED = {}  # one compilation per (algorithm, function): the tests reuse them


def _jitted(algo, what):
    if (algo, what) not in _JITTED:
        if what == "init":
            fn = lambda k, x, y, c: algo.init(k, x, y, bounds=PROBLEM.bounds, capacity=14, c0=c)
        else:
            fn = getattr(algo, what)
        _JITTED[algo, what] = jax.jit(fn)
    return _JITTED[algo, what]


def _init(algo, x0, y0, c0):
    return _jitted(algo, "init")(jax.random.key(1), x0, y0, c0)


def _candidates(state, key, n):
    """The Sobol raw samples an ask with ``key`` scores (local_fraction = 0)."""
    k_c, _ = jax.random.split(key)  # ask: (optimizer, acquisition) keys
    k_raw, _ = jax.random.split(k_c)  # optimize_acqf: (raw samples, restarts) keys
    return candidate_set(k_raw, state.data.column(0), n, 0, sampler="sobol")


def _row_of(x, u_c):
    u = (np.asarray(x) - LO) / (HI - LO)
    dist = np.max(np.abs(np.asarray(u_c) - u), axis=1)
    assert dist.min() < 1e-5  # the chosen point is one of the candidates
    return int(np.argmin(dist))


def _scipy_cei(post):
    mu, sd, best = (np.asarray(post.mean, float), np.asarray(post.std, float), float(post.incumbent))
    cm, cs = np.asarray(post.constraint_mean, float), np.asarray(post.constraint_std, float)
    pof = np.prod(norm.cdf(-cm / cs), axis=1)
    if not np.isfinite(best):
        return pof
    z = (best - mu) / sd
    return sd * (z * norm.cdf(z) + norm.pdf(z)) * pof


@pytest.fixture(scope="module")
def cei_setup():
    algo = gp_bo(acquisition="cei", **FAST)
    x0, y0, c0 = _data()
    return algo, x0, y0, c0, _init(algo, x0, y0, c0)


def test_cei_utility_is_ei_times_pof_and_ask_maximizes_it(cei_setup):
    """cEI(x) = EI(x; y_best) * prod_k Phi(-mu_k/sigma_k) (Gardner et al. 2014, eq. 6) with
    y_best the best observed feasible standardized objective; ask returns its argmax."""
    algo, x0, y0, c0, state = cei_setup
    assert algo.name == "gp-cei" and algo.constrained
    y = np.asarray(y0, float)
    y_std = (y - y.mean()) / y.std()
    feasible = np.all(np.asarray(c0) <= 0, axis=1)
    assert 0 < feasible.sum() < len(feasible) and not feasible[np.argmin(y)]
    key = jax.random.key(5)
    u_c = _candidates(state, key, RAW)
    post = algo.surrogate(state, u_c)
    assert post.constraint_mean.shape == (256, 2) and post.constraint_std.shape == (256, 2)
    assert float(post.incumbent) == pytest.approx(float(y_std[feasible].min()), rel=1e-5)
    closed = _scipy_cei(post)
    assert closed.max() > 1e-3
    np.testing.assert_allclose(cei()(post, key), closed, rtol=2e-4, atol=1e-7)
    j = _row_of(_jitted(algo, "ask")(state, key), u_c)
    assert closed[j] >= closed.max() * (1 - 1e-4)


def test_cei_without_feasible_observation_maximizes_pof(cei_setup):
    """No observed point is feasible: incumbent = +inf, the chosen point maximizes PoF."""
    algo, x0, y0, c0, _ = cei_setup
    state = _init(algo, x0, y0, c0 + 60.0)  # every observed constraint value > 0
    key = jax.random.key(6)
    u_c = _candidates(state, key, RAW)
    post = algo.surrogate(state, u_c)
    assert float(post.incumbent) == np.inf
    pof = _scipy_cei(post)
    assert pof.max() > 1.5 * pof.min()  # PoF does discriminate between the candidates
    j = _row_of(_jitted(algo, "ask")(state, key), u_c)
    assert pof[j] >= pof.max() * (1 - 1e-4)


def test_cei_refinement_never_lowers_the_utility(cei_setup):
    algo, _, _, _, state = cei_setup
    refined = gp_bo(acquisition="cei", **{**FAST, "acq_optimizer": dict(raw_samples=RAW, local_fraction=0.0,
                                                                         steps=20, num_restarts=4)})
    ask_raw, ask_ref = _jitted(algo, "ask"), _jitted(refined, "ask")

    def util(x):
        return float(_scipy_cei(algo.surrogate(state, ((x - LO) / (HI - LO))[None, :].astype(jnp.float32)))[0])

    for s in range(2):
        k = jax.random.key(20 + s)
        assert util(ask_ref(state, k)) >= util(ask_raw(state, k)) * (1 - 1e-4)


def test_each_function_has_its_own_gp(x64):
    """Per function j: the state's posterior is gp_model's GP conditioned on function j's
    valid rows alone (objective standardized, constraints divided by their RMS), with the
    hyperparameters of a separate gp_model.fit on that function from the same starts (the
    default preset: MAP with BoTorch's priors by L-BFGS from the prior mode, twice on the
    first fit: warm start = prior mode). A failed constraint value is stored as the worst
    value of its column (the Dataset's imputation) and every GP fits it."""
    algo = gp_bo(acquisition="cei", **FAST)
    x0, y0, c0 = _data(seed=3)
    c0 = c0.at[2, 1].set(jnp.nan)  # one failed constraint value
    state = jax.jit(lambda k, x, y, c: algo.init(k, x, y, bounds=PROBLEM.bounds, capacity=14, c0=c))(
        jax.random.key(1), x0, y0, c0)
    Y = np.concatenate([np.asarray(y0)[:, None], np.asarray(c0)], axis=1)
    Y = np.where(np.isfinite(Y), Y, np.nanmax(Y, axis=0))  # imputed: the column's worst value
    M = np.isfinite(Y)
    assert M.all() and bool(state.data.failed[2]) and float(state.data.y[2, 2]) == Y[2, 2]
    T = np.zeros((14, 3))
    T[:10, 0] = (Y[:, 0] - Y[:, 0].mean()) / Y[:, 0].std()
    for k in (1, 2):
        rms = np.sqrt(np.mean(Y[M[:, k], k] ** 2))
        T[:10, k] = np.where(M[:, k], Y[:, k] / np.where(M[:, k], rms, 1.0), 0.0)
    mask = np.zeros((14, 3), bool)
    mask[:10] = M
    u_c = jax.random.uniform(jax.random.key(9), (16, 2), jnp.float64)
    surrogate = jax.jit(algo.surrogate)  # compiled, as the references below (op by op: hundreds of compilations)
    post = surrogate(state, u_c)
    means = [post.mean] + [post.constraint_mean[:, k] for k in range(2)]
    stds = [post.std] + [post.constraint_std[:, k] for k in range(2)]
    pb = gpm.ParamBounds((2.5e-2, 1e3), (1.0, 1.0), (1e-4, 1.0))
    prior = gpm.botorch_prior(2)
    lengthscales = []
    fit_alone = jax.jit(lambda starts, u, t, m: gpm.fit("rbf", starts, u, t, m, steps=30, bounds=pb, prior=prior,
                                                         optimizer="lbfgs", learn_constant=True))
    log_prior = jax.jit(lambda p: gpm.log_prior(prior, p))
    predict = jax.jit(lambda p, u, t, m: gpm.predict("rbf", gpm.condition("rbf", p, u, t, m), u_c))
    for j in range(3):
        u, t, m = state.data.u, jnp.asarray(T[:, j]), jnp.asarray(mask[:, j])
        mode = gpm.prior_mode(2, prior, pb, jnp.float64)
        starts = jax.tree.map(lambda a: jnp.stack([a, a]), mode)
        p_alone, map_alone = fit_alone(starts, u, t, m)
        p_j = jax.tree.map(lambda a: a[j], state.model.params)
        for a, b in zip(jax.tree.leaves(p_alone), jax.tree.leaves(p_j)):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)
        lml_alone = map_alone - log_prior(p_alone)  # the state keeps the LML itself
        assert float(state.model.lml[j]) == pytest.approx(float(lml_alone), rel=1e-6)
        mean, var = predict(p_j, u, t, m)
        np.testing.assert_allclose(means[j], mean, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(stds[j], np.sqrt(var), rtol=1e-9, atol=1e-10)
        lengthscales.append(np.asarray(p_j.lengthscale))
    assert not np.allclose(lengthscales[0], lengthscales[1])  # separate hyperparameters
    # the constraint surrogate is in RMS units: near an observed point its mean is c / rms
    obs = surrogate(state, state.data.u[:10])
    np.testing.assert_allclose(obs.constraint_mean[:, 0], T[:10, 1], atol=0.1)


def test_failed_constraint_value_is_imputed_and_never_feasible(cei_setup):
    """A NaN constraint value is a failed evaluation: stored as the worst value of its column
    (every GP fits it, so the region looks bad), the other values of the row kept, the row
    never an observed feasible point; every state leaf stays finite and the next ask is
    finite and in the box."""
    algo, _, _, _, state = cei_setup
    tell = _jitted(algo, "tell")
    x = jnp.array([3.0, 2.0])
    s1 = tell(state, x, PROBLEM.objective(x), jnp.array([jnp.nan, -1.0]))
    d0, d1 = state.data, s1.data
    shift1, scale1 = constrained_transform(d1.y, d1.mask)
    worst = float(jnp.max(d0.y[:10, 1]))
    np.testing.assert_array_equal(np.asarray(d1.mask[10]), [True, True, True])
    assert int(d1.count) == 11 and bool(d1.failed[10])
    assert float(d1.y[10, 0]) == pytest.approx(float(PROBLEM.objective(x)))
    assert float(d1.y[10, 1]) == worst and float(d1.y[10, 2]) == -1.0
    np.testing.assert_array_equal(np.asarray(s1.model.posterior.mask[:, 10]), [True, True, True])
    np.testing.assert_array_equal(np.asarray(d1.mask[:10]), np.asarray(d0.mask[:10]))
    np.testing.assert_array_equal(np.asarray(d1.y[:10]), np.asarray(d0.y[:10]))
    assert float(s1.model.posterior.alpha[0, 10]) != 0.0 and float(s1.model.posterior.alpha[1, 10]) != 0.0
    assert not bool(observed_feasible(d1)[10])
    leaves = jax.tree.leaves((s1.model.params, s1.model.posterior, s1.model.lml, shift1, scale1, d1.y))
    assert all(bool(jnp.all(jnp.isfinite(leaf))) for leaf in leaves if jnp.issubdtype(leaf.dtype, jnp.floating))
    # the objective GP uses the new row: its posterior mean there follows the observation;
    # the first constraint's GP follows the imputed worst value
    post = algo.surrogate(s1, PROBLEM.bounds.to_unit(x)[None, :])
    y_new = (float(PROBLEM.objective(x)) - float(shift1[0])) / float(scale1[0])
    assert abs(float(post.mean[0]) - y_new) < 0.1
    assert float(post.constraint_mean[0, 0]) > 0.5 * worst / float(scale1[1]) > 0
    # a NaN objective keeps the constraint values of that row; the objective is imputed with
    # the worst finite objective value (failed rows excluded)
    s2 = tell(s1, jnp.array([0.0, 0.0]), jnp.nan, jnp.array([2.0, 3.0]))
    np.testing.assert_array_equal(np.asarray(s2.data.mask[11]), [True, True, True])
    np.testing.assert_allclose(np.asarray(s2.data.y[11]), [float(jnp.max(d0.y[:10, 0])), 2.0, 3.0])
    x_next = _jitted(algo, "ask")(s2, jax.random.key(3))
    assert np.all(np.isfinite(np.asarray(x_next))) and PROBLEM.bounds.contains(x_next)


def test_lcb_c_rule():
    """LCB-C: argmin of the objective LCB over the LCB-feasible candidates; with none, the
    candidate of smallest total LCB violation sum_k [mu_k - sqrt(beta_c) sigma_k]^+ (one beta
    convention: mean - sqrt(beta) std)."""
    x0, y0, c0 = _data(seed=1)
    beta, beta_c = 2.0, 0.0
    algo = gp_bo(acquisition="lcb-c", beta=beta, beta_c=beta_c, **FAST)
    assert algo.name == "gp-lcb-c" and algo.constrained
    state = _init(algo, x0, y0, c0)
    key = jax.random.key(11)
    u_c = _candidates(state, key, RAW)
    post = algo.surrogate(state, u_c)
    cm, cs = np.asarray(post.constraint_mean), np.asarray(post.constraint_std)
    ok = np.all(cm - np.sqrt(beta_c) * cs <= 0, axis=1)
    assert 0 < ok.sum() < len(ok)
    lcb_f = np.asarray(post.mean) - np.sqrt(beta) * np.asarray(post.std)
    j = _row_of(_jitted(algo, "ask")(state, key), u_c)
    assert ok[j] and lcb_f[j] <= lcb_f[ok].min() + 1e-6

    # all constraint values large and positive, beta_c = 0: no candidate passes
    strict = algo
    state = _init(strict, x0, y0, c0 + 100.0)
    u_c = _candidates(state, key, RAW)
    post = strict.surrogate(state, u_c)
    viol = np.sum(np.maximum(np.asarray(post.constraint_mean), 0.0), axis=1)
    assert viol.min() > 0  # precondition: no LCB-feasible candidate
    j = _row_of(_jitted(strict, "ask")(state, key), u_c)
    assert viol[j] <= viol.min() * (1 + 1e-5)
    assert viol.max() > 1.2 * viol.min()


def test_factory_and_init_errors(cei_setup):
    with pytest.raises(ValueError, match="acquisition"):
        gp_bo(acquisition="cEI")
    with pytest.raises(ValueError, match="beta_c"):
        gp_bo(acquisition="cei", beta_c=1.0)  # beta_c belongs to lcb-c
    with pytest.raises(ValueError, match="beta_c"):
        gp_bo(acquisition="lcb-c", beta_c=-1.0)
    with pytest.raises(ValueError, match="beta_c"):
        gp_bo(acquisition="lcb-c", beta_c=[[1.0]])
    with pytest.raises(ValueError, match=r"acq_optimizer\.steps"):
        gp_bo(acquisition="lcb-c", acq_optimizer=dict(steps=5))  # a hard filter: no gradient
    with pytest.raises(TypeError, match="acq_optimizer"):
        gp_bo(acquisition="cei", acq_optimizer=dict(n_candidates=64))
    with pytest.raises(ValueError, match="num_restarts"):
        gp_bo(acquisition="cei", acq_optimizer=dict(num_restarts=0))
    # a dict is laid over the preset's settings for this acquisition
    assert gp_bo(acquisition="cei", acq_optimizer=dict(raw_samples=64)).name == "gp-cei"
    with pytest.raises(ValueError, match="beta"):
        gp_bo(acquisition="lcb-c", beta=-0.5)
    assert not gp_bo(acquisition="ei").constrained
    x0, y0, c0 = _data(n=4)
    with pytest.raises(ValueError, match="c0"):
        gp_bo(acquisition="cei", **FAST).init(jax.random.key(0), x0, y0, bounds=PROBLEM.bounds, capacity=6)
    with pytest.raises(ValueError, match="c0"):
        gp_bo(acquisition="cei", **FAST).init(jax.random.key(0), x0, y0, bounds=PROBLEM.bounds, capacity=6,
                                              c0=c0[:3])
    with pytest.raises(ValueError, match="beta_c"):  # 3 values for K = 2 constraints
        gp_bo(acquisition="lcb-c", beta_c=[1.0, 2.0, 3.0], **FAST).init(
            jax.random.key(0), x0, y0, bounds=PROBLEM.bounds, capacity=6, c0=c0)
    with pytest.raises(ValueError, match="constraints"):  # constrained algorithm, plain problem
        nbo.run_bo(jax.random.key(0), gp_bo(acquisition="cei", **FAST), nbo.benchmarks.get("branin"), 3, 2)
    algo, _, _, _, state = cei_setup
    with pytest.raises(ValueError, match="c: "):  # tell without the constraint values
        algo.tell(state, x0[0], y0[0])
    for acq in ("cei", "lcb-c"):
        built = gp_bo(acquisition=acq, q=2)
        assert (built.q, built.batch_rule, built.constrained) == (2, "fantasy", True)

