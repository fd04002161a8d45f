"""AskTell and AsyncStudy with m >= 2 objectives: rows of objectives told, the observed Pareto
front and its hypervolume against brute-force references, pending points, failed rows, the
shape refusals, and save/load that continues bit for bit (float64)."""

import itertools

import jax
import numpy as np
import pytest

import nbo_jax as nbo
from nbo_jax.ask_tell import AskTell
from nbo_jax.integrations.study import AsyncStudy

BOX = [(0.0, 1.0), (0.0, 1.0)]
X0 = np.array([[0.1, 0.2], [0.3, 0.9], [0.5, 0.5], [0.7, 0.1], [0.9, 0.8], [0.2, 0.6]])
# objectives of X0: rows 0, 1, 3 are the front; row 2 is dominated by row 0; row 4 failed;
# row 5 repeats row 1's values (a duplicate: one of them is on the front)
Y0 = np.array([[1.0, 4.0], [0.5, 6.0], [2.0, 5.0], [3.0, 1.0], [np.nan, 0.0], [0.5, 6.0]])


def _front(y: np.ndarray) -> np.ndarray:
    """Brute-force non-dominated rows of the finite rows of ``y`` (first of duplicates)."""
    keep = np.all(np.isfinite(y), axis=1)
    out = []
    for i in np.nonzero(keep)[0]:
        dominated = any(np.all(y[j] <= y[i]) and np.any(y[j] < y[i]) for j in np.nonzero(keep)[0])
        repeated = any(np.array_equal(y[j], y[i]) for j in np.nonzero(keep)[0] if j < i)
        if not dominated and not repeated:
            out.append(i)
    return np.array(out)


def _hv2(front: np.ndarray, ref) -> float:
    """Hypervolume of a 2-objective front by inclusion-exclusion over its boxes (small n)."""
    total = 0.0
    for k in range(1, len(front) + 1):
        for rows in itertools.combinations(range(len(front)), k):
            corner = np.max(front[list(rows)], axis=0)
            total += (-1) ** (k + 1) * np.prod(np.maximum(np.asarray(ref) - corner, 0.0))
    return total


def test_random_search_front_hypervolume_pending_and_save(tmp_path):
    with pytest.warns(RuntimeWarning, match="1 failed evaluation"):
        opt = AskTell(nbo.random_search(), BOX, 12, jax.random.key(0), X0, Y0)
    assert opt.n_objectives == 2 and opt.y.shape == (6, 2)
    np.testing.assert_array_equal(opt.valid, [True, True, True, True, False, True])
    x, y = opt.pareto_front()
    np.testing.assert_array_equal(y, Y0[[0, 1, 3]])
    np.testing.assert_array_equal(x, X0[[0, 1, 3]])
    ref = (4.0, 7.0)
    assert opt.hypervolume(ref) == pytest.approx(_hv2(Y0[[0, 1, 3]], ref), rel=1e-6)  # 3*3 + 0.5*1 + 1*3 = 12.5
    assert opt.hypervolume(ref) == pytest.approx(12.5, rel=1e-6)
    with pytest.raises(ValueError, match=r"best\(\): this optimizer has 2 objectives.*pareto_front"):
        opt.best()
    assert "m=2, front=3" in repr(opt)
    # pending points are fantasized with one lie per objective, then told as rows (n, m)
    a, b = opt.ask(), opt.ask()
    assert opt.pending.shape == (2, 2) and not np.array_equal(a, b)
    opt.tell(np.stack([a, b]), [[0.2, 0.3], [5.0, 5.0]])
    assert len(opt.pending) == 0 and opt.y.shape == (8, 2)
    np.testing.assert_array_equal(opt.pareto_front()[1], opt.y[_front(opt.y)])
    np.testing.assert_array_equal(opt.pareto_front()[1], [[0.2, 0.3]])
    opt.save(tmp_path / "mo")
    back = AskTell.load(tmp_path / "mo")
    np.testing.assert_array_equal(back.y, opt.y)
    np.testing.assert_array_equal(back.ask(), opt.ask())


def test_shape_refusals_name_y_and_the_number_of_objectives():
    with pytest.raises(ValueError, match=r"y0 has shape \(6, 2\): 2 objectives per point, and algorithm 'gp-ei' "
                                         "optimizes one"):
        AskTell(nbo.registry.get("gp-ei"), BOX, 12, jax.random.key(0), X0, Y0)
    with pytest.raises(ValueError, match=r"y0 must have shape \(n0, m\) with m >= 2"):
        AskTell(nbo.registry.get("gp-ehvi"), BOX, 12, jax.random.key(0), X0[:4], Y0[:4, 0])
    with pytest.warns(RuntimeWarning):
        mo = AskTell(nbo.random_search(), BOX, 12, jax.random.key(0), X0, Y0)
    with pytest.raises(ValueError, match="y is a single number, and this optimizer has 2 objectives"):
        mo.tell(X0[0], 1.0)
    with pytest.raises(ValueError, match=r"y must hold 2 objective values per point.*got shape \(3,\)"):
        mo.tell(X0[0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"y must hold 2 objective values per point.*n = 2, got shape \(2,\)"):
        mo.tell(X0[:2], [1.0, 2.0])
    with pytest.raises(ValueError, match="reference_point must be 2 finite floats"):
        mo.hypervolume([1.0])
    assert mo.y.shape == (6, 2)  # nothing recorded
    one = AskTell(nbo.random_search(), BOX, 12, jax.random.key(0), X0, Y0[:, 1])
    with pytest.raises(ValueError, match=r"y must hold one value per point: 2 value\(s\) for 1 point\(s\) \(this "
                                         r"optimizer has one objective\)"):
        one.tell(X0[0], [1.0, 2.0])
    with pytest.raises(ValueError, match=r"y has shape \(2, 2\): 2 values per point, and this optimizer has one "
                                         "objective"):
        one.tell(X0[:2], Y0[:2])
    with pytest.raises(ValueError, match=r"pareto_front\(\): this optimizer has one objective"):
        one.pareto_front()


def test_gp_ehvi_resumes_bit_for_bit(x64, tmp_path):
    from nbo_jax.benchmarks.multi_objective import PROBLEMS

    problem = PROBLEMS["branin_currin"]()
    algo = nbo.gp_bo(acquisition="ehvi", reference_point=problem.reference_point, fit_steps=3,
                     acq_optimizer=dict(raw_samples=16, num_restarts=1, steps=2))
    opt = AskTell(algo, BOX, 10, jax.random.key(1), X0[:5], np.asarray(problem(X0[:5])))
    np.testing.assert_array_equal(np.asarray(opt.state.reference), problem.reference_point)
    y = np.asarray(problem(opt.x))
    assert opt.hypervolume(problem.reference_point) == pytest.approx(
        _hv2(y[_front(y)], problem.reference_point), rel=1e-9)
    opt.save(tmp_path / "ehvi")  # (a tell would compile the GP's refit too: rows are told in the test above)
    back = AskTell.load(tmp_path / "ehvi")
    np.testing.assert_array_equal(np.asarray(back.state.reference), problem.reference_point)
    x = opt.ask()
    assert x.shape == (2,) and np.all((x >= 0) & (x <= 1))
    np.testing.assert_array_equal(back.ask(), x)


def test_async_study_with_two_objectives():
    study = AsyncStudy(nbo.random_search(), BOX, n_init=2, key=jax.random.key(0), capacity=8)
    a, b = study.suggest(), study.suggest()
    study.tell(a, [1.0, 2.0])
    with pytest.raises(ValueError, match=r"y: this study's values are 2 objective values per point, got shape \(\)"):
        study.tell(b, 3.0)
    study.tell(b, [2.0, 1.0])
    c, d = study.suggest(), study.suggest()  # the optimizer starts from the two rows
    study.tell(c, [0.5, 3.0])
    study.tell(d, float("nan"), error="worker crashed")  # one NaN fails the whole row
    assert study.y.shape == (4, 2) and study.optimizer.n_objectives == 2
    assert np.all(np.isnan(study.y[3])) and study.failures[0]["error"] == "worker crashed"
    np.testing.assert_array_equal(study.pareto_front()[1], [[1.0, 2.0], [2.0, 1.0], [0.5, 3.0]])
    with pytest.raises(ValueError, match=r"best\(\): the study has 2 objectives"):
        study.best()
    back = AsyncStudy.from_state_dict(study.state_dict(), nbo.random_search())
    np.testing.assert_array_equal(back.y, study.y)
