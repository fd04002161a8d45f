"""Public types: Bounds, Problem, Dataset, BOAlgorithm, History.

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
        """Map points of the unit cube back to the box."""
        return self.lower + u * (self.upper - self.lower)


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
        constraints: ``c: (d,) -> (K,)`` noise-free, with ``c <= 0`` feasible (SPEC.md
            section 0; BoTorch's slack is ``-c``), or ``None``.
        constraint_noise_std: standard deviation of the additive Gaussian noise of the
            observed constraint values: a float (all ``K``) or a tuple of ``K`` floats.
        operator, source: for physics-informed problems, the known PDE ``N[f] = g``.

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


class Dataset(NamedTuple):
    """Observations in fixed-capacity buffers (DESIGN.md: "state is data").

    Attributes:
        u: ``(cap, d)`` inputs in the unit cube; rows at index >= ``count`` are zero.
        y: ``(cap,)`` observed values; non-finite observations are stored as ``0``.
        mask: ``(cap,)`` bool, True for rows holding a finite observation.
        count: ``()`` int32, number of rows written (finite or not).
    """

    u: Array
    y: Array
    mask: Array
    count: Array

    @staticmethod
    def empty(capacity: int, dim: int, dtype=None) -> "Dataset":
        dtype = dtype or jnp.zeros(()).dtype
        return Dataset(
            jnp.zeros((capacity, dim), dtype),
            jnp.zeros((capacity,), dtype),
            jnp.zeros((capacity,), bool),
            jnp.zeros((), jnp.int32),
        )

    @property
    def capacity(self) -> int:
        return self.y.shape[0]

    def add(self, u: Array, y: Array) -> "Dataset":
        """Append one observation (``u: (d,)``, ``y: ()``); a NaN/inf ``y`` is masked out.

        Writes past the capacity are dropped (the Python-side drivers raise before that).
        """
        return self.add_batch(jnp.reshape(u, (1, -1)), jnp.reshape(y, (1,)))

    def add_batch(self, u: Array, y: Array) -> "Dataset":
        """Append ``q`` observations (``u: (q, d)``, ``y: (q,)``) in one scatter.

        Also serves multi-output buffers (``y``/``mask`` of shape ``(cap, J)``, as the
        constrained algorithms keep the objective and ``K`` constraints): then ``y`` is
        ``(q, J)`` and each entry is masked on its own."""
        idx = self.count + jnp.arange(y.shape[0])
        ok = jnp.isfinite(y)
        return Dataset(
            self.u.at[idx].set(u.astype(self.u.dtype), mode="drop"),
            self.y.at[idx].set(jnp.where(ok, y, 0.0).astype(self.y.dtype), mode="drop"),
            self.mask.at[idx].set(ok, mode="drop"),
            self.count + y.shape[0],
        )

    def standardized(self) -> tuple[Array, Array, Array]:
        """Targets standardized over the valid rows: ``((y - mean) / std, mean, std)``.

        Invalid rows are 0 in the result. ``std`` falls back to 1 when fewer than two valid
        rows exist or they are all equal.
        """
        n = jnp.maximum(jnp.sum(self.mask), 1)
        mean = jnp.sum(jnp.where(self.mask, self.y, 0.0)) / n
        var = jnp.sum(jnp.where(self.mask, (self.y - mean) ** 2, 0.0)) / n
        std = jnp.where(var > 1e-12, jnp.sqrt(var), 1.0)
        return jnp.where(self.mask, (self.y - mean) / std, 0.0), mean, std

    def best(self) -> tuple[Array, Array]:
        """``(u_best (d,), y_best ())``: the valid row with the smallest observed ``y``."""
        yy = jnp.where(self.mask, self.y, jnp.inf)
        i = jnp.argmin(yy)
        return self.u[i], yy[i]


class BOAlgorithm(NamedTuple):
    """A BO algorithm as three pure functions (blackjax style), all jit/vmap compatible.

    - ``init(key, x0, y0, *, bounds, capacity) -> state``: ``x0 (n0, d)`` in the box,
      ``y0 (n0,)`` observed values, ``capacity`` the total number of observations the state
      must hold (a Python int).
    - ``ask(state, key) -> x``: the next point ``(d,)`` in the box.
    - ``tell(state, x, y) -> state``: record an observation; NaN/inf ``y`` is masked.
    - ``surrogate(state, u) -> SurrogatePosterior`` (optional): the model's posterior at
      unit-cube points ``u (N, d)``, for plots and diagnostics; ``None`` for model-free
      algorithms.
    - ``batch_size``: ``q``, the number of points one ``ask`` returns. With ``q > 1``,
      ``ask`` returns ``(q, d)`` and ``tell`` takes ``x (q, d)``, ``y (q,)``; ``run_bo`` then
      evaluates ``n_iter * q`` points after the initial design.
    - ``constrained``: True for algorithms that model black-box constraints (Neural-CBO,
      cEI). They take the observed constraint values too: ``init(key, x0, y0, *, bounds,
      capacity, c0)`` with ``c0 (n0, K)`` and ``tell(state, x, y, c)`` with ``c (K,)``
      (``(q, K)`` for a batch); ``c <= 0`` is feasible, NaN/inf entries are masked.
      Unconstrained algorithms ignore a problem's constraints (the history still records
      them).
    - ``info(state) -> dict[str, scalar]`` (optional): per-step diagnostics (e.g. PINN-BO's
      interaction information); ``run_bo`` records them in :attr:`History.info`.
    """

    init: Callable[..., Any]
    ask: Callable[[Any, Array], Array]
    tell: Callable[[Any, Array, Array], Any]
    name: str = "algorithm"
    surrogate: Optional[Callable[[Any, Array], Any]] = None
    batch_size: int = 1
    constrained: bool = False
    info: Optional[Callable[[Any], dict]] = None


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
        info: the algorithm's per-step diagnostics (``BOAlgorithm.info``): a dict of
            ``(n_iter + 1,)`` arrays, entry ``i`` taken after ``n_init + i q`` observations
            (entry 0 right after ``init``); ``None`` when the algorithm reports none.
    ``n = n_init + n_iter * q`` (``q`` = the algorithm's ``batch_size``); a leading batch
    axis is added by ``vmap``.
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
        """Best positive regret plus violation (SPEC.md section 0; thesis Figure 4.1):
        ``min_{s<=t} ([f(x_s) - f*]^+ + sum_k [c_k(x_s)]^+)``, shape like ``f``. Without
        constraints it is the simple regret clipped at 0."""
        inst = jnp.maximum(self.f - optimal_value, 0.0) + self.violation()
        inst = jnp.where(jnp.isfinite(inst), inst, jnp.inf)
        return jax.lax.cummin(inst, axis=inst.ndim - 1)

    def simple_regret(self, optimal_value: float) -> Array:
        """``r_t = min_{s<=t} f(x_s) - f*`` (SPEC.md section 0), shape like ``best_f``."""
        return self.best_f - optimal_value

    def cumulative_regret(self, optimal_value: float) -> Array:
        """``R_t = sum_{s<=t} (f(x_s) - f*)`` over finite ``f`` (SPEC.md section 0)."""
        inst = jnp.where(jnp.isfinite(self.f), self.f - optimal_value, 0.0)
        return jnp.cumsum(inst, axis=-1)
