"""Drives SGLang's own scheduler over one workload and records a step trace.

SGLang 0.5.23 has no CPU simulator of its real scheduler (its
debug_utils/schedule_simulator is a separate toy model with its own
policies), so this file builds a real `Scheduler` object without its
process-level __init__ (no model, no NCCL, no ZMQ) and hands it the real
pieces that decide scheduling: `SchedulePolicy`, `PrefillAdder` (through
`Scheduler.get_new_batch_prefill`), `ScheduleBatch` (check_decode_mem,
retract_decode, filter/merge), `RadixCache`, the token pool allocators and
`NewTokenRatioTracker`. Each step calls the real
`Scheduler.get_next_batch_to_run` and the real
`batch_result_processor.process_batch_result_{prefill,decode}`; only the
forward pass is fake (one sampled token per request whose prefill is done).
The two loops mirror `event_loop_normal` and `event_loop_overlap`.
"""

import collections
import os
import types
import warnings
from dataclasses import dataclass

BATCH_US = 1000  # GPU time of every batch (prefill or decode).


@dataclass(frozen=True)
class Engine:
    """SGLang server arguments (their own names) that steer scheduling."""
    max_total_tokens: int           # KV pool size in tokens
    max_running_requests: int
    max_prefill_tokens: int
    chunked_prefill_size: int       # -1 disables chunking
    page_size: int = 1
    schedule_policy: str = "fcfs"
    schedule_conservativeness: float = 1.0
    disable_radix_cache: bool = False
    disable_overlap_schedule: bool = True
    context_length: int = 8192
    # SGLang reads these from the environment (SGLANG_INIT_NEW_TOKEN_RATIO,
    # SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR, SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS).
    init_new_token_ratio: float = 0.7
    min_new_token_ratio_factor: float = 0.14
    new_token_ratio_decay_steps: int = 600
    # Requests' sampling parameter: with ignore_eos SGLang reserves a
    # request's whole max_new_tokens (ratio 1); without it, the new-token
    # ratio. No EOS token is ever sampled, so outputs end by length anyway.
    ignore_eos: bool = False

    def fixture_engine(self):
        return dict(self.__dict__)


class _Sink:
    """Stands in for components with no say in scheduling (metrics,
    output streaming, load publishing): every attribute is itself, every
    call returns None."""

    def __getattr__(self, name):
        return self

    def __call__(self, *a, **k):
        return None

    def __bool__(self):
        return False


class _Metrics(_Sink):
    """The metrics reporter's counters exist (the processors add to them);
    every report method is a no-op."""

    def __init__(self):
        self.enable_metrics = False
        self.num_generated_tokens = 0
        self.forward_ct_decode = 0
        self.num_retracted_reqs = 0


def _env(eng):
    os.environ["SGLANG_INIT_NEW_TOKEN_RATIO"] = repr(eng.init_new_token_ratio)
    os.environ["SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR"] = repr(
        eng.min_new_token_ratio_factor)
    os.environ["SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS"] = str(
        eng.new_token_ratio_decay_steps)


class _LogicalClock:
    """Replaces the radix cache module's `time`: monotonic() counts calls.
    SGLang's LRU eviction orders leaves by time.monotonic() at their last
    match or insert; a counter keeps that order and makes it reproducible
    (no two touches tie, no wall clock in a fixture)."""

    def __init__(self):
        self.t = 0

    def monotonic(self):
        self.t += 1
        return float(self.t)

    def perf_counter(self):
        return 0.0

    def time(self):
        return 0.0


class SglangHarness:
    def __init__(self):
        warnings.filterwarnings("ignore")
        import logging
        import sglang
        logging.getLogger("sglang").setLevel(logging.ERROR)
        self.version = sglang.__version__

    def build(self, eng):
        _env(eng)
        import torch
        from sglang.srt.runtime_context import get_context
        from sglang.srt.managers.scheduler import Scheduler
        from sglang.srt.mem_cache.memory_pool import ReqToTokenPool
        from sglang.srt.mem_cache.allocator.token import TokenToKVPoolAllocator
        from sglang.srt.mem_cache.allocator.paged import (
            PagedTokenToKVPoolAllocator)
        from sglang.srt.mem_cache.cache_init_params import CacheInitParams
        from sglang.srt.mem_cache.radix_cache import RadixCache

        if getattr(self, "_override", None) is not None:
            self._override.restore()
        self._override = get_context().override_server_args(
            page_size=eng.page_size,
            schedule_policy=eng.schedule_policy,
            chunked_prefill_size=eng.chunked_prefill_size,
            max_prefill_tokens=eng.max_prefill_tokens,
            max_running_requests=eng.max_running_requests,
            disable_overlap_schedule=eng.disable_overlap_schedule,
            schedule_conservativeness=eng.schedule_conservativeness,
            disable_radix_cache=eng.disable_radix_cache,
            enable_mixed_chunk=False,
            device="cpu",
        )
        self._override.install()

        get_context().override("servesim.conformance",
                               pp_max_micro_batch_size=eng.max_running_requests)
        dev = "cpu"
        req_pool = ReqToTokenPool(size=eng.max_running_requests,
                                  max_context_len=eng.context_length + 4,
                                  device=dev, enable_memory_saver=False)
        if eng.page_size == 1:
            alloc = TokenToKVPoolAllocator(eng.max_total_tokens, torch.float16,
                                           dev, _Sink(), need_sort=True)
        else:
            alloc = PagedTokenToKVPoolAllocator(
                eng.max_total_tokens, eng.page_size, torch.float16, dev,
                _Sink(), need_sort=True)
        import sglang.srt.mem_cache.radix_cache as radix_mod
        radix_mod.time = _LogicalClock()
        tree = RadixCache(CacheInitParams(
            disable=eng.disable_radix_cache, req_to_token_pool=req_pool,
            token_to_kv_pool_allocator=alloc, page_size=eng.page_size,
            chunked_prefill_size=eng.chunked_prefill_size))
        s = Scheduler.__new__(Scheduler)
        _wire(s, eng, req_pool, alloc, tree)
        _instrument(s)
        return s


class _SingleRank:
    """The DP-attention adapter and n-gram embedding manager of a single
    rank without those features: both hand the batch through unchanged."""

    def maybe_prepare_mlp_sync_batch(self, batch, need_sync=None):
        return batch

    def maybe_convert_decode_to_extend(self, batch):
        return batch

    def prepare_for_forward(self, batch, chunked_req=None):
        return batch

    def drop_sync_wait_carry(self):
        pass


def _wire(s, eng, req_pool, alloc, tree):
    """Sets what Scheduler.__init__ would, for one CPU process with no model:
    the real pools and tree, the real policy/ratio objects (built by the
    Scheduler's own init_* methods), sinks for metrics and streaming."""
    from sglang.srt.managers.schedule_batch import ScheduleBatch
    from sglang.srt.runtime_context import get_schedule
    from sglang.srt.speculative.spec_info import SpeculativeAlgorithm
    from sglang.srt.disaggregation.utils import DisaggregationMode
    from sglang.srt.environ import envs
    s.forward_ct = 0
    s.max_new_tokens_limit = envs.SGLANG_MAX_NEW_TOKENS_LIMIT.get()
    s.kv_shard_widening = 1
    s.sliding_window_size = None
    s.max_queued_requests = None
    s.enable_session_radix_cache = False
    s.attn_dp_enabled = False
    s.enable_priority_preemption = False
    s.abort_on_priority_when_disabled = False
    s.enable_pdmux = False
    s.enable_fpm = False
    s.scheduler_stage_metrics = None
    s.processed_tokens_counter = 0
    s.schedule_policy = get_schedule().schedule_policy
    s.enable_priority_scheduling = False
    s.schedule_low_priority_values_first = False
    s.priority_scheduling_preemption_threshold = (
        get_schedule().priority_scheduling_preemption_threshold)
    s.enable_lora = False
    s.enable_overlap = not eng.disable_overlap_schedule
    s.enable_overlap_mlx = False
    s.spec_algorithm = SpeculativeAlgorithm.from_string(None)
    s.page_size = eng.page_size
    s.enable_hierarchical_cache = False
    s.enable_lmcache = False
    s.enable_hicache_storage = False
    s.enable_unified_cache_external_linker = False
    s.enable_hisparse = False
    s.enable_unified_memory = False
    s.dllm_config = None
    s.is_generation = True
    s.model_config = types.SimpleNamespace(
        vocab_size=32000, is_multimodal=False, context_len=eng.context_length,
        is_encoder_decoder=False, hf_config=None,
        self_opened_think_start_ids=None, think_end_ids=None)
    from sglang.srt.model_loader.utils import ModelImpl
    s.model_config._resolved_model_impl = ModelImpl.SGLANG
    s.req_to_token_pool = req_pool
    s.token_to_kv_pool_allocator = alloc
    s.tree_cache = tree
    s.disable_radix_cache = eng.disable_radix_cache
    s.is_hybrid_swa = False
    s.is_hybrid_ssm = False
    s.max_total_num_tokens = eng.max_total_tokens
    s.max_prefill_tokens = eng.max_prefill_tokens
    s.max_running_requests = eng.max_running_requests
    s.max_req_len = min(eng.context_length - 1, eng.max_total_tokens - 1)
    s.max_req_input_len = s.max_req_len - 5
    s.device = "cpu"
    s.min_free_slots_delayer = None
    s.decode_offload_manager = None
    s.hisparse_coordinator = None
    s.draft_worker = None
    s.require_mlp_sync = False
    s.disaggregation_mode = DisaggregationMode.NULL
    s.truncation_align_size = None
    s._sched_idled = False
    s.metrics_reporter = _Metrics()
    s.metrics_collector = None
    s.output_streamer = _Sink()
    s.load_publisher = _Sink()
    s.load_inquirer = _Sink()
    s.scripted_scheduler_hook = None
    s.grammar_manager = types.SimpleNamespace(
        has_waiting_grammars=lambda: False, grammar_queue=[])
    s.dllm_manager = types.SimpleNamespace(any_staging_reqs=lambda: False)
    s._pending_chunked_abort_req = None
    s.dp_attn_adapter = _SingleRank()
    s.load_snapshot_writer = None
    s.model_worker = None
    s.abort_request = _Sink()
    s.ngram_embedding_manager = _SingleRank()
    s.lora_drainer = None
    s.tp_worker = types.SimpleNamespace(model_runner=types.SimpleNamespace(
        attn_backend=None, prefill_aware_swa=False))
    s.future_map = None
    s.init_beam_coordinator()
    s.init_running_status()
    s.init_chunked_prefill()
    s.dynamic_chunk_sizer = None
    s.init_schedule_policy()
    s.running_batch = ScheduleBatch(reqs=[], batch_is_full=False)
    s.init_batch_result_processor()


def _process_result(s, batch, result):
    """Scheduler.process_batch_result without its metrics, load publishing
    and health-check glue: the real prefill/decode result processors
    (append the token, finish by length, release or re-insert KV into the
    radix tree) and the tree's pending-backup flush."""
    if batch.forward_mode.is_decode():
        s.batch_result_processor.process_batch_result_decode(batch, result)
    else:
        s.batch_result_processor.process_batch_result_prefill(batch, result)
    s.tree_cache.flush_pending_backups()


def _instrument(s):
    """Counts tokens the radix cache evicts, and records the waiting-queue
    order each `random`-policy sort produced (a replay cannot redraw
    CPython's Mersenne Twister, so it takes the orders as input)."""
    s.trace_evicted = 0
    s.trace_orders = []
    evict = s.tree_cache.evict

    def counting_evict(params):
        res = evict(params)
        s.trace_evicted += res.num_tokens_evicted
        return res
    s.tree_cache.evict = counting_evict
    calc = s.policy.calc_priority

    def recording_calc(waiting_queue, *a, **k):
        out = calc(waiting_queue, *a, **k)
        if s.schedule_policy == "random":
            s.trace_orders.append([int(r.rid) for r in waiting_queue])
        return out
    s.policy.calc_priority = recording_calc


def _on_idle(s):
    """What Scheduler.on_idle does that steers scheduling: once nothing is
    running, queued or in flight, the new-token ratio goes back to its
    initial value. (The rest of on_idle is leak checks, metrics, sleep.)"""
    if s.is_fully_idle():
        s.new_token_ratio_tracker.reset()


def _make_req(s, r, tokens, ignore_eos):
    from array import array
    from sglang.srt.managers.schedule_batch import Req
    from sglang.srt.sampling.sampling_params import SamplingParams
    sp = SamplingParams(max_new_tokens=r.output_len,
                        ignore_eos=ignore_eos, temperature=0.0)
    sp.normalize(None)
    req = Req(str(r.id), "", array("q", tokens.prompt_tokens(r)), sp,
              vocab_size=32000, eos_token_ids=set())
    s.init_req_max_new_tokens(req)
    if req.sampling_params.max_new_tokens != r.output_len:
        raise RuntimeError(f"request {r.id}: SGLang clipped max_new_tokens to "
                           f"{req.sampling_params.max_new_tokens}")
    return req


def _fake_result(batch, tokens):
    """One token per request: the forward pass SGLang would run. Chunked
    (unfinished) prefills get a token too, which SGLang discards."""
    import torch
    from sglang.srt.managers.utils import GenerationBatchResult
    ids = []
    for req in batch.reqs:
        n = len(req.origin_input_ids) + len(req.output_ids)
        ids.append(tokens.output_token(int(req.rid), n))
    return GenerationBatchResult(next_token_ids=torch.tensor(ids,
                                                             dtype=torch.int64))


class Trace:
    """One row per batch: [t, kind, rows, retracted, finished, t_done,
    new_token_ratio, tokens_in_use, evictable_tokens, evicted_tokens].
    kind "E" (extend) has rows [id, extend_len, prefix_len] in batch order;
    kind "D" (decode) has the request ids in batch order. `retracted` are
    the requests this schedule call sent back to the queue, `evicted_tokens`
    what the radix cache freed during it. The ratio and token counts are
    read right after scheduling (before the batch's result)."""

    def __init__(self):
        self.steps = []
        self.first_step, self.cached, self.first_token = {}, {}, {}
        self.finish, self.retractions = {}, collections.Counter()

    def on_schedule(self, t, s, batch, retracted, evicted):
        k = len(self.steps)
        if batch.forward_mode.is_extend():
            rows = []
            for req in batch.reqs:
                i = int(req.rid)
                rows.append([i, req.extend_len, req.prefix_len])
                if i not in self.first_step:
                    self.first_step[i] = k
                    self.cached[i] = req.prefix_len
            kind = "E"
        else:
            rows = [int(req.rid) for req in batch.reqs]
            kind = "D"
        for i in retracted:
            self.retractions[i] += 1
        self.steps.append([t, kind, rows, sorted(retracted), None, None,
                           round(s.new_token_ratio_tracker.current, 9),
                           _used_tokens(s), s.tree_cache.evictable_size(),
                           evicted])
        return k

    def on_done(self, k, t, batch):
        fin = []
        for req in batch.reqs:
            i = int(req.rid)
            if req.output_ids and i not in self.first_token:
                self.first_token[i] = t
            if req.finished() and i not in self.finish:
                self.finish[i] = t
                fin.append(i)
        self.steps[k][4] = sorted(fin)
        self.steps[k][5] = t


def _used_tokens(s):
    return (s.max_total_num_tokens - s.token_to_kv_pool_allocator.available_size()
            - s.tree_cache.evictable_size())


class _Arrivals:
    def __init__(self, reqs, s, tokens, ignore_eos):
        self.ignore_eos = ignore_eos
        self.queue = collections.deque(sorted(reqs, key=lambda r: (r.arrival_us, r.id)))
        self.s, self.tokens, self.objs = s, tokens, {}

    def admit_until(self, clock):
        while self.queue and self.queue[0].arrival_us <= clock:
            r = self.queue.popleft()
            req = _make_req(self.s, r, self.tokens, self.ignore_eos)
            self.objs[r.id] = req
            self.s._add_request_to_queue(req)

    def next_time(self):
        return self.queue[0].arrival_us if self.queue else None


def _retracted_since(s, before):
    return [int(r.rid) for r in s.waiting_queue if r.is_retracted
            and id(r) not in before]


def _schedule(s):
    before = {id(r) for r in s.waiting_queue}
    evicted0 = s.trace_evicted
    plan = s.get_next_batch_to_run(running_batch=s.running_batch,
                                   last_batch=s.last_batch)
    s.running_batch = plan.running_batch
    return (plan.batch_to_run, _retracted_since(s, before),
            s.trace_evicted - evicted0)


def _launch(s, batch, tokens):
    """Scheduler.run_batch's bookkeeping that later decisions read (the
    forward counter, the prefill-token counter some policies age by) and a
    fake forward pass."""
    s.forward_ct += 1
    batch.forward_iter = s.forward_ct
    if batch.extend_num_tokens:
        s.processed_tokens_counter += batch.extend_num_tokens
    return _fake_result(batch, tokens)


def _finish_idle(s, arrivals, clock, spins):
    """The clock after an iteration that ran nothing, None when the workload
    is done. With work left the real loop just iterates again (state such
    as batch_is_full may change), so spin at the same time first."""
    busy = bool(s.waiting_queue) or not s.running_batch.is_empty()
    if busy and spins < 3:
        return clock
    if arrivals.next_time() is None:
        if busy:
            raise RuntimeError(
                f"engine stalled with work left: waiting "
                f"{[r.rid for r in s.waiting_queue]}, running "
                f"{[r.rid for r in s.running_batch.reqs]}, chunked "
                f"{s.chunked_req and s.chunked_req.rid}, free "
                f"{s.token_to_kv_pool_allocator.available_size()}, evictable "
                f"{s.tree_cache.evictable_size()}")
        return None
    return max(clock, arrivals.next_time())


def run_normal(s, arrivals, trace, tokens):
    """Scheduler.event_loop_normal: schedule, run (BATCH_US), process."""
    clock, spins = 0, 0
    while True:
        arrivals.admit_until(clock)
        batch, retracted, evicted = _schedule(s)
        if batch is not None:
            k = trace.on_schedule(clock, s, batch, retracted, evicted)
            result = _launch(s, batch, tokens)
            clock += BATCH_US
            _process_result(s, batch, result)
            trace.on_done(k, clock, batch)
        else:
            _on_idle(s)
        s.last_batch = batch
        spins = spins + 1 if batch is None else 0
        if batch is None:
            clock = _finish_idle(s, arrivals, clock, spins)
            if clock is None:
                return


def run_overlap(s, arrivals, trace, tokens):
    """Scheduler.event_loop_overlap: batch N+1 is scheduled (and launched)
    before batch N's result is processed -- the one-step lag. The GPU runs
    batches back to back, BATCH_US each; processing a result waits for its
    batch to end. s.result_queue is the scheduler's own queue (its
    skip-finishing-decode rule reads it)."""
    s.enable_skip_finishing_decode = True
    s.result_queue = collections.deque()
    side = collections.deque()  # (step index, end time) per queued batch
    clock, gpu_free, spins = 0, 0, 0

    def pop_and_process():
        nonlocal clock
        b, res = s.result_queue.popleft()
        k, end = side.popleft()
        clock = max(clock, end)
        _process_result(s, b, res)
        trace.on_done(k, clock, b)

    while True:
        arrivals.admit_until(clock)
        had_last = s.last_batch is not None
        batch, retracted, evicted = _schedule(s)
        disable = s.is_disable_overlap_for_batch(batch, last_batch=s.last_batch)
        if disable:
            pop_and_process()
        if batch is not None:
            k = trace.on_schedule(clock, s, batch, retracted, evicted)
            result = _launch(s, batch, tokens)
            end = max(clock, gpu_free) + BATCH_US
            gpu_free = end
            s.result_queue.append((batch.copy(), result))
            side.append((k, end))
        if s.last_batch is not None:
            if not disable:
                pop_and_process()
        elif batch is None:
            _on_idle(s)
        s.last_batch = batch
        # Only an iteration that found no batch in flight ran on_idle; the
        # one that processed the last result is followed at once by another.
        spins = spins + 1 if batch is None and not s.result_queue else 0
        if batch is None and not s.result_queue and not had_last:
            clock = _finish_idle(s, arrivals, clock, spins)
            if clock is None:
                return


def run_workload(harness, eng, reqs, tokens, seed):
    import random
    random.seed(f"sglang-conformance/{seed}")  # the `random` policy's shuffles
    s = harness.build(eng)
    arrivals = _Arrivals(reqs, s, tokens, eng.ignore_eos)
    trace = Trace()
    if eng.disable_overlap_schedule:
        run_normal(s, arrivals, trace, tokens)
    else:
        run_overlap(s, arrivals, trace, tokens)
    missing = [r.id for r in reqs if r.id not in trace.finish]
    if missing:
        raise RuntimeError(f"requests never finished: {missing[:10]}")
    results = []
    for r in reqs:
        obj = arrivals.objs[r.id]
        if len(obj.output_ids) != r.output_len:
            raise RuntimeError(f"request {r.id}: {len(obj.output_ids)} output "
                               f"tokens, expected {r.output_len}")
        results.append([r.id, trace.cached[r.id], trace.first_step[r.id],
                        trace.first_token[r.id], trace.finish[r.id],
                        trace.retractions[r.id]])
    return trace.steps, results, s.trace_orders
