"""Mixed-space test problems (continuous, integer and categorical parameters), each a
:class:`~nbo_jax.types.Problem` whose ``bounds`` is a
:class:`~nbo_jax.search_space.SearchSpace` (a point holds one number per parameter, a category
as its index; minimization):

- ``func2c`` and ``func3c``: Ru, Alvi, Nguyen, Osborne and Roberts 2020, "Bayesian
  optimisation over multiple continuous and categorical inputs" (CoCaBO, ICML), Section 5.1:
  two continuous inputs ``x in [-1, 1]^2`` (scaled by 2) and two (three) categorical ones that
  choose which of Rosenbrock / 300, six-hump camel / 10 and Beale / 50 are summed;
  minima ``-0.2063`` (both categories six-hump camel) and ``-0.7221``.
- ``ackley_mixed``: Ackley (Ackley 1987) in ``d = 6``, the first three inputs continuous in
  ``[-2, 2]``, the last three integers in ``{-2, ..., 2}``; minimum 0 at the origin.
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from ..search_space import Categorical, Continuous, Integer, search_space
from ..types import Problem


def _rosenbrock(x):
    return (100.0 * (x[1] - x[0] ** 2) ** 2 + (x[0] - 1.0) ** 2) / 300.0


def _six_hump_camel(x):
    x1, x2 = x[0], x[1]
    return ((4.0 - 2.1 * x1 ** 2 + x1 ** 4 / 3.0) * x1 ** 2 + x1 * x2 + (-4.0 + 4.0 * x2 ** 2) * x2 ** 2) / 10.0


def _beale(x):
    x1, x2 = x[0], x[1]
    return ((1.5 - x1 + x1 * x2) ** 2 + (2.25 - x1 + x1 * x2 ** 2) ** 2 + (2.625 - x1 + x1 * x2 ** 3) ** 2) / 50.0


def _chosen(h, x):
    """The CoCaBO sum's term chosen by category index ``h`` (0 Rosenbrock, 1 six-hump camel,
    2 and above Beale) at ``x (2,)``."""
    return jnp.where(h == 0, _rosenbrock(x), jnp.where(h == 1, _six_hump_camel(x), _beale(x)))


def func2c() -> Problem:
    """CoCaBO's Func2C (Ru et al. 2020, Section 5.1): ``h1`` in 3 categories, ``h2`` in 5,
    ``x in [-1, 1]^2``; ``f = g_{h1}(2x) + g_{h2}(2x)``; minimum -0.2063 at ``h1 = h2 = 1``
    (six-hump camel), ``2x = (0.0898, -0.7126)`` or ``(-0.0898, 0.7126)``."""
    space = search_space([Categorical("h1", (0, 1, 2)), Categorical("h2", (0, 1, 2, 3, 4)),
                          Continuous("x1", -1.0, 1.0), Continuous("x2", -1.0, 1.0)])

    def f(p):
        x = 2.0 * p[2:]
        return _chosen(jnp.round(p[0]), x) + _chosen(jnp.round(p[1]), x)

    return Problem("func2c", 4, space, f, optimal_value=-0.2063,
                   metadata={"source": "Ru et al. 2020 (CoCaBO), Func2C"})


def func3c() -> Problem:
    """CoCaBO's Func3C (Ru et al. 2020, Section 5.1): ``h1`` in 3 categories, ``h2`` in 5,
    ``h3`` in 4, ``x in [-1, 1]^2``; ``f = g_{h1}(2x) + g_{h2}(2x) + t_{h3}(2x)`` with
    ``t_0 = 5 camel``, ``t_1 = 2 rosenbrock``, ``t_h = h beale`` otherwise; minimum
    ``7 * (-1.0316 / 10) = -0.7221`` at ``h1 = h2 = 1``, ``h3 = 0``."""
    space = search_space([Categorical("h1", (0, 1, 2)), Categorical("h2", (0, 1, 2, 3, 4)),
                          Categorical("h3", (0, 1, 2, 3)), Continuous("x1", -1.0, 1.0), Continuous("x2", -1.0, 1.0)])

    def f(p):
        x = 2.0 * p[3:]
        h3 = jnp.round(p[2])
        third = jnp.where(h3 == 0, 5.0 * _six_hump_camel(x), jnp.where(h3 == 1, 2.0 * _rosenbrock(x), h3 * _beale(x)))
        return _chosen(jnp.round(p[0]), x) + _chosen(jnp.round(p[1]), x) + third

    return Problem("func3c", 5, space, f, optimal_value=-0.7221,
                   metadata={"source": "Ru et al. 2020 (CoCaBO), Func3C"})


def ackley_mixed() -> Problem:
    """Ackley in 6 dimensions (``a = 20``, ``b = 0.2``, ``c = 2 pi``), three continuous inputs
    in ``[-2, 2]`` and three integers in ``{-2, ..., 2}``; minimum 0 at the origin."""
    space = search_space([Continuous(f"x{i}", -2.0, 2.0) for i in range(3)]
                         + [Integer(f"k{i}", -2, 2) for i in range(3)])

    def f(x):
        d = x.shape[0]
        return (-20.0 * jnp.exp(-0.2 * jnp.sqrt(jnp.sum(x ** 2) / d))
                - jnp.exp(jnp.sum(jnp.cos(2.0 * math.pi * x)) / d) + 20.0 + math.e)

    return Problem("ackley_mixed", 6, space, f, optimal_value=0.0,
                   metadata={"source": "Ackley 1987; half the inputs integer"})


PROBLEMS = {"func2c": func2c, "func3c": func3c, "ackley_mixed": ackley_mixed}
"""Name -> builder of the mixed-space problems."""

__all__ = ["PROBLEMS", "ackley_mixed", "func2c", "func3c"]
