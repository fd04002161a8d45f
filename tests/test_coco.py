"""COCO: BBOB problems through cocoex, campaigns logged by COCO's observer, cocopp post-processing."""

import contextlib
import io
import json
import pathlib
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

cocoex = pytest.importorskip("cocoex")

import nbo_jax as nbo  # noqa: E402
from nbo_jax import coco  # noqa: E402
from nbo_jax.benchmarks import bbob  # noqa: E402
from nbo_jax.cli import main  # noqa: E402


def _direct(function, dimension, instance, suite="bbob"):
    """A cocoex problem built here, independently of nbo_jax's cache."""
    s = cocoex.Suite(suite, f"instances: {instance}", f"dimensions: {dimension} function_indices: {function}")
    return s, s.get_problem_by_function_dimension_instance(function, dimension, instance)


# --------------------------------------------------------------------------- problems
@pytest.mark.parametrize("function,dimension,instance", [(1, 2, 1), (3, 5, 2), (15, 3, 7), (24, 10, 15)])
def test_problem_values_are_cocoex_values(x64, function, dimension, instance):
    p = bbob.problem(function, dimension, instance)
    assert p.name == f"bbob_f{function:03d}_i{instance:02d}_d{dimension:02d}"
    assert p.dim == dimension and np.all(p.bounds.lower == -5) and np.all(p.bounds.upper == 5)
    assert p.metadata["function_name"] == bbob.FUNCTION_NAMES[function]
    _, ref = _direct(function, dimension, instance)
    x = np.random.default_rng(function).uniform(-5, 5, (7, dimension))
    np.testing.assert_array_equal(np.asarray(p(jnp.asarray(x))), [ref(row) for row in x])
    # the optimum: f(x_opt) = f_opt, and no sampled point beats it
    assert float(p(jnp.asarray(p.optimizer))) == p.optimal_value == ref(p.optimizer)
    assert np.all(np.asarray(p(jnp.asarray(x))) > p.optimal_value)


def test_problem_in_float32_is_the_float64_value_rounded():
    p = bbob.problem(8, 2, 1)
    x = np.random.default_rng(0).uniform(-5, 5, (5, 2)).astype(np.float32)
    _, ref = _direct(8, 2, 1)
    got = p(jnp.asarray(x))
    assert got.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(got), np.asarray([ref(r.astype(np.float64)) for r in x], np.float32))


def test_vmap_over_traced_functions_and_instances(x64):
    fs, ins = jnp.array([1, 3, 3, 20]), jnp.array([1, 1, 4, 2])
    x = jnp.asarray(np.random.default_rng(1).uniform(-5, 5, (4, 3, 2)))

    @jax.jit
    def values(f, i, pts):
        problem = bbob.problem(f, 2, i)
        assert problem.optimal_value is None and problem.metadata["instance"] is None
        return jax.vmap(problem.objective)(pts)

    got = jax.vmap(values)(fs, ins, x)
    want = [[bbob.problem(int(f), 2, int(i)).objective(row) for row in pts] for f, i, pts in zip(fs, ins, x)]
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(bbob.optimal_values(fs, ins, 2),
                                  [bbob.problem(int(f), 2, int(i)).optimal_value for f, i in zip(fs, ins)])


def test_run_bo_vmapped_over_instances_matches_single_runs(x64):
    algo = nbo.random_search()
    fs, ins = jnp.array([2, 2, 9]), jnp.array([1, 3, 1])
    keys = jax.random.split(jax.random.key(0), 3)
    def one(k, f, i):
        return nbo.run_bo(k, algo, bbob.problem(f, 3, i), 4, 3)

    batched = jax.jit(jax.vmap(one))(keys, fs, ins)
    single = jax.jit(one)  # one compilation for the three single runs (traced function and instance)
    for b in range(3):
        np.testing.assert_array_equal(np.asarray(batched.f[b]), np.asarray(single(keys[b], fs[b], ins[b]).f))
    concrete = nbo.run_bo(keys[2], algo, bbob.problem(9, 3, 1), 4, 3)  # and a concrete problem
    np.testing.assert_array_equal(np.asarray(batched.f[2]), np.asarray(concrete.f))


def test_constrained_problem_constraints_are_cocoex_values(x64):
    p = bbob.problem(8, 2, 1, suite="bbob-constrained")
    _, ref = _direct(8, 2, 1, "bbob-constrained")
    assert p.n_constraints == ref.number_of_constraints == 3
    x = np.random.default_rng(2).uniform(-5, 5, (4, 2))
    np.testing.assert_array_equal(np.asarray(p.constraint_values(jnp.asarray(x))),
                                  np.stack([ref.constraint(r) for r in x]))
    np.testing.assert_array_equal(np.asarray(p(jnp.asarray(x))), [ref(r) for r in x])


@pytest.mark.parametrize("call,message", [
    (lambda: bbob.problem(25, 2), r"function must be in \[1, 24\], got 25"),
    (lambda: bbob.problem(1, 4), r"dimension must be one of COCO's \(2, 3, 5, 10, 20, 40\), got 4"),
    (lambda: bbob.problem(1, 2, 0), r"instance must be >= 1, got 0"),
    (lambda: bbob.problem(1.0, 2), r"function must be an integer, got 1.0"),
    (lambda: bbob.problem(1, 2, suite="bbob-noisy"), r"suite must be one of"),
    (lambda: bbob.problem(55, 2, suite="bbob-constrained"), r"function must be in \[1, 54\]"),
    (lambda: coco.parse_range("1-x", "--dims"), r"--dims: expected integers"),
    (lambda: coco.parse_range("5-1", "--instances"), r"--instances: empty range '5-1'"),
])
def test_bad_arguments_name_the_argument(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_traced_function_is_refused_on_the_constrained_suite():
    with pytest.raises(TypeError, match="function must be a Python int for suite='bbob-constrained'"):
        jax.jit(lambda f: bbob.problem(f, 2, 1, "bbob-constrained").objective(jnp.zeros(2)))(jnp.int32(3))


# --------------------------------------------------------------------------- campaigns
def _dat_lines(path: pathlib.Path):
    """(Fopt, rows) of a COCO .dat/.tdat file: rows of (evaluation, f - Fopt best, f, x...)."""
    text = path.read_text()
    fopts = [float(v) for v in re.findall(r"Fopt \(([^)]+)\)", text)]
    rows = [np.array(line.split(), float) for line in text.splitlines() if line and not line.startswith("%")]
    return fopts, rows


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    """The CI campaign, through the CLI: 2 functions, d = 2, one instance, 5 x d evaluations,
    random search and GP-EI; then cocopp. Returns (folder, coco stdout, coco-plot stdout)."""
    out = tmp_path_factory.mktemp("coco") / "campaign"
    texts = []
    for argv in (["coco", "--algorithms", "random,gp-ei", "--functions", "1,21", "--dims", "2", "--instances", "3",
                  "--budget-multiplier", "5", "--out", str(out), "--no-progress", "--x64"],
                 ["coco-plot", str(out)]):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main(argv) == 0
        texts.append(buf.getvalue())
    return out, *texts


def test_campaign_folder_has_cocos_format(campaign):
    out, text, _ = campaign
    assert "ran 4 units" in text and "skipped 0" in text
    settings = json.loads((out / "campaign.json").read_text())
    assert settings["suite"] == "bbob" and settings["instances"] == [3] and settings["budget_multiplier"] == 5
    for name in ("random", "gp-ei"):
        for f in (1, 21):
            info = (out / name / "all" / f"bbobexp_f{f}.info").read_text().splitlines()
            assert info[0].startswith(f"suite = 'bbob', funcId = {f}, DIM = 2, Precision = 1.000e-08, algId = '{name}'")
            assert info[2].startswith(f"data_f{f}/bbobexp_f{f}_DIM2.dat, 3:10|")  # instance 3, 10 evaluations
            for ext in ("dat", "tdat"):
                assert (out / name / "all" / f"data_f{f}" / f"bbobexp_f{f}_DIM2.{ext}").is_file()


def test_every_logged_value_is_the_cocoex_value_of_the_run(campaign):
    out, _, _ = campaign
    runs = coco.read_runs(out)
    checked = 0
    for name in ("random", "gp-ei"):
        for f in (1, 21):
            run = runs[name][(f, 2)]
            assert run["x"].shape == (1, 10, 2) and list(run["instances"]) == [3]
            _, ref = _direct(f, 2, 3)
            np.testing.assert_array_equal(run["f"][0], [ref(x) for x in run["x"][0]])
            fopts, rows = _dat_lines(out / name / "all" / f"data_f{f}" / f"bbobexp_f{f}_DIM2.tdat")
            assert fopts == [pytest.approx(run["f_opt"][0], abs=1e-9)]
            assert len(rows) >= 4
            for row in rows:
                e = int(row[0])
                # measured fitness (printed with 10 significant digits) is the run's value at x_e
                assert row[3] == pytest.approx(run["f"][0, e - 1], rel=1e-9, abs=1e-9)
                assert row[2] == pytest.approx(run["f"][0, :e].min() - fopts[0], rel=1e-8, abs=1e-8)
                np.testing.assert_allclose(row[5:7], run["x"][0, e - 1], atol=6e-5)  # x printed to 4 decimals
                checked += 1
    assert checked >= 16


def test_cocopp_writes_its_index_and_the_solved_fractions(campaign):
    out, _, text = campaign
    assert (out / "ppdata" / "index.html").is_file()
    pages = list((out / "ppdata").glob("*/index.html")) + list((out / "ppdata").glob("*/pprldmany*.html"))
    assert pages, sorted(p.name for p in (out / "ppdata").iterdir())
    assert "fraction of (function, instance, target) triples solved" in text
    fractions = coco.solved_fractions(out)
    for name in ("random", "gp-ei"):
        row = next(line for line in text.splitlines() if line.startswith(f"| {name} "))
        assert f"{fractions[name][2][5]:.3f}" in row
        assert 0.0 <= fractions[name][2][1] <= fractions[name][2][5] <= 1.0  # an ECDF grows with the budget
    assert "| best 2009 (aRT <= budget) | 2 |" in text


def test_function_groups_and_paired_comparison_follow_the_runs(campaign):
    out, _, _ = campaign
    assert set(coco.read_runs(out, functions=[21])["gp-ei"]) == {(21, 2)}
    assert coco.BBOB_GROUPS["separable"] == (1, 2, 3, 4, 5) and sum(map(len, coco.BBOB_GROUPS.values())) == 24
    by_hand = {}
    for name, units in coco.read_runs(out).items():
        run = units[(1, 2)]
        precision = run["f"].min(axis=1) - run["f_opt"]  # the whole run: 5 x 2 evaluations
        by_hand[name] = float(np.mean(precision[:, None] <= coco.ECDF_TARGETS[None, :]))
    assert coco.solved_fractions(out, functions=[1])["gp-ei"][2][5] == pytest.approx(by_hand["gp-ei"])
    rows = coco.paired_comparison(out, "random", functions=coco.BBOB_GROUPS["separable"])
    assert len(rows) == 1
    name, d, mine, theirs, wins, losses, p = rows[0]
    assert (name, d) == ("gp-ei", 2)
    assert (mine, theirs) == pytest.approx((by_hand["gp-ei"], by_hand["random"]))
    assert (wins, losses) == (int(mine > theirs), int(mine < theirs))
    with pytest.raises(KeyError, match="reference 'nope' has no runs"):
        coco.paired_comparison(out, "nope")


def test_reproduce_coco_tables_cover_the_selected_functions(campaign, benchmark_script, capsys):
    import argparse

    script = benchmark_script("reproduce_coco")
    for text in ("1-9", "1,21", "3,5-7,21-24"):
        numbers = coco.parse_range(text, "--functions")
        assert coco.parse_range(script.range_text(numbers), "--functions") == numbers
    assert script.range_text((1, 2, 3, 4, 5, 6, 7, 8, 9)) == "1-9"
    assert list(script.selected_groups(tuple(range(1, 25)))) == ["all", *coco.BBOB_GROUPS]
    assert script.selected_groups((1, 2, 3, 4, 5, 21)) == {"f1-5,21": (1, 2, 3, 4, 5, 21), "separable": (1, 2, 3, 4, 5),
                                                           "weakly structured f21": (21,)}
    out, _, _ = campaign
    args = argparse.Namespace(groups=True, no_cocopp=True)
    script.tables(out, args, [("gp-ei", "random")], (21,))
    text = capsys.readouterr().out
    assert "\nf21:\n" in text and "\nweakly structured f21:\n" in text and "separable" not in text  # f21's rows only
    fraction = coco.solved_fractions(out, functions=[21])["gp-ei"][2][5]  # the whole run: 5 x d
    assert fraction != coco.solved_fractions(out)["gp-ei"][2][5]  # the test could tell the two apart
    head = next(line for line in text.splitlines() if line.startswith("| algorithm "))
    row = next(line for line in text.splitlines() if line.startswith("| gp-ei "))
    column = [cell.strip() for cell in head.split("|")].index("5 x d")
    assert row.split("|")[column].strip() == f"{fraction:.3f}"
    (_, _, mine, theirs, _, _, _), = coco.paired_comparison(out, "random", functions=[21])
    pair = next(line for line in text.splitlines() if line.startswith("| gp-ei vs random | f21 "))
    assert [float(v) for v in pair.split("|")[4:6]] == pytest.approx([mine, theirs], abs=5e-4)


def test_runs_are_selected_by_dimension_instance_and_algorithm(campaign, benchmark_script, capsys):
    import argparse

    out, _, _ = campaign
    every = coco.read_runs(out)
    assert set(coco.read_runs(out, algorithms=["gp-ei"])) == {"gp-ei"}
    assert coco.read_runs(out, dimensions=[3]) == {} and coco.read_runs(out, instances=[4]) == {}
    chosen = coco.read_runs(out, functions=[21], dimensions=[2], instances=[3, 4], algorithms=["random"])
    assert set(chosen) == {"random"} and set(chosen["random"]) == {(21, 2)}
    for key, value in every["random"][(21, 2)].items():
        np.testing.assert_array_equal(chosen["random"][(21, 2)][key], value)
    assert coco.paired_comparison(out, "random", algorithms=["gp-ei"]) == coco.paired_comparison(out, "random")
    assert coco.paired_comparison(out, "random", algorithms=["random"]) == []  # gp-ei's row left out
    with pytest.raises(TypeError, match="algorithms must be a sequence of names"):
        coco.read_runs(out, algorithms="gp-ei")
    with pytest.raises(TypeError, match="algorithms must be a sequence of names"):
        coco.paired_comparison(out, "random", algorithms="gp-ei")
    assert coco.solved_fractions(out, instances=[3]) == coco.solved_fractions(out)
    script = benchmark_script("reproduce_coco")
    script.tables(out, argparse.Namespace(groups=False, no_cocopp=True), [], (1, 21), algorithms=["gp-ei"])
    text = capsys.readouterr().out
    assert "| gp-ei " in text and "| random " not in text
    script.tables(out, argparse.Namespace(groups=False, no_cocopp=True), [], (1, 21), dims=[3])
    assert "| gp-ei " not in capsys.readouterr().out


def test_selected_instances_slice_every_record_alike(tmp_path):
    folder = tmp_path / "alg" / "nbo-jax"
    folder.mkdir(parents=True)
    record = dict(x=np.arange(2 * 3 * 2, dtype=float).reshape(2, 3, 2), f=np.array([[5.0, 4, 3], [9, 8, 7]]),
                  instances=np.array([1, 2]), f_opt=np.array([0.5, 1.5]), c=np.arange(2 * 3).reshape(2, 3, 1))
    np.savez(folder / "f001_d02.npz", **record)
    run = coco.read_runs(tmp_path, instances=[2])["alg"][(1, 2)]
    assert set(run) == set(record)
    for key, value in record.items():
        np.testing.assert_array_equal(run[key], value[1:])  # the second instance's row of each record
    assert coco.read_runs(tmp_path, instances=[1, 2])["alg"][(1, 2)]["f"].shape == (2, 3)


def test_campaign_resumes_skips_done_work_and_refuses_other_settings(tmp_path):
    algos = {"random": nbo.random_search()}
    kw = dict(dimensions=[2], instances=[1, 2], budget_multiplier=3, progress=False)
    first = coco.run_campaign(algos, tmp_path, functions=[1], **kw)
    assert first.ran == [("random", 2, (1,))] and first.evaluations["random"] == 12
    again = coco.run_campaign(algos, tmp_path, functions=[1, 2], **kw)
    assert again.ran == [("random", 2, (2,))] and again.skipped == [("random", 2, (1,))]
    assert sorted((tmp_path / "random" / "nbo-jax" / "done-all.txt").read_text().split("\n")) == [
        "", "1 2 1", "1 2 2", "2 2 1", "2 2 2"]
    # the resumed run logged into a second COCO folder; cocopp merges them per algorithm
    assert sorted(p.name for p in (tmp_path / "random").iterdir() if p.name != "nbo-jax") == ["all", "all-0001"]
    with pytest.raises(ValueError, match=r"holds a campaign with budget_multiplier=3.0, not 4.0"):
        coco.run_campaign(algos, tmp_path, functions=[1], **{**kw, "budget_multiplier": 4})
    with pytest.raises(ValueError, match=r"holds 'random' built as"):
        coco.run_campaign({"random": nbo.random_search(q=2)}, tmp_path, functions=[1], **kw)


def test_campaign_resumes_an_algorithm_wrapped_in_a_trust_region(tmp_path):
    # the recipe of trust_region(inner) names the inner algorithm by its own recipe, not by its
    # functions' addresses (which differ for every build): a resume with a fresh build skips
    kw = dict(dimensions=[2], instances=[1], budget_multiplier=3, progress=False)
    first = coco.run_campaign({"t": nbo.trust_region(nbo.random_search())}, tmp_path, functions=[1], **kw)
    assert first.ran == [("t", 2, (1,))]
    again = coco.run_campaign({"t": nbo.trust_region(nbo.random_search())}, tmp_path, functions=[1], **kw)
    assert again.ran == [] and again.skipped == [("t", 2, (1,))]
    with pytest.raises(ValueError, match=r"holds 't' built as FactoryCall\('nbo_jax.transforms.trust_region:trust_region', "
                                         r"\{'algorithm': FactoryCall\('nbo_jax.algorithms.random_search"):
        coco.run_campaign({"t": nbo.trust_region(nbo.random_search(q=2))}, tmp_path, functions=[1], **kw)


def test_batches_split_the_campaign_without_overlap(tmp_path):
    algos = {"random": nbo.random_search()}
    kw = dict(functions=[1, 2, 3, 4, 5], dimensions=[2], instances=[1], budget_multiplier=2, progress=False)
    a = coco.run_campaign(algos, tmp_path, batch=(1, 2), **kw)
    b = coco.run_campaign(algos, tmp_path, batch=(2, 2), **kw)
    assert [u[2] for u in a.ran] == [(1,), (3,), (5,)] and [u[2] for u in b.ran] == [(2,), (4,)]
    done = set()
    for path in (tmp_path / "random" / "nbo-jax").glob("done-*.txt"):
        done |= set(path.read_text().split("\n")) - {""}
    assert done == {f"{f} 2 1" for f in (1, 2, 3, 4, 5)}
    assert coco.run_campaign(algos, tmp_path, **kw).ran == []  # everything done


def test_functions_per_run_gives_the_same_runs(tmp_path, x64):
    algos = {"random": nbo.random_search()}
    kw = dict(functions=[1, 5], dimensions=[2], instances=[1, 2], budget_multiplier=3, progress=False)
    one_report = coco.run_campaign(algos, tmp_path / "one", **kw)
    both_report = coco.run_campaign(algos, tmp_path / "both", functions_per_run=2, **kw)
    assert one_report.ran == [("random", 2, (1,)), ("random", 2, (5,))]  # two compiled calls ...
    assert both_report.ran == [("random", 2, (1, 5))]  # ... and one, with the same runs
    one, both = coco.read_runs(tmp_path / "one"), coco.read_runs(tmp_path / "both")
    for unit in one["random"]:
        np.testing.assert_array_equal(one["random"][unit]["x"], both["random"][unit]["x"])


def test_in_sequence_gives_the_same_runs(tmp_path, x64, monkeypatch):
    """--in-sequence reaches the runner and runs each problem in turn (jax.lax.map): the
    vmapped runs, float64: equal (run_bo's contract test checks vmapped == alone for every
    algorithm)."""
    argv = ["coco", "--algorithms", "random", "--functions", "1,5", "--dims", "2", "--instances", "1,2",
            "--budget-multiplier", "3", "--no-progress", "--x64"]
    seen = []  # the runner's in_sequence per unit (random search is the same either way)
    real = coco._Runner.__call__
    monkeypatch.setattr(coco._Runner, "__call__",
                        lambda self, *a, **kw: seen.append(a[-1]) or real(self, *a, **kw))
    with contextlib.redirect_stdout(io.StringIO()):
        assert main([*argv, "--out", str(tmp_path / "vmapped")]) == 0
        assert main([*argv, "--out", str(tmp_path / "sequence"), "--in-sequence"]) == 0
    assert seen == [False, False, True, True]
    vmapped, sequence = coco.read_runs(tmp_path / "vmapped"), coco.read_runs(tmp_path / "sequence")
    assert sorted(sequence["random"]) == sorted(vmapped["random"]) == [(1, 2), (5, 2)]
    for unit, run in vmapped["random"].items():
        assert run["x"].shape == (2, 6, 2)
        np.testing.assert_array_equal(sequence["random"][unit]["x"], run["x"])
        np.testing.assert_array_equal(sequence["random"][unit]["f"], run["f"])
    with pytest.raises(TypeError, match="in_sequence must be a bool, got str"):
        coco.run_campaign({"random": nbo.random_search()}, tmp_path / "bad", functions=[1], dimensions=[2],
                          instances=[1], in_sequence="yes", progress=False)


def test_constrained_suite_with_constrained_ei(tmp_path, x64):
    report = coco.run_campaign({"gp-cei": nbo.registry.get("gp-cei")}, tmp_path, suite="bbob-constrained",
                               functions=[2], dimensions=[2], instances=[1], budget_multiplier=4, progress=False)
    assert report.evaluations["gp-cei"] == 8
    run = coco.read_runs(tmp_path)["gp-cei"][(2, 2)]
    _, ref = _direct(2, 2, 1, "bbob-constrained")
    np.testing.assert_array_equal(run["c"][0], np.stack([ref.constraint(x) for x in run["x"][0]]))
    info = (tmp_path / "gp-cei" / "all" / "bbobexp_f2.info").read_text()
    assert "suite = 'bbob-constrained', funcId = 2, DIM = 2" in info


@pytest.mark.parametrize("algorithm,suite,message", [
    ("gp-cei", "bbob", "is a constrained algorithm: run it with suite='bbob-constrained'"),
    ("neural-cbo", "bbob", "is a constrained algorithm"),
])
def test_campaign_refuses_algorithms_that_cannot_run(tmp_path, algorithm, suite, message):
    with pytest.raises(ValueError, match=message):
        coco.run_campaign({algorithm: nbo.registry.get(algorithm)}, tmp_path, suite=suite, functions=[1],
                          dimensions=[2], instances=[1], progress=False)
    assert not (tmp_path / "campaign.json").exists()  # refused before anything was written


def test_campaign_refuses_pinn_bo(tmp_path):
    algo = nbo.pinn_bo(operator=lambda f, x: f(x), source=0.0)
    with pytest.raises(ValueError, match="PINN-BO needs the PDE"):
        coco.run_campaign({"pinn-bo": algo}, tmp_path, functions=[1], dimensions=[2], instances=[1], progress=False)


@pytest.mark.parametrize("argv,message", [
    (["--dims", "4"], "dimension must be one of COCO's"),
    (["--batch", "3/2"], "--batch: expected K/N"),
    (["--instances", "2-1"], "--instances: empty range"),
    (["--algorithms", "gp-ei,nope"], "--algorithms: algorithm must be one of"),
])
def test_cli_errors_exit_2_naming_the_option(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as info:
        main(["coco", "--out", str(tmp_path / "c"), "--functions", "1", *argv])
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_names_and_folders_keep_every_character(tmp_path):
    """cocoex 2.8's dict options drop a trailing "u" ("coco_cpu" -> "coco_cp"): the observer
    gets COCO's string options, so the data lands where asked, under the name given."""
    out = tmp_path / "coco_cpu"
    coco.run_campaign({"menu": nbo.random_search()}, out, functions=[1], dimensions=[2], instances=[1],
                      budget_multiplier=2, progress=False)
    info = (out / "menu" / "all" / "bbobexp_f1.info").read_text()
    assert "algId = 'menu'" in info
    assert not (tmp_path / "coco_cp").exists()
    with pytest.raises(ValueError, match="must be a plain folder name"):
        coco.run_campaign({"my alg": nbo.random_search()}, out, functions=[1], dimensions=[2], instances=[1],
                          progress=False)
    with pytest.raises(ValueError, match="out: COCO's observer cannot write to a path with spaces"):
        coco.run_campaign({"r": nbo.random_search()}, tmp_path / "a b", functions=[1], dimensions=[2],
                          instances=[1], progress=False)
    # cocoex aborts the interpreter on long data paths (measured: 154 characters): refused first
    with pytest.raises(ValueError, match="out: COCO's observer .cocoex. aborts the process"):
        coco.run_campaign({"r": nbo.random_search()}, tmp_path / ("x" * 150), functions=[1], dimensions=[2],
                          instances=[1], progress=False)


def test_replay_refuses_a_value_the_run_did_not_see(tmp_path):
    observer = cocoex.Observer("bbob", f"outer_folder: {tmp_path} result_folder: r algorithm_name: r")
    x = np.zeros((2, 2))
    f = bbob.evaluate(x, 1, 1)
    np.testing.assert_array_equal(coco._replay(observer, "bbob", 1, 2, 1, x, f, None), f)
    with pytest.raises(RuntimeError, match=r"evaluation 2: cocoex gives f = .*, the run saw"):
        coco._replay(observer, "bbob", 1, 2, 1, x, f + np.array([0.0, 1.0]), None)
