// GPU memory plan (see memory_plan.h).
#include "sim/scenario/memory_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/core/status.h"
#include "sim/core/units.h"
#include "sim/scenario/scenario.h"

namespace servesim {

double DefaultActivationReserveBytes(const Scenario& s) {
  const ModelSpec& m = s.model;
  const double t = s.engine.max_num_batched_tokens;
  // Live tensors at the widest point of a layer: residual + normed input,
  // QKV output, and the gate/up output with its SiLU product (bf16).
  // (MLA: the queries, and the decompressed keys and values of prefill;
  // an MoE's widest MLP is its dense layers' or a token's experts'.)
  const double qkv = m.is_mla() ? m.num_heads * (2.0 * m.head_dim + m.v_head_dim) / s.tp
                                : (m.num_heads + 2.0 * m.num_kv_heads) * m.head_dim / s.tp;
  const double mlp = m.dense_layers > 0 ? std::max(m.intermediate_size, m.DenseIntermediate())
                                        : m.intermediate_size;
  const double per_token = 2.0 * m.hidden_size + qkv + 3.0 * mlp / s.tp;
  const double activations = t * per_token * m.dtype_bytes;
  const double logits = static_cast<double>(s.engine.max_num_seqs) * m.vocab_size * 4.0;
  return activations + logits + 1.0 * kGiB;
}

namespace {

// Why the weights and the activation reserve leave no KV block: the weights
// (/hardware/tp), a reserve given by hand (/engine/activation_reserve_gib),
// or the engine key whose share of the derived reserve is to blame
// (max_num_seqs sizes the fp32 logits, max_num_batched_tokens the
// activations) when lowering it alone would make room.
NoRoom DescribeNoRoom(const JsonView& root, const Scenario& s, double usable,
                      double weights, bool reserve_given) {
  const double reserve = s.activation_reserve_bytes;
  NoRoom r;
  r.note = FormatGib(weights) + " of weights + " + FormatGib(reserve) +
           " of activation reserve per GPU > " + FormatGib(usable) + " usable";
  const std::string offers =
      s.gpu.name + " offers " + FormatGib(usable) + " (gpu_memory_utilization " +
      std::to_string(s.gpu_memory_utilization).substr(0, 4) + ")";
  const auto engine_key = [&](const std::string& key, const std::string& msg) {
    r.message = root.file() + ": " + root.PathOf("engine") + "/" + key + ": " + msg;
    r.note += "; expected a smaller " + key;
    return r;
  };
  if (reserve_given && weights < usable) {
    return engine_key("activation_reserve_gib",
                      "no room for the KV cache: " + FormatGib(weights) + " of weights and " +
                          FormatGib(reserve) + " of activation reserve per GPU, but " + offers +
                          "; expected a smaller activation_reserve_gib");
  }
  const double logits = static_cast<double>(s.engine.max_num_seqs) *
                        s.model.vocab_size * 4.0;
  const double activations = reserve - logits - kGiB;
  if (!reserve_given && weights + kGiB + std::min(logits, activations) < usable) {
    if (logits >= activations) {
      return engine_key(
          "max_num_seqs",
          "no room for the KV cache: the activation reserve holds fp32 "
          "logits for " + std::to_string(s.engine.max_num_seqs) +
              " sequences x " + std::to_string(s.model.vocab_size) +
              " vocabulary entries (" + FormatGib(logits) + "), with " + FormatGib(weights) +
              " of weights and " + FormatGib(reserve - logits) +
              " of other reserve per GPU, but " + offers +
              "; expected a smaller max_num_seqs");
    }
    return engine_key("max_num_batched_tokens",
                      "no room for the KV cache: the activation reserve for " +
                          std::to_string(s.engine.max_num_batched_tokens) +
                          " batched tokens is " + FormatGib(activations) + ", with " +
                          FormatGib(weights) + " of weights and " +
                          FormatGib(reserve - activations) + " of other reserve per GPU, but " +
                          offers + "; expected a smaller max_num_batched_tokens");
  }
  // A disaggregated pool's object holds its tp itself.
  const JsonView hw = root.Has("hardware") ? root.Object("hardware") : root;
  const std::string at =
      "tp=" + std::to_string(s.tp) + (s.pp > 1 ? " pp=" + std::to_string(s.pp) : "");
  r.message = root.file() + ": " + hw.PathOf("tp") + ": " + s.model.name +
              " does not fit: " + FormatGib(weights) + " of weights and " + FormatGib(reserve) +
              " of activations per GPU at " + at + ", but " + offers +
              "; expected a larger tp" + (s.pp > 1 ? " or pp" : "") + " or a bigger GPU";
  return r;
}

// The layers whose GPUs hold the fewest KV blocks: the whole model, or
// under pipeline parallelism the tightest stage (vLLM sizes the block pool
// by the worker with the least room; every stage holds each block's share
// of its own layers).
ModelSpec BindingStage(const Scenario& s, double usable) {
  if (s.pp <= 1) return s.model;
  ModelSpec best;
  double fewest = INFINITY;
  for (int rank = 0; rank < s.pp; ++rank) {
    const ModelSpec stage = s.model.PipelineStage(s.pp, rank);
    const double block = stage.KvBytesPerTokenPerGpu(s.tp) * s.engine.block_size;
    const double room = usable - stage.WeightBytesPerGpu(s.tp) -
                        static_cast<double>(s.engine.max_num_seqs) *
                            stage.WindowedKvBytesPerSeqPerGpu(s.tp, s.engine.block_size);
    // A stage of windowed layers only keeps no pooled blocks: it binds
    // only if its weights alone leave no room.
    const double blocks = block > 0 ? room / block : (room > 0 ? INFINITY : -INFINITY);
    if (rank == 0 || blocks < fewest) {
      fewest = blocks;
      best = stage;
    }
  }
  return best;
}

}  // namespace

void PlanMemory(const JsonView& root, Scenario* s, bool defer_fit) {
  const bool reserve_given = s->activation_reserve_bytes >= 0;
  if (!reserve_given) {
    s->activation_reserve_bytes = DefaultActivationReserveBytes(*s);
  }
  const double usable = s->gpu.memory_bytes * s->gpu_memory_utilization;
  const ModelSpec stage = BindingStage(*s, usable);
  const double weights = stage.WeightBytesPerGpu(s->tp);
  // Sliding-window layers hold at most window + one block of tokens per
  // running sequence (vLLM frees the blocks that leave the window): that
  // bound for max_num_seqs sequences is set aside, and the block pool
  // holds the full-attention layers' KV (an upper bound on the windowed
  // share: short sequences use less).
  s->engine.windowed_kv_bytes_per_seq =
      stage.WindowedKvBytesPerSeqPerGpu(s->tp, s->engine.block_size);
  s->windowed_kv_reserve_bytes =
      static_cast<double>(s->engine.max_num_seqs) * s->engine.windowed_kv_bytes_per_seq;
  s->engine.windowed_kv_reserve_bytes = s->windowed_kv_reserve_bytes;
  s->kv_cache_bytes =
      usable - weights - s->activation_reserve_bytes - s->windowed_kv_reserve_bytes;
  const double block_bytes =
      stage.KvBytesPerTokenPerGpu(s->tp) * s->engine.block_size;
  const double blocks = std::floor(s->kv_cache_bytes / block_bytes);
  if (blocks < 1) {
    NoRoom r = DescribeNoRoom(root, *s, usable, weights, reserve_given);
    if (!defer_fit) throw ConfigError(r.message);
    s->no_room = std::move(r);
    s->engine.num_gpu_blocks = 0;
    return;
  }
  if (s->num_gpu_blocks_given) {
    // A hypothetical cache may be larger than the memory plan leaves, but
    // not larger than the GPU minus its weights: that cannot exist.
    const double room = s->gpu.memory_bytes - weights;
    const double possible = std::floor(room / block_bytes);
    if (s->engine.num_gpu_blocks > possible && !s->kv_beyond_gpu_memory) {
      throw ConfigError(root.file() + ": " + root.PathOf("engine") + "/num_gpu_blocks: " +
                        std::to_string(s->engine.num_gpu_blocks) + " blocks of " +
                        std::to_string(static_cast<int64_t>(block_bytes)) + " bytes need " +
                        FormatGib(s->engine.num_gpu_blocks * block_bytes) + " of KV per GPU, but " +
                        s->gpu.name + " holds " + FormatGib(s->gpu.memory_bytes) + " with " +
                        FormatGib(weights) + " of " + s->model.name + " weights at tp " +
                        std::to_string(s->tp) + "; expected at most " +
                        std::to_string(static_cast<int64_t>(possible)) +
                        " (or engine.kv_beyond_gpu_memory: true for a what-if)");
    }
    return;
  }
  if (!(blocks <= static_cast<double>(kMaxGpuBlocks))) {
    char n[32];
    std::snprintf(n, sizeof n, "%.3g", blocks);
    throw ConfigError(
        root.file() + ": " + root.PathOf("engine") + "/num_gpu_blocks: the memory plan gives " + n +
        " KV blocks (" + FormatGib(s->kv_cache_bytes) + " of " + s->gpu.name +
        " memory for KV at " + std::to_string(static_cast<int64_t>(block_bytes)) +
        " bytes a block of " + s->model.name + "); expected at most " +
        std::to_string(kMaxGpuBlocks) +
        ": set num_gpu_blocks, a larger block_size or a lower "
        "gpu_memory_utilization");
  }
  s->engine.num_gpu_blocks = static_cast<int32_t>(blocks);
}

}  // namespace servesim
