"""The whole contract in one place (as blackjax's ``base.py``): the types every layer speaks.

- :class:`BOAlgorithm` ``(init, ask, tell)``: a BO algorithm as pure functions, the same
  signatures for every algorithm; built by the presets in :mod:`nbo_jax.algorithms` (or by
  hand), run by :func:`nbo_jax.run_bo`, :class:`nbo_jax.AskTell` and the integrations,
  transformed by :func:`nbo_jax.batched` and :func:`nbo_jax.trust_region`.
- :class:`Surrogate` ``(init, update, posterior)``: a model of the observations as pure
  functions over a :class:`~nbo_jax.dataset.Dataset`, whose :class:`SurrogatePosterior` at
  candidate points feeds an :data:`AcquisitionFn`. :func:`nbo_jax.bo.bo_algorithm` turns a
  surrogate, an acquisition function and an acquisition optimizer into a
  :class:`BOAlgorithm` (BoTorch's ``Model.posterior`` x ``AcquisitionFunction`` x
  ``optimize_acqf``).
- :class:`FactoryCall`: how an algorithm was built (saves, pickling: a :class:`BOAlgorithm`
  pickles as its ``config``, ``name`` and ``q``, and is rebuilt from them).

Types only: no numerics, no imports from the rest of the package (but one when a pickled
batched algorithm is rebuilt). Shapes use ``N`` for candidate points, ``d`` for the input
dimension, ``cap`` for a run's capacity and ``K`` for the number of constraints; inputs are
unit-cube points ``u``.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Optional

import jax

Array = jax.Array


class FactoryCall:
    """How an algorithm was built: ``factory`` (``"module:qualname"``) called with ``kwargs``.

    :class:`~nbo_jax.loop.AskTell` uses it to save, pickle and rebuild an optimizer. Compares
    and hashes by identity, so a :class:`BOAlgorithm` holding one stays a valid static
    argument of ``jit``."""

    __slots__ = ("factory", "kwargs", "name")

    def __init__(self, factory: str, kwargs: dict, name: Optional[str] = None):
        self.factory = factory
        self.kwargs = dict(kwargs)
        self.name = name

    def build(self) -> "BOAlgorithm":
        """Call the factory again with the recorded arguments."""
        import importlib

        module, _, qualname = self.factory.partition(":")
        fn = importlib.import_module(module)
        for part in qualname.split("."):
            fn = getattr(fn, part)
        algo = fn(**self.kwargs)
        return algo._replace(name=self.name) if self.name else algo

    def __repr__(self) -> str:
        # a nested algorithm (trust_region's inner one) shows as its own recipe when it has one:
        # a BOAlgorithm's repr holds its functions' addresses, which differ between processes
        kwargs = {k: v.config if isinstance(v, BOAlgorithm) and v.config is not None else v
                  for k, v in self.kwargs.items()}
        return f"FactoryCall({self.factory!r}, {kwargs!r})"


BATCH_RULES = ("fantasy", "independent", "native")


class BOAlgorithm(NamedTuple):
    """A BO algorithm as three pure functions (blackjax style), all jit/vmap compatible, with
    the same signatures for every algorithm.

    - ``init(key, x0, y0, c0=None, *, bounds, capacity) -> state``: ``x0 (n0, d)`` in the
      box, ``y0 (n0,)`` observed objective values, ``c0 (n0, K)`` observed constraint values
      (``None`` when the problem has none), ``bounds`` a :class:`Bounds` (or ``(lower,
      upper)``), ``capacity`` the total number of observations the state must hold (a Python
      int). An algorithm whose ``model`` has :attr:`Surrogate.hyperparameters` also takes
      ``start=`` (its surrogate's fit starts there; :func:`nbo_jax.bo.bo_algorithm`).
    - ``ask(state, key, region=None) -> x``: the next point ``(d,)`` in the box, or ``(q, d)``
      when ``q > 1``; with a :class:`SearchRegion` (a trust region), a point inside it (the
      library's algorithms pass it to :func:`nbo_jax.optimize.optimize_acqf`). A hand-made
      ``ask(state, key)`` without ``region`` still works inside a trust region: its answer
      is projected onto the region.
    - ``tell(state, x, y, c=None) -> state``: record observations, one (``x (d,)``,
      ``y ()``, ``c (K,)``) or a batch (``x (n, d)``, ``y (n,)``, ``c (n, K)``). A NaN/inf
      value marks a failed evaluation (:class:`Dataset`); a row whose ``x`` is not finite is
      not recorded.
    Every state holds ``data`` (a :class:`Dataset`, unit-cube inputs; ``J = K + 1`` columns
    for an algorithm that models constraints) and ``bounds`` (its :class:`Bounds`).
    - ``surrogate(state, u) -> SurrogatePosterior`` (optional): the model's posterior at
      unit-cube points ``u (N, d)``, for plots and diagnostics; ``None`` for model-free
      algorithms.
    - ``q``: the number of points one ``ask`` returns (BoTorch's ``q``); ``run_bo`` then
      evaluates ``n_iter * q`` points after the initial design.
    - ``constrained``: True for algorithms that model black-box constraints (Neural-CBO,
      cEI, LCB-C); they need ``c0``/``c`` (``c <= 0`` feasible). Other algorithms accept and
      ignore them, so a problem's constraints never change how an algorithm is called.
    - ``info(state) -> dict[str, scalar]`` (optional): the algorithm's own per-step
      diagnostics (e.g. PINN-BO's interaction information); ``run_bo`` records them, with
      the observation counts every algorithm reports, in :attr:`History.info`.
    - ``batch_rule``: how ``q > 1`` points and pending points are chosen:
      ``"independent"`` (independent draws, e.g. Thompson samples), ``"fantasy"`` (each
      chosen or pending point is told to a copy of the state with a constant-liar value
      before the next is chosen; Ginsbourger et al. 2010) or ``"native"`` (the algorithm's
      own batch rule). See :mod:`nbo_jax.transforms.batch`.
    - ``config``: the :class:`FactoryCall` that built it (``None`` for hand-made ones); the
      algorithm pickles as it (with ``name`` and ``q``), so a hand-made one does not pickle.
    - ``multi_objective``: True for algorithms that take ``m >= 2`` objectives: ``y0 (n0, m)``
      and ``y (m,)`` / ``(n, m)`` (minimized; e.g. ``gp_bo(acquisition=nbo.acquisition.ehvi())``,
      and random search, which takes any number).
    - ``model``: the :class:`Surrogate` it asks with, for an algorithm built by
      :func:`nbo_jax.bo.bo_algorithm` (``None`` otherwise): transformations ask it what they
      need (e.g. :attr:`Surrogate.counts_by_mean`) instead of testing a state's type.
    - ``outcome_transform``: what its surrogate is fitted to, one of
      :data:`nbo_jax.outcome.OUTCOME_TRANSFORMS`, for an algorithm built by
      :func:`nbo_jax.bo.bo_algorithm` (``None`` otherwise); TuRBO-m reads it.
    """

    init: Callable[..., Any]
    ask: Callable[[Any, Array], Array]
    tell: Callable[..., Any]
    name: str = "algorithm"
    surrogate: Optional[Callable[[Any, Array], Any]] = None
    q: int = 1
    constrained: bool = False
    info: Optional[Callable[[Any], dict]] = None
    batch_rule: str = "fantasy"
    config: Optional[FactoryCall] = None
    model: Optional["Surrogate"] = None
    multi_objective: bool = False
    outcome_transform: Optional[str] = None

    def __reduce__(self):
        """Pickle as the recipe: :attr:`config` (its factory and arguments) with ``name`` and
        ``q``, rebuilt on unpickling by :func:`_rebuild` (the functions themselves are
        closures, which ``pickle`` cannot hold).

        Raises:
            TypeError: the algorithm has no ``config`` (built by hand)."""
        if self.config is None:
            raise TypeError(f"cannot pickle algorithm {self.name!r}: it has no config (it was built by hand, not "
                            "by a factory), and its init/ask/tell are closures; pickle the factory and its "
                            "arguments, or build it with nbo_jax.bo.records_config")
        return _rebuild, (self.config, self.name, self.q)


def _rebuild(config: FactoryCall, name: str, q: int) -> BOAlgorithm:
    """The algorithm a pickle of a :class:`BOAlgorithm` holds: ``config.build()`` named
    ``name``, batched to ``q`` points (:func:`nbo_jax.batched`) when it was batched after its
    factory built it."""
    algorithm = config.build()
    if algorithm.q != q:
        from .transforms.batch import batched  # the one import from the package, at unpickling

        algorithm = batched(algorithm, q)
    return algorithm._replace(name=name) if algorithm.name != name else algorithm


class SurrogatePosterior(NamedTuple):
    """The surrogate's marginal posterior at ``N`` candidates (standardized output units).

    Attributes:
        u: ``(N, d)`` candidates in the unit cube.
        mean: ``(N,)`` posterior mean (Neural-BO: the trained network ``h(x; theta_t)``).
        std: ``(N,)`` posterior standard deviation (Neural-BO: ``sigma_t(x)``).
        incumbent: ``()`` best (smallest) observed standardized value. For constrained
            models, the best *feasible* one, or ``+inf`` when no observation is feasible.
        constraint_mean: ``(N, K)`` posterior means of the ``K`` constraints, scaled so that
            ``0`` is still the feasibility threshold (``c <= 0`` feasible); ``None`` for
            unconstrained models.
        constraint_std: ``(N, K)`` their posterior standard deviations (same scaling).
        sample: ``(N,)`` one draw of the latent objective at the ``N`` points from the
            posterior (Thompson sampling), where the surrogate has one
            (:attr:`Surrogate.sample`) and the acquisition asks for it
            (:func:`nbo_jax.bo.requires`); ``None`` otherwise. A pathwise draw
            (:attr:`Surrogate.pathwise`) is one function: the same at any points, so it can
            be climbed.
        lengthscales: ``(d,)`` the model's lengthscales in unit-cube units, where it has
            them (a trust region's shape, Eriksson et al. 2019); ``None`` otherwise.
        reference_point: ``(m,)``, for ``m >= 2`` objectives only: the hypervolume's
            reference point in the targets' units (the algorithm's, or one inferred from the
            observations, :func:`nbo_jax.observations.infer_reference_point`); ``None``
            for one objective.

    With ``m >= 2`` objectives (an acquisition that ``requires`` ``"objectives"``, e.g.
    :func:`nbo_jax.acquisition.ehvi`), ``mean``, ``std`` and ``sample`` are ``(N, m)`` and
    ``incumbent`` is ``(cap, m)``: the observed feasible targets, ``+inf`` in the rows that
    are not (the current Pareto front is their non-dominated rows).

    Units: the surrogate's targets (the outcome transform's, e.g. standardized values).
    """

    u: Array
    mean: Array
    std: Array
    incumbent: Array
    constraint_mean: Optional[Array] = None
    constraint_std: Optional[Array] = None
    sample: Optional[Array] = None
    lengthscales: Optional[Array] = None
    reference_point: Optional[Array] = None


class SearchRegion(NamedTuple):
    """The part of the unit cube an ``ask`` searches (BoTorch passes ``bounds`` to
    ``optimize_acqf``): a trust region (:func:`nbo_jax.trust_region`).

    Attributes:
        box: ``(2, d)`` lower and upper corners inside ``[0, 1]^d``: every raw sample, climb
            and answer of :func:`nbo_jax.optimize.optimize_acqf` stays in it; on a finite
            domain only the unevaluated choices inside it are eligible (all unevaluated
            choices when it holds none).
        centre: ``(d,)`` the region's centre (unit cube), or ``None``. With ``perturb`` the
            spread raw samples keep its value in each coordinate except with probability
            ``perturb`` (at least one coordinate varies): TuRBO's candidates in high
            dimensions (Eriksson et al. 2019; :func:`nbo_jax.optimize.candidate_set`).
        perturb: ``()`` the probability that a raw sample varies a coordinate of ``centre``;
            ``None``: every coordinate varies.
    """

    box: Array
    centre: Optional[Array] = None
    perturb: Optional[Array] = None


AcquisitionFn = Callable[[SurrogatePosterior, Array], Array]
"""``acq(post: SurrogatePosterior, key) -> (N,)``: a utility to **maximize** (BoTorch's
convention) for a **minimization** problem (:mod:`nbo_jax.acquisition`). An acquisition that
reads an optional field of the posterior (``sample``, ``constraint_mean``) names it in an
attribute ``requires`` (a tuple of field names), so that a surrogate that lacks it is refused
when the algorithm is built (:func:`nbo_jax.bo.requires`)."""


class Surrogate(NamedTuple):
    """A model of the observations as pure functions (optax's ``GradientTransformation``
    shape: a state and the functions over it), all jit/vmap compatible.

    - ``init(key, data, rows) -> state``: the model fitted to ``data`` (a
      :class:`~nbo_jax.dataset.Dataset` of unit-cube inputs whose ``y`` holds the targets
      the model fits, e.g. standardized values; only rows in ``data.mask`` are observations;
      on a mixed search space, ``data.space``, the inputs are its encodings: a column per
      continuous or integer parameter and a one-hot column per category, which is what a
      network sees; the GP reads the layout to put an overlap kernel on the categories);
      ``rows (n0,)`` the initial rows' indices ``0..n0-1`` (a static length, for models that
      absorb rows one by one; others ignore it).
    - ``update(state, data, rows, refit) -> state``: the model after the rows ``rows (n,)``
      (int indices into ``data``) were written to ``data``; ``rows`` is ``count_before +
      arange(n)`` for a tell of ``n`` points, so an index ``>= data.count`` (a told point
      with a non-finite coordinate, which is not recorded) must be ignored. ``refit`` says whether to refit
      the hyperparameters (or retrain) now: a Python bool, or a ``()`` bool array from the
      refit schedule (an unbatched counter, so a ``lax.cond`` on it stays a branch under
      ``vmap``); when False the model may only extend its factors with the new rows.
    - ``posterior(state, u) -> SurrogatePosterior``: the marginal posterior at ``u (N, d)``
      (``incumbent`` left to the caller, who knows the observations' rule: best observed,
      best feasible).
    - ``sample`` (optional): ``(state, key) -> f~``, one posterior draw ``f~: u (N, d) ->
      (N,)`` of the latent objective; ``None`` for models without one.
    - ``pathwise``: ``f~`` is one function (a weight-space or pathwise draw: the same
      values at any points), so an acquisition on it can be climbed; False for a joint draw
      over each set of points it is called on (a GP's exact draw), which the acquisition
      optimizer may only score on its raw samples (``steps = 0``).
    - ``multi_output``: the model fits every column of a ``(cap, J)`` dataset (objective
      and ``K = J - 1`` constraints) and fills ``constraint_mean`` / ``constraint_std``.
    - ``info`` (optional): ``state -> dict[str, scalar]``, per-step diagnostics.
    - ``name``: what the model is, e.g. ``"gp"``.
    - ``counts_by_mean``: a trust region around it may count a batch's success by its
      posterior mean (``success="auto"``, :func:`nbo_jax.trust_region`): its posterior costs
      one prediction per point and the rule was measured with it (the GP with lengthscales,
      the linearized network).
    - ``hyperparameters`` (optional): ``state -> start``, the fitted hyperparameters of a
      state (a pytree whose shapes do not depend on the capacity: the GP's kernel
      hyperparameters; the linearized network's weights, from which its training continues),
      which this surrogate's
      ``init(key, data, rows, start=start)`` takes as the start of its fit instead of its
      default one (the warm start of a model rebuilt from a history, as Optuna's
      ``GPSampler`` starts each fit from the previous trial's kernel parameters); ``None``
      for a surrogate whose ``init`` takes no start.
    """

    init: Callable[[Array, Any, Array], Any]
    update: Callable[[Any, Any, Array, Any], Any]
    posterior: Callable[[Any, Array], SurrogatePosterior]
    sample: Optional[Callable[[Any, Array], Callable[[Array], Array]]] = None
    pathwise: bool = False
    multi_output: bool = False
    info: Optional[Callable[[Any], dict]] = None
    name: str = "surrogate"
    counts_by_mean: bool = False
    hyperparameters: Optional[Callable[[Any], Any]] = None


__all__ = ["AcquisitionFn", "BATCH_RULES", "BOAlgorithm", "FactoryCall", "SearchRegion", "Surrogate",
           "SurrogatePosterior"]
