#!/usr/bin/env bash
# `servesim serve` as a process: it prints its port, answers streamed
# requests, and on SIGTERM with requests in flight lets them finish (each
# client gets every token and [DONE]), exits 0 and reports the served run,
# whose run-level invariants hold (--check-invariants) and whose result
# JSON counts them (--save-result).
# usage: serve_sigterm.sh SERVESIM
set -u
servesim=$1
dir=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; cat "$dir/err" "$dir/out" 2>/dev/null; exit 1; }
"$servesim" serve --port 0 --time-scale 10 --check-invariants --drain-timeout 60 \
  --save-result "$dir/result.json" \
  >"$dir/out" 2>"$dir/err" &
pid=$!
port=
for _ in $(seq 200); do
  port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\) .*|\1|p' "$dir/err")
  [ -n "$port" ] && break
  sleep 0.05
done
[ -n "$port" ] || fail "no port printed"
# 8 streamed requests of 1000 tokens (a few wall seconds at time scale 10);
# SIGTERM once every one has its first token.
python3 - "$port" "$pid" <<'PY' || fail "clients"
import json, os, signal, sys, threading, urllib.request
port, pid = int(sys.argv[1]), int(sys.argv[2])
started = threading.Semaphore(0)
results = [None] * 8
def client(i):
    body = json.dumps({"prompt": "tell me a story %d" % i, "max_tokens": 1000,
                       "ignore_eos": True, "stream": True}).encode()
    req = urllib.request.Request("http://127.0.0.1:%d/v1/completions" % port, body,
                                 {"Content-Type": "application/json"})
    tokens, done, first = 0, 0, True
    with urllib.request.urlopen(req, timeout=60) as r:
        for line in r:
            line = line.decode().strip()
            if line == "data: [DONE]":
                done += 1
            elif line.startswith("data: "):
                c = json.loads(line[6:])["choices"]
                if c and c[0].get("text"):
                    tokens += 1
                    if first:
                        first = False
                        started.release()
    results[i] = (tokens, done)
threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
for t in threads: t.start()
for _ in threads: started.acquire()
os.kill(pid, signal.SIGTERM)
for t in threads: t.join()
assert results == [(1000, 1)] * 8, results
print("ok: 8 streams of 1000 tokens finished across SIGTERM")
PY
wait "$pid"; rc=$?
[ "$rc" -eq 0 ] || fail "exit status $rc"
grep -q "8 requests admitted: 8 finished, 0 rejected by the engine, 0 aborted (their clients went away), 0 cut off" "$dir/out" \
  || fail "summary: $(cat "$dir/out")"
grep -q "run-level invariants hold" "$dir/out" || fail "invariants: $(cat "$dir/out")"
# The served run's result JSON: the 8 requests, 1000 tokens each.
python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["completed"] == 8 and j["total_output_tokens"] == 8000, j
assert j["mean_ttft_ms"] > 0
' "$dir/result.json" || fail "result JSON"
echo "serve sigterm ok"
