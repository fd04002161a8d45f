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

**Surrogate and acquisition.** A network fitted from a fresh random initialization is one
posterior draw of the sample-then-optimize surrogate
(:func:`nbo_jax.surrogates.sample_then_optimize.sample_then_optimize`; in the linearized
regime a draw of the GP with the empirical NTK, Paria et al. 2022, Propositions 1-2), and the
greedy point is Thompson sampling on that pathwise draw
(:func:`nbo_jax.acquisition.thompson_sampling`). The draw (``theta_0``, ``theta~_0``, ``eps``
and the fit) comes from ``ask``'s key; ``tell`` only appends the observation
(:func:`nbo_jax.bo.bo_algorithm`'s, with ``refit_every=1``). The fit is full-batch Adam on the
masked rows (:func:`fit_smb`, through :func:`nbo_jax.training.train_regression` with the batch
= the whole buffer), minimizing the Alg. 2/3 loss divided by ``2 n nu^2`` (same minimizer).
The acquisition is minimized by :func:`nbo_jax.optimize.optimize_acqf` (settings
``acq_optimizer``): the ``num_restarts`` best of ``raw_samples`` points (uniform plus, in the
library default, local perturbations of the best observations) climb it in the unit cube; the
best point wins. ``ask`` is the preset's own: it picks the exploration phase's uniform point
or the greedy one.

**Paper preset** (``preset="paper"``; Appendix F.2): one hidden layer (``depth=2``) of width
5000, tanh, ``gamma = 1`` (the paper tunes it in [0.5, 5]), Adam lr 1e-3, ``nu = 1``,
``sigma2 = 0``; the acquisition is minimized from 10 uniform random starts
(``acq_optimizer``: ``raw_samples = num_restarts = 10``, ``local_fraction = 0``) with 500
steps at lr 0.01. The paper uses plain
gradient descent on the acquisition; here the steps are projected Adam in the unit cube (the
library's optimizer). The number of training steps is not stated in the paper:
**decision** 1000 full-batch Adam steps (measured: "Benchmarks", ``docs/benchmarks.md``).

**Library defaults** (``preset="default"``): width 256, ``gamma = 2``, Adam lr 1e-2 for 300
full-batch steps, acquisition from 10 restarts (Boltzmann-sampled) among 512 scrambled Sobol
raw samples (a quarter of them local, std 0.05 around the 5 best observations) refined by at
most 200 box-constrained L-BFGS iterations (``acq_optimizer(raw_samples=512, num_restarts=10,
steps=200)``). The
measurements behind these choices, and the cost per ``ask``, are on the documentation site's
page "Benchmarks" (``docs/benchmarks.md``).

**Batches** (``q > 1``): the greedy point is deterministic given the state and ``ask``'s
key, so ``q`` points come from the constant liar (``batch_rule="fantasy"``; Ginsbourger et
al. 2010, :mod:`nbo_jax.transforms.batch`): each chosen point is told to a copy of the state with the
mean observed value before the next network is fitted. During the exploration phase the
fantasized points count as evaluations, so a batch holds ``T_e`` random points in all.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, Optional

import jax
import jax.numpy as jnp

from .._checks import (
    BATCH_SIZE_IS_Q,
    check_bool,
    check_choice,
    check_int,
    check_scale,
    refuse_renamed,
    resolve_preset,
)
from ..acquisition import thompson_sampling
from ..bo import bo_algorithm, make_algorithm, records_config
from ..dataset import Dataset
from ..domains import Bounds
from ..networks import last_layer_name, network_builder, ntk_mlp  # noqa: F401 - ntk_mlp, last_layer_name: as before
from ..optimize import AcqOptimizer, as_acq_optimizer, optimize_acqf, random_point
from ..surrogates.sample_then_optimize import (  # noqa: F401 - the model's pieces, importable from here as before
    VARIANTS,
    fit_smb,
    linearize,
    perturbation,
    sample_then_optimize,
    smb_loss,
    zero_last_layer,
)
from ..training import make_optimizer
from ..types import BOAlgorithm, SearchRegion

Array = jax.Array

PRESETS = {
    "paper": dict(width=5000, gamma=1.0, learning_rate=1e-3, train_steps=1000,
                  acq_optimizer=AcqOptimizer(raw_samples=10, num_restarts=10, steps=500, method="adam",
                                             learning_rate=0.01, local_fraction=0.0, raw_sampler="uniform",
                                             restarts="top")),
    "default": dict(width=256, gamma=2.0, learning_rate=1e-2, train_steps=300,
                    acq_optimizer=AcqOptimizer(raw_samples=512, num_restarts=10, steps=200)),
}


def exploration_steps(dim: int, total: int) -> int:
    """``T_e = clip(5 d, 0.025 T, 0.075 T)`` rounded to the nearest int, halves up (Paria et al. 2022,
    Appendix F.2, "Exploration budget"). ``total`` = ``T``, the number of BO iterations.

    Examples: ``(d, T) = (2, 25) -> 2``, ``(2, 1000) -> 25``, ``(10, 1000) -> 50``,
    ``(20, 1000) -> 75``, ``(1, 10) -> 1``, ``(d, 0) -> 0``.
    """
    t_e = min(max(5.0 * dim, 0.025 * total), 0.075 * total)
    return int(math.floor(t_e + 0.5))


class NeuralGreedyState(NamedTuple):
    """NeuralGreedy state (a pytree; fixed shapes): :class:`~nbo_jax.bo.BOState`'s fields and
    the exploration phase's counts.

    Attributes:
        data: :class:`~nbo_jax.dataset.Dataset` (unit-cube inputs).
        bounds: :class:`~nbo_jax.domains.Bounds`, the box (``(d,)`` arrays).
        model: the surrogate's :class:`~nbo_jax.surrogates.sample_then_optimize.SampleThenOptimizeState`
            (the targets and ``init``'s key, which only :attr:`BOAlgorithm.surrogate` uses:
            ``ask`` draws from its own key).
        tells, rows_told: ``()`` int32 counts of :class:`~nbo_jax.bo.BOState`.
        n_initial: ``()`` int32, number of initial points recorded (``n_init`` when all are
            finite).
        n_explore: ``()`` int32, ``T_e``: evaluations after the initial points answered by
            uniform random points.
    """

    data: Dataset
    bounds: Bounds
    model: Any
    tells: Array
    rows_told: Array
    n_initial: Array
    n_explore: Array


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
        learning_rate: step size of the full-batch Adam fit from ``theta_0`` (paper 1e-3;
            default 1e-2).
        train_steps: Adam steps of that fit (paper 1000 [our choice]; default 300).
        exploration: ``"auto"`` (``T_e`` of :func:`exploration_steps` with ``T = capacity -
            n_init`` and ``d`` the number of parameters: a categorical parameter counts once,
            not once per one-hot column), or an int number of uniform random BO iterations
            (0 disables the phase). The phase follows the ``n_init`` initial points (which the
            paper does not have: its exploration phase is its initial design).
        acq_optimizer: settings of :func:`nbo_jax.optimize.optimize_acqf`, which maximizes
            ``-nu f~`` over the unit cube: an :func:`nbo_jax.optimize.acq_optimizer` or a dict
            of its arguments (fields not in the dict take ``acq_optimizer``'s defaults);
            ``None``: the preset's. Paper: ``raw_samples = num_restarts = 10`` (uniform
            random starts), ``steps = 500`` of Adam at ``learning_rate = 0.01``,
            ``local_fraction = 0``; default: ``raw_samples = 512``, ``num_restarts = 10``,
            ``steps = 200`` (L-BFGS-B), ``local_fraction = 0.25``, ``local_std = 0.05``,
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
        a uniform random one); ``model``: the sample-then-optimize surrogate. The state is a
        :class:`NeuralGreedyState`. ``surrogate(state, u (N, d))`` refits
        ``surrogate_samples`` networks (keys from ``fold_in(state.model.key, n)``, ``n`` the
        rows in the mask, so it is deterministic per state) and returns their mean and
        standard deviation in standardized units: the sample spread of the acquisition functions ``nu f~``, i.e.
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
    variant = check_choice("variant", variant, VARIANTS)
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
    name = "neural-greedy-posterior" if variant == "posterior" else "neural-greedy"
    surrogate = sample_then_optimize(network, variant=variant, nu=nu, sigma2=sigma2, steps=train_steps,
                                     optimizer=make_optimizer("adam", lr), samples=surrogate_samples)
    base = bo_algorithm(surrogate, thompson_sampling(), acq_optimizer=aopt, name=name, refit_every=1,
                        outcome_transform="standardize" if standardize else "none")

    def init(key: Array, x0: Array, y0: Array, c0=None, *, bounds, capacity: int) -> NeuralGreedyState:
        state = base.init(key, x0, y0, c0, bounds=bounds, capacity=capacity)
        total = capacity - jnp.shape(x0)[0]  # T, the BO iterations of the run
        t_e = exploration_steps(state.bounds.dim, total) if exploration == "auto" else exploration
        # n_initial: the rows recorded (an initial point with a NaN coordinate is not)
        return NeuralGreedyState(state.data, state.bounds, state.model, state.tells, state.rows_told, state.data.count,
                                 jnp.asarray(t_e, jnp.int32))

    def exploring(state: NeuralGreedyState) -> Array:
        """``()`` bool: the next point is a uniform random one (Paria et al. 2022, Algorithm 1,
        lines 2-5); counts the evaluations after the initial design, fantasized ones included."""
        return state.data.count - state.n_initial < state.n_explore

    def greedy_point(state: NeuralGreedyState, key: Array, region: Optional[SearchRegion]) -> Array:
        """The minimizer of one draw (Thompson sampling on the surrogate's pathwise draw)."""
        k_fit, k_cand = jax.random.split(key)
        draw = surrogate.sample(state.model, k_fit)
        return optimize_acqf(lambda u: -draw(u), k_cand, state.data, aopt, region)

    def ask(state: NeuralGreedyState, key: Array, region: Optional[SearchRegion] = None) -> Array:
        k_rand, k_greedy = jax.random.split(key)
        u = jax.lax.cond(exploring(state), lambda: random_point(k_rand, state.data, region),
                         lambda: greedy_point(state, k_greedy, region))
        return state.bounds.from_unit(u)

    return make_algorithm(init, ask, base.tell, name=name, surrogate=base.surrogate,
                          info=lambda state: {"exploring": exploring(state)}, q=q, batch_rule="fantasy",
                          model=surrogate,
                          outcome_transform=base.outcome_transform)
