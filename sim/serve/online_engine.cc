// The online driver (see online_engine.h). Its event handling mirrors the
// batch driver's (sim/engine/simulation.cc: Send, Dispatch, Route,
// StartStep, SyncLevels, OnStepDone) for the one mode it supports: open
// arrivals, no frontend model, no disaggregation, the scenario's warm-up requests
// served and counted in /metrics but left out of the report.
#include "sim/serve/online_engine.h"

#include <algorithm>
#include <cstdio>

#include "sim/core/check.h"
#include "sim/engine/block_hashing.h"
#include "sim/engine/replica.h"
#include "sim/engine/run_invariants.h"
#include "sim/engine/scheduler.h"
#include "sim/engine/scheduler_policy.h"

namespace servesim {

using Clock = std::chrono::steady_clock;

std::string OnlineEngine::CheckOnlineInput(const SimulationInput& in) {
  if (in.disagg) return "disaggregated deployments (disaggregation) are not served online";
  if (in.engine.spec.num_speculative_tokens > 0) {
    return "speculative decoding (engine.speculative) is not served online";
  }
  if (!MakeRouter(in.router)) return "unknown router \"" + in.router.name + "\"";
  return "";
}

OnlineEngine::OnlineEngine(SimulationInput in, OnlineOptions options)
    : in_(std::move(in)),
      options_(options),
      route_rng_(in_.seed, "routing"),
      length_rng_(in_.seed, "lengths") {
  // The invariants read this input: an open loop with no bound and no
  // frontend. The scenario's warm-up stays (metrics.warmup_requests and
  // warmup_s, from the server's start): as in `run`, those requests are
  // served and counted in /metrics but left out of the report, as a
  // benchmark client's own warm-up requests are left out of its.
  in_.workload.closed_loop = false;
  in_.workload.max_concurrency = 0;
  in_.workload.num_requests = 0;
  in_.workload.duration_s = 0;
  in_.workload.sessions.reset();
  in_.workload.trace.reset();
  in_.workload.classes.clear();
  in_.frontend = FrontendConfig();  // off: the server's own HTTP path is the real one
  in_.check_invariants = options_.check_invariants;
  in_.record_steps = options_.check_invariants;
  in_.num_replicas = std::max(1, in_.num_replicas);
  router_ = MakeRouter(in_.router);
  for (int32_t k = 0; k < in_.num_replicas; ++k) {
    EngineConfig e = in_.engine;
    e.spec.seed = in_.seed;
    replicas_.push_back(MakeReplica(e, in_.cost_model, &out_.requests, &out_.recorder));
    Replica& rep = *replicas_.back();
    rep.set_check_invariants(options_.check_invariants);
    rep.set_step_sink(options_.check_invariants ? &out_.steps : nullptr, k);
    rep.set_work_counter(in_.work_counter);
    // Preemptions are counted from the step records.
    rep.set_step_callback([this, k](const StepRecord& s) {
      Book(k, [&](MetricsSnapshot& m) { m.preemptions += s.num_preempted; });
    });
    // Tokens are read from each request after every step, so its counters
    // must be exact: an observer turns the scheduler's aggregated decode
    // group off.
    rep.RequireExactCounters();
  }
  out_.replicas.resize(replicas_.size());
  if (options_.per_replica_metrics) {
    live_by_.resize(replicas_.size());
    snapshot_by_.resize(replicas_.size());
  }
  outstanding_.assign(replicas_.size(), 0);
  wake_.assign(replicas_.size(), kNever);
  active_.resize(replicas_.size());
  loads_.resize(replicas_.size());
}

OnlineEngine::~OnlineEngine() { Shutdown(0); }

void OnlineEngine::Start() {
  start_ = Clock::now();
  thread_ = std::thread([this] { Loop(); });
}

SimTime OnlineEngine::SimNow() const {
  const double wall = std::chrono::duration<double>(Clock::now() - start_).count();
  return FromSeconds(wall * options_.time_scale);
}

Clock::time_point OnlineEngine::WallOf(SimTime t) const {
  const double wall = ToSeconds(t) / options_.time_scale;
  return start_ + std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double>(wall));
}

OnlineEngine::SubmitResult OnlineEngine::Submit(int32_t prompt_len,
                                                std::vector<uint64_t> block_hashes,
                                                int32_t max_tokens, int32_t min_tokens,
                                                bool ignore_eos,
                                                std::shared_ptr<TokenStream> stream,
                                                int32_t replica) {
  SERVESIM_CHECK(replica < num_replicas(), "request for replica %d of %d", replica,
                 num_replicas());
  std::lock_guard<std::mutex> lock(mu_);
  if (stop_) return SubmitResult::kStopping;
  if (inside_ >= options_.max_requests) {
    // Counted in the published copies: no engine work.
    ++snapshot_.refused;
    if (replica >= 0 && !snapshot_by_.empty()) ++snapshot_by_[replica].refused;
    return SubmitResult::kFull;
  }
  ++inside_;
  Pending p;
  p.at = SimNow();
  p.prompt_len = prompt_len;
  p.max_tokens = max_tokens;
  p.min_tokens = min_tokens;
  p.ignore_eos = ignore_eos;
  p.replica = replica;
  p.block_hashes = std::move(block_hashes);
  p.stream = std::move(stream);
  queue_.push_back(std::move(p));
  cv_.notify_one();
  return SubmitResult::kAccepted;
}

void OnlineEngine::Shutdown(double drain_s) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stop_) {
      stop_ = true;
      stopping_ = true;
      drain_until_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(drain_s));
    }
    cv_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

void OnlineEngine::Abort(std::shared_ptr<TokenStream> stream) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stop_) return;  // shutting down: Finish ends every stream
  aborts_.push_back(std::move(stream));
  cv_.notify_one();
}

MetricsSnapshot OnlineEngine::Snapshot(int32_t replica) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (replica < 0) return snapshot_;
  SERVESIM_CHECK(replica < static_cast<int32_t>(snapshot_by_.size()),
                 "metrics of replica %d asked, kept for %zu", replica, snapshot_by_.size());
  return snapshot_by_[static_cast<size_t>(replica)];
}

SimTime OnlineEngine::NextWake() const {
  SimTime t = kNever;
  for (SimTime w : wake_) t = std::min(t, w);
  return t;
}

void OnlineEngine::Loop() {
  std::vector<Pending> batch;
  std::vector<std::shared_ptr<TokenStream>> aborts;
  bool stopping = false;
  Clock::time_point drain_until;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      auto ready = [&] { return !queue_.empty() || !aborts_.empty() || (stop_ && !stopping); };
      const SimTime next = NextWake();
      // Draining: wake at the deadline at the latest.
      Clock::time_point until = next == kNever ? Clock::time_point::max() : WallOf(next);
      if (stopping) until = std::min(until, drain_until);
      if (!ready()) {
        if (until == Clock::time_point::max()) {
          cv_.wait(lock, ready);
        } else {
          cv_.wait_until(lock, until, ready);
        }
      }
      batch.swap(queue_);
      aborts.swap(aborts_);
      if (stop_ && !stopping) {
        stopping = true;
        drain_until = drain_until_;
      }
    }
    // Arrivals in queue order (their times do not decrease), each after
    // the steps that ended before it.
    for (Pending& p : batch) {
      RunUntil(p.at);
      Admit(std::move(p));
    }
    batch.clear();
    RunUntil(SimNow());
    // Aborts after the arrivals they may name (a request sent and given
    // up in one pass is admitted, then aborted).
    for (const auto& stream : aborts) AbortStream(stream);
    aborts.clear();
    PublishSnapshot();
    if (stopping && (in_engine_ == 0 || Clock::now() >= drain_until)) break;
  }
  Finish();
}

// Handles every step end at or before t, in time order, then moves the
// clock to t.
void OnlineEngine::RunUntil(SimTime t) {
  while (true) {
    size_t k = 0;
    for (size_t j = 1; j < wake_.size(); ++j) {
      if (wake_[j] < wake_[k]) k = j;
    }
    if (wake_[k] > t) break;
    now_ = wake_[k];
    wake_[k] = kNever;
    // How far behind the wall clock this event is handled.
    const double lag = ToSeconds(SimNow() - now_) / options_.time_scale;
    live_.lag_s = lag;
    live_.max_lag_s = std::max(live_.max_lag_s, lag);
    if (lag > options_.lag_warning_s && options_.lag_warning_s > 0) {
      const auto wall = Clock::now();
      if (wall - last_lag_warning_ > std::chrono::seconds(5)) {
        last_lag_warning_ = wall;
        std::fprintf(stderr,
                     "servesim serve: the engine is %.3f s (wall) behind time scale %g: "
                     "this machine cannot keep up; token times lag the simulation\n",
                     lag, options_.time_scale);
      }
    }
    OnStepDone(k);
  }
  now_ = std::max(now_, t);
}

void OnlineEngine::Admit(Pending p) {
  now_ = std::max(now_, p.at);
  Request& r = out_.requests.emplace_back();
  r.id = static_cast<int64_t>(out_.requests.size()) - 1;
  r.prompt_len = p.prompt_len;
  // Output length: as the request asks, else the scenario's distribution.
  int32_t n = p.max_tokens;
  if (!p.ignore_eos || n == 0) {
    n = in_.workload.output_len ? in_.workload.output_len->Sample(length_rng_)
                                : (p.max_tokens > 0 ? p.max_tokens : 16);
    if (p.max_tokens > 0) n = std::min(n, p.max_tokens);
    n = std::max({n, p.min_tokens, 1});
  }
  r.output_len = n;
  r.content.stream_id = static_cast<uint64_t>(r.id) + 1;
  const int32_t bs = in_.engine.block_size;
  if (!p.block_hashes.empty()) {
    r.content.trace_hashes =
        std::make_shared<const std::vector<uint64_t>>(std::move(p.block_hashes));
    r.content.trace_block_tokens = bs;
  }
  r.arrival = r.send = now_;
  r.measured = r.id >= in_.metrics.warmup_requests && now_ >= FromSeconds(in_.metrics.warmup_s);
  Recorder& rec = out_.recorder;
  rec.Advance(now_);
  if (r.measured && !window_started_) {
    rec.MarkWindowStart(now_);
    window_started_ = true;
  }
  Active a{r.id, std::move(p.stream)};
  a.max_tokens = p.max_tokens;
  if (const char* why = replicas_[0]->CheckServable(r)) {
    r.status = RequestStatus::kRejected;
    r.reject_reason = why;
    r.finish = now_;
    ++out_.rejected;
    Book(p.replica, [](MetricsSnapshot& m) {
      ++m.admitted;
      ++m.rejected;
    });
    EndStream(a, std::string("the engine cannot serve this request: ") + why, true);
    Deliver();
    return;
  }
  ++in_engine_;
  rec.Advance(now_);
  ++rec.levels().in_system;
  r.engine_arrival = now_;
  const size_t k = p.replica >= 0 ? static_cast<size_t>(p.replica) : Route(r);
  r.replica = static_cast<int32_t>(k);
  Book(r.replica, [](MetricsSnapshot& m) { ++m.admitted; });
  ++out_.replicas[k].routed;
  ++outstanding_[k];
  updates_.push_back({a.stream, &r, 0, -1, false, false, ""});  // admitted
  active_[k].push_back(std::move(a));
  replicas_[k]->Submit(r.id);
  if (!replicas_[k]->busy()) {
    StartStep(k);
  } else {
    SyncLevels();
  }
  Deliver();
}

size_t OnlineEngine::Route(Request& r) {
  const size_t count = replicas_.size();
  if (count == 1) return 0;
  for (size_t k = 0; k < count; ++k) {
    loads_[k] = {outstanding_[k], replicas_[k]->levels().waiting, replicas_[k]->routing_kv()};
  }
  RouteRequest rr;
  rr.id = r.id;
  rr.prompt_len = r.prompt_len;
  if (router_->wants_block_hashes()) {
    const int32_t bs = in_.engine.block_size;
    const int32_t n = std::min((r.prompt_len - 1) / bs, FirstPrivateBlock(r, bs));
    EnsureBlockHashes(&r, n, bs, &route_hashes_);
    rr.block_hashes = r.block_hashes.data();
    rr.num_block_hashes = n;
  }
  return router_->Choose(rr, loads_, route_rng_);
}

void OnlineEngine::StartStep(size_t k) {
  const SimTime wake = replicas_[k]->StartStep(now_);
  SyncLevels();
  wake_[k] = wake >= 0 ? wake : kNever;
}

void OnlineEngine::SyncLevels() {
  Recorder& rec = out_.recorder;
  rec.Advance(now_);
  Levels& l = rec.levels();
  l.waiting = l.running = l.kv_blocks_used = l.kv_blocks_cached = l.busy = 0;
  int64_t total_blocks = 0;
  const int64_t usable = in_.engine.num_gpu_blocks - Scheduler::kReservedBlocks;
  for (size_t k = 0; k < replicas_.size(); ++k) {
    const Replica* rep = replicas_[k].get();
    const ReplicaLevels r = rep->levels();
    if (!live_by_.empty()) {
      MetricsSnapshot& m = live_by_[k];
      m.running = r.running;
      m.waiting = r.waiting;
      m.kv_usage = usable > 0 ? static_cast<double>(r.kv_blocks_used) / static_cast<double>(usable) : 0;
    }
    l.waiting += r.waiting;
    l.running += r.running;
    l.kv_blocks_used += r.kv_blocks_used;
    l.kv_blocks_cached += r.kv_blocks_cached;
    l.busy += rep->step_running() ? 1 : 0;
    total_blocks += usable;
  }
  live_.running = l.running;
  live_.waiting = l.waiting;
  live_.kv_usage = total_blocks > 0 ? static_cast<double>(l.kv_blocks_used) /
                                          static_cast<double>(total_blocks)
                                    : 0;
}

void OnlineEngine::OnStepDone(size_t k) {
  finished_.clear();
  replicas_[k]->FinishStep(now_, &finished_);
  // Every request of this replica: its tokens of this step are released,
  // and those the step ended leave (the ids in finished_).
  std::vector<Active>& act = active_[k];
  for (size_t i = 0; i < act.size();) {
    const Request& r = out_.requests[act[i].id];
    Release(act[i], r);
    if (r.done()) {
      Retire(k, i);
    } else {
      ++i;
    }
  }
  StartStep(k);
  Deliver();
}

void OnlineEngine::Retire(size_t k, size_t i) {
  std::vector<Active>& act = active_[k];
  const Request& r = out_.requests[act[i].id];
  --in_engine_;
  --outstanding_[k];
  Recorder& rec = out_.recorder;
  rec.Advance(now_);
  --rec.levels().in_system;
  if (r.status == RequestStatus::kAborted) {
    ++out_.aborted;
    Book(r.replica, [](MetricsSnapshot& m) { ++m.finished_abort; });
    EndStream(act[i], "the request was aborted: its client went away");
  } else {
    EndStream(act[i], "");
  }
  act[i] = std::move(act.back());
  act.pop_back();
}

void OnlineEngine::AbortStream(const std::shared_ptr<TokenStream>& stream) {
  for (size_t k = 0; k < active_.size(); ++k) {
    std::vector<Active>& act = active_[k];
    for (size_t i = 0; i < act.size(); ++i) {
      if (act[i].stream != stream) continue;
      Request& r = out_.requests[act[i].id];
      r.abort_at = now_;
      replicas_[k]->Abort(now_, r.id);
      if (r.done()) {  // vLLM: ended now (SGLang: at its next result)
        Retire(k, i);
        // vLLM schedules again to report it (an idle engine runs an empty
        // step), and the freed blocks may admit a waiting request.
        if (!replicas_[k]->busy()) {
          StartStep(k);
        } else {
          SyncLevels();
        }
      }
      Deliver();
      return;
    }
  }
}

// Tokens request r has that its stream does not, as of now_.
void OnlineEngine::Release(Active& a, const Request& r) {
  const double scale = options_.time_scale;
  if (!a.counted_cache && r.cached_tokens >= 0) {
    a.counted_cache = true;
    const double queued = ToSeconds(r.first_scheduled - r.arrival) / scale;
    Book(r.replica, [&](MetricsSnapshot& m) {
      m.prefix_queries += r.prompt_len;
      m.prefix_hits += r.cached_tokens;
      m.prompt_tokens += r.prompt_len;
      m.queue.Observe(queued);
    });
  }
  if (r.num_output <= a.released) return;
  const bool first = a.last_token < 0;
  const double gap = ToSeconds(first ? r.first_token - r.arrival : now_ - a.last_token) / scale;
  Book(r.replica, [&](MetricsSnapshot& m) {
    m.generation_tokens += r.num_output - a.released;
    (first ? m.ttft : m.itl).Observe(gap);
  });
  a.last_token = now_;
  if (options_.check_invariants) {
    if (token_times_.size() <= static_cast<size_t>(r.id)) token_times_.resize(r.id + 1);
    token_times_[r.id].resize(r.num_output, now_);
  }
  a.released = r.num_output;
  updates_.push_back({a.stream, &r, r.num_output, now_, false, false, ""});
}

void OnlineEngine::EndStream(Active& a, const std::string& error, bool rejected) {
  const Request& r = out_.requests[a.id];
  if (error.empty()) {
    const double e2e = ToSeconds(r.finish - r.arrival) / options_.time_scale;
    const bool capped = a.max_tokens > 0 && r.output_len >= a.max_tokens;
    Book(r.replica, [&](MetricsSnapshot& m) {
      m.e2e.Observe(e2e);
      ++(capped ? m.finished_length : m.finished_stop);
    });
  }
  // Merged with this step's token update, if any: the last token and the
  // end reach the stream together (the last chunk carries finish_reason).
  if (!updates_.empty() && updates_.back().stream == a.stream) {
    Update& u = updates_.back();
    u.done = true;
    u.rejected = rejected;
    u.error = error;
    return;
  }
  updates_.push_back({a.stream, &r, a.released, -1, true, rejected, error});
}

void OnlineEngine::Deliver() {
  PublishSnapshot();
  int64_t ended = 0;
  for (Update& u : updates_) {
    TokenStream& s = *u.stream;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      const Request& r = *u.request;
      s.id = r.id;
      s.prompt_len = r.prompt_len;
      s.output_len = r.output_len;
      s.arrival = r.arrival;
      s.cached_tokens = std::max(0, r.cached_tokens);
      s.released = std::max(s.released, u.released);
      if (u.done) {
        s.done = true;
        s.rejected = u.rejected;
        s.error = u.error;
        ++ended;
      }
    }
    s.cv.notify_all();
  }
  updates_.clear();
  if (ended > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    inside_ -= ended;
  }
}

void OnlineEngine::PublishSnapshot() {
  live_.sim_time_s = ToSeconds(now_);
  std::lock_guard<std::mutex> lock(mu_);
  // (refused is counted in the published copies, under mu_.)
  const auto publish = [&](const MetricsSnapshot& from, MetricsSnapshot* to) {
    const int64_t refused = to->refused;
    *to = from;
    to->refused = refused;
    to->sim_time_s = live_.sim_time_s;
    to->lag_s = live_.lag_s;
    to->max_lag_s = live_.max_lag_s;
  };
  publish(live_, &snapshot_);
  for (size_t k = 0; k < live_by_.size(); ++k) publish(live_by_[k], &snapshot_by_[k]);
}

void OnlineEngine::Finish() {
  // Requests still inside at the drain deadline end with an error; the
  // run is then one stopped early (the invariants allow them unfinished).
  for (auto& act : active_) {
    for (Active& a : act) {
      ++out_.incomplete;
      Book(out_.requests[a.id].replica, [](MetricsSnapshot& m) { ++m.cut_off; });
      EndStream(a, "the server shut down before this request finished");
    }
    act.clear();
  }
  Deliver();
  if (out_.incomplete > 0) {
    out_.stopped_at_queue_cap = true;
    out_.unstable_reason = "the server shut down with requests in flight";
  }
  // Requests queued after the engine's last pass (none once stop_ is set
  // before it, but be sure): ended, never admitted.
  std::vector<Pending> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    left.swap(queue_);
  }
  for (Pending& p : left) {
    {
      std::lock_guard<std::mutex> lock(p.stream->mu);
      p.stream->done = true;
      p.stream->error = "the server shut down before this request started";
    }
    p.stream->cv.notify_all();
    std::lock_guard<std::mutex> lock(mu_);
    --inside_;
  }
  // Drained: steps still in flight (async scheduling may have launched one
  // past every request's last token) end now, without waiting for the
  // wall clock, so the run ends after its last step.
  if (out_.incomplete == 0) {
    for (SimTime t = NextWake(); t != kNever; t = NextWake()) RunUntil(t);
  }
  out_.end_time = now_;
  Recorder& rec = out_.recorder;
  rec.Advance(now_);
  if (window_started_) rec.MarkWindowEnd(now_);
  for (size_t k = 0; k < replicas_.size(); ++k) {
    CollectReplicaStats(*replicas_[k], in_.engine, now_, &out_.replicas[k], &out_);
  }
  for (const Request& r : out_.requests) {
    if (r.replica >= 0 && r.cached_tokens >= 0) {
      out_.replicas[r.replica].cached_prompt_tokens += r.cached_tokens;
      out_.replicas[r.replica].prompt_tokens += r.prompt_len;
    }
  }
  PublishSnapshot();
}

std::vector<std::string> OnlineEngine::CheckInvariants() const {
  if (!in_.record_steps) return {"the run-level invariants need check_invariants"};
  return CheckRunInvariants(in_, out_);
}

}  // namespace servesim
