"""Public types: Problem, TaskMetric and History (the algorithm contract, :class:`BOAlgorithm`,
lives in :mod:`nbo_jax.base` and is importable from here too).

The search domains (:class:`~nbo_jax.domains.Bounds`, :class:`~nbo_jax.domains.FiniteDomain`,
:mod:`nbo_jax.domains`) and the observations (:class:`~nbo_jax.dataset.Dataset`,
:mod:`nbo_jax.dataset`) have their own modules; their names are importable from here too.

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

from .base import BATCH_RULES, BOAlgorithm, FactoryCall, SearchRegion  # noqa: F401 - the contract, importable from here too
from .dataset import Dataset  # noqa: F401
from .search_space import SearchSpace  # noqa: F401
from .domains import (  # noqa: F401
    Bounds,
    FiniteDomain,
    as_bounds,
    choice_tolerance,
    finite_domain,
    make_bounds,
)

Array = jax.Array


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
        bounds: :class:`Bounds` with ``(d,)`` arrays, or a mixed
            :class:`~nbo_jax.search_space.SearchSpace` (then ``d`` is its number of
            parameters and a point holds a categorical parameter's choice as its index).
        objective: noise-free ``f: (d,) -> ()``; a pure jnp function (vmap it for batches).
            A multi-objective problem's returns ``(m,)``, every objective minimized.
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
        reference_point: for ``m`` objectives, ``m`` finite floats bounding the dominated
            hypervolume (:func:`nbo_jax.pareto.hypervolume`; BoTorch's ``ref_point`` negated
            where BoTorch maximizes), or ``None``.
        max_hypervolume: the hypervolume of the true Pareto front against
            ``reference_point`` (``None`` when unknown).

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
    reference_point: Optional[tuple] = None
    max_hypervolume: Optional[float] = None

    def __post_init__(self):
        if not isinstance(self.dim, (int, np.integer)) or isinstance(self.dim, bool) or self.dim < 1:
            raise TypeError(f"Problem.dim must be an int >= 1, got {self.dim!r}")
        if isinstance(self.bounds, SearchSpace):  # a mixed space: x holds one number per parameter
            if self.bounds.dim != self.dim:
                raise ValueError(f"Problem.dim ({self.dim}) must be the search space's number of parameters "
                                 f"({self.bounds.dim})")
        else:
            object.__setattr__(self, "bounds", as_bounds(self.bounds, int(self.dim), name="Problem.bounds"))
        if not callable(self.objective):
            raise TypeError(f"Problem.objective must be callable (d,) -> (), got {type(self.objective).__name__}")
        if self.choices is not None:
            dom = finite_domain(self.choices, self.bounds, name="Problem.choices")
            object.__setattr__(self, "choices", dom.points)
        if self.metric is not None and not isinstance(self.metric, TaskMetric):
            raise TypeError(f"Problem.metric must be an nbo_jax.TaskMetric or None, got {type(self.metric).__name__}")
        if self.reference_point is not None:
            ref = np.asarray(self.reference_point, dtype=np.float64)
            if ref.ndim != 1 or ref.shape[0] != self.n_objectives or not np.all(np.isfinite(ref)):
                raise ValueError(f"Problem.reference_point must be {self.n_objectives} finite floats (one per "
                                 f"objective), got {self.reference_point!r}")
            object.__setattr__(self, "reference_point", tuple(float(v) for v in ref))
        if self.max_hypervolume is not None:
            if not np.isfinite(self.max_hypervolume) or self.max_hypervolume <= 0:
                raise ValueError(f"Problem.max_hypervolume must be a finite float > 0 or None, got {self.max_hypervolume!r}")
            object.__setattr__(self, "max_hypervolume", float(self.max_hypervolume))

    @property
    def domain(self):
        """The search domain: :attr:`bounds` (a :class:`Bounds`) or, for a finite problem,
        the :class:`FiniteDomain` of :attr:`choices` inside them."""
        if self.choices is None:
            return self.bounds
        return FiniteDomain(self.bounds.lower, self.bounds.upper, self.choices)

    def __call__(self, x: Array) -> Array:
        """Noise-free objective on one point ``(d,)`` or a batch ``(..., d)`` (``(..., m)``
        for ``m`` objectives)."""
        x = jnp.asarray(x)
        if x.ndim == 1:
            return self.objective(x)
        flat = x.reshape(-1, x.shape[-1])
        out = jax.vmap(self.objective)(flat)
        return out.reshape(x.shape[:-1] + out.shape[1:])

    @property
    def n_objectives(self) -> int:
        """``m``, the number of objectives: 1 for a scalar objective, ``m`` for ``(m,)``."""
        shape = jax.eval_shape(self.objective, jax.ShapeDtypeStruct((self.dim,), jnp.zeros(()).dtype)).shape
        if len(shape) > 1:
            raise ValueError(f"problem.objective must map (d,) to () or (m,), got output shape {shape}")
        return int(shape[0]) if shape else 1

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


def total_violation(c: Array) -> Array:
    """Total constraint violation ``sum_k [c_k]^+`` of constraint values ``c (..., K)``
    (``c <= 0`` feasible), shape ``(...)``; 0 exactly when every constraint holds."""
    return jnp.sum(jnp.maximum(c, 0.0), axis=-1)


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
        hypervolume: for a problem with ``m >= 2`` objectives and a ``reference_point``,
            ``(n,)`` the hypervolume dominated by the noise-free ``f`` of the valid (and
            feasible) rows so far (:func:`nbo_jax.pareto.hypervolume`); ``None`` otherwise.
    With ``m >= 2`` objectives ``y``, ``f`` and ``best_f`` are ``(n, m)`` (``best_f`` the
    running minimum of each objective, the ideal point so far); the Pareto front after
    ``t`` evaluations is :meth:`pareto_front`.
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
    hypervolume: Optional[Array] = None

    def pareto_front(self, t: Optional[int] = None) -> Array:
        """``(n,)`` bool: the rows on the Pareto front of the noise-free objectives ``f (n, m)``
        among the first ``t`` evaluations (all when ``None``), valid (and feasible) rows only;
        one history (no batch axis).

        Raises:
            ValueError: the history has one objective or a batch axis."""
        from .pareto import is_non_dominated

        if self.f.ndim != 2:
            raise ValueError(f"pareto_front needs one history of m >= 2 objectives, f of shape (n, m); got "
                             f"{self.f.shape} (index a vmapped history first: jax.tree.map(lambda a: a[i], h))")
        n = self.f.shape[0]
        keep = self.valid if self.feasible is None else self.valid & self.feasible
        if t is not None:
            keep = keep & (jnp.arange(n) < t)
        return is_non_dominated(self.f, keep)

    def violation(self) -> Array:
        """Total noise-free violation ``sum_k [c_k(x_t)]^+`` per row, ``(n,)`` (zeros
        without constraints)."""
        if self.c_true is None:
            return jnp.zeros_like(self.f)
        return total_violation(self.c_true)

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
