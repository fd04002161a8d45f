"""PDE benchmark problems: each stated PDE holds for its objective (float64)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from nbo_jax import pde
from nbo_jax.benchmarks import pde_problems

pytestmark = pytest.mark.usefixtures("x64")

INTERIOR = {"michalewicz_pde": (0.1, 3.0)}  # h is singular where tan vanishes (box ends)


@pytest.mark.parametrize("name", pde_problems.available())
def test_stated_pde_holds_for_the_objective(name):
    problem = pde_problems.get(name)
    lo, hi = INTERIOR.get(name, (problem.bounds.lower, problem.bounds.upper))
    rng = np.random.default_rng(0)
    lhs = pde.Field(problem.operator(problem.objective))
    res = pde.residual(problem.operator, problem.source)(problem.objective)
    for x in rng.uniform(lo, hi, size=(20, problem.dim)):
        x = jnp.asarray(x)
        rel = np.max(np.abs(np.asarray(res(x)))) / (1.0 + np.max(np.abs(np.asarray(lhs(x)))))
        assert rel < 1e-6, (name, rel)
    # the residual is not trivially zero: a perturbed objective violates the PDE
    bumped = lambda x: problem.objective(x) + jnp.sum(x**3) * 0.1
    bad = pde.residual(problem.operator, problem.source)(bumped)
    x = jnp.asarray(rng.uniform(lo, hi, size=problem.dim))
    assert np.max(np.abs(np.asarray(bad(x)))) > 1e-3


def test_beam_closed_form_satisfies_its_ode_where_rho_is_not_zero():
    rho_from_w = pde.partial(pde_problems.beam_w, 0, 2)
    ts = np.linspace(0.0, 1.0, 401)
    at_ts = lambda f: np.asarray(jax.jit(jax.vmap(lambda t: f(t[None])))(jnp.asarray(ts)))
    rho, rho_w = at_ts(pde_problems.beam_rho), at_ts(rho_from_w)
    assert np.all(np.abs(rho - rho_w) <= np.maximum(1e-9 * np.abs(rho_w), 1e-7))
    EI = pde.Field(lambda x: jnp.exp(x[0]) / pde_problems.beam_rho(x))
    original = at_ts(pde.partial(EI * pde.partial(pde_problems.beam_w, 0, 2), 0, 2))
    # on [0, 0.5] (the fourth derivatives grow like (8 pi e^{2x})^4, ~1e9 at x = 1, and the
    # quotient form cancels them down to q ~ 1) and away from the zeros of rho
    checked = (ts <= 0.5) & (np.abs(rho) > 1.0)
    assert checked.sum() > 150
    np.testing.assert_allclose(original[checked], np.exp(ts[checked]), rtol=1e-6, atol=0)
    # rho has zeros in [0, 1] (why the division-free form is used)
    assert np.any(np.diff(np.sign(rho)) != 0)


def test_problem_fields_and_errors():
    p = pde_problems.get("rastrigin_pde", noise_std="paper")
    assert p.dim == 20 and p.optimal_value == 0.0 and p.noise_std > 0
    assert pde_problems.get("rastrigin_pde", noise_std="paper") is p
    beam = pde_problems.get("beam")
    grid = jnp.linspace(0, 1, 2001)[:, None]
    assert beam.optimal_value <= float(jnp.min(jax.vmap(beam.objective)(grid))) + 1e-12
    assert float(beam.objective(jnp.asarray(beam.optimizer))) == pytest.approx(beam.optimal_value)
    with pytest.raises(ValueError, match="dim"):
        pde_problems.get("drop_wave_pde", dim=3)
    with pytest.raises(ValueError, match="unknown PDE problem"):
        pde_problems.get("heat9")


def test_dispatch_through_benchmarks_get():
    from nbo_jax import benchmarks

    assert benchmarks.get("beam") is pde_problems.get("beam")
    assert benchmarks.get("drop-wave-pde", dim=2) is pde_problems.get("drop_wave_pde")
    assert "michalewicz_pde" in benchmarks.available()
