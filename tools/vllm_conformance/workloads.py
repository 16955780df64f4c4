"""The conformance workloads: engine settings x seeded traffic.

Each entry becomes tests/conformance/fixtures/<name>.json. Most scenarios
come in a sync and an async (batch queue of 2) variant with the same traffic,
so a replay can tell an engine-loop bug from a scheduling bug. Engines are
sized so that every request fits the model length and, on its own, the KV
cache; traffic is sized so each fixture stays a few hundred KB.
"""

from dataclasses import dataclass, replace

from traffic import Prefixes, Traffic, lognormal, uniform
from vllm_driver import Engine


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    engine: Engine
    traffic: Traffic
    seed: int


def _eng(blocks, seqs, budget, mml, chunked=True, prefix=False, block_size=16,
         **kw):
    return Engine(block_size=block_size, num_gpu_blocks=blocks, max_num_seqs=seqs,
                  max_num_batched_tokens=budget, chunked_prefill=chunked,
                  prefix_caching=prefix, async_scheduling=False,
                  max_model_len=mml, **kw)


def _both(name, description, engine, traffic, seed):
    """The sync and async variants of one scenario (same traffic)."""
    return [
        Workload(f"{name}_sync", description + " EngineCore.step loop.",
                 engine, traffic, seed),
        Workload(f"{name}_async",
                 description + " Async scheduling, batch queue of 2.",
                 replace(engine, async_scheduling=True), traffic, seed),
    ]


def _one(name, description, engine, traffic, seed, async_=False):
    mode = (" Async scheduling, batch queue of 2." if async_
            else " EngineCore.step loop.")
    return [Workload(name, description + mode,
                     replace(engine, async_scheduling=async_), traffic, seed)]


def all_workloads():
    w = []
    w += _both(
        "light",
        "Light load with idle gaps between three bursts: roomy cache, "
        "low concurrency, clock jumps and the empty flush step after the "
        "engine drains.",
        _eng(1024, 32, 2048, 2048),
        Traffic(60, 20.0, uniform(16, 512), uniform(8, 128),
                bursts=3, gap_us=400_000), 101)
    w += _both(
        "tight_kv",
        "Tight KV cache (80 blocks) under a burst: heavy recompute "
        "preemption of the newest running request.",
        _eng(80, 16, 512, 2048),
        Traffic(70, 400.0, uniform(64, 384), uniform(64, 320)), 102)
    w += _both(
        "chunk64",
        "Chunked prefill with a 64-token budget: long prompts take many "
        "steps and share the budget with decodes.",
        _eng(512, 16, 64, 2048),
        Traffic(40, 30.0, lognormal(300, 0.8, 16, 1500), uniform(16, 96)),
        103)
    w += _both(
        "chunk256_tight",
        "Chunked prefill with a 256-token budget in a tight cache "
        "(160 blocks): chunking plus preemption.",
        _eng(160, 24, 256, 2048),
        Traffic(70, 100.0, uniform(100, 800), uniform(32, 256)), 104)
    w += _both(
        "nochunk",
        "Chunked prefill off (budget = max_model_len = 1024): a prompt "
        "that does not fit the remaining budget stops admission.",
        _eng(400, 16, 1024, 1024, chunked=False),
        Traffic(60, 60.0, uniform(32, 900), uniform(16, 124)), 105)
    w += _both(
        "nochunk_tight",
        "Chunked prefill off in a tight cache (96 blocks): whole-prompt "
        "admission plus preemption and re-prefill of prompt+output.",
        _eng(96, 16, 1024, 1024, chunked=False),
        Traffic(60, 300.0, uniform(64, 700), uniform(32, 300)), 106)
    w += _both(
        "prefix_roomy",
        "Prefix caching with a roomy cache: five groups with Zipf "
        "popularity, prefixes of 72..1000 tokens, some not multiples of 16.",
        _eng(2048, 32, 1024, 4096, prefix=True),
        Traffic(120, 80.0, uniform(8, 256), uniform(8, 160),
                Prefixes((480, 200, 1000, 72, 333), zipf=1.1, share=0.85),
                prompt_after_prefix=True), 107)
    w += _both(
        "prefix_tight",
        "Prefix caching in a tight cache (192 blocks): six groups, LRU "
        "eviction of cached blocks, preemption of requests sharing blocks.",
        _eng(192, 16, 512, 2048, prefix=True),
        Traffic(100, 150.0, uniform(16, 200), uniform(16, 200),
                Prefixes((300, 150, 700, 45, 520, 90), zipf=1.0, share=0.8),
                prompt_after_prefix=True), 108)
    w += _both(
        "prefix_chunk64",
        "Prefix caching with a 64-token chunk budget and max_num_seqs 8: "
        "hits admitted mid-chunking of the first request of a group.",
        _eng(384, 8, 64, 2048, prefix=True),
        Traffic(60, 40.0, uniform(10, 120), uniform(8, 64),
                Prefixes((250, 500, 40), zipf=1.0, share=0.9),
                prompt_after_prefix=True), 109)
    w += _both(
        "prefix_full_hit",
        "Prefix caching with prompts that are all or nearly all shared "
        "prefix (0..3 unique tokens; prefixes of 64, 70, 160 and 512 "
        "tokens): full hits capped at prompt_len - 1, simultaneous "
        "finishes, tight cache (64 blocks).",
        _eng(64, 16, 256, 2048, prefix=True),
        Traffic(160, 400.0, uniform(0, 3), uniform(16, 120),
                Prefixes((64, 70, 160, 512), zipf=0.8, share=1.0),
                prompt_after_prefix=True), 118)
    w += _both(
        "seqs4",
        "max_num_seqs 4 binds: a burst queues behind four running "
        "requests in a roomy cache.",
        _eng(512, 4, 512, 2048),
        Traffic(60, 0.0, uniform(16, 300), uniform(16, 200)), 110)
    w += _both(
        "seqs8_prefix",
        "max_num_seqs 8 with prefix caching and a moderate cache "
        "(100 blocks).",
        _eng(100, 8, 256, 2048, prefix=True),
        Traffic(80, 120.0, uniform(16, 200), uniform(16, 160),
                Prefixes((128, 260, 61), zipf=1.2, share=0.7),
                prompt_after_prefix=True), 111)
    w += _both(
        "long_prompts",
        "Prompts of 600..1950 tokens in a 128-usable-block cache (2048 "
        "tokens): the full-prompt admission gate and decode growth force "
        "serialisation and preemption.",
        _eng(129, 8, 512, 2048),
        Traffic(16, 20.0, uniform(600, 1950), uniform(100, 700)), 112)
    w += _both(
        "random_heavy",
        "Random heavy run: log-normal prompts (median 256) and outputs "
        "(median 96), Poisson arrivals at 120/s, 320 blocks.",
        _eng(320, 32, 1024, 4096),
        Traffic(190, 120.0, lognormal(256, 1.0, 4, 3000),
                lognormal(96, 1.0, 1, 1000)), 113)
    w += _both(
        "random_heavy_prefix",
        "Random heavy run with prefix caching: log-normal lengths, Poisson "
        "arrivals, eight prefix groups, 384 blocks.",
        _eng(384, 32, 1024, 4096, prefix=True),
        Traffic(190, 120.0, lognormal(128, 1.0, 4, 2000),
                lognormal(96, 1.0, 1, 800),
                Prefixes((512, 64, 300, 1200, 33, 700, 150, 96), zipf=0.9,
                         share=0.75),
                prompt_after_prefix=True), 114)
    w += _both(
        "no_full_isl",
        "scheduler_reserve_full_isl off: admission checks only the first "
        "chunk, so chunked prompts over-admit and preempt each other.",
        _eng(128, 16, 256, 2048, scheduler_reserve_full_isl=False),
        Traffic(50, 200.0, uniform(200, 900), uniform(16, 200)), 115)
    w += _one(
        "long_prefill_threshold",
        "long_prefill_token_threshold 128: prefill chunks capped at 128 "
        "tokens while more than one request is eligible.",
        _eng(400, 16, 512, 2048, long_prefill_token_threshold=128),
        Traffic(50, 60.0, uniform(64, 1200), uniform(16, 128)), 116)
    w += _one(
        "watermark",
        "watermark 0.1: admissions keep 10% of the blocks free while "
        "something is running; tight cache.",
        _eng(200, 16, 512, 2048, watermark=0.1),
        Traffic(70, 200.0, uniform(64, 500), uniform(32, 256)), 117,
        async_=True)
    w += _priority_workloads()
    w += _wider_fcfs_workloads()
    return w


def _prio(blocks, seqs, budget, mml, **kw):
    return _eng(blocks, seqs, budget, mml, policy="priority", **kw)


def _priority_workloads():
    """--scheduling-policy priority with per-request priorities: admission
    by (priority, arrival), preemption of the lowest-priority running
    request wherever it sits in the running list, the request being
    scheduled included."""
    w = []
    tight = Traffic(70, 400.0, uniform(64, 384), uniform(64, 320), priorities=4)
    w += _both("prio_tight", "Priority policy, four levels, tight cache (80 "
               "blocks) under a burst: victims before and after the request "
               "being scheduled, and requests that preempt themselves.",
               _prio(80, 16, 512, 2048), tight, 201)
    w += _both("prio_tight_s2", "prio_tight's settings with another seed.",
               _prio(80, 16, 512, 2048), tight, 202)
    w += _both("prio_chunk256", "Priority policy, three levels, 256-token "
               "chunks in a tight cache (160 blocks).",
               _prio(160, 24, 256, 2048),
               Traffic(70, 100.0, uniform(100, 800), uniform(32, 256),
                       priorities=3), 203)
    w += _both("prio_prefix", "Priority policy with prefix caching in a "
               "tight cache (192 blocks): six prefix groups, four levels.",
               _prio(192, 16, 512, 2048, prefix=True),
               Traffic(100, 150.0, uniform(16, 200), uniform(16, 200),
                       Prefixes((300, 150, 700, 45, 520, 90), zipf=1.0,
                                share=0.8),
                       prompt_after_prefix=True, priorities=4), 204)
    w += _both("prio_random_heavy", "Priority policy, random heavy run: "
               "log-normal lengths, Poisson arrivals at 120/s, 320 blocks, "
               "four levels.",
               _prio(320, 32, 1024, 4096),
               Traffic(190, 120.0, lognormal(256, 1.0, 4, 3000),
                       lognormal(96, 1.0, 1, 1000), priorities=4), 205)
    w += _both("prio_nochunk_tight", "Priority policy with chunked prefill "
               "off in a tight cache (96 blocks), two levels.",
               _prio(96, 16, 1024, 1024, chunked=False),
               Traffic(60, 300.0, uniform(64, 700), uniform(32, 300),
                       priorities=2), 206)
    short = Traffic(120, 1000.0, uniform(100, 400), uniform(2, 30), priorities=4)
    for seed in (207, 208, 209):
        w += _one(f"prio_short_async_{seed}", "Priority policy, async, short "
                  "outputs in a very tight cache (40 blocks): victims earlier "
                  "in the running list whose last token is in flight, passed "
                  "by and not scheduled.", _prio(40, 16, 512, 2048), short,
                  seed, async_=True)
    return w


def _wider_fcfs_workloads():
    """FCFS beyond the first set: other block sizes, chunking off with
    prefix caching, max_num_seqs 2, and more seeds of the heavy runs."""
    w = []
    w += _both("bs32_tight", "Block size 32 in a tight cache (48 blocks): "
               "preemption with large blocks.",
               _eng(48, 16, 512, 2048, block_size=32),
               Traffic(70, 400.0, uniform(64, 384), uniform(64, 320)), 211)
    w += _both("bs8_prefix", "Block size 8 with prefix caching (400 "
               "blocks): hits at 8-token granularity.",
               _eng(400, 16, 512, 2048, prefix=True, block_size=8),
               Traffic(100, 150.0, uniform(16, 200), uniform(16, 200),
                       Prefixes((300, 150, 700, 45, 520, 90), zipf=1.0,
                                share=0.8),
                       prompt_after_prefix=True), 212)
    w += _both("nochunk_prefix", "Chunked prefill off with prefix caching "
               "(budget 1024, 160 blocks): whole prompts, cached prefixes.",
               _eng(160, 16, 1024, 1024, chunked=False, prefix=True),
               Traffic(80, 150.0, uniform(16, 300), uniform(16, 200),
                       Prefixes((300, 150, 600, 45), zipf=1.0, share=0.8),
                       prompt_after_prefix=True), 213)
    w += _both("seqs2", "max_num_seqs 2: a queue behind two running "
               "requests.",
               _eng(512, 2, 512, 2048),
               Traffic(40, 50.0, uniform(16, 300), uniform(16, 200)), 214)
    w += _both("tight_kv_s2", "tight_kv's settings with another seed.",
               _eng(80, 16, 512, 2048),
               Traffic(70, 400.0, uniform(64, 384), uniform(64, 320)), 215)
    w += _both("random_heavy_s2", "random_heavy's settings with another "
               "seed.",
               _eng(320, 32, 1024, 4096),
               Traffic(190, 120.0, lognormal(256, 1.0, 4, 3000),
                       lognormal(96, 1.0, 1, 1000)), 216)
    return w
