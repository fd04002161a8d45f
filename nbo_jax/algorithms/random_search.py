"""Random search: uniform points in the box, the baseline every comparison reports
(Bergstra & Bengio 2012)."""

from __future__ import annotations

from typing import NamedTuple, Optional

import jax

from ..base import SearchRegion
from ..bo import make_algorithm, records_config
from ..observations import initial_data, told_rows
from ..optimize import random_point
from ..types import BOAlgorithm, Bounds, Dataset

Array = jax.Array


class RandomSearchState(NamedTuple):
    """``data``: observations (kept so that histories, incumbents and save/resume are
    uniform across algorithms); ``bounds``: the box."""

    data: Dataset
    bounds: Bounds


@records_config
def random_search(q: int = 1) -> BOAlgorithm:
    """Uniform random search as a :class:`~nbo_jax.types.BOAlgorithm`.

    ``ask`` draws ``x ~ U[lower, upper]^d`` independently of the data (any number of
    objectives: ``y (m,)`` per point is kept as told) (on a finite domain:
    a uniform draw among the points not evaluated yet); ``q`` points per ask are ``q``
    independent draws (distinct on a finite domain).

    Raises:
        TypeError / ValueError: ``q`` not an int ``>= 1``."""

    def init(key: Array, x0: Array, y0: Array, c0=None, *, bounds, capacity: int) -> RandomSearchState:
        data, box = initial_data(x0, y0, c0, bounds, capacity, constrained=False)
        return RandomSearchState(data, box)

    def ask(state: RandomSearchState, key: Array, region: Optional[SearchRegion] = None) -> Array:
        return state.bounds.from_unit(random_point(key, state.data, region))

    def tell(state: RandomSearchState, x: Array, y: Array, c=None) -> RandomSearchState:
        u, y = told_rows(state.bounds, x, y, c, constrained=False,
                         objectives=state.data.y.shape[1] if state.data.y.ndim == 2 else 1)
        return state._replace(data=state.data.add_batch(u, y))

    return make_algorithm(init, ask, tell, name="random", q=q, batch_rule="independent")._replace(multi_objective=True)
