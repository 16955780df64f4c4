"""servesim: a discrete-event simulator of LLM serving, from Python.

The same C++ core as the ``servesim`` command line (``servesim._core``);
each call below runs the CLI's own command in this process, so a result is
what the CLI gives for the same scenario, byte for byte.

    import servesim
    r = servesim.run("scenarios/default_chat.json", **{"workload.arrival.rate": 20})
    r.summary["p99_ttft_ms"], r.requests.ttft_ms.describe()
    servesim.sweep("scenarios/default_chat.json", rates=[10, 20], executor="ray")
"""
import os as _os

from . import _core

# The C++ core's version: what `servesim --version` prints.
__version__ = _core.__version__


def _data_root():
    # Models and GPU specs: the source tree the package was built from when
    # it is still there (its ../shared traces too), else the copy inside the
    # package. $SERVESIM_ROOT, when set, wins (read by the C++ core).
    if _os.environ.get("SERVESIM_ROOT"):
        return _os.environ["SERVESIM_ROOT"]
    if _os.path.isdir(_os.path.join(_core.source_dir, "models")):
        return _core.source_dir
    root = _os.path.join(_os.path.dirname(__file__), "data")
    _os.environ["SERVESIM_ROOT"] = root
    return root


DATA_ROOT = _data_root()

from ._api import (  # noqa: E402
    Result,
    ScenarioError,
    capacity,
    cli,
    run,
    search,
    sweep,
)

__all__ = ["run", "sweep", "capacity", "search", "cli", "Result", "ScenarioError", "DATA_ROOT"]
