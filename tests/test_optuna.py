"""Issue 15: the Optuna sampler's tests (``tests/optuna_cases.py``) in a pytest process of
their own (see ``tests/_own_process.py`` for why)."""

import importlib.util

import pytest

from _own_process import run_cases

if importlib.util.find_spec("optuna") is None:
    pytest.skip("Optuna is not installed (extra 'optuna')", allow_module_level=True)


def test_optuna_cases_in_their_own_process(tmp_path):
    run_cases("optuna_cases.py", 10, tmp_path)
