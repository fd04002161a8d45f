"""nbo_jax: JAX-native black-box optimization with neural-network surrogates.

Public API (everything else lives in the subpackages: ``nbo_jax.posterior``,
``nbo_jax.gp_model``, ``nbo_jax.features``, ``nbo_jax.ntk``, ``nbo_jax.networks``,
``nbo_jax.training``, ``nbo_jax.pde``, ``nbo_jax.pinn``, ``nbo_jax.optimize``,
``nbo_jax.analysis``, ``nbo_jax.comparison``, ``nbo_jax.sharding``, ``nbo_jax.transforms``; the optional
``nbo_jax.integrations`` (Ray, Ray Tune, Optuna) is never imported here)::

    import jax, nbo_jax as nbo
    problem = nbo.benchmarks.get("ackley", dim=10, noise_std="paper")
    algo = nbo.neural_bo(width=500, depth=2, nu=1.0, lam=0.01)
    hist = nbo.run_bo(jax.random.key(0), algo, problem, n_init=10, n_iter=200)
"""

from . import _xla_cpu

_xla_cpu.apply()  # before anything compiles: XLA reads XLA_FLAGS once (see _xla_cpu)

from . import (  # noqa: F401 - the subpackages, importable as attributes
    acquisition,
    algorithms,
    analysis,
    benchmarks,
    comparison,
    features,
    gp_model,
    networks,
    ntk,
    optimize,
    pde,
    pinn,
    posterior,
    registry,
    sharding,
    surrogates,
    training,
    transforms,
)
from .algorithms import (
    adaptive_basis,
    gp_bo,
    neural_bo,
    neural_cbo,
    neural_greedy,
    neural_ts,
    neural_ucb,
    pinn_bo,
    random_search,
    rf_bo,
)
from .ask_tell import AskTell
from .base import Surrogate, SurrogatePosterior
from .bo import bo_algorithm
from .transforms.batch import batched
from .loop import initial_design, run_bo
from .sharding import run_bo_sharded
from .transforms.trust_region import trust_region
from .types import (
    BOAlgorithm,
    Bounds,
    Dataset,
    FiniteDomain,
    History,
    Problem,
    TaskMetric,
    as_bounds,
    finite_domain,
    make_bounds,
)

__version__ = "0.2.0"

__all__ = [
    # running BO
    "run_bo",
    "run_bo_sharded",
    "AskTell",
    "initial_design",
    "batched",
    "trust_region",
    # the types
    "BOAlgorithm",
    "Bounds",
    "Dataset",
    "History",
    "Problem",
    "FiniteDomain",
    "TaskMetric",
    "as_bounds",
    "finite_domain",
    "make_bounds",
    # the algorithm factories
    "neural_bo",
    "neural_ucb",
    "neural_ts",
    "neural_greedy",
    "adaptive_basis",
    "gp_bo",
    "neural_cbo",
    "pinn_bo",
    "random_search",
    "rf_bo",
    "algorithms",
    "registry",
    # composing: a surrogate, an acquisition function and the one BO step
    "Surrogate",
    "SurrogatePosterior",
    "bo_algorithm",
    "surrogates",
    # acquisition functions and test problems
    "acquisition",
    "benchmarks",
]
