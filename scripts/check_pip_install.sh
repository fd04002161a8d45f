#!/usr/bin/env bash
# A user outside uv: `pip install .` into a fresh virtual environment (no extras), then a
# short run_bo and the checks that the plain install pulled neither neural-tangents nor
# TensorFlow and that the analytic NTK names the extra it needs. Needs network access to
# the package index; takes a few minutes (it downloads jax, scipy, py-pde, ...).
#   bash scripts/check_pip_install.sh            # prints "plain pip install: OK" at the end
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
PY="${PYTHON:-python3}"
"$PY" -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install --quiet --upgrade pip
# a copy of the sources, so nothing the project's own .venv or build folders hold is used
git -C "$ROOT" archive --format=tar HEAD | tar -x -C "$WORK" --one-top-level=src
"$WORK/venv/bin/python" -m pip install --quiet "$WORK/src"
cd "$WORK"
"$WORK/venv/bin/python" - <<'PY'
import importlib.util

import jax
import numpy as np

import nbo_jax as nbo

for name in ("neural_tangents", "tensorflow", "tf2jax"):
    assert importlib.util.find_spec(name) is None, f"the plain install pulled {name}"
problem = nbo.benchmarks.get("branin")
history = nbo.run_bo(jax.random.key(0), nbo.gp_bo(acq_optimizer=dict(raw_samples=64, num_restarts=2, steps=3)),
                     problem, n_init=4, n_iter=6)
best = float(np.min(history.y))
assert np.isfinite(best) and best < float(np.min(history.y[:4])) + 1e-9, best
try:
    nbo.ntk.analytic_ntk(jax.numpy.ones((2, 2)))
except ImportError as err:
    assert "nbo-jax[ntk]" in str(err), err
else:
    raise AssertionError("analytic_ntk ran without neural-tangents")
print(f"nbo_jax {nbo.__version__}, jax {jax.__version__}: run_bo best {best:.4f} after 10 evaluations")
PY
echo "plain pip install: OK"
