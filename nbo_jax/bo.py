"""The one BO step: a surrogate, an acquisition function and the acquisition optimizer made
into a :class:`~nbo_jax.base.BOAlgorithm` (:func:`bo_algorithm`), and what every algorithm
factory shares (:func:`make_algorithm`, :func:`records_config`, the refit schedule
:func:`refit_due`)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable

import jax
import jax.numpy as jnp

from ._checks import AUTO_ROWS_PER_REFIT, check_choice, check_int
from .base import BATCH_RULES, BOAlgorithm, FactoryCall
from .batch import batched

Array = jax.Array


def refit_due(refit_every: int | str, tells: Array, rows_told: Array) -> Array:
    """``()`` bool: a scheduled refit is due after this tell. ``refit_every = k``: every
    ``k``-th tell; ``"auto"``: every ``max(1, rows_told // AUTO_ROWS_PER_REFIT)``-th, so a
    surrogate holding ``n`` rows refits about every ``n / 50`` tells (every tell below 100).
    ``tells`` (tell calls) and ``rows_told`` (rows received, failed evaluations included)
    depend on no data: under ``vmap`` over seeds the predicate is unbatched and a
    ``lax.cond`` on it stays a branch (a batched one becomes a select running both)."""
    period = jnp.maximum(rows_told // AUTO_ROWS_PER_REFIT, 1) if refit_every == "auto" else refit_every
    return tells % period == 0


def records_config(factory: Callable) -> Callable:
    """Decorator for algorithm factories: the returned :class:`BOAlgorithm` carries the
    :class:`~nbo_jax.types.FactoryCall` that built it (for save/resume and pickling)."""
    signature = inspect.signature(factory)
    var_keyword = [p.name for p in signature.parameters.values() if p.kind is p.VAR_KEYWORD]

    @functools.wraps(factory)
    def build(*args, **kwargs):
        algorithm = factory(*args, **kwargs)
        recorded = dict(signature.bind(*args, **kwargs).arguments)
        for name in var_keyword:  # forwarded keywords are recorded as the keywords they are
            recorded.update(recorded.pop(name, {}))
        call = FactoryCall(f"{factory.__module__}:{factory.__qualname__}", recorded)
        return algorithm._replace(config=call)

    return build


def make_algorithm(init, ask, tell, *, name: str, surrogate=None, info=None, q: int = 1,
                   batch_rule: str = "fantasy", constrained: bool = False) -> BOAlgorithm:
    """Assemble a :class:`BOAlgorithm` from the single-point ``ask`` and batch the asks by
    ``batch_rule`` when ``q > 1`` (:func:`nbo_jax.batch.batched`); ``"native"`` algorithms
    pass their own batched ``ask`` and ``q``.

    Raises:
        TypeError / ValueError: ``q`` not an int ``>= 1``; unknown ``batch_rule``."""
    q = check_int("q", q, 1)
    check_choice("batch_rule", batch_rule, BATCH_RULES)
    if batch_rule == "native":
        return BOAlgorithm(init, ask, tell, name, surrogate, q, constrained, info, batch_rule)
    algorithm = BOAlgorithm(init, ask, tell, name, surrogate, 1, constrained, info, batch_rule)
    return batched(algorithm, q)
