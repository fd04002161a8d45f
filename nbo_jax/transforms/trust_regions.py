"""TuRBO-m: several trust regions, each with its own local model, sharing one budget.

Eriksson, Pearce, Gardner, Turner & Poloczek 2019, "Scalable global optimization via local
Bayesian optimization" (NeurIPS), Section 2, TuRBO-m. Built by :func:`nbo_jax.trust_region`
with ``regions = m > 1``; every region follows TuRBO-1's rules (:mod:`nbo_jax.transforms.trust_region`)::

    regions  : m regions, region j with its own side L_j, counters, restarts and inner
               state, the inner state built from region j's run only (the points it
               asked since its last restart)
    designs  : region 0 starts on init's points; every other region first asks its own
               design of n_design scrambled Sobol points (as after a restart), then its
               inner algorithm is initialized on it; a design is asked before any model
               point, the lowest region first
    ask      : every region's inner algorithm asks inside its own box; a Thompson draw
               y ~ N(mean, std^2) of the region's surrogate at each of its points, in
               the objective's units, chooses: the q smallest draws across the regions
               are asked (inner algorithms without a surrogate: a uniform draw, so a
               random region)
    tell     : a point belongs to the region whose box holds it (the nearest centre in
               units of the box's sides when several or none do; the design's region
               while a design is asked); only that region's counters move, only its
               inner state is told, and it restarts alone
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

import jax
import jax.numpy as jnp

from ..domains import FiniteDomain
from ..observations import initial_data, told_rows
from ..optimize import sobol_samples
from ..outcome import AFFINE_OUTCOME_TRANSFORMS
from ..types import BOAlgorithm, Bounds, Dataset, FactoryCall
from .regions import (
    _after_all_of,
    _run_rows,
    _with_data,
    ask_in_region,
    batch_improves,
    best_row,
    next_length,
    region_box,
    inner_lengthscales,
    unevaluated_choices,
)

Array = jax.Array


class TrustRegionsState(NamedTuple):
    """State of :func:`nbo_jax.trust_region` with ``regions = m > 1`` (a pytree; fixed
    shapes).

    Attributes:
        inner: the ``m`` inner algorithms' states stacked on a leading axis of size ``m``;
            region ``j``'s is built from region ``j``'s run only (stale while its design
            is being asked).
        data: :class:`~nbo_jax.dataset.Dataset` of every observation (unit cube).
        bounds: the box (:class:`~nbo_jax.domains.Bounds`).
        owner: ``(cap,)`` int32, the region each row belongs to (``-1``: no row yet).
        length: ``(m,)`` the regions' sides ``L_j`` (unit-cube units, before the
            lengthscale shaping).
        successes, failures, restarts: ``(m,)`` int32, per region as TuRBO-1's.
        in_design: ``(m,)`` bool, True while a region's design is being asked.
        start: ``(m,)`` int32, the row from which a region's current run starts (its rows:
            ``owner == j`` from there on).
        design: ``(m, n_design, d)`` the regions' current designs (unit cube).
        key: PRNG key for the designs and the inner re-initializations.
        lengthscales: ``(m, d)`` each region's inner surrogate lengthscales after its last init
            or tell (:func:`nbo_jax.transforms.regions.inner_lengthscales`), which shape its box with
            ``ard``; ``None`` without ``ard`` or when the surrogate has none.
    """

    inner: Any
    data: Dataset
    bounds: Bounds
    owner: Array
    length: Array
    successes: Array
    failures: Array
    restarts: Array
    in_design: Array
    start: Array
    design: Array
    key: Array
    lengthscales: Optional[Array] = None


def region_rows(data: Dataset, owner: Array, start: Array, j, *, observed: bool) -> Array:
    """``(cap,)`` bool: the rows of region ``j``'s current run (``owner == j`` from row
    ``start``), the finite observations when ``observed``, else every written row."""
    if observed:
        return (owner == j) & _run_rows(data, start)
    return (owner == j) & (jnp.arange(data.capacity) >= start) & data.written


def regions_now(state: TrustRegionsState, *, ard: bool = True) -> tuple[Array, Array]:
    """``(centres (m, d), boxes (m, 2, d))``: each region's centre (the best finite
    observation of its run, :func:`nbo_jax.transforms.regions.best_row`; the cube's centre while it has
    none) and its box (:func:`nbo_jax.transforms.regions.region_box`, shaped by the inner GP's
    lengthscales when ``ard``)."""
    data = state.data
    m = state.length.shape[0]

    def one(j, ls, length, start):
        run = region_rows(data, state.owner, start, j, observed=True)
        i, _, _, _ = best_row(data.y, run)
        centre = jnp.where(run[i], data.u[i], jnp.full_like(data.u[i], 0.5))
        return centre, region_box(centre, length, ls)

    ls = state.lengthscales if ard else None
    return jax.vmap(one, in_axes=(0, None if ls is None else 0, 0, 0))(jnp.arange(m), ls, state.length, state.start)


def owners(u: Array, centres: Array, boxes: Array, usable: Array) -> Array:
    """``(n,)`` int32: the region of each point ``u (n, d)`` (unit cube) among the ``usable
    (m,)`` ones: the region whose box holds it, the nearest centre (max-norm in units of the
    box's sides) among several or, when none holds it, among all."""
    lo, hi = boxes[:, 0], boxes[:, 1]
    width = jnp.maximum(hi - lo, jnp.finfo(u.dtype).tiny)
    dist = jnp.max(jnp.abs(u[:, None, :] - centres[None]) / width[None], axis=-1)  # (n, m)
    inside = jnp.all((u[:, None, :] >= lo[None]) & (u[:, None, :] <= hi[None]), axis=-1)
    score = jnp.where(inside, dist, dist + 1e6)
    return jnp.argmin(jnp.where(usable[None, :], score, jnp.inf), axis=1).astype(jnp.int32)


def objective_units(data: Dataset, mean: Array, std: Array, incumbent: Array) -> tuple[Array, Array]:
    """A surrogate posterior ``(mean, std)`` (``(N,)`` each) in the objective's units. Every
    library surrogate reports the units of :meth:`~nbo_jax.dataset.Dataset.standardized`,
    or the objective's own (``standardize=False``); which one is read from its
    ``incumbent``: the closer of the data's best value and that value standardized. (A
    ``"power"``, ``"copula"`` or ``"half_rank"`` outcome transform, :mod:`nbo_jax.outcome`,
    has no such map: :func:`trust_regions` refuses it.)"""
    _, shift, scale = data.standardized()
    best = data.incumbent()
    raw = jnp.abs(incumbent - best) < jnp.abs(incumbent - (best - shift) / scale)
    scale = jnp.where(raw, 1.0, scale).astype(mean.dtype)
    shift = jnp.where(raw, 0.0, shift).astype(mean.dtype)
    return shift + scale * mean, scale * std


def trust_regions(inner_alg: BOAlgorithm, config: FactoryCall, *, regions: int, length_init: float,
                  length_min: float, length_max: float, success_tolerance: int, tau_fail, n_design, min_improvement: float,
                  ard: bool, perturb_dims: Optional[int]) -> BOAlgorithm:
    """TuRBO-m around ``inner_alg`` (module doc), built by :func:`nbo_jax.trust_region`,
    which checks every argument; ``tau_fail(d)`` and ``n_design(d)`` give ``tau_fail`` and
    the design size for ``d`` inputs."""
    m, q = regions, inner_alg.q
    transform = inner_alg.config.kwargs.get("outcome_transform") if inner_alg.config is not None else None
    if transform is not None and transform not in AFFINE_OUTCOME_TRANSFORMS:
        raise ValueError(f"regions={m}: the regions' posteriors are compared in the objective's units, and "
                         f"{inner_alg.name!r} is fitted with outcome_transform={transform!r}, which has no affine "
                         f"map back to them; use regions=1 or outcome_transform='standardize'")
    if inner_alg.constrained:
        raise ValueError(f"regions={m}: several trust regions need an unconstrained algorithm (SCBO, the constrained "
                         f"rule, keeps one region); {inner_alg.name!r} models constraints: use regions=1")

    def lengthscales_of(inner) -> Optional[Array]:
        """``(m, d)`` the regions' inner lengthscales with ``ard`` (``None`` without, or when the
        surrogate reports none)."""
        return jax.vmap(lambda s: inner_lengthscales(inner_alg, s))(inner) if ard else None

    def init(key: Array, x0: Array, y0: Array, c0=None, *, bounds, capacity: int) -> TrustRegionsState:
        if isinstance(bounds, FiniteDomain) and q > 1:
            raise ValueError(f"regions={m} with q={q} on a finite domain: regions could choose the same point; "
                             "use q=1 or regions=1")
        k_inner, k_design, k_state = jax.random.split(key, 3)
        # one region after another (jax.lax.map), not vmapped: a region's numbers must not depend on
        # how many seeds are vmapped around it (float64 runs equal vmapped ones)
        inner = jax.lax.map(lambda k: inner_alg.init(k, x0, y0, None, bounds=bounds, capacity=capacity),
                            jax.random.split(k_inner, m))
        data, box = initial_data(x0, y0, None, bounds, capacity, constrained=False)
        d, dtype = data.u.shape[1], data.u.dtype
        n = n_design(d)
        owner = jnp.where(data.written, 0, -1).astype(jnp.int32)
        design = jax.vmap(lambda k: sobol_samples(k, n, d, dtype))(jax.random.split(k_design, m))
        zeros = jnp.zeros((m,), jnp.int32)
        return TrustRegionsState(inner, data, box, owner, jnp.full((m,), length_init, dtype), zeros, zeros, zeros,
                                 jnp.arange(m) > 0, jnp.where(jnp.arange(m) > 0, data.count, 0).astype(jnp.int32),
                                 design, k_state, lengthscales_of(inner))

    def design_ask(state: TrustRegionsState, key: Array) -> Array:
        data = state.data
        if data.finite:
            u = unevaluated_choices(key, data, q)
        else:
            j = jnp.argmax(state.in_design)
            n = state.design.shape[1]
            done = jnp.sum(region_rows(data, state.owner, state.start[j], j, observed=False))
            u = jax.lax.dynamic_slice_in_dim(state.design[j], jnp.clip(done, 0, n - q), q)
        return state.bounds.from_unit(u).astype(data.u.dtype)

    def model_ask(state: TrustRegionsState, key: Array) -> Array:
        centres, boxes = regions_now(state, ard=ard)
        data, bounds = state.data, state.bounds
        dtype = data.u.dtype

        def one(inner, centre, box, k):
            k_ask, k_draw = jax.random.split(k)
            x = ask_in_region(inner_alg, inner, k_ask, centre, box, data, bounds, perturb_dims)
            if inner_alg.surrogate is None:
                return x, jax.random.uniform(k_draw, (q,), dtype)
            post = inner_alg.surrogate(inner, bounds.to_unit(x))
            mean, std = objective_units(inner.data, post.mean, post.std, post.incumbent)
            draw = mean + std * jax.random.normal(k_draw, (q,), dtype)
            return x, jnp.where(jnp.isnan(draw), jnp.inf, draw).astype(dtype)

        xs, draws = jax.lax.map(lambda a: one(*a), (state.inner, centres, boxes, jax.random.split(key, m)))
        chosen = jax.lax.top_k(-jnp.reshape(draws, (-1,)), q)[1]
        return jnp.reshape(xs, (m * q, -1))[chosen]

    def ask(state: TrustRegionsState, key: Array) -> Array:
        x = jax.lax.cond(jnp.any(state.in_design), design_ask, model_ask, state, key)
        return x[0] if q == 1 else x

    def tell(state: TrustRegionsState, x: Array, y: Array, c=None) -> TrustRegionsState:
        data0 = state.data
        d, dtype = data0.u.shape[1], data0.u.dtype
        cap = data0.capacity
        x = jnp.reshape(jnp.asarray(x, dtype), (-1, d))
        u, rows = told_rows(state.bounds, x, y, None, constrained=False)
        rows = rows.astype(dtype)
        idx = data0.write_index(u)
        data = data0.add_batch(u, rows)
        centres, boxes = regions_now(state, ard=ard)
        designing = jnp.any(state.in_design)
        mine_of = jnp.where(designing, jnp.argmax(state.in_design).astype(jnp.int32),
                            owners(u, centres, boxes, ~state.in_design))
        mine_of = jnp.where(idx < cap, mine_of, -1)
        owner = state.owner.at[idx].set(mine_of, mode="drop")
        key, k_regions = jax.random.split(state.key)
        n = state.design.shape[1]
        ok = (idx < cap) & jnp.isfinite(rows)
        box = Bounds(state.bounds.lower, state.bounds.upper)

        def restart_init(run: Array, k: Array):
            """Region's inner state initialized on the first ``n`` rows of its run (its design)."""
            design_rows = jnp.nonzero(run, size=n, fill_value=0)[0]
            y0 = jnp.where(data.failed[design_rows], jnp.nan, data.y[design_rows])
            inner = inner_alg.init(k, state.bounds.from_unit(data.u[design_rows]), y0, None, bounds=box,
                                   capacity=cap)
            if data.finite:
                inner = _with_data(inner, inner.data._replace(choices=data.choices, evaluated=data.evaluated))
            return inner

        def region(args):
            j, inner, length, successes, failures, restarts, in_design, start, design, k = args
            k_design, k_init = jax.random.split(k)
            mine = mine_of == j
            run = region_rows(data, owner, start, j, observed=False)
            complete = in_design & (jnp.sum(run) >= n)
            inner = jax.lax.cond(complete, lambda: restart_init(run, k_init), lambda: inner)
            inner = _after_all_of(inner)
            last_design_row = jnp.nonzero(run, size=n, fill_value=cap)[0][n - 1]
            to_tell = mine & (idx < cap) & jnp.where(in_design, idx > last_design_row, True)
            inner = jax.lax.cond(jnp.any(to_tell),
                                 lambda: inner_alg.tell(inner, jnp.where(to_tell[:, None], x, jnp.nan), rows),
                                 lambda: inner)
            run0 = region_rows(data0, state.owner, start, j, observed=True)
            improved = batch_improves(data0.y, run0, rows, ok & mine, min_improvement)
            counted = jnp.any(mine) & ~in_design
            new = next_length(length, successes, failures, improved, success_tolerance, tau_fail(d), length_max)
            length, successes, failures = (jnp.where(counted, a, b) for a, b in zip(new, (length, successes, failures)))
            restart = counted & (length < length_min)
            fresh = in_design | restart
            length = jnp.where(fresh, jnp.asarray(length_init, dtype), length).astype(dtype)
            successes = jnp.where(fresh, 0, successes).astype(jnp.int32)
            failures = jnp.where(fresh, 0, failures).astype(jnp.int32)
            return (inner, length, successes, failures, (restarts + restart).astype(jnp.int32),
                    (in_design & ~complete) | restart, jnp.where(restart, data.count, start).astype(jnp.int32),
                    jnp.where(restart, sobol_samples(k_design, n, d, dtype), design))

        inner, length, successes, failures, restarts, in_design, start, design = jax.lax.map(
            region, (jnp.arange(m), state.inner, state.length, state.successes, state.failures, state.restarts,
                     state.in_design, state.start, state.design, jax.random.split(k_regions, m)))
        return TrustRegionsState(inner, data, state.bounds, owner, length, successes, failures, restarts, in_design,
                                 start, design, key, lengthscales_of(inner))

    def incumbent_region(state: TrustRegionsState) -> Array:
        """The region owning the best finite observation (0 when there is none)."""
        i, _, _, _ = best_row(state.data.y, _run_rows(state.data, 0))
        return jnp.clip(state.owner[i], 0, m - 1)

    def info(state: TrustRegionsState) -> dict:
        j = incumbent_region(state)
        inner = jax.tree.map(lambda a: a[j], state.inner)
        out = {} if inner_alg.info is None else dict(inner_alg.info(inner))
        out.update(tr_length=state.length[j], tr_successes=state.successes[j], tr_failures=state.failures[j],
                   tr_restarts=jnp.sum(state.restarts), tr_in_design=jnp.any(state.in_design),
                   tr_observed=jnp.sum(region_rows(state.data, state.owner, state.start[j], j, observed=True)),
                   tr_regions_in_design=jnp.sum(state.in_design))
        return out

    surrogate = None
    if inner_alg.surrogate is not None:
        def surrogate(state: TrustRegionsState, u: Array):
            return inner_alg.surrogate(jax.tree.map(lambda a: a[incumbent_region(state)], state.inner), u)

    return BOAlgorithm(init, ask, tell, f"turbo{m}-{inner_alg.name}", surrogate, q, False, info, "native", config)


__all__ = ["TrustRegionsState", "objective_units", "owners", "region_rows", "regions_now"]
