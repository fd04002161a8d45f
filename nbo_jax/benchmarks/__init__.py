"""Benchmark problems: synthetic test functions, constrained problems, problems with a known
PDE, COCO's BBOB problems (:mod:`nbo_jax.benchmarks.bbob`, evaluated by ``cocoex``; built
with :func:`nbo_jax.benchmarks.bbob.problem`, not :func:`get`), and the :func:`get` factory.

:func:`get` dispatches constrained names (see :mod:`nbo_jax.benchmarks.constrained`) to
:func:`nbo_jax.benchmarks.constrained.get`, PDE names (:mod:`nbo_jax.benchmarks.pde_problems`,
e.g. ``"rastrigin_pde"``, ``"beam"``, ``"heat_bc1"``, or ``"heat"`` with
``boundary_conditions``) to :func:`nbo_jax.benchmarks.pde_problems.get` and every other name
to :func:`nbo_jax.benchmarks.synthetic.get`; :func:`available` lists all.
"""

from typing import Optional

from . import bbob, constrained, heat, pde_problems, synthetic
from .constrained import (
    ackley_constraints,
    branin_constraints,
    gas_transmission,
    gas_transmission_constraints,
    hartmann6_constraints,
    pressure_vessel,
    pressure_vessel_constraints,
    simionescu,
    simionescu_constraints,
    speed_reducer,
    speed_reducer_constraints,
    tension_compression_spring,
    tension_compression_spring_constraints,
    welded_beam,
    welded_beam_constraints,
)
from .synthetic import (
    ackley,
    branin,
    cosine_mixture,
    drop_wave,
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
    "synthetic",
    "bbob",
    "pde_problems",
    "heat",
    "constrained",
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
]


def available() -> list[str]:
    """Canonical names accepted by :func:`get`: the synthetic ones, the constrained ones, then
    the PDE ones."""
    return synthetic.available() + constrained.available() + pde_problems.available()


def get(name: str, dim: Optional[int] = None, noise_std: float | str = 0.0, **kwargs):
    """Build (or return the cached) :class:`~nbo_jax.types.Problem` named ``name``.

    Constrained names go to :func:`nbo_jax.benchmarks.constrained.get` (extra keyword:
    ``constraint_noise_std``), PDE names to :func:`nbo_jax.benchmarks.pde_problems.get`
    (extra keywords for ``"heat"``/``"heat_bc{k}"``: ``boundary_conditions``, ``resolution``),
    all others to :func:`nbo_jax.benchmarks.synthetic.get`
    (function parameters as keywords, e.g. ``m`` for Michalewicz); see those for the
    arguments.

    Raises:
        ValueError: unknown ``name`` (the message lists every available name), and the
            errors of the two factories.
    """
    if constrained.canonical_name(name) is not None:
        return constrained.get(name, dim=dim, noise_std=noise_std, **kwargs)
    if pde_problems.accepts(name):
        return pde_problems.get(name, dim=dim, noise_std=noise_std, **kwargs)
    if synthetic._ALIASES.get(synthetic._key(str(name))) is None:
        raise ValueError(f"name: unknown benchmark {name!r}; available: {available()}")
    return synthetic.get(name, dim, noise_std, **kwargs)
