// Prefix caching against the Mooncake trace's own hash ids, replayed with
// its timestamps stretched so that requests do not overlap:
//  - with an effectively infinite cache the block hit rate is the trace's
//    reuse fraction over its full 512-token blocks (65.9%; over all ids,
//    partial last blocks included, it is the documented 64.0%, but a paged
//    KV cache never shares a partial block);
//  - with a fixed-size cache it matches an LRU simulation of the trace's
//    block sequence written here, independently of the simulator's cache.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <list>
#include <unordered_map>
#include <unordered_set>

#include "sim/core/paths.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

struct TraceRow {
  int64_t input = 0, output = 0;
  std::vector<uint64_t> ids;
};

std::string TracePath() {
  return RepoRoot() + "/../shared/traces/synthetic_trace.jsonl";
}

std::vector<TraceRow> ReadTrace() {
  std::vector<TraceRow> rows;
  std::ifstream in(TracePath());
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line);
    TraceRow r;
    r.input = j.at("input_length").get<int64_t>();
    r.output = j.at("output_length").get<int64_t>();
    r.ids = j.at("hash_ids").get<std::vector<uint64_t>>();
    rows.push_back(std::move(r));
  }
  return rows;
}

RunSummary Replay(int block_size, int64_t num_blocks) {
  const Scenario sc = testing::MustParse(
      R"({"seed": 1, "model": "llama-3.1-8b", "hardware": {"gpu": "h200"},
          "engine": {"prefix_caching": true, "kv_beyond_gpu_memory": true, "block_size": )" +
      std::to_string(block_size) + R"(, "num_gpu_blocks": )" +
      std::to_string(num_blocks) + R"(},
          "cost_model": {"type": "linear", "prefill_token_s": 1e-7,
                         "decode_seq_s": 1e-4},
          "workload": {"trace": {"path": ")" + TracePath() +
      R"(", "format": "mooncake", "time_scale": 100}}})");
  return testing::RunScenario(sc);
}

class MooncakeReplay : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(TracePath())) GTEST_SKIP() << "no " << TracePath();
    rows_ = ReadTrace();
    ASSERT_EQ(rows_.size(), 3993u);
  }
  std::vector<TraceRow> rows_;
};

TEST_F(MooncakeReplay, InfiniteCacheHitRateIsTheTracesReuseFraction) {
  // Independent: share of hash ids seen earlier in the trace.
  std::unordered_set<uint64_t> seen;
  int64_t ids = 0, reused = 0;
  for (const TraceRow& r : rows_) {
    for (uint64_t id : r.ids) {
      ++ids;
      reused += !seen.insert(id).second;
    }
  }
  ASSERT_NEAR(static_cast<double>(reused) / ids, 0.640, 0.0005);  // documented

  // The same over full blocks: a request's leading run of ids seen earlier,
  // among its full blocks, never its last token.
  std::unordered_set<uint64_t> seen_full;
  int64_t full_ids = 0, full_hits = 0;
  for (const TraceRow& r : rows_) {
    const int64_t full = r.input / 512, max_hit = (r.input - 1) / 512;
    int64_t run = 0;
    while (run < max_hit && seen_full.count(r.ids[run])) ++run;
    full_hits += run;
    full_ids += full;
    for (int64_t i = 0; i < full; ++i) seen_full.insert(r.ids[i]);
  }
  const double reuse_full = static_cast<double>(full_hits) / full_ids;

  // Blocks of 512 tokens, as the trace's own; 3M blocks never fill.
  const RunSummary s = Replay(512, 3'000'000);
  ASSERT_EQ(s.completed, 3993);
  EXPECT_EQ(s.evictions, 0);
  EXPECT_NEAR(s.block_hit_rate, reuse_full, 0.005)
      << "hits " << s.cached_blocks << " of " << s.prompt_full_blocks;
}

// LRU over the trace's blocks, one request at a time: a request looks up
// its leading run of cached full prompt blocks (never its last token),
// holds them, takes fresh blocks for the rest of its prompt and its output
// (evicting least recently used entries), and at the end returns all its
// blocks, its last block least recent.
double IndependentLru(const std::vector<TraceRow>& rows, size_t capacity, int bs) {
  std::list<uint64_t> lru;  // front = least recent
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> where;
  uint64_t unique = 1ULL << 63;
  int64_t hits = 0, lookups = 0;
  size_t held = 0;
  for (const TraceRow& r : rows) {
    const int64_t full = r.input / bs;
    const int64_t max_hit = (r.input - 1) / bs;
    const int64_t total = (r.input + r.output - 1 + bs - 1) / bs;
    std::vector<uint64_t> keys;
    for (int64_t i = 0; i < total; ++i) keys.push_back(i < full ? r.ids[i] : unique++);
    int64_t run = 0;
    while (run < max_hit && where.count(keys[run])) ++run;
    hits += run;
    lookups += full;
    for (int64_t i = 0; i < run; ++i) {  // held: off the LRU list
      lru.erase(where[keys[i]]);
      where.erase(keys[i]);
    }
    held = static_cast<size_t>(total);
    while (lru.size() + held > capacity) {
      where.erase(lru.front());
      lru.pop_front();
    }
    for (int64_t i = total - 1; i >= 0; --i) {  // released, tail first
      auto it = where.find(keys[i]);
      if (it != where.end()) lru.erase(it->second);
      lru.push_back(keys[i]);
      where[keys[i]] = std::prev(lru.end());
    }
  }
  return static_cast<double>(hits) / lookups;
}

TEST_F(MooncakeReplay, FixedCacheMatchesAnIndependentLru) {
  for (int64_t blocks : {1000, 5000, 20000}) {
    const double expect = IndependentLru(rows_, static_cast<size_t>(blocks), 512);
    const RunSummary s = Replay(512, blocks);
    EXPECT_NEAR(s.block_hit_rate, expect, 0.01) << blocks << " blocks";
    EXPECT_GT(s.evictions, 0);
  }
}

}  // namespace
}  // namespace servesim
