"""Tests of nbo_jax.analysis: regret, summaries, statistics (vs scipy), plots, result files."""

import json
import pathlib

import numpy as np
import pytest
from scipy import stats

from nbo_jax import analysis
from nbo_jax.types import History


# --------------------------------------------------------------------------- regret
def test_simple_regret_any_shape():
    best_f = np.array([[[3.0, 2.0, 2.0]], [[5.0, 1.5, 1.0]]])  # (2, 1, 3)
    r = analysis.simple_regret(best_f, 1.0)
    assert r.shape == (2, 1, 3)
    np.testing.assert_array_equal(r, best_f - 1.0)


def test_cumulative_regret_skips_nonfinite():
    f = np.array([[3.0, np.nan, 2.0, 1.0], [1.0, 1.0, np.inf, 4.0]])
    # row 0: 2, 2 (nan -> 0), 3, 3 ; row 1: 0, 0, 0 (inf -> 0), 3
    np.testing.assert_array_equal(analysis.cumulative_regret(f, 1.0), [[2, 2, 3, 3], [0, 0, 0, 3]])


def test_regret_needs_optimal_value():
    with pytest.raises(ValueError, match="optimal_value"):
        analysis.simple_regret([1.0], None)
    with pytest.raises(ValueError, match="optimal_value"):
        analysis.cumulative_regret([1.0], float("nan"))


# --------------------------------------------------------------------------- summaries
def test_summarize_matches_numpy():
    a = np.array([4.0, 1.0, 3.0, 2.0, 10.0])
    b = np.array([0.5, 0.25, 0.75, 1.0])
    rows = analysis.summarize({"a": a, "b": b})
    assert [r["method"] for r in rows] == ["a", "b"]
    ra, rb = rows
    # a sorted = [1, 2, 3, 4, 10]: median 3, q25 = 2, q75 = 4 (linear interpolation), IQR 2, mean 4
    assert (ra["n"], ra["median"], ra["q25"], ra["q75"], ra["iqr"], ra["mean"]) == (5, 3.0, 2.0, 4.0, 2.0, 4.0)
    # b sorted = [0.25, 0.5, 0.75, 1]: positions 0.75, 1.5, 2.25 -> 0.4375, 0.625, 0.8125
    assert rb["median"] == pytest.approx(np.median(b)) == pytest.approx(0.625)
    assert rb["q25"] == pytest.approx(np.quantile(b, 0.25)) == pytest.approx(0.4375)
    assert rb["q75"] == pytest.approx(np.quantile(b, 0.75)) == pytest.approx(0.8125)
    assert rb["iqr"] == pytest.approx(0.375)
    assert rb["mean"] == pytest.approx(0.625)
    assert "n_nonfinite" not in ra


def test_summarize_drops_nonfinite_and_validates():
    (row,) = analysis.summarize({"m": [1.0, np.inf, 3.0, np.nan]})
    assert row["n"] == 2 and row["n_nonfinite"] == 2 and row["median"] == 2.0
    with pytest.raises(ValueError):
        analysis.summarize({})
    with pytest.raises(ValueError, match="'m'"):
        analysis.summarize({"m": []})


def test_format_table_contains_rows():
    rows = analysis.summarize({"neural-bo": [1.0, 2.0, 3.0], "random": [4.0, 5.0, 6.0]})
    rows[0]["wall_s"] = 1.5
    table = analysis.format_table(rows)
    lines = table.splitlines()
    assert len(lines) == 4
    assert lines[0].split("|")[1].strip() == "method"
    assert "wall_s" in lines[0]
    assert lines[1].startswith("|--")
    assert "neural-bo" in lines[2] and "random" in lines[3]
    assert lines[2].split("|")[3].strip() == "2"  # median of neural-bo
    assert lines[3].split("|")[-2].strip() == ""  # random has no wall_s
    assert len({len(line) for line in lines}) == 1  # aligned columns


def test_final_values_and_summary_rows():
    best = np.array([[5.0, 3.0, 2.0], [4.0, 4.0, 1.0]])
    hist = {"best_f": best}
    np.testing.assert_array_equal(analysis.final_values({"m": hist}, 0.5)["m"], [1.5, 0.5])
    np.testing.assert_array_equal(analysis.final_values({"m": hist})["m"], [2.0, 1.0])
    (row,) = analysis.summary_rows({"m": hist}, 0.5, {"m": 2.0})
    assert row["median"] == 1.0 and row["wall_s"] == 2.0


# --------------------------------------------------------------------------- statistics
def test_ks_normality_matches_scipy():
    rng = np.random.default_rng(123)
    for x in (rng.normal(3.0, 2.0, 20), rng.exponential(1.0, 30)):
        z = (x - x.mean()) / x.std(ddof=1)
        assert analysis.ks_normality(x) == pytest.approx(stats.kstest(z, "norm").pvalue, rel=1e-12)
    # a clearly non-normal sample gets a smaller p-value than a normal one
    assert analysis.ks_normality(rng.exponential(1.0, 200) ** 3) < 0.01
    with pytest.raises(ValueError):
        analysis.ks_normality([1.0, 1.0, 1.0])
    with pytest.raises(ValueError):
        analysis.ks_normality([1.0, np.nan, 2.0, 3.0])


def test_welch_one_sided_matches_scipy_and_direction():
    rng = np.random.default_rng(7)
    baseline = rng.normal(2.0, 1.0, 15)  # e.g. random-search regret (higher)
    method = rng.normal(1.0, 0.5, 12)
    expected = stats.ttest_ind(baseline, method, equal_var=False, alternative="greater").pvalue
    p = analysis.welch_one_sided(baseline, method)
    assert p == pytest.approx(expected, rel=1e-12)
    assert p < 0.05  # baseline mean clearly greater: H0 (baseline <= method) rejected
    assert analysis.welch_one_sided(method, baseline) == pytest.approx(1.0 - p, abs=1e-12)
    with pytest.raises(ValueError, match="baseline"):
        analysis.welch_one_sided([1.0], method)


def test_benjamini_hochberg_worked_example():
    p = np.array([0.01, 0.04, 0.03, 0.005, 0.2])
    # By hand, m = 5, alpha = 0.05. Sorted: 0.005 (i=3), 0.01 (i=0), 0.03 (i=2), 0.04 (i=1), 0.2 (i=4)
    # thresholds k * alpha / m = 0.01, 0.02, 0.03, 0.04, 0.05
    # p_(k) <= threshold for k = 1, 2, 3, 4 (0.03 <= 0.03, 0.04 <= 0.04); not k = 5 (0.2 > 0.05)
    # -> largest k = 4: reject the four smallest, keep 0.2.
    # adjusted m p_(k) / k = 0.025, 0.025, 0.05, 0.05, 0.2; running min from the end keeps them
    # (5 * 0.03 / 3 and 5 * 0.04 / 4 are both 0.05).
    rejected, adjusted = analysis.benjamini_hochberg(p, alpha=0.05)
    np.testing.assert_array_equal(rejected, [True, True, True, True, False])
    np.testing.assert_allclose(adjusted, [0.025, 0.05, 0.05, 0.025, 0.2], rtol=1e-12)
    # alpha = 0.03: thresholds 0.006, 0.012, 0.018, 0.024, 0.03; ranks 1-2 pass (0.005, 0.01),
    # ranks 3-5 fail (0.03 > 0.018, 0.04 > 0.024, 0.2 > 0.03) -> reject only 0.005 and 0.01
    rejected, _ = analysis.benjamini_hochberg(p, alpha=0.03)
    np.testing.assert_array_equal(rejected, [True, False, False, True, False])


def test_benjamini_hochberg_step_up_and_monotone():
    # step-up: sorted 0.03, 0.04, 0.04 vs thresholds 0.0167, 0.0333, 0.05: ranks 1 and 2 fail
    # on their own, but rank 3 passes (0.04 <= 0.05), so all three are rejected
    rejected, adjusted = analysis.benjamini_hochberg([0.04, 0.03, 0.04], alpha=0.05)
    assert rejected.all()
    np.testing.assert_allclose(adjusted, [0.04, 0.04, 0.04])
    # shape kept, adjusted clipped at 1
    rejected, adjusted = analysis.benjamini_hochberg(np.array([[0.9, 0.8], [0.95, 0.99]]))
    assert rejected.shape == adjusted.shape == (2, 2) and not rejected.any()
    assert adjusted.max() <= 1.0
    with pytest.raises(ValueError):
        analysis.benjamini_hochberg([0.1, 1.5])
    with pytest.raises(ValueError):
        analysis.benjamini_hochberg([0.1, np.nan])
    with pytest.raises(ValueError, match="alpha"):
        analysis.benjamini_hochberg([0.1], alpha=0.0)


@pytest.mark.skipif(not hasattr(stats, "false_discovery_control"), reason="scipy < 1.11")
def test_benjamini_hochberg_matches_scipy():
    rng = np.random.default_rng(0)
    for m in (1, 7, 50):
        p = np.concatenate([rng.uniform(0, 0.02, m // 3), rng.uniform(0, 1, m - m // 3)])
        rng.shuffle(p)
        rejected, adjusted = analysis.benjamini_hochberg(p, alpha=0.1)
        np.testing.assert_allclose(adjusted, stats.false_discovery_control(p, method="bh"), rtol=1e-12)
        np.testing.assert_array_equal(rejected, adjusted <= 0.1)


# --------------------------------------------------------------------------- plots
def test_plot_regret_writes_png(tmp_path):
    rng = np.random.default_rng(0)
    curves = {
        "neural-bo": np.minimum.accumulate(rng.uniform(0.1, 5, (4, 12)), axis=1),
        "random": np.minimum.accumulate(rng.uniform(0.1, 5, (4, 9)), axis=1),
    }
    path = analysis.plot_regret(curves, tmp_path / "sub" / "regret.png", title="t", n_init=3)
    assert path == tmp_path / "sub" / "regret.png"
    data = path.read_bytes()
    assert len(data) > 1000 and data[:8] == b"\x89PNG\r\n\x1a\n"
    # negative values (symlog), a 1-D curve and inf entries are accepted
    curves = {"m": np.array([np.inf, 2.0, -1.0, -1.0])}
    path2 = analysis.plot_regret(curves, tmp_path / "b.png", log=True)
    assert path2.stat().st_size > 1000
    with pytest.raises(ValueError):
        analysis.plot_regret({}, tmp_path / "c.png")
    with pytest.raises(ValueError, match="'m'"):
        analysis.plot_regret({"m": np.zeros((2, 0))}, tmp_path / "c.png")


# --------------------------------------------------------------------------- result files
def _history(rng, s, n, d, dtype=np.float32):
    x = rng.uniform(size=(s, n, d)).astype(dtype)
    f = rng.normal(size=(s, n)).astype(dtype)
    y = f + 0.1 * rng.normal(size=(s, n)).astype(dtype)
    y[0, 1] = np.nan
    return History(x, y, f, np.minimum.accumulate(f, axis=1), np.isfinite(y))


def test_save_load_round_trip(tmp_path):
    import jax

    rng = np.random.default_rng(1)
    hists = {"neural-bo": _history(rng, 3, 6, 2), "random": _history(rng, 3, 6, 2, np.float64)}
    keys = jax.random.split(jax.random.key(5), 3)
    config = {"problem": "branin", "dim": 2, "n_init": 2, "optimal_value": -3.0, "tag": np.int64(4)}
    paths = analysis.save_results(tmp_path / "out", hists, config, seed=5, keys=keys,
                                  timings={"neural-bo": 1.25, "random": {"compile_s": 0.5, "wall_s": 0.75}})
    assert set(paths) == {"histories", "config", "summary"}
    assert all(p.is_file() for p in paths.values())

    loaded, record = analysis.load_results(tmp_path / "out")
    assert list(loaded) == ["neural-bo", "random"]
    for method, hist in hists.items():
        assert set(loaded[method]) == set(analysis.HISTORY_FIELDS)
        for name in analysis.HISTORY_FIELDS:
            expected = np.asarray(getattr(hist, name))
            assert loaded[method][name].dtype == expected.dtype
            np.testing.assert_array_equal(loaded[method][name], expected)  # NaN == NaN here

    raw = json.loads(paths["config"].read_text())
    assert raw == record
    assert record["config"]["problem"] == "branin" and record["config"]["tag"] == 4
    env = record["environment"]
    for name in ("python", "jax", "jaxlib", "flax", "optax", "numpy", "nbo_jax", "platform", "device_kind"):
        assert env[name], name
    assert env["jax"] == jax.__version__ and env["numpy"] == np.__version__
    assert record["seeds"]["seed"] == 5 and record["seeds"]["n_seeds"] == 3
    assert record["seeds"]["key_data"] == np.asarray(jax.random.key_data(keys)).tolist()
    assert record["timings"]["neural-bo"] == 1.25
    # summary of the final simple regret (f* = -3 from the config), with wall seconds
    rows = {r["method"]: r for r in record["summary"]}
    final = np.asarray(hists["random"].best_f)[:, -1] + 3.0
    assert rows["random"]["median"] == pytest.approx(float(np.median(final)))
    assert rows["random"]["wall_s"] == 0.75 and rows["neural-bo"]["wall_s"] == 1.25
    summary = paths["summary"].read_text()
    assert "neural-bo" in summary and "random" in summary and "simple regret" in summary


def test_load_results_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="histories.npz"):
        analysis.load_results(tmp_path)
    with pytest.raises(ValueError, match="__"):
        analysis.save_results(tmp_path, {"a__b": {"x": 1}}, {})
    with pytest.raises(ValueError, match="empty"):
        analysis.save_results(tmp_path, {}, {})


# --------------------------------------------------------------------------- package layout
def test_public_names_and_submodules():
    from nbo_jax.analysis import metrics, plots, results, stats, tables

    for name in analysis.__all__:
        assert getattr(analysis, name) is not None, name
    assert analysis.simple_regret is metrics.simple_regret
    assert analysis.ks_normality is stats.ks_normality and analysis.statistics is stats.statistics
    assert analysis.format_table is tables.format_table and analysis.markdown_table is tables.markdown_table
    assert analysis.plot_regret is plots.plot_regret
    assert analysis.save_results is results.save_results and analysis.HISTORY_FIELDS == results.HISTORY_FIELDS
    assert not hasattr(analysis, "compare")  # running comparisons is nbo_jax.comparison.compare


def test_analysis_does_not_import_comparison():
    """No import cycle: nothing in nbo_jax/analysis/ imports nbo_jax.comparison (or the CLI)."""
    import ast
    import pathlib

    folder = pathlib.Path(analysis.__file__).parent
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            assert not any("comparison" in n or n.endswith("cli") for n in names), (path.name, names)


# --------------------------------------------------------------------------- table renderer
def test_markdown_table_aligns_cells():
    table = analysis.markdown_table(["problem", "d", "p"], [["branin", 2, 0.0123456], ["ackley", 10, None]])
    lines = table.splitlines()
    assert len(lines) == 4 and len({len(line) for line in lines}) == 1
    assert lines == ["| problem |  d |       p |",
                     "|---------|---:|--------:|",  # numeric columns right-aligned
                     "| branin  |  2 | 0.01235 |",  # floats with ".4g"
                     "| ackley  | 10 |         |"]  # None left blank
    # header only, and the errors
    assert analysis.markdown_table(["a", "b"], []).splitlines() == ["| a | b |", "|---|---|"]
    with pytest.raises(ValueError, match="row 0"):
        analysis.markdown_table(["a", "b"], [["x"]])
    with pytest.raises(ValueError, match="header"):
        analysis.markdown_table([], [])
    with pytest.raises(ValueError, match="empty"):
        analysis.format_table([])


def test_comparison_tables_use_the_same_renderer():
    from nbo_jax import comparison

    assert comparison.markdown is analysis.markdown_table
    rows = analysis.summarize({"m": [1.0, 2.0]})
    columns = list(rows[0])
    assert analysis.format_table(rows) == analysis.markdown_table(columns, [[r[c] for c in columns] for r in rows])


def test_wall_seconds():
    timings = {"a": 1.5, "b": {"compile_s": 1.0, "run_s": 2.0, "wall_s": 3.0}, "c": {"compile_s": 1.0},
               "d": None, "e": "nan", "f": np.float32(0.5)}
    assert analysis.wall_seconds(timings) == {"a": 1.5, "b": 3.0, "f": 0.5}
    assert analysis.wall_seconds(None) == {}


def test_source_commit_names_this_checkout_or_none(monkeypatch, tmp_path):
    """``source_commit``: ``git rev-parse HEAD`` of the checkout the package is imported from
    (``+dirty`` when its tracked package files differ), recorded by ``environment_info``;
    ``None`` for a copy of the package outside a repository that tracks it."""
    import subprocess

    from nbo_jax.analysis import results

    root = pathlib.Path(results.__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
    except OSError:  # no git: nothing to name
        head = ""
    got = analysis.source_commit()
    if head:
        assert got.split("+")[0] == head and got in (head, head + "+dirty")
    else:
        assert got is None
    assert analysis.environment_info()["nbo_jax_commit"] == got
    copy = tmp_path / "site" / "nbo_jax" / "analysis"
    copy.mkdir(parents=True)
    monkeypatch.setattr(results, "__file__", str(copy / "results.py"))
    assert analysis.source_commit() is None
