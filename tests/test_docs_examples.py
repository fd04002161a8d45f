"""Every ``python`` block of the README and of every page under ``docs/`` runs, so an example
cannot rot. The blocks of a page run in order in one namespace, as a reader pastes them, at
the small sizes the pages use as written (no sizes are substituted). Shell blocks
(```` ```bash ````) and plain blocks are not run.

A page whose blocks import an optional extra (``optuna``, ``ray``, ``cocoex``) is skipped when
the extra is not installed (``uv sync --all-extras`` installs them all). The blocks that import
Ray (the Ray and Ray Tune examples of ``docs/guide/integrations.md``) run in
``tests/ray_cases.py`` (``test_the_docs_ray_and_ray_tune_examples_run``), on the local cluster
that file starts in a process of its own (``scripts/test.sh``, step 1); here they are left out.
"""

import importlib.util
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = sorted(
    str(p.relative_to(ROOT)) for p in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
    if "```python" in p.read_text(encoding="utf-8")
)
RAY = re.compile(r"^\s*(from|import) ray\b", re.M)
EXTRAS = {"optuna": "optuna", "ray": "ray", "cocoex": "coco"}


def _blocks(path: pathlib.Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", path.read_text(encoding="utf-8"), re.S | re.M)


def test_pages_found():
    assert "README.md" in PAGES and "docs/guide/run-bo.md" in PAGES, PAGES
    assert _blocks(ROOT / "README.md"), "the README has no python block"
    ray_blocks = [b for b in _blocks(ROOT / "docs/guide/integrations.md") if RAY.search(b)]
    assert len(ray_blocks) == 2, "the Ray and Ray Tune examples"
    assert "def test_the_docs_ray_and_ray_tune_examples_run(" in (ROOT / "tests/ray_cases.py").read_text()


@pytest.mark.parametrize("page", PAGES)
def test_every_python_block_of_the_page_runs(page, tmp_path, monkeypatch):
    blocks = [b for b in _blocks(ROOT / page) if not RAY.search(b)]  # in tests/ray_cases.py
    for module, extra in EXTRAS.items():
        if any(re.search(rf"^\s*(from|import) {module}\b", b, re.M) for b in blocks):
            if importlib.util.find_spec(module) is None:
                pytest.skip(f"{page} needs the extra {extra!r}")
    monkeypatch.chdir(tmp_path)  # files the examples write land in tmp
    namespace: dict = {"__name__": "__docs__"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"{page} (block {i + 1})", "exec"), namespace)


def test_a_failing_block_fails_the_test(tmp_path):
    """The runner reports a broken example with its page and block number."""
    page = tmp_path / "page.md"
    page.write_text("text\n\n```python\nx = 1\n```\n\n```bash\nfalse\n```\n\n```python\nassert x == 2\n```\n")
    blocks = _blocks(page)
    assert blocks == ["x = 1\n", "assert x == 2\n"]
    namespace: dict = {}
    exec(compile(blocks[0], "page.md (block 1)", "exec"), namespace)
    with pytest.raises(AssertionError) as info:
        exec(compile(blocks[1], "page.md (block 2)", "exec"), namespace)
    assert any("page.md (block 2)" == entry.path for entry in info.traceback)
