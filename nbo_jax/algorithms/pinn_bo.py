"""PINN-BO: black-box optimization with a physics-informed neural network surrogate
(Phan-Trong 2024, PhD thesis, Ch. 5, Algorithm 4, eq. 5.1).

The objective ``f`` is expensive; a PDE ``N[f](x) = g(x)`` that it satisfies is known and
``g`` is cheap. Per iteration (minimization, Algorithm 4 lines 5-8)::

    x_t = argmin_x h(x; theta_{t-1})                                  (greedy acquisition)
    y_t = f(x_t) + eps_t;  D_t = D_{t-1} + {(x_t, y_t)}
    theta_t = argmin_theta sum_i (y_i - nu h(x_i))^2 + sum_j (u_j - nu N[h](z_j))^2   (eq. 5.1)

with residual (collocation) points ``z_j`` uniform in the box and ``u_j = g(z_j)``. The
network is trained by Adam with an exponentially decaying learning rate, warm-started from the
previous weights, every ``retrain_every`` iterations. The greedy step is a Thompson draw in
the NTK limit (Lemma 5.3.4); the exploration comes from the random initialization.

**Units.** Targets are standardized (mean 0, std 1 over the valid observations): the network
predicts ``(y - mean) / std``; the PDE is imposed on ``f_hat(x) = mean + std * nu * h(z(x))``
in box coordinates (:func:`nbo_jax.pinn.box_surrogate`) and its residual divided by ``std``,
so any operator, linear or not, is applied exactly as the user wrote it for ``f``.

**Network.** ``h(z) = (1/sqrt(m)) W_L psi(... psi(W_1 z))`` with ``N(0, 1)`` weights and tanh
``psi``: :func:`nbo_jax.networks.ntk_mlp` with ``gamma = 1``, i.e. the NTK
parameterization (every layer scaled by ``1/sqrt(fan_in)``, biases included), the
parameterization the NTK-PINN theory (Wang, Yu and Perdikaris 2022) uses.

**Diagnostic.** With ``info=True`` the state carries the NTK-PINN features at ``theta_0`` and
``BOAlgorithm.info`` reports, after each step, the interaction information ``I(f; Y_t; U_r)``
(Lemma 5.3.6), the information gain ``I(f; Y_t)`` and the last training losses; ``run_bo``
records them in ``History.info``. The kernel uses ``info_points`` residual rows (uniform
points drawn once; a ``k``-vector residual gives ``k`` rows per point), not all ``N_r``: the
cost is one ``r x r`` Cholesky at ``init`` and ``O((t + r) p + t^3)`` per step.

**Paper preset** (``preset="paper"``; thesis Section 5.4 and the authors' code): width 100,
depth 3 (the middle of the thesis' grid {100, 200, 500} x {2, 3, 4}), Adam lr 0.01 (the grid's
{1e-3 ... 1e-1} is searched per function in the thesis), decay 0.95 per epoch, retraining
every 10 iterations for 100 epochs, ``N_r = 40,000`` fixed residual points, eq. 5.1 as printed
(``residual_weight="sum"``), ``nu = 1``; acquisition: 50,000 uniform raw samples, the best 100
refined by 512 Adam steps at lr 1e-3 clipped to the box (``acq_optimizer(raw_samples=50_000,
num_restarts=100, steps=512, learning_rate=1e-3, local_fraction=0)``). **Decisions** where the
sources are silent: one epoch = one full-batch step over the data and all residual points; the
decay restarts at each retraining; the initial design is trained for the same 100 epochs.

**Library defaults** (``preset="default"``): width 64, depth 3, Adam lr 0.01 with decay 0.99
per step, retraining after every observation (100 steps; 300 on the initial design), 1024
fixed residual points of which 256 are drawn per step, ``residual_weight = 1`` (mean data
error + mean residual), and **Thompson sampling from the NTK-PINN posterior** instead of the
greedy step: ``f~(x) ~ N(nu h(x), sigma_t^2(x))`` on 1024 candidates (a quarter of them around
the 5 best observations), with ``sigma_t^2`` the posterior variance of Lemma 5.3.4 given the
observations and 256 residual rows (``lambda1 = lambda2 = 1``). **Decision**: the greedy step
stalls on the heat problems, where the maximum lies on the boundary (heat BC1, 8 seeds, 5 +
30 evaluations: every greedy run ended at the same corner, regret 1637, against 143 with
Thompson sampling and 388 for Neural-BO); on heat BC2 (12 seeds) Thompson PINN-BO reached
16.4 against 243 for Neural-BO and 61 without the PDE. Figures for every PDE problem are in
the issue-5 note and come from ``benchmarks/reproduce_pinn_bo_table.py``.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np
import optax

from .. import pde
from .. import pinn as pinn_lib
from .._checks import check_bool, check_choice, check_int, check_scale, resolve_preset
from ..acquisition import SurrogatePosterior, thompson
from ..bo import make_algorithm, records_config
from ..features import gradient_features, predict
from ..networks import Network, ntk_mlp
from ..observations import initial_data, told_rows
from ..optimize import AcqOptimizer, as_acq_optimizer, optimize_acqf
from ..posterior import solve_lower
from ..types import BOAlgorithm, Bounds, Dataset
from ..networks import network_builder

Array = jax.Array

PRESETS = {
    "paper": dict(width=100, depth=3, learning_rate=1e-2, lr_decay=0.95, epochs=100, init_epochs=100,
                  retrain_every=10, n_residual=40_000, residual_batch=None, residual_weight="sum",
                  acq_optimizer=AcqOptimizer(raw_samples=50_000, num_restarts=100, steps=512, method="adam",
                                             learning_rate=1e-3, local_fraction=0.0, raw_sampler="uniform",
                                             restarts="top"),
                  acquisition="greedy"),
    "default": dict(width=64, depth=3, learning_rate=1e-2, lr_decay=0.99, epochs=100, init_epochs=300,
                    retrain_every=1, n_residual=1024, residual_batch=256, residual_weight=1.0,
                    acq_optimizer=AcqOptimizer(raw_samples=1024, num_restarts=10, steps=100),
                    acquisition=thompson(1.0)),
}
RESIDUAL_POINTS = ("fixed", "resample")


class PINNInfoState(NamedTuple):
    """NTK-PINN features at ``theta_0`` for the interaction information (a pytree).

    Attributes:
        params0: ``theta_0``.
        z: ``(r / k, d)`` the residual points of the kernel (box coordinates).
        phi: ``(cap, p)`` rows ``grad_theta h(x_i; theta_0)`` (zero rows not yet observed).
        a: ``(r, p)`` ``L^{-1} Omega`` with ``L L^T = K_rr + lambda2 I``.
        k_uu: ``(cap, cap)`` ``Phi Phi^T``; w: ``(r, cap)`` ``L^{-1} K_ru``.
    """

    params0: Any
    z: Array
    phi: Array
    a: Array
    k_uu: Array
    w: Array


class PINNBOState(NamedTuple):
    """PINN-BO state (a pytree; fixed shapes).

    Attributes:
        data: :class:`~nbo_jax.dataset.Dataset` (unit-cube inputs).
        params: current weights ``theta_t``.
        residual_x: ``(N_r, d)`` residual (collocation) points in box coordinates.
        bounds: the box (:class:`~nbo_jax.domains.Bounds`, ``(d,)`` arrays).
        key: PRNG key of ``init`` (residual draws, shuffles).
        n_initial: ``()`` int32, number of initial points recorded (the retraining
            schedule counts from it).
        losses: ``(2,)`` mean squared data error and mean squared residual of the last
            training step (standardized units; the residual is 0 without a PDE).
        residual_scale: ``()`` the residual is divided by this (``0``: by the targets'
            standard deviation, i.e. standardized units).
        info: :class:`PINNInfoState` or ``None`` (``info=False`` or no operator).
    """

    data: Dataset
    params: Any
    residual_x: Array
    bounds: Bounds
    key: Array
    n_initial: Array
    losses: Array
    residual_scale: Array
    info: Optional[PINNInfoState]



@records_config
def pinn_bo(
    operator: Optional[Callable] = None,
    source: Any = 0.0,
    *,
    n_residual: Optional[int] = None,
    width: Optional[int] = None,
    depth: Optional[int] = None,
    nu: float = 1.0,
    activation: str = "tanh",
    learning_rate: Optional[float] = None,
    lr_decay: Optional[float] = None,
    epochs: Optional[int] = None,
    init_epochs: Optional[int] = None,
    retrain_every: Optional[int] = None,
    residual_points: str = "fixed",
    warm_start: bool = True,
    residual_batch: Optional[int] = None,
    residual_weight: Any = None,
    residual_scale: Any = "auto",
    acq_optimizer: Optional[AcqOptimizer | dict] = None,
    acquisition: Any = None,
    standardize: bool = True,
    info: bool = True,
    info_points: int = 256,
    lambda1: float = 1.0,
    lambda2: float = 1.0,
    q: int = 1,
    preset: str = "default",
) -> BOAlgorithm:
    """Build PINN-BO (Phan-Trong 2024, PhD thesis, Ch. 5, Algorithm 4).

    Args:
        operator: the PDE operator ``u -> N[u]``, a function of a scalar function of one
            point returning a field (build it from :mod:`nbo_jax.pde`, e.g. ``lambda u:
            pde.laplacian(u)``), stated in box coordinates. ``None``: no PDE, the same
            greedy network surrogate trained on the data alone (the ablation).
        source: ``g``: a function of ``x (d,)`` or a constant (default 0); its output shape
            must match the operator's (a scalar, or ``(k,)`` for a vector residual); a
            constant must be finite.
        n_residual: ``N_r``, the number of residual points, uniform in the box (paper 40,000;
            default 1024).
        width, depth: hidden width ``m`` and number of weight layers ``L`` (>= 2).
        nu: the scale ``nu`` of eq. 5.1 (> 0; paper 1; a float or a scalar array).
        activation: a smooth activation (paper ``"tanh"``; ``"relu"`` has zero second
            derivatives and is refused when an operator is given).
        learning_rate, lr_decay: Adam with ``lr * lr_decay^k`` at step ``k`` of a training
            round (paper 0.01 / 0.95; default 0.01 / 0.99).
        epochs, init_epochs: training steps per round and on the initial design (one step =
            all data + a residual batch; paper 100 / 100; default 100 / 300).
        retrain_every: retrain after every ``k``-th observation (paper 10; default 1); a
            batch of ``n`` observations retrains once if it reaches a multiple of ``k``.
        residual_points: ``"fixed"`` (drawn once at ``init``) or ``"resample"`` (a fresh
            uniform set at every retraining).
        warm_start: each retraining starts from the current weights (True) or from a fresh
            ``N(0, 1)`` draw (False: a new Thompson draw each round, Lemma 5.3.4; set
            ``epochs`` high enough to fit from scratch).
        residual_batch: residual points per step, drawn at random from the ``N_r`` (``None``:
            all; default 256).
        residual_weight: ``"sum"`` (eq. 5.1 as printed: the two sums, paper) or a float
            ``w >= 0``: ``mean data error + w * mean squared residual`` (default 1).
        residual_scale: the residual is divided by it before squaring: ``"auto"`` (the
            root mean square of ``g`` over the residual points when ``g`` is not zero there,
            else the targets' standard deviation), ``"std"`` (always the latter:
            standardized units) or a float ``> 0`` (in the units of ``N[f]``). Without it a
            stiff operator (the beam's ``rho^2 u''''`` is about ``1e9 u''''``) drowns the data.
        acq_optimizer: settings of :func:`nbo_jax.optimize.optimize_acqf`, which maximizes
            the acquisition over the unit cube: an :func:`nbo_jax.optimize.acq_optimizer` or a
            dict of its arguments (fields not in the dict take ``acq_optimizer``'s
            defaults). ``None``: the preset's, paper ``raw_samples = 50,000``,
            ``num_restarts = 100``, ``steps = 512``, ``learning_rate = 1e-3``,
            ``local_fraction = 0``; default ``raw_samples = 1024``, ``num_restarts = 10``,
            ``steps = 50``, ``learning_rate = 0.02``, ``local_fraction = 0.25`` (std 0.05
            around the 5 best observations); with an acquisition function given as
            ``acquisition`` (or the default preset's Thompson sampling) the preset's
            ``steps`` become 0: the function is scored on the raw samples only (pass
            ``acq_optimizer`` with ``steps > 0`` to climb a differentiable one such as
            :func:`nbo_jax.acquisition.lcb`).
        acquisition: ``"greedy"`` (the paper's ``argmin h``, refined by gradient steps; the
            paper preset) or any :mod:`nbo_jax.acquisition` function of the surrogate
            posterior, scored on the candidates, e.g. ``acquisition.thompson(1.0)`` (the
            library default): Thompson sampling from the NTK-PINN posterior ``N(nu h(x),
            sigma_t^2(x))`` of Lemma 5.3.4, whose variance
            :func:`nbo_jax.pinn.posterior_variance` computes from the features at
            ``theta_0``. ``None``: the preset's choice.
        standardize: standardize the targets (mean 0, std 1 over the trained rows).
        info: record the interaction information (module doc) in ``History.info``.
        info_points: residual rows of the NTK-PINN kernel used for it (>= 1).
        lambda1, lambda2: the regularizers of Lemma 5.3.6 (> 0; default 1 and 1; floats or
            scalar arrays).
        q: points per ask (BoTorch's ``q``). With the default preset's Thompson sampling the
            ``q`` points are independent draws (``batch_rule = "independent"``; Kandasamy et
            al. 2018); with the greedy step or an acquisition function given as
            ``acquisition`` each point is chosen after telling the previous ones with a
            constant-liar value (``batch_rule = "fantasy"``; Ginsbourger, Le Riche & Carraro
            2010), see :mod:`nbo_jax.transforms.batch`.
        preset: ``"default"`` or ``"paper"``; fills every argument left ``None``.

    Returns:
        :class:`~nbo_jax.types.BOAlgorithm` named ``"pinn-bo"``:
        ``init(key, x0 (n0, d), y0 (n0,), c0=None, *, bounds, capacity)`` trains on the
        initial design (``c0`` is ignored); ``ask(state, key) -> x (d,)`` (``(q, d)`` for
        ``q > 1``); ``tell(state, x (d,) | (n, d), y () | (n,), c=None)`` appends and
        retrains when due; ``surrogate(state, u (N, d))``: mean ``nu h`` in standardized
        units and the NTK-PINN posterior standard deviation (0 for the greedy acquisition
        without ``info``); ``info(state)``: a dict of scalars (``interaction_information``,
        ``information_gain`` [nats] over the finite observations, ``data_loss``,
        ``residual_loss``).

    Failed evaluations (NaN/inf ``y``) are trained on at the worst value observed (the
    :class:`~nbo_jax.dataset.Dataset` rule) and shrink the posterior variance there; they are
    never the incumbent and carry no information about ``f`` in ``info``.

    Raises:
        TypeError: an argument of the wrong type (e.g. ``width=2.7``, ``nu="1"``,
            ``info=1``), the message names it.
        ValueError: an argument out of range, NaN or unknown (the message names it);
            ``acq_optimizer.steps > 0`` with the default preset's Thompson sampling (its draws
            are independent per raw sample: no gradient to climb); ``init`` raises ValueError
            naming ``operator``/``source`` when they cannot be applied to a function of ``d``
            inputs or their shapes disagree.
    """
    if operator is not None and not callable(operator):
        raise TypeError(f"operator must be a callable u -> N[u] (see nbo_jax.pde), got {type(operator).__name__}")
    if not callable(source):
        if isinstance(source, (str, bool, np.bool_)) or not isinstance(source, (int, float, np.number, np.ndarray,
                                                                                jax.Array)):
            raise TypeError(f"source must be a function g(x) or a number, got {type(source).__name__}")
        if not isinstance(source, jax.core.Tracer) and not np.all(np.isfinite(np.asarray(source, np.float64))):
            raise ValueError(f"source must be finite, got {source!r}")
    chosen = resolve_preset(PRESETS, preset, n_residual=n_residual, width=width, depth=depth,
                            learning_rate=learning_rate, lr_decay=lr_decay, epochs=epochs, init_epochs=init_epochs,
                            retrain_every=retrain_every, residual_batch=residual_batch,
                            residual_weight=residual_weight)
    network = network_builder(chosen["width"], chosen["depth"], activation, build=ntk_mlp, gamma=1.0)
    n_res = check_int("n_residual", chosen["n_residual"], 1)
    epochs = check_int("epochs", chosen["epochs"], 0)
    init_epochs = check_int("init_epochs", chosen["init_epochs"], 0)
    retrain_every = check_int("retrain_every", chosen["retrain_every"], 1)
    batch = chosen["residual_batch"]
    batch = n_res if batch is None else min(check_int("residual_batch", batch, 1), n_res)
    info_points = check_int("info_points", info_points, 1)
    q = check_int("q", q, 1)
    nu = check_scale("nu", nu, allow_zero=False)
    lr = check_scale("learning_rate", chosen["learning_rate"], allow_zero=False, allow_array=False)
    decay = check_scale("lr_decay", chosen["lr_decay"], allow_zero=False, allow_array=False)
    if decay > 1:
        raise ValueError(f"lr_decay must be in (0, 1], got {decay}")
    lambda1 = check_scale("lambda1", lambda1, allow_zero=False)
    lambda2 = check_scale("lambda2", lambda2, allow_zero=False)
    weight = chosen["residual_weight"]
    if isinstance(weight, str):
        check_choice("residual_weight", weight, ("sum",))
    else:
        weight = check_scale("residual_weight", weight, allow_zero=True)
    if operator is not None and activation == "relu":
        raise ValueError("activation: 'relu' has zero second derivatives; use a smooth one ('tanh') with a PDE")
    if isinstance(residual_scale, str):
        check_choice("residual_scale", residual_scale, ("auto", "std"))
    else:
        residual_scale = check_scale("residual_scale", residual_scale, allow_zero=False)
    check_choice("residual_points", residual_points, RESIDUAL_POINTS)
    warm_start = check_bool("warm_start", warm_start)
    standardize = check_bool("standardize", standardize)
    use_pde = operator is not None
    use_info = check_bool("info", info) and use_pde
    preset_acquisition = acquisition is None
    if acquisition is None:
        acquisition = chosen["acquisition"]
    if isinstance(acquisition, str):
        if acquisition != "greedy":
            raise ValueError(f"acquisition must be 'greedy' or a function (posterior, key) -> utility, "
                             f"got {acquisition!r}")
        acquisition = None
    elif not callable(acquisition):
        raise TypeError(f"acquisition must be 'greedy' or a function (posterior, key) -> utility, "
                        f"got {type(acquisition).__name__}")
    thompson_default = acquisition is not None and preset_acquisition
    base = chosen["acq_optimizer"]
    if acquisition is not None:  # a posterior acquisition is scored on the raw samples by default
        base = base._replace(steps=0)
    no_gradient = None
    if thompson_default:
        no_gradient = ("the default Thompson sampling draws independently per raw sample, with no gradient; "
                       "use acquisition='greedy' or a differentiable one such as nbo.acquisition.lcb(2.0)")
    aopt = as_acq_optimizer(acq_optimizer, default=base, no_gradient=no_gradient)
    use_features = use_info or acquisition is not None
    schedule = optax.exponential_decay(lr, transition_steps=1, decay_rate=decay)
    optimizer = optax.adam(schedule)

    def network_of(state: PINNBOState) -> Network:
        return network(state.data.u.shape[1], state.data.u.dtype)

    def residual_rows(d: int, dtype) -> int:
        """``k``: entries of the residual per point; checks operator and source."""
        net = network(d, dtype)
        x = jax.ShapeDtypeStruct((d,), dtype)
        try:
            params = jax.eval_shape(net.init, jax.random.key(0))
            shape = jax.eval_shape(lambda p, xi: pde.residual(operator, 0.0)(
                pinn_lib.box_surrogate(net.apply, p, jnp.zeros(d, dtype), jnp.ones(d, dtype)))(xi), params, x).shape
            g_shape = jax.eval_shape(lambda xi: pde.constant(source)(xi), x).shape
        except Exception as err:  # noqa: BLE001 (re-raised with the argument named)
            raise ValueError(f"operator/source: cannot evaluate N[u](x) - g(x) for a function of d={d} inputs "
                             f"({type(err).__name__}: {err})") from err
        if g_shape not in ((), shape):
            raise ValueError(f"operator/source: N[u](x) has shape {shape} but g(x) has shape {g_shape}")
        return int(math.prod(shape))

    def uniform_box(key: Array, n: int, box: Bounds) -> Array:
        return box.from_unit(jax.random.uniform(key, (n, box.lower.shape[0]), box.lower.dtype))

    def train(state: PINNBOState, params, key: Array, steps) -> tuple[Any, Array]:
        """``steps`` Adam steps on eq. 5.1 from ``params``; returns ``(params, losses)``."""
        data = state.data
        net = network_of(state)
        if standardize:
            y, mean, std = data.standardized()
        else:
            y, mean, std = data.y, 0.0, 1.0
        y = jnp.where(data.mask, y, 0.0)
        z = 2.0 * data.u - 1.0

        def loss_fn(p, x_res):
            data_sq = (y - nu * predict(net.apply, p, z)) ** 2
            n = jnp.maximum(jnp.sum(data.mask), 1)
            data_mse = jnp.sum(jnp.where(data.mask, data_sq, 0.0)) / n
            if not use_pde:
                return pinn_lib.pinn_loss(data_sq, data.mask, None, weight), jnp.stack([data_mse, 0.0 * data_mse])
            f_hat = pinn_lib.box_surrogate(net.apply, p, state.bounds.lower, state.bounds.upper, offset=mean,
                                           scale=std * nu)
            scale = jnp.where(state.residual_scale > 0, state.residual_scale, std)
            res_sq = (pinn_lib.residual_values(operator, source, f_hat, x_res) / scale) ** 2
            loss = pinn_lib.pinn_loss(data_sq, data.mask, res_sq, weight)
            return loss, jnp.stack([data_mse, jnp.mean(res_sq)])

        grad_fn = jax.grad(loss_fn, has_aux=True)

        def step(i, carry):
            p, s, _ = carry
            if batch < n_res:
                idx = jax.random.randint(jax.random.fold_in(key, i), (batch,), 0, n_res)
                x_res = state.residual_x[idx]
            else:
                x_res = state.residual_x
            g, losses = grad_fn(p, x_res)
            upd, s = optimizer.update(g, s, p)
            return optax.apply_updates(p, upd), s, losses

        p, _, losses = jax.lax.fori_loop(0, steps, step, (params, optimizer.init(params), state.losses))
        return p, losses

    def features_at(state: PINNBOState, params0, x: Array) -> Array:
        """``grad_theta h(x; theta_0)`` for box points ``x (n, d)`` -> ``(n, p)``."""
        box = state.bounds
        return gradient_features(network_of(state).apply, params0,
                                 pinn_lib.to_network_input(x, box.lower, box.upper))

    def init(key: Array, x0: Array, y0: Array, c0=None, *, bounds, capacity: int) -> PINNBOState:
        data, box = initial_data(x0, y0, c0, bounds, capacity, constrained=False)
        d, dtype = data.u.shape[1], data.u.dtype
        x0 = jnp.reshape(jnp.asarray(x0, dtype), (-1, d))
        k_rows = residual_rows(d, dtype) if use_pde else 1
        net = network(d, dtype)
        k_net, k_res, k_train, k_info, k_state = jax.random.split(key, 5)
        params0 = net.init(k_net)
        residual_x = uniform_box(k_res, n_res, box)
        if isinstance(residual_scale, str) and residual_scale == "auto" and use_pde:
            g = jax.vmap(pde.constant(source))(residual_x)
            r_scale = jnp.sqrt(jnp.mean(jnp.square(g))).astype(dtype)
        else:
            r_scale = jnp.asarray(0.0 if isinstance(residual_scale, str) else residual_scale, dtype)
        state = PINNBOState(data, params0, residual_x, box, k_state, data.count.astype(jnp.int32),
                            jnp.zeros((2,), dtype), r_scale, None)
        params, losses = train(state, params0, k_train, init_epochs)
        state = state._replace(params=params, losses=losses)
        if use_features:
            n_pts = max(1, info_points // k_rows)
            z_info = uniform_box(k_info, n_pts, box)
            if use_pde:
                phi0, omega = pinn_lib.pinn_features(net.apply, params0, operator, box.lower, box.upper, x0, z_info)
            else:
                phi0 = features_at(state, params0, x0)
                omega = jnp.zeros((1, phi0.shape[1]), dtype)
            chol = pinn_lib.residual_factor(omega @ omega.T, lambda2)
            a = solve_lower(chol, omega)
            rows = Dataset.empty(capacity, x0.shape[1], x0.dtype).write_index(x0)
            phi = jnp.zeros((capacity, phi0.shape[1]), dtype).at[rows].set(phi0, mode="drop")
            state = state._replace(info=PINNInfoState(params0, z_info, phi, a, phi @ phi.T, a @ phi.T))
        return state

    def ask(state: PINNBOState, key: Array) -> Array:
        net = network_of(state)
        k_c, k_a = jax.random.split(key)
        if acquisition is not None:
            utility = lambda u: acquisition(surrogate(state, u), k_a)  # noqa: E731
        else:  # greedy: argmin h
            utility = lambda u: -predict(net.apply, state.params, 2.0 * u - 1.0)  # noqa: E731
        return state.bounds.from_unit(optimize_acqf(utility, k_c, state.data, aopt))

    def tell(state: PINNBOState, x: Array, y: Array, c=None) -> PINNBOState:
        u, y = told_rows(state.bounds, x, y, c, constrained=False)
        x = jnp.reshape(jnp.asarray(x, u.dtype), u.shape)
        before = state.data.count
        rows = state.data.write_index(u)
        state = state._replace(data=state.data.add_batch(u, y))
        count = state.data.count
        # retrain when the observations since the initial design reach a multiple of retrain_every
        # (one observation: (count - n_initial) % retrain_every == 0)
        retrain = (count - state.n_initial) // retrain_every > (before - state.n_initial) // retrain_every
        key = jax.random.fold_in(state.key, count)
        k_res, k_train = jax.random.split(key)
        if residual_points == "resample":
            fresh = uniform_box(k_res, n_res, state.bounds)
            state = state._replace(residual_x=jnp.where(retrain, fresh, state.residual_x))
        if warm_start:
            start = state.params
        else:
            fresh = network_of(state).init(jax.random.fold_in(k_train, 1))
            start = jax.tree.map(lambda a, b: jnp.where(retrain, a, b), fresh, state.params)
        params, losses = train(state, start, k_train, jnp.where(retrain, epochs, 0))
        state = state._replace(params=params, losses=losses)
        if state.info is not None:
            inf = state.info
            g = features_at(state, inf.params0, x)
            phi = inf.phi.at[rows].set(g, mode="drop")
            k_new = phi @ g.T  # (cap, n): the new rows' kernel with every row, themselves included
            k_uu = inf.k_uu.at[:, rows].set(k_new, mode="drop").at[rows, :].set(k_new.T, mode="drop")
            state = state._replace(info=inf._replace(phi=phi, k_uu=k_uu,
                                                     w=inf.w.at[:, rows].set(inf.a @ g.T, mode="drop")))
        return state

    def surrogate(state: PINNBOState, u_c: Array) -> SurrogatePosterior:
        net = network_of(state)
        mean = nu * predict(net.apply, state.params, 2.0 * u_c - 1.0)
        targets = state.data.standardized()[0] if standardize else state.data.y
        incumbent = state.data.incumbent(targets)
        if state.info is None:
            return SurrogatePosterior(u_c, mean, jnp.zeros_like(mean), incumbent)
        inf = state.info
        phi_c = features_at(state, inf.params0, state.bounds.from_unit(u_c))
        var = pinn_lib.posterior_variance(phi_c, inf.a, inf.phi, inf.w, inf.k_uu, lambda1, state.data.mask)
        return SurrogatePosterior(u_c, mean, jnp.sqrt(var), incumbent)

    def info_fn(state: PINNBOState) -> dict:
        out = {"data_loss": state.losses[0], "residual_loss": state.losses[1]}
        if use_info:
            # information about f from the finite observations (a failed evaluation measures nothing)
            gain, conditional = pinn_lib.information_terms(state.info.k_uu, state.info.w, lambda1,
                                                           state.data.observed())
            out.update(interaction_information=gain - conditional, information_gain=gain)
        return out

    return make_algorithm(init, ask, tell, name="pinn-bo", surrogate=surrogate, info=info_fn, q=q,
                          batch_rule="independent" if thompson_default else "fantasy")


__all__ = ["pinn_bo", "PINNBOState", "PINNInfoState", "PRESETS"]
