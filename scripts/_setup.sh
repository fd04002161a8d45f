# Sourced by the scripts in this folder: make sure uv exists and the environment is synced.
# Sets UV to the uv command to use.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if command -v uv >/dev/null 2>&1; then
  UV=uv
elif python3 -m uv --version >/dev/null 2>&1; then
  UV="python3 -m uv"
else
  echo "[nbo-jax] uv not found: installing it with pip" >&2
  python3 -m pip install --quiet uv || python3 -m pip install --quiet --user uv
  UV="python3 -m uv"
fi
# --compile-bytecode: the installed packages' .pyc files are written once, here. Where
# PYTHONDONTWRITEBYTECODE is set (some CI images set it) Python otherwise compiles every module
# from source in every process: importing nbo_jax, Optuna, SciPy and scikit-learn took 8 s a
# process without them and 2.5 s with them (2-core Xeon), and the test suite starts dozens.
$UV sync --locked --all-extras --quiet --compile-bytecode
