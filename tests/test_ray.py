"""Issue 15: the Ray tests (``tests/ray_cases.py``) in a pytest process of their own, so that
Ray's driver (its threads, sockets and signal handlers) never lives in a shared test worker
that goes on to run other files."""

import importlib.util

import pytest

from _own_process import run_cases

# never import Ray here: its native module loaded into a test worker next to jaxlib was
# followed by crashes inside later XLA compilations of that worker (segfault, abort)
if importlib.util.find_spec("ray") is None:
    pytest.skip("Ray is not installed (extra 'ray')", allow_module_level=True)


def test_ray_cases_in_their_own_process(tmp_path):
    out = run_cases("ray_cases.py", 7, tmp_path)
    print("\n".join(line for line in out.splitlines() if line.startswith("RAY-RATIO")))
