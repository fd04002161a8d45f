#!/usr/bin/env bash
# The whole test suite (CI runs exactly this through .ci/run).
source "$(dirname "${BASH_SOURCE[0]}")/_setup.sh"
# 1. The Ray cases, in a pytest process of their own started from here, beside everything
#    else (they mostly wait on sleeping evaluations; their output is printed at the end). They
#    start a local cluster, so they stay out of the shared test workers, and run under a time
#    limit (they take about 2 min) so that a Ray that cannot start its workers fails the run
#    instead of stalling it. RAY_ENABLE_UV_RUN_RUNTIME_ENV=0: under `uv run`, Ray (>= 2.47)
#    starts each worker with the driver's `uv run` flags in a fresh copy of the project, i.e.
#    a new environment without the extras synced above (no Ray in it: every worker died at
#    `import ray`, and the cases hung). Off, the workers use this synced environment's Python.
ray_log="$(mktemp)"
RAY_ENABLE_UV_RUN_RUNTIME_ENV=0 timeout 420 $UV run --locked pytest -q -p no:cacheprovider tests/ray_cases.py \
  > "$ray_log" 2>&1 &
ray_pid=$!
# 2. The Optuna cases, in a pytest process of their own (inside the shared test workers,
#    full-suite runs saw XLA compilations of these cases crash; alone they always passed).
#    Neither file is test_*.py, so step 3 does not collect them.
rc=0
$UV run --locked pytest -q -p no:cacheprovider tests/optuna_cases.py || rc=$?
# 3. Everything else, on every core, with the 20 slowest tests listed.
$UV run --locked pytest -q -n auto --maxprocesses=4 --dist loadfile --durations=20 "$@" || rc=$?
ray_rc=0
wait "$ray_pid" || ray_rc=$?
echo "---------- tests/ray_cases.py (ran beside the rest; exit status $ray_rc) ----------"
cat "$ray_log"
rm -f "$ray_log"
if [ "$rc" -eq 0 ]; then rc=$ray_rc; fi
exit "$rc"
