#!/usr/bin/env bash
# Progress on stderr (issue 33): a run past ~2 s with stderr not a terminal
# prints plain progress lines there and nothing extra on stdout; -q silences
# them. 6M requests of the speed benchmark take ~4 s on 2 shared cores.
# Usage: progress_lines.sh SERVESIM OUT_DIR (run from the repository root).
set -euo pipefail
servesim=$1
out=$2
unset SERVESIM_PROGRESS  # the environment's switch would silence the run under test
mkdir -p "$out"
args=(run scenarios/bench_chat_1m.json --set workload.num_requests=6000000)
"$servesim" "${args[@]}" > "$out/report.txt" 2> "$out/progress.txt"
"$servesim" "${args[@]}" -q > "$out/quiet.txt" 2> "$out/quiet_err.txt"
grep -Eq '^servesim run: [0-9]+/6000000 requests done, simulated .*, [0-9.]+ [a-z]+ elapsed' \
  "$out/progress.txt" || { echo "no progress line:"; cat "$out/progress.txt"; exit 1; }
if grep -q $'\r' "$out/progress.txt"; then echo "carriage return off a terminal"; exit 1; fi
# stdout is the report alone.
head -1 "$out/report.txt" | grep -qx 'servesim run: scenarios/bench_chat_1m.json'
if grep -q 'requests done' "$out/report.txt"; then echo "progress on stdout"; exit 1; fi
# -q: no report, no progress.
[[ ! -s "$out/quiet.txt" && ! -s "$out/quiet_err.txt" ]] || { echo "-q printed"; exit 1; }
echo "progress on stderr only"
