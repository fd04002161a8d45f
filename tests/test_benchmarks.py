"""Tests of nbo_jax.benchmarks (synthetic functions and the get() factory), in float64."""

import json
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from nbo_jax import benchmarks
from nbo_jax.benchmarks import get


@pytest.fixture(autouse=True)
def x64():
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", old)


# Independent numpy references (x: (n, d)), written from the sfu.ca formulas.
def _np_levy(x):
    w = 1 + (x - 1) / 4
    return (np.sin(np.pi * w[:, 0]) ** 2
            + np.sum((w[:, :-1] - 1) ** 2 * (1 + 10 * np.sin(np.pi * w[:, :-1] + 1) ** 2), 1)
            + (w[:, -1] - 1) ** 2 * (1 + np.sin(2 * np.pi * w[:, -1]) ** 2))


def _np_hartmann6(x):
    a = np.array([[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
                  [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]])
    p = 1e-4 * np.array([[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
                         [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]])
    alpha = np.array([1.0, 1.2, 3.0, 3.2])
    return -np.exp(-np.sum(a * (x[:, None, :] - p) ** 2, -1)) @ alpha


def _np_branin(x):
    x1, x2 = x[:, 0], x[:, 1]
    return ((x2 - 5.1 / (4 * np.pi**2) * x1**2 + 5 / np.pi * x1 - 6) ** 2
            + 10 * (1 - 1 / (8 * np.pi)) * np.cos(x1) + 10)


def _idx(x):
    return np.arange(1, x.shape[1] + 1)


REF = {
    "ackley": lambda x: (-20 * np.exp(-0.2 * np.sqrt(np.mean(x**2, 1)))
                         - np.exp(np.mean(np.cos(2 * np.pi * x), 1)) + 20 + np.e),
    "levy": _np_levy,
    "michalewicz": lambda x: -np.sum(np.sin(x) * np.sin(_idx(x) * x**2 / np.pi) ** 20, 1),
    "rastrigin": lambda x: 10 * x.shape[1] + np.sum(x**2 - 10 * np.cos(2 * np.pi * x), 1),
    "styblinski_tang": lambda x: 0.5 * np.sum(x**4 - 16 * x**2 + 5 * x, 1),
    "drop_wave": lambda x: (-(1 + np.cos(12 * np.sqrt(np.sum(x**2, 1))))
                            / (0.5 * np.sum(x**2, 1) + 2)),
    "cosine_mixture": lambda x: -0.1 * np.sum(np.cos(5 * np.pi * x), 1) + np.sum(x**2, 1),
    "hartmann6": _np_hartmann6,
    "branin": _np_branin,
    "rosenbrock": lambda x: np.sum(100 * (x[:, 1:] - x[:, :-1] ** 2) ** 2
                                   + (x[:, :-1] - 1) ** 2, 1),
    "griewank": lambda x: (np.sum(x**2, 1) / 4000
                           - np.prod(np.cos(x / np.sqrt(_idx(x))), 1) + 1),
}

CASES = [
    ("ackley", 1), ("ackley", 2), ("ackley", 10),
    ("levy", 1), ("levy", 3), ("levy", 10),
    ("michalewicz", 2), ("michalewicz", 5), ("michalewicz", 10), ("michalewicz", 30),
    ("rastrigin", 1), ("rastrigin", 5), ("rastrigin", 20),
    ("styblinski_tang", 1), ("styblinski_tang", 2), ("styblinski_tang", 10),
    ("drop_wave", 2),
    ("cosine_mixture", 1), ("cosine_mixture", 5), ("cosine_mixture", 50),
    ("hartmann6", 6),
    ("branin", 2),
    ("rosenbrock", 2), ("rosenbrock", 5), ("rosenbrock", 10),
    ("griewank", 1), ("griewank", 3), ("griewank", 10),
]
IDS = [f"{n}-{d}" for n, d in CASES]


def _box_points(p, n, seed):
    u = np.random.default_rng(seed).random((n, p.dim))
    return p.bounds.lower + u * (p.bounds.upper - p.bounds.lower)


def test_available_and_exports():
    assert benchmarks.synthetic.available() == list(REF)
    for name in REF:
        assert callable(getattr(benchmarks, name))


@pytest.mark.parametrize("name,dim", CASES, ids=IDS)
def test_optimum_bounds_and_shapes(name, dim):
    p = get(name, dim=dim)
    assert p.name == name and p.dim == dim
    lo, hi = p.bounds
    assert lo.shape == (dim,) and hi.shape == (dim,) and np.all(lo < hi)
    assert p.optimal_value is not None and p.optimizer.shape == (dim,)
    for xs in p.metadata["optimizers"]:  # all known optimizers (three for Branin)
        assert np.all(xs >= lo) and np.all(xs <= hi)
        np.testing.assert_allclose(float(p(xs)), p.optimal_value, rtol=1e-9, atol=1e-9)
    # shapes: one point -> scalar, a batch -> (n,)
    x = _box_points(p, 7, 1)
    assert p(x[0]).shape == ()
    assert p(x).shape == (7,)
    assert p(x.reshape(7, 1, dim)).shape == (7, 1)


@pytest.mark.parametrize("name,dim", CASES, ids=IDS)
def test_values_match_reference_and_exceed_optimum(name, dim):
    p = get(name, dim=dim)
    x = _box_points(p, 2000, 2)
    f = np.asarray(jax.jit(p)(x))
    np.testing.assert_allclose(f, REF[name](x), rtol=1e-10, atol=1e-10)
    assert np.all(f >= p.optimal_value - 1e-9)
    # small perturbations of the optimizer (kept in the box) do not go below f*
    width = p.bounds.upper - p.bounds.lower
    dx = 1e-3 * width * np.random.default_rng(3).standard_normal((200, dim))
    near = np.clip(p.optimizer + dx, p.bounds.lower, p.bounds.upper)
    assert np.all(np.asarray(jax.jit(p)(near)) >= p.optimal_value - 1e-9)


@pytest.mark.parametrize("name,dim", CASES, ids=IDS)
def test_gradients_finite_and_float32(name, dim):
    p = get(name, dim=dim)
    g = jax.jit(jax.grad(p.objective))
    for x in (jnp.asarray(p.optimizer), jnp.asarray(_box_points(p, 1, 4)[0])):
        assert np.all(np.isfinite(np.asarray(g(x))))
    x32 = jnp.asarray(_box_points(p, 3, 5), jnp.float32)
    f = jax.jit(p)
    f32 = f(x32)
    assert f32.dtype == jnp.float32
    np.testing.assert_allclose(f32, f(x32.astype(jnp.float64)), rtol=1e-4, atol=1e-4)
    assert f(jnp.zeros(dim, jnp.int32)).dtype == jnp.float64  # ints are promoted


def test_hand_computed_values():
    # Values checked independently with numpy (Ackley at ones: 20 (1 - exp(-0.2))).
    assert float(get("branin")(jnp.zeros(2))) == pytest.approx(55.602112642270262, rel=1e-12)
    assert float(get("ackley", dim=2)(jnp.ones(2))) == pytest.approx(3.6253849384403627,
                                                                     rel=1e-12)
    assert float(get("ackley", dim=2)(jnp.ones(2))) == pytest.approx(20 * (1 - math.exp(-0.2)))
    assert float(get("rastrigin", dim=3)(jnp.ones(3))) == pytest.approx(3.0, abs=1e-12)
    assert float(get("rosenbrock", dim=2)(jnp.zeros(2))) == pytest.approx(1.0, abs=1e-12)
    assert float(get("drop_wave")(jnp.zeros(2))) == -1.0
    assert float(get("griewank", dim=4)(jnp.zeros(4))) == 0.0
    assert float(get("cosine_mixture", dim=4)(jnp.zeros(4))) == pytest.approx(-0.4)
    assert float(get("levy", dim=3)(jnp.ones(3))) == pytest.approx(0.0, abs=1e-15)


def test_published_optima():
    # Michalewicz (sfu.ca/~ssurjano/michal.html)
    # (published to 8, 7 and 6 significant digits: tolerance = half a unit in the last one)
    for d, fstar, tol in [(2, -1.8013034, 5e-8), (5, -4.687658, 5e-7), (10, -9.66015, 5e-6)]:
        assert get("michalewicz", dim=d).optimal_value == pytest.approx(fstar, abs=tol)
    np.testing.assert_allclose(get("michalewicz", dim=2).optimizer, [2.20290552, 1.57079633],
                               atol=1e-8)
    # Hartmann-6 (sfu.ca/~ssurjano/hart6.html, BoTorch)
    h = get("hartmann6")
    assert h.optimal_value == pytest.approx(-3.32237, abs=1e-5)
    np.testing.assert_allclose(h.optimizer, [0.20169, 0.150011, 0.476874, 0.275332, 0.311652,
                                             0.6573], atol=1e-5)
    # Branin: three optimizers, f* = 0.397887
    b = get("branin")
    assert b.optimal_value == pytest.approx(0.397887, abs=1e-6)
    np.testing.assert_allclose(b.metadata["optimizers"],
                               [[-np.pi, 12.275], [np.pi, 2.275], [9.42478, 2.475]], atol=1e-5)
    # Styblinski-Tang: f* = -39.16616570377142 d at x_i = -2.903534
    s = get("styblinski_tang", dim=3)
    assert s.optimal_value == pytest.approx(-39.16616570377142 * 3)
    np.testing.assert_allclose(s.optimizer, -2.903534, atol=1e-6)


def test_michalewicz_parameter_m():
    p = get("michalewicz", dim=3, m=5)
    assert p is get("michalewicz", dim=3, m=5.0)
    x = _box_points(p, 2000, 6)
    ref = -np.sum(np.sin(x) * np.sin(_idx(x) * x**2 / np.pi) ** 10, 1)
    np.testing.assert_allclose(np.asarray(p(x)), ref, rtol=1e-10)
    assert float(p(p.optimizer)) == pytest.approx(p.optimal_value, abs=1e-10)
    assert np.all(ref >= p.optimal_value - 1e-9)
    with pytest.raises(TypeError, match="m"):
        get("rastrigin", dim=2, m=3)


def test_name_variants_and_cache():
    p = get("ackley", dim=10)
    assert get("ackley", dim=10) is p
    assert get("Ackley", dim=np.int64(10), noise_std=0) is p
    assert get("ackley", dim=11) is not p
    assert get("ackley", dim=10, noise_std=0.1) is not p
    assert get("ackley", dim=10, noise_std=0.1).noise_std == 0.1
    st = get("styblinski_tang", dim=4)
    assert get("styblinski-tang", dim=4) is st and get("StyblinskiTang", dim=4) is st
    assert get("drop_wave") is get("drop-wave", dim=2) is get("DropWave")
    assert get("hartmann") is get("hartmann6", dim=6)
    assert get("cosine-mixture", dim=3).name == "cosine_mixture"
    assert p.noise_std == 0.0


@pytest.mark.parametrize("name,dim", [("rastrigin", 3), ("branin", 2), ("ackley", 5)])
def test_paper_noise(name, dim):
    p = get(name, dim=dim, noise_std="paper")
    assert get(name, dim=dim, noise_std="paper") is p
    x = _box_points(p, 10_000, 0)  # the documented points: default_rng(0)
    fx = REF[name](x)
    f_min = min(fx.min(), p.optimal_value)
    expected = math.sqrt(0.01 * (fx.max() - f_min))
    assert np.isfinite(p.noise_std) and p.noise_std > 0
    assert p.noise_std == pytest.approx(expected, rel=1e-10)
    assert p.metadata["noise_preset"] == "paper"
    if name == "rastrigin":  # 0 <= f <= d (5.12^2 + 20) on the box
        assert p.noise_std <= math.sqrt(0.01 * dim * (5.12**2 + 20))
    assert p.objective is get(name, dim=dim).objective  # same function, noise differs


def test_errors():
    with pytest.raises(ValueError, match="name") as e:
        get("sphere", dim=2)
    assert "ackley" in str(e.value)  # lists the available names
    with pytest.raises(ValueError, match="dim"):
        get("branin", dim=3)
    with pytest.raises(ValueError, match="dim"):
        get("hartmann", dim=5)
    with pytest.raises(ValueError, match="dim"):
        get("drop_wave", dim=1)
    with pytest.raises(ValueError, match="dim"):
        get("ackley")  # any-d problems need dim
    with pytest.raises(ValueError, match="dim"):
        get("ackley", dim=0)
    with pytest.raises(ValueError, match="dim"):
        get("ackley", dim=2.5)
    with pytest.raises(ValueError, match="dim"):
        get("rosenbrock", dim=1)
    with pytest.raises(ValueError, match="noise_std"):
        get("ackley", dim=2, noise_std=-0.1)
    with pytest.raises(ValueError, match="noise_std"):
        get("ackley", dim=2, noise_std=float("nan"))
    with pytest.raises(ValueError, match="noise_std"):
        get("ackley", dim=2, noise_std="loud")


def test_time_to_target_first_reach(benchmark_script):
    ttt = benchmark_script("time_to_target")
    best = np.array([[5.0, 4.0, 2.0, 2.0, 1.0],   # reaches 2.5 at iteration 2
                     [5.0, 5.0, 5.0, 4.0, 3.0],   # never reaches 1.0
                     [0.5, 0.5, 0.4, 0.3, 0.3],   # reaches at the initial design (iteration 0)
                     [3.0, 3.0, 3.0, 3.0, 3.0]])  # reaches exactly (<=) at iteration 0
    times = np.array([0.1, 1.0, 2.5, 4.0, 7.0])
    res = ttt.time_to_target(best, times, np.array([2.5, 1.0, 0.6, 3.0]))
    np.testing.assert_array_equal(res["reached"], [True, False, True, True])
    np.testing.assert_array_equal(res["iterations"], [2, -1, 0, 0])
    np.testing.assert_array_equal(res["seconds"][[0, 2, 3]], [2.5, 0.1, 0.1])
    assert np.isnan(res["seconds"][1])
    per_seed = ttt.time_to_target(best[:2], np.stack([times, 10 * times]), np.array([4.0, 4.0]))
    np.testing.assert_array_equal(per_seed["seconds"], [1.0, 40.0])  # (S, T) times: each seed its own clock
    assert ttt.median_iqr([np.nan, 1.0, 3.0])[0] == 2.0 and np.isnan(ttt.median_iqr([np.nan])[0])


def test_time_to_target_end_to_end(tmp_path, benchmark_script):
    """A tiny run: 2 seeds, Levy-2, 4 + 6 iterations in 2 segments, random search and a small
    GP-EI as the target. The target method reaches its own target in every seed (by definition),
    the JSON holds the fields, the stepped run is run_bo's (random search: the same best f),
    and a second call reads the cache."""
    import json

    import nbo_jax as nbo

    ttt = benchmark_script("time_to_target")
    problem = get("levy", dim=2, noise_std="paper")
    algos = {"random": nbo.registry.get("random"),
             "gp-ei": nbo.registry.get("gp-ei", fit_steps=10,
                                                acq_optimizer={"raw_samples": 64, "num_restarts": 2, "steps": 5})}
    kw = {"target_method": "gp-ei", "seeds": 2, "n_init": 4, "iterations": 6, "segments": 2, "out": tmp_path,
          "verbose": False}
    res = ttt.study([("levy_d2", problem)], algos, **kw)
    for m in algos:
        rec = json.loads((tmp_path / f"levy_d2__{m}.json").read_text())
        for field in ("best_f", "run_s", "compile_s", "plan", "target", "reached", "iterations_to_target",
                      "time_to_target_s", "time_to_target_with_compile_s", "settings"):
            assert field in rec, field
        assert np.asarray(rec["best_f"]).shape == (2, 7) and len(rec["run_s"]) == 7
        assert np.all(np.diff(rec["run_s"]) >= 0) and rec["compile_s"] > 0
        assert rec["plan"] == [[1, 5], [5, 10]]
    gp = res["levy_d2"]["gp-ei"]
    assert all(gp["reached"]) and all(0 <= i <= 6 for i in gp["iterations_to_target"])
    assert all(s is not None and s <= gp["run_s"][-1] for s in gp["time_to_target_s"])
    keys = jax.random.split(jax.random.key(0), 2)
    hist = jax.vmap(lambda k: nbo.run_bo(k, algos["random"], problem, 4, 6, segments=2))(keys)
    np.testing.assert_array_equal(np.asarray(hist.best_f)[:, 3:], np.asarray(res["levy_d2"]["random"]["best_f"]))
    again = ttt.study([("levy_d2", problem)], algos, **kw)  # cached: the same records
    assert again["levy_d2"]["gp-ei"]["run_s"] == gp["run_s"]
    seq = ttt.study([("levy_d2", problem)], algos, **dict(kw, out=tmp_path / "seq"), in_sequence=("random",))
    rand = seq["levy_d2"]["random"]  # seeds one after another, each with its own clock: the same runs
    assert rand["in_sequence"] and rand["settings"]["in_sequence"] and np.asarray(rand["run_s"]).shape == (2, 7)
    assert np.all(np.diff(rand["run_s"], axis=1) >= 0) and not seq["levy_d2"]["gp-ei"]["in_sequence"]
    np.testing.assert_array_equal(rand["best_f"], res["levy_d2"]["random"]["best_f"])
    assert ttt.total_run_s(rand) == pytest.approx(rand["run_s"][0][-1] + rand["run_s"][1][-1])


def test_mixed_selection_problems_have_their_stated_minima(benchmark_script):
    """``benchmarks/mixed_selection.py``'s problems: ``additive_terms`` takes -0.9 at the three
    three-hump camel choices and ``z = 0``, and no configuration of a grid over every category
    combination goes below it (its argmin is that combination), and the same for ``wide_terms``
    (8, 8 and 6 choices, 24 columns); ``permuted_hartmann`` with the
    identity permutation and ``k = 2`` is Hartmann-3, -3.86278 at its minimizer, and a
    permutation moves that minimizer."""
    import itertools

    ms = benchmark_script("mixed_selection")
    grid = np.linspace(-1.0, 1.0, 21)
    for terms, sizes in ((ms.additive_terms(), (4, 4, 5)), (ms.wide_terms(), (8, 8, 6))):
        assert (terms.bounds.dim, terms.bounds.unit_dim) == (5, sum(sizes) + 2)
        assert float(terms.objective(jnp.array([0.0, 1.0, 3.0, 0.0, 0.0]))) == pytest.approx(-0.9, abs=1e-12)
        combos = np.array(list(itertools.product(*(range(k) for k in sizes))), float)
        X = np.array([[*c, a, b] for c in combos for a in grid for b in grid])
        f = np.asarray(jax.jit(jax.vmap(terms.objective))(jnp.asarray(X)))
        assert f.min() >= -0.9 - 1e-12 and tuple(X[np.argmin(f), :3]) == (0.0, 1.0, 3.0)
    hartmann = ms.permuted_hartmann()
    at = np.array([0.114614, 0.555649, 0.852547])
    assert float(hartmann.objective(jnp.array([0.0, 2.0, *at]))) == pytest.approx(-3.86278, abs=1e-5)
    assert float(hartmann.objective(jnp.array([1.0, 2.0, *at]))) > -3.0


def test_mixed_selection_screens_another_algorithm(benchmark_script, capsys, tmp_path):
    """``mixed_selection.py --algorithm NAME --options ...``: one row per setting with the mean
    best value that :func:`nbo_jax.comparison.run_methods` gives for the same keys, the asks that
    repeat an earlier value (the design's own repeats not counted), the same rows read back from
    ``--out`` (marked stored; another seed count is run again), and the Neural-BO flags, a
    non-object ``--options``, ``--out`` with Neural-BO and an unknown algorithm refused by name."""
    import nbo_jax as nbo
    from nbo_jax import comparison

    ms = benchmark_script("mixed_selection")
    assert ms.repeated_asks(np.array([[1.0, 2.0, 1.0, 3.0, 2.0]]), 2) == 2
    assert ms.repeated_asks(np.array([[1.0, 1.0, 3.0], [4.0, 5.0, 5.0]]), 2) == 1
    assert ms.main(["--algorithm", "random", "--options", "{}", '{"q": 1}', "--problems", "integer_rosenbrock",
                    "--seeds", "3", "--n-iter", "2", "--sequential"]) == 0
    rows = [r for r in capsys.readouterr().out.splitlines() if r.startswith("| integer_rosenbrock")]
    keys = jax.random.split(jax.random.key(0), 3)
    hists, _ = comparison.run_methods(ms.integer_rosenbrock(), {"r": nbo.registry.get("random")}, keys, n_init=5,
                                      n_iter=2, progress=False, verbose=False, vmap_seeds=False)
    mean = float(np.mean(np.asarray(hists["r"]["best_f"][:, -1], np.float64)))
    assert len(rows) == 2 and rows[0].startswith("| integer_rosenbrock | `{}` |") and f"| {mean:.5g} |" in rows[0]
    assert rows[1].split(" | ")[3:5] == rows[0].split(" | ")[3:5]  # q=1 is the default: the same runs
    out = tmp_path / "screen.json"
    argv = ["--algorithm", "random", "--options", "{}", "--problems", "integer_rosenbrock", "--n-iter", "2",
            "--sequential", "--out", str(out)]
    for seeds, mark in (("3", " s)"), ("3", "(stored)"), ("2", " s)")):
        assert ms.main(argv + ["--seeds", seeds]) == 0
        got = [r for r in capsys.readouterr().out.splitlines() if r.startswith("| integer_rosenbrock")]
        assert len(got) == 1 and got[0].endswith(mark)
        if seeds == "3":
            assert got[0].split(" | ")[:5] == rows[0].split(" | ")[:5]
    kept = json.loads(out.read_text())
    assert len(kept) == 2  # 3 seeds and 2 seeds
    from nbo_jax.analysis import source_commit
    assert all(e["environment"]["nbo_jax_commit"] == source_commit() for e in kept.values())
    for argv, message in ((["--algorithm", "gp-ei", "--nu", "0.3"], "--nu set(s) Neural-BO only"),
                          (["--algorithm", "gp-ei", "--options", "[1]"], "argument --options: must be a JSON object"),
                          (["--algorithm", "foo"], "--algorithm: algorithm must be one of"),
                          (["--options", "{}"], "--options sets the keyword arguments of another --algorithm"),
                          (["--out", "x.json"], "--out keeps the settings of another --algorithm's screen")):
        with pytest.raises(SystemExit):
            ms.main(argv)
        assert message in capsys.readouterr().err


def test_mixed_selection_integer_problems_are_their_functions_on_the_grid(benchmark_script):
    """The integer problems of ``benchmarks/mixed_selection.py``: Levy-6 and Rosenbrock-4 / 100
    take 0 at the all-ones configuration, Hartmann-6 reads its integers as ``k / 10`` (its
    value at the configuration nearest its minimizer equals the function there), and every
    problem's last inputs are integers with the stated ranges."""
    from nbo_jax.benchmarks.synthetic import hartmann6
    from nbo_jax.search_space import Integer

    ms = benchmark_script("mixed_selection")
    assert set(ms.INTEGER) <= set(ms.ALL)
    levy, rosen, hart = ms.integer_levy(), ms.integer_rosenbrock(), ms.integer_hartmann6()
    assert float(levy.objective(jnp.ones(6))) == pytest.approx(0.0, abs=1e-6)
    assert float(rosen.objective(jnp.ones(4))) == pytest.approx(0.0, abs=1e-12)
    assert float(rosen.objective(jnp.array([1.0, 1.0, 2.0, 1.0]))) == pytest.approx((100.0 + 900.0 + 1.0) / 100.0, abs=1e-6)
    x = jnp.array([0.20169, 0.150011, 0.476874, 3.0, 3.0, 7.0])
    assert float(hart.objective(x)) == pytest.approx(float(hartmann6(x.at[3:].divide(10.0))), abs=1e-6)
    for problem, (n_int, low, high) in ((levy, (3, -5, 5)), (ms.integer_styblinski_tang(), (3, -5, 5)),
                                        (hart, (3, 0, 10)), (rosen, (2, -2, 2))):
        ints = [p for p in problem.bounds.parameters if isinstance(p, Integer)]
        assert [(p.low, p.high) for p in ints] == [(low, high)] * n_int
        assert all(isinstance(p, Integer) for p in problem.bounds.parameters[-n_int:])


def test_mixed_botorch_encoding_maps_botorch_columns_onto_the_space(benchmark_script):
    """``benchmarks/mixed.py``'s encoding for BoTorch's mixed loop (no BoTorch needed): each
    integer's allowed values on its ``[0, 1]`` column (log-scaled for a log integer) map one to
    one onto the integer's values, a log-scaled float's column ends at its bounds with the
    geometric mean in the middle, and a category's column holds its indices unchanged."""
    from nbo_jax.search_space import Categorical, Continuous, Integer, search_space

    mixed = benchmark_script("mixed")
    space = search_space([Continuous("c", 1e-2, 1e2, log=True), Integer("k", -2, 4, step=2),
                          Integer("leaf", 1, 32, log=True), Categorical("kind", ("a", "b", "c"))])
    discrete, categorical, to_x = mixed.botorch_encoding(space)
    assert sorted(discrete) == [1, 2] and categorical == {3: [0.0, 1.0, 2.0]}
    for j, values in (1, [-2, 0, 2, 4]), (2, list(range(1, 33))):
        assert len(discrete[j]) == len(values) and discrete[j][0] == 0.0 and discrete[j][-1] == pytest.approx(1.0)
        assert [to_x(np.array([0.5, v, v, 1.0]))[j] for v in discrete[j]] == values
    np.testing.assert_allclose(discrete[2][1], np.log(2) / np.log(32))  # log scale: 2 of 1..32
    for z, c in (0.0, 1e-2), (0.5, 1.0), (1.0, 1e2):
        x = to_x(np.array([z, 0.0, 0.0, 2.0]))
        assert x[0] == pytest.approx(c, rel=1e-12) and x[3] == 2.0
        assert bool(space.contains(x))


def test_landscape_grid_random_search_zero_and_share(benchmark_script, tmp_path, capsys):
    """``benchmarks/landscape.py``: the grid of a task's space (every integer value, every
    choice, ``levels`` log-spaced floats), random search's median best as the grid's
    ``1 - 2^(-1/B)`` quantile, the share of the grid reaching a normalized score and the best
    configuration, a stored grid printed without evaluating, and bad arguments refused by name."""
    import json

    from nbo_jax.benchmarks import tuning
    from nbo_jax.search_space import Continuous

    ls = benchmark_script("landscape")
    assert ls.parameter_values(Continuous("C", 1e-2, 1e3, log=True), 6) == pytest.approx([1e-2, 1e-1, 1, 10, 100, 1e3])
    space = tuning.space("knn_wine")
    values, y = ls.grid_losses(space, lambda c: c["n_neighbors"] + 100 * c["p"] + (c["weights"] == "distance"), 2)
    assert y.shape == (25, 4, 2, 3) and values[2] == ["uniform", "distance"]
    assert y[4, 2, 1, 0] == 5 + 300 + 1
    assert ls.random_search_median_best(np.arange(100.0), 1) == 49.0
    assert ls.random_search_median_best(np.arange(100.0), 45) == 1.0  # the 1.5 % quantile

    row = ls.summary("knn_wine", values, y, budget=1, score=0.5)
    # budget 1: zero is the grid's median; score >= 0.5 is loss <= (best + zero) / 2
    zero = float(np.quantile(y.ravel(), 0.5, method="lower"))
    assert row["random_median"] == zero and row["best"] == 101.0
    assert row["best_config"] == [1, 1, "uniform", "none"]
    assert row["share"] == pytest.approx(np.mean(y <= (101.0 + zero) / 2))

    (tmp_path / "knn_wine.json").write_text(json.dumps({"levels": 10, "values": values, "y": y.tolist()}))
    assert ls.main(["--tasks", "knn_wine", "--out", str(tmp_path), "--budget", "1"]) == 0
    line = [r for r in capsys.readouterr().out.splitlines() if r.startswith("| `knn_wine`")]
    assert line and line[0].split(" | ")[1:4] == ["600", "101", "n_neighbors=1, p=1, weights='uniform', scaler='none'"]
    for argv, message in ((["--tasks", "foo"], "--tasks: unknown task 'foo'"), (["--levels", "1"], "--levels must be at least 2"),
                          (["--score", "0"], "--score must be in (0, 1]")):
        with pytest.raises(SystemExit):
            ls.main(argv)
        assert message in capsys.readouterr().err


def test_mixed_keeps_each_methods_environment(benchmark_script, tmp_path, capsys):
    """``benchmarks/mixed.py --out``: each (problem, method) result keeps the
    :func:`nbo_jax.analysis.environment_info` of its run, and ``--update`` keeps a stored method's
    (a result stored without one reads back as ``None``) while a rerun method gets the new one."""
    import json

    from nbo_jax.analysis import source_commit

    mixed = benchmark_script("mixed")
    argv = ["--problems", "func2c", "--seeds", "2", "--n-iter", "1", "--out", str(tmp_path)]
    assert mixed.main(argv + ["--methods", "random", "tpe"]) == 0
    path = tmp_path / "mixed.json"
    stored = json.loads(path.read_text())
    per = stored["results"]["func2c"]
    assert per["random"]["environment"]["nbo_jax_commit"] == source_commit()
    assert per["tpe"]["environment"]["jax"] == jax.__version__
    del per["tpe"]["environment"]
    per["random"]["environment"] = {"marker": 1}
    path.write_text(json.dumps(stored))
    assert mixed.main(argv + ["--methods", "random", "--update"]) == 0
    per = json.loads(path.read_text())["results"]["func2c"]
    assert per["tpe"]["environment"] is None and per["random"]["environment"]["jax"] == jax.__version__
    capsys.readouterr()
