"""Acquisition maximization over the unit cube: one optimizer for every algorithm.

:func:`optimize_acqf` (settings: :class:`AcqOptimizer`, built by :func:`acq_optimizer`) is
BoTorch's ``optimize_acqf`` with ``q = 1`` (Balandat et al. 2020)::

    raw samples  : scrambled Sobol points of [0, 1]^d (random digital shift) plus Gaussian
                   perturbations of the best observations (BoTorch's sample_around_best)
    restarts     : num_restarts of them drawn by Boltzmann sampling of the standardized raw
                   utilities, weights exp(eta z), the best raw sample always kept
                   (BoTorch's initialize_q_batch)
    climb        : every restart climbs the utility by box-constrained L-BFGS
                   (:func:`nbo_jax.lbfgsb.minimize_lbfgsb`) until scipy's tolerances or
                   ``steps`` iterations, all restarts in one batched call
    answer       : the best of the climbed points and the best raw sample

``method="adam"`` climbs by projected Adam steps instead (the papers' authors' code), and
``raw_sampler="uniform"`` / ``restarts="top"`` give the papers' uniform candidate sets and
top-k starts. On a **finite domain** (``data.choices`` set, :class:`~nbo_jax.domains.FiniteDomain`)
:func:`optimize_acqf` scores all choices and returns the best one not evaluated yet, with no
climb (BoTorch's ``optimize_acqf_discrete`` with ``unique=True``).

**Inside a box.** Everything above runs in ``[0, 1]^d`` or, given a ``region`` (a
:class:`~nbo_jax.base.SearchRegion`: a ``(2, d)`` box of the unit cube, e.g. a trust region,
:func:`nbo_jax.trust_region`; BoTorch's ``bounds`` argument), inside that box: the spread raw
samples fill it, the local ones are clipped to it, the climb is constrained to it,
:func:`random_point` draws in it, and a finite domain picks among the choices inside it
(:meth:`~nbo_jax.dataset.Dataset.eligible`: the whole domain's unevaluated choices when the
region holds none). ``region=None`` runs exactly the cube's code.

**Mixed spaces.** When ``data.space`` is a :class:`~nbo_jax.search_space.SearchSpace` (integer
and categorical parameters encoded in the cube), the raw samples are rounded to valid
configurations (:meth:`~nbo_jax.search_space.SearchSpace.round`), the climb maximizes the
utility of the rounded point (it moves the continuous columns), and the best point then takes
up to :data:`MIXED_SEARCH_STEPS` discrete moves to its best neighbour (one integer step, or one
other category: BoTorch's ``optimize_acqf_mixed_alternating``, Daulton et al. 2022) and one
more continuous climb, started from that point and, when there are at most
:data:`MIXED_ENUMERATION_LIMIT` combinations of the categories, from the best
``num_restarts`` of them at the climbed point (every combination scored, as BoTorch's
``optimize_acqf_mixed`` enumerates them). Every answer is a valid
configuration; integers are rounded inside the search, not afterwards only. With ``steps = 0``
(no climb) and ``discrete_search=True``, the best raw sample still takes the discrete part: the
best combination of its categories (when enumerable), then the local search.
"""

from __future__ import annotations

import functools
import math
from typing import Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np
import optax

from .base import SearchRegion
from .lbfgsb import minimize_lbfgsb
from .search_space import Categorical, Integer
from .types import Dataset

Array = jax.Array

METHODS = ("lbfgsb", "adam")
RAW_SAMPLERS = ("sobol", "uniform")
RESTART_RULES = ("boltzmann", "top")
LOCAL_RANKS = ("observed", "mean")


def _box(region: Optional[SearchRegion]) -> Optional[Array]:
    """``region``'s ``(2, d)`` box, or ``None`` without a region."""
    return None if region is None else region.box


def available_score(values: Array, data: Dataset, region: Optional[SearchRegion] = None) -> Array:
    """``values (N,)`` of a finite domain's choices, ready for an argmax that never picks an
    evaluated choice: evaluated ones (and, with ``region``, those outside it while the region
    holds an unevaluated one: :meth:`~nbo_jax.dataset.Dataset.eligible`) become ``-inf``; NaN
    and ``-inf`` utilities of the others become the dtype's lowest finite number (they still
    beat every excluded choice)."""
    low = jnp.finfo(values.dtype).min
    clean = jnp.where(jnp.isnan(values) | (values == -jnp.inf), low, values)
    return jnp.where(data.eligible(_box(region)), clean, -jnp.inf)


def best_available(values: Array, data: Dataset, region: Optional[SearchRegion] = None) -> Array:
    """The unevaluated choice ``(d,)`` (unit cube) of largest ``values (N,)`` on a finite
    domain (:func:`available_score`)."""
    return data.choices[jnp.argmax(available_score(values, data, region))]


def random_point(key: Array, data: Dataset, region: Optional[SearchRegion] = None) -> Array:
    """A uniform random point ``(d,)`` of the unit cube (of ``region``'s box when given), or,
    on a finite domain, a uniform random choice among those not evaluated yet (inside the
    region when it holds one: :meth:`~nbo_jax.dataset.Dataset.eligible`) (random search;
    exploration steps)."""
    if data.finite:
        logits = jnp.where(data.eligible(_box(region)), 0.0, -jnp.inf)
        return data.choices[jax.random.categorical(key, logits)]
    u = jax.random.uniform(key, data.u.shape[1:], data.u.dtype)
    u = u if region is None else _into_region(u, region.box)
    return u if data.space is None else data.space.round(u)


def _into_region(u: Array, box: Array) -> Array:
    """Unit-cube points ``u (..., d)`` mapped affinely onto ``box (2, d)``."""
    lo, hi = box[0].astype(u.dtype), box[1].astype(u.dtype)
    return jnp.clip(lo + (hi - lo) * u, lo, hi)


def region_bounds(region: Optional[SearchRegion], dtype=jnp.float32):
    """``(lower, upper)`` of the box the acquisition optimizer works in: ``region``'s corners
    ``(d,)`` each (as ``dtype``), or the scalars ``0.0``, ``1.0`` (the unit cube) without a
    region."""
    if region is None:
        return 0.0, 1.0
    return region.box[0].astype(dtype), region.box[1].astype(dtype)


@functools.lru_cache(maxsize=64)
def _sobol_ints(n: int, d: int) -> np.ndarray:
    """The first ``n`` points of the unscrambled ``d``-dimensional Sobol sequence as 32-bit
    integers ``(n, d)`` uint32 (scipy's direction numbers, Joe & Kuo 2008)."""
    from scipy.stats import qmc

    m = max(0, math.ceil(math.log2(max(n, 1))))
    pts = qmc.Sobol(d, scramble=False, bits=32).random_base2(m)[:n]
    return (pts * 2.0 ** 32).astype(np.uint64).astype(np.uint32)


def sobol_samples(key: Array, n: int, d: int, dtype=jnp.float32) -> Array:
    """``n`` scrambled Sobol points of ``[0, 1]^d``, ``(n, d)`` ``dtype``: the first ``n``
    points of the Sobol sequence with a random digital shift (each coordinate's 32 bits XOR a
    uniform random word; Owen 1995 calls this a digital shift: every draw is uniform on the
    cube and a power-of-two prefix stays a (t, m, d)-net). ``n``, ``d`` are Python ints."""
    base = jnp.asarray(_sobol_ints(int(n), int(d)))
    shift = jax.random.bits(key, (d,), jnp.uint32)
    words = jnp.bitwise_xor(base, shift[None, :])
    return jnp.clip(words.astype(dtype) * jnp.asarray(2.0 ** -32, dtype), 0.0, 1.0)


def candidate_set(
    key: Array, data: Dataset, n_uniform: int, n_local: int = 0, *, local_std: float = 0.05,
    n_best: int = 5, sampler: str = "uniform", region: Optional[SearchRegion] = None, local_moves: bool = False,
    local_integer_std: float = 0.0,
) -> Array:
    """Raw samples in the unit cube, ``(n_uniform + n_local, d)``; on a finite domain, its
    ``(N, d)`` choices (all of them, evaluated ones included: mask their scores with
    :func:`available_score`).

    The first ``n_uniform`` are spread over the cube: scrambled Sobol points
    (``sampler="sobol"``, :func:`sobol_samples`) or independent uniform draws
    (``"uniform"``). The ``n_local`` others are Gaussian perturbations (std ``local_std``,
    clipped to the cube) spread evenly over the ``n_best`` best valid observations (fewer if
    fewer are valid; with none, they are uniform), "best" by ``data.y``: a caller that ranks
    its observations otherwise passes a copy of ``data`` whose ``y`` holds the ranking (e.g.
    the posterior mean at the observations, ``AcqOptimizer.local_rank="mean"``, or
    the constrained algorithms' ``feasibility_ranked``).

    With a ``region`` (:class:`~nbo_jax.base.SearchRegion`) the spread points are mapped
    affinely onto its box, the local ones have std ``local_std`` times the box's width in each
    coordinate and are clipped to it (their centres too: an observation outside the box
    centres points on its nearest face). With ``region.centre`` and ``region.perturb``, each
    spread point keeps the centre's value in each coordinate except with probability
    ``region.perturb`` (at least one coordinate of each point varies): TuRBO's
    candidates, which vary about 20 coordinates of the incumbent at a time in high
    dimensions (Eriksson et al. 2019, the authors' code's ``prob_perturb = min(20 / d, 1)``;
    BoTorch's TuRBO-1 tutorial).

    On a mixed space (``data.space``) every raw sample is rounded to a valid configuration
    (:meth:`~nbo_jax.search_space.SearchSpace.round`). A perturbation of ``local_std`` rarely
    leaves an integer's or a category's value, so with ``local_moves`` every other local raw
    sample also moves one discrete parameter to a random neighbouring value (one integer step,
    or another category; :meth:`~nbo_jax.search_space.SearchSpace.neighbours`), as BoTorch's
    ``optimize_acqf_mixed_alternating`` sprays the best points to discrete neighbours
    (``get_spray_points``); with a ``region``, a move that would leave its box is not made.
    With ``local_integer_std > 0`` the local perturbation of an integer parameter's column has
    std ``max(local_std, local_integer_std / size)``, ``size`` its number of values (each value
    holds ``1 / size`` of its column: exactly on a linear scale, on average on a log one):
    ``local_integer_std = 1`` reaches the neighbouring values about as often as it keeps the
    centre's.

    Raises:
        ValueError: unknown ``sampler``.
    """
    if data.finite:
        return data.choices
    if data.space is not None:  # a mixed space: the raw samples are valid configurations
        if local_integer_std > 0:  # (D,) per column: integers' in units of their steps
            local_std = jnp.asarray(_integer_local_std(data.space, local_std, local_integer_std), data.u.dtype)
        raw = data.space.round(candidate_set(key, data._replace(space=None), n_uniform, n_local, local_std=local_std,
                                             n_best=n_best, sampler=sampler, region=region))
        if local_moves and n_local > 1 and data.space.discrete:
            kept = raw[n_uniform + 1::2]
            keys = jax.random.split(jax.random.fold_in(key, 2), kept.shape[0])
            moved = jax.vmap(lambda k, u: _random_neighbour(k, u, data.space))(keys, kept)
            if region is not None:  # a move does not leave the region's box
                moved = jnp.where((data.in_box(moved, region.box) | ~data.in_box(kept, region.box))[:, None],
                                  moved, kept)
            raw = raw.at[n_uniform + 1::2].set(moved)
        return raw
    if sampler not in RAW_SAMPLERS:
        raise ValueError(f"sampler must be one of {RAW_SAMPLERS}, got {sampler!r}")
    d = data.u.shape[1]
    k_u, k_pick, k_eps = jax.random.split(key, 3)
    dtype = data.u.dtype
    if sampler == "sobol":
        spread = sobol_samples(k_u, n_uniform, d, dtype)
    else:
        spread = jax.random.uniform(k_u, (n_uniform, d), dtype)
    if region is not None:
        spread = _into_region(spread, region.box)
        if region.centre is not None and region.perturb is not None:
            spread = _perturbed_centre(jax.random.fold_in(key, 1), spread, region)
    if n_local == 0:
        return spread
    n_best = min(n_best, data.capacity)
    score = jnp.where(data.observed(), data.y, jnp.inf)
    _, best_idx = jax.lax.top_k(-score, n_best)
    n_valid = jnp.minimum(jnp.sum(data.observed()), n_best)
    which = jnp.arange(n_local) % jnp.maximum(n_valid, 1)
    centers = data.u[best_idx[which]]
    eps = jax.random.normal(k_eps, (n_local, d), dtype)
    fallback = jax.random.uniform(k_pick, (n_local, d), dtype)
    if region is None:
        local = jnp.clip(centers + local_std * eps, 0.0, 1.0)
    else:
        lo, hi = region_bounds(region, dtype)
        local = jnp.clip(jnp.clip(centers, lo, hi) + (local_std * (hi - lo)) * eps, lo, hi)
        fallback = _into_region(fallback, region.box)
    local = jnp.where(n_valid > 0, local, fallback)
    return jnp.concatenate([spread, local], axis=0)


def raw_samples(key: Array, data: Dataset, options: AcqOptimizer,
                region: Optional[SearchRegion] = None) -> Array:
    """:func:`candidate_set` with ``options``'s raw-sample settings (:class:`AcqOptimizer`:
    ``n_uniform`` spread and ``n_local`` local ones, ``local_std``, ``n_best``,
    ``raw_sampler``, ``local_moves``, ``local_integer_std``): ``(options.raw_samples, d)``, or
    a finite domain's choices. The one place an acquisition optimizer's settings become raw
    samples."""
    return candidate_set(key, data, options.n_uniform, options.n_local, local_std=options.local_std,
                         n_best=options.n_best, sampler=options.raw_sampler, region=region,
                         local_moves=options.local_moves, local_integer_std=options.local_integer_std)


def _integer_local_std(space, local_std: float, local_integer_std: float) -> np.ndarray:
    """``(D,)`` the local perturbation's std per unit-cube column: ``local_std``, and
    ``max(local_std, local_integer_std / size)`` in an integer parameter's column."""
    std = np.full(space.unit_dim, local_std)
    for p, cols in space.columns():
        if isinstance(p, Integer):
            std[cols] = max(local_std, local_integer_std / p.size)
    return std


def _random_neighbour(key: Array, u: Array, space) -> Array:
    """One of the discrete neighbours of ``u (D,)`` (:meth:`SearchSpace.neighbours`), drawn
    uniformly; ``(D,)``."""
    neighbours = space.neighbours(u)
    return neighbours[jax.random.randint(key, (), 0, neighbours.shape[0])]


def _perturbed_centre(key: Array, spread: Array, region: SearchRegion) -> Array:
    """``spread (n, d)`` region points with each coordinate replaced by the region centre's
    except with probability ``region.perturb``; a point left with no coordinate of its own
    varies in one drawn uniformly (:func:`candidate_set`)."""
    n, d = spread.shape
    k_mask, k_one = jax.random.split(key)
    lo, hi = region_bounds(region, spread.dtype)
    centre = jnp.clip(region.centre.astype(spread.dtype), lo, hi)
    vary = jax.random.uniform(k_mask, (n, d), spread.dtype) < region.perturb
    one = jax.nn.one_hot(jax.random.randint(k_one, (n,), 0, d), d, dtype=bool)
    vary = vary | (one & ~jnp.any(vary, axis=1, keepdims=True))
    return jnp.where(vary, spread, centre[None, :])


def initialize_restarts(key: Array, values: Array, n: int, *, eta: float = 1.0, rule: str = "boltzmann") -> Array:
    """Indices ``(n,)`` of the raw samples that start a climb.

    ``rule="boltzmann"``: ``n`` draws without replacement with probabilities proportional to
    ``exp(eta z)``, ``z`` the standardized finite ``values`` (Gumbel top-k), the best raw
    sample always among them (BoTorch's ``initialize_q_batch``; Balandat et al. 2020).
    ``rule="top"``: the ``n`` largest values. NaN/inf values are drawn last.

    Args:
        key: PRNG key (unused by ``"top"``). values: ``(N,)`` raw-sample utilities.
        n: restarts, ``1 <= n <= N`` (Python int). eta: inverse temperature ``> 0``.
    """
    finite = jnp.isfinite(values)
    if rule == "top":
        return jax.lax.top_k(jnp.where(finite, values, -jnp.inf), n)[1]
    cnt = jnp.maximum(jnp.sum(finite), 1)
    v = jnp.where(finite, values, 0.0)
    mean = jnp.sum(v) / cnt
    std = jnp.sqrt(jnp.sum(jnp.where(finite, (v - mean) ** 2, 0.0)) / cnt)
    z = jnp.where(std > 0, (v - mean) / jnp.where(std > 0, std, 1.0), 0.0)
    logits = jnp.where(finite, eta * z, -jnp.inf)
    logits = logits.at[jnp.argmax(jnp.where(finite, values, -jnp.inf))].set(jnp.inf)
    gumbel = jax.random.gumbel(key, values.shape, values.dtype)
    return jax.lax.top_k(logits + gumbel, n)[1]


def projected_gradient_ascent(
    utility: Callable[[Array], Array], u0: Array, *, steps: int = 50, learning_rate: float = 0.01,
    lower=0.0, upper=1.0,
) -> Array:
    """Maximize ``utility(u (d,)) -> ()`` from each start ``u0 (k, d)`` with Adam steps
    projected onto ``[lower, upper]`` (default ``[0, 1]^d``; scalars or ``(d,)`` arrays)
    (vmapped over starts; the authors' climb in the Neural-BO and NeuralGreedy code).
    Returns ``(k, d)``."""
    opt = optax.adam(learning_rate)
    grad = jax.grad(lambda u: -utility(u))

    def one(u):
        def step(c, _):
            u, s = c
            upd, s = opt.update(grad(u), s, u)
            return (jnp.clip(optax.apply_updates(u, upd), lower, upper), s), None

        (u, _), _ = jax.lax.scan(step, (u, opt.init(u)), None, length=steps)
        return u

    return jax.vmap(one)(u0)


def climb(utility: Callable[[Array], Array], u0: Array, options: "AcqOptimizer", lower=0.0, upper=1.0) -> Array:
    """Climb ``utility (k, d) -> (k,)`` (pointwise, maximized) from each start ``u0 (k, d)``
    inside the box ``[lower, upper]`` (default ``[0, 1]^d``; scalars or ``(d,)`` arrays, e.g.
    a trust region from :func:`region_bounds`) with ``options.method`` for at most
    ``options.steps`` iterations; returns ``(k, d)``. L-BFGS-B calls ``utility`` on all ``k``
    rows at once; Adam on one."""
    if options.method == "adam":
        return projected_gradient_ascent(lambda u: utility(u[None, :])[0], u0, steps=options.steps,
                                         learning_rate=options.learning_rate, lower=lower, upper=upper)
    return minimize_lbfgsb(lambda u: -utility(u), u0, lower, upper, max_iter=options.steps).x


def refine_argmax(
    key: Array,
    values: Array,
    candidates: Array,
    utility: Callable[[Array], Array],
    options: "AcqOptimizer",
    data: Dataset | None = None,
    region: Optional[SearchRegion] = None,
) -> Array:
    """Raw samples -> restarts (:func:`initialize_restarts`) -> :func:`climb` -> the best
    point ``(d,)``.

    Args:
        key: PRNG key for the Boltzmann draw of the restarts.
        values: ``(N,)`` utilities of ``candidates (N, d)`` (NaN never wins).
        utility: ``u (M, d) -> (M,)``, pointwise, the utility climbed and used to score the
            final pool.
        options: :class:`AcqOptimizer` (``steps = 0``: no climb).
        data: unit-cube :class:`~nbo_jax.dataset.Dataset` or ``None``; a point within
            ``options.min_distance`` (max-norm; :data:`DUPLICATE_TOL` by default; on a mixed
            space on the continuous columns of the configuration it rounds to, its integers
            and categories equal) of one of its written rows (observed, failed or fantasized:
            pending points and a batch's earlier points) is never returned while another
            candidate or climbed point is not (a climb pinned to a corner of the box would
            otherwise repeat it).
        region: a :class:`~nbo_jax.base.SearchRegion` whose box the climb stays in
            (:func:`region_bounds`), or ``None`` (the unit cube); ``candidates`` should lie
            in it too (:func:`candidate_set` draws them there).

    On a mixed space (``data.space``) the climb is :func:`_alternate`'s: a climb of the
    continuous columns, a discrete local search and a second climb, compiled once.

    Returns:
        The pool point with the largest ``utility`` (the best candidate itself when
        ``steps = 0``): never worse than the best candidate, which is in the pool.
    """
    written = _written_test(data, options)
    values = jnp.where(written(candidates), -jnp.inf, values)
    best = argmax_point(values, candidates)
    space = None if data is None else data.space
    if options.steps == 0:
        if options.discrete_search and space is not None:
            return _search_discrete(utility, best, space, written)
        return best
    if space is not None:  # a mixed space: the utility of the configuration a point rounds to
        utility = _rounded(utility, space)
    n = min(options.num_restarts, candidates.shape[0])
    starts = candidates[initialize_restarts(key, values, n, eta=options.eta, rule=options.restarts)]
    lower, upper = region_bounds(region, candidates.dtype)
    if space is not None:  # Dataset.space is set only for a space with a discrete parameter
        return _alternate(utility, best, starts, options, space, written, lower, upper)
    climbed = climb(utility, starts, options, lower, upper)
    pool = jnp.concatenate([best[None, :], climbed], axis=0)
    return argmax_point(jnp.where(written(pool), -jnp.inf, utility(pool)), pool)


def _rounded(utility: Callable[[Array], Array], space) -> Callable[[Array], Array]:
    """``utility`` of the configurations points round to (:meth:`SearchSpace.round`): flat in
    the discrete columns, so a climb moves the continuous ones only."""
    return lambda u: utility(space.round(u))


def _categorical_combinations(space) -> tuple[np.ndarray, np.ndarray] | None:
    """Every combination of a mixed space's categories as ``(M, D)`` one-hot rows (0 outside
    the categorical columns) and the ``(D,)`` bool mask of those columns; ``None`` without a
    category or with more than :data:`MIXED_ENUMERATION_LIMIT` combinations."""
    blocks = [cols for p, cols in space.columns() if isinstance(p, Categorical)]
    sizes = [b.stop - b.start for b in blocks]
    if not blocks or math.prod(sizes) > MIXED_ENUMERATION_LIMIT:
        return None
    rows = np.zeros((math.prod(sizes), space.unit_dim))
    for m, choice in enumerate(np.ndindex(*sizes)):
        for b, j in zip(blocks, choice):
            rows[m, b.start + j] = 1.0
    return rows, space.categorical_columns()


def _enumerated_starts(utility: Callable[[Array], Array], u: Array, n: int, space,
                       written: Callable[[Array], Array]) -> Array:
    """The best ``n`` combinations of the categories with ``u (D,)``'s other columns, ``(n, D)``
    (every combination scored: BoTorch's ``optimize_acqf_mixed`` enumerates the combinations
    and optimizes each; here the best ones start the last climb); ``(0, D)`` without a category
    or with more than :data:`MIXED_ENUMERATION_LIMIT` combinations; a combination ``written``
    (:func:`_written_test`) is never among them while another is not."""
    combos = _categorical_combinations(space)
    if combos is None:
        return jnp.zeros((0, u.shape[0]), u.dtype)
    rows, mask = combos
    cands = jnp.where(jnp.asarray(mask), jnp.asarray(rows, u.dtype), u[None, :])
    vals = jnp.where(written(cands), -jnp.inf, utility(cands))
    vals = jnp.where(jnp.isnan(vals), -jnp.inf, vals)
    return cands[jax.lax.top_k(vals, min(n, rows.shape[0]))[1]]


def _local_search(utility: Callable[[Array], Array], u: Array, space, written: Callable[[Array], Array]) -> Array:
    """Up to :data:`MIXED_SEARCH_STEPS` moves of ``u (D,)`` to its best neighbour not ``written``
    (:func:`_written_test`) while that improves ``utility`` (one discrete parameter at a time,
    :meth:`SearchSpace.neighbours`; BoTorch's ``optimize_acqf_mixed_alternating``); ``(D,)``."""
    def move(carry, _):
        u, value = carry
        nb = space.neighbours(u)
        vals = jnp.where(written(nb), -jnp.inf, utility(nb))
        vals = jnp.where(jnp.isnan(vals), -jnp.inf, vals)
        j = jnp.argmax(vals)
        better = vals[j] > value
        return (jnp.where(better, nb[j], u), jnp.where(better, vals[j], value)), None

    value = utility(u[None])[0]
    (moved, _), _ = jax.lax.scan(move, (u, jnp.where(jnp.isnan(value), -jnp.inf, value)), None,
                                 length=MIXED_SEARCH_STEPS)
    return moved


def _search_discrete(utility: Callable[[Array], Array], best: Array, space,
                     written: Callable[[Array], Array]) -> Array:
    """The acquisition optimizer on a mixed space without a climb (``steps = 0``,
    ``discrete_search``): from the best raw sample ``best (D,)``, the best combination of the
    categories at its other columns (every combination scored, when there are at most
    :data:`MIXED_ENUMERATION_LIMIT`), then a discrete local search from there
    (:func:`_local_search`); the best of the three points not ``written`` (:func:`_written_test`),
    never worse than ``best``."""
    top = _enumerated_starts(utility, best, 1, space, written)
    start = best if top.shape[0] == 0 else top[0]
    pool = jnp.concatenate([best[None], start[None], _local_search(utility, start, space, written)[None]], axis=0)
    return argmax_point(jnp.where(written(pool), -jnp.inf, utility(pool)), pool)


def _alternate(utility: Callable[[Array], Array], best: Array, starts: Array, options: "AcqOptimizer", space,
               written: Callable[[Array], Array], lower=0.0, upper=1.0) -> Array:
    """The acquisition optimizer's two climbs on a mixed space (``utility`` is already
    :func:`_rounded`), from the best raw sample ``best (D,)`` and the restarts ``starts (k, D)``:

    1. climb the continuous columns from ``starts``; ``u`` = the best of ``best`` and the
       climbed configurations;
    2. from ``u``: a discrete local search (up to ``MIXED_SEARCH_STEPS`` moves to the best
       unwritten neighbour, one discrete parameter at a time, :meth:`SearchSpace.neighbours`;
       BoTorch's ``optimize_acqf_mixed_alternating``, Daulton et al. 2022), then one more climb
       from its end and from the best combinations of the categories at ``u``
       (:func:`_enumerated_starts`, when there are at most :data:`MIXED_ENUMERATION_LIMIT`);
       the answer is the best of ``u``, the search's end and the climbed configurations.

    The two climbs are one ``lax.scan`` of two stages over the same body (a branch on the
    unbatched stage picks the starts), so the climb is compiled once: each stage's starts are
    padded to the same count with copies of their first row (each row of the batched climb is
    its own problem, so copies change no result). Points ``written`` (:func:`_written_test`) lose
    to any other. Never worse than ``best``."""
    enumerated = _categorical_combinations(space)
    k = max(starts.shape[0], 1 + (0 if enumerated is None else min(options.num_restarts, enumerated[0].shape[0])))

    def padded(rows):
        return jnp.concatenate([rows, jnp.broadcast_to(rows[:1], (k - rows.shape[0],) + rows.shape[1:])], axis=0)

    def searched(u):
        """``(the local search's end (D,), the second climb's starts (k, D))`` from ``u``."""
        moved = _local_search(utility, u, space, written)
        return moved, padded(jnp.concatenate([moved[None],
                                              _enumerated_starts(utility, u, options.num_restarts, space, written)]))

    def stage(u, first):
        extra, begin = jax.lax.cond(first, lambda: (u, padded(starts)), lambda: searched(u))
        climbed = space.round(climb(utility, begin, options, lower, upper))
        pool = jnp.concatenate([u[None], extra[None], climbed], axis=0)
        return argmax_point(jnp.where(written(pool), -jnp.inf, utility(pool)), pool), None

    u, _ = jax.lax.scan(stage, best, jnp.array([True, False]))
    return u


MIXED_SEARCH_STEPS = 8
"""Moves of the discrete local search of a mixed space's acquisition optimizer (each to the
best neighbour: one integer step or one other category)."""
MIXED_ENUMERATION_LIMIT = 64
"""The most combinations of categories a mixed space's acquisition optimizer enumerates at its
climbed point (the best ones start its last climb, :func:`refine_argmax`); a space with more
relies on the local search alone."""


DUPLICATE_TOL = 1e-6
"""Unit-cube max-norm distance within which :func:`refine_argmax` counts a point as a repeat
of a written row."""


def _written_test(data: Dataset | None, options: "AcqOptimizer") -> Callable[[Array], Array]:
    """``u (N, d) -> (N,) bool``: rows within :attr:`AcqOptimizer.min_distance` (max-norm;
    :data:`DUPLICATE_TOL` by default) of a row written in ``data`` (observed, failed or
    fantasized); all ``False`` without ``data``. On a mixed space (``data.space``) the
    configuration ``u`` rounds to is compared (:meth:`SearchSpace.round`): the distance applies
    to its continuous columns (widened where ``data`` shows a plateau: :func:`_plateau_tolerance`)
    and the discrete ones (an integer's, a category's) must match to within
    :data:`DUPLICATE_TOL`, so a point with another integer value or category is never counted
    as a repeat and one that rounds to a written configuration is. The tolerances are computed
    once, here, for every call of the test."""
    if data is None:
        return lambda u: jnp.zeros(u.shape[:1], bool)
    written = jnp.arange(data.u.shape[0]) < data.count
    tol = options.min_distance
    space = data.space
    tols = [tol] * data.u.shape[1]
    if space is not None:  # compare configurations: the point as it rounds (written rows are rounded)
        cont = _plateau_tolerance(options, data)
        tols = [cont if c else min(tol, DUPLICATE_TOL) for c in space.continuous_columns()]

    def test(u: Array) -> Array:
        u = u if space is None else space.round(u)
        return jnp.any(_pairwise_close(u, data.u.astype(u.dtype), tols) & written[None, :], axis=1)

    return test


def _pairwise_close(u: Array, rows: Array, tols: list) -> Array:
    """``(N, cap)`` bool: ``|u_i - rows_j| <= tols`` in every column (max-norm per column) for
    ``u (N, d)``, ``rows (cap, d)`` and ``tols`` one entry per column: a float, a traced ``()``
    or a ``(cap,)`` array (a tolerance per row of ``rows``). NaN is never close."""
    if u.shape[1] > 128:  # one (N, cap, d) reduction
        limits = jnp.stack([jnp.broadcast_to(jnp.asarray(t, u.dtype), rows.shape[:1]) for t in tols], axis=-1)
        return jnp.all(jnp.abs(u[:, None, :] - rows[None, :, :]) <= limits, axis=-1)
    # max_i |u_i - v_i| <= tol as a chain of d (N, cap) comparisons, which XLA fuses into one
    # vectorized loop (2.5x faster than the reduction over a short minor axis: 12.5 -> 5 ms at
    # N = 2048, cap = 2010, d = 10 on a 2-core CPU; the same result, NaN included)
    close = jnp.ones((u.shape[0], rows.shape[0]), bool)  # no column: every pair is close
    for i in range(u.shape[1]):
        near = jnp.abs(u[:, i:i + 1] - rows[None, :, i]) <= tols[i]
        close = near if i == 0 else close & near
    return close


def on_plateau(data: Dataset, radius: float) -> Array:
    """``(cap,)`` bool: the observed rows of ``data`` that hold exactly the same objective value
    (column 0 of a ``(cap, J)`` ``y``) as another observed row that differs from them (by more
    than :data:`DUPLICATE_TOL` in a unit-cube column) and lies within ``radius`` of them: on a
    mixed space (``data.space``) with the same integers and categories and continuous columns
    within ``radius`` (max-norm), elsewhere every column within ``radius``. The objective is
    flat around such a row, as a float hyperparameter the model truncates makes it; a loss that
    only ties at configurations far apart (an accuracy that moves in steps) marks no row, nor
    does a continuous loss, which almost never repeats a value exactly at another point.

    Raises:
        TypeError: ``radius`` not a number. ValueError: ``radius`` not finite and positive.
    """
    from ._checks import check_positive

    check_positive("radius", radius)
    first = data if data.y.ndim == 1 else data.column(0)
    obs = first.observed()
    pair = (first.y[:, None] == first.y[None, :]) & obs[:, None] & obs[None, :]
    u = data.u
    cont = [True] * u.shape[1] if data.space is None else list(data.space.continuous_columns())
    near = _pairwise_close(u, u, [radius if c else DUPLICATE_TOL for c in cont])
    # near rows share the discrete columns, so two differ only in a continuous one
    u_cont = u[:, np.flatnonzero(cont)]
    differ = ~_pairwise_close(u_cont, u_cont, [DUPLICATE_TOL] * u_cont.shape[1])
    return jnp.any(pair & near & differ, axis=1)


def _plateau_tolerance(options: "AcqOptimizer", data: Dataset) -> float | Array:
    """The continuous columns' repeat distance from each written row of a mixed space's
    ``data``: ``min_distance`` with ``plateau_distance = 0``; else ``(cap,)``,
    ``max(min_distance, plateau_distance)`` from a row :func:`on_plateau` within that distance
    and ``min_distance`` from the others."""
    if options.plateau_distance == 0:
        return options.min_distance
    wide = max(options.min_distance, options.plateau_distance)
    return jnp.where(on_plateau(data, wide), wide, options.min_distance)


def argmax_point(utility_values: Array, candidates: Array) -> Array:
    """The candidate ``(d,)`` with the largest utility (NaN utilities never win)."""
    vals = jnp.where(jnp.isnan(utility_values), -jnp.inf, utility_values)
    return candidates[jnp.argmax(vals)]


class AcqOptimizer(NamedTuple):
    """Settings of :func:`optimize_acqf` (BoTorch's ``optimize_acqf`` vocabulary).

    Build it with :func:`acq_optimizer`, which checks every field.

    Attributes:
        raw_samples: raw samples scored per ask (BoTorch ``raw_samples``).
        num_restarts: how many raw samples start a climb (BoTorch ``num_restarts``).
        steps: most climb iterations per restart (L-BFGS-B iterations, or Adam steps); 0
            scores the raw samples only (the papers' candidate-set argmax).
        method: ``"lbfgsb"`` (box-constrained L-BFGS to scipy's tolerances, BoTorch's
            choice) or ``"adam"`` (projected Adam steps of ``learning_rate``).
        learning_rate: Adam step size, in unit-cube units (``method="adam"`` only).
        local_fraction: share of the raw samples drawn around the ``n_best`` best
            observations (Gaussian, std ``local_std`` in unit-cube units, clipped to the cube);
            the rest are spread over the cube by ``raw_sampler``.
        local_std, n_best: see ``local_fraction``.
        raw_sampler: ``"sobol"`` (scrambled Sobol, BoTorch's) or ``"uniform"``.
        restarts: ``"boltzmann"`` (BoTorch's ``initialize_q_batch``) or ``"top"`` (the
            ``num_restarts`` best raw samples).
        eta: inverse temperature of the Boltzmann draw (BoTorch's default 1).
        discrete_search: with ``steps = 0`` on a mixed space, whether the best raw sample still
            takes the discrete part of the search (the best combination of the categories, then
            the local search over neighbours; no continuous climb): for an acquisition without a
            gradient (e.g. expected improvement under a neural posterior, whose gradient would
            need second derivatives). With ``steps > 0`` the discrete search always runs.
        local_rank: how the ``n_best`` centres of the local raw samples are chosen:
            ``"observed"`` (the smallest observed values) or ``"mean"`` (the smallest
            posterior means of the surrogate at the observations, BoTorch's
            ``sample_around_best``; with noisy observations the best observed values are the
            luckiest draws). With ``"mean"`` the algorithm hands :func:`optimize_acqf` a
            dataset whose ``y`` is its posterior mean at the observations.
        local_moves: on a mixed space, whether every other local raw sample also moves one
            discrete parameter to a random neighbouring value (:func:`candidate_set`;
            BoTorch's spray points); off, the local raw samples keep their centre's integers
            and categories unless the perturbation rounds past them.
        local_integer_std: on a mixed space, the std of the local raw samples' perturbation of
            an integer parameter in its own steps (its column's std is ``max(local_std,
            local_integer_std / size)``, :func:`candidate_set`); 0 (the default): ``local_std``
            like every column (with 0.05, a local raw sample leaves its centre's value of an
            integer with 5 values 5% of the time, of one with 7 values 15%).
        min_distance: unit-cube max-norm distance (``> 0``) from a written row (observed,
            failed, pending) within which a point counts as a repeat of it and is not returned
            while a candidate or climbed point farther from every written row is; the default
            :data:`DUPLICATE_TOL` excludes exact repeats only. For a deterministic objective
            that is flat at the scale of a larger distance (a float hyperparameter the model
            rounds, an accuracy that moves in steps) a larger one keeps expected improvement
            from asking the incumbent's plateau again (as SMAC, Hutter et al. 2011, never
            re-runs a configuration of a deterministic scenario). On a mixed space it is
            measured on the continuous columns: a point whose integer or category differs from
            a written row's is never a repeat of it, so integer and categorical neighbours stay
            open whatever ``r``.
        plateau_distance: on a mixed space, a wider ``min_distance`` (the larger of the
            two) of the continuous columns around the written configurations on a plateau
            (:func:`on_plateau`): those that hold exactly the same value as another observed
            configuration with the same integers and categories within this distance. The
            objective is flat there, so an ask next to them likely repeats their value. 0 (off)
            or ``> 0``. A continuous loss marks no configuration, so the asks can still refine
            a continuous incumbent, and neither does a loss that ties only at configurations
            far apart (an accuracy). It reads the values of the dataset handed to
            :func:`optimize_acqf` (with ``local_rank="mean"`` posterior means, which rarely
            repeat). Not a default (docs, "A plateau distance").
    """

    raw_samples: int = 512
    num_restarts: int = 10
    steps: int = 200
    method: str = "lbfgsb"
    learning_rate: float = 0.01
    local_fraction: float = 0.25
    local_std: float = 0.05
    n_best: int = 5
    raw_sampler: str = "sobol"
    restarts: str = "boltzmann"
    eta: float = 1.0
    local_rank: str = "observed"
    discrete_search: bool = False
    local_moves: bool = False
    local_integer_std: float = 0.0
    min_distance: float = DUPLICATE_TOL
    plateau_distance: float = 0.0

    @property
    def n_local(self) -> int:
        """Raw samples drawn around the best observations."""
        return int(round(self.raw_samples * self.local_fraction))

    @property
    def n_uniform(self) -> int:
        """Raw samples spread over the cube (Sobol or uniform)."""
        return self.raw_samples - self.n_local


def acq_optimizer(
    raw_samples: int = 512,
    num_restarts: int = 10,
    steps: int = 200,
    method: str = "lbfgsb",
    learning_rate: float = 0.01,
    local_fraction: float = 0.25,
    local_std: float = 0.05,
    n_best: int = 5,
    raw_sampler: str = "sobol",
    restarts: str = "boltzmann",
    eta: float = 1.0,
    local_rank: str = "observed",
    discrete_search: bool = False,
    local_moves: bool = False,
    local_integer_std: float = 0.0,
    min_distance: float = DUPLICATE_TOL,
    plateau_distance: float = 0.0,
) -> AcqOptimizer:
    """Checked :class:`AcqOptimizer` (the one acquisition optimizer's settings; defaults as
    BoTorch's ``optimize_acqf(num_restarts=10, raw_samples=512)`` plus a quarter of the raw
    samples around the best observations).

    Raises:
        TypeError: a count that is not an int, a rate that is not a number, or a
            ``discrete_search`` or ``local_moves`` that is not a bool.
        ValueError: ``raw_samples``, ``num_restarts`` or ``n_best`` < 1, ``steps`` < 0,
            ``learning_rate``, ``local_std``, ``eta`` or ``min_distance`` not > 0,
            ``local_integer_std`` or ``plateau_distance`` < 0,
            ``local_fraction`` outside
            ``[0, 1)``, no spread raw sample left, or an unknown ``method``, ``raw_sampler``,
            ``restarts`` or ``local_rank``; the message names the argument.
    """
    from ._checks import check_bool, check_choice, check_int, check_positive

    opts = AcqOptimizer(
        check_int("raw_samples", raw_samples, 1),
        check_int("num_restarts", num_restarts, 1),
        check_int("steps", steps, 0),
        check_choice("method", method, METHODS),
        check_positive("learning_rate", learning_rate),
        check_positive("local_fraction", local_fraction, allow_zero=True),
        check_positive("local_std", local_std),
        check_int("n_best", n_best, 1),
        check_choice("raw_sampler", raw_sampler, RAW_SAMPLERS),
        check_choice("restarts", restarts, RESTART_RULES),
        check_positive("eta", eta),
        check_choice("local_rank", local_rank, LOCAL_RANKS),
        check_bool("discrete_search", discrete_search),
        check_bool("local_moves", local_moves),
        check_positive("local_integer_std", local_integer_std, allow_zero=True),
        check_positive("min_distance", min_distance),
        check_positive("plateau_distance", plateau_distance, allow_zero=True),
    )
    if not opts.local_fraction < 1.0:
        raise ValueError(f"local_fraction must be in [0, 1), got {local_fraction}")
    if opts.n_uniform < 1:
        raise ValueError(f"local_fraction={local_fraction} leaves no spread raw sample out of {raw_samples}")
    return opts


def as_acq_optimizer(value, name: str = "acq_optimizer", default: AcqOptimizer | None = None, *,
                     no_gradient: str | None = None, mean_rank: bool = False) -> AcqOptimizer:
    """``value`` as a checked :class:`AcqOptimizer`.

    Args:
        value: an ``AcqOptimizer`` (re-checked), or a dict of :func:`acq_optimizer` keywords laid
            over ``default`` (the fields it does not name keep ``default``'s values), or ``None``
            (``default`` itself).
        name: the argument's name, for error messages.
        default: the caller's defaults (e.g. an algorithm preset's); ``AcqOptimizer()`` if None.
        no_gradient: why the caller's acquisition cannot be climbed (independent draws, a
            hard filter, a batch rule), or ``None``. When given, ``default``'s ``steps``
            become 0 and a ``value`` asking for ``steps > 0`` is refused.
        mean_rank: whether the caller ranks its observations by its posterior mean when
            ``local_rank="mean"`` (hands :func:`optimize_acqf` a dataset whose ``y`` is that
            mean); without it ``local_rank="mean"`` is refused.

    Raises:
        TypeError: anything else, or an unknown key. ValueError: as :func:`acq_optimizer`,
        ``steps > 0`` with ``no_gradient``, or ``local_rank="mean"`` without ``mean_rank``.
        Both messages start with ``name`` (e.g.
        ``"acq_optimizer.raw_samples must be >= 1"``).
    """
    base = AcqOptimizer() if default is None else default
    if no_gradient is not None:
        base = base._replace(steps=0)
    if value is None:
        fields = base._asdict()
    elif isinstance(value, AcqOptimizer):
        fields = value._asdict()
    elif isinstance(value, dict):
        unknown = sorted(set(value) - set(AcqOptimizer._fields))
        if unknown:
            raise TypeError(f"{name} has unknown keys {unknown}; known: {list(AcqOptimizer._fields)}")
        fields = {**base._asdict(), **value}
    else:
        raise TypeError(f"{name} must be nbo.optimize.acq_optimizer(...) or a dict of its arguments, "
                        f"got {type(value).__name__}")
    try:
        opts = acq_optimizer(**fields)
    except (TypeError, ValueError) as err:
        raise type(err)(f"{name}.{err}") from None
    if no_gradient is not None and opts.steps > 0:
        raise ValueError(f"{name}.steps must be 0 ({no_gradient}); got steps={opts.steps}")
    if opts.local_rank == "mean" and not mean_rank:
        raise ValueError(f"{name}.local_rank='mean' is not available for this algorithm (it does not rank its "
                         "observations by a posterior mean); use 'observed'")
    return opts


def optimize_acqf(
    utility: Callable[[Array], Array],
    key: Array,
    data: Dataset,
    options: AcqOptimizer = AcqOptimizer(),
    region: Optional[SearchRegion] = None,
) -> Array:
    """Maximize an acquisition over the unit cube (or a region of it): raw samples -> restarts -> box-constrained
    climb -> the best point (BoTorch's ``optimize_acqf`` with ``q = 1``; module doc).

    The raw samples are :func:`candidate_set` (Sobol or uniform, plus local points around the
    best observations of ``data``). With ``steps > 0``, ``num_restarts`` of them
    (:func:`initialize_restarts`) climb ``utility`` (:func:`climb`); the answer is the best of
    the climbed points and the best raw sample, so it is never worse than the raw-sample
    argmax; a point already written in ``data`` (observed, failed, pending or fantasized) is
    not returned again (:func:`refine_argmax`).

    Args:
        utility: ``u (N, d) -> (N,)``, the acquisition value of each point (maximized; NaN
            never wins). Pointwise (row ``i`` depends on ``u[i]`` only) and, for
            ``steps > 0``, differentiable in ``u``. A stochastic acquisition closes over its
            sample (e.g. a pathwise Thompson sample), so it is one function here.
        key: PRNG key for the raw samples and the restarts' draw.
        data: :class:`~nbo_jax.dataset.Dataset` in unit-cube coordinates (its best valid rows
            centre the local raw samples; ``data.y`` ranks them, so a caller ranking by
            something else, e.g. its posterior mean, passes a copy with that ``y``).
        options: :class:`AcqOptimizer` (build with :func:`acq_optimizer`).
        region: a :class:`~nbo_jax.base.SearchRegion` (a trust region's box, and its centre
            for TuRBO's perturbed raw samples) that every raw sample, climb and answer stays
            in (module doc); ``None``: the unit cube.

    On a finite domain (``data.choices`` set) the utility is scored on all ``N`` choices
    at once (memory as for ``N`` raw samples) and the best unevaluated one is returned; the
    raw-sample and restart settings do not apply there; with a ``region`` only the
    unevaluated choices inside it are eligible, or, when it holds none, every unevaluated
    choice (:meth:`~nbo_jax.dataset.Dataset.eligible`).

    Returns:
        ``(d,)`` unit-cube point, dtype of ``data.u``: inside ``region``'s box when given (on
        a finite domain, when the region holds an unevaluated choice).
    """
    if data.finite:
        return best_available(utility(data.choices), data, region)
    k_raw, k_start = jax.random.split(key)
    u_raw = raw_samples(k_raw, data, options, region)
    return refine_argmax(k_start, utility(u_raw), u_raw, utility, options, data, region)


__all__ = [
    "optimize_acqf", "AcqOptimizer", "acq_optimizer", "as_acq_optimizer", "candidate_set", "raw_samples", "sobol_samples",
    "initialize_restarts", "climb", "refine_argmax", "projected_gradient_ascent", "argmax_point",
    "best_available", "available_score", "random_point", "region_bounds", "on_plateau", "DUPLICATE_TOL", "METHODS", "RAW_SAMPLERS", "RESTART_RULES",
    "LOCAL_RANKS",
]
