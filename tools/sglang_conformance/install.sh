#!/usr/bin/env bash
# Builds the virtual environment generate.py runs in (outside the repo):
#   tools/sglang_conformance/install.sh [VENV_DIR]     (default /work/sglang-venv)
# Needs Python >= 3.11 and PyPI; about 3.5 GB on disk, no GPU. Every package
# is pinned in requirements.txt and installed without dependency resolution,
# so the environment is exactly the one the fixtures were generated with.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${1:-/work/sglang-venv}"
python="${PYTHON:-python3}"

"$python" - <<'PY'
import sys
if sys.version_info < (3, 11):
    sys.exit(f"SGLang 0.5.23 needs Python >= 3.11, this is {sys.version.split()[0]}")
PY
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --no-deps -r "$here/requirements.txt"
"$venv/bin/python" -W ignore -c '
import sglang, sglang.srt.managers.scheduler
print("sglang", sglang.__version__, "ready in", sglang.__path__[0])' 2>&1 | tail -1
echo "next: $venv/bin/python $here/generate.py --out tests/conformance/sglang"
