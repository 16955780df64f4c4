// libFuzzer target: the whole simulator on scenarios decoded from the
// fuzzer's bytes (scenario_gen.h, ByteChoices), under every check of the
// seeded fuzzer (scenario_check.h). A broken invariant aborts after the
// scenario's JSON is printed; any other finding (nondeterminism, throughput
// above saturation, a scenario that does not parse) is printed and then
// aborts too, so libFuzzer keeps the input as a crash artifact. Replay one
// with `fuzz_scenario_sim CRASH_FILE`.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "tests/fuzz/scenario_check.h"
#include "tests/fuzz/scenario_gen.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace servesim::fuzz;
  InstallAbortReporter();
  ByteChoices choices(data, size);
  const nlohmann::json sc = GenerateScenario(choices, LibFuzzerLimits());
  const Outcome o = CheckScenario(sc, CheckOptions{});
  if (!o.valid || !o.problems.empty()) {
    std::fputs(FailureReport(sc, o).c_str(), stderr);
    std::abort();
  }
  return 0;
}
