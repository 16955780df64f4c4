#!/usr/bin/env bash
# Does a fixed-length closed loop stay in lockstep? Mean client TTFT (ms)
# of scenarios/closed_loop_frontend.json (Llama-3.1-70B fp8 on 8 H100s,
# 1024 prompt and 128 output tokens, no think time) at 4 to 64 clients:
# without the frontend, with it (frontend.enabled), and with it and output
# lengths spread +-4% (uniform 123-133 tokens: what a client that does not
# pin the output length with ignore_eos sees, roughly). Beside them the two
# bounds, both as the client sees them: a lone prompt's TTFT (one client,
# frontend on: one prefill a step) and all N prompts sent at once (the
# engine's mean TTFT of N requests prefilled together, up to the token
# budget, plus the lone prompt's request path: its client TTFT less its
# engine TTFT). Usage (from the repository root):
# scenarios/closed_loop_frontend.sh [path/to/servesim]
set -euo pipefail
bin=${1:-build/servesim}
ttft() {  # servesim run's console -> mean TTFT
  "$bin" run scenarios/closed_loop_frontend.json --set workload.arrival.concurrency="$1" \
    "${@:2}" | awk '$1 == "TTFT" { print $2 }'
}
lone_run=$("$bin" run scenarios/closed_loop_frontend.json --set workload.arrival.concurrency=1 \
  --set frontend.enabled=true --set workload.num_requests=300 --set metrics.warmup_requests=30)
lone=$(awk '$1 == "TTFT" { print $2 }' <<< "$lone_run")
path=$(awk '/engine-side TTFT mean/ { sub(/.*engine-side TTFT mean /, ""); print $1 - 0 }' \
  <<< "$lone_run")
path=$(awk -v c="$lone" -v e="$path" 'BEGIN { print c - e }')
printf '%7s %14s %14s %18s %12s %12s\n' clients "frontend off" "frontend on" \
  "on, output +-4%" "lone prompt" "all at once"
for n in 4 8 16 32 64; do
  off=$(ttft "$n" --set frontend.enabled=false)
  on=$(ttft "$n" --set frontend.enabled=true)
  spread=$(ttft "$n" --set frontend.enabled=true \
    --set 'workload.output_len={"dist":"uniform","min":123,"max":133}')
  once=$(ttft "$n" --set frontend.enabled=false --set workload.num_requests="$n" \
    --set metrics.warmup_requests=0)
  once=$(awk -v a="$once" -v p="$path" 'BEGIN { printf "%.2f", a + p }')
  printf '%7s %14s %14s %18s %12s %12s\n' "$n" "$off" "$on" "$spread" "$lone" "$once"
done
