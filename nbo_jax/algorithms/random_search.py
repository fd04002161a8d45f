"""Random search: uniform points in the box (the baseline always reported; SPEC.md section 3)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..types import BOAlgorithm, Dataset
from ._common import check_initial

Array = jax.Array


class RandomSearchState(NamedTuple):
    """``data``: observations (kept so that histories and incumbents are uniform across
    algorithms); ``lower``, ``upper``: ``(d,)`` box."""

    data: Dataset
    lower: Array
    upper: Array


def random_search() -> BOAlgorithm:
    """Uniform random search as a :class:`~nbo_jax.types.BOAlgorithm`.

    ``ask`` draws ``x ~ U[lower, upper]^d`` independently of the data."""

    def init(key: Array, x0: Array, y0: Array, *, bounds, capacity: int) -> RandomSearchState:
        x0, y0, lower, upper = check_initial(x0, y0, bounds, capacity)
        data = Dataset.empty(capacity, x0.shape[1], x0.dtype).add_batch((x0 - lower) / (upper - lower), y0)
        return RandomSearchState(data, lower, upper)

    def ask(state: RandomSearchState, key: Array) -> Array:
        u = jax.random.uniform(key, state.lower.shape, state.lower.dtype)
        return state.lower + u * (state.upper - state.lower)

    def tell(state: RandomSearchState, x: Array, y: Array) -> RandomSearchState:
        u = (jnp.reshape(x, (-1,)) - state.lower) / (state.upper - state.lower)
        return state._replace(data=state.data.add(u, jnp.reshape(y, ())))

    return BOAlgorithm(init, ask, tell, "random")
