"""Golden float64 histories of every registry algorithm: a change of the library's shape
(modules, factories, the surrogate seam) must not change what an algorithm does.

Per algorithm (at the contract table's small settings, ``test_contract.SMALL``), two runs of
``run_bo`` in float64, 5 initial points + 10 steps:

- ``ackley5_q1``: Ackley-5 with observation noise (0.1), one point per ask (the
  algorithms that model constraints run on ``ackley_constrained`` in 5-D);
- ``branin_failing_q3``: the contract's constrained Branin whose evaluations fail for
  ``x_1 > 6`` (constraint values passed as data, failed evaluations imputed), ``q = 3``.

The histories (``x``, ``y``) are stored in ``tests/golden/<name>.npz``. This test runs both
cases for the algorithms of ``test_contract.SHARED_PATH`` and ``ackley5_q1`` for the others,
whose ``branin_failing_q3`` history test_contract's vmapped-seed test checks (the same run as
its second seed: relative 1e-6 vmapped, 1e-9 for the bit-for-bit algorithms' single run). They agree to a
relative 1e-9 (float64 on one CPU kind, under the suite's XLA flags for its xdist workers,
``conftest.py``: with XLA's multi-threaded Eigen, the DNGO/adaptive-basis runs round
differently). A deliberate
change of an algorithm's behaviour re-records them in its own commit::

    NBO_RECORD_GOLDEN=1 uv run pytest -n 2 tests/test_golden.py

On another CPU kind (other vector instructions) float64 rounds differently in the last digits,
and a few histories drift beyond 1e-9 (seen: adaptive-basis, DNGO, GP-NTK and GP-UCB on a
Xeon with AVX-512 FP16, on an AMD EPYC and on another Xeon with AVX-512 FP16 whose other
flags differ). Such a kind keeps its own copies of the histories
that differ, in ``golden/cpu-<fingerprint>/`` (:func:`cpu_fingerprint`), recorded from the same code with
``NBO_RECORD_GOLDEN=kind`` (which writes there, for the algorithms run); every other history
is read from ``golden/``.
"""

import dataclasses
import functools
import hashlib
import os
import pathlib
import warnings

import jax
import numpy as np
import pytest
from test_contract import FAILING_SEED, GOLDEN, GOLDEN_N_ITER, NAMES, SHARED_PATH, _build, _failing_problem

import nbo_jax as nbo

_RECORD_MODE = os.environ.get("NBO_RECORD_GOLDEN")  # "1": golden/; "kind": this CPU kind's folder
RECORD = _RECORD_MODE in ("1", "kind")
RECORD_KIND = _RECORD_MODE == "kind"


@functools.cache
def cpu_fingerprint() -> str | None:
    """The first 12 hex digits of the SHA-1 of the sorted instruction-set flags of the first
    CPU in ``/proc/cpuinfo`` (None where there is none): the CPU kind whose float64 rounding
    the histories of ``golden/cpu-<fingerprint>/`` hold."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next(line for line in f if line.startswith(("flags", "Features")))
    except (OSError, StopIteration):
        return None
    return hashlib.sha1(" ".join(sorted(flags.split(":", 1)[1].split())).encode()).hexdigest()[:12]


def _golden_path(name: str) -> pathlib.Path:
    """This CPU kind's copy of ``name``'s histories if it has one, else ``golden/<name>.npz``."""
    kind = cpu_fingerprint()
    own = GOLDEN / f"cpu-{kind}" / f"{name}.npz"
    return own if kind is not None and (RECORD_KIND or own.exists()) else GOLDEN / f"{name}.npz"


def _cases(constrained: bool = False):
    ackley = nbo.benchmarks.get("ackley_constrained" if constrained else "ackley", dim=5)
    ackley = dataclasses.replace(ackley, noise_std=0.1)
    return {"ackley5_q1": (ackley, 1, jax.random.key(11)),
            "branin_failing_q3": (_failing_problem(), 3, jax.random.key(FAILING_SEED))}


def _history(name: str, case: str) -> dict:
    algo = _build(name, q=_cases()[case][1])
    problem, q, key = _cases(algo.constrained)[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        hist = jax.jit(lambda k: nbo.run_bo(k, algo, problem, n_init=5, n_iter=GOLDEN_N_ITER))(key)
    return {f"{case}.x": np.asarray(hist.x), f"{case}.y": np.asarray(hist.y)}


def _checked_here(name: str, case: str) -> bool:
    """Whether this test runs ``case`` for ``name``: ``branin_failing_q3`` is the second seed of
    test_contract's vmapped-seed test, which compares that seed with the stored history (to
    relative 1e-6, vmapped; the bit-for-bit algorithms' single run to 1e-9) for every algorithm
    outside ``SHARED_PATH``, so it runs here for those only (CI time). Recording runs all."""
    return RECORD or case != "branin_failing_q3" or name in SHARED_PATH


@pytest.mark.parametrize("name", NAMES)
def test_golden_history(name, x64):
    got = {}
    for case in _cases():
        if _checked_here(name, case):
            got.update(_history(name, case))
    path = _golden_path(name)
    if RECORD:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, **got)
    stored = np.load(path)
    assert sorted(stored.files) == sorted(f"{case}.{v}" for case in _cases() for v in "xy")
    for field, value in got.items():
        assert value.dtype == np.float64
        np.testing.assert_allclose(value, stored[field], rtol=1e-9, atol=1e-12, err_msg=f"{name} {field}")
