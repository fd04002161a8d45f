"""Linear-Gaussian posterior in gradient-feature space (seed 000, Algorithm 1, lines 1, 3, 7).

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

Rows added with ``valid=False`` (NaN/inf observations) leave the posterior unchanged.
Never materializes an ``N x N`` matrix for ``N`` candidate variances (DESIGN.md).
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
from jax.scipy.linalg import solve_triangular

Array = jax.Array

MODES = ("full", "diagonal", "dual")


class FullState(NamedTuple):
    """``A = U^{-1}``: ``(p, p)``."""

    A: Array


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


def init(mode: str, num_params: int, capacity: int, lam: float, dtype=None) -> PosteriorState:
    """Prior state ``U_0 = lam I`` (seed 000, Algorithm 1, line 1).

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
        return FullState(jnp.eye(p, dtype=dtype) / lam)
    if mode == "diagonal":
        return DiagonalState(jnp.full((p,), lam, dtype))
    return DualState(
        jnp.zeros((capacity, p), dtype), jnp.sqrt(jnp.asarray(lam, dtype)) * jnp.eye(capacity, dtype=dtype)
    )


def update(state: PosteriorState, g: Array, index: Array, valid: Array, lam, m) -> PosteriorState:
    """``U <- U + g g^T / m`` (seed 000, Algorithm 1, line 7) for one feature ``g (p,)``.

    ``index`` is the row of the observation (used by ``dual``); ``valid=False`` leaves the
    posterior unchanged. Traced-friendly (no Python branching on values).
    """
    g = jnp.where(valid, g, 0.0).astype(_dtype(state))
    if isinstance(state, FullState):
        A = state.A
        Ag = A @ g
        A = A - jnp.outer(Ag, Ag) / (m + g @ Ag)
        return FullState(0.5 * (A + A.T))
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
    ell = solve_triangular(L, k, lower=True)  # zero from `index` on
    diag = kxx + lam - ell @ ell
    tiny = jnp.asarray(lam, L.dtype) * 1e-6
    row = ell.at[index].set(jnp.sqrt(jnp.maximum(diag, tiny)), mode="drop")
    return L.at[index].set(row, mode="drop")


def chol_variance(L: Array, k_cross: Array, kxx: Array) -> Array:
    """Posterior variance ``k(x, x) - k_x^T (K + lam I)^{-1} k_x`` from the factor ``L`` of
    ``K + lam I`` (:func:`chol_append`): ``k_cross (cap, N)``, ``kxx (N,)`` -> ``(N,)``,
    clipped at 0. O(N cap^2)."""
    v = solve_triangular(L, k_cross, lower=True)
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


def rebuild(state: PosteriorState, G: Array, mask: Array, lam, m) -> PosteriorState:
    """The state from scratch for features ``G (cap, p)`` with validity ``mask (cap,)``:
    a direct solve (``full``: ``inv(U)``; ``dual``: Cholesky of ``K``). Used to refresh
    float32 drift and as the reference in tests."""
    G = jnp.where(mask[:, None], G, 0.0).astype(_dtype(state))
    p = G.shape[1]
    if isinstance(state, FullState):
        U = lam * jnp.eye(p, dtype=G.dtype) + G.T @ G / m
        A = jnp.linalg.inv(U)
        return FullState(0.5 * (A + A.T))
    if isinstance(state, DiagonalState):
        return DiagonalState(lam + jnp.sum(G * G, axis=0) / m)
    K = G @ G.T / m + lam * jnp.eye(G.shape[0], dtype=G.dtype)
    return DualState(G, jnp.linalg.cholesky(K))


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
]
