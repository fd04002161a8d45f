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

from typing import Callable, NamedTuple, Sequence

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
        incumbent: ``()`` best (smallest) observed standardized value.
    """

    u: Array
    mean: Array
    std: Array
    incumbent: Array


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
]
