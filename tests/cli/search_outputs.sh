#!/usr/bin/env bash
# `servesim search` writes JSON, CSV, a vllm serve line and Kubernetes
# manifests (a Deployment and a Service) that independent parsers accept
# (Python's json, csv and PyYAML), and the manifest's replicas and args agree
# with the JSON's cheapest row.
# Usage: search_outputs.sh SERVESIM OUT_DIR (run from the repository root).
set -euo pipefail
servesim=$1
out=$2
mkdir -p "$out"
"$servesim" search scenarios/capacity_plan.json --slo ttft_p99=2s,tpot_p99=100ms \
  --target-rate 60 --gpus h100-sxm,h200 --max-num-seqs 64,256 \
  --set workload.num_requests=1500 --set metrics.warmup_requests=150 \
  --json "$out/search.json" --csv "$out/search.csv" \
  --vllm-args "$out/vllm_args.txt" --k8s "$out/deployment.yaml" > "$out/search.txt"
python3 - "$out" <<'PY'
import csv, json, sys, yaml
out = sys.argv[1]
j = json.load(open(f"{out}/search.json"))
rows = list(csv.DictReader(open(f"{out}/search.csv")))
assert len(rows) == len(j["search"]["rows"]) == 4, (len(rows), len(j["search"]["rows"]))
best = j["search"]["rows"][j["search"]["cheapest"]["index"]]
m, svc = yaml.safe_load_all(open(f"{out}/deployment.yaml"))
assert m["kind"] == "Deployment" and m["apiVersion"] == "apps/v1", m
assert svc["kind"] == "Service" and svc["apiVersion"] == "v1", svc
assert m["spec"]["replicas"] == best["replicas"], (m["spec"]["replicas"], best)
c = m["spec"]["template"]["spec"]["containers"][0]
assert c["resources"]["limits"]["nvidia.com/gpu"] == best["tp"], c
args = c["args"]
assert args[args.index("--max-num-seqs") + 1] == str(best["max_num_seqs"]), args
assert args[args.index("--max-model-len") + 1] == str(best["max_model_len"]), args
# The command line, then "# " notes (the max_model_len cap).
lines = open(f"{out}/vllm_args.txt").read().splitlines()
line = lines[0].split()
assert line[:2] == ["vllm", "serve"] and line[2:] == args[1:], (line, args)
assert all(l.startswith("# ") for l in lines[1:]), lines
print("search outputs parse: cheapest", j["search"]["cheapest"]["name"])
PY
