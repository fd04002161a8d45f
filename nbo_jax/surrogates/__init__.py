"""Surrogates: one module per model, each a factory returning a
:class:`~nbo_jax.base.Surrogate` ``(init, update, posterior)`` over a
:class:`~nbo_jax.dataset.Dataset` (optax's shape: a state and pure functions over it).

:func:`nbo_jax.bo.bo_algorithm` makes any of them, with any acquisition function whose needs
its posterior meets, into a BO algorithm."""

from .adaptive_basis import AdaptiveBasisState, adaptive_basis
from .columns import independent
from .ensemble import EnsembleState, ensemble
from .gp import GPFit, GPSurrogateState, gp, gp_columns
from .neural_linear import NeuralLinearState, neural_linear
from .pinn import PINNState, pinn
from .random_forest import ForestSettings, RandomForestState, random_forest
from .sample_then_optimize import SampleThenOptimizeState, sample_then_optimize
from .vbll import VBLLState, vbll
from .zero_init_columns import ZeroInitColumnsState, zero_init_columns

__all__ = ["AdaptiveBasisState", "EnsembleState", "ForestSettings", "GPFit", "GPSurrogateState", "NeuralLinearState",
           "PINNState", "RandomForestState", "SampleThenOptimizeState", "VBLLState",
           "ZeroInitColumnsState", "adaptive_basis", "ensemble", "gp",
           "gp_columns", "independent", "neural_linear", "pinn", "random_forest", "sample_then_optimize", "vbll",
           "zero_init_columns"]
