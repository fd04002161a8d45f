"""Mixed search spaces: continuous (optionally log-scaled), integer (with a step, optionally
log-scaled) and categorical parameters, and their encoding in the unit cube that every
surrogate and the acquisition optimizer work in (the third kind of search domain, beside
:class:`~nbo_jax.domains.Bounds` and :class:`~nbo_jax.domains.FiniteDomain`)::

    continuous  x in [low, high]      u = (t(x) - t(low)) / (t(high) - t(low))        one column
    integer     x in {low, low + step, ..., high}                                     one column
                u = (t(x) - t(low - step/2)) / (t(high + step/2) - t(low - step/2)): each value
                owns an interval of the column (Optuna's GPSampler), decoded to the value
                whose interval holds u
    categorical x in (c_1, ..., c_k)  one-hot: k columns, 1 at the choice (BoTorch's
                                      one-hot encoding; CoCaBO, Ru et al. 2020)

with ``t = log`` for a log-scaled parameter (``low > 0``) and the identity otherwise.
:meth:`SearchSpace.encode` and :meth:`SearchSpace.decode` are host-side (numpy, float64, typed
values: Python ``float``, ``int``, the category itself); :meth:`SearchSpace.round` is the
JAX-side projection of any unit-cube point onto the encodings of valid values (the integer
column to its value's interval centre, each one-hot block to the one-hot of its largest
entry), usable inside ``jit``/``vmap``, so an acquisition optimizer can round inside its
search (Daulton et al. 2022, "Bayesian optimization over discrete and mixed spaces via
probabilistic reparameterization", NeurIPS, Section 2, the rounding map).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, Sequence, Union

import jax
import jax.numpy as jnp
import numpy as np

Array = jax.Array


class Continuous(NamedTuple):
    """A float parameter in ``[low, high]`` (``low < high``), log-scaled when ``log`` (then
    ``low > 0``)."""

    name: str
    low: float
    high: float
    log: bool = False


class Integer(NamedTuple):
    """An integer parameter in ``{low, low + step, ..., high}`` (``high - low`` a multiple of
    ``step``), log-scaled when ``log`` (then ``low >= 1`` and ``step = 1``, as Optuna)."""

    name: str
    low: int
    high: int
    step: int = 1
    log: bool = False

    @property
    def size(self) -> int:
        """The number of values."""
        return (self.high - self.low) // self.step + 1


class Categorical(NamedTuple):
    """A categorical parameter: one of ``choices`` (distinct, hashable; at least one)."""

    name: str
    choices: tuple


Parameter = Union[Continuous, Integer, Categorical]


def _t(value: float, log: bool) -> float:
    return math.log(value) if log else float(value)


class SearchSpace(NamedTuple):
    """A mixed search space: its ``parameters`` in order, encoded in ``[0, 1]^D`` (module doc;
    ``D`` = one column per continuous or integer parameter plus one per category). Build it
    with :func:`search_space`, which checks every parameter."""

    parameters: tuple

    @property
    def dim(self) -> int:
        """``D``, the number of unit-cube columns."""
        return sum(len(p.choices) if isinstance(p, Categorical) else 1 for p in self.parameters)

    @property
    def names(self) -> tuple:
        return tuple(p.name for p in self.parameters)

    def columns(self) -> list[tuple[Parameter, slice]]:
        """Each parameter with its slice of the unit-cube columns."""
        out, start = [], 0
        for p in self.parameters:
            width = len(p.choices) if isinstance(p, Categorical) else 1
            out.append((p, slice(start, start + width)))
            start += width
        return out

    def encode(self, values: Sequence[dict]) -> np.ndarray:
        """``(n, D)`` float64 unit-cube points of ``n`` configurations (dicts by parameter
        name; numpy, host side).

        Raises:
            KeyError: a configuration lacks a parameter (the message names it).
            ValueError: a value outside its parameter's range, off an integer's step, or not
                one of a category's choices (the message names the parameter and value)."""
        u = np.zeros((len(values), self.dim))
        for i, config in enumerate(values):
            for p, cols in self.columns():
                if p.name not in config:
                    raise KeyError(f"configuration {i} has no value for parameter {p.name!r}")
                u[i, cols] = _encode_one(p, config[p.name])
        return u

    def decode(self, u) -> list[dict]:
        """The configurations (dicts by parameter name, typed values: ``float``, ``int``, the
        category itself) of unit-cube points ``u (n, D)`` or ``(D,)``; any point of the cube
        decodes (a continuous value is clipped to its range, an integer is the value whose
        interval holds its column, a category the largest entry of its block)."""
        u = np.atleast_2d(np.asarray(u, np.float64))
        if u.shape[-1] != self.dim:
            raise ValueError(f"u must have {self.dim} columns (the space's dim), got shape {u.shape}")
        return [{p.name: _decode_one(p, row[cols]) for p, cols in self.columns()} for row in u]

    def round(self, u: Array) -> Array:
        """JAX: ``u (..., D)`` projected onto the encodings of valid configurations (integer
        columns to their value's interval centre, each one-hot block to the one-hot of its
        largest entry; continuous columns clipped to ``[0, 1]``); the identity on encodings.
        Differentiable nowhere useful: a rounding map, for inside a search, not for a
        gradient."""
        parts = []
        for p, cols in self.columns():
            block = jnp.clip(u[..., cols], 0.0, 1.0)
            if isinstance(p, Integer):  # the value whose interval holds the column, as decode reads it
                lo, hi = _integer_span(p)
                x = lo + block * (hi - lo)
                x = jnp.exp(x) if p.log else x
                k = jnp.clip(jnp.floor((x - (p.low - 0.5 * p.step)) / p.step), 0, p.size - 1).astype(jnp.int32)
                block = jnp.asarray(_integer_centres(p), u.dtype)[k]
            elif isinstance(p, Categorical):
                block = jax.nn.one_hot(jnp.argmax(block, axis=-1), len(p.choices), dtype=u.dtype)
            parts.append(block.astype(u.dtype))
        return jnp.concatenate(parts, axis=-1)


def _integer_span(p: Integer) -> tuple[float, float]:
    """``(t(low - step/2), t(high + step/2))``: the transformed range an integer's column spans."""
    return _t(p.low - 0.5 * p.step, p.log), _t(p.high + 0.5 * p.step, p.log)


def _integer_centres(p: Integer) -> np.ndarray:
    """``(size,)`` the column value that encodes each of ``p``'s values."""
    lo, hi = _integer_span(p)
    values = p.low + p.step * np.arange(p.size)
    return (np.array([_t(v, p.log) for v in values]) - lo) / (hi - lo)


def _encode_one(p: Parameter, value: Any) -> np.ndarray:
    if isinstance(p, Categorical):
        try:
            k = p.choices.index(value)
        except ValueError:
            raise ValueError(f"parameter {p.name!r}: {value!r} is not one of its choices {p.choices}") from None
        return np.eye(len(p.choices))[k]
    v = float(value)
    if not (p.low <= v <= p.high):
        raise ValueError(f"parameter {p.name!r}: {value!r} is outside [{p.low}, {p.high}]")
    if isinstance(p, Integer):
        k = (v - p.low) / p.step
        if k != round(k):
            raise ValueError(f"parameter {p.name!r}: {value!r} is not low + a multiple of step={p.step}")
        return np.array([_integer_centres(p)[int(round(k))]])
    lo, hi = _t(p.low, p.log), _t(p.high, p.log)
    return np.array([(_t(v, p.log) - lo) / (hi - lo)])


def _decode_one(p: Parameter, u: np.ndarray):
    if isinstance(p, Categorical):
        return p.choices[int(np.argmax(u))]
    c = float(np.clip(u[0], 0.0, 1.0))
    if isinstance(p, Integer):
        lo, hi = _integer_span(p)
        t = lo + c * (hi - lo)
        x = math.exp(t) if p.log else t
        k = min(max(int(math.floor((x - (p.low - 0.5 * p.step)) / p.step)), 0), p.size - 1)
        return int(p.low + k * p.step)
    lo, hi = _t(p.low, p.log), _t(p.high, p.log)
    t = lo + c * (hi - lo)
    return float(min(max(math.exp(t) if p.log else t, p.low), p.high))


def search_space(parameters: Sequence[Parameter]) -> SearchSpace:
    """Check and build a :class:`SearchSpace` from :class:`Continuous`, :class:`Integer` and
    :class:`Categorical` parameters (in the order their columns take).

    Raises:
        TypeError: a parameter of another type, or a bound of the wrong type (an integer's
            ``low``/``high``/``step`` not ints).
        ValueError: no parameters; duplicate names; ``low >= high`` (``low > high`` for an
            integer); non-finite bounds; ``log`` with ``low <= 0`` (an integer: ``low < 1``
            or ``step != 1``); ``high - low`` not a multiple of ``step``; a categorical
            parameter with no choices or repeated choices. Messages name the parameter."""
    params = tuple(parameters)
    if not params:
        raise ValueError("parameters must hold at least one parameter")
    names = [getattr(p, "name", None) for p in params]
    seen = {n for n in names if names.count(n) > 1}
    if seen:
        raise ValueError(f"parameters: duplicate names {sorted(map(str, seen))}")
    for p in params:
        if isinstance(p, Categorical):
            if len(p.choices) < 1:
                raise ValueError(f"parameter {p.name!r}: choices must hold at least one choice")
            if len(set(p.choices)) != len(p.choices):
                raise ValueError(f"parameter {p.name!r}: choices must be distinct, got {p.choices}")
        elif isinstance(p, Integer):
            for field in ("low", "high", "step"):
                value = getattr(p, field)
                if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                    raise TypeError(f"parameter {p.name!r}: {field} must be an int, got {value!r}")
            if p.step < 1 or p.low > p.high or (p.high - p.low) % p.step:
                raise ValueError(f"parameter {p.name!r}: need step >= 1, low <= high and high - low a multiple of "
                                 f"step, got low={p.low}, high={p.high}, step={p.step}")
            if p.log and (p.low < 1 or p.step != 1):
                raise ValueError(f"parameter {p.name!r}: log=True needs low >= 1 and step=1, got low={p.low}, "
                                 f"step={p.step}")
        elif isinstance(p, Continuous):
            if not (math.isfinite(p.low) and math.isfinite(p.high)) or p.low >= p.high:
                raise ValueError(f"parameter {p.name!r}: need finite low < high, got low={p.low}, high={p.high}")
            if p.log and p.low <= 0:
                raise ValueError(f"parameter {p.name!r}: log=True needs low > 0, got low={p.low}")
        else:
            raise TypeError(f"parameters must be Continuous, Integer or Categorical, got {type(p).__name__}")
    return SearchSpace(tuple(p._replace(choices=tuple(p.choices)) if isinstance(p, Categorical) else p
                             for p in params))


__all__ = ["Categorical", "Continuous", "Integer", "Parameter", "SearchSpace", "search_space"]
