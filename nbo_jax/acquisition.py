"""Acquisition functions: plain, composable functions of a surrogate posterior.

An acquisition function has the signature ``acq(post: SurrogatePosterior, key) -> (N,)``
and returns a utility to **maximize** (BoTorch's convention) for a **minimization**
problem (SPEC.md section 0). The factories below close over their parameters (optax style);
parameters may be Python floats or traced arrays (so ``nu`` can be vmapped). Compose with
ordinary arithmetic inside a lambda, or with :func:`weighted_sum`::

    acq = nbo.acquisition.weighted_sum([(1.0, nbo.acquisition.ei()),
                                        (0.1, nbo.acquisition.lcb(2.0))])
    algo = nbo.neural_bo(acquisition=acq)
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Optional, Sequence

import jax
import jax.numpy as jnp
from jax.scipy.special import ndtr

Array = jax.Array


class SurrogatePosterior(NamedTuple):
    """The surrogate's marginal posterior at ``N`` candidates (standardized output units).

    Attributes:
        u: ``(N, d)`` candidates in the unit cube.
        mean: ``(N,)`` posterior mean (Neural-BO: the trained network ``h(x; theta_t)``).
        std: ``(N,)`` posterior standard deviation (Neural-BO: ``sigma_t(x)``).
        incumbent: ``()`` best (smallest) observed standardized value. For constrained
            models, the best *feasible* one, or ``+inf`` when no observation is feasible.
        constraint_mean: ``(N, K)`` posterior means of the ``K`` constraints, scaled so that
            ``0`` is still the feasibility threshold (``c <= 0`` feasible); ``None`` for
            unconstrained models.
        constraint_std: ``(N, K)`` their posterior standard deviations (same scaling).
    """

    u: Array
    mean: Array
    std: Array
    incumbent: Array
    constraint_mean: Optional[Array] = None
    constraint_std: Optional[Array] = None


AcquisitionFn = Callable[[SurrogatePosterior, Array], Array]


def thompson(nu=1.0) -> AcquisitionFn:
    """Thompson sampling, independent per candidate (seed 000, Algorithm 1, lines 3-4):
    ``f~(x) ~ N(mean, nu^2 std^2)``; utility ``-f~(x)`` (so the argmax is ``argmin f~``)."""

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        eps = jax.random.normal(key, post.mean.shape, post.mean.dtype)
        return -(post.mean + nu * post.std * eps)

    return acq


def lcb(beta=2.0) -> AcquisitionFn:
    """Lower confidence bound for minimization: utility ``-(mean - beta std)``.

    This is NeuralUCB's / GP-UCB's optimistic rule written for minimization."""

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        return -(post.mean - beta * post.std)

    return acq


ucb = lcb
"""``ucb(beta)``: the papers' UCB (maximization) in minimization form, i.e. :func:`lcb`."""


def greedy() -> AcquisitionFn:
    """Posterior mean only (NeuralGreedy, PINN-BO): utility ``-mean``."""

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        return -post.mean

    return acq


def expected_improvement(mean: Array, std: Array, best: Array) -> Array:
    """EI for minimization (SPEC.md section 3): ``std (z Phi(z) + phi(z))``,
    ``z = (best - mean) / std``; equals ``max(best - mean, 0)`` where ``std == 0``.
    Never negative."""
    safe = jnp.where(std > 0, std, 1.0)
    z = (best - mean) / safe
    ei_pos = safe * (z * ndtr(z) + jnp.exp(-0.5 * z * z) / jnp.sqrt(2 * jnp.pi))
    return jnp.maximum(jnp.where(std > 0, ei_pos, jnp.maximum(best - mean, 0.0)), 0.0)


def ei(xi=0.0) -> AcquisitionFn:
    """Expected improvement over ``incumbent - xi`` (minimization form)."""

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        return expected_improvement(post.mean, post.std, post.incumbent - xi)

    return acq


def log_ei(xi=0.0) -> AcquisitionFn:
    """``log(EI)`` with a floor at ``log(1e-30)`` (ranks like EI where EI underflows less)."""

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        return jnp.log(jnp.maximum(expected_improvement(post.mean, post.std, post.incumbent - xi), 1e-30))

    return acq


def pi(xi=0.0) -> AcquisitionFn:
    """Probability of improvement ``Phi((incumbent - xi - mean) / std)`` (minimization)."""

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        safe = jnp.where(post.std > 0, post.std, 1.0)
        z = (post.incumbent - xi - post.mean) / safe
        return jnp.where(post.std > 0, ndtr(z), (post.mean < post.incumbent - xi).astype(post.mean.dtype))

    return acq


def _constraints_of(post: SurrogatePosterior, who: str) -> tuple[Array, Array]:
    if post.constraint_mean is None or post.constraint_std is None:
        raise ValueError(f"{who} needs a constrained surrogate (posterior.constraint_mean/std are None); "
                         "use it with a constrained algorithm such as nbo.neural_cbo()")
    return post.constraint_mean, post.constraint_std


def lcb_violation(post: SurrogatePosterior, beta=1.0) -> Array:
    """Total optimistic violation ``sum_k [mean_k - beta_k std_k]^+``, ``(N,)``; 0 exactly
    where every constraint's LCB is ``<= 0`` (thesis eq. 4.5's feasibility test, Alg. 4
    line 4). ``beta`` is a scalar or ``(K,)``."""
    cm, cs = _constraints_of(post, "lcb_violation")
    return jnp.sum(jnp.maximum(cm - beta * cs, 0.0), axis=-1)


def probability_of_feasibility(post: SurrogatePosterior) -> Array:
    """``prod_k Phi(-mean_k / std_k)``, ``(N,)``: the chance that every constraint is
    ``<= 0`` under independent Gaussian posteriors (Gardner et al. 2014, eq. 5); where
    ``std_k = 0`` the factor is ``1[mean_k <= 0]``."""
    cm, cs = _constraints_of(post, "probability_of_feasibility")
    safe = jnp.where(cs > 0, cs, 1.0)
    p = jnp.where(cs > 0, ndtr(-cm / safe), (cm <= 0).astype(cm.dtype))
    return jnp.prod(p, axis=-1)


def _feasible_first(score: Array, violation: Array) -> Array:
    """Utility that ranks the candidates with ``violation == 0`` by ``score`` and, when there
    are none, every candidate by ``-violation`` (the smallest-violation fallback)."""
    ok = violation <= 0.0
    return jnp.where(jnp.any(ok), jnp.where(ok, score, -jnp.inf), -violation)


def constrained_ei(beta=1.0, nu=1.0, approx_error=0.0) -> AcquisitionFn:
    """Neural-CBO's rule (thesis Ch. 4, Alg. 4 line 4; SPEC.md section 4), minimization form:
    maximize ``EI(x) = rho(incumbent - mean(x) + E, nu std(x))`` over the candidates whose
    constraint LCBs ``mean_k - beta_k std_k - E`` are all ``<= 0``; ``rho(u, s) = u Phi(u/s)
    + s phi(u/s)`` (``max(u, 0)`` at ``s = 0``). When no candidate passes, the utility is
    ``-sum_k [LCB_k]^+`` (SPEC.md **Decision**: the smallest total LCB violation; the
    authors' code takes a random candidate). An infinite ``incumbent`` (no reference value)
    makes the utility ``nu * std`` on the LCB-feasible candidates.

    Args:
        beta: constraint confidence scale ``beta_k`` (scalar or ``(K,)``; thesis
            Lemma 4.1.5's ``beta_{c_i,t}``, treated as a parameter).
        nu: scale of the objective's ``sigma`` inside EI.
        approx_error: the network approximation term ``E(m)/(T+1)`` (thesis Corollary 4.1.6);
            0 by default (SPEC.md).
    """

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        cm, cs = _constraints_of(post, "constrained_ei")
        viol = jnp.sum(jnp.maximum(cm - beta * cs - approx_error, 0.0), axis=-1)
        finite = jnp.isfinite(post.incumbent)
        best = jnp.where(finite, post.incumbent, 0.0)
        ei_val = expected_improvement(post.mean, nu * post.std, best + approx_error)
        # no incumbent (nothing observed yet): explore, largest sigma among the LCB-feasible
        return _feasible_first(jnp.where(finite, ei_val, nu * post.std), viol)

    return acq


def cei(xi=0.0) -> AcquisitionFn:
    """Constrained EI (Gardner et al. 2014, eq. 6): ``EI(x) * prod_k P(c_k(x) <= 0)`` with
    the incumbent the best feasible observation; with no feasible observation yet
    (``incumbent = inf``) the utility is the probability of feasibility alone (Gardner et
    al. 2014, Section 3)."""

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        pof = probability_of_feasibility(post)
        finite = jnp.isfinite(post.incumbent)
        best = jnp.where(finite, post.incumbent, 0.0)
        return jnp.where(finite, expected_improvement(post.mean, post.std, best - xi) * pof, pof)

    return acq


def lcb_feasible(beta=2.0, beta_c=None) -> AcquisitionFn:
    """Optimistic constrained rule (ConfigOpt, Xu et al. 2023; UCB-C, Nguyen et al. 2023,
    in minimization form): minimize ``LCB_f = mean - beta std`` over the candidates whose
    constraint LCBs ``mean_k - beta_c std_k`` are all ``<= 0``; with none, the smallest total
    LCB violation. ``beta_c`` defaults to ``beta``."""
    bc = beta if beta_c is None else beta_c

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        return _feasible_first(-(post.mean - beta * post.std), lcb_violation(post, bc))

    return acq


def weighted_sum(terms: Sequence[tuple[float, AcquisitionFn]]) -> AcquisitionFn:
    """``sum_k w_k acq_k``; each term gets its own PRNG key (split from the one given).

    Raises:
        ValueError: empty ``terms``.
    """
    terms = list(terms)
    if not terms:
        raise ValueError("terms must hold at least one (weight, acquisition) pair")

    def acq(post: SurrogatePosterior, key: Array) -> Array:
        keys = jax.random.split(key, len(terms))
        return sum(w * a(post, k) for (w, a), k in zip(terms, keys))

    return acq


__all__ = [
    "SurrogatePosterior",
    "AcquisitionFn",
    "thompson",
    "lcb",
    "ucb",
    "greedy",
    "ei",
    "log_ei",
    "pi",
    "expected_improvement",
    "weighted_sum",
    "constrained_ei",
    "cei",
    "lcb_feasible",
    "lcb_violation",
    "probability_of_feasibility",
]
