// libFuzzer target: the sessions (multi-turn / agentic JSONL) reader on
// arbitrary bytes.
#include "tests/fuzz/fuzz_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return servesim::fuzz::FuzzTrace(servesim::TraceFormat::kSessions, data,
                                   size);
}
