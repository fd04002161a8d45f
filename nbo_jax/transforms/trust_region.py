"""TuRBO-1: any algorithm asking inside a trust region that grows, shrinks and restarts.

Eriksson, Pearce, Gardner, Turner & Poloczek 2019, "Scalable global optimization via local
Bayesian optimization" (NeurIPS), Section 2 (TuRBO with ``m = 1`` region); defaults as in the
paper and BoTorch's TuRBO-1 tutorial. A constrained algorithm gets SCBO's rules (Eriksson &
Poloczek 2021, "Scalable constrained Bayesian optimization", AISTATS, Section 3): "best" is
the best feasible observation, or, while none is feasible, the smallest total violation
``sum_k [c_k]^+``; its own constrained acquisition picks the points.

:func:`trust_region` is a transformation of algorithms, as :func:`nbo_jax.transforms.batch.batched` is:
it takes a :class:`~nbo_jax.types.BOAlgorithm` and returns one, wrapping the inner state; the
inner algorithm asks through :mod:`nbo_jax.optimize`, which keeps its raw samples, climbs and
answers inside ``Dataset.region``::

    region   : a box of the unit cube centred at the best observation x* of the current
               run (SCBO's order with constraints; incumbent="posterior_mean", the default
               around a GP: the run's point of smallest posterior mean), side L * w_i in
               coordinate i (w = the inner GP's ARD lengthscales over their geometric mean,
               prod(w) = 1; w = 1 without them), clipped to [0, 1]^d
    ask      : the inner algorithm's ask with Dataset.region = that box; with d > 20
               inputs its spread raw samples vary each coordinate of x* with
               probability 20 / d (TuRBO's code) and keep x*'s value in the others
    tell     : success if min(y_batch) < f* - min_improvement |f*| (f* the run's best
               value; default min_improvement = 0, the paper's 1e-3 by choice), else
               failure (a failed evaluation is never a success); success=
               "posterior_mean" (the default around a GP or Neural-BO): success if a batch
               point's posterior mean, the model told the batch, is below every earlier
               point's of the run; with
               constraints: a feasible batch point while the run has no feasible point,
               a feasible improvement as above, or, with nothing feasible yet, a smaller
               total violation (SCBO);
               tau_succ successes in a row: L = min(2 L, L_max);
               tau_fail failures in a row: L = L / 2 (tau_fail = ceil(max(4, 2 d) / q)
               by default: the paper's with d doubled)
    restart  : when L < L_min: a fresh design of n_design scrambled Sobol points of the
               whole box (distinct random unevaluated points of a finite domain) is asked,
               then the inner algorithm is initialized on it alone, with L = L_init
               (restart_keeps_data: told it after everything before, the model kept)
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

import jax
import jax.numpy as jnp

from .._checks import check_bool, check_int, check_positive
from ..observations import initial_data, told_rows
from ..optimize import sobol_samples
from ..types import (
    BATCH_RULES,
    BOAlgorithm,
    Bounds,
    Dataset,
    FactoryCall,
)
from .batch import batched
from .trust_regions import trust_regions
from .regions import (  # noqa: F401 - the shared pieces, importable from here too
    _after_all_of,
    _run_rows,
    _with_data,
    ask_in_region,
    batch_improves,
    batch_improves_in_mean,
    best_row,
    counts_by_mean,
    design_size,
    failure_limit,
    inner_lengthscales,
    next_length,
    posterior_incumbent,
    region_box,
    unevaluated_choices,
)

Array = jax.Array
INCUMBENTS = ("auto", "observed", "posterior_mean")


SUCCESS_RULES = INCUMBENTS  # the same three rules, for what a batch must beat


class TrustRegionState(NamedTuple):
    """State of :func:`trust_region` (a pytree; fixed shapes).

    Attributes:
        inner: the inner algorithm's state, built from the observations of the current run
            only (since the last restart's design; before the first restart, everything).
            Stale while a restart design is being asked. With ``restart_keeps_data``: built
            from every observation, told each one as it comes.
        data: :class:`~nbo_jax.dataset.Dataset` of *every* observation (unit cube, all
            runs; ``y (cap, K + 1)`` with the constraints of a constrained algorithm), so
            counts, the finite domain's evaluated points and pending points are global.
        bounds: the box (:class:`~nbo_jax.domains.Bounds`).
        length: ``()`` the side ``L`` of the region in unit-cube units (before the
            lengthscale shaping), in ``[L_min / 2, L_max]``.
        successes, failures: ``()`` int32, consecutive successes / failures of the run.
        restarts: ``()`` int32, restarts so far.
        in_design: ``()`` bool, True while a restart design is being asked.
        start: ``()`` int32, row of ``data`` where the current run starts.
        design: ``(n_design, d)`` the current restart design (unit cube).
        key: PRNG key for the restart designs and the inner re-initializations.
        incumbent: ``()`` int32, the row of ``data`` of the current run whose posterior mean
            (the inner surrogate's) is smallest, with ``incumbent="posterior_mean"`` (and
            ``"auto"`` around a GP); ``None`` with the observed rule (the best observation is
            found from ``data``).
        lengthscales: ``(d,)`` the inner surrogate's lengthscales after the last init or tell
            (:func:`inner_lengthscales`), which shape the region with ``ard``; ``None``
            without ``ard`` or when the surrogate has none.
    """

    inner: Any
    data: Dataset
    bounds: Bounds
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


def current_centre(state: TrustRegionState) -> Array:
    """``(d,)`` the centre of ``state``'s trust region (unit cube): the best finite
    observation of the current run (rows of ``state.data`` from ``state.start``; SCBO's
    :func:`best_row` with constraints), or with ``incumbent="posterior_mean"`` the run's
    point of smallest posterior mean (``state.incumbent``); the cube's centre while the run
    has no observation."""
    data = state.data
    run = _run_rows(data, state.start)
    if state.incumbent is None:
        i, _, _, _ = best_row(data.y, run)
    else:
        i = state.incumbent
    return jnp.where(run[i], data.u[i], jnp.full_like(data.u[i], 0.5))


def current_region(state: TrustRegionState, *, ard: bool = True) -> Array:
    """``(2, d)`` the trust region the next model-based ask of ``state`` uses (lower, upper
    corners, unit cube): :func:`region_box` around :func:`current_centre`, of side
    ``state.length``, shaped by the inner surrogate's lengthscales (``state.lengthscales``)
    when ``ard``."""
    return _centre_and_region(state, ard)[1]


def _centre_and_region(state: TrustRegionState, ard: bool) -> tuple[Array, Array]:
    """``(current_centre(state), current_region(state, ard=ard))``, the centre found once."""
    centre = current_centre(state)
    return centre, region_box(centre, state.length, state.lengthscales if ard else None)


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
    """``algorithm`` asking inside a TuRBO-1 trust region (Eriksson et al. 2019; module doc).

    Every ask sets ``Dataset.region`` on the inner state's data to a box around the best
    observation of the current run and calls the inner ``ask``; every algorithm of the
    library asks through :mod:`nbo_jax.optimize`, which stays in that box (on a finite
    domain: picks among the unevaluated choices inside it, or among all unevaluated choices
    when it holds none). A box point the inner algorithm returns outside the region (an
    algorithm that does not ask through :mod:`nbo_jax.optimize`) is projected onto it.
    Each ``tell`` call is one batch for the success/failure counters (pending points,
    which :class:`~nbo_jax.AskTell` fantasizes by telling a copy of the state constant-liar
    values, count as failures in that copy: the copy may ask in a smaller region, or, at the
    last halving, from a restart design). When the side falls
    below ``length_min`` the region restarts: the next ``restart_points`` points asked are a
    fresh design of the whole domain, then the inner algorithm is re-initialized
    (``init``) on them alone. The inner algorithm never sees the earlier runs (as TuRBO;
    ``restart_keeps_data=True`` keeps them); the state's ``data`` and ``run_bo``'s history
    keep every observation.

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
            (``Dataset.region_centre``, :func:`nbo_jax.optimize.candidate_set`): the
            candidates of TuRBO's code (``prob_perturb = min(20 / d, 1)``) and BoTorch's
            TuRBO-1 tutorial, so that in many dimensions they stay near the incumbent. At
            ``d <= perturb_dims`` every coordinate varies (unchanged). ``None``: never.
        q: points per ask; ``None``: the inner algorithm's ``q``. With an inner ``q = 1``
            and ``q > 1`` the inner asks by :func:`nbo_jax.transforms.batch.batched` (its batch rule;
            "native" algorithms take ``q`` in their own factory).
        regions: ``m``, the number of trust regions. 1: TuRBO-1 (this module). ``m > 1``:
            TuRBO-m (:mod:`nbo_jax.transforms.trust_regions`; Eriksson et al. 2019, Section 2): ``m``
            regions with their own inner states, designs, sides and restarts; every ask
            the inner algorithm of each region proposes inside its box and the smallest
            Thompson draws of the regions' surrogates (objective units) win. Each ask costs
            ``m`` inner asks; each region but the first first asks a design of
            ``restart_points`` points. Unconstrained algorithms only (SCBO keeps one
            region); on a finite domain ``q = 1``.
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
        A :class:`~nbo_jax.types.BOAlgorithm` named ``"turbo-<inner name>"`` (TuRBO-m:
        ``"turbo<m>-<inner name>"``, its state a
        :class:`~nbo_jax.transforms.trust_regions.TrustRegionsState`, its ``info`` the figures of the
        region holding the best observation, ``tr_restarts`` summed over the regions, and
        ``tr_regions_in_design``) with
        ``batch_rule="native"``, the inner ``q`` and ``constrained``; its state is a
        :class:`TrustRegionState`, its ``info`` reports ``tr_length``, ``tr_successes``,
        ``tr_failures``, ``tr_restarts``, ``tr_in_design`` and ``tr_observed`` (observations of
        the current run) beside the inner algorithm's own; its ``surrogate`` is the inner
        one's (the current run's model).

    Raises:
        TypeError: ``algorithm`` not a BOAlgorithm; a count not an int; a length not a
            number; ``ard`` or ``restart_keeps_data`` not a bool.
        ValueError: an unknown ``batch_rule``, lengths not ``0 < length_min <=
            length_init <= length_max``, counts ``< 1``, ``min_improvement < 0``, ``q``
            disagreeing with an inner ``q > 1``, ``regions > 1`` with a constrained
            algorithm or with ``restart_keeps_data`` (and, at ``init``, on a finite domain
            with ``q > 1``), an unknown ``incumbent`` or ``success``, or ``"posterior_mean"`` with an
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
    regions = check_int("regions", regions, 1)
    restart_keeps_data = check_bool("restart_keeps_data", restart_keeps_data)
    if restart_keeps_data and regions > 1:
        raise ValueError("restart_keeps_data=True needs regions=1 (TuRBO-m's regions keep their own points)")
    if incumbent not in INCUMBENTS:
        raise ValueError(f"incumbent must be one of {INCUMBENTS}, got {incumbent!r}")
    if success not in SUCCESS_RULES:
        raise ValueError(f"success must be one of {SUCCESS_RULES}, got {success!r}")
    # why the posterior mean cannot be used (none: it may): "posterior_mean" raises the first,
    # "auto" takes the observed rule when there is one
    no_mean = [f"an algorithm with a surrogate; {algorithm.name!r} has none" if algorithm.surrogate is None else None,
               "an unconstrained algorithm (SCBO's order is by observed values)" if algorithm.constrained else None,
               "regions=1 (TuRBO-m's regions are chosen by the observed values)" if regions > 1 else None,
               (f"min_improvement=0 (the threshold is relative to the observed |f*|), got {min_improvement}"
                if min_improvement > 0 else None)]
    no_mean = [reason for reason in no_mean if reason is not None]
    for name, rule in (("incumbent", incumbent), ("success", success)):
        if rule == "posterior_mean" and no_mean:
            raise ValueError(f"{name}='posterior_mean' needs {no_mean[0]}")
    # incumbent="auto": the posterior mean where it may be used around an inner GP (its state
    # holds ARD lengthscales, found at init's trace); the observed value otherwise.
    # success="auto": the posterior mean with incumbent="posterior_mean" (any surrogate, as
    # before the option), and with incumbent="auto" around a GP or Neural-BO where it may be used
    mean_allowed = not no_mean

    def success_by_mean(inner) -> bool:  # at trace time: "auto" depends on the inner state
        return success == "posterior_mean" or (success == "auto" and (
            incumbent == "posterior_mean" or (incumbent == "auto" and mean_allowed and counts_by_mean(inner_alg, inner))))
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
        restart_points=restart_points, ard=ard, perturb_dims=perturb_dims, q=q, regions=regions,
        restart_keeps_data=restart_keeps_data, incumbent=incumbent, success=success))

    def n_design(d: int) -> int:
        return design_size(d, q, restart_points)

    def tau_fail(d: int) -> int:
        return failure_limit(d, q, failure_tolerance)

    if regions > 1:
        return trust_regions(inner_alg, config, regions=regions, length_init=length_init, length_min=length_min,
                             length_max=length_max, success_tolerance=success_tolerance, tau_fail=tau_fail,
                             n_design=n_design, min_improvement=min_improvement, ard=ard, perturb_dims=perturb_dims)

    def init(key: Array, x0: Array, y0: Array, c0=None, *, bounds, capacity: int) -> TrustRegionState:
        k_inner, k_state = jax.random.split(key)
        inner = inner_alg.init(k_inner, x0, y0, c0, bounds=bounds, capacity=capacity)
        data, box = initial_data(x0, y0, c0, bounds, capacity, constrained=constrained)
        d, dtype = data.u.shape[1], data.u.dtype
        zero = jnp.zeros((), jnp.int32)
        best = None
        by_mean = incumbent == "posterior_mean" or (incumbent == "auto" and mean_allowed
                                                     and inner_lengthscales(inner_alg, inner) is not None)
        if by_mean:
            best = posterior_incumbent(inner_alg.surrogate(inner, data.u).mean, _run_rows(data, 0))
        return TrustRegionState(inner, data, box, jnp.asarray(length_init, dtype), zero, zero, zero,
                                jnp.zeros((), bool), zero, jnp.zeros((n_design(d), d), dtype), k_state, best,
                                inner_lengthscales(inner_alg, inner) if ard else None)

    def model_ask(state: TrustRegionState, key: Array) -> Array:
        centre, box = _centre_and_region(state, ard)
        return ask_in_region(inner_alg, state.inner, key, centre, box, state.data, state.bounds, perturb_dims)

    def design_ask(state: TrustRegionState, key: Array) -> Array:
        data = state.data
        if data.finite:
            u = unevaluated_choices(key, data, q)
        else:
            n = state.design.shape[0]
            i = jnp.clip(data.count - state.start, 0, n - q)
            u = jax.lax.dynamic_slice_in_dim(state.design, i, q)
        return state.bounds.from_unit(u).astype(data.u.dtype)

    def ask(state: TrustRegionState, key: Array) -> Array:
        x = jax.lax.cond(state.in_design, design_ask, model_ask, state, key)
        return x[0] if q == 1 else x

    def restart_init(state: TrustRegionState, data: Dataset, key: Array):
        """The inner state initialized on the current restart design (its rows of ``data``)."""
        n = state.design.shape[0]
        rows = state.start + jnp.arange(n)
        x0 = state.bounds.from_unit(data.u[rows])
        failed = data.failed[rows]
        Y0 = jnp.where(failed.reshape((-1,) + (1,) * (data.y.ndim - 1)), jnp.nan, data.y[rows])
        y0, c0 = (Y0[:, 0], Y0[:, 1:]) if constrained else (Y0, None)
        box = Bounds(state.bounds.lower, state.bounds.upper)
        inner = inner_alg.init(key, x0, y0, c0, bounds=box, capacity=data.capacity)
        if data.finite:  # initialized on the box: give it the domain's choices back
            inner = _with_data(inner, inner.data._replace(choices=data.choices, evaluated=data.evaluated))
        return inner

    def tell(state: TrustRegionState, x: Array, y: Array, c=None) -> TrustRegionState:
        data0 = state.data
        d, dtype = data0.u.shape[1], data0.u.dtype
        x = jnp.reshape(jnp.asarray(x, dtype), (-1, d))
        u, rows = told_rows(state.bounds, x, y, c, constrained=constrained)  # rows (n,) or (n, K + 1)
        rows = rows.astype(dtype)
        y = rows[:, 0] if constrained else rows
        idx = data0.write_index(u)
        data = data0.add_batch(u, rows)
        key, k_design, k_init = jax.random.split(state.key, 3)
        n = state.design.shape[0]

        # the inner state: told (a model-based step), left alone (a design step), or
        # initialized on the design it completes, then told what came after the design
        complete = state.in_design & (data.count - state.start >= n)
        if restart_keeps_data:  # the inner state is told every point, the designs' too
            inner = state.inner
            to_tell = idx < data.capacity
        else:
            inner = jax.lax.cond(complete, lambda: restart_init(state, data, k_init), lambda: state.inner)
            inner = _after_all_of(inner)
            to_tell = (idx < data.capacity) & jnp.where(state.in_design, idx >= state.start + n, True)
        x_told = jnp.where(to_tell[:, None], x, jnp.nan)
        c_told = rows[:, 1:] if constrained else None
        inner = jax.lax.cond(jnp.any(to_tell), lambda: inner_alg.tell(inner, x_told, y, c_told), lambda: inner)

        # success / failure of the batch against the run's best before it (Eriksson et al.
        # 2019, Section 2; BoTorch's update_state; with constraints SCBO's order, Eriksson &
        # Poloczek 2021, Section 3)
        ok = (idx < data0.capacity) & jnp.all(jnp.isfinite(jnp.reshape(rows, (rows.shape[0], -1))), axis=1)
        run0 = _run_rows(data0, state.start)
        by_mean = state.incumbent is not None  # the centre's rule, decided at init
        mean_success = success_by_mean(state.inner)
        if by_mean or mean_success:  # the inner model told the batch: its posterior mean at every row
            mean = inner_alg.surrogate(inner, data.u).mean
        if mean_success:
            improved = batch_improves_in_mean(mean, run0, idx, ok)
        else:
            improved = batch_improves(data0.y, run0, rows, ok, min_improvement)
        length, successes, failures = next_length(state.length, state.successes, state.failures, improved,
                                                  success_tolerance, tau_fail(d), length_max)

        # a design step changes no counter; a completed design starts the run afresh
        design_step = state.in_design
        restart = ~design_step & (length < length_min)
        fresh = design_step | restart
        length = jnp.where(fresh, jnp.asarray(length_init, dtype), length)
        successes = jnp.where(fresh, 0, successes).astype(jnp.int32)
        failures = jnp.where(fresh, 0, failures).astype(jnp.int32)
        in_design = (design_step & ~complete) | restart
        start = jnp.where(restart, data.count, state.start).astype(jnp.int32)
        design = jnp.where(restart, sobol_samples(k_design, n, d, dtype), state.design)
        restarts = (state.restarts + restart).astype(jnp.int32)
        best = posterior_incumbent(mean, _run_rows(data, start)) if by_mean else None
        return TrustRegionState(inner, data, state.bounds, length, successes, failures, restarts, in_design,
                                start, design, key, best, inner_lengthscales(inner_alg, inner) if ard else None)

    def info(state: TrustRegionState) -> dict:
        out = {} if inner_alg.info is None else dict(inner_alg.info(state.inner))
        out.update(tr_length=state.length, tr_successes=state.successes, tr_failures=state.failures,
                   tr_restarts=state.restarts, tr_in_design=state.in_design,
                   tr_observed=state.data.count - state.start)
        return out

    surrogate = None
    if inner_alg.surrogate is not None:
        def surrogate(state: TrustRegionState, u: Array):
            return inner_alg.surrogate(state.inner, u)

    return BOAlgorithm(init, ask, tell, f"turbo-{inner_alg.name}", surrogate, q, constrained, info, "native",
                       config)


__all__ = ["trust_region", "TrustRegionState", "best_row", "current_centre", "current_region", "region_box",
           "inner_lengthscales", "counts_by_mean", "posterior_incumbent", "batch_improves_in_mean"]
