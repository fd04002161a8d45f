"""Constraints in run_bo, History, analysis and comparisons (SPEC.md section 0)."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import nbo_jax as nbo
from nbo_jax import analysis, comparison

CON = lambda x: jnp.array([x[0] + x[1] - 1.0, 0.25 - x[0] ** 2])


def _problem(noise=0.0, cnoise=0.0):
    base = nbo.benchmarks.get("branin")
    return dataclasses.replace(base, constraints=CON, noise_std=noise, constraint_noise_std=cnoise)


def _reference_metric(f, c, fstar):
    """Written from the definition: running minimum of ([f - f*]^+ + sum_k [c_k]^+)."""
    out = np.empty_like(f)
    best = np.inf
    for t in range(f.shape[0]):
        best = min(best, max(f[t] - fstar, 0.0) + np.sum(np.maximum(c[t], 0.0)))
        out[t] = best
    return out


def test_history_records_constraints_and_metric(x64):
    problem = _problem(noise=0.5, cnoise=(0.1, 0.2))
    hist = nbo.run_bo(jax.random.key(0), nbo.random_search(), problem, n_init=4, n_iter=20)
    x = np.asarray(hist.x)
    c_true = np.stack([x[:, 0] + x[:, 1] - 1.0, 0.25 - x[:, 0] ** 2], axis=1)
    np.testing.assert_allclose(hist.c_true, c_true, rtol=1e-12)
    # observed = true + independent noise with the per-constraint std
    resid = np.asarray(hist.c) - c_true
    assert np.all(resid[:, 0] != 0) and np.std(resid[:, 1]) > np.std(resid[:, 0])
    feasible = np.all(c_true <= 0, axis=1)
    np.testing.assert_array_equal(hist.feasible, feasible)
    f = np.asarray(hist.f)
    expect_bff = np.minimum.accumulate(np.where(feasible, f, np.inf))
    np.testing.assert_array_equal(hist.best_feasible_f, expect_bff)
    fstar = 0.397887
    ref = _reference_metric(f, c_true, fstar)
    np.testing.assert_allclose(hist.regret_plus_violation(fstar), ref, rtol=1e-12)
    np.testing.assert_allclose(analysis.regret_plus_violation(hist.f, hist.c_true, fstar), ref, rtol=1e-12)
    np.testing.assert_allclose(hist.violation(), np.sum(np.maximum(c_true, 0), 1), rtol=1e-12)


def test_unconstrained_history_has_no_constraint_fields():
    hist = nbo.run_bo(jax.random.key(0), nbo.random_search(), nbo.benchmarks.get("branin"), 3, 2)
    assert hist.c is None and hist.feasible is None
    np.testing.assert_allclose(hist.regret_plus_violation(0.397887), np.maximum(hist.best_f - 0.397887, 0.0), rtol=1e-6)


def test_constraint_noise_validation():
    with pytest.raises(ValueError, match="constraint_noise_std"):
        nbo.run_bo(jax.random.key(0), nbo.random_search(), _problem(cnoise=(0.1, 0.2, 0.3)), 3, 1)
    with pytest.raises(ValueError, match="constraint_noise_std"):
        nbo.run_bo(jax.random.key(0), nbo.random_search(), _problem(cnoise=-1.0), 3, 1)


def test_nan_constraint_is_flagged_and_reported():
    base = nbo.benchmarks.get("branin")
    problem = dataclasses.replace(base, constraints=lambda x: jnp.array([jnp.where(x[0] > 2.5, jnp.nan, -1.0)]))
    with pytest.warns(RuntimeWarning, match="NaN"):
        hist = nbo.run_bo(jax.random.key(0), nbo.random_search(), problem, 4, 10)
    np.testing.assert_array_equal(hist.valid, np.asarray(hist.x[:, 0]) <= 2.5)


def test_analysis_files_and_comparison_use_the_constrained_metric(tmp_path):
    problem = _problem(noise=0.1, cnoise=0.05)
    fstar = 0.397887
    problem = dataclasses.replace(problem, optimal_value=fstar)
    res = comparison.compare(problem, {"random": nbo.random_search(), "random2": nbo.random_search()},
                             n_init=3, n_iter=12, seeds=4, progress=False, verbose=False)
    assert res.metric == "log10 best positive regret plus violation"
    h = res.histories["random"]
    raw = analysis.regret_plus_violation(h["f"], h["c_true"], fstar)[:, -1]
    np.testing.assert_allclose(res.final["random"], np.log10(np.maximum(raw, comparison.LOG_FLOOR)))
    paths = comparison.save(res, tmp_path)
    loaded, record = analysis.load_results(tmp_path)
    np.testing.assert_array_equal(loaded["random"]["c_true"], h["c_true"])
    np.testing.assert_array_equal(loaded["random"]["feasible"], h["feasible"])
    assert "regret plus violation" in record["metric"]
    np.testing.assert_allclose(analysis.final_values(loaded, fstar)["random"], raw)
    assert "Table 4.2" in paths["welch_md"].read_text()
    assert "log10 best positive regret plus violation" in paths["summary_md"].read_text()
    # a constrained algorithm needs a constrained problem, checked before anything runs
    with pytest.raises(ValueError, match="has none"):
        comparison.compare(nbo.benchmarks.get("branin"), {"cbo": nbo.neural_cbo(width=8)},
                           n_init=3, n_iter=2, seeds=3, progress=False, verbose=False)


def test_cli_compare_on_a_constrained_problem(tmp_path, capsys):
    from nbo_jax.cli import main

    out = tmp_path / "cmp"
    code = main(["compare", "--problem", "branin_constrained", "--algorithms", "neural-cbo,cei,random",
                 "--n-init", "3", "--iterations", "3", "--seeds", "3", "--out", str(out),
                 "--option", "neural-cbo.width=8", "--option", "neural-cbo.acq_optimizer={'raw_samples': 32}",
                 "--option", "gp-cei.acq_optimizer={'raw_samples': 32, 'steps': 2}",
                 "--option", "gp-cei.fit_steps=5"])
    assert code == 0
    histories, record = analysis.load_results(out)
    assert list(histories) == ["neural-cbo", "gp-cei", "random"]
    assert histories["gp-cei"]["c"].shape == (3, 6, 1)
    assert "Table 4.2" in (out / "table_welch.md").read_text()
    # a constrained algorithm on an unconstrained problem: exit code 2 naming the option
    with pytest.raises(SystemExit) as exc:
        main(["compare", "--problem", "branin", "--algorithms", "neural-cbo,random", "--seeds", "3",
              "--out", str(tmp_path / "bad")])
    assert exc.value.code == 2
    assert "--algorithms" in capsys.readouterr().err
