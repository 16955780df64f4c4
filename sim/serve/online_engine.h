// The online driver behind `servesim serve`: the same replicas, scheduler,
// cost model and router a `run` uses, fed with requests as they arrive over
// HTTP instead of from a workload, on a simulated clock tied to the wall
// clock (sim_time = wall time since start x time_scale).
//
// One engine thread owns the simulation. HTTP threads hand it requests
// through a bounded queue (Submit) and each waits on its own TokenStream,
// which the engine thread updates when the simulated step that produced a
// token ends (the thread sleeps until that step's end in wall time). A
// request is never lost: it is either refused at Submit, or it ends in its
// TokenStream as done (finished, rejected by the engine, aborted because
// its client went away, or cut off at shutdown with an error). Each
// replica may have its own port (HttpOptions::replica): then its requests
// skip the router and it keeps its own metrics (per_replica_metrics).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sim/core/rng.h"
#include "sim/engine/block_hashing.h"
#include "sim/engine/replica.h"
#include "sim/engine/simulation.h"
#include "sim/serve/prometheus.h"

namespace servesim {

// One HTTP request's view of its engine request. Written by the engine
// thread, read by the request's HTTP thread, both under `mu`.
struct TokenStream {
  std::mutex mu;
  std::condition_variable cv;
  int64_t id = -1;          // the engine's request id (set at admission)
  int32_t prompt_len = 0;
  int32_t output_len = 0;   // tokens it will generate
  int32_t max_tokens = 0;   // the cap it was given (0: none; set by the sender)
  int32_t released = 0;     // tokens whose step has ended
  SimTime arrival = -1;     // simulated time it reached the engine
  int32_t cached_tokens = 0;  // prompt tokens served from the prefix cache
  bool done = false;        // no more tokens will come
  bool rejected = false;    // with done: the engine can never serve it
  std::string error;        // set with done when it was not served in full
};

struct OnlineOptions {
  double time_scale = 1;      // simulated seconds per wall second
  int32_t max_requests = 4096;  // in the server at once; more: refused
  // Full KV/scheduler checks after every step and the step records the
  // run-level invariants need at shutdown (tests; the records grow with
  // the run).
  bool check_invariants = false;
  // Warn on stderr when the engine falls this far behind the wall clock
  // (wall seconds): the machine cannot keep up with the time scale.
  double lag_warning_s = 0.05;
  // Keep each replica's metrics too (Snapshot(k)): `serve --replica-ports`
  // gives each replica its own port and /metrics, as one `vllm serve` each.
  bool per_replica_metrics = false;
};

class OnlineEngine {
 public:
  // `in`: the scenario's simulation input (its workload is not used, but
  // for the output-length distribution). Disaggregated deployments and the
  // frontend model are not supported (CheckOnlineInput). What `in` points
  // to (the scenario's cost model) must outlive the engine.
  OnlineEngine(SimulationInput in, OnlineOptions options);
  ~OnlineEngine();
  OnlineEngine(const OnlineEngine&) = delete;
  OnlineEngine& operator=(const OnlineEngine&) = delete;

  // Why `in` cannot be served online, or "".
  static std::string CheckOnlineInput(const SimulationInput& in);

  void Start();

  enum class SubmitResult { kAccepted, kFull, kStopping };
  // From any thread. The engine draws the output length: max_tokens when
  // ignore_eos, else from the scenario's output-length distribution,
  // clamped to [min_tokens, max_tokens] (max_tokens 0: no cap).
  // `replica`: -1, the scenario's router picks; else that replica takes it
  // (its own port, behind an external router).
  SubmitResult Submit(int32_t prompt_len, std::vector<uint64_t> block_hashes,
                      int32_t max_tokens, int32_t min_tokens, bool ignore_eos,
                      std::shared_ptr<TokenStream> stream, int32_t replica = -1);

  // From any thread: the client of `stream` went away (it disconnected or
  // its request timed out). The engine aborts its request at the simulated
  // time it handles this (vLLM: at once, its KV freed; SGLang: at its next
  // result) and ends the stream with an error. Nothing if it already ended.
  void Abort(std::shared_ptr<TokenStream> stream);

  // Stops taking requests, lets those inside finish for up to drain_s wall
  // seconds, ends the rest with an error, and joins the engine thread.
  // Idempotent.
  void Shutdown(double drain_s);
  bool stopping() const { return stopping_.load(); }

  // What /metrics shows, as of the engine's last update: the fleet's, or
  // (per_replica_metrics) replica k's own.
  MetricsSnapshot Snapshot(int32_t replica = -1) const;
  int32_t num_replicas() const { return static_cast<int32_t>(replicas_.size()); }

  double time_scale() const { return options_.time_scale; }
  // The simulated time now (from the wall clock).
  SimTime SimNow() const;

  // After Shutdown: the run, as `run` would report it (requests, steps with
  // check_invariants, recorder, per-replica stats).
  const SimulationInput& input() const { return in_; }
  const SimulationOutput& output() const { return out_; }
  // After Shutdown, with check_invariants: request id's token times, the
  // simulated end of the step that made each (tests compare clients' times
  // with them).
  const std::vector<SimTime>& TokenTimes(int64_t id) const { return token_times_[id]; }
  // After Shutdown: the run-level invariants (run_invariants.h) on it, one
  // line per violation. Needs check_invariants (the step records).
  std::vector<std::string> CheckInvariants() const;

 private:
  struct Pending {
    SimTime at = 0;  // simulated time it reached the engine's queue
    int32_t prompt_len = 0, max_tokens = 0, min_tokens = 0;
    bool ignore_eos = false;
    int32_t replica = -1;  // -1: routed
    std::vector<uint64_t> block_hashes;
    std::shared_ptr<TokenStream> stream;
  };
  struct Active {
    int64_t id;
    std::shared_ptr<TokenStream> stream;
    int32_t max_tokens = 0;
    int32_t released = 0;
    SimTime last_token = -1;
    bool counted_cache = false;
  };
  // A change to a stream, applied after the snapshot that counts it is
  // published (a client that reads its last token and then scrapes
  // /metrics sees the request counted).
  struct Update {
    std::shared_ptr<TokenStream> stream;
    const Request* request;
    int32_t released;
    SimTime token_time;
    bool done, rejected;
    std::string error;
  };

  void Loop();
  SimTime NextWake() const;
  void RunUntil(SimTime t);
  void Admit(Pending p);
  void OnStepDone(size_t k);
  void StartStep(size_t k);
  void SyncLevels();
  size_t Route(Request& r);
  void Release(Active& a, const Request& r);
  // Books a change to the metrics: the fleet's, and replica k's own when
  // they are kept (k < 0: the fleet's only).
  template <typename F>
  void Book(int32_t k, F f) {
    f(live_);
    if (k >= 0 && !live_by_.empty()) f(live_by_[static_cast<size_t>(k)]);
  }
  void AbortStream(const std::shared_ptr<TokenStream>& stream);
  // A request of replica k's active list ended (finished or aborted at
  // now_): it leaves the engine's counts and the list (index i), and its
  // stream ends.
  void Retire(size_t k, size_t i);
  void EndStream(Active& a, const std::string& error, bool rejected = false);
  // Publishes the snapshot, then applies the staged stream updates.
  void Deliver();
  void PublishSnapshot();
  void Finish();
  std::chrono::steady_clock::time_point WallOf(SimTime t) const;

  SimulationInput in_;
  OnlineOptions options_;
  SimulationOutput out_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  Rng route_rng_, length_rng_;
  std::unique_ptr<Router> router_;
  PrefixHashMemo route_hashes_;
  std::vector<ReplicaLoad> loads_;
  std::vector<int64_t> outstanding_;
  std::vector<SimTime> wake_;                 // per replica; kNever: idle
  std::vector<std::vector<Active>> active_;   // per replica
  std::vector<int64_t> finished_;
  std::vector<Update> updates_;
  std::vector<std::vector<SimTime>> token_times_;  // by id, check_invariants only
  SimTime now_ = 0;
  bool window_started_ = false;
  int64_t in_engine_ = 0;  // admitted, not done (engine thread)

  std::chrono::steady_clock::time_point start_;
  std::thread thread_;
  mutable std::mutex mu_;  // guards queue_, aborts_, inside_, stop_, drain_until_, snapshot_
  std::condition_variable cv_;
  std::vector<Pending> queue_;
  std::vector<std::shared_ptr<TokenStream>> aborts_;  // handled after queue_
  int64_t inside_ = 0;  // submitted and not done
  bool stop_ = false;
  std::chrono::steady_clock::time_point drain_until_;
  std::atomic<bool> stopping_{false};
  MetricsSnapshot snapshot_;  // published copy
  MetricsSnapshot live_;      // the engine thread's
  // per_replica_metrics: each replica's, live and published.
  std::vector<MetricsSnapshot> live_by_, snapshot_by_;
  std::chrono::steady_clock::time_point last_lag_warning_{};
};

}  // namespace servesim
