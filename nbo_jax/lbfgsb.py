"""Box-constrained L-BFGS for a batch of independent problems, inside jit, vmap and scan.

Minimizes ``f_i(x_i)`` over ``lower <= x_i <= upper`` for ``i = 1..k`` at once (the restarts
of an acquisition climb, the starts of a GP fit). Per iteration, for every row that has not
stopped (projected quasi-Newton with an active set: Bertsekas 1982, "Projected Newton
methods for optimization problems with simple constraints"; the L-BFGS-B class of Byrd, Lu,
Nocedal & Zhu 1995)::

    active = {j : x_j = lower_j and g_j > 0, or x_j = upper_j and g_j < 0}
    p      = -H g on the free coordinates (L-BFGS two-loop recursion over the last ``memory``
             pairs, Nocedal & Wright 2006, Algorithm 7.4; first step -g / ||g||), or the
             steepest descent -g on them when p is not a descent direction
    x+     = clip(x + a p, lower, upper) until Armijo f(x+) <= f(x) + c1 g.(x+ - x) with
             f(x+), g(x+) finite: a = 1, then the minimizer of the quadratic through f(x), the
             slope g.(x+ - x) and f(x+) (Nocedal & Wright 2006, eq. 3.58) as the nearest power
             of two in [a / 16, a / 2]; a / 2 where f(x+) is not finite or exceeds f(x) by less
             than sqrt(eps) max(|f(x)|, 1) (there rounding would choose the step)
    memory <- (x+ - x, g+ - g) when their inner product is > eps |g+ - g|^2
    flat   : the next trial's predicted decrease -g.(x+ - x) is <= ftol max(|f(x)|, 1): no step
             along p can pass the ftol test below, so the search ends; after an L-BFGS direction
             the memory is cleared and the next iteration retries steepest descent (scipy's
             L-BFGS-B after a failed line search), after steepest descent the row has converged
    stop   : ||clip(x - g) - x||_inf <= gtol, or f(x) - f(x+) <= ftol max(|f(x)|, |f(x+)|, 1)
             (scipy's L-BFGS-B tests), flat along steepest descent, or no Armijo step within
             ``max_linesearch`` trials

``fun`` is called on the whole ``(k, n)`` batch (one kernel call for all rows, never a vmap
of ``k`` small linear-algebra calls), and a stopped row is frozen, so a row's answer does not
depend on the other rows or on an outer ``vmap``. Under ``vmap`` the loops run until the
slowest member stops (at most ``max_iter`` iterations).
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp

Array = jax.Array


class LBFGSBResult(NamedTuple):
    """Result of :func:`minimize_lbfgsb`.

    Attributes:
        x: ``(k, n)`` the last accepted iterate of each row (inside the box).
        value: ``(k,)`` ``fun`` at ``x`` (``+inf`` where the start was not finite).
        iterations: ``(k,)`` int32 accepted iterations per row.
        converged: ``(k,)`` bool, True where a tolerance stopped the row (False: ``max_iter``
            reached, no Armijo step found, or a non-finite start).
    """

    x: Array
    value: Array
    iterations: Array
    converged: Array


def default_tolerances(dtype) -> tuple[float, float]:
    """``(ftol, gtol)``: scipy's L-BFGS-B defaults (``factr = 1e7``, i.e. ``ftol = 2.2e-9``;
    ``pgtol = 1e-5``) in float64; ``(1e-6, 1e-5)`` in float32."""
    return (2.2e-9, 1e-5) if jnp.dtype(dtype) == jnp.float64 else (1e-6, 1e-5)


def _value_and_grad(fun: Callable[[Array], Array], x: Array) -> tuple[Array, Array]:
    """``fun(x) (k,)`` and its row gradients ``(k, n)``; a row with a non-finite value or
    gradient gets value ``+inf`` and gradient 0."""
    f, vjp = jax.vjp(fun, x)
    g = vjp(jnp.ones_like(f))[0]
    ok = jnp.isfinite(f) & jnp.all(jnp.isfinite(g), axis=-1)
    return jnp.where(ok, f, jnp.inf), jnp.where(ok[:, None], g, 0.0)


def _two_loop(q: Array, S: Array, Y: Array, rho: Array, gamma: Array) -> Array:
    """``H q`` per row: ``q (k, n)``, pairs ``S, Y (k, m, n)`` (newest last; empty slots have
    ``rho = 0`` and contribute nothing), ``rho (k, m)``, initial scaling ``gamma (k,)``."""
    m = S.shape[1]

    def backward(q, i):
        a = rho[:, i] * jnp.sum(S[:, i] * q, axis=-1)
        return q - a[:, None] * Y[:, i], a

    q, alphas = jax.lax.scan(backward, q, jnp.arange(m - 1, -1, -1))

    def forward(r, inp):
        i, a = inp
        b = rho[:, i] * jnp.sum(Y[:, i] * r, axis=-1)
        return r + (a - b)[:, None] * S[:, i], None

    r, _ = jax.lax.scan(forward, gamma[:, None] * q, (jnp.arange(m), alphas[::-1]))
    return r


def minimize_lbfgsb(
    fun: Callable[[Array], Array],
    x0: Array,
    lower,
    upper,
    *,
    max_iter: int = 200,
    memory: int = 10,
    ftol: float | None = None,
    gtol: float | None = None,
    max_linesearch: int = 20,
    c1: float = 1e-4,
) -> LBFGSBResult:
    """Minimize a batch of independent box-constrained problems (module doc).

    Args:
        fun: ``x (k, n) -> (k,)``, row-separable (row ``i`` depends on ``x[i]`` only) and
            differentiable; NaN/inf values are treated as ``+inf`` (never accepted).
        x0: ``(k, n)`` starts (clipped to the box first).
        lower: lower bounds broadcastable to ``(k, n)``; ``-inf`` for none; a coordinate
            with ``lower == upper`` stays fixed.
        upper: upper bounds broadcastable to ``(k, n)``; ``inf`` for none.
        max_iter: most iterations per row (0 returns the clipped starts).
        memory: L-BFGS pairs kept.
        ftol: stopping tolerance on the decrease of the value; ``None`` =
            :func:`default_tolerances` for the dtype.
        gtol: stopping tolerance on the projected gradient; ``None`` =
            :func:`default_tolerances` for the dtype.
        max_linesearch: most trial steps per iteration. c1: Armijo constant.

    Returns:
        :class:`LBFGSBResult`; ``value[i] <= fun(clip(x0))[i]`` for every row.
    """
    dtype = x0.dtype
    d_ftol, d_gtol = default_tolerances(dtype)
    ftol = d_ftol if ftol is None else ftol
    gtol = d_gtol if gtol is None else gtol
    k, n = x0.shape
    lo = jnp.broadcast_to(jnp.asarray(lower, dtype), (k, n))
    hi = jnp.broadcast_to(jnp.asarray(upper, dtype), (k, n))
    fixed = lo >= hi
    eps = jnp.finfo(dtype).eps
    tiny = jnp.finfo(dtype).tiny

    def proj_grad_norm(x, g):
        return jnp.max(jnp.where(fixed, 0.0, jnp.abs(jnp.clip(x - g, lo, hi) - x)), axis=-1)

    x = jnp.clip(x0, lo, hi)
    f, g = _value_and_grad(fun, x)
    done = ~jnp.isfinite(f) | (proj_grad_norm(x, g) <= gtol)
    converged = jnp.isfinite(f) & done
    S = jnp.zeros((k, memory, n), dtype)
    Y = jnp.zeros((k, memory, n), dtype)
    rho = jnp.zeros((k, memory), dtype)
    gamma = jnp.zeros((k,), dtype)  # 0: no pair yet
    its = jnp.zeros((k,), jnp.int32)

    def direction(x, g, S, Y, rho, gamma):
        free = ~fixed & ~(((x <= lo) & (g > 0)) | ((x >= hi) & (g < 0)))
        gf = jnp.where(free, g, 0.0)
        first = gamma <= 0
        g0 = 1.0 / jnp.maximum(jnp.linalg.norm(gf, axis=-1), tiny)
        p = -jnp.where(free, _two_loop(gf, S, Y, rho, jnp.where(first, g0, gamma)), 0.0)
        descent = jnp.sum(p * gf, axis=-1) < 0
        steep = -jnp.where(first, g0, jnp.maximum(gamma, tiny))[:, None] * gf
        return jnp.where(descent[:, None], p, steep)

    def body(carry):
        it, x, f, g, S, Y, rho, gamma, done, converged, its = carry
        p = direction(x, g, S, Y, rho, gamma)
        f_scale = jnp.maximum(jnp.abs(f), 1.0)  # the line search's tolerances scale with |f(x)|
        rounding = jnp.sqrt(eps) * f_scale  # an excess of ft over f within this is left to halving

        def ls_cond(c):
            j, _, acc, flat, *_ = c
            return (j < max_linesearch) & jnp.any(~acc & ~flat)

        def ls_body(c):
            j, alpha, acc, flat, xn, fn, gn = c
            trial = jnp.clip(x + alpha[:, None] * p, lo, hi)
            ft, gt = _value_and_grad(fun, trial)
            linear = jnp.sum(g * (trial - x), axis=-1)  # < 0: the decrease the gradient predicts
            armijo = jnp.isfinite(ft) & (ft <= f + c1 * linear)
            new = ~acc & ~flat & armijo
            xn = jnp.where(new[:, None], trial, xn)
            fn = jnp.where(new, ft, fn)
            gn = jnp.where(new[:, None], gt, gn)
            # the minimizer of the quadratic through f, its slope and ft (Nocedal & Wright 2006, eq. 3.58),
            # as the nearest power of two in [alpha / 16, alpha / 2]; alpha / 2 where ft is not finite or
            # exceeds f by less than sqrt(eps) max(|f|, 1), where rounding would decide the quadratic (so
            # that a row takes the same steps vmapped or alone)
            curvature = ft - f - linear
            clear = jnp.isfinite(ft) & (ft - f > rounding)
            quad = jnp.where(clear, -0.5 * linear / jnp.where(clear, curvature, 1.0), 0.5)
            shrink = jnp.exp2(-jnp.clip(jnp.round(-jnp.log2(jnp.maximum(quad, tiny))), 1.0, 4.0)).astype(dtype)
            # the next trial could not lower f by more than ftol max(|f|, 1): the row has converged
            flat = flat | (~acc & ~armijo & (-shrink * linear <= ftol * f_scale))
            acc = acc | new
            return j + 1, jnp.where(acc | flat, alpha, shrink * alpha), acc, flat, xn, fn, gn

        ls0 = (jnp.zeros((), jnp.int32), jnp.ones((k,), dtype), done, jnp.zeros((k,), bool), x, f, g)
        _, _, acc, flat, xn, fn, gn = jax.lax.while_loop(ls_cond, ls_body, ls0)
        moved = acc & ~done
        s = xn - x
        yv = gn - g
        sy = jnp.sum(s * yv, axis=-1)
        yy = jnp.sum(yv * yv, axis=-1)
        keep = moved & (sy > eps * yy) & (sy > 0)
        shift = lambda B, v: jnp.concatenate([B[:, 1:], v[:, None]], axis=1)
        S = jnp.where(keep[:, None, None], shift(S, s), S)
        Y = jnp.where(keep[:, None, None], shift(Y, yv), Y)
        rho = jnp.where(keep[:, None], shift(rho, 1.0 / jnp.where(keep, sy, 1.0)), rho)
        gamma = jnp.where(keep, sy / jnp.where(keep, yy, 1.0), gamma)
        small_step = (f - fn) <= ftol * jnp.maximum(jnp.maximum(jnp.abs(f), jnp.abs(fn)), 1.0)
        stop = moved & (small_step | (proj_grad_norm(xn, gn) <= gtol))
        # no step along p can lower f by ftol: retry from steepest descent with the memory cleared
        # (scipy's L-BFGS-B after a failed line search); along steepest descent, the row has converged
        retry = flat & (gamma > 0)  # flat rows were not done: a done row starts its search accepted
        flat = flat & ~retry
        rho = jnp.where(retry[:, None], 0.0, rho)
        gamma = jnp.where(retry, 0.0, gamma)
        converged = converged | stop | flat
        done = done | stop | flat | (~acc & ~retry)  # no Armijo step: stuck
        its = its + moved.astype(jnp.int32)
        x = jnp.where(moved[:, None], xn, x)
        f = jnp.where(moved, fn, f)
        g = jnp.where(moved[:, None], gn, g)
        return it + 1, x, f, g, S, Y, rho, gamma, done, converged, its

    def cond(carry):
        it, *_, done, _, _ = carry
        return (it < max_iter) & jnp.any(~done)

    init = (jnp.zeros((), jnp.int32), x, f, g, S, Y, rho, gamma, done, converged, its)
    _, x, f, _, _, _, _, _, _, converged, its = jax.lax.while_loop(cond, body, init)
    return LBFGSBResult(x, f, its, converged)


__all__ = ["minimize_lbfgsb", "LBFGSBResult", "default_tolerances"]
