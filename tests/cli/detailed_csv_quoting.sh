#!/usr/bin/env bash
# A request class named `a,"b"` + newline + `c` stays one field of one row in
# --save-detailed (it was written unquoted: 600 CSV rows for 300 requests):
# Python's csv reader finds one row per request and the name intact.
# Usage: detailed_csv_quoting.sh SERVESIM OUT_DIR (run from the repository root).
set -euo pipefail
servesim=$1
out=$2
mkdir -p "$out"
python3 - "$out/scenario.json" <<'PY'
import json, sys
s = json.load(open("scenarios/priority_classes.json"))
s["workload"]["classes"][0]["name"] = 'a,"b"\nc'
s["workload"]["num_requests"] = 300
s["metrics"] = {"warmup_requests": 0}
json.dump(s, open(sys.argv[1], "w"))
PY
"$servesim" run "$out/scenario.json" -q --save-detailed "$out/detailed.csv"
python3 - "$out/detailed.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == 300, len(rows)
names = {r["class"] for r in rows}
assert names == {'a,"b"\nc', "batch"}, names
print("detailed CSV quotes class names")
PY
