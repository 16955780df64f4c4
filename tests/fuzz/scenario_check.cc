// The simulation fuzzer's checks on one scenario (see scenario_check.h).
#include "tests/fuzz/scenario_check.h"

#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <iterator>
#include <sstream>

#include "sim/analysis/runs.h"
#include "sim/analysis/saturation.h"
#include "sim/report/writers.h"

namespace servesim::fuzz {
namespace {

// The scenario being checked, pre-rendered with its label: a signal
// handler may only write() it.
std::string g_current;
constexpr int kSignals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGALRM, SIGXCPU};
struct sigaction g_previous[std::size(kSignals)];

void OnSignal(int sig) {
  const char* what = sig == SIGXCPU   ? "ran out of CPU time"
                     : sig == SIGALRM ? "timed out"
                     : sig == SIGABRT ? "aborted"
                                      : "crashed";
  static const char kHead[] = "\n=== servesim simulation fuzzer: the run ";
  static const char kTail[] =
      " on the scenario below (save it as s.json and replay with `servesim run "
      "s.json --check-invariants`):\n";
  ssize_t unused = write(STDERR_FILENO, kHead, sizeof kHead - 1);
  unused = write(STDERR_FILENO, what, std::strlen(what));
  unused = write(STDERR_FILENO, kTail, sizeof kTail - 1);
  unused = write(STDERR_FILENO, g_current.data(), g_current.size());
  unused = write(STDERR_FILENO, "\n", 1);
  (void)unused;
  // The signal stays blocked while this handler runs: the previous handler
  // (libFuzzer's, or the default) gets it as soon as this one returns.
  for (size_t i = 0; i < std::size(kSignals); ++i) {
    if (kSignals[i] == sig) sigaction(sig, &g_previous[i], nullptr);
  }
  raise(sig);
}

struct Texts {
  std::string result, csv;
};

Texts Render(const Scenario& sc, const SimulationInput& in, const SimulationOutput& out) {
  Texts t;
  const RunSummary s = Summarize(out, in, sc.ArrivalDescription(), sc.OfferedRate());
  t.result = ResultJson(sc, s).dump(1);
  std::ostringstream csv;
  WriteDetailedCsv(out, csv);
  t.csv = csv.str();
  return t;
}

std::string FirstDifference(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const size_t from = i > 40 ? i - 40 : 0;
  return "at byte " + std::to_string(i) + ": \"" + a.substr(from, 80) + "\" vs \"" +
         b.substr(from, 80) + "\"";
}

bool Preempted(const SimulationOutput& out) {
  for (const Request& r : out.requests) {
    if (r.preemptions > 0) return true;
  }
  return false;
}

// Throughput of the run against the saturating run's mu (see the header
// for when this is meaningful). Noise: both are ratios of counts over
// windows of a few hundred departures; 10% plus 3/sqrt(n) covers it.
void CheckSaturation(const Scenario& sc, const SimulationOutput& out, const RunSummary& s,
                     Outcome* o) {
  const WorkloadConfig& w = sc.workload;
  if (sc.num_replicas != 1 || w.trace || w.sessions || w.prefix || w.num_requests == 0 ||
      out.stopped_at_queue_cap || s.completed < 200 || Preempted(out) ||
      sc.engine.long_prefill_token_threshold > 0) {
    return;
  }
  const int clients = SaturatingClients(sc);
  StatusOr<Scenario> closed = WithSaturatingLoop(sc, clients);
  if (!closed.ok()) {
    o->problems.push_back("saturating variant does not parse: " + closed.status().message());
    return;
  }
  SimulationInput in = closed->ToSimulationInput();
  in.check_invariants = true;  // the variant is a scenario too
  const SimulationOutput sat = RunSimulation(in);
  const SaturationEstimate e = SaturationFromRequests(sat.requests);
  if (e.departures < 100 || Preempted(sat) || sat.stopped_at_queue_cap) return;
  o->saturation_checked = true;
  o->throughput_over_mu = s.request_throughput / e.mu_rps;
  const double n = static_cast<double>(std::min(s.completed, e.departures));
  const double tol = 0.10 + 3 / std::sqrt(n);
  if (o->throughput_over_mu > 1 + tol) {
    std::ostringstream os;
    os << "throughput " << s.request_throughput << " req/s is " << o->throughput_over_mu
       << " x the saturation throughput mu = " << e.mu_rps << " req/s (" << e.departures
       << " departures in " << e.window_s << " s of a closed loop of " << clients
       << " clients); more than the noise allowance of " << tol;
    o->problems.push_back(os.str());
  }
}

}  // namespace

void InstallAbortReporter() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < std::size(kSignals); ++i) {
    sigaction(kSignals[i], &sa, &g_previous[i]);
  }
}

Outcome CheckScenario(const nlohmann::json& j, const CheckOptions& options) {
  Outcome o;
  const std::string text = j.dump(2);
  g_current = (options.label.empty() ? "" : options.label + ":\n") + text;
  StatusOr<Scenario> parsed = ParseScenario(text, "<fuzz>", {});
  if (!parsed.ok()) {
    o.valid = false;
    o.parse_error = parsed.status().message();
    return o;
  }
  const Scenario& sc = *parsed;
  SimulationInput in = sc.ToSimulationInput();
  in.check_invariants = true;  // aborts on a violation: see OnAbort
  const SimulationOutput out = RunSimulation(in);
  o.requests = static_cast<int64_t>(out.requests.size());
  if (!out.input_error.empty()) o.problems.push_back("input error: " + out.input_error);
  if (options.determinism) {
    SimulationInput again = sc.ToSimulationInput();
    again.engine.reference_engine = true;
    const SimulationOutput out2 = RunSimulation(again);
    const Texts a = Render(sc, in, out), b = Render(sc, again, out2);
    // A difference is nondeterminism or a fast path that changes results.
    if (a.result != b.result) {
      o.problems.push_back("same seed, different result JSON from the reference engine " +
                           FirstDifference(a.result, b.result));
    }
    if (a.csv != b.csv) {
      o.problems.push_back("same seed, different per-request CSV from the reference engine " +
                           FirstDifference(a.csv, b.csv));
    }
  }
  if (options.saturation) {
    const RunSummary s = Summarize(out, in, sc.ArrivalDescription(), sc.OfferedRate());
    CheckSaturation(sc, out, s, &o);
  }
  return o;
}

std::string FailureReport(const nlohmann::json& scenario, const Outcome& o) {
  std::ostringstream os;
  os << "=== servesim simulation fuzzer: scenario failed";
  if (!o.valid) os << " to parse (a generator bug): " << o.parse_error;
  os << "\n";
  for (const std::string& p : o.problems) os << "  " << p << "\n";
  os << "scenario (save as s.json, replay with `servesim run s.json --check-invariants`):\n"
     << scenario.dump(2) << "\n";
  return os.str();
}

}  // namespace servesim::fuzz
