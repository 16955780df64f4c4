// Disaggregated prefill/decode: hand-worked event sequences (prefill, KV
// transfer on a FIFO link, decode admission), the prefill pool's blocks held
// until the transfer ends, the run-level invariants on random deployments
// and on broken outputs, and the scenario keys' errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "sim/report/disagg_report.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

using testing::MustParse;
using testing::RunScenario;

constexpr SimTime kUs = 1'000;
constexpr SimTime kMs = 1'000'000;

// Llama-3.1-8B's KV: 2 (K, V) x 32 layers x 8 heads x 128 x 2 bytes =
// 131072 bytes a token, so a 10-token prompt is 1,310,720 bytes: at
// 1.31072 GB/s that is 1 ms on the wire, plus 0.5 ms latency.
std::string DisaggScenario(const std::string& prefill_engine, bool async,
                           const std::string& extra_workload = "") {
  return R"({"seed": 7, "model": "llama-3.1-8b", "hardware": {"gpu": "h200"},
    "cost_model": {"type": "linear", "step_s": 0.001, "prefill_token_s": 0.0001,
                   "decode_seq_s": 0.0005},
    "engine": {"num_gpu_blocks": 60000, "max_num_batched_tokens": 65536,
               "async_scheduling": )" +
         std::string(async ? "true" : "false") + R"(},
    "workload": {"arrival": {"process": "constant", "rate": 1000},
                 "input_len": {"dist": "fixed", "value": 10},
                 "output_len": {"dist": "fixed", "value": 3}, "num_requests": 2)" +
         extra_workload + R"(},
    "frontend": {"enabled": false},
    "disaggregation": {"prefill": {"replicas": 1)" + prefill_engine + R"(},
                       "decode": {"replicas": 1},
                       "link": {"gb_per_s": 1.31072, "latency_us": 500}}})";
}

// Two requests 1 ms apart, prompt 10, 3 output tokens; step 1 ms + 0.1 ms
// per prompt token + 0.5 ms per decoding sequence; synchronous scheduling.
// Prefill instance (replica 0), each request with max_tokens=1:
//  P1 [0, 2]     A prefill 10 -> A's KV complete at 2 (its token discarded)
//  P2 [2, 4]     B prefill 10 -> B's at 4 (A's block still held: 2 used)
// Link of the decode instance (FIFO, 1.5 ms each): A [2, 3.5], B [4, 5.5].
// Decode instance (replica 1): the KV of tokens 1-9 arrived, token 10 is
// computed (a 1-token step with context 9: a decode) to sample token 1:
//  D1 [3.5, 5]   A (ctx 9)          -> A token 1 (TTFT 5 ms)
//  D2 [5, 6.5]   A                  -> A token 2   (B arrives at 5.5)
//  D3 [6.5, 8.5] A, B (ctx 9)       -> A token 3 (done), B token 1
//  D4 [8.5, 10]  B                  -> B token 2
//  D5 [10, 11.5] B                  -> B token 3 (done)
TEST(Disagg, GoldenEventSequence) {
  const Scenario sc = MustParse(DisaggScenario("", /*async=*/false));
  SimulationOutput out;
  const RunSummary s = RunScenario(sc, &out, /*check_invariants=*/true);
  ASSERT_TRUE(out.disagg.has_value());
  ASSERT_EQ(out.requests.size(), 2u);
  const DisaggOutput& d = *out.disagg;
  const Request& a = out.requests[0];
  const Request& b = out.requests[1];
  // Prefill copies.
  EXPECT_EQ(d.prefill_requests[0].first_scheduled, 0);
  EXPECT_EQ(d.prefill_requests[0].finish, 2 * kMs);
  EXPECT_EQ(d.prefill_requests[1].first_scheduled, 2 * kMs);
  EXPECT_EQ(d.prefill_requests[1].finish, 4 * kMs);
  // Transfers.
  EXPECT_EQ(d.requests[0].prefill_end, 2 * kMs);
  EXPECT_EQ(d.requests[0].transfer_start, 2 * kMs);
  EXPECT_EQ(d.requests[0].transfer_end, 3500 * kUs);
  EXPECT_EQ(d.requests[1].transfer_start, 4 * kMs);
  EXPECT_EQ(d.requests[1].transfer_end, 5500 * kUs);
  EXPECT_EQ(d.transfers, 2);
  EXPECT_DOUBLE_EQ(d.bytes_moved, 2 * 1310720.0);
  // Decode: the client's view.
  EXPECT_EQ(a.replica, 1);
  EXPECT_EQ(a.first_scheduled, 3500 * kUs);
  EXPECT_EQ(a.first_token, 5 * kMs);
  EXPECT_EQ(a.finish, 8500 * kUs);
  EXPECT_EQ(b.first_scheduled, 6500 * kUs);
  EXPECT_EQ(b.first_token, 8500 * kUs);
  EXPECT_EQ(b.finish, 11500 * kUs);
  // TTFT includes the transfer: A 5 ms, B 8.5 - 1 = 7.5 ms.
  EXPECT_NEAR(s.ttft_ms.min, 5.0, 1e-9);
  EXPECT_NEAR(s.ttft_ms.max, 7.5, 1e-9);
  // Steps: 2 prefill, 5 decode; the prefill pool's second step sees A's
  // block still held beside B's.
  int prefill_steps = 0, decode_steps = 0;
  for (const StepRecord& r : out.steps) {
    (r.replica == 0 ? prefill_steps : decode_steps)++;
    if (r.replica == 0 && r.start == 2 * kMs) {
      EXPECT_EQ(r.kv_blocks_used, 2);
    }
    if (r.replica == 1 && r.start == 3500 * kUs) {
      EXPECT_EQ(r.num_decode_seqs, 1);  // the last prompt token, context 9
      EXPECT_EQ(r.context_tokens, 9);
      EXPECT_EQ(r.kv_blocks_used, 1);
    }
  }
  EXPECT_EQ(prefill_steps, 2);
  EXPECT_EQ(decode_steps, 5);
  // The report: transfer 1.5 ms of TTFT 5 (A) and 7.5 (B).
  SimulationInput in = sc.ToSimulationInput();
  const DisaggSummary ds = SummarizeDisagg(out, in, DisaggDigest::FromOutput(out), {50, 99});
  EXPECT_NEAR(ds.transfer_ms.mean, 1.5, 1e-9);
  EXPECT_NEAR(ds.transfer_share.mean, (1.5 / 5 + 1.5 / 7.5) / 2, 1e-9);
  EXPECT_NEAR(ds.transfer_share_of_mean_ttft, 3.0 / 12.5, 1e-9);
  EXPECT_NEAR(ds.decode_wait_ms.max, 1.0, 1e-9);  // B: arrived 5.5, admitted 6.5
  EXPECT_NEAR(ds.prefill_busy, 4.0 / 11.5, 1e-9);
  EXPECT_NEAR(ds.link_busy, 3.0 / 11.5, 1e-9);
}

// The prefill instance has one usable block (two, one the null block): A's
// block is held until its transfer ends at 3.5 ms, so B, waiting since 1 ms,
// is prefilled only then, [3.5, 5.5]; its transfer [5.5, 7]. Both with
// synchronous and with async scheduling (which must not spin at an
// instant while nothing can run).
TEST(Disagg, PrefillBlocksAreHeldUntilTheTransferEnds) {
  for (bool async : {false, true}) {
    SCOPED_TRACE(async ? "async" : "sync");
    const Scenario sc = MustParse(
        DisaggScenario(R"(, "engine": {"num_gpu_blocks": 2})", async));
    SimulationOutput out;
    RunScenario(sc, &out, /*check_invariants=*/true);
    const DisaggOutput& d = *out.disagg;
    EXPECT_EQ(d.prefill_requests[0].finish, 2 * kMs);
    EXPECT_EQ(d.requests[0].transfer_end, 3500 * kUs);
    EXPECT_EQ(d.prefill_requests[1].first_scheduled, 3500 * kUs);
    EXPECT_EQ(d.prefill_requests[1].finish, 5500 * kUs);
    EXPECT_EQ(d.requests[1].transfer_start, 5500 * kUs);
    EXPECT_EQ(d.requests[1].transfer_end, 7 * kMs);
    EXPECT_EQ(out.requests[1].status, RequestStatus::kFinished);
    EXPECT_TRUE(d.prefill_requests[0].blocks.empty());
    EXPECT_TRUE(d.prefill_requests[1].blocks.empty());
  }
}

// A slow link: 100 ms per transfer. B's KV waits for A's on the FIFO link:
// A [2, 102.5], B [102.5, 203] -- never overlapping.
TEST(Disagg, TransfersQueueOnTheDecodeInstancesLink) {
  std::string json = DisaggScenario("", false);
  json.replace(json.find("\"gb_per_s\": 1.31072, \"latency_us\": 500"),
               std::string("\"gb_per_s\": 1.31072, \"latency_us\": 500").size(),
               "\"gb_per_s\": 0.0131072, \"latency_us\": 500");
  const Scenario sc = MustParse(json);
  SimulationOutput out;
  RunScenario(sc, &out, true);
  const DisaggOutput& d = *out.disagg;
  EXPECT_EQ(d.requests[0].transfer_start, 2 * kMs);
  EXPECT_EQ(d.requests[0].transfer_end, 102500 * kUs);
  EXPECT_EQ(d.requests[1].prefill_end, 4 * kMs);
  EXPECT_EQ(d.requests[1].transfer_start, 102500 * kUs);
  EXPECT_EQ(d.requests[1].transfer_end, 203 * kMs);
  EXPECT_EQ(d.link_busy[0], 201 * kMs);
}

// fp8 KV halves the bytes and the wire time.
TEST(Disagg, KvDtypeSetsTheBytesMoved) {
  const Scenario bf16 = MustParse(DisaggScenario("", false));
  const Scenario fp8 = MustParse(DisaggScenario("", false), {"engine.kv_cache_dtype=fp8"});
  SimulationOutput a, b;
  RunScenario(bf16, &a, true);
  RunScenario(fp8, &b, true);
  EXPECT_DOUBLE_EQ(b.disagg->bytes_moved * 2, a.disagg->bytes_moved);
  EXPECT_EQ(b.disagg->requests[0].transfer_end - b.disagg->requests[0].transfer_start,
            1000 * kUs);  // 0.5 ms latency + 0.5 ms wire
}

// Random small deployments under every check; then outputs broken on
// purpose, each caught by the invariant it breaks.
std::string RandomDisagg(uint64_t seed) {
  Rng rng(seed, "disagg-test");
  const auto pick = [&](int n) { return static_cast<int>(rng.NextU64() % n); };
  const bool async = pick(2), chunked = pick(2), prefix = pick(3) == 0;
  const int pblocks = 8 + pick(200), dblocks = 40 + pick(400);
  const char* routers[] = {"round_robin", "least_outstanding", "power_of_two"};
  nlohmann::json j = {
      {"seed", seed},
      {"model", "llama-3.1-8b"},
      {"hardware", {{"gpu", "h200"}}},
      {"cost_model", {{"type", "roofline"}}},
      {"engine", {{"async_scheduling", async}, {"chunked_prefill", chunked},
                  {"prefix_caching", prefix}, {"max_num_batched_tokens", 512},
                  {"max_num_seqs", 1 + pick(32)}}},
      {"workload",
       {{"arrival", {{"process", "poisson"}, {"rate", 5 + pick(200)}}},
        {"input_len", {{"dist", "uniform"}, {"min", 1}, {"max", 120}}},
        {"output_len", {{"dist", "uniform"}, {"min", 1}, {"max", 60}}},
        {"num_requests", 150}}},
      {"disaggregation",
       {{"prefill", {{"replicas", 1 + pick(3)}, {"router", routers[pick(3)]},
                     {"engine", {{"num_gpu_blocks", pblocks}}}}},
        {"decode", {{"replicas", 1 + pick(3)}, {"router", routers[pick(3)]},
                    {"engine", {{"num_gpu_blocks", dblocks}}}}},
        {"link", pick(2) ? nlohmann::json("roce-200g")
                         : nlohmann::json({{"gb_per_s", 0.05 + pick(5)},
                                           {"latency_us", pick(3000)}})}}}};
  if (pick(4) == 0) j["workload"]["max_concurrency"] = 1 + pick(20);
  return j.dump();
}

// The report's per-request figures come from histograms (the run need not
// keep its requests): against the exact figures of the kept requests,
// counts, means, minima and maxima agree, and each percentile lies within
// the histogram's 0.4% of the values its rank falls between.
void ExpectDigestMatchesExactFigures(const Scenario& sc, const SimulationOutput& out) {
  std::vector<double> prefill, transfer, wait, decode, share;
  for (size_t i = 0; i < out.requests.size(); ++i) {
    const Request& r = out.requests[i];
    const DisaggRequest& t = out.disagg->requests[i];
    if (!r.measured || r.status != RequestStatus::kFinished) continue;
    const double ttft = static_cast<double>(r.first_token - r.send);
    prefill.push_back(static_cast<double>(t.prefill_end - r.send) * 1e-6);
    transfer.push_back(static_cast<double>(t.transfer_end - t.prefill_end) * 1e-6);
    wait.push_back(static_cast<double>(t.transfer_start - t.prefill_end) * 1e-6);
    decode.push_back(static_cast<double>(r.first_scheduled - t.transfer_end) * 1e-6);
    share.push_back(static_cast<double>(t.transfer_end - t.prefill_end) / ttft);
  }
  const std::vector<double> ps = {10, 50, 90, 99};
  const DisaggSummary ds =
      SummarizeDisagg(out, sc.ToSimulationInput(), DisaggDigest::FromOutput(out), ps);
  const auto check = [&](const char* name, std::vector<double> exact, const SampleStats& got) {
    SCOPED_TRACE(name);
    ASSERT_EQ(got.count, static_cast<int64_t>(exact.size()));
    if (exact.empty()) return;
    std::sort(exact.begin(), exact.end());
    double sum = 0;
    for (double v : exact) sum += v;
    EXPECT_NEAR(got.mean, sum / static_cast<double>(exact.size()), 1e-9 * (1 + exact.back()));
    EXPECT_NEAR(got.min, exact.front(), 1e-9 * (1 + exact.front()));
    EXPECT_NEAR(got.max, exact.back(), 1e-9 * (1 + exact.back()));
    for (const auto& [p, v] : got.percentiles) {
      const double rank = p / 100 * static_cast<double>(exact.size() - 1);
      const double lo = exact[static_cast<size_t>(std::floor(rank))];
      const double hi = exact[static_cast<size_t>(std::ceil(rank))];
      EXPECT_GE(v, lo * (1 - 0.004) - 1e-9) << "p" << p;
      EXPECT_LE(v, hi * (1 + 0.004) + 1e-9) << "p" << p;
    }
  };
  check("send -> prefill done", prefill, ds.prefill_ms);
  check("prefill done -> KV arrived", transfer, ds.transfer_ms);
  check("link wait", wait, ds.link_wait_ms);
  check("KV arrived -> decode admitted", decode, ds.decode_wait_ms);
  check("transfer share of TTFT", share, ds.transfer_share);
}

TEST(Disagg, RandomDeploymentsKeepEveryInvariant) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + RandomDisagg(seed));
    const Scenario sc = MustParse(RandomDisagg(seed));
    SimulationOutput out;
    RunScenario(sc, &out, /*check_invariants=*/true);
    EXPECT_GT(out.disagg->transfers, 0);
    ExpectDigestMatchesExactFigures(sc, out);
  }
}

bool Mentions(const std::vector<std::string>& lines, const std::string& what) {
  for (const auto& l : lines) {
    if (l.find(what) != std::string::npos) return true;
  }
  return false;
}

TEST(Disagg, InvariantsCatchBrokenRuns) {
  const Scenario sc = MustParse(DisaggScenario("", false));
  SimulationInput in = sc.ToSimulationInput();
  in.record_steps = true;
  const SimulationOutput good = RunSimulation(in);
  ASSERT_TRUE(CheckRunInvariants(in, good).empty());
  const auto broken = [&](auto mutate) {
    SimulationOutput o = good;
    mutate(o);
    return CheckRunInvariants(in, o);
  };
  // Decode admitted before the KV arrived.
  EXPECT_TRUE(Mentions(broken([](SimulationOutput& o) {
    o.disagg->requests[0].transfer_end = o.requests[0].first_scheduled + 1;
  }), "decode admitted"));
  // Two transfers overlapping on one link.
  EXPECT_TRUE(Mentions(broken([](SimulationOutput& o) {
    o.disagg->requests[1].transfer_start -= 3 * kMs;
    o.disagg->requests[1].transfer_end -= 3 * kMs;
  }), "links"));
  // A transfer started before its prefill ended.
  EXPECT_TRUE(Mentions(broken([](SimulationOutput& o) {
    o.disagg->requests[0].prefill_end += 1;
  }), "order"));
  // A prefill copy still holding its block after the transfer.
  EXPECT_TRUE(Mentions(broken([](SimulationOutput& o) {
    o.disagg->prefill_requests[0].blocks.push_back(3);
  }), "kv"));
  // Bytes that no transfer moved; a transfer counted twice.
  EXPECT_TRUE(Mentions(broken([](SimulationOutput& o) { o.disagg->bytes_moved += 1e6; }),
                       "bytes moved"));
  EXPECT_TRUE(Mentions(broken([](SimulationOutput& o) { ++o.disagg->transfers; }),
                       "conservation"));
  // A request on a prefill instance as its decode instance.
  EXPECT_TRUE(Mentions(broken([](SimulationOutput& o) { o.requests[0].replica = 0; }),
                       "pools"));
}

std::string ErrorOf(const std::string& json) {
  StatusOr<Scenario> sc = ParseScenario(json, "<t>", {});
  return sc.ok() ? "" : sc.status().message();
}

TEST(Disagg, ScenarioErrorsNameTheJsonPath) {
  const std::string base = DisaggScenario("", false);
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string j = base;
    j.replace(j.find(from), from.size(), to);
    return ErrorOf(j);
  };
  EXPECT_NE(with(R"("prefill": {"replicas": 1)", R"("prefill": {"replicaz": 1)")
                .find("/disaggregation/prefill/replicaz"),
            std::string::npos);
  EXPECT_NE(with(R"("prefill": {"replicas": 1)",
                 R"("prefill": {"replicas": 1, "engine": {"max_num_seq": 4})")
                .find("/disaggregation/prefill/engine/max_num_seq"),
            std::string::npos);
  EXPECT_NE(with(R"("decode": {"replicas": 1})", R"("decode": {"replicas": 1, "tp": 3})")
                .find("/disaggregation/decode/tp"),
            std::string::npos);
  EXPECT_NE(with(R"("link": {"gb_per_s": 1.31072, "latency_us": 500})", R"("link": "infiniband")")
                .find("unknown link \"infiniband\""),
            std::string::npos);
  EXPECT_NE(with(R"("link": {"gb_per_s": 1.31072, "latency_us": 500})",
                 R"("link": {"gb_per_s": -1, "latency_us": 500})")
                .find("/disaggregation/link/gb_per_s"),
            std::string::npos);
  EXPECT_NE(with(R"("decode": {"replicas": 1})",
                 R"("decode": {"replicas": 1, "engine": {"kv_cache_dtype": "fp8"}})")
                .find("kv_cache_dtype"),
            std::string::npos);
  EXPECT_NE(with(R"("seed": 7,)", R"("seed": 7, "cluster": {"replicas": 2},)").find("/cluster"),
            std::string::npos);
  // Without /hardware each pool names its GPU.
  EXPECT_NE(with(R"("hardware": {"gpu": "h200"},)", "").find("/disaggregation/prefill/gpu"),
            std::string::npos);
}

// Each pool has its own GPU, tp and memory plan; /engine is the default
// a pool's engine overrides.
TEST(Disagg, PoolsHaveTheirOwnHardwareAndEngine) {
  const Scenario sc = MustParse(R"({"model": "llama-3.1-8b",
    "engine": {"max_num_seqs": 64},
    "workload": {"arrival": {"process": "poisson", "rate": 1},
                 "input_len": {"dist": "fixed", "value": 10},
                 "output_len": {"dist": "fixed", "value": 3}, "num_requests": 5},
    "disaggregation": {
      "prefill": {"gpu": "h100-sxm", "tp": 2, "replicas": 3,
                  "engine": {"max_num_batched_tokens": 4096}},
      "decode": {"gpu": "h200", "replicas": 2, "router": "least_outstanding"},
      "link": "infiniband-ndr-400g"}})");
  ASSERT_TRUE(sc.disagg.has_value());
  const DisaggSpec& d = *sc.disagg;
  EXPECT_EQ(d.prefill.gpu.name, "h100-sxm");
  EXPECT_EQ(d.prefill.tp, 2);
  EXPECT_EQ(d.prefill.replicas, 3);
  EXPECT_EQ(d.prefill.engine.max_num_batched_tokens, 4096);
  EXPECT_EQ(d.prefill.engine.max_num_seqs, 64);
  EXPECT_EQ(d.decode.gpu.name, "h200");
  EXPECT_EQ(d.decode.engine.max_num_batched_tokens, 8192);
  EXPECT_EQ(d.decode.router.name, "least_outstanding");
  EXPECT_NE(d.prefill.engine.num_gpu_blocks, d.decode.engine.num_gpu_blocks);
  EXPECT_EQ(sc.num_replicas, 5);
  EXPECT_EQ(d.link.bytes_per_s, 50e9);
  // tp 2 on the prefill side does not change what one decode GPU receives.
  EXPECT_EQ(sc.ToSimulationInput().disagg->kv_bytes_per_token_per_gpu, 131072.0);
  SimulationOutput out;
  RunScenario(sc, &out, true);
  EXPECT_EQ(out.disagg->transfers, 5);
}

}  // namespace
}  // namespace servesim
