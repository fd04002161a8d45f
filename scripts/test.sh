#!/usr/bin/env bash
# The whole test suite (CI runs exactly this through .ci/run).
source "$(dirname "${BASH_SOURCE[0]}")/_setup.sh"
set -e
# 1. The Ray and Optuna cases, each in a pytest process of its own started from here, before
#    anything else: inside the shared test workers, full-suite runs saw Ray's workers die
#    before registering (see tests/ray_cases.py) and XLA compilations of the Optuna cases
#    crash (cause not found; alone they always passed). Not test_*.py, so step 2 does not collect them.
#    Ray 2.60 on the 2-core machine: in about half the runs, workers started after the first
#    ones died before registering, and the study waited on them (tests/ray_cases.py): the
#    Ray cases get 7 minutes and one more try on a fresh cluster; if both fail, so does CI.
timeout 420 $UV run --locked pytest -q -p no:cacheprovider tests/ray_cases.py \
    || { echo "[nbo-jax] Ray cases failed or timed out once (known Ray worker-start issue): one more try" >&2;
         timeout 420 $UV run --locked pytest -q -p no:cacheprovider tests/ray_cases.py; }
$UV run --locked pytest -q -p no:cacheprovider tests/optuna_cases.py
# 2. Everything else, on every core.
exec $UV run --locked pytest -q -n auto --maxprocesses=4 --dist loadfile "$@"
