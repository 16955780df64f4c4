#!/usr/bin/env bash
# `servesim run` with vllm bench serve's flags writes request_goodput as
# vLLM would: the completed requests meeting every --goodput SLO over the
# run's duration. The count is redone here by hand from the per-request
# CSV (TPOT = (E2E - TTFT) / (output tokens - 1), 0 for one token; the
# duration from the first arrival to the last answer the client read:
# send + E2E, as finish_s is the engine's), not by servesim.
# Usage: bench_flags_goodput.sh SERVESIM OUT_DIR (run from the repository root).
set -euo pipefail
servesim=$1
out=$2
mkdir -p "$out"

# Hand count: prints "good completed goodput".
hand_count() {  # CSV TTFT_MS TPOT_MS
  awk -F, -v ttft_slo="$2" -v tpot_slo="$3" '
    NR > 1 && $2 == "finished" && $3 == 1 {
      n++; ttft = $13; e2el = $14; tokens = $7
      tpot = tokens > 1 ? (e2el - ttft) / (tokens - 1) : 0
      if (ttft <= ttft_slo && tpot <= tpot_slo) good++
      if (first == "" || $8 < first) first = $8
      end = $9 + $14 / 1000
      if (end > last) last = end
    }
    END { printf "%d %d %.12g\n", good, n, good / (last - first) }' "$1"
}

# The value of a top-level number in the result JSON.
json_number() {  # FILE KEY
  sed -n "s/^  \"$2\": \\([-0-9.e+]*\\),\$/\\1/p" "$1"
}

check() {  # NAME TTFT_MS TPOT_MS [EXTRA FLAGS...]
  local name=$1 ttft=$2 tpot=$3
  shift 3
  "$servesim" run --request-rate 20 --num-prompts 1000 --random-input-len 1024 \
    --random-output-len 128 --goodput "ttft:$ttft" "tpot:$tpot" "$@" \
    --save-result "$out/$name.json" --save-detailed "$out/$name.csv" > "$out/$name.txt"
  read -r good completed hand < <(hand_count "$out/$name.csv" "$ttft" "$tpot")
  local got
  got=$(json_number "$out/$name.json" request_goodput)
  [ -n "$got" ] || { echo "$name: no request_goodput number in the result"; exit 1; }
  awk -v a="$got" -v b="$hand" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-9 * b) }' ||
    { echo "$name: request_goodput $got, hand count $good/$completed gives $hand"; exit 1; }
  grep -q "request goodput .* req/s: $good of $completed completed requests met TTFT <= $ttft ms, TPOT <= $tpot ms" \
    "$out/$name.txt" || { echo "$name: console lacks the goodput line"; cat "$out/$name.txt"; exit 1; }
  echo "$name: request_goodput $got = $good of $completed good / duration (hand $hand)"
  last_good=$good last_completed=$completed
}

# The done-when command of issue 33: every request meets these SLOs.
check done_when 500 50
# Tighter SLOs, with bursts and a concurrency cap, so that some fail.
check tight 60 11 --burstiness 0.5 --max-concurrency 24
if [ "$last_good" -le 0 ] || [ "$last_good" -ge "$last_completed" ]; then
  echo "tight: expected some but not all requests good, got $last_good of $last_completed"
  exit 1
fi
grep -q '"request_rate": 20' "$out/done_when.json"
grep -q '"num_prompts": 1000' "$out/done_when.json"
echo "goodput matches the hand count"
