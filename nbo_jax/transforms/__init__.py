"""Transformations of algorithms: each takes a :class:`~nbo_jax.base.BOAlgorithm` and returns
one (as optax wraps a gradient transformation), never importing :mod:`nbo_jax.algorithms`:
:func:`~nbo_jax.transforms.batch.batched` (``q`` points per ask by the algorithm's batch rule)
and :func:`~nbo_jax.transforms.trust_region.trust_region` (TuRBO-1 and TuRBO-m, Eriksson et
al. 2019; SCBO's rules with constraints)."""

from .batch import batched
from .trust_region import trust_region

__all__ = ["batched", "trust_region"]
