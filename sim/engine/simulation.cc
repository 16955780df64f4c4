// The simulation driver (see simulation.h).
#include "sim/engine/simulation.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <deque>
#include <numeric>
#include <optional>
#include <unordered_map>

#include "sim/core/event_queue.h"
#include "sim/core/rng.h"
#include "sim/engine/block_hashing.h"
#include "sim/engine/frontend.h"
#include "sim/engine/replica.h"
#include "sim/engine/scheduler.h"
#include "sim/engine/request_source.h"

namespace servesim {
namespace {

RequestSourceConfig SourceConfig(const WorkloadConfig& w) {
  RequestSourceConfig c;
  c.input_len = w.input_len;
  c.output_len = w.output_len;
  c.prefix = w.prefix;
  c.trace = w.trace;
  c.classes = w.classes;
  return c;
}

// A later turn of a sessions trace, read from the trace and waiting for its
// parent's answer, or released and due at an event.
struct TraceTurnState {
  RequestSpec spec;
  TraceTurn turn;
  double trace_s = 0;  // its trace time x time_scale
};

struct Session {
  uint64_t stream_id = 0;
  int32_t turns = 0;       // total turns of this session
  int32_t done = 0;        // turns finished
  int64_t history = 0;     // tokens of all previous prompts and answers
  PromptContent first;     // turn 0's content (its shared system prompt)
};

class Driver {
 public:
  Driver(const SimulationInput& in, SimulationOutput* out)
      : in_(in),
        w_(in.workload),
        out_(out),
        arrival_rng_(in.seed, "arrivals"),
        session_rng_(in.seed, "sessions"),
        route_rng_(in.seed, "routing"),
        decode_route_rng_(in.seed, "routing-decode"),
        client_rng_(in.seed, "client-jitter"),
        source_(SourceConfig(in.workload), in.seed),
        router_(MakeRouter(in.router)),
        trace_sessions_(in.workload.trace &&
                        in.workload.trace->format == TraceFormat::kSessions) {
    if (in.disagg) {
      const DisaggConfig& d = *in.disagg;
      out->disagg.emplace();
      num_prefill_ = d.prefill.num_replicas;
      out->disagg->num_prefill = num_prefill_;
      EngineConfig pe = d.prefill.engine, de = d.decode.engine;
      pe.hold_kv_after_finish = true;
      de.remote_prefill = true;
      // The reference engine (equivalence tests) is asked for on in.engine.
      pe.reference_engine = de.reference_engine =
          in.engine.reference_engine || de.reference_engine;
      for (int32_t k = 0; k < d.prefill.num_replicas; ++k) {
        AddReplica(pe, d.prefill.cost_model, d.prefill.work_counter,
                   &out->disagg->prefill_requests);
      }
      for (int32_t k = 0; k < d.decode.num_replicas; ++k) {
        AddReplica(de, d.decode.cost_model, d.decode.work_counter, &out->requests);
      }
      router_ = MakeRouter(d.prefill.router);
      decode_router_ = MakeRouter(d.decode.router);
      link_free_.assign(d.decode.num_replicas, 0);
      out->disagg->link_busy.assign(d.decode.num_replicas, 0);
    } else {
      for (int32_t k = 0; k < std::max(1, in.num_replicas); ++k) {
        AddReplica(in.engine, in.cost_model, in.work_counter, &out->requests);
      }
    }
    if (in.frontend.enabled) {
      const FrontendConfig& f = in.frontend;
      api_.emplace(f, ApiServerCount(in));
      output_lag_ = ClientLag(in);
      turnaround_ = FromSeconds(f.client_turnaround_s);
    }
    loads_.resize(replicas_.size());
    outstanding_.assign(replicas_.size(), 0);
    out_->replicas.resize(replicas_.size());
    // Reserve the whole bound (pages are not resident until used; growing
    // past a reservation copies the table at twice its size), up to 32M
    // requests, not an absurd bound: growth beyond is amortised.
    if (w_.num_requests > 0) {
      const int64_t bound = std::min<int64_t>(w_.num_requests, 1 << 25);
      out_->requests.reserve(bound);
      in_system_seen_.reserve(bound);  // no copies as it grows (4 bytes each)
      if (out_->disagg) {
        out_->disagg->prefill_requests.reserve(bound);
        out_->disagg->requests.reserve(bound);
      }
    }
    retire_ = !in.keep_requests && !trace_sessions_ && !in.check_invariants;
    duration_ = w_.duration_s > 0 ? FromSeconds(w_.duration_s) : kNever;
    warmup_end_ = FromSeconds(in.metrics.warmup_s);
  }

  void Run() {
    if (w_.closed_loop) {
      for (int32_t c = 0; c < w_.concurrency; ++c) {
        events_.Push(0, EventKind::kClientSend, c);
      }
    } else {
      PrepareArrival(0);
    }
    while (!events_.Empty()) {
      const Event e = events_.Pop();
      // A tokenizer window that closed sooner (its batch filled) left its
      // first close behind: not an event of the run (nor its end time).
      if (e.kind == EventKind::kTokenizerWindow && !api_->IsLive(e.payload)) continue;
      now_ = e.time;
      switch (e.kind) {
        case EventKind::kArrival: OnArrival(); break;
        case EventKind::kClientSend: OnClientSend(static_cast<int32_t>(e.payload)); break;
        case EventKind::kSessionTurn: OnSessionTurn(e.payload); break;
        case EventKind::kTraceTurn: OnTraceTurn(e.payload); break;
        case EventKind::kStepDone: OnStepDone(static_cast<size_t>(e.payload)); break;
        case EventKind::kTransferDone: OnTransferDone(e.payload); break;
        case EventKind::kEngineArrival:
          --at_api_servers_;
          Dispatch(e.payload);
          break;
        case EventKind::kClientReceived: OnClientReceived(e.payload); break;
        case EventKind::kTokenizerWindow: OnApiDue(api_->CloseWindow(e.payload, now_)); break;
      }
      if (StopEarly()) break;
      // A counter, not the clock: the callback reads the wall clock itself
      // (once per kProgressEvents events costs nothing measurable).
      if (in_.on_progress && ++events_seen_ == SimulationInput::kProgressEvents) {
        events_seen_ = 0;
        in_.on_progress({now_, done_, created_});
      }
    }
    Finish();
  }

 private:
  void AddReplica(const EngineConfig& engine, const CostModel* cost,
                  const StepWorkCounter* work, RequestTable* table) {
    EngineConfig e = engine;
    e.spec.seed = in_.seed;  // acceptance draws: (seed, request, position)
    replicas_.push_back(MakeReplica(e, cost, table, &out_->recorder));
    Replica& rep = *replicas_.back();
    rep.set_check_invariants(in_.check_invariants);
    const int32_t index = static_cast<int32_t>(replicas_.size() - 1);
    rep.set_step_sink(in_.record_steps || in_.check_invariants ? &out_->steps : nullptr,
                      index);
    if (in_.on_step) rep.set_step_callback(in_.on_step);
    rep.set_work_counter(work);
  }

  bool StopEarly() {
    // Requests in the API servers' queues wait as much as the engine's.
    // The engines' waiting: the fleet total SyncLevels keeps (it runs after
    // every call that changes a replica), not a call to each replica per
    // event (2% of a chat run's instructions).
    const int64_t queued = static_cast<int64_t>(pending_.size()) + at_api_servers_ +
                           out_->recorder.levels().waiting;
    if (queued > in_.limits.max_queued) {
      out_->stopped_at_queue_cap = true;
      out_->unstable = true;
      out_->unstable_reason = "queue exceeded limits.max_queued = " +
                              std::to_string(in_.limits.max_queued);
      return true;
    }
    // Every request rejected at one instant could otherwise loop forever
    // in a closed loop bounded only by time.
    if (out_->rejected > in_.limits.max_queued) {
      out_->stopped_at_queue_cap = true;
      out_->unstable_reason = "more than limits.max_queued requests rejected";
      return true;
    }
    return false;
  }

  bool MayCreate(SimTime t) const {
    return (w_.num_requests == 0 || created_ < w_.num_requests) && t < duration_;
  }

  // Draws the next open-loop arrival (its spec and time) and schedules it.
  // A sessions trace's later turns met on the way wait for their parents.
  void PrepareArrival(SimTime after) {
    double trace_time = NAN;
    TraceTurn turn;
    while (true) {
      if (!source_.Next(&next_spec_, &trace_time, &turn)) {
        source_done_ = true;
        if (turns_waiting_ == 0) CloseWindow();
        return;
      }
      if (!trace_sessions_) break;
      request_of_record_.push_back(-1);
      trace_s_of_record_.push_back(trace_time);
      if (turn.parent < 0) break;
      StashTurn({std::move(next_spec_), turn, trace_time});
      next_spec_ = RequestSpec();
    }
    next_turn_ = turn;
    SimTime t;
    if (source_.replays_trace_clock()) {
      t = std::max(after, FromSeconds(trace_time));
    } else {
      t = first_arrival_ ? 0 : after + FromSeconds(w_.arrival->NextGapSeconds(arrival_rng_));
    }
    first_arrival_ = false;
    if (!MayCreate(t)) {
      // No later record is read: every one would arrive past the bound (a
      // later turn is never sent before its trace time).
      source_done_ = true;
      DropPendingFirstTurn();
      if (turns_waiting_ == 0) CloseWindow();
      return;
    }
    events_.Push(t, EventKind::kArrival, 0);
  }

  int64_t Create(int32_t client, const RequestSpec& spec) {
    Request& r = out_->requests.emplace_back();  // built in place
    r.id = created_++;
    r.client = client;
    r.prompt_len = spec.prompt_len;
    r.output_len = spec.output_len;
    r.content = spec.content;
    r.priority = spec.priority;
    if (spec.request_class >= 0) {
      const RequestClass& c = w_.classes[spec.request_class];
      r.request_class = spec.request_class;
      r.priority = c.priority;
      r.ttft_slo = c.ttft_slo_s > 0 ? FromSeconds(c.ttft_slo_s) : -1;
    }
    if (r.content.stream_id == 0) r.content.stream_id = static_cast<uint64_t>(r.id) + 1;
    r.arrival = now_;
    r.measured = r.id >= in_.metrics.warmup_requests &&
                 now_ >= warmup_end_;
    Recorder& rec = out_->recorder;
    rec.Advance(now_);
    if (r.measured && !window_started_) {
      rec.MarkWindowStart(now_);
      window_started_ = true;
    }
    if (r.measured) {
      // Client-side view: sent and unfinished, plus waiting for a slot.
      in_system_seen_.push_back(
          static_cast<int32_t>(rec.levels().in_system + pending_.size()));
    }
    if (out_->disagg) {
      // The prefill instance's request: the same prompt, max_tokens=1.
      Request p;
      p.id = r.id;
      p.prompt_len = r.prompt_len;
      p.output_len = 1;
      p.content = r.content;
      p.request_class = r.request_class;
      p.priority = r.priority;
      p.ttft_slo = r.ttft_slo;
      p.arrival = r.arrival;
      p.measured = r.measured;
      out_->disagg->prefill_requests.push_back(std::move(p));
      out_->disagg->requests.emplace_back();
    }
    if (w_.num_requests > 0 && created_ == w_.num_requests) CloseWindow();
    return created_ - 1;
  }

  void CloseWindow() {
    if (window_started_ && !window_closed_) {
      out_->recorder.MarkWindowEnd(now_);
      window_closed_ = true;
    }
  }

  void OnArrival() {
    // Session turns may have used up the request bound since this arrival
    // was scheduled.
    if (!MayCreate(now_)) {
      DropPendingFirstTurn();
      CloseWindow();
      return;
    }
    int64_t id;
    if (trace_sessions_) {
      // A first turn: its session's turns share one content stream.
      next_spec_.content.stream_id = SessionStream(next_turn_.record);
      next_spec_.content.shared_stream = true;
      id = Create(-1, next_spec_);
      request_of_record_[next_turn_.record] = id;
      record_of_request_.resize(created_, -1);
      record_of_request_[id] = next_turn_.record;
    } else if (w_.sessions) {
      Session s;
      s.stream_id = (1ULL << 62) | sessions_.size();
      s.turns = std::max(1, w_.sessions->turns->Sample(session_rng_));
      s.first = next_spec_.content;
      s.first.stream_id = s.stream_id;
      s.first.shared_stream = true;  // later turns resend this stream
      next_spec_.content = s.first;
      sessions_.push_back(s);
      session_of_.resize(created_ + 1, -1);
      session_of_[created_] = static_cast<int64_t>(sessions_.size() - 1);
      id = Create(-1, next_spec_);
    } else {
      id = Create(-1, next_spec_);
    }
    next_spec_ = RequestSpec();
    SendOrHold(id);
    PrepareArrival(now_);
  }

  void OnClientSend(int32_t client) {
    if (!MayCreate(now_)) return;
    RequestSpec spec;
    double unused;
    if (!source_.Next(&spec, &unused)) {
      CloseWindow();
      return;
    }
    Send(Create(client, spec));
  }

  // The next turn of a multi-turn session: the whole history plus new input.
  void OnSessionTurn(int64_t session) {
    if (!MayCreate(now_)) return;
    Session& s = sessions_[session];
    RequestSpec spec;
    source_.DrawLengths(&spec);
    spec.prompt_len = static_cast<int32_t>(
        std::min<int64_t>(s.history + spec.prompt_len, INT32_MAX / 2));
    spec.content = s.first;
    session_of_.resize(created_ + 1, -1);
    session_of_[created_] = session;
    const int64_t id = Create(-1, spec);
    out_->requests[id].session_turn = s.done;
    SendOrHold(id);
  }

  // Sessions traces. A later turn is sent when its parent has answered:
  // `think_time` after the parent's finish when the trace gives it, else at
  // the parent's send time plus the trace's gap between the two arrivals,
  // but never before the parent's finish (the trace's timing is kept while
  // the simulated engine is as fast as the traced one; a slower engine
  // pushes the turn back, never ahead of its parent's answer). A turn whose
  // parent is rejected, or is never created (the run's bound), is dropped
  // with its own later turns.
  static uint64_t SessionStream(int64_t root_record) {
    return (1ULL << 62) | static_cast<uint64_t>(root_record);
  }

  void StashTurn(TraceTurnState t) {
    ++turns_waiting_;
    const int64_t parent_id = request_of_record_[t.turn.parent];
    if (parent_id == kDroppedRejected || parent_id == kDroppedPastBound) {
      DropTurn(t.turn.record, parent_id);
    } else if (parent_id >= 0 && out_->requests[parent_id].done()) {
      Release(std::move(t), out_->requests[parent_id]);
    } else {
      waiting_on_[t.turn.parent].push_back(std::move(t));
    }
  }

  void Release(TraceTurnState t, const Request& parent) {
    if (parent.status != RequestStatus::kFinished) {
      DropTurn(t.turn.record, kDroppedRejected);
      return;
    }
    SimTime at;
    // The client reads the answer one output delay after the engine ends it.
    const SimTime answered = parent.finish + (api_ ? output_lag_ : 0);
    if (!std::isnan(t.turn.think_time_s)) {
      at = answered + FromSeconds(t.turn.think_time_s);
    } else {
      const double gap = t.trace_s - trace_s_of_record_[t.turn.parent];
      at = std::max(answered, parent.arrival + FromSeconds(gap));
    }
    at = std::max(at, now_);
    int64_t slot;
    if (free_turn_slots_.empty()) {
      slot = static_cast<int64_t>(turn_slots_.size());
      turn_slots_.push_back(std::move(t));
    } else {
      slot = free_turn_slots_.back();
      free_turn_slots_.pop_back();
      turn_slots_[slot] = std::move(t);
    }
    events_.Push(at, EventKind::kTraceTurn, slot);
  }

  // A sessions trace's first turn read, not created: true if there is one.
  bool FirstTurnPending() const {
    return trace_sessions_ && next_turn_.record >= 0 &&
           request_of_record_[next_turn_.record] == -1;
  }
  // ... past the run's bound (its later turns were not read).
  void DropPendingFirstTurn() {
    if (!FirstTurnPending()) return;
    request_of_record_[next_turn_.record] = kDroppedPastBound;
    ++out_->session_turns_dropped.past_bound;
  }

  // The turn will never be created, nor the turns waiting on it; `why` is
  // kDroppedRejected or kDroppedPastBound.
  void DropTurn(int64_t record, int64_t why) {
    SimulationOutput::SessionTurnDrops& drops = out_->session_turns_dropped;
    int64_t& count = why == kDroppedRejected ? drops.parent_rejected : drops.past_bound;
    std::vector<int64_t> stack = {record};
    while (!stack.empty()) {
      const int64_t r = stack.back();
      stack.pop_back();
      request_of_record_[r] = why;
      --turns_waiting_;
      ++count;
      auto it = waiting_on_.find(r);
      if (it == waiting_on_.end()) continue;
      for (const TraceTurnState& t : it->second) stack.push_back(t.turn.record);
      waiting_on_.erase(it);
    }
    if (source_done_ && turns_waiting_ == 0) CloseWindow();
  }

  void OnTraceTurn(int64_t slot) {
    TraceTurnState t = std::move(turn_slots_[slot]);
    free_turn_slots_.push_back(slot);
    if (!MayCreate(now_)) {
      DropTurn(t.turn.record, kDroppedPastBound);
      CloseWindow();
      return;
    }
    const int64_t parent_id = request_of_record_[t.turn.parent];
    t.spec.content.stream_id = SessionStream(t.turn.root);
    t.spec.content.shared_stream = true;
    --turns_waiting_;
    const int64_t id = Create(-1, t.spec);
    request_of_record_[t.turn.record] = id;
    record_of_request_.resize(created_, -1);
    record_of_request_[id] = t.turn.record;
    out_->parent_request.resize(created_, -1);
    out_->parent_request[id] = parent_id;
    out_->requests[id].session_turn = out_->requests[parent_id].session_turn + 1;
    if (source_done_ && turns_waiting_ == 0) CloseWindow();
    SendOrHold(id);
  }

  // The request answered or was rejected: its waiting turns are released
  // or dropped.
  void OnTraceParentDone(const Request& r) {
    if (r.id >= static_cast<int64_t>(record_of_request_.size())) return;
    const int64_t record = record_of_request_[r.id];
    if (record < 0) return;
    auto it = waiting_on_.find(record);
    if (it == waiting_on_.end()) return;
    std::vector<TraceTurnState> turns = std::move(it->second);
    waiting_on_.erase(it);
    for (TraceTurnState& t : turns) Release(std::move(t), r);
  }

  // Open loop: sends now, or holds the request for a max_concurrency slot.
  void SendOrHold(int64_t id) {
    if (w_.max_concurrency > 0 && in_flight_ >= w_.max_concurrency) {
      pending_.push_back(id);
    } else {
      Send(id);
    }
  }

  // Why request id can never be served, or nullptr.
  const char* CheckServable(int64_t id) const {
    const Request& r = out_->requests[id];
    if (!out_->disagg) return replicas_[0]->CheckServable(r);
    const char* why = replicas_[0]->CheckServable(out_->disagg->prefill_requests[id]);
    return why ? why : replicas_[num_prefill_]->CheckServable(r);
  }

  void Send(int64_t id) {
    Request& r = out_->requests[id];
    r.send = now_;
    if (const char* why = CheckServable(id)) {
      r.status = RequestStatus::kRejected;
      r.reject_reason = why;
      r.finish = now_;
      ++out_->rejected;
      OnRequestDone(r, /*ends_session=*/true);
      return;
    }
    ++in_flight_;
    Recorder& rec = out_->recorder;
    rec.Advance(now_);
    ++rec.levels().in_system;
    if (api_) {
      // The API server tokenizes it first; the engine core has it later.
      ++at_api_servers_;
      OnApiDue(api_->Submit(now_, id, ApiWorkOf(in_.frontend, in_.seed, id, r.prompt_len)));
      return;
    }
    Dispatch(id);
  }

  // The API servers handed requests over (the engine core has each at its
  // time) or opened a tokenizer window.
  void OnApiDue(const ApiServers::Due& due) {
    for (const ApiServers::Handoff& h : due.handoffs) {
      out_->requests[h.id].tokenize_start = h.tokenize_start;
      events_.Push(h.at_engine, EventKind::kEngineArrival, h.id);
    }
    if (due.close_at >= 0) events_.Push(due.close_at, EventKind::kTokenizerWindow, due.window);
  }

  // The engine core has request id (at its send without a frontend).
  void Dispatch(int64_t id) {
    Request& r = out_->requests[id];
    r.engine_arrival = now_;
    if (out_->disagg) {
      SendToPrefill(id);
      return;
    }
    const size_t k = Route(r, 0, replicas_.size(), *router_, route_rng_, &route_hashes_);
    r.replica = static_cast<int32_t>(k);
    ++out_->replicas[k].routed;
    ++outstanding_[k];
    replicas_[k]->Submit(id);
    if (!replicas_[k]->busy()) StartStep(k);  // else it joins the next step
    else SyncLevels();
  }

  // Disaggregated: the prefill instance runs the prompt with max_tokens=1.
  void SendToPrefill(int64_t id) {
    Request& p = out_->disagg->prefill_requests[id];
    p.send = p.engine_arrival = now_;
    const size_t k = Route(p, 0, num_prefill_, *router_, route_rng_, &route_hashes_);
    p.replica = static_cast<int32_t>(k);
    out_->disagg->requests[id].prefill_replica = p.replica;
    ++out_->replicas[k].routed;
    ++outstanding_[k];
    replicas_[k]->Submit(id);
    if (!replicas_[k]->busy()) StartStep(k);
    else SyncLevels();
  }

  // A prefill instance sampled request id's (discarded) token: its prompt's
  // KV is complete. The decode router picks the instance, whose link moves
  // the KV first come, first served; the prefill blocks stay held until the
  // transfer ends.
  void OnPrefillDone(int64_t id) {
    const DisaggConfig& c = *in_.disagg;
    DisaggRequest& dr = out_->disagg->requests[id];
    dr.prefill_end = now_;
    Request& r = out_->requests[id];
    const size_t d = Route(r, num_prefill_, replicas_.size() - num_prefill_,
                           *decode_router_, decode_route_rng_, &decode_route_hashes_);
    const size_t k = num_prefill_ + d;
    r.replica = static_cast<int32_t>(k);
    ++out_->replicas[k].routed;
    ++outstanding_[k];
    const double per_gpu = c.kv_bytes_per_token_per_gpu * r.prompt_len;
    dr.bytes = per_gpu * c.decode_gpus;
    dr.transfer_start = std::max(now_, link_free_[d]);
    dr.transfer_end = dr.transfer_start +
                      std::max<SimTime>(1, FromSeconds(c.link_latency_s +
                                                       per_gpu / c.link_bytes_per_s));
    link_free_[d] = dr.transfer_end;
    out_->disagg->link_busy[d] += dr.transfer_end - dr.transfer_start;
    events_.Push(dr.transfer_end, EventKind::kTransferDone, id);
  }

  // The KV arrived: the prefill blocks are freed (which may let that
  // instance admit more) and the decode instance gets the request.
  void OnTransferDone(int64_t id) {
    const DisaggRequest& dr = out_->disagg->requests[id];
    ++out_->disagg->transfers;
    out_->disagg->bytes_moved += dr.bytes;
    const size_t p = static_cast<size_t>(dr.prefill_replica);
    replicas_[p]->ReleaseHeld(id);
    if (!replicas_[p]->busy()) StartStep(p);
    const size_t k = static_cast<size_t>(out_->requests[id].replica);
    replicas_[k]->Submit(id);
    if (!replicas_[k]->busy()) StartStep(k);
    else SyncLevels();
  }

  // Chooses among replicas [first, first + count) with `router`; returns
  // the index within that range.
  size_t Route(Request& r, size_t first, size_t count, Router& router, Rng& rng,
               PrefixHashMemo* memo) {
    if (count == 1) return 0;
    loads_.resize(count);
    for (size_t j = 0; j < count; ++j) {
      const size_t k = first + j;
      loads_[j] = {outstanding_[k],
                   replicas_[k]->levels().waiting, replicas_[k]->routing_kv()};
    }
    RouteRequest rr;
    rr.id = r.id;
    rr.prompt_len = r.prompt_len;
    if (router.wants_block_hashes()) {
      const int32_t bs = EngineOfReplica(in_, static_cast<int32_t>(first)).block_size;
      // What admission looks up: a new request hits none of its own blocks.
      const int32_t n = std::min((r.prompt_len - 1) / bs,
                                 in_.engine.reference_engine
                                     ? INT32_MAX
                                     : FirstPrivateBlock(r, bs));
      EnsureBlockHashes(&r, n, bs, in_.engine.reference_engine ? nullptr : memo);
      rr.block_hashes = r.block_hashes.data();
      rr.num_block_hashes = n;
    }
    return router.Choose(rr, loads_, rng);
  }

  void StartStep(size_t k) {
    const SimTime wake = replicas_[k]->StartStep(now_);
    SyncLevels();
    if (wake >= 0) events_.Push(wake, EventKind::kStepDone, static_cast<int64_t>(k));
  }

  void SyncLevels() {
    Recorder& rec = out_->recorder;
    rec.Advance(now_);
    Levels& l = rec.levels();
    l.waiting = l.running = l.kv_blocks_used = l.kv_blocks_cached = l.busy = 0;
    for (const auto& rep : replicas_) rep->AddLevels(&l);  // fleet totals
  }

  void OnStepDone(size_t k) {
    finished_.clear();
    replicas_[k]->FinishStep(now_, &finished_);
    outstanding_[k] -= static_cast<int64_t>(finished_.size());
    if (k < num_prefill_) {
      for (int64_t id : finished_) OnPrefillDone(id);
      StartStep(k);
      return;
    }
    if (api_) {
      // The client reads the answer's end one output delay later.
      for (int64_t id : finished_) {
        events_.Push(now_ + output_lag_, EventKind::kClientReceived, id);
      }
    } else {
      Recorder& rec = out_->recorder;
      rec.Advance(now_);
      rec.levels().in_system -= static_cast<int64_t>(finished_.size());
      in_flight_ -= static_cast<int64_t>(finished_.size());
      for (int64_t id : finished_) OnRequestDone(out_->requests[id], false);
    }
    if (retire_) RetireChunks();  // one waiting on a step in flight
    StartStep(k);
  }

  // With a frontend: the client has request id's last token.
  void OnClientReceived(int64_t id) {
    Recorder& rec = out_->recorder;
    rec.Advance(now_);
    --rec.levels().in_system;
    --in_flight_;
    OnRequestDone(out_->requests[id], false);
  }

  // With a frontend: from reading an answer to sending the next request.
  SimTime ClientTurnaround() {
    if (!api_) return 0;
    const double jitter = in_.frontend.client_jitter_s;
    return turnaround_ + (jitter > 0 ? FromSeconds(jitter * client_rng_.Uniform()) : 0);
  }

  // A request left the system (finished or rejected): free its client, its
  // concurrency slot, or schedule its session's next turn.
  void OnRequestDone(const Request& r, bool ends_session) {
    ++done_;
    if (r.client >= 0) {
      events_.Push(now_ + ClientTurnaround() + FromSeconds(w_.think_time_s),
                   EventKind::kClientSend, r.client);
      return;
    }
    if (trace_sessions_) OnTraceParentDone(r);
    if (w_.sessions && r.id < static_cast<int64_t>(session_of_.size()) &&
        session_of_[r.id] >= 0) {
      Session& s = sessions_[session_of_[r.id]];
      ++s.done;
      s.history = static_cast<int64_t>(r.prompt_len) + r.output_len;
      if (!ends_session && s.done < s.turns) {
        events_.Push(now_ + ClientTurnaround() + FromSeconds(w_.sessions->think_time_s),
                     EventKind::kSessionTurn, session_of_[r.id]);
      }
    }
    if (!pending_.empty()) {
      const int64_t next = pending_.front();
      pending_.pop_front();
      Send(next);
    }
    // Last: a request sent above (and rejected) may complete a chunk, but
    // not r's until now.
    if (retire_) {
      const size_t c = static_cast<size_t>(r.id) >> RequestTable::kShift;
      if (done_in_chunk_.size() <= c) done_in_chunk_.resize(c + 1, 0);
      ++done_in_chunk_[c];
      RetireChunks();
    }
  }

  // keep_requests = false: hands over and frees, in id order, each chunk of
  // the table whose requests are all done, unless a step in flight still
  // refers to one of them (async scheduling: the step after a request's
  // last one may carry a token for it); then it is tried again later.
  void RetireChunks() {
    RequestTable& t = out_->requests;
    while (retired_chunks_ < done_in_chunk_.size() &&
           done_in_chunk_[retired_chunks_] == static_cast<int32_t>(RequestTable::kChunk)) {
      const size_t first = retired_chunks_ * RequestTable::kChunk;
      const size_t last = first + RequestTable::kChunk;
      DisaggOutput* d = out_->disagg ? &*out_->disagg : nullptr;
      for (size_t i = first; i < last; ++i) {
        if (t[i].in_flight != 0) return;
        // (A request is done only after its prefill copy's transfer ended.)
        if (d != nullptr && d->prefill_requests[i].in_flight != 0) return;
      }
      for (size_t i = first; i < last; ++i) HandOver(i);
      t.ReleaseChunk(retired_chunks_);
      if (d != nullptr) {
        d->prefill_requests.ReleaseChunk(retired_chunks_);
        d->requests.ReleaseChunk(retired_chunks_);
      }
      ++retired_chunks_;
    }
  }

  // What the run counts of request id at its end (and of its prefill copy,
  // disaggregated), and on_request.
  void HandOver(size_t id) {
    const Request& r = out_->requests[id];
    if (!r.done()) ++out_->incomplete;
    CountPrefix(r);
    if (in_.on_request) in_.on_request(r);
    if (out_->disagg) {
      CountPrefix(out_->disagg->prefill_requests[id]);
      if (in_.on_disagg_request) in_.on_disagg_request(r, out_->disagg->requests[id]);
    }
  }
  void CountPrefix(const Request& r) {
    if (r.replica >= 0 && r.cached_tokens >= 0) {
      out_->replicas[r.replica].cached_prompt_tokens += r.cached_tokens;
      out_->replicas[r.replica].prompt_tokens += r.prompt_len;
    }
  }

  void Finish() {
    out_->end_time = now_;
    if (api_) out_->api_busy_s = ToSeconds(api_->BusyUntil(now_));
    out_->client_lag = output_lag_;
    out_->session_turns_dropped.waiting_at_end = turns_waiting_ + (FirstTurnPending() ? 1 : 0);
    out_->session_turns_read = static_cast<int64_t>(request_of_record_.size());
    for (auto& rep : replicas_) rep->EndRun();
    CloseWindow();
    out_->input_error = source_.trace_error();
    for (size_t k = 0; k < replicas_.size(); ++k) {
      CollectReplicaStats(*replicas_[k], EngineOfReplica(in_, static_cast<int32_t>(k)), now_,
                          &out_->replicas[k], out_);
    }
    RequestTable& t = out_->requests;
    for (size_t i = retired_chunks_ * RequestTable::kChunk; i < t.size(); ++i) HandOver(i);
    if (retire_) {
      t.clear();
      if (out_->disagg) {
        out_->disagg->prefill_requests.clear();
        out_->disagg->requests.clear();
      }
    }
    if (out_->disagg) {
      // A link's transfers not ended by now run back to back until
      // link_free_ (each starts when the one before it ends).
      out_->disagg->link_busy_in_run = out_->disagg->link_busy;
      for (size_t d = 0; d < link_free_.size(); ++d) {
        out_->disagg->link_busy_in_run[d] -= std::max<SimTime>(0, link_free_[d] - now_);
      }
    }
    out_->parent_request.resize(trace_sessions_ ? created_ : 0, -1);
    if (!out_->unstable && !w_.closed_loop && !w_.sessions && !trace_sessions_) {
      JudgeStability();
    }
  }

  // Arrivals see time averages (PASTA): if the number in system seen by the
  // last 10% of measured arrivals is far above what the first half saw, the
  // queue was still growing when arrivals stopped.
  void JudgeStability() {
    const size_t n = in_system_seen_.size();
    if (n < 100) return;
    auto mean = [&](size_t a, size_t b) {
      return std::accumulate(in_system_seen_.begin() + a, in_system_seen_.begin() + b, 0.0) /
             static_cast<double>(b - a);
    };
    const double first_half = mean(0, n / 2);
    const double last_tenth = mean(n - n / 10, n);
    if (last_tenth > 2.0 * first_half + in_.engine.max_num_seqs) {
      out_->unstable = true;
      out_->unstable_reason =
          "requests in system kept growing (" + std::to_string(static_cast<int64_t>(first_half)) +
          " seen by the first half of arrivals, " +
          std::to_string(static_cast<int64_t>(last_tenth)) + " by the last tenth)";
    }
  }

  const SimulationInput& in_;
  const WorkloadConfig& w_;
  SimulationOutput* out_;
  Rng arrival_rng_, session_rng_, route_rng_, decode_route_rng_, client_rng_;
  RequestSource source_;
  std::unique_ptr<Router> router_;          // the prefill pool's, if any
  std::unique_ptr<Router> decode_router_;   // disaggregated only
  size_t num_prefill_ = 0;                  // replicas [0, num_prefill_)
  std::vector<SimTime> link_free_;          // per decode instance
  PrefixHashMemo decode_route_hashes_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::vector<ReplicaLoad> loads_;
  std::vector<int64_t> outstanding_;  // per replica: routed, unfinished
  EventQueue events_;
  // The frontend (in.frontend.enabled): API servers, output delay, turnaround.
  std::optional<ApiServers> api_;
  SimTime output_lag_ = 0, turnaround_ = 0;
  int64_t at_api_servers_ = 0;  // sent, not at the engine yet
  RequestSpec next_spec_;        // the scheduled open-loop arrival's spec
  std::deque<int64_t> pending_;  // waiting for a max_concurrency slot
  std::vector<int64_t> finished_;
  std::vector<int32_t> in_system_seen_;  // at each measured arrival
  PrefixHashMemo route_hashes_;          // the router's prefix lookups
  std::vector<Session> sessions_;
  std::vector<int64_t> session_of_;      // request id -> session, -1 none
  // Sessions traces: per record, its request (-1 not yet, kDropped* never)
  // and trace time; per request, its record; the turns waiting on a
  // record's answer; released turns by event payload.
  static constexpr int64_t kDroppedRejected = -2;
  static constexpr int64_t kDroppedPastBound = -3;
  const bool trace_sessions_;
  TraceTurn next_turn_;  // the scheduled first turn's place
  std::vector<int64_t> request_of_record_;
  std::vector<double> trace_s_of_record_;
  std::vector<int64_t> record_of_request_;
  std::unordered_map<int64_t, std::vector<TraceTurnState>> waiting_on_;
  std::vector<TraceTurnState> turn_slots_;
  std::vector<int64_t> free_turn_slots_;
  int64_t turns_waiting_ = 0;  // read, neither created nor dropped
  bool source_done_ = false;
  SimTime now_ = 0;
  SimTime duration_ = kNever;
  SimTime warmup_end_ = 0;  // FromSeconds(metrics.warmup_s)
  int64_t created_ = 0;
  int64_t in_flight_ = 0;
  int64_t done_ = 0;         // finished or rejected (on_progress)
  int64_t events_seen_ = 0;  // since on_progress was last called
  bool first_arrival_ = true;
  bool window_started_ = false, window_closed_ = false;
  // keep_requests = false: done requests per chunk of the table, and the
  // chunks [0, retired_chunks_) handed over and freed.
  bool retire_ = false;
  std::vector<int32_t> done_in_chunk_;
  size_t retired_chunks_ = 0;
};

}  // namespace

int32_t ApiServerCount(const SimulationInput& in) {
  return ApiServerCount(in.frontend, in.disagg ? in.disagg->prefill.num_replicas : in.num_replicas);
}

SimTime ClientLag(const SimulationInput& in) {
  return in.frontend.enabled ? FromSeconds(in.frontend.output_s) : 0;
}

void CollectReplicaStats(const Replica& rep, const EngineConfig& e, SimTime end,
                         ReplicaStats* st, SimulationOutput* out) {
  st->steps = rep.steps();
  st->busy_s = ToSeconds(rep.busy_time());
  st->busy_in_run_s = ToSeconds(rep.busy_time_before(end));
  out->total_cost += rep.total_cost();
  const Scheduler* sch = rep.vllm_scheduler();
  if (sch == nullptr) return;
  out->resume_cached_tokens += sch->resume_cached_tokens();
  out->spec += sch->spec_stats();
  out->evictions += sch->kv().evictions();
  OffloadStats& o = out->offload;
  const TransferCounts& t = sch->transfers();
  o.swap_preemptions += sch->swap_preemptions();
  o.swap_fallbacks += sch->swap_fallbacks();
  o.swap_out_blocks += t.swap_out;
  o.swap_in_blocks += t.swap_in;
  o.load_blocks += t.load;
  o.store_blocks += t.store;
  if (sch->cpu_tier() != nullptr) o.cpu_evictions += sch->cpu_tier()->evictions();
  const double block = e.kv_block_bytes * e.offload_gpus;
  o.bytes_to_cpu += static_cast<double>(t.swap_out + t.store) * block;
  o.bytes_to_gpu += static_cast<double>(t.swap_in + t.load) * block;
  o.stall += rep.transfer_stall();
}

const EngineConfig& EngineOfReplica(const SimulationInput& in, int32_t k) {
  if (!in.disagg) return in.engine;
  return k < in.disagg->prefill.num_replicas ? in.disagg->prefill.engine
                                             : in.disagg->decode.engine;
}

SimulationOutput Simulate(const SimulationInput& input) {
  SimulationOutput out;
  Driver(input, &out).Run();
  return out;
}

}  // namespace servesim
