#!/usr/bin/env bash
# `servesim model import`: a vendored published config gives the shipped
# model file byte for byte (same options), twice the same bytes, and the
# written file runs as a scenario's model.
# Usage: model_import.sh SERVESIM OUT_DIR (run from the repository root).
set -euo pipefail
servesim=$1
out=$2
mkdir -p "$out"
entry=$(python3 -c 'import json; e = json.load(open("tests/model/hf_configs/imports.json"))[2]; print(e["name"]); print(e["source"]); print(e["served_hf_id"])')
name=$(sed -n 1p <<< "$entry")
source=$(sed -n 2p <<< "$entry")
served=$(sed -n 3p <<< "$entry")
for i in 1 2; do
  "$servesim" model import "tests/model/hf_configs/$name.json" --name "$name" \
    --source "$source" --served-hf-id "$served" --out "$out/$i.json" > "$out/import.txt"
done
cmp "$out/1.json" "$out/2.json"
cmp "$out/1.json" "models/llm/$name.json"
grep -q "^wrote $out/2.json: $name, " "$out/import.txt" || { cat "$out/import.txt"; exit 1; }
# Defaults: the name from the file, the source its path.
(cd "$out" && "$servesim" model import "$OLDPWD/tests/model/hf_configs/qwen2.5-1.5b.json" > /dev/null)
python3 - "$out/qwen2.5-1.5b.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
assert m["name"] == "qwen2.5-1.5b" and m["num_kv_heads"] == 2, m
assert "full attention (sliding_window 131072 unused" in m["source"], m["source"]
PY
"$servesim" run --set model="$out/1.json" --set workload.num_requests=20 | grep -q "model $name" \
  || { echo "the imported model did not run"; exit 1; }
echo "model import ok"
