// A JSONL trace's per-request priority reaches the engine: under
// engine.policy priority the waiting requests are served lowest priority
// first (ties by arrival), under fcfs in arrival order; the run reports how
// many records gave one, and says so when the policy does not use it.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "sim/engine/run_invariants.h"
#include "tests/test_util.h"
#include "tests/workload/trace_test_util.h"

namespace servesim {
namespace {

using testing::LinearScenario;
using testing::MustParse;
using testing::RunScenario;
using testing::WriteTraceFile;

// One sequence at a time. Request 0 (priority 5) runs from 0 s for 40
// tokens; 1 (priority 0), 2 (priority 2) and 3 (none given: vLLM's 0)
// arrive while it runs and wait.
std::string PriorityTrace() {
  return WriteTraceFile("p_replay.jsonl",
      R"({"timestamp": 0.000, "prompt_tokens": 16, "completion_tokens": 40, "priority": 5}
{"timestamp": 0.001, "prompt_tokens": 16, "completion_tokens": 4, "priority": 0}
{"timestamp": 0.002, "prompt_tokens": 16, "completion_tokens": 4, "priority": 2}
{"timestamp": 0.003, "prompt_tokens": 16, "completion_tokens": 4}
)");
}

std::vector<int64_t> ServiceOrder(const std::string& policy, Scenario* keep) {
  const Scenario sc = MustParse(LinearScenario(
      R"("step_s": 0.001, "prefill_token_s": 0.0001, "decode_seq_s": 0.0005)",
      R"("trace": {"path": ")" + PriorityTrace() + R"(", "format": "jsonl"})",
      R"("max_num_seqs": 1, "prefix_caching": false, "async_scheduling": false,
         "policy": ")" + policy + "\""));
  SimulationOutput out;
  RunScenario(sc, &out, /*check_invariants=*/true);
  std::vector<int64_t> order(out.requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return out.requests[a].first_scheduled < out.requests[b].first_scheduled;
  });
  *keep = sc;
  return order;
}

TEST(TracePriority, PriorityPolicyServesLowestFirstFcfsIgnoresIt) {
  Scenario sc;
  EXPECT_EQ(ServiceOrder("priority", &sc), (std::vector<int64_t>{0, 1, 3, 2}));
  EXPECT_EQ(sc.trace_notes.priority_records, 3);
  EXPECT_NE(sc.TraceSkipNote().find("3 records give a priority"), std::string::npos)
      << sc.TraceSkipNote();
  EXPECT_EQ(sc.TraceSkipNote().find("unused"), std::string::npos);

  EXPECT_EQ(ServiceOrder("fcfs", &sc), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_NE(sc.TraceSkipNote().find(
                "3 records give a priority (unused: policy fcfs does not order by it)"),
            std::string::npos)
      << sc.TraceSkipNote();
}

}  // namespace
}  // namespace servesim
