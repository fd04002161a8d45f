"""Physics-informed surrogates: the PINN loss, the NTK-PINN kernel blocks and the interaction
information (Phan-Trong 2024, PhD thesis, Ch. 5, eq. 5.1, Definition 5.3.1, Lemma 5.3.6).

A network ``h(z; theta)`` sees ``z = 2 (x - lower) / (upper - lower) - 1`` (the library's input map);
the PDE ``N[f](x) = g(x)`` is stated in box coordinates ``x``. :func:`box_surrogate` is the
function of ``x`` that the PDE operator is applied to, so the chain rule of the input map is
handled by autodiff and the user writes the operator exactly as the physics states it.

**NTK-PINN kernel** (Definition 5.3.1). With ``phi(x) = grad_theta h(x; theta_0)`` and
``omega(z) = grad_theta N[h](z; theta_0)``::

    K_uu = Phi Phi^T (t x t),  K_ur = Phi Omega^T (t x N_r),  K_rr = Omega Omega^T (N_r x N_r)

A vector-valued residual (e.g. a gradient, ``k`` components per point) contributes ``k`` rows
of ``Omega`` per residual point.

**Interaction information** (Lemma 5.3.6)::

    I(f; Y_t; U_r) = 1/2 log[ det(I + Phi^T Phi / l1) det(I + Omega^T Omega / l2)
                              / det(I + Phi^T Phi / l1 + Omega^T Omega / l2) ]      (p x p)

By Sylvester's identity and the Schur complement of the ``(t + N_r)`` block matrix this is
computed with ``t x t`` determinants only (after one ``N_r x N_r`` Cholesky factorization)::

    I = 1/2 [ log det(I_t + K_uu / l1) - log det(I_t + S / l1) ],
    S = K_uu - K_ur (K_rr + l2 I)^{-1} K_ru

``1/2 log det(I + K_uu / l1)`` is the information gain ``I(f; Y_t)`` and ``1/2 log det(I +
S / l1)`` the conditional one ``I(f; Y_t | U_r)`` (Definition 5.3.5): their difference is
``>= 0`` because ``S <= K_uu`` (Remark 5.3.7).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree

from . import pde
from .features import gradient_features
from .posterior import solve_lower

Array = jax.Array
Params = Any


def box_surrogate(apply: Callable[[Params, Array], Array], params: Params, lower: Array, upper: Array,
                  *, offset: Any = 0.0, scale: Any = 1.0) -> Callable[[Array], Array]:
    """``x (d,) -> offset + scale * h(2 (x - lower) / (upper - lower) - 1; params)``: the
    network as a function of box coordinates (the function a PDE operator acts on).

    ``offset``/``scale`` map standardized outputs back to the objective's units (targets are
    standardized to mean 0, std 1 before training): with ``offset = mean(y)``,
    ``scale = std(y) * nu`` the PDE ``N[f] = g`` is stated for this function exactly as for
    ``f``, whatever the operator (linear or not).
    """

    def f(x: Array) -> Array:
        return offset + scale * apply(params, to_network_input(x, lower, upper))

    return f


def to_network_input(x: Array, lower: Array, upper: Array) -> Array:
    """``z = 2 (x - lower) / (upper - lower) - 1`` (networks see ``[-1, 1]^d``), any leading shape."""
    return 2.0 * (x - lower) / (upper - lower) - 1.0


def residual_values(operator: Callable, source: Any, fn: Callable[[Array], Array], x: Array) -> Array:
    """``N[fn](x_j) - g(x_j)`` for ``x (n, d)`` -> ``(n, k)`` (``k = 1`` for a scalar PDE)
    (the residual of thesis eq. 5.1)."""
    r = jax.vmap(pde.residual(operator, source)(fn))(x)
    return r.reshape(x.shape[0], -1)


def pinn_loss(data_sq: Array, mask: Array, res_sq: Optional[Array], weight: Any) -> Array:
    """The PINN-BO training loss (thesis eq. 5.1) from squared errors.

    Args:
        data_sq: ``(cap,)`` squared data errors ``(y_i - nu h(x_i))^2`` (standardized units);
            mask: ``(cap,)`` bool, valid rows.
        res_sq: ``(B, k)`` squared residuals ``(u_j - nu N[h](z_j))^2`` (standardized units),
            or ``None`` (no PDE: the data term alone).
        weight: ``"sum"`` for eq. 5.1 as printed, ``sum_i data + sum_j res``, divided by the
            number of terms (same minimizer, a learning rate independent of the sizes); or a
            float ``w``: ``mean_i data + w mean_j res``.

    Returns:
        The scalar loss.
    """
    n = jnp.maximum(jnp.sum(mask), 1).astype(data_sq.dtype)
    data = jnp.sum(jnp.where(mask, data_sq, 0.0))
    if res_sq is None:
        return data / n
    if isinstance(weight, str):
        return (data + jnp.sum(res_sq)) / (n + res_sq.size)
    return data / n + weight * jnp.mean(res_sq)


# --------------------------------------------------------------------------- NTK-PINN kernel
def pinn_features(apply: Callable[[Params, Array], Array], params: Params, operator: Callable,
                  lower: Array, upper: Array, x: Array, z: Array) -> tuple[Array, Array]:
    """Parameter gradients of the network and of its PDE operator (Lemma 5.3.4).

    Args:
        apply: ``apply(params, z (d,)) -> ()``; params: ``theta`` (usually ``theta_0``).
        operator: ``u -> N[u]`` (:mod:`nbo_jax.pde` operators, box coordinates).
        lower: ``(d,)`` lower corner of the box.
        upper: ``(d,)`` upper corner of the box.
        x: ``(t, d)`` observed points, in box coordinates.
        z: ``(N_r, d)`` residual points, in box coordinates.

    Returns:
        ``Phi (t, p)`` with rows ``grad_theta h(x_i)`` and ``Omega (N_r k, p)`` with rows
        ``grad_theta N[h](z_j)`` (``k`` rows per point for a ``k``-vector residual), in
        ``ravel_pytree`` order of ``params``.
    """
    phi = gradient_features(apply, params, to_network_input(x, lower, upper))
    return phi, residual_features(apply, params, operator, lower, upper, z)


def residual_features(apply: Callable[[Params, Array], Array], params: Params, operator: Callable,
                      lower: Array, upper: Array, z: Array) -> Array:
    """``Omega (N_r k, p)``: rows ``grad_theta N[h](z_j)`` at the residual points ``z (N_r, d)``
    (box coordinates; ``k`` rows per point for a ``k``-vector residual), in ``ravel_pytree``
    order of ``params`` (Lemma 5.3.4; the PDE half of :func:`pinn_features`)."""
    theta, unravel = ravel_pytree(params)

    def n_op(flat, zi):
        fn = box_surrogate(apply, unravel(flat), lower, upper)
        return jnp.reshape(pde.residual(operator, 0.0)(fn)(zi), (-1,))

    omega = jax.vmap(jax.jacrev(n_op), in_axes=(None, 0))(theta, z)
    return omega.reshape(-1, theta.shape[0])


def ntk_pinn_kernel(phi: Array, omega: Array) -> tuple[Array, Array, Array]:
    """The blocks of ``K_NTK-PINN`` (Definition 5.3.1, eq. 5.2): ``K_uu = Phi Phi^T (t, t)``,
    ``K_ur = Phi Omega^T (t, r)``, ``K_rr = Omega Omega^T (r, r)`` from :func:`pinn_features`
    (``K_ru = K_ur^T``)."""
    return phi @ phi.T, phi @ omega.T, omega @ omega.T


def residual_factor(k_rr: Array, lambda2: Any) -> Array:
    """Lower Cholesky factor ``L`` of ``K_rr + lambda2 I`` ``(r, r)`` (the one ``N_r x N_r``
    factorization the interaction information needs)."""
    return jnp.linalg.cholesky(k_rr + lambda2 * jnp.eye(k_rr.shape[0], dtype=k_rr.dtype))


def conditional_gram(k_uu: Array, w: Array, mask: Optional[Array] = None) -> tuple[Array, Array]:
    """``(K_uu, S)`` with rows/columns where ``mask`` is False zeroed: ``S = K_uu - W^T W``
    (symmetrized), the Gram matrix of the observations conditioned on the PDE rows
    (``W = L^{-1} K_ru``)."""
    if mask is not None:
        m = mask.astype(k_uu.dtype)
        k_uu = k_uu * m[:, None] * m[None, :]
        w = w * m[None, :]
    s = k_uu - w.T @ w
    return k_uu, 0.5 * (s + s.T)


def information_terms(k_uu: Array, w: Array, lambda1: Any, mask: Optional[Array] = None) -> tuple[Array, Array]:
    """``(I(f; Y_t), I(f; Y_t | U_r))`` from ``K_uu (t, t)`` and ``W = L^{-1} K_ru (r, t)``
    (``L`` of :func:`residual_factor`), in nats.

    ``I(f; Y_t) = 1/2 log det(I + K_uu / l1)``, ``I(f; Y_t | U_r) = 1/2 log det(I + (K_uu -
    W^T W) / l1)``. Rows/columns with ``mask`` False are left out (fixed-capacity buffers).
    """
    k_uu, s = conditional_gram(k_uu, w, mask)
    eye = jnp.eye(k_uu.shape[0], dtype=k_uu.dtype)
    # one batched LU call for both: two independent LAPACK calls can deadlock jaxlib's CPU
    # thread pool under vmap (see nbo_jax.gp_model._serial_note)
    logdets = jnp.linalg.slogdet(jnp.stack([eye + k_uu / lambda1, eye + s / lambda1]))[1]
    return 0.5 * logdets[0], 0.5 * logdets[1]


def posterior_variance(phi_c: Array, a: Array, phi: Array, w: Array, k_uu: Array, lambda1: Any,
                       mask: Optional[Array] = None) -> Array:
    """NTK-PINN posterior variance ``sigma_t^2(x)`` (thesis Lemma 5.3.4) at ``N`` candidates,
    given the observations and the PDE data, without forming any ``N x N`` matrix.

    Conditioning on the PDE rows first (``A = L^{-1} Omega``, ``L L^T = K_rr + l2 I``), then
    on the observations with noise ``l1``::

        s_r^2(x) = phi(x).phi(x) - |A phi(x)|^2,     s(x, x_i) = phi(x).phi_i - (A phi(x)).w_i
        sigma^2(x) = s_r^2(x) - s(x)^T (K_uu - W^T W + l1 I)^{-1} s(x)

    Args:
        phi_c: ``(N, p)`` candidate features ``grad_theta h(x; theta_0)``.
        a: ``(r, p)`` ``L^{-1} Omega``; phi: ``(t, p)`` observed features; w: ``(r, t)``
            ``A Phi^T``; k_uu: ``(t, t)`` ``Phi Phi^T``; lambda1: ``l1 > 0``;
        mask: ``(t,)`` bool, observed rows to use (default all).

    Returns:
        ``(N,)`` variances ``>= 0`` (clipped at 0 against round-off). Cost ``O(N p (r + t) +
        t^3 + N t^2)``.
    """
    m = jnp.ones((k_uu.shape[0],), bool) if mask is None else mask
    ac = phi_c @ a.T
    s = (phi_c @ phi.T - ac @ w) * m.astype(k_uu.dtype)[None, :]
    s_uu = conditional_gram(k_uu, w, m)[1] + jnp.diag(jnp.where(m, lambda1, 1.0))
    v = solve_lower(jnp.linalg.cholesky(s_uu), s.T)
    var = jnp.sum(phi_c**2, axis=1) - jnp.sum(ac**2, axis=1) - jnp.sum(v**2, axis=0)
    return jnp.maximum(var, 0.0)


def interaction_information(k_uu: Array, k_ur: Array, k_rr: Array, lambda1: Any = 1.0, lambda2: Any = 1.0,
                            mask: Optional[Array] = None) -> Array:
    """``I(f; Y_t; U_r)`` of thesis Lemma 5.3.6 in nats, from the NTK-PINN kernel blocks.

    Args:
        k_uu: ``(t, t)``; k_ur: ``(t, r)``; k_rr: ``(r, r)`` (:func:`ntk_pinn_kernel`).
        lambda1: regularizer ``l1 > 0`` of the observations (Lemma 5.3.4; the sub-Gaussian
            noise scale of Assumption 5.3.2).
        lambda2: regularizer ``l2 > 0`` of the PDE data (Lemma 5.3.4).
        mask: optional ``(t,)`` bool; rows with False are left out.

    Returns:
        A scalar ``>= 0`` (up to round-off): ``1/2 [log det(I + K_uu/l1) - log det(I + (K_uu -
        K_ur (K_rr + l2 I)^{-1} K_ru)/l1)]``, equal to the ``p x p`` form of the lemma (module
        doc); cost ``O(r^3 + r^2 t + t^3)``.
    """
    w = solve_lower(residual_factor(k_rr, lambda2), k_ur.T)
    gain, conditional = information_terms(k_uu, w, lambda1, mask)
    return gain - conditional


__all__ = [
    "box_surrogate",
    "to_network_input",
    "conditional_gram",
    "residual_values",
    "pinn_loss",
    "pinn_features",
    "residual_features",
    "ntk_pinn_kernel",
    "residual_factor",
    "information_terms",
    "posterior_variance",
    "interaction_information",
]
