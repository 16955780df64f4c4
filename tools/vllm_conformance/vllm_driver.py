"""Drives vLLM's own v1 scheduler over one workload and records a step trace.

Nothing here reimplements scheduling: `Scheduler.schedule()` and
`Scheduler.update_from_output()` of the installed vLLM make every decision.
This file only supplies what the GPU side would: a fake model runner that
samples one token per finished-prefill request, and a clock (1000 us per
non-empty batch, see README.md "Time model") that decides when requests
arrive and when a batch's output comes back. The two engine loops below
mirror `EngineCore.step` (sync) and `EngineCore.step_with_batch_queue` with a
queue of 2 (async scheduling).
"""

import collections
import json
import os
import shutil
import tempfile
from dataclasses import dataclass

BATCH_US = 1000  # GPU time of every non-empty batch.


@dataclass(frozen=True)
class Engine:
    block_size: int
    num_gpu_blocks: int
    max_num_seqs: int
    max_num_batched_tokens: int
    chunked_prefill: bool
    prefix_caching: bool
    async_scheduling: bool
    max_model_len: int
    long_prefill_token_threshold: int = 0
    scheduler_reserve_full_isl: bool = True
    watermark: float = 0.0
    policy: str = "fcfs"  # or "priority" (--scheduling-policy)

    def fixture_engine(self):
        keys = ("block_size", "num_gpu_blocks", "max_num_seqs",
                "max_num_batched_tokens", "chunked_prefill", "prefix_caching",
                "async_scheduling", "max_model_len")
        return {k: getattr(self, k) for k in keys}


# A Llama-shaped config.json; only its shape is read (no weights exist).
_MODEL_CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama",
    "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
    "num_key_value_heads": 4, "num_hidden_layers": 2, "vocab_size": 32000,
    "max_position_embeddings": 131072, "rms_norm_eps": 1e-5,
    "torch_dtype": "float32", "bos_token_id": 1, "eos_token_id": 2,
    "rope_theta": 10000.0, "tie_word_embeddings": False,
}


class VllmHarness:
    """Imports vLLM once and builds a fresh scheduler per workload."""

    def __init__(self):
        import vllm
        self.vllm = vllm
        self.version = vllm.__version__
        self.model_dir = tempfile.mkdtemp(prefix="vllm_conformance_model_")
        with open(os.path.join(self.model_dir, "config.json"), "w") as f:
            json.dump(_MODEL_CONFIG, f)

    def close(self):
        shutil.rmtree(self.model_dir, ignore_errors=True)

    def build(self, eng):
        from vllm.config import (CacheConfig, DeviceConfig, ModelConfig,
                                 SchedulerConfig, VllmConfig)
        import torch
        from vllm.utils.hashing import get_hash_fn_by_name
        from vllm.v1.core.kv_cache_utils import (get_request_block_hasher,
                                                 init_none_hash)
        from vllm.v1.kv_cache_interface import (FullAttentionSpec,
                                                KVCacheConfig,
                                                KVCacheGroupSpec)
        from vllm.v1.structured_output import StructuredOutputManager

        model = ModelConfig(model=self.model_dir, skip_tokenizer_init=True,
                            max_model_len=eng.max_model_len, dtype="float32",
                            seed=0)
        sched_cfg = SchedulerConfig(
            max_num_seqs=eng.max_num_seqs,
            max_num_batched_tokens=eng.max_num_batched_tokens,
            max_model_len=eng.max_model_len,
            is_encoder_decoder=False,
            enable_chunked_prefill=eng.chunked_prefill,
            async_scheduling=eng.async_scheduling,
            long_prefill_token_threshold=eng.long_prefill_token_threshold,
            scheduler_reserve_full_isl=eng.scheduler_reserve_full_isl,
            watermark=eng.watermark,
            policy=eng.policy,
        )
        cache_cfg = CacheConfig(block_size=eng.block_size,
                                enable_prefix_caching=eng.prefix_caching)
        cfg = VllmConfig(model_config=model, scheduler_config=sched_cfg,
                         cache_config=cache_cfg,
                         device_config=DeviceConfig(device="cpu"))
        cfg.cache_config.num_gpu_blocks = eng.num_gpu_blocks
        self._check_config(cfg, eng)

        kv_cfg = KVCacheConfig(
            num_blocks=eng.num_gpu_blocks, kv_cache_tensors=[],
            kv_cache_groups=[KVCacheGroupSpec(
                ["model.layers.0.self_attn.attn"],
                FullAttentionSpec(block_size=eng.block_size, num_kv_heads=1,
                                  head_size=16, dtype=torch.float32))])
        hash_fn = get_hash_fn_by_name(cfg.cache_config.prefix_caching_hash_algo)
        init_none_hash(hash_fn)
        hasher = get_request_block_hasher(eng.block_size, hash_fn)
        cls = cfg.scheduler_config.get_scheduler_cls()
        sched = cls(vllm_config=cfg, kv_cache_config=kv_cfg,
                    structured_output_manager=StructuredOutputManager(cfg),
                    block_size=eng.block_size, hash_block_size=eng.block_size,
                    log_stats=False)
        return cfg, sched, hasher

    @staticmethod
    def _check_config(cfg, eng):
        """VllmConfig's post-init and the platform hook may rewrite settings;
        refuse to record a fixture under settings other than the declared."""
        sc, cc = cfg.scheduler_config, cfg.cache_config
        got = dict(
            block_size=cc.block_size, max_num_seqs=sc.max_num_seqs,
            max_num_batched_tokens=sc.max_num_batched_tokens,
            chunked_prefill=sc.enable_chunked_prefill,
            prefix_caching=cc.enable_prefix_caching,
            async_scheduling=bool(sc.async_scheduling),
            max_model_len=cfg.model_config.max_model_len,
            long_prefill_token_threshold=sc.long_prefill_token_threshold,
            scheduler_reserve_full_isl=sc.scheduler_reserve_full_isl,
            watermark=sc.watermark)
        for k, v in got.items():
            if getattr(eng, k) != v:
                raise RuntimeError(f"vLLM changed {k}: asked "
                                   f"{getattr(eng, k)!r}, got {v!r}")
        if sc.max_num_scheduled_tokens not in (None, eng.max_num_batched_tokens):
            raise RuntimeError("max_num_scheduled_tokens differs")
        if eng.async_scheduling and cfg.max_concurrent_batches != 2:
            raise RuntimeError(f"max_concurrent_batches is "
                               f"{cfg.max_concurrent_batches}, expected 2")

    @staticmethod
    def settings(cfg):
        """Every SchedulerConfig/CacheConfig field that steers scheduling."""
        sc, cc = cfg.scheduler_config, cfg.cache_config
        return {
            "policy": sc.policy,
            "max_num_scheduled_tokens": sc.max_num_scheduled_tokens,
            "max_num_active_seqs": sc.max_num_active_seqs,
            "long_prefill_token_threshold": sc.long_prefill_token_threshold,
            "long_prefill_token_threshold_adaptive":
                sc.long_prefill_token_threshold_adaptive,
            "scheduler_reserve_full_isl": sc.scheduler_reserve_full_isl,
            "watermark": sc.watermark,
            "prefill_schedule_interval": sc.prefill_schedule_interval,
            "prefix_caching_hash_algo": cc.prefix_caching_hash_algo,
            "prefix_match_unit": cc.prefix_match_unit,
            "prefix_cache_retention_interval":
                cc.prefix_cache_retention_interval,
            "max_concurrent_batches": cfg.max_concurrent_batches,
            "use_v2_model_runner": cfg.use_v2_model_runner,
            "num_speculative_tokens": cfg.num_speculative_tokens,
            "pipeline_parallel_size": cfg.parallel_config.pipeline_parallel_size,
            "kv_cache_groups": "one FullAttentionSpec group",
        }


class Trace:
    """Per-step and per-request records of one run."""

    def __init__(self, reqs):
        self.steps = []
        self.reqs = {r.id: r for r in reqs}
        self.cached = {}
        self.first_step = {}
        self.first_token = {}
        self.finish = {}

    def on_schedule(self, t, out, sched):
        k = len(self.steps)
        sched_rows = []
        for rid, n in out.num_scheduled_tokens.items():
            i = int(rid)
            sched_rows.append([i, n])
            if i not in self.first_step:
                self.first_step[i] = k
                # num_computed_tokens already includes this step's tokens.
                self.cached[i] = sched.requests[rid].num_computed_tokens - n
        sched_rows.sort()
        preempted = sorted(int(r) for r in out.preempted_req_ids)
        self.steps.append([t, sched_rows, preempted, None, None])
        return k

    def on_update(self, k, t, engine_outputs):
        finished = []
        for eco in engine_outputs.values():
            for o in eco.outputs:
                i = int(o.request_id)
                if o.new_token_ids and i not in self.first_token:
                    self.first_token[i] = t
                if o.finish_reason is not None:
                    finished.append(i)
                    self.finish[i] = t
        self.steps[k][3] = sorted(finished)
        self.steps[k][4] = t


def _fake_output(sched, out, tokens):
    """What a model runner returns for `out`: one sampled token for every
    request whose scheduled tokens reach the end of its known sequence
    (including async output placeholders), none for a partial prefill chunk.
    Decided at schedule time, as the GPU would, even if the request is
    preempted before the output is processed."""
    from vllm.v1.outputs import ModelRunnerOutput
    ids = list(out.num_scheduled_tokens)
    sampled = []
    for rid in ids:
        r = sched.requests[rid]
        if r.is_prefill_chunk:
            sampled.append([])
        else:
            # Index in the full sequence of the token this step samples.
            sampled.append([tokens.output_token(int(rid), r.num_computed_tokens)])
    return ModelRunnerOutput(req_ids=ids,
                             req_id_to_index={r: i for i, r in enumerate(ids)},
                             sampled_token_ids=sampled)


class _Arrivals:
    def __init__(self, reqs, sched, hasher, tokens):
        from vllm.sampling_params import SamplingParams
        from vllm.v1.request import Request
        self._SamplingParams, self._Request = SamplingParams, Request
        self.queue = collections.deque(
            sorted(reqs, key=lambda r: (r.arrival_us, r.id)))
        self.sched, self.hasher, self.tokens = sched, hasher, tokens
        self.objs = {}

    def admit_until(self, clock):
        while self.queue and self.queue[0].arrival_us <= clock:
            r = self.queue.popleft()
            sp = self._SamplingParams.from_optional(
                max_tokens=r.output_len, min_tokens=r.output_len,
                ignore_eos=True, temperature=0.0)
            req = self._Request(
                request_id=str(r.id),
                prompt_token_ids=self.tokens.prompt_tokens(r),
                sampling_params=sp, pooling_params=None,
                arrival_time=r.arrival_us / 1e6, block_hasher=self.hasher,
                priority=max(0, r.priority))
            self.objs[r.id] = req
            self.sched.add_request(req)

    def next_time(self):
        return self.queue[0].arrival_us if self.queue else None


class _Stall:
    """Raises if the engine spins without progress (a workload bug: e.g. a
    waiting request that can never fit)."""

    def __init__(self):
        self.key, self.count = None, 0

    def check(self, key):
        if key == self.key:
            self.count += 1
            if self.count > 1000:
                raise RuntimeError(f"engine stalled at {key}")
        else:
            self.key, self.count = key, 0


def run_sync(sched, arrivals, trace, tokens):
    """EngineCore.step: schedule, execute (1000 us if non-empty), update."""
    clock, stall = 0, _Stall()
    while True:
        arrivals.admit_until(clock)
        if sched.has_requests():
            out = sched.schedule()
            k = trace.on_schedule(clock, out, sched)
            mro = _fake_output(sched, out, tokens)
            if out.total_num_scheduled_tokens > 0:
                clock += BATCH_US
            trace.on_update(k, clock, sched.update_from_output(out, mro))
            stall.check((clock, len(trace.finish)))
        elif arrivals.next_time() is not None:
            clock = max(clock, arrivals.next_time())
        else:
            return clock


def run_async(sched, arrivals, trace, tokens, queue_size=2):
    """EngineCore.step_with_batch_queue with a batch queue of `queue_size`.

    A non-empty batch launched at time t runs on the GPU from
    max(t, end of the previous non-empty batch) for BATCH_US; an empty
    batch completes at its launch time. Blocking on the oldest batch moves
    the clock to its completion time (never backwards)."""
    clock, gpu_free, stall = 0, 0, _Stall()
    queue = collections.deque()  # (k, out, model_runner_output, end_time)
    while True:
        arrivals.admit_until(clock)
        if not sched.has_requests() and not queue:
            if arrivals.next_time() is None:
                return clock
            clock = max(clock, arrivals.next_time())
            continue
        if sched.has_requests():
            out = sched.schedule()
            k = trace.on_schedule(clock, out, sched)
            mro = _fake_output(sched, out, tokens)
            executed = out.total_num_scheduled_tokens > 0
            end = clock
            if executed:
                end = max(clock, gpu_free) + BATCH_US
                gpu_free = end
            queue.appendleft((k, out, mro, end))
            if len(queue) < queue_size and (executed or sched.has_requests()):
                stall.check((clock, len(trace.finish)))
                continue
        k, out, mro, end = queue.pop()
        clock = max(clock, end)
        trace.on_update(k, clock, sched.update_from_output(out, mro))
        stall.check((clock, len(trace.finish)))


def run_workload(harness, eng, reqs, tokens):
    cfg, sched, hasher = harness.build(eng)
    arrivals = _Arrivals(reqs, sched, hasher, tokens)
    trace = Trace(reqs)
    if eng.async_scheduling:
        run_async(sched, arrivals, trace, tokens)
    else:
        run_sync(sched, arrivals, trace, tokens)
    missing = [r.id for r in reqs if r.id not in trace.finish]
    if missing:
        raise RuntimeError(f"requests never finished: {missing[:10]}")
    for r in reqs:
        got = arrivals.objs[r.id].num_output_tokens
        if got != r.output_len:
            raise RuntimeError(f"request {r.id}: {got} output tokens, "
                               f"expected {r.output_len}")
    results = []
    for r in reqs:
        obj = arrivals.objs[r.id]
        results.append([r.id, trace.cached[r.id], trace.first_step[r.id],
                        trace.first_token[r.id], trace.finish[r.id],
                        obj.num_preemptions])
    return cfg, trace.steps, results
