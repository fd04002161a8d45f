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
these choices are on the documentation site's page "Measured choices"
(``docs/measurements.md``).
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable, NamedTuple, Optional, Sequence

import flax.linen as nn
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
from ..acquisition import SurrogatePosterior, expected_improvement
from ..bo import make_algorithm, records_config
from ..networks import ACTIVATIONS
from ..observations import initial_data, told_rows
from ..optimize import AcqOptimizer, as_acq_optimizer, candidate_set, refine_argmax
from ..training import train_regression
from ..types import BOAlgorithm, Bounds, Dataset
from ._common import train_config

Array = jax.Array

PRESETS = {
    "paper": dict(optimizer="sgd", warm_start=True, ridge=1e-6, noise_dof="n",
                  learning_rate=1e-2, epochs=100, minibatch_size=32, retrain_every=1,
                  acq_optimizer=AcqOptimizer(raw_samples=2048, steps=0, local_fraction=0.0, raw_sampler="uniform")),
    "default": dict(optimizer="adam", warm_start=True, ridge=0.1, noise_dof="residual",
                    learning_rate=1e-2, epochs=100, minibatch_size=32, retrain_every=1,
                    acq_optimizer=AcqOptimizer(raw_samples=2048, steps=0)),
}

ALPHA_RANGE = (1e-6, 1e6)
BETA_RANGE = (1e-3, 1e6)
_LOG_2PI = math.log(2.0 * math.pi)


# --------------------------------------------------------------------------- network
class _BasisMLP(nn.Module):
    """``z -> (output (), last hidden layer (l,))``; flax defaults (LeCun-normal weights,
    zero biases); linear output layer."""

    hidden: tuple
    activation: Callable[[Array], Array]
    param_dtype: Any

    @nn.compact
    def __call__(self, z: Array):
        h = z
        for w in self.hidden:
            h = self.activation(nn.Dense(w, param_dtype=self.param_dtype)(h))
        out = nn.Dense(1, param_dtype=self.param_dtype)(h)[..., 0]
        return out, h


# --------------------------------------------------------------------------- linear heads
class LinearHead(NamedTuple):
    """A Gaussian linear model on the features (standardized output units).

    Predictive mean ``nu^T weights`` and variance
    ``noise_var + sum_i ((basis^T nu)_i)^2 cov_diag_i``, i.e. ``Cov[w] = basis diag(cov_diag)
    basis^T``.

    Attributes:
        weights: ``(p,)`` OLS coefficients ``beta_hat`` or posterior mean ``m_N``.
        basis: ``(p, p)`` orthonormal eigenvectors ``V`` of ``Phi^T Phi`` (columns).
        cov_diag: ``(p,)`` ``Cov[w]`` in that basis: ``s^2 / (s_i^2 + ridge)`` (OLS) or
            ``1 / (alpha + beta s_i^2)`` (Bayesian).
        noise_var: ``()`` ``s^2`` (OLS) or ``1 / beta`` (Bayesian).
        alpha, beta: ``()`` the prior / noise precisions (OLS: the equivalent
            ``ridge / s^2`` and ``1 / s^2``).
        dof: ``()`` the residual degrees of freedom used for ``s^2`` (OLS) or
            ``n - gamma`` (Bayesian, PRML eq. 3.95).
        n: ``()`` number of valid rows.
    """

    weights: Array
    basis: Array
    cov_diag: Array
    noise_var: Array
    alpha: Array
    beta: Array
    dof: Array
    n: Array


class _Spectral(NamedTuple):
    V: Array  # (p, p) eigenvectors of Phi^T Phi
    eig: Array  # (p,) eigenvalues s_i^2 (zeros for the null space)
    b: Array  # (p,) V^T Phi^T y
    Z: Array  # (rows, p) Phi V (masked rows zero)
    y: Array  # (rows,) masked targets
    mask: Array
    n: Array


def _spectral(Phi: Array, y: Array, mask: Array) -> _Spectral:
    """Eigendecomposition of ``Phi^T Phi`` over the masked rows (``eigh`` of the ``p x p``
    Gram matrix: its cost does not grow with the capacity, unlike an SVD of ``Phi``, which
    is also erratically slow on CPU in this JAX). Eigenvalues are clipped at 0; their
    absolute error is about ``eps * ||Phi^T Phi||``, so in float32 a ridge much below
    ``1e-6 * ||Phi^T Phi||`` is below the resolution of the null space."""
    m = mask.astype(Phi.dtype)
    Phi = Phi * m[:, None]
    y = jnp.where(mask, y, 0.0).astype(Phi.dtype)
    eig, V = jnp.linalg.eigh(Phi.T @ Phi)
    Z = Phi @ V
    return _Spectral(V, jnp.maximum(eig, 0.0), Z.T @ y, Z, y, mask, jnp.sum(m))


def _rss(sp: _Spectral, w_eig: Array) -> Array:
    r = jnp.where(sp.mask, sp.y - sp.Z @ w_eig, 0.0)
    return jnp.sum(r * r)


def ols_head(Phi: Array, y: Array, mask: Array, ridge: float = 1e-6, noise_dof: str = "residual") -> LinearHead:
    """Least-squares head (Brofos, Shu & Jin, eqs. 6-8) with a ridge, over the rows where ``mask``.

    Args:
        Phi: ``(rows, p)`` features (rows with ``mask`` False are ignored).
        y: ``(rows,)`` targets. mask: ``(rows,)`` bool.
        ridge: ``> 0``, added to ``Phi^T Phi``.
        noise_dof: ``"residual"``: ``s^2 = RSS / max(n - df, 1)`` with
            ``df = sum_i s_i^2 / (s_i^2 + ridge)`` (= ``p`` for ``ridge -> 0``, ``n > p``);
            ``"n"``: ``s^2 = RSS / max(n, 1)`` (the maximum-likelihood estimate of Brofos, Shu & Jin,
            below eq. 7).

    Returns:
        :class:`LinearHead` with ``sigma^2(x) = s^2 (1 + nu^T (Phi^T Phi + ridge I)^{-1} nu)``.
    """
    sp = _spectral(Phi, y, mask)
    w_eig = sp.b / (sp.eig + ridge)
    rss = _rss(sp, w_eig)
    if noise_dof == "n":
        dof = jnp.maximum(sp.n, 1.0)
    else:
        df = jnp.sum(sp.eig / (sp.eig + ridge))
        dof = jnp.maximum(sp.n - df, 1.0)
    s2 = rss / dof
    safe = jnp.maximum(s2, jnp.finfo(Phi.dtype).tiny)
    return LinearHead(sp.V @ w_eig, sp.V, s2 / (sp.eig + ridge), s2, ridge / safe, 1.0 / safe, dof, sp.n)


def _bayes_terms(sp: _Spectral, alpha, beta):
    denom = alpha + beta * sp.eig
    w_eig = beta * sp.b / denom
    return w_eig, denom


def _log_evidence_sp(sp: _Spectral, alpha, beta) -> Array:
    p = sp.eig.shape[0]
    w_eig, denom = _bayes_terms(sp, alpha, beta)
    E = 0.5 * beta * _rss(sp, w_eig) + 0.5 * alpha * jnp.sum(w_eig**2)
    return (0.5 * p * jnp.log(alpha) + 0.5 * sp.n * jnp.log(beta) - E - 0.5 * jnp.sum(jnp.log(denom))
            - 0.5 * sp.n * _LOG_2PI)


def log_evidence(Phi: Array, y: Array, mask: Array, alpha, beta) -> Array:
    """Log marginal likelihood ``ln p(y | alpha, beta)`` of Bayesian linear regression on
    the rows where ``mask`` (PRML eq. 3.86); ``Phi (rows, p)``, ``y (rows,)``."""
    return _log_evidence_sp(_spectral(Phi, y, mask), alpha, beta)


def bayesian_head(
    Phi: Array, y: Array, mask: Array, alpha=None, beta=None, *, iters: int = 100,
    alpha0: float = 1.0, beta0s: Sequence[float] = (1.0, 10.0, 100.0, 1000.0),
) -> LinearHead:
    """Bayesian linear regression head (DNGO; PRML eqs. 3.53-3.54, 3.58-3.59).

    Args:
        Phi: ``(rows, p)`` features; y: ``(rows,)``; mask: ``(rows,)`` bool.
        alpha, beta: fixed prior / noise precisions; when either is ``None`` both are
            chosen by maximizing the log evidence with ``iters`` MacKay fixed-point updates
            (PRML eqs. 3.92, 3.95: ``alpha = gamma / m_N^T m_N``,
            ``1/beta = RSS / (n - gamma)``, ``gamma = sum_i beta s_i^2/(alpha + beta s_i^2)``),
            clipped to ``ALPHA_RANGE`` and ``BETA_RANGE``, from the starts
            ``(alpha0, b0)`` for each ``b0`` in ``beta0s`` (in parallel); the end point of
            largest log evidence wins. (The evidence has a second, degenerate maximum at
            ``alpha -> inf``, ``beta ~ 1``, "everything is noise", which a single start
            can fall into.)

    Returns:
        :class:`LinearHead`: ``weights = m_N``, ``Cov[w] = S_N``, ``noise_var = 1/beta``.
    """
    sp = _spectral(Phi, y, mask)
    dtype = Phi.dtype
    tiny = jnp.finfo(dtype).tiny
    if alpha is None or beta is None:
        la_lo, la_hi = math.log(ALPHA_RANGE[0]), math.log(ALPHA_RANGE[1])
        lb_lo, lb_hi = math.log(BETA_RANGE[0]), math.log(BETA_RANGE[1])

        def update(_, ab):
            a, b = ab
            w_eig, denom = _bayes_terms(sp, a, b)
            gamma = jnp.sum(b * sp.eig / denom)
            a_new = gamma / jnp.maximum(jnp.sum(w_eig**2), tiny)
            b_new = jnp.maximum(sp.n - gamma, tiny) / jnp.maximum(_rss(sp, w_eig), tiny)
            a_new = jnp.exp(jnp.clip(jnp.log(jnp.maximum(a_new, tiny)), la_lo, la_hi))
            b_new = jnp.exp(jnp.clip(jnp.log(jnp.maximum(b_new, tiny)), lb_lo, lb_hi))
            return a_new, b_new

        def run(a0, b0):
            a, b = jax.lax.fori_loop(0, iters, update, (a0, b0))
            return a, b, _log_evidence_sp(sp, a, b)

        starts_a = jnp.full((len(beta0s),), alpha0, dtype)
        starts_b = jnp.asarray(beta0s, dtype)
        a_all, b_all, ev = jax.vmap(run)(starts_a, starts_b)
        best = jnp.argmax(jnp.where(jnp.isnan(ev), -jnp.inf, ev))
        alpha, beta = a_all[best], b_all[best]
    alpha = jnp.asarray(alpha, dtype)
    beta = jnp.asarray(beta, dtype)
    w_eig, denom = _bayes_terms(sp, alpha, beta)
    gamma = jnp.sum(beta * sp.eig / denom)
    return LinearHead(sp.V @ w_eig, sp.V, 1.0 / denom, 1.0 / beta, alpha, beta, sp.n - gamma, sp.n)


def head_predict(head: LinearHead, nu: Array) -> tuple[Array, Array]:
    """Predictive ``(mean (N,), variance (N,))`` of a :class:`LinearHead` at features
    ``nu (N, p)``."""
    proj = nu @ head.basis
    return nu @ head.weights, head.noise_var + jnp.sum(proj * proj * head.cov_diag, axis=-1)


# --------------------------------------------------------------------------- selection
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
        ei, mean, std: ``(N,)`` with ``N >= q``; NaN entries never win.
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
class AdaptiveBasisState(NamedTuple):
    """State of adaptive-basis BO / DNGO (a pytree; fixed shapes).

    Attributes:
        data: :class:`~nbo_jax.dataset.Dataset` (unit-cube inputs).
        params0: initial network weights; params: current weights.
        head: :class:`LinearHead` fitted on the current features.
        since_train: ``()`` int32, observations added since the network was last trained.
        bounds: the box (:class:`~nbo_jax.domains.Bounds`, ``(d,)`` arrays).
        key: PRNG key for training shuffles.
    """

    data: Dataset
    params0: Any
    params: Any
    head: LinearHead
    since_train: Array
    bounds: Bounds
    key: Array


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
    ei_tol: float = 0.0,
    standardize: bool = True,
    preset: str = "default",
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
        learning_rate, epochs, minibatch_size, optimizer (``"adam"``/``"sgd"``): MSE
            training of the network on standardized targets (``minibatch_size`` is the SGD
            mini-batch, not a number of points per ask: that is ``q``); warm_start: start
            each retraining from the previous weights (else from the initial weights).
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
            fallback (a float or a scalar array).
        standardize: fit on standardized targets (mean 0, std 1 over the trained rows).
        preset: ``"default"`` or ``"paper"``; fills the arguments left ``None`` (module doc).

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
    aopt = as_acq_optimizer(acq_optimizer, default=chosen["acq_optimizer"],
                            no_gradient="with q > 1 the batch rule selects among the raw samples" if q > 1 else None)
    if aopt.raw_samples < q:
        raise ValueError(f"acq_optimizer.raw_samples ({aopt.raw_samples}) must be >= q ({q})")
    ei_tol = check_scale("ei_tol", ei_tol, allow_zero=True)
    warm = check_bool("warm_start", chosen["warm_start"])
    standardize = check_bool("standardize", standardize)
    act = ACTIVATIONS[activation]

    @functools.lru_cache(maxsize=None)
    def module(dtype):
        return _BasisMLP(hidden, act, dtype)

    def net_of(state):
        return module(state.data.u.dtype)

    def features(params, mod, z: Array) -> Array:
        _, h = mod.apply({"params": params}, z)
        return jnp.concatenate([h, jnp.ones(h.shape[:-1] + (1,), h.dtype)], axis=-1)

    def fit_head(Phi, y, mask) -> LinearHead:
        if head == "ols":
            return ols_head(Phi, y, mask, rdg, dof_mode)
        return bayesian_head(Phi, y, mask, iters=n_ev)

    def targets_of(data: Dataset) -> Array:
        return data.standardized()[0] if standardize else data.y

    def absorb(state: AdaptiveBasisState, data: Dataset, n_new, force: bool) -> AdaptiveBasisState:
        """``state`` holding ``data`` (``n_new`` rows more than ``state.data``): retrain the
        network when due (always when ``force``), refit the head on the trained rows."""
        mod = net_of(state)
        since = state.since_train + n_new
        retrain = jnp.asarray(True) if force else since >= K
        key, k_train = jax.random.split(state.key)
        targets = targets_of(data)
        z = 2.0 * data.u - 1.0
        start = state.params if warm else state.params0
        apply_out = lambda p, zz: mod.apply({"params": p}, zz)[0]  # noqa: E731
        params = train_regression(apply_out, start, start, z, targets, data.mask, k_train, train_cfg,
                                  epochs=jnp.where(retrain, train_cfg.epochs, 0))
        params = jax.tree.map(lambda a, b: jnp.where(retrain, a, b), params, state.params)
        lin = fit_head(features(params, mod, z), targets, data.mask)
        return state._replace(data=data, params=params, head=lin,
                              since_train=jnp.where(retrain, 0, since).astype(jnp.int32), key=key)

    def init(key: Array, x0: Array, y0: Array, c0=None, *, bounds, capacity: int) -> AdaptiveBasisState:
        data, box = initial_data(x0, y0, c0, bounds, capacity, constrained=False)
        mod = module(data.u.dtype)
        k_net, k_state = jax.random.split(key)
        params0 = mod.init(k_net, jnp.zeros(data.u.shape[1:], data.u.dtype))["params"]
        # head=None until absorb fits it on the initial design
        state = AdaptiveBasisState(data, params0, params0, None, jnp.zeros((), jnp.int32), box, k_state)
        return absorb(state, data, data.count, force=True)

    def surrogate_posterior(state: AdaptiveBasisState, u_c: Array) -> SurrogatePosterior:
        nu = features(state.params, net_of(state), 2.0 * u_c - 1.0)
        mean, var = head_predict(state.head, nu)
        targets = targets_of(state.data)
        incumbent = state.data.incumbent(targets)
        return SurrogatePosterior(u_c, mean, jnp.sqrt(jnp.maximum(var, 0.0)), incumbent)

    def ask(state: AdaptiveBasisState, key: Array) -> Array:
        k_raw, k_start = jax.random.split(key)
        u_c = candidate_set(k_raw, state.data, aopt.n_uniform, aopt.n_local, local_std=aopt.local_std,
                            n_best=aopt.n_best, sampler=aopt.raw_sampler)
        post = surrogate_posterior(state, u_c)
        ei = expected_improvement(post.mean, post.std, post.incumbent)
        if state.data.finite:  # score the unevaluated choices; no gradient steps
            idx = select_batch(ei, post.mean, post.std, q, ei_tol, excluded=~state.data.eligible())
            return state.bounds.from_unit(u_c[idx] if q > 1 else u_c[idx[0]])
        if q > 1:
            return state.bounds.from_unit(u_c[select_batch(ei, post.mean, post.std, q, ei_tol)])
        # q = 1: argmax EI, or argmax sigma when EI <= ei_tol on every raw sample (select_batch
        # with q = 1); with steps > 0 the chosen utility is climbed (optimize_acqf's last stage)
        use_ei = jnp.any(jnp.where(jnp.isnan(ei), -jnp.inf, ei) > ei_tol)

        def utility(u: Array) -> Array:
            p = surrogate_posterior(state, u)
            return jnp.where(use_ei, expected_improvement(p.mean, p.std, p.incumbent), p.std)

        u = refine_argmax(k_start, jnp.where(use_ei, ei, post.std), u_c, utility, aopt, state.data)
        return state.bounds.from_unit(u)

    def tell(state: AdaptiveBasisState, x: Array, y: Array, c=None) -> AdaptiveBasisState:
        u, y = told_rows(state.bounds, x, y, c, constrained=False)
        data = state.data.add_batch(u, y)
        return absorb(state, data, data.count - state.data.count, force=False)

    name = "adaptive-basis" if head == "ols" else "dngo"
    return make_algorithm(init, ask, tell, name=name, surrogate=surrogate_posterior, q=q, batch_rule="native")


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
