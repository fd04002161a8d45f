"""Every Python block of the user's-guide pages runs (at the small sizes the pages use), so
an example cannot rot: the blocks of a page run in order in one namespace, as a reader pastes
them. The pages covered so far: :data:`PAGES`."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = ["docs/surrogates.md"]


def _blocks(path: pathlib.Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("page", PAGES)
def test_every_python_block_of_the_page_runs(page, capsys):
    blocks = _blocks(ROOT / page)
    assert blocks, f"{page} has no python block"
    namespace: dict = {"__name__": "__docs__"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"{page} (block {i + 1})", "exec"), namespace)
    printed = capsys.readouterr().out.split()
    assert len(printed) == len(blocks)  # each example prints its run's best value
    assert all(float(v) > 0.39 for v in printed)  # Branin's minimum is 0.397887
