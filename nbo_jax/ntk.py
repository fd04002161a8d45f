"""Neural tangent kernels: empirical (from gradient features) and analytic (neural-tangents).

Empirical NTK: ``Theta(z, z') = <g(z), g(z')>``, ``g`` the parameter gradient
(:mod:`nbo_jax.features`). Neural-BO uses ``Theta / m`` (Phan-Trong et al. 2023, Algorithm 1, line 3).

Analytic NTK (Jacot, Gabriel & Hongler 2018): the infinite-width limit of ``Theta / m`` for the
Neural-BO network of :func:`nbo_jax.networks.mlp` (``weight_var = 1``, with or without biases),
computed by neural-tangents' ``stax`` (Novak et al. 2020, "Neural Tangents: fast and easy
infinite neural networks in Python", ICLR) as the NTK-parameterized network with first-layer
``W_std = sqrt(d)`` (our first layer has no ``1/sqrt(d)`` fan-in factor), ``W_std = 1``
elsewhere and, with biases, ``b_std = 1`` in every layer (the output layer included).

Why these constants: write every weight and bias of ``mlp`` as ``W = V / sqrt(m)``,
``b = beta / sqrt(m)`` with standard-normal ``V``, ``beta``. A layer's pre-activation is then
``(V a + beta) / sqrt(m)`` (first layer) or ``(V a / sqrt(m) + beta) / sqrt(m)`` (later
layers), i.e. ``1/sqrt(m)`` times the NTK-parameterized pre-activation; ReLU is positively
homogeneous, so the factors pass through the activations and the final ``sqrt(m)`` cancels the
last one: the two networks are the same function. The gradients satisfy
``grad_(W, b) h = sqrt(m) grad_(V, beta) h``, so ``G G^T / m`` in ``(W, b)`` is the NTK-
parameterized empirical NTK, which tends to ``stax``'s analytic kernel (tested in
``tests/test_features_ntk.py``, weights and biases both). For ReLU the kernel follows the
arc-cosine recursion of Arora et al. 2019 ("On exact computation with an infinitely wide
neural net", NeurIPS, Section 3 and Appendix E), which :func:`relu_ntk_diagonal` evaluates on
the diagonal.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional

import jax

from .features import gradient_features

Array = jax.Array


def empirical_ntk(
    apply: Callable[[Any, Array], Array],
    params: Any,
    z1: Array,
    z2: Optional[Array] = None,
    *,
    scale: float = 1.0,
    chunk_size: Optional[int] = None,
) -> Array:
    """Empirical NTK ``G1 G2^T / scale`` for ``z1 (n1, d)``, ``z2 (n2, d)`` -> ``(n1, n2)``.

    ``z2=None`` means ``z2 = z1``. Pass ``scale=m`` for the Neural-BO kernel ``g^T g' / m``.
    """
    g1 = gradient_features(apply, params, z1, chunk_size=chunk_size)
    g2 = g1 if z2 is None else gradient_features(apply, params, z2, chunk_size=chunk_size)
    return (g1 @ g2.T) / scale


def analytic_ntk(
    z1: Array,
    z2: Optional[Array] = None,
    *,
    depth: int = 2,
    activation: str = "relu",
    use_bias: bool = False,
) -> Array:
    """Infinite-width NTK of the Neural-BO network (``lim_{m->inf} Theta / m``).

    Args:
        z1: ``(n1, d)``; z2: ``(n2, d)`` or None (``z2 = z1``); float32 or float64 (the
            result has their dtype). Works under ``jit`` and ``vmap``.
        depth: number of weight layers ``L`` (>= 2).
        activation: ``"relu"`` (exact correspondence with :func:`nbo_jax.networks.mlp`, see
            the module doc) or ``"erf"`` (no such network activation; kept for experiments).
        use_bias: the network has biases (``mlp(..., use_bias=True)``; the gradients with
            respect to the biases are part of the kernel).

    Returns:
        ``(n1, n2)`` kernel matrix. Its gradient with respect to the inputs is finite
        everywhere, identical points included (neural-tangents differentiates the ReLU
        kernel's ``sqrt(1 - cos^2)`` and ``arctan2`` through custom JVPs that are 0 where
        the exact derivative is infinite).

    Raises:
        ValueError: unsupported activation or depth < 2.
    """
    from ._compat import neural_tangents as nt

    stax = nt.stax
    if depth < 2:
        raise ValueError(f"depth must be >= 2, got {depth}")
    acts = {"relu": stax.Relu, "erf": stax.Erf}
    if activation not in acts:
        raise ValueError(f"activation must be one of {sorted(acts)}, got {activation!r}")
    d = z1.shape[-1]
    b_std = 1.0 if use_bias else None
    # the width given to stax is irrelevant to kernel_fn (the infinite-width limit)
    layers = [stax.Dense(1024, W_std=math.sqrt(d), b_std=b_std), acts[activation]()]
    for _ in range(depth - 2):
        layers += [stax.Dense(1024, W_std=1.0, b_std=b_std), acts[activation]()]
    layers += [stax.Dense(1, W_std=1.0, b_std=b_std)]
    _, _, kernel_fn = stax.serial(*layers)
    return kernel_fn(z1, z2, "ntk")


def relu_ntk_diagonal(sq_norm: Array, *, depth: int = 2, use_bias: bool = False) -> Array:
    """``Theta(z, z)`` of :func:`analytic_ntk` with ``activation="relu"`` from ``||z||^2``
    alone, elementwise (any shape, any float dtype).

    On the diagonal the arc-cosine recursion (Arora et al. 2019, Appendix E; cosine 1, so
    ``E[relu(a)^2] = q / 2`` and ``E[relu'(a)^2] = 1 / 2``) is affine in ``||z||^2``: with
    ``beta = 1`` with biases, else 0,

        q_1 = ||z||^2 + beta,  Theta_1 = q_1;
        q_l = q_{l-1} / 2 + beta,  Theta_l = q_l + Theta_{l-1} / 2   (l = 2..L),

    and ``Theta(z, z) = Theta_L`` (depth 2 with biases: ``||z||^2 + 2``). No arccos, so its
    gradient is smooth; equal to the diagonal of :func:`analytic_ntk` (tested).

    Raises:
        ValueError: depth < 2.
    """
    if depth < 2:
        raise ValueError(f"depth must be >= 2, got {depth}")
    beta = 1.0 if use_bias else 0.0
    q = sq_norm + beta
    theta = q
    for _ in range(depth - 1):
        q = 0.5 * q + beta
        theta = q + 0.5 * theta
    return theta
