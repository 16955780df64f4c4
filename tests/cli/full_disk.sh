#!/usr/bin/env bash
# An output file is either complete or absent: on a full disk (a 64 KiB
# tmpfs in a private mount namespace) every output write fails with a
# one-line error naming the path and the reason, exit 2, leaves no temporary
# file, and keeps an earlier file intact. Skipped (exit 77) where a tmpfs
# cannot be mounted.
# usage: full_disk.sh SERVESIM
set -u
servesim=$1
if [ "${FULL_DISK_INNER:-}" != 1 ]; then
  if ! unshare -rm true 2>/dev/null && ! unshare -m true 2>/dev/null; then
    echo "skipped: cannot create a mount namespace for a small tmpfs"; exit 77
  fi
  flag=-rm; unshare -rm true 2>/dev/null || flag=-m
  exec unshare $flag env FULL_DISK_INNER=1 bash "$0" "$@"
fi
dir=$(mktemp -d)
if ! mount -t tmpfs -o size=64k tmpfs "$dir" 2>/dev/null; then
  echo "skipped: cannot mount a tmpfs"; rmdir "$dir"; exit 77
fi
fail() { echo "FAIL: $*"; umount "$dir"; rmdir "$dir"; exit 1; }
check() {  # check NAME FILE ARGS...: the write of FILE must fail cleanly
  name=$1; file=$2; shift 2
  echo "earlier $name" > "$dir/$file"
  err=$("$@" 2>&1 >/dev/null); rc=$?
  [ "$rc" -eq 2 ] || fail "$name: expected exit 2, got $rc: $err"
  [ "$(printf '%s\n' "$err" | grep -c .)" -eq 1 ] || fail "$name: expected one line: $err"
  printf '%s' "$err" | grep -q "$dir/$file: write failed: No space left on device" ||
    fail "$name: unexpected message: $err"
  [ "$(cat "$dir/$file")" = "earlier $name" ] || fail "$name: earlier file changed"
  left=$(ls "$dir" | grep -c tmp)
  [ "$left" -eq 0 ] || fail "$name: temporary files left: $(ls "$dir")"
  rm -f "$dir/$file"
  echo "ok: $name: $err"
}
run="$servesim run -q --set workload.num_requests=3000"
check detailed_csv d.csv $run --save-detailed "$dir/d.csv"
check steps s.csv $run --save-steps "$dir/s.csv"
check timeline t.json $run --save-timeline "$dir/t.json"
# Fill the disk so even the small result JSON cannot be written.
head -c 60k /dev/zero > "$dir/filler" 2>/dev/null
check result_json r.json $run --save-result "$dir/r.json"
umount "$dir"; rmdir "$dir"
echo "ok"
