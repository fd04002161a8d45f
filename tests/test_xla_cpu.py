"""nbo_jax sets XLA's CPU concurrency-optimized scheduler off at import (nbo_jax/_xla_cpu.py):
the float64 GP fit of scripts/gp_fit_hang_repro.py hung with it on (jaxlib 0.10.2)."""

import os
import subprocess
import sys
import warnings
from pathlib import Path

from nbo_jax import _xla_cpu

ROOT = Path(__file__).resolve().parents[1]


def _python(code_or_script: list[str], xla_flags: str | None, timeout: float, nproc: str | None = None):
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "NPROC", "JAX_NUM_CPU_DEVICES")}
    if xla_flags is not None:
        env["XLA_FLAGS"] = xla_flags
    if nproc is not None:
        env["NPROC"] = nproc
    env["JAX_PLATFORMS"] = "cpu"
    return subprocess.run([sys.executable, *code_or_script], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def _apply_in(monkeypatch, xla_flags=None, nproc=None) -> dict:
    """``_xla_cpu.apply()`` on this process's environment with ``XLA_FLAGS``/``NPROC`` set as
    given (restored afterwards); returns the two variables after it. JAX already runs here,
    so apply warns that XLA no longer reads them (the subprocess tests check the import)."""
    for name, value in (("XLA_FLAGS", xla_flags), ("NPROC", nproc), ("JAX_NUM_CPU_DEVICES", None)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _xla_cpu.apply()
    return {"XLA_FLAGS": os.environ.get("XLA_FLAGS"), "NPROC": os.environ.get("NPROC")}


def test_import_sets_the_flag_and_keeps_the_users_flags(monkeypatch):
    out = _python(["-c", "import os, nbo_jax; print(os.environ['XLA_FLAGS'], os.environ.get('NPROC'))"], None, 120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [_xla_cpu.FLAG, "None"]  # the import applies it; one device: XLA's own pool
    assert _apply_in(monkeypatch)["XLA_FLAGS"] == _xla_cpu.FLAG
    flags = _apply_in(monkeypatch, "--xla_force_host_platform_device_count=2")["XLA_FLAGS"]
    assert flags.split() == ["--xla_force_host_platform_device_count=2", _xla_cpu.FLAG]
    # the user's own value of the flag is never overridden
    mine = "--xla_cpu_enable_concurrency_optimized_scheduler=true"
    assert _apply_in(monkeypatch, mine)["XLA_FLAGS"] == mine


def test_import_after_jax_ran_warns():
    code = ["-c", "import warnings, jax.numpy as jnp; jnp.ones(2).sum().block_until_ready()\n"
                  "with warnings.catch_warnings(record=True) as w:\n"
                  "    warnings.simplefilter('always'); import nbo_jax\n"
                  "print([str(x.message) for x in w if issubclass(x.category, RuntimeWarning)])"]
    out = _python(code, None, 120)
    assert out.returncode == 0, out.stderr
    assert "nbo_jax was imported after JAX had" in out.stdout and _xla_cpu.FLAG in out.stdout
    assert "NPROC" not in out.stdout
    # with host devices asked for, the message names the pool too; the user's own flag is not named
    out = _python(code, f"--xla_force_host_platform_device_count=2 {_xla_cpu.FLAG}", 120)
    assert out.returncode == 0, out.stderr
    assert "can no longer take NPROC=" in out.stdout and "(the thread pool of 2 host devices)" in out.stdout
    assert "XLA_FLAGS=" not in out.stdout


def test_host_devices_get_a_pool_of_cores_plus_devices(monkeypatch):
    cores = len(os.sched_getaffinity(0))
    assert _apply_in(monkeypatch)["NPROC"] is None  # one device: XLA's default pool
    assert _apply_in(monkeypatch, "--xla_force_host_platform_device_count=1")["NPROC"] is None
    assert _apply_in(monkeypatch, "--xla_force_host_platform_device_count=3")["NPROC"] == str(cores + 3)
    assert _apply_in(monkeypatch, "--xla_force_host_platform_device_count=3", nproc="7")["NPROC"] == "7"
    env = {"XLA_FLAGS": "--a=1 --xla_force_host_platform_device_count=2 --xla_force_host_platform_device_count=5"}
    assert _xla_cpu.host_devices_requested(env) == 5
    assert _xla_cpu.host_devices_requested({"JAX_NUM_CPU_DEVICES": "4"}) == 4
    assert _xla_cpu.host_devices_requested({"JAX_NUM_CPU_DEVICES": "four"}) == 1
    assert _xla_cpu.host_devices_requested({}) == 1


def test_the_sharded_run_that_hung_finishes():
    """Neural-BO sharded over 2 host devices hung in every try with a pool of 2 threads on 2
    cores (``NPROC=2``); with the pool nbo_jax sets it finishes (about 9 s alone)."""
    out = _python(["scripts/sharded_hang_repro.py"], os.environ.get("XLA_FLAGS"), 400)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "2 host devices" in out.stdout and "4 seeds x 40 iterations" in out.stdout


def test_sharding_over_devices_made_after_import_warns():
    code = ["-c", "import warnings, jax, nbo_jax as nbo\n"
                  "jax.config.update('jax_num_cpu_devices', 2)\n"
                  "from nbo_jax.sharding import run_bo_sharded\n"
                  "with warnings.catch_warnings(record=True) as w:\n"
                  "    warnings.simplefilter('always')\n"
                  "    run_bo_sharded(jax.random.split(jax.random.key(0), 2), nbo.random_search(),\n"
                  "                   nbo.benchmarks.get('branin'), 2, 2)\n"
                  "print([str(x.message) for x in w if issubclass(x.category, RuntimeWarning)])"]
    out = _python(code, None, 120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "run_bo_sharded on 2 CPU devices" in out.stdout and "NPROC=" in out.stdout
