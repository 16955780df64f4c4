// Simulator speed: whole runs of the benchmark chat scenario
// (scenarios/bench_chat_1m.json: default chat workload at about 85% GPU
// load) at several request counts, and the step loop's parts.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

#include "sim/core/paths.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

Scenario LoadBenchScenario(int64_t num_requests) {
  auto sc = LoadScenarioFile(
      ResolveDataPath("scenarios/bench_chat_1m.json"),
      {"workload.num_requests=" + std::to_string(num_requests)});
  if (!sc.ok()) {
    std::fprintf(stderr, "%s\n", sc.status().message().c_str());
    std::exit(2);
  }
  return std::move(sc.value());
}

void BM_ChatRun(benchmark::State& state) {
  const Scenario sc = LoadBenchScenario(state.range(0));
  const SimulationInput in = sc.ToSimulationInput();
  int64_t steps = 0;
  for (auto _ : state) {
    SimulationOutput out = RunSimulation(in);
    steps = out.recorder.steps().steps;
    benchmark::DoNotOptimize(out.requests.data());
  }
  state.counters["requests_per_s"] = benchmark::Counter(
      static_cast<double>(state.range(0)) * state.iterations(),
      benchmark::Counter::kIsRate);
  state.counters["steps"] = static_cast<double>(steps);
}
BENCHMARK(BM_ChatRun)->Arg(10000)->Arg(100000)->Arg(1000000)
    ->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3)
    ->ReportAggregatesOnly(true);

}  // namespace
}  // namespace servesim

BENCHMARK_MAIN();
