#!/usr/bin/env bash
# A real scenario file whose name is not UTF-8 runs, and the result JSON that
# names it is written (the bad byte as U+FFFD) instead of aborting the dump.
# usage: non_utf8_file_name.sh SERVESIM SCENARIO
set -u
servesim=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
scenario="$dir/s$(printf '\377').json"
cp "$2" "$scenario"
"$servesim" run -q "$scenario" --set workload.num_requests=20 --save-result "$dir/r.json" ||
  { echo "FAIL: exit status $?"; exit 1; }
python3 - "$dir/r.json" <<'PY' || exit 1
import json, sys
text = open(sys.argv[1], encoding="utf-8").read()
json.loads(text)
assert "s\ufffd.json" in text, "the file name is not in the result"
PY
echo "non-UTF-8 file name ok"
