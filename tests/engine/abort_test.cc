// A request whose client went away (servesim serve), through each engine's
// replica, step by step: vLLM ends it at once (out of the waiting queue or
// the running set, its blocks freed, a token in flight dropped); SGLang
// drops a waiting one at once and ends a running one at its next result.
// The served runs with random aborts under the run-level invariants are in
// tests/serve/serve_abort_test.cc.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/engine/replica.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

// Two requests of 64 prompt and 50 output tokens, one replica of the
// engine `engine` (JSON), linear costs (a step is 4 ms and up).
struct Rig {
  Scenario sc;
  SimulationInput in;
  RequestTable reqs;
  Recorder recorder;
  std::vector<StepRecord> steps;
  std::unique_ptr<Replica> replica;
  std::vector<int64_t> finished;
  SimTime now = 0;

  explicit Rig(const std::string& engine)
      : sc(testing::MustParse(R"({"model": "llama-3.1-8b", "hardware": {"gpu": "h200"},
            "cost_model": {"type": "linear", "step_s": 0.004, "prefill_token_s": 0.00001,
                           "decode_seq_s": 0.0001},
            "engine": {)" + engine + R"(},
            "workload": {"arrival": {"process": "poisson", "rate": 1}, "num_requests": 2,
                         "input_len": {"dist": "fixed", "value": 64},
                         "output_len": {"dist": "fixed", "value": 50}}})")),
        in(sc.ToSimulationInput()) {
    replica = MakeReplica(in.engine, in.cost_model, &reqs, &recorder);
    replica->set_step_sink(&steps, 0);
    replica->set_check_invariants(true);
    replica->RequireExactCounters();
  }
  int64_t Add() {
    Request& r = reqs.emplace_back();
    r.id = static_cast<int64_t>(reqs.size()) - 1;
    r.prompt_len = 64;
    r.output_len = 50;
    r.content.stream_id = static_cast<uint64_t>(r.id) + 1;
    r.content.shared_stream = true;  // another request may send it again
    r.arrival = r.send = r.engine_arrival = now;
    replica->Submit(r.id);
    return r.id;
  }
  // Runs the engine loop until `steps` more steps have been committed (or it
  // goes idle).
  void Run(int n) {
    SimTime end = replica->busy() ? wake : replica->StartStep(now);
    for (int i = 0; i < n && end >= 0; ++i) {
      now = end;
      replica->FinishStep(now, &finished);
      end = replica->StartStep(now);
    }
    wake = end;
  }
  void Abort(int64_t id) {
    reqs[id].abort_at = now;
    replica->Abort(now, id);
  }
  SimTime wake = -1;
};

TEST(VllmAbort, ARunningRequestLeavesAtOnceItsBlocksFreed) {
  Rig rig(R"("async_scheduling": false)");
  const int64_t a = rig.Add(), b = rig.Add();
  rig.Run(5);
  const Request& ra = rig.reqs[a];
  ASSERT_EQ(ra.status, RequestStatus::kRunning);
  const int32_t tokens = ra.num_output;
  ASSERT_GT(tokens, 0);
  const int64_t used = rig.replica->levels().kv_blocks_used;
  const int64_t held = ra.blocks.size();
  ASSERT_GT(held, 0);
  rig.Abort(a);
  EXPECT_EQ(ra.status, RequestStatus::kAborted);
  EXPECT_EQ(ra.finish, rig.now);
  EXPECT_TRUE(ra.blocks.empty());
  EXPECT_EQ(rig.replica->levels().kv_blocks_used, used - held);
  EXPECT_EQ(rig.replica->levels().running, 1);
  const size_t before = rig.steps.size();
  rig.Run(1000);
  EXPECT_EQ(ra.num_output, tokens);  // nothing more for it
  EXPECT_EQ(rig.reqs[b].status, RequestStatus::kFinished);
  for (size_t i = before; i < rig.steps.size(); ++i) EXPECT_LE(rig.steps[i].num_seqs, 1) << i;
  EXPECT_EQ(rig.replica->levels().kv_blocks_used, 0);
  // Aborting it again, or a finished request, changes nothing.
  rig.Abort(a);
  rig.Abort(b);
  EXPECT_EQ(ra.status, RequestStatus::kAborted);
  EXPECT_EQ(rig.reqs[b].status, RequestStatus::kFinished);
}

// Async scheduling: the step in flight still computes its token, and its
// output is dropped when the step ends.
TEST(VllmAbort, ATokenInFlightIsDroppedUnderAsyncScheduling) {
  Rig rig(R"("async_scheduling": true)");
  const int64_t a = rig.Add();
  rig.Add();
  rig.Run(4);
  const Request& ra = rig.reqs[a];
  ASSERT_EQ(ra.status, RequestStatus::kRunning);
  ASSERT_GT(ra.in_flight, 0);  // the next steps are already scheduled
  const int32_t tokens = ra.num_output;
  rig.Abort(a);
  EXPECT_EQ(ra.status, RequestStatus::kAborted);
  EXPECT_TRUE(ra.blocks.empty());
  rig.Run(1000);
  EXPECT_EQ(ra.num_output, tokens);
  EXPECT_EQ(ra.in_flight, 0);  // the steps that named it were committed
  EXPECT_EQ(rig.replica->levels().kv_blocks_used, 0);
}

TEST(VllmAbort, AWaitingRequestIsNeverScheduled) {
  Rig rig(R"("max_num_seqs": 1)");
  rig.Add();
  const int64_t b = rig.Add();
  rig.Run(3);
  ASSERT_EQ(rig.reqs[b].status, RequestStatus::kWaiting);
  rig.Abort(b);
  EXPECT_EQ(rig.reqs[b].status, RequestStatus::kAborted);
  EXPECT_EQ(rig.replica->levels().waiting, 0);
  rig.Run(1000);
  EXPECT_EQ(rig.reqs[b].first_scheduled, -1);
  EXPECT_EQ(rig.reqs[b].num_output, 0);
  EXPECT_EQ(rig.reqs[0].status, RequestStatus::kFinished);
}

// Prefix caching: an aborted request's registered blocks stay cached, as
// a finished one's do, so the same prompt sent again hits them.
TEST(VllmAbort, AnAbortedPromptStaysInThePrefixCache) {
  Rig rig(R"("prefix_caching": true, "async_scheduling": false)");
  const int64_t a = rig.Add();
  rig.Run(3);
  rig.Abort(a);
  EXPECT_GT(rig.replica->levels().kv_blocks_cached, 0);
  Request& again = rig.reqs.emplace_back();
  again.id = 1;
  again.prompt_len = 64;
  again.output_len = 5;
  again.content.stream_id = 1;  // request a's prompt
  again.content.shared_stream = true;
  again.arrival = again.send = again.engine_arrival = rig.now;
  rig.replica->Submit(1);
  rig.Run(1000);
  EXPECT_EQ(again.status, RequestStatus::kFinished);
  EXPECT_EQ(again.cached_tokens, 48);  // 3 full blocks; the last is recomputed
}

TEST(SglangAbort, ARunningRequestEndsAtItsNextResultAWaitingOneAtOnce) {
  for (const bool overlap : {false, true}) {
    SCOPED_TRACE(overlap ? "overlap loop" : "normal loop");
    Rig rig(std::string(R"("kind": "sglang", "sglang": {"max_running_requests": 1,
                             "disable_overlap_schedule": )") +
            (overlap ? "false" : "true") + "}");
    const int64_t a = rig.Add(), b = rig.Add();
    rig.Run(4);
    const Request& ra = rig.reqs[a];
    ASSERT_EQ(ra.status, RequestStatus::kRunning);
    ASSERT_EQ(rig.reqs[b].status, RequestStatus::kWaiting);
    rig.Abort(b);  // waiting: at once
    EXPECT_EQ(rig.reqs[b].status, RequestStatus::kAborted);
    EXPECT_EQ(rig.reqs[b].finish, rig.now);
    EXPECT_EQ(rig.replica->levels().waiting, 0);
    const int32_t tokens = ra.num_output;
    rig.Abort(a);  // running: at its next result
    EXPECT_EQ(ra.status, RequestStatus::kRunning);
    rig.Run(1);
    EXPECT_EQ(ra.status, RequestStatus::kAborted);
    EXPECT_EQ(ra.num_output, tokens + 1);
    EXPECT_EQ(ra.finish, rig.now);
    ASSERT_EQ(rig.finished.size(), 1u);
    EXPECT_EQ(rig.finished[0], a);
    rig.Run(1000);
    EXPECT_EQ(ra.num_output, tokens + 1);
    EXPECT_EQ(rig.reqs[b].first_scheduled, -1);
    EXPECT_FALSE(rig.replica->busy());
  }
}

}  // namespace
}  // namespace servesim
