#!/usr/bin/env bash
# Build the documentation site (API reference from the docstrings, the notebooks with their
# stored outputs) into site/. Strict: any warning fails the build. Extra arguments go to
# `mkdocs build` (e.g. --site-dir DIR). Preview: `uv run mkdocs serve`.
source "$(dirname "${BASH_SOURCE[0]}")/_setup.sh"
export NO_MKDOCS_2_WARNING=1   # mkdocs-material's banner about MkDocs 2.0, not about this site
exec $UV run --locked mkdocs build --strict "$@"
