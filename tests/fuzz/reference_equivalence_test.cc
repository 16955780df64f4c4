// The fast paths of the engine (private prefix-cache blocks kept out of the
// map, PrefixCache's anonymous blocks and shared prefix runs, the stack
// free queue, the decode group, the key-ordered waiting queue) against the
// simple reference engine
// (EngineConfig::reference_engine): byte-identical result
// JSON and per-request CSV on generated scenarios of every kind and on
// tight caches where requests with prefixes are preempted and resume.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "sim/engine/simulation.h"
#include "sim/report/disagg_report.h"
#include "sim/report/summary.h"
#include "sim/report/writers.h"
#include "sim/scenario/scenario.h"
#include "tests/fuzz/scenario_gen.h"

namespace servesim::fuzz {
namespace {

int retired_disagg_runs = 0;  // fast runs that freed their disaggregated requests

struct Rendered {
  std::string result, csv;
  RunSummary summary;
};

// The reference engine keeps its requests to the end and summarises them
// there; the fast one (as `servesim run`) hands each to the summary's digest
// and the CSV as it retires and frees it (keep_requests = false), and a
// disaggregated run's path of each to the disaggregation section's digest.
Rendered Run(const Scenario& sc, bool reference, bool decode_group = true) {
  SimulationInput in = sc.ToSimulationInput();
  in.engine.reference_engine = reference;
  in.engine.decode_group = decode_group;
  Rendered r;
  nlohmann::json disagg;  // the result's disaggregation section, if any
  if (reference) {
    const SimulationOutput out = RunSimulation(in);
    r.summary = Summarize(out, in, sc.ArrivalDescription(), sc.OfferedRate());
    disagg = DisaggJson(sc, SummarizeDisagg(out, in, DisaggDigest::FromOutput(out),
                                            r.summary.percentiles));
    std::ostringstream csv;
    WriteDetailedCsv(out, csv);
    r.csv = csv.str();
  } else {
    RequestDigest digest(in);
    r.csv = DetailedCsvHeader();
    int64_t next_id = 0;
    in.on_request = [&](const Request& q) {
      EXPECT_EQ(q.id, next_id++) << "on_request out of id order";
      digest.Add(q);
      AppendDetailedCsvRow(q, {}, &r.csv, ClientLag(in));
    };
    DisaggDigest disagg_digest;
    in.on_disagg_request = [&](const Request& q, const DisaggRequest& t) {
      EXPECT_EQ(q.id, next_id - 1) << "on_disagg_request apart from on_request";
      disagg_digest.Add(q, t);
    };
    in.keep_requests = false;
    const SimulationOutput out = RunSimulation(in);
    EXPECT_EQ(next_id, digest.created);
    r.summary = Summarize(out, in, sc.ArrivalDescription(), sc.OfferedRate(), digest);
    disagg = DisaggJson(sc, SummarizeDisagg(out, in, std::move(disagg_digest),
                                            r.summary.percentiles));
    // The prefill copies and the paths go with the requests (all of them,
    // unless a sessions trace keeps them).
    if (out.disagg) {
      EXPECT_EQ(out.disagg->prefill_requests.size(), out.requests.size());
      EXPECT_EQ(out.disagg->requests.size(), out.requests.size());
      retired_disagg_runs += out.requests.size() == 0;
    }
  }
  nlohmann::json result = ResultJson(sc, r.summary);
  if (!disagg.is_null()) result["servesim"]["disaggregation"] = disagg;
  r.result = result.dump(1);
  return r;
}

// Runs both engines; returns the fast one's summary.
RunSummary ExpectSameAsReference(const nlohmann::json& j, const std::string& label) {
  StatusOr<Scenario> sc = ParseScenario(j.dump(2), "<" + label + ">", {});
  EXPECT_TRUE(sc.ok()) << label << ": " << sc.status().message();
  if (!sc.ok()) return {};
  const Rendered fast = Run(*sc, false), reference = Run(*sc, true);
  EXPECT_EQ(fast.result, reference.result) << label << "\n" << j.dump(2);
  EXPECT_EQ(fast.csv, reference.csv) << label << "\n" << j.dump(2);
  return fast.summary;
}

// The decode group on (invariants checked after every step) and off give
// the same detailed CSV.
void ExpectSameWithGroupOffAndInvariants(const nlohmann::json& j,
                                         const std::string& label) {
  StatusOr<Scenario> sc = ParseScenario(j.dump(2), "<" + label + ">", {});
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  SimulationInput in = sc->ToSimulationInput();
  in.check_invariants = true;  // scheduler and run-level, every step
  const Rendered off = fuzz::Run(*sc, false, /*decode_group=*/false);
  const SimulationOutput checked = RunSimulation(in);
  std::ostringstream csv;
  WriteDetailedCsv(checked, csv);
  EXPECT_EQ(csv.str(), off.csv) << label;
}

TEST(ReferenceEquivalence, GeneratedScenariosOfEveryKind) {
  int prefix = 0, sessions = 0, clusters = 0, sync = 0, unchunked = 0, closed = 0,
      preempted = 0, disaggregated = 0;
  for (uint64_t seed = 1; seed <= 80; ++seed) {
    SeededChoices choices(seed);
    const nlohmann::json j = GenerateScenario(choices);
    const RunSummary s = ExpectSameAsReference(j, "generator seed " + std::to_string(seed));
    const nlohmann::json e = j.value("engine", nlohmann::json::object());
    const nlohmann::json w = j.value("workload", nlohmann::json::object());
    const nlohmann::json arrival = w.value("arrival", nlohmann::json::object());
    const nlohmann::json cluster = j.value("cluster", nlohmann::json::object());
    const bool cached = e.value("prefix_caching", false);
    prefix += cached;
    sync += !e.value("async_scheduling", true);
    unchunked += !e.value("chunked_prefill", true);
    sessions += w.contains("sessions");
    closed += w.contains("max_concurrency") ||
              (arrival.is_object() && arrival.value("process", "") == "closed");
    clusters += cluster.value("replicas", 1) > 1;
    disaggregated += j.contains("disaggregation");
    preempted += s.preemptions > 0 && cached;
  }
  // What the seeds cover (so that the comparison above is not vacuous).
  EXPECT_GT(prefix, 5);
  EXPECT_GT(sessions, 2);
  EXPECT_GT(clusters, 5);
  EXPECT_GT(sync, 5);
  EXPECT_GT(unchunked, 5);
  EXPECT_GT(closed, 5);
  EXPECT_GT(disaggregated, 2);
  EXPECT_GT(retired_disagg_runs, 2);
  EXPECT_GT(preempted, 0);
}

// Shared prefixes, sessions and a trace on caches so small that requests
// holding private blocks are preempted and resume from them.
TEST(ReferenceEquivalence, PreemptedRequestsResumingFromTheirOwnBlocks) {
  const char* kBase = R"({
    "seed": 3, "model": "llama-3.1-8b", "hardware": {"gpu": "h200", "tp": 1},
    "engine": {"prefix_caching": true, "block_size": 16, "num_gpu_blocks": 400},
    "cost_model": {"type": "roofline"},
    "workload": {"arrival": {"process": "poisson", "rate": 30},
                 "input_len": {"dist": "lognormal", "median": 120, "p99": 1500},
                 "output_len": {"dist": "lognormal", "median": 200, "p99": 1500},
                 "prefix": {"model": "zipf", "num_prefixes": 8, "prefix_len": 512,
                            "s": 1.1},
                 "num_requests": 1500}})";
  const nlohmann::json base = nlohmann::json::parse(kBase);
  int preempted_runs = 0;
  for (int variant = 0; variant < 6; ++variant) {
    nlohmann::json j = base;
    j["engine"]["async_scheduling"] = variant % 2 == 0;
    j["engine"]["chunked_prefill"] = variant != 3;
    if (variant >= 4) {  // sessions: the stream is shared with later turns
      j["workload"].erase("prefix");
      j["workload"]["sessions"] = {{"turns", {{"dist", "uniform"}, {"min", 1}, {"max", 6}}},
                                   {"think_time_s", 2}};
    }
    if (variant == 2) j["cluster"] = {{"replicas", 2}, {"router", "prefix_affinity"}};
    const RunSummary s = ExpectSameAsReference(j, "variant " + std::to_string(variant));
    preempted_runs += s.preemptions > 0;
  }
  EXPECT_EQ(preempted_runs, 6);
}

// KV offload on the tight prefix-caching runs above: the CPU tier takes
// the GPU's evicted prefix blocks (the fast engine's private ones as
// anonymous entries, the reference's under hashes nobody looks up), swap
// and recompute preemption, sync and async.
TEST(ReferenceEquivalence, KvOffloadTiers) {
  const char* kBase = R"({
    "seed": 3, "model": "llama-3.1-8b", "hardware": {"gpu": "h200", "tp": 1},
    "engine": {"prefix_caching": true, "block_size": 16, "num_gpu_blocks": 400,
               "kv_offload": {"cpu_gib": 0.5, "pcie_gb_per_s": 25, "latency_us": 10}},
    "cost_model": {"type": "roofline"},
    "workload": {"arrival": {"process": "poisson", "rate": 30},
                 "input_len": {"dist": "lognormal", "median": 120, "p99": 1500},
                 "output_len": {"dist": "lognormal", "median": 200, "p99": 1500},
                 "prefix": {"model": "zipf", "num_prefixes": 40, "prefix_len": 512,
                            "s": 1.1},
                 "num_requests": 1500}})";
  const nlohmann::json base = nlohmann::json::parse(kBase);
  int64_t cpu_hits = 0, swaps = 0, fallbacks = 0;
  for (int variant = 0; variant < 6; ++variant) {
    nlohmann::json j = base;
    j["engine"]["async_scheduling"] = variant % 2 == 0;
    if (variant >= 2) j["engine"]["preemption"] = "swap";
    if (variant >= 4) j["engine"]["kv_offload"]["cpu_gib"] = 0.05;  // 25 blocks
    const RunSummary s = ExpectSameAsReference(j, "offload variant " + std::to_string(variant));
    cpu_hits += s.load_blocks;
    swaps += s.swap_preemptions;
    fallbacks += s.swap_fallbacks;
  }
  EXPECT_GT(cpu_hits, 0);
  EXPECT_GT(swaps, 0);
  EXPECT_GT(fallbacks, 0);
}

// The decode group (no prefix caching) where its members must be rebuilt
// often: caches so tight that decoders are preempted, step budgets that
// cannot cover every member, chunked and unchunked prompts, sessions,
// clusters, max_concurrency, warm-up, runs cut off by a duration with
// requests still decoding, a block size that is not a power of two. The
// engine with the group off is compared too, and invariants are checked
// after every step.
TEST(ReferenceEquivalence, DecodeGroupRebuilds) {
  const char* kBase = R"({
    "seed": 5, "model": "llama-3.1-8b", "hardware": {"gpu": "h200", "tp": 1},
    "engine": {"block_size": 16, "num_gpu_blocks": 300, "max_num_seqs": 64},
    "cost_model": {"type": "roofline"},
    "workload": {"arrival": {"process": "poisson", "rate": 25},
                 "input_len": {"dist": "lognormal", "median": 120, "p99": 1500},
                 "output_len": {"dist": "lognormal", "median": 150, "p99": 1200},
                 "num_requests": 1200}})";
  const nlohmann::json base = nlohmann::json::parse(kBase);
  int preempted_runs = 0;
  for (int variant = 0; variant < 12; ++variant) {
    nlohmann::json j = base;
    j["seed"] = 5 + variant;
    j["engine"]["async_scheduling"] = variant % 2 == 0;
    nlohmann::json& e = j["engine"];
    nlohmann::json& w = j["workload"];
    switch (variant) {
      case 0: break;  // tight cache, async
      case 1: e["chunked_prefill"] = false; e["max_num_batched_tokens"] = 4096; break;
      case 2: e["max_num_batched_tokens"] = 40; break;  // budget below the members
      case 3: e["long_prefill_token_threshold"] = 64; e["watermark"] = 0.05; break;
      case 4:
        w["sessions"] = {{"turns", {{"dist", "uniform"}, {"min", 1}, {"max", 5}}},
                         {"think_time_s", 1}};
        break;
      case 5: j["cluster"] = {{"replicas", 3}, {"router", "least_outstanding"}}; break;
      case 6: w["max_concurrency"] = 40; w["arrival"]["rate"] = 60; break;
      case 7: j["metrics"] = {{"warmup_requests", 200}, {"warmup_s", 3}}; break;
      case 8: w.erase("num_requests"); w["duration_s"] = 30; w["arrival"]["rate"] = 60; break;
      case 9: e["block_size"] = 7; e["num_gpu_blocks"] = 700; break;
      case 10: e["policy"] = "shortest-prompt-first"; e["num_gpu_blocks"] = 2000; break;
      case 11:
        j["cost_model"] = {{"type", "linear"}, {"step_s", 0.004}, {"decode_seq_s", 2e-5},
                           {"kv_token_s", 1e-8}, {"prefill_token_s", 1e-5}};
        break;
    }
    const std::string label = "decode group variant " + std::to_string(variant);
    const RunSummary s = ExpectSameAsReference(j, label);
    preempted_runs += s.preemptions > 0;
    ExpectSameWithGroupOffAndInvariants(j, label);
  }
  EXPECT_GE(preempted_runs, 6);
}

// The decode group with prefix caching (members: requests whose blocks are
// private from then on) where members must be rebuilt often and the group's
// fresh blocks evict cached ones: tight caches with preemption, budgets
// below the member count, chunking off, long-prefill cap and watermark,
// longest-prefix-match ordering, a prefix-affinity cluster, a block size
// that is not a power of two, cut-off and capped runs, a roomier cache
// under load. Compared with the reference engine and with the group off
// (invariants checked after every step).
TEST(ReferenceEquivalence, PrefixCachingDecodeGroupRebuilds) {
  const char* kBase = R"({
    "seed": 21, "model": "llama-3.1-8b", "hardware": {"gpu": "h200", "tp": 1},
    "engine": {"prefix_caching": true, "block_size": 16, "num_gpu_blocks": 400,
               "max_num_seqs": 64},
    "cost_model": {"type": "roofline"},
    "workload": {"arrival": {"process": "poisson", "rate": 30},
                 "input_len": {"dist": "lognormal", "median": 100, "p99": 1200},
                 "output_len": {"dist": "lognormal", "median": 150, "p99": 1200},
                 "prefix": {"model": "zipf", "num_prefixes": 12, "prefix_len": 256,
                            "s": 1.1},
                 "num_requests": 1200}})";
  const nlohmann::json base = nlohmann::json::parse(kBase);
  int preempted_runs = 0;
  int64_t evictions = 0;
  for (int variant = 0; variant < 12; ++variant) {
    nlohmann::json j = base;
    j["seed"] = 21 + variant;
    j["engine"]["async_scheduling"] = variant % 2 == 0;
    nlohmann::json& e = j["engine"];
    nlohmann::json& w = j["workload"];
    switch (variant) {
      case 0: case 1: break;  // tight cache, async and sync
      case 2: e["max_num_batched_tokens"] = 40; break;  // budget below the members
      case 3: e["chunked_prefill"] = false; break;
      case 4: e["long_prefill_token_threshold"] = 64; e["watermark"] = 0.05; break;
      case 5: e["policy"] = "lpm"; break;
      case 6: j["cluster"] = {{"replicas", 2}, {"router", "prefix_affinity"}}; break;
      case 7: e["block_size"] = 7; e["num_gpu_blocks"] = 900; break;
      case 8: w.erase("num_requests"); w["duration_s"] = 30; w["arrival"]["rate"] = 60; break;
      case 9:
        w["max_concurrency"] = 40; w["arrival"]["rate"] = 60;
        j["metrics"] = {{"warmup_requests", 200}};
        break;
      case 10: w["prefix"] = {{"model", "random_prefix"}, {"prefix_len", 300}}; break;
      case 11: e["num_gpu_blocks"] = 2500; e["max_num_seqs"] = 128; w["arrival"]["rate"] = 45; break;
    }
    const std::string label = "prefix decode group variant " + std::to_string(variant);
    const RunSummary s = ExpectSameAsReference(j, label);
    preempted_runs += s.preemptions > 0;
    evictions += s.evictions;
    ExpectSameWithGroupOffAndInvariants(j, label);
  }
  EXPECT_GE(preempted_runs, 6);
  EXPECT_GT(evictions, 0);
}

// Speculative decoding on tight caches (rejected drafts' blocks freed,
// preemption with drafts in the KV) with and without prefix caching, a
// cluster, Beta rates, budgets and caps that cut drafts: the fast engine
// (the decode group's spec mode without prefix caching) and the reference
// agree, the group on and off agree, every invariant holds after every step.
TEST(ReferenceEquivalence, SpeculativeDecoding) {
  const char* kBase = R"({
    "seed": 11, "model": "llama-3.1-8b", "hardware": {"gpu": "h200", "tp": 1},
    "engine": {"block_size": 16, "num_gpu_blocks": 300, "max_num_seqs": 64,
               "speculative_decoding": {"num_speculative_tokens": 4,
                                        "acceptance_rate": 0.6,
                                        "draft_cost_fraction": 0.1}},
    "cost_model": {"type": "roofline"},
    "workload": {"arrival": {"process": "poisson", "rate": 25},
                 "input_len": {"dist": "lognormal", "median": 120, "p99": 1500},
                 "output_len": {"dist": "lognormal", "median": 150, "p99": 1200},
                 "num_requests": 800}})";
  const nlohmann::json base = nlohmann::json::parse(kBase);
  int preempted_runs = 0;
  for (int variant = 0; variant < 9; ++variant) {
    nlohmann::json j = base;
    nlohmann::json& e = j["engine"];
    if (variant % 2 == 1 && variant < 4) e["prefix_caching"] = true;
    if (variant == 2) {
      e["speculative_decoding"].erase("acceptance_rate");
      e["speculative_decoding"]["acceptance_beta"] = {{"a", 2}, {"b", 1}};
      j["cluster"] = {{"replicas", 2}, {"router", "least_outstanding"}};
    }
    if (variant == 3) e["max_num_batched_tokens"] = 40;  // drafts cut by the budget
    // Without prefix caching the decode group's spec mode runs: a budget
    // that cannot cover all members (they leave), a long-prefill cap that
    // cuts drafts, a roomy cache (the group stays whole), one draft token.
    if (variant == 4) e["max_num_batched_tokens"] = 120;
    if (variant == 5) {
      e["long_prefill_token_threshold"] = 3;
      j["workload"]["num_requests"] = 300;
    }
    if (variant == 6) e["num_gpu_blocks"] = 20000;
    if (variant == 7) {
      e["num_gpu_blocks"] = 2000;
      e["speculative_decoding"]["num_speculative_tokens"] = 1;
      e["speculative_decoding"]["acceptance_rate"] = 0.9;
    }
    // A run stopped by limits.max_queued, the group's step in flight (as
    // the scenario that found it: unchunked, full-prompt reserve, watermark).
    if (variant == 8) {
      e["chunked_prefill"] = false;
      e["max_num_batched_tokens"] = 2048;
      e["reserve_full_prompt"] = true;
      e["watermark"] = 0.08;
      j["workload"]["arrival"]["rate"] = 60;
      j["limits"] = {{"max_queued", 13}};
    }
    const std::string label = "speculative variant " + std::to_string(variant);
    const RunSummary s = ExpectSameAsReference(j, label);
    preempted_runs += s.preemptions > 0;
    EXPECT_GT(s.spec_drafts, 0) << label;
    ExpectSameWithGroupOffAndInvariants(j, label);  // (invariants every step)
  }
  EXPECT_GE(preempted_runs, 2);
}

// The priority and edf policies: the fast engine keeps the waiting queue
// ordered by their key (waiting_queue.h), the reference engine scans it.
// Overloaded runs (hundreds waiting) of three classes on tight caches
// with preemption: sync and async, chunking off, a long-prefill cap,
// prefix caching, swap preemption to a small CPU tier, a cluster, slot
// waits, a run cut off with requests still waiting. Invariants are
// checked after every step.
TEST(ReferenceEquivalence, PriorityAndEdfOnAKeyOrderedQueue) {
  const char* kBase = R"({
    "seed": 9, "model": "llama-3.1-8b", "hardware": {"gpu": "h200", "tp": 1},
    "engine": {"block_size": 16, "num_gpu_blocks": 300, "max_num_seqs": 48},
    "cost_model": {"type": "roofline"},
    "workload": {"arrival": {"process": "poisson", "rate": 80},
                 "classes": [
                   {"name": "chat", "share": 0.3, "priority": 0, "ttft_slo_ms": 300,
                    "input_len": {"dist": "lognormal", "median": 80, "p99": 800},
                    "output_len": {"dist": "lognormal", "median": 100, "p99": 800}},
                   {"name": "docs", "share": 0.5, "priority": 2, "ttft_slo_ms": 4000,
                    "input_len": {"dist": "lognormal", "median": 400, "p99": 2000},
                    "output_len": {"dist": "lognormal", "median": 150, "p99": 1000}},
                   {"name": "bulk", "share": 0.2, "priority": 1,
                    "input_len": {"dist": "lognormal", "median": 200, "p99": 1500},
                    "output_len": {"dist": "lognormal", "median": 200, "p99": 1200}}],
                 "num_requests": 1000}})";
  const nlohmann::json base = nlohmann::json::parse(kBase);
  int preempted_runs = 0;
  for (int variant = 0; variant < 16; ++variant) {
    nlohmann::json j = base;
    j["seed"] = 9 + variant;
    nlohmann::json& e = j["engine"];
    nlohmann::json& w = j["workload"];
    e["policy"] = variant % 2 == 0 ? "priority" : "edf";
    e["async_scheduling"] = variant % 4 < 2;
    switch (variant / 2) {
      case 0: break;  // tight cache
      case 1: e["chunked_prefill"] = false; e["max_num_batched_tokens"] = 4096; break;
      case 2: e["long_prefill_token_threshold"] = 64; e["watermark"] = 0.05; break;
      case 3:
        e["prefix_caching"] = true; e["num_gpu_blocks"] = 400;
        w["prefix"] = {{"model", "zipf"}, {"num_prefixes", 8}, {"prefix_len", 256},
                       {"s", 1.1}};
        break;
      case 4:
        e["prefix_caching"] = true; e["preemption"] = "swap";
        e["kv_offload"] = {{"cpu_gib", 0.05}, {"pcie_gb_per_s", 25}, {"latency_us", 10}};
        break;
      case 5: j["cluster"] = {{"replicas", 2}, {"router", "least_outstanding"}}; break;
      case 6: w["max_concurrency"] = 120; break;
      case 7: w.erase("num_requests"); w["duration_s"] = 10; break;
    }
    const std::string label = "ordered queue variant " + std::to_string(variant);
    const RunSummary s = ExpectSameAsReference(j, label);
    preempted_runs += s.preemptions > 0;
    ExpectSameWithGroupOffAndInvariants(j, label);
  }
  EXPECT_GE(preempted_runs, 10);
}

// Requests handed over and freed chunk by chunk while the run goes
// (keep_requests = false) against the same engine keeping them: runs long
// enough to retire many chunks, with async scheduling (a step in flight
// still refers to a request after its last token), sessions, slot waits,
// closed loop, a cluster, warm-up and a cut-off by duration.
TEST(ReferenceEquivalence, RetiredRequestsMatchKeptOnes) {
  const char* kBase = R"({
    "seed": 9, "model": "llama-3.1-8b", "hardware": {"gpu": "h200", "tp": 1},
    "engine": {"block_size": 16, "num_gpu_blocks": 3000, "max_num_seqs": 128},
    "cost_model": {"type": "roofline"},
    "workload": {"arrival": {"process": "poisson", "rate": 40},
                 "input_len": {"dist": "lognormal", "median": 100, "p99": 1000},
                 "output_len": {"dist": "lognormal", "median": 80, "p99": 600},
                 "num_requests": 6000}})";
  const nlohmann::json base = nlohmann::json::parse(kBase);
  for (int variant = 0; variant < 7; ++variant) {
    nlohmann::json j = base;
    j["engine"]["async_scheduling"] = variant != 1;
    nlohmann::json& w = j["workload"];
    switch (variant) {
      case 0: case 1: break;
      case 2:
        w["sessions"] = {{"turns", {{"dist", "uniform"}, {"min", 1}, {"max", 4}}},
                         {"think_time_s", 1}};
        break;
      case 3: w["max_concurrency"] = 30; w["arrival"]["rate"] = 60; break;
      case 4: w["arrival"] = {{"process", "closed"}, {"concurrency", 50}}; break;
      case 5: j["cluster"] = {{"replicas", 3}, {"router", "least_outstanding"}};
              j["metrics"] = {{"warmup_requests", 1500}}; break;
      case 6: w.erase("num_requests"); w["duration_s"] = 120; w["arrival"]["rate"] = 80; break;
    }
    const std::string label = "retire variant " + std::to_string(variant);
    StatusOr<Scenario> sc = ParseScenario(j.dump(2), "<" + label + ">", {});
    ASSERT_TRUE(sc.ok()) << label << ": " << sc.status().message();
    SimulationInput in = sc->ToSimulationInput();
    const SimulationOutput kept = RunSimulation(in);
    std::ostringstream csv;
    WriteDetailedCsv(kept, csv);
    const std::string result =
        ResultJson(*sc, Summarize(kept, in, sc->ArrivalDescription(), sc->OfferedRate())).dump(1);
    const Rendered retired = fuzz::Run(*sc, false);
    EXPECT_EQ(retired.result, result) << label;
    EXPECT_EQ(retired.csv, csv.str()) << label;
    EXPECT_GT(kept.requests.size(), 3 * RequestTable::kChunk) << label;
  }
}

}  // namespace
}  // namespace servesim::fuzz
