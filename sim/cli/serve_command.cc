// `servesim serve`: the scenario's deployment behind an OpenAI-compatible
// HTTP endpoint, on a simulated clock tied to the wall clock (docs/serve.md).
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <thread>

#include <pthread.h>
#include <unistd.h>

#include "sim/cli/commands.h"
#include "sim/core/json_view.h"
#include "sim/core/output_file.h"
#include "sim/report/summary.h"
#include "sim/report/writers.h"
#include "sim/scenario/scenario.h"
#include "sim/serve/http_server.h"
#include "sim/serve/online_engine.h"

namespace servesim {
namespace {

struct ServeOptions {
  std::string scenario;
  std::vector<std::string> sets;
  std::string host = "127.0.0.1";
  int port = 8000;
  double time_scale = 1;
  int max_requests = 4096;
  int http_threads = 512;
  double request_timeout_s = 600;
  double drain_s = 30;
  std::string model_name;
  bool check_invariants = false;
  bool replica_ports = false;
  bool report = false;
  std::string save_result;
};

Status Serve(const ServeOptions& o) {
  StatusOr<Scenario> sc =
      o.scenario.empty()
          ? ParseScenario(EmbeddedDefaultScenario(),
                          "<embedded default: scenarios/default_chat.json>", o.sets, {})
          : LoadScenarioFile(o.scenario, o.sets, {});
  if (!sc.ok()) return sc.status();
  SimulationInput in = sc->ToSimulationInput();
  if (std::string why = OnlineEngine::CheckOnlineInput(in); !why.empty()) {
    return Status::Error(sc->file + ": " + why + " (expected a deployment servesim serve "
                         "supports; docs/serve.md)");
  }
  OnlineOptions eo;
  eo.time_scale = o.time_scale;
  eo.max_requests = o.max_requests;
  eo.check_invariants = o.check_invariants;
  eo.per_replica_metrics = o.replica_ports;
  HttpOptions ho;
  ho.host = o.host;
  ho.port = o.port;
  ho.threads = o.http_threads;
  ho.request_timeout_s = o.request_timeout_s;
  ho.model_name = !o.model_name.empty()             ? o.model_name
                  : !sc->model.served_hf_id.empty() ? sc->model.served_hf_id
                                                    : sc->model.name;
  ho.block_size = in.engine.block_size;
  // SIGINT and SIGTERM are taken by sigwait below: blocked before any
  // thread starts, so every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigset_t old_mask;
  pthread_sigmask(SIG_BLOCK, &signals, &old_mask);
  OnlineEngine engine(in, eo);
  // One server for the fleet behind the scenario's router, or one per
  // replica (--replica-ports: port, port + 1, ...; with --port 0 each any
  // free port) for an external router.
  std::vector<std::unique_ptr<HttpServer>> servers;
  const int32_t count = o.replica_ports ? engine.num_replicas() : 1;
  for (int32_t k = 0; k < count; ++k) {
    HttpOptions hk = ho;
    if (o.replica_ports) {
      hk.replica = k;
      hk.threads = std::max(16, o.http_threads / count);  // --http-threads in all
      hk.port = o.port == 0 ? 0 : o.port + k;
      if (hk.port > 65535) {
        pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
        return Status::Error("--replica-ports: " + std::to_string(count) + " replicas from port " +
                             std::to_string(o.port) + " pass 65535 (expected a lower --port)");
      }
    }
    servers.push_back(std::make_unique<HttpServer>(&engine, hk));
    if (Status st = servers.back()->Bind(); !st.ok()) {
      pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
      return st;
    }
  }
  engine.Start();
  std::vector<std::thread> threads;
  for (auto& http : servers) {
    threads.emplace_back([h = http.get(), &engine] {
      h->Run();
      // Stopped by itself (not by the shutdown below): wake the sigwait.
      if (!engine.stopping()) kill(getpid(), SIGTERM);
    });
  }
  if (o.replica_ports) {
    std::cerr << "servesim serve: " << ho.model_name << ", one port per replica (no router):";
    for (int32_t k = 0; k < count; ++k) {
      std::cerr << (k ? ", " : " ") << "replica " << k << " on http://" << o.host << ":"
                << servers[k]->Port();
    }
    std::cerr << " (time scale " << o.time_scale << "); SIGINT or SIGTERM stops it"
              << std::endl;
  } else {
    std::cerr << "servesim serve: " << ho.model_name << " on http://" << o.host << ":"
              << servers[0]->Port() << " (" << in.num_replicas << " replica(s), router "
              << in.router.name << ", time scale " << o.time_scale
              << "); SIGINT or SIGTERM stops it" << std::endl;
  }
  int sig = 0;
  sigwait(&signals, &sig);
  std::cerr << "servesim serve: " << (sig == SIGINT ? "SIGINT" : "SIGTERM")
            << ": draining requests in flight (at most " << o.drain_s << " s)" << std::endl;
  engine.Shutdown(o.drain_s);
  for (auto& http : servers) http->Stop(5);
  for (auto& t : threads) t.join();
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  const SimulationOutput& out = engine.output();
  const MetricsSnapshot m = engine.Snapshot();
  std::cout << "servesim serve: " << out.requests.size() << " requests admitted: "
            << (m.finished_length + m.finished_stop) << " finished, " << m.rejected
            << " rejected by the engine, " << m.finished_abort
            << " aborted (their clients went away), " << m.cut_off << " cut off at shutdown; "
            << m.refused << " refused (server full); simulated " << ToSeconds(out.end_time)
            << " s; engine lag at most " << m.max_lag_s << " s (wall)\n";
  // The served run reported as `run` reports one: its requests' own
  // timestamps, in simulated seconds (a client's wall times x time_scale).
  if ((o.report || !o.save_result.empty()) && m.finished_length + m.finished_stop > 0) {
    // Offered: from the first request's arrival (the clock starts with
    // the server, idle until then) to the end.
    const double span = ToSeconds(out.end_time - std::max<SimTime>(0, out.recorder.window_start()));
    const double rate = span > 0 ? static_cast<double>(out.requests.size()) / span : 0;
    char what[160];
    std::snprintf(what, sizeof what,
                  "requests as they arrived over HTTP (time scale %g; latencies in "
                  "simulated seconds)", o.time_scale);
    const RunSummary summary = Summarize(out, engine.input(), what, rate);
    // With a port per replica the scenario's router routed nothing.
    Scenario shown = *sc;
    if (o.replica_ports) shown.router.name = "external (a port per replica)";
    if (o.report) WriteConsoleReport(shown, summary, std::cout);
    if (!o.save_result.empty()) {
      Status st = WriteFileWith(o.save_result, [&](std::ostream& os) {
        os << DumpOutputJson(ResultJson(shown, summary), 2) << "\n";
      });
      if (!st.ok()) return st;
    }
  }
  if (o.check_invariants) {
    const std::vector<std::string> lines = engine.CheckInvariants();
    if (!lines.empty()) {
      for (const std::string& l : lines) std::cerr << "  " << l << "\n";
      return Status::Error(std::to_string(lines.size()) +
                           " run-level invariant violation(s) in the served run");
    }
    std::cout << "servesim serve: run-level invariants hold\n";
  }
  return Status::Ok();
}

}  // namespace

Command AddServeCommand(CLI::App* app) {
  auto opts = std::make_shared<ServeOptions>();
  CLI::App* cmd = app->add_subcommand(
      "serve",
      "Serve the scenario's deployment as an OpenAI-compatible HTTP endpoint on a "
      "simulated clock (docs/serve.md)");
  cmd->add_option("scenario", opts->scenario, "Scenario JSON file (default: the embedded chat scenario)");
  cmd->add_option("--set", opts->sets, "Override a scenario value (repeatable)")
      ->check(NotAnOption());
  cmd->add_option("--host", opts->host, "Address to listen on (default 127.0.0.1)")
      ->check(NotAnOption());
  cmd->add_option("--port", opts->port, "TCP port (default 8000; 0: any free port)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--time-scale", opts->time_scale,
                  "Simulated seconds per wall second (1: real time; 10: ten times faster)")
      ->check(NumberIn(1e-3, 1e4));
  cmd->add_option("--max-requests", opts->max_requests,
                  "Requests inside the server at once; more get HTTP 503 (default 4096)")
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--http-threads", opts->http_threads,
                  "HTTP worker threads: connections served at once (default 512)")
      ->check(CLI::Range(1, 65536));
  cmd->add_option("--request-timeout", opts->request_timeout_s,
                  "Wall seconds a request may take before it gets an error (default 600)")
      ->check(PositiveNumber());
  cmd->add_option("--drain-timeout", opts->drain_s,
                  "On SIGINT/SIGTERM, wall seconds to let requests in flight finish "
                  "(default 30); the rest get an error")
      ->check(NumberIn(0, 1e6));
  cmd->add_option("--served-model-name", opts->model_name,
                  "Model name in /v1/models and responses (default: the model's "
                  "Hugging Face id)")
      ->check(NotAnOption());
  cmd->add_flag("--report", opts->report,
                "At exit, print the served run's report as `servesim run` prints one "
                "(simulated seconds)");
  cmd->add_option("--save-result", opts->save_result,
                  "At exit, write the served run's result JSON (vllm bench serve keys)")
      ->check(NotAnOption());
  cmd->add_flag("--replica-ports", opts->replica_ports,
                "One port per replica (--port, --port + 1, ...), each with its own /metrics, "
                "for an external router; without it one port serves the fleet behind the "
                "scenario's router");
  cmd->add_flag("--check-invariants", opts->check_invariants,
                "Check the scheduler after every step and the run-level invariants at "
                "shutdown (keeps every step record: tests)");
  return [cmd, opts]() -> Status {
    if (!cmd->parsed()) return Status::Ok();
    return Serve(*opts);
  };
}

}  // namespace servesim
