#!/usr/bin/env bash
# Builds the virtual environment generate.py runs in (outside the repo):
#   tools/vllm_conformance/install.sh [VENV_DIR]     (default /work/vllm-venv)
# Needs Python >= 3.11 and PyPI; about 3 GB on disk, no GPU. Every package is
# pinned in requirements.txt and installed without dependency resolution, so
# the environment is exactly the one the fixtures were generated with.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${1:-/work/vllm-venv}"
python="${PYTHON:-python3}"

"$python" - <<'PY'
import sys
if sys.version_info < (3, 11):
    sys.exit(f"vLLM 0.33.0 needs Python >= 3.11, this is {sys.version.split()[0]}")
PY
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --no-deps -r "$here/requirements.txt"
HF_HUB_OFFLINE=1 "$venv/bin/python" -c '
import vllm, vllm.v1.core.sched.async_scheduler
print("vllm", vllm.__version__, "ready in", vllm.__path__[0])' 2>&1 | tail -1
echo "next: $venv/bin/python $here/generate.py --out tests/conformance/fixtures"
