"""nbo-jax run / compare / plot on a problem of two objectives (Branin-Currin, tiny sizes): the
hypervolume-regret tables against values recomputed from the saved histories, the Welch test
on them, and the Pareto-front files."""

import json

import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from nbo_jax import analysis, benchmarks, comparison, pareto
from nbo_jax.cli import main

ARGS = ["--problem", "branin_currin", "--seeds", "3", "--n-init", "6", "--iterations", "2"]


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    out = tmp_path_factory.mktemp("mo") / "cmp"
    assert main(["compare", *ARGS, "--algorithms", "random", "--out", str(out)]) == 0
    return out


def _log_hv_difference(f, valid):
    """Final log10(HV* - HV) per seed, from the noise-free objectives of the whole run."""
    problem = benchmarks.get("branin_currin")
    ref = jnp.asarray(problem.reference_point)
    hv = np.array([float(pareto.hypervolume(jnp.asarray(fs), ref, jnp.asarray(v))) for fs, v in zip(f, valid)])
    return np.asarray(pareto.log_hypervolume_difference(hv, problem.max_hypervolume))


def test_compare_tables_are_the_log_hypervolume_difference_of_the_histories(compared):
    hist = analysis.load_results(compared)[0]["random"]
    assert hist["f"].shape == (3, 8, 2) and hist["hypervolume"].shape == (3, 8)
    final = _log_hv_difference(hist["f"], hist["valid"])
    q25, med, q75 = np.quantile(final, [0.25, 0.5, 0.75])
    summary = (compared / "table_summary.md").read_text()
    assert "Final log10 hypervolume difference" in summary
    assert f"| {med:.3g} [{q25:.3g}, {q75:.3g}] |" in summary
    with open(compared / "table_ks.csv") as fh:
        row = fh.read().splitlines()[1].split(",")
    np.testing.assert_allclose([float(v) for v in row[4:7]], [med, q25, q75], rtol=1e-6)
    record = json.loads((compared / "config.json").read_text())
    assert record["max_hypervolume"] == pytest.approx(59.36011874867746)
    assert record["summary"][0]["median"] == pytest.approx(med, rel=1e-6)


def test_the_welch_test_compares_the_final_log_hypervolume_differences(compared):
    problem = benchmarks.get("branin_currin")
    hist = analysis.load_results(compared)[0]["random"]
    runs = {"better": dict(hist, hypervolume=hist["hypervolume"] + np.array([[20.0], [25.0], [30.0]])),
            "worse": dict(hist, hypervolume=hist["hypervolume"] + np.array([[1.0], [3.0], [2.0]]))}
    result = comparison.result_from_histories(problem, runs, {}, reference="better", n_init=6, n_evaluations=8)
    final = {m: np.log10(problem.max_hypervolume - h["hypervolume"][:, -1].astype(np.float64))
             for m, h in runs.items()}
    np.testing.assert_allclose(result.final["better"], final["better"], rtol=1e-12)
    p = stats.ttest_ind(final["worse"], final["better"], equal_var=False, alternative="greater").pvalue
    assert result.welch["worse"]["p"] == pytest.approx(p, rel=1e-9)
    assert not result.higher_is_better and result.metric == analysis.HYPERVOLUME_REGRET


def test_pareto_files_hold_the_final_fronts_and_name_the_methods(compared, capsys):
    import matplotlib.image

    hist = analysis.load_results(compared)[0]["random"]
    fronts, true_front = analysis.load_fronts(compared)
    assert list(fronts) == ["random"]
    f0, keep = hist["f"][0], hist["valid"][0]
    mine = f0[np.asarray(pareto.is_non_dominated(jnp.asarray(f0), jnp.asarray(keep)))]
    np.testing.assert_allclose(fronts["random"], mine[np.argsort(mine[:, 0])], rtol=1e-6)
    # the sampled true front: non-dominated, and its hypervolume close to BoTorch's maximum from below
    assert np.all(np.asarray(pareto.is_non_dominated(jnp.asarray(true_front))))
    hv = float(pareto.hypervolume(jnp.asarray(true_front), jnp.asarray((18.0, 6.0))))
    assert 0.98 * 59.36 < hv <= 59.37
    assert matplotlib.image.imread(compared / "pareto.png").shape[0] > 100
    (compared / "pareto.png").unlink()
    assert main(["plot", str(compared)]) == 0
    assert "pareto:" in capsys.readouterr().out and (compared / "pareto.png").stat().st_size > 1000
    np.testing.assert_array_equal(analysis.load_fronts(compared)[1], true_front)


def test_run_reports_the_log_hypervolume_difference_and_refuses_one_objective_algorithms(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", *ARGS, "--algorithm", "gp-ei", "--out", str(tmp_path / "no")])
    assert exc.value.code == 2
    assert "--algorithm: problem 'branin_currin' has 2 objectives and algorithm 'gp-ei'" in capsys.readouterr().err
    out = tmp_path / "run"
    assert main(["run", *ARGS[:2], "--seeds", "2", "--n-init", "4", "--iterations", "1", "--algorithm", "random",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "final log10 hypervolume difference" in text
    hist = analysis.load_results(out)[0]["random"]
    med = np.median(_log_hv_difference(hist["f"], hist["valid"]))
    (row,) = [line for line in text.splitlines() if line.startswith("| random")]
    assert float(row.split("|")[3]) == pytest.approx(med, rel=1e-3)
    assert (out / "pareto.png").is_file() and list(analysis.load_fronts(out)[0]) == ["random"]
