"""Steady-state heat benchmarks (thesis Section 5.4.3.1; SPEC.md section 5): the py-pde ground
truth, its boundary conditions (BC1 transposed), convergence, the JAX interpolant, the disk
cache, the optimum and the dispatch.

Resolution 64 (solve ~0.3 s) is used wherever fineness is not the point; all solves go to a
temporary NBO_JAX_CACHE directory.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from nbo_jax import benchmarks, pde
from nbo_jax.benchmarks import heat, pde_problems

TWO_PI = 2 * math.pi
BCS = (1, 2, 3)
N = 64


@pytest.fixture(scope="module", autouse=True)
def module_cache(tmp_path_factory):
    """One temporary disk cache for the module (tests needing their own override it)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NBO_JAX_CACHE", str(tmp_path_factory.mktemp("heat_cache")))
        yield
    heat.clear_memory_cache()


def _padded_with_ghosts(sol):
    """Cells padded with py-pde's Dirichlet ghost values ``2 * face - adjacent cell``."""
    c, f = sol.cells, sol.faces
    p = np.zeros((c.shape[0] + 2, c.shape[1] + 2))
    p[1:-1, 1:-1] = c
    p[0, 1:-1], p[-1, 1:-1] = 2 * f["x-"] - c[0], 2 * f["x+"] - c[-1]
    p[1:-1, 0], p[1:-1, -1] = 2 * f["y-"] - c[:, 0], 2 * f["y+"] - c[:, -1]
    return p


@pytest.mark.parametrize("k", BCS)
def test_solution_satisfies_the_discrete_laplace_equation(k):
    sol = heat.solve(k, N)
    v, scale = sol.values, np.abs(sol.values).max()
    assert sol.values.shape == (N + 2, N + 2) and sol.cells.shape == (N, N)
    np.testing.assert_array_equal(v[1:-1, 1:-1], sol.cells)
    # interior cells of the node grid (all four neighbours are cell centres): 5-point stencil
    r = v[1:-3, 2:-2] + v[3:-1, 2:-2] + v[2:-2, 1:-3] + v[2:-2, 3:-1] - 4 * v[2:-2, 2:-2]
    assert np.abs(r).max() / scale < 1e-12  # measured <= 6e-16 (n = 64), 1.1e-15 (n = 256)
    # every cell, with the Dirichlet ghost cells (checks the faces' orientation too)
    p = _padded_with_ghosts(sol)
    r_all = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * p[1:-1, 1:-1]
    assert np.abs(r_all).max() / scale < 1e-12
    # ... and it is not trivially satisfied: a perturbed field violates it
    bumped = p.copy()
    bumped[N // 2, N // 3] += 1e-3 * scale
    r_bad = bumped[:-2, 1:-1] + bumped[2:, 1:-1] + bumped[1:-1, :-2] + bumped[1:-1, 2:] - 4 * bumped[1:-1, 1:-1]
    assert np.abs(r_bad).max() / scale > 1e-4


def _on_side(side, s):
    s = np.asarray(s, dtype=np.float64)
    return {"x-": np.stack([np.zeros_like(s), s], -1), "x+": np.stack([np.full_like(s, TWO_PI), s], -1),
            "y-": np.stack([s, np.zeros_like(s)], -1), "y+": np.stack([s, np.full_like(s, TWO_PI)], -1)}[side]


@pytest.mark.usefixtures("x64")
@pytest.mark.parametrize("k", BCS)
def test_interpolated_boundary_equals_the_boundary_function(k):
    sol = heat.solve(k, N)
    T = jax.jit(jax.vmap(heat.interpolant(sol)))
    nodes = sol.x
    for side in heat.SIDES:
        g = lambda s: heat.boundary_value(k, side, s)
        # at the boundary nodes (corners excluded: there the two sides are averaged)
        s = nodes[1:-1]
        np.testing.assert_allclose(np.asarray(T(_on_side(side, s))), g(s), rtol=1e-12, atol=1e-12)
        # between boundary nodes: the linear-interpolation error bound h^2/8 max|g''|
        keep = np.nonzero((nodes[:-1] > 0.3) & (nodes[1:] < TWO_PI - 0.3))[0]
        a, b = nodes[keep], nodes[keep + 1]
        m = 0.5 * (a + b)
        fine = a[:, None] + (b - a)[:, None] * np.linspace(0, 1, 801)[None, :]
        step = (b - a)[:, None] / 800
        g2 = np.abs(np.diff(g(fine), 2, axis=1) / step**2).max(axis=1)
        err = np.abs(np.asarray(T(_on_side(side, m))) - g(m))
        bound = 1.05 * (b - a) ** 2 / 8 * g2 + 1e-9 * np.abs(g(m)).max()
        assert np.all(err <= bound), (k, side, float(np.max(err - bound)))
    # the corners hold the mean of the two sides
    corner = lambda sx, sy, px, py: 0.5 * (heat.boundary_value(k, sx, py) + heat.boundary_value(k, sy, px))
    assert float(T(jnp.array([[0.0, 0.0]]))[0]) == pytest.approx(corner("x-", "y-", 0.0, 0.0))
    assert float(T(jnp.array([[TWO_PI, TWO_PI]]))[0]) == pytest.approx(corner("x+", "y+", TWO_PI, TWO_PI))


@pytest.mark.usefixtures("x64")
def test_bc1_is_transposed_and_its_negative_square_root_is_clamped():
    sol = heat.solve(1, N)
    T = jax.vmap(heat.interpolant(sol))
    y = sol.y[1:-1]
    # the function of y sits on the side x = 0, the function of x on the side y = 0
    np.testing.assert_allclose(np.asarray(T(_on_side("x-", y))), 5 * np.sin(y) + np.sqrt(1 + y), rtol=1e-12)
    x = sol.x[1:-1]
    np.testing.assert_allclose(np.asarray(T(_on_side("y-", x))),
                               10 * np.cos(x) + x * np.exp(np.sqrt(x**2 + np.sin(x))), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(T(_on_side("x+", y))),
                               y * np.sin(3 * np.cos(y) + 2 * np.exp(y) * np.sin(y)), rtol=1e-9, atol=1e-9)
    # the printed labels (the function of y on y = 0) would not match
    assert not np.allclose(np.asarray(T(_on_side("y-", x))), 5 * np.sin(x) + np.sqrt(1 + x), rtol=1e-3)
    # T(x, 2 pi) = 3 sqrt(arg) where arg >= 0 and 0 where the printed argument is negative
    s = np.linspace(0.0, TWO_PI, 100_001)
    arg = np.exp(s * np.exp(-s)) * np.sin(s) + np.cos(3 * s) ** 2
    top = heat.boundary_value(1, "y+", s)
    assert np.all(np.isfinite(top)) and arg.min() < -1.0 and 0.3 < np.mean(arg < 0) < 0.4
    np.testing.assert_array_equal(top[arg < 0], 0.0)
    np.testing.assert_allclose(top[arg >= 0], 3 * np.sqrt(arg[arg >= 0]), rtol=1e-14)
    assert heat.boundary_value(1, "y+", 1.5 * math.pi) == 0.0
    # no other square-root argument is negative on [0, 2 pi]
    for k in BCS:
        for side in heat.SIDES:
            assert np.all(np.isfinite(heat.boundary_value(k, side, s)))


INTERIOR = np.array([[math.pi, math.pi], [1, 1], [5, 5], [5, 1], [1, 5], [3, 0.5], [5.8, 3], [0.5, 3], [3, 5.8]])


@pytest.mark.usefixtures("x64")
@pytest.mark.parametrize("k", BCS)
def test_discretization_error_shrinks(k):
    def at(n):
        return np.asarray(jax.vmap(heat.interpolant(heat.solve(k, n)))(jnp.asarray(INTERIOR)))

    t64, t128 = at(64), at(128)
    scale = np.abs(heat.solve(k, 128).values).max()
    d1 = np.abs(t64 - t128).max()
    # measured 3.9e-5 (BC1), 4.1e-5 (BC2), 4.5e-5 (BC3) of max |T|
    assert d1 / scale < 1e-4, d1 / scale
    if k == 1:  # BC1 has the oscillating side; its error halves at least (measured ratio 4.4)
        d2 = np.abs(t128 - at(256)).max()
        assert d2 < 0.5 * d1, (d1, d2)


@pytest.mark.usefixtures("x64")
def test_interpolant_nodes_transformations_and_operator():
    p = heat.get(2, N)
    sol = heat.solve(2, N)
    T = heat.interpolant(sol)
    rng = np.random.default_rng(0)
    i, j = rng.integers(0, N + 2, size=(2, 200))
    pts = jnp.asarray(np.stack([sol.x[i], sol.y[j]], -1))
    np.testing.assert_array_equal(np.asarray(jax.jit(jax.vmap(T))(pts)), sol.values[i, j])
    np.testing.assert_array_equal(np.asarray(jax.vmap(p.objective)(pts)), -sol.values[i, j])
    # grad inside a cell equals the central difference (bilinear: exact up to rounding)
    x = jnp.array([2.0123, 3.4567])
    g = np.asarray(jax.jit(jax.grad(p.objective))(x))
    eps = 1e-6
    fd = [(float(p.objective(x + eps * e)) - float(p.objective(x - eps * e))) / (2 * eps) for e in jnp.eye(2)]
    np.testing.assert_allclose(g, fd, rtol=1e-6)
    gb = np.asarray(jax.vmap(jax.grad(p.objective))(jnp.asarray(rng.uniform(0, TWO_PI, (50, 2)))))
    assert gb.shape == (50, 2) and np.all(np.isfinite(gb))
    # dtype follows the input
    assert p.objective(jnp.array([1.0, 2.0], jnp.float32)).dtype == jnp.float32
    assert p.objective(jnp.array([1.0, 2.0], jnp.float64)).dtype == jnp.float64
    assert float(p.objective(jnp.array([1.0, 2.0], jnp.float32))) == pytest.approx(
        float(p.objective(jnp.array([1.0, 2.0]))), rel=1e-6)
    # the operator is the Laplacian, the source 0: exact on closed forms, and the PDE holds
    # for the (cellwise bilinear) objective
    assert float(p.operator(lambda z: jnp.exp(z[0]) * jnp.sin(z[1]))(x)) == pytest.approx(0.0, abs=1e-12)
    assert float(p.operator(lambda z: z[0] ** 2 + 3 * z[1] ** 2)(x)) == pytest.approx(8.0)
    assert float(p.source(x)) == 0.0
    res = jax.jit(jax.vmap(pde.residual(p.operator, p.source)(p.objective)))
    assert np.abs(np.asarray(res(jnp.asarray(rng.uniform(0.1, TWO_PI - 0.1, size=(100, 2)))))).max() < 1e-9


def test_disk_cache_roundtrip_and_corrupt_file(tmp_path, monkeypatch):
    monkeypatch.setenv("NBO_JAX_CACHE", str(tmp_path))
    path = heat.cache_path(3, N)
    assert path == tmp_path / f"heat_bc3_n{N}_{heat.CACHE_VERSION}.npz" and not path.exists()
    first = heat.solve(3, N)
    assert path.exists() and not first.from_disk and first.path == str(path.resolve())
    assert heat.solve(3, N) is first  # in-process cache
    heat.clear_memory_cache()
    second = heat.solve(3, N)
    assert second.from_disk and second is not first
    np.testing.assert_array_equal(second.values, first.values)
    assert second.solve_seconds == first.solve_seconds  # the time of the original solve
    for garbage in (b"not an npz file", b""):
        path.write_bytes(garbage)
        heat.clear_memory_cache()
        third = heat.solve(3, N)
        assert not third.from_disk
        np.testing.assert_array_equal(third.values, first.values)
        with np.load(path) as data:  # rewritten, valid again
            np.testing.assert_array_equal(data["cells"], first.cells)
    # a file of the wrong resolution under this name is recomputed too
    np.savez(path, cells=np.zeros((8, 8)), solve_seconds=0.0, version=heat.CACHE_VERSION)
    heat.clear_memory_cache()
    assert not heat.solve(3, N).from_disk
    heat.clear_memory_cache()


@pytest.mark.usefixtures("x64")
@pytest.mark.parametrize("k", BCS)
def test_optimum_is_the_maximum_of_the_interpolant(k):
    p = heat.get(k, N)
    f = jax.jit(jax.vmap(p.objective))
    x = np.random.default_rng(k).uniform(0.0, TWO_PI, size=(10_000, 2))
    fx = np.asarray(f(jnp.asarray(x)))
    scale = abs(p.optimal_value)
    assert np.all(fx >= p.optimal_value - 1e-12 * scale)
    assert float(p.objective(jnp.asarray(p.optimizer))) == pytest.approx(p.optimal_value, rel=1e-6)
    assert p.optimal_value == -float(heat.solve(k, N).values.max())
    assert np.all(p.optimizer >= 0.0) and np.all(p.optimizer <= TWO_PI) and p.optimizer.shape == (2,)


def test_problem_fields_dispatch_and_errors():
    p = heat.get(1, N)
    assert p.name == "heat_bc1" and p.dim == 2 and p.noise_std == 0.0
    np.testing.assert_array_equal(p.bounds.lower, [0.0, 0.0])
    np.testing.assert_array_equal(p.bounds.upper, [TWO_PI, TWO_PI])
    assert p.metadata["boundary_conditions"] == 1 and p.metadata["resolution"] == N
    assert p.metadata["pde"] == "Laplace" and "5.4.3.1" in p.metadata["source"]
    assert p.metadata["boundary_text"]["x-"].startswith("T(0, y) = 5 sin(y)")
    # dispatch: every spelling gives the same cached problem
    assert benchmarks.get("heat", resolution=N) is p
    assert benchmarks.get("heat_bc1", resolution=N) is p
    assert benchmarks.get("Heat-BC1", dim=2, resolution=N) is p
    assert pde_problems.get("heat", boundary_conditions=1, resolution=N) is p
    assert benchmarks.get("heat", boundary_conditions=2, resolution=N) is heat.get(2, N)
    assert benchmarks.get("heat_bc3", boundary_conditions=3, resolution=N).name == "heat_bc3"
    assert pde_problems.available()[-3:] == ["heat_bc1", "heat_bc2", "heat_bc3"]
    assert benchmarks.pde_problems.available()[-3:] == benchmarks.available()[-3 - len(benchmarks.TASKS):-len(benchmarks.TASKS)]
    # paper noise: the variance is 1% of the range of f over the node table
    q = benchmarks.get("heat", boundary_conditions=2, resolution=N, noise_std="paper")
    v = heat.solve(2, N).values
    assert q.noise_std == pytest.approx(math.sqrt(0.01 * (v.max() - v.min())))
    assert heat.get(2, N, noise_std=0.5).noise_std == 0.5
    # errors name the argument
    with pytest.raises(ValueError, match="boundary_conditions"):
        benchmarks.get("heat", boundary_conditions=4)
    with pytest.raises(ValueError, match="boundary_conditions"):
        heat.get(0)
    with pytest.raises(ValueError, match="boundary_conditions"):
        benchmarks.get("heat_bc2", boundary_conditions=3)
    with pytest.raises(ValueError, match="boundary_conditions"):
        benchmarks.get("beam", boundary_conditions=1)
    with pytest.raises(ValueError, match="dim"):
        benchmarks.get("heat", dim=3, resolution=N)
    with pytest.raises(ValueError, match="noise_std"):
        benchmarks.get("heat", resolution=N, noise_std=-1.0)
    with pytest.raises(ValueError, match="noise_std"):
        benchmarks.get("heat", resolution=N, noise_std="huge")
    with pytest.raises(ValueError, match="resolution"):
        benchmarks.get("heat", resolution=3)
    with pytest.raises(ValueError, match="side"):
        heat.boundary_value(1, "left", 0.0)
    with pytest.raises(ValueError, match="name"):
        benchmarks.get("heat_bc4")
