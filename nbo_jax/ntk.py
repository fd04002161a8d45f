"""Neural tangent kernels: empirical (from gradient features) and analytic (neural-tangents).

Empirical NTK: ``Theta(z, z') = <g(z), g(z')>``, ``g`` the parameter gradient
(:mod:`nbo_jax.features`). Neural-BO uses ``Theta / m`` (Phan-Trong et al. 2023, Algorithm 1, line 3).

Analytic NTK: the infinite-width limit of ``Theta / m`` for the Neural-BO ReLU network of
:func:`nbo_jax.networks.mlp` (no biases, ``weight_var = 1``), computed by neural-tangents'
``stax`` as the NTK-parameterized network with first-layer ``W_std = sqrt(d)`` (our first
layer has no ``1/sqrt(d)`` fan-in factor) and ``W_std = 1`` elsewhere.
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
) -> Array:
    """Infinite-width NTK of the Neural-BO network (``lim_{m->inf} Theta / m``).

    Args:
        z1: ``(n1, d)``; z2: ``(n2, d)`` or None.
        depth: number of weight layers ``L`` (>= 2).
        activation: ``"relu"`` (exact correspondence, see module doc) or ``"erf"``.

    Returns:
        ``(n1, n2)`` kernel matrix.

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
    layers = [stax.Dense(1024, W_std=math.sqrt(d)), acts[activation]()]
    for _ in range(depth - 2):
        layers += [stax.Dense(1024, W_std=1.0), acts[activation]()]
    layers += [stax.Dense(1, W_std=1.0)]
    _, _, kernel_fn = stax.serial(*layers)
    return kernel_fn(z1, z2, "ntk")
