"""MkDocs hooks for the nbo_jax site (``mkdocs.yml`` loads this file).

* API reference: one page per public module of ``nbo_jax`` (every ``nbo_jax/<name>.py`` and
  ``nbo_jax/<name>/`` package whose name does not start with ``_``), generated here as
  ``::: nbo_jax.<name>`` for mkdocstrings, so a new module, function or class appears without
  touching the docs. Packages show their submodules. ``API_ORDER`` fixes the order of the
  pages; modules it does not name follow alphabetically.
* Notebooks: every ``notebooks/*.ipynb`` (next to the code, not under ``docs/``) is added to
  the site's files before mkdocs-jupyter wraps ``.ipynb`` files as pages (hence the
  priority), and to the navigation as the section "Notebooks", so a new notebook appears
  without touching ``mkdocs.yml``. They are rendered with their stored outputs
  (``scripts/regenerate_notebooks.py`` refreshes them), never executed by the build.
"""

from __future__ import annotations

import pathlib

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = "nbo_jax"
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS_SECTION = "Notebooks"
API_SECTION = "API"
API_ORDER = [
    "types", "domains", "dataset", "loop", "algorithms", "acquisition", "optimize", "posterior",
    "gp_model", "features", "ntk", "networks", "training", "pde", "pinn", "benchmarks", "analysis",
    "comparison",
]

def _notebooks() -> list[pathlib.Path]:
    return sorted(NOTEBOOK_DIR.glob("*.ipynb"))


def api_modules() -> dict[str, bool]:
    """Public modules of the package, in page order: name -> is a package."""
    found: dict[str, bool] = {}
    for path in (ROOT / PACKAGE).iterdir():
        if path.name.startswith(("_", ".")):
            continue
        if path.is_dir() and (path / "__init__.py").exists():
            found[path.name] = True
        elif path.suffix == ".py":
            found.setdefault(path.stem, False)
    rank = {name: i for i, name in enumerate(API_ORDER)}
    return {name: found[name] for name in sorted(found, key=lambda n: (rank.get(n, len(rank)), n))}


def _api_pages() -> dict[str, tuple[str, str]]:
    """src_uri -> (nav title, Markdown) of the API pages."""
    pages = {f"api/{PACKAGE}.md": (PACKAGE, f"::: {PACKAGE}\n    options:\n      summary: true\n")}
    for name, is_package in api_modules().items():
        options = "    options:\n      show_submodules: true\n" if is_package else ""
        pages[f"api/{name}.md"] = (f"{PACKAGE}.{name}", f"::: {PACKAGE}.{name}\n{options}")
    return pages


def on_config(config):
    sections = {
        NOTEBOOKS_SECTION: [f"notebooks/{p.name}" for p in _notebooks()],
        API_SECTION: [{title: uri} for uri, (title, _) in _api_pages().items()],
    }
    nav = [item for item in (config.nav or []) if not (isinstance(item, dict) and set(item) & set(sections))]
    config.nav = nav + [{title: entries} for title, entries in sections.items()]
    return config


@event_priority(100)  # before mkdocs-jupyter's on_files, which wraps .ipynb files as pages
def on_files(files, config):
    """Add the notebooks and the generated API pages."""
    for path in _notebooks():
        files.append(
            File(
                f"notebooks/{path.name}",
                src_dir=str(ROOT),
                dest_dir=config.site_dir,
                use_directory_urls=config.use_directory_urls,
            )
        )
    for uri, (_, markdown) in _api_pages().items():
        files.append(File.generated(config, uri, content=markdown))
    return files
