"""Run a file of test cases in a pytest process of its own (``tests/test_ray.py``,
``tests/test_optuna.py``): native libraries and compiled-code caches of other test files in a
shared xdist worker never meet them. Full-suite runs crashed inside XLA compilations of the
Optuna cases (segfault) in workers that had run other files first, never in a process of
their own."""

import pathlib
import re
import subprocess
import sys


def run_cases(name: str, n_passed: int, tmp_path, timeout: int = 600) -> str:
    """Run ``tests/<name>`` with pytest in a fresh interpreter; assert that it exits 0 with
    exactly ``n_passed`` tests passed. Returns the output."""
    cases = pathlib.Path(__file__).with_name(name)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-p", "no:xdist",
                           f"--basetemp={tmp_path}", str(cases)],
                          capture_output=True, text=True, timeout=timeout, cwd=cases.parent.parent)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-8000:]
    summary = re.search(r"(\d+) passed", out)
    assert summary and int(summary.group(1)) == n_passed and " failed" not in out[summary.start():][:60], out[-3000:]
    return out
