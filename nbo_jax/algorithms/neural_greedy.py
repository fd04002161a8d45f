"""NeuralGreedy: SimpleSMB and PosteriorSMB (Paria, Poczos, Ravikumar, Schneider & Suggala
2022, "Be Greedy", Algorithms 1-3 and Appendix F.2).

Each BO iteration fits a neural network **from a fresh random initialization** and takes
its minimizer as the next query (minimization form of Paria et al. 2022, Algorithm 1, lines 6-10)::

    y'_i = y_i + nu eps_i,   eps_i ~ N(0, sigma2)                   (Alg. 2, line 1)
    theta_0 ~ NTK-init(gamma)                                        (Alg. 2, line 2)
    SimpleSMB:    theta_t = argmin sum_i (y'_i - nu f(x_i; theta))^2
                                   + sigma2 nu^2 ||theta - theta_0||^2         (Alg. 2, line 3)
                  acquisition  nu f(.; theta_t)                                 (Alg. 2, line 4)
    PosteriorSMB: theta~_0 ~ NTK-init(gamma) with a zero last layer             (Alg. 3, 2-3)
                  delta(x) = <grad_theta f(x; theta_0), theta~_0>   (a jvp)      (Alg. 3, 4)
                  theta_t = argmin sum_i (y'_i - nu f(x_i; theta) - nu delta(x_i))^2
                                   + sigma2 nu^2 ||theta - theta_0||^2         (Alg. 3, line 5)
                  acquisition  nu (f(.; theta_t) + delta)                       (Alg. 3, line 6)
    x_t = argmin_x acquisition(x)                                    (Alg. 1, line 8)

The first ``T_e = clip(5 d, 0.025 T, 0.075 T)`` iterations are uniform random (Alg. 1,
lines 2-5; Appendix F.2), with ``T`` = the number of BO iterations of the run
(``capacity - n_init``, known at ``init``). :func:`exploration_steps` gives the rounding.
``T`` and ``T_e`` count evaluations: with ``q`` points per ask, the first ``T_e`` evaluated
points after the initial design are random and the rest greedy (a batch that straddles the
end of the phase mixes both).

**Network** (Paria et al. 2022, Appendix A; :func:`ntk_mlp`): NTK parameterization,
``a^(l+1) = phi(sigma_W / sqrt(d_l) W^(l) a^(l) + sigma_b b^(l))``,
``f = sigma_W / sqrt(d_L) W^(L) a^(L) + sigma_b b^(L)``, every ``W, b ~ N(0, 1)`` except the
final bias, which starts at 0 (Appendix F.2), ``sigma_W = sigma_b = gamma``. Inputs are
``z = 2u - 1``; targets are standardized over the valid observations,
so ``eps`` and ``sigma2`` are in standardized units.

**Where the work happens.** Because the surrogate is refit from a fresh init every
iteration, the fit (and the draws of ``theta_0``, ``theta~_0``, ``eps``) happens inside
``ask``, from ``ask``'s key; ``tell`` only appends the observation. The fit is full-batch
Adam on the masked rows (:func:`fit_smb`, through :func:`nbo_jax.training.train_regression`
with the batch = the whole buffer), minimizing the Alg. 2/3 loss divided by ``2 n nu^2``
(same minimizer). The acquisition is minimized by :func:`nbo_jax.optimize.optimize_acqf`
(settings ``acq_optimizer``): the ``num_restarts`` best of ``raw_samples`` points (uniform
plus, in the library default, local perturbations of the best observations) climb it by
projected Adam steps in the unit cube; the best point wins.

**Paper preset** (``preset="paper"``; Appendix F.2): one hidden layer (``depth=2``) of width
5000, tanh, ``gamma = 1`` (the paper tunes it in [0.5, 5]), Adam lr 1e-3, ``nu = 1``,
``sigma2 = 0``; the acquisition is minimized from 10 uniform random starts
(``acq_optimizer``: ``raw_samples = num_restarts = 10``, ``local_fraction = 0``) with 500
steps at lr 0.01. The paper uses plain
gradient descent on the acquisition; here the steps are projected Adam in the unit cube (the
library's optimizer). The number of training steps is not stated in the paper:
**decision** 1000 full-batch Adam steps (measured: "Measured choices", ``docs/measurements.md``).

**Library defaults** (``preset="default"``): width 256, ``gamma = 2``, Adam lr 1e-2 for 300
full-batch steps, acquisition from the 10 best of 512 raw samples (a quarter of them local,
std 0.05 around the 5 best observations) refined by 50 projected Adam steps at lr 0.02
(``acq_optimizer(raw_samples=512, num_restarts=10, steps=50, learning_rate=0.02)``). The
measurements behind these choices, and the cost per ``ask``, are on the documentation site's
page "Measured choices" (``docs/measurements.md``).

**Batches** (``q > 1``): the greedy point is deterministic given the state and ``ask``'s
key, so ``q`` points come from the constant liar (``batch_rule="fantasy"``; Ginsbourger et
al. 2010, :mod:`nbo_jax.transforms.batch`): each chosen point is told to a copy of the state with the
mean observed value before the next network is fitted. During the exploration phase the
fantasized points count as evaluations, so a batch holds ``T_e`` random points in all.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import optax

from .._checks import (
    BATCH_SIZE_IS_Q,
    check_bool,
    check_choice,
    check_int,
    check_scale,
    refuse_renamed,
    resolve_preset,
)
from ..acquisition import SurrogatePosterior
from ..bo import make_algorithm, records_config
from ..features import predict
from ..networks import last_layer_name, ntk_mlp  # ntk_mlp, last_layer_name: re-exported
from ..observations import initial_data, told_rows
from ..optimize import AcqOptimizer, as_acq_optimizer, optimize_acqf, random_point
from ..training import TrainConfig, make_optimizer, train_regression
from ..types import BOAlgorithm, Bounds, Dataset
from ..networks import network_builder

Array = jax.Array
Params = Any

VARIANTS = ("simple", "posterior")

PRESETS = {
    "paper": dict(width=5000, gamma=1.0, learning_rate=1e-3, train_steps=1000,
                  acq_optimizer=AcqOptimizer(raw_samples=10, num_restarts=10, steps=500, method="adam",
                                             learning_rate=0.01, local_fraction=0.0, raw_sampler="uniform",
                                             restarts="top")),
    "default": dict(width=256, gamma=2.0, learning_rate=1e-2, train_steps=300,
                    acq_optimizer=AcqOptimizer(raw_samples=512, num_restarts=10, steps=200)),
}


def zero_last_layer(params: Params, depth: int) -> Params:
    """``params`` with the output layer (weights and bias) set to 0: ``theta~_0`` of Paria et al. 2022,
    Algorithm 3, line 3."""
    out = dict(params)
    name = last_layer_name(depth)
    out[name] = jax.tree.map(jnp.zeros_like, params[name])
    return out


# --------------------------------------------------------------------------- pieces
def exploration_steps(dim: int, total: int) -> int:
    """``T_e = clip(5 d, 0.025 T, 0.075 T)`` rounded to the nearest int, halves up (Paria et al. 2022,
    Appendix F.2, "Exploration budget"). ``total`` = ``T``, the number of BO iterations.

    Examples: ``(d, T) = (2, 25) -> 2``, ``(2, 1000) -> 25``, ``(10, 1000) -> 50``,
    ``(20, 1000) -> 75``, ``(1, 10) -> 1``, ``(d, 0) -> 0``.
    """
    t_e = min(max(5.0 * dim, 0.025 * total), 0.075 * total)
    return int(math.floor(t_e + 0.5))


def perturbation(apply: Callable, params0: Params, params_tilde: Params, z: Array) -> Array:
    """``delta(z_i) = <grad_theta f(z_i; theta_0), theta~_0>`` for ``z (n, d)`` -> ``(n,)``
    (Paria et al. 2022, Algorithm 3, line 4), as a forward-mode jvp: no Jacobian is formed."""

    def one(zi):
        return jax.jvp(lambda th: apply(th, zi), (params0,), (params_tilde,))[1]

    return jax.vmap(one)(z)


def linearize(apply: Callable, params0: Params) -> Callable[[Params, Array], Array]:
    """The linearized network ``f_lin(theta, z) = f(z; theta_0) + <grad f(z; theta_0),
    theta - theta_0>`` for one point ``z (d,)`` (used by the exactness test)."""

    def f_lin(params: Params, z: Array) -> Array:
        diff = jax.tree.map(lambda a, b: a - b, params, params0)
        f0, df = jax.jvp(lambda th: apply(th, z), (params0,), (diff,))
        return f0 + df

    return f_lin


def smb_loss(apply: Callable, params: Params, params0: Params, z: Array, y_pert: Array, mask: Array,
             *, nu: float, sigma2: float, delta: Optional[Array] = None) -> Array:
    """The SimpleSMB / PosteriorSMB objective (Paria et al. 2022, Alg. 2 line 3 / Alg. 3 line 5)::

        sum_{i: mask_i} (y'_i - nu f(z_i; theta) - nu delta_i)^2 + sigma2 nu^2 ||theta - theta_0||^2

    Args: ``z (cap, d)``, ``y_pert (cap,)`` = ``y'``, ``mask (cap,)`` bool, ``delta (cap,)`` or
    ``None`` (SimpleSMB). Returns a scalar.
    """
    pred = predict(apply, params, z)
    if delta is not None:
        pred = pred + delta
    data = jnp.sum(jnp.where(mask, (y_pert - nu * pred) ** 2, 0.0))
    sq = sum(jnp.sum((a - b) ** 2) for a, b in zip(jax.tree.leaves(params), jax.tree.leaves(params0)))
    return data + sigma2 * nu ** 2 * sq


def fit_smb(apply: Callable, params0: Params, z: Array, y_pert: Array, mask: Array, key: Array, *,
            nu: float, sigma2: float, steps: int, optimizer: optax.GradientTransformation,
            delta: Optional[Array] = None) -> Params:
    """Minimize :func:`smb_loss` from ``theta_0 = params0`` by ``steps`` full-batch steps of
    ``optimizer`` on the masked rows (Paria et al. 2022, Alg. 2 line 3 / Alg. 3 line 5).

    Runs :func:`nbo_jax.training.train_regression` with the whole buffer as one batch, targets
    ``y'/nu - delta`` and ``reg = sigma2``: its objective is ``smb_loss / (2 n nu^2)`` (``n`` =
    valid rows), which has the same minimizer. ``key`` only feeds the (irrelevant) shuffle.
    Returns the fitted parameters (``params0`` when no row is valid).
    """
    targets = y_pert / nu
    if delta is not None:
        targets = targets - delta
    targets = jnp.where(mask, targets, 0.0)
    cfg = TrainConfig(epochs=int(steps), batch_size=int(y_pert.shape[0]), optimizer=optimizer, reg=float(sigma2))
    return train_regression(apply, params0, params0, z, targets, mask, key, cfg)


# --------------------------------------------------------------------------- algorithm
class NeuralGreedyState(NamedTuple):
    """NeuralGreedy state (a pytree; fixed shapes).

    Attributes:
        data: :class:`~nbo_jax.dataset.Dataset` (unit-cube inputs).
        bounds: :class:`~nbo_jax.domains.Bounds`, the box (``(d,)`` arrays).
        n_initial: ``()`` int32, number of initial points recorded (``n_init`` when all are
            finite).
        n_explore: ``()`` int32, ``T_e``: evaluations after the initial points answered by
            uniform random points.
        key: PRNG key of ``init``; only :attr:`BOAlgorithm.surrogate` uses it (``ask`` uses
            its own key).
    """

    data: Dataset
    bounds: Bounds
    n_initial: Array
    n_explore: Array
    key: Array


@records_config
def neural_greedy(
    variant: str = "simple",
    *,
    width: Optional[int] = None,
    depth: int = 2,
    gamma: Optional[float] = None,
    nu: float = 1.0,
    sigma2: float = 0.0,
    activation: str = "tanh",
    learning_rate: Optional[float] = None,
    train_steps: Optional[int] = None,
    exploration="auto",
    acq_optimizer: Optional[AcqOptimizer | dict] = None,
    standardize: bool = True,
    surrogate_samples: int = 8,
    preset: str = "default",
    q: int = 1,
    **kwargs,
) -> BOAlgorithm:
    """Build NeuralGreedy (Paria et al. 2022, Algorithm 1) with SimpleSMB (Algorithm 2,
    ``variant="simple"``) or PosteriorSMB (Algorithm 3, ``variant="posterior"``).

    Args:
        variant: ``"simple"`` or ``"posterior"``.
        width: hidden width (paper 5000, default 256). depth: number of weight layers
            (>= 2; paper 2 = one hidden layer).
        gamma: ``sigma_W = sigma_b`` of the NTK parameterization (> 0; paper tunes it in
            [0.5, 5], its preset uses 1; library default 2).
        nu: scale ``nu`` (> 0; paper 1); a float or a scalar array (vmappable).
        sigma2: target-noise variance and regularization ``sigma^2`` (>= 0; paper 0 = no
            perturbation, no regularizer), in standardized units.
        activation: one of :data:`nbo_jax.networks.ACTIVATIONS` (paper ``"tanh"``).
        learning_rate, train_steps: full-batch Adam fit from ``theta_0`` (paper 1e-3 /
            1000 [our choice]; default 1e-2 / 300).
        exploration: ``"auto"`` (``T_e`` of :func:`exploration_steps` with ``T = capacity -
            n_init``), or an int number of uniform random BO iterations (0 disables the
            phase). The phase follows the ``n_init`` initial points (which the paper does not
            have: its exploration phase is its initial design).
        acq_optimizer: settings of :func:`nbo_jax.optimize.optimize_acqf`, which maximizes
            ``-nu f~`` over the unit cube: an :func:`nbo_jax.optimize.acq_optimizer` or a dict
            of its arguments (fields not in the dict take ``acq_optimizer``'s defaults);
            ``None``: the preset's. Paper: ``raw_samples = num_restarts = 10`` (uniform
            random starts), ``steps = 500``, ``learning_rate = 0.01``, ``local_fraction = 0``;
            default: ``raw_samples = 512``, ``num_restarts = 10``, ``steps = 50``,
            ``learning_rate = 0.02``, ``local_fraction = 0.25``, ``local_std = 0.05``,
            ``n_best = 5``. ``steps = 0`` takes the best raw sample.
        standardize: standardize the targets (mean 0, std 1 over the valid observations).
        surrogate_samples: number of independent fits averaged by ``surrogate``.
        preset: ``"default"`` or ``"paper"``; fills every argument left ``None`` (module doc).
        q: points per ask (int >= 1), by the constant liar (``batch_rule="fantasy"``).

    Returns:
        ``BOAlgorithm(init, ask, tell, name="neural-greedy" | "neural-greedy-posterior",
        surrogate, info)``. ``init(key, x0, y0, c0=None, *, bounds, capacity)``;
        ``ask(state, key) -> (d,)`` (``(q, d)`` for ``q > 1``; draws ``theta_0`` [and
        ``theta~_0``, ``eps``] from ``key`` and fits there); ``tell(state, x, y, c=None)``
        appends (``c`` ignored); ``info``: ``exploring`` (True while the next point asked is
        a uniform random one). ``surrogate(state, u (N, d))`` refits
        ``surrogate_samples`` networks (keys from ``fold_in(state.key, count)``, so it is
        deterministic per state) and returns their mean and standard deviation in
        standardized units: the sample spread of the acquisition functions ``nu f~``, i.e.
        the GP of Paria et al. 2022, Propositions 1-2, at finite width. It costs
        ``surrogate_samples`` fits, so it is meant for plots and diagnostics.

    Raises:
        TypeError: an argument of the wrong type (e.g. ``width=2.5``, ``nu="1"``,
        ``standardize=1``), ``acq_optimizer`` not an ``AcqOptimizer``/dict, ``batch_size=``
        (``q`` is the number of points per ask; the fit is full-batch) or any other unknown
        keyword.
        ValueError: any argument out of range, NaN or unknown (the message names it), e.g.
        one of ``acq_optimizer``'s fields (:func:`nbo_jax.optimize.acq_optimizer`).
    """
    refuse_renamed(kwargs, BATCH_SIZE_IS_Q, "neural_greedy")
    chosen = resolve_preset(PRESETS, preset, width=width, gamma=gamma, learning_rate=learning_rate,
                            train_steps=train_steps)
    posterior = check_choice("variant", variant, VARIANTS) == "posterior"
    train_steps = check_int("train_steps", chosen["train_steps"], 1)
    aopt = as_acq_optimizer(acq_optimizer, default=chosen["acq_optimizer"])
    surrogate_samples = check_int("surrogate_samples", surrogate_samples, 1)
    gamma = check_scale("gamma", chosen["gamma"], allow_zero=False, allow_array=False)
    nu = check_scale("nu", nu, allow_zero=False)
    sigma2 = check_scale("sigma2", sigma2, allow_array=False)
    lr = check_scale("learning_rate", chosen["learning_rate"], allow_zero=False, allow_array=False)
    network = network_builder(chosen["width"], depth, activation, build=ntk_mlp, gamma=gamma)
    standardize = check_bool("standardize", standardize)
    if isinstance(exploration, str):
        check_choice("exploration", exploration, ("auto",))
    else:
        exploration = check_int("exploration", exploration, 0)
    optimizer = make_optimizer("adam", lr)

    def init(key: Array, x0: Array, y0: Array, c0=None, *, bounds, capacity: int) -> NeuralGreedyState:
        data, box = initial_data(x0, y0, c0, bounds, capacity, constrained=False)
        d = data.u.shape[1]
        t_e = exploration_steps(d, capacity - jnp.shape(x0)[0]) if exploration == "auto" else exploration
        # n_initial: the rows recorded (an initial point with a NaN coordinate is not)
        return NeuralGreedyState(data, box, data.count, jnp.asarray(t_e, jnp.int32), key)

    def fit(state: NeuralGreedyState, key: Array):
        """One surrogate draw: ``(acquisition z -> (), params, params0, params_tilde)``."""
        data = state.data
        net = network(data.u.shape[1], data.u.dtype)
        k_init, k_tilde, k_eps, k_train = jax.random.split(key, 4)
        y = data.standardized()[0] if standardize else data.y
        if sigma2 > 0:
            y = y + nu * math.sqrt(sigma2) * jax.random.normal(k_eps, y.shape, y.dtype)
        z = 2.0 * data.u - 1.0
        params0 = net.init(k_init)
        if posterior:
            tilde = zero_last_layer(net.init(k_tilde), depth)
            delta = perturbation(net.apply, params0, tilde, z)
        else:
            tilde, delta = None, None
        params = fit_smb(net.apply, params0, z, y, data.mask, k_train, nu=nu, sigma2=sigma2,
                         steps=train_steps, optimizer=optimizer, delta=delta)

        def acquisition(zi: Array) -> Array:
            out = net.apply(params, zi)
            if posterior:
                out = out + jax.jvp(lambda th: net.apply(th, zi), (params0,), (tilde,))[1]
            return nu * out

        return acquisition

    def greedy_point(state: NeuralGreedyState, key: Array) -> Array:
        k_fit, k_cand = jax.random.split(key)
        acq = jax.vmap(fit(state, k_fit))
        return optimize_acqf(lambda u: -acq(2.0 * u - 1.0), k_cand, state.data, aopt)

    def exploring(state: NeuralGreedyState) -> Array:
        """``()`` bool: the next point is a uniform random one (Paria et al. 2022, Algorithm 1,
        lines 2-5); counts the evaluations after the initial design, fantasized ones included."""
        return state.data.count - state.n_initial < state.n_explore

    def ask(state: NeuralGreedyState, key: Array) -> Array:
        k_rand, k_greedy = jax.random.split(key)
        u = jax.lax.cond(
            exploring(state),
            lambda: random_point(k_rand, state.data),
            lambda: greedy_point(state, k_greedy),
        )
        return state.bounds.from_unit(u)

    def tell(state: NeuralGreedyState, x: Array, y: Array, c=None) -> NeuralGreedyState:
        u, y = told_rows(state.bounds, x, y, c, constrained=False)
        return state._replace(data=state.data.add_batch(u, y))

    def surrogate(state: NeuralGreedyState, u_c: Array) -> SurrogatePosterior:
        keys = jax.random.split(jax.random.fold_in(state.key, state.data.count), surrogate_samples)
        z_c = 2.0 * u_c - 1.0
        samples = jax.vmap(lambda k: jax.vmap(fit(state, k))(z_c))(keys)
        targets = state.data.standardized()[0] if standardize else state.data.y
        incumbent = state.data.incumbent(targets)
        return SurrogatePosterior(u_c, jnp.mean(samples, 0), jnp.std(samples, 0), incumbent)

    name = "neural-greedy-posterior" if posterior else "neural-greedy"
    return make_algorithm(init, ask, tell, name=name, surrogate=surrogate,
                          info=lambda state: {"exploring": exploring(state)}, q=q, batch_rule="fantasy")
