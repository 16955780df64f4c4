// The priority, edf and lpm policies step by step on tiny caches worked out
// by hand: which requests each step schedules, which it preempts, and how
// they differ from FCFS on the same steps. Block size 4, synchronous
// scheduling; a step's sampled tokens are committed before the next.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/cost/linear_cost_model.h"
#include "sim/engine/scheduler.h"
#include "sim/engine/vllm_replica.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

constexpr SimTime kMs = 1'000'000;

// One scheduler over a hand-made request table.
class Harness {
 public:
  Harness(const std::string& policy, int32_t usable_blocks, int32_t max_seqs = 8,
          int32_t budget = 64, bool prefix_caching = false) {
    EngineConfig c;
    c.block_size = 4;
    c.num_gpu_blocks = usable_blocks + Scheduler::kReservedBlocks;
    c.max_num_seqs = max_seqs;
    c.max_num_batched_tokens = budget;
    c.async_scheduling = false;
    c.decode_group = false;  // the batches list every sequence
    c.prefix_caching = prefix_caching;
    c.policy = policy;
    reqs_.reserve(1000);
    sched_ = std::make_unique<Scheduler>(c, MakeSchedulerPolicy(policy), &reqs_);
  }

  // A request sent at `send` ms, waiting from now on.
  int64_t Add(int32_t prompt, int32_t output, int32_t priority, double send_ms,
              double ttft_slo_ms = -1, PromptContent content = {}) {
    Request r;
    r.id = static_cast<int64_t>(reqs_.size());
    r.prompt_len = prompt;
    r.output_len = output;
    r.priority = priority;
    r.arrival = r.send = static_cast<SimTime>(send_ms * kMs);
    r.ttft_slo = ttft_slo_ms < 0 ? -1 : static_cast<SimTime>(ttft_slo_ms * kMs);
    r.content = content;
    r.content.stream_id = static_cast<uint64_t>(r.id) + 1000;
    reqs_.push_back(r);
    sched_->AddWaiting(r.id);
    return r.id;
  }

  // Schedules and commits one step; returns (id, tokens) in batch order.
  std::vector<std::pair<int64_t, int32_t>> Step() {
    StepPlan plan;
    sched_->Schedule(now_, &plan);
    const std::vector<ScheduledSeq>& batch = plan.batch;
    preempted_ = plan.preempted;
    now_ += kMs;
    std::vector<int64_t> finished;
    sched_->Commit(now_, batch, &recorder_, &finished);
    sched_->CheckInvariants();
    std::vector<std::pair<int64_t, int32_t>> out;
    for (const ScheduledSeq& s : batch) out.emplace_back(s.id, s.new_tokens);
    return out;
  }

  const std::vector<int64_t>& preempted() const { return preempted_; }
  const Request& req(int64_t id) const { return reqs_[id]; }
  const Scheduler& scheduler() const { return *sched_; }

 private:
  RequestTable reqs_;
  Recorder recorder_;
  std::unique_ptr<Scheduler> sched_;
  SimTime now_ = 0;
  std::vector<int64_t> preempted_;
};

using Batch = std::vector<std::pair<int64_t, int32_t>>;

// Waiting A (priority 1, sent 0), B (0, sent 1 ms), C (1, sent 2 ms), 8
// prompt tokens each, a 16-token budget: priority admits B then A (lower
// value first, then earlier arrival); FCFS admits A then B.
TEST(PriorityPolicy, AdmitsLowestValueThenEarliestArrival) {
  for (const std::string policy : {"priority", "fcfs"}) {
    Harness h(policy, 100, 8, 16);
    const int64_t a = h.Add(8, 4, 1, 0), b = h.Add(8, 4, 0, 1), c = h.Add(8, 4, 1, 2);
    (void)c;
    const Batch want = policy == "priority" ? Batch{{b, 8}, {a, 8}} : Batch{{a, 8}, {b, 8}};
    EXPECT_EQ(h.Step(), want) << policy;
  }
}

// Four usable blocks. X (priority 9) runs first; Y and Z (priority 0) join
// it. Step by step (tokens computed -> blocks held):
//  1: X prefill 4                    X 4 -> 1 block
//  2: X decode (5 -> 2 blocks), Y and Z prefill 4 (1 block each): 4 used
//  3: X decode fits its 2 blocks and is scheduled; Y needs a 2nd block, none
//     free. priority: the victim is max(running, (priority, arrival)) = X,
//     already scheduled: it is unscheduled (its token returns to the
//     budget) and preempted, Y takes a freed block, Z takes the other.
//     Batch [Y, Z]. FCFS: the victim is the newest, Z; batch [X, Y].
TEST(PriorityPolicy, PreemptsTheLowestPriorityEvenIfAlreadyScheduled) {
  for (const std::string policy : {"priority", "fcfs"}) {
    Harness h(policy, 4);
    const int64_t x = h.Add(4, 10, 9, 0);
    EXPECT_EQ(h.Step(), (Batch{{x, 4}}));
    const int64_t y = h.Add(4, 10, 0, 1), z = h.Add(4, 10, 0, 2);
    EXPECT_EQ(h.Step(), (Batch{{x, 1}, {y, 4}, {z, 4}}));
    EXPECT_EQ(h.scheduler().pool().num_free(), 0);
    const Batch step3 = h.Step();
    if (policy == "priority") {
      EXPECT_EQ(step3, (Batch{{y, 1}, {z, 1}}));
      EXPECT_EQ(h.preempted(), std::vector<int64_t>{x});
      EXPECT_EQ(h.req(x).status, RequestStatus::kWaiting);
      EXPECT_EQ(h.req(x).num_computed, 0);
      EXPECT_EQ(h.req(x).num_output, 2);  // its tokens of steps 1 and 2
      EXPECT_EQ(h.req(x).in_flight, 0);   // the unscheduled token is gone
    } else {
      EXPECT_EQ(step3, (Batch{{x, 1}, {y, 1}}));
      EXPECT_EQ(h.preempted(), std::vector<int64_t>{z});
    }
  }
}

// Running order [A (priority 0), B (5), C (1)], four blocks all used; B
// needs a second block. priority: the victim is B itself, and the pass goes
// on with C, whose block has room (vLLM 0.33.0 scheduler.py 982-992; its
// main branch once ended the pass there). FCFS: C (newest) is preempted and
// B runs.
//  1: A prefill 3              A 1 block
//  2: A decode (4, 1 block), B prefill 3 (1 block)
//  3: A decode (5 -> 2 blocks), B decode (4, 1 block), C prefill 3: 4 used
//  4: A decode fits; B needs a 2nd block ...
TEST(PriorityPolicy, SelfPreemptionGoesOnWithTheNextRequest) {
  for (const std::string policy : {"priority", "fcfs"}) {
    Harness h(policy, 4);
    const int64_t a = h.Add(3, 20, 0, 0);
    EXPECT_EQ(h.Step(), (Batch{{a, 3}}));
    const int64_t b = h.Add(3, 20, 5, 1);
    EXPECT_EQ(h.Step(), (Batch{{a, 1}, {b, 3}}));
    const int64_t c = h.Add(3, 20, 1, 2);
    EXPECT_EQ(h.Step(), (Batch{{a, 1}, {b, 1}, {c, 3}}));
    const Batch step4 = h.Step();
    if (policy == "priority") {
      EXPECT_EQ(step4, (Batch{{a, 1}, {c, 1}}));
      EXPECT_EQ(h.preempted(), std::vector<int64_t>{b});
      EXPECT_EQ(h.req(c).status, RequestStatus::kRunning);
    } else {
      EXPECT_EQ(step4, (Batch{{a, 1}, {b, 1}}));
      EXPECT_EQ(h.preempted(), std::vector<int64_t>{c});
    }
  }
}

// The first running request is the lowest priority and needs a block:
// it is its own victim, and the pass goes on with the next. Four
// blocks; A (priority 5) alone first, then B (priority 0), each 4 prompt
// and 8 output tokens (3 blocks at most: each fits alone, not both):
//  1: A prefill 4 (1 block)        2: A decode (2 blocks), B prefill 4
//  3: A 6, B 5 tokens (B 2 blocks: 4 used)   4, 5: both decode
//  6: A needs a 3rd block for its 9th token: victim max = A itself, then
//     B decodes in the same step (it used to be an empty step).
//  7: B decodes alone.
// Through a synchronous replica both finish (with the old empty step it
// once went idle with both unfinished).
TEST(PriorityPolicy, ASelfPreemptingFirstRequestLetsTheNextRun) {
  Harness h("priority", 4);
  const int64_t a = h.Add(4, 8, 5, 0);
  h.Step();
  const int64_t b = h.Add(4, 8, 0, 1);
  EXPECT_EQ(h.Step(), (Batch{{a, 1}, {b, 4}}));
  for (int step = 3; step <= 5; ++step) {
    EXPECT_EQ(h.Step(), (Batch{{a, 1}, {b, 1}})) << step;
  }
  EXPECT_EQ(h.Step(), (Batch{{b, 1}}));
  EXPECT_EQ(h.preempted(), std::vector<int64_t>{a});
  EXPECT_EQ(h.Step(), (Batch{{b, 1}}));

  // The same through a synchronous Replica: both finish.
  EngineConfig c;
  c.block_size = 4;
  c.num_gpu_blocks = 4 + Scheduler::kReservedBlocks;
  c.async_scheduling = false;
  c.policy = "priority";
  LinearParams lp;
  lp.step_s = 0.001;
  const LinearCostModel cost(lp);
  RequestTable reqs(2);
  Recorder recorder;
  VllmReplica replica(c, MakeSchedulerPolicy("priority"), &cost, &reqs, &recorder);
  for (int k = 0; k < 2; ++k) {
    reqs[k].id = k;
    reqs[k].prompt_len = 4;
    reqs[k].output_len = 8;  // 11 tokens cached at most: 3 blocks alone
    reqs[k].priority = k == 0 ? 5 : 0;
    reqs[k].arrival = reqs[k].send = k;
  }
  replica.Submit(0);
  SimTime end = replica.StartStep(0);
  std::vector<int64_t> finished;
  for (int step = 0; end >= 0 && step < 1000; ++step) {
    replica.FinishStep(end, &finished);
    if (step == 0) replica.Submit(1);
    end = replica.StartStep(end);
  }
  EXPECT_EQ(finished.size(), 2u);
  EXPECT_EQ(reqs[0].status, RequestStatus::kFinished);
  EXPECT_EQ(reqs[1].status, RequestStatus::kFinished);
  EXPECT_GE(reqs[0].preemptions, 1);
}

// Requests sent at one simulated instant with equal priority are ordered
// by creation (the order the engine receives them): the newest is the
// victim. Two such requests that cannot share the cache then finish one
// after the other; broken by running order (max() on exact ties) they
// preempted each other forever (the fuzzer's seed 2128).
TEST(PriorityPolicy, TiesAtOneInstantAreBrokenByCreationOrder) {
  const Scenario sc = testing::MustParse(testing::LinearScenario(
      R"("step_s": 0.001, "prefill_token_s": 0.00001, "decode_seq_s": 0.0001)",
      R"("arrival": {"process": "closed", "concurrency": 3},
         "input_len": {"dist": "fixed", "value": 1000},
         "output_len": {"dist": "fixed", "value": 9}, "num_requests": 6)",
      R"("num_gpu_blocks": 70, "max_num_seqs": 2, "reserve_full_prompt": false,
         "long_prefill_token_threshold": 16, "policy": "priority")"));
  SimulationOutput out;
  const RunSummary s = testing::RunScenario(sc, &out, /*check_invariants=*/true);
  EXPECT_EQ(s.completed, 6);
  EXPECT_GT(s.preemptions, 0);
  auto p = MakeSchedulerPolicy("priority");
  RequestTable t(3);
  for (int i = 0; i < 3; ++i) t[i].id = i;  // equal priority and send
  EXPECT_EQ(p->PickVictim({1, 0, 2}, 0, t), 2u);
  EXPECT_EQ(p->PickVictim({2, 0, 1}, 1, t), 0u);
}

// Common random numbers: the policy never moves the traffic. Under fcfs
// and priority every request has the same class, lengths and arrival.
TEST(PriorityPolicy, LeavesTheTrafficAsItIs) {
  auto run = [](const std::string& policy) {
    const Scenario sc = testing::MustParse(testing::LinearScenario(
        R"("step_s": 0.001, "prefill_token_s": 0.00001, "decode_seq_s": 0.0001)",
        R"("arrival": {"process": "poisson", "rate": 300}, "num_requests": 500,
           "classes": [
             {"name": "hi", "share": 1, "priority": 0,
              "input_len": {"dist": "uniform", "min": 10, "max": 200},
              "output_len": {"dist": "uniform", "min": 5, "max": 100}},
             {"name": "lo", "share": 2, "priority": 3,
              "input_len": {"dist": "uniform", "min": 100, "max": 900},
              "output_len": {"dist": "uniform", "min": 5, "max": 300}}])",
        R"("num_gpu_blocks": 200, "max_num_seqs": 32, "policy": ")" + policy + "\""));
    SimulationOutput out;
    const RunSummary s = testing::RunScenario(sc, &out, /*check_invariants=*/true);
    EXPECT_EQ(s.completed, 500) << policy;
    return out.requests;
  };
  const RequestTable a = run("fcfs"), b = run("priority");
  ASSERT_EQ(a.size(), b.size());
  int64_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].request_class, b[i].request_class) << i;
    ASSERT_EQ(a[i].arrival, b[i].arrival) << i;
    ASSERT_EQ(a[i].prompt_len, b[i].prompt_len) << i;
    ASSERT_EQ(a[i].output_len, b[i].output_len) << i;
    differ += a[i].first_token != b[i].first_token;
  }
  EXPECT_GT(differ, 0) << "the policies never differed: the test is vacuous";
}

// EDF: deadline = send + TTFT SLO. A (sent 0, SLO 1000 ms: deadline 1000),
// B (sent 1, SLO 10: deadline 11), N (sent 0, no SLO: after all), C (sent
// 2, SLO 9: deadline 11, later arrival than B). One slot per step: B, C,
// A, N in that order.
TEST(EdfPolicy, AdmitsEarliestTtftDeadlineFirst) {
  Harness h("edf", 100, 1);
  const int64_t a = h.Add(4, 1, 0, 0, 1000), b = h.Add(4, 1, 0, 1, 10);
  const int64_t n = h.Add(4, 1, 0, 0), c = h.Add(4, 1, 0, 2, 9);
  EXPECT_EQ(h.Step(), (Batch{{b, 4}}));
  EXPECT_EQ(h.Step(), (Batch{{c, 4}}));
  EXPECT_EQ(h.Step(), (Batch{{a, 4}}));
  EXPECT_EQ(h.Step(), (Batch{{n, 4}}));
}

// EDF preemption: as the priority test above, with X's deadline the
// latest (SLO 5000 ms) and Y's and Z's 100 ms: X, though scheduled, is the
// victim.
TEST(EdfPolicy, PreemptsTheLatestDeadline) {
  Harness h("edf", 4);
  const int64_t x = h.Add(4, 10, 0, 0, 5000);
  h.Step();
  const int64_t y = h.Add(4, 10, 0, 1, 100), z = h.Add(4, 10, 0, 2, 100);
  h.Step();
  EXPECT_EQ(h.Step(), (Batch{{y, 1}, {z, 1}}));
  EXPECT_EQ(h.preempted(), std::vector<int64_t>{x});
}

PromptContent Prefix(uint64_t id, int32_t len) {
  PromptContent c;
  c.prefix_id = id;
  c.prefix_len = len;
  return c;
}

// LPM with prefix caching: P (12-token prompt, an 8-token shared prefix)
// runs and finishes, leaving its blocks cached. Then U (no prefix, sent
// first) and S (P's prefix) wait, one slot per step: lpm admits S first
// (8 tokens matched, so it computes 4), FCFS admits U.
TEST(LpmPolicy, AdmitsTheLongestCachedPrefixFirst) {
  for (const std::string policy : {"lpm", "fcfs"}) {
    Harness h(policy, 100, 1, 64, /*prefix_caching=*/true);
    const int64_t p = h.Add(12, 1, 0, 0, -1, Prefix(42, 8));
    EXPECT_EQ(h.Step(), (Batch{{p, 12}}));
    const int64_t u = h.Add(12, 2, 0, 1);
    const int64_t s = h.Add(12, 2, 0, 2, -1, Prefix(42, 8));
    const Batch first = h.Step();
    if (policy == "lpm") {
      EXPECT_EQ(first, (Batch{{s, 4}}));
      EXPECT_EQ(h.req(s).cached_tokens, 8);
    } else {
      EXPECT_EQ(first, (Batch{{u, 12}}));
    }
  }
}

// In-batch prefix caching: D1 and D2 share a 40-token prefix that is not
// cached; E shares nothing. Queue [D1, D2, E], two slots: D2 matches at
// most 32 tokens of cache (0) and shares 40 >= 32 with D1 ahead of it, so
// it is sorted last: D1 and E run (one token each, so they finish), D2
// next step, hitting D1's 10 cached blocks.
TEST(LpmPolicy, DefersARequestSharingAPrefixWithOneAheadOfIt) {
  Harness h("lpm", 200, 2, 256, /*prefix_caching=*/true);
  const int64_t d1 = h.Add(44, 1, 0, 0, -1, Prefix(7, 40));
  const int64_t d2 = h.Add(44, 5, 0, 1, -1, Prefix(7, 40));
  const int64_t e = h.Add(44, 1, 0, 2);
  EXPECT_EQ(h.Step(), (Batch{{d1, 44}, {e, 44}}));
  EXPECT_EQ(h.Step(), (Batch{{d2, 4}}));
  EXPECT_EQ(h.req(d2).cached_tokens, 40);
}

// Policy level: the stable sort by match, and no sort beyond 128 waiting.
TEST(LpmPolicy, SortsByMatchStablyAndNotBeyond128Waiting) {
  const auto p = MakeSchedulerPolicy("lpm");
  ASSERT_TRUE(p->orders_waiting());
  RequestTable t;
  std::vector<int32_t> match;
  std::vector<uint64_t> hashes;  // none shared: every request its own
  auto probe = [&](int64_t id) {
    PrefixMatch m;
    m.cached_tokens = match[id];
    m.hashes = &hashes[id];
    m.num_hashes = 1;
    return m;
  };
  auto run = [&](size_t n) {
    match.clear();
    hashes.clear();
    std::deque<int64_t> q;
    for (size_t i = 0; i < n; ++i) {
      match.push_back(i % 3 == 0 ? 64 : (i % 3 == 1 ? 0 : 128));
      hashes.push_back(1000 + i);
      q.push_back(static_cast<int64_t>(i));
    }
    p->OrderWaiting(&q, t, probe, 16);
    return q;
  };
  const std::deque<int64_t> six = run(6);  // matches 64 0 128 64 0 128
  EXPECT_EQ(six, (std::deque<int64_t>{2, 5, 0, 3, 1, 4}));
  const std::deque<int64_t> many = run(129);
  for (size_t i = 0; i < many.size(); ++i) EXPECT_EQ(many[i], static_cast<int64_t>(i));
  const std::deque<int64_t> limit = run(128);
  EXPECT_EQ(limit.front(), 2);
}

// The in-batch check keeps one hash per request (block t - 1's, t blocks
// making the 32-token threshold) instead of every hash of every prompt: the
// same order as the check as first written (the run of leading blocks
// shared with any earlier request, every hash kept), on random queues of
// chained hashes (a hash names its whole prefix) with shared prefixes of
// every length and block sizes on both sides of the threshold.
TEST(LpmPolicy, OneHashPerRequestOrdersAsEveryHashDid) {
  const auto p = MakeSchedulerPolicy("lpm");
  std::mt19937_64 rng(7);
  RequestTable t;
  for (int trial = 0; trial < 400; ++trial) {
    const int32_t block_size = std::vector<int32_t>{1, 4, 8, 16, 32, 64}[rng() % 6];
    const size_t n = 2 + rng() % 40;
    // Each request: a family (shared leading blocks), how far it follows
    // it, then its own blocks; chained hashes.
    std::vector<std::vector<uint64_t>> chains(n);
    std::vector<int32_t> cached(n);
    for (size_t i = 0; i < n; ++i) {
      const uint64_t family = rng() % 4;
      const int32_t follow = static_cast<int32_t>(rng() % 8);
      const int32_t blocks = static_cast<int32_t>(rng() % 12);
      uint64_t h = 0x9e3779b97f4a7c15ULL;
      for (int32_t b = 0; b < blocks; ++b) {
        const uint64_t content = b < follow ? family * 1000 + b : (i + 1) * 1000003 + b;
        h = (h ^ content) * 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 29;
        chains[i].push_back(h);
      }
      cached[i] = rng() % 3 == 0 ? static_cast<int32_t>(rng() % 64) : 0;
    }
    auto probe = [&](int64_t id) {
      PrefixMatch m;
      m.cached_tokens = cached[id];
      m.hashes = chains[id].data();
      m.num_hashes = static_cast<int32_t>(chains[id].size());
      return m;
    };
    std::deque<int64_t> q;
    for (size_t i = 0; i < n; ++i) q.push_back(static_cast<int64_t>(i));
    // The check as first written.
    std::vector<std::pair<int64_t, int64_t>> keys;
    std::set<uint64_t> seen;
    for (int64_t id : q) {
      const PrefixMatch m = probe(id);
      int64_t key = -static_cast<int64_t>(m.cached_tokens);
      if (m.cached_tokens <= 32) {
        int32_t shared = 0;
        while (shared < m.num_hashes && seen.count(m.hashes[shared])) ++shared;
        if (shared * block_size >= 32) {
          key = INT64_MAX;
        } else {
          seen.insert(m.hashes, m.hashes + m.num_hashes);
        }
      }
      keys.emplace_back(key, id);
    }
    std::stable_sort(keys.begin(), keys.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::deque<int64_t> want;
    for (const auto& k : keys) want.push_back(k.second);
    p->OrderWaiting(&q, t, probe, block_size);
    ASSERT_EQ(q, want) << "trial " << trial << ", block size " << block_size;
  }
}

}  // namespace
}  // namespace servesim
