"""examples/*.ipynb: committed without outputs, and every code cell runs, in
order, from a folder outside the repository (scenarios by name), with
matplotlib's file backend when it is installed. The cells are executed
here rather than through a Jupyter kernel (nbclient), so the check needs
no Jupyter install."""
import json

import pytest

from conftest import REPO

NOTEBOOKS = sorted((REPO / "examples").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, tmp_path, monkeypatch):
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code, f"{path.name}: no code cells"
    for i, cell in enumerate(code):
        assert not cell["outputs"] and cell["execution_count"] is None, \
            f"{path.name}: code cell {i} has committed outputs; clear them"
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__main__"}
    for i, cell in enumerate(code):
        source = "".join(cell["source"])
        exec(compile(source, f"{path.name} code cell {i}", "exec"), namespace)
    # Each of the three uses left a non-empty answer behind.
    for name in ("cap", "lesson", "whatif"):
        if name in namespace:
            assert len(namespace[name]) > 0, f"{path.name}: {name} is empty"


def test_there_is_a_notebook():
    assert NOTEBOOKS, "examples/ has no notebook"
