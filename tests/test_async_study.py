"""AsyncStudy (issue 15): the asynchronous study behind the Ray executor and the Ray Tune
searcher, without Ray: the initial design, pending points, failures, q > 1, checkpoints."""

import jax
import numpy as np
import pytest

import nbo_jax as nbo
from nbo_jax.integrations.study import AsyncStudy

SMALL_GP = dict(acq_optimizer=dict(raw_samples=64, num_restarts=2, steps=3))
BOX = ([-1.0, 0.0], [1.0, 5.0])


def _f(x):
    return float((x[0] - 0.2) ** 2 + (x[1] - 1.0) ** 2)


def test_initial_design_then_model_with_busy_points_pending():
    study = AsyncStudy(nbo.gp_bo(**SMALL_GP), BOX, 4, jax.random.key(0))
    design = [study.suggest() for _ in range(4)]
    np.testing.assert_array_equal(np.stack(design), study.design)
    assert study.optimizer is None and study.busy.shape == (4, 2)
    for x in design[:3]:  # one result still out
        study.tell(x, _f(x))
    x5 = study.suggest()  # the optimizer starts from 3 results, design[3] pending
    assert study.optimizer is not None and len(study.optimizer.pending) == 2  # design[3] and x5
    np.testing.assert_array_equal(study.optimizer.pending[0], design[3])
    x6 = study.suggest()
    assert min(np.linalg.norm(x6 - design[3]), np.linalg.norm(x6 - x5)) > 1e-4
    for x in (x6, design[3], x5):  # results in any order
        study.tell(x, _f(x))
    assert study.n_told == 6 and not len(study.busy) and not len(study.optimizer.pending)
    np.testing.assert_allclose(study.y, [_f(x) for x in study.x])
    assert np.all(study.x >= BOX[0]) and np.all(study.x <= BOX[1])


def test_failures_keep_the_design_going_and_are_recorded():
    study = AsyncStudy(nbo.random_search(), BOX, 2, jax.random.key(1))
    for _ in range(3):  # every result fails: still uniform points, no model
        x = study.suggest()
        study.tell(x, float("nan"), error="crashed")
    assert study.optimizer is None and study.n_told == 3
    assert [f["error"] for f in study.failures] == ["crashed"] * 3 and [f["index"] for f in study.failures] == [0, 1, 2]
    with pytest.raises(ValueError, match="no successful evaluation yet"):
        study.best()
    x = study.suggest()
    study.tell(x, float("inf"))
    assert study.failures[-1]["error"] == "value inf"
    x = study.suggest()
    study.tell(x, 2.5)
    assert study.best() == (pytest.approx(x), 2.5)
    with pytest.raises(ValueError, match="not a point this study suggested"):
        study.tell(x, 1.0)  # told already


def test_batch_algorithm_hands_out_its_points_one_by_one():
    study = AsyncStudy(nbo.random_search(q=3), BOX, 1, jax.random.key(2))
    x = study.suggest()
    study.tell(x, _f(x))
    batch = [study.suggest() for _ in range(3)]  # one ask of q = 3
    assert len(study.optimizer.pending) == 3
    np.testing.assert_array_equal(np.stack(batch), study.optimizer.pending)


def test_checkpoint_continues_bit_for_bit(tmp_path):
    algo = nbo.gp_bo(**SMALL_GP)
    a = AsyncStudy(algo, BOX, 3, jax.random.key(3))
    for _ in range(4):
        x = a.suggest()
        a.tell(x, _f(x))
    busy = a.suggest()
    b = AsyncStudy.load(a.save(tmp_path / "s.pkl"), algo)
    np.testing.assert_array_equal(b.busy, busy[None])
    for s in (a, b):
        s.tell(busy, _f(busy))
    np.testing.assert_array_equal(a.suggest(), b.suggest())
    assert b.failures == a.failures and b.n_suggested == a.n_suggested
    with pytest.raises(ValueError, match="not an AsyncStudy state"):
        AsyncStudy.from_state_dict({"format": "x"}, algo)


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="n_init must be >= 1"):
        AsyncStudy(nbo.random_search(), BOX, 0, jax.random.key(0))
    with pytest.raises(ValueError, match="algorithm: 'neural-cbo' models constraints"):
        AsyncStudy(nbo.neural_cbo(), BOX, 2, jax.random.key(0))


def test_the_core_never_imports_the_integrations():
    import subprocess
    import sys

    code = ("import sys, nbo_jax; from nbo_jax.integrations import study; "
            "print(sorted(m for m in ('ray', 'optuna', 'neural_tangents') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
