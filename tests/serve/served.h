// In-process `servesim serve` for the tests: the online engine and one
// HTTP server on an ephemeral port at time scale kServeScale, invariants
// checked, and a wait for a condition on wall time.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "sim/serve/http_server.h"
#include "sim/serve/online_engine.h"
#include "tests/test_util.h"

namespace servesim::testing {

constexpr double kServeScale = 10;

// The engine and the server, up on a free port.
struct Served {
  Scenario sc;  // owns the cost model the engine's input points to
  std::unique_ptr<OnlineEngine> engine;
  std::unique_ptr<HttpServer> http;
  std::thread thread;
  int port = 0;

  explicit Served(const std::string& scenario, int max_requests = 4096,
                  double request_timeout_s = 60)
      : sc(MustParse(scenario)) {
    OnlineOptions eo;
    eo.time_scale = kServeScale;
    eo.max_requests = max_requests;
    eo.check_invariants = true;
    eo.lag_warning_s = 0;
    engine = std::make_unique<OnlineEngine>(sc.ToSimulationInput(), eo);
    HttpOptions ho;
    ho.port = 0;
    ho.threads = 96;
    ho.model_name = "test-model";
    ho.request_timeout_s = request_timeout_s;
    ho.block_size = sc.engine.block_size;
    http = std::make_unique<HttpServer>(engine.get(), ho);
    const Status st = http->Bind();
    EXPECT_TRUE(st.ok()) << st.message();
    port = http->Port();
    engine->Start();
    thread = std::thread([this] { http->Run(); });
  }
  void Shutdown(double drain_s) {
    engine->Shutdown(drain_s);
    http->Stop(10);
    if (thread.joinable()) thread.join();
  }
  ~Served() { Shutdown(0); }
};

// Polls `done` until it holds (true) or `seconds` of wall time pass.
inline bool WaitFor(const std::function<bool()>& done, double seconds) {
  using Clock = std::chrono::steady_clock;
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(seconds));
  while (!done()) {
    if (Clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace servesim::testing
