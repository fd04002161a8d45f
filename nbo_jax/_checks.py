"""Every argument checker and preset resolver (the ground floor: every layer imports these,
they import nothing of the package above :mod:`nbo_jax.outcome`). Each raises a ``TypeError``
or ``ValueError`` whose message names the argument."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import numpy as np

from .outcome import OUTCOME_TRANSFORMS


def check_int(name: str, value, minimum: int) -> int:
    """``value`` as an int ``>= minimum``.

    Raises:
        TypeError: not an integer (bools are refused). ValueError: below ``minimum``; both
        messages name the argument.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check_positive(name: str, value, *, allow_zero: bool = False) -> float:
    """``value`` as a finite float ``> 0`` (``>= 0`` with ``allow_zero``).

    Raises:
        TypeError: not a number. ValueError: out of range; both messages name the argument.
    """
    if isinstance(value, (str, bytes, bool, np.bool_)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}") from None
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>=' if allow_zero else '>'} 0 and finite, got {value}")
    return v


def check_choice(name: str, value, choices: Sequence) -> Any:
    """``value`` if it is one of ``choices``.

    Raises:
        ValueError: otherwise (the message names the argument and lists the choices)."""
    if isinstance(value, str) or value is None or isinstance(value, bool):
        if value in tuple(choices):
            return value
    raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")


def outcome_transform_of(outcome_transform, standardize, default: str = "standardize") -> str:
    """The outcome transform (one of :data:`nbo_jax.outcome.OUTCOME_TRANSFORMS`) a surrogate is
    fitted to: ``outcome_transform`` when given, else ``default`` (``standardize=True``; a
    factory passes its preset's) or ``"none"``.

    Raises:
        TypeError: ``standardize`` not a bool.
        ValueError: ``outcome_transform`` unknown, or given with ``standardize=False`` and not
        ``"none"`` (the two would disagree)."""
    standardize = check_bool("standardize", standardize)
    if outcome_transform is None:
        return default if standardize else "none"
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


def check_start(start, template, what: str):
    """The start of a surrogate's fit (``init(..., start=...)``): ``template`` when ``start``
    is ``None``, else ``start`` with each leaf in ``template``'s dtype.

    Raises:
        ValueError: ``start`` is not of ``template``'s type, tree and leaf shapes (fitted on
        another space or model); the message names ``start`` and says it must be ``what``."""
    if start is None:
        return template
    shapes = lambda t: jax.tree.map(jax.numpy.shape, t)  # noqa: E731
    same = (isinstance(start, type(template)) and jax.tree.structure(start) == jax.tree.structure(template)
            and shapes(start) == shapes(template))
    if not same:
        got = shapes(start) if isinstance(start, type(template)) else type(start).__name__
        raise ValueError(f"start must be {what} (a {type(template).__name__} of shapes {shapes(template)}), "
                         f"got {got}")
    return jax.tree.map(lambda a, b: jax.numpy.asarray(a, b.dtype), start, template)
