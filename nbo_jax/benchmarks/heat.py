"""Steady-state heat benchmarks (PINN-BO: Phan-Trong 2024, PhD thesis, Section 5.4.3.1).

The temperature ``T`` solves Laplace's equation ``T_xx + T_yy = 0`` on ``[0, 2 pi]^2`` with
one of three sets of Dirichlet boundary conditions; the task is to find the hottest point,
so the objective (minimized) is ``f(x) = -T(x)`` for ``x = (x, y)``. The boundary
conditions are NOT part of the problem an optimizer sees (only its ``metadata`` names them,
as text); the PDE is: ``Problem.operator = lambda u: pde.laplacian(u)`` and
``Problem.source = pde.constant(0.0)`` (Laplace is linear, so ``-T`` satisfies it too).

Boundary conditions (sides named as in py-pde: ``"x-"`` is the side ``x = 0``, a function
of ``y``; ``"x+"`` is ``x = 2 pi``; ``"y-"`` is ``y = 0``, a function of ``x``; ``"y+"`` is
``y = 2 pi``)::

    BC1  x-: 5 sin(y) + sqrt(1 + y)
         x+: y sin(3 cos(y) + 2 exp(y) sin(y))
         y-: 10 cos(x) + x exp(sqrt(x^2 + sin(x)))
         y+: 3 sqrt(max(exp(x exp(-x)) sin(x) + cos(3x)^2, 0))
    BC2  y-: sin(x) cos(2x) + x^2 sqrt(3x) + exp(sin(x))
         y+: exp(sin(x)) sqrt(3x) + x^2 cos(x) sin(x)^2 + exp(cos(x))
         x-: sqrt(2y) sin(y) + y^3 cos(2y) + exp(cos(y))
         x+: sin(y) cos(2y) + y^3 sqrt(2y) + exp(sin(y))
    BC3  y-: (sin(x) + cos(2x)) sqrt(3x) + x^2 + exp(sin(x))
         y+: (exp(sin(x)) + sqrt(3x)) cos(x) + (sin(x)^2 + x^2) exp(cos(x))
         x-: (sqrt(2y) + sin(y)) (cos(2y) + y^3) + exp(cos(y))
         x+: (sin(y) + cos(2y)) (sqrt(2y) + y^3) + exp(sin(y))

Decisions (documented, tested in ``tests/test_heat.py``):

- **BC1's printed labels are transposed** (a value on the side ``y = 0`` cannot depend on
  ``y``, nor one on ``x = 0`` on ``x``): the thesis prints the two
  functions of ``y`` as ``T(x, 0)``/``T(x, 2 pi)`` and the two functions of ``x`` as
  ``T(0, y)``/``T(2 pi, y)``; here the functions of ``y`` are on ``x = 0`` and ``x = 2 pi``
  and the functions of ``x`` on ``y = 0`` and ``y = 2 pi`` (in the printed order). BC2 and
  BC3 are used as printed.
- **Negative square-root argument**: BC1's ``T(x, 2 pi)`` has ``exp(x e^{-x}) sin(x) +
  cos(3x)^2 < 0`` on three intervals of ``x`` (about (3.456, 4.056), (4.260, 5.149),
  (5.392, 5.961)); there ``sqrt(max(., 0)) = 0`` is used (the real part of the printed
  formula). No other argument of a square root is negative on ``[0, 2 pi]``.
- **Ground truth**: py-pde's ``solve_laplace_equation`` on ``CartesianGrid([[0, 2 pi],
  [0, 2 pi]], [n, n])`` (cell-centred finite differences, 5-point stencil, Dirichlet values
  imposed on the faces through ghost cells), ``n = resolution``, default
  :data:`DEFAULT_RESOLUTION` = 256 (about 4 s on 2 CPU cores, once; then cached on disk).
  The Dirichlet data given to py-pde are the **face averages** of the boundary function
  over each boundary cell (midpoint rule with at least 2^16 samples per side), not point
  samples at the cell centres: BC1's ``x+`` side oscillates with wavelength ~0.006 near
  ``y = 2 pi`` (phase ``2 e^y sin y``), which point samples alias on any practical grid, so
  the point-sampled solution does not converge in the interior (at (5, 5): 14.01, 13.41,
  13.51, 13.58 for n = 64, 128, 256, 512) while the face-averaged one does (13.590, 13.567,
  13.562, 13.561). For smooth data both differ by O(h^2), the scheme's own order.
- **Interpolation**: the table is the rectilinear node grid ``[0, cell centres..., 2 pi]``
  in each axis (``n + 2`` nodes): interior nodes hold py-pde's cell values, boundary nodes
  the boundary function at the node (point values, so ``T`` equals the boundary condition
  on the boundary), each corner the mean of its two sides' values (the sides disagree at
  the corners, e.g. BC1 at ``(2 pi, 0)``: 0 vs ~3370). ``T`` is bilinear on this grid
  (``jax.scipy.interpolate.RegularGridInterpolator``, which jits, vmaps and differentiates
  inside the closure); outside the box (not part of the problem) it is continued linearly
  from the edge cells.
- **Optimum**: a bilinear interpolant attains its maximum over each cell at a vertex, so
  ``max T`` over the box is exactly the largest node value; ``optimal_value = -max`` and
  ``optimizer`` = that node. (The continuous boundary function may be larger between nodes,
  but the objective is the interpolant, and its optimum is what an optimizer can reach.)
  For all three sets the supremum of the boundary data is at a corner where the two sides
  disagree (BC1: ``T(x -> 2 pi, 0) -> 3374.6``; BC2: ``T(2 pi, y -> 2 pi) -> 880.3``; BC3:
  ``T(0, y -> 2 pi) -> 885.6``), so the optimum is the boundary node next to that corner and
  depends on the resolution: at n = 256, ``max T`` = 3323.82 at (2 pi - h/2, 0), 874.29 at
  (2 pi, 2 pi - h/2) and 876.54 at (0, 2 pi - h/2), ``h = 2 pi / n``.
- **Caches**: the cell solution is stored in ``$NBO_JAX_CACHE`` (if set) else
  ``~/.cache/nbo_jax``, file ``heat_bc{k}_n{n}_{version}.npz``; a missing, unreadable or
  inconsistent file is recomputed (and rewritten when the directory is writable). Solutions
  and problems are also cached in-process (keyed by the cache directory as well).
"""

from __future__ import annotations

import functools
import math
import os
import pathlib
import tempfile
import time
import warnings
from typing import Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.interpolate import RegularGridInterpolator

from nbo_jax import pde
from nbo_jax.types import Problem, make_bounds

from .constrained import parse_noise

LENGTH = 2.0 * math.pi
"""Side length of the square domain ``[0, 2 pi]^2``."""

DEFAULT_RESOLUTION = 256
"""Default number of py-pde cells per axis."""

SIDES = ("x-", "x+", "y-", "y+")
"""py-pde side names: ``x = 0``, ``x = 2 pi`` (functions of ``y``), ``y = 0``, ``y = 2 pi``
(functions of ``x``)."""

CACHE_VERSION = "v1"
"""Tag in the cache file names; bump when the solve or the data layout changes."""

_MIN_FACE_SAMPLES = 2**16  # samples per side for the face averages
_MIN_RESOLUTION, _MAX_RESOLUTION = 8, 2048

BOUNDARY_TEXT = {
    1: {"x-": "T(0, y) = 5 sin(y) + sqrt(1 + y)",
        "x+": "T(2pi, y) = y sin(3 cos(y) + 2 exp(y) sin(y))",
        "y-": "T(x, 0) = 10 cos(x) + x exp(sqrt(x^2 + sin(x)))",
        "y+": "T(x, 2pi) = 3 sqrt(max(exp(x exp(-x)) sin(x) + cos(3x)^2, 0))"},
    2: {"x-": "T(0, y) = sqrt(2y) sin(y) + y^3 cos(2y) + exp(cos(y))",
        "x+": "T(2pi, y) = sin(y) cos(2y) + y^3 sqrt(2y) + exp(sin(y))",
        "y-": "T(x, 0) = sin(x) cos(2x) + x^2 sqrt(3x) + exp(sin(x))",
        "y+": "T(x, 2pi) = exp(sin(x)) sqrt(3x) + x^2 cos(x) sin(x)^2 + exp(cos(x))"},
    3: {"x-": "T(0, y) = (sqrt(2y) + sin(y)) (cos(2y) + y^3) + exp(cos(y))",
        "x+": "T(2pi, y) = (sin(y) + cos(2y)) (sqrt(2y) + y^3) + exp(sin(y))",
        "y-": "T(x, 0) = (sin(x) + cos(2x)) sqrt(3x) + x^2 + exp(sin(x))",
        "y+": "T(x, 2pi) = (exp(sin(x)) + sqrt(3x)) cos(x) + (sin(x)^2 + x^2) exp(cos(x))"},
}
"""The boundary conditions as text (thesis Section 5.4.3.1, BC1 with the sides transposed)."""


def _bc1(side, s):
    if side == "x-":
        return 5 * np.sin(s) + np.sqrt(1 + s)
    if side == "x+":
        return s * np.sin(3 * np.cos(s) + 2 * np.exp(s) * np.sin(s))
    if side == "y-":
        return 10 * np.cos(s) + s * np.exp(np.sqrt(s**2 + np.sin(s)))
    return 3 * np.sqrt(np.maximum(np.exp(s * np.exp(-s)) * np.sin(s) + np.cos(3 * s) ** 2, 0.0))


def _bc2(side, s):
    if side == "y-":
        return np.sin(s) * np.cos(2 * s) + s**2 * np.sqrt(3 * s) + np.exp(np.sin(s))
    if side == "y+":
        return np.exp(np.sin(s)) * np.sqrt(3 * s) + s**2 * np.cos(s) * np.sin(s) ** 2 + np.exp(np.cos(s))
    if side == "x-":
        return np.sqrt(2 * s) * np.sin(s) + s**3 * np.cos(2 * s) + np.exp(np.cos(s))
    return np.sin(s) * np.cos(2 * s) + s**3 * np.sqrt(2 * s) + np.exp(np.sin(s))


def _bc3(side, s):
    if side == "y-":
        return (np.sin(s) + np.cos(2 * s)) * np.sqrt(3 * s) + s**2 + np.exp(np.sin(s))
    if side == "y+":
        return (np.exp(np.sin(s)) + np.sqrt(3 * s)) * np.cos(s) + (np.sin(s) ** 2 + s**2) * np.exp(np.cos(s))
    if side == "x-":
        return (np.sqrt(2 * s) + np.sin(s)) * (np.cos(2 * s) + s**3) + np.exp(np.cos(s))
    return (np.sin(s) + np.cos(2 * s)) * (np.sqrt(2 * s) + s**3) + np.exp(np.sin(s))


_BCS = {1: _bc1, 2: _bc2, 3: _bc3}


def _check_bc(boundary_conditions) -> int:
    if isinstance(boundary_conditions, bool) or not isinstance(boundary_conditions, (int, np.integer)) \
            or int(boundary_conditions) not in _BCS:
        raise ValueError(f"boundary_conditions must be 1, 2 or 3, got {boundary_conditions!r}")
    return int(boundary_conditions)


def _check_resolution(resolution) -> int:
    if isinstance(resolution, bool) or not isinstance(resolution, (int, np.integer)) \
            or not _MIN_RESOLUTION <= int(resolution) <= _MAX_RESOLUTION:
        raise ValueError(f"resolution must be an integer in [{_MIN_RESOLUTION}, {_MAX_RESOLUTION}], "
                         f"got {resolution!r}")
    return int(resolution)


def boundary_value(boundary_conditions: int, side: str, s) -> np.ndarray:
    """The Dirichlet boundary function of a set on one side, in numpy float64.

    Args:
        boundary_conditions: 1, 2 or 3 (thesis Section 5.4.3.1; BC1 transposed, module doc).
        side: ``"x-"`` (``T(0, s)``), ``"x+"`` (``T(2 pi, s)``), ``"y-"`` (``T(s, 0)``) or
            ``"y+"`` (``T(s, 2 pi)``).
        s: array-like of coordinates along the side, in ``[0, 2 pi]``, any shape.

    Returns:
        float64 array of the shape of ``s``.

    Raises:
        ValueError: unknown ``boundary_conditions`` or ``side``.
    """
    k = _check_bc(boundary_conditions)
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, got {side!r}")
    return np.asarray(_BCS[k](side, np.asarray(s, dtype=np.float64)), dtype=np.float64)


def _face_means(k: int, side: str, n: int) -> np.ndarray:
    """``(n,)`` mean of the boundary function over each boundary cell face (midpoint rule)."""
    per_cell = max(16, -(-_MIN_FACE_SAMPLES // n))
    h = LENGTH / n
    s = (np.arange(n)[:, None] + (np.arange(per_cell)[None, :] + 0.5) / per_cell) * h
    return boundary_value(k, side, s).mean(axis=1)


class HeatSolution(NamedTuple):
    """A solved boundary-condition set (read-only numpy float64 arrays).

    Attributes:
        boundary_conditions: 1, 2 or 3.
        resolution: ``n``, py-pde cells per axis.
        x, y: ``(n + 2,)`` node coordinates ``[0, cell centres..., 2 pi]`` (equal arrays).
        values: ``(n + 2, n + 2)`` node table, ``values[i, j] = T(x[i], y[j])``.
        cells: ``(n, n)`` py-pde's solution at the cell centres (``values[1:-1, 1:-1]``).
        faces: side -> ``(n,)`` Dirichlet data given to py-pde (face means).
        solve_seconds: wall time of the py-pde solve that produced ``cells`` (measured when
            it was solved, also when loaded from the cache).
        from_disk: whether ``cells`` was loaded from the disk cache.
        path: the cache file (``None`` when caching was not possible).
    """

    boundary_conditions: int
    resolution: int
    x: np.ndarray
    y: np.ndarray
    values: np.ndarray
    cells: np.ndarray
    faces: dict
    solve_seconds: float
    from_disk: bool
    path: Optional[str]


def cache_dir() -> pathlib.Path:
    """The disk cache directory: ``$NBO_JAX_CACHE`` if set (non-empty), else
    ``~/.cache/nbo_jax`` (not created here)."""
    env = os.environ.get("NBO_JAX_CACHE")
    return pathlib.Path(env).expanduser() if env else pathlib.Path("~/.cache/nbo_jax").expanduser()


def cache_path(boundary_conditions: int = 1, resolution: int = DEFAULT_RESOLUTION) -> pathlib.Path:
    """The cache file of a solve: ``cache_dir() / f"heat_bc{k}_n{n}_{CACHE_VERSION}.npz"``.

    Raises:
        ValueError: bad ``boundary_conditions`` or ``resolution``.
    """
    k, n = _check_bc(boundary_conditions), _check_resolution(resolution)
    return cache_dir() / _cache_name(k, n)


def _cache_name(k: int, n: int) -> str:
    return f"heat_bc{k}_n{n}_{CACHE_VERSION}.npz"


def _py_pde_solve(k: int, n: int, faces: dict) -> tuple[np.ndarray, float]:
    import pde as py_pde  # py-pde (the top-level package ``pde``), imported only when solving

    grid = py_pde.CartesianGrid([[0.0, LENGTH], [0.0, LENGTH]], [n, n])
    bc = {side: {"value": faces[side]} for side in SIDES}
    start = time.perf_counter()
    field = py_pde.solve_laplace_equation(grid, bc)
    seconds = time.perf_counter() - start
    return np.array(field.data, dtype=np.float64), seconds


def _load(path: pathlib.Path, n: int):
    try:
        with np.load(path, allow_pickle=False) as data:
            cells = np.array(data["cells"], dtype=np.float64)
            seconds = float(data["solve_seconds"])
            version = str(data["version"])
    except Exception:  # missing, truncated, not an npz, wrong keys: recompute
        return None
    if cells.shape != (n, n) or not np.all(np.isfinite(cells)) or version != CACHE_VERSION:
        return None
    return cells, seconds


def _save(path: pathlib.Path, cells: np.ndarray, seconds: float) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, cells=cells, solve_seconds=np.float64(seconds), version=np.str_(CACHE_VERSION))
            os.chmod(tmp, 0o644)  # mkstemp creates 0600; the cache is shareable
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        return True
    except OSError as err:
        warnings.warn(f"heat: could not write the cache file {path} ({err}); continuing without it",
                      RuntimeWarning, stacklevel=3)
        return False


def _node_table(k: int, n: int, cells: np.ndarray):
    h = LENGTH / n
    nodes = np.concatenate([[0.0], (np.arange(n) + 0.5) * h, [LENGTH]])
    values = np.empty((n + 2, n + 2))
    values[1:-1, 1:-1] = cells
    side = {s: boundary_value(k, s, nodes) for s in SIDES}  # each (n + 2,), incl. the corners
    values[0, 1:-1], values[-1, 1:-1] = side["x-"][1:-1], side["x+"][1:-1]
    values[1:-1, 0], values[1:-1, -1] = side["y-"][1:-1], side["y+"][1:-1]
    values[0, 0] = 0.5 * (side["x-"][0] + side["y-"][0])
    values[-1, 0] = 0.5 * (side["x+"][0] + side["y-"][-1])
    values[0, -1] = 0.5 * (side["x-"][-1] + side["y+"][0])
    values[-1, -1] = 0.5 * (side["x+"][-1] + side["y+"][-1])
    return nodes, values


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@functools.lru_cache(maxsize=None)
def _solve_cached(k: int, n: int, directory: str) -> HeatSolution:
    path = pathlib.Path(directory) / _cache_name(k, n)
    faces = {side: _readonly(_face_means(k, side, n)) for side in SIDES}
    loaded = _load(path, n)
    if loaded is None:
        cells, seconds = _py_pde_solve(k, n, faces)
        saved = _save(path, cells, seconds)
        from_disk = False
    else:
        (cells, seconds), saved, from_disk = loaded, True, True
    nodes, values = _node_table(k, n, cells)
    return HeatSolution(boundary_conditions=k, resolution=n, x=_readonly(nodes.copy()), y=_readonly(nodes.copy()),
                        values=_readonly(values), cells=_readonly(cells), faces=faces, solve_seconds=float(seconds),
                        from_disk=from_disk, path=str(path) if saved else None)


def solve(boundary_conditions: int = 1, resolution: int = DEFAULT_RESOLUTION) -> HeatSolution:
    """The ground-truth temperature of a boundary-condition set (py-pde, module doc).

    Solved once per ``(set, resolution, cache directory)``: loaded from the disk cache
    (:func:`cache_path`) when a valid file exists, else solved with py-pde and written there;
    kept in memory afterwards (the same object is returned).

    Args:
        boundary_conditions: 1, 2 or 3 (thesis Section 5.4.3.1).
        resolution: cells per axis ``n`` (8 to 2048); the solve costs about 0.3 s, 1.1 s,
            4 s and 16 s for n = 64, 128, 256, 512 on 2 CPU cores.

    Returns:
        :class:`HeatSolution` (node table ``(n + 2, n + 2)`` float64).

    Raises:
        ValueError: bad ``boundary_conditions`` or ``resolution``.
    """
    k, n = _check_bc(boundary_conditions), _check_resolution(resolution)
    return _solve_cached(k, n, str(cache_dir().resolve()))


def clear_memory_cache() -> None:
    """Forget the in-process solutions and problems (the disk cache is kept)."""
    _solve_cached.cache_clear()
    _build.cache_clear()


def interpolant(solution: HeatSolution) -> Callable[[jax.Array], jax.Array]:
    """The bilinear interpolant ``T: (2,) -> ()`` of a solution's node table.

    A jitted pure jnp function (vmap/grad/jit-compatible); computes in the input's floating dtype
    (float32 or float64; integer inputs as float32). Exact at the nodes; continued linearly
    outside ``[0, 2 pi]^2``.
    """
    nodes, values = solution.x, solution.values

    def temperature(x):
        x = jnp.asarray(x)
        dtype = jnp.promote_types(x.dtype, jnp.float32)
        grid = jnp.asarray(nodes, dtype)
        interp = RegularGridInterpolator((grid, grid), jnp.asarray(values, dtype), method="linear",
                                         fill_value=None)
        return interp(x.astype(dtype).reshape(1, 2))[0]

    return jax.jit(temperature)  # one compiled call when used eagerly; inlined under jit


def get(boundary_conditions: int = 1, resolution: int = DEFAULT_RESOLUTION, noise_std: float | str = 0.0,
        dim: Optional[int] = None) -> Problem:
    """The steady-state heat problem ``heat_bc{k}``: minimize ``f(x) = -T(x)`` on ``[0, 2 pi]^2``
    (Phan-Trong 2024, PhD thesis, Section 5.4.3.1).

    Args:
        boundary_conditions: 1, 2 or 3.
        resolution: py-pde cells per axis (default :data:`DEFAULT_RESOLUTION`).
        noise_std: a float ``>= 0`` or ``"paper"``: ``sqrt(0.01 * (f_max - f_min))`` with the
            range over the node table.
        dim: optional, must be 2.

    Returns:
        :class:`~nbo_jax.types.Problem` (cached: equal arguments give the same object) with
        ``objective: (2,) -> ()`` (input dtype), ``optimal_value = -max T`` (a float),
        ``optimizer (2,)`` float64, ``operator = lambda u: pde.laplacian(u)``,
        ``source = pde.constant(0.0)`` and ``metadata`` (source, boundary_conditions,
        resolution, pde, boundary_text, solver, solve_seconds).

    Raises:
        ValueError: ``boundary_conditions`` not in {1, 2, 3}, bad ``resolution``, ``dim`` not
            2, or bad ``noise_std``.
    """
    k, n = _check_bc(boundary_conditions), _check_resolution(resolution)
    if dim is not None and (isinstance(dim, bool) or dim != 2):
        raise ValueError(f"dim: the heat problems are defined for dim=2 (the square [0, 2pi]^2), got {dim!r}")
    noise = parse_noise(noise_std, "noise_std")
    return _build(k, n, noise, str(cache_dir().resolve()))


def _py_pde_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("py-pde")
    except metadata.PackageNotFoundError:  # pragma: no cover
        return "?"


def _laplace(u):
    return pde.laplacian(u)


@functools.lru_cache(maxsize=None)
def _build(k: int, n: int, noise, directory: str) -> Problem:
    solution = _solve_cached(k, n, directory)
    temperature = interpolant(solution)

    def objective(x):
        return -temperature(x)

    i, j = np.unravel_index(int(np.argmax(solution.values)), solution.values.shape)
    t_max, t_min = float(solution.values[i, j]), float(solution.values.min())
    if noise == "paper":
        noise = math.sqrt(0.01 * (t_max - t_min))  # f = -T: f_max - f_min = T_max - T_min
    metadata = {
        "source": "Phan-Trong 2024, PhD thesis, Section 5.4.3.1",
        "boundary_conditions": k,
        "resolution": n,
        "pde": "Laplace",
        "boundary_text": dict(BOUNDARY_TEXT[k]),
        "solver": f"py-pde {_py_pde_version()} solve_laplace_equation, {n}x{n} cells, face-averaged "
                  "Dirichlet data; bilinear interpolation on the node grid incl. the boundary",
        "solve_seconds": solution.solve_seconds,
        "t_range": (t_min, t_max),
    }
    return Problem(name=f"heat_bc{k}", dim=2, bounds=make_bounds(0.0, LENGTH, 2, name="heat bounds"),
                   objective=objective, noise_std=float(noise), optimal_value=-t_max,
                   optimizer=np.array([solution.x[i], solution.y[j]], dtype=np.float64),
                   operator=_laplace, source=pde.constant(0.0), metadata=metadata)


__all__ = ["get", "solve", "interpolant", "boundary_value", "cache_dir", "cache_path", "clear_memory_cache",
           "HeatSolution", "BOUNDARY_TEXT", "SIDES", "DEFAULT_RESOLUTION", "LENGTH", "CACHE_VERSION"]
