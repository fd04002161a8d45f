"""BO algorithm presets, each a factory returning a :class:`~nbo_jax.base.BOAlgorithm` (as
optax's aliases are chains: most are :func:`nbo_jax.bo.bo_algorithm` with their surrogate and
acquisition). :func:`nbo_jax.registry.get` builds one by its registry name.
"""

from __future__ import annotations

from .adaptive_basis import AdaptiveBasisState, adaptive_basis
from .gp import gp_bo
from .neural_bo import NeuralBOState, neural_bo
from .neural_cbo import NeuralCBOState, neural_cbo
from .neural_greedy import NeuralGreedyState, neural_greedy
from .neural_ucb import neural_ts, neural_ucb
from .pinn_bo import PINNBOState, pinn_bo
from .random_forest import RandomForestState, rf_bo
from .random_search import RandomSearchState, random_search
from .surrogate_bo import surrogate_bo

__all__ = [
    "adaptive_basis",
    "gp_bo",
    "neural_greedy",
    "AdaptiveBasisState",
    "NeuralGreedyState",
    "neural_bo",
    "neural_cbo",
    "NeuralCBOState",
    "neural_ucb",
    "neural_ts",
    "random_search",
    "pinn_bo",
    "PINNBOState",
    "NeuralBOState",
    "RandomSearchState",
    "rf_bo",
    "RandomForestState",
    "surrogate_bo",
]
