"""Constrained benchmark problems (minimization, ``c(x) <= 0`` feasible) and their :func:`get`.

Every objective is a pure ``jax.numpy`` function ``f: (d,) -> ()`` and every constraint
function is ``c: (d,) -> (K,)``; both compute in the floating dtype of ``x`` (integers are
promoted to the default float dtype), so they work in float32 and float64 and are
jit/vmap/grad compatible. Where a textbook formula divides by zero or takes ``sqrt`` at 0
inside the box, a guarded form with the same value is used (documented per function).

**Sign convention.** ``c_k(x) <= 0`` means feasible (the convention of Phan-Trong
2024, PhD thesis, Ch. 4). BoTorch (``botorch.test_functions.synthetic``) uses the opposite sign: its
``evaluate_slack_true`` returns a slack ``s_k(x) >= 0`` for feasible points. For every problem
ported from BoTorch here, ``c = -slack``.

Problems (canonical name: aliases):

- ``branin_constrained``: ``constrained_branin``, ``cbranin``
- ``simionescu``
- ``ackley_constrained``: ``constrained_ackley``
- ``hartmann6_constrained``: ``constrained_hartmann``, ``hartmann_constrained``
- ``gas_transmission``: ``gas_transmission_compressor``
- ``speed_reducer``
- ``pressure_vessel``
- ``welded_beam``: ``welded_beam_so``
- ``tension_compression_spring``: ``tension_compression_string``

Names are case-insensitive and ``-``/``_``/spaces are ignored. The stored optimizers of the
engineering problems were computed for this module with scipy (SLSQP from hundreds of random
starts in float64, then refined on the active constraints; see each function's docstring).

The BoTorch source read for the ports is ``pytorch/botorch``,
``botorch/test_functions/synthetic.py`` at commit
``5ffa491a947ef903f65c3bef1fc16a7e0b0f8360``; that version defines no ``_optimal_value`` for
``PressureVessel``, ``WeldedBeamSO``, ``TensionCompressionString`` or ``SpeedReducer``, so the
optimal values here are our own (compared with the literature values in the docstrings).
"""

from __future__ import annotations

import functools
import math
from typing import Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from nbo_jax.types import Problem, make_bounds

from .synthetic import _as_float, _safe_sqrt, ackley, branin, hartmann6

__all__ = [
    "branin_constraints",
    "simionescu",
    "simionescu_constraints",
    "ackley_constraints",
    "hartmann6_constraints",
    "gas_transmission",
    "gas_transmission_constraints",
    "speed_reducer",
    "speed_reducer_constraints",
    "pressure_vessel",
    "pressure_vessel_constraints",
    "welded_beam",
    "welded_beam_constraints",
    "tension_compression_spring",
    "tension_compression_spring_constraints",
    "get",
    "available",
    "canonical_name",
]

_BOTORCH = "https://github.com/pytorch/botorch/blob/main/botorch/test_functions/synthetic.py"
_BOTORCH_SIGN = "c(x) <= 0 feasible; BoTorch's slack = -c"
_OURS_SIGN = "c(x) <= 0 feasible"


def _safe_norm(v):
    """``||v||_2`` with a zero (not NaN) gradient at ``v = 0``."""
    return _safe_sqrt(jnp.sum(v**2))


# --------------------------------------------------------------------------- thesis problems


def branin_constraints(x):
    """Constraint of ``branin_constrained``: ``c(x) = (x_1 - 2.5)^2 + (x_2 - 7.5)^2 - 50``.

    Objective: :func:`nbo_jax.benchmarks.synthetic.branin` on ``[-5, 10] x [0, 15]``.
    Of Branin's three global minimizers only ``(pi, 2.275)`` is feasible (``c = -22.29``);
    ``(-pi, 12.275)`` (``c = 4.63``) and ``(3 pi, 2.475)`` (``c = 23.20``) are not, so
    ``f* = 10 / (8 pi) = 0.397887...`` at ``(pi, 2.275)``. Source: the authors' Neural-CBO
    code (Phan-Trong 2024, PhD thesis, Section 4.3.2, which does not print the constraint).
    Returns shape ``(1,)``.
    """
    x = _as_float(x)
    return jnp.reshape((x[0] - 2.5) ** 2 + (x[1] - 7.5) ** 2 - 50.0, (1,))


def simionescu(x):
    """Simionescu objective ``f(x) = 0.1 x_1 x_2`` on ``[-1.25, 1.25]^2``.

    Minimum ``f* = -0.072`` at ``(+-1.2/sqrt(2), -+1.2/sqrt(2)) = (+-0.84852813, -+0.84852813)``
    with the constraint active. The often-quoted ``-0.072625`` (e.g. Wikipedia's "Test
    functions for optimization") is inconsistent with that point: ``0.1 * 0.84852813^2 =
    0.072`` exactly, and ``f = 0.05 (1 + 0.2 cos 8 theta)^2 sin 2 theta`` on the constraint
    boundary is maximal in magnitude at ``theta = 3 pi / 4``, where it equals ``-0.072``.
    Source: Simionescu & Beale (2002); Phan-Trong 2024, PhD thesis, Section 4.3.2.
    """
    x = _as_float(x)
    return 0.1 * x[0] * x[1]


def simionescu_constraints(x):
    """``c(x) = x_1^2 + x_2^2 - (1 + 0.2 cos(8 atan(x_1 / x_2)))^2``, shape ``(1,)``.

    Computed with ``arctan2(x_1, x_2)``: it differs from ``atan(x_1 / x_2)`` by a multiple of
    ``pi``, which ``cos(8 .)`` does not see, and it is defined at ``x_2 = 0``. At the origin
    (where the angle is undefined) the angle is taken as 0 and the gradient is finite.
    """
    x = _as_float(x)
    r2 = x[0] ** 2 + x[1] ** 2
    pos = r2 > 0
    theta = jnp.arctan2(jnp.where(pos, x[0], 0.0), jnp.where(pos, x[1], 1.0))
    return jnp.reshape(r2 - (1.0 + 0.2 * jnp.cos(8.0 * theta)) ** 2, (1,))


def ackley_constraints(x):
    """Constraints of ``ackley_constrained`` (``d = 5``, box ``[-5, 3]^5``), shape ``(2,)``.

    ``c_1 = 1 - (||x - 1||_2 - 5.5)^2`` (feasible when ``||x - 1|| <= 4.5`` or ``>= 6.5``) and
    ``c_2 = ||x||_inf^2 - 9``. The origin is feasible (``c = (-9.653, -9)``), so the Ackley
    optimum ``f* = 0`` at ``x = 0`` stands. Objective: :func:`~nbo_jax.benchmarks.synthetic.
    ackley`. The norm uses a gradient-safe square root (finite gradient at ``x = 1``).
    Source: the authors' Neural-CBO code (Phan-Trong 2024, PhD thesis, Section 4.3.2, which
    does not print the constraints).
    """
    x = _as_float(x)
    c1 = 1.0 - (_safe_norm(x - 1.0) - 5.5) ** 2
    c2 = jnp.max(x**2) - 9.0
    return jnp.stack([c1, c2])


def hartmann6_constraints(x):
    """Constraint of ``hartmann6_constrained``: ``c(x) = ||x||_2 - 1``, shape ``(1,)``.

    BoTorch ``ConstrainedHartmann`` (slack ``1 - ||x||``; Letham et al. 2019, the BoTorch
    constrained-BO tutorial). The unconstrained Hartmann-6 minimizer has norm ``0.94635 < 1``,
    so ``f* = -3.322368011415515`` at the usual optimizer. Gradient-safe norm at ``x = 0``.
    """
    x = _as_float(x)
    return jnp.reshape(_safe_norm(x) - 1.0, (1,))


def gas_transmission(x):
    """Gas transmission compressor design (Kumar et al. 2020), bounds
    ``[20, 50] x [1, 10] x [20, 50] x [0.1, 60]``:

    ``f = 8.61e5 x_1^(1/2) x_2 x_3^(-2/3) x_4^(-1/2) + 3.69e4 x_3 + 7.72e8 x_1^(-1) x_2^0.219
    - 765.43e6 x_1^(-1)``.

    Best known ``f = 2964895.417`` (Kumar et al.: ``2.9648954173e6``); our refinement gives
    ``2964895.417339161`` at ``x_1 = 50`` (upper bound) with the constraint active
    (``x_4 = x_2^2 - 1``; the stationary point in ``(x_2, x_3)`` solved to 1e-14).
    Source: A. Kumar, G. Wu, M. Z. Ali, R. Mallipeddi, P. N. Suganthan, S. Das, "A test-suite
    of non-convex constrained optimization problems from the real-world and some baseline
    results", Swarm and Evolutionary Computation 56 (2020) 100693.
    """
    x = _as_float(x)
    x1, x2, x3, x4 = x[0], x[1], x[2], x[3]
    return (8.61e5 * jnp.sqrt(x1) * x2 * x3 ** (-2.0 / 3.0) / jnp.sqrt(x4)
            + 3.69e4 * x3 + 7.72e8 / x1 * x2**0.219 - 765.43e6 / x1)


def gas_transmission_constraints(x):
    """``c(x) = x_4 x_2^(-2) + x_2^(-2) - 1``, shape ``(1,)`` (Kumar et al. 2020)."""
    x = _as_float(x)
    x2, x4 = x[1], x[3]
    return jnp.reshape(x4 / x2**2 + 1.0 / x2**2 - 1.0, (1,))


def speed_reducer(x):
    """Speed reducer weight (Golinski; BoTorch ``SpeedReducer``; Lemonge et al. 2010), ``d = 7``:

    ``f = 0.7854 x_1 x_2^2 (3.3333 x_3^2 + 14.9334 x_3 - 43.0934) - 1.508 x_1 (x_6^2 + x_7^2)
    + 7.4777 (x_6^3 + x_7^3) + 0.7854 (x_4 x_6^2 + x_5 x_7^2)``.

    Bounds ``[2.6, 3.6], [0.7, 0.8], [17, 28], [7.3, 8.3], [7.8, 8.3], [2.9, 3.9], [5.0, 5.5]``
    (``x_3``, the number of teeth, is treated as continuous, as in BoTorch). Best known
    ``f = 2996.3482`` (Lemonge et al. 2010 and later papers); ours:
    ``2996.34816496853`` at ``(3.5, 0.7, 17, 7.3, 7.8, 3.3502146660964476, 5.286683229757917)``
    where ``x_6, x_7`` solve ``c_5 = c_6 = 0`` in closed form and ``c_8 = 0``.
    """
    x = _as_float(x)
    x1, x2, x3, x4, x5, x6, x7 = (x[i] for i in range(7))
    return (0.7854 * x1 * x2**2 * (3.3333 * x3**2 + 14.9334 * x3 - 43.0934)
            - 1.508 * x1 * (x6**2 + x7**2)
            + 7.4777 * (x6**3 + x7**3)
            + 0.7854 * (x4 * x6**2 + x5 * x7**2))


def speed_reducer_constraints(x):
    """The 11 speed-reducer constraints in normalized form ``g_k <= 0``, shape ``(11,)``:

    ``27/(x1 x2^2 x3) - 1``; ``397.5/(x1 x2^2 x3^2) - 1``; ``1.93 x4^3/(x2 x3 x6^4) - 1``;
    ``1.93 x5^3/(x2 x3 x7^4) - 1``; ``sqrt((745 x4/(x2 x3))^2 + 16.9e6)/(110 x6^3) - 1``;
    ``sqrt((745 x5/(x2 x3))^2 + 157.5e6)/(85 x7^3) - 1``; ``x2 x3/40 - 1``; ``5 x2/x1 - 1``;
    ``x1/(12 x2) - 1``; ``(1.5 x6 + 1.9)/x4 - 1``; ``(1.1 x7 + 1.9)/x5 - 1``.

    Notes: BoTorch's ``SpeedReducer`` has the same feasible set but writes c5, c6, c7, c8, c9
    unnormalized (``sqrt(...)/(0.1 x6^3) - 1100``, ``... - 850``, ``x2 x3 - 40``,
    ``5 - x1/x2``, ``x1/x2 - 12``): each is a positive multiple of ours. ``16.9e6`` in c5
    follows BoTorch (and Kumar et al. 2020); the thesis prints ``16.91e6`` (with it the
    optimum would be ``2996.4313``). The thesis prints c9 as ``-x1/x2 - 12 <= 0``, which is
    always satisfied (a misprint); BoTorch uses ``x1/x2 - 12 <= 0``, as here.
    """
    x = _as_float(x)
    x1, x2, x3, x4, x5, x6, x7 = (x[i] for i in range(7))
    return jnp.stack([
        27.0 / (x1 * x2**2 * x3) - 1.0,
        397.5 / (x1 * x2**2 * x3**2) - 1.0,
        1.93 * x4**3 / (x2 * x3 * x6**4) - 1.0,
        1.93 * x5**3 / (x2 * x3 * x7**4) - 1.0,
        jnp.sqrt((745.0 * x4 / (x2 * x3)) ** 2 + 16.9e6) / (110.0 * x6**3) - 1.0,
        jnp.sqrt((745.0 * x5 / (x2 * x3)) ** 2 + 157.5e6) / (85.0 * x7**3) - 1.0,
        x2 * x3 / 40.0 - 1.0,
        5.0 * x2 / x1 - 1.0,
        x1 / (12.0 * x2) - 1.0,
        (1.5 * x6 + 1.9) / x4 - 1.0,
        (1.1 * x7 + 1.9) / x5 - 1.0,
    ])


# --------------------------------------------------------------------------- BoTorch ports

_PV_STEP = 0.0625


def _round_nearest(v, increment, lo, hi):
    """BoTorch ``round_nearest``: nearest multiple of ``increment`` (ties to even, like
    ``torch.round``), moved one step back inside ``[lo, hi]``. Zero gradient almost everywhere."""
    r = jnp.round(v / increment) * increment
    r = jnp.where(r < lo, r + increment, r)
    return jnp.where(r > hi, r - increment, r)


def pressure_vessel(x):
    """Pressure vessel cost (BoTorch ``PressureVessel``; Coello Coello & Mezura Montes 2002).

    Bounds ``[0, 10] x [0, 10] x [10, 50] x [150, 200]``. As in BoTorch, the objective
    rounds ``x_1, x_2`` (shell and head thickness) to multiples of ``0.0625`` (ties to even),
    ``f = 0.6224 r_1 x_3 x_4 + 1.7781 r_2 x_3^2 + 3.1661 r_1^2 x_4 + 19.84 r_1^2 x_3``,
    while the constraints see the raw ``x_1, x_2``.

    Because of that (faithfully ported) mismatch the optimum of this definition is below the
    literature value 6059.714335 (Yang et al. 2013, at ``(0.8125, 0.4375, 42.0984, 176.6366)``,
    which is feasible here): raw ``x_1 = 0.78125`` rounds to ``0.75`` but allows
    ``x_3 = 0.78125 / 0.0193``. Exhaustive enumeration of the rounded values (all
    161 x 161 pairs, the continuous ``x_3, x_4`` solved exactly with the volume constraint
    active) gives ``f* = 5633.950241007438`` at
    ``(0.78125, 0.4, 40.479274611398964, 197.78934758995274)``. The optimizer relies on the
    tie ``0.78125 / 0.0625 = 12.5`` rounding to 12 (exact in float32 and float64).
    """
    x = _as_float(x)
    x1 = _round_nearest(x[0], _PV_STEP, 0.0, 10.0)
    x2 = _round_nearest(x[1], _PV_STEP, 0.0, 10.0)
    x3, x4 = x[2], x[3]
    return (0.6224 * x1 * x3 * x4 + 1.7781 * x2 * x3**2 + 3.1661 * x1**2 * x4
            + 19.84 * x1**2 * x3)


def pressure_vessel_constraints(x):
    """``c = (-x1 + 0.0193 x3, -x2 + 0.00954 x3, -pi x3^2 x4 - 4/3 pi x3^3 + 1296000,
    x4 - 240)``, shape ``(4,)`` (BoTorch's slack negated; raw, unrounded ``x1, x2``)."""
    x = _as_float(x)
    x1, x2, x3, x4 = x[0], x[1], x[2], x[3]
    return jnp.stack([
        -x1 + 0.0193 * x3,
        -x2 + 0.00954 * x3,
        -math.pi * x3**2 * x4 - (4.0 / 3.0) * math.pi * x3**3 + 1296000.0,
        x4 - 240.0,
    ])


def welded_beam(x):
    """Welded beam cost (BoTorch ``WeldedBeamSO``; Coello Coello & Mezura Montes 2002):
    ``f = 1.10471 x_1^2 x_2 + 0.04811 x_3 x_4 (14 + x_2)`` on
    ``[0.125, 10] x [0.1, 10]^3``.

    BoTorch's buckling load is ``P_c = 4.013 E x_3 x_4^3 * 6 / L^2 (1 - x_3 sqrt(E/G)/(4L))``
    where the classical formula has ``/ 6`` (``sqrt(x_3^2 x_4^6 / 36) = x_3 x_4^3 / 6``): 36
    times larger, so the buckling constraint is far from binding and the optimum of this
    definition is ``f* = 1.5870775121429552`` at ``(0.168, 4.06708477307799, 10, 0.168)``
    (``x_3`` at its upper bound; shear stress, bending stress and ``x_1 <= x_4`` active),
    below the classical ``1.724852`` at ``(0.205730, 3.470489, 9.036624, 0.205730)``
    (feasible here). Ported as is.
    """
    x = _as_float(x)
    x1, x2, x3, x4 = x[0], x[1], x[2], x[3]
    return 1.10471 * x1**2 * x2 + 0.04811 * x3 * x4 * (14.0 + x2)


def welded_beam_constraints(x):
    """The six welded-beam constraints (BoTorch's slack negated), shape ``(6,)``:
    shear stress ``tau - 13600``, bending stress ``sigma - 30000``, ``x1 - x4``,
    ``0.10471 x1^2 + 0.04811 x3 x4 (14 + x2) - 5``, deflection ``delta - 0.25``,
    buckling ``6000 - P_c`` (with P = 6000, L = 14, E = 30e6, G = 12e6)."""
    x = _as_float(x)
    x1, x2, x3, x4 = x[0], x[1], x[2], x[3]
    p, length, e, g = 6000.0, 14.0, 30e6, 12e6
    m = p * (length + x2 / 2.0)
    r = jnp.sqrt(0.25 * (x2**2 + (x1 + x3) ** 2))
    j = 2.0 * math.sqrt(2.0) * x1 * x2 * (x2**2 / 12.0 + 0.25 * (x1 + x3) ** 2)
    p_c = (4.013 * e * x3 * x4**3 * 6.0 / length**2
           * (1.0 - 0.25 * x3 * math.sqrt(e / g) / length))
    t1 = p / (math.sqrt(2.0) * x1 * x2)
    t2 = m * r / j
    tau = jnp.sqrt(t1**2 + t1 * t2 * x2 / r + t2**2)
    sigma = 6.0 * p * length / (x4 * x3**2)
    delta = 4.0 * p * length**3 / (e * x3**3 * x4)
    return jnp.stack([
        tau - 13600.0,
        sigma - 30000.0,
        x1 - x4,
        0.10471 * x1**2 + 0.04811 * x3 * x4 * (14.0 + x2) - 5.0,
        delta - 0.25,
        p - p_c,
    ])


def tension_compression_spring(x):
    """Tension/compression spring weight (BoTorch ``TensionCompressionString``; Hedar &
    Fukushima 2006): ``f = x_1^2 x_2 (x_3 + 2)`` on ``[0.01, 1] x [0.01, 1] x [0.01, 20]``
    (wire diameter, coil diameter, number of coils).

    ``f* = 0.01266523278831941`` at ``(0.05168906110810525, 0.3567177404090978,
    11.288965715871045)`` (``c_1 = c_2 = 0``); literature ``0.012665`` (Hedar & Fukushima;
    ``0.0126652328`` elsewhere).
    """
    x = _as_float(x)
    return x[0] ** 2 * x[1] * (x[2] + 2.0)


def tension_compression_spring_constraints(x):
    """BoTorch's four constraints, clipped above at 100 like BoTorch
    (``slack = -min(g, 100)``), shape ``(4,)``:
    ``1 - x2^3 x3 / (71785 x1^4)``;
    ``(4 x2^2 - x1 x2) / (12566 x1^3 (x2 - x1)) + 1 / (5108 x1^2) - 1``;
    ``1 - 140.45 x1 / (x3 x2^2)``; ``(x1 + x2) / 1.5 - 1``.

    The second divides by ``x2 - x1``, which vanishes inside the box: at ``x2 == x1`` exactly
    the term is taken as ``+inf`` (BoTorch's value, since the numerator is ``3 x1^2 > 0``), so
    the clipped constraint is 100 with a zero gradient instead of NaN.
    """
    x = _as_float(x)
    x1, x2, x3 = x[0], x[1], x[2]
    den = x2 - x1
    zero = den == 0
    frac = jnp.where(zero, jnp.inf,
                     (4.0 * x2**2 - x1 * x2) / (12566.0 * x1**3 * jnp.where(zero, 1.0, den)))
    g = jnp.stack([
        1.0 - x2**3 * x3 / (71785.0 * x1**4),
        frac + 1.0 / (5108.0 * x1**2) - 1.0,
        1.0 - 140.45 * x1 / (x3 * x2**2),
        (x1 + x2) / 1.5 - 1.0,
    ])
    return jnp.minimum(g, 100.0)


# --------------------------------------------------------------------------- registry


class _Spec(NamedTuple):
    objective: Callable
    constraints: Callable
    lower: tuple
    upper: tuple
    optimal_value: float
    optimizers: tuple  # of tuples (d,)
    constraint_names: tuple
    source: str
    sign_convention: str
    notes: str = ""
    extra: tuple = ()  # (key, value) pairs added to metadata


_H6_X = (0.20168951100965768, 0.15001069181688867, 0.47687397422528266,
         0.2753324304910242, 0.3116516166020012, 0.6573005340634703)
_SIM_A = 1.2 / math.sqrt(2.0)

_REGISTRY: dict[str, _Spec] = {
    "branin_constrained": _Spec(
        branin, branin_constraints, (-5.0, 0.0), (10.0, 15.0),
        10.0 / (8 * math.pi), ((math.pi, 2.275),),
        ("(x1 - 2.5)^2 + (x2 - 7.5)^2 - 50 <= 0 (disk)",),
        "Neural-CBO thesis (Phan-Trong 2024, Section 4.3.2) / authors' code; Branin: "
        "https://www.sfu.ca/~ssurjano/branin.html",
        _OURS_SIGN,
        "Branin's minimizers (-pi, 12.275) and (3 pi, 2.475) are infeasible.",
        (("infeasible_unconstrained_optimizers", ((-math.pi, 12.275), (3 * math.pi, 2.475))),),
    ),
    "simionescu": _Spec(
        simionescu, simionescu_constraints, (-1.25, -1.25), (1.25, 1.25),
        -0.072, ((_SIM_A, -_SIM_A), (-_SIM_A, _SIM_A)),
        ("x1^2 + x2^2 - (1 + 0.2 cos(8 atan(x1/x2)))^2 <= 0 (flower)",),
        "P. A. Simionescu & D. G. Beale (2002), ASME DETC; Neural-CBO thesis (Phan-Trong "
        "2024, Section 4.3.2)",
        _OURS_SIGN,
        "f* = -0.072 exactly at (+-1.2/sqrt 2, -+1.2/sqrt 2); the commonly quoted -0.072625 "
        "is inconsistent with that point.",
    ),
    "ackley_constrained": _Spec(
        ackley, ackley_constraints, (-5.0,) * 5, (3.0,) * 5,
        0.0, ((0.0,) * 5,),
        ("1 - (||x - 1||_2 - 5.5)^2 <= 0 (outside a shell)", "||x||_inf^2 - 9 <= 0 (box)"),
        "Neural-CBO thesis (Phan-Trong 2024, Section 4.3.2) / authors' code; Ackley: "
        "https://www.sfu.ca/~ssurjano/ackley.html",
        _OURS_SIGN,
    ),
    "hartmann6_constrained": _Spec(
        hartmann6, hartmann6_constraints, (0.0,) * 6, (1.0,) * 6,
        -3.322368011415515, (_H6_X,),
        ("||x||_2 - 1 <= 0 (unit ball)",),
        _BOTORCH + " (ConstrainedHartmann); Letham et al. (2019), Bayesian Analysis 14(2)",
        _BOTORCH_SIGN,
        "The unconstrained optimizer has norm 0.94635, so it stays optimal.",
    ),
    "gas_transmission": _Spec(
        gas_transmission, gas_transmission_constraints,
        (20.0, 1.0, 20.0, 0.1), (50.0, 10.0, 50.0, 60.0),
        2964895.417339161, ((50.0, 1.178283951844929, 24.592590114135184, 0.38835307117530316),),
        ("x4 / x2^2 + 1 / x2^2 - 1 <= 0",),
        "Kumar et al. (2020), Swarm and Evolutionary Computation 56:100693, gas transmission "
        "compressor design (best known 2964895.4173); Neural-CBO thesis",
        _OURS_SIGN,
        "Optimizer refined with scipy (x1 at its upper bound, constraint active).",
        (("literature_optimal_value", 2964895.4173),),
    ),
    "speed_reducer": _Spec(
        speed_reducer, speed_reducer_constraints,
        (2.6, 0.7, 17.0, 7.3, 7.8, 2.9, 5.0), (3.6, 0.8, 28.0, 8.3, 8.3, 3.9, 5.5),
        2996.34816496853,
        ((3.5, 0.7, 17.0, 7.3, 7.8, 3.3502146660964476, 5.286683229757917),),
        ("bending stress of gear teeth: 27/(x1 x2^2 x3) - 1",
         "surface stress of gear teeth: 397.5/(x1 x2^2 x3^2) - 1",
         "transverse deflection of shaft 1: 1.93 x4^3/(x2 x3 x6^4) - 1",
         "transverse deflection of shaft 2: 1.93 x5^3/(x2 x3 x7^4) - 1",
         "stress in shaft 1: sqrt((745 x4/(x2 x3))^2 + 16.9e6)/(110 x6^3) - 1",
         "stress in shaft 2: sqrt((745 x5/(x2 x3))^2 + 157.5e6)/(85 x7^3) - 1",
         "x2 x3/40 - 1",
         "5 x2/x1 - 1",
         "x1/(12 x2) - 1",
         "(1.5 x6 + 1.9)/x4 - 1",
         "(1.1 x7 + 1.9)/x5 - 1"),
        _BOTORCH + " (SpeedReducer); Lemonge et al. (2010), Mecanica Computacional "
        "XXIX:9287-9303; Neural-CBO thesis",
        _BOTORCH_SIGN + " up to a positive factor per constraint (ours are normalized)",
        "16.9e6 in c5 as in BoTorch and Kumar et al. (the thesis prints 16.91e6); c9 is "
        "x1/x2 - 12 <= 0 (the thesis misprints it as -x1/x2 - 12 <= 0, always satisfied).",
        (("literature_optimal_value", 2996.3482),),
    ),
    "pressure_vessel": _Spec(
        pressure_vessel, pressure_vessel_constraints,
        (0.0, 0.0, 10.0, 150.0), (10.0, 10.0, 50.0, 200.0),
        5633.950241007438, ((0.78125, 0.4, 40.479274611398964, 197.78934758995274),),
        ("shell thickness: -x1 + 0.0193 x3", "head thickness: -x2 + 0.00954 x3",
         "volume: -pi x3^2 x4 - 4/3 pi x3^3 + 1296000", "length: x4 - 240"),
        _BOTORCH + " (PressureVessel); Coello Coello & Mezura Montes (2002), Advanced "
        "Engineering Informatics 16(3)",
        _BOTORCH_SIGN,
        "BoTorch rounds x1, x2 to multiples of 0.0625 in the objective only; the optimum of "
        "this definition (5633.950241) is below the literature 6059.714335 for that reason.",
        (("literature_optimal_value", 6059.714335048436),
         ("literature_optimizer", (0.8125, 0.4375, 42.0984455958549, 176.6365958424394))),
    ),
    "welded_beam": _Spec(
        welded_beam, welded_beam_constraints,
        (0.125, 0.1, 0.1, 0.1), (10.0, 10.0, 10.0, 10.0),
        1.5870775121429552, ((0.168, 4.06708477307799, 10.0, 0.168),),
        ("shear stress: tau - 13600", "bending stress: sigma - 30000", "x1 - x4",
         "cost: 0.10471 x1^2 + 0.04811 x3 x4 (14 + x2) - 5", "deflection: delta - 0.25",
         "buckling: 6000 - P_c"),
        _BOTORCH + " (WeldedBeamSO); Coello Coello & Mezura Montes (2002), Advanced "
        "Engineering Informatics 16(3)",
        _BOTORCH_SIGN,
        "BoTorch's P_c has '* 6' where the classical formula has '/ 6'; the buckling "
        "constraint is far from binding and f* = 1.587078 < classical 1.724852.",
        (("literature_optimal_value", 1.724852),
         ("literature_optimizer", (0.205730, 3.470489, 9.036624, 0.205730))),
    ),
    "tension_compression_spring": _Spec(
        tension_compression_spring, tension_compression_spring_constraints,
        (0.01, 0.01, 0.01), (1.0, 1.0, 20.0),
        0.01266523278831941, ((0.05168906110810525, 0.3567177404090978, 11.288965715871045),),
        ("minimum deflection: 1 - x2^3 x3/(71785 x1^4)",
         "shear stress: (4 x2^2 - x1 x2)/(12566 x1^3 (x2 - x1)) + 1/(5108 x1^2) - 1",
         "surge frequency: 1 - 140.45 x1/(x3 x2^2)",
         "outer diameter: (x1 + x2)/1.5 - 1"),
        _BOTORCH + " (TensionCompressionString); Hedar & Fukushima (2006), J. Global "
        "Optimization 35(4)",
        _BOTORCH_SIGN,
        "Constraints clipped above at 100 as in BoTorch.",
        (("literature_optimal_value", 0.012665),),
    ),
}


def _key(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch not in "-_ ")


_ALIASES = {_key(n): n for n in _REGISTRY}
_ALIASES.update({
    "constrainedbranin": "branin_constrained",
    "cbranin": "branin_constrained",
    "constrainedackley": "ackley_constrained",
    "constrainedhartmann": "hartmann6_constrained",
    "hartmannconstrained": "hartmann6_constrained",
    "constrainedhartmann6": "hartmann6_constrained",
    "gastransmissioncompressor": "gas_transmission",
    "weldedbeamso": "welded_beam",
    "tensioncompressionstring": "tension_compression_spring",
})


def available() -> list[str]:
    """Canonical names of the constrained problems accepted by :func:`get`."""
    return list(_REGISTRY)


def canonical_name(name) -> Optional[str]:
    """The canonical constrained-problem name for ``name`` (aliases, case, ``-``/``_``/spaces
    ignored), or ``None`` when ``name`` is not a constrained problem."""
    return _ALIASES.get(_key(str(name)))


_PAPER_POINTS = 10_000


def parse_noise(value, what: str):
    """``value`` as ``"paper"`` or a finite float >= 0; ValueError naming ``what`` otherwise."""
    if isinstance(value, str):
        if value.strip().lower() != "paper":
            raise ValueError(f"{what} must be a float >= 0 or 'paper', got {value!r}")
        return "paper"
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a float >= 0 or 'paper', got {value!r}") from None
    if not (math.isfinite(v) and v >= 0.0):
        raise ValueError(f"{what} must be a finite float >= 0, got {value!r}")
    return v


def _parse_constraint_noise(value, noise, k: int, name: str):
    if value is None:
        return "paper" if noise == "paper" else (0.0,) * k
    if isinstance(value, str) or np.ndim(value) == 0:
        v = parse_noise(value, "constraint_noise_std")
        return v if v == "paper" else (v,) * k
    if np.ndim(value) != 1:
        raise ValueError(f"constraint_noise_std must be a float, 'paper' or a 1-D sequence of "
                         f"{k} floats, got shape {np.shape(value)}")
    seq = list(value)
    if len(seq) != k:
        raise ValueError(f"constraint_noise_std: {name!r} has {k} constraint(s), got a sequence "
                         f"of length {len(seq)}")
    out = []
    for i, s in enumerate(seq):
        if isinstance(s, str):
            raise ValueError(f"constraint_noise_std[{i}] must be a float >= 0, got {s!r}")
        out.append(parse_noise(s, f"constraint_noise_std[{i}]"))
    return tuple(out)


def get(name: str, dim: Optional[int] = None, noise_std: float | str = 0.0,
        constraint_noise_std=None) -> Problem:
    """Build (or return the cached) constrained :class:`~nbo_jax.types.Problem`.

    Args:
        name: problem name or alias (see the module docstring and :func:`available`).
        dim: optional; if given it must equal the problem's fixed dimension.
        noise_std: objective noise, a float ``>= 0`` or ``"paper"``:
            ``sqrt(0.01 * (f_max - f_min))`` estimated on the 10,000 points
            ``lower + np.random.default_rng(0).random((10000, d)) * (upper - lower)``
            with ``f_min = min(estimate, optimal_value)`` (as in
            :func:`nbo_jax.benchmarks.synthetic.get`).
        constraint_noise_std: a float ``>= 0`` (same for all constraints), a sequence of ``K``
            floats, or ``"paper"`` (per constraint ``sqrt(0.01 * (c_max_k - c_min_k))`` on the
            same points). ``None``: ``"paper"`` when ``noise_std == "paper"``, else ``0.0``.

    The returned problem has ``constraints: (d,) -> (K,)`` (``c <= 0`` feasible),
    ``constraint_noise_std`` a tuple of ``K`` floats, ``optimal_value`` the best known
    feasible value, ``optimizer`` a feasible point attaining it, and ``metadata`` with
    ``source``, ``n_constraints``, ``constraint_names``, ``sign_convention``, ``optimizers``,
    ``notes`` and, for "paper" noise, ``f_range_estimate`` / ``constraint_range_estimates``.
    Problems are cached per normalized arguments and precision mode (``jax_enable_x64``).

    Raises:
        ValueError: unknown name; ``dim`` not an integer or not the problem's dimension;
            negative, non-finite or unknown-string noise; a noise sequence of the wrong length.
    """
    canonical = canonical_name(name)
    if canonical is None:
        raise ValueError(f"name: unknown constrained benchmark {name!r}; available: "
                         f"{available()}")
    spec = _REGISTRY[canonical]
    d = len(spec.lower)
    if dim is not None:
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
            raise ValueError(f"dim must be an integer, got {dim!r}")
        if int(dim) != d:
            raise ValueError(f"dim: {canonical!r} is defined only for dim={d}, got {int(dim)}")
    noise = parse_noise(noise_std, "noise_std")
    k = len(spec.constraint_names)
    cnoise = _parse_constraint_noise(constraint_noise_std, noise, k, canonical)
    return _build(canonical, noise, cnoise, bool(jax.config.jax_enable_x64))


@functools.lru_cache(maxsize=None)
def _build(name: str, noise, cnoise, x64: bool = False) -> Problem:
    spec = _REGISTRY[name]
    d = len(spec.lower)
    k = len(spec.constraint_names)
    bounds = make_bounds(spec.lower, spec.upper, d, name=f"{name} bounds")
    optimizers = np.array(spec.optimizers, dtype=np.float64)
    metadata = {
        "source": spec.source,
        "n_constraints": k,
        "constraint_names": spec.constraint_names,
        "sign_convention": spec.sign_convention,
        "optimizers": optimizers,
        "notes": spec.notes,
    }
    metadata.update(dict(spec.extra))
    if noise == "paper" or cnoise == "paper":
        u = np.random.default_rng(0).random((_PAPER_POINTS, d))
        x = bounds.lower + u * (bounds.upper - bounds.lower)
        if noise == "paper":
            fx = np.asarray(jax.jit(jax.vmap(spec.objective))(x), dtype=np.float64)
            f_min = min(float(np.nanmin(fx)), spec.optimal_value)
            f_max = float(np.nanmax(fx))
            noise = math.sqrt(0.01 * (f_max - f_min))
            metadata.update(noise_preset="paper", f_range_estimate=(f_min, f_max))
        if cnoise == "paper":
            cx = np.asarray(jax.jit(jax.vmap(spec.constraints))(x), dtype=np.float64)
            c_min, c_max = np.nanmin(cx, axis=0), np.nanmax(cx, axis=0)
            cnoise = tuple(math.sqrt(0.01 * float(hi - lo)) for lo, hi in zip(c_min, c_max))
            metadata.update(
                constraint_noise_preset="paper",
                constraint_range_estimates=tuple(
                    (float(lo), float(hi)) for lo, hi in zip(c_min, c_max)),
            )
    return Problem(
        name=name,
        dim=d,
        bounds=bounds,
        objective=spec.objective,
        noise_std=float(noise),
        optimal_value=float(spec.optimal_value),
        optimizer=optimizers[0].copy(),
        constraints=spec.constraints,
        constraint_noise_std=tuple(float(v) for v in cnoise),
        metadata=metadata,
    )
