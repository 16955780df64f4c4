#include "sim/scenario/vllm_batch_defaults.h"

#include <string>

namespace servesim {

VllmBatchDefaults VllmServeBatchDefaults(const GpuSpec& gpu) {
  // vLLM compares the device's total memory with 70 GiB and looks for
  // "a100" in its name: a large budget slowed A100s down (vLLM PR 17885).
  constexpr double k70GiB = 70.0 * 1024 * 1024 * 1024;
  const bool a100 = gpu.name.find("a100") != std::string::npos;
  if (gpu.memory_bytes >= k70GiB && !a100) {
    return {1024, 8192, "a GPU of 70 GiB or more, not an A100"};
  }
  return {256, 2048, "a GPU under 70 GiB, or an A100"};
}

}  // namespace servesim
