#!/usr/bin/env python3
"""Checks that every command output quoted in README.md and docs/ is current.

A quoted output is a fenced code block preceded by a marker naming the
command that prints it:

    <!-- figure: servesim run scenarios/default_chat.json -->
    ```text
    ...
      TTFT  20.16  17.41  ...
    ```

The command runs in the repository root through bash, with `servesim`
standing for the CLI under test (--cli). The rule a block must meet against
the command's fresh output (stdout and stderr together):

* Lines are compared after collapsing runs of whitespace; blank lines are
  ignored on both sides.
* A line `...` stands for any number of output lines (zero or more), so a
  block quotes a trimmed part of the output; elsewhere consecutive block
  lines must be consecutive output lines, and a block that does not start
  (end) with `...` must start (end) where the output does.
* A line ending in ` ...` matches an output line that starts with the text
  before it (for lines too long to quote whole).

`--update` rewrites failing blocks from the fresh output: a block without
`...` becomes the whole output; a trimmed block keeps its shape, each
quoted line replaced by the output line of the same form (the same text
with its numbers masked). Commands must be deterministic (fixed seeds).
`servesim-calibrate` stands for the binary of that name beside the CLI.
A command that names a `../shared/...` path that does not exist (the
shared traces are not in every checkout), or needs servesim-calibrate
where it was not built, is skipped, and said so.

Usage: tools/docs/check_figures.py [--cli build/servesim] [--update]
       [--only SUBSTRING] [-v]
Exit status 0 when every block matches, 1 otherwise.
"""

import argparse
import glob
import os
import re
import shlex
import subprocess
import sys
import time

MARKER = re.compile(r"^<!--\s*figure:\s*(.+?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")
SERVESIM = re.compile(r"(?<![\w./-])servesim(?![\w.-])")
CALIBRATE = re.compile(r"(?<![\w./-])servesim-calibrate(?![\w.-])")
NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")
ELLIPSIS = "..."


class Figure:
    """One marked block: where it is, its command and its lines."""

    def __init__(self, path, marker_line, command, start, end):
        self.path = path              # the Markdown file
        self.marker_line = marker_line  # 1-based line of the marker
        self.command = command
        self.start = start            # 0-based index of the first block line
        self.end = end                # 0-based index of the closing fence


def repo_root():
    return os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def doc_files(root):
    files = [os.path.join(root, "README.md")]
    files += sorted(glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))
    return [f for f in files if os.path.exists(f)]


def find_figures(path, lines):
    """The marked blocks of one file; raises ValueError on a marker without
    a block right after it."""
    figures = []
    i = 0
    while i < len(lines):
        m = MARKER.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        fence = FENCE.match(lines[j]) if j < len(lines) else None
        if not fence:
            raise ValueError(f"{path}:{i + 1}: a figure marker must be followed by a fenced block")
        close = fence.group(2)[0] * len(fence.group(2))
        k = j + 1
        while k < len(lines) and not lines[k].strip().startswith(close):
            k += 1
        if k == len(lines):
            raise ValueError(f"{path}:{j + 1}: the block after the figure marker is not closed")
        figures.append(Figure(path, i + 1, m.group(1), j + 1, k))
        i = k + 1
    return figures


def normalise(line):
    return " ".join(line.split())


def items_of(block_lines):
    """Block lines as (kind, text): kind is 'any' (`...`), 'prefix' or 'line'."""
    items = []
    for raw in block_lines:
        n = normalise(raw)
        if not n:
            continue
        if n == ELLIPSIS:
            if not items or items[-1][0] != "any":
                items.append(("any", ""))
        elif n.endswith(" " + ELLIPSIS):
            items.append(("prefix", n[: -len(ELLIPSIS) - 1]))
        else:
            items.append(("line", n))
    return items


def mask(text):
    return NUMBER.sub("#", text)


def item_matches(item, line, masked):
    kind, text = item
    if masked:
        text, line = mask(text), mask(line)
    if kind == "prefix":
        return line.startswith(text)
    return line == text


def align(items, lines, masked=False):
    """Aligns block items with output lines (both normalised, no blanks).
    Returns, for each item, the index of the output line it matched (None
    for `...`), or None when the block does not match."""
    n, m = len(items), len(lines)
    # ok[i][j]: items[i:] match lines[j:].
    ok = [[False] * (m + 1) for _ in range(n + 1)]
    ok[n][m] = True
    for i in range(n - 1, -1, -1):
        for j in range(m, -1, -1):
            if items[i][0] == "any":
                ok[i][j] = ok[i + 1][j] or (j < m and ok[i][j + 1])
            else:
                ok[i][j] = j < m and item_matches(items[i], lines[j], masked) and ok[i + 1][j + 1]
    if not ok[0][0]:
        return None
    path, i, j = [], 0, 0
    while i < n:
        if items[i][0] == "any":
            if ok[i + 1][j]:
                path.append(None)
                i += 1
            else:
                j += 1
        else:
            path.append(j)
            i += 1
            j += 1
    return path


def first_problem(items, lines):
    """A line of the block to point at when it does not match."""
    present = set(lines)
    for kind, text in items:
        if kind == "line" and text not in present:
            return f"not in the output: {text!r}"
        if kind == "prefix" and not any(l.startswith(text) for l in lines):
            return f"no output line starts with: {text!r}"
    return "every quoted line is in the output, but not in this order or not adjacent (add `...` where lines are left out)"


def calibrate_cli(cli):
    """servesim-calibrate beside the servesim binary under test."""
    return os.path.join(os.path.dirname(cli), "servesim-calibrate")


def shell_command(command, cli):
    command = CALIBRATE.sub(lambda _: shlex.quote(calibrate_cli(cli)), command)
    return SERVESIM.sub(lambda _: shlex.quote(cli), command)


def missing_shared_paths(command, root):
    missing = []
    try:
        tokens = shlex.split(command, posix=True)
    except ValueError:
        tokens = command.split()
    for token in tokens:
        for part in token.split("="):
            if part.startswith("../shared/") and not os.path.exists(os.path.join(root, part)):
                missing.append(part)
    return missing


def run_command(command, cli, root, timeout):
    proc = subprocess.run(
        ["bash", "-c", "set -o pipefail; " + shell_command(command, cli)],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        # Progress lines (stderr, after ~2 s) depend on the machine's speed.
        timeout=timeout, env=dict(os.environ, LC_ALL="C.UTF-8", SERVESIM_PROGRESS="0"))
    return proc.stdout.decode("utf-8", errors="replace")


def updated_block(block_lines, items, raw_out):
    """New block lines from the fresh output, keeping a trimmed block's shape;
    None when the block's shape no longer fits the output."""
    raw = [l.rstrip() for l in raw_out.splitlines()]
    if not any(k == "any" for k, _ in items) and not any(k == "prefix" for k, _ in items):
        while raw and not raw[0].strip():
            raw.pop(0)
        while raw and not raw[-1].strip():
            raw.pop()
        return raw
    nonblank = [l for l in raw if l.strip()]
    lines = [normalise(l) for l in nonblank]
    path = align(items, lines, masked=True)
    if path is None:
        return None
    new, k = [], 0
    for b in block_lines:
        if not normalise(b):
            new.append(b)
            continue
        kind, _ = items[k] if k < len(items) else ("any", "")
        if normalise(b) == ELLIPSIS:
            if new and normalise(new[-1]) == ELLIPSIS:
                continue  # items_of merged repeated `...`
            new.append(b)
            k += 1
            continue
        out = nonblank[path[k]]
        if kind == "prefix":
            words = len(items[k][1].split())
            indent = out[: len(out) - len(out.lstrip())]
            out = indent + " ".join(out.split()[:words]) + " " + ELLIPSIS
        new.append(out)
        k += 1
    return new


def check(root, cli, update=False, only=None, verbose=False, timeout=600, out=sys.stdout):
    """Checks (or updates) every figure; returns the number of failures."""
    failures, total, skipped = 0, 0, 0
    started = time.monotonic()
    for path in doc_files(root):
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        rel = os.path.relpath(path, root)
        try:
            figures = find_figures(rel, lines)
        except ValueError as e:
            print(f"FAIL {e}", file=out)
            failures += 1
            continue
        changed = False
        # Bottom-up, so an update does not shift the blocks still to do.
        for fig in reversed(figures):
            if only and only not in rel and only not in fig.command:
                continue
            total += 1
            where = f"{rel}:{fig.marker_line}"
            missing = missing_shared_paths(fig.command, root)
            if CALIBRATE.search(fig.command) and not os.access(calibrate_cli(cli), os.X_OK):
                missing.append(calibrate_cli(cli))
            if missing:
                skipped += 1
                print(f"skip {where}: {', '.join(missing)} absent", file=out)
                continue
            t0 = time.monotonic()
            try:
                fresh = run_command(fig.command, cli, root, timeout)
            except subprocess.TimeoutExpired:
                failures += 1
                print(f"FAIL {where}: `{fig.command}` ran past {timeout} s", file=out)
                continue
            seconds = time.monotonic() - t0
            block = lines[fig.start:fig.end]
            items = items_of(block)
            out_lines = [normalise(l) for l in fresh.splitlines() if l.strip()]
            if align(items, out_lines) is not None:
                if verbose:
                    print(f"ok   {where} ({seconds:.1f} s): {fig.command}", file=out)
                continue
            if update:
                new = updated_block(block, items, fresh)
                if new is not None:
                    lines[fig.start:fig.end] = new
                    changed = True
                    print(f"updated {where} ({seconds:.1f} s): {fig.command}", file=out)
                    continue
                print(f"FAIL {where}: cannot update (the block's shape no longer fits the "
                      f"output; rewrite it by hand): {fig.command}", file=out)
            else:
                print(f"FAIL {where}: `{fig.command}` no longer prints this block: "
                      f"{first_problem(items, out_lines)}", file=out)
            failures += 1
        if changed:
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(lines))
    elapsed = time.monotonic() - started
    print(f"{total - failures - skipped} of {total} figures match"
          f"{f', {skipped} skipped' if skipped else ''}"
          f"{f', {failures} FAILED' if failures else ''} ({elapsed:.1f} s)", file=out)
    return failures


def main(argv=None):
    root = repo_root()
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cli", default=os.path.join(root, "build", "servesim"),
                   help="the servesim binary the commands run (default build/servesim)")
    p.add_argument("--update", action="store_true",
                   help="rewrite blocks that no longer match from the fresh output")
    p.add_argument("--only", help="only figures whose file or command contains this")
    p.add_argument("--timeout", type=float, default=600, help="seconds per command")
    p.add_argument("-v", "--verbose", action="store_true", help="list every figure and its time")
    a = p.parse_args(argv)
    cli = os.path.abspath(a.cli)
    if not os.access(cli, os.X_OK):
        print(f"check_figures: {a.cli}: not an executable (build it, or pass --cli)",
              file=sys.stderr)
        return 2
    return 1 if check(root, cli, a.update, a.only, a.verbose, a.timeout) else 0


if __name__ == "__main__":
    sys.exit(main())
