#!/usr/bin/env bash
# The whole test suite (CI runs exactly this through .ci/run).
source "$(dirname "${BASH_SOURCE[0]}")/_setup.sh"
exec $UV run --locked pytest -q -n auto --maxprocesses=4 --dist loadfile "$@"
