// GPU memory plan (see memory_plan.h).
#include "sim/scenario/memory_plan.h"

#include <cmath>
#include <cstdio>

#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string Gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / kGiB);
  return buf;
}

}  // namespace

double DefaultActivationReserveBytes(const Scenario& s) {
  const ModelSpec& m = s.model;
  const double t = s.engine.max_num_batched_tokens;
  // Live tensors at the widest point of a layer: residual + normed input,
  // QKV output, and the gate/up output with its SiLU product (bf16).
  const double per_token = 2.0 * m.hidden_size +
                           (m.num_heads + 2.0 * m.num_kv_heads) * m.head_dim / s.tp +
                           3.0 * m.intermediate_size / s.tp;
  const double activations = t * per_token * m.dtype_bytes;
  const double logits = static_cast<double>(s.engine.max_num_seqs) * m.vocab_size * 4.0;
  return activations + logits + 1.0 * kGiB;
}

void PlanMemory(const JsonView& root, Scenario* s) {
  if (s->activation_reserve_bytes < 0) {
    s->activation_reserve_bytes = DefaultActivationReserveBytes(*s);
  }
  const double usable = s->gpu.memory_bytes * s->gpu_memory_utilization;
  const double weights = s->model.WeightBytesPerGpu(s->tp);
  s->kv_cache_bytes = usable - weights - s->activation_reserve_bytes;
  const double block_bytes =
      s->model.KvBytesPerTokenPerGpu(s->tp) * s->engine.block_size;
  const double blocks = std::floor(s->kv_cache_bytes / block_bytes);
  if (blocks < 1) {
    const JsonView hw = root.Object("hardware");
    hw.FailMessage("tp", s->model.name + " does not fit: " + Gib(weights) +
                             " of weights and " + Gib(s->activation_reserve_bytes) +
                             " of activations per GPU at tp=" + std::to_string(s->tp) +
                             ", but " + s->gpu.name + " offers " + Gib(usable) +
                             " (gpu_memory_utilization " +
                             std::to_string(s->gpu_memory_utilization).substr(0, 4) +
                             "); expected a larger tp or a bigger GPU");
  }
  if (!s->num_gpu_blocks_given) {
    s->engine.num_gpu_blocks = static_cast<int32_t>(std::min(blocks, 2e9));
  }
}

}  // namespace servesim
