#!/usr/bin/env bash
# A closed-loop sweep as InferenceMAX's client sends it, against the same
# loop at exactly fixed lengths. Its vLLM runs (benchmarks/70b_fp8_h100_*.sh
# in InferenceMAX) start `vllm serve` with --max-num-seqs CONC
# --max-num-batched-tokens 8192 --async-scheduling --no-enable-prefix-caching
# and run a fork of vLLM's old benchmark_serving.py with --random-input-len
# 1024 --random-output-len 1024 --random-range-ratio 0.8 --ignore-eos
# --request-rate inf --max-concurrency CONC --num-prompts 10 x CONC; that
# fork, like sglang.bench_serving, draws lengths uniform in
# [floor(0.8 L), L] = 819..1024 (servesim: --range-ratio-style sglang).
# Llama-3.1-70B fp8 on 8 H100s (scenarios/closed_loop_frontend.json), the
# frontend on, every request measured (no warm-up, as the client measures
# them). Prints mean client TTFT and TPOT (ms) at 4 to 64 clients. Usage
# (from the repository root): scenarios/inferencemax_closed_loop.sh [servesim]
set -euo pipefail
bin=${1:-build/servesim}
run() {  # clients, extra flags -> "TTFT TPOT" means
  "$bin" run scenarios/closed_loop_frontend.json --request-rate inf --max-concurrency "$1" \
    --num-prompts $((10 * $1)) --isl 1024 --osl 1024 "${@:2}" \
    --set engine.max_num_seqs="$1" --set metrics.warmup_requests=0 --set frontend.enabled=true |
    awk '$1 == "TTFT" { t = $2 } $1 == "TPOT" { p = $2 } END { print t, p }'
}
printf '%7s %22s %22s\n' clients "fixed 1024/1024" "819-1024 (ratio 0.8)"
printf '%7s %11s %10s %11s %10s\n' "" TTFT TPOT TTFT TPOT
for n in 4 8 16 32 64; do
  read -r ft fp <<<"$(run "$n")"
  read -r st sp <<<"$(run "$n" --random-range-ratio 0.8 --range-ratio-style sglang)"
  printf '%7s %11s %10s %11s %10s\n' "$n" "$ft" "$fp" "$st" "$sp"
done
