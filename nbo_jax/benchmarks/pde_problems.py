"""Benchmark problems with a known PDE ``N[f](x) = g(x)`` (PINN-BO:
Phan-Trong 2024, PhD thesis, Ch. 5 and App. C.1.1, corrected where the printed PDE does not
hold for the function).

``Problem.operator`` maps a function ``u`` of one point to the field ``N[u]`` (built from
:mod:`nbo_jax.pde`), ``Problem.source`` is ``g``; the PDE holds for the objective (tested
with autodiff in float64). The objectives are the library's synthetic functions in the
papers' dimensions, minimized, plus the Euler-Bernoulli beam of thesis Section 5.4.3.2.

- ``drop_wave_pde`` (d = 2): ``x1 df/dx2 - x2 df/dx1 = 0`` (rotation invariance).
- ``styblinski_tang_pde`` (d = 10): ``sum_i df/dx_i = sum_i (2 x_i^3 - 16 x_i + 5/2)``.
- ``rastrigin_pde`` (d = 20): ``1/2 x . grad f - f = 10 sum_i [cos(2 pi x_i) + pi x_i
  sin(2 pi x_i) - 1]``. The thesis (App. C.1.1) prints ``x . grad f - f``; for this ``f``
  ``x . grad f = sum_i (2 x_i^2 + 20 pi x_i sin(2 pi x_i))``, so only the 1/2 form gives the
  printed right-hand side.
- ``michalewicz_pde`` (d = 30, m = 10): ``h . grad f - f = 0`` with ``h_i = [cot(x_i) +
  (4 m i x_i / pi) / tan(i x_i^2 / pi)]^{-1}``, so that ``h_i df/dx_i`` is the ``i``-th term of
  ``f``. The thesis (App. C.1.1) prints ``h_i = [cot(x_i) + 2 x_i (2m - 1) / tan(i x_i^2 /
  pi)]^{-1}``, for which the PDE does not hold. ``h`` is singular where
  ``tan`` vanishes (e.g. at the box's ends), so the box is [0, pi] but the PDE is stated
  for the interior points where ``h`` is finite.
- ``cosine_mixture_pde`` (d = 50): for ``f = -0.1 sum cos(5 pi x_i) + sum x_i^2`` (the
  minimization form used here) the per-coordinate residual is ``df/dx_i - 2 x_i - 0.5 pi
  sin(5 pi x_i) = 0`` (the thesis, App. C.1.1, prints the ``+0.1`` form, for which the sine's
  sign flips).
- ``beam`` (d = 1, [0, 1]): ``(EI(x) w'')'' = q(x)`` with ``EI = e^x / rho``, ``q = e^x``,
  ``rho = w0''`` for the closed form ``w0(x) = e^{2x} sin(20 x) + sin(4 pi e^{2x}) +
  0.4 x^3 + 0.2 x^2 + 6`` (the authors' ground truth); minimize ``w``. ``rho`` has zeros in
  [0, 1], so the operator is the equivalent form multiplied by ``rho^3 e^{-x}``::

      N[u] = [(rho - rho'') rho - 2 rho' (rho - rho')] u'' + 2 rho (rho - rho') u''' + rho^2 u''''
      g    = rho^3

  which is finite everywhere and equals ``rho^3 e^{-x} ((EI u'')'' - q)`` + ``g`` where
  ``rho != 0`` (chosen because ``EI = e^x / rho`` is infinite at the zeros of ``rho``, where the
  printed form cannot be evaluated).
- ``heat_bc1``, ``heat_bc2``, ``heat_bc3`` (d = 2, [0, 2 pi]^2): steady-state heat, Laplace
  ``T_xx + T_yy = 0`` with one of three hidden Dirichlet boundary-condition sets, minimize
  ``-T`` (thesis Section 5.4.3.1); built by :mod:`nbo_jax.benchmarks.heat` (py-pde ground
  truth, interpolated). ``get("heat", boundary_conditions=k)`` is the same as
  ``get(f"heat_bc{k}")``.
"""

from __future__ import annotations

import functools
import math
from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np

from nbo_jax import pde
from nbo_jax.types import Problem

from . import synthetic


def _directional_minus(h_field, coefficient=1.0):
    return lambda u: coefficient * pde.directional(u, h_field) - pde.Field(u)


def _michalewicz_h(m: float):
    def h(x):
        i = jnp.arange(1, x.shape[0] + 1, dtype=x.dtype)
        return 1.0 / (1.0 / jnp.tan(x) + (4 * m * i * x / jnp.pi) / jnp.tan(i * x**2 / jnp.pi))

    return h


def beam_w(x):
    """The beam's closed-form deflection ``w0`` at ``x (1,)`` (thesis Section 5.4.3.2)."""
    t = x[0]
    return (jnp.exp(2 * t) * jnp.sin(20 * t) + jnp.sin(4 * jnp.pi * jnp.exp(2 * t)) + 0.4 * t**3
            + 0.2 * t**2 + 6.0)


def beam_rho(x):
    """``rho(x) = w0''(x)``, written out as printed in the thesis, Section 5.4.3.2."""
    t = x[0]
    e2 = jnp.exp(2 * t)
    return (2.4 * t - 64 * jnp.pi**2 * jnp.exp(4 * t) * jnp.sin(4 * jnp.pi * e2) - 396 * e2 * jnp.sin(20 * t)
            + 80 * e2 * jnp.cos(20 * t) + 16 * jnp.pi * e2 * jnp.cos(4 * jnp.pi * e2) + 0.4)


def beam_operator(u):
    """``N[u]`` of the beam in the division-free form (module doc)."""
    rho = pde.Field(beam_rho)
    d1, d2 = pde.partial(beam_rho, 0), pde.partial(beam_rho, 0, 2)
    return (((rho - d2) * rho - 2.0 * d1 * (rho - d1)) * pde.partial(u, 0, 2)
            + 2.0 * rho * (rho - d1) * pde.partial(u, 0, 3) + rho * rho * pde.partial(u, 0, 4))


def _beam_optimum():
    from scipy.optimize import minimize_scalar  # here: scipy.optimize costs 0.5 s at import
    grid = np.linspace(0.0, 1.0, 20001)
    f = np.asarray(jax.jit(jax.vmap(lambda t: beam_w(t[None])))(jnp.asarray(grid)))
    k = int(np.argmin(f))
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    res = minimize_scalar(lambda t: float(beam_w(jnp.asarray([t], jnp.float64))), bounds=(lo, hi),
                          method="bounded", options={"xatol": 1e-12})
    return float(res.fun), np.array([res.x])


_SPECS = {
    # name: (synthetic name, dim, operator, source)
    "drop_wave_pde": ("drop_wave", 2,
                      lambda u: pde.coordinate(0) * pde.partial(u, 1) - pde.coordinate(1) * pde.partial(u, 0),
                      0.0),
    "styblinski_tang_pde": ("styblinski_tang", 10, lambda u: pde.directional(u, lambda x: jnp.ones_like(x)),
                            lambda x: jnp.sum(2 * x**3 - 16 * x + 2.5)),
    "rastrigin_pde": ("rastrigin", 20, _directional_minus(lambda x: x, 0.5),
                      lambda x: 10 * jnp.sum(jnp.cos(2 * jnp.pi * x) + jnp.pi * x * jnp.sin(2 * jnp.pi * x) - 1)),
    "michalewicz_pde": ("michalewicz", 30, _directional_minus(_michalewicz_h(10.0)), 0.0),
    "cosine_mixture_pde": ("cosine_mixture", 50, lambda u: pde.gradient(u),
                           lambda x: 2 * x + 0.5 * jnp.pi * jnp.sin(5 * jnp.pi * x)),
}


_HEAT_NAMES = ("heat_bc1", "heat_bc2", "heat_bc3")


def available() -> list[str]:
    """Names accepted by :func:`get` (besides the alias ``"heat"``)."""
    return list(_SPECS) + ["beam"] + list(_HEAT_NAMES)


def accepts(name) -> bool:
    """Whether :func:`get` knows ``name`` (case-insensitive, ``-`` as ``_``): the names of
    :func:`available` and ``"heat"``."""
    key = str(name).strip().lower().replace("-", "_")
    return key == "heat" or key in available()


def get(name: str, dim: Optional[int] = None, noise_std: float | str = 0.0, *,
        boundary_conditions: Optional[int] = None, resolution: Optional[int] = None) -> Problem:
    """A PDE benchmark problem (cached): the objective, bounds and optimum of the synthetic
    function (:func:`nbo_jax.benchmarks.synthetic.get`), the beam, or a steady-state heat
    problem (:func:`nbo_jax.benchmarks.heat.get`), with ``operator`` and ``source`` set.

    Args:
        name: one of :func:`available`, or ``"heat"`` (with ``boundary_conditions``).
        dim: must equal the paper's dimension when given (the PDEs are stated for it).
        noise_std: float >= 0 or ``"paper"`` (as :func:`nbo_jax.benchmarks.synthetic.get`).
        boundary_conditions: heat problems only: 1, 2 or 3 (default 1 for ``"heat"``; with
            ``"heat_bc{k}"`` it may be given only if it equals ``k``).
        resolution: heat problems only: py-pde cells per axis (default
            :data:`nbo_jax.benchmarks.heat.DEFAULT_RESOLUTION`).

    Raises:
        ValueError: unknown name, a ``dim`` other than the paper's, a bad ``noise_std``,
            ``boundary_conditions`` not in {1, 2, 3} or contradicting the name, a bad
            ``resolution``, or either of the two given for a problem other than heat.
    """
    key = str(name).strip().lower().replace("-", "_")
    if not accepts(key):
        raise ValueError(f"name: unknown PDE problem {name!r}; available: {available()} (and 'heat')")
    if key == "heat" or key in _HEAT_NAMES:
        from . import heat

        if key != "heat":
            k = int(key[-1])
            if boundary_conditions is not None and boundary_conditions != k:
                raise ValueError(f"boundary_conditions={boundary_conditions!r} contradicts the name {name!r}")
            boundary_conditions = k
        return heat.get(1 if boundary_conditions is None else boundary_conditions,
                        heat.DEFAULT_RESOLUTION if resolution is None else resolution, noise_std=noise_std, dim=dim)
    for arg, value in (("boundary_conditions", boundary_conditions), ("resolution", resolution)):
        if value is not None:
            raise ValueError(f"{arg} applies only to the heat problems, not {key!r}")
    paper_dim = 1 if key == "beam" else _SPECS[key][1]
    if dim is not None and dim != paper_dim:
        raise ValueError(f"dim: {key!r} is defined for dim={paper_dim} (its PDE), got {dim}")
    return _build(key, noise_std if isinstance(noise_std, str) else float(noise_std), bool(jax.config.jax_enable_x64))


@functools.lru_cache(maxsize=None)
def _build(key: str, noise, x64: bool) -> Problem:
    import dataclasses

    if key == "beam":
        fstar, xstar = _beam_optimum()
        if isinstance(noise, str):
            if noise.strip().lower() != "paper":
                raise ValueError(f"noise_std must be a float >= 0 or 'paper', got {noise!r}")
            grid = jnp.linspace(0.0, 1.0, 10_000)[:, None]
            f = np.asarray(jax.vmap(beam_w)(grid))
            noise = math.sqrt(0.01 * (float(f.max()) - min(float(f.min()), fstar)))
        elif not (math.isfinite(noise) and noise >= 0):
            raise ValueError(f"noise_std must be a finite float >= 0, got {noise}")
        from nbo_jax.types import make_bounds

        return Problem(name="beam", dim=1, bounds=make_bounds(0.0, 1.0, 1), objective=beam_w, noise_std=noise,
                       optimal_value=fstar, optimizer=xstar, operator=beam_operator,
                       source=lambda x: beam_rho(x) ** 3,
                       metadata={"source": "Phan-Trong 2024, PhD thesis, Section 5.4.3.2",
                                 "pde": "(EI w'')'' = q, EI = e^x / rho, q = e^x (division-free form)"})
    base_name, dim, operator, source = _SPECS[key]
    base = synthetic.get(base_name, dim=dim, noise_std=noise)
    meta = dict(base.metadata, pde_source="Phan-Trong 2024, PhD thesis, App. C.1.1, "
                "corrected where the printed PDE does not hold (see nbo_jax.benchmarks.pde_problems)")
    return dataclasses.replace(base, name=key, operator=operator,
                               source=source if callable(source) else pde.constant(source), metadata=meta)


__all__ = ["get", "available", "accepts", "beam_w", "beam_rho", "beam_operator"]
