#!/usr/bin/env bash
# `servesim serve --replica-ports`: one port per replica, printed; a request
# sent to replica 1's port runs there, and each port's /metrics counts only
# its own replica's requests; SIGTERM ends it with the run's invariants
# holding.
# usage: serve_replica_ports.sh SERVESIM
set -u
servesim=$1
dir=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; cat "$dir/err" "$dir/out" 2>/dev/null; exit 1; }
"$servesim" serve --set cluster.replicas=2 --port 0 --replica-ports --time-scale 10 \
  --check-invariants >"$dir/out" 2>"$dir/err" &
pid=$!
p0= p1=
for _ in $(seq 200); do
  p0=$(sed -n 's|.*replica 0 on http://127.0.0.1:\([0-9]*\).*|\1|p' "$dir/err")
  p1=$(sed -n 's|.*replica 1 on http://127.0.0.1:\([0-9]*\).*|\1|p' "$dir/err")
  [ -n "$p0" ] && [ -n "$p1" ] && break
  sleep 0.05
done
[ -n "$p0" ] && [ -n "$p1" ] && [ "$p0" != "$p1" ] || fail "no ports printed"
python3 - "$p0" "$p1" <<'PY' || fail "requests"
import json, sys, urllib.request
p0, p1 = int(sys.argv[1]), int(sys.argv[2])
def post(port):
    body = json.dumps({"prompt": "hi", "max_tokens": 7, "ignore_eos": True}).encode()
    req = urllib.request.Request("http://127.0.0.1:%d/v1/completions" % port, body,
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        assert json.load(r)["usage"]["completion_tokens"] == 7
def generated(port):
    text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=30).read().decode()
    for line in text.splitlines():
        if line.startswith("vllm:generation_tokens_total{"):
            return float(line.split()[-1])
    raise AssertionError("no generation_tokens_total on port %d" % port)
for _ in range(3):
    post(p1)
assert generated(p1) == 21 and generated(p0) == 0, (generated(p0), generated(p1))
print("ok: 3 requests on replica 1's port, each port's metrics its own")
PY
kill -TERM "$pid"
wait "$pid"; rc=$?
[ "$rc" -eq 0 ] || fail "exit status $rc"
grep -q "3 requests admitted: 3 finished" "$dir/out" || fail "summary: $(cat "$dir/out")"
grep -q "run-level invariants hold" "$dir/out" || fail "invariants: $(cat "$dir/out")"
echo "serve replica ports ok"
