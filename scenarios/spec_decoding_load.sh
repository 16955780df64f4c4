#!/usr/bin/env bash
# What per-token acceptance rate makes speculative decoding pay at 80% load?
# For each acceptance rate, `servesim compare` runs
# scenarios/spec_decoding_load.json without speculative decoding (A, k = 0)
# and with it (B, k = 3 at that rate) at U x A's saturation throughput, on
# common random numbers, and prints B/A on p50 and p99 TPOT and E2E with
# their intervals. Usage (from the repository root):
#   scenarios/spec_decoding_load.sh [path/to/servesim] [utilization] [rates...]
set -euo pipefail
bin=${1:-build/servesim}
util=${2:-0.8}
shift 2 || shift $# || true
rates=${*:-0.0 0.2 0.3 0.4 0.45 0.5 0.55 0.6 0.7 0.8 0.9}
scenario=scenarios/spec_decoding_load.json
for a in $rates; do
  echo "acceptance rate $a (k = 3), load $util x A's mu:"
  "$bin" compare "$scenario" --utilization "$util" --primary tpot_p50 \
    --set-a engine.speculative_decoding.num_speculative_tokens=0 \
    --set-b engine.speculative_decoding.acceptance_rate="$a" |
    grep -E "^Offered|^Stop|tpot_p50|tpot_p99|e2el_p50|e2el_p99|ttft_p99" | sed 's/^/  /'
done
