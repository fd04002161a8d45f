"""Public types: Bounds, FiniteDomain, Problem, TaskMetric, Dataset, BOAlgorithm, History.

All arrays are JAX arrays unless stated. Shapes use ``d`` for the input dimension,
``cap`` for the fixed capacity of a run (``n_init + n_iter``) and ``n`` for the number of
evaluations recorded in a :class:`History`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

Array = jax.Array


class Bounds(NamedTuple):
    """A box ``[lower, upper]`` in ``R^d``; both ``(d,)`` float arrays, ``lower < upper``."""

    lower: Array
    upper: Array

    @property
    def dim(self) -> int:
        return int(np.shape(self.lower)[0])

    def to_unit(self, x: Array) -> Array:
        """Map points of the box to the unit cube: ``u = (x - lower) / (upper - lower)``."""
        return (x - self.lower) / (self.upper - self.lower)

    def from_unit(self, u: Array) -> Array:
        """Map points of the unit cube back to the box, clipped to ``[lower, upper]`` so that
        rounding (e.g. float32 arithmetic on float64 bounds) never leaves the box."""
        lower = jnp.asarray(self.lower, jnp.result_type(u))
        upper = jnp.asarray(self.upper, jnp.result_type(u))
        return jnp.clip(lower + u * (upper - lower), lower, upper)

    def contains(self, x, atol: float = 0.0):
        """``(...,)`` bool: ``lower - atol <= x <= upper + atol`` in every coordinate of
        ``x (..., d)`` (numpy in, numpy out; False for NaN)."""
        x = np.asarray(x, dtype=np.float64)
        lo = np.asarray(self.lower, np.float64)
        hi = np.asarray(self.upper, np.float64)
        return np.all((x >= lo - atol) & (x <= hi + atol), axis=-1)


def make_bounds(lower, upper, dim: Optional[int] = None, *, name: str = "bounds") -> Bounds:
    """Validate and build :class:`Bounds` (float64 numpy arrays, so they are static constants).

    ``lower``/``upper`` may be scalars (broadcast to ``dim``) or sequences of length ``d``.

    Raises:
        ValueError: shapes disagree, a bound is NaN/inf, or ``lower >= upper`` somewhere.
    """
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    if dim is not None:
        if lo.ndim == 0:
            lo = np.full((dim,), float(lo))
        if hi.ndim == 0:
            hi = np.full((dim,), float(hi))
    if lo.ndim != 1 or hi.ndim != 1 or lo.shape != hi.shape:
        raise ValueError(
            f"{name}: lower and upper must be 1-D arrays of the same length, got shapes "
            f"{lo.shape} and {hi.shape}"
        )
    if dim is not None and lo.shape[0] != dim:
        raise ValueError(f"{name}: expected {dim} dimensions, got {lo.shape[0]}")
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError(f"{name}: bounds must be finite, got lower={lo}, upper={hi}")
    bad = np.nonzero(lo >= hi)[0]
    if bad.size:
        raise ValueError(
            f"{name}: lower must be < upper in every dimension; violated at index "
            f"{bad.tolist()} (lower={lo[bad].tolist()}, upper={hi[bad].tolist()})"
        )
    return Bounds(lo, hi)


def _is_pair_list(bounds) -> bool:
    """True for a sequence of ``(low, high)`` *tuples* (scipy / skopt / Optuna habit)."""
    return (isinstance(bounds, (list, tuple)) and len(bounds) > 0
            and all(isinstance(b, tuple) and len(b) == 2 for b in bounds))


def as_bounds(bounds, dim: Optional[int] = None, *, name: str = "bounds") -> Bounds:
    """Read a box given in any of the usual forms, without guessing.

    Accepted forms:

    - :class:`Bounds` (or anything with ``lower``/``upper``, or scipy's ``lb``/``ub``); a
      :class:`FiniteDomain` gives the box that holds its points;
    - a list of ``(low, high)`` **tuples**, one per dimension (scipy.optimize, skopt,
      Optuna): ``[(0., 1.), (5., 10.)]`` is ``x_0 in [0, 1]``, ``x_1 in [5, 10]``;
    - a pair ``(lower, upper)`` of arrays or lists of length ``d`` (BoTorch's ``2 x d``
      bounds tensor reads the same way): ``([-2, -2], [2, 2])``;
    - an array of shape ``(2, d)`` (rows ``lower``, ``upper``) or ``(d, 2)`` (one
      ``(low, high)`` row per dimension) when only one of the two readings has that shape.

    A ``2 x 2`` array or list of lists fits both readings; it is read as ``(lower, upper)``
    rows (BoTorch's convention) and the error message, if that box is empty, says so. Give
    ``(low, high)`` pairs as tuples to be read per dimension.

    Returns:
        :class:`Bounds` with float64 numpy ``(d,)`` arrays.

    Raises:
        ValueError: no reading fits, a bound is NaN/inf, ``lower >= upper`` somewhere, or
        ``dim`` disagrees (the message names ``name`` and the reading used).
        TypeError: ``bounds`` is not array-like.
    """
    if isinstance(bounds, (Bounds, FiniteDomain)):
        return make_bounds(bounds.lower, bounds.upper, dim, name=name)
    if hasattr(bounds, "lb") and hasattr(bounds, "ub"):  # scipy.optimize.Bounds
        return make_bounds(bounds.lb, bounds.ub, dim, name=name)
    if hasattr(bounds, "lower") and hasattr(bounds, "upper") and not isinstance(bounds, (list, tuple)):
        return make_bounds(bounds.lower, bounds.upper, dim, name=name)
    if _is_pair_list(bounds):
        arr = np.asarray(bounds, dtype=np.float64)
        return make_bounds(arr[:, 0], arr[:, 1], dim,
                           name=f"{name} (read as a list of (low, high) pairs, one per dimension)")
    try:
        arr = np.asarray(bounds, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be nbo_jax.Bounds, (lower, upper) arrays or a list of (low, high) "
                        f"pairs, got {type(bounds).__name__}") from None
    if arr.ndim != 2 or 2 not in arr.shape:
        raise ValueError(f"{name} must be (lower, upper) arrays of shape (d,) or a list of d (low, high) "
                         f"pairs, got an array of shape {arr.shape}")
    if arr.shape[0] == 2 and (dim is None or arr.shape[1] == dim):
        return make_bounds(arr[0], arr[1], dim, name=f"{name} (read as (lower, upper) rows; give "
                           "(low, high) pairs as a list of tuples to be read per dimension)")
    return make_bounds(arr[:, 0], arr[:, 1], dim, name=f"{name} (read as (low, high) pairs, one per dimension)")


class FiniteDomain(NamedTuple):
    """A finite domain: ``N`` points of ``R^d`` (a corpus of documents, a grid), inside the
    box ``[lower, upper]`` that holds them (the second kind of search domain, beside the box).

    Accepted wherever a box is (``init(..., bounds=domain)``, :class:`~nbo_jax.AskTell`):
    algorithms then score their acquisition on the points that were not evaluated yet instead
    of on raw samples of the box, with no gradient refinement, and never propose a point twice
    (BoTorch's ``optimize_acqf_discrete(choices, unique=True)``).

    Attributes:
        lower, upper: ``(d,)`` float64 numpy arrays, the box of the unit-cube map.
        points: ``(N, d)`` float64 numpy array, distinct rows, inside the box.
    """

    lower: Array
    upper: Array
    points: Array

    @property
    def dim(self) -> int:
        return int(np.shape(self.lower)[0])

    @property
    def size(self) -> int:
        """``N``, the number of points."""
        return int(np.shape(self.points)[0])

    @property
    def bounds(self) -> Bounds:
        return Bounds(self.lower, self.upper)

    def nearest(self, x) -> tuple[np.ndarray, np.ndarray]:
        """The rows of :attr:`points` nearest to ``x (..., d)`` (Euclidean, numpy, float64)
        and their largest per-coordinate distance in unit-cube units: ``((...) int, (...)
        float)``. For host-side lookups (histories, :class:`~nbo_jax.AskTell`)."""
        span = np.asarray(self.upper) - np.asarray(self.lower)
        x = np.asarray(x, dtype=np.float64)
        flat = (x.reshape(-1, x.shape[-1]) - self.lower) / span
        pts = (np.asarray(self.points) - self.lower) / span
        rows = np.array([np.argmin(np.sum((pts - ui) ** 2, axis=1)) for ui in flat], dtype=np.int64)
        dist = np.max(np.abs(pts[rows] - flat), axis=1) if len(rows) else np.zeros(0)
        return rows.reshape(x.shape[:-1]), dist.reshape(x.shape[:-1])


def finite_domain(points, bounds=None, *, name: str = "choices") -> FiniteDomain:
    """Validate and build a :class:`FiniteDomain` from ``points (N, d)``.

    Args:
        points: ``(N, d)`` array-like of finite numbers, ``N >= 1``, no two rows equal.
        bounds: the box of the unit-cube map (any form :func:`as_bounds` reads); by default
            the points' bounding box, widened to ``[v - 0.5, v + 0.5]`` in a coordinate where
            every point has the same value ``v`` (such a coordinate carries no information).
        name: the argument's name for error messages.

    Raises:
        ValueError: not ``(N, d)``, NaN/inf entries, duplicated rows (their indices are
        named: a finite domain is a set, and equal inputs cannot be told apart by any
        surrogate), or points outside ``bounds``.
    """
    pts = np.asarray(points, dtype=np.float64)
    if pts.ndim != 2 or pts.shape[0] < 1 or pts.shape[1] < 1:
        raise ValueError(f"{name} must be an (N, d) array with N, d >= 1, got shape {pts.shape}")
    if not np.all(np.isfinite(pts)):
        bad = np.nonzero(~np.all(np.isfinite(pts), axis=1))[0]
        raise ValueError(f"{name} has NaN/inf entries in rows {bad[:10].tolist()}")
    _, first, counts = np.unique(pts, axis=0, return_index=True, return_counts=True)
    if np.any(counts > 1):
        dup = np.sort(first[counts > 1])[:10]
        raise ValueError(f"{name} has duplicated rows (first occurrences at {dup.tolist()}); a finite domain is "
                         "a set of distinct points: drop or merge the duplicates")
    if bounds is None:
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        flat = lo == hi
        box = make_bounds(np.where(flat, lo - 0.5, lo), np.where(flat, hi + 0.5, hi), pts.shape[1], name=name)
    else:
        box = as_bounds(bounds, pts.shape[1], name="bounds")
        outside = np.nonzero(~box.contains(pts))[0]
        if outside.size:
            raise ValueError(f"{name} rows {outside[:10].tolist()} lie outside bounds")
    return FiniteDomain(box.lower, box.upper, pts)


class TaskMetric(NamedTuple):
    """A problem's own metric, for :func:`nbo_jax.comparison.compare` tables and plots (e.g.
    the best reward of robot pushing, the best hierarchical F1 of document retrieval, the
    detection rate of sensitive samples).

    Attributes:
        label: what the values are, e.g. ``"best reward"``.
        final: ``history -> (S,)``: the metric of each seed at the end of a run, from one
            method's history as a mapping of numpy arrays (fields of :class:`History`,
            shapes ``(S, n, ...)``).
        higher_is_better: direction of the metric (statistics test the better direction).
        curve: optional ``history -> (S, n)``, the metric after each evaluation (plots);
            ``None``: plots show the simple regret.
    """

    label: str
    final: Callable[[Any], np.ndarray]
    higher_is_better: bool = False
    curve: Optional[Callable[[Any], np.ndarray]] = None


@dataclasses.dataclass(frozen=True, eq=False)
class Problem:
    """A minimization problem on a box.

    Attributes:
        name: identifier, e.g. ``"ackley"``.
        dim: input dimension ``d``.
        bounds: :class:`Bounds` with ``(d,)`` arrays.
        objective: noise-free ``f: (d,) -> ()``; a pure jnp function (vmap it for batches).
        noise_std: standard deviation of the additive Gaussian observation noise
            (same units as ``f``); ``0.0`` for noiseless.
        optimal_value: the known global minimum ``f*`` (``None`` when unknown).
        optimizer: a known global minimizer ``(d,)`` (``None`` when unknown or not unique).
        constraints: ``c: (d,) -> (K,)`` noise-free, with ``c <= 0`` feasible
            (BoTorch's slack is ``-c``), or ``None``.
        constraint_noise_std: standard deviation of the additive Gaussian noise of the
            observed constraint values: a float (all ``K``) or a tuple of ``K`` floats.
        operator, source: for physics-informed problems, the known PDE ``N[f] = g``.
        metadata: free-form facts about the problem (source, parameters).
        choices: ``(N, d)`` points of a finite domain (:class:`FiniteDomain`), or ``None``
            for the box; build finite problems with :func:`finite_problem`.
        metric: the problem's own :class:`TaskMetric`, or ``None`` (simple regret).

    Problems compare by identity (``eq=False``) so they can be static arguments of ``jit``.
    """

    name: str
    dim: int
    bounds: Bounds
    objective: Callable[[Array], Array]
    noise_std: float = 0.0
    optimal_value: Optional[float] = None
    optimizer: Optional[np.ndarray] = None
    constraints: Optional[Callable[[Array], Array]] = None
    constraint_noise_std: float | tuple = 0.0
    operator: Optional[Callable] = None
    source: Optional[Callable] = None
    metadata: dict = dataclasses.field(default_factory=dict)
    choices: Optional[np.ndarray] = None
    metric: Optional[TaskMetric] = None

    def __post_init__(self):
        if not isinstance(self.dim, (int, np.integer)) or isinstance(self.dim, bool) or self.dim < 1:
            raise TypeError(f"Problem.dim must be an int >= 1, got {self.dim!r}")
        object.__setattr__(self, "bounds", as_bounds(self.bounds, int(self.dim), name="Problem.bounds"))
        if not callable(self.objective):
            raise TypeError(f"Problem.objective must be callable (d,) -> (), got {type(self.objective).__name__}")
        if self.choices is not None:
            dom = finite_domain(self.choices, self.bounds, name="Problem.choices")
            object.__setattr__(self, "choices", dom.points)
        if self.metric is not None and not isinstance(self.metric, TaskMetric):
            raise TypeError(f"Problem.metric must be an nbo_jax.TaskMetric or None, got {type(self.metric).__name__}")

    @property
    def domain(self):
        """The search domain: :attr:`bounds` (a :class:`Bounds`) or, for a finite problem,
        the :class:`FiniteDomain` of :attr:`choices` inside them."""
        if self.choices is None:
            return self.bounds
        return FiniteDomain(self.bounds.lower, self.bounds.upper, self.choices)

    def __call__(self, x: Array) -> Array:
        """Noise-free objective on one point ``(d,)`` or a batch ``(..., d)``."""
        x = jnp.asarray(x)
        if x.ndim == 1:
            return self.objective(x)
        flat = x.reshape(-1, x.shape[-1])
        return jax.vmap(self.objective)(flat).reshape(x.shape[:-1])

    @property
    def n_constraints(self) -> int:
        """``K``, the number of constraints (0 for an unconstrained problem)."""
        if self.constraints is None:
            return 0
        shape = jax.eval_shape(self.constraints, jax.ShapeDtypeStruct((self.dim,), jnp.zeros(()).dtype)).shape
        if len(shape) != 1:
            raise ValueError(f"problem.constraints must map (d,) to (K,), got output shape {shape}")
        return int(shape[0])

    def constraint_values(self, x: Array) -> Array:
        """Noise-free constraint values: ``(K,)`` for ``x (d,)``, ``(..., K)`` for a batch.

        Raises:
            ValueError: the problem has no constraints."""
        if self.constraints is None:
            raise ValueError(f"problem {self.name!r} has no constraints")
        x = jnp.asarray(x)
        if x.ndim == 1:
            return self.constraints(x)
        flat = x.reshape(-1, x.shape[-1])
        out = jax.vmap(self.constraints)(flat)
        return out.reshape(x.shape[:-1] + out.shape[-1:])

    def with_noise(self, noise_std: float) -> "Problem":
        """A copy with another observation noise standard deviation."""
        return dataclasses.replace(self, noise_std=float(noise_std))


def choice_tolerance(dtype) -> float:
    """Largest per-coordinate difference (unit-cube units) at which a told point is one of a
    finite domain's choices: ``sqrt(eps)`` of ``dtype`` (3.5e-4 in float32, 1.5e-8 in
    float64), far above the rounding of the box <-> unit-cube maps and far below the spacing
    of distinct points of any data set stored at that precision."""
    return float(np.sqrt(np.finfo(np.dtype(dtype)).eps))


class Dataset(NamedTuple):
    """Observations in fixed-capacity buffers (state is data: one compile serves a run).

    Attributes:
        u: ``(cap, d)`` inputs in the unit cube; rows at index >= ``count`` are zero.
        y: ``(cap,)`` observed objective values, or ``(cap, J)`` for ``J`` observed functions
            (the objective in column 0, then ``K`` constraints, ``c <= 0`` feasible).
        mask: like ``y``, bool: True for the entries the surrogate trains on, which are the
            finite observations and the *imputed* failures (below).
        count: ``()`` int32, number of rows written.
        failed: ``(cap,)`` bool, rows whose observation had a NaN/inf entry (a failed
            evaluation). A failed entry is stored as the worst (largest) finite value of its
            column observed up to then, so the surrogate learns that the region is bad and its
            uncertainty shrinks there, instead of forgetting the point (the usual "impute the
            worst value" rule for crashed evaluations); while a column has no finite value
            yet, a failed entry stays masked. Every row's true outcome stays in the caller's
            history (:class:`History` ``valid``, :class:`~nbo_jax.loop.AskTell`).
        choices: for a finite domain (:class:`FiniteDomain`), its ``(N, d)`` points in the
            unit cube; ``None`` for a box.
        evaluated: ``(N,)`` bool with ``choices``: the points told so far (a told row marks
            every choice within :func:`choice_tolerance` of it in every coordinate), which
            the acquisition optimizer never proposes again; ``None`` for a box.
    """

    u: Array
    y: Array
    mask: Array
    count: Array
    failed: Array
    choices: Optional[Array] = None
    evaluated: Optional[Array] = None

    @staticmethod
    def empty(capacity: int, dim: int, dtype=None, outputs: Optional[int] = None,
              choices: Optional[Array] = None) -> "Dataset":
        """An empty dataset: ``capacity`` rows of ``dim`` inputs; ``outputs=None`` keeps
        ``y (cap,)``, ``outputs=J`` keeps ``y (cap, J)``; ``choices (N, dim)``, the unit-cube
        points of a finite domain (none evaluated yet), or ``None`` for a box."""
        dtype = dtype or jnp.zeros(()).dtype
        shape = (capacity,) if outputs is None else (capacity, outputs)
        evaluated = None
        if choices is not None:
            choices = jnp.asarray(choices, dtype)
            evaluated = jnp.zeros((choices.shape[0],), bool)
        return Dataset(
            jnp.zeros((capacity, dim), dtype),
            jnp.zeros(shape, dtype),
            jnp.zeros(shape, bool),
            jnp.zeros((), jnp.int32),
            jnp.zeros((capacity,), bool),
            choices,
            evaluated,
        )

    @property
    def finite(self) -> bool:
        """True for a finite domain (``choices`` is set); a static (trace-time) fact."""
        return self.choices is not None

    def mark_evaluated(self, u: Array) -> "Dataset":
        """The dataset with the choices at the unit-cube points ``u (n, d)`` marked evaluated
        (the same dataset for a box). For states that exclude a point without telling it
        (independent draws of a batch)."""
        if self.choices is None:
            return self
        u = jnp.reshape(u, (-1, self.u.shape[1])).astype(self.u.dtype)
        tol = choice_tolerance(self.u.dtype)
        hit = jax.lax.map(lambda ui: jnp.all(jnp.abs(self.choices - ui) <= tol, axis=1), u)
        return self._replace(evaluated=self.evaluated | jnp.any(hit, axis=0))

    @property
    def capacity(self) -> int:
        return self.y.shape[0]

    @property
    def written(self) -> Array:
        """``(cap,)`` bool, rows at index < ``count``."""
        return jnp.arange(self.capacity) < self.count

    def add(self, u: Array, y: Array) -> "Dataset":
        """Append one observation (``u: (d,)``, ``y: ()`` or ``(J,)``)."""
        return self.add_batch(jnp.reshape(u, (1, -1)), jnp.reshape(y, (1,) + self.y.shape[1:]))

    def add_batch(self, u: Array, y: Array) -> "Dataset":
        """Append ``q`` observations (``u: (q, d)``, ``y: (q,)`` or ``(q, J)``) in one scatter.

        Rows whose ``u`` has a NaN/inf coordinate carry no information about any point and
        are not written (``count`` grows by the number of finite rows). A NaN/inf ``y`` entry
        is a failed evaluation: the row is flagged in ``failed`` and the entry is imputed with
        the largest finite value of its column (among the stored rows and the new ones), or
        masked while the column has none. Writes past the capacity are dropped (the
        Python-side drivers refuse them before that)."""
        u = jnp.reshape(u, (-1, self.u.shape[1])).astype(self.u.dtype)
        y = jnp.reshape(y, (u.shape[0],) + self.y.shape[1:]).astype(self.y.dtype)
        row_ok = jnp.all(jnp.isfinite(u), axis=1)
        idx = self.write_index(u)
        finite = jnp.isfinite(y)
        worst = jnp.maximum(
            jnp.max(jnp.where(self.mask & ~self._failed_entries(), self.y, -jnp.inf), axis=0),
            jnp.max(jnp.where(finite & self._rows(row_ok, y), y, -jnp.inf), axis=0))
        has_worst = jnp.isfinite(worst)
        y_store = jnp.where(finite, y, jnp.where(has_worst, worst, 0.0))
        m_store = finite | has_worst
        failed_row = jnp.any(~finite, axis=tuple(range(1, y.ndim)))
        return Dataset(
            self.u.at[idx].set(u, mode="drop"),
            self.y.at[idx].set(y_store, mode="drop"),
            self.mask.at[idx].set(m_store, mode="drop"),
            self.count + jnp.sum(row_ok).astype(self.count.dtype),
            self.failed.at[idx].set(failed_row, mode="drop"),
            self.choices,
            self.evaluated,
        ).mark_evaluated(u)

    def write_index(self, u: Array) -> Array:
        """``(n,)`` int: the rows :meth:`add_batch` writes the points ``u (n, d)`` to (a point
        with a NaN/inf coordinate is not written: index ``capacity``, which ``mode="drop"``
        scatters drop). For states that keep per-row arrays beside the dataset."""
        ok = jnp.all(jnp.isfinite(jnp.reshape(u, (-1, self.u.shape[1]))), axis=1)
        return jnp.where(ok, self.count + jnp.cumsum(ok) - 1, self.capacity)

    @staticmethod
    def _rows(row_ok: Array, like: Array) -> Array:
        return jnp.reshape(row_ok, row_ok.shape + (1,) * (like.ndim - 1))

    def _failed_entries(self) -> Array:
        """Entries that hold an imputed value (failed rows), shaped like ``y``."""
        return self._rows(self.failed, self.y)

    def column(self, j: int) -> "Dataset":
        """The single-output dataset of column ``j`` of a ``(cap, J)`` dataset."""
        return self._replace(y=self.y[:, j], mask=self.mask[:, j])

    def observed(self) -> Array:
        """Like ``mask``, True only for finite observations (imputed failures excluded); for
        incumbents and anything that must not count a failure as a measurement."""
        return self.mask & ~self._failed_entries()

    def standardized(self) -> tuple[Array, Array, Array]:
        """Targets standardized over the rows in ``mask``: ``((y - mean) / std, mean, std)``.

        Rows outside ``mask`` are 0 in the result. ``std`` falls back to 1 when fewer than two
        rows are valid or they are all equal. Single-output datasets only.
        """
        n = jnp.maximum(jnp.sum(self.mask), 1)
        mean = jnp.sum(jnp.where(self.mask, self.y, 0.0)) / n
        var = jnp.sum(jnp.where(self.mask, (self.y - mean) ** 2, 0.0)) / n
        std = jnp.where(var > 1e-12, jnp.sqrt(var), 1.0)
        return jnp.where(self.mask, (self.y - mean) / std, 0.0), mean, std

    def best(self) -> tuple[Array, Array]:
        """``(u_best (d,), y_best ())``: the finite observation with the smallest ``y``
        (single-output datasets; failures are never the incumbent)."""
        yy = jnp.where(self.observed(), self.y, jnp.inf)
        i = jnp.argmin(yy)
        return self.u[i], yy[i]


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
        return f"FactoryCall({self.factory!r}, {self.kwargs!r})"


BATCH_RULES = ("fantasy", "independent", "native")


class BOAlgorithm(NamedTuple):
    """A BO algorithm as three pure functions (blackjax style), all jit/vmap compatible, with
    the same signatures for every algorithm.

    - ``init(key, x0, y0, c0=None, *, bounds, capacity) -> state``: ``x0 (n0, d)`` in the
      box, ``y0 (n0,)`` observed objective values, ``c0 (n0, K)`` observed constraint values
      (``None`` when the problem has none), ``bounds`` a :class:`Bounds` (or ``(lower,
      upper)``), ``capacity`` the total number of observations the state must hold (a Python
      int).
    - ``ask(state, key) -> x``: the next point ``(d,)`` in the box, or ``(q, d)`` when
      ``q > 1``.
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
      own batch rule). See :mod:`nbo_jax.batch`.
    - ``config``: the :class:`FactoryCall` that built it (``None`` for hand-made ones).
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


class History(NamedTuple):
    """What ``run_bo`` returns: one row per evaluation, initial points first.

    Attributes:
        x: ``(n, d)`` evaluated points (box coordinates).
        y: ``(n,)`` observed values (noisy; NaN/inf kept as observed).
        f: ``(n,)`` noise-free objective values ``f(x)``.
        best_f: ``(n,)`` running minimum of the finite values of ``f``.
        valid: ``(n,)`` bool, False where an observed value of the row (the objective or,
            for a constrained problem, any constraint) was NaN/inf and was masked.
        c: ``(n, K)`` observed (noisy) constraint values; ``None`` without constraints.
        c_true: ``(n, K)`` noise-free constraint values ``c(x)``; ``None`` likewise.
        feasible: ``(n,)`` bool, ``all(c_true <= 0)`` (noise-free feasibility).
        best_feasible_f: ``(n,)`` running minimum of ``f`` over feasible rows (``inf``
            until the first feasible one).
        info: per-step diagnostics, a dict of ``(n_iter + 1,)`` arrays, entry ``i`` taken
            after ``n_init + i q`` observations (entry 0 right after ``init``): ``n_observed``
            (rows in the algorithm's dataset), ``n_failed`` (failed evaluations among them)
            and the algorithm's own (``BOAlgorithm.info``).
    ``n = n_init + n_iter * q`` (``q`` = the algorithm's ``q``); a leading batch axis is
    added by ``vmap``.
    """

    x: Array
    y: Array
    f: Array
    best_f: Array
    valid: Array
    c: Optional[Array] = None
    c_true: Optional[Array] = None
    feasible: Optional[Array] = None
    best_feasible_f: Optional[Array] = None
    info: Optional[dict] = None

    def violation(self) -> Array:
        """Total noise-free violation ``sum_k [c_k(x_t)]^+`` per row, ``(n,)`` (zeros
        without constraints)."""
        if self.c_true is None:
            return jnp.zeros_like(self.f)
        return jnp.sum(jnp.maximum(self.c_true, 0.0), axis=-1)

    def regret_plus_violation(self, optimal_value: float) -> Array:
        """Best positive regret plus violation (Phan-Trong 2024, PhD thesis, Figure 4.1):
        ``min_{s<=t} ([f(x_s) - f*]^+ + sum_k [c_k(x_s)]^+)``, shape like ``f``. Without
        constraints it is the simple regret clipped at 0."""
        inst = jnp.maximum(self.f - optimal_value, 0.0) + self.violation()
        inst = jnp.where(jnp.isfinite(inst), inst, jnp.inf)
        return jax.lax.cummin(inst, axis=inst.ndim - 1)

    def simple_regret(self, optimal_value: float) -> Array:
        """``r_t = min_{s<=t} f(x_s) - f*`` (Srinivas et al. 2010), shape like ``best_f``."""
        return self.best_f - optimal_value

    def cumulative_regret(self, optimal_value: float) -> Array:
        """``R_t = sum_{s<=t} (f(x_s) - f*)`` over finite ``f`` (Srinivas et al. 2010)."""
        inst = jnp.where(jnp.isfinite(self.f), self.f - optimal_value, 0.0)
        return jnp.cumsum(inst, axis=-1)
