# Types of the compiled module (python/src/bindings.cc), for mypy and IDEs;
# nanobind modules carry no annotations of their own.
from typing import Callable, Optional, Sequence, Tuple

source_dir: str
__version__: str

def cli(args: Sequence[str], capture: bool = False) -> Tuple[int, str, str]: ...
def set_executor(fn: Optional[Callable[[bytes], Optional[bytes]]]) -> None: ...
def run_spec(spec: bytes) -> bytes: ...
