"""Batches of ``q`` points and pending points, for every algorithm.

Two of the field's standard rules, chosen by :attr:`~nbo_jax.types.BOAlgorithm.batch_rule`:

- ``"independent"``: the ``q`` points are ``q`` independent draws of the single-point rule
  from the same state, with independent keys; each drawn point is excluded from the later
  draws (written to the state's data, not trained on), so the ``q`` points are distinct.
  This is how Thompson-sampling methods batch (Kandasamy et al. 2018, "Parallelised
  Bayesian optimisation via Thompson sampling"), and how random search does.
- ``"fantasy"``: the constant liar of Ginsbourger, Le Riche & Carraro 2010 ("Kriging is
  well-suited to parallelize optimization", Section 3.2): after each chosen point, a copy of
  the state is told that point with a fantasized value, the *lie*, and the next point is
  chosen from that copy. The lie here is the mean of the finite observations of each column
  (CL-mean), so a chosen point's uncertainty collapses (the next point goes elsewhere)
  without biasing the model up or down. Used for UCB/EI/greedy rules, whose single-point
  choice is deterministic given the state.
- ``"native"``: the algorithm batches itself (adaptive-basis BO's batch rule).

Pending points (asked, not yet told: asynchronous workers) are fantasized the same way by
:func:`fantasize` before an ask, for every rule, so a worker is not sent where another one
is already measuring.
"""

from __future__ import annotations

import inspect
from typing import Any

import jax
import jax.numpy as jnp

from .._checks import check_int
from ..types import BATCH_RULES, BOAlgorithm, Dataset

Array = jax.Array


def constant_liar(data: Dataset) -> Array:
    """The lie for one fantasized observation: the mean of each column's finite observations
    (``()`` for a single-output dataset, ``(J,)`` for ``J`` columns; 0 for a column with none).

    Ginsbourger, Le Riche & Carraro 2010, Section 3.2 (CL with the mean as the constant)."""
    ok = data.observed()
    n = jnp.sum(ok, axis=0)
    mean = jnp.sum(jnp.where(ok, data.y, 0.0), axis=0) / jnp.maximum(n, 1)
    return jnp.where(n > 0, mean, 0.0)


def _lies(state: Any, n: int, constrained: bool):
    lie = constant_liar(state.data)
    reference = getattr(state, "reference", None)  # m >= 2 objectives: rows (n, m) (then c (n, K))
    m = reference.shape[0] if reference is not None else (lie.shape[0] if lie.ndim and not constrained else 1)
    if m > 1:
        c = jnp.broadcast_to(lie[m:], (n, lie.shape[0] - m)) if constrained else None
        return jnp.broadcast_to(lie[:m], (n, m)), c
    if constrained:
        y = jnp.broadcast_to(lie[0], (n,))
        c = jnp.broadcast_to(lie[1:], (n, lie.shape[0] - 1))
        return y, c
    return jnp.broadcast_to(lie, (n,)), None


def _excluded(data: Dataset, u: Array) -> Dataset:
    """``data`` with the unit-cube point ``u (d,)`` written as a row that no surrogate trains
    on (``mask`` False, not an observation): the acquisition optimizer never returns a written
    row again (:func:`nbo_jax.optimize.refine_argmax`; a finite domain marks its choice
    evaluated). Dropped when the capacity is full."""
    idx = data.write_index(u[None, :])
    return data._replace(
        u=data.u.at[idx].set(u[None, :].astype(data.u.dtype), mode="drop"),
        count=jnp.minimum(data.count + 1, data.capacity).astype(data.count.dtype),
    ).mark_evaluated(u[None, :])


def fantasize(algorithm: BOAlgorithm, state: Any, x: Array) -> Any:
    """``state`` after telling it the points ``x (n, d)`` with constant-liar values.

    For pending points (asked, not yet told) and for the ``"fantasy"`` batch rule; the
    returned state is a what-if copy and must never replace the real one. Needs ``n`` free
    rows in the state's capacity (writes past it are dropped).

    Raises:
        ValueError: ``x`` is not ``(n, d)``.
    """
    x = jnp.asarray(x)
    if x.ndim != 2:
        raise ValueError(f"x must be (n, d) pending points, got shape {x.shape}")
    if x.shape[0] == 0:
        return state
    y, c = _lies(state, x.shape[0], algorithm.constrained)
    return algorithm.tell(state, x.astype(state.data.u.dtype), y, c)


def region_keyword(ask, region) -> dict:
    """``{"region": region}`` when there is a ``region`` and ``ask`` takes one (the library's
    algorithms: ``ask(state, key, region=None)``), else ``{}``: a hand-made ``ask(state,
    key)`` is called as it is, and a trust region projects its answer onto the region."""
    if region is None:
        return {}
    try:
        parameters = inspect.signature(ask).parameters
    except (TypeError, ValueError):  # a builtin or C callable: assume the contract's signature
        return {"region": region}
    takes = "region" in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    return {"region": region} if takes else {}


def batched(algorithm: BOAlgorithm, q: int) -> BOAlgorithm:
    """``algorithm`` asking ``q`` points at a time, by its :attr:`batch_rule`.

    The returned ``ask(state, key)`` gives ``(q, d)``; ``init`` and ``tell`` are unchanged
    (``tell`` takes batches). ``q = 1`` returns ``algorithm`` itself.

    Raises:
        TypeError / ValueError: ``q`` not an int ``>= 1``; ``algorithm`` already asks
        ``q > 1`` points or has an unknown ``batch_rule``; ``"native"`` algorithms batch
        through their factory's ``q`` argument.
    """
    q = check_int("q", q, 1)
    if not isinstance(algorithm, BOAlgorithm):
        raise TypeError(f"algorithm must be an nbo_jax.BOAlgorithm, got {type(algorithm).__name__}")
    if algorithm.batch_rule not in BATCH_RULES:
        raise ValueError(f"algorithm.batch_rule must be one of {BATCH_RULES}, got {algorithm.batch_rule!r}")
    if q == 1:
        return algorithm
    if algorithm.q != 1:
        raise ValueError(f"algorithm {algorithm.name!r} already asks q={algorithm.q} points; build it with q=1")
    if algorithm.batch_rule == "native":
        raise ValueError(f"algorithm {algorithm.name!r} has its own batch rule: pass q={q} to its factory")
    ask_one = algorithm.ask

    if algorithm.batch_rule == "independent":
        def ask(state, key, region=None):
            where = region_keyword(ask_one, region)
            # each draw's point is excluded from the next draws (written, not trained on:
            # the model is unchanged), so the q points are distinct: a box's draws can share
            # a maximizer (measured: Neural-BO's Thompson samples, whose ReLU networks grow
            # linearly towards a corner, put two of a batch of 3 on the same corner)
            def body(s, k):
                x = jnp.reshape(ask_one(s, k, **where), (-1,))
                return s._replace(data=_excluded(s.data, s.bounds.to_unit(x))), x

            return jax.lax.scan(body, state, jax.random.split(key, q))[1]
    else:
        def ask(state, key, region=None):
            where = region_keyword(ask_one, region)
            y_lie, c_lie = _lies(state, 1, algorithm.constrained)

            def body(s, k):
                x = jnp.reshape(ask_one(s, k, **where), (1, -1))
                return algorithm.tell(s, x, y_lie, c_lie), x[0]

            keys = jax.random.split(key, q)
            # the last point needs no fantasy: q - 1 tells, q asks
            last_state, xs = jax.lax.scan(body, state, keys[:-1])
            x_last = jnp.reshape(ask_one(last_state, keys[-1], **where), (1, -1))
            return jnp.concatenate([xs, x_last], axis=0)

    return algorithm._replace(ask=ask, q=q)
