"""nbo_jax: JAX-native black-box optimization with neural-network surrogates.

Public API::

    import jax, nbo_jax as nbo
    problem = nbo.benchmarks.get("ackley", dim=10, noise_std="paper")
    algo = nbo.neural_bo(width=500, depth=2, nu=1.0, lam=0.01)
    hist = nbo.run_bo(jax.random.key(0), algo, problem, n_init=10, n_iter=200)
"""

from . import (
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
    training,
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
)
from .ask_tell import AskTell
from .loop import initial_design, run_bo
from .types import BOAlgorithm, Bounds, Dataset, History, Problem, make_bounds

__version__ = "0.1.0"

__all__ = [
    "acquisition",
    "algorithms",
    "analysis",
    "comparison",
    "benchmarks",
    "features",
    "networks",
    "ntk",
    "optimize",
    "pde",
    "pinn",
    "pinn_bo",
    "posterior",
    "training",
    "neural_bo",
    "neural_cbo",
    "neural_greedy",
    "adaptive_basis",
    "gp_bo",
    "neural_ucb",
    "neural_ts",
    "random_search",
    "run_bo",
    "AskTell",
    "initial_design",
    "BOAlgorithm",
    "Bounds",
    "Dataset",
    "History",
    "Problem",
    "make_bounds",
]
