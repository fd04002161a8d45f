"""Synthetic test functions (minimization form) and the :func:`get` factory.

Every function takes ONE point ``x`` of shape ``(d,)`` and returns a scalar; it is a pure
``jax.numpy`` function (jit/vmap/grad compatible) that computes in the floating dtype of
``x`` (integer inputs are promoted to the default float dtype), so it works in float32 and
float64. Definitions, domains and optima follow BoTorch (``botorch.test_functions``) and
Surjanovic & Bingham, "Virtual Library of Simulation Experiments"
(https://www.sfu.ca/~ssurjano/).

Functions whose textbook form contains ``sqrt(sum x^2)`` (Ackley, Drop-Wave) use a
gradient-safe square root: the value is unchanged, and the gradient at the origin (where the
function has a kink) is 0 instead of NaN.

Use :func:`get` to obtain a :class:`~nbo_jax.types.Problem` (bounds, optimum, noise) and
:func:`available` for the list of names.
"""

from __future__ import annotations

import functools
import math
from typing import Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from nbo_jax.types import Problem, make_bounds

__all__ = [
    "ackley",
    "levy",
    "michalewicz",
    "rastrigin",
    "styblinski_tang",
    "drop_wave",
    "cosine_mixture",
    "hartmann6",
    "branin",
    "rosenbrock",
    "griewank",
    "get",
    "available",
]

_PI = math.pi
_SFU = "https://www.sfu.ca/~ssurjano/"


def _as_float(x):
    x = jnp.asarray(x)
    if jnp.issubdtype(x.dtype, jnp.floating):
        return x
    return x.astype(jnp.result_type(float))


def _safe_sqrt(s):
    """``sqrt(s)`` for ``s >= 0`` with a zero (not NaN) gradient at ``s = 0``."""
    pos = s > 0
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, s, 1.0)), 0.0)


def _index(x):
    """``(1, 2, ..., d)`` in the dtype of ``x``."""
    return jnp.arange(1, x.shape[-1] + 1, dtype=x.dtype)


# --------------------------------------------------------------------------- functions


def ackley(x, a: float = 20.0, b: float = 0.2, c: float = 2 * _PI):
    """Ackley: ``-a exp(-b sqrt(mean x_i^2)) - exp(mean cos(c x_i)) + a + e``.

    Domain ``[-32.768, 32.768]^d``, any ``d >= 1``. Global minimum ``f* = 0`` at ``x = 0``.
    Source: Ackley (1987); sfu.ca/~ssurjano/ackley.html; BoTorch ``Ackley``.
    """
    x = _as_float(x)
    r = _safe_sqrt(jnp.mean(x**2))
    return -a * jnp.exp(-b * r) - jnp.exp(jnp.mean(jnp.cos(c * x))) + a + jnp.e


def levy(x):
    """Levy: with ``w_i = 1 + (x_i - 1)/4``,
    ``sin^2(pi w_1) + sum_{i<d} (w_i - 1)^2 [1 + 10 sin^2(pi w_i + 1)]
    + (w_d - 1)^2 [1 + sin^2(2 pi w_d)]``.

    Domain ``[-10, 10]^d``, any ``d >= 1``. Global minimum ``f* = 0`` at ``x = (1, ..., 1)``.
    Source: sfu.ca/~ssurjano/levy.html; BoTorch ``Levy``.
    """
    x = _as_float(x)
    w = 1.0 + (x - 1.0) / 4.0
    head = jnp.sin(_PI * w[0]) ** 2
    mid = jnp.sum((w[:-1] - 1.0) ** 2 * (1.0 + 10.0 * jnp.sin(_PI * w[:-1] + 1.0) ** 2))
    tail = (w[-1] - 1.0) ** 2 * (1.0 + jnp.sin(2 * _PI * w[-1]) ** 2)
    return head + mid + tail


def michalewicz(x, m: float = 10):
    """Michalewicz: ``-sum_i sin(x_i) sin^{2m}(i x_i^2 / pi)``, ``m = 10``.

    Domain ``[0, pi]^d``, any ``d >= 1``. Published minima: ``d = 2``: ``-1.8013034`` at
    ``(2.20290552, 1.57079633)``; ``d = 5``: ``-4.687658``; ``d = 10``: ``-9.66015``.
    The function is separable, so :func:`get` computes the exact optimum for any ``d`` (and
    any ``m``) by 1-D minimization of each term (it reproduces the published values).
    Source: Molga & Smutnicki (2005); sfu.ca/~ssurjano/michal.html; BoTorch ``Michalewicz``.
    """
    x = _as_float(x)
    # (sin^2)^m rather than sin^(2m): valid for non-integer m too.
    return -jnp.sum(jnp.sin(x) * (jnp.sin(_index(x) * x**2 / _PI) ** 2) ** m)


def rastrigin(x):
    """Rastrigin: ``10 d + sum_i [x_i^2 - 10 cos(2 pi x_i)]``.

    Domain ``[-5.12, 5.12]^d``, any ``d >= 1``. Global minimum ``f* = 0`` at ``x = 0``.
    Source: sfu.ca/~ssurjano/rastr.html; BoTorch ``Rastrigin``.
    """
    x = _as_float(x)
    return 10.0 * x.shape[-1] + jnp.sum(x**2 - 10.0 * jnp.cos(2 * _PI * x))


def styblinski_tang(x):
    """Styblinski-Tang: ``1/2 sum_i (x_i^4 - 16 x_i^2 + 5 x_i)``.

    Domain ``[-5, 5]^d``, any ``d >= 1``. Global minimum ``f* = -39.16616570377142 d`` at
    ``x_i = -2.903534027771177`` (the root of ``2 x^3 - 16 x + 5/2``; sfu.ca prints
    ``-2.903534``). Source: sfu.ca/~ssurjano/stybtang.html; BoTorch ``StyblinskiTang``.
    """
    x = _as_float(x)
    return 0.5 * jnp.sum(x**4 - 16.0 * x**2 + 5.0 * x)


def drop_wave(x):
    """Drop-Wave: ``-(1 + cos(12 sqrt(x_1^2 + x_2^2))) / (0.5 (x_1^2 + x_2^2) + 2)``.

    Domain ``[-5.12, 5.12]^2`` (``d = 2`` only). Global minimum ``f* = -1`` at ``x = 0``.
    Source: sfu.ca/~ssurjano/drop.html; BoTorch ``DropWave``.
    """
    x = _as_float(x)
    r2 = jnp.sum(x**2)
    return -(1.0 + jnp.cos(12.0 * _safe_sqrt(r2))) / (0.5 * r2 + 2.0)


def cosine_mixture(x):
    """Cosine Mixture (minimization form): ``-0.1 sum_i cos(5 pi x_i) + sum_i x_i^2``.

    Domain ``[-1, 1]^d``, any ``d >= 1``. Global minimum ``f* = -0.1 d`` at ``x = 0``.
    Sign note: PINN-BO (Phan-Trong 2024, PhD thesis, App. C.1.1) writes the variant
    ``+0.1 sum cos(5 pi x_i) + sum x_i^2``; this is the standard form
    (Ali, Khompatraporn & Zabinsky 2005, "CosineMixture" in infinity77.net's test suite),
    stated for minimization.
    """
    x = _as_float(x)
    return -0.1 * jnp.sum(jnp.cos(5 * _PI * x)) + jnp.sum(x**2)


_H6_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
_H6_A = np.array(
    [
        [10, 3, 17, 3.5, 1.7, 8],
        [0.05, 10, 17, 0.1, 8, 14],
        [3, 3.5, 1.7, 10, 17, 8],
        [17, 8, 0.05, 10, 0.1, 14],
    ]
)
_H6_P = 1e-4 * np.array(
    [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ]
)


def hartmann6(x):
    """Hartmann-6: ``-sum_{i=1}^4 alpha_i exp(-sum_j A_ij (x_j - P_ij)^2)``.

    Domain ``[0, 1]^6`` (``d = 6`` only). Global minimum ``f* = -3.32237`` (more precisely
    ``-3.322368011415515``) at ``(0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573)``.
    Source: sfu.ca/~ssurjano/hart6.html; BoTorch ``Hartmann``.
    """
    x = _as_float(x)
    alpha, a, p = (jnp.asarray(c, x.dtype) for c in (_H6_ALPHA, _H6_A, _H6_P))
    return -jnp.sum(alpha * jnp.exp(-jnp.sum(a * (x - p) ** 2, axis=-1)))


def branin(x):
    """Branin: ``(x_2 - b x_1^2 + c x_1 - r)^2 + s (1 - t) cos(x_1) + s`` with
    ``b = 5.1/(4 pi^2)``, ``c = 5/pi``, ``r = 6``, ``s = 10``, ``t = 1/(8 pi)``.

    Domain ``[-5, 10] x [0, 15]`` (``d = 2`` only). Global minimum ``f* = 10 t = 0.397887...``
    at ``(-pi, 12.275)``, ``(pi, 2.275)`` and ``(3 pi, 2.475)``.
    Source: sfu.ca/~ssurjano/branin.html; BoTorch ``Branin``.
    """
    x = _as_float(x)
    b, c, t = 5.1 / (4 * _PI**2), 5.0 / _PI, 1.0 / (8 * _PI)
    return (x[1] - b * x[0] ** 2 + c * x[0] - 6.0) ** 2 + 10.0 * (1 - t) * jnp.cos(x[0]) + 10.0


def rosenbrock(x):
    """Rosenbrock: ``sum_{i<d} [100 (x_{i+1} - x_i^2)^2 + (x_i - 1)^2]``.

    Domain ``[-5, 10]^d``, any ``d >= 2``. Global minimum ``f* = 0`` at ``x = (1, ..., 1)``.
    Source: sfu.ca/~ssurjano/rosen.html; BoTorch ``Rosenbrock``.
    """
    x = _as_float(x)
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (x[:-1] - 1.0) ** 2)


def griewank(x):
    """Griewank: ``sum_i x_i^2 / 4000 - prod_i cos(x_i / sqrt(i)) + 1``.

    Domain ``[-600, 600]^d``, any ``d >= 1``. Global minimum ``f* = 0`` at ``x = 0``.
    Source: sfu.ca/~ssurjano/griewank.html; BoTorch ``Griewank``.
    """
    x = _as_float(x)
    return jnp.sum(x**2) / 4000.0 - jnp.prod(jnp.cos(x / jnp.sqrt(_index(x)))) + 1.0


# --------------------------------------------------------------------------- optima


@functools.lru_cache(maxsize=None)
def _michalewicz_term_min(i: int, m: float) -> tuple[float, float]:
    """``(argmin, min)`` over ``[0, pi]`` of ``-sin(t) sin^{2m}(i t^2 / pi)``.

    Dense grid (about 30 points per peak half-width), then bounded Brent refinement of the
    best few grid-local minima.
    """

    from scipy.optimize import minimize_scalar  # here: scipy.optimize costs 0.5 s at import

    def g(t):
        return -np.sin(t) * (np.sin(i * t**2 / np.pi) ** 2) ** m

    t = np.linspace(0.0, np.pi, 4001 + int(100 * i * math.sqrt(max(m, 1.0))))
    v = g(t)
    local = np.nonzero((v[1:-1] <= v[:-2]) & (v[1:-1] <= v[2:]))[0] + 1
    best = (float(t[np.argmin(v)]), float(v.min()))
    for k in local[np.argsort(v[local])[:4]]:
        res = minimize_scalar(g, bounds=(t[k - 1], t[k + 1]), method="bounded",
                              options={"xatol": 1e-13})
        if res.fun < best[1]:
            best = (float(res.x), float(res.fun))
    return best


def _michalewicz_optimum(dim: int, m: float = 10):
    # Separable: f* = sum_i min_t term_i(t). Matches the published d = 2, 5, 10 values
    # (-1.8013034, -4.687658, -9.66015; sfu.ca/~ssurjano/michal.html) to their precision.
    terms = [_michalewicz_term_min(i, float(m)) for i in range(1, dim + 1)]
    return sum(v for _, v in terms), [np.array([x for x, _ in terms])]


def _at(value: Callable[[int], float], point: Callable[[int], object]):
    """An optimum function ``dim -> (f*, [x*])`` from per-dimension formulas."""
    return lambda dim, **_: (float(value(dim)), [np.broadcast_to(np.asarray(point(dim), float),
                                                                 (dim,)).copy()])


_ST_X = -2.903534027771177
_H6_X = (0.20168951100965768, 0.15001069181688867, 0.47687397422528266,
         0.2753324304910242, 0.3116516166020012, 0.6573005340634703)


def _branin_optimum(dim: int):
    pts = [(-_PI, 12.275), (_PI, 2.275), (3 * _PI, 2.475)]
    return 10.0 / (8 * _PI), [np.array(p) for p in pts]


# --------------------------------------------------------------------------- registry


class _Spec(NamedTuple):
    fn: Callable
    lower: object  # scalar (broadcast to d) or per-dimension sequence
    upper: object
    fixed_dim: Optional[int]  # None: any d >= min_dim
    min_dim: int
    optimum: Callable  # (dim, **params) -> (f* or None, list of optimizers)
    params: tuple = ()  # keyword parameters of fn that get(**kwargs) may set
    source: str = _SFU


_REGISTRY: dict[str, _Spec] = {
    "ackley": _Spec(ackley, -32.768, 32.768, None, 1, _at(lambda d: 0.0, lambda d: 0.0),
                    ("a", "b", "c"), _SFU + "ackley.html"),
    "levy": _Spec(levy, -10.0, 10.0, None, 1, _at(lambda d: 0.0, lambda d: 1.0),
                  source=_SFU + "levy.html"),
    "michalewicz": _Spec(michalewicz, 0.0, _PI, None, 1, _michalewicz_optimum, ("m",),
                         _SFU + "michal.html"),
    "rastrigin": _Spec(rastrigin, -5.12, 5.12, None, 1, _at(lambda d: 0.0, lambda d: 0.0),
                       source=_SFU + "rastr.html"),
    "styblinski_tang": _Spec(styblinski_tang, -5.0, 5.0, None, 1,
                             _at(lambda d: -39.16616570377142 * d, lambda d: _ST_X),
                             source=_SFU + "stybtang.html"),
    "drop_wave": _Spec(drop_wave, -5.12, 5.12, 2, 2, _at(lambda d: -1.0, lambda d: 0.0),
                       source=_SFU + "drop.html"),
    "cosine_mixture": _Spec(cosine_mixture, -1.0, 1.0, None, 1,
                            _at(lambda d: -0.1 * d, lambda d: 0.0),
                            source="http://infinity77.net/global_optimization/"
                            "test_functions_nd_C.html (CosineMixture)"),
    "hartmann6": _Spec(hartmann6, 0.0, 1.0, 6, 6,
                       _at(lambda d: -3.322368011415515, lambda d: _H6_X),
                       source=_SFU + "hart6.html"),
    "branin": _Spec(branin, (-5.0, 0.0), (10.0, 15.0), 2, 2, _branin_optimum,
                    source=_SFU + "branin.html"),
    "rosenbrock": _Spec(rosenbrock, -5.0, 10.0, None, 2, _at(lambda d: 0.0, lambda d: 1.0),
                        source=_SFU + "rosen.html"),
    "griewank": _Spec(griewank, -600.0, 600.0, None, 1, _at(lambda d: 0.0, lambda d: 0.0),
                      source=_SFU + "griewank.html"),
}


def _key(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch not in "-_ ")


_ALIASES = {_key(n): n for n in _REGISTRY}
_ALIASES.update({"hartmann": "hartmann6", "stybtang": "styblinski_tang"})


def available() -> list[str]:
    """Canonical names accepted by :func:`get`."""
    return list(_REGISTRY)


_PAPER_POINTS = 10_000


def get(name: str, dim: Optional[int] = None, noise_std: float | str = 0.0, **kwargs) -> Problem:
    """Build (or return the cached) :class:`~nbo_jax.types.Problem` for a benchmark.

    Args:
        name: benchmark name, case-insensitive, ``-``/``_``/space ignored
            (``"styblinski-tang"``, ``"Drop_Wave"``, ``"hartmann"``, ...); see
            :func:`available`.
        dim: input dimension. Required for any-dimension problems; optional (must match)
            for fixed-dimension ones (``branin``/``drop_wave``: 2, ``hartmann6``: 6).
        noise_std: observation-noise standard deviation, a float ``>= 0``, or ``"paper"``:
            ``sqrt(0.01 * (f_max - f_min))`` (noise variance = 1% of the function range,
            as in Phan-Trong et al. 2023, Section 7), the range estimated on ``10,000`` points
            ``lower + np.random.default_rng(0).random((10000, d)) * (upper - lower)``,
            with ``f_min = min(estimate, optimal_value)`` when the optimum is known.
        **kwargs: function parameters (``ackley``: ``a``, ``b``, ``c``;
            ``michalewicz``: ``m``).

    Problems are cached: identical (normalized) arguments return the identical object,
    which matters because problems are ``jit`` static arguments compared by identity.

    Raises:
        ValueError: unknown ``name``; missing, non-integer, too small or (for fixed-
            dimension problems) wrong ``dim``; negative/non-finite or unknown-string
            ``noise_std``.
        TypeError: a keyword argument the problem does not take.
    """
    canonical = _ALIASES.get(_key(str(name)))
    if canonical is None:
        raise ValueError(f"name: unknown benchmark {name!r}; available: {available()}")
    spec = _REGISTRY[canonical]

    if dim is None:
        if spec.fixed_dim is None:
            raise ValueError(
                f"dim is required for {canonical!r} (any dimension >= {spec.min_dim}); "
                f"pass e.g. get({canonical!r}, dim=10)"
            )
        dim = spec.fixed_dim
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise ValueError(f"dim must be an integer, got {dim!r}")
    dim = int(dim)
    if dim < 1:
        raise ValueError(f"dim must be >= 1, got {dim}")
    if spec.fixed_dim is not None and dim != spec.fixed_dim:
        raise ValueError(f"dim: {canonical!r} is defined only for dim={spec.fixed_dim}, got {dim}")
    if dim < spec.min_dim:
        raise ValueError(f"dim: {canonical!r} needs dim >= {spec.min_dim}, got {dim}")

    if isinstance(noise_std, str):
        if noise_std.strip().lower() != "paper":
            raise ValueError(f"noise_std must be a float >= 0 or 'paper', got {noise_std!r}")
        noise = "paper"
    else:
        noise = float(noise_std)
        if not (math.isfinite(noise) and noise >= 0.0):
            raise ValueError(f"noise_std must be a finite float >= 0, got {noise_std!r}")

    bad = sorted(set(kwargs) - set(spec.params))
    if bad:
        raise TypeError(
            f"{canonical!r} got unexpected keyword argument(s) {bad}; it accepts "
            f"{list(spec.params) or 'none'}"
        )
    params = tuple(sorted((k, float(v)) for k, v in kwargs.items()))
    # the precision mode is part of the key: the "paper" noise is estimated in the current
    # precision, so a problem built under float32 is not reused under jax_enable_x64
    return _build(canonical, dim, noise, params, bool(jax.config.jax_enable_x64))


@functools.lru_cache(maxsize=None)
def _build(name: str, dim: int, noise, params: tuple, x64: bool = False) -> Problem:
    spec = _REGISTRY[name]
    kw = dict(params)
    objective = functools.partial(spec.fn, **kw) if kw else spec.fn
    bounds = make_bounds(spec.lower, spec.upper, dim, name=f"{name} bounds")
    fstar, optimizers = spec.optimum(dim, **kw)
    metadata = {"source": spec.source, "params": kw, "optimizers": np.stack(optimizers)}
    if noise == "paper":
        u = np.random.default_rng(0).random((_PAPER_POINTS, dim))
        x = bounds.lower + u * (bounds.upper - bounds.lower)
        fx = np.asarray(jax.jit(jax.vmap(objective))(x), dtype=np.float64)
        f_min, f_max = float(fx.min()), float(fx.max())
        if fstar is not None:
            f_min = min(f_min, fstar)
        noise = math.sqrt(0.01 * (f_max - f_min))
        metadata.update(noise_preset="paper", f_range_estimate=(f_min, f_max))
    return Problem(
        name=name,
        dim=dim,
        bounds=bounds,
        objective=objective,
        noise_std=float(noise),
        optimal_value=fstar,
        optimizer=optimizers[0],
        metadata=metadata,
    )
