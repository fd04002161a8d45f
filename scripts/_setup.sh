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
$UV sync --locked --all-extras --quiet
