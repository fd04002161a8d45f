"""The one BO step: a surrogate, an acquisition function and the acquisition optimizer made
into a :class:`~nbo_jax.base.BOAlgorithm` (:func:`bo_algorithm`), and what every algorithm
factory shares (:func:`make_algorithm`, :func:`records_config`, the refit schedule
:func:`refit_due`)."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp

from ._checks import AUTO_ROWS_PER_REFIT, check_choice, check_int, check_refit_every
from .acquisition import CONSTRAINTS
from .base import BATCH_RULES, BOAlgorithm, FactoryCall, SearchRegion, Surrogate, SurrogatePosterior
from .transforms.batch import batched
from .dataset import Dataset
from .domains import Bounds
from .observations import (constrained_transform, feasibility_ranked, infer_reference_point, initial_data,
                           objective_scaling, observed_feasible, observed_pareto_rows, pareto_ranked, told_rows)
from .optimize import AcqOptimizer, optimize_acqf
from .outcome import AFFINE_OUTCOME_TRANSFORMS, OUTCOME_TRANSFORMS
from .outcome import targets as outcome_targets

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
                   batch_rule: str = "fantasy", constrained: bool = False, model=None,
                   outcome_transform=None) -> BOAlgorithm:
    """Assemble a :class:`BOAlgorithm` from the single-point ``ask`` and batch the asks by
    ``batch_rule`` when ``q > 1`` (:func:`nbo_jax.transforms.batch.batched`); ``"native"`` algorithms
    pass their own batched ``ask`` and ``q``. ``model``: the :class:`~nbo_jax.base.Surrogate`
    the algorithm asks with, if any; ``outcome_transform``: what it is fitted to, if known
    (:attr:`BOAlgorithm.outcome_transform <nbo_jax.base.BOAlgorithm>`).

    Raises:
        TypeError / ValueError: ``q`` not an int ``>= 1``; unknown ``batch_rule``."""
    q = check_int("q", q, 1)
    check_choice("batch_rule", batch_rule, BATCH_RULES)
    if batch_rule == "native":
        return BOAlgorithm(init, ask, tell, name, surrogate, q, constrained, info, batch_rule, model=model,
                           outcome_transform=outcome_transform)
    algorithm = BOAlgorithm(init, ask, tell, name, surrogate, 1, constrained, info, batch_rule, model=model,
                            outcome_transform=outcome_transform)
    return batched(algorithm, q)


# ---------------------------------------------------------------- the one BO step


class BOState(NamedTuple):
    """The state of an algorithm built by :func:`bo_algorithm` (a pytree; fixed shapes).

    Attributes:
        data: :class:`~nbo_jax.dataset.Dataset` of the observations as told (unit-cube
            inputs; ``y (cap,)``, or ``(cap, K + 1)`` for an algorithm that models
            constraints; failed evaluations imputed, see the Dataset).
        bounds: the box (:class:`~nbo_jax.domains.Bounds`, ``(d,)`` arrays).
        model: the surrogate's state (:attr:`nbo_jax.base.Surrogate.init`), fitted to the
            outcome transform of ``data``.
        tells: ``()`` int32, the number of ``tell`` calls (the refit schedule; it depends on
            no data, so under ``vmap`` it stays unbatched and the schedule a real branch).
        rows_told: ``()`` int32, the rows received: the initial design's and every tell's,
            failed evaluations included (the ``"auto"`` refit schedule; unbatched as ``tells``).
        reference: with ``m >= 2`` objectives, ``(m,)`` the hypervolume's reference point in
            the objectives' units (NaN: inferred from the observations at each ask); ``None``
            for one objective. Its length is the number of objectives.
    """

    data: Dataset
    bounds: Bounds
    model: Any
    tells: Array
    rows_told: Array
    reference: Optional[Array] = None


def _acquisition_name(acquisition: Callable) -> str:
    """How an error names ``acquisition``: its qualified name (``thompson.<locals>.acq``
    names the factory), else its ``repr``."""
    name = getattr(acquisition, "__qualname__", None) or getattr(acquisition, "__name__", None)
    return repr(name) if name else repr(acquisition)


def requires(acquisition: Callable) -> tuple[str, ...]:
    """The optional :class:`~nbo_jax.base.SurrogatePosterior` fields ``acquisition`` reads
    (its ``requires`` attribute, e.g. ``("sample",)`` for Thompson sampling on the
    surrogate's posterior draw); ``()`` when it names none."""
    return tuple(getattr(acquisition, "requires", ()))


def reads_constraints(acquisition: Callable) -> bool:
    """Whether ``acquisition`` reads the constraints' posterior (its :func:`requires` names
    :data:`nbo_jax.acquisition.CONSTRAINTS`)."""
    return bool(set(requires(acquisition)) & set(CONSTRAINTS))


def check_pairing(surrogate: Surrogate, acquisition: Callable, acq_optimizer: AcqOptimizer,
                  constrained: bool) -> None:
    """Refuse an acquisition that reads what the surrogate's posterior lacks.

    Raises:
        TypeError: ``surrogate`` not a :class:`~nbo_jax.base.Surrogate` or ``acquisition``
            not callable.
        ValueError: the acquisition needs a posterior draw (``"sample"``) and the surrogate
            has none, or has a joint draw only (not pathwise) and ``acq_optimizer.steps > 0``;
            it needs the constraints' posterior and the algorithm models none; the
            algorithm models constraints and the surrogate a single output. The messages
            name the surrogate and what it lacks."""
    if not isinstance(surrogate, Surrogate):
        raise TypeError(f"surrogate must be an nbo_jax.base.Surrogate, got {type(surrogate).__name__}")
    if not callable(acquisition):
        raise TypeError(f"acquisition must be a function acq(SurrogatePosterior, key) -> (N,), "
                        f"got {type(acquisition).__name__}")
    needs = requires(acquisition)
    if "sample" in needs:
        if surrogate.sample is None:
            raise ValueError(f"acquisition: it reads a posterior draw (SurrogatePosterior.sample), and the "
                             f"{surrogate.name!r} surrogate's posterior has none; use an acquisition of its mean "
                             f"and std (e.g. nbo.acquisition.thompson, independent draws per point)")
        if not surrogate.pathwise and acq_optimizer.steps > 0:
            raise ValueError(f"acq_optimizer.steps must be 0: the {surrogate.name!r} surrogate's posterior draw "
                             f"is joint over the raw samples, not one function to climb")
    if reads_constraints(acquisition) and not constrained:
        raise ValueError("acquisition: it reads the constraints' posterior; this algorithm models no constraints")
    if constrained and not surrogate.multi_output:
        raise ValueError(f"the {surrogate.name!r} surrogate models one output; modelling constraints needs a "
                         f"surrogate of every column (multi_output=True)")
    if reads_objectives(acquisition) and not surrogate.multi_output:
        raise ValueError(f"acquisition: it reads several objectives, and the {surrogate.name!r} surrogate models one "
                         f"output; wrap it in nbo.surrogates.independent (one copy per objective)")


def reads_objectives(acquisition: Callable) -> bool:
    """Whether ``acquisition`` is a multi-objective one (its :func:`requires` names
    ``"objectives"``): the algorithm then models ``m >= 2`` objectives."""
    return "objectives" in requires(acquisition)


def bo_algorithm(
    surrogate: Surrogate,
    acquisition: Callable,
    *,
    acq_optimizer: AcqOptimizer,
    name: str,
    q: int = 1,
    refit_every: int | str = "auto",
    outcome_transform: str = "standardize",
    constrained: bool = False,
    batch_rule: Optional[str] = None,
) -> BOAlgorithm:
    """The one BO step: ``surrogate`` x ``acquisition`` x the acquisition optimizer as a
    :class:`~nbo_jax.base.BOAlgorithm` (BoTorch's ``Model`` x ``AcquisitionFunction`` x
    ``optimize_acqf``). Every algorithm preset whose acquisition is a function of its
    surrogate's posterior is this function with its own arguments::

        init : data <- the initial rows;  model <- surrogate.init(key, T(data), rows)
               (with ``start=``: surrogate.init(key, T(data), rows, start=start))
        ask  : post(u) = surrogate.posterior(model, u) with the incumbent (and a posterior
               draw when the acquisition reads one);
               u* = optimize_acqf(u -> acquisition(post(u), key), raw samples around the best rows)
        tell : data <- data + rows;  model <- surrogate.update(model, T(data), rows, refit due?)

    ``T`` is the outcome transform (a single output: :func:`nbo_jax.outcome.targets`; with
    constraints, the objective standardized and each constraint divided by its root mean
    square, :func:`nbo_jax.observations.constrained_transform`, so 0 stays the feasibility
    threshold). The incumbent is the best observed target (never an imputed failure); with
    constraints, the best observed feasible one (``+inf`` while none is).

    **Several objectives.** An acquisition whose ``requires`` names ``"objectives"``
    (:func:`nbo_jax.acquisition.ehvi`, :func:`~nbo_jax.acquisition.parego`,
    :func:`~nbo_jax.acquisition.random_scalarization`) makes the algorithm take ``m >= 2``
    objectives: ``init``'s ``y0 (n0, m)``, ``tell``'s ``y (m,) | (n, m)``, columns ``0..m-1``
    of the dataset (then the constraints); each objective is standardized
    (:func:`nbo_jax.observations.objective_scaling`); the posterior holds ``(N, m)`` means,
    stds and draws, the ``(cap, m)`` observed feasible targets as ``incumbent`` and the
    hypervolume's ``reference_point`` in target units (the acquisition's ``reference_point``
    attribute, in the objectives' units, or one inferred from the front at each ask); the
    surrogate must be multi-output (:func:`nbo_jax.surrogates.independent`).

    Args:
        surrogate: a :class:`~nbo_jax.base.Surrogate`.
        acquisition: ``acq(SurrogatePosterior, key) -> (N,)`` utility to maximize
            (:mod:`nbo_jax.acquisition`); its ``requires`` attribute names the optional
            posterior fields it reads (:func:`requires`).
        acq_optimizer: a checked :class:`~nbo_jax.optimize.AcqOptimizer`
            (:func:`nbo_jax.optimize.as_acq_optimizer`). With ``local_rank="mean"`` the local
            raw samples centre on the smallest posterior means at the observations.
        name: the algorithm's name.
        q: points per ask (int >= 1), batched by ``batch_rule`` (:func:`nbo_jax.transforms.batch.batched`).
        refit_every: the surrogate's refit schedule (:func:`refit_due`): ``update`` is told
            ``refit=True`` at every ``refit_every``-th tell, or on the ``"auto"`` schedule; 1:
            at every tell.
        outcome_transform: one of :data:`nbo_jax.outcome.OUTCOME_TRANSFORMS`; with
            ``constrained``, ``"standardize"`` or ``"none"``.
        constrained: the algorithm models the constraints (``init`` needs ``c0``, ``tell``
            needs ``c``; the surrogate models every column).
        batch_rule: ``"independent"`` or ``"fantasy"``; ``None``: ``"independent"`` when the
            acquisition reads a posterior draw (Thompson sampling), else ``"fantasy"``.

    Returns:
        :class:`~nbo_jax.base.BOAlgorithm` whose state is a :class:`BOState`, with
        ``surrogate(state, u) -> SurrogatePosterior`` (incumbent filled) and the surrogate's
        ``info``.

    Raises:
        TypeError / ValueError: as :func:`check_pairing`; an unknown ``outcome_transform``
        (or a non-affine one with ``constrained``), ``refit_every`` or ``batch_rule``.
    """
    constrained = bool(constrained)
    multi = reads_objectives(acquisition)
    check_pairing(surrogate, acquisition, acq_optimizer, constrained)
    transform = check_choice("outcome_transform", outcome_transform,
                             AFFINE_OUTCOME_TRANSFORMS if constrained or multi else OUTCOME_TRANSFORMS)
    refit_every = check_refit_every(refit_every)
    draws = "sample" in requires(acquisition)
    if batch_rule is None:
        batch_rule = "independent" if draws else "fantasy"
    reference_point = getattr(acquisition, "reference_point", None)  # the objectives' units, or None

    def objectives(state: BOState) -> int:
        """``m``, static: 1, or the length of the state's reference point."""
        reference = getattr(state, "reference", None)  # a preset's own state may extend BOState's fields
        return 1 if reference is None else reference.shape[0]

    def scaling(data: Dataset, m: int = 1) -> tuple[Array, Array]:
        """``(shift, scale)``, ``(J,)`` each, of a dataset of several columns."""
        if transform == "none":
            J = data.y.shape[1]
            return jnp.zeros((J,), data.y.dtype), jnp.ones((J,), data.y.dtype)
        return objective_scaling(data.y, data.mask, m) if multi else constrained_transform(data.y, data.mask)

    def targets(data: Dataset, m: int = 1) -> Dataset:
        """``data`` with ``y`` the surrogate's targets (0 outside the mask)."""
        if not constrained and not multi:
            return data._replace(y=outcome_targets(data, transform))
        shift, scale = scaling(data, m)
        return data._replace(y=jnp.where(data.mask, (data.y - shift) / scale, 0.0))

    def incumbent(data: Dataset, fitted: Dataset, m: int = 1) -> Array:
        """The best observed target of ``fitted`` (``targets(data)``); with constraints the best
        observed feasible objective target (a feasible row is in the mask, where ``fitted``
        holds its scaled value); with several objectives the ``(cap, m)`` observed feasible
        targets (``+inf`` elsewhere)."""
        if multi:
            return jnp.where(observed_pareto_rows(data, m)[:, None], fitted.y[:, :m], jnp.inf)
        if not constrained:
            return data.incumbent(fitted.y)
        return jnp.min(jnp.where(observed_feasible(data), fitted.y[:, 0], jnp.inf))

    def reference_in_targets(state: BOState, best: Array) -> Array:
        """``(m,)`` the reference point in the targets' units: the state's, transformed, or
        inferred from the incumbent front where it is NaN."""
        m = objectives(state)
        shift, scale = scaling(state.data, m)
        given = (state.reference - shift[:m]) / scale[:m]
        inferred = infer_reference_point(best, jnp.all(jnp.isfinite(best), axis=1))
        return jnp.where(jnp.isnan(state.reference), inferred, given)

    def refit_now(state: BOState):
        """``True`` (a Python bool) when every tell refits, else the schedule's ``()`` bool."""
        return True if refit_every == 1 else refit_due(refit_every, state.tells, state.rows_told)

    def init(key: Array, x0: Array, y0: Array, c0=None, *, bounds, capacity: int, start=None) -> BOState:
        reference = None
        if multi:
            reference = _reference_state(y0, reference_point)
        data, box = initial_data(x0, y0, c0, bounds, capacity, constrained=constrained)
        m = 1 if reference is None else reference.shape[0]
        rows = jnp.arange(x0.shape[0])
        if start is None:
            model = surrogate.init(key, targets(data, m), rows)
        elif surrogate.hyperparameters is None:
            raise TypeError(f"start is given, but the surrogate {surrogate.name!r} takes no start for its fit "
                            "(Surrogate.hyperparameters is None)")
        else:
            model = surrogate.init(key, targets(data, m), rows, start=start)
        return BOState(data, box, model, jnp.zeros((), jnp.int32), jnp.asarray(x0.shape[0], jnp.int32),
                       None if reference is None else reference.astype(data.y.dtype))

    def posterior_fn(state: BOState, key: Optional[Array] = None) -> Callable[[Array], SurrogatePosterior]:
        """``u (N, d) -> SurrogatePosterior`` with the incumbent, and, given ``key``, the
        posterior draw of that key (one draw per ask)."""
        m = objectives(state)
        best = incumbent(state.data, targets(state.data, m), m)
        draw = surrogate.sample(state.model, key) if key is not None else None
        ref = reference_in_targets(state, best) if multi else None

        def at(u: Array) -> SurrogatePosterior:
            post = surrogate.posterior(state.model, u)._replace(incumbent=best)
            if multi:
                post = _by_objective(post, m, ref)
            if draw is None:
                return post
            sample = draw(u)
            return post._replace(sample=sample[:, :m] if multi else sample)

        return at

    def ask(state: BOState, key: Array, region: Optional[SearchRegion] = None) -> Array:
        k_c, k_a = jax.random.split(key)
        post = posterior_fn(state, k_a if draws else None)
        def utility(u: Array) -> Array:
            out = acquisition(post(u), k_a)
            if jnp.shape(out) != u.shape[:1]:  # shapes are static: checked once per trace, free at run time
                raise ValueError(f"acquisition {_acquisition_name(acquisition)} returned shape {jnp.shape(out)} for "
                                 f"{u.shape[0]} candidates; an acquisition must return one utility per candidate, "
                                 f"shape (N,) = ({u.shape[0]},)")
            return out

        data = state.data
        if multi:  # local raw samples around the observed Pareto front (or the least violating rows)
            m = objectives(state)
            data = pareto_ranked(data, m, scaling(data, m)[1])
        elif constrained:
            # local raw samples around the best feasible rows, or the least violating ones
            data = feasibility_ranked(data, scaling(data)[1])
        elif acq_optimizer.local_rank == "mean":  # around the smallest posterior means
            data = data._replace(y=jnp.where(data.observed(), surrogate.posterior(state.model, data.u).mean, data.y))
        return state.bounds.from_unit(optimize_acqf(utility, k_c, data, acq_optimizer, region))

    def tell(state: BOState, x: Array, y: Array, c=None) -> BOState:
        m = objectives(state)
        u, Y = told_rows(state.bounds, x, y, c, constrained=constrained, objectives=m)
        rows = state.data.count + jnp.arange(u.shape[0])
        state = state._replace(data=state.data.add_batch(u, Y), tells=state.tells + 1,
                               rows_told=state.rows_told + u.shape[0])
        return state._replace(model=surrogate.update(state.model, targets(state.data, m), rows, refit_now(state)))

    def posterior(state: BOState, u: Array) -> SurrogatePosterior:
        return posterior_fn(state)(u)

    info = None
    if surrogate.info is not None:
        def info(state: BOState) -> dict:
            return surrogate.info(state.model)

    algorithm = make_algorithm(init, ask, tell, name=name, surrogate=posterior, info=info, q=q,
                               batch_rule=batch_rule, constrained=constrained, model=surrogate,
                               outcome_transform=transform)
    return algorithm._replace(multi_objective=True) if multi else algorithm


def _reference_state(y0, reference_point) -> Array:
    """The ``(m,)`` reference point a multi-objective state keeps (NaN: inferred), ``m`` the
    columns of ``y0 (n0, m)``.

    Raises:
        ValueError: ``y0`` not ``(n0, m)`` with ``m >= 2``, or a ``reference_point`` of another
            length or with a NaN/inf."""
    shape = jnp.shape(y0)
    if len(shape) != 2 or shape[1] < 2:
        raise ValueError(f"y0 must have shape (n0, m) with m >= 2 objectives for a multi-objective acquisition, "
                         f"got shape {shape}")
    m = shape[1]
    if reference_point is None:
        return jnp.full((m,), jnp.nan)
    ref = jnp.asarray(reference_point, jnp.result_type(float))
    if ref.shape != (m,):
        raise ValueError(f"reference_point must hold one value per objective, shape ({m},), got {ref.shape}")
    if not isinstance(ref, jax.core.Tracer) and not bool(jnp.all(jnp.isfinite(ref))):
        raise ValueError(f"reference_point must be finite, got {ref.tolist()}")
    return ref


def _by_objective(post: SurrogatePosterior, m: int, reference: Array) -> SurrogatePosterior:
    """A multi-output posterior (column 0 in ``mean``, the other columns in
    ``constraint_mean``) regrouped for ``m`` objectives: ``mean``/``std`` ``(N, m)``, the
    constraints' ``(N, K)`` (``None`` when ``K = 0``), and the reference point."""
    cm, cs = post.constraint_mean, post.constraint_std
    mean = jnp.concatenate([post.mean[:, None], cm[:, :m - 1]], axis=1)
    std = jnp.concatenate([post.std[:, None], cs[:, :m - 1]], axis=1)
    K = cm.shape[1] - (m - 1)
    return post._replace(mean=mean, std=std, constraint_mean=cm[:, m - 1:] if K else None,
                         constraint_std=cs[:, m - 1:] if K else None, reference_point=reference)


__all__ = ["AUTO_ROWS_PER_REFIT", "BOState", "bo_algorithm", "check_pairing", "make_algorithm", "reads_constraints",
           "reads_objectives", "records_config", "refit_due", "requires"]
