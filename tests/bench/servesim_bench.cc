// Simulator speed: whole runs of the benchmark scenarios
// (scenarios/bench_chat_1m.json: default chat workload at about 85% of
// saturation; scenarios/bench_prefix_chat_1m.json: the same with shared
// prefixes and prefix caching) at several request counts, and overloaded
// runs under each policy that orders the waiting queue by a key.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/core/paths.h"
#include "sim/report/step_export.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

Scenario LoadBenchScenario(int64_t num_requests,
                           const char* file = "scenarios/bench_chat_1m.json",
                           std::vector<std::string> overrides = {}) {
  overrides.push_back("workload.num_requests=" + std::to_string(num_requests));
  auto sc = LoadScenarioFile(ResolveDataPath(file), overrides);
  if (!sc.ok()) {
    std::fprintf(stderr, "%s\n", sc.status().message().c_str());
    std::exit(2);
  }
  return std::move(sc.value());
}

void RunBench(benchmark::State& state, const char* file,
              const std::vector<std::string>& overrides = {}) {
  const Scenario sc = LoadBenchScenario(state.range(0), file, overrides);
  const SimulationInput in = sc.ToSimulationInput();
  int64_t steps = 0;
  for (auto _ : state) {
    SimulationOutput out = RunSimulation(in);
    steps = out.recorder.steps().steps;
    benchmark::DoNotOptimize(out.requests.size());
  }
  state.counters["requests_per_s"] = benchmark::Counter(
      static_cast<double>(state.range(0)) * state.iterations(),
      benchmark::Counter::kIsRate);
  state.counters["steps"] = static_cast<double>(steps);
}

void BM_ChatRun(benchmark::State& state) {
  RunBench(state, "scenarios/bench_chat_1m.json");
}
BENCHMARK(BM_ChatRun)->Arg(10000)->Arg(100000)->Arg(1000000)
    ->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3)
    ->ReportAggregatesOnly(true);

// Shared-prefix chat with prefix caching (scenarios/bench_prefix_chat_1m.json).
void BM_PrefixChatRun(benchmark::State& state) {
  RunBench(state, "scenarios/bench_prefix_chat_1m.json");
}
BENCHMARK(BM_PrefixChatRun)->Arg(100000)->Arg(1000000)
    ->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3)
    ->ReportAggregatesOnly(true);

// Overloaded (issue 35): scenarios/priority_classes.json at 200 req/s,
// about 14x its saturation rate, so the waiting queue grows to ~20,000
// requests. priority and edf admit by key from a key-ordered queue
// (waiting_queue.h): they should cost about what fcfs does, not a scan of
// the queue per admission.
void BM_OverloadedRun(benchmark::State& state, const char* policy) {
  RunBench(state, "scenarios/priority_classes.json",
           {"workload.arrival.rate=200", std::string("engine.policy=") + policy});
}
BENCHMARK_CAPTURE(BM_OverloadedRun, fcfs, "fcfs")->Arg(25000)
    ->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3)
    ->ReportAggregatesOnly(true);
BENCHMARK_CAPTURE(BM_OverloadedRun, priority, "priority")->Arg(25000)
    ->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3)
    ->ReportAggregatesOnly(true);
BENCHMARK_CAPTURE(BM_OverloadedRun, edf, "edf")->Arg(25000)
    ->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3)
    ->ReportAggregatesOnly(true);

// Formatting per-step export rows (the export's writer thread): the step
// records of a 20,000-request chat run, as CSV and as JSON lines; bytes/s
// and ns per row are what the 1M-request run with --save-steps pays.
template <bool kJson>
void FormatSteps(benchmark::State& state) {
  static const std::vector<StepRecord> records = [] {
    const Scenario sc = LoadBenchScenario(20000);  // `in` points into it
    SimulationInput in = sc.ToSimulationInput();
    std::vector<StepRecord> rs;
    in.on_step = [&](const StepRecord& r) { rs.push_back(r); };
    RunSimulation(in);
    return rs;
  }();
  std::vector<char> buf(kMaxStepRowBytes);
  int64_t bytes = 0;
  for (auto _ : state) {
    for (size_t k = 0; k < records.size(); ++k) {
      const char* end =
          kJson ? FormatStepJsonFields(static_cast<int64_t>(k), records[k], buf.data())
                : FormatStepCsv(static_cast<int64_t>(k), records[k], buf.data());
      bytes += end - buf.data();
      benchmark::DoNotOptimize(buf.data());
    }
  }
  state.SetBytesProcessed(bytes);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(records.size()));
}
void BM_FormatStepCsv(benchmark::State& state) { FormatSteps<false>(state); }
void BM_FormatStepJson(benchmark::State& state) { FormatSteps<true>(state); }
BENCHMARK(BM_FormatStepCsv)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FormatStepJson)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace servesim

BENCHMARK_MAIN();
