// libFuzzer target: the scenario loader (ParseScenario) on arbitrary bytes.
// Every failure must come back as a Status; a crash, an uncaught exception
// or a sanitizer report is a finding.
#include <cstdint>
#include <string>

#include "sim/scenario/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  servesim::StatusOr<servesim::Scenario> sc =
      servesim::ParseScenario(text, "<fuzz>", {});
  if (sc.ok()) {
    // Building the simulation input exercises what the loader validated.
    (void)sc->ArrivalDescription();
    (void)sc->OfferedRate();
  }
  return 0;
}
