"""The observations of a run: :class:`Dataset`, fixed-capacity buffers of unit-cube inputs and
observed values (state is data: one compile serves a run), with the failed-evaluation and
finite-domain bookkeeping every algorithm shares.

Shapes use ``cap`` for the capacity, ``d`` for the input dimension, ``J`` for the number of
observed functions and ``N`` for the number of points of a finite domain.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

import jax
import jax.numpy as jnp

from .domains import choice_tolerance

Array = jax.Array


class Dataset(NamedTuple):
    """Observations in fixed-capacity buffers (state is data: one compile serves a run).

    Attributes:
        u: ``(cap, d)`` inputs in the unit cube; rows at index >= ``count`` are zero.
        y: ``(cap,)`` observed objective values, or ``(cap, J)`` for ``J`` observed functions
            (the objective in column 0, then ``K`` constraints, ``c <= 0`` feasible).
        mask: like ``y``, bool: True for the entries the surrogate trains on, which are the
            finite observations and the *imputed* failures (below).
        count: ``()`` int32, number of rows written.
        failed: ``(cap,)`` bool, rows whose observation had a NaN/inf entry (a failed
            evaluation). A failed entry is stored as the worst (largest) finite value of its
            column observed up to then, so the surrogate learns that the region is bad and its
            uncertainty shrinks there, instead of forgetting the point (the usual "impute the
            worst value" rule for crashed evaluations); while a column has no finite value
            yet, a failed entry stays masked. Every row's true outcome stays in the caller's
            history (:class:`History` ``valid``, :class:`~nbo_jax.loop.AskTell`).
        choices: for a finite domain (:class:`FiniteDomain`), its ``(N, d)`` points in the
            unit cube; ``None`` for a box.
        evaluated: ``(N,)`` bool with ``choices``: the points told so far (a told row marks
            every choice within :func:`choice_tolerance` of it in every coordinate), which
            the acquisition optimizer never proposes again; ``None`` for a box.
        space: for a mixed search space (:class:`~nbo_jax.search_space.SearchSpace`, static
            under JAX transformations), the space whose encodings ``u`` holds: the acquisition
            optimizer searches valid configurations only; ``None`` otherwise.
    """

    u: Array
    y: Array
    mask: Array
    count: Array
    failed: Array
    choices: Optional[Array] = None
    evaluated: Optional[Array] = None
    space: Optional[Any] = None

    @staticmethod
    def empty(capacity: int, dim: int, dtype=None, outputs: Optional[int] = None,
              choices: Optional[Array] = None, space=None) -> "Dataset":
        """An empty dataset: ``capacity`` rows of ``dim`` inputs; ``outputs=None`` keeps
        ``y (cap,)``, ``outputs=J`` keeps ``y (cap, J)``; ``choices (N, dim)``, the unit-cube
        points of a finite domain (none evaluated yet), or ``None`` for a box; ``space``, a
        mixed search space whose encodings the rows hold (``dim`` its ``unit_dim``)."""
        dtype = dtype or jnp.zeros(()).dtype
        shape = (capacity,) if outputs is None else (capacity, outputs)
        evaluated = None
        if choices is not None:
            choices = jnp.asarray(choices, dtype)
            evaluated = jnp.zeros((choices.shape[0],), bool)
        return Dataset(
            jnp.zeros((capacity, dim), dtype),
            jnp.zeros(shape, dtype),
            jnp.zeros(shape, bool),
            jnp.zeros((), jnp.int32),
            jnp.zeros((capacity,), bool),
            choices,
            evaluated,
            space,
        )

    @property
    def finite(self) -> bool:
        """True for a finite domain (``choices`` is set); a static (trace-time) fact."""
        return self.choices is not None

    def mark_evaluated(self, u: Array) -> "Dataset":
        """The dataset with the choices at the unit-cube points ``u (n, d)`` marked evaluated
        (the same dataset for a box). For states that exclude a point without telling it
        (independent draws of a batch)."""
        if self.choices is None:
            return self
        u = jnp.reshape(u, (-1, self.u.shape[1])).astype(self.u.dtype)
        tol = choice_tolerance(self.u.dtype)
        hit = jax.lax.map(lambda ui: jnp.all(jnp.abs(self.choices - ui) <= tol, axis=1), u)
        return self._replace(evaluated=self.evaluated | jnp.any(hit, axis=0))

    def in_box(self, u: Array, box: Array) -> Array:
        """``(N,)`` bool: the rows of ``u (N, d)`` (unit cube) inside ``box (2, d)`` (lower,
        upper corners), within :func:`~nbo_jax.domains.choice_tolerance` of its faces."""
        tol = choice_tolerance(self.u.dtype)
        lo, hi = box[0].astype(u.dtype), box[1].astype(u.dtype)
        return jnp.all((u >= lo - tol) & (u <= hi + tol), axis=-1)

    def eligible(self, box: Optional[Array] = None) -> Array:
        """``(N,)`` bool, on a finite domain: the choices an ask may return. Without ``box``:
        the choices not evaluated yet. With ``box (2, d)`` (a search region's,
        :class:`~nbo_jax.base.SearchRegion`): those not evaluated yet that lie inside it; when
        none does (every choice of the region was evaluated, or the region holds no choice),
        every choice not evaluated yet: the region is then widened to the whole domain
        rather than repeat a point."""
        free = ~self.evaluated
        if box is None:
            return free
        inside = free & self.in_box(self.choices, box)
        return jnp.where(jnp.any(inside), inside, free)

    @property
    def capacity(self) -> int:
        return self.y.shape[0]

    @property
    def written(self) -> Array:
        """``(cap,)`` bool, rows at index < ``count``."""
        return jnp.arange(self.capacity) < self.count

    def add(self, u: Array, y: Array) -> "Dataset":
        """Append one observation (``u: (d,)``, ``y: ()`` or ``(J,)``)."""
        return self.add_batch(jnp.reshape(u, (1, -1)), jnp.reshape(y, (1,) + self.y.shape[1:]))

    def add_batch(self, u: Array, y: Array) -> "Dataset":
        """Append ``q`` observations (``u: (q, d)``, ``y: (q,)`` or ``(q, J)``) in one scatter.

        Rows whose ``u`` has a NaN/inf coordinate carry no information about any point and
        are not written (``count`` grows by the number of finite rows). A NaN/inf ``y`` entry
        is a failed evaluation: the row is flagged in ``failed`` and the entry is imputed with
        the largest finite value of its column (among the stored rows and the new ones), or
        masked while the column has none. Writes past the capacity are dropped (the
        Python-side drivers refuse them before that)."""
        u = jnp.reshape(u, (-1, self.u.shape[1])).astype(self.u.dtype)
        y = jnp.reshape(y, (u.shape[0],) + self.y.shape[1:]).astype(self.y.dtype)
        row_ok = jnp.all(jnp.isfinite(u), axis=1)
        idx = self.write_index(u)
        finite = jnp.isfinite(y)
        worst = jnp.maximum(
            jnp.max(jnp.where(self.mask & ~self._failed_entries(), self.y, -jnp.inf), axis=0),
            jnp.max(jnp.where(finite & self._rows(row_ok, y), y, -jnp.inf), axis=0))
        has_worst = jnp.isfinite(worst)
        y_store = jnp.where(finite, y, jnp.where(has_worst, worst, 0.0))
        m_store = finite | has_worst
        failed_row = jnp.any(~finite, axis=tuple(range(1, y.ndim)))
        return self._replace(
            u=self.u.at[idx].set(u, mode="drop"),
            y=self.y.at[idx].set(y_store, mode="drop"),
            mask=self.mask.at[idx].set(m_store, mode="drop"),
            count=self.count + jnp.sum(row_ok).astype(self.count.dtype),
            failed=self.failed.at[idx].set(failed_row, mode="drop"),
        ).mark_evaluated(u)

    def write_index(self, u: Array) -> Array:
        """``(n,)`` int: the rows :meth:`add_batch` writes the points ``u (n, d)`` to (a point
        with a NaN/inf coordinate is not written: index ``capacity``, which ``mode="drop"``
        scatters drop). For states that keep per-row arrays beside the dataset."""
        ok = jnp.all(jnp.isfinite(jnp.reshape(u, (-1, self.u.shape[1]))), axis=1)
        return jnp.where(ok, self.count + jnp.cumsum(ok) - 1, self.capacity)

    @staticmethod
    def _rows(row_ok: Array, like: Array) -> Array:
        return jnp.reshape(row_ok, row_ok.shape + (1,) * (like.ndim - 1))

    def _failed_entries(self) -> Array:
        """Entries that hold an imputed value (failed rows), shaped like ``y``."""
        return self._rows(self.failed, self.y)

    def column(self, j: int) -> "Dataset":
        """The single-output dataset of column ``j`` of a ``(cap, J)`` dataset."""
        return self._replace(y=self.y[:, j], mask=self.mask[:, j])

    def observed(self) -> Array:
        """Like ``mask``, True only for finite observations (imputed failures excluded); for
        incumbents and anything that must not count a failure as a measurement."""
        return self.mask & ~self._failed_entries()

    def standardized(self) -> tuple[Array, Array, Array]:
        """Targets standardized over the rows in ``mask``: ``((y - mean) / std, mean, std)``.

        Rows outside ``mask`` are 0 in the result. ``std`` falls back to 1 when fewer than two
        rows are valid or they are all equal. Single-output datasets only.
        """
        n = jnp.maximum(jnp.sum(self.mask), 1)
        mean = jnp.sum(jnp.where(self.mask, self.y, 0.0)) / n
        var = jnp.sum(jnp.where(self.mask, (self.y - mean) ** 2, 0.0)) / n
        std = jnp.where(var > 1e-12, jnp.sqrt(var), 1.0)
        return jnp.where(self.mask, (self.y - mean) / std, 0.0), mean, std

    def incumbent(self, values: Array | None = None) -> Array:
        """``()`` the smallest of ``values`` (``(cap,)``, e.g. standardized targets; default
        ``y``) over the finite observations: a failure's imputed value is never the
        incumbent. ``+inf`` when there is none. Single-output datasets."""
        return jnp.min(jnp.where(self.observed(), self.y if values is None else values, jnp.inf))

    def best(self) -> tuple[Array, Array]:
        """``(u_best (d,), y_best ())``: the finite observation with the smallest ``y``
        (single-output datasets; failures are never the incumbent)."""
        yy = jnp.where(self.observed(), self.y, jnp.inf)
        i = jnp.argmin(yy)
        return self.u[i], yy[i]
