#!/usr/bin/env bash
# `servesim search --engines vllm,sglang` runs one search per engine at the
# same SLO and target, says which answers, and writes that engine's launch
# line and manifests; an SGLang answer is a `python3 -m
# sglang.launch_server` line with the grid's limits in SGLang's flags, the
# manifest runs SGLang's image with the same args, and the JSON and CSV hold
# both searches (parsed by Python's json, csv and PyYAML).
# Usage: search_engines.sh SERVESIM OUT_DIR (run from the repository root).
set -euo pipefail
servesim=$1
out=$2
mkdir -p "$out"
common=(--set workload.num_requests=300 --set metrics.warmup_requests=30
        --slo ttft_p99=2s --target-rate 5 --gpus h200 --tp 1 -r 3
        --max-replications 3 --precision 0.5 --window 0 -q)
"$servesim" search scenarios/capacity_plan.json "${common[@]}" --engines vllm,sglang \
  --json "$out/both.json" --csv "$out/both.csv" > "$out/both.txt"
grep -q "^== vLLM 0.33.0" "$out/both.txt"
grep -q "^== SGLang 0.5.23" "$out/both.txt"
grep -Eq "^  answer: (vLLM 0.33.0|SGLang 0.5.23)" "$out/both.txt"
# One engine, SGLang, with limits from the grid: its launch line.
"$servesim" search scenarios/capacity_plan.json "${common[@]}" --engines sglang \
  --max-num-seqs 128 --max-num-batched-tokens 4096 \
  --vllm-args "$out/launch.txt" --k8s "$out/deployment.yaml" > "$out/sglang.txt"
python3 - "$out" <<'PY'
import csv, json, sys, yaml
out = sys.argv[1]
j = json.load(open(f"{out}/both.json"))
assert [e["engine"] for e in j["engines"]] == ["vllm", "sglang"], j.keys()
assert j["cheapest_engine"] in ("vllm", "sglang"), j["cheapest_engine"]
rows = list(csv.DictReader(open(f"{out}/both.csv")))
assert sorted({r["engine"] for r in rows}) == ["sglang", "vllm"], rows
line = open(f"{out}/launch.txt").read().splitlines()[0].split()
assert line[:3] == ["python3", "-m", "sglang.launch_server"], line
assert line[line.index("--max-running-requests") + 1] == "128", line
assert line[line.index("--chunked-prefill-size") + 1] == "4096", line
assert "--max-num-seqs" not in line and "--max-model-len" not in line, line
m, svc = yaml.safe_load_all(open(f"{out}/deployment.yaml"))
c = m["spec"]["template"]["spec"]["containers"][0]
assert c["image"].startswith("lmsysorg/sglang:v0.5.23"), c["image"]
assert c["command"] == ["python3"] and c["args"] == line[1:], (c["command"], c["args"])
print("search engines compared: answer", j["cheapest_engine"])
PY
