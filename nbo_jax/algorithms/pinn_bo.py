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

**Structure.** The surrogate is :func:`nbo_jax.surrogates.pinn.pinn` (network, PDE loss,
NTK-PINN posterior, ``info``); ``ask`` is :func:`nbo_jax.bo.bo_algorithm`'s on it (the greedy
step is :func:`nbo_jax.acquisition.greedy`, utility ``-nu h``). ``init`` and ``tell`` are the
preset's own: the PDE needs the box and the map from the targets back to the objective's
units (``mean + std * target``), which the surrogate seam does not pass, so they hand them to
the surrogate's ``bounds``/``units`` keywords.

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

from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp
import optax

from .._checks import check_bool, check_choice, check_int, check_scale, resolve_preset
from ..acquisition import greedy, thompson
from ..bo import BOState, bo_algorithm, make_algorithm, records_config
from ..dataset import Dataset
from ..networks import network_builder, ntk_mlp
from ..observations import initial_data, told_rows
from ..optimize import AcqOptimizer, as_acq_optimizer
from ..surrogates.pinn import RESIDUAL_POINTS, PINNInfoState, PINNState, check_pde, pinn
from ..types import BOAlgorithm

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

PINNBOState = PINNState
"""PINN-BO's surrogate state (the model inside :class:`~nbo_jax.bo.BOState`'s ``model``)."""


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
        width: hidden width ``m``.
        depth: number of weight layers ``L`` (>= 2).
        nu: the scale ``nu`` of eq. 5.1 (> 0; paper 1; a float or a scalar array).
        activation: a smooth activation (paper ``"tanh"``; ``"relu"`` has zero second
            derivatives and is refused when an operator is given).
        learning_rate: Adam's step size ``lr``, ``lr * lr_decay^k`` at step ``k`` of a
            training round (paper and default 0.01).
        lr_decay: the decay factor of ``learning_rate`` (paper 0.95; default 0.99).
        epochs: training steps per round (one step = all data + a residual batch; paper and
            default 100).
        init_epochs: training steps on the initial design (paper 100; default 300).
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
        lambda1: the observations' regularizer of Lemma 5.3.6 (> 0; default 1; a float or a
            scalar array).
        lambda2: the PDE data's regularizer of Lemma 5.3.6 (> 0; default 1; a float or a
            scalar array).
        q: points per ask (BoTorch's ``q``). With the default preset's Thompson sampling the
            ``q`` points are independent draws (``batch_rule = "independent"``; Kandasamy et
            al. 2018); with the greedy step or an acquisition function given as
            ``acquisition`` each point is chosen after telling the previous ones with a
            constant-liar value (``batch_rule = "fantasy"``; Ginsbourger, Le Riche & Carraro
            2010), see :mod:`nbo_jax.transforms.batch`.
        preset: ``"default"`` or ``"paper"``; fills every argument left ``None``.

    Returns:
        :class:`~nbo_jax.types.BOAlgorithm` named ``"pinn-bo"`` whose state is a
        :class:`~nbo_jax.bo.BOState` holding the :class:`~nbo_jax.surrogates.pinn.PINNState`
        in ``model``: ``init(key, x0 (n0, d), y0 (n0,), c0=None, *, bounds, capacity)`` trains on the
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
    check_pde(operator, source)
    chosen = resolve_preset(PRESETS, preset, n_residual=n_residual, width=width, depth=depth,
                            learning_rate=learning_rate, lr_decay=lr_decay, epochs=epochs, init_epochs=init_epochs,
                            retrain_every=retrain_every, residual_batch=residual_batch,
                            residual_weight=residual_weight)
    network = network_builder(chosen["width"], chosen["depth"], activation, build=ntk_mlp, gamma=1.0)
    n_res = check_int("n_residual", chosen["n_residual"], 1)
    batch = chosen["residual_batch"]
    batch = n_res if batch is None else min(check_int("residual_batch", batch, 1), n_res)
    lr = check_scale("learning_rate", chosen["learning_rate"], allow_zero=False, allow_array=False)
    decay = check_scale("lr_decay", chosen["lr_decay"], allow_zero=False, allow_array=False)
    if decay > 1:
        raise ValueError(f"lr_decay must be in (0, 1], got {decay}")
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
    standardize = check_bool("standardize", standardize)
    preset_acquisition = acquisition is None
    acquisition = chosen["acquisition"] if acquisition is None else acquisition
    if isinstance(acquisition, str) and acquisition != "greedy":
        raise ValueError(f"acquisition must be 'greedy' or a function (posterior, key) -> utility, got {acquisition!r}")
    if not isinstance(acquisition, str) and not callable(acquisition):
        raise TypeError(f"acquisition must be 'greedy' or a function (posterior, key) -> utility, "
                        f"got {type(acquisition).__name__}")
    scored = not isinstance(acquisition, str)  # a function of the posterior, scored on the raw samples by default
    thompson_default = scored and preset_acquisition
    no_gradient = None
    if thompson_default:
        no_gradient = ("the default Thompson sampling draws independently per raw sample, with no gradient; "
                       "use acquisition='greedy' or a differentiable one such as nbo.acquisition.lcb(2.0)")
    base_opt = chosen["acq_optimizer"]._replace(steps=0) if scored else chosen["acq_optimizer"]
    aopt = as_acq_optimizer(acq_optimizer, default=base_opt, no_gradient=no_gradient)
    optimizer = optax.adam(optax.exponential_decay(lr, transition_steps=1, decay_rate=decay))
    surrogate = pinn(network, operator, source, optimizer=optimizer, nu=check_scale("nu", nu, allow_zero=False),
                     n_residual=n_res, residual_batch=batch, epochs=check_int("epochs", chosen["epochs"], 0),
                     init_epochs=check_int("init_epochs", chosen["init_epochs"], 0),
                     retrain_every=check_int("retrain_every", chosen["retrain_every"], 1),
                     residual_points=check_choice("residual_points", residual_points, RESIDUAL_POINTS),
                     warm_start=check_bool("warm_start", warm_start), residual_weight=weight,
                     residual_scale=residual_scale, features=scored, info=check_bool("info", info),
                     info_points=check_int("info_points", info_points, 1),
                     lambda1=check_scale("lambda1", lambda1, allow_zero=False),
                     lambda2=check_scale("lambda2", lambda2, allow_zero=False))
    batch_rule = "independent" if thompson_default else "fantasy"
    base = bo_algorithm(surrogate, greedy() if not scored else acquisition, acq_optimizer=aopt, name="pinn-bo",
                        outcome_transform="standardize" if standardize else "none", batch_rule=batch_rule)

    def fitted(data: Dataset) -> tuple[Dataset, tuple]:
        """The surrogate's targets and ``(offset, scale)``: the objective is ``offset + scale * target``."""
        if not standardize:
            return data._replace(y=jnp.where(data.mask, data.y, 0.0)), (0.0, 1.0)
        z, mean, std = data.standardized()
        return data._replace(y=z), (mean, std)

    def init(key: Array, x0: Array, y0: Array, c0=None, *, bounds, capacity: int) -> BOState:
        data, box = initial_data(x0, y0, c0, bounds, capacity, constrained=False)
        targets, units = fitted(data)
        n0 = jnp.shape(x0)[0]
        model = surrogate.init(key, targets, jnp.arange(n0), bounds=box, units=units)
        return BOState(data, box, model, jnp.zeros((), jnp.int32), jnp.asarray(n0, jnp.int32))

    def tell(state: BOState, x: Array, y: Array, c=None) -> BOState:
        u, y = told_rows(state.bounds, x, y, c, constrained=False)
        rows = state.data.count + jnp.arange(u.shape[0])
        data = state.data.add_batch(u, y)
        targets, units = fitted(data)
        return state._replace(data=data, model=surrogate.update(state.model, targets, rows, True, units=units),
                              tells=state.tells + 1, rows_told=state.rows_told + u.shape[0])

    return make_algorithm(init, base.ask, tell, name="pinn-bo", surrogate=base.surrogate, info=base.info, q=q,
                          batch_rule=batch_rule, model=surrogate,
                          outcome_transform=base.outcome_transform)


__all__ = ["pinn_bo", "PINNBOState", "PINNInfoState", "PRESETS"]
