"""Benchmark problems: synthetic test functions, constrained problems, problems with a known
PDE, COCO's BBOB problems (:mod:`nbo_jax.benchmarks.bbob`, evaluated by ``cocoex``; built
with :func:`nbo_jax.benchmarks.bbob.problem`, not :func:`get`), mixed-space problems
(:mod:`nbo_jax.benchmarks.mixed`), scikit-learn tuning tasks on mixed spaces
(:mod:`nbo_jax.benchmarks.tuning`, built by its ``TUNING``), multi-objective problems
(:mod:`nbo_jax.benchmarks.multi_objective`, built by its ``PROBLEMS``), and the :func:`get` factory.

:func:`get` dispatches constrained names (see :mod:`nbo_jax.benchmarks.constrained`) to
:func:`nbo_jax.benchmarks.constrained.get`, PDE names (:mod:`nbo_jax.benchmarks.pde_problems`,
e.g. ``"rastrigin_pde"``, ``"beam"``, ``"heat_bc1"``, or ``"heat"`` with
``boundary_conditions``) to :func:`nbo_jax.benchmarks.pde_problems.get` and every other name
to :func:`nbo_jax.benchmarks.synthetic.get`; :func:`available` lists all.

The papers' real-world tasks (Phan-Trong 2024, PhD thesis, Sections 3.5.3 and 4.3.5) are
built by their modules and reachable through :func:`get` too (they need the ``tasks`` extra:
scikit-learn, Box2D): ``"sensitive_samples"`` and ``"sensitive_samples_realism"``
(:mod:`~nbo_jax.benchmarks.sensitive_samples`), ``"robot_push"``
(:mod:`~nbo_jax.benchmarks.robot_push`) and ``"document_retrieval"``
(:mod:`~nbo_jax.benchmarks.document_retrieval`, a finite domain, built with
:func:`~nbo_jax.benchmarks.finite.finite_problem`).
"""

import importlib

from typing import Optional

from . import bbob, constrained, finite, heat, mixed, multi_objective, pde_problems, synthetic, tuning
from . import multi_objective as _multi  # the module, where available()'s argument shadows its name
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
    "finite",
    "mixed",
    "multi_objective",
    "tuning",
    "TASKS",
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


# real-world task name -> (module, builder); imported on first use (the ``tasks`` extra)
TASKS = {
    "sensitive_samples": ("sensitive_samples", "sensitive_samples"),
    "sensitive_samples_realism": ("sensitive_samples", "sensitive_samples_realism"),
    "robot_push": ("robot_push", "robot_push"),
    "document_retrieval": ("document_retrieval", "document_retrieval"),
}


def available(multi_objective: bool = False, mixed_spaces: bool = False) -> list[str]:
    """Canonical names accepted by :func:`get`: the synthetic ones, the constrained ones, the
    PDE ones, then the real-world tasks (problems of one objective on a box); with
    ``mixed_spaces=True`` the mixed-space ones after them (:data:`MIXED_SPACES`), with
    ``multi_objective=True`` the multi-objective ones last."""
    names = synthetic.available() + constrained.available() + pde_problems.available() + list(TASKS)
    if mixed_spaces:
        names = names + list(MIXED_SPACES)
    return names + list(_multi.PROBLEMS) if multi_objective else names


MIXED_SPACES = {**mixed.PROBLEMS, **tuning.TUNING}
"""Name -> builder of the problems on mixed search spaces: CoCaBO's Func2C/Func3C, the mixed
Ackley (:mod:`nbo_jax.benchmarks.mixed`) and the scikit-learn tuning tasks
(:mod:`nbo_jax.benchmarks.tuning`, the ``tasks`` extra)."""


def _mixed_space(name: str, dim: Optional[int], noise_std: float | str, **kwargs):
    """A problem of :data:`MIXED_SPACES` (``noise_std="paper"``: noiseless; ``dim`` checked
    against the problem's number of parameters; no other keyword)."""
    if kwargs:
        raise ValueError(f"problem {name!r} takes no options, got {sorted(kwargs)}")
    if isinstance(noise_std, str):
        if noise_std != "paper":
            raise ValueError(f"noise_std must be a number >= 0 or 'paper', got {noise_std!r}")
        noise_std = 0.0
    problem = MIXED_SPACES[name]()
    if dim is not None and dim != problem.dim:
        raise ValueError(f"dim: problem {name!r} has {problem.dim} parameters (fixed), got dim={dim}")
    return problem.with_noise(noise_std) if noise_std else problem


def _multi_objective(name: str, dim: Optional[int], noise_std: float | str, **kwargs):
    """A problem of :data:`nbo_jax.benchmarks.multi_objective.PROBLEMS` (``noise_std="paper"``:
    noiseless, 0.0; ``dim`` checked against the problem's own when its builder fixes it)."""
    import inspect

    if isinstance(noise_std, str):
        if noise_std != "paper":
            raise ValueError(f"noise_std must be a number >= 0 or 'paper', got {noise_std!r}")
        noise_std = 0.0
    builder = _multi.PROBLEMS[name]
    if dim is not None and "dim" in inspect.signature(builder).parameters:
        kwargs["dim"] = dim
    problem = builder(noise_std=noise_std, **kwargs)
    if dim is not None and dim != problem.dim:
        raise ValueError(f"dim: problem {name!r} has dimension {problem.dim} (fixed), got dim={dim}")
    return problem


def task(name: str, dim: Optional[int] = None, noise_std: float | str = 0.0, **kwargs):
    """Build a real-world task (:data:`TASKS`) by name; ``kwargs`` go to its builder (e.g.
    ``path=`` for ``"document_retrieval"``, ``mnist_dir=`` for the sensitive samples).

    ``noise_std="paper"`` is the thesis' setting for these tasks: noiseless (0.0).

    Raises:
        ValueError: unknown name; ``dim`` given and not the task's dimension (which the task
        fixes: 49, 14, or the vocabulary size); the builder's errors.
        ImportError: the ``tasks`` extra is missing (the message names it)."""
    if name not in TASKS:
        raise ValueError(f"name: unknown task {name!r}; tasks: {sorted(TASKS)}")
    if isinstance(noise_std, str):
        if noise_std != "paper":
            raise ValueError(f"noise_std must be a number >= 0 or 'paper', got {noise_std!r}")
        noise_std = 0.0
    module, builder = TASKS[name]
    try:
        mod = importlib.import_module(f"{__name__}.{module}")
    except ImportError as err:  # pragma: no cover - the extra is installed in the test environment
        raise ImportError(f"task {name!r} needs the 'tasks' extra (pip install 'nbo-jax[tasks]'): {err}") from err
    problem = getattr(mod, builder)(noise_std=noise_std, **kwargs)
    if dim is not None and dim != problem.dim:
        raise ValueError(f"dim: task {name!r} has dimension {problem.dim} (fixed by the task), got dim={dim}")
    return problem


def get(name: str, dim: Optional[int] = None, noise_std: float | str = 0.0, **kwargs):
    """Build (or return the cached) :class:`~nbo_jax.types.Problem` named ``name``.

    Constrained names go to :func:`nbo_jax.benchmarks.constrained.get` (extra keyword:
    ``constraint_noise_std``), PDE names to :func:`nbo_jax.benchmarks.pde_problems.get`
    (extra keywords for ``"heat"``/``"heat_bc{k}"``: ``boundary_conditions``, ``resolution``),
    real-world task names (:data:`TASKS`) to :func:`task`, mixed-space names
    (:data:`MIXED_SPACES`) to their builders, multi-objective names
    (:data:`nbo_jax.benchmarks.multi_objective.PROBLEMS`; keyword ``n_objectives`` where the
    family has it; ``noise_std="paper"`` is noiseless) to their builders, all others to
    :func:`nbo_jax.benchmarks.synthetic.get`
    (function parameters as keywords, e.g. ``m`` for Michalewicz); see those for the
    arguments.

    Raises:
        ValueError: unknown ``name`` (the message lists every available name), and the
            errors of the two factories.
    """
    if name in TASKS:
        return task(name, dim=dim, noise_std=noise_std, **kwargs)
    if name in _multi.PROBLEMS:
        return _multi_objective(name, dim, noise_std, **kwargs)
    if name in MIXED_SPACES:
        return _mixed_space(name, dim, noise_std, **kwargs)
    if constrained.canonical_name(name) is not None:
        return constrained.get(name, dim=dim, noise_std=noise_std, **kwargs)
    if pde_problems.accepts(name):
        return pde_problems.get(name, dim=dim, noise_std=noise_std, **kwargs)
    if synthetic._ALIASES.get(synthetic._key(str(name))) is None:
        raise ValueError(f"name: unknown benchmark {name!r}; available: "
                         f"{available(multi_objective=True, mixed_spaces=True)}")
    return synthetic.get(name, dim, noise_std, **kwargs)
