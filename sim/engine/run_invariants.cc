// Run-level invariants (see run_invariants.h). Each check reads only the
// run's output (requests, step records, counters, recorder) and the input
// that produced it, so it is independent of the mechanisms it checks.
//
// Checked, each able to fail on its own (tests/engine/run_invariants_test.cc):
//  steps      per step: scheduled <= start < end, start >= 0,
//             1 <= num_seqs <= max_num_seqs, num_seqs <= num_tokens <=
//             max_num_batched_tokens, prefill + decode sequences = num_seqs,
//             each decode one token (num_tokens - prefill_tokens =
//             num_decode_seqs), kv_blocks_used <= kv_blocks_total == the
//             engine's usable blocks, replica index valid;
//             per replica, in launch order: starts and ends never go back
//             and a step starts no earlier than the previous one ended (one
//             at a time; pipeline stages: the first stage is free before
//             the next step starts and the last before it enters, so no
//             stage runs two batches); a step is scheduled only after the
//             step the batch queue's depth back ended (1 sync, 2 async or
//             SGLang's overlap, one per pipeline stage); a step's span
//             holds its stages (pipeline: first- and last-stage times
//             within its stages' total, its busy share within its span;
//             one stage: busy = end - start); every step lies in
//             [0, end_time] (a run stopped early may leave launched steps
//             running past end_time, but none scheduled after it).
//  requests   ids are indices; arrival <= send <= engine_arrival <= first_scheduled <=
//             first_token <= last_token <= finish for the fields that are
//             set (-1: did not happen), and a later field never without an
//             earlier one; num_output <= output_len, > 0 iff a first token;
//             finished => every field set, num_output == output_len, the
//             first and last tokens fall on step ends of its replica, and
//             the first token is no earlier than the end of the first step
//             starting at or after first_scheduled (a token takes a step);
//             rejected => never scheduled, no token, a reason; aborted
//             (serve: its client went away) => an abort time at or after it
//             reached the engine and no later than its end, fewer tokens
//             than output_len, each on a step end of its replica; unfinished
//             only when the run stopped early or at its time bound;
//             `measured` as the warm-up settings define it; no request
//             beyond num_requests or created at or after duration_s.
//  classes    with workload.classes every request has a valid class and
//             carries its priority and TTFT SLO, and every request is in
//             one; without, none has a class or SLO, nor a priority
//             unless a JSONL trace's records give them.
//  clients    max_concurrency: never more than that many requests sent and
//             unfinished at once (a sweep over send/finish, finishes first
//             at equal times), sent in arrival order, waiting only while
//             every slot is taken (run_invariants_slots.cc); closed loop: at most `concurrency` in flight,
//             each client's next request sent only after its previous one
//             finished; sessions: turn k+1 of a session is created no
//             earlier than turn k finished plus the think time, never after
//             a rejected turn; sessions traces: a later turn is created no
//             earlier than its parent (an earlier request) finished, and
//             resends the parent's stream as its turn + 1.
//  counts     requests == finished + rejected + aborted + unfinished,
//             and out.rejected / out.aborted / out.incomplete agree; routed per replica ==
//             requests carrying that replica, and their sum == requests at
//             the engines (past any frontend) and not rejected; recorder steps == per-replica step counts ==
//             step records; busy time per replica == sum of its step
//             durations <= elapsed time.
//  tokens     the ITL histogram (fed per delivery by the engine) holds
//             exactly sum(num_output - 1) gaps over measured requests with a
//             token (speculative decoding: sum(deliveries - 1)),
//             summing to sum(last_token - first_token); the recorder's count
//             of delivered tokens (once the engine reports them) equals
//             sum(num_output) over measured requests.
//  frontend   (run_invariants_frontend.cc) every request sent and not
//             rejected reaches the engine (unless the run stopped early);
//             without a frontend at its send; with one, its tokenization
//             starts no earlier than its send plus its event-loop work and
//             ends, one hop before the engine has it, no earlier than its
//             own tokenization allows; a tokenizer batch spans exactly
//             its members' work and holds at most tokenizer_max_batch (one
//             piece without windows), and at most ApiServerCount batches
//             (requests' work) at once. With a
//             frontend the client checks above (max_concurrency, closed
//             loop, sessions, Little) read the end of a request as the
//             client sees it: the engine's finish plus output_s, and a
//             closed-loop client's next send at least client_turnaround_s
//             after that.
//  offload    KV offload transfers and swap space (run_invariants_offload.cc).
//  spec       speculative decoding (run_invariants_spec.cc): synchronous
//             scheduling; per request 1 <= tokens per delivery <= k + 1
//             (deliveries <= num_output <= (k + 1) deliveries, the largest
//             delivery <= k + 1), none counted without it; the engine's
//             counters: accepted <= draft tokens <= k drafts, and accepted
//             == sum(num_output - deliveries) (every token beyond the first
//             of a delivery is an accepted draft).
//  little     (a) exact sample-path identity: the recorder's time-average
//             of requests in system over its window, times the window,
//             equals the sum over requests of [send, finish) within the
//             window (relative 1e-6: floating-point sums);
//             (b) Little's law L = lambda W on the window, for runs whose
//             requests sent in it all finished: L is the recorder's window
//             average, lambda the sends in the window per second, W their
//             mean time in system. L T and lambda W T differ exactly by the
//             edge terms -- the in-window time of requests already there
//             when the window opens, minus the after-window time of those
//             sent in it -- so |L - lambda W| T may not exceed their sum,
//             measured from the requests' timestamps (plus 1e-6 for
//             floating-point sums). The edges are measured, not assumed
//             small: a transient (a cold prefix cache under a tiny token
//             budget, fuzzer seed 4004699; starvation, seed 3007300) gives
//             long residuals at the window's start, and a tolerance built
//             from W flagged those correct runs.
#include "sim/engine/run_invariants.h"

#include "sim/engine/run_invariants_violations.h"
#include "sim/engine/scheduler.h"
#include "sim/core/temp_files.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <unordered_map>

namespace servesim {
namespace {

using ll = long long;

// Per replica: its steps' start and end times, in launch order.
struct ReplicaSteps {
  std::vector<SimTime> starts, ends;
  std::vector<const StepRecord*> records;
  SimTime busy = 0;
  double busy_in_run = 0;  // of busy, before the run's end_time (ns)
};

std::vector<ReplicaSteps> GroupSteps(const SimulationInput& in,
                                     const SimulationOutput& out) {
  std::vector<ReplicaSteps> reps(std::max(1, in.num_replicas));
  for (const StepRecord& s : out.steps) {
    if (s.replica < 0 || s.replica >= static_cast<int32_t>(reps.size())) continue;
    ReplicaSteps& r = reps[s.replica];
    r.starts.push_back(s.start);
    r.ends.push_back(s.end);
    r.records.push_back(&s);
    // One stage: busy for its whole span; a pipeline: its recorded share,
    // counted in proportion to its span before the end.
    const SimTime busy = s.pipeline_stages > 1 ? s.busy : s.end - s.start;
    r.busy += busy;
    if (s.end > s.start) {
      r.busy_in_run += static_cast<double>(busy) *
                       static_cast<double>(std::min(s.end, out.end_time) -
                                           std::min(s.start, out.end_time)) /
                       static_cast<double>(s.end - s.start);
    }
  }
  return reps;
}

// A step's span on its replica's GPUs: one stage runs it whole; a pipeline
// (hardware.pp) holds it in its first stage until first_stage_end, in its
// last from last_stage_start, and counts busy as the stages' mean share.
void CheckStepSpan(const StepRecord& s, ll i, Violations* v) {
  const bool one = s.pipeline_stages == 1;
  const bool ok =
      s.pipeline_stages >= 1 && s.busy > 0 &&
      (one ? s.first_stage_end == s.end && s.last_stage_start == s.start &&
                 s.busy == s.end - s.start
           : s.start < s.first_stage_end && s.first_stage_end <= s.last_stage_start &&
                 s.last_stage_start < s.end && s.busy <= s.end - s.start &&
                 // Each stage of the batch runs after the one before: the
                 // first and the last stage's times at most its stages' sum.
                 (s.first_stage_end - s.start) + (s.end - s.last_stage_start) <=
                     s.busy * s.pipeline_stages);
  if (!ok) {
    v->Add("step span", "step %lld (replica %d): %d stages, [%lld, %lld] ns, first stage "
           "until %lld, last from %lld, busy %lld ns", i, s.replica, s.pipeline_stages,
           (ll)s.start, (ll)s.end, (ll)s.first_stage_end, (ll)s.last_stage_start, (ll)s.busy);
  }
}

// How many batches one replica has in flight at most: vLLM's batch queue
// (1 synchronous, 2 async scheduling or SGLang's overlap, one per pipeline
// stage).
size_t BatchQueueDepth(const EngineConfig& e, const StepRecord& s) {
  if (s.pipeline_stages > 1) return static_cast<size_t>(s.pipeline_stages);
  return e.async_scheduling ? 2 : 1;
}

void CheckEachStep(const SimulationInput& in, const SimulationOutput& out,
                   Violations* v) {
  const int32_t replicas = std::max(1, in.num_replicas);
  const bool stopped = StoppedEarly(in, out);
  for (size_t k = 0; k < out.steps.size(); ++k) {
    const StepRecord& s = out.steps[k];
    const ll i = static_cast<ll>(k);
    const EngineConfig& e = EngineOfReplica(in, std::clamp(s.replica, 0, replicas - 1));
    if (s.replica < 0 || s.replica >= replicas) {
      v->Add("step", "step %lld: replica %d outside [0, %d)", i, s.replica, replicas);
    }
    if (s.end <= s.start) {
      v->Add("step", "step %lld (replica %d): end %lld ns <= start %lld ns", i,
             s.replica, (ll)s.end, (ll)s.start);
    }
    CheckStepSpan(s, i, v);
    // A run stopped early may leave launched steps (async: one queued behind
    // the running one) starting or ending after its end; none was scheduled
    // after it.
    if (s.start < 0 || s.scheduled > out.end_time || (!stopped && s.end > out.end_time)) {
      v->Add("step", "step %lld (replica %d): [%lld, %lld] ns outside the run [0, %lld] ns",
             i, s.replica, (ll)s.start, (ll)s.end, (ll)out.end_time);
    }
    if (s.num_seqs < 1 || s.num_seqs > e.max_num_seqs) {
      v->Add("step budget", "step %lld (replica %d): num_seqs %d outside [1, max_num_seqs %d]",
             i, s.replica, s.num_seqs, e.max_num_seqs);
    }
    if (s.num_tokens > e.max_num_batched_tokens) {
      v->Add("step budget", "step %lld (replica %d): num_tokens %lld > max_num_batched_tokens %d",
             i, s.replica, (ll)s.num_tokens, e.max_num_batched_tokens);
    }
    if (s.num_tokens < s.num_seqs) {
      v->Add("step budget", "step %lld (replica %d): num_tokens %lld < num_seqs %d",
             i, s.replica, (ll)s.num_tokens, s.num_seqs);
    }
    if (s.num_prefill_seqs < 0 || s.num_decode_seqs < 0 ||
        s.num_prefill_seqs + s.num_decode_seqs != s.num_seqs || s.num_preempted < 0 ||
        s.num_finishing < 0 || s.num_finishing > s.num_seqs) {
      v->Add("step", "step %lld (replica %d): %d prefill + %d decode sequences, %d "
             "finishing, %d preempted; num_seqs %d", i, s.replica, s.num_prefill_seqs,
             s.num_decode_seqs, s.num_finishing, s.num_preempted, s.num_seqs);
    }
    // A decode computes one token; prefills compute the rest.
    if (s.prefill_tokens < 0 || s.num_tokens - s.prefill_tokens != s.num_decode_seqs) {
      v->Add("step budget", "step %lld (replica %d): %lld tokens, %lld of them prefill, "
             "for %d decode sequences", i, s.replica, (ll)s.num_tokens,
             (ll)s.prefill_tokens, s.num_decode_seqs);
    }
    if (s.scheduled > s.start) {
      v->Add("step time", "step %lld (replica %d): scheduled at %lld ns, after its start "
             "%lld ns", i, s.replica, (ll)s.scheduled, (ll)s.start);
    }
    if (s.kv_blocks_used < 0 || s.kv_blocks_used > s.kv_blocks_total ||
        s.kv_blocks_total != e.num_gpu_blocks - Scheduler::kReservedBlocks) {
      v->Add("step kv", "step %lld (replica %d): kv_blocks_used %d of kv_blocks_total %d "
             "(engine num_gpu_blocks %d, %d reserved)", i, s.replica, s.kv_blocks_used,
             s.kv_blocks_total, e.num_gpu_blocks, Scheduler::kReservedBlocks);
    }
  }
}

void CheckStepOrder(const SimulationInput& in, const SimulationOutput& out,
                    const std::vector<ReplicaSteps>& reps, Violations* v) {
  for (size_t k = 0; k < reps.size(); ++k) {
    const ReplicaSteps& r = reps[k];
    const EngineConfig& e = EngineOfReplica(in, static_cast<int32_t>(k));
    for (size_t j = 1; j < r.starts.size(); ++j) {
      // No stage runs two batches at once: the first stage is free before
      // the next batch starts, the last before the next batch enters it
      // (one stage: the steps never overlap).
      const StepRecord& a = *r.records[j - 1];
      const StepRecord& b = *r.records[j];
      if (a.pipeline_stages == 1 && b.pipeline_stages == 1) {
        if (r.starts[j] < r.ends[j - 1]) {
          v->Add("step overlap", "replica %zu: step %zu starts at %lld ns before step %zu "
                 "ends at %lld ns", k, j, (ll)r.starts[j], j - 1, (ll)r.ends[j - 1]);
        }
      } else if (b.start < a.first_stage_end || b.last_stage_start < a.end) {
        v->Add("step overlap", "replica %zu: a pipeline stage runs two batches at once: step "
               "%zu [%lld, %lld] ns (last stage from %lld) and step %zu [%lld, %lld] ns "
               "(first stage until %lld)", k, j, (ll)b.start, (ll)b.end,
               (ll)b.last_stage_start, j - 1, (ll)a.start, (ll)a.end, (ll)a.first_stage_end);
      }
      // The engine schedules a batch only once the batch queue has room:
      // the step `depth` back has ended.
      const size_t depth = BatchQueueDepth(e, b);
      if (j >= depth && b.scheduled < r.ends[j - depth]) {
        v->Add("batch queue", "replica %zu: step %zu scheduled at %lld ns while step %zu "
               "(%zu back, the queue's depth) runs until %lld ns", k, j, (ll)b.scheduled,
               j - depth, depth, (ll)r.ends[j - depth]);
      }
      if (r.starts[j] < r.starts[j - 1] || r.ends[j] < r.ends[j - 1]) {
        v->Add("step time", "replica %zu: step %zu [%lld, %lld] ns goes back from "
               "step %zu [%lld, %lld] ns", k, j, (ll)r.starts[j], (ll)r.ends[j],
               j - 1, (ll)r.starts[j - 1], (ll)r.ends[j - 1]);
      }
    }
    const SimTime elapsed = std::max(out.end_time, r.ends.empty() ? 0 : r.ends.back());
    if (r.busy > elapsed) {
      v->Add("busy", "replica %zu: busy %lld ns > elapsed %lld ns", k, (ll)r.busy,
             (ll)elapsed);
    }
    if (k < out.replicas.size()) {
      const ReplicaStats& st = out.replicas[k];
      if (st.steps != static_cast<int64_t>(r.starts.size())) {
        v->Add("steps count", "replica %zu: ReplicaStats.steps %lld != %zu step records",
               k, (ll)st.steps, r.starts.size());
      }
      const double busy_s = ToSeconds(r.busy);
      if (std::abs(st.busy_s - busy_s) > 1e-9 * std::max(1.0, busy_s) + 1e-9) {
        v->Add("busy", "replica %zu: ReplicaStats.busy_s %.9f != sum of step durations "
               "%.9f", k, st.busy_s, busy_s);
      }
      // The busy share a report prints (busy_in_run_s / end_time) is a
      // share: at most the whole run.
      const double in_run_s = r.busy_in_run * 1e-9;
      if (std::abs(st.busy_in_run_s - in_run_s) > 1e-9 * std::max(1.0, in_run_s) + 1e-9 ||
          st.busy_in_run_s > ToSeconds(out.end_time) + 1e-9) {
        v->Add("busy", "replica %zu: ReplicaStats.busy_in_run_s %.9f, steps before the "
               "end %.9f, run %.9f s", k, st.busy_in_run_s, in_run_s,
               ToSeconds(out.end_time));
      }
    }
  }
  if (out.replicas.size() != reps.size()) {
    v->Add("steps count", "%zu ReplicaStats for %zu replicas", out.replicas.size(),
           reps.size());
  }
  if (out.recorder.steps().all_steps != static_cast<int64_t>(out.steps.size())) {
    v->Add("steps count", "recorder counted %lld steps, %zu step records",
           (ll)out.recorder.steps().all_steps, out.steps.size());
  }
}

// Replica k's steps, or null for an index that names none.
const ReplicaSteps* FindReplica(const std::vector<ReplicaSteps>& reps, int32_t k) {
  return k >= 0 && k < static_cast<int32_t>(reps.size()) ? &reps[k] : nullptr;
}

bool IsStepEnd(const ReplicaSteps& r, SimTime t) {
  return std::binary_search(r.ends.begin(), r.ends.end(), t);
}

void CheckTimestamps(const Request& r, Violations* v) {
  const SimTime chain[] = {r.arrival,    r.send,       r.engine_arrival, r.first_scheduled,
                           r.first_token, r.last_token, r.finish};
  static const char* const kNames[] = {"arrival",     "send",       "engine_arrival",
                                       "first_scheduled", "first_token", "last_token",
                                       "finish"};
  if (r.arrival < 0) v->Add("causality", "request %lld: no arrival time", (ll)r.id);
  // A rejected request's finish is its rejection: it skips the middle; an
  // aborted one's is its abort, whatever of the middle happened before.
  const int last = r.status == RequestStatus::kRejected  ? 2
                   : r.status == RequestStatus::kAborted ? 6
                                                         : 7;
  for (int a = 0; a + 1 < last; ++a) {
    if (chain[a + 1] >= 0 && chain[a] < 0) {
      v->Add("causality", "request %lld: %s set (%lld ns) without %s", (ll)r.id,
             kNames[a + 1], (ll)chain[a + 1], kNames[a]);
    } else if (chain[a + 1] >= 0 && chain[a + 1] < chain[a]) {
      v->Add("causality", "request %lld: %s %lld ns < %s %lld ns", (ll)r.id,
             kNames[a + 1], (ll)chain[a + 1], kNames[a], (ll)chain[a]);
    }
  }
  if (r.status == RequestStatus::kAborted) {
    // Its end is no earlier than anything that happened to it, but its
    // first scheduling: a step scheduled before the abort may start after
    // it (async scheduling, where first_scheduled is the step's start).
    for (int a = 0; a + 1 < 7; ++a) {
      if (a != 3 && chain[a] >= 0 && r.finish < chain[a]) {
        v->Add("causality", "request %lld: aborted at its end %lld ns < %s %lld ns", (ll)r.id,
               (ll)r.finish, kNames[a], (ll)chain[a]);
      }
    }
  }
  if (r.num_output < 0 || r.num_output > r.output_len ||
      (r.num_output > 0) != (r.first_token >= 0)) {
    v->Add("tokens", "request %lld: num_output %d with output_len %d and first_token %lld ns",
           (ll)r.id, r.num_output, r.output_len, (ll)r.first_token);
  }
}

void CheckFinished(const Request& r, const std::vector<ReplicaSteps>& reps,
                   Violations* v) {
  if (r.send < 0 || r.engine_arrival < 0 || r.first_scheduled < 0 || r.first_token < 0 ||
      r.last_token < 0 || r.finish < 0) {
    v->Add("finished", "request %lld finished with a timestamp missing", (ll)r.id);
    return;
  }
  if (r.num_output != r.output_len) {
    v->Add("finished", "request %lld finished with %d of %d output tokens", (ll)r.id,
           r.num_output, r.output_len);
  }
  const ReplicaSteps* rep = FindReplica(reps, r.replica);
  if (rep == nullptr) {
    v->Add("finished", "request %lld finished on replica %d", (ll)r.id, r.replica);
    return;
  }
  const auto it = std::lower_bound(rep->starts.begin(), rep->starts.end(), r.first_scheduled);
  const SimTime earliest =
      it == rep->starts.end() ? kNever : rep->ends[it - rep->starts.begin()];
  if (r.first_token < earliest) {
    v->Add("ttft", "request %lld: first token at %lld ns, before the end (%lld ns) of "
           "any step starting at or after its first scheduling (%lld ns)", (ll)r.id,
           (ll)r.first_token, (ll)earliest, (ll)r.first_scheduled);
  }
  if (!IsStepEnd(*rep, r.first_token) || !IsStepEnd(*rep, r.last_token)) {
    v->Add("ttft", "request %lld: tokens at %lld / %lld ns, not at the end of a step of "
           "replica %d", (ll)r.id, (ll)r.first_token, (ll)r.last_token, r.replica);
  }
}

// A request its client abandoned (serve): the engine ended it at or after
// the abort (vLLM at once, SGLang at its next result), short of its output,
// with whatever tokens it had on step ends.
void CheckAborted(const Request& r, const std::vector<ReplicaSteps>& reps, Violations* v) {
  if (r.abort_at < 0 || r.engine_arrival < 0 || r.abort_at < r.engine_arrival ||
      r.finish < r.abort_at) {
    v->Add("aborted", "request %lld aborted at %lld ns, reached the engine at %lld ns, "
           "ended at %lld ns", (ll)r.id, (ll)r.abort_at, (ll)r.engine_arrival, (ll)r.finish);
  }
  if (r.num_output >= r.output_len) {
    v->Add("aborted", "request %lld aborted with all %d of its tokens", (ll)r.id,
           r.output_len);
  }
  const ReplicaSteps* rep = FindReplica(reps, r.replica);
  if (r.num_output > 0 &&
      (rep == nullptr || !IsStepEnd(*rep, r.first_token) || !IsStepEnd(*rep, r.last_token))) {
    v->Add("ttft", "request %lld (aborted): tokens at %lld / %lld ns, not at the end of a "
           "step of replica %d", (ll)r.id, (ll)r.first_token, (ll)r.last_token, r.replica);
  }
}

void CheckRequests(const SimulationInput& in, const SimulationOutput& out,
                   const std::vector<ReplicaSteps>& reps, Violations* v) {
  const WorkloadConfig& w = in.workload;
  const bool stopped = StoppedEarly(in, out);
  const SimTime warmup = FromSeconds(in.metrics.warmup_s);
  const SimTime bound = w.duration_s > 0 ? FromSeconds(w.duration_s) : kNever;
  int64_t finished = 0, rejected = 0, aborted = 0, unfinished = 0;
  for (size_t i = 0; i < out.requests.size(); ++i) {
    const Request& r = out.requests[i];
    if (r.id != static_cast<int64_t>(i)) {
      v->Add("request table", "request at index %zu has id %lld", i, (ll)r.id);
    }
    CheckTimestamps(r, v);
    const bool measured = r.id >= in.metrics.warmup_requests && r.arrival >= warmup;
    if (r.measured != measured) {
      v->Add("warm-up", "request %lld (arrival %lld ns): measured %d, warm-up says %d",
             (ll)r.id, (ll)r.arrival, r.measured, measured);
    }
    if (r.arrival >= bound) {
      v->Add("duration bound", "request %lld created at %lld ns, at or after duration_s", (ll)r.id,
             (ll)r.arrival);
    }
    // Only a served run's clients go away; a request they left may have
    // finished first, but no other state is left.
    if (r.abort_at >= 0 && r.status != RequestStatus::kAborted &&
        r.status != RequestStatus::kFinished) {
      v->Add("aborted", "request %lld abandoned at %lld ns still has status %d", (ll)r.id,
             (ll)r.abort_at, static_cast<int>(r.status));
    }
    if (r.status == RequestStatus::kFinished) {
      ++finished;
      CheckFinished(r, reps, v);
    } else if (r.status == RequestStatus::kRejected) {
      ++rejected;
      if (r.first_scheduled >= 0 || r.first_token >= 0 || r.num_output != 0 ||
          r.reject_reason == nullptr) {
        v->Add("rejected", "request %lld rejected (%s) but scheduled at %lld ns with %d "
               "tokens", (ll)r.id, r.reject_reason ? r.reject_reason : "no reason",
               (ll)r.first_scheduled, r.num_output);
      }
    } else if (r.status == RequestStatus::kAborted) {
      ++aborted;
      CheckAborted(r, reps, v);
    } else {
      ++unfinished;
      if (!stopped || r.finish >= 0) {
        v->Add("unfinished", "request %lld unfinished (status %d, finish %lld ns) in a run "
               "that was not stopped early", (ll)r.id, static_cast<int>(r.status),
               (ll)r.finish);
      }
    }
  }
  const int64_t n = static_cast<int64_t>(out.requests.size());
  if (w.num_requests > 0 && n > w.num_requests) {
    v->Add("request bound", "%lld requests created, num_requests %lld", (ll)n, (ll)w.num_requests);
  }
  if (finished + rejected + aborted + unfinished != n || rejected != out.rejected ||
      aborted != out.aborted || unfinished != out.incomplete) {
    v->Add("conservation", "%lld requests != %lld finished + %lld rejected + %lld aborted + "
           "%lld unfinished (out.rejected %lld, out.aborted %lld, out.incomplete %lld)",
           (ll)n, (ll)finished, (ll)rejected, (ll)aborted, (ll)unfinished, (ll)out.rejected,
           (ll)out.aborted, (ll)out.incomplete);
  }
}

// Every request carries a class exactly when the workload has classes, and
// the class's priority and TTFT SLO (what the priority and edf policies
// order by). (The per-class report's counts adding up to the run's is
// checked on the summary, tests/report/class_summary_test.cc.)
void CheckClasses(const SimulationInput& in, const SimulationOutput& out,
                  Violations* v) {
  const RequestClasses& classes = in.workload.classes;
  const int32_t k = static_cast<int32_t>(classes.size());
  int64_t in_classes = 0;
  // A JSONL trace's records may give their own priorities.
  const bool traced_priority =
      in.workload.trace && in.workload.trace->format == TraceFormat::kJsonl;
  for (const Request& r : out.requests) {
    if (classes.empty()) {
      if (r.request_class != -1 || (r.priority != 0 && !traced_priority) ||
          r.ttft_slo != -1) {
        v->Add("classes", "request %lld has class %d, priority %d, TTFT SLO %lld ns "
               "without workload classes", (ll)r.id, r.request_class, r.priority,
               (ll)r.ttft_slo);
      }
      continue;
    }
    if (r.request_class < 0 || r.request_class >= k) {
      v->Add("classes", "request %lld has class %d of %d", (ll)r.id, r.request_class, k);
      continue;
    }
    const RequestClass& c = classes[r.request_class];
    const SimTime slo = c.ttft_slo_s > 0 ? FromSeconds(c.ttft_slo_s) : -1;
    if (r.priority != c.priority || r.ttft_slo != slo) {
      v->Add("classes", "request %lld of class %s: priority %d, TTFT SLO %lld ns; the "
             "class says %d, %lld ns", (ll)r.id, c.name.c_str(), r.priority,
             (ll)r.ttft_slo, c.priority, (ll)slo);
    }
    ++in_classes;
  }
  if (!classes.empty() && in_classes != static_cast<int64_t>(out.requests.size())) {
    v->Add("classes", "%lld of %zu requests in a class", (ll)in_classes,
           out.requests.size());
  }
}

// With a frontend, the client reads an answer's end ClientLag after the
// engine's finish, and sends its next request at least this much later.
SimTime ClientTurnaround(const SimulationInput& in) {
  return in.frontend.enabled ? FromSeconds(in.frontend.client_turnaround_s) : 0;
}

// Most requests sent and unfinished at one instant (a request leaving frees
// its place before one sent at the same instant takes it).
int64_t PeakInFlight(const SimulationOutput& out, int32_t client, SimTime lag) {
  std::vector<std::pair<SimTime, int>> events;
  for (const Request& r : out.requests) {
    if (r.send < 0 || r.status == RequestStatus::kRejected) continue;
    if (client >= 0 && r.client != client) continue;
    events.emplace_back(r.send, +1);
    if (r.status == RequestStatus::kFinished) events.emplace_back(r.finish + lag, -1);
  }
  std::sort(events.begin(), events.end());
  int64_t now = 0, peak = 0;
  for (const auto& [t, d] : events) peak = std::max(peak, now += d);
  return peak;
}

void CheckClients(const SimulationInput& in, const SimulationOutput& out,
                  Violations* v) {
  const WorkloadConfig& w = in.workload;
  const SimTime lag = ClientLag(in);
  if (w.max_concurrency > 0) {
    const int64_t peak = PeakInFlight(out, -1, lag);
    if (peak > w.max_concurrency) {
      v->Add("max_concurrency", "%lld requests in flight at once, max_concurrency %d",
             (ll)peak, w.max_concurrency);
    }
  }
  if (!w.closed_loop) {
    for (const Request& r : out.requests) {
      if (r.client != -1) {
        v->Add("closed loop", "open-loop request %lld has client %d", (ll)r.id, r.client);
      }
    }
    return;
  }
  const int64_t peak = PeakInFlight(out, -1, lag);
  if (peak > w.concurrency) {
    v->Add("closed loop", "%lld requests in flight at once, concurrency %d", (ll)peak,
           w.concurrency);
  }
  std::vector<const Request*> last(std::max(0, w.concurrency), nullptr);
  for (const Request& r : out.requests) {
    if (r.client < 0 || r.client >= w.concurrency) {
      v->Add("closed loop", "request %lld has client %d outside [0, %d)", (ll)r.id,
             r.client, w.concurrency);
      continue;
    }
    const Request* prev = last[r.client];
    if (prev != nullptr &&
        (!prev->done() || r.send < prev->finish + (prev->status == RequestStatus::kFinished
                                                       ? lag + ClientTurnaround(in)
                                                       : 0))) {
      v->Add("closed loop", "client %d sent request %lld at %lld ns before its request "
             "%lld finished (%lld ns)", r.client, (ll)r.id, (ll)r.send, (ll)prev->id,
             (ll)prev->finish);
    }
    last[r.client] = &r;
  }
}

// Requests of one session share their content stream (turn 0's); turns are
// created in order, each after the previous one finished plus think time.
void CheckSessions(const SimulationInput& in, const SimulationOutput& out,
                   Violations* v) {
  if (!in.workload.sessions) return;
  const SimTime think = FromSeconds(in.workload.sessions->think_time_s) +
                       ClientLag(in) + ClientTurnaround(in);
  std::unordered_map<uint64_t, const Request*> last;
  for (const Request& r : out.requests) {
    const Request*& prev = last[r.content.stream_id];
    const int32_t expected = prev ? prev->session_turn + 1 : 0;
    if (r.session_turn != expected) {
      v->Add("sessions", "request %lld is turn %d of its session, expected turn %d",
             (ll)r.id, r.session_turn, expected);
    } else if (prev != nullptr &&
               (prev->status != RequestStatus::kFinished || r.arrival < prev->finish + think)) {
      v->Add("sessions", "turn %d (request %lld) created at %lld ns; previous turn "
             "(request %lld, status %d) finished at %lld ns, think time %lld ns",
             r.session_turn, (ll)r.id, (ll)r.arrival, (ll)prev->id,
             static_cast<int>(prev->status), (ll)prev->finish, (ll)think);
    }
    prev = &r;
  }
}

// Sessions traces: a later turn is created after its parent (an earlier
// request) finished, never before; it resends its session's stream and is
// the parent's turn + 1. Without the trace, no request has a parent.
void CheckTraceSessions(const SimulationInput& in, const SimulationOutput& out,
                        Violations* v) {
  const bool on = in.workload.trace &&
                  in.workload.trace->format == TraceFormat::kSessions;
  if (!on) {
    if (!out.parent_request.empty()) {
      v->Add("sessions", "%zu parent links without a sessions trace",
             out.parent_request.size());
    }
    return;
  }
  if (out.parent_request.size() != out.requests.size()) {
    v->Add("sessions", "%zu parent links for %zu requests",
           out.parent_request.size(), out.requests.size());
    return;
  }
  // Every record read became a request or is counted as dropped, by why.
  const int64_t created = static_cast<int64_t>(out.requests.size());
  if (created + out.session_turns_dropped.total() != out.session_turns_read) {
    v->Add("sessions", "%lld turns read, %lld created + %lld dropped", (ll)out.session_turns_read,
           (ll)created, (ll)out.session_turns_dropped.total());
  }
  for (const Request& r : out.requests) {
    const int64_t p = out.parent_request[r.id];
    if (p < 0) {
      if (r.session_turn != 0) {
        v->Add("sessions", "request %lld has no parent but is turn %d",
               (ll)r.id, r.session_turn);
      }
      continue;
    }
    const Request& parent = out.requests[p];
    if (p >= r.id || parent.status != RequestStatus::kFinished ||
        r.arrival < parent.finish + ClientLag(in)) {
      v->Add("sessions", "request %lld (created %lld ns) follows request %lld "
             "(status %d, finished %lld ns): expected an earlier request that "
             "finished first", (ll)r.id, (ll)r.arrival, (ll)p,
             static_cast<int>(parent.status), (ll)parent.finish);
    }
    if (r.content.stream_id != parent.content.stream_id ||
        r.session_turn != parent.session_turn + 1) {
      v->Add("sessions", "request %lld (turn %d, stream %llu) follows request "
             "%lld (turn %d, stream %llu)", (ll)r.id, r.session_turn,
             static_cast<unsigned long long>(r.content.stream_id), (ll)p,
             parent.session_turn,
             static_cast<unsigned long long>(parent.content.stream_id));
    }
  }
}

void CheckRouting(const SimulationInput& in, const SimulationOutput& out,
                  Violations* v) {
  std::vector<int64_t> routed(std::max(1, in.num_replicas), 0);
  int64_t sent = 0;
  for (const Request& r : out.requests) {
    // Sent and at the engines (a run stopped early may leave some in the
    // frontend's API servers: CheckFrontend).
    const bool in_service = r.engine_arrival >= 0 && r.status != RequestStatus::kRejected;
    sent += in_service;
    if (r.replica >= 0 && r.replica < static_cast<int32_t>(routed.size())) {
      ++routed[r.replica];
    } else if (in_service) {
      v->Add("routing", "request %lld sent but routed to replica %d", (ll)r.id, r.replica);
    }
  }
  int64_t total = 0;
  for (size_t k = 0; k < out.replicas.size(); ++k) {
    total += out.replicas[k].routed;
    if (k < routed.size() && out.replicas[k].routed != routed[k]) {
      v->Add("routing", "replica %zu: routed %lld, %lld requests carry it", k,
             (ll)out.replicas[k].routed, (ll)routed[k]);
    }
  }
  if (total != sent) {
    v->Add("routing", "routed counts sum to %lld, %lld requests at the engines and not rejected",
           (ll)total, (ll)sent);
  }
}

void CheckTokens(const SimulationInput& in, const SimulationOutput& out,
                 Violations* v) {
  int64_t gaps = 0, delivered = 0;
  double span = 0;
  for (const Request& r : out.requests) {
    if (!r.measured || r.num_output <= 0) continue;
    // One gap per delivery: a speculative step delivers several tokens.
    gaps += (SpecOn(in, r.replica) ? r.deliveries : r.num_output) - 1;
    delivered += r.num_output;
    span += static_cast<double>(r.last_token - r.first_token);
  }
  // Tokens the engine reported as delivered, once it reports them (0 until
  // the scheduler calls Recorder::RecordOutputToken).
  const int64_t reported = out.recorder.output_tokens();
  if (reported != 0 && reported != delivered) {
    v->Add("tokens", "recorder counted %lld delivered tokens; measured requests hold %lld",
           (ll)reported, (ll)delivered);
  }
  const LogHistogram& h = out.recorder.itl_ns();
  if (h.count() != gaps) {
    v->Add("tokens", "ITL histogram holds %lld gaps; measured requests sampled %lld "
           "tokens after their first", (ll)h.count(), (ll)gaps);
    return;
  }
  const double sum = h.mean() * static_cast<double>(h.count());
  if (std::abs(sum - span) > 1e-9 * std::max(1.0, span) + 1.0) {
    v->Add("tokens", "ITL histogram gaps sum to %.0f ns; first-to-last token spans "
           "sum to %.0f ns", sum, span);
  }
}

struct WindowSums {
  double overlap_ns = 0;   // sum of [send, finish) within the window
  int64_t sent = 0;        // requests sent inside the window
  int64_t unfinished = 0;  // of them, not finished
  double sojourn_ns = 0;   // of them, sum of finish - send
  // Edge terms: in-window time of requests in system when the window
  // opens; after-window time of requests sent in it.
  double before_edge_ns = 0, after_edge_ns = 0;
};

WindowSums SumWindow(const SimulationOutput& out, SimTime ws, SimTime we, SimTime lag) {
  WindowSums s;
  for (const Request& r : out.requests) {
    if (r.send < 0 || r.status == RequestStatus::kRejected) continue;
    // (An aborted request leaves at its end; nothing goes back to a client.)
    const SimTime end = r.status == RequestStatus::kFinished  ? r.finish + lag
                        : r.status == RequestStatus::kAborted ? r.finish
                                                              : kNever;
    const SimTime a = std::max(r.send, ws), b = std::min(end, we);
    if (b > a) s.overlap_ns += static_cast<double>(b - a);
    if (r.send < ws && ws < end) s.before_edge_ns += static_cast<double>(b - ws);
    if (r.send < ws || r.send > we) continue;
    ++s.sent;
    if (end == kNever) {
      ++s.unfinished;
      continue;
    }
    s.sojourn_ns += static_cast<double>(end - r.send);
    if (end > we) s.after_edge_ns += static_cast<double>(end - we);
  }
  return s;
}

void CheckLittle(const SimulationInput& in, const SimulationOutput& out, Violations* v) {
  const Recorder& rec = out.recorder;
  const SimTime ws = rec.window_start(), we = rec.window_end();
  if (ws < 0 || we <= ws) return;
  const WindowSums s = SumWindow(out, ws, we, ClientLag(in));
  const double span_ns = static_cast<double>(we - ws);
  const double area = rec.WindowAverages().in_system * span_ns;
  if (std::abs(area - s.overlap_ns) > 1e-6 * std::max(span_ns, s.overlap_ns)) {
    v->Add("little", "recorder: %.6f requests in system on average over the window; "
           "send/finish times give %.6f", area / span_ns, s.overlap_ns / span_ns);
  }
  if (s.sent == 0 || s.unfinished > 0) return;
  // L T - lambda W T = before_edge - after_edge exactly; the check allows
  // either edge in full.
  const double T = span_ns * 1e-9;
  const double W = s.sojourn_ns * 1e-9 / static_cast<double>(s.sent);
  const double L = area / span_ns, lw = static_cast<double>(s.sent) / T * W;
  const double gap_ns = std::abs(area - s.sojourn_ns);
  const double allowed_ns = s.before_edge_ns + s.after_edge_ns +
                            1e-6 * std::max({span_ns, area, s.sojourn_ns});
  if (gap_ns > allowed_ns) {
    v->Add("little", "L = %.4f in system, lambda W = %.4f (%lld sent in %.3f s, W %.6f s): "
           "L T and lambda W T differ by %.6f s, more than the window's edge terms (%.6f s "
           "in system at its start, %.6f s after its end)", L, lw, (ll)s.sent, T, W,
           gap_ns * 1e-9, s.before_edge_ns * 1e-9, s.after_edge_ns * 1e-9);
  }
}

}  // namespace

std::vector<std::string> CheckRunInvariants(const SimulationInput& in,
                                            const SimulationOutput& out) {
  Violations v;
  const std::vector<ReplicaSteps> reps = GroupSteps(in, out);
  CheckEachStep(in, out, &v);
  CheckStepOrder(in, out, reps, &v);
  CheckRequests(in, out, reps, &v);
  CheckClasses(in, out, &v);
  CheckClients(in, out, &v);
  CheckSlotWaits(in, out, &v);
  CheckSessions(in, out, &v);
  CheckTraceSessions(in, out, &v);
  // Disaggregated: routing is per pool (a request has a prefill and a
  // decode instance), checked with the transfers.
  if (in.disagg) {
    CheckDisaggInvariants(in, out, &v);
  } else {
    CheckRouting(in, out, &v);
  }
  CheckTokens(in, out, &v);
  CheckSpecInvariants(in, out, &v);
  CheckLittle(in, out, &v);
  CheckFrontend(in, out, &v);
  CheckOffloadInvariants(in, out, &v);
  CheckWindowedKv(in, out, &v);
  return v.Take();
}

void CheckRunInvariantsOrDie(const SimulationInput& in, const SimulationOutput& out) {
  const std::vector<std::string> lines = CheckRunInvariants(in, out);
  if (lines.empty()) return;
  std::fprintf(stderr, "servesim: %zu run-level invariant violation(s):\n", lines.size());
  for (const std::string& l : lines) std::fprintf(stderr, "  %s\n", l.c_str());
  RemoveTempFiles();  // the run's streamed outputs are half-written
  std::abort();
}

}  // namespace servesim
