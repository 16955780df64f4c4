// The simulation driver (see simulation.h).
#include "sim/engine/simulation.h"

#include <algorithm>
#include <deque>
#include <numeric>

#include "sim/core/event_queue.h"
#include "sim/core/rng.h"
#include "sim/engine/replica.h"

namespace servesim {
namespace {

class Driver {
 public:
  Driver(const SimulationInput& in, SimulationOutput* out)
      : in_(in),
        w_(in.workload),
        out_(out),
        arrival_rng_(in.seed, "arrivals"),
        input_rng_(in.seed, "input_len"),
        output_rng_(in.seed, "output_len"),
        replica_(in.engine, MakeSchedulerPolicy(in.engine.policy),
                 in.cost_model, &out->requests, &out->recorder) {
    replica_.set_check_invariants(in.check_invariants);
    // Reserve for the common case, not for an absurd bound: growth beyond
    // it is amortised and bounded by limits.max_queued in overload.
    if (w_.num_requests > 0) {
      out_->requests.reserve(std::min<int64_t>(w_.num_requests, 1 << 21));
    }
    duration_ = w_.duration_s > 0 ? FromSeconds(w_.duration_s) : kNever;
  }

  void Run() {
    if (w_.closed_loop) {
      for (int32_t c = 0; c < w_.concurrency; ++c) {
        events_.Push(0, EventKind::kClientSend, c);
      }
    } else {
      events_.Push(0, EventKind::kArrival, -1);
    }
    while (!events_.Empty()) {
      const Event e = events_.Pop();
      now_ = e.time;
      switch (e.kind) {
        case EventKind::kArrival: OnArrival(); break;
        case EventKind::kClientSend: OnClientSend(static_cast<int32_t>(e.payload)); break;
        case EventKind::kStepDone: OnStepDone(); break;
      }
      if (Queued() > in_.limits.max_queued) {
        out_->stopped_at_queue_cap = true;
        out_->unstable = true;
        out_->unstable_reason = "queue exceeded limits.max_queued = " +
                                std::to_string(in_.limits.max_queued);
        break;
      }
      // Every request rejected at one instant could otherwise loop forever
      // in a closed loop bounded only by time.
      if (out_->rejected > in_.limits.max_queued) {
        out_->stopped_at_queue_cap = true;
        out_->unstable_reason = "more than limits.max_queued requests rejected";
        break;
      }
    }
    Finish();
  }

 private:
  int64_t Queued() const {
    return static_cast<int64_t>(replica_.scheduler().num_waiting() +
                                pending_.size());
  }
  bool MayCreate(SimTime t) const {
    return (w_.num_requests == 0 || created_ < w_.num_requests) && t < duration_;
  }

  int64_t Create(int32_t client) {
    Request r;
    r.id = created_++;
    r.client = client;
    r.prompt_len = w_.input_len->Sample(input_rng_);
    r.output_len = w_.output_len->Sample(output_rng_);
    r.arrival = now_;
    r.measured = r.id >= in_.metrics.warmup_requests &&
                 now_ >= FromSeconds(in_.metrics.warmup_s);
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
    out_->requests.push_back(std::move(r));
    return created_ - 1;
  }

  // The last request has been created: the measurement window closes.
  void MaybeCloseWindow(SimTime next_time) {
    if (!MayCreate(next_time) && window_started_ && !window_closed_) {
      out_->recorder.MarkWindowEnd(now_);
      window_closed_ = true;
    }
  }

  void OnArrival() {
    const int64_t id = Create(-1);
    if (w_.max_concurrency > 0 && in_flight_ >= w_.max_concurrency) {
      pending_.push_back(id);
    } else {
      Send(id);
    }
    const SimTime next = now_ + FromSeconds(w_.arrival->NextGapSeconds(arrival_rng_));
    MaybeCloseWindow(next);
    if (MayCreate(next)) events_.Push(next, EventKind::kArrival, -1);
  }

  void OnClientSend(int32_t client) {
    if (!MayCreate(now_)) return;
    Send(Create(client));
    MaybeCloseWindow(now_);
  }

  void Send(int64_t id) {
    Request& r = out_->requests[id];
    r.send = now_;
    if (const char* why = replica_.CheckServable(r)) {
      r.status = RequestStatus::kRejected;
      r.reject_reason = why;
      r.finish = now_;
      ++out_->rejected;
      OnRequestDone(r);
      return;
    }
    ++in_flight_;
    Recorder& rec = out_->recorder;
    rec.Advance(now_);
    ++rec.levels().in_system;
    replica_.Submit(id);
    if (!replica_.busy()) StartStep();
    else SyncLevels();
  }

  void StartStep() {
    const SimTime d = replica_.StartStep(now_);
    SyncLevels();
    if (d >= 0) events_.Push(now_ + d, EventKind::kStepDone, 0);
  }

  void SyncLevels() {
    Recorder& rec = out_->recorder;
    rec.Advance(now_);
    Levels& l = rec.levels();
    l.waiting = static_cast<int64_t>(replica_.scheduler().num_waiting());
    l.running = static_cast<int64_t>(replica_.scheduler().num_running());
    l.kv_blocks_used = replica_.scheduler().pool().num_used();
    l.busy = replica_.busy() ? 1 : 0;
  }

  void OnStepDone() {
    finished_.clear();
    replica_.FinishStep(now_, &finished_);
    Recorder& rec = out_->recorder;
    rec.Advance(now_);
    rec.levels().in_system -= static_cast<int64_t>(finished_.size());
    in_flight_ -= static_cast<int64_t>(finished_.size());
    for (int64_t id : finished_) OnRequestDone(out_->requests[id]);
    StartStep();
  }

  // A request left the system (finished or rejected): free its client or
  // its concurrency slot.
  void OnRequestDone(const Request& r) {
    if (r.client >= 0) {
      events_.Push(now_ + FromSeconds(w_.think_time_s), EventKind::kClientSend,
                   r.client);
    } else if (!pending_.empty()) {
      const int64_t next = pending_.front();
      pending_.pop_front();
      Send(next);
    }
  }

  void Finish() {
    out_->end_time = now_;
    if (window_started_ && !window_closed_) out_->recorder.MarkWindowEnd(now_);
    out_->total_cost = replica_.total_cost();
    for (const Request& r : out_->requests) {
      if (!r.done()) ++out_->incomplete;
    }
    if (!out_->unstable && !w_.closed_loop) JudgeStability();
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
  Rng arrival_rng_, input_rng_, output_rng_;
  Replica replica_;
  EventQueue events_;
  std::deque<int64_t> pending_;  // waiting for a max_concurrency slot
  std::vector<int64_t> finished_;
  std::vector<int32_t> in_system_seen_;  // at each measured arrival
  SimTime now_ = 0;
  SimTime duration_ = kNever;
  int64_t created_ = 0;
  int64_t in_flight_ = 0;
  bool window_started_ = false, window_closed_ = false;
};

}  // namespace

SimulationOutput RunSimulation(const SimulationInput& input) {
  SimulationOutput out;
  Driver(input, &out).Run();
  return out;
}

}  // namespace servesim
