"""nbo_jax.benchmarks.multi_objective: shapes and Problem fields of every problem, known
Pareto-optimal points on the true front, values at fixed points computed by hand from the
papers' formulas, the hypervolume of a dense sample of the true front approaching
``max_hypervolume`` from below, C2-DTLZ2's constraint sign (c <= 0 feasible), and the
Problem fields' checks."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import nbo_jax as nbo
from nbo_jax import pareto
from nbo_jax.benchmarks import multi_objective as mo
from nbo_jax.types import Problem, make_bounds


@pytest.mark.parametrize("name", sorted(mo.PROBLEMS))
def test_problem_table(x64, name):
    p = mo.PROBLEMS[name]()
    m = p.n_objectives
    assert len(p.reference_point) == m and all(isinstance(v, float) for v in p.reference_point)
    x = np.random.default_rng(0).uniform(p.bounds.lower, p.bounds.upper, (5, p.dim))
    y = p(jnp.asarray(x))
    assert y.shape == (5, m) and bool(jnp.all(jnp.isfinite(y)))
    np.testing.assert_allclose(y[2], p.objective(jnp.asarray(x[2])), rtol=1e-14)
    if p.max_hypervolume is not None:  # random points never beat the true front
        assert float(pareto.hypervolume(y, jnp.asarray(p.reference_point))) < p.max_hypervolume


def test_pareto_optimal_points_lie_on_the_front(x64):
    t = jnp.linspace(0.0, 1.0, 7)
    for m in (2, 3):
        X = jnp.full((7, 6), 0.5).at[:, 0].set(t).at[:, 1].set(t[::-1] if m == 3 else 0.5)
        np.testing.assert_allclose(jnp.sum(mo.dtlz2(n_objectives=m)(X) ** 2, axis=1), 1.0, rtol=1e-14)
        np.testing.assert_allclose(jnp.sum(mo.dtlz1(n_objectives=m)(X), axis=1), 0.5, rtol=1e-12)
    X = jnp.zeros((7, 6)).at[:, 0].set(t)
    for builder, front in [(mo.zdt1, lambda f: 1 - jnp.sqrt(f)), (mo.zdt2, lambda f: 1 - f ** 2),
                           (mo.zdt3, lambda f: 1 - jnp.sqrt(f) - f * jnp.sin(10 * math.pi * f))]:
        Y = builder()(X)
        np.testing.assert_allclose(Y[:, 0], t, rtol=0, atol=0)
        np.testing.assert_allclose(Y[:, 1], front(t), rtol=1e-14, atol=1e-15)


def test_values_by_hand(x64):
    # Branin-Currin at (0.5, 0.5): Branin at (2.5, 7.5); Currin (1 - e^-1) * 1868.5 / 159.5
    b, c = 5.1 / (4 * math.pi ** 2), 5 / math.pi
    branin = (7.5 - b * 6.25 + c * 2.5 - 6) ** 2 + 10 * (1 - 1 / (8 * math.pi)) * math.cos(2.5) + 10
    np.testing.assert_allclose(mo.branin_currin()(jnp.array([0.5, 0.5])),
                               [branin, (1 - math.exp(-1)) * 1868.5 / 159.5], rtol=1e-14)
    # DTLZ1 (d = 6, m = 2) at (0.3, 0.6, 0.5, ...): g = 100 (5 + 0.01 - 5) = 1, f = (0.3, 0.7)
    np.testing.assert_allclose(mo.dtlz1()(jnp.array([0.3, 0.6, 0.5, 0.5, 0.5, 0.5])), [0.3, 0.7], rtol=1e-10)
    # DTLZ2 (m = 2) at (1/3, 0.7, 0.5, ...): g = 0.04, f = 1.04 (cos 30deg, sin 30deg)
    np.testing.assert_allclose(mo.dtlz2()(jnp.array([1 / 3, 0.7, 0.5, 0.5, 0.5, 0.5])),
                               [1.04 * math.sqrt(3) / 2, 0.52], rtol=1e-14)
    # DTLZ2 (m = 3) at x = 0.5: (cos^2 45deg, cos 45deg sin 45deg, sin 45deg)
    np.testing.assert_allclose(mo.dtlz2(n_objectives=3)(jnp.full(6, 0.5)), [0.5, 0.5, math.sqrt(0.5)], rtol=1e-14)
    # ZDT1 (d = 6) at (0.25, 0.5, 0, ...): g = 1 + 9 * 0.5 / 5 = 1.9
    np.testing.assert_allclose(mo.zdt1()(jnp.array([0.25, 0.5, 0, 0, 0, 0])),
                               [0.25, 1.9 * (1 - math.sqrt(0.25 / 1.9))], rtol=1e-14)
    # Vehicle Safety at x = 1: the sums of each response surface's coefficients
    np.testing.assert_allclose(
        mo.vehicle_safety()(jnp.ones(5)),
        [1640.2823 + 2.3573285 + 2.3220035 + 4.5688768 + 7.7213633 + 4.4559504,
         6.5856 + 1.15 - 1.0427 + 0.9738 + 0.8364 - 0.3695 + 0.0861 + 0.3628 - 0.1106 - 0.3437 + 0.1764,
         -0.0551 + 0.0181 + 0.1024 + 0.0421 - 0.0073 + 0.024 - 0.0118 - 0.0204 - 0.008 - 0.0241 + 0.0109],
        rtol=1e-12)


def test_c2dtlz2_constraint_sign(x64):
    p = mo.c2dtlz2()
    assert p.n_constraints == 1 and p.metadata["radius"] == 0.2
    # on DTLZ2's front at angles 0, pi/8, pi/4: distances^2 to e_1 / the centre are 0, 2 - 2 cos(pi/8), 0
    X = jnp.full((3, 6), 0.5).at[:, 0].set(jnp.array([0.0, 0.25, 0.5]))
    c = p.constraint_values(X)[:, 0]
    np.testing.assert_allclose(c, [-0.04, 2 - 2 * math.cos(math.pi / 8) - 0.04, -0.04], rtol=1e-12, atol=1e-15)
    # off the front (g = 0.25 at angle 0): (1.25 - 1)^2 - r^2 = 0.0225 > 0, infeasible
    np.testing.assert_allclose(p.constraint_values(jnp.array([0.0, 0.0, 0.5, 0.5, 0.5, 0.5]))[0], 0.0625 - 0.04,
                               rtol=1e-12)
    p3 = mo.c2dtlz2(n_objectives=3)  # f = e_3 at x_0 = 1: feasible, c = -0.4^2
    np.testing.assert_allclose(p3.constraint_values(jnp.array([1.0, 0.3, 0.5, 0.5, 0.5, 0.5])), [-0.16], atol=1e-12)


def _front_hypervolume(p, X, mask=None):
    return float(pareto.hypervolume(p(jnp.asarray(X)), jnp.asarray(p.reference_point), mask))


@pytest.mark.parametrize("name", ["dtlz1", "dtlz2", "zdt1", "zdt2", "zdt3", "c2dtlz2"])
def test_dense_front_approaches_max_hypervolume(x64, name):
    p = mo.PROBLEMS[name]()
    t = np.linspace(0.0, 1.0, 300)
    X = np.full((300, 6), 0.0 if name.startswith("zdt") else 0.5)
    X[:, 0] = t
    mask = None
    if name == "c2dtlz2":
        mask = p.constraint_values(jnp.asarray(X))[:, 0] <= 0
        assert 0.2 < float(jnp.mean(mask)) < 0.8
    hv = _front_hypervolume(p, X, mask)
    assert 0.99 * p.max_hypervolume < hv < p.max_hypervolume


def test_dense_front_three_objectives(x64):
    g = np.linspace(0.0, 1.0, 30)
    X = np.full((900, 6), 0.5)
    X[:, 0], X[:, 1] = np.repeat(g, 30), np.tile(g, 30)
    p = mo.dtlz2(n_objectives=3)
    hv = _front_hypervolume(p, X)
    assert 0.97 * p.max_hypervolume < hv < p.max_hypervolume  # 900 points: the staircase's gap is ~2.7%
    p = mo.dtlz1(n_objectives=3)
    assert 0.99 * p.max_hypervolume < _front_hypervolume(p, X) < p.max_hypervolume


def test_problem_fields():
    scalar = nbo.benchmarks.get("branin")
    assert scalar.n_objectives == 1 and scalar.reference_point is None and scalar.max_hypervolume is None
    f = lambda x: jnp.stack([x[0], 1 - x[0]])
    p = Problem("two", 1, make_bounds(0.0, 1.0, 1), f, reference_point=[2, 2], max_hypervolume=3)
    assert p.n_objectives == 2 and p.reference_point == (2.0, 2.0) and p.max_hypervolume == 3.0
    with pytest.raises(ValueError, match=r"Problem.reference_point must be 2 finite floats"):
        Problem("two", 1, make_bounds(0.0, 1.0, 1), f, reference_point=(1.0, 2.0, 3.0))
    with pytest.raises(ValueError, match=r"Problem.reference_point"):
        Problem("two", 1, make_bounds(0.0, 1.0, 1), f, reference_point=(1.0, float("nan")))
    with pytest.raises(ValueError, match=r"Problem.max_hypervolume must be a finite float > 0"):
        Problem("two", 1, make_bounds(0.0, 1.0, 1), f, max_hypervolume=-1.0)
    with pytest.raises(ValueError, match=r"dtlz2: dim must be an int >= 3"):
        mo.dtlz2(dim=2)
    with pytest.raises(ValueError, match=r"c2dtlz2: n_objectives must be \(2, 3\)"):
        mo.c2dtlz2(n_objectives=4)
    with pytest.raises(ValueError, match=r"zdt1: dim must be an int >= 2"):
        mo.zdt1(dim=1)
    assert jax.eval_shape(mo.dtlz2(n_objectives=3), jax.ShapeDtypeStruct((4, 2, 6), jnp.float32)).shape == (4, 2, 3)
