#!/usr/bin/env bash
# A development copy of the Python package without `pip install .` (which
# rebuilds the whole core): links python/servesim's files and the _core
# module a CMake build made (-DSERVESIM_PYTHON=ON, target _core) into
# STAGE/servesim, then prints the PYTHONPATH to use.
#   tools/python/stage.sh build-py [STAGE]   # STAGE default: BUILD/stage
#   PYTHONPATH=build-py/stage python -m pytest tests/python
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: stage.sh BUILD_DIR [STAGE_DIR]}" && pwd)
stage=${2:-$build/stage}
core=$(find "$build" -maxdepth 1 -name '_core*.so' | head -1)
if [ -z "$core" ]; then
  echo "stage.sh: $build has no _core*.so; build it: ninja -C $build _core" >&2
  exit 2
fi
rm -rf "$stage/servesim"
mkdir -p "$stage/servesim"
for f in "$repo"/python/servesim/*; do
  [ "$(basename "$f")" = __pycache__ ] || ln -s "$f" "$stage/servesim/"
done
ln -s "$core" "$stage/servesim/"
echo "PYTHONPATH=$stage"
