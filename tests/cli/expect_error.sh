#!/usr/bin/env bash
# Runs a command that must fail on bad input: exit code 2, exactly one line
# on stderr, matching the given regular expression.
# usage: expect_error.sh REGEX COMMAND [ARGS...]
set -u
regex=$1; shift
err=$("$@" 2>&1 >/dev/null); rc=$?
lines=$(printf '%s\n' "$err" | grep -c .)
if [ "$rc" -ne 2 ]; then echo "expected exit code 2, got $rc; stderr: $err"; exit 1; fi
if [ "$lines" -ne 1 ]; then echo "expected one line on stderr, got $lines: $err"; exit 1; fi
if ! printf '%s' "$err" | grep -Eq -- "$regex"; then
  echo "stderr does not match /$regex/: $err"; exit 1
fi
echo "ok: $err"
