"""The adaptive basis (Brofos, Shu & Jin, "Adaptive basis functions for Bayesian
optimization"; DNGO, Snoek et al. 2015, "Scalable Bayesian optimization using deep neural
networks", ICML) as a :class:`~nbo_jax.base.Surrogate`: a network trained on the targets by
mean squared error, and a linear model on its last hidden layer (plus a constant) fitted at
every update::

    theta   = argmin sum_i (h(x_i; theta) - y_i)^2            every ``retrain_every`` new rows
    phi(x)  = [last hidden layer of h(x; theta), 1]           (p = hidden[-1] + 1)
    head    : OLS with ridge (Brofos, Shu & Jin, eqs. 6-8) or Bayesian linear regression with
              alpha, beta by MacKay's evidence fixed point (DNGO)
    mean(x) = phi(x)^T w,   var(x) = noise + phi(x)^T Cov[w] phi(x)   (predictive)

A posterior draw ``f~(x) = phi(x)^T w~``, ``w~ ~ N(w, Cov[w])``, is one function of ``x``
(pathwise). The presets (:func:`nbo_jax.algorithms.adaptive_basis.adaptive_basis`) hold the
derivations' settings and the measurements.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple, Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp

from ..base import Surrogate, SurrogatePosterior
from ..dataset import Dataset
from ..training import TrainConfig, train_regression

Array = jax.Array

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
        alpha: fixed prior precision (see ``beta``).
        beta: fixed noise precision; when either is ``None`` both are
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


class AdaptiveBasisState(NamedTuple):
    """The adaptive basis' state (a pytree; fixed shapes).

    Attributes:
        params0: initial network weights; params: current weights.
        head: :class:`LinearHead` fitted on the current features.
        since_train: ``()`` int32, observations added since the network was last trained.
        key: PRNG key for training shuffles.
    """

    params0: Any
    params: Any
    head: LinearHead
    since_train: Array
    key: Array


def adaptive_basis(*, hidden: tuple, activation: Callable[[Array], Array], head: str, train: TrainConfig,
                   retrain_every: int, ridge: float = 0.1, noise_dof: str = "residual", evidence_iters: int = 100,
                   warm_start: bool = True) -> Surrogate:
    """The adaptive basis (module doc): a network of ``hidden`` widths and ``activation``
    trained by ``train`` (from its current weights with ``warm_start``, else its initial ones)
    every ``retrain_every`` new rows, and the ``head`` (``"ols"``: :func:`ols_head` with
    ``ridge`` and ``noise_dof``; ``"bayesian"``: :func:`bayesian_head` with
    ``evidence_iters``) refitted at every update. Arguments are checked by the preset
    (:func:`nbo_jax.algorithms.adaptive_basis.adaptive_basis`). Inputs enter the network as
    ``2u - 1``.

    Returns:
        :class:`~nbo_jax.base.Surrogate` with an :class:`AdaptiveBasisState`; its posterior at
        ``u (N, d)``: the predictive mean and standard deviation ``(N,)`` (the noise
        included), a pathwise draw of the head's weights.
    """
    modules: dict = {}

    def module(dtype) -> _BasisMLP:
        if dtype not in modules:
            modules[dtype] = _BasisMLP(hidden, activation, dtype)
        return modules[dtype]

    def features(params, mod, z: Array) -> Array:
        _, h = mod.apply({"params": params}, z)
        return jnp.concatenate([h, jnp.ones(h.shape[:-1] + (1,), h.dtype)], axis=-1)

    def fit_head(Phi, y, mask) -> LinearHead:
        if head == "ols":
            return ols_head(Phi, y, mask, ridge, noise_dof)
        return bayesian_head(Phi, y, mask, iters=evidence_iters)

    def absorb(state: AdaptiveBasisState, data: Dataset, n_new, force: bool) -> AdaptiveBasisState:
        """Retrain the network when due (always when ``force``), refit the head on ``data``."""
        mod = module(data.u.dtype)
        since = state.since_train + n_new
        retrain = jnp.asarray(True) if force else since >= retrain_every
        key, k_train = jax.random.split(state.key)
        z = 2.0 * data.u - 1.0
        start = state.params if warm_start else state.params0
        apply_out = lambda p, zz: mod.apply({"params": p}, zz)[0]  # noqa: E731
        params = train_regression(apply_out, start, start, z, data.y, data.mask, k_train, train,
                                  epochs=jnp.where(retrain, train.epochs, 0))
        params = jax.tree.map(lambda a, b: jnp.where(retrain, a, b), params, state.params)
        lin = fit_head(features(params, mod, z), data.y, data.mask)
        return state._replace(params=params, head=lin, since_train=jnp.where(retrain, 0, since).astype(jnp.int32),
                              key=key)

    def init(key: Array, data: Dataset, rows: Array) -> AdaptiveBasisState:
        mod = module(data.u.dtype)
        k_net, k_state = jax.random.split(key)
        params0 = mod.init(k_net, jnp.zeros(data.u.shape[1:], data.u.dtype))["params"]
        # head=None until absorb fits it on the initial design
        state = AdaptiveBasisState(params0, params0, None, jnp.zeros((), jnp.int32), k_state)
        return absorb(state, data, data.count, force=True)

    def update(state: AdaptiveBasisState, data: Dataset, rows: Array, refit) -> AdaptiveBasisState:
        # the rows actually written (a row whose x was not finite is not recorded)
        return absorb(state, data, jnp.sum(rows < data.count).astype(jnp.int32), force=False)

    def posterior(state: AdaptiveBasisState, u: Array) -> SurrogatePosterior:
        nu = features(state.params, module(u.dtype), 2.0 * u - 1.0)
        mean, var = head_predict(state.head, nu)
        return SurrogatePosterior(u, mean, jnp.sqrt(jnp.maximum(var, 0.0)), None)

    def sample(state: AdaptiveBasisState, key: Array) -> Callable[[Array], Array]:
        h = state.head
        eps = jax.random.normal(key, h.weights.shape, h.weights.dtype)
        w = h.weights + h.basis @ (jnp.sqrt(jnp.maximum(h.cov_diag, 0.0)) * eps)
        return lambda u: features(state.params, module(u.dtype), 2.0 * u - 1.0) @ w

    return Surrogate(init, update, posterior, sample, pathwise=True, name="adaptive-basis")


__all__ = ["AdaptiveBasisState", "LinearHead", "adaptive_basis", "bayesian_head", "head_predict", "log_evidence",
           "ols_head", "ALPHA_RANGE", "BETA_RANGE"]
