"""Outcome transforms: what a surrogate is fitted to, computed from a ``Dataset``'s targets.

    "standardize"  z = (y - mean) / std over the rows held (BoTorch's ``Standardize``)
    "power"        z standardized, then the Yeo-Johnson power transform with the lambda of
                   maximum likelihood, standardized again (Yeo & Johnson 2000; HEBO,
                   Cowen-Rivers et al. 2022, Section 4.1)
    "copula"       the Gaussian copula: each row's rank among the rows held mapped through the
                   standard normal quantile function (Salinas et al. 2020, "A quantile-based
                   approach for hyperparameter transfer learning", ICML, Section 3.1)
    "half_rank"    the rows above the median (the worse half) replaced by the median plus the
                   good half's scale times the normal quantile of their rank, the rows at or
                   below it kept; then standardized (OSS Vizier's half-rank output warping,
                   Song et al. 2024, "The Vizier Gaussian process bandit algorithm", Section 3.2,
                   written for minimization)
    "none"         y as observed
    "auto"         "power" on a search space with an integer or categorical parameter
                   (``Dataset.space``, :attr:`~nbo_jax.search_space.SearchSpace.discrete`),
                   "standardize" on a box, a finite domain or a space of floats only
                   (:func:`resolved`)
    "discrete_half_rank"
                   "half_rank" on a search space with an integer or categorical parameter,
                   "standardize" elsewhere (:func:`resolved`; Neural-BO's and the GP
                   baselines' default)

Every transform is increasing in ``y``, so the best row stays the best and a surrogate's
minimum in transformed units is its minimum in the objective's. Only ``"standardize"`` and
``"none"`` are affine (``AFFINE_OUTCOME_TRANSFORMS``): a posterior in ``"power"``,
``"copula"`` or ``"half_rank"`` units has no fixed map back to the objective's units, nor has
one in ``"auto"``'s or ``"discrete_half_rank"``'s on a space with a discrete parameter. Rows
outside ``data.mask`` are 0 in every result.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .dataset import Dataset

Array = jax.Array

OUTCOME_TRANSFORMS = ("standardize", "power", "copula", "half_rank", "none", "auto", "discrete_half_rank")
# the transforms that stand for another one on a search space with a discrete parameter (resolved)
ON_DISCRETE_SPACES = {"auto": "power", "discrete_half_rank": "half_rank"}
# the transforms that are affine in y (a posterior in their units maps back to the objective's)
AFFINE_OUTCOME_TRANSFORMS = ("standardize", "none")
# the candidate lambdas of "power": maximum likelihood over this grid (step 0.1); scipy's
# yeojohnson_normmax searches without bounds, HEBO's sklearn PowerTransformer likewise
POWER_LAMBDAS = (-2.0, 4.0, 61)


def yeo_johnson(z: Array, lam) -> Array:
    """The Yeo-Johnson power transform of ``z`` (any shape) with exponent ``lam`` (a scalar):
    ``((z + 1)^lam - 1) / lam`` for ``z >= 0`` (``log1p(z)`` at ``lam = 0``) and
    ``-((1 - z)^(2 - lam) - 1) / (2 - lam)`` for ``z < 0`` (``-log1p(-z)`` at ``lam = 2``);
    Yeo & Johnson 2000, Eq. 2.1; ``scipy.stats.yeojohnson``'s formula."""
    pos = z >= 0
    zp, zn = jnp.where(pos, z, 0.0), jnp.where(pos, 0.0, z)
    at0, at2 = jnp.abs(lam) < 1e-6, jnp.abs(lam - 2) < 1e-6
    lp, ln = jnp.where(at0, 1.0, lam), jnp.where(at2, 1.0, 2 - lam)
    yp = jnp.where(at0, jnp.log1p(zp), jnp.expm1(lp * jnp.log1p(zp)) / lp)
    yn = jnp.where(at2, -jnp.log1p(-zn), -jnp.expm1(ln * jnp.log1p(-zn)) / ln)
    return jnp.where(pos, yp, yn)


def power_lambda(z: Array, mask: Array) -> Array:
    """``()`` the Yeo-Johnson exponent of maximum likelihood for the rows of ``z (cap,)`` in
    ``mask``, over the grid ``POWER_LAMBDAS``: the profile log-likelihood
    ``-n/2 log var(T(z)) + (lam - 1) sum sign(z) log(1 + |z|)`` (``scipy.stats.yeojohnson_llf``)."""
    n = jnp.maximum(jnp.sum(mask), 1)
    logs = jnp.sum(jnp.where(mask, jnp.sign(z) * jnp.log1p(jnp.abs(z)), 0.0))
    grid = jnp.linspace(*POWER_LAMBDAS[:2], POWER_LAMBDAS[2], dtype=z.dtype)

    def llf(lam):
        t = yeo_johnson(z, lam)
        mean = jnp.sum(jnp.where(mask, t, 0.0)) / n
        var = jnp.sum(jnp.where(mask, (t - mean) ** 2, 0.0)) / n
        return -0.5 * n * jnp.log(jnp.maximum(var, jnp.finfo(z.dtype).tiny)) + (lam - 1) * logs

    return grid[jnp.argmax(jax.vmap(llf)(grid))]


def _mean_rank(y: Array, rows: Array) -> Array:
    """``(cap,)`` each entry's rank among the ``rows`` of ``y`` in increasing order, 0-based plus
    1/2 (``r - 1/2`` for the 1-based rank ``r``; ties share their mean rank). O(cap^2)."""
    below = jnp.sum(rows[None, :] & (y[None, :] < y[:, None]), axis=1)
    ties = jnp.sum(rows[None, :] & (y[None, :] == y[:, None]), axis=1) - 1
    return below + 0.5 * ties + 0.5


def copula(y: Array, mask: Array) -> Array:
    """``(cap,)`` the Gaussian copula of the rows of ``y`` in ``mask``: ``Phi^-1((r + 1/2) / n)``
    with ``r`` the row's rank among the ``n`` rows (ties share their mean rank)."""
    n = jnp.maximum(jnp.sum(mask), 1)
    z = jax.scipy.special.ndtri(_mean_rank(y, mask) / n)
    return jnp.where(mask, z, 0.0).astype(y.dtype)


def masked_median(y: Array, mask: Array) -> Array:
    """``()`` the median of the rows of ``y (cap,)`` in ``mask`` (the mean of the two middle
    ones for an even count; ``numpy.median``'s rule)."""
    n = jnp.maximum(jnp.sum(mask), 1)
    ordered = jnp.sort(jnp.where(mask, y, jnp.inf))
    return 0.5 * (ordered[(n - 1) // 2] + ordered[n // 2])


def half_rank(y: Array, mask: Array) -> Array:
    """``(cap,)`` the half-rank warping of the rows of ``y`` in ``mask`` (for minimization):
    with ``m`` their median and ``s`` the root mean square of ``y - m`` over the rows at or
    below ``m`` (over all rows if that is 0, then 1), a row above ``m`` becomes
    ``m - s Phi^-1((r - 1/2) / (2 k))``, ``r`` its rank from the worst (1) among the ``k`` rows
    above ``m`` (ties share their mean rank); the rows at or below ``m`` are kept. Increasing in
    ``y``; the worse half follows a half normal of the good half's scale, however far its
    values lie. OSS Vizier's ``HalfRankComponent`` (Song et al. 2024) uses distinct values'
    ranks and counts; here every row counts."""
    m = masked_median(y, mask)
    good = mask & (y <= m)
    bad = mask & (y > m)

    def rms(rows):
        return jnp.sqrt(jnp.sum(jnp.where(rows, (y - m) ** 2, 0.0)) / jnp.maximum(jnp.sum(rows), 1))

    s = rms(good)
    s = jnp.where(s > 0, s, rms(mask))
    s = jnp.where(s > 0, s, 1.0)
    k = jnp.maximum(jnp.sum(bad), 1)
    q = _mean_rank(-y, bad) / (2 * k)  # from the worst
    warped = m - s * jax.scipy.special.ndtri(q)
    return jnp.where(bad, warped, jnp.where(mask, y, 0.0)).astype(y.dtype)


def resolved(transform: str, space) -> str:
    """The transform ``transform`` stands for on data whose search space is ``space``
    (``Dataset.space``: a :class:`~nbo_jax.search_space.SearchSpace`, or ``None`` for a box
    or a finite domain): ``"auto"`` is ``"power"`` and ``"discrete_half_rank"`` is
    ``"half_rank"`` where ``space`` has an integer or categorical parameter, both
    ``"standardize"`` elsewhere (:data:`ON_DISCRETE_SPACES`); any other transform is itself.
    Static (a Python str, decided at trace time)."""
    if transform not in ON_DISCRETE_SPACES:
        return transform
    return ON_DISCRETE_SPACES[transform] if space is not None and space.discrete else "standardize"


def targets(data: Dataset, transform: str) -> Array:
    """``(cap,)`` the targets a surrogate is fitted to: ``data.y`` under ``transform`` (one of
    ``OUTCOME_TRANSFORMS``, module doc; ``"auto"`` by :func:`resolved` on ``data.space``),
    computed over the rows in ``data.mask`` (failures included, with their imputed values); 0
    outside the mask. Single-output datasets."""
    transform = resolved(transform, data.space)
    if transform == "standardize":
        return data.standardized()[0]
    if transform == "none":
        return jnp.where(data.mask, data.y, 0.0)
    if transform == "copula":
        return copula(data.y, data.mask)
    if transform == "half_rank":
        return data._replace(y=half_rank(data.y, data.mask)).standardized()[0]
    if transform == "power":
        z = data.standardized()[0]
        # standardized again by the Dataset's own rule (Dataset.standardized)
        return data._replace(y=yeo_johnson(z, power_lambda(z, data.mask))).standardized()[0]
    raise ValueError(f"outcome_transform must be one of {OUTCOME_TRANSFORMS}, got {transform!r}")


__all__ = ["AFFINE_OUTCOME_TRANSFORMS", "ON_DISCRETE_SPACES", "OUTCOME_TRANSFORMS", "copula", "half_rank",
           "masked_median", "power_lambda", "resolved", "targets", "yeo_johnson"]
