"""Ray executor: each simulation of a sweep / capacity / search is one Ray
task (pip install "servesim[ray]").

    servesim.search(..., executor="ray")             # local Ray, or the cluster ray.init() finds
    servesim.search(..., executor="ray:HEAD:6379")   # an existing cluster
    python -m servesim search ... --ray auto         # the same from the shell

A task receives the simulation as bytes (the scenario's JSON, replication,
percentiles and probes), runs it with the same C++ core and returns the
result as bytes; seeds come with the spec (scenario seed + replication), so
results equal the local run's. The driver keeps as many simulations in
flight as the cluster has CPUs (the analysis' -j). Scenario files that name
other files (traces, cost profiles) need them at the same path on every
node; models/ comes with the package.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, Callable, Dict, Optional, Union

from . import DATA_ROOT

_remote: Any = None
# progress=callable(done, running, failed, elapsed_s)
ProgressCallback = Callable[[int, int, int, float], None]


def _remote_simulate() -> Any:
    # Defined on first use so the package imports without Ray.
    global _remote
    if _remote is None:
        import ray

        def simulate(spec: bytes, cwd: str, root: str) -> bytes:
            # The driver's models/ when this node has that folder too (same
            # machine, shared file system), else this node's package copy.
            if os.path.isdir(os.path.join(root, "models")):
                os.environ["SERVESIM_ROOT"] = root
            if os.path.isdir(cwd):
                os.chdir(cwd)  # relative paths inside scenarios, as on the driver
            from servesim import _core

            out: bytes = _core.run_spec(spec)
            return out

        _remote = ray.remote(num_cpus=1)(simulate)
    return _remote


class RayExecutor:
    """Runs each simulation as a Ray task.

    address: passed to ray.init when Ray is not initialised yet (None: a
    local cluster, or the one RAY_ADDRESS names). jobs: simulations in flight
    (default: the cluster's CPUs). progress: True (a line on stderr), False,
    or a callable(done, running, failed, elapsed_s).
    """

    def __init__(self, address: Optional[str] = None, *, jobs: Optional[int] = None,
                 progress: Union[bool, ProgressCallback] = True,
                 init_kwargs: Optional[Dict[str, Any]] = None) -> None:
        self.address, self.jobs, self.progress = address, jobs, progress
        self.init_kwargs = dict(init_kwargs or {})
        self._mu = threading.Lock()
        self.done = self.running = self.failed = 0
        self._started = self._last_print = 0.0

    def start(self) -> int:
        try:
            import ray
        except ImportError as e:
            raise ImportError('executor="ray" needs Ray: pip install "servesim[ray]"') from e
        if not ray.is_initialized():
            kwargs = dict(self.init_kwargs)
            kwargs.setdefault("log_to_driver", False)
            ray.init(address=self.address, **kwargs)
        self._task = _remote_simulate()
        self._cwd, self._root = os.getcwd(), DATA_ROOT
        self.done = self.running = self.failed = 0
        self._started = time.monotonic()
        jobs = self.jobs or int(ray.cluster_resources().get("CPU", 1))
        return max(1, jobs)

    def submit(self, spec: bytes) -> Optional[bytes]:
        import ray

        ref = self._task.remote(spec, self._cwd, self._root)
        self._count(running=1)
        try:
            result: bytes = ray.get(ref)
        except Exception as e:  # noqa: BLE001 - the run is then done locally
            print(f"servesim.ray: a task failed ({type(e).__name__}: {e}); "
                  "running that simulation locally", file=sys.stderr)
            self._count(running=-1, failed=1)
            return None
        self._count(running=-1, done=1)
        return result

    def stop(self) -> None:
        if self.progress is True and self.done + self.failed > 0:
            self._print(final=True)

    def _count(self, running: int = 0, done: int = 0, failed: int = 0) -> None:
        with self._mu:
            self.running += running
            self.done += done
            self.failed += failed
            if callable(self.progress):
                self.progress(self.done, self.running, self.failed,
                              time.monotonic() - self._started)
            elif self.progress and time.monotonic() - self._last_print >= (
                    1.0 if sys.stderr.isatty() else 10.0):  # a log gets fewer lines
                self._print()

    def _print(self, final: bool = False) -> None:
        self._last_print = time.monotonic()
        elapsed = self._last_print - self._started
        line = (f"servesim.ray: {self.done} simulations done, {self.running} running"
                + (f", {self.failed} run locally after a task failed" if self.failed else "")
                + f", {elapsed:.1f} s")
        tty = sys.stderr.isatty()
        end = "\n" if final or not tty else ""
        print(("\r\033[K" if tty else "") + line, end=end, file=sys.stderr, flush=True)
