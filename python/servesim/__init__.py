"""servesim: a discrete-event simulator of LLM serving, from Python.

The same C++ core as the ``servesim`` command line (``servesim._core``);
each call below runs the CLI's own command in this process, so a result is
what the CLI gives for the same scenario, byte for byte.

    import servesim
    r = servesim.run("default_chat", **{"workload.arrival.rate": 20})
    r.summary["p99_ttft_ms"], r.requests.ttft_ms.describe()
    servesim.sweep("default_chat", rates=[10, 20], executor="ray")
    servesim.loops("default_chat", concurrency=[4, 16])      # the lesson table
    servesim.compare("default_chat", b_overrides={"engine.max_num_seqs": 64})
    servesim.scenarios(), servesim.scenario_path("bench_chat_1m")
"""
import os as _os

from . import _core


def _data_root() -> str:
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


DATA_ROOT: str = _data_root()
# The C++ core's version: what `servesim --version` prints.
__version__: str = _core.__version__

from ._analyses import (  # noqa: E402
    FitResult,
    capacity,
    compare,
    fit,
    loops,
    search,
    sweep,
    validate,
)
from ._api import Result, ScenarioError, cli, run  # noqa: E402
from ._scenarios import scenario, scenario_path, scenarios  # noqa: E402

__all__ = ["run", "sweep", "loops", "capacity", "search", "compare", "validate", "fit", "cli",
           "scenarios", "scenario", "scenario_path", "Result", "FitResult", "ScenarioError",
           "DATA_ROOT", "__version__"]
