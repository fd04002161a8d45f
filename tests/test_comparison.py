"""Comparisons and the thesis' statistics (issue 3): compare(), tables, `nbo-jax compare`,
batch algorithms in run_bo, NeuralUCB/NeuralTS."""

import csv

import jax
import numpy as np
import pytest
from scipy import stats

import nbo_jax as nbo
from nbo_jax import cli, comparison
from nbo_jax.types import BOAlgorithm

# (no mini-batch size: with at most 10 points every default mini-batch holds all of them)
SMALL = dict(width=32, acq_optimizer=dict(raw_samples=128, steps=2), epochs=5)


def test_statistics_match_scipy_and_bh():
    rng = np.random.default_rng(0)
    final = {"ref": rng.normal(1.0, 0.3, 10), "a": rng.normal(2.0, 0.3, 10), "b": rng.normal(1.05, 0.3, 10),
             "c": rng.normal(3.0, 0.5, 10)}
    ks, welch = comparison.statistics(final, "ref")
    for m, v in final.items():
        assert ks[m] == pytest.approx(stats.kstest((v - v.mean()) / v.std(ddof=1), "norm").pvalue)
    p = [stats.ttest_ind(final[b], final["ref"], equal_var=False, alternative="greater").pvalue for b in "abc"]
    for b, pb in zip("abc", p):
        assert welch[b]["p"] == pytest.approx(pb)
    adjusted = stats.false_discovery_control(p)
    for b, pa in zip("abc", adjusted):
        assert welch[b]["p_bh"] == pytest.approx(pa)
    assert welch["a"]["reject"] and welch["c"]["reject"] and not welch["b"]["reject"]
    # constant samples (e.g. every seed found the optimum): tests undefined -> nan, never "T"
    ks2, welch2 = comparison.statistics({"ref": np.zeros(5), "x": np.zeros(5), "y": np.ones(5) + rng.normal(0, .1, 5)}, "ref")
    assert np.isnan(ks2["ref"]) and np.isnan(welch2["x"]["p"]) and not welch2["x"]["reject"]
    assert welch2["y"]["reject"]
    with pytest.raises(ValueError, match="reference"):
        comparison.statistics(final, "nope")


def test_compare_shares_initial_points_and_writes_tables(tmp_path):
    problem = nbo.benchmarks.get("branin", noise_std="paper")
    algos = {"neural-bo": nbo.neural_bo(**SMALL), "random": nbo.random_search()}
    res = comparison.compare(problem, algos, n_init=4, n_iter=6, seeds=4, progress=False, verbose=False)
    hb, hr = res.histories["neural-bo"], res.histories["random"]
    assert hb["x"].shape == (4, 10, 2) and hr["x"].shape == (4, 10, 2)
    np.testing.assert_array_equal(hb["x"][:, :4], hr["x"][:, :4])
    np.testing.assert_allclose(res.final["random"], hr["best_f"][:, -1] - problem.optimal_value)
    assert set(res.welch) == {"random"} and res.reference == "neural-bo"
    paths = comparison.save(res, tmp_path)
    for key in ("histories", "config", "plot", "ks_md", "welch_md", "welch_csv", "ks_csv"):
        assert paths[key].exists() and paths[key].stat().st_size > 0
    text = paths["welch_md"].read_text()
    assert "random" in text and ("T)" in text or "F)" in text)
    rows = list(csv.DictReader(paths["welch_csv"].open()))
    assert rows[0]["baseline"] == "random" and float(rows[0]["p"]) == pytest.approx(res.welch["random"]["p"])
    with pytest.raises(ValueError, match="reference"):
        comparison.compare(problem, algos, n_init=2, n_iter=1, seeds=3, reference="gp-ei")
    with pytest.raises(ValueError, match="seeds"):
        comparison.compare(problem, algos, n_init=2, n_iter=1, seeds=2)


def test_run_methods_seeds_in_sequence_equal_vmapped(x64, capsys):
    """``vmap_seeds`` leaves a method's seeds to ``jax.lax.map`` (one after another in one
    program): in float64 the histories equal the vmapped ones to 1e-6 (the batched and the
    looped linear algebra round differently, which can move where an acquisition climb stops
    by about 1e-8), and a bad argument is named."""
    problem = nbo.benchmarks.get("branin", noise_std=0.1)
    algos = {"gp-ei": nbo.gp_bo(acquisition="ei"), "random": nbo.random_search()}
    keys = jax.random.split(jax.random.key(2), 3)
    kw = dict(n_init=4, n_iter=3, progress=False, verbose=False)
    batched, _ = comparison.run_methods(problem, algos, keys, **kw)
    mixed, timings = comparison.run_methods(problem, algos, keys, vmap_seeds=["random"], **dict(kw, verbose=True))
    printed = capsys.readouterr().out  # the mode actually taken, per method
    assert "gp-ei on branin (d=2) x 3 seeds in sequence" in printed and "random on branin (d=2) x 3 seeds vmapped" in printed
    for name in algos:
        np.testing.assert_allclose(mixed[name]["x"], batched[name]["x"], rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(mixed[name]["best_f"], batched[name]["best_f"], rtol=1e-6, atol=1e-9)
    assert mixed["gp-ei"]["x"].shape == (3, 7, 2) and timings["gp-ei"]["run_s"] > 0
    with pytest.raises(ValueError, match="vmap_seeds names \\['gp-ucb'\\]"):
        comparison.run_methods(problem, algos, keys, vmap_seeds=["gp-ucb"], **kw)
    with pytest.raises(TypeError, match="vmap_seeds must be a bool"):
        comparison.run_methods(problem, algos, keys, vmap_seeds="random", **kw)


def test_cli_compare(tmp_path, capsys):
    out = tmp_path / "cmp"
    code = cli.main(["compare", "--problem", "branin", "--algorithms", "neural-ts,random", "--seeds", "3",
                     "--n-init", "3", "--iterations", "3", "--option", "neural-ts.width=16",
                     "--option", "neural-ts.acq_optimizer.raw_samples=32", "--option", "neural-ts.epochs=2", "--out", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "Table 3.1" in printed and "Table 3.2" in printed and "neural-ts" in printed
    for name in ("histories.npz", "regret.png", "table_ks.md", "table_welch.md", "table_welch.csv", "table_ks.csv"):
        assert (out / name).exists()
    for bad, option in ((["--algorithms", "neural-bo,nope"], "--algorithms"),
                        (["--algorithms", "random", "--reference", "neural-bo"], "--reference"),
                        (["--option", "random.width"], "--option"),
                        (["--seeds", "2"], "--seeds")):
        with pytest.raises(SystemExit) as err:
            cli.main(["compare", "--problem", "branin", *bad])
        assert err.value.code == 2
        assert option in capsys.readouterr().err


def _batch_random(q):
    """Random search proposing q points per ask (exercises run_bo's batch path)."""
    base = nbo.random_search()

    def ask(state, key):
        return jax.vmap(lambda k: base.ask(state, k))(jax.random.split(key, q))

    # random search's tell takes the q rows of a batch at once (x (q, d), y (q,))
    return BOAlgorithm(base.init, ask, base.tell, "batch-random", None, q)


def test_run_bo_batch_algorithm():
    problem = nbo.benchmarks.get("branin", noise_std=0.1)
    hist = nbo.run_bo(jax.random.key(0), _batch_random(3), problem, n_init=2, n_iter=4)
    assert hist.x.shape == (14, 2) and hist.y.shape == (14,)
    np.testing.assert_allclose(hist.f, jax.vmap(problem.objective)(hist.x), rtol=1e-6)
    assert len(np.unique(np.asarray(hist.x[2:, 0]))) == 12
    # compare() gives a batch method ceil(n_iter / q) iterations, cut to the common length
    res = comparison.compare(problem, {"random": nbo.random_search(), "batch": _batch_random(3)},
                               n_init=2, n_iter=5, seeds=3, progress=False, verbose=False)
    assert res.histories["batch"]["x"].shape == res.histories["random"]["x"].shape == (3, 7, 2)


def test_neural_ucb_ts_settings_and_errors():
    ucb, ts = nbo.neural_ucb(width=16), nbo.neural_ts(width=16)
    assert (ucb.name, ts.name) == ("neural-ucb", "neural-ts")
    assert nbo.registry.get("NeuralUCB", width=16).name == "neural-ucb"
    problem = nbo.benchmarks.get("branin")
    x0 = nbo.initial_design(jax.random.key(0), problem.bounds, 5)
    y0 = jax.vmap(problem.objective)(x0)
    states = jax.eval_shape(lambda: [a.init(jax.random.key(1), x0, y0, bounds=problem.bounds, capacity=8)
                                     for a in (ucb, nbo.neural_ts(width=16, posterior="diagonal"))])
    assert type(states[0].model.posterior).__name__ in ("FullState", "DualState")
    assert type(states[1].model.posterior).__name__ == "DiagonalState"
    with pytest.raises(ValueError, match="feature_params"):
        nbo.neural_ucb(feature_params="initial")
    with pytest.raises(ValueError, match="nu"):
        nbo.neural_ts(nu=-1.0)
    with pytest.raises(ValueError, match="fixes"):
        nbo.registry.get("gp-ei", acquisition="ucb")
