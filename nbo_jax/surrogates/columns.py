"""Any single-output surrogate as a multi-output one: an independent copy per column of a
``(cap, J)`` dataset (several objectives, or an objective and its constraints)::

    state_j = surrogate.init(key_j, data with y = Y[:, j], mask = M[:, j])      j = 1..J, one vmap
    post(u) = (mean_j(u), std_j(u))_j;   draw(u) = (f~_j(u))_j with independent keys

Columns share nothing but the inputs (Gardner et al. 2014's independent GPs for constraints;
Paria, Kandasamy & Poczos 2019 model each objective independently). The posterior's ``mean``
and ``std`` are column 0's, ``constraint_mean`` / ``constraint_std`` ``(N, J - 1)`` the
others' (the layout of every multi-output surrogate; a multi-objective algorithm regroups
them, :func:`nbo_jax.bo.bo_algorithm`), and a draw is ``(N, J)``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from ..base import Surrogate, SurrogatePosterior
from ..dataset import Dataset

Array = jax.Array


def _column(data: Dataset, y: Array, mask: Array) -> Dataset:
    return data._replace(y=y, mask=mask)


def independent(surrogate: Surrogate) -> Surrogate:
    """``surrogate`` (single-output) fitted to each column of a ``(cap, J)`` dataset
    independently (module doc): a multi-output :class:`~nbo_jax.base.Surrogate` whose state is
    ``surrogate``'s stacked over ``J`` (leading axis), whose posterior at ``u (N, d)`` has the
    column-0 ``mean``/``std`` ``(N,)`` and the other columns' ``constraint_mean`` /
    ``constraint_std`` ``(N, J - 1)``, and whose ``sample(state, key)`` (when ``surrogate``
    has one) is ``u (N, d) -> (N, J)``, one independent draw per column, as pathwise as
    ``surrogate``'s.

    Raises:
        TypeError: ``surrogate`` is not a :class:`~nbo_jax.base.Surrogate`.
        ValueError: ``surrogate`` is multi-output already.
    """
    if not isinstance(surrogate, Surrogate):
        raise TypeError(f"surrogate must be an nbo_jax.base.Surrogate, got {type(surrogate).__name__}")
    if surrogate.multi_output:
        raise ValueError(f"surrogate: the {surrogate.name!r} surrogate models every column already (multi_output)")

    def init(key: Array, data: Dataset, rows) -> Any:
        keys = jax.random.split(key, data.y.shape[1])
        return jax.vmap(lambda k, y, m: surrogate.init(k, _column(data, y, m), rows))(keys, data.y.T, data.mask.T)

    def update(state, data: Dataset, rows, refit) -> Any:
        return jax.vmap(lambda s, y, m: surrogate.update(s, _column(data, y, m), rows, refit))(
            state, data.y.T, data.mask.T)

    def posterior(state, u: Array) -> SurrogatePosterior:
        post = jax.vmap(lambda s: surrogate.posterior(s, u))(state)  # (J, N) fields
        ls = None if post.lengthscales is None else post.lengthscales[0]
        return SurrogatePosterior(u, post.mean[0], post.std[0], None, post.mean[1:].T, post.std[1:].T,
                                  lengthscales=ls)

    sample = None
    if surrogate.sample is not None:
        def sample(state, key: Array):
            J = jax.tree.leaves(state)[0].shape[0]
            keys = jax.random.split(key, J)
            # one draw per column, each made once per call (a Python loop over the static J:
            # whatever a draw precomputes is computed here, not at every evaluation)
            draws = [surrogate.sample(jax.tree.map(lambda a: a[j], state), keys[j]) for j in range(J)]
            return lambda u: jnp.stack([draw(u) for draw in draws], axis=-1)

    info = None
    if surrogate.info is not None:
        def info(state) -> dict:
            return {k: jnp.mean(v) for k, v in jax.vmap(surrogate.info)(state).items()}

    return Surrogate(init, update, posterior, sample, pathwise=surrogate.pathwise, multi_output=True,
                     info=info, name=f"independent-{surrogate.name}", counts_by_mean=surrogate.counts_by_mean)


__all__ = ["independent"]
