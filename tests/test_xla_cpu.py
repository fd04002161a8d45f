"""nbo_jax sets XLA's CPU concurrency-optimized scheduler off at import (nbo_jax/_xla_cpu.py):
the float64 GP fit of scripts/gp_fit_hang_repro.py hung with it on (jaxlib 0.10.2)."""

import os
import subprocess
import sys
from pathlib import Path

from nbo_jax import _xla_cpu

ROOT = Path(__file__).resolve().parents[1]


def _python(code_or_script: list[str], xla_flags: str | None, timeout: float):
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    if xla_flags is not None:
        env["XLA_FLAGS"] = xla_flags
    env["JAX_PLATFORMS"] = "cpu"
    return subprocess.run([sys.executable, *code_or_script], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def test_import_sets_the_flag_and_keeps_the_users_flags():
    show = ["-c", "import os, nbo_jax; print(os.environ['XLA_FLAGS'])"]
    out = _python(show, None, 120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [_xla_cpu.FLAG]
    out = _python(show, "--xla_force_host_platform_device_count=2", 120)
    assert out.stdout.split() == ["--xla_force_host_platform_device_count=2", _xla_cpu.FLAG]
    # the user's own value of the flag is never overridden
    mine = "--xla_cpu_enable_concurrency_optimized_scheduler=true"
    assert _python(show, mine, 120).stdout.split() == [mine]


def test_import_after_jax_ran_warns():
    code = ["-c", "import warnings, jax.numpy as jnp; jnp.ones(2).sum().block_until_ready()\n"
                  "with warnings.catch_warnings(record=True) as w:\n"
                  "    warnings.simplefilter('always'); import nbo_jax\n"
                  "print([str(x.message)[:40] for x in w if issubclass(x.category, RuntimeWarning)])"]
    out = _python(code, None, 120)
    assert out.returncode == 0, out.stderr
    assert "nbo_jax was imported after JAX had" in out.stdout


def test_the_gp_fit_that_hung_finishes():
    """Matern-5/2 hung in every try with the scheduler on; the fit must finish (in about 5 s)
    and find the short lengthscale of sin(6 u)."""
    out = _python(["scripts/gp_fit_hang_repro.py", "matern52"], None, 300)
    assert out.returncode == 0, out.stderr
    assert "Array([0." in out.stdout
