#!/usr/bin/env bash
# At what P:D ratio does disaggregation beat 8 co-located replicas on p99
# TPOT for the arXiv-like prefill-heavy workload? Runs
# scenarios/disagg_arxiv_pd_ratio.json at each rate as 8 co-located replicas
# and as every prefill:decode split of the same 8 GPUs, and prints p99 TPOT
# and p99 TTFT (ms) per rate. Usage (from the repository root):
#   scenarios/disagg_arxiv_pd_ratio.sh [path/to/servesim] [rates...]
set -euo pipefail
bin=${1:-build/servesim}
shift || true
rates=${*:-16 20 24}
scenario=scenarios/disagg_arxiv_pd_ratio.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
row() {  # label, result file
  python3 - "$1" "$2" <<'PY'
import json, sys
j = json.load(open(sys.argv[2]))
flag = " UNSTABLE" if j["servesim"]["unstable"] else ""
d = j["servesim"].get("disaggregation")
share = f'  transfer {100 * d["transfer_share_of_mean_ttft"]:.1f}% of mean TTFT' if d else ""
print(f'  {sys.argv[1]:<14} p99 TPOT {j["p99_tpot_ms"]:8.2f}  p99 TTFT {j["p99_ttft_ms"]:9.2f}{share}{flag}')
PY
}
for rate in $rates; do
  echo "rate $rate req/s:"
  "$bin" run "$scenario" -q --set workload.arrival.rate="$rate" \
    --set disaggregation=null --set cluster.replicas=8 \
    --set cluster.router=least_outstanding --save-result "$tmp/colo.json"
  row "8 co-located" "$tmp/colo.json"
  for p in 2 3 4 5 6; do
    d=$((8 - p))
    "$bin" run "$scenario" -q --set workload.arrival.rate="$rate" \
      --set disaggregation.prefill.replicas=$p \
      --set disaggregation.decode.replicas=$d --save-result "$tmp/pd.json"
    row "$p:$d" "$tmp/pd.json"
  done
done
