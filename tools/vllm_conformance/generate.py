#!/usr/bin/env python3
"""Regenerates the vLLM conformance fixtures (run by hand, not in CI).

    tools/vllm_conformance/install.sh            # once: venv with vLLM
    /work/vllm-venv/bin/python tools/vllm_conformance/generate.py \
        --out tests/conformance/fixtures [--only NAME ...]

Runs vLLM's real v1 scheduler on the CPU for every workload in
workloads.py and writes <out>/<name>.json, then prints a summary table.
Output is byte-identical from run to run (seeded traffic, no wall clock).
"""

import argparse
import os
import shutil
import sys
import tempfile
import time


def _pin_environment():
    """Fixes every environment knob that could change a run, re-executing
    the interpreter if PYTHONHASHSEED has to change (it is read at start).
    vLLM gets an empty cache directory, so a model-inspection result cached
    by an earlier run (~/.cache/vllm/modelinfos) cannot hide a missing
    dependency."""
    cache = os.environ.get("VLLM_CACHE_ROOT", "")
    if not cache.startswith(tempfile.gettempdir() + "/vllm_conformance_"):
        cache = tempfile.mkdtemp(prefix="vllm_conformance_cache_")
    want = {"PYTHONHASHSEED": "0", "HF_HUB_OFFLINE": "1",
            "VLLM_CACHE_ROOT": cache, "VLLM_NO_USAGE_STATS": "1",
            "DO_NOT_TRACK": "1",
            "VLLM_USE_V2_MODEL_RUNNER": "1", "VLLM_LOGGING_LEVEL": "ERROR",
            "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    if os.environ.get("PYTHONHASHSEED") != want["PYTHONHASHSEED"]:
        os.environ.update(want)
        os.execv(sys.executable, [sys.executable] + sys.argv)
    os.environ.update(want)


def _run_one(harness, w, out_dir):
    """Runs one workload through vLLM, writes its fixture, returns the
    summary row."""
    import fixture_io
    import traffic
    import vllm_driver
    eng = w.engine
    cap = (eng.num_gpu_blocks - 1) * eng.block_size  # usable blocks only
    reqs = traffic.make_requests(w.traffic, w.seed, eng.max_model_len, cap)
    tokens = traffic.TokenSource(w.seed, reqs)
    cfg, steps, results = vllm_driver.run_workload(harness, eng, reqs, tokens)
    fx = {
        "vllm_version": harness.version,
        "name": w.name,
        "description": w.description,
        "time_model": fixture_io.TIME_MODEL,
        "engine": eng.fixture_engine(),
        "vllm_settings": vllm_driver.VllmHarness.settings(cfg),
        "requests": [r.row() for r in reqs],
        "steps": steps,
        "results": results,
    }
    fixture_io.check(fx)
    text = fixture_io.render(fx)
    with open(os.path.join(out_dir, f"{w.name}.json"), "w") as f:
        f.write(text)
    return (w.name, len(steps), len(reqs), sum(r[5] for r in results),
            sum(r[1] for r in results), sum(1 for s in steps if not s[1]),
            len(text) // 1024)


def _print_table(rows):
    hdr = ("fixture", "steps", "requests", "preemptions", "prefix_hit_tokens",
           "empty_steps", "KiB")
    print(f"{hdr[0]:<26}" + "".join(f"{h:>18}" for h in hdr[1:]))
    for r in rows:
        print(f"{r[0]:<26}" + "".join(f"{v:>18}" for v in r[1:]))
    print(f"{'total':<26}" + "".join(
        f"{sum(r[i] for r in rows):>18}" for i in range(1, len(hdr))))


def main():
    _pin_environment()
    try:
        _main()
    finally:
        shutil.rmtree(os.environ["VLLM_CACHE_ROOT"], ignore_errors=True)


def _main():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import vllm_driver
    import workloads

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--out", required=True, help="fixture directory")
    ap.add_argument("--only", nargs="*", default=None,
                    help="workload names to regenerate (default: all)")
    ap.add_argument("--expect-version", default="0.33.0",
                    help="refuse to run against another vLLM version")
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

    harness = vllm_driver.VllmHarness()
    rows = []
    try:
        if harness.version != args.expect_version:
            sys.exit(f"installed vLLM is {harness.version}, expected "
                     f"{args.expect_version} (--expect-version overrides)")
        os.makedirs(args.out, exist_ok=True)
        for w in todo:
            t0 = time.time()
            rows.append(_run_one(harness, w, args.out))
            print(f"  {w.name}: {rows[-1][1]} steps "
                  f"({time.time() - t0:.1f}s)", file=sys.stderr, flush=True)
    finally:
        harness.close()
    _print_table(rows)


if __name__ == "__main__":
    main()
