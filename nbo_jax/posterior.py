"""Linear-Gaussian posterior in gradient-feature space (Phan-Trong et al. 2023, Algorithm 1,
lines 1, 3, 7).

With features ``g`` (length ``p``), regularization ``lam`` and scale ``m``:

    U_t = lam * I + sum_{s<=t} g_s g_s^T / m                       (p x p)
    sigma_t^2(x) = lam * g(x)^T U_t^{-1} g(x) / m

Three modes share one interface (``init``/``update``/``variance``), chosen by name:

- ``"full"``: ``A = U^{-1}`` kept by Sherman-Morrison rank-one updates
  ``A <- A - (A g)(A g)^T / (m + g^T A g)`` (exact; O(p^2) memory and update,
  O(N p^2) for N variances). ``A`` is re-symmetrized after every update (float32 drift).
- ``"diagonal"``: ``U`` kept as its diagonal (NeuralUCB/NeuralTS practice). An
  **approximation**, not the exact posterior. O(p) memory, O(N p) for N variances.
- ``"dual"``: the same exact posterior through the Gram matrix
  ``K = G G^T / m + lam I`` (``cap x cap``), Cholesky factor appended one row per update.
  ``sigma^2(x) = k(x, x) - k_x^T K^{-1} k_x`` with ``k(x, x') = g(x)^T g(x') / m`` (Woodbury).
  O(cap p) memory, O(N cap p + N cap^2) for N variances: the only exact mode when ``p`` is
  large (m = 500, d = 100 gives p = 50,500 and a 10 GB ``U``).

**Pathwise (joint) samples.** The model is Bayesian linear regression on the features:
``f(x) = g(x)^T w / sqrt(m)`` with prior ``w ~ N(0, I)`` and noise variance ``lam``, so
``sigma^2(x)`` above is its posterior variance and ``w``'s posterior covariance is
``lam U^{-1}``. :func:`sample_weights` draws ``delta ~ N(0, lam U^{-1})`` once; then
``x -> g(x)^T delta / sqrt(m)`` is one joint sample of the whole function (zero mean), a
differentiable function of ``x`` whose marginal variance is ``sigma^2(x)`` (Wilson et al.
2020, "Efficiently sampling functions from Gaussian process posteriors", eq. 5, Matheron's
rule, in ``dual``).

**Scales from the data.** The same model with an output scale ``s^2`` is a GP with kernel
``s^2 g(x)^T g(x') / m`` (the empirical NTK) and noise ``s^2 lam``;
:func:`fit_scales` maximizes its marginal likelihood over ``(lam, s^2)`` in dual form
(:func:`log_marginal_likelihood`).

Rows added with ``valid=False`` (NaN/inf observations) leave the posterior unchanged.
Never materializes an ``N x N`` matrix for ``N`` candidate variances (DESIGN.md).
"""

from __future__ import annotations

import math
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
from jax.scipy.linalg import solve_triangular

Array = jax.Array

MODES = ("full", "diagonal", "dual")


class FullState(NamedTuple):
    """``A = U^{-1}``: ``(p, p)``, and the features ``G (cap, p)`` (zero rows unused or
    invalid; kept for pathwise samples, :func:`sample_weights`)."""

    A: Array
    G: Array


class DiagonalState(NamedTuple):
    """Diagonal of ``U``: ``(p,)``."""

    U: Array


class DualState(NamedTuple):
    """Features ``G (cap, p)`` (zero rows unused/invalid) and ``L (cap, cap)``, the lower
    Cholesky factor of ``K = G G^T / m + lam I``."""

    G: Array
    L: Array


PosteriorState = FullState | DiagonalState | DualState


def choose_mode(num_params: int, capacity: int, *, max_full_bytes: float = 2e9) -> str:
    """The ``"auto"`` rule: the exact mode with the cheaper variance computation.

    ``full`` costs ``N p^2`` per ask and ``4 p^2`` bytes; ``dual`` costs ``N cap (p + cap)``.
    Returns ``"dual"`` when ``cap * (p + cap) < p^2`` or when ``U`` would exceed
    ``max_full_bytes`` (float32), else ``"full"``.
    """
    p, c = num_params, capacity
    if c * (p + c) < p * p or 4.0 * p * p > max_full_bytes:
        return "dual"
    return "full"


def solve_lower(L: Array, b: Array) -> Array:
    """``L^{-1} b`` for a lower-triangular ``L (n, n)`` and ``b (n,)`` or ``(n, k)``: the
    solve of ``solve_triangular(L, b, lower=True)``, handed to LAPACK as the upper factor
    ``L^T`` transposed. XLA stores arrays row-major and LAPACK reads them column-major, so
    ``L`` itself is copied into column-major order before every solve, while ``L^T`` needs
    no copy (at ``n = 2010``, float32, one vector: 6.3 ms -> 1.1 ms on a 2-core CPU, the
    same result)."""
    return solve_triangular(jnp.swapaxes(L, -1, -2), b, lower=False, trans=1)


def cho_solve_lower(L: Array, b: Array) -> Array:
    """``(L L^T)^{-1} b`` from the lower Cholesky factor ``L (n, n)``, ``b (n,)`` or ``(n,
    k)``: ``jax.scipy.linalg.cho_solve((L, True), b)`` with both triangular solves reading
    ``L`` without a column-major copy (:func:`solve_lower`)."""
    return solve_triangular(jnp.swapaxes(L, -1, -2), solve_lower(L, b), lower=False)


def init(mode: str, num_params: int, capacity: int, lam: float, dtype=None) -> PosteriorState:
    """Prior state ``U_0 = lam I`` (Phan-Trong et al. 2023, Algorithm 1, line 1).

    Raises:
        ValueError: unknown ``mode`` or ``lam <= 0``.
    """
    dtype = dtype or jnp.zeros(()).dtype
    if mode not in MODES:
        raise ValueError(f"posterior mode must be one of {MODES} (or 'auto'), got {mode!r}")
    if not lam > 0:
        raise ValueError(f"lam must be > 0, got {lam}")
    p = num_params
    if mode == "full":
        return FullState(jnp.eye(p, dtype=dtype) / lam, jnp.zeros((capacity, p), dtype))
    if mode == "diagonal":
        return DiagonalState(jnp.full((p,), lam, dtype))
    return DualState(
        jnp.zeros((capacity, p), dtype), jnp.sqrt(jnp.asarray(lam, dtype)) * jnp.eye(capacity, dtype=dtype)
    )


def update(state: PosteriorState, g: Array, index: Array, valid: Array, lam, m) -> PosteriorState:
    """``U <- U + g g^T / m`` (Phan-Trong et al. 2023, Algorithm 1, line 7) for one feature ``g (p,)``.

    ``index`` is the row of the observation (used by ``dual``); ``valid=False`` leaves the
    posterior unchanged. Traced-friendly (no Python branching on values).
    """
    g = jnp.where(valid, g, 0.0).astype(_dtype(state))
    if isinstance(state, FullState):
        A = state.A
        Ag = A @ g
        A = A - jnp.outer(Ag, Ag) / (m + g @ Ag)
        return FullState(0.5 * (A + A.T), state.G.at[index].set(g, mode="drop"))
    if isinstance(state, DiagonalState):
        return DiagonalState(state.U + g * g / m)
    G, L = state.G, state.L
    L = chol_append(L, G @ g / m, g @ g / m, index, lam)
    return DualState(G.at[index].set(g, mode="drop"), L)


def chol_append(L: Array, k: Array, kxx: Array, index: Array, lam) -> Array:
    """Append row ``index`` to the lower Cholesky factor ``L (cap, cap)`` of
    ``K + lam I`` (rows ``>= index`` of ``L`` are still the identity times ``sqrt(lam)``).

    Args:
        k: ``(cap,)`` kernel values of the new point against the rows (entries at
            ``>= index`` are ignored). kxx: ``()`` its kernel value with itself.
        index: ``()`` int, the row to write; writes past the capacity are dropped.

    A masked (invalid) observation passes ``k = 0`` and ``kxx = 0``: its row becomes
    ``sqrt(lam) e_index``, which leaves every posterior unchanged. O(cap^2).
    """
    cap = L.shape[0]
    k = jnp.where(jnp.arange(cap) < index, k, 0.0)
    ell = solve_lower(L, k)  # zero from `index` on
    diag = kxx + lam - ell @ ell
    tiny = jnp.asarray(lam, L.dtype) * 1e-6
    row = ell.at[index].set(jnp.sqrt(jnp.maximum(diag, tiny)), mode="drop")
    return L.at[index].set(row, mode="drop")


def chol_variance(L: Array, k_cross: Array, kxx: Array) -> Array:
    """Posterior variance ``k(x, x) - k_x^T (K + lam I)^{-1} k_x`` from the factor ``L`` of
    ``K + lam I`` (:func:`chol_append`): ``k_cross (cap, N)``, ``kxx (N,)`` -> ``(N,)``,
    clipped at 0. O(N cap^2)."""
    v = solve_lower(L, k_cross)
    return jnp.maximum(kxx - jnp.sum(v * v, axis=0), 0.0)


def variance(state: PosteriorState, G_c: Array, lam, m) -> Array:
    """``sigma^2(x) = lam g^T U^{-1} g / m`` for candidate features ``G_c (N, p)`` -> ``(N,)``.

    Clipped at 0 (float32 round-off in ``dual`` can go slightly negative).
    """
    G_c = G_c.astype(_dtype(state))
    if isinstance(state, FullState):
        s2 = lam * jnp.sum((G_c @ state.A) * G_c, axis=1) / m
    elif isinstance(state, DiagonalState):
        s2 = lam * jnp.sum(G_c * G_c / state.U, axis=1) / m
    else:
        s2 = chol_variance(state.L, state.G @ G_c.T / m, jnp.sum(G_c * G_c, axis=1) / m)
    return jnp.maximum(s2, 0.0)


def feature_gram(G: Array, mask: Array, m) -> Array:
    """``G_m G_m^T / m`` with the invalid rows of ``G (cap, p)`` zeroed, ``(cap, cap)``: the
    empirical-NTK Gram matrix of the valid rows (zero rows and columns elsewhere). O(cap^2 p)."""
    Gm = jnp.where(mask[:, None], G, 0.0)
    return Gm @ Gm.T / m


def rebuild(state: PosteriorState, G: Array, mask: Array, lam, m, *, gram: Optional[Array] = None) -> PosteriorState:
    """The state from scratch for features ``G (cap, p)`` with validity ``mask (cap,)``:
    a direct solve (``full``: ``inv(U)``; ``dual``: Cholesky of ``K``). Used to refresh
    float32 drift, to change ``lam`` (``dual``), and as the reference in tests.

    ``gram``: ``dual`` only, :func:`feature_gram` of ``G`` and ``mask`` when the caller has it
    already (it is then not recomputed)."""
    G = jnp.where(mask[:, None], G, 0.0).astype(_dtype(state))
    p = G.shape[1]
    if isinstance(state, FullState):
        U = lam * jnp.eye(p, dtype=G.dtype) + G.T @ G / m
        A = jnp.linalg.inv(U)
        return FullState(0.5 * (A + A.T), G)
    if isinstance(state, DiagonalState):
        return DiagonalState(lam + jnp.sum(G * G, axis=0) / m)
    K0 = feature_gram(G, mask, m) if gram is None else gram.astype(G.dtype)
    return DualState(G, jnp.linalg.cholesky(K0 + lam * jnp.eye(G.shape[0], dtype=G.dtype)))


def sample_weights(state: PosteriorState, key: Array, lam, m) -> Array:
    """One draw ``delta ~ N(0, lam U^{-1})``, ``(p,)``: ``g(x)^T delta / sqrt(m)`` is a joint
    posterior sample of the zero-mean function, with variance ``sigma^2(x)`` at every ``x``.

    - ``full``: ``delta = sqrt(lam) A (sqrt(lam) e1 + G^T e2 / sqrt(m))`` with ``e1 ~ N(0, I_p)``,
      ``e2 ~ N(0, I_cap)``: ``sqrt(lam) e1 + G^T e2 / sqrt(m) ~ N(0, U)``, so
      ``Cov(delta) = lam A U A = lam A``. O(p^2 + cap p).
    - ``dual`` (Matheron's rule; Wilson et al. 2020, eq. 5): ``delta = w0 - G^T K^{-1}
      (G w0 / sqrt(m) + sqrt(lam) e2) / sqrt(m)`` with ``w0 ~ N(0, I_p)`` (prior draw) and
      ``K = G G^T / m + lam I`` (its factor ``L``). Nothing ``p x p``; O(cap p + cap^2).
    - ``diagonal``: ``delta = sqrt(lam / U) e1`` (the diagonal approximation's posterior).

    Args:
        state: a posterior state. key: PRNG key. lam: the noise/regularization ``lam`` the
            state was built with (``dual`` reads it from ``L``; used by ``full``/``diagonal``
            and for the noise draw). m: the feature scale ``m``.

    Returns:
        ``(p,)`` array, the state's dtype.
    """
    dtype = _dtype(state)
    k1, k2 = jax.random.split(key)
    if isinstance(state, DiagonalState):
        p = state.U.shape[0]
        return jnp.sqrt(lam / state.U) * jax.random.normal(k1, (p,), dtype)
    G = state.G
    cap, p = G.shape
    e1 = jax.random.normal(k1, (p,), dtype)
    e2 = jax.random.normal(k2, (cap,), dtype)
    sm, sl = jnp.sqrt(jnp.asarray(m, dtype)), jnp.sqrt(jnp.asarray(lam, dtype))
    if isinstance(state, FullState):
        return sl * (state.A @ (sl * e1 + (e2 @ G) / sm))
    b = G @ e1 / sm + sl * e2
    a = cho_solve_lower(state.L, b)
    return e1 - (a @ G) / sm  # a @ G, not G.T @ a: XLA transposes G (cap x p) for the latter


def log_marginal_likelihood(G: Array, mask: Array, r: Array, lam, scale2, m) -> Array:
    """``log N(r_v; 0, scale2 (G_v G_v^T / m + lam I))`` over the valid rows, ``()``: the
    marginal likelihood of the linearized network as a GP with the empirical NTK kernel
    ``scale2 g^T g' / m`` and noise variance ``scale2 lam`` (a direct Cholesky; reference for
    :func:`fit_scales`).

    Args:
        G: ``(cap, p)`` features; mask: ``(cap,)`` bool; r: ``(cap,)`` targets (invalid rows
            ignored); lam, scale2: ``> 0``; m: the feature scale.
    """
    msk = mask.astype(G.dtype)
    rm = jnp.where(mask, r, 0.0)
    K = scale2 * (feature_gram(G, mask, m) + lam * jnp.diag(msk)) + jnp.diag(1.0 - msk)
    L = jnp.linalg.cholesky(K)
    v = solve_lower(L, rm)
    n = jnp.sum(msk)
    return -0.5 * v @ v - jnp.sum(jnp.log(jnp.diag(L))) - 0.5 * n * jnp.log(2.0 * jnp.pi)


def fit_scales(G: Array, mask: Array, r: Array, m, *, lam_range=(1e-4, 10.0), scale2_range=(1e-2, 1e2),
               n_grid: int = 64, gram: Optional[Array] = None) -> tuple[Array, Array, Array]:
    """Type-II maximum likelihood of ``(lam, scale2)`` for :func:`log_marginal_likelihood`
    (the empirical-NTK GP in dual form).

    One eigendecomposition ``G_v G_v^T / m = Q diag(e) Q^T`` (``cap x cap``) makes the
    likelihood of every ``(lam, scale2)`` cost O(cap): with ``c = Q^T r``,
    ``log p = -1/2 sum_i [c_i^2 / (scale2 (e_i + lam)) + log(scale2 (e_i + lam))] - n/2 log 2 pi``
    over the valid rows. For fixed ``lam`` the best ``scale2`` is ``sum_i c_i^2 / (e_i + lam) / n``
    (then clipped to ``scale2_range``); ``lam`` is the best of ``n_grid`` log-spaced values in
    ``lam_range``. Exact on the grid, no iterative optimizer.

    Args:
        G: ``(cap, p)``; mask: ``(cap,)`` bool; r: ``(cap,)`` targets; m: feature scale.
        gram: :func:`feature_gram` of ``G`` and ``mask`` when the caller has it already.

    Returns:
        ``(lam, scale2, lml)``, each ``()``. With no valid row: ``lam_range``'s geometric
        mean, ``scale2 = 1`` (clipped), lml 0.
    """
    msk = mask.astype(G.dtype)
    K0 = feature_gram(G, mask, m) if gram is None else gram
    e, Q = jnp.linalg.eigh(0.5 * (K0 + K0.T))
    e = jnp.maximum(e, 0.0)
    c2 = (jnp.where(mask, r, 0.0) @ Q) ** 2
    n = jnp.sum(msk)
    n_masked = msk.shape[0] - n
    lams = jnp.exp(jnp.linspace(jnp.log(lam_range[0]), jnp.log(lam_range[1]), n_grid)).astype(G.dtype)

    def lml_at(lam):
        quad = jnp.sum(c2 / (e + lam))
        # masked coordinates are a separate block with eigenvalue lam: remove their log det
        logdet = jnp.sum(jnp.log(e + lam)) - n_masked * jnp.log(lam)
        s2 = jnp.clip(quad / jnp.maximum(n, 1.0), scale2_range[0], scale2_range[1])
        val = -0.5 * (quad / s2 + n * jnp.log(s2) + logdet + n * jnp.log(2.0 * jnp.pi))
        return val, s2

    vals, s2s = jax.vmap(lml_at)(lams)
    vals = jnp.where(jnp.isfinite(vals), vals, -jnp.inf)
    i = jnp.argmax(vals)
    empty = n < 1
    lam0 = jnp.asarray(math.sqrt(lam_range[0] * lam_range[1]), G.dtype)
    s20 = jnp.asarray(min(max(1.0, scale2_range[0]), scale2_range[1]), G.dtype)
    return (jnp.where(empty, lam0, lams[i]), jnp.where(empty, s20, s2s[i]),
            jnp.where(empty, 0.0, vals[i]))


def fit_output_scale(state: DualState, mask: Array, r: Array, *, scale2_range=(1e-2, 1e2)) -> Array:
    """The ``scale2`` that maximizes :func:`log_marginal_likelihood` for the ``lam`` already
    in the factor of ``state`` (a ``DualState``): ``r_v^T (K0 + lam I)^{-1} r_v / n`` over the
    ``n`` valid rows, clipped to ``scale2_range`` (1 when no row is valid, clipped), ``()``.
    The value :func:`fit_scales` returns at that ``lam``, in ``O(cap^2)`` (two triangular
    solves' worth) instead of an eigendecomposition: used between refits of ``lam``."""
    v = solve_lower(state.L, jnp.where(mask, r, 0.0).astype(state.L.dtype))
    n = jnp.sum(mask.astype(v.dtype))
    s2 = jnp.clip(v @ v / jnp.maximum(n, 1.0), scale2_range[0], scale2_range[1])
    return jnp.where(n < 1, min(max(1.0, scale2_range[0]), scale2_range[1]), s2)


def _dtype(state: PosteriorState):
    return jax.tree_util.tree_leaves(state)[0].dtype


def direct_variance(G: Array, mask: Array, G_c: Array, lam, m) -> Array:
    """Reference: ``lam g^T U^{-1} g / m`` by forming ``U`` and solving (tests only; O(p^3))."""
    G = jnp.where(mask[:, None], G, 0.0)
    U = lam * jnp.eye(G.shape[1], dtype=G.dtype) + G.T @ G / m
    return lam * jnp.sum(G_c * jnp.linalg.solve(U, G_c.T).T, axis=1) / m


__all__ = [
    "MODES",
    "FullState",
    "DiagonalState",
    "DualState",
    "choose_mode",
    "init",
    "update",
    "variance",
    "rebuild",
    "direct_variance",
    "chol_append",
    "chol_variance",
    "sample_weights",
    "log_marginal_likelihood",
    "fit_scales",
    "fit_output_scale",
    "feature_gram",
]
