"""Acquisition maximization over the unit cube: one optimizer for every algorithm.

:func:`optimize_acqf` (settings: :class:`AcqOptimizer`, built by :func:`acq_optimizer`) is
what the algorithms call. Its pieces:

- :func:`candidate_set`: ``n_uniform`` uniform points plus ``n_local`` Gaussian
  perturbations (std ``local_std``, clipped to the cube) of the ``n_best`` best observed
  points. The authors' Neural-BO code scores one uniform set (the paper leaves the argmax over
  a continuous domain unspecified); the local
  points are a library addition (as in BoTorch's raw samples around incumbents).
- :func:`projected_gradient_ascent`: refine points of a differentiable utility by gradient
  steps projected onto ``[0, 1]^d`` (raw candidates -> top-k -> gradient steps).

On a **finite domain** (``data.choices`` set, :class:`~nbo_jax.types.FiniteDomain`) the raw
samples are the domain's points themselves: :func:`optimize_acqf` scores all of them and
returns the best one not evaluated yet, with no gradient steps (BoTorch's
``optimize_acqf_discrete`` with ``unique=True``); :func:`random_point` draws a uniform
unevaluated point and :func:`best_available` is the masked argmax the algorithms with their
own candidate handling use.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from .types import Dataset

Array = jax.Array


def available_score(values: Array, data: Dataset) -> Array:
    """``values (N,)`` of a finite domain's choices, ready for an argmax that never picks an
    evaluated choice: evaluated ones become ``-inf``; NaN and ``-inf`` utilities of the others
    become the dtype's lowest finite number (they still beat every evaluated choice)."""
    low = jnp.finfo(values.dtype).min
    clean = jnp.where(jnp.isnan(values) | (values == -jnp.inf), low, values)
    return jnp.where(data.evaluated, -jnp.inf, clean)


def best_available(values: Array, data: Dataset) -> Array:
    """The unevaluated choice ``(d,)`` (unit cube) of largest ``values (N,)`` on a finite
    domain (:func:`available_score`)."""
    return data.choices[jnp.argmax(available_score(values, data))]


def random_point(key: Array, data: Dataset) -> Array:
    """A uniform random point ``(d,)`` of the unit cube, or, on a finite domain, a uniform
    random choice among those not evaluated yet (random search; exploration steps)."""
    if data.finite:
        logits = jnp.where(data.evaluated, -jnp.inf, 0.0)
        return data.choices[jax.random.categorical(key, logits)]
    return jax.random.uniform(key, data.u.shape[1:], data.u.dtype)


def candidate_set(
    key: Array, data: Dataset, n_uniform: int, n_local: int = 0, *, local_std: float = 0.05,
    n_best: int = 5,
) -> Array:
    """Candidates in the unit cube, ``(n_uniform + n_local, d)``; on a finite domain, its
    ``(N, d)`` choices (all of them, evaluated ones included: mask their scores with
    :func:`available_score`).

    Local candidates are spread evenly over the ``n_best`` best valid observations (fewer if
    fewer are valid; with none, they are uniform).
    """
    if data.finite:
        return data.choices
    d = data.u.shape[1]
    k_u, k_pick, k_eps = jax.random.split(key, 3)
    dtype = data.u.dtype
    uniform = jax.random.uniform(k_u, (n_uniform, d), dtype)
    if n_local == 0:
        return uniform
    n_best = min(n_best, data.capacity)
    score = jnp.where(data.observed(), data.y, jnp.inf)
    _, best_idx = jax.lax.top_k(-score, n_best)
    n_valid = jnp.minimum(jnp.sum(data.observed()), n_best)
    which = jnp.arange(n_local) % jnp.maximum(n_valid, 1)
    centers = data.u[best_idx[which]]
    local = jnp.clip(centers + local_std * jax.random.normal(k_eps, (n_local, d), dtype), 0.0, 1.0)
    fallback = jax.random.uniform(k_pick, (n_local, d), dtype)
    local = jnp.where(n_valid > 0, local, fallback)
    return jnp.concatenate([uniform, local], axis=0)


def projected_gradient_ascent(
    utility: Callable[[Array], Array], u0: Array, *, steps: int = 50, learning_rate: float = 0.01
) -> Array:
    """Maximize ``utility(u (d,)) -> ()`` from each start ``u0 (k, d)`` with Adam steps
    projected onto ``[0, 1]^d`` (vmapped over starts). Returns ``(k, d)``."""
    opt = optax.adam(learning_rate)
    grad = jax.grad(lambda u: -utility(u))

    def one(u):
        def step(c, _):
            u, s = c
            upd, s = opt.update(grad(u), s, u)
            return (jnp.clip(optax.apply_updates(u, upd), 0.0, 1.0), s), None

        (u, _), _ = jax.lax.scan(step, (u, opt.init(u)), None, length=steps)
        return u

    return jax.vmap(one)(u0)


def refine_argmax(
    values: Array,
    candidates: Array,
    utility: Callable[[Array], Array],
    *,
    n_starts: int,
    steps: int,
    learning_rate: float,
    pool_utility: Callable[[Array], Array] | None = None,
) -> Array:
    """Raw candidates -> top-k -> projected gradient steps -> the best point ``(d,)``.

    Args:
        values: ``(N,)`` utilities of ``candidates (N, d)`` (NaN never wins).
        utility: ``u (d,) -> ()``, the utility the gradient steps climb.
        n_starts: how many of the best candidates start a climb; steps, learning_rate:
            :func:`projected_gradient_ascent` settings (``steps = 0``: no climb).
        pool_utility: ``(M, d) -> (M,)`` scoring the final pool (the best candidate and the
            climbed points); default ``vmap(utility)``.

    Returns:
        The pool point with the largest ``pool_utility`` (the best candidate itself when
        ``steps = 0``): never worse than the best candidate, which is in the pool.
    """
    best = argmax_point(values, candidates)
    if steps == 0:
        return best
    safe = jnp.where(jnp.isnan(values), -jnp.inf, values)
    _, top = jax.lax.top_k(safe, n_starts)
    refined = projected_gradient_ascent(utility, candidates[top], steps=steps, learning_rate=learning_rate)
    pool = jnp.concatenate([best[None, :], refined], axis=0)
    score = pool_utility if pool_utility is not None else jax.vmap(utility)
    return argmax_point(score(pool), pool)


def argmax_point(utility_values: Array, candidates: Array) -> Array:
    """The candidate ``(d,)`` with the largest utility (NaN utilities never win)."""
    vals = jnp.where(jnp.isnan(utility_values), -jnp.inf, utility_values)
    return candidates[jnp.argmax(vals)]


class AcqOptimizer(NamedTuple):
    """Settings of :func:`optimize_acqf` (BoTorch's ``optimize_acqf`` vocabulary).

    Build it with :func:`acq_optimizer`, which checks every field.

    Attributes:
        raw_samples: candidates scored per ask (BoTorch ``raw_samples``).
        num_restarts: how many of the best raw samples start a gradient climb (BoTorch
            ``num_restarts``).
        steps: projected Adam steps per restart; 0 scores the raw samples only (the papers'
            candidate-set argmax).
        learning_rate: Adam step size, in unit-cube units.
        local_fraction: share of the raw samples drawn around the ``n_best`` best
            observations (Gaussian, std ``local_std`` in unit-cube units, clipped to the cube);
            the rest are uniform in the cube.
        local_std, n_best: see ``local_fraction``.
    """

    raw_samples: int = 2048
    num_restarts: int = 4
    steps: int = 0
    learning_rate: float = 0.01
    local_fraction: float = 0.25
    local_std: float = 0.05
    n_best: int = 5

    @property
    def n_local(self) -> int:
        """Raw samples drawn around the best observations."""
        return int(round(self.raw_samples * self.local_fraction))

    @property
    def n_uniform(self) -> int:
        """Raw samples drawn uniformly in the cube."""
        return self.raw_samples - self.n_local


def acq_optimizer(
    raw_samples: int = 2048,
    num_restarts: int = 4,
    steps: int = 0,
    learning_rate: float = 0.01,
    local_fraction: float = 0.25,
    local_std: float = 0.05,
    n_best: int = 5,
) -> AcqOptimizer:
    """Checked :class:`AcqOptimizer` (the one acquisition optimizer's settings).

    Raises:
        TypeError: a count that is not an int, or a rate that is not a number.
        ValueError: ``raw_samples``, ``num_restarts`` or ``n_best`` < 1, ``steps`` < 0,
            ``learning_rate`` or ``local_std`` not > 0, ``local_fraction`` outside ``[0, 1)``,
            or no uniform raw sample left; the message names the argument.
    """
    from .algorithms._common import check_int, check_positive

    opts = AcqOptimizer(
        check_int("raw_samples", raw_samples, 1),
        check_int("num_restarts", num_restarts, 1),
        check_int("steps", steps, 0),
        check_positive("learning_rate", learning_rate),
        check_positive("local_fraction", local_fraction, allow_zero=True),
        check_positive("local_std", local_std),
        check_int("n_best", n_best, 1),
    )
    if not opts.local_fraction < 1.0:
        raise ValueError(f"local_fraction must be in [0, 1), got {local_fraction}")
    if opts.n_uniform < 1:
        raise ValueError(f"local_fraction={local_fraction} leaves no uniform raw sample out of {raw_samples}")
    return opts


def as_acq_optimizer(value, name: str = "acq_optimizer", default: AcqOptimizer | None = None, *,
                     no_gradient: str | None = None) -> AcqOptimizer:
    """``value`` as a checked :class:`AcqOptimizer`.

    Args:
        value: an ``AcqOptimizer`` (re-checked), or a dict of :func:`acq_optimizer` keywords laid
            over ``default`` (the fields it does not name keep ``default``'s values), or ``None``
            (``default`` itself).
        name: the argument's name, for error messages.
        default: the caller's defaults (e.g. an algorithm preset's); ``AcqOptimizer()`` if None.
        no_gradient: why the caller's acquisition cannot be climbed (independent draws, a
            hard filter, a batch rule), or ``None``. When given, ``default``'s ``steps``
            become 0 and a ``value`` asking for ``steps > 0`` is refused.

    Raises:
        TypeError: anything else, or an unknown key. ValueError: as :func:`acq_optimizer`, or
        ``steps > 0`` with ``no_gradient``. Both messages start with ``name`` (e.g.
        ``"acq_optimizer.raw_samples must be >= 1"``).
    """
    base = AcqOptimizer() if default is None else default
    if no_gradient is not None:
        base = base._replace(steps=0)
    if value is None:
        fields = base._asdict()
    elif isinstance(value, AcqOptimizer):
        fields = value._asdict()
    elif isinstance(value, dict):
        unknown = sorted(set(value) - set(AcqOptimizer._fields))
        if unknown:
            raise TypeError(f"{name} has unknown keys {unknown}; known: {list(AcqOptimizer._fields)}")
        fields = {**base._asdict(), **value}
    else:
        raise TypeError(f"{name} must be nbo.optimize.acq_optimizer(...) or a dict of its arguments, "
                        f"got {type(value).__name__}")
    try:
        opts = acq_optimizer(**fields)
    except (TypeError, ValueError) as err:
        raise type(err)(f"{name}.{err}") from None
    if no_gradient is not None and opts.steps > 0:
        raise ValueError(f"{name}.steps must be 0 ({no_gradient}); got steps={opts.steps}")
    return opts


def optimize_acqf(
    utility: Callable[[Array], Array],
    key: Array,
    data: Dataset,
    options: AcqOptimizer = AcqOptimizer(),
) -> Array:
    """Maximize an acquisition over the unit cube: raw samples -> best ``num_restarts`` ->
    projected Adam steps -> the best point (BoTorch's ``optimize_acqf`` with ``q = 1``).

    The raw samples are :func:`candidate_set` (uniform plus local around the best
    observations of ``data``). With ``steps > 0`` the ``num_restarts`` best raw samples climb
    ``utility`` by Adam steps projected onto ``[0, 1]^d``; the answer is the best of the
    climbed points and the best raw sample, so it is never worse than the raw-sample argmax.

    Args:
        utility: ``u (N, d) -> (N,)``, the acquisition value of each point (maximized; NaN
            never wins). Pointwise (row ``i`` depends on ``u[i]`` only) and, for
            ``steps > 0``, differentiable in ``u``. A stochastic acquisition closes over its
            sample (e.g. a pathwise Thompson sample), so it is one function here.
        key: PRNG key for the raw samples.
        data: :class:`~nbo_jax.types.Dataset` in unit-cube coordinates (its best valid rows
            centre the local raw samples; ``data.y`` ranks them).
        options: :class:`AcqOptimizer` (build with :func:`acq_optimizer`).

    On a finite domain (``data.choices`` set) the utility is scored on all ``N`` choices
    at once (memory as for ``N`` raw samples) and the best unevaluated one is returned; the
    raw-sample and restart settings do not apply there.

    Returns:
        ``(d,)`` unit-cube point, dtype of ``data.u``.
    """
    if data.finite:
        return best_available(utility(data.choices), data)
    u_raw = candidate_set(key, data, options.n_uniform, options.n_local, local_std=options.local_std,
                          n_best=options.n_best)
    values = utility(u_raw)
    return refine_argmax(values, u_raw, lambda u: utility(u[None, :])[0],
                         n_starts=min(options.num_restarts, options.raw_samples), steps=options.steps,
                         learning_rate=options.learning_rate, pool_utility=utility)
