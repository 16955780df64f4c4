// Clients that go away, as `servesim serve` sees them: requests aborted at
// random moments (before admission is handled, while waiting, running,
// with a token in flight, after they ended) on every engine loop serve
// supports, each run under the run-level invariants; and over HTTP, a
// streaming client that disconnects and one that times out have their
// requests aborted, counted in /metrics as vLLM counts them.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "sim/core/rng.h"
#include "sim/serve/http_server.h"
#include "sim/serve/online_engine.h"
#include "tests/serve/served.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

using Clock = std::chrono::steady_clock;

std::string ServedScenario(const std::string& hardware, const std::string& cost,
                     const std::string& engine) {
  return R"({"seed": 5, "model": "llama-3.1-8b", "hardware": )" + hardware +
         R"(, "cost_model": )" + cost + R"(, "engine": )" + engine + R"(,
    "cluster": {"replicas": 2, "router": "least_outstanding"},
    "workload": {"arrival": {"process": "poisson", "rate": 5}, "num_requests": 10,
      "input_len": {"dist": "fixed", "value": 100},
      "output_len": {"dist": "uniform", "min": 4, "max": 40}}})";
}

const char* const kLinear =
    R"({"type": "linear", "step_s": 0.004, "prefill_token_s": 0.00002, "decode_seq_s": 0.0002})";


TEST(ServeAbort, RandomAbortsOnEveryEngineLoopKeepEveryInvariant) {
  const std::string h200 = R"({"gpu": "h200"})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"vllm sync, prefix caching",
       ServedScenario(h200, kLinear, R"({"async_scheduling": false, "prefix_caching": true,
                                   "num_gpu_blocks": 400, "max_num_seqs": 8})")},
      {"vllm async, preemption",
       ServedScenario(h200, kLinear, R"({"async_scheduling": true, "num_gpu_blocks": 120,
                                   "max_num_batched_tokens": 256})")},
      {"vllm kv offload, swap preemption",
       ServedScenario(h200, kLinear, R"({"async_scheduling": true, "prefix_caching": true,
                                   "num_gpu_blocks": 120, "preemption": "swap",
                                   "kv_offload": {"cpu_gib": 1, "pcie_gb_per_s": 25}})")},
      {"vllm pipeline of 2",
       ServedScenario(R"({"gpu": "h100", "pp": 2})", R"({"type": "roofline"})",
                R"({"num_gpu_blocks": 400})")},
      {"sglang normal loop",
       ServedScenario(h200, kLinear, R"({"kind": "sglang", "sglang": {"max_total_tokens": 1500,
                                   "disable_overlap_schedule": true}})")},
      {"sglang overlap loop",
       ServedScenario(h200, kLinear, R"({"kind": "sglang", "sglang": {"max_total_tokens": 1500,
                                   "chunked_prefill_size": 64, "page_size": 16}})")},
  };
  int64_t aborted_running = 0, aborted_unscheduled = 0;  // over the cases
  for (const auto& [name, scenario] : cases) {
    SCOPED_TRACE(name);
    const Scenario sc = testing::MustParse(scenario);
    OnlineOptions o;
    o.time_scale = 10;
    o.check_invariants = true;
    o.lag_warning_s = 0;
    OnlineEngine engine(sc.ToSimulationInput(), o);
    engine.Start();
    Rng rng(17, name);
    constexpr int kRequests = 80;
    std::vector<std::shared_ptr<TokenStream>> streams;
    std::multimap<Clock::time_point, size_t> aborts;  // when, which
    for (int i = 0; i < kRequests; ++i) {
      std::this_thread::sleep_for(std::chrono::microseconds(rng.Below(3000)));
      auto s = std::make_shared<TokenStream>();
      const int32_t prompt = 40 + static_cast<int32_t>(rng.Below(200));
      const int32_t out = 5 + static_cast<int32_t>(rng.Below(120));
      s->max_tokens = out;
      // Half share a two-block prefix (the prefix cache and SGLang's tree).
      std::vector<uint64_t> hashes;
      for (int32_t b = 0; b < prompt / 16; ++b) {
        hashes.push_back(b < 2 && i % 2 == 0 ? 1000 + b : (static_cast<uint64_t>(i) << 20) + b);
      }
      ASSERT_EQ(engine.Submit(prompt, hashes, out, 0, true, s),
                OnlineEngine::SubmitResult::kAccepted);
      streams.push_back(s);
      const size_t k = streams.size() - 1;
      switch (rng.Below(4)) {
        case 0:  // at once: often before its admission was handled
          engine.Abort(s);
          break;
        case 1:  // later, running or waiting or ended
          aborts.emplace(Clock::now() + std::chrono::microseconds(rng.Below(60000)), k);
          break;
        default:
          break;
      }
      while (!aborts.empty() && aborts.begin()->first <= Clock::now()) {
        engine.Abort(streams[aborts.begin()->second]);
        aborts.erase(aborts.begin());
      }
    }
    for (const auto& [when, k] : aborts) {
      std::this_thread::sleep_until(when);
      engine.Abort(streams[k]);
    }
    const bool all_done = testing::WaitFor(
        [&] {
          return std::all_of(streams.begin(), streams.end(), [](const auto& s) {
            std::lock_guard<std::mutex> lock(s->mu);
            return s->done;
          });
        },
        60);
    ASSERT_TRUE(all_done);
    // Nothing left: aborted requests hold no KV and occupy no slot.
    const MetricsSnapshot m = engine.Snapshot();
    EXPECT_EQ(m.running, 0);
    EXPECT_EQ(m.waiting, 0);
    EXPECT_EQ(m.kv_usage, 0);
    engine.Shutdown(1);
    const SimulationOutput& out = engine.output();
    int64_t finished = 0, aborted = 0;
    for (const Request& r : out.requests) {
      const auto& s = *streams[static_cast<size_t>(r.id)];
      if (r.status == RequestStatus::kAborted) {
        ++aborted;
        aborted_running += r.num_output > 0;
        aborted_unscheduled += r.first_scheduled < 0;
        EXPECT_LT(r.num_output, r.output_len);
        EXPECT_NE(s.error.find("aborted"), std::string::npos) << s.error;
        EXPECT_EQ(s.released, r.num_output);
      } else {
        ASSERT_EQ(r.status, RequestStatus::kFinished) << r.id;
        ++finished;
        EXPECT_EQ(s.error, "");
        EXPECT_EQ(s.released, r.output_len);
      }
    }
    EXPECT_EQ(finished + aborted, kRequests);
    EXPECT_EQ(out.aborted, aborted);
    EXPECT_EQ(engine.Snapshot().finished_abort, aborted);
    // A quarter aborted at once, a quarter later (some after they ended).
    EXPECT_GE(aborted, kRequests / 8);
    EXPECT_GE(finished, kRequests / 4);
    for (const std::string& line : engine.CheckInvariants()) ADD_FAILURE() << line;
    const RunSummary sum = Summarize(out, engine.input(), "served", 1.0);
    EXPECT_EQ(sum.aborted, aborted);
    EXPECT_EQ(sum.completed, finished);
  }
  // Both kinds happened: aborts of requests mid-stream and of requests
  // never scheduled (waiting, or not yet admitted).
  EXPECT_GT(aborted_running, 0);
  EXPECT_GT(aborted_unscheduled, 0);
  std::printf("aborted mid-stream %lld, never scheduled %lld\n",
              static_cast<long long>(aborted_running),
              static_cast<long long>(aborted_unscheduled));
}

// Over HTTP: a streaming client that reads a few tokens and hangs up, and
// requests that time out (streamed and not), leave the engine with nothing
// running; /metrics counts them as aborted.
// The served engine's aborts reach n in /metrics.
bool AbortsReach(const testing::Served& srv, int64_t n) {
  return testing::WaitFor([&] { return srv.engine->Snapshot().finished_abort == n; }, 30);
}

// Shuts the server down; the served run's invariants must hold.
void Finish(testing::Served* srv) {
  srv->Shutdown(1);
  for (const std::string& line : srv->engine->CheckInvariants()) ADD_FAILURE() << line;
}

const std::string& AbortScenario() {
  static const std::string s =
      ServedScenario(R"({"gpu": "h200"})", kLinear, R"({"num_gpu_blocks": 6000})");
  return s;
}

TEST(ServeAbort, AClientThatHangsUpHasItsRequestAborted) {
  // No timeout: only the hang-up can abort it.
  testing::Served srv(AbortScenario(), 4096, /*request_timeout_s=*/600);
  httplib::Client cli("127.0.0.1", srv.port);
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.body = R"({"prompt": "x", "max_tokens": 20000, "ignore_eos": true, "stream": true})";
  req.set_header("Content-Type", "application/json");
  int chunks = 0;
  req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) {
    return ++chunks < 5;  // then hang up
  };
  cli.send(req);
  EXPECT_EQ(chunks, 5);
  // Noticed when its next token cannot be written.
  EXPECT_TRUE(AbortsReach(srv, 1));
  const MetricsSnapshot m = srv.engine->Snapshot();
  EXPECT_EQ(m.running, 0);
  EXPECT_EQ(m.kv_usage, 0);
  EXPECT_EQ(m.finished_length + m.finished_stop, 0);
  EXPECT_NE(RenderPrometheus(m, "test-model").find(R"(finished_reason="abort"} 1)"),
            std::string::npos);
  Finish(&srv);
  const SimulationOutput& out = srv.engine->output();
  EXPECT_EQ(out.aborted, 1);
  ASSERT_EQ(out.requests.size(), 1u);
  EXPECT_EQ(out.requests[0].status, RequestStatus::kAborted);
  EXPECT_LT(out.requests[0].num_output, 20000);
}

TEST(ServeAbort, RequestsThatTimeOutAreAborted) {
  testing::Served srv(AbortScenario(), 4096, /*request_timeout_s=*/0.3);
  httplib::Client cli("127.0.0.1", srv.port);
  const std::string body = R"({"prompt": "x", "max_tokens": 20000, "ignore_eos": true)";
  const auto whole = cli.Post("/v1/completions", body + "}", "application/json");
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->status, 504);
  const auto streamed =
      cli.Post("/v1/completions", body + R"(, "stream": true})", "application/json");
  ASSERT_TRUE(streamed);
  EXPECT_NE(streamed->body.find("timed out"), std::string::npos);
  EXPECT_TRUE(AbortsReach(srv, 2));
  const MetricsSnapshot m = srv.engine->Snapshot();
  EXPECT_EQ(m.running, 0);
  EXPECT_EQ(m.kv_usage, 0);
  Finish(&srv);
  EXPECT_EQ(srv.engine->output().aborted, 2);
}

}  // namespace
}  // namespace servesim
