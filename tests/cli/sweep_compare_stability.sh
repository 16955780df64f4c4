#!/usr/bin/env bash
# Capacity answers that hold (issue 28): a sweep through saturation never
# reports throughput above mu's upper bound and marks rho >= 1 UNSTABLE
# alike in its table, CSV and JSON; compare calls a variant past its own
# saturation throughput overloaded before any metric's verdict.
# Usage: sweep_compare_stability.sh SERVESIM OUT_DIR (run from the repository root).
set -euo pipefail
servesim=$1
out=$2
mkdir -p "$out"
"$servesim" sweep scenarios/default_chat.json --set workload.num_requests=4000 \
  --utilizations 0.5,0.95,1.0,1.05 -r 3 -j 1 \
  --csv "$out/sweep.csv" --json "$out/sweep.json" > "$out/sweep.txt"
"$servesim" compare scenarios/spec_decoding_load.json --utilization 0.8 \
  --primary tpot_p50 --set workload.num_requests=2000 --max-replications 3 -j 1 \
  --set-a engine.speculative_decoding.num_speculative_tokens=0 \
  --set-b engine.speculative_decoding.acceptance_rate=0.3 \
  --save-result "$out/compare.json" > "$out/compare.txt"
python3 - "$out" <<'PY'
import csv, json, re, sys
out = sys.argv[1]
table = open(f"{out}/sweep.txt").read()
mu, lo, hi = map(float, re.search(
    r"mu = ([0-9.]+) req/s \[([0-9.]+), ([0-9.]+)\]", table).groups())
rows = list(csv.DictReader(open(f"{out}/sweep.csv")))
points = json.load(open(f"{out}/sweep.json"))["sweep"]["points"]
lines = [l for l in table.splitlines() if re.match(r"\s+[0-9.]+\s+[0-9.]+\s+\d+/\d+", l)]
assert len(rows) == len(points) == len(lines) == 4, (len(rows), len(points), len(lines))
for row, point, line in zip(rows, points, lines):
    u = float(row["utilization"])
    assert float(row["throughput_rps"]) <= hi, (row["throughput_rps"], hi)
    flagged = u >= 1
    assert (row["unstable"] == "1") == flagged, (u, row["unstable"])
    assert point["unstable"] == flagged, (u, point)
    assert line.endswith(" UNSTABLE") == flagged, line
    assert bool(row["unstable_reason"]) == flagged, row["unstable_reason"]
cmp = open(f"{out}/compare.txt").read()
assert "Verdict: B overloaded" in cmp, cmp
assert re.search(r"  B: the offered [0-9.]+ req/s is at or above mu's lower 95% bound "
                 r"\(rho = 1\.0[0-9]+ of mu", cmp), cmp
j = json.load(open(f"{out}/compare.json"))
assert j["overload"] == "B overloaded" and j["b"]["overloaded"] and not j["a"]["overloaded"], j
assert all(m["verdict"] == "B overloaded" for m in j["metrics"]), j["metrics"]
print("stability outputs agree: mu", mu, [r["unstable"] for r in rows])
PY
