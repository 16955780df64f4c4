// libFuzzer target: the reader of length tables on arbitrary bytes.
#include "tests/fuzz/fuzz_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return servesim::fuzz::FuzzTrace(servesim::TraceFormat::kLengthTable, data,
                                   size);
}
