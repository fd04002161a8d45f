"""TuRBO: any algorithm asking inside ``m`` trust regions that grow, shrink and restart.

Eriksson, Pearce, Gardner, Turner & Poloczek 2019, "Scalable global optimization via local
Bayesian optimization" (NeurIPS), Section 2: TuRBO-1 (``m = 1``, the default) and TuRBO-m;
defaults as in the paper and BoTorch's TuRBO-1 tutorial. A constrained algorithm gets SCBO's
rules (Eriksson & Poloczek 2021, "Scalable constrained Bayesian optimization", AISTATS,
Section 3): "best" is the best feasible observation, or, while none is feasible, the smallest
total violation ``sum_k [c_k]^+``; its own constrained acquisition picks the points.

:func:`trust_region` is a transformation of algorithms, as :func:`nbo_jax.transforms.batch.batched` is:
it takes a :class:`~nbo_jax.base.BOAlgorithm` and returns one, wrapping the inner states; the
inner algorithm asks through :mod:`nbo_jax.optimize`, which keeps its raw samples, climbs and
answers inside the region its ``ask`` is given (a :class:`~nbo_jax.base.SearchRegion`)::

    regions  : m regions, region j with its own side L_j, counters, restarts and inner
               state, built from region j's run only (the points it asked since its last
               restart; m = 1: every point since the last restart)
    region j : a box of the unit cube centred at the best observation x*_j of its run
               (SCBO's order with constraints; incumbent="posterior_mean", the default
               around a GP with m = 1: the run's point of smallest posterior mean), side
               L_j * w_i in coordinate i (w = the inner GP's ARD lengthscales over their
               geometric mean, prod(w) = 1; w = 1 without them), clipped to [0, 1]^d;
               on a mixed space the categories' one-hot columns stay [0, 1] (free)
    designs  : region 0 starts on init's points; every other region first asks its own
               design of n_design scrambled Sobol points, then its inner algorithm is
               initialized on it; a design is asked before any model point, the lowest
               region first
    ask      : every region's inner algorithm asks inside its box (ask's region); with
               d > 20 inputs its spread raw samples vary each coordinate of x*_j with
               probability 20 / d (TuRBO's code) and keep x*_j's value in the others.
               m > 1: a Thompson draw y ~ N(mean, std^2) of each region's surrogate at its
               points, in the objective's units, chooses: the q smallest draws are asked
               (inner algorithms without a surrogate: a uniform draw)
    tell     : a point belongs to the region whose box holds it (the nearest centre in
               units of the boxes' sides when several or none do; the design's region
               while a design is asked); only that region's counters move and only its
               inner state is told.
               success if min(y_batch) < f*_j - min_improvement |f*_j| (f*_j the run's
               best value; default min_improvement = 0, the paper's 1e-3 by choice), else
               failure (a failed evaluation is never a success); success="posterior_mean"
               (the default around a GP or Neural-BO with m = 1): a batch point's posterior
               mean, the model told the batch, is below every earlier point's of the run;
               with constraints: a feasible batch point while the run has no feasible
               point, a feasible improvement as above, or, with nothing feasible yet, a
               smaller total violation (SCBO);
               tau_succ successes in a row: L_j = min(2 L_j, L_max);
               tau_fail failures in a row: L_j = L_j / 2 (tau_fail = ceil(max(4, 2 d) / q)
               by default: the paper's with d doubled)
    restart  : when L_j < L_min: region j asks a fresh design of n_design scrambled Sobol
               points of the whole box (distinct random unevaluated points of a finite
               domain), then its inner algorithm is initialized on it alone, with
               L_j = L_init (restart_keeps_data, m = 1: told it after everything before, the
               model kept)
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

import jax
import jax.numpy as jnp

from .._checks import check_bool, check_int, check_positive
from ..domains import FiniteDomain
from ..observations import initial_data, told_rows
from ..optimize import sobol_samples
from ..outcome import AFFINE_OUTCOME_TRANSFORMS, ON_DISCRETE_SPACES, resolved
from ..search_space import SearchSpace
from ..types import BATCH_RULES, BOAlgorithm, Bounds, Dataset, FactoryCall
from .batch import batched
from .regions import (  # noqa: F401 - the shared pieces, importable from here too
    _after_all_of,
    _run_rows,
    _with_data,
    ask_in_region,
    batch_improves,
    batch_improves_in_mean,
    best_row,
    categorical_columns,
    counts_by_mean,
    design_size,
    failure_limit,
    inner_lengthscales,
    next_length,
    objective_units,
    owners,
    posterior_incumbent,
    region_box,
    region_rows,
    unevaluated_choices,
)

Array = jax.Array
INCUMBENTS = ("auto", "observed", "posterior_mean")


SUCCESS_RULES = INCUMBENTS  # the same three rules, for what a batch must beat


class TrustRegionState(NamedTuple):
    """State of :func:`trust_region` with ``m`` regions (a pytree; fixed shapes; every
    per-region field has a leading axis of size ``m``, ``m = 1`` included).

    Attributes:
        inner: the ``m`` inner algorithms' states stacked on a leading axis; region ``j``'s
            is built from region ``j``'s current run only (stale while its design is being
            asked). With ``restart_keeps_data`` (``m = 1``): built from every observation,
            told each one as it comes.
        data: :class:`~nbo_jax.dataset.Dataset` of *every* observation (unit cube, all
            runs; ``y (cap, K + 1)`` with the constraints of a constrained algorithm), so
            counts, the finite domain's evaluated points and pending points are global.
        bounds: the box (:class:`~nbo_jax.domains.Bounds`).
        owner: ``(cap,)`` int32, the region each row belongs to (``-1``: no row yet).
        length: ``(m,)`` the regions' sides ``L_j`` (unit-cube units, before the
            lengthscale shaping), in ``[L_min / 2, L_max]``.
        successes, failures: ``(m,)`` int32, consecutive successes / failures of each run.
        restarts: ``(m,)`` int32, restarts so far.
        in_design: ``(m,)`` bool, True while a region's design is being asked.
        start: ``(m,)`` int32, the row of ``data`` from which a region's current run starts
            (its rows: ``owner == j`` from there on).
        design: ``(m, n_design, d)`` the regions' current designs (unit cube).
        key: PRNG key for the designs and the inner re-initializations.
        incumbent: ``(m,)`` int32, the row of ``data`` of each run whose posterior mean (the
            inner surrogate's) is smallest, with ``incumbent="posterior_mean"`` (and
            ``"auto"`` around a GP); ``None`` with the observed rule (the best observation is
            found from ``data``).
        lengthscales: ``(m, d)`` each region's inner surrogate lengthscales after its last
            init or tell (:func:`inner_lengthscales`), which shape its box with ``ard``;
            ``None`` without ``ard`` or when the surrogate has none.
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
    incumbent: Optional[Array] = None
    lengthscales: Optional[Array] = None


TrustRegionsState = TrustRegionState  # the name TuRBO-m's state had


def regions_now(state: TrustRegionState, *, ard: bool = True) -> tuple[Array, Array]:
    """``(centres (m, d), boxes (m, 2, d))``: each region's centre (unit cube) and box.

    The centre is the best finite observation of the region's run (SCBO's :func:`best_row`
    with constraints), or with ``incumbent="posterior_mean"`` the run's point of smallest
    posterior mean (``state.incumbent``); the cube's centre while the run has none. The box is
    :func:`region_box` around it, of side ``state.length[j]``, shaped by the inner
    surrogate's lengthscales (``state.lengthscales``) when ``ard``."""
    data = state.data
    m = state.length.shape[0]

    def one(j, ls, length, start, best):
        run = region_rows(data, state.owner, start, j, observed=True)
        i = best_row(data.y, run)[0] if best is None else best
        centre = jnp.where(run[i], data.u[i], jnp.full_like(data.u[i], 0.5))
        return centre, region_box(centre, length, ls)

    ls = state.lengthscales if ard else None
    args = (jnp.arange(m), ls, state.length, state.start, state.incumbent)
    if m == 1:  # the one region's, as computed alone
        centres, boxes = jax.tree.map(lambda a: a[None], one(*jax.tree.map(lambda a: a[0], args)))
    else:
        centres, boxes = jax.vmap(one, in_axes=tuple(None if a is None else 0 for a in args))(*args)
    categories = categorical_columns(state.bounds)
    if categories is not None:  # a mixed space's categories stay free: the box bounds the other columns
        unit = jnp.stack([jnp.zeros_like(boxes[:, 0]), jnp.ones_like(boxes[:, 1])], axis=1)
        boxes = jnp.where(jnp.asarray(categories), unit, boxes)
    return centres, boxes


def incumbent_region(state: TrustRegionState) -> Array:
    """``()`` int32: the region owning the best finite observation (SCBO's order with
    constraints; 0 when there is none)."""
    i = best_row(state.data.y, _run_rows(state.data, 0))[0]
    return jnp.clip(state.owner[i], 0, state.length.shape[0] - 1)


def current_region(state: TrustRegionState, *, ard: bool = True) -> Array:
    """``(2, d)`` the box (lower, upper corners, unit cube) of the region holding the best
    observation (:func:`incumbent_region`; with ``m = 1`` the one region), as its next
    model-based ask uses it (:func:`regions_now`)."""
    return regions_now(state, ard=ard)[1][incumbent_region(state)]


def current_centre(state: TrustRegionState) -> Array:
    """``(d,)`` the centre of the region :func:`current_region` returns (unit cube)."""
    return regions_now(state, ard=False)[0][incumbent_region(state)]


def _refuse_non_affine_transform(m: int, algorithm: BOAlgorithm, space=None) -> None:
    """TuRBO-m compares its regions' posteriors in the objective's units (:func:`objective_units`):
    raise when ``algorithm`` fits an outcome transform with no affine map back to them on
    ``space`` (a search space at ``init``; ``None`` at construction, where ``"auto"`` and
    ``"discrete_half_rank"`` pass until the space is known). Algorithms not built on ``bo_algorithm`` (no
    ``outcome_transform``) pass.

    Raises:
        ValueError: the transform resolved on ``space`` is not affine (names ``regions``)."""
    transform = algorithm.outcome_transform
    fitted = None if transform is None else resolved(transform, space)
    if fitted is None or fitted in AFFINE_OUTCOME_TRANSFORMS:
        return
    what = (f"on this search space (an integer or categorical parameter) {algorithm.name!r}'s "
            f"outcome_transform={transform!r} is {fitted!r}" if transform in ON_DISCRETE_SPACES
            else f"{algorithm.name!r} is fitted with outcome_transform={transform!r}")
    raise ValueError(f"regions={m}: the regions' posteriors are compared in the objective's units, and {what}, "
                     f"which has no affine map back to them; use regions=1 or outcome_transform='standardize'")


def trust_region(
    algorithm: BOAlgorithm,
    *,
    length_init: float = 0.8,
    length_min: float = 0.5 ** 7,
    length_max: float = 1.6,
    success_tolerance: int = 3,
    failure_tolerance: Optional[int] = None,
    min_improvement: float = 0.0,
    restart_points: Optional[int] = None,
    ard: bool = True,
    perturb_dims: Optional[int] = 20,
    q: Optional[int] = None,
    regions: int = 1,
    restart_keeps_data: bool = False,
    incumbent: str = "auto",
    success: str = "auto",
) -> BOAlgorithm:
    """``algorithm`` asking inside TuRBO's trust regions (Eriksson et al. 2019; module doc):
    one (TuRBO-1, the default) or ``regions = m`` (TuRBO-m).

    Every ask calls each region's inner ``ask`` with its box (``region=``, a
    :class:`~nbo_jax.base.SearchRegion`); every algorithm of the library asks through
    :mod:`nbo_jax.optimize`, which stays in that box (on a finite domain: picks among the
    unevaluated choices inside it, or among all unevaluated choices when it holds none). A
    box point the inner algorithm returns outside the region (an algorithm that does not ask
    through :mod:`nbo_jax.optimize`) is projected onto it. Each ``tell`` call is one batch for
    the success/failure counters of the regions its points belong to (pending points, which
    :class:`~nbo_jax.AskTell` fantasizes by telling a copy of the state constant-liar values,
    count as failures in that copy: the copy may ask in a smaller region, or, at the last
    halving, from a restart design). When a side falls below ``length_min`` its region
    restarts: it asks ``restart_points`` points of a fresh design of the whole domain, then
    its inner algorithm is re-initialized (``init``) on them alone. The inner algorithm never
    sees the earlier runs (as TuRBO; ``restart_keeps_data=True`` keeps them); the state's
    ``data`` and ``run_bo``'s history keep every observation.

    With a constrained ``algorithm`` (``algorithm.constrained``: GP-cEI, GP-LCB-C,
    Neural-CBO) the region and the counters follow SCBO (Eriksson & Poloczek 2021, Section
    3): the centre is the run's best feasible observation, or the one of smallest total
    violation while none is feasible (:func:`best_row`); a batch succeeds when its best point
    (the same order) is feasible and either the run had no feasible point or it improves
    ``f*`` as above, or when nothing is feasible yet and it lowers the smallest total
    violation. The points are the inner algorithm's constrained acquisition's maximum inside
    the region (SCBO itself draws constrained Thompson samples; GP-cEI asks by expected
    improvement times the probability of feasibility).

    Args:
        algorithm: the inner :class:`~nbo_jax.types.BOAlgorithm`, constrained or not (its
            state a NamedTuple with ``data``, as every library state).
        length_init: ``L_init``, the side after ``init`` and after each restart (unit-cube
            units; paper: 0.8).
        length_min: ``L_min``: a side below it restarts (paper: ``0.5^7``).
        length_max: ``L_max``, the largest side (paper: 1.6; sides above 1 are clipped to
            the cube).
        success_tolerance: ``tau_succ``, successes in a row that double the side (3).
        failure_tolerance: ``tau_fail``, failures in a row that halve it; ``None``:
            ``ceil(max(4, 2 d) / q)``, the paper's ``ceil(max(4 / q, d / q))`` (BoTorch's TuRBO-1
            tutorial) with ``d`` doubled (:func:`failure_limit`).
        min_improvement: a batch is a success when its best value is below the run's best
            ``f*`` by more than ``min_improvement * |f*|``. Default 0: any improvement, so
            that ``f`` and ``f + c`` are searched alike. The paper and BoTorch's TuRBO-1
            tutorial use 1e-3, which makes the rule depend on the objective's offset: with
            ``|f*|`` near 1000 an improvement must exceed 1 to count, so the region shrinks
            and restarts while the run still improves (COCO's instances have offsets of
            up to 1000; docs, "TuRBO's success rule").
        restart_points: points of a restart design; ``None``: ``2 d``. Rounded up to a
            multiple of ``q`` (a design is asked ``q`` points at a time).
        ard: shape the region by the inner state's ARD lengthscales when it holds a GP's
            (:func:`inner_lengthscales`); False: a cube.
        perturb_dims: with ``d > perturb_dims`` inputs, the raw samples spread over the
            region vary each coordinate of the centre with probability ``perturb_dims / d``
            (at least one) and keep the centre's value in the others
            (``SearchRegion.centre``, :func:`nbo_jax.optimize.candidate_set`): the
            candidates of TuRBO's code (``prob_perturb = min(20 / d, 1)``) and BoTorch's
            TuRBO-1 tutorial, so that in many dimensions they stay near the incumbent. At
            ``d <= perturb_dims`` every coordinate varies (unchanged). ``None``: never.
        q: points per ask; ``None``: the inner algorithm's ``q``. With an inner ``q = 1``
            and ``q > 1`` the inner asks by :func:`nbo_jax.transforms.batch.batched` (its batch rule;
            "native" algorithms take ``q`` in their own factory).
        regions: ``m``, the number of trust regions. 1: TuRBO-1. ``m > 1``: TuRBO-m
            (Eriksson et al. 2019, Section 2): ``m`` regions with their own inner states,
            designs, sides and restarts; every ask the inner algorithm of each region
            proposes inside its box and the smallest Thompson draws of the regions'
            surrogates (objective units, :func:`objective_units`) win. Each ask costs ``m``
            inner asks; each region but the first first asks a design of ``restart_points``
            points. Unconstrained algorithms with an affine outcome transform only (SCBO
            keeps one region; ``"auto"``, the GP's default, on a space without integer or
            categorical parameters only); on a finite domain ``q = 1``.
        restart_keeps_data: False (the paper's TuRBO): after a restart the inner algorithm is
            initialized on the fresh design alone. True: it keeps every observation and is
            told the design's points as they come (no ``init``); the region is still centred
            at the new run's best point and starts at ``L_init``, so a run restarts its
            search, not its model. TuRBO-1 only (``regions = 1``). With 1000 evaluations at
            d = 10 (Rastrigin-10, Griewank-10) it ends lower than the paper's restart; the
            figures are on the documentation site's page "Measured choices".
        incumbent: what the region is centred at. ``"observed"`` (the paper's TuRBO): the
            run's best observation. ``"posterior_mean"``: the run's point of smallest
            posterior mean (the inner surrogate's, at the run's observed points), for noisy
            objectives, so that a lucky noisy observation does not move the region (as
            BoTorch's noisy EI takes its baseline from the posterior at the observed
            points, Letham et al. 2019). Needs an inner ``surrogate``, no constraints, one
            region and ``min_improvement = 0``. ``"auto"`` (default): ``"posterior_mean"``
            around an inner GP (a state holding ARD lengthscales,
            :func:`inner_lengthscales`) where it may be used, ``"observed"`` otherwise;
            decided at ``init``. Around the GP it was level or better on the selection
            problems with every acquisition (EI, UCB, Thompson sampling); around Neural-BO
            it was worse on Rosenbrock-10, whose network mean ranks the run's points badly.
        success: what a batch must beat to count as a success. ``"observed"`` (the paper's
            TuRBO): its best observed value against the run's best ``f*`` (and
            ``min_improvement``). ``"posterior_mean"``: after the inner algorithm is told the
            batch, one of its points has a smaller posterior mean than every earlier point
            of the run, so a lucky noisy observation does not make every later batch a
            failure; the same conditions as ``incumbent="posterior_mean"``. ``"auto"``
            (default): ``"posterior_mean"`` with ``incumbent="posterior_mean"``, and with
            ``incumbent="auto"`` around an inner GP or Neural-BO (NeuralUCB/TS too:
            :func:`counts_by_mean`) where it may be used; ``"observed"`` otherwise (with
            ``incumbent="observed"`` the paper's rules). Around Neural-BO, success by the
            mean with the region centred at the best observation was level with or better
            than both other pairs on the selection problems; the figures are on the
            documentation site's page "Measured choices".

    Returns:
        A :class:`~nbo_jax.base.BOAlgorithm` named ``"turbo-<inner name>"`` (``m > 1``:
        ``"turbo<m>-<inner name>"``) with ``batch_rule="native"``, the inner ``q`` and
        ``constrained``. Its state is a :class:`TrustRegionState`; its ``info`` reports, for
        the region holding the best observation (:func:`incumbent_region`), ``tr_length``,
        ``tr_successes``, ``tr_failures`` and ``tr_observed`` (observations of its current
        run), and ``tr_restarts`` (summed over the regions), ``tr_in_design`` (some region
        asks a design) and ``tr_regions_in_design``, beside that region's inner algorithm's
        own; its ``surrogate`` is that region's inner one (the current run's model).

    Raises:
        TypeError: ``algorithm`` not a BOAlgorithm; a count not an int; a length not a
            number; ``ard`` or ``restart_keeps_data`` not a bool.
        ValueError: an unknown ``batch_rule``, lengths not ``0 < length_min <=
            length_init <= length_max``, counts ``< 1``, ``min_improvement < 0``, ``q``
            disagreeing with an inner ``q > 1``, ``regions > 1`` with a constrained
            algorithm, with a non-affine outcome transform or with ``restart_keeps_data`` (and,
            at ``init``, on a finite domain with ``q > 1``, or on a search space with an integer
            or categorical parameter with ``outcome_transform="auto"`` or
            ``"discrete_half_rank"``, Neural-BO's and the GP's default), an unknown
            ``incumbent`` or ``success``, or ``"posterior_mean"`` with an
            algorithm without a surrogate, a constrained one, ``regions > 1`` or
            ``min_improvement > 0`` (the same for ``success``); messages name the argument.

    Under ``vmap`` (many seeds) the restart's ``init`` (none with ``restart_keeps_data``) and
    the design's ask are computed on every step beside the usual ``tell``/``ask`` (a
    ``lax.cond`` on a batched predicate runs both branches); unbatched, only the branch taken
    runs.

    Vmapped over 10 seeds, ``trust_region(neural_bo())`` used to hang on a CPU (jaxlib 0.10:
    the inner ``tell``'s eigendecomposition ran beside the restart ``init``'s, and the CPU
    backend deadlocked on the two batched LAPACK calls); the ``tell`` now waits for all of the
    ``init`` (``scripts/turbo_vmap_hang_repro.py`` finishes). Computing the ``init`` on every
    step makes vmapped seeds slower than seeds run one after another (10 Neural-BO seeds, 200
    steps: 471 s vmapped beside another benchmark, 49 s in sequence alone).
    """
    if not isinstance(algorithm, BOAlgorithm):
        raise TypeError(f"algorithm must be an nbo_jax.BOAlgorithm (e.g. nbo.gp_bo()), got {type(algorithm).__name__}")
    if algorithm.batch_rule not in BATCH_RULES:
        raise ValueError(f"algorithm.batch_rule must be one of {BATCH_RULES}, got {algorithm.batch_rule!r}")
    length_init = check_positive("length_init", length_init)
    length_min = check_positive("length_min", length_min)
    length_max = check_positive("length_max", length_max)
    if not length_min <= length_init <= length_max:
        raise ValueError(f"length_min <= length_init <= length_max must hold, got length_min={length_min}, "
                         f"length_init={length_init}, length_max={length_max}")
    success_tolerance = check_int("success_tolerance", success_tolerance, 1)
    if failure_tolerance is not None:
        failure_tolerance = check_int("failure_tolerance", failure_tolerance, 1)
    min_improvement = check_positive("min_improvement", min_improvement, allow_zero=True)
    if restart_points is not None:
        restart_points = check_int("restart_points", restart_points, 1)
    ard = check_bool("ard", ard)
    if perturb_dims is not None:
        perturb_dims = check_int("perturb_dims", perturb_dims, 1)
    m = regions = check_int("regions", regions, 1)
    restart_keeps_data = check_bool("restart_keeps_data", restart_keeps_data)
    if restart_keeps_data and m > 1:
        raise ValueError("restart_keeps_data=True needs regions=1 (TuRBO-m's regions keep their own points)")
    if incumbent not in INCUMBENTS:
        raise ValueError(f"incumbent must be one of {INCUMBENTS}, got {incumbent!r}")
    if success not in SUCCESS_RULES:
        raise ValueError(f"success must be one of {SUCCESS_RULES}, got {success!r}")
    if m > 1:
        _refuse_non_affine_transform(m, algorithm)
        if algorithm.constrained:
            raise ValueError(f"regions={m}: several trust regions need an unconstrained algorithm (SCBO, the "
                             f"constrained rule, keeps one region); {algorithm.name!r} models constraints: use regions=1")
    # why the posterior mean cannot be used (none: it may): "posterior_mean" raises the first,
    # "auto" takes the observed rule when there is one
    no_mean = [f"an algorithm with a surrogate; {algorithm.name!r} has none" if algorithm.surrogate is None else None,
               "an unconstrained algorithm (SCBO's order is by observed values)" if algorithm.constrained else None,
               "regions=1 (TuRBO-m's regions are chosen by the observed values)" if m > 1 else None,
               (f"min_improvement=0 (the threshold is relative to the observed |f*|), got {min_improvement}"
                if min_improvement > 0 else None)]
    no_mean = [reason for reason in no_mean if reason is not None]
    for name, rule in (("incumbent", incumbent), ("success", success)):
        if rule == "posterior_mean" and no_mean:
            raise ValueError(f"{name}='posterior_mean' needs {no_mean[0]}")
    # incumbent="auto": the posterior mean where it may be used around an inner GP (its state
    # holds ARD lengthscales, found at init's trace); the observed value otherwise.
    # success="auto": the posterior mean with incumbent="posterior_mean" (any surrogate), and
    # with incumbent="auto" around a GP or Neural-BO where it may be used
    mean_allowed = not no_mean
    given = algorithm
    if q is not None:
        q = check_int("q", q, 1)
        if algorithm.q == 1:
            algorithm = batched(algorithm, q)
        elif algorithm.q != q:
            raise ValueError(f"q={q} disagrees with algorithm {algorithm.name!r}, which asks q={algorithm.q} points")
    inner_alg = algorithm
    q = inner_alg.q
    constrained = inner_alg.constrained
    # every argument, q as asked (an inner algorithm batched by hand records its q = 1
    # factory call), so that AskTell's save/resume rebuilds this algorithm
    config = FactoryCall(f"{__name__}:trust_region", dict(
        algorithm=given, length_init=length_init, length_min=length_min, length_max=length_max,
        success_tolerance=success_tolerance, failure_tolerance=failure_tolerance, min_improvement=min_improvement,
        restart_points=restart_points, ard=ard, perturb_dims=perturb_dims, q=q, regions=m,
        restart_keeps_data=restart_keeps_data, incumbent=incumbent, success=success))

    def over_regions(f, *xs):
        """``f`` over the regions (the leading axis of every leaf of ``xs``), one after another
        (``lax.map``, so that a region's numbers do not depend on how many seeds are vmapped
        around it); with one region, ``f`` of it."""
        if m == 1:
            return jax.tree.map(lambda a: a[None], f(*jax.tree.map(lambda a: a[0], xs)))
        return jax.lax.map(lambda a: f(*a), xs)

    def success_by_mean(inner) -> bool:  # at trace time: "auto" depends on the inner state
        return success == "posterior_mean" or (success == "auto" and (
            incumbent == "posterior_mean" or (incumbent == "auto" and mean_allowed and counts_by_mean(inner_alg, inner))))

    def lengthscales_of(inner) -> Optional[Array]:
        """``(m, d)`` the regions' inner lengthscales with ``ard`` (``None`` without, or when the
        surrogate reports none)."""
        return over_regions(lambda s: inner_lengthscales(inner_alg, s), inner) if ard else None

    def init(key: Array, x0: Array, y0: Array, c0=None, *, bounds, capacity: int) -> TrustRegionState:
        if isinstance(bounds, FiniteDomain) and q > 1 and m > 1:
            raise ValueError(f"regions={m} with q={q} on a finite domain: regions could choose the same point; "
                             "use q=1 or regions=1")
        data, box = initial_data(x0, y0, c0, bounds, capacity, constrained=constrained)
        if m > 1:
            _refuse_non_affine_transform(m, algorithm, data.space)
        d, dtype = data.u.shape[1], data.u.dtype
        n = design_size(box.dim, q, restart_points)
        if m == 1:  # no design before the first restart
            k_inner, k_state = jax.random.split(key)
            design = jnp.zeros((1, n, d), dtype)
        else:
            k_inner, k_design, k_state = jax.random.split(key, 3)
            design = jax.vmap(lambda k: sobol_samples(k, n, d, dtype))(jax.random.split(k_design, m))
        inner = over_regions(lambda k: inner_alg.init(k, x0, y0, c0, bounds=bounds, capacity=capacity),
                             jax.random.split(k_inner, m) if m > 1 else k_inner[None])
        zeros = jnp.zeros((m,), jnp.int32)
        later = jnp.arange(m) > 0  # every region but the first starts with its design
        best = None
        by_mean = incumbent == "posterior_mean" or (incumbent == "auto" and mean_allowed
                                                     and inner_lengthscales(inner_alg, _region(inner, 0)) is not None)
        if by_mean:  # m = 1
            best = posterior_incumbent(inner_alg.surrogate(_region(inner, 0), data.u).mean, _run_rows(data, 0))[None]
        return TrustRegionState(inner, data, box, jnp.where(data.written, 0, -1).astype(jnp.int32),
                                jnp.full((m,), length_init, dtype), zeros, zeros, zeros, later,
                                jnp.where(later, data.count, 0).astype(jnp.int32), design, k_state, best,
                                lengthscales_of(inner))

    def design_ask(state: TrustRegionState, key: Array) -> Array:
        data = state.data
        if data.finite:
            u = unevaluated_choices(key, data, q)
        else:
            j = jnp.argmax(state.in_design)
            n = state.design.shape[1]
            done = jnp.sum(region_rows(data, state.owner, state.start[j], j, observed=False))
            u = jax.lax.dynamic_slice_in_dim(state.design[j], jnp.clip(done, 0, n - q), q)
        return state.bounds.from_unit(u).astype(data.u.dtype)

    def model_ask(state: TrustRegionState, key: Array) -> Array:
        centres, boxes = regions_now(state, ard=ard)
        data, bounds = state.data, state.bounds
        if m == 1:
            return ask_in_region(inner_alg, _region(state.inner, 0), key, centres[0], boxes[0], data, bounds,
                                 perturb_dims)
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

    def ask(state: TrustRegionState, key: Array) -> Array:
        x = jax.lax.cond(jnp.any(state.in_design), design_ask, model_ask, state, key)
        return x[0] if q == 1 else x

    def tell(state: TrustRegionState, x: Array, y: Array, c=None) -> TrustRegionState:
        data0 = state.data
        d, dtype = data0.u.shape[1], data0.u.dtype
        cap = data0.capacity
        x = jnp.reshape(jnp.asarray(x, dtype), (-1, state.bounds.dim))
        u, rows = told_rows(state.bounds, x, y, c, constrained=constrained)  # rows (n,) or (n, K + 1)
        rows = rows.astype(dtype)
        y_told, c_told = (rows[:, 0], rows[:, 1:]) if constrained else (rows, None)
        idx = data0.write_index(u)
        data = data0.add_batch(u, rows)
        if m == 1:
            key, k_design, k_init = jax.random.split(state.key, 3)
            k_design, k_init, mine_of = k_design[None], k_init[None], jnp.zeros(idx.shape, jnp.int32)
        else:
            key, k_regions = jax.random.split(state.key)
            pairs = jax.vmap(jax.random.split)(jax.random.split(k_regions, m))  # (m, 2) keys
            k_design, k_init = pairs[:, 0], pairs[:, 1]
            centres, boxes = regions_now(state, ard=ard)
            mine_of = jnp.where(jnp.any(state.in_design), jnp.argmax(state.in_design).astype(jnp.int32),
                                owners(u, centres, boxes, ~state.in_design))
        mine_of = jnp.where(idx < cap, mine_of, -1)
        owner = state.owner.at[idx].set(mine_of, mode="drop")
        n = state.design.shape[1]
        ok = (idx < cap) & jnp.all(jnp.isfinite(jnp.reshape(rows, (rows.shape[0], -1))), axis=1)
        box = state.bounds if isinstance(state.bounds, SearchSpace) else Bounds(state.bounds.lower, state.bounds.upper)
        mean_success = success_by_mean(_region(state.inner, 0))
        by_mean = state.incumbent is not None  # the centre's rule, decided at init

        def restart_init(run: Array, k: Array):
            """The region's inner state initialized on the first ``n`` rows of its run (its design)."""
            design_rows = jnp.nonzero(run, size=n, fill_value=0)[0]
            failed = data.failed[design_rows]
            Y0 = jnp.where(failed.reshape((-1,) + (1,) * (data.y.ndim - 1)), jnp.nan, data.y[design_rows])
            y0, c0 = (Y0[:, 0], Y0[:, 1:]) if constrained else (Y0, None)
            inner = inner_alg.init(k, state.bounds.from_unit(data.u[design_rows]), y0, c0, bounds=box, capacity=cap)
            if data.finite:  # initialized on the box: give it the domain's choices back
                inner = _with_data(inner, inner.data._replace(choices=data.choices, evaluated=data.evaluated))
            return inner

        def region(j, inner, length, successes, failures, restarts, in_design, start, design, k_design, k_init):
            mine = mine_of == j
            run = region_rows(data, owner, start, j, observed=False)
            complete = in_design & (jnp.sum(run) >= n)
            if restart_keeps_data:  # the inner state is told every point, the designs' too
                to_tell = mine
            else:
                inner = jax.lax.cond(complete, lambda: restart_init(run, k_init), lambda: inner)
                inner = _after_all_of(inner)
                last_design_row = jnp.nonzero(run, size=n, fill_value=cap)[0][n - 1]
                to_tell = mine & jnp.where(in_design, idx > last_design_row, True)
            inner = jax.lax.cond(jnp.any(to_tell),
                                 lambda: inner_alg.tell(inner, jnp.where(to_tell[:, None], x, jnp.nan), y_told, c_told),
                                 lambda: inner)
            # success / failure of the batch against the run's best before it (Eriksson et al.
            # 2019, Section 2; BoTorch's update_state; with constraints SCBO's order, Eriksson
            # & Poloczek 2021, Section 3)
            run0 = region_rows(data0, state.owner, start, j, observed=True)
            if by_mean or mean_success:  # the inner model told the batch: its posterior mean at every row
                mean = inner_alg.surrogate(inner, data.u).mean
            if mean_success:
                improved = batch_improves_in_mean(mean, run0, idx, ok & mine)
            else:
                improved = batch_improves(data0.y, run0, rows, ok & mine, min_improvement)
            counted = jnp.any(mine) & ~in_design  # a design step changes no counter
            new = next_length(length, successes, failures, improved, success_tolerance,
                              failure_limit(state.bounds.dim, q, failure_tolerance), length_max)
            length, successes, failures = (jnp.where(counted, a, b) for a, b in zip(new, (length, successes, failures)))
            restart = counted & (length < length_min)
            fresh = in_design | restart  # a completed design starts the run afresh
            start = jnp.where(restart, data.count, start).astype(jnp.int32)
            best = posterior_incumbent(mean, region_rows(data, owner, start, j, observed=True)) if by_mean else None
            return (inner, jnp.where(fresh, jnp.asarray(length_init, dtype), length).astype(dtype),
                    jnp.where(fresh, 0, successes).astype(jnp.int32), jnp.where(fresh, 0, failures).astype(jnp.int32),
                    (restarts + restart).astype(jnp.int32), (in_design & ~complete) | restart, start,
                    jnp.where(restart, sobol_samples(k_design, n, d, dtype), design), best)

        inner, length, successes, failures, restarts, in_design, start, design, best = over_regions(
            region, jnp.arange(m), state.inner, state.length, state.successes, state.failures, state.restarts,
            state.in_design, state.start, state.design, k_design, k_init)
        return TrustRegionState(inner, data, state.bounds, owner, length, successes, failures, restarts, in_design,
                                start, design, key, best, lengthscales_of(inner))

    def info(state: TrustRegionState) -> dict:
        j = incumbent_region(state)
        inner = _region(state.inner, j)
        out = {} if inner_alg.info is None else dict(inner_alg.info(inner))
        out.update(tr_length=state.length[j], tr_successes=state.successes[j], tr_failures=state.failures[j],
                   tr_restarts=jnp.sum(state.restarts), tr_in_design=jnp.any(state.in_design),
                   tr_observed=jnp.sum(region_rows(state.data, state.owner, state.start[j], j, observed=True)),
                   tr_regions_in_design=jnp.sum(state.in_design))
        return out

    surrogate = None
    if inner_alg.surrogate is not None:
        def surrogate(state: TrustRegionState, u: Array):
            return inner_alg.surrogate(_region(state.inner, incumbent_region(state)), u)

    name = f"turbo-{inner_alg.name}" if m == 1 else f"turbo{m}-{inner_alg.name}"
    return BOAlgorithm(init, ask, tell, name, surrogate, q, constrained, info, "native", config)


def _region(inner, j):
    """Region ``j``'s inner state of the stacked ``inner`` states."""
    return jax.tree.map(lambda a: a[j], inner)


__all__ = ["trust_region", "TrustRegionState", "TrustRegionsState", "best_row", "current_centre", "current_region",
           "region_box", "regions_now", "incumbent_region", "inner_lengthscales", "counts_by_mean",
           "posterior_incumbent", "batch_improves_in_mean", "objective_units", "owners", "region_rows"]
