"""examples/*.ipynb: committed without outputs, and every code cell runs, in
order, from a folder outside the repository (scenarios by name), with
matplotlib's file backend when it is installed. With nbclient and ipykernel
installed (.ci/python-test installs them and sets SERVESIM_REQUIRE_NBCLIENT)
each notebook runs in a real Jupyter kernel, as a user's would; without
them its cells are executed here, in order, in one namespace."""
import json
import os

import pytest

from conftest import REPO

NOTEBOOKS = sorted((REPO / "examples").glob("*.ipynb"))
ANSWERS = ("cap", "sweep", "whatif", "budget", "lesson")


def _has_nbclient():
    try:
        import nbclient  # noqa: F401
        import nbformat  # noqa: F401
        import ipykernel  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_no_outputs(path):
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code, f"{path.name}: no code cells"
    for i, cell in enumerate(code):
        assert not cell["outputs"] and cell["execution_count"] is None, \
            f"{path.name}: code cell {i} has committed outputs; clear them"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, tmp_path, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.chdir(tmp_path)
    if _has_nbclient():
        import nbclient
        import nbformat
        nb = nbformat.read(str(path), as_version=4)
        # Raises CellExecutionError, naming the cell, if any cell fails.
        nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                resources={"metadata": {"path": str(tmp_path)}}).execute()
        code = [c for c in nb.cells if c.cell_type == "code"]
        # Every cell that ends in an answer (a DataFrame) displayed it.
        for i, cell in enumerate(code):
            last = cell.source.strip().splitlines()[-1]
            if last.split("[")[0] in ANSWERS:
                assert any(o.get("output_type") == "execute_result" for o in cell.outputs), \
                    f"{path.name}: code cell {i} ({last}) displayed nothing"
        return
    if os.environ.get("SERVESIM_REQUIRE_NBCLIENT") == "1":
        pytest.fail("nbclient, nbformat or ipykernel is not installed")
    nb = json.loads(path.read_text())
    namespace = {"__name__": "__main__"}
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    for i, cell in enumerate(code):
        source = "".join(cell["source"])
        exec(compile(source, f"{path.name} code cell {i}", "exec"), namespace)
    # Each use left a non-empty answer behind.
    for name in ANSWERS:
        if name in namespace:
            assert len(namespace[name]) > 0, f"{path.name}: {name} is empty"


def test_the_three_notebooks_are_there():
    names = {p.name for p in NOTEBOOKS}
    assert {"capacity_planning.ipynb", "scheduler_whatif.ipynb",
            "open_vs_closed_loop.ipynb"} <= names, names
