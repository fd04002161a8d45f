"""Execute every notebook in ``notebooks/`` with tiny run sizes.

Each notebook has one cell tagged ``parameters`` (papermill convention). The test injects a
cell right after it that overrides those parameters with small values (``TINY_PARAMETERS``,
keyed by notebook file name, falling back to ``DEFAULT_TINY``), runs the notebook in a fresh
``python3`` kernel of the current environment with ``MPLBACKEND=Agg`` and fails on the first
cell that raises. Cells tagged ``plot`` must produce a PNG image.

The notebooks are committed with their outputs (``scripts/regenerate_notebooks.py`` makes
them at small settings, in a cell tagged ``injected-parameters`` kept after the parameters
cell); the test drops those outputs and that cell before running at its own tiny settings.
"""

from __future__ import annotations

import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK_DIR = pathlib.Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))

DEFAULT_TINY = dict(WIDTH=16, N_INIT=3, N_ITER=5, N_SEEDS=2, DIM=2, N_CANDIDATES=64, EPOCHS=2)
# Per-notebook overrides (file name -> parameters); notebooks not listed use DEFAULT_TINY.
TINY_PARAMETERS: dict[str, dict] = {
    "quickstart.ipynb": DEFAULT_TINY,
    "pinn_bo.ipynb": dict(RESOLUTION=64, N_INIT=3, N_ITER=3, N_SEEDS=2, WIDTH=16, N_RESIDUAL=64, EPOCHS=5,
                          N_CANDIDATES=64),
    "coco_bbob.ipynb": dict(FUNCTIONS=[1, 21], INSTANCES=[1, 2], BUDGET_MULTIPLIER=4, ALGORITHMS=["random"]),
    "document_retrieval.ipynb": dict(N_DOCUMENTS=120, LEVELS=(3, 4, 5), SYNTHETIC_VOCABULARY=64, N_INIT=3,
                                     N_ITER=3, N_SEEDS=2, WIDTH=16, ALGORITHMS=["random"]),
}
CELL_TIMEOUT_S = 300


def _parameters_index(nb) -> int:
    tagged = [i for i, c in enumerate(nb.cells) if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"expected exactly one cell tagged 'parameters', found {len(tagged)}"
    assert nb.cells[tagged[0]].cell_type == "code"
    return tagged[0]


def _inject_parameters(nb, params: dict) -> None:
    # Drop the stored run (outputs, and the settings cell of scripts/regenerate_notebooks.py).
    nb.cells = [c for c in nb.cells if "injected-parameters" not in c.get("metadata", {}).get("tags", [])]
    for c in nb.cells:
        if c.cell_type == "code":
            c.outputs, c.execution_count = [], None
    i = _parameters_index(nb)
    original = nb.cells[i].source
    missing = [name for name in params if f"{name} =" not in original and f"{name}=" not in original]
    assert not missing, f"overrides for parameters the notebook does not define: {missing}"
    src = "# Parameters injected by tests/test_notebooks.py\n" + "\n".join(
        f"{name} = {value!r}" for name, value in params.items()
    )
    cell = nbformat.v4.new_code_cell(src)
    cell.metadata["tags"] = ["injected-parameters"]
    nb.cells.insert(i + 1, cell)


def _has_png(cell) -> bool:
    return any("image/png" in out.get("data", {}) for out in cell.get("outputs", []))


def test_notebooks_found():
    assert NOTEBOOKS, f"no notebooks in {NOTEBOOK_DIR}"


def test_notebooks_stored_with_outputs():
    # Readers (and the docs site, which does not execute them) see the stored outputs.
    hint = "run `uv run python scripts/regenerate_notebooks.py` and commit the notebooks"
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        counts = [c.get("execution_count") for c in code]
        assert all(counts) and counts == sorted(counts), f"{path.name}: not executed top to bottom; {hint}"
        errors = [o.get("ename") for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
        assert not errors, f"{path.name}: stored outputs contain errors {errors}; {hint}"
        for c in code:
            if "plot" in c.get("metadata", {}).get("tags", []):
                assert _has_png(c), f"{path.name}: a plot cell has no stored image; {hint}"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path: pathlib.Path, monkeypatch):
    # The kernel inherits this process's environment; a non-interactive backend keeps
    # matplotlib away from any display (notebooks use %matplotlib inline for images).
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    _inject_parameters(nb, TINY_PARAMETERS.get(path.name, DEFAULT_TINY))

    client = nbclient.NotebookClient(
        nb,
        kernel_name="python3",  # jupyter_client starts it with sys.executable (this venv)
        timeout=CELL_TIMEOUT_S,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()  # raises CellExecutionError on the first failing cell

    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.get("execution_count") for c in code_cells), "some code cells were not executed"
    plot_cells = [c for c in code_cells if "plot" in c.get("metadata", {}).get("tags", [])]
    assert plot_cells, f"{path.name}: no cell tagged 'plot'"
    for c in plot_cells:
        assert _has_png(c), f"{path.name}: plot cell produced no image/png output:\n{c.source[:200]}"
