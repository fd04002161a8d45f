"""The documentation site builds, strictly, and shows what it should.

Runs ``mkdocs build --strict`` (what ``scripts/docs.sh`` runs) in a subprocess into a
temporary folder: any warning (an unresolved cross-reference, a module mkdocstrings cannot
collect, a missing file) fails the build and this test. Then checks the output: a page per
public module of ``nbo_jax`` (docs/hooks.py generates them), docstrings rendered (``run_bo``
on the ``nbo_jax.loop`` page, reStructuredText roles turned into Markdown), the README as the
home page, and the notebooks rendered with their stored plots (not executed by the build).
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# The pages the reference must have whatever else is added (module name under nbo_jax).
REQUIRED_MODULES = [
    "types", "loop", "algorithms", "acquisition", "optimize", "posterior", "gp_model", "features",
    "ntk", "networks", "training", "pde", "pinn", "benchmarks", "analysis", "comparison",
]
BUILD_TIMEOUT_S = 300


def _hooks():
    spec = importlib.util.spec_from_file_location("nbo_jax_docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
    )
    log = proc.stdout + proc.stderr
    problems = [line for line in log.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert proc.returncode == 0, "mkdocs build --strict failed:\n" + "\n".join(problems or log.splitlines()[-40:])
    # No docstring message at any level: none is demoted below WARNING to get past --strict.
    griffe_lines = [line for line in log.splitlines() if "griffe:" in line]
    assert not griffe_lines, "griffe messages in the docs build:\n" + "\n".join(griffe_lines)
    return out


def test_hooks_filter_no_log_messages():
    # docs/hooks.py must not hide Griffe's (or any) warnings from the strict build.
    import logging

    _hooks()
    for name in ("mkdocs.plugins.griffe", "griffe", "mkdocs", "mkdocs.plugins"):
        assert not logging.getLogger(name).filters, f"docs/hooks.py filters the {name!r} logger"


def test_no_development_diary_in_the_repository():
    # The repository speaks of the library, not of its development: no "s-e-s-s-i-o-n" (the
    # word is assembled so that this file passes its own test) and no link to the removed diary.
    word = re.compile(r"\b" + "sess" + "ion", re.IGNORECASE)
    gone = "measure" + "ments.md"
    proc = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip("not a git checkout")
    found = []
    for name in filter(None, proc.stdout.split("\0")):
        path = ROOT / name
        if path.suffix in {".png", ".npz", ".npy", ".pkl", ".gz"} or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="ignore")
        found += [f"{name}: {line.strip()[:80]}" for line in text.splitlines()
                  if word.search(line) or gone in line]
    assert not found, "development diary in the repository:\n" + "\n".join(found[:40])


def _page(site: pathlib.Path, uri: str) -> str:
    path = site / uri / "index.html"
    assert path.is_file(), f"no page {uri}/ in the site"
    return path.read_text(encoding="utf-8")


def test_home_page_is_the_readme(site):
    readme_title = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip()
    home = (site / "index.html").read_text(encoding="utf-8")
    assert readme_title in home and "run_bo" in home


def test_every_public_module_has_an_api_page(site):
    modules = list(_hooks().api_modules())
    missing = [m for m in REQUIRED_MODULES if m not in modules]
    assert not missing, f"docs/hooks.py finds no module {missing}"
    for name in ["nbo_jax", *modules]:
        page = _page(site, f"api/{name}")
        anchor = "nbo_jax" if name == "nbo_jax" else f"nbo_jax.{name}"
        assert f'id="{anchor}"' in page, f"api/{name}: no heading for {anchor}"


def test_docstrings_rendered(site):
    loop = _page(site, "api/loop")
    assert "run_bo" in loop and 'id="nbo_jax.loop.run_bo"' in loop
    assert "Raises" in loop and "Returns" in loop  # Google-style sections parsed
    # Every algorithm factory is on the algorithms page (submodules shown).
    algorithms = _page(site, "api/algorithms")
    for factory in ["neural_bo", "neural_ucb", "neural_ts", "neural_greedy", "adaptive_basis", "gp_bo",
                    "neural_cbo", "pinn_bo", "random_search"]:
        assert re.search(rf'id="nbo_jax\.algorithms\.[\w.]*\b{factory}"', algorithms), factory
    # reStructuredText roles are rewritten (docs/griffe_rst.py), some of them as links.
    for name in REQUIRED_MODULES:
        page = _page(site, f"api/{name}")
        assert not re.search(r":(func|class|mod|meth|attr|data):`", page), f"api/{name}: raw Sphinx role"
    assert "<autoref" not in loop and 'class="autorefs' in loop


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_rendered_with_plots(site, path):
    page = _page(site, f"notebooks/{path.stem}")
    assert "jp-Notebook" in page or "jupyter-wrapper" in page, "not rendered by mkdocs-jupyter"
    assert re.search(r'<img[^>]+src="data:image/png;base64,', page), (
        f"{path.name}: no plot in the rendered page; store the outputs with "
        "`uv run python scripts/regenerate_notebooks.py`"
    )
