// One SGLang replica (see sglang_replica.h).
#include "sim/engine/sglang_replica.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "sim/core/check.h"
#include "sim/core/rng.h"

namespace servesim {

SglangReplica::SglangReplica(const EngineConfig& config, const CostModel* cost_model,
                             RequestTable* requests, Recorder* recorder)
    : Replica(cost_model, recorder),
      sched_(config.sglang),
      requests_(requests),
      overlap_(!config.sglang.disable_overlap_schedule),
      ignore_eos_(config.sglang_ignore_eos) {
  if (config.sglang.schedule_policy == SglangPolicy::kRandom) {
    // SGLang's random order is random.shuffle of the waiting queue: here a
    // Fisher-Yates shuffle from the scenario's seed (spec.seed is the run's
    // seed, set by the driver), so a run is reproducible.
    auto rng = std::make_shared<Rng>(config.spec.seed, "sglang random order");
    sched_.set_random_order([rng](const std::vector<int64_t>& ids) {
      std::vector<int64_t> out = ids;
      for (size_t i = out.size(); i > 1; --i) {
        std::swap(out[i - 1], out[rng->Below(i)]);
      }
      return out;
    });
  }
}

const char* SglangReplica::CheckServable(const Request& r) const {
  const int64_t pool = sched_.pool_tokens();
  const int64_t page = sched_.page_size();
  // Admission into an empty engine needs prompt + reserved output + a page
  // strictly below the pool; a lone request must then hold its whole
  // sequence but the last token (retraction always keeps one).
  const int64_t reserved = std::min<int64_t>(r.output_len, kSglangClipMaxNewTokens);
  if (int64_t{r.prompt_len} + reserved + page >= pool) {
    return "prompt + output (up to 4096 tokens) + one page do not fit SGLang's KV pool "
           "(engine.sglang max_total_tokens)";
  }
  const int64_t longest = int64_t{r.prompt_len} + r.output_len - 1;
  if ((longest + page - 1) / page * page > pool) {
    return "prompt + output exceed SGLang's KV pool (engine.sglang max_total_tokens)";
  }
  return nullptr;
}

void SglangReplica::Submit(int64_t id) {
  Request& r = (*requests_)[id];
  r.status = RequestStatus::kWaiting;
  sched_.AddWaiting({id, r.prompt_len, r.output_len, ignore_eos_, r.content.prefix_id,
                     r.content.prefix_len, r.content.stream_id});
}

void SglangReplica::Abort(SimTime now, int64_t id) {
  Request& r = (*requests_)[id];
  if (r.done() || !sched_.Abort(id)) return;  // else FinishStep ends it
  r.status = RequestStatus::kAborted;
  r.finish = now;
}

void SglangReplica::ReleaseHeld(int64_t id) {
  SERVESIM_CHECK(false, "ReleaseHeld(%lld) on an SGLang replica (no disaggregated roles)",
                 static_cast<long long>(id));
}

ReplicaLevels SglangReplica::levels() const {
  return {static_cast<int64_t>(sched_.num_waiting()), static_cast<int64_t>(sched_.num_running()),
          sched_.tokens_in_use() / sched_.page_size(), 0};
}

void SglangReplica::Launch(SimTime now, SglangBatch&& batch) {
  const SimTime start = std::max(now, gpu_free());
  shape_.seqs.clear();
  shape_.decode_seqs = shape_.decode_context = 0;
  StepFacts facts;
  for (const SglangBatch::Row& row : batch.rows) {
    Request& r = (*requests_)[row.id];
    const bool samples = row.id != batch.middle_chunk;
    // A decode batch goes to the cost model as one aggregate (priced as the
    // sum of its sequences: the same step time, one entry).
    if (batch.extend) {
      shape_.seqs.push_back({row.extend, row.prefix, samples});
    } else {
      ++shape_.decode_seqs;
      shape_.decode_context += row.prefix;
    }
    facts.tokens += row.extend;
    if (r.status == RequestStatus::kWaiting) {  // admitted (again)
      ++facts.admitted;
      r.status = RequestStatus::kRunning;
      if (r.cached_tokens < 0) r.cached_tokens = row.prefix;  // its radix-cache hit
    }
    if (r.first_scheduled < 0) r.first_scheduled = start;
    r.num_computed = row.prefix + row.extend;
    if (samples) {
      ++r.in_flight;
      facts.finishing += r.num_output + r.in_flight == r.output_len;
    }
  }
  for (int64_t id : batch.retracted) {
    Request& r = (*requests_)[id];
    r.status = RequestStatus::kWaiting;
    r.num_computed = 0;
    ++r.preemptions;
  }
  facts.num_seqs = static_cast<int32_t>(batch.rows.size());
  facts.preempted = static_cast<int32_t>(batch.retracted.size());
  InFlight& f = InFlightAt(count_);
  f.batch = std::move(batch);  // (its rows were read above)
  f.end = AccountStep(now, start, shape_, cost_model_->StepTime(shape_), facts);
  ++count_;
}

SimTime SglangReplica::StartStep(SimTime now) {
  // (The overlap loop may have its latest batch in flight.)
  SERVESIM_CHECK(count_ < (overlap_ ? 2u : 1u),
                 "SGLang replica asked to start a step at %lld ns while waiting for a result",
                 static_cast<long long>(now));
  // The event loop's iterations at `now`, until one must wait for a result.
  while (true) {
    const SglangBatch* in_flight = overlap_ && count_ > 0 ? &InFlightAt(0).batch : nullptr;
    std::optional<SglangBatch> got = sched_.Schedule(in_flight);
    if (got) Launch(now, std::move(*got));
    // The normal loop processes the batch it ran; the overlap loop the
    // batch of its previous iteration, if that iteration ran one.
    const bool process = count_ > 0 && (!overlap_ || last_ran_);
    last_ran_ = got.has_value();
    if (process) {
      busy_ = true;
      return std::max(now, InFlightAt(0).end);
    }
    if (!got) {
      sched_.OnIdle(count_ > 0);
      SERVESIM_CHECK(count_ == 0, "SGLang overlap loop idles with a batch in flight");
      // An engine with requests and nothing to run would spin forever.
      SERVESIM_CHECK(!sched_.has_requests(),
                     "SGLang scheduler has %zu waiting and %zu running requests and "
                     "schedules nothing at %lld ns",
                     sched_.num_waiting(), sched_.num_running(), static_cast<long long>(now));
      busy_ = false;
      return -1;
    }
  }
}

void SglangReplica::FinishStep(SimTime now, std::vector<int64_t>* finished) {
  SERVESIM_CHECK(count_ > 0 && now >= InFlightAt(0).end,
                 "SGLang step committed at %lld ns before it ended", static_cast<long long>(now));
  const InFlight& f = InFlightAt(0);
  head_ ^= 1;
  --count_;
  delivered_.clear();
  sched_.Process(f.batch, &delivered_);
  // Every sampled row's token arrives; a retracted request's is dropped.
  for (const SglangBatch::Row& row : f.batch.rows) {
    if (row.id == f.batch.middle_chunk) continue;
    Request& r = (*requests_)[row.id];
    if (r.in_flight > 0) --r.in_flight;
  }
  // Equal inter-token gaps (the batch's decoders mostly share their last
  // token's time) go to the histogram as one weighted sample: the same
  // counts as one sample each.
  SimTime gap = -1;
  int64_t times = 0;
  for (int64_t id : delivered_) {
    Request& r = (*requests_)[id];
    ++r.num_output;
    if (r.first_token < 0) {
      r.first_token = now;
    } else if (r.measured) {
      if (now - r.last_token != gap) {
        if (times > 0) recorder_->RecordItlNanos(gap, times);
        gap = now - r.last_token;
        times = 0;
      }
      ++times;
    }
    r.last_token = now;
    if (r.num_output == r.output_len || r.abort_at >= 0) {  // abort: Process ended it
      r.finish = now;
      r.status = r.num_output == r.output_len ? RequestStatus::kFinished
                                              : RequestStatus::kAborted;
      finished->push_back(id);
    }
  }
  if (times > 0) recorder_->RecordItlNanos(gap, times);
  if (check_invariants_) sched_.CheckInvariants();
}

}  // namespace servesim
