// Simulator speed: whole runs of the benchmark scenarios
// (scenarios/bench_chat_1m.json: default chat workload at about 85% of
// saturation; scenarios/bench_prefix_chat_1m.json: the same with shared
// prefixes and prefix caching) at several request counts.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

#include "sim/core/paths.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

Scenario LoadBenchScenario(int64_t num_requests,
                           const char* file = "scenarios/bench_chat_1m.json") {
  auto sc = LoadScenarioFile(
      ResolveDataPath(file),
      {"workload.num_requests=" + std::to_string(num_requests)});
  if (!sc.ok()) {
    std::fprintf(stderr, "%s\n", sc.status().message().c_str());
    std::exit(2);
  }
  return std::move(sc.value());
}

void RunBench(benchmark::State& state, const char* file) {
  const Scenario sc = LoadBenchScenario(state.range(0), file);
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

}  // namespace
}  // namespace servesim

BENCHMARK_MAIN();
