"""Helpers shared by the algorithm factories."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Mapping, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import check_int, check_positive  # noqa: F401 - shared validation, re-exported here
from ..batch import batched
from ..networks import ACTIVATIONS, Network, mlp
from ..outcome import OUTCOME_TRANSFORMS
from ..training import TrainConfig, make_optimizer
from ..types import BATCH_RULES, BOAlgorithm, Bounds, Dataset, FactoryCall, FiniteDomain, as_bounds

Array = jax.Array


def check_choice(name: str, value, choices: Sequence) -> Any:
    """``value`` if it is one of ``choices``.

    Raises:
        ValueError: otherwise (the message names the argument and lists the choices)."""
    if isinstance(value, str) or value is None or isinstance(value, bool):
        if value in tuple(choices):
            return value
    raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")


def outcome_transform_of(outcome_transform, standardize) -> str:
    """The outcome transform (one of :data:`nbo_jax.outcome.OUTCOME_TRANSFORMS`) a surrogate is
    fitted to: ``outcome_transform`` when given, else ``"standardize"`` (``standardize=True``)
    or ``"none"``.

    Raises:
        TypeError: ``standardize`` not a bool.
        ValueError: ``outcome_transform`` unknown, or given with ``standardize=False`` and not
        ``"none"`` (the two would disagree)."""
    standardize = check_bool("standardize", standardize)
    if outcome_transform is None:
        return "standardize" if standardize else "none"
    transform = check_choice("outcome_transform", outcome_transform, OUTCOME_TRANSFORMS)
    if not standardize and transform != "none":
        raise ValueError(f"standardize=False fits the raw y and outcome_transform={transform!r} transforms "
                         f"them: pass only one of the two")
    return transform


def check_bool(name: str, value) -> bool:
    """``value`` if it is a bool (numpy bools too).

    Raises:
        TypeError: otherwise (names the argument)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {value!r}")


def check_scale(name: str, value, *, allow_zero: bool = True, allow_array: bool = True):
    """A hyperparameter that may be vmapped: a finite float ``>= 0`` (``> 0`` without
    ``allow_zero``) or, with ``allow_array``, a JAX/numpy array (traced values are checked
    by shape only: they must be scalars).

    Raises:
        TypeError: a string, bool or other non-number. ValueError: NaN/inf/out of range or a
        non-scalar array. Both name the argument."""
    if allow_array and isinstance(value, (jax.Array, np.ndarray)) and not isinstance(value, np.generic):
        if np.ndim(value) != 0:
            raise ValueError(f"{name} must be a scalar, got an array of shape {np.shape(value)}")
        if isinstance(value, jax.core.Tracer):
            return value
        check_positive(name, float(value), allow_zero=allow_zero)
        return value
    if isinstance(value, (str, bool, np.bool_)) or value is None:
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    return check_positive(name, value, allow_zero=allow_zero)


OPTIMIZERS = ("sgd", "adam")


def network_builder(width, depth, activation, *, build: Callable = mlp, min_width: int = 1, min_depth: int = 2,
                    use_bias=None, **options) -> Callable[[int, Any], Network]:
    """A factory's network, checked once and built once per input dimension and dtype.

    Checks ``width`` (an int ``>= min_width``), ``depth`` (an int ``>= min_depth``),
    ``activation`` (a name in :data:`nbo_jax.networks.ACTIVATIONS`) and, when given,
    ``use_bias`` (a bool), then returns the cached ``network(d, dtype)``: ``build(d, width,
    depth, activation=activation, dtype=dtype, **options)`` (with ``use_bias=`` when given);
    ``build`` is :func:`nbo_jax.networks.mlp` or, e.g. with ``gamma=``,
    :func:`nbo_jax.networks.ntk_mlp`.

    Raises:
        TypeError: ``width``/``depth`` not an int, ``use_bias`` not a bool.
        ValueError: ``width``/``depth`` too small, unknown ``activation`` (the messages name
        the argument)."""
    width = check_int("width", width, min_width)
    depth = check_int("depth", depth, min_depth)
    activation = check_choice("activation", activation, ACTIVATIONS)
    if use_bias is not None:
        options["use_bias"] = check_bool("use_bias", use_bias)

    @functools.lru_cache(maxsize=None)
    def network(d: int, dtype) -> Network:
        return build(d, width, depth, activation=activation, dtype=dtype, **options)

    return network


def train_config(optimizer, learning_rate, epochs, minibatch_size, reg, *, min_epochs: int = 1) -> TrainConfig:
    """The network's training settings (:func:`nbo_jax.training.train_regression`), checked:
    ``optimizer`` (``"sgd"`` or ``"adam"``) at ``learning_rate`` (a float ``> 0``), ``epochs``
    (an int ``>= min_epochs``) of mini-batches of ``minibatch_size`` (an int ``>= 1``) and the
    pull ``reg`` toward the initial weights (as given: it may be a traced scalar).

    Raises:
        TypeError / ValueError: a bad argument (the message names it)."""
    optimizer = check_choice("optimizer", optimizer, OPTIMIZERS)
    learning_rate = check_scale("learning_rate", learning_rate, allow_zero=False, allow_array=False)
    epochs = check_int("epochs", epochs, min_epochs)
    minibatch_size = check_int("minibatch_size", minibatch_size, 1)
    return TrainConfig(epochs=epochs, batch_size=minibatch_size, optimizer=make_optimizer(optimizer, learning_rate),
                       reg=reg)


def resolve_preset(presets: Mapping[str, Mapping[str, Any]], preset: str, **given) -> dict:
    """The options of ``presets[preset]`` with every ``given`` value that is not ``None``
    laid over them (the one way factories resolve presets, as optax's aliases are partials).

    Raises:
        ValueError: unknown ``preset`` (lists the known ones) or a ``given`` name the preset
        does not define."""
    if not isinstance(preset, str) or preset not in presets:
        raise ValueError(f"preset must be one of {sorted(presets)}, got {preset!r}")
    chosen = dict(presets[preset])
    for k, v in given.items():
        if k not in chosen:
            raise ValueError(f"preset {preset!r} does not define {k!r}")
        if v is not None:
            chosen[k] = v
    return chosen


def refuse_renamed(kwargs: Mapping[str, Any], renamed: Mapping[str, str], factory: str) -> None:
    """Raise for arguments that were renamed, so an old call is never silently
    reinterpreted (e.g. ``batch_size`` -> ``minibatch_size`` for SGD, ``q`` for points per
    ask).

    Raises:
        TypeError: ``kwargs`` holds a key of ``renamed`` (the message gives the new name)."""
    for old, hint in renamed.items():
        if old in kwargs:
            raise TypeError(f"{factory}() got {old}={kwargs[old]!r}: {hint}")
    if kwargs:
        raise TypeError(f"{factory}() got unexpected keyword argument(s) {sorted(kwargs)}")


BATCH_SIZE_RENAMED = {
    "batch_size": "the SGD mini-batch is now minibatch_size=..., and the number of points per "
                  "ask is q=... (BoTorch's q); pass the one you mean",
}
# for algorithms without an SGD mini-batch (GP baselines, NeuralGreedy's full-batch fit)
BATCH_SIZE_IS_Q = {
    "batch_size": "the number of points per ask is q=... (BoTorch's q); this algorithm fits full-batch "
                  "on all observations (no SGD mini-batch)",
}


def check_betas(name: str, value):
    """A confidence parameter per constraint: one ``beta >= 0`` (a float or a scalar JAX
    array, :func:`check_scale`) or a sequence of them, one per constraint (returned as a
    ``(K,)`` float64 numpy array; its length is checked against ``K`` at ``init`` by
    :func:`check_beta_count`).

    Raises:
        TypeError: a string, bool or other non-number. ValueError: a negative/NaN/inf value,
        an empty sequence or more than one dimension. Both name ``name``."""
    if isinstance(value, (list, tuple)) or (isinstance(value, (np.ndarray, jax.Array)) and np.ndim(value) > 0):
        if isinstance(value, jax.core.Tracer) or np.ndim(value) != 1 or len(value) == 0:
            raise ValueError(f"{name} must be a float >= 0 or a non-empty sequence of them (one per "
                             f"constraint), got {value!r}")
        return np.asarray([check_scale(f"{name}[{i}]", v, allow_array=False) for i, v in enumerate(list(value))])
    return check_scale(name, value)


def check_beta_count(name: str, betas, n_constraints: int) -> None:
    """At ``init``: a ``betas`` sequence (:func:`check_betas`) must hold one value per
    constraint.

    Raises:
        ValueError: ``len(betas) != n_constraints`` (names ``name``)."""
    if np.ndim(betas) == 1 and np.shape(betas)[0] != n_constraints:
        raise ValueError(f"{name} has {np.shape(betas)[0]} values but the problem has K = {n_constraints} "
                         "constraints")


AUTO_ROWS_PER_REFIT = 50
"""``refit_every="auto"``: the refit period, in tells, is the rows held over this (at least 1)."""


def check_refit_every(value) -> int | str:
    """``refit_every``: an int ``>= 1`` or ``"auto"``.

    Raises:
        TypeError: anything else but an int below 1 (ValueError); both name ``refit_every``."""
    if isinstance(value, str) and value == "auto":
        return value
    if isinstance(value, str) or isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"refit_every must be an int >= 1 or 'auto', got {value!r}")
    return check_int("refit_every", value, 1)


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
                   batch_rule: str = "fantasy", constrained: bool = False) -> BOAlgorithm:
    """Assemble a :class:`BOAlgorithm` from the single-point ``ask`` and batch the asks by
    ``batch_rule`` when ``q > 1`` (:func:`nbo_jax.batch.batched`); ``"native"`` algorithms
    pass their own batched ``ask`` and ``q``.

    Raises:
        TypeError / ValueError: ``q`` not an int ``>= 1``; unknown ``batch_rule``."""
    q = check_int("q", q, 1)
    check_choice("batch_rule", batch_rule, BATCH_RULES)
    if batch_rule == "native":
        return BOAlgorithm(init, ask, tell, name, surrogate, q, constrained, info, batch_rule)
    algorithm = BOAlgorithm(init, ask, tell, name, surrogate, 1, constrained, info, batch_rule)
    return batched(algorithm, q)


def initial_data(x0, y0, c0, bounds, capacity: int, *, constrained: bool) -> tuple[Dataset, Bounds]:
    """Validate an ``init``'s arguments and store them: the one way every algorithm starts.

    Args:
        x0: ``(n0, d)`` initial points in the box. y0: ``(n0,)`` observed values.
        c0: ``(n0, K)`` observed constraint values or ``None``; stored only when
            ``constrained`` (then required), as columns ``1..K`` of the dataset.
        bounds: :class:`Bounds` or anything :func:`nbo_jax.domains.as_bounds` reads; a
            :class:`~nbo_jax.domains.FiniteDomain` makes the dataset hold its points
            (``Dataset.choices``), so the acquisition is scored on them.
        capacity: total rows (Python int ``>= n0``).

    Returns:
        ``(data, bounds)``: a :class:`Dataset` of ``capacity`` rows holding the ``n0``
        observations (unit-cube inputs; ``y (cap,)``, or ``(cap, K + 1)`` when
        ``constrained``) and the :class:`Bounds` as arrays of ``x0``'s float dtype.

    Raises:
        TypeError / ValueError: wrong shapes or types, bad bounds, ``capacity < n0``,
        ``c0`` missing for a constrained algorithm (messages name the argument).
    """
    x0, y0, lower, upper = check_initial(x0, y0, bounds, capacity)
    box = Bounds(lower, upper)
    u0 = box.to_unit(x0)
    choices = None
    if isinstance(bounds, FiniteDomain):
        choices = box.to_unit(jnp.asarray(bounds.points, x0.dtype))
    if constrained:
        c0 = check_constraint_values(c0, x0.shape[0], x0.dtype)
        Y0 = observation_rows(y0, c0)
        data = Dataset.empty(capacity, x0.shape[1], x0.dtype, outputs=Y0.shape[1],
                             choices=choices).add_batch(u0, Y0)
    else:
        data = Dataset.empty(capacity, x0.shape[1], x0.dtype, choices=choices).add_batch(u0, y0)
    return data, box


def told_rows(bounds: Bounds, x, y, c, *, constrained: bool) -> tuple[Array, Array]:
    """``tell``'s arguments as dataset rows: ``(u (n, d), y (n,) or (n, K + 1))`` from
    ``x (d,) | (n, d)``, ``y () | (n,)`` and ``c (K,) | (n, K)`` (used only when
    ``constrained``; then required).

    Raises:
        ValueError: ``c`` missing for a constrained algorithm, or shapes disagree."""
    d = np.shape(bounds.lower)[0]
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        x = x.astype(jnp.asarray(bounds.lower).dtype if jnp.issubdtype(jnp.asarray(bounds.lower).dtype, jnp.floating)
                     else jnp.zeros(()).dtype)
    if x.shape[-1] != d or x.ndim > 2:
        raise ValueError(f"x must be (d,) or (n, d) with d = {d}, got shape {x.shape}")
    x = jnp.reshape(x, (-1, d))
    y = jnp.reshape(jnp.asarray(y, x.dtype), (-1,))
    if y.shape[0] != x.shape[0]:
        raise ValueError(f"y must hold one value per point: {y.shape[0]} values for {x.shape[0]} points")
    u = bounds.to_unit(x)
    if not constrained:
        return u, y
    if c is None:
        raise ValueError("c: this algorithm models constraints; tell(state, x, y, c) needs the observed "
                         "constraint values (K,) per point")
    c = jnp.reshape(jnp.asarray(c, x.dtype), (x.shape[0], -1))
    return u, observation_rows(y, c)


def data_info(state) -> dict:
    """Diagnostics every algorithm reports (:attr:`nbo_jax.types.History.info`):
    ``n_observed`` (rows in ``state.data``) and ``n_failed`` (failed evaluations among them)."""
    data = state.data
    return {"n_observed": data.count, "n_failed": jnp.sum(data.failed & data.written)}


def check_initial(x0, y0, bounds, capacity: int):
    """Validate an algorithm's ``init`` arguments (static shapes only; works under jit).

    Returns ``(x0 (n0, d), y0 (n0,), lower (d,), upper (d,))`` as default-float arrays.

    Raises:
        TypeError: ``bounds`` is not a :class:`Bounds`, ``(lower, upper)`` pair or list of
        ``(low, high)`` pairs.
        ValueError: shapes disagree or ``capacity`` is too small (message names the argument).
    """
    x0 = jnp.asarray(x0)
    if not jnp.issubdtype(x0.dtype, jnp.floating):
        x0 = x0.astype(jnp.zeros(()).dtype)
    if x0.ndim != 2:
        raise ValueError(f"x0 must have shape (n0, d), got {x0.shape}")
    if isinstance(bounds, Bounds) and any(isinstance(b, jax.core.Tracer) for b in bounds):
        lower, upper = jnp.asarray(bounds.lower, x0.dtype), jnp.asarray(bounds.upper, x0.dtype)
    else:
        b = as_bounds(bounds, x0.shape[1], name="bounds")
        lower, upper = jnp.asarray(b.lower, x0.dtype), jnp.asarray(b.upper, x0.dtype)
    y0 = jnp.asarray(y0, x0.dtype).reshape(-1)
    if y0.shape[0] != x0.shape[0]:
        raise ValueError(f"y0 must have one value per row of x0: {y0.shape[0]} vs {x0.shape[0]}")
    if x0.shape[0] < 1:
        raise ValueError("x0 must hold at least one point (n_init >= 1)")
    capacity = check_int("capacity", capacity, 1)
    if capacity < x0.shape[0]:
        raise ValueError(f"capacity ({capacity}) must be >= the number of initial points ({x0.shape[0]})")
    return x0, y0, lower, upper


def check_constraint_values(c0, n0: int, dtype) -> Array:
    """Validate the initial constraint observations of a constrained algorithm's ``init``.

    Returns ``c0`` as a ``(n0, K)`` array of ``dtype`` (``K >= 1``).

    Raises:
        ValueError: ``c0`` missing or not of shape ``(n0, K)`` (message names ``c0``).
    """
    if c0 is None:
        raise ValueError("c0: a constrained algorithm needs the observed constraint values of the "
                         "initial points, shape (n0, K) (run_bo passes them for a constrained problem)")
    c0 = jnp.asarray(c0, dtype)
    if c0.ndim != 2 or c0.shape[0] != n0 or c0.shape[1] < 1:
        raise ValueError(f"c0 must have shape (n0, K) = ({n0}, K) with K >= 1, got {c0.shape}")
    return c0


# ---------------------------------------------------------------- constrained algorithms
# Observations of J = K + 1 functions (column 0 the objective, then the K constraints) live in
# (cap, J) buffers ``Y`` with validity ``M`` (Neural-CBO, constrained GP-BO).


def observation_rows(y: Array, c: Array) -> Array:
    """``(q, J)`` rows ``[y, c_1..c_K]`` from ``y`` (``()`` or ``(q,)``) and ``c`` (``(K,)`` or
    ``(q, K)``)."""
    c = jnp.asarray(c)
    c = c.reshape((-1, c.shape[-1]))
    return jnp.concatenate([jnp.reshape(y, (-1, 1)).astype(c.dtype), c], axis=1)


def constrained_transform(Y: Array, M: Array) -> tuple[Array, Array]:
    """Target transform ``(v - shift) / scale`` per function, ``(J,)`` each: the objective
    standardized over its valid rows, each constraint divided by its
    root mean square and *not* centred, so that 0 stays the feasibility threshold. A
    spread below ``1e-12`` (fewer than two distinct values) gives scale 1."""
    n = jnp.maximum(jnp.sum(M, axis=0), 1)
    mean = jnp.sum(jnp.where(M, Y, 0.0), axis=0) / n
    var = jnp.sum(jnp.where(M, (Y - mean) ** 2, 0.0), axis=0) / n
    ms = jnp.sum(jnp.where(M, Y * Y, 0.0), axis=0) / n
    shift = jnp.zeros_like(mean).at[0].set(mean[0])
    spread = jnp.concatenate([var[:1], ms[1:]])
    scale = jnp.where(spread > 1e-12, jnp.sqrt(spread), 1.0)
    return shift, scale


def observed_feasible(data: Dataset) -> Array:
    """``(cap,)`` bool: rows of a ``(cap, J)`` dataset whose objective and constraints were
    all observed (failures excluded) with every constraint ``<= 0``."""
    ok = data.observed()
    return jnp.all(ok[:, 1:] & (data.y[:, 1:] <= 0.0), axis=1) & ok[:, 0]


def feasibility_ranked(data: Dataset, scale: Array) -> Dataset:
    """A single-output :class:`~nbo_jax.dataset.Dataset` whose ``y`` ranks the rows of the
    ``(cap, J)`` ``data`` for local candidates (:func:`nbo_jax.optimize.candidate_set`):
    the feasible rows by objective value, or, while none is feasible, every row by its total
    scaled violation ``sum_k [c_k / scale_k]^+`` (``scale (J,)``)."""
    feas = observed_feasible(data)
    M, Y = data.mask, data.y
    viol = jnp.sum(jnp.where(M[:, 1:], jnp.maximum(Y[:, 1:] / scale[1:], 0.0), jnp.inf), axis=1)
    score = jnp.where(jnp.any(feas), jnp.where(feas, Y[:, 0], jnp.inf), viol)
    return data._replace(y=score, mask=jnp.isfinite(score), failed=jnp.zeros_like(data.failed))
