"""Issue 15: the Ray tests (``tests/ray_cases.py``) in a pytest process of their own, so that
Ray's driver (its threads, sockets and signal handlers) never lives in a shared test worker
that goes on to run other files."""

import importlib.util
import pathlib
import subprocess
import sys

import pytest

# never import Ray here: its native module loaded into a test worker next to jaxlib was
# followed by crashes inside later XLA compilations of that worker (segfault, abort)
if importlib.util.find_spec("ray") is None:
    pytest.skip("Ray is not installed (extra 'ray')", allow_module_level=True)

CASES = pathlib.Path(__file__).with_name("ray_cases.py")


def test_ray_cases_in_their_own_process(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-p", "no:xdist",
                           f"--basetemp={tmp_path}", str(CASES)],
                          capture_output=True, text=True, timeout=600, cwd=CASES.parent.parent)
    out = proc.stdout + proc.stderr
    ratio = [line for line in out.splitlines() if line.startswith("RAY-RATIO")]
    print("\n".join(ratio))
    assert proc.returncode == 0, out[-8000:]
    assert "7 passed" in out and "failed" not in out.split("7 passed")[-1][:40], out[-3000:]
