#!/usr/bin/env python3
"""Checks the committed SGLang fixtures without SGLang (run in CI):

    python3 tools/sglang_conformance/check_fixtures.py tests/conformance/sglang

Every fixture must name the conforming SGLang version and pass
fixture_io.check (token conservation per request, pool bounds, batch sizes,
timestamps). The set as a whole must keep what the fixtures are for: at
least 20 fixtures and 30,000 steps, both event loops, all five waiting-queue
policies, page sizes 1 and 16, radix-cache hits, and retraction or eviction
in at least half of the fixtures. Prints one line of totals; exits 1 with a
one-line reason otherwise.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_io  # noqa: E402

VERSION = "0.5.23"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.splitlines()[2].strip())
    d = sys.argv[1]
    names = sorted(n for n in os.listdir(d) if n.endswith(".json"))
    steps = pressured = hits = 0
    policies, pages, loops = set(), set(), set()
    for n in names:
        path = os.path.join(d, n)
        with open(path) as f:
            fx = json.load(f)
        if fx.get("sglang_version") != VERSION:
            sys.exit(f"{path}: sglang_version {fx.get('sglang_version')!r}, "
                     f"expected {VERSION!r}")
        try:
            fixture_io.check(fx)
        except (ValueError, KeyError, TypeError) as e:
            sys.exit(f"{path}: {e}")
        e = fx["engine"]
        policies.add(e["schedule_policy"])
        pages.add(e["page_size"])
        loops.add("normal" if e["disable_overlap_schedule"] else "overlap")
        steps += len(fx["steps"])
        hits += sum(r[1] for r in fx["results"])
        if any(s[3] or s[9] for s in fx["steps"]):
            pressured += 1
    want = {"fcfs", "lpm", "dfs-weight", "lof", "random"}
    problems = []
    if len(names) < 20:
        problems.append(f"{len(names)} fixtures (< 20)")
    if steps < 30000:
        problems.append(f"{steps} steps (< 30,000)")
    if 2 * pressured < len(names):
        problems.append(f"{pressured} fixtures under pressure (< half)")
    if not want <= policies:
        problems.append(f"policies missing: {sorted(want - policies)}")
    if not {1, 16} <= pages or loops != {"normal", "overlap"} or hits == 0:
        problems.append(f"page sizes {sorted(pages)}, loops {sorted(loops)}, "
                        f"{hits} radix-hit tokens")
    if problems:
        sys.exit(f"{d}: " + "; ".join(problems))
    print(f"{d}: {len(names)} SGLang {VERSION} fixtures consistent, {steps} "
          f"steps, {pressured} with retraction or eviction, {hits} radix-hit "
          f"prompt tokens")


if __name__ == "__main__":
    main()
