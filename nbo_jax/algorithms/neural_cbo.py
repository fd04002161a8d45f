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
The model is the surrogate :func:`nbo_jax.surrogates.zero_init_columns.zero_init_columns`;
:func:`neural_cbo` is its preset over :func:`nbo_jax.bo.bo_algorithm` (init, tell) with its
own thin ask, since the incumbent is a fitted mean and the rule works in the model's scaled
units (:func:`nbo_jax.surrogates.zero_init_columns.scaled_posterior`).

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
an argument; the measurements behind them are on the documentation site's page
"Benchmarks" (``docs/benchmarks.md``).
"""

from __future__ import annotations

from typing import Optional, Sequence, Union

import jax
import jax.numpy as jnp
import numpy as np

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
from ..bo import BOState, bo_algorithm, make_algorithm, records_config
from ..observations import feasibility_ranked, observed_feasible
from ..optimize import AcqOptimizer, as_acq_optimizer, optimize_acqf
from ..surrogates.zero_init_columns import (TRAINING, ZeroInitColumnsState, fitted_mean, scaled_posterior,
                                               zero_init_columns)
from ..training import OPTIMIZERS, train_config
from ..types import BOAlgorithm, SearchRegion

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
INCUMBENTS = ("all", "feasible")

NeuralCBOState = ZeroInitColumnsState
"""Neural-CBO's surrogate state (the model inside :class:`~nbo_jax.bo.BOState`'s ``model``)."""


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
        optimizer: ``"sgd"`` or ``"adam"`` (``retrain``; ``training="sgd"`` always takes
            plain steps of ``learning_rate``).
        learning_rate: the optimizer's step size.
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
        ``BOAlgorithm(init, ask, tell, name="neural-cbo", surrogate, constrained=True)`` whose
        state is a :class:`~nbo_jax.bo.BOState` with ``model`` a :class:`NeuralCBOState`:
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

    surrogate = zero_init_columns(width=chosen["width"], depth=depth, lam=lam, use_bias=bias,
                                  training=chosen["training"], learning_rate=lr, train=train_cfg,
                                  train_steps=train_steps, init_steps=init_steps)
    base = bo_algorithm(surrogate, acq, acq_optimizer=aopt, name="neural-cbo", refit_every=1,
                        outcome_transform="none", constrained=True, batch_rule="fantasy")

    def init(key: Array, x0: Array, y0: Array, c0=None, *, bounds, capacity: int) -> BOState:
        if c0 is not None and np.ndim(c0) == 2:  # a bad c0 is refused by the BO step's init
            check_beta_count("beta", betas, np.shape(c0)[1])
        return base.init(key, x0, y0, c0, bounds=bounds, capacity=capacity)

    def mu_best(state: BOState) -> Array:
        """The smallest fitted objective over the chosen observed rows (failures never count)."""
        rows = state.data.observed()[:, 0]
        if chosen["incumbent"] == "feasible":
            feasible = observed_feasible(state.data)
            rows = jnp.where(jnp.any(feasible), feasible, rows)
        return jnp.min(jnp.where(rows, fitted_mean(state.model, state.data.u), jnp.inf))

    def posterior(state: BOState, u: Array) -> SurrogatePosterior:
        return scaled_posterior(state.model, u)._replace(incumbent=mu_best(state))

    def ask(state: BOState, key: Array, region: Optional[SearchRegion] = None) -> Array:
        """Constrained EI's arg-max (the model's units: its incumbent and its constraint scale)."""
        k_c, k_a = jax.random.split(key)
        best = mu_best(state)
        utility = lambda u: acq(scaled_posterior(state.model, u)._replace(incumbent=best), k_a)  # noqa: E731
        ranked = feasibility_ranked(state.data, state.model.scale)
        return state.bounds.from_unit(optimize_acqf(utility, k_c, ranked, aopt, region))

    return make_algorithm(init, ask, base.tell, name="neural-cbo", surrogate=posterior, q=q, batch_rule="fantasy",
                          constrained=True, model=surrogate,
                          outcome_transform=base.outcome_transform)


__all__ = ["neural_cbo", "NeuralCBOState", "PRESETS", "TRAINING", "INCUMBENTS", "OPTIMIZERS"]
