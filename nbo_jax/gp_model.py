"""The exact Gaussian-process model on masked, fixed-capacity data.

A GP prior ``f ~ GP(c, s_f^2 k(u, u'))`` with a constant mean ``c`` on unit-cube inputs with
ARD lengthscales ``l (d,)``, outputscale ``s_f^2`` and Gaussian noise variance ``s_n^2``
(``c = 0`` for a zero-mean GP; the formulas below then read ``y - c`` for ``y``):

- kernels (Rasmussen & Williams 2006, "GPML", eqs. 4.9 and 4.17), with
  ``r = || (u - u') / l ||_2``:
  ``"rbf"`` (squared exponential) ``k = exp(-r^2 / 2)``;
  ``"matern52"`` ``k = (1 + sqrt5 r + 5/3 r^2) exp(-sqrt5 r)``;
  ``"ntk"`` (or an :class:`NTKKernel` naming the architecture) the infinite-width NTK of
  Neural-BO's network, Neural-BO at infinite width (see :class:`NTKKernel`; not stationary:
  the prior variance ``s_f^2 k(u, u)`` varies with ``u``, :func:`prior_variance`);
- the log marginal likelihood (GPML eq. 2.30 / Algorithm 2.1)
  ``log p(y) = -1/2 y^T (K + s_n^2 I)^{-1} y - sum_i log L_ii - n/2 log 2 pi``;
- the posterior (GPML eqs. 2.25-2.26, Algorithm 2.1)
  ``mean = k_*^T (K + s_n^2 I)^{-1} y``, ``var = k_** - k_*^T (K + s_n^2 I)^{-1} k_*``,
  both through the Cholesky factor ``L`` (an ``N``-candidate call costs ``O(N cap^2)``,
  never an ``N x N`` matrix, except :func:`joint_covariance` / :func:`sample_joint`, which
  exist to build exactly that);
- hyperparameter fitting (:func:`fit`) by maximum marginal likelihood (type-II ML) or, with
  a :class:`GPPrior`, maximum a posteriori: ``log p(y | theta) + log p(theta)``
  (:func:`map_objective`), by box-constrained L-BFGS to scipy's tolerances
  (:func:`nbo_jax.lbfgsb.minimize_lbfgsb`; BoTorch fits with scipy's L-BFGS-B) or Adam,
  from several starting points at once (one batched call; fixed shapes, so it runs in a
  jitted, vmapped BO loop).

**BoTorch's model** (``SingleTaskGP`` since BoTorch 0.12, after Hvarfner, Hellsten & Nardi
2024, "Vanilla Bayesian optimization performs great in high dimensions", ICML):
:func:`botorch_prior` and :func:`prior_mode` give its priors and starting point: an ARD
RBF kernel *without* outputscale (``s_f^2 = 1`` on standardized targets), lengthscale prior
``LogNormal(sqrt2 + log(d)/2, sqrt3)``, lengthscale ``>= 2.5e-2``, noise-variance prior
``LogNormal(-4, 1)``, noise ``>= 1e-4``, both initialized at the prior mode
``exp(loc - scale^2)``, and a learned constant mean ``c`` (BoTorch's ``ConstantMean``,
started at 0, no prior).

**Masking.** Data live in ``cap``-row buffers with a boolean ``mask`` (state is data).
With ``m = mask`` as 0/1 floats the model uses

    K_m = (m m^T) * (K + s_n^2 I) + diag(1 - m),        y_m = m * y,

i.e. every invalid row becomes an independent unit-variance dummy observation with target
0, uncorrelated with everything. ``K_m`` is block diagonal (after a permutation) with the
valid block ``K_v + s_n^2 I`` and an identity block, so ``log det K_m = log det(K_v + s_n^2 I)``
and ``y_m^T K_m^{-1} y_m = y_v^T (K_v + s_n^2 I)^{-1} y_v``. The only difference from the
valid-subset likelihood is the normalizing constant: the full-size formula would add
``-1/2 log 2 pi`` per dummy row, so :func:`log_marginal_likelihood` uses ``n_valid`` in
place of ``cap`` and equals the valid-subset LML exactly. Cross-covariances to candidates
are masked the same way (``m * k_*``), so the posterior equals the valid-subset posterior.

This module holds the model only; the BO algorithms built on it live in
:mod:`nbo_jax.algorithms.gp`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple, Union

import jax
import jax.numpy as jnp
import optax
from jax.flatten_util import ravel_pytree

from .lbfgsb import minimize_lbfgsb
from .posterior import cho_solve_lower, chol_append, solve_lower

Array = jax.Array

KERNELS = ("matern52", "rbf", "ntk")
"""Kernel names; ``"ntk"`` is ``NTKKernel()`` (Neural-BO's default network)."""
STATIONARY_KERNELS = ("matern52", "rbf")
"""The kernels with ARD lengthscales and prior variance ``s_f^2`` everywhere."""
_SQRT5 = math.sqrt(5.0)
_LOG_2PI = math.log(2.0 * math.pi)


class GPParams(NamedTuple):
    """GP hyperparameters as logs (all positive quantities), a pytree.

    Attributes:
        log_lengthscale: ``(d,)`` log ARD lengthscales ``log l`` (unit-cube units).
        log_outputscale: ``()`` log signal variance ``log s_f^2``.
        log_noise: ``()`` log noise variance ``log s_n^2``.
        constant: ``()`` the constant prior mean ``c`` (target units; BoTorch's
            ``ConstantMean``), 0 for a zero-mean GP.
    A stacked version (leading axis ``R``) holds ``R`` starting points for :func:`fit`.
    """

    log_lengthscale: Array
    log_outputscale: Array
    log_noise: Array
    constant: Array = 0.0

    @property
    def lengthscale(self) -> Array:
        return jnp.exp(self.log_lengthscale)

    @property
    def outputscale(self) -> Array:
        return jnp.exp(self.log_outputscale)

    @property
    def noise(self) -> Array:
        return jnp.exp(self.log_noise)


class ParamBounds(NamedTuple):
    """Box limits ``(low, high)`` on the hyperparameters (natural scale, not logs).

    Defaults (library decision; inputs in the unit cube, outputs standardized):
    lengthscales in ``[1e-2, 1e1]``, outputscale in ``[1e-2, 1e2]``, noise variance in
    ``[1e-6, 1]``.
    """

    lengthscale: tuple = (1e-2, 1e1)
    outputscale: tuple = (1e-2, 1e2)
    noise: tuple = (1e-6, 1.0)

    def validate(self) -> "ParamBounds":
        """Raises ValueError naming the field when a pair is not ``0 < low <= high`` finite."""
        for name, pair in self._asdict().items():
            try:
                lo, hi = (float(v) for v in pair)
            except (TypeError, ValueError):
                raise ValueError(f"{name} bounds must be a (low, high) pair of floats, got {pair!r}") from None
            if not (0.0 < lo <= hi < math.inf):
                raise ValueError(f"{name} bounds must satisfy 0 < low <= high < inf, got {pair!r}")
        return self

    def clip(self, params: GPParams) -> GPParams:
        """Project log parameters onto the box (works on stacked params too)."""
        lg = math.log
        return GPParams(
            jnp.clip(params.log_lengthscale, lg(self.lengthscale[0]), lg(self.lengthscale[1])),
            jnp.clip(params.log_outputscale, lg(self.outputscale[0]), lg(self.outputscale[1])),
            jnp.clip(params.log_noise, lg(self.noise[0]), lg(self.noise[1])),
            params.constant,
        )


class GPPrior(NamedTuple):
    """Log-normal priors on the hyperparameters (natural scale), ``(loc, scale)`` pairs or
    ``None`` (flat: no term). ``LogNormal(loc, scale)`` is the law of ``exp(N(loc, scale^2))``
    (``scipy.stats.lognorm(s=scale, scale=exp(loc))``), applied to every lengthscale, the
    outputscale ``s_f^2`` and the noise variance ``s_n^2``."""

    lengthscale: tuple | None = None
    outputscale: tuple | None = None
    noise: tuple | None = None


def botorch_prior(d: int) -> GPPrior:
    """BoTorch's ``SingleTaskGP`` priors (``get_covar_module_with_dim_scaled_prior``,
    ``get_gaussian_likelihood_with_lognormal_prior``; Hvarfner et al. 2024): lengthscales
    ``LogNormal(sqrt2 + log(d)/2, sqrt3)``, noise variance ``LogNormal(-4, 1)``, no
    outputscale prior (BoTorch has no outputscale: fix it at 1 with the bounds)."""
    return GPPrior(lengthscale=(math.sqrt(2.0) + 0.5 * math.log(d), math.sqrt(3.0)), noise=(-4.0, 1.0))


def lognormal_log_density(x: Array, loc: float, scale: float) -> Array:
    """``log`` of the ``LogNormal(loc, scale)`` density at ``x > 0`` (elementwise)."""
    lx = jnp.log(x)
    return -lx - math.log(scale) - 0.5 * _LOG_2PI - 0.5 * ((lx - loc) / scale) ** 2


def log_prior(prior: GPPrior | None, params: GPParams) -> Array:
    """``log p(theta)``: the sum of the log densities of :class:`GPPrior` at ``params``
    (natural scale, as GPyTorch's priors; 0 for ``None`` fields), ``()``."""
    dtype = params.log_noise.dtype
    total = jnp.zeros((), dtype)
    if prior is None:
        return total
    for value, pair in ((params.lengthscale, prior.lengthscale), (params.outputscale, prior.outputscale),
                        (params.noise, prior.noise)):
        if pair is not None:
            total = total + jnp.sum(lognormal_log_density(value, float(pair[0]), float(pair[1])))
    return total


def prior_mode(d: int, prior: GPPrior, bounds: "ParamBounds", dtype=None) -> GPParams:
    """The hyperparameters at the prior modes ``exp(loc - scale^2)`` (BoTorch's initial
    values), clipped to ``bounds``; a field without a prior takes :func:`default_params`'s
    value (lengthscales ``0.2 sqrt(d)``, outputscale 1, noise 1e-2); the constant mean starts
    at 0 (BoTorch's initial value)."""
    dtype = dtype or jnp.zeros(()).dtype
    base = default_params(d, ParamBounds(), dtype)

    def mode(pair, fallback):
        if pair is None:
            return fallback
        return jnp.full(fallback.shape, float(pair[0]) - float(pair[1]) ** 2, dtype)

    p = GPParams(mode(prior.lengthscale, base.log_lengthscale), mode(prior.outputscale, base.log_outputscale),
                 mode(prior.noise, base.log_noise), base.constant)
    return bounds.clip(p)


# --------------------------------------------------------------------------- kernels
NTK_ACTIVATIONS = ("relu",)
"""Activations of :class:`NTKKernel`: those of :data:`nbo_jax.networks.ACTIVATIONS` whose
infinite-width NTK neural-tangents computes in closed form for exactly the network's function
(flax's ``gelu`` is the tanh approximation, which ``stax.Gelu`` does not cover; ``tanh``,
``softplus`` and ``sigmoid`` have no closed form)."""


@dataclasses.dataclass(frozen=True)
class NTKKernel:
    """The ``"ntk"`` kernel for a given Neural-BO architecture (hashable, static: pass it as
    ``kind``; ``"ntk"`` is ``NTKKernel()``).

    ``k(u, u') = Theta(2u - 1, 2u' - 1) / Theta(z*, z*)``, ``z* = (1/sqrt3, ..., 1/sqrt3)``,
    and the prior covariance is ``s_f^2 k``. ``Theta`` is
    :func:`nbo_jax.ntk.analytic_ntk`: ``lim_{m->inf} G G^T / m`` of
    ``nbo_jax.networks.mlp(d, m, depth, activation=activation, use_bias=use_bias)`` on
    Neural-BO's inputs ``z = 2u - 1`` (Jacot, Gabriel & Hongler 2018; computed by
    neural-tangents, Novak et al. 2020). The ReLU diagonal ``Theta(z, z)`` is affine in
    ``||z||^2`` (:func:`nbo_jax.ntk.relu_ntk_diagonal`) and ``E ||z||^2 = d / 3`` for ``u``
    uniform on the unit cube, so the normalizer is the mean prior variance over the cube:
    ``s_f^2`` is the average prior variance, as for the stationary kernels, whatever ``d``
    and the depth. No lengthscales: ``params.log_lengthscale`` is ignored (and so is a
    lengthscale prior in :func:`map_objective`).

    Attributes:
        depth: number of weight layers ``L`` (int >= 2; Neural-BO: 2).
        activation: one of :data:`NTK_ACTIVATIONS` (Neural-BO: ``"relu"``).
        use_bias: the network has biases (Neural-BO's default preset: True; paper: False).
            Without biases ``k(u, .) = 0`` at the centre ``u = 1/2`` (``z = 0``): a bias-free
            ReLU network is 0 there.

    Raises:
        ValueError / TypeError: a field out of range or of the wrong type (names it).
    """

    depth: int = 2
    activation: str = "relu"
    use_bias: bool = True

    def __post_init__(self):
        if isinstance(self.depth, bool) or not isinstance(self.depth, int):
            raise TypeError(f"depth must be an int, got {self.depth!r}")
        if self.depth < 2:
            raise ValueError(f"depth (number of weight layers L) must be >= 2, got {self.depth}")
        if self.activation not in NTK_ACTIVATIONS:
            raise ValueError(f"activation must be one of {NTK_ACTIVATIONS} (the NTK of the others has no "
                             f"closed form matching the network), got {self.activation!r}")
        if not isinstance(self.use_bias, bool):
            raise TypeError(f"use_bias must be True or False, got {self.use_bias!r}")

    def normalizer(self, d: int) -> float:
        """``Theta(z*, z*)``, the mean of ``Theta(z, z)`` over the cube (class doc), a float."""
        from .ntk import relu_ntk_diagonal

        return float(relu_ntk_diagonal(d / 3.0, depth=self.depth, use_bias=self.use_bias))

    def correlation(self, a: Array, b: Array) -> Array:
        """``k(a_i, b_j)`` (no ``s_f^2``) for ``a (n, d)``, ``b (m, d)`` -> ``(n, m)``."""
        from .ntk import analytic_ntk

        theta = analytic_ntk(2.0 * a - 1.0, 2.0 * b - 1.0, depth=self.depth, activation=self.activation,
                             use_bias=self.use_bias)
        return theta / self.normalizer(a.shape[-1])

    def diagonal(self, u: Array) -> Array:
        """``k(u_i, u_i)`` for ``u (N, d)`` -> ``(N,)``, from its closed form in ``||z||^2``
        (no arccos: a smooth gradient)."""
        from .ntk import relu_ntk_diagonal

        z = 2.0 * u - 1.0
        theta = relu_ntk_diagonal(jnp.sum(z * z, axis=-1), depth=self.depth, use_bias=self.use_bias)
        return theta / self.normalizer(u.shape[-1])


@dataclasses.dataclass(frozen=True)
class MixedKernel:
    """A kernel for mixed inputs (hashable, static: pass it as ``kind``): the unit-cube columns
    of continuous and integer parameters (``continuous``) under a stationary kernel ``base``,
    and each categorical parameter's one-hot block under the overlap (Hamming) kernel,
    combined as CoCaBO's mixture (Ru, Alvi, Nguyen, Osborne & Roberts 2020, "Bayesian
    optimisation over multiple continuous and categorical inputs", ICML, eq. 5)::

        k_c(u, u') = base(r),  r = || (u_C - u'_C) / l_C ||          (GPML eq. 4.17 / 4.9)
        k_h(u, u') = exp(-(1/H) sum_h [z_h != z'_h] / l_h)           (BoTorch's CategoricalKernel)
        k(u, u')   = (1 - w) (k_c + k_h) / 2 + w k_c k_h

    with ``z_h`` the choice of categorical parameter ``h`` (``[z_h != z'_h] = 1 - <b_h, b'_h>``
    on one-hot blocks ``b_h``, exact for one-hot rows), ``H`` categorical parameters and the
    mixing weight ``w`` fixed (CoCaBO learns it; BoTorch's ``MixedSingleTaskGP`` is the same
    sum plus product with three learned scales). ``k(u, u) = 1`` on encodings, so ``s_f^2`` is
    the prior variance, as for the stationary kernels. Lengthscales: ``(C + H,)``, the
    continuous columns' then one per categorical parameter (:attr:`n_lengthscales`); a space
    with no continuous column is ``k_h`` alone, one without categories ``k_c`` alone.

    Attributes:
        base: ``"matern52"`` or ``"rbf"``.
        continuous: the continuous and integer columns, increasing ints.
        categorical: ``(first column, number of choices)`` of each one-hot block.
        weight: ``w`` in ``[0, 1]`` (default 1/2).

    Raises:
        ValueError: an unknown ``base``, a ``weight`` outside ``[0, 1]``, a block with fewer
            than one choice, or no column at all.
    """

    base: str = "matern52"
    continuous: tuple = ()
    categorical: tuple = ()
    weight: float = 0.5

    def __post_init__(self):
        if self.base not in STATIONARY_KERNELS:
            raise ValueError(f"base must be one of {STATIONARY_KERNELS}, got {self.base!r}")
        if not 0.0 <= float(self.weight) <= 1.0:
            raise ValueError(f"weight must be in [0, 1], got {self.weight!r}")
        if any(int(k) < 1 for _, k in self.categorical):
            raise ValueError(f"every categorical block needs at least one choice, got {self.categorical!r}")
        if not self.continuous and not self.categorical:
            raise ValueError("a MixedKernel needs a continuous column or a categorical block")

    @property
    def n_lengthscales(self) -> int:
        """``C + H``: one lengthscale per continuous column and per categorical parameter."""
        return len(self.continuous) + len(self.categorical)

    def correlation(self, a: Array, b: Array, lengthscale: Array) -> Array:
        """``k(a_i, b_j)`` (no ``s_f^2``) for ``a (n, D)``, ``b (m, D)`` and ``lengthscale
        (C + H,)`` -> ``(n, m)``."""
        C = len(self.continuous)
        k_c = k_h = None
        if C:
            cols = jnp.asarray(self.continuous)
            k_c = _CORRELATIONS[self.base](scaled_sq_distance(a[:, cols], b[:, cols], lengthscale[:C]))
        if self.categorical:
            differ = jnp.stack([1.0 - a[:, s:s + k] @ b[:, s:s + k].T for s, k in self.categorical], axis=-1)
            k_h = jnp.exp(-jnp.mean(differ / lengthscale[C:], axis=-1))
        if k_c is None or k_h is None:
            return k_h if k_c is None else k_c
        w = self.weight
        return (1.0 - w) * 0.5 * (k_c + k_h) + w * k_c * k_h

    def column_lengthscales(self, lengthscale: Array, unit_dim: int) -> Array:
        """``(D,)``: each unit-cube column's lengthscale from ``lengthscale (C + H,)`` (a
        one-hot block's columns share their parameter's), for what reads lengthscales per
        column (a trust region's shape)."""
        out = jnp.ones((unit_dim,), lengthscale.dtype)
        C = len(self.continuous)
        if C:
            out = out.at[jnp.asarray(self.continuous)].set(lengthscale[:C])
        for h, (s, k) in enumerate(self.categorical):
            out = out.at[s:s + k].set(lengthscale[C + h])
        return out


jax.tree_util.register_static(MixedKernel)

Kind = Union[str, NTKKernel, MixedKernel]


def n_lengthscales(kind: "Kind", d: int) -> int:
    """The length of ``GPParams.log_lengthscale`` for ``kind`` on ``d`` input columns: ``d``
    (the NTK ignores them), :attr:`MixedKernel.n_lengthscales` for a mixed kernel."""
    return kind.n_lengthscales if isinstance(kind, MixedKernel) else d


def _resolve(kind: Kind) -> Kind:
    """``kind`` checked: a stationary kernel's name, or an :class:`NTKKernel` (for ``"ntk"``).

    Raises:
        ValueError: unknown ``kind``."""
    if isinstance(kind, (NTKKernel, MixedKernel)):
        return kind
    if not isinstance(kind, str) or kind not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS} or an NTKKernel, got {kind!r}")
    return NTKKernel() if kind == "ntk" else kind


def scaled_sq_distance(a: Array, b: Array, lengthscale: Array) -> Array:
    """``r^2_ij = sum_k ((a_ik - b_jk) / l_k)^2`` for ``a (n, d)``, ``b (m, d)`` -> ``(n, m)``.

    Computed from differences (no ``|a|^2 + |b|^2 - 2 a.b`` cancellation), so ``r^2`` is
    exactly 0 for identical points."""
    diff = (a[:, None, :] - b[None, :, :]) / lengthscale
    return jnp.sum(diff * diff, axis=-1)


def matern52_from_sq(r2: Array) -> Array:
    """Matern-5/2 correlation ``(1 + sqrt5 r + 5/3 r^2) exp(-sqrt5 r)`` from ``r^2``
    (GPML eq. 4.17 with nu = 5/2). The gradient at ``r = 0`` is finite (0)."""
    tiny = jnp.finfo(r2.dtype).tiny
    r = jnp.sqrt(jnp.maximum(r2, tiny))
    r = jnp.where(r2 > tiny, r, 0.0)
    return (1.0 + _SQRT5 * r + (5.0 / 3.0) * r2) * jnp.exp(-_SQRT5 * r)


def rbf_from_sq(r2: Array) -> Array:
    """Squared-exponential correlation ``exp(-r^2 / 2)`` (GPML eq. 4.9)."""
    return jnp.exp(-0.5 * r2)


_CORRELATIONS = {"matern52": matern52_from_sq, "rbf": rbf_from_sq}


def kernel_matrix(kind: Kind, params: GPParams, a: Array, b: Array) -> Array:
    """Prior covariance ``s_f^2 k(a_i, b_j)``: ``a (n, d)``, ``b (m, d)`` -> ``(n, m)``
    (``kind``: a name in :data:`KERNELS` or an :class:`NTKKernel`).

    Raises:
        ValueError: unknown ``kind``.
    """
    kind = _resolve(kind)
    if isinstance(kind, NTKKernel):
        return params.outputscale * kind.correlation(a, b)
    if isinstance(kind, MixedKernel):
        return params.outputscale * kind.correlation(a, b, params.lengthscale)
    r2 = scaled_sq_distance(a, b, params.lengthscale)
    return params.outputscale * _CORRELATIONS[kind](r2)


def prior_variance(kind: Kind, params: GPParams, u: Array) -> Array:
    """The prior variance ``s_f^2 k(u_i, u_i)`` at ``u (N, d)``, ``(N,)``: ``s_f^2`` for the
    stationary kernels, :meth:`NTKKernel.diagonal` times ``s_f^2`` for the NTK.

    Raises:
        ValueError: unknown ``kind``.
    """
    kind = _resolve(kind)
    if isinstance(kind, NTKKernel):
        return params.outputscale * kind.diagonal(u)
    return jnp.broadcast_to(params.outputscale, u.shape[:1]).astype(u.dtype)


def gram(kind: Kind, params: GPParams, u: Array) -> Array:
    """``s_f^2 k(u_i, u_j)`` for ``u (N, d)`` -> ``(N, N)``: :func:`kernel_matrix` with its
    diagonal from :func:`prior_variance`. For the NTK this matters: neural-tangents forms the
    ReLU kernel's ``sin t`` as ``sqrt(q q' - Sigma^2)``, which cancels at identical points and
    leaves up to ``sqrt(eps)`` (``~1e-8`` in float64) relative error on the diagonal, varying
    with XLA's code generation (e.g. between a vmapped and a single program); the closed form
    is exact. Stationary kernels: the same matrix as :func:`kernel_matrix`."""
    K = kernel_matrix(kind, params, u, u)
    if isinstance(_resolve(kind), NTKKernel):
        K = jnp.where(jnp.eye(u.shape[0], dtype=bool), prior_variance(kind, params, u)[:, None], K)
    return K


def masked_gram(kind: Kind, params: GPParams, u: Array, mask: Array, jitter: float = 0.0) -> Array:
    """``K_m = (m m^T) * (K + (s_n^2 + jitter) I) + diag(1 - m)`` for ``u (cap, d)``,
    ``mask (cap,)`` -> ``(cap, cap)`` (see the module doc; ``K`` from :func:`gram`)."""
    m = mask.astype(u.dtype)
    K = gram(kind, params, u)
    diag = m * (params.noise + jitter) + (1.0 - m)
    return (m[:, None] * m[None, :]) * K + jnp.diag(diag)


# --------------------------------------------------------------------------- likelihood
def log_marginal_likelihood(
    kind: Kind, params: GPParams, u: Array, y: Array, mask: Array, jitter: float = 0.0
) -> Array:
    """Log marginal likelihood of the valid rows (GPML eq. 2.30, Algorithm 2.1), ``()``.

    Args:
        kind: a name in :data:`KERNELS` or an :class:`NTKKernel`. params: :class:`GPParams`
            (unstacked).
        u: ``(cap, d)`` inputs; y: ``(cap,)`` targets (invalid rows are ignored, whatever
            they hold); mask: ``(cap,)`` bool.
        jitter: added to the noise variance on the diagonal (0 for the exact value).

    Returns:
        ``log N(y_v; c, K_v + s_n^2 I)`` over the ``n_valid`` valid rows; exactly the
        valid-subset value (the dummy rows of the masking trick contribute nothing:
        their ``-1/2 log 2 pi`` terms are left out by using ``n_valid``). NaN when the
        Cholesky factorization fails (matrix not numerically positive definite).
    """
    m = mask.astype(u.dtype)
    ym = jnp.where(mask, y - params.constant, 0.0)
    L = jnp.linalg.cholesky(masked_gram(kind, params, u, mask, jitter))
    alpha = cho_solve_lower(L, ym)
    n_valid = jnp.sum(m)
    return -0.5 * jnp.dot(ym, alpha) - jnp.sum(jnp.log(jnp.diag(L))) - 0.5 * n_valid * _LOG_2PI


def map_objective(
    kind: Kind, params: GPParams, u: Array, y: Array, mask: Array, prior: GPPrior | None = None,
    jitter: float = 0.0,
) -> Array:
    """The objective :func:`fit` maximizes, ``()``: :func:`log_marginal_likelihood` plus
    :func:`log_prior` (BoTorch's ``fit_gpytorch_mll`` on ``ExactMarginalLogLikelihood``
    maximizes the same sum divided by ``n``; same maximizer). ``prior=None``: the LML. For the
    NTK kernel (no lengthscales) the lengthscale prior is left out, so the ignored lengthscales
    neither move in :func:`fit` nor change which start wins."""
    if prior is not None and isinstance(_resolve(kind), NTKKernel):
        prior = prior._replace(lengthscale=None)
    return log_marginal_likelihood(kind, params, u, y, mask, jitter) + log_prior(prior, params)


# --------------------------------------------------------------------------- posterior
class GPPosterior(NamedTuple):
    """A GP conditioned on masked data (a pytree; fixed shapes).

    Attributes:
        params: :class:`GPParams` used. u: ``(cap, d)`` inputs; mask: ``(cap,)`` bool.
        chol: ``(cap, cap)`` lower Cholesky factor of ``K_m`` (module doc).
        alpha: ``(cap,)`` ``K_m^{-1} (y - c)_m`` (0 on invalid rows).
    """

    params: GPParams
    u: Array
    mask: Array
    chol: Array
    alpha: Array


def condition(
    kind: Kind, params: GPParams, u: Array, y: Array, mask: Array, jitter: float = 0.0
) -> GPPosterior:
    """Condition the GP on the valid rows (GPML Algorithm 2.1, lines 2-3).

    Shapes as :func:`log_marginal_likelihood`. When the factorization fails (NaN) the
    jitter is raised to ``1e-4 s_f^2`` (float64: ``1e-6 s_f^2``) for this factor only,
    so a posterior never holds NaN.
    """
    K = masked_gram(kind, params, u, mask, jitter)
    L = jnp.linalg.cholesky(K)
    ok = jnp.all(jnp.isfinite(L))
    # the retry's input depends on the first factor, so the two factorizations never run
    # concurrently (see _serial_note)
    extra = jnp.where(ok, 0.0, (1e-6 if u.dtype == jnp.float64 else 1e-4) * params.outputscale)
    m = mask.astype(u.dtype)
    L = jax.lax.cond(ok, lambda: L, lambda: jnp.linalg.cholesky(K + jnp.diag(m * extra)))
    alpha = cho_solve_lower(L, jnp.where(mask, y - params.constant, 0.0))
    return GPPosterior(params, u, mask, L, alpha)


def append_rows(kind: Kind, post: GPPosterior, u: Array, y: Array, mask: Array, rows: Array,
                jitter: float = 0.0) -> GPPosterior:
    """``post`` conditioned on data that differ from its own only in the rows ``rows (n,)``
    (int), written since: each valid new row's kernel row appended to the Cholesky factor
    (:func:`nbo_jax.posterior.chol_append`, one triangular solve, ``O(cap^2)`` per row) with
    ``post``'s hyperparameters, and ``alpha`` solved for the new targets. Equal, up to
    rounding, to :func:`condition` with the same hyperparameters, at ``O(n cap^2)`` instead
    of ``O(cap^3)`` (Osborne 2010, "Bayesian Gaussian processes for sequential prediction,
    optimisation and quadrature", Section 2.6).

    Args:
        u: ``(cap, d)``, y: ``(cap,)``, mask: ``(cap,)`` bool: the whole new data (rows outside
            ``rows`` as ``post`` saw them; a row of ``rows`` outside ``mask`` or at or past
            ``cap`` leaves the factor unchanged).
        rows: ``(n,)`` int, in increasing order, every one after all valid rows of ``post``.
        jitter: as :func:`condition`.
    """
    p = post.params
    cap = u.shape[0]
    m = mask.astype(u.dtype)
    lam = p.noise + jitter

    def add(L, i):
        valid = (i < cap) & jnp.take(mask, i, mode="clip")
        u_i = jnp.take(u, i, axis=0, mode="clip")[None]
        k = m * kernel_matrix(kind, p, u, u_i)[:, 0]
        kxx = prior_variance(kind, p, u_i)[0]
        return chol_append(L, k, kxx, jnp.where(valid, i, cap), lam), None

    L, _ = jax.lax.scan(add, post.chol, rows)
    alpha = cho_solve_lower(L, jnp.where(mask, y - p.constant, 0.0))
    return GPPosterior(p, u, mask, L, alpha)


def posterior_lml(post: GPPosterior, y: Array) -> Array:
    """The log marginal likelihood from a conditioned posterior's factor, ``()``: equal to
    :func:`log_marginal_likelihood` with the same arguments (no new factorization)."""
    ym = jnp.where(post.mask, y - post.params.constant, 0.0)
    n_valid = jnp.sum(post.mask.astype(post.alpha.dtype))
    return -0.5 * jnp.dot(ym, post.alpha) - jnp.sum(jnp.log(jnp.diag(post.chol))) - 0.5 * n_valid * _LOG_2PI


def _cross(kind: Kind, post: GPPosterior, u_c: Array) -> Array:
    """Masked cross-covariance ``m * k(U, u_c)``, ``(cap, N)``."""
    Kxc = kernel_matrix(kind, post.params, post.u, u_c)
    return Kxc * post.mask.astype(u_c.dtype)[:, None]


def _mean_from_cross(post: GPPosterior, Kxc: Array) -> Array:
    """``c + k_*^T alpha`` (GPML eq. 2.25) from the cross-covariance ``Kxc (cap, N)``."""
    return post.params.constant + post.alpha @ Kxc


def predict_mean(kind: Kind, post: GPPosterior, u_c: Array) -> Array:
    """Posterior mean of the latent ``f`` at ``u_c (N, d)``, ``(N,)`` (GPML eq. 2.25), as
    :func:`predict` without the variance: cost ``O(N cap d)``."""
    return _mean_from_cross(post, _cross(kind, post, u_c))


def predict(kind: Kind, post: GPPosterior, u_c: Array) -> tuple[Array, Array]:
    """Posterior mean and variance of the latent ``f`` at ``u_c (N, d)`` (GPML eqs.
    2.25-2.26 via Algorithm 2.1, lines 4-6): ``(mean (N,), var (N,))``, ``var >= 0``.

    Cost ``O(N cap^2)``; only the diagonal is formed (``var = s_f^2 k(u, u) - ||L^{-1}
    k_*||^2``, ``s_f^2 k(u, u)`` from :func:`prior_variance`: ``s_f^2`` but for the NTK).
    """
    Kxc = _cross(kind, post, u_c)
    mean = _mean_from_cross(post, Kxc)
    V = solve_lower(post.chol, Kxc)
    var = prior_variance(kind, post.params, u_c) - jnp.sum(V * V, axis=0)
    return mean, jnp.maximum(var, 0.0)


def joint_covariance(kind: Kind, post: GPPosterior, u_c: Array) -> Array:
    """Posterior covariance of the latent ``f`` at ``u_c (N, d)``, ``(N, N)`` (GPML eq. 2.24),
    symmetrized. Forms an ``N x N`` matrix: for joint (Thompson) draws only."""
    Kxc = _cross(kind, post, u_c)
    V = solve_lower(post.chol, Kxc)
    C = gram(kind, post.params, u_c) - V.T @ V
    return 0.5 * (C + C.T)


def sample_joint(kind: Kind, post: GPPosterior, u_c: Array, key: Array, jitter: float | None = None) -> Array:
    """One joint draw of the latent ``f`` at ``u_c (N, d)`` from the posterior, ``(N,)``.

    ``f = mean + chol(C + jitter s_f^2 I) eps`` (Chowdhury & Gopalan 2017, GP-TS, on a
    finite candidate set), ``C`` from :func:`joint_covariance`. ``jitter`` defaults to
    ``1e-6`` (float32: ``1e-4``), relative to the outputscale. When that Cholesky fails
    (in float32 it does for smooth posteriors with a tiny noise variance: ``C`` is then
    numerically indefinite), the draw is ``mean + Q sqrt(max(w, 0)) eps`` from the
    eigendecomposition ``C = Q diag(w) Q^T`` (exact covariance, negative round-off
    eigenvalues clipped, no jitter); under ``vmap`` both branches run. Never NaN: as a last
    resort the draw is ``mean + std eps`` (independent marginals).
    """
    Kxc = _cross(kind, post, u_c)
    mean = post.params.constant + post.alpha @ Kxc
    V = solve_lower(post.chol, Kxc)
    C = gram(kind, post.params, u_c) - V.T @ V
    C = 0.5 * (C + C.T)
    if jitter is None:
        jitter = 1e-6 if u_c.dtype == jnp.float64 else 1e-4
    eps = jax.random.normal(key, mean.shape, mean.dtype)
    eye = jnp.eye(C.shape[0], dtype=C.dtype)
    Lc = jnp.linalg.cholesky(C + jitter * post.params.outputscale * eye)
    ok = jnp.all(jnp.isfinite(Lc))

    def via_eigh():
        # input depends on the Cholesky outcome: the two never run concurrently (_serial_note)
        w, Q = jnp.linalg.eigh(jnp.where(ok, eye, C))
        return Q @ (jnp.sqrt(jnp.maximum(w, 0.0)) * eps)

    joint = mean + jax.lax.cond(ok, lambda: Lc @ eps, via_eigh)
    std = jnp.sqrt(jnp.maximum(jnp.diag(C), 0.0))
    return jnp.where(jnp.all(jnp.isfinite(joint)), joint, mean + std * eps)


# _serial_note: why the fallback factorizations above take inputs that depend on the
# first factorization. jaxlib 0.10's CPU LAPACK kernels split a batched call (what vmap
# makes of them) over the intra-op thread pool and block until the pieces finish
# (ParallelBatchMap). Two such calls that are independent in the graph can start at the
# same time, each holding a pool thread while waiting for work queued behind the other; on
# a 2-core machine the run then deadlocks (observed: a vmapped run_bo of GP-TS hung with
# every thread idle, gdb showing CholeskyFactorizationKernel and
# EigenvalueDecompositionSymmetricKernel both waiting in ParallelBatchMap). Chaining the
# inputs serializes them.


# --------------------------------------------------------------------------- fitting
def default_params(d: int, bounds: ParamBounds = ParamBounds(), dtype=None) -> GPParams:
    """A neutral starting point: lengthscales ``0.2 sqrt(d)``, outputscale 1, noise 1e-2
    (each clipped to ``bounds``). Library decision (the papers are silent)."""
    dtype = dtype or jnp.zeros(()).dtype
    p = GPParams(
        jnp.full((d,), math.log(0.2 * math.sqrt(d)), dtype),
        jnp.zeros((), dtype),
        jnp.asarray(math.log(1e-2), dtype),
        jnp.zeros((), dtype),
    )
    return bounds.clip(p)


def random_params(key: Array, n: int, d: int, bounds: ParamBounds = ParamBounds(), dtype=None) -> GPParams:
    """``n`` random starting points, stacked (leading axis ``n``), log-uniform in
    lengthscale ``[0.05, 1] sqrt(d)``, outputscale ``[0.3, 3]``, noise ``[1e-4, 1e-1]``,
    constant mean 0, then clipped to ``bounds``. Library decision."""
    dtype = dtype or jnp.zeros(()).dtype
    k1, k2, k3 = jax.random.split(key, 3)
    s = 0.5 * math.log(d)

    def lu(k, shape, lo, hi):
        return jax.random.uniform(k, shape, dtype, math.log(lo), math.log(hi))

    p = GPParams(lu(k1, (n, d), 0.05, 1.0) + s, lu(k2, (n,), 0.3, 3.0), lu(k3, (n,), 1e-4, 1e-1),
                 jnp.zeros((n,), dtype))
    return bounds.clip(p)


FIT_OPTIMIZERS = ("lbfgs", "adam")


def _log_box(bounds: ParamBounds, like: GPParams, learn_constant: bool) -> tuple[GPParams, GPParams]:
    """Lower and upper limits of the fitted parameters (logs; the constant unbounded, or
    fixed at its value when not learned), shaped like ``like``."""
    lg = math.log
    lo = GPParams(*(jnp.full(jnp.shape(a), lg(b[0]), a.dtype) for a, b in zip(like[:3], bounds)),
                  jnp.full(jnp.shape(like.constant), -jnp.inf, like.log_noise.dtype))
    hi = GPParams(*(jnp.full(jnp.shape(a), lg(b[1]), a.dtype) for a, b in zip(like[:3], bounds)),
                  jnp.full(jnp.shape(like.constant), jnp.inf, like.log_noise.dtype))
    if not learn_constant:
        lo, hi = lo._replace(constant=like.constant), hi._replace(constant=like.constant)
    return lo, hi


def fit(
    kind: Kind,
    starts: GPParams,
    u: Array,
    y: Array,
    mask: Array,
    *,
    steps: int = 100,
    learning_rate: float = 0.05,
    bounds: ParamBounds = ParamBounds(),
    jitter: float = 0.0,
    prior: GPPrior | None = None,
    optimizer: str = "adam",
    learn_constant: bool = False,
) -> tuple[GPParams, Array]:
    """Maximum marginal likelihood (type-II ML; GPML section 5.4.1) or, with ``prior``,
    maximum a posteriori (:func:`map_objective`), from ``R`` starts.

    ``optimizer="lbfgs"``: box-constrained L-BFGS (:func:`nbo_jax.lbfgsb.minimize_lbfgsb`;
    BoTorch fits with scipy's L-BFGS-B) on the log parameters inside ``bounds`` (a parameter
    with ``low == high`` stays fixed), until scipy's tolerances or ``steps`` iterations;
    ``learning_rate`` is unused. ``optimizer="adam"``: ``steps`` Adam steps (``learning_rate``)
    on the log parameters, each projected onto ``bounds``, keeping the best iterate. All
    ``R`` starts run as one batched computation (one batched Cholesky per evaluation). An
    iterate whose objective or gradient is not finite (failed Cholesky) is never taken, so
    the result is never worse than the best start.

    Args:
        kind: a name in :data:`KERNELS` or an :class:`NTKKernel`.
        starts: stacked :class:`GPParams`, leading axis ``R >= 1``.
        u: ``(cap, d)``; y: ``(cap,)``; mask: ``(cap,)`` bool (see
            :func:`log_marginal_likelihood`).
        steps: iterations (the most, for L-BFGS; 0 only evaluates the starts).
        prior: :class:`GPPrior` (``None``: maximum likelihood).
        optimizer: one of :data:`FIT_OPTIMIZERS`.
        learn_constant: fit the constant mean too (else it keeps the starts' values).

    Returns:
        ``(params, value)``: the best :class:`GPParams` (unstacked) and its objective ``()``
        (the LML, plus the log prior when ``prior`` is given). With no valid row the LML
        terms are 0.

    Raises:
        ValueError: unknown ``optimizer``.
    """
    if optimizer not in FIT_OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {FIT_OPTIMIZERS}, got {optimizer!r}")
    starts = bounds.clip(starts)
    starts = starts._replace(constant=jnp.broadcast_to(jnp.asarray(starts.constant, y.dtype),
                                                       starts.log_noise.shape))
    objective = lambda p: map_objective(kind, p, u, y, mask, prior, jitter)
    batch_objective = jax.vmap(objective)
    ninf = jnp.asarray(-jnp.inf, y.dtype)

    if optimizer == "lbfgs":
        first = jax.tree.map(lambda a: a[0], starts)
        _, unravel = ravel_pytree(first)
        lo, hi = (ravel_pytree(t)[0] for t in _log_box(bounds, first, learn_constant))
        if not learn_constant:  # each start keeps its own constant: fix it per row
            const = starts.constant
            idx = jnp.arange(lo.shape[0]) == lo.shape[0] - 1  # the constant is the last leaf
            lo = jnp.where(idx, const[:, None], lo)
            hi = jnp.where(idx, const[:, None], hi)
        X0 = jax.vmap(lambda p: ravel_pytree(p)[0])(starts)
        res = minimize_lbfgsb(lambda X: -batch_objective(jax.vmap(unravel)(X)), X0, lo, hi, max_iter=steps)
        params, values = jax.vmap(unravel)(res.x), jnp.where(jnp.isfinite(res.value), -res.value, ninf)
    else:
        opt = optax.adam(learning_rate)
        value_and_grad = jax.value_and_grad(lambda P: -jnp.sum(batch_objective(P)))

        def keep_best(p, v, best_p, best_v):
            v = jnp.where(jnp.isfinite(v), v, ninf)
            better = v > best_v
            pick = lambda a, b: jnp.where(better.reshape(better.shape + (1,) * (a.ndim - 1)), a, b)
            return jax.tree.map(pick, p, best_p), jnp.where(better, v, best_v)

        def step(carry, _):
            P, s, best_p, best_v = carry
            values = batch_objective(P)
            _, g = value_and_grad(P)
            ok = jnp.isfinite(values) & jnp.all(jnp.stack([jnp.all(jnp.isfinite(a.reshape(a.shape[0], -1)), axis=1)
                                                           for a in g]), axis=0)
            best_p, best_v = keep_best(P, jnp.where(ok, values, ninf), best_p, best_v)
            okb = lambda a: ok.reshape(ok.shape + (1,) * (a.ndim - 1))
            g = jax.tree.map(lambda a: jnp.where(okb(a), a, 0.0), g)
            if not learn_constant:
                g = g._replace(constant=jnp.zeros_like(g.constant))
            upd, s_new = opt.update(g, s, P)
            P_new = bounds.clip(optax.apply_updates(P, upd))
            P = jax.tree.map(lambda a, b: jnp.where(okb(a), a, b), P_new, P)
            s = jax.tree.map(lambda a, b: jnp.where(okb(a), a, b) if a.ndim else a, s_new, s)
            return (P, s, best_p, best_v), None

        R = starts.log_noise.shape[0]
        init = (starts, opt.init(starts), starts, jnp.full((R,), ninf))
        (P, _, best_p, best_v), _ = jax.lax.scan(step, init, None, length=steps)
        params, values = keep_best(P, batch_objective(P), best_p, best_v)
    i = jnp.argmax(values)
    return jax.tree.map(lambda a: a[i], params), values[i]


__all__ = [
    "KERNELS",
    "STATIONARY_KERNELS",
    "NTK_ACTIVATIONS",
    "NTKKernel",
    "MixedKernel",
    "n_lengthscales",
    "prior_variance",
    "GPParams",
    "ParamBounds",
    "GPPosterior",
    "scaled_sq_distance",
    "matern52_from_sq",
    "rbf_from_sq",
    "kernel_matrix",
    "gram",
    "masked_gram",
    "log_marginal_likelihood",
    "condition",
    "append_rows",
    "posterior_lml",
    "predict",
    "joint_covariance",
    "sample_joint",
    "default_params",
    "random_params",
    "fit",
    "FIT_OPTIMIZERS",
    "GPPrior",
    "botorch_prior",
    "lognormal_log_density",
    "log_prior",
    "prior_mode",
    "map_objective",
]
