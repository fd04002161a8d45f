"""Execute the notebooks in ``notebooks/`` in place and store their outputs.

The notebooks are committed with their outputs, so that a reader (on GitHub, or in the
documentation site, which renders the stored outputs and never executes them) sees the
plots without running anything. Run this after changing a notebook or the library::

    uv run python scripts/regenerate_notebooks.py                 # every notebook
    uv run python scripts/regenerate_notebooks.py notebooks/quickstart.ipynb

Each notebook has one code cell tagged ``parameters`` (papermill convention) holding the
full-size run settings. The stored outputs are made at the small settings of ``SETTINGS``
below: a cell tagged ``injected-parameters`` that sets them is inserted right after the
``parameters`` cell and kept in the saved notebook, so a reader sees which settings produced
the outputs (delete it to run at full size). A previously injected cell is replaced. A
notebook that ``SETTINGS`` does not list runs at its own settings.

Cells run in a fresh ``python3`` kernel of the current environment with ``MPLBACKEND=Agg``,
from the ``notebooks/`` folder; the first cell that raises stops the script and leaves the
notebook file untouched.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

import nbclient
import nbformat

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = ROOT / "notebooks"
INJECTED_TAG = "injected-parameters"

# Small settings for the stored outputs (notebook file name -> parameter values): each
# notebook runs in about a minute on a laptop CPU, and the plots still show the methods apart.
SETTINGS: dict[str, dict] = {
    "quickstart.ipynb": dict(WIDTH=64, N_INIT=5, N_ITER=30, N_SEEDS=4, DIM=4, N_CANDIDATES=256, EPOCHS=20),
    "pinn_bo.ipynb": dict(RESOLUTION=128, N_INIT=5, N_ITER=20, N_SEEDS=4, WIDTH=32, N_RESIDUAL=256, EPOCHS=50,
                          N_CANDIDATES=256),
    "coco_bbob.ipynb": dict(FUNCTIONS=[1, 8, 15, 21], INSTANCES=[1, 2, 3, 4, 5], BUDGET_MULTIPLIER=20,
                            ALGORITHMS=["gp-ei", "neural-bo", "random"]),
    "document_retrieval.ipynb": dict(N_DOCUMENTS=3000, N_INIT=10, N_ITER=30, N_SEEDS=4, WIDTH=64),
}
CELL_TIMEOUT_S = 900


def _parameters_index(nb) -> int:
    tagged = [i for i, c in enumerate(nb.cells) if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(tagged) != 1 or nb.cells[tagged[0]].cell_type != "code":
        raise ValueError(f"expected exactly one code cell tagged 'parameters', found {len(tagged)}")
    return tagged[0]


def prepare(nb, params: dict | None) -> None:
    """Drop previous injected cells and outputs; inject ``params`` after the parameters cell."""
    nb.cells = [c for c in nb.cells if INJECTED_TAG not in c.get("metadata", {}).get("tags", [])]
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("execution", None)
    if not params:
        return
    i = _parameters_index(nb)
    original = nb.cells[i].source
    missing = [name for name in params if f"{name} =" not in original and f"{name}=" not in original]
    if missing:
        raise ValueError(f"settings for parameters the notebook does not define: {missing}")
    source = (
        "# Small settings that produced the outputs stored in this notebook (injected by\n"
        "# scripts/regenerate_notebooks.py). Delete this cell to run at the sizes above.\n"
        + "\n".join(f"{name} = {value!r}" for name, value in params.items())
    )
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["tags"] = [INJECTED_TAG]
    nb.cells.insert(i + 1, cell)


def regenerate(path: pathlib.Path, timeout: int = CELL_TIMEOUT_S) -> float:
    """Execute ``path`` at its ``SETTINGS`` and write it back with outputs; returns seconds."""
    nb = nbformat.read(path, as_version=4)
    prepare(nb, SETTINGS.get(path.name))
    client = nbclient.NotebookClient(
        nb,
        kernel_name="python3",
        timeout=timeout,
        record_timing=False,  # no timestamps in the stored cells: smaller diffs
        resources={"metadata": {"path": str(path.parent)}},
    )
    t0 = time.perf_counter()
    client.execute()  # raises CellExecutionError on the first failing cell
    seconds = time.perf_counter() - t0
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=pathlib.Path,
                        help="notebooks to regenerate (default: every notebooks/*.ipynb)")
    parser.add_argument("--timeout", type=int, default=CELL_TIMEOUT_S, help="seconds per cell")
    args = parser.parse_args(argv)
    paths = [p.resolve() for p in args.notebooks] or sorted(NOTEBOOK_DIR.glob("*.ipynb"))
    os.environ["MPLBACKEND"] = "Agg"  # inherited by the kernel; %matplotlib inline still makes PNGs
    for path in paths:
        settings = SETTINGS.get(path.name)
        print(f"{path.relative_to(ROOT)}: {settings or 'its own settings'}", flush=True)
        print(f"  executed and saved in {regenerate(path, args.timeout):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
