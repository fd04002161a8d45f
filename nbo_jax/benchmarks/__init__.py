"""Benchmark problems: synthetic test functions and the :func:`get` factory."""

from .synthetic import (
    ackley,
    available,
    branin,
    cosine_mixture,
    drop_wave,
    get,
    griewank,
    hartmann6,
    levy,
    michalewicz,
    rastrigin,
    rosenbrock,
    styblinski_tang,
)

__all__ = [
    "get",
    "available",
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
]
