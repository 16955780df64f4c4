#!/usr/bin/env bash
# `search`'s vllm serve line carries what the search simulated beyond the
# grid (issue 35: it left out the scheduling policy, KV offload, swap and
# speculative decoding), as vLLM flags or as '# ' notes where vLLM has none.
# Usage: search_vllm_flags.sh SERVESIM OUT_DIR (run from the repository root).
set -euo pipefail
servesim=$1
out=$2
mkdir -p "$out"
common=(scenarios/capacity_plan.json --slo ttft_p99=2s --target-rate 5 --gpus h200 --tp 1
        --max-num-seqs 64 --set workload.num_requests=300 --set metrics.warmup_requests=30
        -r 3 --max-replications 3 --precision 0.5 --window 0)
"$servesim" search "${common[@]}" --set engine.policy=priority \
  --set 'engine.kv_offload={"cpu_gib":16}' --set engine.preemption=swap \
  --vllm-args "$out/offload.txt" > /dev/null
"$servesim" search "${common[@]}" --set engine.async_scheduling=false \
  --set 'engine.speculative_decoding={"num_speculative_tokens":3,"acceptance_rate":0.7}' \
  --vllm-args "$out/spec.txt" > /dev/null
check() { grep -qF -- "$2" "$out/$1" || { echo "$1 lacks: $2"; cat "$out/$1"; exit 1; }; }
check offload.txt "--scheduling-policy priority"
check offload.txt "--kv-offloading-size 16 --kv-offloading-backend native"
check offload.txt "# engine.preemption swap was simulated"
check spec.txt "--speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 3}'"
check spec.txt "# speculative decoding was simulated with 3 draft tokens, mean acceptance 0.70"
echo "vllm flags carried"
