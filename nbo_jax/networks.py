"""Multilayer perceptrons as pure ``init``/``apply`` pairs (flax underneath).

The Neural-BO network (seed 000, Section 4, eq. for ``h``; SPEC.md section 1):

    h(z; theta) = output_scale * W_L phi(W_{L-1} ... phi(W_1 z)),

with ``output_scale = sqrt(m)`` and every weight drawn from ``N(0, weight_var / m)``
(paper preset ``weight_var = 1``: seed 000, Section 7). ``depth`` is the paper's ``L``, the
number of weight matrices (``L = 2`` is one hidden layer). Inputs are ``z = 2u - 1`` in
``[-1, 1]^d`` (SPEC.md section 0).

For ReLU this network *is* the NTK-parameterized network ``(1/sqrt(m)) w_L phi(...)`` with
standard-normal weights ``V = sqrt(m) W``, written in the parameters ``W``: the function is the
same and ``grad_W h = sqrt(m) grad_V h``, so the empirical NTK divided by ``m`` converges to
the analytic NTK of :func:`nbo_jax.ntk.analytic_ntk` (tested in ``tests/test_ntk.py``).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp

Array = jax.Array
Params = Any

ACTIVATIONS: dict[str, Callable[[Array], Array]] = {
    "relu": nn.relu,
    "tanh": jnp.tanh,
    "gelu": nn.gelu,
    "softplus": nn.softplus,
    "sigmoid": nn.sigmoid,
}


class _MLP(nn.Module):
    widths: Sequence[int]
    activation: Callable[[Array], Array]
    use_bias: bool
    weight_std: float
    output_scale: float
    param_dtype: Any

    @nn.compact
    def __call__(self, z: Array) -> Array:
        h = z
        init = nn.initializers.normal(stddev=self.weight_std)
        for w in self.widths:
            h = nn.Dense(
                w, use_bias=self.use_bias, kernel_init=init, bias_init=init,
                param_dtype=self.param_dtype,
            )(h)
            h = self.activation(h)
        out = nn.Dense(
            1, use_bias=self.use_bias, kernel_init=init, bias_init=init,
            param_dtype=self.param_dtype,
        )(h)
        return self.output_scale * out[..., 0]


@dataclasses.dataclass(frozen=True, eq=False)
class Network:
    """A pure network: ``init(key) -> params``; ``apply(params, z) -> ()`` for ``z (d,)``
    or ``(n,)`` for ``z (n, d)``. ``num_params`` is ``p``, the length of the feature vector."""

    init: Callable[[Array], Params]
    apply: Callable[[Params, Array], Array]
    input_dim: int
    width: int
    depth: int
    activation: str
    num_params: int


def mlp(
    input_dim: int,
    width: int = 500,
    depth: int = 2,
    *,
    activation: str = "relu",
    use_bias: bool = False,
    weight_var: float = 1.0,
    output_scale: float | None = None,
    dtype=None,
) -> Network:
    """The Neural-BO MLP (seed 000, Section 4; SPEC.md section 1).

    Args:
        input_dim: ``d`` (int >= 1).
        width: hidden width ``m`` (int >= 1).
        depth: number of weight layers ``L`` (int >= 2).
        activation: one of ``ACTIVATIONS`` (paper: ``"relu"``).
        use_bias: add biases (paper: no; the authors' code: yes).
        weight_var: every weight (and bias) is ``N(0, weight_var / m)`` (paper: 1).
        output_scale: multiplier of the last layer; default ``sqrt(m)`` (paper).
        dtype: parameter dtype; default the current JAX default float (float32, or
            float64 under ``jax_enable_x64``).

    Returns:
        :class:`Network`.

    Raises:
        ValueError: a size is < 1, ``depth < 2`` or an unknown activation.
    """
    if input_dim < 1:
        raise ValueError(f"input_dim must be >= 1, got {input_dim}")
    if width < 1:
        raise ValueError(f"width must be >= 1, got {width}")
    if depth < 2:
        raise ValueError(f"depth (number of weight layers L) must be >= 2, got {depth}")
    if activation not in ACTIVATIONS:
        raise ValueError(
            f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}"
        )
    dtype = dtype or jnp.zeros(()).dtype
    scale = math.sqrt(width) if output_scale is None else float(output_scale)
    module = _MLP(
        widths=(width,) * (depth - 1),
        activation=ACTIVATIONS[activation],
        use_bias=use_bias,
        weight_std=math.sqrt(weight_var / width),
        output_scale=scale,
        param_dtype=dtype,
    )

    def init(key: Array) -> Params:
        return module.init(key, jnp.zeros((input_dim,), dtype))["params"]

    def apply(params: Params, z: Array) -> Array:
        return module.apply({"params": params}, z)

    hidden = (depth - 1) * width
    p = input_dim * width + (depth - 2) * width * width + width
    if use_bias:
        p += hidden + 1
    return Network(init, apply, input_dim, width, depth, activation, p)
