"""Neural-CBO: constrained BO with one zero-initialized network per black-box function
(Phan-Trong 2024, PhD thesis, Chapter 4, Algorithm 4, eqs. 4.1-4.4; "the thesis" below).

Networks ``v(x; theta)`` for the objective and ``u_k(x; omega_k)`` for the ``K``
constraints (:func:`nbo_jax.networks.zero_init_mlp`: symmetric initialization, so each is
exactly 0 at ``t = 0``; fixed outer layer). Per network, with ``g`` its parameter gradient
at the initial weights::

    U_0 = lam I,   U_t = U_{t-1} + g(x_t) g(x_t)^T               (eq. 4.4; thesis lam = 1)
    sigma_t(x) = sqrt(lam g(x)^T U_{t-1}^{-1} g(x))               (eq. 4.3 at lam = 1)

and per iteration (minimization form)::

    x_t = argmax_x  EI(x) = rho(mu_best - v(x) + E, nu sigma_f(x))
          subject to  LCB_k(x) = u_k(x) - sqrt(beta_k) sigma_k(x) - E <= 0   for every k
          (no candidate passes: the smallest total violation sum_k [LCB_k]^+; a library
          decision, the authors' code takes a random candidate)
    observe y_t = f(x_t) + eps,  z_{k,t} = c_k(x_t) + eta_k
    train every network on its data; update each U

(:func:`nbo_jax.acquisition.constrained_ei`; ``beta`` enters through its square root as in
Srinivas et al. 2010 and every confidence bound of :mod:`nbo_jax.acquisition`, so the
default ``beta = 1`` is one standard deviation). The arg-max runs through
:func:`nbo_jax.optimize.optimize_acqf` over raw samples (no gradient steps by default: the
LCB test is a hard filter). ``sigma`` is computed in the dual (Gram)
form ``sigma^2 = k(x, x) - k_x^T (K + lam I)^{-1} k_x`` with the empirical NTK
``k(x, x') = g(x)^T g(x')`` evaluated layer by layer from activations and back-propagated
errors (:func:`nbo_jax.networks.factor_kernel`): O(L m) per kernel entry instead of
O(p) = O(m d + m^2), and no ``p x p`` matrix. The objective's and the constraints'
networks have the same shapes, so all of them are trained and evaluated in one ``vmap``.

**The factor lam in sigma.** The thesis writes ``sigma^2 = g^T U^{-1} g`` with ``U_0 = I``.
That is the posterior of a linear model in ``g`` with prior ``theta ~ N(0, I / lam)`` and
noise variance 1; read with another ``lam`` it would scale the prior, not the noise (at
``lam = 0.01`` sigma was 10x the function's spread on Hartmann-6 and every candidate passed
the LCB test). We use ``sigma^2 = lam g^T U^{-1} g``: prior covariance the empirical NTK,
noise variance ``lam`` (the Neural-BO convention, Phan-Trong et al. 2023), which equals the thesis formula
at its ``lam = 1`` and matches the ridge ``lam`` of the training loss at any ``lam``.

Targets: the objective is standardized (mean 0, std 1 over valid rows);
each constraint is divided by its root-mean-square over valid rows, *not* centred, so that
0 stays the feasibility threshold. A NaN/inf value is a failed evaluation: the
:class:`~nbo_jax.dataset.Dataset` stores the worst value of its column there, every network
trains on it and every posterior conditions on it, and the row never counts as an observed
(feasible) point for the incumbent.

**Batches** (``q > 1``): the rule is a deterministic arg-max given the state, so the ``q``
points are chosen one after the other, each told to a copy of the state with a constant-liar
value (Ginsbourger, Le Riche & Carraro 2010; :mod:`nbo_jax.transforms.batch`).

**Paper preset** (``preset="paper"``; thesis Section 4.3.1): width ``m = T`` (the run's
capacity, rounded up to even), depth ``L = 2``, no biases, one pass of plain SGD on each
new observation (eq. 4.2) with step size 1e-3, training targets transformed with the
statistics of the initial design (fixed afterwards, since earlier steps cannot be redone),
incumbent ``mu_best`` = the smallest predicted mean over all observed points, 2048 uniform
raw samples.

**Library defaults** (``preset="default"``): width 128, biases, ``lam = 0.01``, ``nu = 0.5``, full
retraining after each observation (the authors' code) with Adam (lr 1e-2, about 100
mini-batch steps of 32 per observation, 500 on the initial design, warm start, ridge
``lam ||theta - theta_0||^2`` matching ``U_0 = lam I``), incumbent over observations
whose observed constraints are all ``<= 0`` (all observations while there is none), 2048
raw samples of which a quarter are local around the 5 best feasible observations (the
least violating ones while none is feasible; std 0.05 in unit-cube units). Every choice is
an argument; the measurements behind them are on the documentation site's page "Measured
choices" (``docs/measurements.md``).
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple, Optional, Sequence, Union

import jax
import jax.numpy as jnp

from .. import posterior as post_lib
from .._checks import (
    BATCH_SIZE_RENAMED,
    check_beta_count,
    check_betas,
    check_bool,
    check_choice,
    check_int,
    check_scale,
    refuse_renamed,
    resolve_preset,
)
from ..acquisition import AcquisitionFn, SurrogatePosterior, constrained_ei
from ..bo import make_algorithm, records_config
from ..networks import factor_diag, factor_kernel, zero_init_mlp
from ..observations import (
    constrained_transform,
    feasibility_ranked,
    initial_data,
    observed_feasible,
    told_rows,
)
from ..optimize import AcqOptimizer, as_acq_optimizer, optimize_acqf
from ..training import train_regression
from ..types import BOAlgorithm, Bounds, Dataset
from ..training import OPTIMIZERS, train_config

Array = jax.Array

PRESETS = {
    "paper": dict(width=None, lam=1.0, nu=1.0, training="sgd", optimizer="sgd", learning_rate=1e-3, use_bias=False,
                  incumbent="all",
                  acq_optimizer=AcqOptimizer(raw_samples=2048, num_restarts=1, steps=0, local_fraction=0.0,
                                             raw_sampler="uniform")),
    "default": dict(width=128, lam=0.01, nu=0.5, training="retrain", optimizer="adam", learning_rate=1e-2,
                    use_bias=True, incumbent="feasible",
                    acq_optimizer=AcqOptimizer(raw_samples=2048, num_restarts=1, steps=0, local_fraction=0.25,
                                               local_std=0.05, n_best=5)),
}
TRAINING = ("sgd", "retrain")
INCUMBENTS = ("all", "feasible")


class NeuralCBOState(NamedTuple):
    """Neural-CBO state (a pytree; fixed shapes; ``J = K + 1`` functions, objective first).

    Attributes:
        data: :class:`~nbo_jax.dataset.Dataset` with ``y``/``mask`` ``(cap, J)``: column 0 the
            objective, columns ``1..K`` the constraints (``c <= 0`` feasible).
        params0, params: initial / current weights, stacked over the ``J`` networks.
        q: ``(J, m)`` fixed outer weights.
        factors: per layer ``(h (J, cap, a_l), delta (J, cap, m))``: NTK factors of the
            observed points at ``params0`` (zero on rows outside ``data.mask``).
        chol: ``(J, cap, cap)`` lower Cholesky factors of ``K_j + lam I``.
        shift, scale: ``(J,)`` target transform of the last training (``(v - shift)/scale``).
        bounds: the box (:class:`~nbo_jax.domains.Bounds`). key: PRNG key for training shuffles.
    """

    data: Dataset
    params0: Any
    params: Any
    q: Array
    factors: Any
    chol: Array
    shift: Array
    scale: Array
    bounds: Bounds
    key: Array


@records_config
def neural_cbo(
    width: Optional[int] = None,
    depth: int = 2,
    beta: Union[float, Sequence[float], None] = None,
    nu: Optional[float] = None,
    lam: Optional[float] = None,
    *,
    preset: str = "default",
    training: Optional[str] = None,
    optimizer: Optional[str] = None,
    learning_rate: Optional[float] = None,
    train_steps: int = 100,
    init_steps: int = 500,
    minibatch_size: int = 32,
    acq_optimizer: Optional[AcqOptimizer | dict] = None,
    incumbent: Optional[str] = None,
    approx_error: float = 0.0,
    acquisition: Optional[AcquisitionFn] = None,
    use_bias: Optional[bool] = None,
    q: int = 1,
    **kwargs,
) -> BOAlgorithm:
    """Build Neural-CBO as a constrained :class:`~nbo_jax.types.BOAlgorithm` (Phan-Trong
    2024, PhD thesis, Chapter 4, Algorithm 4).

    Args:
        width: hidden width ``m`` (even). ``None`` takes the preset's: 128 (default) or the
            run's capacity ``T`` rounded up to even (paper, ``m = T``).
        depth: ``L``, trainable weight layers per network (thesis: 2).
        beta: constraint confidence parameter ``beta_k >= 0``, one float (or scalar JAX
            array) or one per constraint (the length is checked against ``K`` at ``init``):
            the test is ``mean_k - sqrt(beta_k) sigma_k <= 0`` (Srinivas et al. 2010's
            convention, as :func:`nbo_jax.acquisition.lcb`); ``None`` = 1, one standard
            deviation.
        nu: scale of the objective's ``sigma`` inside EI (> 0; a float or scalar JAX array);
            paper 1 (plain EI), default 0.5 (module doc).
        lam: ``U_0 = lam I`` (thesis: ``U_0 = I``, i.e. 1; default 0.01): the noise variance
            of the linearized posterior (``sigma^2 = lam g^T U^{-1} g``, see the module doc)
            and the ridge weight of ``retrain`` training.
        preset: ``"default"`` or ``"paper"``: fills ``width``, ``lam``, ``nu``, ``training``, ``optimizer``,
            ``learning_rate``, ``use_bias``, ``incumbent`` and ``acq_optimizer`` where left
            ``None`` (module doc).
        training: ``"sgd"``: one gradient step per new observation and network (eq. 4.2,
            the paper); ``"retrain"``: mini-batch training on all data after each
            observation (the authors' code; see ``train_steps``).
        optimizer, learning_rate: ``"sgd"`` or ``"adam"`` and its step size (``retrain``;
            ``training="sgd"`` always takes plain steps of ``learning_rate``).
        train_steps: ``retrain``: about this many mini-batch steps after each observation
            (``ceil(train_steps / batches per epoch)`` epochs over the rows in ``mask``, so
            the cost per iteration stays flat as data accumulate; warm start makes that
            enough).
        init_steps: the same for the first fit on the initial design (from ``theta_0``).
        minibatch_size: ``retrain`` SGD mini-batch size (formerly ``batch_size``).
        acq_optimizer: :func:`nbo_jax.optimize.acq_optimizer` settings (or a dict of its
            arguments) for :func:`nbo_jax.optimize.optimize_acqf`; ``None`` = the preset's
            (module doc). Its local raw samples centre on the best feasible observations
            (the least violating while none is feasible). ``steps`` must be 0 with the default
            acquisition (the LCB feasibility test is a hard filter); a custom differentiable
            ``acquisition`` may use steps.
        incumbent: ``mu_best`` over ``"all"`` observed points (thesis) or the ``"feasible"``
            ones (observed constraints all ``<= 0``; all of them while none is). Failed
            evaluations never count.
        approx_error: the ``E(m)/(T+1)`` term of the confidence bounds (thesis
            Corollary 4.1.6), a float ``>= 0``, 0 by default.
        acquisition: ``acq(SurrogatePosterior, key) -> (N,)`` utility to maximize; it
            receives ``constraint_mean``/``constraint_std`` ``(N, K)``. Default
            :func:`nbo_jax.acquisition.constrained_ei` with ``beta``, ``nu``,
            ``approx_error`` (then those three may not be combined with ``acquisition``).
        use_bias: biases in the hidden layers (thesis: none; default: yes; the symmetric
            initialization duplicates them so the network is still 0 at ``t = 0``).
        q: points per ``ask``; ``q > 1`` chooses them one after the other with constant-liar
            fantasies (module doc, "Batches").

    Returns:
        ``BOAlgorithm(init, ask, tell, name="neural-cbo", surrogate, constrained=True)``:
        ``init(key, x0 (n0, d), y0 (n0,), c0 (n0, K), *, bounds, capacity)``,
        ``ask(state, key) -> (d,)`` (``(q, d)`` when ``q > 1``), ``tell(state, x (d,) | (n, d),
        y () | (n,), c (K,) | (n, K))``, ``surrogate(state, u (N, d)) -> SurrogatePosterior``
        with the constraint fields.

    Raises:
        ValueError: an argument out of range, NaN or unknown (the message names it;
            ``acq_optimizer.steps > 0`` with the default acquisition; ``beta``, ``nu`` or
            ``approx_error`` together with ``acquisition``); at ``init``, a ``beta`` sequence
            whose length is not ``K`` or a missing/bad ``c0``; at ``tell``, a missing ``c``.
        TypeError: an argument of the wrong type (the message names it); ``batch_size=``
            (renamed ``minibatch_size``; the points per ask are ``q``).
    """
    refuse_renamed(kwargs, BATCH_SIZE_RENAMED, "neural_cbo")
    chosen = resolve_preset(PRESETS, preset, width=width, lam=lam, nu=nu, training=training, optimizer=optimizer,
                            learning_rate=learning_rate, use_bias=use_bias, incumbent=incumbent)
    if chosen["width"] is not None:
        w = check_int("width", chosen["width"], 2)
        if w % 2:
            raise ValueError(f"width must be even (the network has two equal halves), got {w}")
    check_int("depth", depth, 1)
    train_steps = check_int("train_steps", train_steps, 1)
    init_steps = check_int("init_steps", init_steps, 1)
    check_choice("training", chosen["training"], TRAINING)
    check_choice("incumbent", chosen["incumbent"], INCUMBENTS)
    lam = check_scale("lam", chosen["lam"], allow_zero=False, allow_array=False)
    nu_value = check_scale("nu", chosen["nu"], allow_zero=False)
    lr = check_scale("learning_rate", chosen["learning_rate"], allow_zero=False, allow_array=False)
    approx_error = check_scale("approx_error", approx_error, allow_array=False)
    bias = check_bool("use_bias", chosen["use_bias"])
    betas = check_betas("beta", 1.0 if beta is None else beta)
    train_cfg = train_config(chosen["optimizer"], lr, 1, minibatch_size, lam)
    if acquisition is None:
        acq = constrained_ei(beta=betas, nu=nu_value, approx_error=approx_error)
        no_gradient = ("the default acquisition, constrained EI under the LCB feasibility test, is a hard "
                       "filter with no useful gradient")
    else:
        if not callable(acquisition):
            raise TypeError(f"acquisition must be callable (posterior, key) -> (N,), got "
                            f"{type(acquisition).__name__}")
        if beta is not None or nu is not None or approx_error != 0.0:
            raise ValueError("beta, nu and approx_error parameterize the default acquisition; with "
                             "acquisition= given, put them into it (nbo.acquisition.constrained_ei(beta, nu))")
        acq, no_gradient = acquisition, None
    aopt = as_acq_optimizer(acq_optimizer, default=chosen["acq_optimizer"], no_gradient=no_gradient)
    sgd_mode = chosen["training"] == "sgd"

    @functools.lru_cache(maxsize=None)
    def network(d: int, m: int, dtype):
        return zero_init_mlp(d, m, depth, use_bias=bias, dtype=dtype)

    def net_of(state: NeuralCBOState):
        return network(state.data.u.shape[1], state.q.shape[1], state.data.u.dtype)

    # ------------------------------------------------------------------ helpers
    def factors_at(params0, q, net, z):
        """NTK factors of points ``z (n, d)`` for one network."""
        return jax.vmap(lambda zz: net.ntk_factors(params0, q, zz))(z)

    def absorb(state: NeuralCBOState, data: Dataset, n: int, steps: int) -> NeuralCBOState:
        """``state`` holding ``data``, which is ``state.data`` with at most ``n`` rows
        appended (fewer when a told ``x`` was not finite): each new row enters every
        network's Cholesky factor, then the networks train."""
        net = net_of(state)
        idx = state.data.count + jnp.arange(n)
        new = idx < data.count  # (n,) rows actually written
        u_new = data.u.at[idx].get(mode="fill", fill_value=0.0)
        Y_new = data.y.at[idx].get(mode="fill", fill_value=0.0)  # (n, J), failures imputed
        ok = data.mask.at[idx].get(mode="fill", fill_value=False) & new[:, None]  # (n, J)
        z_new = 2.0 * u_new - 1.0

        # posterior: append each new row to every network's Cholesky factor (rows outside
        # the mask: 0, an identity dummy)
        def per_net(p0, q, factors, L, ok_j):
            F = factors_at(p0, q, net, z_new)
            F = jax.tree.map(lambda a: a * ok_j.reshape((-1,) + (1,) * (a.ndim - 1)), F)

            def add(carry, i):
                factors, L = carry
                Fi = jax.tree.map(lambda a: a[i][None], F)
                k = factor_kernel(factors, Fi)[:, 0]
                j = jnp.where(new[i], idx[i], L.shape[0])  # a row not written: dropped
                L = post_lib.chol_append(L, k, factor_diag(Fi)[0], j, lam)
                factors = jax.tree.map(lambda a, b: a.at[j].set(b[0], mode="drop"), factors, Fi)
                return (factors, L), None

            (factors, L), _ = jax.lax.scan(add, (factors, L), jnp.arange(n))
            return factors, L

        factors, chol = jax.vmap(per_net)(state.params0, state.q, state.factors, state.chol, ok.T)

        key, k_train = jax.random.split(state.key)
        if sgd_mode:
            shift, scale = state.shift, state.scale
            # entries outside the mask get target 0 AND no step
            targets = jnp.where(ok, (Y_new - shift) / scale, 0.0)

            def sgd_net(params, q, t_j, ok_j):
                def step(p, i):
                    g = jax.grad(lambda pp: 0.5 * (net.apply(pp, q, z_new[i]) - t_j[i]) ** 2)(p)
                    return jax.tree.map(lambda a, b: a - jnp.where(ok_j[i], lr * b, 0.0), p, g), None

                return jax.lax.scan(step, params, jnp.arange(n))[0]

            params = jax.vmap(sgd_net)(state.params, state.q, targets.T, ok.T)
        else:
            Y, M = data.y, data.mask
            shift, scale = constrained_transform(Y, M)
            targets = jnp.where(M, (Y - shift) / scale, 0.0)
            z_all = 2.0 * data.u - 1.0
            keys = jax.random.split(k_train, Y.shape[1])

            def fit_net(params, params0, q, t_j, m_j, k):
                apply = lambda p, z: net.apply(p, q, z)
                batches = jnp.maximum((jnp.sum(m_j) + train_cfg.batch_size - 1) // train_cfg.batch_size, 1)
                epochs = (steps + batches - 1) // batches
                return train_regression(apply, params, params0, z_all, t_j, m_j, k, train_cfg, epochs=epochs)

            params = jax.vmap(fit_net)(state.params, state.params0, state.q, targets.T, M.T, keys)
        return state._replace(data=data, params=params, factors=factors, chol=chol, shift=shift, scale=scale,
                              key=key)

    # ------------------------------------------------------------------ init / ask / tell
    def init(key: Array, x0: Array, y0: Array, c0=None, *, bounds, capacity: int) -> NeuralCBOState:
        data, box = initial_data(x0, y0, c0, bounds, capacity, constrained=True)
        J, d, dtype = data.y.shape[1], data.u.shape[1], data.u.dtype
        check_beta_count("beta", betas, J - 1)
        m = chosen["width"] if chosen["width"] is not None else capacity + (capacity % 2)
        net = network(d, int(m), dtype)
        k_net, k_state = jax.random.split(key)
        params0, q = jax.vmap(net.init)(jax.random.split(k_net, J))
        # the transform of the initial design (kept by training="sgd")
        shift, scale = constrained_transform(data.y, data.mask)
        z1 = jnp.zeros((1, d), dtype)
        shapes = factors_at(jax.tree.map(lambda a: a[0], params0), q[0], net, z1)
        factors = jax.tree.map(lambda a: jnp.zeros((J, capacity) + a.shape[1:], dtype), shapes)
        chol = jnp.broadcast_to(jnp.sqrt(jnp.asarray(lam, dtype)) * jnp.eye(capacity, dtype=dtype),
                                (J, capacity, capacity))
        empty = Dataset.empty(capacity, d, dtype, outputs=J)
        state = NeuralCBOState(data=empty, params0=params0, params=params0, q=q, factors=factors, chol=chol,
                               shift=shift, scale=scale, bounds=box, key=k_state)
        return absorb(state, data, jnp.shape(x0)[0], init_steps)

    def predict_all(state: NeuralCBOState, u_c: Array) -> tuple[Array, Array]:
        """Means and standard deviations of all ``J`` networks at ``u_c``: ``(J, N)`` each
        (transformed units)."""
        net = net_of(state)
        z_c = 2.0 * u_c - 1.0

        def per_net(params, params0, q, factors, L):
            mean = jax.vmap(lambda z: net.apply(params, q, z))(z_c)
            Fc = factors_at(params0, q, net, z_c)
            var = post_lib.chol_variance(L, factor_kernel(factors, Fc), factor_diag(Fc))
            return mean, jnp.sqrt(var)

        return jax.vmap(per_net)(state.params, state.params0, state.q, state.factors, state.chol)

    def mu_best(state: NeuralCBOState) -> Array:
        """Incumbent: the smallest predicted objective mean over the chosen observed rows
        (failed evaluations never count)."""
        net = net_of(state)
        z_obs = 2.0 * state.data.u - 1.0
        p0 = jax.tree.map(lambda a: a[0], state.params)
        pred = jax.vmap(lambda z: net.apply(p0, state.q[0], z))(z_obs)
        rows = state.data.observed()[:, 0]
        if chosen["incumbent"] == "feasible":
            feas = observed_feasible(state.data)
            rows = jnp.where(jnp.any(feas), feas, rows)
        return jnp.min(jnp.where(rows, pred, jnp.inf))

    def surrogate_posterior(state: NeuralCBOState, u_c: Array) -> SurrogatePosterior:
        mean, std = predict_all(state, u_c)
        return SurrogatePosterior(u_c, mean[0], std[0], mu_best(state), mean[1:].T, std[1:].T)

    def ask(state: NeuralCBOState, key: Array) -> Array:
        k_c, k_a = jax.random.split(key)
        ranked = feasibility_ranked(state.data, state.scale)
        u = optimize_acqf(lambda u_c: acq(surrogate_posterior(state, u_c), k_a), k_c, ranked, aopt)
        return state.bounds.from_unit(u)

    def tell(state: NeuralCBOState, x: Array, y: Array, c=None) -> NeuralCBOState:
        u, Y = told_rows(state.bounds, x, y, c, constrained=True)
        return absorb(state, state.data.add_batch(u, Y), u.shape[0], train_steps)

    return make_algorithm(init, ask, tell, name="neural-cbo", surrogate=surrogate_posterior, q=q,
                          batch_rule="fantasy", constrained=True)


__all__ = ["neural_cbo", "NeuralCBOState", "PRESETS", "TRAINING", "INCUMBENTS", "OPTIMIZERS"]
