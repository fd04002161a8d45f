"""Multi-objective test problems with known Pareto fronts, each a
:class:`~nbo_jax.types.Problem` whose ``objective(x (d,)) -> (m,)`` is MINIMIZED in every
objective, with BoTorch's reference point (``reference_point``; BoTorch defines these
problems for minimization too, and negates the values and the point when asked to maximize)
and the hypervolume of the true front against it (``max_hypervolume``, for
:func:`nbo_jax.pareto.log_hypervolume_difference`).

| name | d | m | front | reference point | max hypervolume |
|---|---|---|---|---|---|
| ``branin_currin`` | 2 | 2 | NSGA-II approximation | (18, 6) | 59.3601 (BoTorch's) |
| ``dtlz1`` | 6 | 2, 3 | ``sum_i f_i = 1/2`` | 400 each | ``400^m - 0.5^m / m!`` |
| ``dtlz2`` | 6 | 2, 3 | ``sum_i f_i^2 = 1`` | 1.1 each | ``1.1^m - (unit ball's volume) / 2^m`` |
| ``zdt1``, ``zdt2``, ``zdt3`` | 6 | 2 | ``x_2 = ... = x_d = 0`` | (11, 11) | 120 + 2/3, 120 + 1/3, 128.778 |
| ``c2dtlz2`` | 6 | 2, 3 | DTLZ2's, feasible arcs | 1.1 each | closed form for m = 2 |
| ``vehicle_safety`` | 5 | 3 | approximated (Tanabe & Ishibuchi) | (1864.72, 11.82, 0.2904) | 246.816 (BoTorch's) |

Definitions (``x`` in ``[0, 1]^d`` unless stated, ``k = d - m + 1`` DTLZ position-free
inputs ``x_M = x[m-1:]``, objectives indexed ``i = 0..m-1``):

- Branin-Currin (Belakaria, Deshwal & Doppa 2019, "Max-value entropy search for
  multi-objective Bayesian optimization", NeurIPS): ``f_0`` = Branin at
  ``(15 x_0 - 5, 15 x_1)``, ``f_1 = (1 - exp(-1 / (2 x_1))) (2300 x_0^3 + 1900 x_0^2 +
  2092 x_0 + 60) / (100 x_0^3 + 500 x_0^2 + 4 x_0 + 20)`` (Currin, Mitchell, Morris & Ylvisaker
  1991).
- DTLZ1 and DTLZ2 (Deb, Thiele, Laumanns & Zitzler 2005, "Scalable test problems for
  evolutionary multiobjective optimization", Sections 6.1-6.2):
  DTLZ1 ``g = 100 (k + sum_{x_M} ((x_j - 1/2)^2 - cos(20 pi (x_j - 1/2))))``,
  ``f_i = (1 + g)/2 * prod_{j < m-1-i} x_j * (1 - x_{m-1-i} if i > 0)``;
  DTLZ2 ``g = sum_{x_M} (x_j - 1/2)^2``,
  ``f_i = (1 + g) prod_{j < m-1-i} cos(pi x_j / 2) * (sin(pi x_{m-1-i} / 2) if i > 0)``.
  Pareto optimal: ``x_M = 1/2``.
- ZDT1-3 (Zitzler, Deb & Thiele 2000, "Comparison of multiobjective evolutionary algorithms:
  empirical results", Evol. Comput. 8(2), Eqs. T1-T3): ``f_0 = x_0``,
  ``g = 1 + 9 sum_{j>=1} x_j / (d - 1)``, ``f_1 = g h(f_0 / g)`` with ``h(u) = 1 - sqrt(u)``
  (ZDT1), ``1 - u^2`` (ZDT2), ``1 - sqrt(u) - u sin(10 pi f_0)`` (ZDT3). Pareto optimal:
  ``x_1 = ... = x_{d-1} = 0``. Reference point (11, 11) from Yang, Emmerich, Deutz & Baeck 2019.
- C2-DTLZ2 (Jain & Deb 2014, "An evolutionary many-objective optimization algorithm using
  reference-point-based nondominated sorting approach, Part II", IEEE TEVC 18(4), Section
  VI-A): DTLZ2 with one constraint, ``c <= 0`` feasible,
  ``c = min(min_i [(f_i - 1)^2 + sum_{j != i} f_j^2], sum_i (f_i - 1/sqrt(m))^2) - r^2``
  (BoTorch's slack is ``-c``); ``r = 0.4`` for ``m = 3`` (the paper), ``0.2`` for ``m = 2``
  (BoTorch). The feasible front: DTLZ2's front within distance ``r`` of a unit vector or of
  ``(1, ..., 1)/sqrt(m)``.
- Vehicle Safety (Liao, Li, Yang, Zhang & Li 2008, "Multiobjective optimization for crash
  safety design of vehicles using stepwise regression model", Struct. Multidiscip. Optim.
  36; Tanabe & Ishibuchi 2020, "An easy-to-use real-world multi-objective optimization problem
  suite", Appl. Soft Comput. 89, problem RE3-5-4): ``x in [1, 3]^5`` (panel thicknesses, mm),
  mass, collision acceleration and toe-board intrusion as quadratic response surfaces.
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from ..types import Problem, make_bounds
from .synthetic import _as_float, branin


def _check_dims(name: str, dim, n_objectives, *, min_dim: int, objectives=None) -> None:
    if not isinstance(n_objectives, int) or isinstance(n_objectives, bool) or n_objectives < 2 or (
            objectives is not None and n_objectives not in objectives):
        allowed = objectives if objectives is not None else "an int >= 2"
        raise ValueError(f"{name}: n_objectives must be {allowed}, got {n_objectives!r}")
    if not isinstance(dim, int) or isinstance(dim, bool) or dim < min_dim:
        raise ValueError(f"{name}: dim must be an int >= {min_dim}, got {dim!r}")


def branin_currin(noise_std: float = 0.0) -> Problem:
    """Branin-Currin (Belakaria, Deshwal & Doppa 2019): ``d = 2``, ``m = 2`` on ``[0, 1]^2``;
    reference point (18, 6), maximum hypervolume 59.36011874867746 (BoTorch's ``_max_hv``,
    from NSGA-II)."""

    def f(x):
        x = _as_float(x)
        f0 = branin(jnp.stack([15.0 * x[0] - 5.0, 15.0 * x[1]]))
        x0 = x[0]
        num = 2300.0 * x0 ** 3 + 1900.0 * x0 ** 2 + 2092.0 * x0 + 60.0
        den = 100.0 * x0 ** 3 + 500.0 * x0 ** 2 + 4.0 * x0 + 20.0
        f1 = (1.0 - jnp.exp(-1.0 / (2.0 * x[1]))) * num / den
        return jnp.stack([f0, f1])

    return Problem("branin_currin", 2, make_bounds(0.0, 1.0, 2), f, noise_std=noise_std,
                   reference_point=(18.0, 6.0), max_hypervolume=59.36011874867746,
                   metadata={"source": "Belakaria, Deshwal & Doppa 2019; BoTorch BraninCurrin"})


def _dtlz_g2(x_m):
    return jnp.sum((x_m - 0.5) ** 2)


def _dtlz_objectives(x, m, scale, angle):
    """``f_i = scale * prod_{j < m-1-i} angle(x_j, cos) * (angle(x_{m-1-i}, sin) if i > 0)``."""
    fs = []
    for i in range(m):
        idx = m - 1 - i
        fi = scale * jnp.prod(angle(x[:idx], False))
        if i > 0:
            fi = fi * angle(x[idx], True)
        fs.append(fi)
    return jnp.stack(fs)


def dtlz1(dim: int = 6, n_objectives: int = 2, noise_std: float = 0.0) -> Problem:
    """DTLZ1 (Deb, Thiele, Laumanns & Zitzler 2005, Section 6.1) on ``[0, 1]^d``: the linear
    front ``sum_i f_i = 1/2`` at ``x_M = 1/2`` behind ``11^k - 1`` local fronts; reference
    point 400 in every objective (Yang et al. 2019), maximum hypervolume
    ``400^m - 0.5^m / m!``.

    Raises:
        ValueError: ``n_objectives < 2`` or ``dim <= n_objectives``."""
    m = n_objectives
    _check_dims("dtlz1", dim, m, min_dim=(m + 1) if isinstance(m, int) else 3)

    def f(x):
        x = _as_float(x)
        x_m = x[m - 1:]
        g = 100.0 * (x_m.shape[0] + jnp.sum((x_m - 0.5) ** 2 - jnp.cos(20.0 * math.pi * (x_m - 0.5))))
        return _dtlz_objectives(x, m, 0.5 * (1.0 + g), lambda v, s: (1.0 - v) if s else v)

    return Problem(f"dtlz1_m{m}", dim, make_bounds(0.0, 1.0, dim), f, noise_std=noise_std,
                   reference_point=(400.0,) * m, max_hypervolume=400.0 ** m - 0.5 ** m / math.factorial(m),
                   metadata={"source": "Deb et al. 2005 DTLZ1; BoTorch DTLZ1", "n_objectives": m})


def _dtlz2_objective(m):
    def f(x):
        x = _as_float(x)
        g = _dtlz_g2(x[m - 1:])
        return _dtlz_objectives(x, m, 1.0 + g,
                                lambda v, s: jnp.sin(0.5 * math.pi * v) if s else jnp.cos(0.5 * math.pi * v))
    return f


def _dtlz2_max_hv(m: int, ref: float = 1.1) -> float:
    """``ref^m`` minus the positive orthant's part of the unit ball, ``pi^{m/2} /
    Gamma(m/2 + 1) / 2^m``."""
    return ref ** m - math.pi ** (m / 2) / math.gamma(m / 2 + 1) / 2 ** m


def dtlz2(dim: int = 6, n_objectives: int = 2, noise_std: float = 0.0) -> Problem:
    """DTLZ2 (Deb, Thiele, Laumanns & Zitzler 2005, Section 6.2) on ``[0, 1]^d``: the concave
    front ``sum_i f_i^2 = 1`` at ``x_M = 1/2``; reference point 1.1 in every objective,
    maximum hypervolume ``1.1^m - pi^{m/2} / Gamma(m/2 + 1) / 2^m``.

    Raises:
        ValueError: ``n_objectives < 2`` or ``dim <= n_objectives``."""
    m = n_objectives
    _check_dims("dtlz2", dim, m, min_dim=(m + 1) if isinstance(m, int) else 3)
    return Problem(f"dtlz2_m{m}", dim, make_bounds(0.0, 1.0, dim), _dtlz2_objective(m), noise_std=noise_std,
                   reference_point=(1.1,) * m, max_hypervolume=_dtlz2_max_hv(m),
                   metadata={"source": "Deb et al. 2005 DTLZ2; BoTorch DTLZ2", "n_objectives": m})


def _zdt(name: str, h, max_hv: float, dim: int, noise_std: float, source: str) -> Problem:
    _check_dims(name, dim, 2, min_dim=2)

    def f(x):
        x = _as_float(x)
        f0 = x[0]
        g = 1.0 + 9.0 * jnp.sum(x[1:]) / (x.shape[0] - 1)
        return jnp.stack([f0, g * h(f0 / g, f0)])

    return Problem(name, dim, make_bounds(0.0, 1.0, dim), f, noise_std=noise_std, reference_point=(11.0, 11.0),
                   max_hypervolume=max_hv, metadata={"source": source})


def zdt1(dim: int = 6, noise_std: float = 0.0) -> Problem:
    """ZDT1 (Zitzler, Deb & Thiele 2000, T1): convex front ``f_1 = 1 - sqrt(f_0)``; reference
    point (11, 11), maximum hypervolume ``120 + 2/3``.

    Raises:
        ValueError: ``dim < 2``."""
    return _zdt("zdt1", lambda u, f0: 1.0 - jnp.sqrt(u), 120.0 + 2.0 / 3.0, dim, noise_std,
                "Zitzler, Deb & Thiele 2000 ZDT1; BoTorch ZDT1")


def zdt2(dim: int = 6, noise_std: float = 0.0) -> Problem:
    """ZDT2 (Zitzler, Deb & Thiele 2000, T2): concave front ``f_1 = 1 - f_0^2``; reference
    point (11, 11), maximum hypervolume ``120 + 1/3``.

    Raises:
        ValueError: ``dim < 2``."""
    return _zdt("zdt2", lambda u, f0: 1.0 - u ** 2, 120.0 + 1.0 / 3.0, dim, noise_std,
                "Zitzler, Deb & Thiele 2000 ZDT2; BoTorch ZDT2")


ZDT3_PARTS = ((0.0, 0.0830015349), (0.1822287280, 0.2577623634), (0.4093136748, 0.4538821041),
              (0.6183967944, 0.6525117038), (0.8233317983, 0.8518328654))
"""The ``f_0`` intervals of ZDT3's five disconnected front pieces (BoTorch ``ZDT3._parts``)."""


def zdt3(dim: int = 6, noise_std: float = 0.0) -> Problem:
    """ZDT3 (Zitzler, Deb & Thiele 2000, T3): front ``f_1 = 1 - sqrt(f_0) - f_0 sin(10 pi
    f_0)`` on the five intervals :data:`ZDT3_PARTS`; reference point (11, 11), maximum
    hypervolume 128.77811613069076 (BoTorch's ``_max_hv``).

    Raises:
        ValueError: ``dim < 2``."""
    return _zdt("zdt3", lambda u, f0: 1.0 - jnp.sqrt(u) - u * jnp.sin(10.0 * math.pi * f0), 128.77811613069076,
                dim, noise_std, "Zitzler, Deb & Thiele 2000 ZDT3; BoTorch ZDT3")


def c2dtlz2_radius(n_objectives: int) -> float:
    """C2-DTLZ2's radius ``r``: 0.2 for ``m = 2`` (BoTorch), 0.4 for ``m = 3``, 0.5 above
    (Jain & Deb 2014, Section VI-A)."""
    return 0.2 if n_objectives == 2 else (0.4 if n_objectives == 3 else 0.5)


def _c2dtlz2_max_hv_2(r: float, ref: float = 1.1) -> float:
    """Exact hypervolume of C2-DTLZ2's feasible front for ``m = 2``: the unit circle's arcs at
    angles ``[0, a]``, ``[pi/4 - a, pi/4 + a]``, ``[pi/2 - a, pi/2]`` with ``a = 2 asin(r/2)``
    (a chord of length ``r``). DTLZ2's ``ref^2 - pi/4`` less, for each of the two gaps
    ``(lo, hi)``, the part of the box ``[cos hi, cos lo] x [sin lo, sin hi]`` above the circle."""
    a = 2.0 * math.asin(r / 2.0)
    lo, hi = a, math.pi / 4 - a

    def area_under_circle(t0, t1):  # integral of sqrt(1 - t^2) over [t0, t1]
        prim = lambda t: 0.5 * (t * math.sqrt(1.0 - t * t) + math.asin(t))
        return prim(t1) - prim(t0)

    width, height = math.cos(lo) - math.cos(hi), math.sin(hi) - math.sin(lo)
    gap = width * height - (area_under_circle(math.cos(hi), math.cos(lo)) - math.sin(lo) * width)
    return ref ** 2 - math.pi / 4 - 2.0 * gap


def c2dtlz2(dim: int = 6, n_objectives: int = 2, noise_std: float = 0.0, constraint_noise_std: float = 0.0) -> Problem:
    """C2-DTLZ2 (Jain & Deb 2014, Section VI-A): DTLZ2 with one constraint ``c (1,)``,
    ``c <= 0`` feasible, keeping the parts of the front within distance
    :func:`c2dtlz2_radius` of a unit vector or of ``(1, ..., 1)/sqrt(m)``; reference point
    1.1 in every objective; maximum hypervolume in closed form for ``m = 2``, ``None``
    otherwise.

    Raises:
        ValueError: ``n_objectives`` not 2 or 3, or ``dim <= n_objectives``."""
    m = n_objectives
    _check_dims("c2dtlz2", dim, m, min_dim=(m + 1) if isinstance(m, int) else 3, objectives=(2, 3))
    r = c2dtlz2_radius(m)
    objective = _dtlz2_objective(m)

    def constraints(x):
        fx = objective(x)
        sq = jnp.sum(fx ** 2)
        to_axes = (fx - 1.0) ** 2 + sq - fx ** 2
        to_centre = jnp.sum((fx - 1.0 / math.sqrt(m)) ** 2)
        return jnp.minimum(jnp.min(to_axes), to_centre)[None] - r ** 2

    return Problem(f"c2dtlz2_m{m}", dim, make_bounds(0.0, 1.0, dim), objective, noise_std=noise_std,
                   constraints=constraints, constraint_noise_std=constraint_noise_std,
                   reference_point=(1.1,) * m, max_hypervolume=_c2dtlz2_max_hv_2(r) if m == 2 else None,
                   metadata={"source": "Jain & Deb 2014 C2-DTLZ2; BoTorch C2DTLZ2", "n_objectives": m,
                             "radius": r})


def vehicle_safety(noise_std: float = 0.0) -> Problem:
    """Vehicle crash safety (Liao et al. 2008; Tanabe & Ishibuchi 2020, RE3-5-4): ``d = 5``
    thicknesses in ``[1, 3]``, ``m = 3`` (mass, collision acceleration, toe-board
    intrusion); reference point ``1.1 x`` the nadir point of Tanabe & Ishibuchi's approximate
    front (1864.72022, 11.81993945, 0.2903999384), maximum hypervolume 246.81607081187002
    (BoTorch's, from that front)."""

    def f(x):
        x1, x2, x3, x4, x5 = _as_float(x)
        mass = 1640.2823 + 2.3573285 * x1 + 2.3220035 * x2 + 4.5688768 * x3 + 7.7213633 * x4 + 4.4559504 * x5
        acceleration = (6.5856 + 1.15 * x1 - 1.0427 * x2 + 0.9738 * x3 + 0.8364 * x4 - 0.3695 * x1 * x4
                        + 0.0861 * x1 * x5 + 0.3628 * x2 * x4 - 0.1106 * x1 ** 2 - 0.3437 * x3 ** 2
                        + 0.1764 * x4 ** 2)
        intrusion = (-0.0551 + 0.0181 * x1 + 0.1024 * x2 + 0.0421 * x3 - 0.0073 * x1 * x2 + 0.024 * x2 * x3
                     - 0.0118 * x2 * x4 - 0.0204 * x3 * x4 - 0.008 * x3 * x5 - 0.0241 * x2 ** 2
                     + 0.0109 * x4 ** 2)
        return jnp.stack([mass, acceleration, intrusion])

    return Problem("vehicle_safety", 5, make_bounds(1.0, 3.0, 5), f, noise_std=noise_std,
                   reference_point=(1864.72022, 11.81993945, 0.2903999384), max_hypervolume=246.81607081187002,
                   metadata={"source": "Liao et al. 2008; Tanabe & Ishibuchi 2020 RE3-5-4; BoTorch VehicleSafety"})


PROBLEMS = {
    "branin_currin": branin_currin,
    "dtlz1": dtlz1,
    "dtlz2": dtlz2,
    "zdt1": zdt1,
    "zdt2": zdt2,
    "zdt3": zdt3,
    "c2dtlz2": c2dtlz2,
    "vehicle_safety": vehicle_safety,
}
"""Name -> builder of the multi-objective problems (keyword arguments: ``dim``,
``n_objectives`` where the family has them, ``noise_std``)."""

__all__ = ["PROBLEMS", "ZDT3_PARTS", "branin_currin", "c2dtlz2", "c2dtlz2_radius", "dtlz1", "dtlz2",
           "vehicle_safety", "zdt1", "zdt2", "zdt3"]
