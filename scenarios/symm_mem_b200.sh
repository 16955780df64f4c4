#!/usr/bin/env bash
# vLLM pull request 20759's end-to-end runs, as servesim predicts them:
# scenarios/symm_mem_b200.json at 1, 5 and 10 req/s (60 s of requests
# each), NCCL from 8 MiB (symm_mem_allreduce false: the baseline) and with
# symmetric memory's range (the default). Mean and median TTFT and TPOT in
# ms, as the pull request's tables give them (docs/validation.md sets the
# measured values beside these). Usage (from the repository root):
# scenarios/symm_mem_b200.sh [path/to/servesim]
set -euo pipefail
bin=${1:-build/servesim}
printf '%4s %-9s %10s %10s %10s %10s\n' qps all-reduce "TTFT mean" median "TPOT mean" median
for q in 1 5 10; do
  for symm in false true; do
    name=$([[ $symm == true ]] && echo "symm mem" || echo "nccl")
    "$bin" run scenarios/symm_mem_b200.json --set workload.arrival.rate="$q" \
      --set workload.num_requests=$((60 * q)) --set cost_model.symm_mem_allreduce="$symm" |
      awk -v q="$q" -v n="$name" '$1 == "TTFT" { t = $2; tm = $3 } $1 == "TPOT" { p = $2; pm = $3 }
        END { printf "%4s %-9s %10s %10s %10s %10s\n", q, n, t, tm, p, pm }'
  done
done
