"""Multilayer perceptrons as pure ``init``/``apply`` pairs (flax underneath).

The Neural-BO network (Phan-Trong et al. 2023, Section 4, eq. for ``h``):

    h(z; theta) = output_scale * W_L phi(W_{L-1} ... phi(W_1 z)),

with ``output_scale = sqrt(m)`` and every weight drawn from ``N(0, weight_var / m)``
(paper preset ``weight_var = 1``: Phan-Trong et al. 2023, Section 7). ``depth`` is the paper's
``L``, the number of weight matrices (``L = 2`` is one hidden layer). Inputs are ``z = 2u - 1``
in ``[-1, 1]^d`` (the library's input map for every network, as in the authors' Neural-BO
code; Neural-BO can take :func:`embed_inputs`' ``"circle"`` instead).

For ReLU this network *is* the NTK-parameterized network ``(1/sqrt(m)) w_L phi(...)`` with
standard-normal weights ``V = sqrt(m) W``, written in the parameters ``W``: the function is the
same and ``grad_W h = sqrt(m) grad_V h``, so the empirical NTK divided by ``m`` converges to
the analytic NTK of :func:`nbo_jax.ntk.analytic_ntk` (tested in ``tests/test_ntk.py``).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Callable, Optional, Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp

from ._checks import check_bool, check_choice, check_int

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


INPUT_EMBEDDINGS = ("linear", "circle")
"""How a network sees a unit-cube point ``u (d,)``: ``"linear"``, ``z = 2u - 1`` in ``[-1, 1]^d``
(the authors' code); ``"circle"``, each coordinate on a quarter circle, ``z = (cos(pi u / 2),
sin(pi u / 2)) (2d,)``, so that ``||z||^2 = d`` everywhere in the box."""


CIRCLE_BELOW_DIM = 20
"""``input_embedding="auto"``: ``"circle"`` below this many inputs, ``"linear"`` from there on
(:func:`auto_embedding`; measured for Neural-BO, docs "Measured choices")."""


def auto_embedding(d: int, embedding: str = "auto") -> str:
    """``embedding`` itself, or for ``"auto"`` the default for ``d`` inputs: ``"circle"`` below
    :data:`CIRCLE_BELOW_DIM`, else ``"linear"``."""
    if embedding == "auto":
        return "circle" if d < CIRCLE_BELOW_DIM else "linear"
    return embedding


def embed_inputs(u: Array, embedding: str, column_weights=None) -> Array:
    """The network inputs of unit-cube points ``u (..., d)`` (:data:`INPUT_EMBEDDINGS`):
    ``(..., d)`` for ``"linear"``, ``(..., 2d)`` for ``"circle"``; with ``column_weights`` (``d``
    floats, an array ``(d,)`` or a sequence; ``None`` for all ones) each column's inputs (its
    ``2u - 1``, or its cosine and sine) are multiplied by its weight (:func:`category_weights`).

    The empirical NTK of a network with biases depends on its inputs' norms: with ``"linear"``
    the prior variance ``||grad_theta h(z)||^2`` grows from the centre ``z = 0`` to the
    corners ``||z||^2 = d``, so Thompson samples favour the box's faces and corners; with
    ``"circle"`` every point has the same norm and, at infinite width, the same prior variance,
    as a stationary GP kernel (Cho & Saul 2009: the arc-cosine kernels depend on the inputs'
    norms and angle).

    Raises:
        ValueError: an unknown ``embedding``, or ``column_weights`` not of length ``d``."""
    if embedding == "linear":
        z = 2.0 * u - 1.0
        tile = 1
    elif embedding == "circle":
        angle = (0.5 * math.pi) * u
        z = jnp.concatenate([jnp.cos(angle), jnp.sin(angle)], axis=-1)
        tile = 2
    else:
        raise ValueError(f"input_embedding must be one of {INPUT_EMBEDDINGS}, got {embedding!r}")
    if column_weights is None:
        return z
    w = jnp.asarray(column_weights, z.dtype)
    if w.shape != u.shape[-1:]:
        raise ValueError(f"column_weights must hold one weight per column ({u.shape[-1]}), got shape {w.shape}")
    return z * jnp.tile(w, tile)


def has_categories(space) -> bool:
    """Whether ``space`` (``Dataset.space``: a mixed search space, or ``None`` for a box) has a
    categorical parameter."""
    return space is not None and bool(space.categorical_columns().any())


def category_weights(space, weight) -> Optional[Array]:
    """``column_weights (D,)`` for :func:`embed_inputs` on a mixed search space: ``weight`` (a
    float or a scalar array, e.g. fitted) on each categorical parameter's one-hot columns, 1 on
    the others; ``None`` (all ones) for no space (a box) or a space without a categorical
    parameter.

    ``space``: a :class:`~nbo_jax.search_space.SearchSpace` (``Dataset.space``) or ``None``."""
    categorical = None if space is None else space.categorical_columns()
    if categorical is None or not categorical.any():
        return None
    return jnp.where(jnp.asarray(categorical), jnp.asarray(weight), 1.0)


def embedded(network: Callable[[int, Any], "Network"], d: int, dtype, embedding: str,
             column_weights=None) -> "Network":
    """``network``'s net for ``d``-dimensional unit-cube points: ``apply(params, u)`` is the
    network of :func:`embed_inputs`'s inputs with ``column_weights`` (``input_dim`` stays
    ``d``). Without weights the same object for the same arguments (cached)."""
    net = _embedded(network, int(d), dtype, embedding)
    if column_weights is None:
        return net
    raw = _inner(network, int(d), dtype, embedding)
    apply = lambda params, u: raw.apply(params, embed_inputs(u, embedding, column_weights))  # noqa: E731
    return dataclasses.replace(net, apply=apply)


@functools.lru_cache(maxsize=None)
def _inner(network, d, dtype, embedding):
    return network(2 * d if embedding == "circle" else d, dtype)


@functools.lru_cache(maxsize=None)
def _embedded(network, d, dtype, embedding):
    net = _inner(network, d, dtype, embedding)
    apply = lambda params, u: net.apply(params, embed_inputs(u, embedding))  # noqa: E731
    return dataclasses.replace(net, apply=apply, input_dim=d)


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
    """The Neural-BO MLP (Phan-Trong et al. 2023, Section 4).

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


# --------------------------------------------------------------------------- NTK-parameterized net
class _NTKDense(nn.Module):
    """``sigma_w / sqrt(fan_in) x W + sigma_b b`` with ``W ~ N(0, 1)``, ``b ~ N(0, 1)`` (or
    ``b = 0`` for the output layer, Appendix F.2)."""

    features: int
    sigma_w: float
    sigma_b: float
    zero_bias: bool
    param_dtype: Any

    @nn.compact
    def __call__(self, x: Array) -> Array:
        fan_in = x.shape[-1]
        kernel = self.param("kernel", nn.initializers.normal(1.0), (fan_in, self.features), self.param_dtype)
        b_init = nn.initializers.zeros if self.zero_bias else nn.initializers.normal(1.0)
        bias = self.param("bias", b_init, (self.features,), self.param_dtype)
        return (self.sigma_w / math.sqrt(fan_in)) * (x @ kernel) + self.sigma_b * bias


class _NTKMLP(nn.Module):
    widths: tuple
    activation: Callable[[Array], Array]
    sigma_w: float
    sigma_b: float
    param_dtype: Any

    @nn.compact
    def __call__(self, z: Array) -> Array:
        h = z
        for i, w in enumerate(self.widths):
            h = _NTKDense(w, self.sigma_w, self.sigma_b, False, self.param_dtype, name=f"layer_{i}")(h)
            h = self.activation(h)
        out = _NTKDense(1, self.sigma_w, self.sigma_b, True, self.param_dtype,
                        name=f"layer_{len(self.widths)}")(h)
        return out[..., 0]


def last_layer_name(depth: int) -> str:
    """Name of the output layer in the parameters of :func:`ntk_mlp` (``"layer_{depth-1}"``)."""
    return f"layer_{depth - 1}"


def ntk_mlp(
    input_dim: int,
    width: int = 256,
    depth: int = 2,
    *,
    gamma: float = 1.0,
    activation: str = "tanh",
    dtype=None,
) -> Network:
    """The NTK-parameterized MLP of Paria et al. 2022 ("Be Greedy"), Appendix A
    (``sigma_W = sigma_b = gamma``).

    ``f(z) = gamma/sqrt(d_L) W^(L) a^(L) + gamma b^(L)``,
    ``a^(l+1) = phi(gamma/sqrt(d_l) W^(l) a^(l) + gamma b^(l))``, ``a^(0) = z``; all weights
    and hidden biases ``N(0, 1)``, final bias 0 at init (Appendix F.2). ``depth`` is the number
    of weight layers (2 = one hidden layer, the paper's architecture). Parameters are a dict
    ``{"layer_0": {"kernel", "bias"}, ..., "layer_{depth-1}": ...}``.

    Args:
        input_dim: ``d`` (>= 1).
        width: hidden width (>= 1).
        depth: number of weight layers (>= 2).
        gamma: ``sigma_W = sigma_b`` (> 0).
        activation: a key of :data:`nbo_jax.networks.ACTIVATIONS` (paper: ``"tanh"``).
        dtype: parameter dtype (default: JAX's default float).

    Returns:
        :class:`nbo_jax.networks.Network`: ``init(key) -> params``, ``apply(params, z (d,))
        -> ()`` (or ``(n,)`` for ``z (n, d)``), ``num_params``.

    Raises:
        ValueError: a size out of range, ``gamma <= 0`` or an unknown activation.
    """
    if int(input_dim) < 1:
        raise ValueError(f"input_dim must be >= 1, got {input_dim}")
    if int(width) < 1:
        raise ValueError(f"width must be >= 1, got {width}")
    if int(depth) < 2:
        raise ValueError(f"depth (number of weight layers) must be >= 2, got {depth}")
    if not gamma > 0:
        raise ValueError(f"gamma must be > 0, got {gamma}")
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
    dtype = dtype or jnp.zeros(()).dtype
    module = _NTKMLP((int(width),) * (int(depth) - 1), ACTIVATIONS[activation], float(gamma), float(gamma), dtype)

    def init(key: Array) -> Params:
        return module.init(key, jnp.zeros((input_dim,), dtype))["params"]

    def apply(params: Params, z: Array) -> Array:
        return module.apply({"params": params}, z)

    p = input_dim * width + (depth - 2) * width * width + width + (depth - 1) * width + 1
    return Network(init, apply, int(input_dim), int(width), int(depth), activation, int(p))


# --------------------------------------------------------------------------- Neural-CBO net
@dataclasses.dataclass(frozen=True, eq=False)
class ZeroInitNetwork:
    """The Neural-CBO network (thesis eq. 4.1) with its fixed outer layer.

    ``init(key) -> (params, q)``: trainable ``params`` (a list of per-layer dicts ``{"W"}``,
    plus ``"b"`` with biases) and the fixed outer weights ``q (m,)``.
    ``apply(params, q, z (d,)) -> ()``. ``ntk_factors(params, q, z (d,))`` returns one pair
    ``(h, delta)`` per layer (see :func:`zero_init_mlp`). ``num_params`` is ``p``.
    """

    init: Callable[[Array], tuple]
    apply: Callable[[Params, Array, Array], Array]
    ntk_factors: Callable[[Params, Array, Array], tuple]
    input_dim: int
    width: int
    depth: int
    use_bias: bool
    num_params: int


def zero_init_mlp(input_dim: int, width: int = 256, depth: int = 2, *, use_bias: bool = False,
                  dtype=None) -> ZeroInitNetwork:
    """Neural-CBO's ReLU network (Phan-Trong 2024, PhD thesis, eq. 4.1), zero at initialization.

    ``a(z; W) = q^T h_L``, ``h_l = relu(W_l h_{l-1} + b_l) / sqrt(m)``, ``h_0 = z``, with
    ``W_1 (m, d)``, ``W_l (m, m)`` for ``2 <= l <= L``, biases ``b_l (m,)`` only when
    ``use_bias`` (the thesis has none) and fixed outer weights ``q (m,)``. Symmetric
    initialization (thesis Section 4.1.1, after Du et al. 2018): ``W_1 = [Psi; Psi]``,
    ``W_l = diag(Psi_l, Psi_l)``, ``b_l = [beta; beta]`` with i.i.d. ``N(0, 1)`` entries, and
    ``q = (q^, -q^)`` with ``q^`` uniform on ``{-1, +1}``. The two halves of every layer are
    then equal, so ``a(z; W_0) = 0`` for every ``z``. The forward pass computes each half with
    its own block products, so the zero is exact in floating point, not only up to round-off.

    ``ntk_factors`` gives, for layer ``l``, ``h~_{l-1}`` (``h_{l-1}`` with a trailing 1 when
    ``use_bias``) and ``delta_l = d a / d(pre-activation_l)``; the empirical NTK is then
    ``<g(z), g(z')> = sum_l (delta_l . delta_l') (h~_{l-1} . h~_{l-1}')`` because
    ``d a / d W_l = delta_l h_{l-1}^T`` (:func:`factor_kernel`). That costs ``O(L m)`` per pair
    instead of ``O(p) = O(m d + (L-1) m^2)``.

    Args:
        input_dim: ``d`` (>= 1). width: ``m``, even (>= 2). depth: ``L`` (>= 1), the number of
            trainable weight matrices (the thesis uses ``L = 2``). use_bias: add biases.
        dtype: parameter dtype (default: JAX's default float).

    Raises:
        ValueError: ``input_dim < 1``, ``width`` odd or < 2, ``depth < 1``.
    """
    if input_dim < 1:
        raise ValueError(f"input_dim must be >= 1, got {input_dim}")
    if width < 2 or width % 2:
        raise ValueError(f"width must be an even integer >= 2 (two equal halves), got {width}")
    if depth < 1:
        raise ValueError(f"depth (number of trainable weight layers L) must be >= 1, got {depth}")
    dtype = dtype or jnp.zeros(()).dtype
    m, k = int(width), int(width) // 2
    inv = 1.0 / math.sqrt(m)

    def init(key: Array):
        keys = jax.random.split(key, 2 * depth + 1)
        params = []
        for layer in range(depth):
            n_in = input_dim if layer == 0 else k
            psi = jax.random.normal(keys[2 * layer], (k, n_in), dtype)
            if layer == 0:
                W = jnp.concatenate([psi, psi], axis=0)
            else:
                zero = jnp.zeros((k, k), dtype)
                W = jnp.block([[psi, zero], [zero, psi]])
            entry = {"W": W}
            if use_bias:
                beta = jax.random.normal(keys[2 * layer + 1], (k,), dtype)
                entry["b"] = jnp.concatenate([beta, beta])
            params.append(entry)
        q_half = jnp.where(jax.random.bernoulli(keys[-1], 0.5, (k,)), 1.0, -1.0).astype(dtype)
        return params, jnp.concatenate([q_half, -q_half])

    def forward(params, z):
        """Pre-activations and hidden layers, each half by its own block product."""
        top = bot = None
        pres, hs = [], [z]
        for layer, entry in enumerate(params):
            W = entry["W"]
            if layer == 0:
                p_top, p_bot = W[:k] @ z, W[k:] @ z
            else:
                p_top = W[:k, :k] @ top + W[:k, k:] @ bot
                p_bot = W[k:, :k] @ top + W[k:, k:] @ bot
            if use_bias:
                p_top, p_bot = p_top + entry["b"][:k], p_bot + entry["b"][k:]
            top, bot = jax.nn.relu(p_top) * inv, jax.nn.relu(p_bot) * inv
            pres.append(jnp.concatenate([p_top, p_bot]))
            hs.append(jnp.concatenate([top, bot]))
        return pres, hs, top, bot

    def apply(params, q, z):
        _, _, top, bot = forward(params, z)
        return q[:k] @ top + q[k:] @ bot

    def ntk_factors(params, q, z):
        pres, hs, _, _ = forward(params, z)
        grad_h = q
        out = []
        for layer in reversed(range(depth)):
            delta = grad_h * (pres[layer] > 0).astype(z.dtype) * inv
            h_prev = hs[layer]
            if use_bias:
                h_prev = jnp.concatenate([h_prev, jnp.ones((1,), z.dtype)])
            out.append((h_prev, delta))
            grad_h = params[layer]["W"].T @ delta
        return tuple(reversed(out))

    p = m * input_dim + (depth - 1) * m * m + (depth * m if use_bias else 0)
    return ZeroInitNetwork(init, apply, ntk_factors, input_dim, m, depth, use_bias, p)


def factor_kernel(factors_a, factors_b) -> Array:
    """Empirical NTK ``<g(z_i), g(z'_j)>`` from batched :meth:`ZeroInitNetwork.ntk_factors`:
    each argument is a tuple of per-layer ``(h (n, a_l), delta (n, m))`` pairs; returns
    ``(n_a, n_b)``."""
    return sum((da @ db.T) * (ha @ hb.T) for (ha, da), (hb, db) in zip(factors_a, factors_b))


def factor_diag(factors) -> Array:
    """``<g(z_i), g(z_i)>`` for batched factors, ``(n,)`` (the diagonal of
    :func:`factor_kernel` without forming it)."""
    return sum(jnp.sum(d * d, axis=1) * jnp.sum(h * h, axis=1) for h, d in factors)


def network_builder(width, depth, activation, *, build: Callable = mlp, min_width: int = 1, min_depth: int = 2,
                    use_bias=None, **options) -> Callable[[int, Any], Network]:
    """A factory's network, checked once and built once per input dimension and dtype.

    Checks ``width`` (an int ``>= min_width``), ``depth`` (an int ``>= min_depth``),
    ``activation`` (a name in :data:`nbo_jax.networks.ACTIVATIONS`) and, when given,
    ``use_bias`` (a bool), then returns the cached ``network(d, dtype)``: ``build(d, width,
    depth, activation=activation, dtype=dtype, **options)`` (with ``use_bias=`` when given);
    ``build`` is :func:`nbo_jax.networks.mlp` or, e.g. with ``gamma=``,
    :func:`nbo_jax.networks.ntk_mlp`.

    Raises:
        TypeError: ``width``/``depth`` not an int, ``use_bias`` not a bool.
        ValueError: ``width``/``depth`` too small, unknown ``activation`` (the messages name
        the argument)."""
    width = check_int("width", width, min_width)
    depth = check_int("depth", depth, min_depth)
    activation = check_choice("activation", activation, ACTIVATIONS)
    if use_bias is not None:
        options["use_bias"] = check_bool("use_bias", use_bias)

    @functools.cache
    def network(d: int, dtype) -> Network:
        return build(d, width, depth, activation=activation, dtype=dtype, **options)

    return network
