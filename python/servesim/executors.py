"""Where the independent simulations of a sweep / capacity / search run.

The C++ analysis decides which simulations to run (rates, replications,
candidates) and in what order; each one can be handed to an executor
(servesim._core.set_executor) that runs it elsewhere and returns its
result, which the analysis places in the same slot as a local run. There is
one hook per process, so one executor-backed analysis runs at a time.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator, Optional, Protocol

from . import _core


class Executor(Protocol):
    """What executor_scope needs of an executor object."""

    def start(self) -> int: ...

    def submit(self, spec: bytes) -> Optional[bytes]: ...

    def stop(self) -> None: ...


_lock = threading.Lock()


@contextlib.contextmanager
def executor_scope(executor: Any) -> Iterator[Optional[int]]:
    """Installs `executor` for the duration; yields the thread count the
    analysis should use (None: the CLI's default, all local cores).

    executor: None or "local" (threads here), "ray" (Ray, started locally
    or joined as ray.init() finds it), "ray://HOST:PORT" or "ray:ADDRESS"
    (ray.init(address=...)), or an object with start() -> jobs,
    submit(spec_bytes) -> result_bytes | None and stop().
    """
    if executor is None or executor == "local":
        yield None
        return
    if isinstance(executor, str):
        if executor == "ray" or executor.startswith("ray:"):  # ray:ADDR, ray://HOST
            from .ray import RayExecutor

            address = None
            if executor.startswith("ray://"):
                address = executor
            elif executor.startswith("ray:"):
                address = executor[len("ray:"):]
            executor = RayExecutor(address=address)
        else:
            raise ValueError(f'executor: expected None, "local", "ray" or "ray:ADDRESS", '
                             f"got {executor!r}")
    if not _lock.acquire(blocking=False):
        raise RuntimeError("another executor-backed analysis is running in this process")
    try:
        jobs = executor.start()
        _core.set_executor(executor.submit)
        try:
            yield jobs
        finally:
            _core.set_executor(None)
            executor.stop()
    finally:
        _lock.release()
