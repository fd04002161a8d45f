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

import decimal
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


class SearchSpace:
    """A mixed search space: its ``parameters`` in order (build it with :func:`search_space`,
    which checks every parameter). A search domain like :class:`~nbo_jax.domains.Bounds`:

    - a point ``x (P,)`` holds one number per parameter: the value of a continuous or integer
      parameter, the index ``0..k-1`` of a categorical one's choice (``P`` = :attr:`dim`);
      :attr:`lower` and :attr:`upper` bound them;
    - :meth:`to_unit` encodes points in ``[0, 1]^D`` (``D`` = :attr:`unit_dim`, module doc) and
      :meth:`from_unit` decodes any unit-cube point to a valid one (JAX, inside ``jit``);
    - :meth:`encode` / :meth:`decode` do the same for configurations (dicts of typed values,
      host side).

    Static under JAX transformations (a pytree without leaves): a
    :class:`~nbo_jax.dataset.Dataset` holds it (``Dataset.space``) so that the acquisition
    optimizer searches valid configurations only (:mod:`nbo_jax.optimize`)."""

    __slots__ = ("parameters",)

    def __init__(self, parameters: tuple):
        self.parameters = tuple(parameters)

    def __eq__(self, other) -> bool:
        return isinstance(other, SearchSpace) and other.parameters == self.parameters

    def __hash__(self) -> int:
        return hash(self.parameters)

    def __repr__(self) -> str:
        return f"SearchSpace({list(self.parameters)!r})"

    @property
    def dim(self) -> int:
        """``P``, the number of parameters (a point's length)."""
        return len(self.parameters)

    @property
    def unit_dim(self) -> int:
        """``D``, the number of unit-cube columns (one per continuous or integer parameter, one
        per category)."""
        return sum(len(p.choices) if isinstance(p, Categorical) else 1 for p in self.parameters)

    @property
    def discrete(self) -> bool:
        """Whether some parameter is an integer or a category (else :meth:`round` is a clip to
        the cube, and the acquisition optimizer searches the cube as for a box)."""
        return any(isinstance(p, (Integer, Categorical)) for p in self.parameters)

    @property
    def names(self) -> tuple:
        return tuple(p.name for p in self.parameters)

    @property
    def lower(self) -> np.ndarray:
        """``(P,)`` float64: each parameter's lowest number (0 for a categorical one)."""
        return np.array([0.0 if isinstance(p, Categorical) else float(p.low) for p in self.parameters])

    @property
    def upper(self) -> np.ndarray:
        """``(P,)`` float64: each parameter's highest number (``k - 1`` for a categorical one)."""
        return np.array([len(p.choices) - 1.0 if isinstance(p, Categorical) else float(p.high)
                         for p in self.parameters])

    def columns(self) -> list[tuple[Parameter, slice]]:
        """Each parameter with its slice of the unit-cube columns."""
        out, start = [], 0
        for p in self.parameters:
            width = len(p.choices) if isinstance(p, Categorical) else 1
            out.append((p, slice(start, start + width)))
            start += width
        return out

    @property
    def categorical(self) -> np.ndarray:
        """``(P,)`` bool: which parameters are categorical."""
        return np.array([isinstance(p, Categorical) for p in self.parameters])

    def _column_mask(self, kind: type) -> np.ndarray:
        """``(D,)`` bool: the unit-cube columns of the parameters of type ``kind``."""
        mask = np.zeros(self.unit_dim, bool)
        for p, cols in self.columns():
            mask[cols] = isinstance(p, kind)
        return mask

    def categorical_columns(self) -> np.ndarray:
        """``(D,)`` bool: the unit-cube columns of the categories (their one-hot blocks)."""
        return self._column_mask(Categorical)

    def continuous_columns(self) -> np.ndarray:
        """``(D,)`` bool: the unit-cube columns of the continuous parameters (not an integer's,
        not a category's)."""
        return self._column_mask(Continuous)

    def to_unit(self, x: Array) -> Array:
        """JAX: points ``x (..., P)`` encoded in the unit cube, ``(..., D)`` (module doc; a
        categorical entry is rounded to the nearest index, a non-finite one gives NaN)."""
        x = jnp.asarray(x)
        parts = []
        for i, p in enumerate(self.parameters):
            xi = x[..., i]
            if isinstance(p, Categorical):
                k = len(p.choices)
                hot = jax.nn.one_hot(jnp.clip(jnp.round(xi), 0, k - 1).astype(jnp.int32), k, dtype=x.dtype)
                parts.append(jnp.where(jnp.isfinite(xi)[..., None], hot, jnp.nan))
                continue
            lo, hi = _integer_span(p) if isinstance(p, Integer) else (_t(p.low, p.log), _t(p.high, p.log))
            t = jnp.log(xi) if p.log else xi
            parts.append(((t - lo) / (hi - lo))[..., None])
        return jnp.concatenate(parts, axis=-1)

    def from_unit(self, u: Array) -> Array:
        """JAX: unit-cube points ``u (..., D)`` decoded to points ``(..., P)`` (any point of the
        cube decodes: as :meth:`decode`, with a categorical parameter's index as a number)."""
        parts = []
        for p, cols in self.columns():
            block = jnp.clip(u[..., cols], 0.0, 1.0)
            if isinstance(p, Categorical):
                parts.append(jnp.argmax(block, axis=-1).astype(u.dtype))
            elif isinstance(p, Integer):
                parts.append((p.low + p.step * _integer_index(p, block[..., 0])).astype(u.dtype))
            else:
                lo, hi = _t(p.low, p.log), _t(p.high, p.log)
                t = lo + block[..., 0] * (hi - lo)
                parts.append(jnp.clip(jnp.exp(t) if p.log else t, p.low, p.high).astype(u.dtype))
        return jnp.stack(parts, axis=-1)

    def contains(self, x, atol: float = 0.0):
        """``(...,)`` bool: the points ``x (..., P)`` (numpy) are valid: within ``[lower,
        upper]`` (``atol``), an integer parameter's value on its step, a categorical one's an
        index (False for NaN)."""
        x = np.asarray(x, np.float64)
        ok = np.all((x >= self.lower - atol) & (x <= self.upper + atol), axis=-1)
        for i, p in enumerate(self.parameters):
            if isinstance(p, Integer):
                ok &= np.abs((x[..., i] - p.low) / p.step - np.round((x[..., i] - p.low) / p.step)) <= atol
            elif isinstance(p, Categorical):
                ok &= np.abs(x[..., i] - np.round(x[..., i])) <= atol
        return ok

    def encode(self, values: Sequence[dict]) -> np.ndarray:
        """``(n, D)`` float64 unit-cube points of ``n`` configurations (dicts by parameter
        name; numpy, host side).

        Raises:
            KeyError: a configuration lacks a parameter (the message names it).
            ValueError: a value outside its parameter's range, off an integer's step, or not
                one of a category's choices (the message names the parameter and value)."""
        u = np.zeros((len(values), self.unit_dim))
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
        interval holds its column, a category the largest entry of its block).

        A continuous value is written as a short decimal, not with the noise of the arithmetic:
        from a float32 ``u`` (the algorithms' default dtype) the shortest decimal that rounds
        to the value's float32 (``0.3``, not ``0.30000001192092896``); from a float64 ``u`` the
        shortest decimal that encodes to the same ``u`` (so ``decode(encode(configs))`` gives
        ``0.003`` back, not ``0.002999999999999999``)."""
        u = np.atleast_2d(np.asarray(u))
        single = u.dtype == np.float32
        u = u.astype(np.float64)
        if u.shape[-1] != self.unit_dim:
            raise ValueError(f"u must have {self.unit_dim} columns (the space's unit_dim), got shape {u.shape}")
        return [{p.name: _decode_one(p, row[cols], single) for p, cols in self.columns()} for row in u]

    def round(self, u: Array) -> Array:
        """JAX: ``u (..., D)`` projected onto the encodings of valid configurations (integer
        columns to their value's encoding, each one-hot block to the one-hot of its largest
        entry; continuous columns clipped to ``[0, 1]``): ``to_unit(from_unit(u))`` up to
        rounding, and the identity on encodings. Its gradient is zero in the discrete columns
        (a rounding map, Daulton et al. 2022, Section 2): a climb through it moves the
        continuous columns only."""
        parts = []
        for p, cols in self.columns():
            block = jnp.clip(u[..., cols], 0.0, 1.0)
            if isinstance(p, Integer):
                k = _integer_index(p, block[..., 0])
                block = jnp.asarray(_integer_centres(p), u.dtype)[k][..., None]
            elif isinstance(p, Categorical):
                block = jax.nn.one_hot(jnp.argmax(block, axis=-1), len(p.choices), dtype=u.dtype)
            parts.append(block.astype(u.dtype))
        return jnp.concatenate(parts, axis=-1)

    def neighbours(self, u: Array) -> Array:
        """JAX: the ``(M, D)`` discrete neighbours of an encoding ``u (D,)``: each integer
        parameter one step down and up (clipped: a value at its bound is its own neighbour),
        each categorical parameter set to each other choice; continuous columns kept
        (``M = 2 * #integers + sum(k - 1)``; ``M = 0`` without discrete parameters). The
        discrete moves of a mixed acquisition optimizer's local search (BoTorch's
        ``optimize_acqf_mixed_alternating``)."""
        rows = []
        for p, cols in self.columns():
            if isinstance(p, Integer):
                k = _integer_index(p, jnp.clip(u[cols.start], 0.0, 1.0))
                centres = jnp.asarray(_integer_centres(p), u.dtype)
                for move in (-1, 1):
                    rows.append(u.at[cols.start].set(centres[jnp.clip(k + move, 0, p.size - 1)]))
            elif isinstance(p, Categorical):
                current = jnp.argmax(u[cols])
                for j in range(len(p.choices) - 1):  # every choice but the current one
                    other = j + (j >= current)
                    rows.append(u.at[cols].set(jax.nn.one_hot(other, len(p.choices), dtype=u.dtype)))
        return jnp.stack(rows) if rows else jnp.zeros((0, u.shape[0]), u.dtype)


    def to_json(self) -> list:
        """The parameters as JSON-ready dicts (for saves).

        Raises:
            TypeError: a category that JSON cannot hold exactly (not a str, int, float, bool
                or None), naming the parameter."""
        out = []
        for p in self.parameters:
            if isinstance(p, Categorical):
                bad = [c for c in p.choices if not (c is None or isinstance(c, (str, bool, int, float)))]
                if bad:
                    raise TypeError(f"parameter {p.name!r}: choice {bad[0]!r} cannot be saved as JSON")
                out.append(dict(kind="categorical", name=p.name, choices=list(p.choices)))
            elif isinstance(p, Integer):
                out.append(dict(kind="integer", name=p.name, low=int(p.low), high=int(p.high), step=int(p.step),
                                log=bool(p.log)))
            else:
                out.append(dict(kind="continuous", name=p.name, low=float(p.low), high=float(p.high), log=bool(p.log)))
        return out

    @staticmethod
    def from_json(items: Sequence[dict]) -> "SearchSpace":
        """The space of :meth:`to_json`'s dicts (checked by :func:`search_space`)."""
        kinds = {"continuous": lambda d: Continuous(d["name"], d["low"], d["high"], d["log"]),
                 "integer": lambda d: Integer(d["name"], d["low"], d["high"], d["step"], d["log"]),
                 "categorical": lambda d: Categorical(d["name"], tuple(d["choices"]))}
        return search_space([kinds[d["kind"]](d) for d in items])


jax.tree_util.register_static(SearchSpace)


def _integer_index(p: "Integer", c: Array) -> Array:
    """JAX: the index ``0..size-1`` of the integer value whose interval holds the column value
    ``c`` (any shape)."""
    lo, hi = _integer_span(p)
    t = lo + c * (hi - lo)
    x = jnp.exp(t) if p.log else t
    return jnp.clip(jnp.floor((x - (p.low - 0.5 * p.step)) / p.step), 0, p.size - 1).astype(jnp.int32)


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
    return np.array([_unit(p, v)])


def _unit(p: Continuous, v: float) -> float:
    """A continuous ``p``'s column value of ``v`` (no range check): ``v`` scaled to ``[0, 1]``,
    in log space with ``log=True``."""
    lo, hi = _t(p.low, p.log), _t(p.high, p.log)
    return (_t(v, p.log) - lo) / (hi - lo)


def _decode_one(p: Parameter, u: np.ndarray, single: bool = False):
    """``p``'s value at its columns ``u``; a continuous one as a short decimal
    (:meth:`SearchSpace.decode`; ``single``: ``u`` was float32)."""
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
    v = math.exp(t) if p.log else t
    if single:
        v = float32_decimal(v)
    else:  # the shortest decimal that encodes to the same column value
        for digits in range(1, 18):
            short = float(f"{v:.{digits}g}")
            if p.low <= short <= p.high and _unit(p, short) == c:
                v = short
                break
    return float(min(max(v, p.low), p.high))


def float32_decimal(value: float) -> float:
    """The shortest decimal that rounds to ``value``'s float32 (``0.3`` for
    ``0.30000001192092896``), as a Python float: a float32 number written without its float32
    tail (the decoding of :meth:`SearchSpace.decode` and of the Optuna and Ray Tune
    integrations)."""
    return float(str(np.float32(value)))


def stepped_value(low: float, k: int, step: float) -> float:
    """``low + k step`` as the float nearest to its exact decimal value, ``low`` and ``step`` read
    as their shortest decimals (``stepped_value(0.0, 3, 0.1) == 0.3``, where ``3 * 0.1`` is
    ``0.30000000000000004``): the value of a stepped float parameter (Optuna's
    ``FloatDistribution(step=...)``, Ray Tune's ``quniform``) searched as its count of steps ``k``.
    """
    exact = decimal.Decimal(repr(float(low))) + int(k) * decimal.Decimal(repr(float(step)))
    return float(exact)


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
