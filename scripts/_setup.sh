# Sourced by the scripts in this folder: make sure uv exists and the environment is synced.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ! command -v uv >/dev/null 2>&1; then
  export PATH="$HOME/.local/bin:$PATH"
  if ! command -v uv >/dev/null 2>&1; then
    echo "[nbo-jax] installing uv with pip" >&2
    python3 -m pip install --quiet --user uv || python3 -m pip install --quiet uv
    export PATH="$(python3 -m site --user-base)/bin:$PATH"
  fi
fi
uv sync --locked --quiet
