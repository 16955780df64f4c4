// `servesim serve` end to end, in process: the engine and the HTTP server
// on an ephemeral port, driven by an HTTP client (cpp-httplib's) at a fixed
// schedule, at time scale 10 so that the test is quick. Checks that every
// request is answered once, that the streamed tokens arrive when the
// engine's steps end (the client's TTFT and token times minus the engine's
// record: the HTTP path's overhead, reported), that /metrics counts what
// was sent, that bad requests get OpenAI's errors, that shutdown with
// requests in flight loses none, and that the served run passes the same
// run-level invariants as `servesim run`.
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <thread>

#include "sim/serve/http_server.h"
#include "sim/serve/online_engine.h"
#include "tests/serve/served.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

using testing::Served;
constexpr double kScale = testing::kServeScale;

// Two replicas behind a router, prefix caching on, the linear cost model
// (steps of 4 ms and up, simulated).
std::string TestScenario(int blocks = 6000, int max_num_seqs = 64) {
  return R"({"seed": 3, "model": "llama-3.1-8b", "hardware": {"gpu": "h200"},
    "cost_model": {"type": "linear", "step_s": 0.004, "prefill_token_s": 0.00002,
                   "decode_seq_s": 0.0002},
    "engine": {"prefix_caching": true, "num_gpu_blocks": )" + std::to_string(blocks) +
         R"(, "max_num_seqs": )" + std::to_string(max_num_seqs) + R"(},
    "cluster": {"replicas": 2, "router": "round_robin"},
    "workload": {"arrival": {"process": "poisson", "rate": 5}, "num_requests": 10,
      "input_len": {"dist": "fixed", "value": 100},
      "output_len": {"dist": "uniform", "min": 4, "max": 40}}})";
}


// What a client saw of one request.
struct Seen {
  int status = 0;
  std::string body;             // everything received
  int64_t id = -1;              // from the response id
  std::vector<double> token_s;  // wall seconds from send to each token
  int tokens = 0, done_markers = 0, error_events = 0;
  json usage;
  std::string finish_reason;
};

int64_t IdOf(const std::string& id) {
  return std::stoll(id.substr(id.find('-') + 1));
}

// POSTs `body` and reads the answer; a streamed one event by event, each
// token timed when its bytes arrive.
Seen Post(int port, const std::string& path, const std::string& body) {
  httplib::Client cli("127.0.0.1", port);
  cli.set_read_timeout(60, 0);
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = body;
  req.set_header("Content-Type", "application/json");
  Seen s;
  std::string pending;
  const auto t0 = Clock::now();
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    const double t = std::chrono::duration<double>(Clock::now() - t0).count();
    s.body.append(data, n);
    pending.append(data, n);
    for (size_t end; (end = pending.find("\n\n")) != std::string::npos;) {
      const std::string event = pending.substr(0, end);
      pending.erase(0, end + 2);
      if (event.rfind("data: ", 0) != 0) continue;
      const std::string data = event.substr(6);
      if (data == "[DONE]") {
        ++s.done_markers;
        continue;
      }
      const json j = json::parse(data);
      if (j.contains("error")) {
        ++s.error_events;
        continue;
      }
      s.id = IdOf(j["id"]);
      if (j.contains("usage") && !j["usage"].is_null()) s.usage = j["usage"];
      for (const json& c : j["choices"]) {
        const std::string text =
            c.contains("delta") ? c["delta"].value("content", "") : c.value("text", "");
        if (!text.empty()) {
          ++s.tokens;
          s.token_s.push_back(t);
        }
        if (c["finish_reason"].is_string()) s.finish_reason = c["finish_reason"];
      }
    }
    return true;
  };
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  cli.send(req, res, err);
  s.status = err == httplib::Error::Success ? res.status : -1;
  if (s.body.empty()) s.body = res.body;
  if (s.status == 200 && s.body.rfind("data: ", 0) != 0) {  // not streamed
    const json j = json::parse(s.body);
    s.id = IdOf(j["id"]);
    s.usage = j["usage"];
    s.finish_reason = j["choices"][0]["finish_reason"];
  }
  return s;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p / 100 * static_cast<double>(v.size() - 1) + 0.5)];
}

std::map<std::string, double> Scrape(int port) {
  httplib::Client cli("127.0.0.1", port);
  auto res = cli.Get("/metrics");
  EXPECT_TRUE(res);
  std::map<std::string, double> m;
  if (!res) return m;
  EXPECT_EQ(res->status, 200);
  size_t at = 0;
  const std::string& b = res->body;
  while (at < b.size()) {
    size_t nl = b.find('\n', at);
    if (nl == std::string::npos) nl = b.size();
    const std::string line = b.substr(at, nl - at);
    at = nl + 1;
    if (line.empty() || line[0] == '#') continue;
    const size_t brace = line.find('{'), close = line.rfind('}');
    EXPECT_NE(brace, std::string::npos) << line;
    EXPECT_NE(close, std::string::npos) << line;
    if (brace == std::string::npos || close == std::string::npos) continue;
    std::string key = line.substr(0, brace);
    const std::string labels = line.substr(brace + 1, close - brace - 1);
    // Keep the labels that tell samples of one name apart.
    for (const char* l : {"le=", "finished_reason="}) {
      const size_t p = labels.find(l);
      if (p != std::string::npos) key += "|" + labels.substr(p);
    }
    size_t used = 0;
    const double v = std::stod(line.substr(close + 2), &used);
    EXPECT_GT(used, 0u) << line;
    EXPECT_EQ(m.count(key), 0u) << "sample twice: " << line;
    m[key] = v;
  }
  return m;
}

std::string PromptOfWords(int i, int words) {
  // Requests share their first words, so the prefix cache has hits.
  std::string s;
  for (int w = 0; w < words; ++w) s += w < words / 2 ? "shared " : "own" + std::to_string(i) + " ";
  return s;
}

TEST(Serve, FixedScheduleStreamsMatchTheEngineRecord) {
  Served srv(TestScenario());
  constexpr int kRequests = 48;
  std::vector<Seen> seen(kRequests);
  std::vector<json> sent(kRequests);
  std::vector<std::thread> clients;
  const auto start = Clock::now();
  for (int i = 0; i < kRequests; ++i) {
    json body = {{"stream", true}, {"stream_options", {{"include_usage", true}}},
                 {"max_tokens", 6 + i % 20}, {"ignore_eos", i % 2 == 0}};
    const bool chat = i % 3 == 0;
    if (chat) {
      body["messages"] = {{{"role", "user"}, {"content", PromptOfWords(i, 60)}}};
    } else {
      body["prompt"] = PromptOfWords(i, 60);
    }
    if (i % 5 == 0) body["min_tokens"] = 6 + i % 20;
    sent[i] = body;
    clients.emplace_back([&, i, chat, body] {
      std::this_thread::sleep_until(start + std::chrono::milliseconds(15 * i));
      seen[i] = Post(srv.port, chat ? "/v1/chat/completions" : "/v1/completions", body.dump());
    });
  }
  for (auto& t : clients) t.join();
  const std::map<std::string, double> m = Scrape(srv.port);
  srv.Shutdown(30);
  const SimulationOutput& out = srv.engine->output();
  ASSERT_EQ(out.requests.size(), static_cast<size_t>(kRequests));

  std::set<int64_t> ids;
  std::vector<double> ttft_overhead, token_overhead;
  int64_t prompt_tokens = 0, generated = 0;
  for (int i = 0; i < kRequests; ++i) {
    const Seen& s = seen[i];
    ASSERT_EQ(s.status, 200) << s.body;
    EXPECT_EQ(s.done_markers, 1) << s.body;
    EXPECT_EQ(s.error_events, 0) << s.body;
    ASSERT_TRUE(s.id >= 0 && s.id < kRequests);
    EXPECT_TRUE(ids.insert(s.id).second) << "request " << s.id << " answered twice";
    const Request& r = out.requests[s.id];
    ASSERT_EQ(r.status, RequestStatus::kFinished);
    // Tokens: as many as the engine generated, as the usage says.
    EXPECT_EQ(s.tokens, r.output_len);
    EXPECT_EQ(s.usage["completion_tokens"], r.output_len);
    EXPECT_EQ(s.usage["prompt_tokens"], r.prompt_len);
    const int max_tokens = sent[i]["max_tokens"];
    if (sent[i]["ignore_eos"]) {
      EXPECT_EQ(r.output_len, max_tokens);
    } else {
      EXPECT_LE(r.output_len, max_tokens);
      EXPECT_GE(r.output_len, sent[i].value("min_tokens", 1));
    }
    EXPECT_EQ(s.finish_reason, r.output_len == max_tokens ? "length" : "stop");
    prompt_tokens += r.prompt_len;
    generated += r.output_len;
  }
  // Token times: each client token against the end of the step that made
  // it (the engine's per-token record, whose first and last are the run's
  // own first_token and last_token), from the request's arrival, in wall
  // time: the HTTP path's overhead.
  std::vector<double> all_overhead;
  for (int i = 0; i < kRequests; ++i) {
    const Seen& s = seen[i];
    const Request& r = out.requests[s.id];
    const std::vector<SimTime>& engine = srv.engine->TokenTimes(s.id);
    ASSERT_EQ(engine.size(), s.token_s.size());
    EXPECT_EQ(engine.front(), r.first_token);
    EXPECT_EQ(engine.back(), r.last_token);
    for (size_t k = 0; k < engine.size(); ++k) {
      const double d = s.token_s[k] - ToSeconds(engine[k] - r.arrival) / kScale;
      (k == 0 ? ttft_overhead : token_overhead).push_back(d);
      all_overhead.push_back(d);
    }
  }
  const double p50 = Percentile(ttft_overhead, 50), p99 = Percentile(ttft_overhead, 99);
  const double lo = *std::min_element(all_overhead.begin(), all_overhead.end());
  const double hi = *std::max_element(all_overhead.begin(), all_overhead.end());
  std::printf("[ serve ] HTTP path overhead, client time - engine time of the same token "
              "(wall, time scale %g, %d streamed requests): first token (TTFT) p50 %.3f ms, "
              "p99 %.3f ms; later tokens p50 %.3f ms, p99 %.3f ms; all tokens min %.3f ms, "
              "max %.3f ms\n",
              kScale, kRequests, p50 * 1e3, p99 * 1e3, Percentile(token_overhead, 50) * 1e3,
              Percentile(token_overhead, 99) * 1e3, lo * 1e3, hi * 1e3);
  // The client never sees a token before its step ended (1 ms: clock
  // rounding), and sees most soon after: a stream that held tokens back
  // (or sent them early) fails here.
  EXPECT_GE(lo, -0.001);
  EXPECT_LT(p50, 0.05);
  EXPECT_LT(Percentile(token_overhead, 50), 0.05);
  EXPECT_LT(hi, 1.0);
  // /metrics (scraped before shutdown, every request done) counts what was sent.
  EXPECT_EQ(m.at("vllm:num_requests_running"), 0);
  EXPECT_EQ(m.at("vllm:num_requests_waiting"), 0);
  EXPECT_EQ(m.at("vllm:prompt_tokens_total"), static_cast<double>(prompt_tokens));
  EXPECT_EQ(m.at("vllm:generation_tokens_total"), static_cast<double>(generated));
  EXPECT_EQ(m.at("vllm:request_success_total|finished_reason=\"length\"") +
                m.at("vllm:request_success_total|finished_reason=\"stop\""),
            kRequests);
  EXPECT_EQ(m.at("vllm:time_to_first_token_seconds_count"), kRequests);
  EXPECT_EQ(m.at("vllm:time_to_first_token_seconds_bucket|le=\"+Inf\""), kRequests);
  EXPECT_EQ(m.at("vllm:e2e_request_latency_seconds_count"), kRequests);
  EXPECT_EQ(m.at("vllm:inter_token_latency_seconds_count"),
            static_cast<double>(generated - kRequests));
  EXPECT_EQ(m.at("vllm:prefix_cache_queries_total"), static_cast<double>(prompt_tokens));
  EXPECT_GT(m.at("vllm:prefix_cache_hits_total"), 0);
  EXPECT_EQ(m.at("vllm:num_preemptions_total"), 0);
  // Cumulative buckets never decrease, and end at the count.
  for (const char* h : {"vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds",
                        "vllm:e2e_request_latency_seconds"}) {
    std::vector<std::pair<double, double>> buckets;  // (le, cumulative count)
    const std::string prefix = std::string(h) + "_bucket|le=\"";
    for (const auto& [key, v] : m) {
      if (key.rfind(prefix, 0) != 0) continue;
      const std::string le = key.substr(prefix.size(), key.size() - prefix.size() - 1);
      buckets.emplace_back(le == "+Inf" ? HUGE_VAL : std::stod(le), v);
    }
    std::sort(buckets.begin(), buckets.end());
    ASSERT_GT(buckets.size(), 10u) << h;
    for (size_t i = 1; i < buckets.size(); ++i) {
      EXPECT_GE(buckets[i].second, buckets[i - 1].second) << h;
    }
    EXPECT_EQ(buckets.back().second, m.at(std::string(h) + "_count")) << h;
  }
  // Both replicas served; the served run passes `run`'s invariants.
  EXPECT_GT(out.replicas[0].routed, 0);
  EXPECT_GT(out.replicas[1].routed, 0);
  for (const std::string& line : srv.engine->CheckInvariants()) {
    ADD_FAILURE() << "run invariant violated: " << line;
  }
}

TEST(Serve, NonStreamedAnswersCarryUsageAndTheModelsAndHealthRoutesAnswer) {
  Served srv(TestScenario());
  const Seen s = Post(srv.port, "/v1/completions",
                      R"({"prompt": [1, 2, 3, 4, 5], "max_tokens": 9, "ignore_eos": true,
                          "model": "test-model"})");
  ASSERT_EQ(s.status, 200) << s.body;
  const json j = json::parse(s.body);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["model"], "test-model");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 5);
  EXPECT_EQ(j["usage"]["completion_tokens"], 9);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  const Seen c = Post(srv.port, "/v1/chat/completions",
                      R"({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 3,
                          "ignore_eos": true})");
  ASSERT_EQ(c.status, 200) << c.body;
  const json cj = json::parse(c.body);
  EXPECT_EQ(cj["object"], "chat.completion");
  EXPECT_EQ(cj["choices"][0]["message"]["role"], "assistant");
  httplib::Client cli("127.0.0.1", srv.port);
  auto models = cli.Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(json::parse(models->body)["data"][0]["id"], "test-model");
  auto health = cli.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

// Status and OpenAI error JSON for each kind of bad request.
void ExpectError(const Seen& s, int status, const std::string& param = "") {
  EXPECT_EQ(s.status, status) << s.body;
  const json j = json::parse(s.body, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << s.body;
  ASSERT_TRUE(j.contains("error")) << s.body;
  EXPECT_TRUE(j["error"]["message"].is_string()) << s.body;
  EXPECT_TRUE(j["error"]["type"].is_string()) << s.body;
  EXPECT_TRUE(j["error"]["code"].is_null()) << s.body;
  if (!param.empty()) {
    EXPECT_EQ(j["error"]["param"], param) << s.body;
  }
}

TEST(Serve, MalformedRequestsGetOpenAiErrors) {
  // 64 blocks of 16 tokens: a 2,000-token prompt can never fit.
  Served srv(TestScenario(64));
  ExpectError(Post(srv.port, "/v1/completions", "{not json"), 400);
  ExpectError(Post(srv.port, "/v1/completions", R"({"max_tokens": 3})"), 400, "prompt");
  ExpectError(Post(srv.port, "/v1/completions", R"({"prompt": "x", "max_tokens": -1})"), 400,
              "max_tokens");
  ExpectError(Post(srv.port, "/v1/chat/completions", R"({"messages": "hi"})"), 400, "messages");
  ExpectError(Post(srv.port, "/v1/completions", R"({"prompt": "x", "model": "gpt-9"})"), 404,
              "model");
  ExpectError(Post(srv.port, "/v1/nowhere", R"({"prompt": "x"})"), 404);
  std::string ids = "[";
  for (int i = 0; i < 2000; ++i) ids += std::to_string(i) + ",";
  ids.back() = ']';
  ExpectError(Post(srv.port, "/v1/completions", R"({"stream": true, "prompt": )" + ids + "}"),
              400, "prompt");
  httplib::Client cli("127.0.0.1", srv.port);
  auto get = cli.Get("/v1/completions");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  EXPECT_EQ(get->get_header_value("Allow"), "POST");
  EXPECT_TRUE(json::parse(get->body).contains("error"));
  // The engine's rejection is in the run as `run` records one.
  srv.Shutdown(5);
  EXPECT_EQ(srv.engine->output().rejected, 1);
  for (const std::string& line : srv.engine->CheckInvariants()) ADD_FAILURE() << line;
}

TEST(Serve, AFullServerRefusesWith503AndAnswersTheRest) {
  Served srv(TestScenario(), /*max_requests=*/4);
  std::vector<Seen> seen(12);
  std::vector<std::thread> clients;
  for (int i = 0; i < 12; ++i) {
    clients.emplace_back([&, i] {
      seen[i] = Post(srv.port, "/v1/completions",
                     R"({"prompt": "hello", "max_tokens": 400, "ignore_eos": true})");
    });
  }
  for (auto& t : clients) t.join();
  int ok = 0, refused = 0;
  for (const Seen& s : seen) {
    if (s.status == 200) {
      ++ok;
      EXPECT_EQ(s.usage["completion_tokens"], 400);
    } else {
      ExpectError(s, 503);
      ++refused;
    }
  }
  EXPECT_EQ(ok + refused, 12);
  EXPECT_GE(ok, 4);
  EXPECT_GE(refused, 1);
  const std::map<std::string, double> m = Scrape(srv.port);
  EXPECT_EQ(m.at("servesim:requests_refused_total"), refused);
}

TEST(Serve, ShutdownWithRequestsInFlightLosesNone) {
  Served srv(TestScenario());
  constexpr int kRequests = 16;
  std::vector<Seen> seen(kRequests);
  std::vector<std::thread> clients;
  for (int i = 0; i < kRequests; ++i) {
    clients.emplace_back([&, i] {
      // Half short (they finish while draining), half far too long to.
      const int n = i % 2 == 0 ? 5 : 50000;
      seen[i] = Post(srv.port, "/v1/completions",
                     R"({"prompt": "hello there", "stream": true, "ignore_eos": true,
                         "stream_options": {"include_usage": true},
                         "max_tokens": )" + std::to_string(n) + "}");
    });
  }
  // Every request admitted (finished, running or waiting), then stop.
  const auto until = Clock::now() + std::chrono::seconds(20);
  auto admitted = [&] {
    const MetricsSnapshot m = srv.engine->Snapshot();
    return m.admitted;
  };
  while (admitted() < kRequests && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  {
    const MetricsSnapshot m = srv.engine->Snapshot();
    ASSERT_EQ(admitted(), kRequests) << m.admitted << " " << m.finished_length << " " << m.finished_stop << " "
                                     << m.running << " " << m.waiting << " " << m.refused
                                     << " " << m.rejected;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  srv.Shutdown(0.5);
  for (auto& t : clients) t.join();
  int finished = 0, cut = 0;
  for (const Seen& s : seen) {
    ASSERT_EQ(s.status, 200) << s.body;
    EXPECT_EQ(s.done_markers, 1) << s.body;
    if (s.error_events == 1) {
      ++cut;
      EXPECT_LT(s.tokens, 50000);
    } else {
      EXPECT_EQ(s.error_events, 0);
      EXPECT_EQ(s.tokens, s.usage["completion_tokens"]);
      ++finished;
    }
  }
  EXPECT_EQ(finished + cut, kRequests);
  EXPECT_EQ(finished, kRequests / 2);
  EXPECT_EQ(cut, kRequests / 2);
  const SimulationOutput& out = srv.engine->output();
  EXPECT_EQ(out.incomplete, kRequests / 2);
  // A run stopped early, to the invariants: the unfinished are allowed.
  for (const std::string& line : srv.engine->CheckInvariants()) ADD_FAILURE() << line;
}

// An SGLang deployment serves through the same replica seam: concurrent
// streamed requests in a pool tight enough that SGLang's admission holds
// some back each answered in full, the run under the same invariants.
TEST(Serve, AnSglangEngineServesEveryRequestUnderTheInvariants) {
  Served srv(R"({"seed": 3, "model": "llama-3.1-8b", "hardware": {"gpu": "h200"},
    "cost_model": {"type": "linear", "step_s": 0.004, "prefill_token_s": 0.00002,
                   "decode_seq_s": 0.0002},
    "engine": {"kind": "sglang", "sglang": {"max_total_tokens": 600, "page_size": 16,
                                            "chunked_prefill_size": 64}},
    "workload": {"arrival": {"process": "poisson", "rate": 5}, "num_requests": 10,
      "input_len": {"dist": "fixed", "value": 100},
      "output_len": {"dist": "uniform", "min": 4, "max": 40}}})");
  constexpr int kRequests = 12;
  std::vector<Seen> seen(kRequests);
  std::vector<std::thread> clients;
  for (int i = 0; i < kRequests; ++i) {
    clients.emplace_back([&, i] {
      seen[i] = Post(srv.port, "/v1/completions",
                     R"({"prompt": [)" + std::to_string(i + 1) + R"(, 2, 3, 4, 5, 6, 7, 8],
                         "stream": true, "ignore_eos": true, "max_tokens": )" +
                         std::to_string(20 + 5 * i) + "}");
    });
  }
  for (auto& t : clients) t.join();
  for (int i = 0; i < kRequests; ++i) {
    EXPECT_EQ(seen[i].status, 200) << seen[i].body;
    EXPECT_EQ(seen[i].tokens, 20 + 5 * i) << seen[i].body;
    EXPECT_EQ(seen[i].done_markers, 1) << seen[i].body;
    EXPECT_EQ(seen[i].error_events, 0) << seen[i].body;
  }
  srv.Shutdown(1);
  int64_t finished = 0;
  for (const Request& r : srv.engine->output().requests) {
    finished += r.status == RequestStatus::kFinished;
  }
  EXPECT_EQ(finished, kRequests);
  for (const std::string& line : srv.engine->CheckInvariants()) ADD_FAILURE() << line;
}

// The scenario's warm-up holds for a served run as for `run`: the first
// warmup_requests are served and counted in /metrics, but the report (the
// run's summary) measures only the rest, and the invariants agree.
TEST(Serve, WarmUpRequestsAreServedButNotReported) {
  Served srv(R"({"seed": 3, "model": "llama-3.1-8b", "hardware": {"gpu": "h200"},
    "cost_model": {"type": "linear", "step_s": 0.004, "prefill_token_s": 0.00002,
                   "decode_seq_s": 0.0002},
    "metrics": {"warmup_requests": 3},
    "workload": {"arrival": {"process": "poisson", "rate": 5}, "num_requests": 10,
      "input_len": {"dist": "fixed", "value": 100},
      "output_len": {"dist": "uniform", "min": 4, "max": 40}}})");
  constexpr int kRequests = 8;
  for (int i = 0; i < kRequests; ++i) {  // one after another: ids in order
    const Seen seen = Post(srv.port, "/v1/completions",
                           R"({"prompt": [1, 2, 3, 4], "stream": true, "ignore_eos": true,
                               "max_tokens": 10})");
    EXPECT_EQ(seen.status, 200) << seen.body;
    EXPECT_EQ(seen.tokens, 10) << seen.body;
  }
  srv.Shutdown(1);
  const SimulationOutput& out = srv.engine->output();
  ASSERT_EQ(out.requests.size(), static_cast<size_t>(kRequests));
  for (const Request& r : out.requests) EXPECT_EQ(r.measured, r.id >= 3) << r.id;
  EXPECT_EQ(srv.engine->Snapshot().finished_length, kRequests);  // /metrics: all
  const RunSummary s = Summarize(out, srv.engine->input(), "served", 1.0);
  EXPECT_EQ(s.ttft_ms.count, kRequests - 3);
  // The measured window opens at the first measured arrival.
  EXPECT_EQ(out.recorder.window_start(), out.requests[3].arrival);
  for (const std::string& line : srv.engine->CheckInvariants()) ADD_FAILURE() << line;
}

TEST(Serve, ARequestPastItsTimeoutGetsAnErrorOnce) {
  // 1 s (wall) per request; 20,000 tokens take far longer (about 8 s at
  // time scale 10). The stream goes first: behind a timed-out request that
  // the engine still decodes, a sanitized build's stream got no first
  // token within the timeout (a CI flake; the release build takes 0.6 s).
  Served srv(TestScenario(), 4096, /*request_timeout_s=*/1.0);
  const std::string long_body = R"({"prompt": "x", "max_tokens": 20000, "ignore_eos": true)";
  const Seen streamed = Post(srv.port, "/v1/completions", long_body + R"(, "stream": true})");
  const Seen whole = Post(srv.port, "/v1/completions", long_body + "}");
  ExpectError(whole, 504);
  EXPECT_EQ(streamed.status, 200);  // the stream had started
  EXPECT_GT(streamed.tokens, 0);
  EXPECT_LT(streamed.tokens, 20000);
  EXPECT_EQ(streamed.error_events, 1) << streamed.body;
  EXPECT_EQ(streamed.done_markers, 1) << streamed.body;
}

// --replica-ports: one server per replica on one engine; a request sent to
// replica k's port runs on k whatever the scenario's router would say, and
// each port's /metrics shows its own replica's (the fleet's is their sum).
TEST(Serve, ReplicaPortsServeTheirOwnReplicaAndMetrics) {
  const Scenario sc = testing::MustParse(TestScenario());
  OnlineOptions eo;
  eo.time_scale = kScale;
  eo.check_invariants = true;
  eo.lag_warning_s = 0;
  eo.per_replica_metrics = true;
  OnlineEngine engine(sc.ToSimulationInput(), eo);
  ASSERT_EQ(engine.num_replicas(), 2);
  std::vector<std::unique_ptr<HttpServer>> servers;
  std::vector<std::thread> threads;
  for (int32_t k = 0; k < 2; ++k) {
    HttpOptions ho;
    ho.port = 0;
    ho.threads = 16;
    ho.model_name = "test-model";
    ho.block_size = sc.engine.block_size;
    ho.replica = k;
    servers.push_back(std::make_unique<HttpServer>(&engine, ho));
    ASSERT_TRUE(servers.back()->Bind().ok());
  }
  engine.Start();
  for (auto& h : servers) threads.emplace_back([p = h.get()] { p->Run(); });
  // Five to replica 1's port, two to replica 0's (round robin would split
  // seven 4 / 3 the other way).
  const std::string body = R"({"prompt": "hello", "max_tokens": 6, "ignore_eos": true,
                               "stream": true})";
  for (int i = 0; i < 7; ++i) {
    const Seen seen = Post(servers[i < 5 ? 1 : 0]->Port(), "/v1/completions", body);
    EXPECT_EQ(seen.status, 200) << seen.body;
    EXPECT_EQ(seen.tokens, 6);
  }
  const MetricsSnapshot m0 = engine.Snapshot(0), m1 = engine.Snapshot(1), all = engine.Snapshot();
  EXPECT_EQ(m0.admitted, 2);
  EXPECT_EQ(m1.admitted, 5);
  EXPECT_EQ(all.admitted, 7);
  EXPECT_EQ(m0.finished_length, 2);
  EXPECT_EQ(m1.finished_length, 5);
  EXPECT_EQ(m0.generation_tokens, 12);
  EXPECT_EQ(m1.generation_tokens, 30);
  EXPECT_EQ(m0.ttft.count + m1.ttft.count, all.ttft.count);
  EXPECT_EQ(m0.itl.count + m1.itl.count, all.itl.count);
  // Each port's /metrics is its replica's.
  httplib::Client c1("127.0.0.1", servers[1]->Port());
  const auto scrape = c1.Get("/metrics");
  EXPECT_TRUE(scrape);  // (no ASSERT while the server threads run)
  if (scrape) {
    EXPECT_NE(
        scrape->body.find(R"(vllm:generation_tokens_total{model_name="test-model",engine="0"} 30)"),
        std::string::npos)
        << scrape->body;
  }
  engine.Shutdown(1);
  for (auto& h : servers) h->Stop(5);
  for (auto& t : threads) t.join();
  const SimulationOutput& out = engine.output();
  ASSERT_EQ(out.requests.size(), 7u);
  for (const Request& r : out.requests) EXPECT_EQ(r.replica, r.id < 5 ? 1 : 0) << r.id;
  EXPECT_EQ(out.replicas[0].routed, 2);
  EXPECT_EQ(out.replicas[1].routed, 5);
  for (const std::string& line : engine.CheckInvariants()) ADD_FAILURE() << line;
}

}  // namespace
}  // namespace servesim
