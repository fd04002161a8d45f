"""Tests of the nbo-jax command line (in-process, tiny settings)."""

import contextlib
import io
import json
import os

import numpy as np
import pytest

from nbo_jax import analysis, benchmarks
from nbo_jax.cli import main

TINY = ["--problem", "branin", "--algorithm", "neural-bo,random", "--n-init", "3", "--iterations", "4",
        "--seeds", "2", "--width", "16", "--candidates", "64", "--epochs", "2"]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """One tiny comparison shared by the tests below: (out dir, exit code, stdout)."""
    out = tmp_path_factory.mktemp("cli") / "branin"
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["run", *TINY, "--out", str(out)])
    return out, code, stdout.getvalue()


def test_run_writes_results(tiny_run):
    out, code, text = tiny_run
    assert code == 0
    for name in ("histories.npz", "config.json", "summary.md", "regret.png"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "histories.npz", "regret.png", "summary.md"]
    histories, record = analysis.load_results(out)
    assert list(histories) == ["neural-bo", "random"]
    fstar = benchmarks.get("branin").optimal_value
    for method, h in histories.items():
        assert h["x"].shape == (2, 7, 2) and h["f"].shape == (2, 7) and h["valid"].shape == (2, 7), method
        assert h["valid"].all()
        assert np.all(np.diff(h["best_f"], axis=1) <= 0), method  # running minimum
        np.testing.assert_allclose(h["best_f"], np.minimum.accumulate(h["f"], axis=1))
        assert np.all(h["best_f"] >= fstar - 1e-4)
    # same key -> same initial design for every method
    np.testing.assert_array_equal(histories["neural-bo"]["x"][:, :3], histories["random"]["x"][:, :3])
    cfg = record["config"]
    assert (cfg["problem"], cfg["n_init"], cfg["n_iter"], cfg["n_seeds"], cfg["seed"]) == ("branin", 3, 4, 2, 0)
    assert cfg["neural_bo"]["width"] == 16 and cfg["neural_bo"]["candidates"] == 64
    assert record["seeds"]["n_seeds"] == 2 and len(record["seeds"]["key_data"]) == 2
    assert set(record["timings"]) == {"neural-bo", "random"}
    assert record["environment"]["jax"]


def test_run_prints_summary(tiny_run):
    out, _, text = tiny_run
    assert "running neural-bo on branin (d=2) x 2 seeds" in text
    assert "running random on branin (d=2) x 2 seeds" in text
    assert "NaN/inf observations: 0 of 14" in text
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert "median" in table[0] and "iqr" in table[0] and "wall_s" in table[0]
    assert any("neural-bo" in line for line in table) and any("random" in line for line in table)
    # the printed medians are those of the saved final regret
    histories, record = analysis.load_results(out)
    fstar = record["optimal_value"]
    median = float(np.median(histories["random"]["best_f"][:, -1] - fstar))
    (row,) = [line for line in table if "random" in line]
    assert float(row.split("|")[3]) == pytest.approx(median, rel=1e-3)
    assert str(out / "regret.png") in text


def test_plot_command(tiny_run, capsys):
    out, _, _ = tiny_run
    (out / "regret.png").unlink()
    assert main(["plot", str(out)]) == 0
    assert (out / "regret.png").stat().st_size > 1000
    text = capsys.readouterr().out
    assert "neural-bo" in text and "random" in text and "median" in text


def test_plot_without_results(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["plot", str(tmp_path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "no readable results" in err and "histories.npz" in err


@pytest.mark.parametrize(
    "args, option",
    [
        (["--problem", "no-such-problem"], "--problem"),
        (["--algorithm", "neural-bo,no-such-algo"], "--algorithm"),
        (["--n-init", "0"], "--n-init"),
        (["--seeds", "0"], "--seeds"),
        (["--iterations", "-1"], "--iterations"),
        (["--problem", "ackley"], "--dim"),  # any-dimension problem without --dim
        (["--noise", "loud"], "--noise"),
        (["--lam", "0"], "--lam"),
        (["--problem", "document_retrieval", "--problem-option", "no_such=1"], "--problem-option"),
        (["--problem", "document_retrieval", "--problem-option", "n_documents"], "--problem-option"),
        (["--problem", "document_retrieval", "--dim", "3"], "--dim"),
    ],
)
def test_bad_inputs_exit_2(args, option, tmp_path, capsys):
    argv = ["run", *TINY, "--out", str(tmp_path / "never"), *args]  # later options win
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert option in captured.err
    assert "running" not in captured.out  # nothing ran
    assert not (tmp_path / "never").exists()


def test_candidates_sets_the_presets_raw_samples(monkeypatch):
    """--candidates N: Neural-BO gets the preset's acquisition optimizer with raw_samples = N; without
    it, no acq_optimizer (the preset's)."""
    from nbo_jax import cli, registry
    from nbo_jax.algorithms.neural_bo import PRESETS
    from nbo_jax.optimize import as_acq_optimizer

    seen = {}
    real_get = registry.get

    def spy(name, **kwargs):
        seen[name] = kwargs
        return real_get(name, **kwargs)

    monkeypatch.setattr(registry, "get", spy)
    parser = cli.build_parser()
    for preset in ("default", "paper"):
        args = parser.parse_args(["run", "--algorithm", "neural-bo", "--candidates", "64", "--preset", preset])
        cli._build_algorithms(args, parser)
        given = seen["neural-bo"]["acq_optimizer"]
        assert given == dict(raw_samples=64)  # laid over the preset's settings by the factory
        assert as_acq_optimizer(given, default=PRESETS[preset]["acq_optimizer"]) == \
            PRESETS[preset]["acq_optimizer"]._replace(raw_samples=64)
    args = parser.parse_args(["run", "--algorithm", "neural-bo"])
    cli._build_algorithms(args, parser)
    assert "acq_optimizer" not in seen["neural-bo"] and args.candidates is None


def test_option_collects_acq_optimizer_fields(capsys):
    from nbo_jax import cli

    parser = cli.build_parser()
    names = ["neural-greedy", "adaptive-basis"]
    opts = cli._parse_options(["neural-greedy.width=8", "neural-greedy.acq_optimizer.raw_samples=64",
                               "neural-greedy.acq_optimizer.steps=5", "neural-greedy.acq-optimizer.learning_rate=0.1",
                               "adaptive-basis.acq_optimizer={'raw_samples': 32}"], names, parser)
    assert opts == {"neural-greedy": {"width": 8, "acq_optimizer": {"raw_samples": 64, "steps": 5, "learning_rate": 0.1}},
                    "adaptive-basis": {"acq_optimizer": {"raw_samples": 32}}}
    for bad, message in ((["neural-greedy.acq_optimizer.n_raw=64"], "FIELD one of"),
                         (["neural-greedy.width.x=3"], "nested keys"),
                         (["adaptive-basis.acq_optimizer={}", "adaptive-basis.acq_optimizer.steps=0"], "one form")):
        with pytest.raises(SystemExit) as exc:
            cli._parse_options(bad, names, parser)
        assert exc.value.code == 2
        assert message in capsys.readouterr().err


def test_help_lists_options(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    assert "run" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["run", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for option in ("--algorithm", "--problem", "--dim", "--noise", "--n-init", "--iterations", "--seeds",
                   "--seed", "--out", "--x64", "--width", "--depth", "--nu", "--lam", "--posterior",
                   "--preset", "--candidates", "--epochs"):
        assert option in text, option
    assert "paper" in text and "neural-bo" in text


def test_no_command_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2
    assert "command" in capsys.readouterr().err


def test_config_json_is_strict_json(tiny_run):
    out, _, _ = tiny_run
    json.loads((out / "config.json").read_text(), parse_constant=lambda c: pytest.fail(f"non-JSON {c}"))


def test_plot_unknown_optimum(tmp_path, capsys):
    best = np.array([[3.0, 2.0, -1.0], [4.0, 4.0, 0.5]])
    hist = {"x": np.zeros((2, 3, 1)), "y": best, "f": best, "best_f": best, "valid": np.ones((2, 3), bool)}
    analysis.save_results(tmp_path, {"random": hist}, {"problem": "custom", "n_init": 1})
    assert main(["plot", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "optimal value unknown" in text and "best f" in text
    (row,) = [line for line in text.splitlines() if line.startswith("| random")]
    assert float(row.split("|")[3]) == pytest.approx(-0.25)  # median of the final best f (-1, 0.5)
    assert (tmp_path / "regret.png").stat().st_size > 1000


def _no_compute(monkeypatch):
    """Make every way the CLI runs BO fail loudly."""
    import nbo_jax.comparison
    import nbo_jax.loop

    def refuse(*args, **kwargs):
        raise AssertionError("BO ran before --out was checked")

    monkeypatch.setattr(nbo_jax.loop, "run_bo", refuse)
    monkeypatch.setattr(nbo_jax.comparison, "run_methods", refuse)
    monkeypatch.setattr(nbo_jax.comparison, "compare", refuse)


COMMANDS = {
    "run": ["run", "--problem", "branin", "--algorithm", "random", "--seeds", "2", "--n-init", "2", "--iterations", "1"],
    "compare": ["compare", "--problem", "branin", "--algorithms", "random", "--seeds", "3", "--n-init", "2",
                "--iterations", "1"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_out_under_a_file_fails_before_any_compute(command, tmp_path, monkeypatch, capsys):
    _no_compute(monkeypatch)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    out = blocker / "results"
    with pytest.raises(SystemExit) as exc:
        main([*COMMANDS[command], "--out", str(out)])
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert "--out" in captured.err and str(out) in captured.err and "cannot be written" in captured.err
    assert "running" not in captured.out
    assert blocker.read_text() == "not a folder"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root writes into read-only folders, so chmod cannot block it")
def test_read_only_out_fails_before_any_compute(tmp_path, monkeypatch, capsys):
    _no_compute(monkeypatch)
    locked = tmp_path / "locked"
    locked.mkdir()
    os.chmod(locked, 0o555)
    try:
        for out in (locked, locked / "sub"):
            with pytest.raises(SystemExit) as exc:
                main([*COMMANDS["run"], "--out", str(out)])
            assert exc.value.code == 2
            err = capsys.readouterr().err
            assert "--out" in err and str(out) in err and "cannot be written" in err
        assert list(locked.iterdir()) == []
    finally:
        os.chmod(locked, 0o755)


def test_run_and_compare_share_the_timing_loop(tmp_path, monkeypatch, capsys):
    """Both commands run BO through comparison.run_methods (one compile/run timing loop)."""
    import nbo_jax.comparison

    calls = []
    real = nbo_jax.comparison.run_methods

    def spy(problem, algorithms, keys, **kwargs):
        calls.append((list(algorithms), len(keys), kwargs["n_init"], kwargs["n_iter"]))
        return real(problem, algorithms, keys, **kwargs)

    monkeypatch.setattr(nbo_jax.comparison, "run_methods", spy)
    assert main([*COMMANDS["run"], "--out", str(tmp_path / "run")]) == 0
    assert main([*COMMANDS["compare"], "--out", str(tmp_path / "cmp")]) == 0
    assert calls == [(["random"], 2, 2, 1), (["random"], 3, 2, 1)]
    record = json.loads((tmp_path / "run" / "config.json").read_text())
    t = record["timings"]["random"]
    assert t["wall_s"] == pytest.approx(t["compile_s"] + t["run_s"])
    assert "compile" in capsys.readouterr().out


def test_compare_on_a_task_reports_its_metric(tmp_path, capsys):
    """A real-world task (finite domain, document retrieval) through the CLI: its builder's
    options, and its own metric (the best hierarchical F1) in the printed and written tables."""
    out = tmp_path / "doc"
    argv = ["compare", "--problem", "document_retrieval", "--problem-option", "n_documents=80",
            "--problem-option", "seed=2", "--algorithms", "random", "--n-init", "2",
            "--iterations", "3", "--seeds", "3", "--out", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "final best hierarchical F1, median [q25, q75]" in text
    hist = analysis.load_results(out)[0]["random"]
    problem = benchmarks.get("document_retrieval", n_documents=80, seed=2)
    best = np.median(problem.metric.final(hist))
    assert f"| {best:.3g} [" in (out / "table_summary.md").read_text()
    assert "H0: mean_baseline >= mean_random (larger is better)" in (out / "table_welch.md").read_text()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_out_with_results_is_refused_without_force(command, tmp_path, monkeypatch, capsys):
    out = tmp_path / "earlier"
    out.mkdir()
    (out / "histories.npz").write_bytes(b"earlier runs")
    with monkeypatch.context() as m:
        _no_compute(m)
        with pytest.raises(SystemExit) as exc:
            main([*COMMANDS[command], "--out", str(out)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert str(out) in err and "already holds results (histories.npz)" in err and "--force" in err
    assert (out / "histories.npz").read_bytes() == b"earlier runs"
    assert main([*COMMANDS[command], "--out", str(out), "--force"]) == 0
    assert analysis.load_results(out)[0].keys() == {"random"}


def test_run_and_compare_build_the_same_neural_bo_with_the_same_noise():
    """One name, one algorithm, one default: without options both commands build the registry's
    neural-bo (the factory's own nu, width, ...) on the same noise ('paper', as the README runs)."""
    from nbo_jax import cli, registry

    parser = cli.build_parser()
    run = parser.parse_args(["run", "--algorithm", "neural-bo"])
    cmp_ = parser.parse_args(["compare", "--algorithms", "neural-bo"])
    assert run.noise == cmp_.noise == "paper"
    from_run = cli._build_algorithms(run, run.subparser)["neural-bo"]
    names = cli._algorithm_names(cmp_.algorithms, cmp_.subparser)
    from_compare = cli._build_with_options(names, cli._parse_options([], names, cmp_.subparser),
                                           cmp_.subparser)["neural-bo"]
    calls = {(a.config.factory, repr(a.config.kwargs), a.config.name, a.name)
             for a in (from_run, from_compare, registry.get("neural-bo"))}
    assert len(calls) == 1
    given = parser.parse_args(["run", "--algorithm", "neural-bo", "--nu", "0.5", "--width", "32"])
    assert cli._build_algorithms(given, given.subparser)["neural-bo"].config.kwargs == {"nu": 0.5, "width": 32}


# --------------------------------------------------------------------------- Ctrl-C and the cost estimate
def _sigint_at(monkeypatch, method_index: int, step: int):
    """Make the progress bar of the ``method_index``-th method send SIGINT to this process after
    its step ``step`` (0-based), then give the main thread time to handle it."""
    import signal
    import time

    import nbo_jax.loop

    starts = []

    def tick(t, total):
        t = int(np.max(np.asarray(t)))
        if t == 0:
            starts.append(total)
        if len(starts) == method_index + 1 and t == step:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.5)

    monkeypatch.setattr(nbo_jax.loop, "_tick", tick)


def test_ctrl_c_writes_the_finished_methods_and_exits_130(tmp_path, monkeypatch, capsys):
    import signal

    before = signal.getsignal(signal.SIGINT)
    _sigint_at(monkeypatch, method_index=1, step=1)  # during neural-bo's second step
    out = tmp_path / "stopped"
    code = main(["run", "--problem", "branin", "--algorithm", "random,neural-bo", "--n-init", "3", "--iterations",
                 "6", "--seeds", "1", "--width", "8", "--candidates", "16", "--epochs", "1", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 130
    assert signal.getsignal(signal.SIGINT) is before  # the CLI's handler is removed
    histories, record = analysis.load_results(out)
    assert sorted(histories) == ["random"] and histories["random"]["y"].shape == (1, 9)  # whole
    assert record["config"]["interrupted"]["method"] == "neural-bo"
    assert record["config"]["interrupted"]["not_run"] == []
    assert (out / "regret.png").is_file()
    assert "stopped by Ctrl-C" in captured.err and str(out) in captured.err
    assert "neural-bo (interrupted)" in captured.err
    assert "neural-bo: compile" not in captured.out  # it did not run to its end


def test_ctrl_c_in_compare_stops_between_methods(tmp_path, monkeypatch, capsys):
    _sigint_at(monkeypatch, method_index=0, step=1)  # random's last step: it finishes, neural-bo never starts
    out = tmp_path / "stopped"
    code = main(["compare", "--problem", "branin", "--algorithms", "random,neural-bo", "--n-init", "2",
                 "--iterations", "2", "--seeds", "3", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 130
    histories, record = analysis.load_results(out)
    assert sorted(histories) == ["random"] and histories["random"]["y"].shape == (3, 4)
    assert record["config"]["interrupted"]["method"] is None
    assert record["config"]["interrupted"]["not_run"] == ["neural-bo"]
    assert not (out / "table_welch.md").exists()
    assert "running neural-bo" not in captured.out
    assert str(out) in captured.err and "neural-bo (not run)" in captured.err


def test_a_long_run_is_announced_with_its_projected_time(tmp_path, monkeypatch, capsys):
    import nbo_jax.comparison

    monkeypatch.setattr(nbo_jax.comparison, "LONG_RUN_S", 0.0)  # every run is "long"
    assert main([*COMMANDS["run"], "--iterations", "4", "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert "random: this run is projected to take about" in out and "of 4 steps" in out
    assert "--segments" in out


def test_projected_time_of_a_slow_method():
    """The width-256 Neural-BO of 1500 steps at 15 s a step is announced after its first step."""
    from nbo_jax.comparison import _StepHook

    now = [0.0]
    printed = io.StringIO()
    hook = _StepHook("neural-bo", 1500, 1, progress=False, should_stop=None, long_run_s=600.0, verbose=True,
                     clock=lambda: now[0])
    now[0] = 15.0
    with contextlib.redirect_stdout(printed):
        hook(np.int32(0))
    assert hook.projected_s == pytest.approx(15.0 * 1500)
    assert "neural-bo: this run is projected to take about 6.2 h" in printed.getvalue()
    quick = _StepHook("random", 100, 1, progress=False, should_stop=None, long_run_s=600.0, verbose=True,
                      clock=lambda: now[0])
    with contextlib.redirect_stdout(printed):
        for t in range(3):
            quick(np.int32(t))
    assert "random:" not in printed.getvalue()


def test_default_run_says_nothing_of_its_cost(tiny_run):
    assert "projected" not in tiny_run[2]
