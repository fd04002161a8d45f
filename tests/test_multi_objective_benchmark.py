"""benchmarks/multi_objective.py: its metric (running float64 hypervolume, floored log
difference), Optuna's seeded studies and the direction of its Welch p-values."""

import numpy as np
import pytest

from nbo_jax.benchmarks.multi_objective import zdt2


@pytest.fixture(scope="module")
def script():
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "multi_objective.py"
    spec = importlib.util.spec_from_file_location("multi_objective_script", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_running_hypervolume_of_zdt2_front_points(script):
    # x_1.. = 0: on ZDT2's front f = (x0, 1 - x0^2); reference point (11, 11)
    p = zdt2(dim=6)
    X = np.zeros((1, 3, 6))
    X[0, :, 0] = [0.5, 0.2, 0.8]
    f = [(x, 1 - x * x) for x in (0.5, 0.2, 0.8)]
    box = lambda a, b: (11 - a[0]) * (11 - b[1])
    hv0 = box(f[0], f[0])
    hv1 = hv0 + (f[0][0] - f[1][0]) * (11 - f[1][1])  # 0.2 adds the strip left of 0.5
    hv2 = hv1 + (11 - f[2][0]) * (f[0][1] - f[2][1])  # 0.8 adds the strip below 0.75
    np.testing.assert_allclose(script.hypervolumes(p, X)[0], [hv0, hv1, hv2], rtol=1e-12)
    out = script.log_difference(p, np.array([p.max_hypervolume - 1e-3, p.max_hypervolume]))
    np.testing.assert_allclose(out, [-3.0, script.FLOOR], rtol=1e-9)


def test_optuna_study_is_seeded_and_in_bounds(script):
    p = zdt2(dim=6)
    a, b = script.run_optuna("nsga2", p, 3, 4), script.run_optuna("nsga2", p, 3, 4)
    assert a.shape == (4, 6) and np.all((a >= 0) & (a <= 1))
    np.testing.assert_array_equal(a, b)


def test_table_p_values_favour_the_lower_method(script, capsys):
    low, high = [-2.0, -2.1, -1.9, -2.05], [0.0, 0.1, -0.1, 0.05]
    rec = lambda v: {"seeds": list(range(len(v))), "final_log_hv_difference": v}
    script.print_table({"args": {"seeds": 4, "n_init": 1, "n_iter": 1},
                        "results": {"zdt2": {"gp-ehvi": rec(low), "qlognehvi": rec(high), "nsga2": rec(high)}}})
    row = next(r for r in capsys.readouterr().out.splitlines() if r.startswith("| zdt2 | gp-ehvi"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    p_lower, p_botorch_lower, p_nsga2 = float(cells[4]), float(cells[5]), float(cells[6])
    assert p_lower < 1e-3 and p_nsga2 < 1e-3 and p_botorch_lower > 0.999
