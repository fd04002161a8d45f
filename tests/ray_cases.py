"""Issue 15: parallel evaluation on a local Ray cluster (asynchronous BO, failures,
timeouts, checkpoint/resume, the time ratio against sequential evaluation) and the
Ray Tune searcher. One 4-CPU local cluster serves the whole file.

Run by ``scripts/test.sh`` in a pytest process of its own, first (Ray's driver runs threads
and handlers inside the process that would otherwise stay in a shared test worker); by
hand: ``uv run pytest -s tests/ray_cases.py``."""

import functools
import math
import os
import sys
import time

import jax
import numpy as np
import pytest

pytest.importorskip("ray")

import ray  # noqa: E402
import ray.cloudpickle  # noqa: E402

import nbo_jax as nbo  # noqa: E402
from nbo_jax.integrations.ray import optimize  # noqa: E402
from nbo_jax.integrations.study import AsyncStudy  # noqa: E402

# the workers cannot import this test module: its objectives travel by value
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

SMALL_GP = dict(acq_optimizer=dict(raw_samples=64, num_restarts=2, steps=3))
BOX = [(0.0, 1.0)] * 3


@pytest.fixture(scope="module", autouse=True)
def cluster():
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False, object_store_memory=100 * 2**20)
    yield
    ray.shutdown()


def sphere(x):
    return float(np.sum((np.asarray(x) - 0.3) ** 2))


def sleep_and_compute(x, log=None, sleep_s=0.5):
    """An "expensive" objective: ``sleep_s`` of waiting (a simulator, a queue) plus real
    work; with ``log``, appends its start and end times (seconds) to that file."""
    start = time.time()
    time.sleep(sleep_s)
    a = np.random.default_rng(0).normal(size=(150, 150))
    np.linalg.eigvalsh(a @ a.T)
    if log is not None:
        with open(log, "a") as f:
            f.write(f"{start} {time.time()}\n")
    return sphere(x)


def _most_at_once(log) -> int:
    """The largest number of evaluations that were running at the same moment."""
    spans = np.loadtxt(log, ndmin=2)
    return max(int(np.sum((spans[:, 0] <= s) & (spans[:, 1] > s))) for s in spans[:, 0])


def misbehaving(x):
    """Raises, crashes its worker, hangs or returns NaN depending on where it is asked."""
    if x[0] < 0.25:
        raise RuntimeError("simulator diverged")
    if x[0] < 0.35:
        os._exit(1)  # the worker process dies
    if x[0] < 0.45:
        time.sleep(60)  # hangs: the timeout cancels it
    if x[0] < 0.55:
        return float("nan")
    return sphere(x)


def test_four_workers_against_sequential_evaluation_time(tmp_path):
    # the same study (random search: the proposals cost nothing, so the ratio is the
    # evaluation parallelism) with 1 and with 4 evaluations of 1 s in flight; timed from the
    # first evaluation's start to the last one's end (the spans each evaluation logs), so the
    # workers' start-up (about 4-5 s for 4 here) and the first compilation are not in it.
    # benchmarks/bench_ray.py prints the whole wall time.
    spans, at_once = {}, {}
    for workers in (1, 4):
        log = tmp_path / f"spans{workers}.txt"
        study = optimize(functools.partial(sleep_and_compute, log=str(log), sleep_s=1.0), BOX, 8,
                         algorithm=nbo.random_search(), n_init=4, n_workers=workers, key=jax.random.key(1),
                         timeout_s=60)
        logged = np.loadtxt(log, ndmin=2)
        spans[workers] = float(logged[:, 1].max() - logged[:, 0].min())
        at_once[workers] = _most_at_once(log)
        assert study.n_told == 8 and not study.failures and np.isfinite(study.y).all()
    ratio = spans[1] / spans[4]
    print(f"\nRAY-RATIO sequential {spans[1]:.2f} s, 4 workers {spans[4]:.2f} s, ratio {ratio:.2f}")
    assert at_once == {1: 1, 4: 4}, at_once  # never more than n_workers, and 4 did overlap
    assert spans[1] > 8 * 1.0  # the sleeps alone
    assert ratio > 2.0, spans  # loose: a loaded CI machine (8 evaluations of 1 s in two rounds: about 4)


def test_asynchronous_bo_keeps_workers_apart_and_improves():
    # 18 model-based proposals: the order of results (so how many are pending at each ask)
    # depends on timing; with 10, one CI run in which asks waited on compilation did not beat
    # a lucky initial design (0.048). A simulation over random completion orders
    # (AsyncStudy alone, 30 orders, 1-4 pending) gave a worst best-proposal of 0.158 at 16
    # evaluations and 0.0086 at 24.
    study = optimize(sphere, BOX, 24, algorithm=nbo.gp_bo(**SMALL_GP), n_init=6, n_workers=4, timeout_s=60,
                     key=jax.random.key(2))
    assert study.n_told == 24 and study.x.shape == (24, 3)
    assert np.all((study.x >= 0) & (study.x <= 1))
    # no point was proposed twice while others were pending
    dist = np.linalg.norm(study.x[:, None] - study.x[None], axis=-1) + np.eye(24)
    assert dist.min() > 1e-4
    # the model-based proposals beat the initial design
    design_best = min(sphere(x) for x in study.design)
    assert study.best()[1] < design_best, (study.best(), design_best)


def test_failures_crashes_and_timeouts_are_recorded_and_the_study_goes_on(tmp_path):
    study = AsyncStudy(nbo.random_search(), BOX, 4, jax.random.key(0))
    # the first points land in each failure band, then ordinary ones
    study.design = np.array([[0.2, 0.5, 0.5], [0.3, 0.5, 0.5], [0.4, 0.5, 0.5], [0.5, 0.5, 0.5]])
    path = study.save(tmp_path / "study.pkl")
    start = time.perf_counter()
    result = optimize(misbehaving, BOX, 8, algorithm=nbo.random_search(), n_workers=4, timeout_s=3.0,
                      checkpoint=path)
    elapsed = time.perf_counter() - start
    assert result.n_told == 8 and elapsed < 30
    reasons = {f["x"][0]: f["error"] for f in result.failures}
    assert "simulator diverged" in reasons[0.2]
    assert reasons[0.3].startswith("ActorDiedError"), reasons[0.3]
    assert reasons[0.4] == "timed out after 3 s"
    assert reasons[0.5] == "objective returned nan"
    assert np.isnan(result.y[[i for i, x in enumerate(result.x[:, 0]) if x in (0.2, 0.3, 0.4, 0.5)]]).all()
    assert math.isfinite(result.best()[1])


def test_checkpoint_resumes_a_killed_driver(tmp_path):
    path = tmp_path / "study.pkl"
    algo = nbo.gp_bo(**SMALL_GP)
    first = optimize(sphere, BOX, 7, algorithm=algo, n_init=5, n_workers=2, key=jax.random.key(3), checkpoint=path,
                     timeout_s=60)
    # the driver dies with two evaluations in flight: a checkpoint holding busy points
    study = AsyncStudy.load(path, algo)
    in_flight = np.stack([study.suggest(), study.suggest()])
    study.save(path)
    resumed = optimize(sphere, BOX, 11, algorithm=algo, n_workers=2, checkpoint=path, timeout_s=60)
    assert resumed.n_told == 11
    np.testing.assert_array_equal(resumed.x[:7], first.x)  # the history is kept
    for row in in_flight:  # the lost evaluations were run again
        assert np.any(np.all(resumed.x[7:] == row, axis=1))
    np.testing.assert_allclose(resumed.y, [sphere(x) for x in resumed.x])
    with pytest.raises(ValueError, match="checkpoint: .* holds a study over other bounds"):
        optimize(sphere, [(0.0, 2.0)] * 3, 12, algorithm=algo, checkpoint=path)


def _fail_to_load():
    raise ModuleNotFoundError("No module named 'simulator'")


class NotOnTheWorkers:
    """An objective that pickles on the driver and fails to unpickle on a worker (a module
    that only the driver has)."""

    def __call__(self, x):
        return 0.0

    def __reduce__(self):
        return _fail_to_load, ()


def test_a_worker_that_cannot_start_is_an_error_at_the_call():
    with pytest.raises(RuntimeError, match="could not start a worker.*No module named 'simulator'"):
        optimize(NotOnTheWorkers(), BOX, 4, algorithm=nbo.random_search(), n_init=4, n_workers=2)
    # more than the 4-CPU cluster has: no worker starts, and the call says so
    start = time.perf_counter()
    with pytest.raises(RuntimeError, match=r"started none of 2 workers within worker_start_timeout_s=2 s.*num_cpus=8"):
        optimize(sphere, BOX, 4, algorithm=nbo.random_search(), n_init=4, n_workers=2, num_cpus=8,
                 worker_start_timeout_s=2)
    assert time.perf_counter() - start < 20


def imported_modules(x):
    """1.0 when this worker has imported nbo_jax or jax, else 0.0."""
    return float(any(m in sys.modules for m in ("nbo_jax", "jax")))


def test_workers_do_not_import_the_library():
    # the worker-side function travels by value: the workers run the objective with numpy
    # alone (the library's import would cost each worker seconds and hundreds of MB)
    study = optimize(imported_modules, BOX, 4, algorithm=nbo.random_search(), n_init=4, n_workers=2, timeout_s=60)
    assert study.n_told == 4 and not study.failures
    np.testing.assert_array_equal(study.y, 0.0)


def test_optimize_checks_its_arguments():
    with pytest.raises(TypeError, match="objective must be callable"):
        optimize(1.0, BOX, 5)
    with pytest.raises(ValueError, match="n_workers must be >= 1"):
        optimize(sphere, BOX, 5, n_workers=0)
    with pytest.raises(ValueError, match="timeout_s must be > 0"):
        optimize(sphere, BOX, 5, timeout_s=0)
    with pytest.raises(ValueError, match="worker_start_timeout_s must be > 0"):
        optimize(sphere, BOX, 5, worker_start_timeout_s=-1)
    with pytest.raises(ValueError, match="algorithm: 'neural-cbo' models constraints"):
        optimize(sphere, BOX, 5, algorithm=nbo.neural_cbo())


# ---------------------------------------------------------------- the docs' Ray examples
def test_the_docs_ray_and_ray_tune_examples_run(tmp_path, monkeypatch):
    """The Ray and Ray Tune blocks of docs/guide/integrations.md, in order in one namespace as
    a reader pastes them, as written (tests/test_docs_examples.py runs every other block).
    Here, last in the file, they find this file's cluster running (their ``ray.init`` keeps
    it: one Ray start) and its compiled GP (``SMALL_GP`` on ``BOX``, the example's
    algorithm and box); their ``ray.shutdown()`` ends the cluster. The Ray Tune example is
    this file's Tune case: a mixed space (log-float, integer, choice, constant) with failed
    trials, checked against the searcher's study (NBOSearcher on nested and list spaces:
    tests/test_ray_tune_searcher.py)."""
    from test_docs_examples import RAY, ROOT, _blocks

    blocks = [b for b in _blocks(ROOT / "docs/guide/integrations.md") if RAY.search(b)]
    assert len(blocks) == 2, "the Ray and Ray Tune examples"
    monkeypatch.setenv("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"docs/guide/integrations.md (Ray block {i + 1})", "exec"), namespace)
    study = namespace["study"]  # the Ray example: asynchronous BO on 2 workers
    assert study.n_told == 8 and not study.failures
    assert study.best()[1] == pytest.approx(sphere(namespace["x_best"]), rel=1e-12)
    # the Ray Tune example: a mixed space (log-float, integer, choice, a constant) and failed trials
    df = namespace["results"].get_dataframe()
    assert len(df) == 6 and not namespace["results"].errors
    assert df["config/epochs"].eq(10).all() and df["config/layers"].isin([1, 2, 3]).all()
    assert df["config/act"].isin(["relu", "tanh"]).all()
    assert ((df["config/lr"] >= 1e-4) & (df["config/lr"] <= 1e-1)).all()
    searcher = namespace["searcher"]
    study = searcher.study
    paths = [m[0] for m in searcher._modelled]
    assert study.n_told == 6 and study.x.shape == (6, 3)  # lr, layers, act (a choice's index)
    diverged = int((df["config/lr"] > 0.05).sum())
    assert len(study.failures) == diverged and all("'loss' = nan" in f["error"] for f in study.failures)
    assert np.isnan(df["loss"]).sum() == diverged
    # the trials' configurations are the study's points (a float: the shortest decimal of its float32)
    np.testing.assert_array_equal(np.sort(df["config/lr"].to_numpy()).astype(np.float32),
                                  np.sort(study.x[:, paths.index(("lr",))]).astype(np.float32))
    np.testing.assert_array_equal(np.sort(df["config/layers"].to_numpy()),
                                  np.sort(study.x[:, paths.index(("layers",))]))
    assert not ray.is_initialized()  # the example's ray.shutdown()
