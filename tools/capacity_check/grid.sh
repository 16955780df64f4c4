#!/usr/bin/env bash
# The issue-28 grid: every shipped model x {H100, H200} x SLO set {ttft,
# tpot, both}, at the smallest TP that fits: capacity's validated answer,
# then check_answer.py at it and at +5%. One line per case.
# Usage: tools/capacity_check/grid.sh SERVESIM OUT_DIR
set -uo pipefail
ss=$1 out=$2
mkdir -p "$out"
for model in ${MODELS:-llama-3.1-8b qwen2.5-7b mixtral-8x7b llama-3.1-70b}; do
  for gpu in h100-sxm h200; do
    for slo in ttft_p99=1s tpot_p99=50ms ttft_p99=1s,tpot_p99=50ms; do
      for tp in 1 2 4; do
        tag="$model-$gpu-tp$tp-${slo//[=,]/_}"
        if "$ss" capacity scenarios/capacity_plan.json --set model=$model \
             --set hardware.gpu=$gpu --set hardware.tp=$tp --slo $slo \
             --json "$out/$tag.json" -j 2 -q > "$out/$tag.txt" 2>&1; then
          rate=$(python3 -c "import json;print(json.load(open('$out/$tag.json'))['capacity']['rows'][0]['max_rate_per_replica'])")
          check=$(python3 tools/capacity_check/check_answer.py --servesim "$ss" \
                  --scenario scenarios/capacity_plan.json --set model=$model \
                  --set hardware.gpu=$gpu --set hardware.tp=$tp --slo $slo --rate "$rate" | tail -1)
          echo "$tag rate=$rate $check"
          break
        elif ! grep -q "does not fit" "$out/$tag.txt"; then
          echo "$tag ERROR $(tail -1 "$out/$tag.txt")"
          break
        fi
      done
    done
  done
done
