"""The pieces of TuRBO's trust regions (:mod:`nbo_jax.transforms.trust_region`; Eriksson et
al. 2019): a region's box, the best row of a run, the rows a region owns, success and failure
counting, the side's update, asking an inner algorithm inside a box and comparing regions'
posteriors in the objective's units. Functions of arrays and of the inner algorithm; no state of their own.
"""

from __future__ import annotations

import math
from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np

from ..base import BOAlgorithm, SearchRegion
from ..dataset import Dataset
from ..domains import Bounds
from ..search_space import SearchSpace
from ..types import total_violation
from .batch import region_keyword

Array = jax.Array


def inner_lengthscales(algorithm: BOAlgorithm, inner) -> Optional[Array]:
    """``(d,)`` the lengthscales (unit-cube units) the inner algorithm's surrogate posterior
    reports (:attr:`nbo_jax.base.SurrogatePosterior.lengthscales`: a GP's ARD lengthscales; a
    constrained GP's objective's, as BoTorch's SCBO tutorial), or ``None`` (a model without
    lengthscales, or no surrogate). Asked of the posterior at one observed point; known at
    trace time."""
    if algorithm.surrogate is None:
        return None
    return algorithm.surrogate(inner, inner.data.u[:1]).lengthscales


def counts_by_mean(algorithm: BOAlgorithm, inner) -> bool:
    """Whether ``success="auto"`` counts a batch's success by the posterior mean around the
    inner algorithm: its surrogate says so (:attr:`nbo_jax.base.Surrogate.counts_by_mean`: the
    GP with lengthscales and the linearized network of Neural-BO, NeuralUCB and NeuralTS,
    whose posteriors cost one prediction per row and where the rule was measured), or it
    reports lengthscales (:func:`inner_lengthscales`). Not around NeuralGreedy, whose
    ``surrogate`` refits an ensemble at every call (four times the step's time around it),
    nor around the surrogates where it was not measured. Read at trace time."""
    return ((algorithm.model is not None and algorithm.model.counts_by_mean)
            or inner_lengthscales(algorithm, inner) is not None)


def region_box(centre: Array, length: Array, lengthscales: Optional[Array] = None) -> Array:
    """The trust region ``(2, d)`` (lower, upper corners in the unit cube): a box centred at
    ``centre (d,)`` with side ``length * w_i``, ``w = lengthscales / geomean(lengthscales)``
    (so ``prod(w) = 1`` and the volume is ``length^d`` before clipping; Eriksson et al. 2019,
    Section 2; ``w = 1`` when ``lengthscales`` is ``None``), clipped to ``[0, 1]^d``."""
    if lengthscales is None:
        half = 0.5 * length * jnp.ones_like(centre)
    else:
        log_ls = jnp.log(lengthscales.astype(centre.dtype))
        half = 0.5 * length * jnp.exp(log_ls - jnp.mean(log_ls))
    return jnp.stack([jnp.clip(centre - half, 0.0, 1.0), jnp.clip(centre + half, 0.0, 1.0)])


def best_row(y: Array, ok: Array) -> tuple[Array, Array, Array, Array]:
    """SCBO's best of the rows ``ok (n,)`` of dataset rows ``y``, ``(n,)`` or ``(n, K + 1)``
    (column 0 the objective, then the constraints; Eriksson & Poloczek 2021, Section 3): the
    smallest objective among the feasible rows, or, when none is feasible, the smallest total
    violation (:func:`nbo_jax.types.total_violation`; 0 for an objective alone). Returns
    ``(index, value, feasible, violation)``: the row, its objective value, ``feasible`` ()
    bool, True when some ``ok`` row is feasible (for an objective alone: when some row is
    ``ok``), and the row's total violation (``inf`` when no row is ``ok``)."""
    f = y if y.ndim == 1 else y[:, 0]
    viol = jnp.zeros_like(f) if y.ndim == 1 else total_violation(y[:, 1:])
    viol = jnp.where(ok, viol, jnp.inf)
    feasible = ok & (viol <= 0.0)
    any_feasible = jnp.any(feasible)
    i = jnp.where(any_feasible, jnp.argmin(jnp.where(feasible, f, jnp.inf)), jnp.argmin(viol))
    return i, f[i], any_feasible, viol[i]


def design_size(d: int, q: int, restart_points: Optional[int]) -> int:
    """Points of a restart design: ``restart_points`` (``None``: ``2 d``) rounded up to a
    multiple of ``q`` (Python ints)."""
    n = 2 * d if restart_points is None else restart_points
    return -(-n // q) * q


def failure_limit(d: int, q: int, failure_tolerance: Optional[int]) -> int:
    """``tau_fail``: ``failure_tolerance``, or ``ceil(max(4, 2 d) / q)`` when ``None``: the
    paper's ``ceil(max(4 / q, d / q))`` (Eriksson et al. 2019; BoTorch's TuRBO-1 tutorial) with
    ``d`` doubled, so twice it from ``d = 4`` on and the same at ``d <= 2``. Chosen on the
    selection problems at d = 10 and on COCO at d = 2-10 (``docs/benchmarks.md``, "TuRBO's
    failure tolerance")."""
    if failure_tolerance is not None:
        return failure_tolerance
    return int(math.ceil(max(4.0, 2.0 * d) / q))


def batch_improves(y_run: Array, run: Array, rows: Array, ok: Array, min_improvement: float) -> Array:
    """``()`` bool: whether a batch succeeds against its run (Eriksson et al. 2019, Section 2;
    BoTorch's ``update_state``; with constraints SCBO's order, Eriksson & Poloczek 2021,
    Section 3). ``y_run`` the dataset's rows ``(cap,)`` or ``(cap, K + 1)``, ``run (cap,)`` the
    rows of the run; ``rows`` the batch's rows (same trailing shape), ``ok`` ``(n,)`` those
    that count. A batch succeeds when its best point (:func:`best_row`) is feasible and the
    run had no feasible point or it improves the run's best ``f*`` by more than
    ``min_improvement |f*|``, or when nothing is feasible yet and it lowers the smallest
    total violation."""
    _, best, feasible0, viol0 = best_row(y_run, run)
    _, y_new, feasible1, viol1 = best_row(rows, ok)
    return jnp.where(feasible1, ~feasible0 | (y_new < best - min_improvement * jnp.abs(best)),
                     ~feasible0 & (viol1 < viol0))


def next_length(length: Array, successes: Array, failures: Array, improved: Array, success_tolerance: int,
                failure_tolerance: int, length_max: float) -> tuple[Array, Array, Array]:
    """TuRBO's side update after a batch (Eriksson et al. 2019, Section 2): the counters of
    consecutive successes / failures, ``tau_succ`` successes in a row double the side (at most
    ``length_max``), ``tau_fail`` failures in a row halve it, and the counter that acted
    starts again. Returns ``(length, successes, failures)`` (same shapes; counters int32)."""
    successes = jnp.where(improved, successes + 1, 0)
    failures = jnp.where(improved, 0, failures + 1)
    grow = successes >= success_tolerance
    shrink = failures >= failure_tolerance
    length = jnp.where(grow, jnp.minimum(2.0 * length, length_max),
                       jnp.where(shrink, length / 2.0, length)).astype(length.dtype)
    return (length, jnp.where(grow, 0, successes).astype(jnp.int32),
            jnp.where(shrink, 0, failures).astype(jnp.int32))


def _run_rows(data: Dataset, start: Array) -> Array:
    """``(cap,)`` bool: the finite observations of the current run (rows from ``start``)."""
    observed = data.observed()
    if observed.ndim == 2:
        observed = jnp.all(observed, axis=1)
    return observed & (jnp.arange(data.capacity) >= start)


def posterior_incumbent(mean: Array, run: Array) -> Array:
    """``()`` int32: the row of ``run (cap,)`` (bool) with the smallest posterior mean
    ``mean (cap,)`` (row 0 when ``run`` holds none)."""
    return jnp.argmin(jnp.where(run, mean, jnp.inf)).astype(jnp.int32)


def batch_improves_in_mean(mean: Array, run: Array, idx: Array, ok: Array) -> Array:
    """``()`` bool: whether a batch succeeds by the posterior mean ``mean (cap,)`` of the
    model told it: some counted point (``idx (n,)`` its rows, ``ok (n,)`` those that count)
    has a smaller mean than every earlier point of the run (``run (cap,)``), or the run had
    none. The noisy counterpart of :func:`batch_improves` (``incumbent="posterior_mean"``)."""
    best = jnp.min(jnp.where(run, mean, jnp.inf))
    new = jnp.min(jnp.where(ok, mean[jnp.minimum(idx, mean.shape[0] - 1)], jnp.inf))
    return jnp.any(ok) & (new < best)


def _after_all_of(tree):
    """``tree`` with every inexact leaf made to depend on every other (``+ 0 * s``, ``s`` a
    finite sum over all leaves), so that nothing computed from it starts before all of it is
    computed. Under ``vmap`` the restart's ``lax.cond`` is a select that computes the inner
    ``init`` on every step; without this the inner ``tell`` below ran its LAPACK calls (Neural-BO's
    ``eigh``) independently of the init's, and jaxlib's CPU backend deadlocked on the two
    batched calls (``scripts/turbo_vmap_hang_repro.py``)."""
    leaves = [a for a in jax.tree.leaves(tree) if hasattr(a, "dtype") and jnp.issubdtype(a.dtype, jnp.inexact)]
    if not leaves:
        return tree
    s = sum(jnp.sum(jnp.where(jnp.isfinite(a), a, 0.0)).astype(jnp.float32) for a in leaves)
    zero = 0.0 * jnp.where(jnp.isfinite(s), s, 0.0)
    return jax.tree.map(lambda a: a + zero.astype(a.dtype) if hasattr(a, "dtype") and jnp.issubdtype(
        a.dtype, jnp.inexact) else a, tree)


def _with_data(state, data: Dataset):
    """``state`` with its ``data`` field replaced (states are NamedTuples with ``data``)."""
    return state._replace(data=data)


def ask_in_region(inner_alg: BOAlgorithm, inner, key: Array, centre: Array, box: Array, data: Dataset,
                  bounds: Bounds, perturb_dims: Optional[int]) -> Array:
    """The inner algorithm's ask ``(q, d)`` (box coordinates, ``data``'s dtype) given the
    :class:`~nbo_jax.base.SearchRegion` ``box (2, d)`` around ``centre (d,)`` (unit cube):
    above ``perturb_dims`` inputs its spread raw samples vary the centre's coordinates with
    probability ``perturb_dims / d``; on a finite domain every run's evaluated points
    (``data.evaluated``) are excluded; in a box the answer is clipped to the region (a
    hand-made ``ask(state, key)`` that takes no region is projected onto it)."""
    d = box.shape[1]
    region = SearchRegion(box)
    if perturb_dims is not None and d > perturb_dims:
        region = SearchRegion(box, centre, jnp.asarray(perturb_dims / d, box.dtype))
    if inner.data.finite:  # every run's evaluated points (the region: Dataset.eligible)
        inner = _with_data(inner, inner.data._replace(evaluated=data.evaluated))
    x = inner_alg.ask(inner, key, **region_keyword(inner_alg.ask, region))
    x = jnp.reshape(x, (inner_alg.q, -1)).astype(data.u.dtype)
    if inner.data.finite:
        return x
    # the region's corners in the box: from_unit is monotone, so a point the inner
    # algorithm took inside the region (through from_unit) is left exactly as it is
    clipped = jnp.clip(x, bounds.from_unit(box[0]), bounds.from_unit(box[1]))
    if isinstance(bounds, SearchSpace):  # a category's index is not ordered: never clipped
        return jnp.where(jnp.asarray(bounds.categorical), x, clipped)
    return clipped


def categorical_columns(bounds) -> Optional[np.ndarray]:
    """``(D,)`` bool: the unit-cube columns of a mixed space's categories
    (:meth:`SearchSpace.categorical_columns`); ``None`` for a box, a finite domain or a space
    without a category."""
    if not isinstance(bounds, SearchSpace):
        return None
    mask = bounds.categorical_columns()
    return mask if mask.any() else None


def region_rows(data: Dataset, owner: Array, start: Array, j, *, observed: bool) -> Array:
    """``(cap,)`` bool: the rows of region ``j``'s current run (``owner == j`` from row
    ``start``), the finite observations when ``observed``, else every written row."""
    if observed:
        return (owner == j) & _run_rows(data, start)
    return (owner == j) & (jnp.arange(data.capacity) >= start) & data.written


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
    has no such map: :func:`~nbo_jax.transforms.trust_region.trust_region` refuses it with several regions.)"""
    _, shift, scale = data.standardized()
    best = data.incumbent()
    raw = jnp.abs(incumbent - best) < jnp.abs(incumbent - (best - shift) / scale)
    scale = jnp.where(raw, 1.0, scale).astype(mean.dtype)
    shift = jnp.where(raw, 0.0, shift).astype(mean.dtype)
    return shift + scale * mean, scale * std


def unevaluated_choices(key: Array, data: Dataset, q: int) -> Array:
    """``q`` distinct unevaluated choices ``(q, d)`` (unit cube) of a finite domain, drawn
    uniformly (a restart design's points there)."""
    logits = jnp.where(data.evaluated, -jnp.inf, 0.0) + jax.random.gumbel(key, data.evaluated.shape, data.u.dtype)
    return data.choices[jax.lax.top_k(logits, q)[1]]


__all__ = ["objective_units", "owners", "region_rows", "ask_in_region", "batch_improves", "batch_improves_in_mean", "best_row", "counts_by_mean", "design_size", "failure_limit", "inner_lengthscales", "next_length", "posterior_incumbent", "region_box", "unevaluated_choices"]
