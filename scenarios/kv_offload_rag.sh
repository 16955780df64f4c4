#!/usr/bin/env bash
# How much does a CPU KV tier raise the SLO max when KV is tight? Runs
# `servesim capacity` on scenarios/kv_offload_rag.json (Llama-3.1-8B on one
# L40S, RAG over 1M tokens of documents) with the GPU cache alone
# (engine.kv_offload.cpu_gib=0) and with the 128 GiB CPU tier, and prints
# each SLO max, the prefix hit rates by tier and the transfer stall of one
# run at the GPU-only SLO max. Usage (from the repository root):
#   scenarios/kv_offload_rag.sh [path/to/servesim] [SLO, default ttft_p99=2s]
set -euo pipefail
bin=${1:-build/servesim}
slo=${2:-ttft_p99=2s}
scenario=scenarios/kv_offload_rag.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
slo_max() {  # capacity JSON -> SLO max req/s
  python3 -c 'import json,sys; print("%.3f" % json.load(open(sys.argv[1]))["capacity"]["rows"][0]["max_rate_per_replica"])' "$1"
}
"$bin" capacity "$scenario" --slo "$slo" --set engine.kv_offload.cpu_gib=0 -j2 \
  --json "$tmp/gpu.json" > /dev/null
"$bin" capacity "$scenario" --slo "$slo" -j2 --json "$tmp/cpu.json" > /dev/null
gpu=$(slo_max "$tmp/gpu.json")
cpu=$(slo_max "$tmp/cpu.json")
echo "SLO $slo, max rate: GPU cache only $gpu req/s, with the CPU tier $cpu req/s"
for tier in 0 128; do
  "$bin" run "$scenario" -q --set engine.kv_offload.cpu_gib=$tier \
    --set workload.arrival.rate="$gpu" --save-result "$tmp/run.json"
  python3 - "$tier" "$tmp/run.json" <<'PY'
import json, sys
top = json.load(open(sys.argv[2]))
j = top["servesim"]
p = j["prefix_cache"]
o = j.get("kv_offload")
line = f'  cpu_gib {sys.argv[1]:>3}: p99 TTFT {top["p99_ttft_ms"]:.1f} ms, prefix hits {100 * p["token_hit_rate"]:.1f}%'
if o:
    line += (f' (GPU tier {100 * o["gpu_tier_hit_rate"]:.1f}%, CPU tier {100 * o["cpu_tier_hit_rate"]:.1f}%),'
             f' {o["bytes_to_gpu"] / 1e9:.1f} GB to GPU, stalled {o["transfer_stall_s"]:.2f} s'
             f' ({100 * o["transfer_stall_fraction"]:.2f}% of busy time)')
print(line)
PY
done
