// The decode group's speculative modes (spec_group.h) against the reference
// engine (every sequence one by one), scheduler against scheduler in
// lockstep: the same requests arriving at the same steps, the same step
// times. Every step must build the same work (tokens, finishes, the draft
// proposer's inputs, the cost model's shape: verify entries in the same
// order -- or, where runs are priced, the same runs -- decodes as the same
// count and context sum) and commit the same finishes; at the end every
// request's counters and the ITL samples agree. Tight budgets, caps and
// caches make the group leave and rejoin; long outputs keep members over
// many of the calendar's epochs.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/scheduler.h"
#include "sim/engine/spec_calendar_group.h"

namespace servesim {
namespace {

struct Variant {
  const char* name;
  int32_t gpu_blocks;
  int32_t batched_tokens;
  int32_t long_prefill;
  int32_t drafts;
  bool runs = false;  // runs priced: the calendar (or, capped, entries' runs)
  int32_t block_size = 4;
  int32_t max_output = 40;
};

EngineConfig Config(const Variant& v, bool reference) {
  EngineConfig c;
  c.block_size = v.block_size;
  c.verify_runs = v.runs;
  c.num_gpu_blocks = v.gpu_blocks;
  c.max_num_seqs = 16;
  c.max_num_batched_tokens = v.batched_tokens;
  c.long_prefill_token_threshold = v.long_prefill;
  c.async_scheduling = false;  // as speculative decoding requires
  c.spec.num_speculative_tokens = v.drafts;
  c.spec.acceptance_rate = 0.6;
  c.spec.seed = 7;
  c.reference_engine = reference;
  return c;
}

// The shape as the cost model reads it: entries that are not plain decodes
// in order, plain decodes as a count and a context sum. Where runs are
// priced, sampling entries of 2 .. k + 1 tokens (verifies, and prefills
// that look the same to the cost model) and runs as counts and context
// sums by token count.
struct CanonicalShape {
  std::vector<std::vector<int32_t>> others;
  int64_t decodes = 0, decode_context = 0;
  std::vector<int64_t> run_count, run_context;
  bool operator==(const CanonicalShape&) const = default;
};

CanonicalShape Canonical(const BatchShape& s, const Variant& v) {
  CanonicalShape c;
  c.decodes = s.decode_seqs;
  c.decode_context = s.decode_context;
  if (v.runs) {
    c.run_count.assign(v.drafts + 2, 0);
    c.run_context.assign(v.drafts + 2, 0);
  }
  for (const SeqWork& q : s.seqs) {
    if (IsDecode(q)) {
      ++c.decodes;
      c.decode_context += q.context_tokens;
    } else if (v.runs && q.samples && q.new_tokens <= v.drafts + 1) {
      ++c.run_count[q.new_tokens];
      c.run_context[q.new_tokens] += q.context_tokens;
    } else {
      c.others.push_back({q.new_tokens, q.context_tokens, q.samples});
    }
  }
  for (const SeqRun& r : s.runs) {
    EXPECT_TRUE(v.runs && r.new_tokens >= 2 && r.new_tokens <= v.drafts + 1) << v.name;
    if (!v.runs || r.new_tokens < 2 || r.new_tokens > v.drafts + 1) continue;
    c.run_count[r.new_tokens] += r.count;
    c.run_context[r.new_tokens] += r.context_sum;
  }
  return c;
}

// One engine under test: its requests, scheduler and recorder.
struct Engine {
  Engine(const Variant& v, bool reference)
      : sched(Config(v, reference), MakeSchedulerPolicy("fcfs"), &reqs) {}
  RequestTable reqs;
  Scheduler sched;
  Recorder recorder;
  StepPlan plan;
  std::vector<int64_t> finished;
};

void AddRequest(Engine* e, int64_t id, int32_t prompt, int32_t output) {
  Request r;
  r.id = id;
  r.prompt_len = prompt;
  r.output_len = output;
  r.measured = id % 5 != 0;  // some warm-up requests: their gaps do not count
  e->reqs.push_back(r);
  e->sched.AddWaiting(id);
}

// Runs both engines step by step; counts the fast engine's steps that had
// the group's entry. stop_at > 0: returns with the group's stop_at-th step
// scheduled, not committed (a run that stops early).
void RunLockstep(const Variant& v, Engine* fast, Engine* ref, int* group_steps,
                 int stop_at = 0) {
  uint64_t lcg = 12345;
  const auto next = [&](int32_t n) {
    lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int32_t>((lcg >> 33) % static_cast<uint64_t>(n));
  };
  constexpr int64_t kRequests = 60;
  int64_t added = 0;
  for (int step = 0; step < 5000; ++step) {
    // Arrivals: a few every other step until all are in.
    for (int k = 0; k < 2 && added < kRequests && step % 2 == 0; ++k, ++added) {
      const int32_t prompt = 1 + next(30), output = 1 + next(v.max_output);
      AddRequest(fast, added, prompt, output);
      AddRequest(ref, added, prompt, output);
    }
    if (added == kRequests && !fast->sched.has_requests()) break;
    const SimTime start = 1000 * step, end = start + 700 + 10 * (step % 7);
    fast->sched.Schedule(start, &fast->plan);
    ref->sched.Schedule(start, &ref->plan);
    const std::string at = std::string(v.name) + " step " + std::to_string(step);
    const StepPlan &f = fast->plan, &r = ref->plan;
    ASSERT_EQ(f.tokens, r.tokens) << at;
    ASSERT_EQ(f.finishing, r.finishing) << at;
    ASSERT_EQ(f.draft_seqs, r.draft_seqs) << at;
    ASSERT_EQ(f.draft_context, r.draft_context) << at;
    ASSERT_EQ(f.preempted, r.preempted) << at;
    ASSERT_EQ(f.admitted, r.admitted) << at;
    ASSERT_EQ(f.num_seqs(), r.num_seqs()) << at;
    ASSERT_TRUE(Canonical(f.shape, v) == Canonical(r.shape, v)) << at;
    ASSERT_EQ(r.shape.decode_seqs, 0) << at;  // the reference lists everyone
    *group_steps += !f.batch.empty() && f.batch.back().id == kGroupEntry;
    if (stop_at > 0 && *group_steps == stop_at) return;
    if (f.batch.empty()) continue;  // nothing runs (both: same tokens)
    fast->finished.clear();
    ref->finished.clear();
    fast->sched.Commit(end, f.batch, &fast->recorder, &fast->finished);
    ref->sched.Commit(end, r.batch, &ref->recorder, &ref->finished);
    ASSERT_EQ(fast->finished, ref->finished) << at;
    ASSERT_EQ(fast->sched.num_running(), ref->sched.num_running()) << at;
    ASSERT_EQ(fast->sched.kv().num_used(), ref->sched.kv().num_used()) << at;
    fast->sched.CheckInvariants();
    ref->sched.CheckInvariants();
  }
  EXPECT_FALSE(fast->sched.has_requests()) << v.name << ": did not finish";
}

TEST(SpecDecodeGroup, MatchesTheReferenceStepByStep) {
  const Variant variants[] = {
      {"roomy", 400, 256, 0, 3},
      {"tight cache (preemptions)", 40, 256, 0, 3},
      {"tight budget (the group leaves)", 400, 24, 0, 3},
      {"long-prefill cap cuts drafts", 400, 256, 3, 4},
      {"one draft", 60, 64, 0, 1},
      {"20 drafts (the bit buffer's two words)", 400, 256, 0, 20},
      {"33 drafts (no bit buffer)", 400, 256, 0, 33},
      // Runs priced: the calendar, but where a cap cuts drafts.
      {"runs: roomy", 400, 256, 0, 3, true},
      {"runs: tight cache (preemptions)", 40, 256, 0, 3, true},
      {"runs: tight budget (the group leaves)", 400, 24, 0, 3, true},
      {"runs: long-prefill cap cuts drafts (entries' runs)", 400, 256, 3, 4, true},
      {"runs: a cap that cuts none", 400, 256, 5, 4, true},
      {"runs: one draft", 60, 64, 0, 1, true},
      {"runs: blocks of 3 (divisions)", 600, 256, 0, 3, true, 3},
      {"runs: long outputs over many epochs", 4000, 256, 0, 5, true, 16, 400},
      {"runs: long outputs, tight cache", 300, 256, 0, 5, true, 16, 400},
      {"runs: 20 drafts (entries' runs)", 400, 256, 0, 20, true},
  };
  int64_t preemptions = 0;
  for (const Variant& v : variants) {
    const bool calendar = v.runs && v.long_prefill != 3 && v.drafts <= 16;
    ASSERT_EQ(SpecCalendarGroup::Fits(Config(v, false)), calendar) << v.name;
    Engine fast(v, false), ref(v, true);
    int group_steps = 0;
    RunLockstep(v, &fast, &ref, &group_steps);
    if (::testing::Test::HasFatalFailure()) return;
    EXPECT_GT(group_steps, 10) << v.name << ": the group never ran";
    fast.sched.FlushDecodeGroup();
    ref.sched.FlushDecodeGroup();
    ASSERT_EQ(fast.reqs.size(), ref.reqs.size());
    for (size_t id = 0; id < ref.reqs.size(); ++id) {
      const Request &a = fast.reqs[id], &b = ref.reqs[id];
      SCOPED_TRACE(std::string(v.name) + " request " + std::to_string(id));
      EXPECT_EQ(a.status, b.status);
      EXPECT_EQ(a.num_output, b.num_output);
      EXPECT_EQ(a.deliveries, b.deliveries);
      EXPECT_EQ(a.max_delivered, b.max_delivered);
      EXPECT_EQ(a.first_token, b.first_token);
      EXPECT_EQ(a.last_token, b.last_token);
      EXPECT_EQ(a.finish, b.finish);
      EXPECT_EQ(a.preemptions, b.preemptions);
      EXPECT_EQ(a.spec_rate, b.spec_rate);
      preemptions += b.preemptions;
    }
    const SpecDecodeStats &s = fast.sched.spec_stats(), &t = ref.sched.spec_stats();
    EXPECT_EQ(s.drafts, t.drafts) << v.name;
    EXPECT_EQ(s.draft_tokens, t.draft_tokens) << v.name;
    EXPECT_EQ(s.accepted, t.accepted) << v.name;
    EXPECT_GT(t.accepted, 0) << v.name;
    const LogHistogram &i = fast.recorder.itl_ns(), &j = ref.recorder.itl_ns();
    EXPECT_EQ(i.count(), j.count()) << v.name;
    EXPECT_EQ(i.mean(), j.mean()) << v.name;
    EXPECT_EQ(i.stddev(), j.stddev()) << v.name;
    EXPECT_EQ(i.max(), j.max()) << v.name;
  }
  EXPECT_GT(preemptions, 0);  // the tight cache preempted someone
}

// A run that stops early (limits.max_queued) ends with the group's step in
// flight: its members leave with that step's tokens computed and in flight
// and its blocks theirs, as the reference engine's Add left them (the
// group used to keep the step's blocks: "kept 2 blocks nobody owns").
TEST(SpecDecodeGroup, LeavesWithItsStepInFlightAtAnEarlyEnd) {
  for (const Variant& v : {Variant{"roomy", 400, 256, 0, 3},
                           Variant{"runs: roomy", 400, 256, 0, 3, true},
                           Variant{"runs: long outputs", 4000, 256, 0, 5, true, 16, 400}})
  for (const int stop_at : {1, 5, 20, 33, 40}) {
    Engine fast(v, false), ref(v, true);
    int group_steps = 0;
    RunLockstep(v, &fast, &ref, &group_steps, stop_at);
    if (::testing::Test::HasFatalFailure()) return;
    ASSERT_EQ(group_steps, stop_at) << "the run ended first";
    ASSERT_GT(fast.sched.kv().num_used(), 0);
    fast.sched.FlushDecodeGroup();
    ref.sched.FlushDecodeGroup();
    EXPECT_EQ(fast.sched.kv().num_used(), ref.sched.kv().num_used()) << stop_at;
    EXPECT_EQ(fast.sched.num_running(), ref.sched.num_running()) << stop_at;
    int64_t in_flight = 0;
    for (size_t id = 0; id < ref.reqs.size(); ++id) {
      const Request &a = fast.reqs[id], &b = ref.reqs[id];
      SCOPED_TRACE(std::string(v.name) + ": stop at group step " + std::to_string(stop_at) +
                   ", request " + std::to_string(id));
      EXPECT_EQ(a.status, b.status);
      EXPECT_EQ(a.num_computed, b.num_computed);
      EXPECT_EQ(a.in_flight, b.in_flight);
      EXPECT_EQ(a.blocks.size(), b.blocks.size());
      EXPECT_EQ(a.num_output, b.num_output);
      EXPECT_EQ(a.deliveries, b.deliveries);
      EXPECT_EQ(a.last_token, b.last_token);
      EXPECT_EQ(a.spec_ready, b.spec_ready);
      in_flight += b.in_flight;
    }
    EXPECT_GT(in_flight, 0) << stop_at;
  }
}

// Where the calendar is used: runs priced, no cap that cuts drafts, k
// within the bit buffer (16), and a step's sums within their packed
// fields (members * (k + 1) blocks < 2^18); elsewhere the entries' group.
TEST(SpecCalendarGroup, FitsOnlyWhereItsSumsFit) {
  const auto config = [](int32_t k, int32_t cap, int32_t seqs, bool runs) {
    EngineConfig c;
    c.verify_runs = runs;
    c.spec.num_speculative_tokens = k;
    c.long_prefill_token_threshold = cap;
    c.max_num_seqs = seqs;
    return c;
  };
  EXPECT_TRUE(SpecCalendarGroup::Fits(config(3, 0, 256, true)));
  EXPECT_FALSE(SpecCalendarGroup::Fits(config(3, 0, 256, false)));
  EXPECT_TRUE(SpecCalendarGroup::Fits(config(16, 0, 256, true)));
  EXPECT_FALSE(SpecCalendarGroup::Fits(config(17, 0, 256, true)));
  EXPECT_FALSE(SpecCalendarGroup::Fits(config(3, 3, 256, true)));  // cuts drafts
  EXPECT_TRUE(SpecCalendarGroup::Fits(config(3, 4, 256, true)));   // never does
  EXPECT_TRUE(SpecCalendarGroup::Fits(config(3, 0, 65535, true)));  // 262140 blocks
  EXPECT_FALSE(SpecCalendarGroup::Fits(config(3, 0, 65536, true)));
}

}  // namespace
}  // namespace servesim
