"""`python -m servesim ARGS...`: the servesim command line, run by the
package's C++ core, plus `--ray ADDRESS` for sweep, capacity and search:

    python -m servesim search scenarios/capacity_plan.json --slo ttft_p99=2s \\
        --target-rate 40 --gpus h100-sxm,h200 --tp 1,2 --ray auto

ADDRESS: "auto" (the cluster `ray start` runs on this machine, or
RAY_ADDRESS), "local" (a new local Ray), or HOST:PORT / ray://HOST:PORT.
"""
import sys
from typing import List, Optional, Sequence

from . import _api
from .executors import executor_scope


def main(argv: Optional[Sequence[str]] = None) -> int:
    args: List[str] = list(sys.argv[1:] if argv is None else argv)
    address = None
    for i, a in enumerate(args):
        if a == "--ray" and i + 1 < len(args):
            address = args[i + 1]
            del args[i:i + 2]
            break
        if a.startswith("--ray="):
            address = a[len("--ray="):]
            del args[i]
            break
    if address is None:
        return _api.cli(args)
    if not args or args[0] not in ("sweep", "capacity", "search"):
        print("servesim: error: --ray: expected the sweep, capacity or search "
              "command before it", file=sys.stderr)
        return 2
    from .ray import RayExecutor

    executor = RayExecutor(address=None if address == "local" else address)
    with executor_scope(executor) as jobs:
        if not any(a in ("-j", "--jobs") or a.startswith("--jobs=") for a in args):
            args += ["-j", str(jobs)]
        return _api.cli(args)


if __name__ == "__main__":
    sys.exit(main())
