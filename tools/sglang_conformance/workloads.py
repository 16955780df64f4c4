"""The SGLang conformance workloads: server arguments x seeded traffic.

Each entry becomes tests/conformance/sglang/<name>.json. Most scenarios come
as a pair with the same traffic: `_normal` (event_loop_normal, overlap
scheduling off) and `_overlap` (event_loop_overlap, the default in SGLang),
so a replay can tell a loop bug from a scheduling bug. Traffic comes from
tools/vllm_conformance/traffic.py (shared: seeded, no engine imports).
Pools are sized in tokens (SGLang's max_total_tokens) so that every request
fits on its own; "pressure" scenarios make the pool small enough that decode
runs out of KV and SGLang retracts, or the radix cache must evict.
"""

from dataclasses import dataclass, replace

from traffic import Prefixes, Traffic, lognormal, uniform
from sglang_driver import Engine


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    engine: Engine
    traffic: Traffic
    seed: int


def _eng(tokens, running, chunk=512, prefill=4096, page=1, policy="fcfs", **kw):
    return Engine(max_total_tokens=tokens, max_running_requests=running,
                  max_prefill_tokens=prefill, chunked_prefill_size=chunk,
                  page_size=page, schedule_policy=policy, **kw)


def _pair(name, description, engine, traffic, seed):
    return [
        Workload(f"{name}_normal", description + " event_loop_normal.",
                 replace(engine, disable_overlap_schedule=True), traffic, seed),
        Workload(f"{name}_overlap",
                 description + " event_loop_overlap (one-step lag).",
                 replace(engine, disable_overlap_schedule=False), traffic, seed),
    ]


_SHARED = Prefixes((384, 256, 128, 64), zipf=1.0, share=0.8)


def all_workloads():
    w = []
    w += _pair(
        "fcfs_roomy",
        "fcfs, page 1, a roomy pool and idle gaps between bursts: no "
        "pressure, the new-token ratio decays and resets when idle.",
        _eng(16384, 16),
        Traffic(48, 40.0, uniform(16, 512), uniform(8, 160),
                bursts=3, gap_us=300_000), 201)
    w += _pair(
        "fcfs_retract",
        "fcfs, page 1, a 3000-token pool under a burst: decode runs out of "
        "KV, SGLang retracts and raises the new-token ratio.",
        _eng(3000, 24, chunk=256),
        Traffic(60, 400.0, uniform(16, 500), uniform(32, 400)), 202)
    w += _pair(
        "lpm_prefix",
        "lpm, page 1, shared prefixes (four groups, Zipf) in a 4000-token "
        "pool: radix hits, leaf eviction and retraction.",
        _eng(4000, 24, chunk=512, policy="lpm"),
        Traffic(70, 300.0, uniform(32, 300), uniform(16, 300),
                prefixes=_SHARED, prompt_after_prefix=True), 203)
    w += _pair(
        "lpm_prefix_p16",
        "lpm, page 16, shared prefixes in a 4096-token pool: page-aligned "
        "radix matches and eviction.",
        _eng(4096, 24, chunk=512, page=16, policy="lpm"),
        Traffic(70, 300.0, uniform(32, 300), uniform(16, 300),
                prefixes=_SHARED, prompt_after_prefix=True), 204)
    w += _pair(
        "dfs_weight",
        "dfs-weight, page 1, shared prefixes in a 4000-token pool.",
        _eng(4000, 24, chunk=512, policy="dfs-weight"),
        Traffic(70, 300.0, uniform(32, 300), uniform(16, 300),
                prefixes=_SHARED, prompt_after_prefix=True), 205)
    w += _pair(
        "lof_p16",
        "lof (longest output first), page 16, a 3200-token pool: "
        "retraction under pressure.",
        _eng(3200, 24, chunk=256, page=16, policy="lof"),
        Traffic(60, 400.0, uniform(16, 400), uniform(16, 400)), 206)
    w += _pair(
        "random",
        "random, page 1, shared prefixes: the shuffles are recorded in "
        "random_orders.",
        _eng(6000, 16, chunk=512, policy="random"),
        Traffic(50, 150.0, uniform(32, 300), uniform(16, 200),
                prefixes=_SHARED, prompt_after_prefix=True), 207)
    w += _pair(
        "chunk64",
        "fcfs, page 1, chunked prefill of 64 tokens: long prompts take many "
        "extend steps (prefill preferred over decode).",
        _eng(8192, 16, chunk=64, prefill=64),
        Traffic(30, 30.0, lognormal(300, 0.8, 16, 1500), uniform(16, 96)),
        208)
    w += _pair(
        "nochunk_prefix",
        "lpm, page 16, chunked prefill off with the radix cache on: whole "
        "prompts admitted under max_prefill_tokens 1024.",
        _eng(5000, 16, chunk=-1, prefill=1024, page=16, policy="lpm"),
        Traffic(50, 200.0, uniform(16, 600), uniform(16, 200),
                prefixes=_SHARED), 209)
    w += _pair(
        "conservative_p16",
        "fcfs, page 16, schedule_conservativeness 0.3 (ratio 0.21): admits "
        "aggressively, retracts often.",
        _eng(3200, 32, chunk=256, page=16, schedule_conservativeness=0.3),
        Traffic(60, 400.0, uniform(16, 400), uniform(32, 400)), 210)
    w += _pair(
        "ignore_eos",
        "fcfs, page 1, requests with ignore_eos: admission reserves every "
        "request's full max_new_tokens (ratio 1), so nothing retracts.",
        _eng(3000, 24, chunk=256, ignore_eos=True),
        Traffic(60, 400.0, uniform(16, 500), uniform(32, 400)), 211)
    w += _pair(
        "no_radix",
        "fcfs, page 1, radix cache disabled (--disable-radix-cache) under "
        "pressure: no prefix hits even with shared prefixes.",
        _eng(3000, 24, chunk=256, disable_radix_cache=True),
        Traffic(60, 400.0, uniform(16, 400), uniform(32, 300),
                prefixes=_SHARED, prompt_after_prefix=True), 212)
    w += _pair(
        "fast_decay",
        "fcfs, page 1, the new-token ratio decaying over 40 steps "
        "(SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS=40) in a 2500-token pool: "
        "admission keeps over-committing, decode retracts again and again.",
        _eng(2500, 32, chunk=256, new_token_ratio_decay_steps=40),
        Traffic(70, 300.0, uniform(16, 300), uniform(64, 500)), 214)
    w += _pair(
        "fast_decay_lpm_p16",
        "lpm, page 16, shared prefixes, the ratio decaying over 40 steps "
        "from init 0.5 in a 3072-token pool: retraction and eviction "
        "together.",
        _eng(3072, 32, chunk=256, page=16, policy="lpm",
             new_token_ratio_decay_steps=40, init_new_token_ratio=0.5),
        Traffic(70, 300.0, uniform(16, 300), uniform(64, 500),
                prefixes=_SHARED, prompt_after_prefix=True), 215)
    w += [Workload(
        "lpm_fallback_normal",
        "lpm with 160 requests queued at once: more than 128 waiting turns "
        "lpm into fcfs until the queue drains. event_loop_normal.",
        _eng(20000, 32, chunk=1024, policy="lpm", disable_overlap_schedule=True),
        Traffic(160, 0.0, uniform(16, 200), uniform(8, 64),
                prefixes=_SHARED, prompt_after_prefix=True), 213)]
    return w
