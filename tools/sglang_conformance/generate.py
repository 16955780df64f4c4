#!/usr/bin/env python3
"""Regenerates the SGLang conformance fixtures (run by hand, not in CI).

    tools/sglang_conformance/install.sh            # once: venv with SGLang
    /work/sglang-venv/bin/python tools/sglang_conformance/generate.py \\
        --out tests/conformance/sglang [--only NAME ...]

Runs SGLang's real scheduler on the CPU (sglang_driver.py) for every
workload in workloads.py, writes <out>/<name>.json and prints a summary.
Output is byte-identical from run to run (seeded traffic and shuffles, a
logical clock for radix-cache LRU, no wall clock).
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _pin_environment():
    """Fixes the environment knobs that could change a run, re-executing the
    interpreter if PYTHONHASHSEED has to change (read at start). The
    new-token-ratio knobs are set per workload by the driver."""
    want = {"PYTHONHASHSEED": "0", "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
            "SGLANG_DISABLE_CONSECUTIVE_PREFILL_OVERLAP": "false",
            "SGLANG_RETRACT_DECODE_STEPS": "20",
            "SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION": "4096"}
    if any(os.environ.get(k) != v for k, v in want.items()):
        os.environ.update(want)
        os.execv(sys.executable, [sys.executable] + sys.argv)


def settings():
    """The SGLang defaults (environment) the fixtures depend on."""
    from sglang.srt.environ import envs
    from sglang.srt.managers.schedule_policy import (
        CLIP_MAX_NEW_TOKENS, IN_BATCH_PREFIX_CACHING_CHECK_THRESHOLD,
        IN_BATCH_PREFIX_CACHING_DEPRIORITIZE_THRESHOLD,
        WAITING_QUEUE_PREFIX_MATCH_MAX)
    return {
        "SGLANG_RETRACT_DECODE_STEPS": envs.SGLANG_RETRACT_DECODE_STEPS.get(),
        "CLIP_MAX_NEW_TOKENS": CLIP_MAX_NEW_TOKENS,
        "IN_BATCH_PREFIX_CACHING_CHECK_THRESHOLD":
            IN_BATCH_PREFIX_CACHING_CHECK_THRESHOLD,
        "IN_BATCH_PREFIX_CACHING_DEPRIORITIZE_THRESHOLD":
            IN_BATCH_PREFIX_CACHING_DEPRIORITIZE_THRESHOLD,
        "WAITING_QUEUE_PREFIX_MATCH_MAX": WAITING_QUEUE_PREFIX_MATCH_MAX,
        "SGLANG_DISABLE_CONSECUTIVE_PREFILL_OVERLAP":
            envs.SGLANG_DISABLE_CONSECUTIVE_PREFILL_OVERLAP.get(),
        "SGLANG_ENABLE_WAITING_PREFIX_REFRESH":
            envs.SGLANG_ENABLE_WAITING_PREFIX_REFRESH.get(),
        "enable_mixed_chunk": False,
        "radix_eviction_policy": "lru (logical clock)",
        "forward": "one token per request per batch; never EOS",
    }


def _run_one(harness, w, out_dir):
    import fixture_io
    import sglang_driver
    import traffic
    eng = w.engine
    cap = eng.max_total_tokens - 2 * eng.page_size - 8
    reqs = traffic.make_requests(w.traffic, w.seed, eng.context_length, cap)
    tokens = traffic.TokenSource(w.seed, reqs)
    steps, results, orders = sglang_driver.run_workload(
        harness, eng, reqs, tokens, w.seed)
    fx = {
        "sglang_version": harness.version,
        "name": w.name,
        "description": w.description,
        "time_model": fixture_io.TIME_MODEL,
        "seed": w.seed,
        "engine": eng.fixture_engine(),
        "sglang_settings": settings(),
        "requests": [r.row() for r in reqs],
        "steps": steps,
        "results": results,
    }
    if eng.schedule_policy == "random":
        fx["random_orders"] = orders
    fixture_io.check(fx)
    text = fixture_io.render(fx)
    with open(os.path.join(out_dir, f"{w.name}.json"), "w") as f:
        f.write(text)
    pressure = sum(1 for s in steps if s[3] or s[9])
    return (w.name, len(steps), len(reqs), sum(r[5] for r in results),
            sum(s[9] for s in steps), pressure, sum(r[1] for r in results),
            sum(1 for s in steps if s[1] == "E"), len(text) // 1024)


def _print_table(rows):
    hdr = ("fixture", "steps", "requests", "retractions", "evicted_tokens",
           "pressure_steps", "prefix_hit_tokens", "extend_steps", "KiB")
    print(f"{hdr[0]:<24}" + "".join(f"{h:>18}" for h in hdr[1:]))
    for r in rows:
        print(f"{r[0]:<24}" + "".join(f"{v:>18}" for v in r[1:]))
    print(f"{'total':<24}" + "".join(
        f"{sum(r[i] for r in rows):>18}" for i in range(1, len(hdr))))


def main():
    _pin_environment()
    sys.path.insert(0, HERE)
    sys.path.append(os.path.join(HERE, "..", "vllm_conformance"))  # traffic.py
    import sglang_driver
    import workloads

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--out", required=True, help="fixture directory")
    ap.add_argument("--only", nargs="*", default=None,
                    help="workload names to regenerate (default: all)")
    ap.add_argument("--expect-version", default="0.5.23",
                    help="refuse to run against another SGLang version")
    args = ap.parse_args()

    todo = workloads.all_workloads()
    names = [w.name for w in todo]
    if len(set(names)) != len(names):
        sys.exit("duplicate workload names")
    if args.only:
        unknown = sorted(set(args.only) - set(names))
        if unknown:
            sys.exit(f"unknown workloads: {unknown}")
        todo = [w for w in todo if w.name in args.only]

    harness = sglang_driver.SglangHarness()
    if harness.version != args.expect_version:
        sys.exit(f"installed SGLang is {harness.version}, expected "
                 f"{args.expect_version} (--expect-version overrides)")
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for w in todo:
        t0 = time.time()
        rows.append(_run_one(harness, w, args.out))
        print(f"  {w.name}: {rows[-1][1]} steps ({time.time() - t0:.1f}s)",
              file=sys.stderr, flush=True)
    _print_table(rows)


if __name__ == "__main__":
    main()
