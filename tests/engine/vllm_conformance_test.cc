// Step-for-step conformance with vLLM's own scheduler. Every fixture in
// tests/conformance/fixtures/ is a golden trace recorded by driving the real
// vLLM v1 scheduler (tools/vllm_conformance/, version below) over a
// workload; here the same workload runs through servesim's Replica under the
// same time model (every non-empty batch takes 1000 us; arrivals join before
// the next schedule at or after their time) and every step must match:
// tokens scheduled per request, requests preempted, requests finished and
// when, and per request the cached prompt tokens, first step, first-token
// and finish times and preemption count.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "sim/core/paths.h"
#include "sim/cost/linear_cost_model.h"
#include "sim/engine/vllm_replica.h"
#include "sim/engine/scheduler_policy.h"
#include "tests/engine/fixture_files.h"

namespace servesim {
namespace {

using nlohmann::json;

constexpr const char* kConformingVllm = "0.33.0";
constexpr SimTime kUs = 1000;  // ns per us

std::string FixtureDir() { return RepoRoot() + "/tests/conformance/fixtures"; }

std::vector<std::string> FixtureNames() { return FixtureNamesIn(FixtureDir()); }

json Load(const std::string& name) { return LoadFixture(FixtureDir(), name); }

// One step as recorded: schedule time, [id, tokens] sorted by id, preempted
// ids, finished ids, update time.
struct Step {
  int64_t sched_us = -1;
  std::vector<std::pair<int64_t, int32_t>> scheduled;
  std::vector<int64_t> preempted, finished;
  int64_t update_us = -1;
};

std::string Describe(const Step& s) {
  std::ostringstream os;
  os << "t=" << s.sched_us << " sched [";
  for (auto [id, n] : s.scheduled) os << id << ":" << n << " ";
  os << "] preempted [";
  for (int64_t id : s.preempted) os << id << " ";
  os << "] finished [";
  for (int64_t id : s.finished) os << id << " ";
  os << "] at " << s.update_us;
  return os.str();
}

bool operator==(const Step& a, const Step& b) {
  return a.sched_us == b.sched_us && a.scheduled == b.scheduled &&
         a.preempted == b.preempted && a.finished == b.finished &&
         a.update_us == b.update_us;
}

EngineConfig EngineOf(const json& f) {
  const json& e = f["engine"];
  const json& v = f["vllm_settings"];
  EngineConfig c;
  c.block_size = e["block_size"];
  c.num_gpu_blocks = e["num_gpu_blocks"];
  c.max_num_seqs = e["max_num_seqs"];
  c.max_num_batched_tokens = e["max_num_batched_tokens"];
  c.chunked_prefill = e["chunked_prefill"];
  c.prefix_caching = e["prefix_caching"];
  c.async_scheduling = e["async_scheduling"];
  c.reserve_full_prompt = v["scheduler_reserve_full_isl"];
  c.long_prefill_token_threshold = v["long_prefill_token_threshold"];
  c.watermark = v["watermark"];
  c.policy = v["policy"];
  return c;
}

// Replays fixture `f` through a Replica exactly as the recording driver
// drove vLLM; fills the steps and the request table.
std::vector<Step> Replay(const json& f, RequestTable* reqs) {
  const EngineConfig config = EngineOf(f);
  for (const json& q : f["requests"]) {
    Request r;
    r.id = q[0];
    r.arrival = q[1].get<int64_t>() * kUs;
    r.prompt_len = q[2];
    r.output_len = q[3];
    const int64_t group = q[4];
    const int32_t prefix_len = q[5];
    if (group >= 0 && prefix_len > 0) {
      r.content.prefix_id = static_cast<uint64_t>(group) + 1;
      r.content.prefix_len = prefix_len;
    }
    r.content.stream_id = static_cast<uint64_t>(r.id) + 1;
    if (q.size() > 6) r.priority = q[6];  // the priority fixtures' seventh field
    if (r.id != static_cast<int64_t>(reqs->size())) {
      ADD_FAILURE() << "request ids must be 0..n-1 in order";
      return {};
    }
    reqs->push_back(std::move(r));
  }
  std::vector<int64_t> order(reqs->size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return (*reqs)[a].arrival < (*reqs)[b].arrival;
  });

  LinearParams p;
  p.step_s = 0.001;  // 1000 us per non-empty batch, nothing else
  LinearCostModel cost(p);
  Recorder recorder;
  VllmReplica replica(config, MakeSchedulerPolicy(config.policy), &cost, reqs,
                  &recorder);
  std::vector<Step> steps;
  std::deque<size_t> uncommitted;  // step indices, oldest first
  replica.set_schedule_observer(
      [&](SimTime now, const StepPlan& plan) {
        const std::vector<ScheduledSeq>& batch = plan.batch;
        Step s;
        s.sched_us = now / kUs;
        for (const ScheduledSeq& q : batch) s.scheduled.push_back({q.id, q.new_tokens});
        std::sort(s.scheduled.begin(), s.scheduled.end());
        s.preempted = plan.preempted;
        std::sort(s.preempted.begin(), s.preempted.end());
        if (batch.empty() && !config.async_scheduling) {
          s.update_us = s.sched_us;  // sync: an empty step commits at once
        } else {
          uncommitted.push_back(steps.size());
        }
        steps.push_back(std::move(s));
      });

  size_t next = 0;
  auto submit_until = [&](SimTime t) {
    while (next < order.size() && (*reqs)[order[next]].arrival <= t) {
      Request& r = (*reqs)[order[next++]];
      r.send = r.arrival;
      replica.Submit(r.id);
    }
  };
  SimTime t = 0;
  SimTime wake = -1;
  std::vector<int64_t> finished;
  for (int guard = 0; guard < 10'000'000; ++guard) {
    if (wake >= 0) {
      t = wake;
      finished.clear();
      replica.FinishStep(t, &finished);
      if (uncommitted.empty()) {
        ADD_FAILURE() << "a step was committed that was never scheduled";
        return steps;
      }
      Step& s = steps[uncommitted.front()];
      uncommitted.pop_front();
      s.update_us = t / kUs;
      s.finished = finished;
      std::sort(s.finished.begin(), s.finished.end());
    }
    submit_until(t);
    wake = replica.StartStep(t);
    if (wake < 0) {
      if (next == order.size()) return steps;
      t = std::max(t, (*reqs)[order[next]].arrival);
    }
  }
  ADD_FAILURE() << "replay did not end";
  return steps;
}

std::vector<Step> Recorded(const json& f) {
  std::vector<Step> steps;
  for (const json& j : f["steps"]) {
    Step s;
    s.sched_us = j[0];
    for (const json& q : j[1]) s.scheduled.push_back({q[0], q[1]});
    s.preempted = j[2].get<std::vector<int64_t>>();
    s.finished = j[3].get<std::vector<int64_t>>();
    s.update_us = j[4];
    steps.push_back(std::move(s));
  }
  return steps;
}

class VllmConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(VllmConformance, EveryStepMatchesTheRealScheduler) {
  const json f = Load(GetParam());
  ASSERT_EQ(f["vllm_version"], kConformingVllm)
      << "fixture recorded with another vLLM; regenerate (tools/vllm_conformance)";
  RequestTable reqs;
  const std::vector<Step> got = Replay(f, &reqs);
  const std::vector<Step> want = Recorded(f);
  const size_t n = std::min(got.size(), want.size());
  for (size_t k = 0; k < n; ++k) {
    ASSERT_TRUE(got[k] == want[k])
        << GetParam() << ": step " << k << " of " << want.size()
        << " differs\n  vLLM:     " << Describe(want[k])
        << "\n  servesim: " << Describe(got[k])
        << (k > 0 ? "\n  previous: " + Describe(want[k - 1]) : "");
  }
  ASSERT_EQ(got.size(), want.size()) << GetParam() << ": step count differs";

  std::map<int64_t, int64_t> first_step;
  for (size_t k = 0; k < got.size(); ++k) {
    for (auto [id, n_tokens] : got[k].scheduled) first_step.emplace(id, k);
  }
  for (const json& q : f["results"]) {
    const Request& r = reqs[q[0].get<int64_t>()];
    SCOPED_TRACE(GetParam() + ": request " + std::to_string(r.id));
    EXPECT_EQ(r.status, RequestStatus::kFinished);
    EXPECT_EQ(r.num_output, r.output_len);
    EXPECT_EQ(r.cached_tokens, q[1].get<int32_t>());
    EXPECT_EQ(first_step[r.id], q[2].get<int64_t>());
    EXPECT_EQ(r.first_token / kUs, q[3].get<int64_t>());
    EXPECT_EQ(r.finish / kUs, q[4].get<int64_t>());
    EXPECT_EQ(r.preemptions, q[5].get<int32_t>());
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, VllmConformance,
                         ::testing::ValuesIn(FixtureNames()),
                         [](const auto& info) { return info.param; });

// The suite is only as strong as its fixtures: enough of them, enough
// steps, enough preemption (issue: >= 20 fixtures, >= 40,000 steps, half
// with preemption).
TEST(VllmConformanceFixtures, CoverEnoughStepsAndPreemption) {
  size_t fixtures = 0, steps = 0, with_preemption = 0;
  for (const std::string& name : FixtureNames()) {
    const json f = Load(name);
    ++fixtures;
    steps += f["steps"].size();
    bool preempts = false;
    for (const json& s : f["steps"]) preempts |= !s[2].empty();
    with_preemption += preempts;
  }
  EXPECT_GE(fixtures, 20u);
  EXPECT_GE(steps, 40000u);
  EXPECT_GE(2 * with_preemption, fixtures);
}

}  // namespace
}  // namespace servesim
