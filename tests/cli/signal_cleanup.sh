#!/usr/bin/env bash
# A run killed by a signal leaves no *.tmp.* outputs (a long run with
# --save-steps writes gigabytes) and still dies of that signal (exit status
# 128 + N); a run stopped by an error (exit 2) leaves none either.
# usage: signal_cleanup.sh SERVESIM
set -u
servesim=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ulimit -c 0  # SIGABRT would otherwise dump core
# Job control: without it a background job starts with SIGINT ignored.
set -m
fail() { echo "FAIL: $*"; exit 1; }
temps() { ls -A "$dir" | grep '\.tmp\.'; }
for sig in TERM INT HUP ABRT; do
  # Long (4e6 requests, seconds even on a fast machine: it is killed long
  # before it ends); the step rows thinned so the files stay small.
  "$servesim" run -q --set workload.num_requests=4000000 --save-steps-every 100000 \
    --save-steps "$dir/s.csv" --save-timeline "$dir/t.json" \
    --save-detailed "$dir/d.csv" --save-result "$dir/r.json" 2>/dev/null &
  pid=$!
  # The three are opened one after another: wait for all of them, up to
  # 20 s (a loaded CI machine may take a while to start it).
  for _ in $(seq 400); do [ "$(temps | wc -l)" -eq 3 ] && break; sleep 0.05; done
  [ "$(temps | wc -l)" -eq 3 ] || fail "$sig: expected 3 temporary files, got: $(ls -A "$dir")"
  sleep 0.3
  kill -"$sig" "$pid"
  wait "$pid"; rc=$?
  [ "$rc" -eq $((128 + $(kill -l "$sig"))) ] || fail "$sig: exit status $rc"
  [ -z "$(ls -A "$dir")" ] || fail "$sig: left behind: $(ls -A "$dir")"
  echo "ok: SIG$sig: exit $rc, nothing left"
done
# An error after the run (the warm-up excludes every request): exit 2, and
# the streamed outputs' temporary files are gone.
"$servesim" run -q tests/cli/bad/warmup_all.json --save-timeline "$dir/t.json" \
  --save-detailed "$dir/d.csv" 2>/dev/null
rc=$?
[ "$rc" -eq 2 ] || fail "error exit: exit status $rc"
[ -z "$(temps)" ] || fail "error exit: left behind: $(ls -A "$dir")"
echo "ok: error exit 2, no temporary file left"
echo "signal cleanup ok"
