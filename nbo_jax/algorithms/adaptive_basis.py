"""Adaptive-basis BO (Brofos, Shu & Jin, "Adaptive Neural Network Representations for
Parallel and Scalable Bayesian Optimization") and DNGO (Snoek et al. 2015).

A tanh network ``d-50-50-50-1`` is trained on the (standardized) observations by mean squared
error; its last hidden layer plus a constant, ``nu(x) = (g_1(x), ..., g_l(x), 1)``
(length ``p = l + 1``), is a learned basis on which a linear model is fitted:

- ``head="ols"`` (Brofos, Shu & Jin, eqs. 6-8; name ``"adaptive-basis"``)::

      beta_hat  = (Phi^T Phi + ridge I)^{-1} Phi^T y
      mu(x)     = beta_hat^T nu(x)
      sigma^2(x)= s^2 (1 + nu(x)^T (Phi^T Phi + ridge I)^{-1} nu(x))
      s^2       = RSS / max(n - df, 1),   df = tr(Phi (Phi^T Phi + ridge I)^{-1} Phi^T)

  ``df`` is the effective number of parameters of the ridge fit (Hastie, Tibshirani &
  Friedman, ESL eq. 3.50); with ``ridge -> 0`` and ``n > p`` it is ``p`` and ``s^2`` is the
  usual unbiased ``RSS / (n - p)``. ``noise_dof="n"`` gives the maximum-likelihood
  ``s^2 = RSS / n`` the paper names below eq. 7.

  **Decision (n <= p).** The paper avoids the singular ``Phi^T Phi`` by an initial design of
  ``l`` points (Section 3.1). Here the ridge keeps every formula defined for any ``n``: the
  fit is ridge regression, and when ``n <= p`` with a small ridge it interpolates, ``RSS``
  and hence ``s^2`` are ~0, EI vanishes everywhere and the variance fallback below takes
  over (pure exploration of the point with the largest ``nu^T A^{-1} nu``, i.e. the most
  novel features) until enough data arrive. With the library's ``ridge`` the fit does not
  interpolate and ``s^2`` stays informative. ``max(n - df, 1)`` guards the denominator.
- ``head="bayesian"`` (DNGO; name ``"dngo"``): Bayesian linear regression, weights
  ``w ~ N(0, alpha^{-1} I)``, noise precision ``beta`` (Bishop, PRML eqs. 3.53-3.54,
  3.58-3.59)::

      S_N^{-1} = alpha I + beta Phi^T Phi,   m_N = beta S_N Phi^T y
      mu(x) = m_N^T nu(x),                   sigma^2(x) = 1/beta + nu(x)^T S_N nu(x)

  with ``alpha, beta`` maximizing the log evidence (PRML eq. 3.86) by MacKay's fixed-point
  iteration (PRML eqs. 3.91-3.95) inside jit, clipped to ``[1e-6, 1e6]`` (``alpha``) and
  ``[1e-3, 1e6]`` (``beta``, standardized units), run from 4 starts in parallel (the
  evidence also has a degenerate "all noise" maximum, ``alpha`` at its upper clip). The
  published DNGO treats its hyperparameters (and a quadratic prior mean) more fully
  Bayesian; the library takes the evidence maximum (type-II maximum likelihood), which is
  what is implemented.

Both heads share one eigendecomposition ``Phi^T Phi = V diag(s_i^2) V^T`` over the valid
rows: ``Cov[w] = V diag(c) V^T`` with ``c_i = s^2 / (s_i^2 + ridge)`` (OLS) or
``1 / (alpha + beta s_i^2)`` (Bayesian), see :class:`LinearHead`. (The OLS head is the
Bayesian one with ``beta = 1/s^2`` and ``alpha = ridge/s^2``.)

Acquisition: EI in minimization form (:func:`nbo_jax.acquisition.expected_improvement`,
incumbent = best standardized finite observation; a failed evaluation, which the surrogate
trains on at the worst value observed, is never the incumbent) on a candidate set; when ``EI <= ei_tol`` on
every candidate, the candidate of largest ``sigma`` is taken (Brofos, Shu & Jin, Section 3.1: "pure
exploration ... querying that point for which the prior variance estimate is largest").

Batches (``q > 1``, :func:`select_batch`; the algorithm's own batch rule, ``batch_rule =
"native"``): greedy top-EI where a candidate
``c`` is accepted only if ``2 Phi(-|mu(c) - mu(s)| / sigma(s)) < 0.5`` against every already
selected ``s``; the remaining slots are filled by largest ``sigma``. (This z-score rule is
the library's decision; the paper describes the parallel master-worker scheme of Section 3.2
but not the rule itself.)

The network is retrained every ``retrain_every`` new observations (Brofos, Shu & Jin, Section 3.2:
"after n observations have been observed since the last time the network was learned"); the
linear head is refitted after every observation. Retraining is a loop whose trip count is
``epochs`` or ``0`` rather than a ``lax.cond``: under ``vmap`` a ``cond`` on batched data
runs both branches, while a loop runs the largest trip count of the batch, which is ``0`` on
the steps where no seed retrains (all seeds share the schedule).

**Paper preset** (``preset="paper"``; Brofos, Shu & Jin, Sections 3 and 5): 3 hidden layers of 50
tanh units, linear output, plain SGD ("backpropagation and stochastic gradient descent"),
OLS head with the maximum-likelihood ``s^2 = RSS/n`` (below eq. 7), ``ridge = 1e-6``
(numerical only: the paper inverts ``Phi^T Phi`` and starts from 50 uniform points, the
caller's ``n_init``), EI with the largest-variance fallback, uniform candidates only. The
paper is **silent** on the learning rate, epochs, SGD mini-batch size, retraining interval
(Section 3.2's ``n``), initialization and the acquisition optimizer: those take the library
values (lr 1e-2, 100 epochs, mini-batches of 32, retrain every observation, warm start, flax's LeCun-normal
init, 2048 candidates). The paper's ``nu(x)`` has no constant; the library adds one (both
presets).

**Library defaults** (``preset="default"``): Adam at lr 1e-2, 100 epochs of mini-batches of 32,
retraining after every observation from the previous weights (warm start), ``ridge = 0.1``
(standardized targets), residual-dof ``s^2``, a quarter of the candidates around the 5 best
observations (as :func:`~nbo_jax.algorithms.neural_bo.neural_bo`). The measurements behind
these choices are on the documentation site's page "Benchmarks"
(``docs/benchmarks.md``).
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import jax
import jax.numpy as jnp
from jax.scipy.special import ndtr

from .._checks import (
    BATCH_SIZE_RENAMED,
    check_bool,
    check_choice,
    check_int,
    check_scale,
    refuse_renamed,
    resolve_preset,
)
from ..acquisition import expected_improvement, log_ei
from ..bo import BOState, bo_algorithm, make_algorithm, records_config
from ..networks import ACTIVATIONS
from ..optimize import AcqOptimizer, as_acq_optimizer, raw_samples, refine_argmax
from ..surrogates.adaptive_basis import (  # noqa: F401 - the model's pieces, importable from here as before
    ALPHA_RANGE,
    BETA_RANGE,
    AdaptiveBasisState,
    LinearHead,
    _BasisMLP,
    bayesian_head,
    head_predict,
    log_evidence,
    ols_head,
)
from ..surrogates.adaptive_basis import adaptive_basis as basis_surrogate
from ..types import BOAlgorithm, SearchRegion
from ..training import train_config

Array = jax.Array

PRESETS = {
    "paper": dict(optimizer="sgd", warm_start=True, ridge=1e-6, noise_dof="n",
                  learning_rate=1e-2, epochs=100, minibatch_size=32, retrain_every=1,
                  acq_optimizer=AcqOptimizer(raw_samples=2048, steps=0, local_fraction=0.0, raw_sampler="uniform")),
    "default": dict(optimizer="adam", warm_start=True, ridge=0.1, noise_dof="residual",
                    learning_rate=1e-2, epochs=100, minibatch_size=32, retrain_every=1,
                    acq_optimizer=AcqOptimizer(raw_samples=2048, steps=0)),
}

Z_SCORE_LEVEL = 0.5
"""The diversity threshold of :func:`select_batch`: ``2 Phi(-z) < 0.5``, i.e. ``z > 0.674``."""


def select_batch(ei: Array, mean: Array, std: Array, q: int, ei_tol: float = 0.0,
                 excluded: Array | None = None) -> Array:
    """Indices ``(q,)`` of ``q`` distinct candidates (Brofos, Shu & Jin, Section 3.2; the rule is the library's).

    Slot by slot (``lax.fori_loop``, fixed shapes): take the not-yet-selected candidate of
    largest EI among those with ``EI > ei_tol`` that pass the z-score rule
    ``2 Phi(-|mean_c - mean_s| / std_s) < 0.5`` against every already selected ``s``; as soon
    as no candidate qualifies, this and all remaining slots take the not-yet-selected
    candidate of largest ``std``. With ``q = 1`` this is "argmax EI, or argmax std when
    ``EI <= ei_tol`` everywhere".

    Args:
        ei: ``(N,)`` expected improvement of the candidates, ``N >= q``; NaN entries never win.
        mean: ``(N,)`` posterior mean of the candidates.
        std: ``(N,)`` posterior standard deviation of the candidates.
        q: static batch size.
        ei_tol: EI at or below this counts as zero.
        excluded: ``(N,)`` bool, candidates never selected (the evaluated points of a finite
            domain); ``None``: none. Needs ``q`` candidates that are not excluded.
    """
    N = ei.shape[0]
    tiny = jnp.finfo(std.dtype).tiny
    low = jnp.finfo(std.dtype).min  # a NaN std still beats a selected/excluded candidate
    ei = jnp.where(jnp.isnan(ei), -jnp.inf, ei)
    sd = jnp.where(jnp.isnan(std), -jnp.inf, std)

    def slot(j, carry):
        idx, selected, passes, greedy = carry
        ok = passes & ~selected & (ei > ei_tol)
        use_ei = greedy & jnp.any(ok)
        i_ei = jnp.argmax(jnp.where(ok, ei, -jnp.inf))
        i_sd = jnp.argmax(jnp.where(selected, -jnp.inf, jnp.maximum(sd, low)))
        i = jnp.where(use_ei, i_ei, i_sd).astype(jnp.int32)
        z = jnp.abs(mean - mean[i]) / jnp.maximum(std[i], tiny)
        passes = passes & (2.0 * ndtr(-z) < Z_SCORE_LEVEL)
        return idx.at[j].set(i), selected.at[i].set(True), passes, use_ei

    blocked = jnp.zeros((N,), bool) if excluded is None else jnp.asarray(excluded, bool)
    init = (jnp.zeros((q,), jnp.int32), blocked, jnp.ones((N,), bool), jnp.asarray(True))
    idx, *_ = jax.lax.fori_loop(0, q, slot, init)
    return idx


# --------------------------------------------------------------------------- algorithm
@records_config
def adaptive_basis(
    head: str = "ols",
    *,
    hidden: Sequence[int] = (50, 50, 50),
    activation: str = "tanh",
    learning_rate: Optional[float] = None,
    epochs: Optional[int] = None,
    minibatch_size: Optional[int] = None,
    retrain_every: Optional[int] = None,
    ridge: Optional[float] = None,
    noise_dof: Optional[str] = None,
    evidence_iters: int = 100,
    q: int = 1,
    acq_optimizer: Optional[AcqOptimizer | dict] = None,
    optimizer: Optional[str] = None,
    warm_start: Optional[bool] = None,
    ei_tol: Optional[float] = None,
    standardize: bool = True,
    preset: str = "default",
    acquisition: Optional[Callable] = None,
    **kwargs,
) -> BOAlgorithm:
    """Adaptive-basis BO (Brofos, Shu & Jin, eqs. 6-8) or DNGO (Snoek et al. 2015) as a
    :class:`~nbo_jax.types.BOAlgorithm` (module doc for the formulas).

    Args:
        head: ``"ols"`` (Brofos, Shu & Jin; name ``"adaptive-basis"``) or ``"bayesian"`` (DNGO; name
            ``"dngo"``).
        hidden: widths of the tanh hidden layers (paper: ``(50, 50, 50)``); the basis is the
            last one plus a constant, ``p = hidden[-1] + 1``.
        activation: hidden activation, a key of :data:`nbo_jax.networks.ACTIVATIONS`.
        learning_rate: step size of the MSE training of the network on standardized targets.
        epochs: passes over the data per training.
        minibatch_size: the SGD mini-batch (not a number of points per ask: that is ``q``).
        optimizer: ``"adam"`` or ``"sgd"``.
        warm_start: start each retraining from the previous weights (else from the initial
            weights).
        retrain_every: ``K``, retrain the network every ``K`` new observations (the head is
            refitted after every observation).
        ridge: ``> 0``, added to ``Phi^T Phi`` (OLS head only; standardized targets). In
            float32 a ridge below about ``1e-6 ||Phi^T Phi||`` is numerically zero.
        noise_dof: ``"residual"`` or ``"n"``: the denominator of ``s^2`` (OLS head only;
            :func:`ols_head`).
        evidence_iters: MacKay fixed-point iterations for ``alpha, beta`` (Bayesian head).
        q: points per ask (BoTorch's ``q``; ``ask`` returns ``(q, d)`` when ``q > 1``,
            ``(d,)`` when ``q == 1``); batches follow :func:`select_batch`, the algorithm's
            own rule (``batch_rule = "native"``).
        acq_optimizer: how the acquisition is maximized (:mod:`nbo_jax.optimize`): an
            :func:`nbo_jax.optimize.acq_optimizer` or a dict of its arguments (fields not in
            the dict take ``acq_optimizer``'s defaults); ``None``: the preset's. EI (or
            ``sigma`` in the fallback) is scored on ``raw_samples`` points (``>= q``; a
            ``local_fraction`` of them around the ``n_best`` best observations, std
            ``local_std``); with ``q = 1`` and ``steps > 0`` the ``num_restarts`` best then
            climb it (:func:`nbo_jax.optimize.refine_argmax`); a
            batch (``q > 1``) is chosen among the raw samples by :func:`select_batch`, so
            ``steps`` must be 0. Both presets: 2048 raw samples, ``steps = 0`` (the
            candidate-set argmax); paper: uniform draws only; default: scrambled Sobol
            points plus a 0.25 fraction around the 5 best (std 0.05). The default does not
            climb: with ReLU features the predictive std grows linearly away from the data,
            so EI's maximum sits on the box's faces (measured on Branin, 16 seeds: the
            Bayesian head's median regret rose from below half of random search's to 1.29
            vs 1.64 with 200 L-BFGS-B steps).
        ei_tol: ``>= 0``; EI at or below this on every candidate triggers the largest-sigma
            fallback (a float or a scalar array; ``None``: 0). Refused with ``acquisition``.
        standardize: fit on standardized targets (mean 0, std 1 over the trained rows).
        preset: ``"default"`` or ``"paper"``; fills the arguments left ``None`` (module doc).
        acquisition: ``acq(SurrogatePosterior, key) -> (N,)`` to maximize instead of EI with
            the largest-sigma fallback (:mod:`nbo_jax.acquisition`; the posterior is
            predictive, standardized units, and has a pathwise draw, so
            :func:`nbo_jax.acquisition.thompson_sampling` runs too); batches then follow
            :func:`nbo_jax.bo.bo_algorithm` (the constant liar, or independent draws for
            Thompson sampling) and ``ei_tol`` is refused. ``None``: the papers' EI.

    Returns:
        :class:`~nbo_jax.types.BOAlgorithm` (``q = q``, ``batch_rule = "native"``):
        ``init(key, x0 (n0, d), y0 (n0,), c0=None, *, bounds, capacity) ->
        AdaptiveBasisState`` (``c0`` is ignored), ``ask(state, key) -> (d,) or (q, d)``,
        ``tell(state, x (d,) | (n, d), y () | (n,), c=None)``,
        ``surrogate(state, u (N, d)) -> SurrogatePosterior`` (standardized units,
        predictive std including noise).

    Raises:
        TypeError: an argument of the wrong type (e.g. ``epochs=2.5``, ``ridge="0.1"``,
            ``warm_start=1``), an unknown keyword, or ``batch_size=`` (renamed: the SGD
            mini-batch is ``minibatch_size``, the points per ask ``q``).
        ValueError: an argument out of range, NaN or unknown, or given for the other head;
            ``acq_optimizer.raw_samples < q``; ``acq_optimizer.steps > 0`` with ``q > 1``.
        Every message names the argument.
    """
    refuse_renamed(kwargs, BATCH_SIZE_RENAMED, "adaptive_basis")
    check_choice("head", head, ("ols", "bayesian"))
    if head == "bayesian":
        for name, val in dict(ridge=ridge, noise_dof=noise_dof).items():
            if val is not None:
                raise ValueError(f"{name} applies to head='ols' only (the Bayesian head chooses alpha, beta)")
    chosen = resolve_preset(PRESETS, preset, learning_rate=learning_rate, epochs=epochs,
                            minibatch_size=minibatch_size, retrain_every=retrain_every, ridge=ridge,
                            noise_dof=noise_dof, optimizer=optimizer, warm_start=warm_start)
    if isinstance(hidden, (int, str)) or not isinstance(hidden, Sequence) or len(hidden) == 0:
        raise TypeError(f"hidden must be a non-empty sequence of ints, got {hidden!r}")
    hidden = tuple(check_int(f"hidden[{i}]", h, 1) for i, h in enumerate(hidden))
    check_choice("activation", activation, sorted(ACTIVATIONS))
    train_cfg = train_config(chosen["optimizer"], chosen["learning_rate"], chosen["epochs"], chosen["minibatch_size"],
                             0.0, min_epochs=0)
    K = check_int("retrain_every", chosen["retrain_every"], 1)
    rdg = check_scale("ridge", chosen["ridge"], allow_zero=False)
    dof_mode = check_choice("noise_dof", chosen["noise_dof"], ("residual", "n"))
    n_ev = check_int("evidence_iters", evidence_iters, 0)
    q = check_int("q", q, 1)
    if acquisition is not None and not callable(acquisition):
        raise TypeError(f"acquisition must be callable (posterior, key) -> (N,), got {type(acquisition).__name__}")
    native_batch = q > 1 and acquisition is None
    aopt = as_acq_optimizer(acq_optimizer, default=chosen["acq_optimizer"], mean_rank=acquisition is not None,
                            no_gradient="with q > 1 the batch rule selects among the raw samples" if native_batch
                            else None)
    if aopt.raw_samples < q:
        raise ValueError(f"acq_optimizer.raw_samples ({aopt.raw_samples}) must be >= q ({q})")
    if acquisition is not None and ei_tol is not None:
        raise ValueError(f"ei_tol={ei_tol!r} sets the papers' EI fallback; with acquisition= given it has no "
                         f"effect; drop ei_tol")
    ei_tol = check_scale("ei_tol", 0.0 if ei_tol is None else ei_tol, allow_zero=True)
    warm = check_bool("warm_start", chosen["warm_start"])
    standardize = check_bool("standardize", standardize)
    act = ACTIVATIONS[activation]
    name = "adaptive-basis" if head == "ols" else "dngo"
    surrogate = basis_surrogate(hidden=hidden, activation=act, head=head, train=train_cfg, retrain_every=K,
                                ridge=rdg, noise_dof=dof_mode, evidence_iters=n_ev, warm_start=warm)
    transform = "standardize" if standardize else "none"
    if acquisition is not None:
        return bo_algorithm(surrogate, acquisition, acq_optimizer=aopt, name=name, q=q, refit_every=1,
                            outcome_transform=transform)
    base = bo_algorithm(surrogate, log_ei(), acq_optimizer=aopt, name=name, refit_every=1,
                        outcome_transform=transform)
    posterior = base.surrogate  # the surrogate's posterior with the incumbent (standardized units)

    def ask(state: BOState, key: Array, region: Optional[SearchRegion] = None) -> Array:
        k_raw, k_start = jax.random.split(key)
        u_c = raw_samples(k_raw, state.data, aopt, region)
        post = posterior(state, u_c)
        ei = expected_improvement(post.mean, post.std, post.incumbent)
        if state.data.finite:  # score the unevaluated choices; no gradient steps
            idx = select_batch(ei, post.mean, post.std, q, ei_tol, excluded=~state.data.eligible(None if region is None else region.box))
            return state.bounds.from_unit(u_c[idx] if q > 1 else u_c[idx[0]])
        if q > 1:
            return state.bounds.from_unit(u_c[select_batch(ei, post.mean, post.std, q, ei_tol)])
        # q = 1: argmax EI, or argmax sigma when EI <= ei_tol on every raw sample (select_batch
        # with q = 1); with steps > 0 the chosen utility is climbed (optimize_acqf's last stage)
        use_ei = jnp.any(jnp.where(jnp.isnan(ei), -jnp.inf, ei) > ei_tol)

        def utility(u: Array) -> Array:
            p = posterior(state, u)
            return jnp.where(use_ei, expected_improvement(p.mean, p.std, p.incumbent), p.std)

        u = refine_argmax(k_start, jnp.where(use_ei, ei, post.std), u_c, utility, aopt, state.data, region)
        return state.bounds.from_unit(u)

    return make_algorithm(base.init, ask, base.tell, name=name, surrogate=posterior, q=q, batch_rule="native",
                          model=surrogate,
                          outcome_transform=base.outcome_transform)


__all__ = [
    "adaptive_basis",
    "AdaptiveBasisState",
    "LinearHead",
    "ols_head",
    "bayesian_head",
    "log_evidence",
    "head_predict",
    "select_batch",
    "PRESETS",
]
