// Device memory of one timing setup, freed together, and the per-GPU shard
// sizes of a model under tensor parallelism. Shared by TimeOps and the step
// executor.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "calibrate/gpu/cuda_check.h"
#include "kernels/layer_ops.h"
#include "sim/model/model_spec.h"

namespace servesim::calibrate::gpu {

class Arena {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena() {
    for (void* p : ptrs_) cudaFree(p);
  }
  template <typename T>
  T* Alloc(size_t n) {
    void* p = nullptr;
    SERVESIM_CUDA(cudaMalloc(&p, std::max<size_t>(n, 1) * sizeof(T)));
    ptrs_.push_back(p);
    return static_cast<T*>(p);
  }
  // n random bf16 values in [-scale, scale) (never time on zeros).
  kernels::Bf16* Random(size_t n, cudaStream_t s, float scale = 1.f) {
    kernels::Bf16* p = Alloc<kernels::Bf16>(n);
    Check(kernels::LaunchFillRandomBf16(p, n, ++seed_, scale, s), "fill");
    return p;
  }
  int32_t* Upload(const std::vector<int32_t>& v) {
    int32_t* p = Alloc<int32_t>(v.size());
    SERVESIM_CUDA(cudaMemcpy(p, v.data(), v.size() * 4, cudaMemcpyHostToDevice));
    return p;
  }

 private:
  std::vector<void*> ptrs_;
  uint64_t seed_ = 0;
};

// Sizes on one GPU: heads, KV heads, MLP width and vocabulary split by tp.
struct Shard {
  int hidden, heads, kv_heads, head_dim, inter, vocab;
  Shard(const ModelSpec& m, int tp)
      : hidden(m.hidden_size), heads(m.num_heads / tp),
        kv_heads(m.KvHeadsPerGpu(tp)), head_dim(m.head_dim),
        inter(m.intermediate_size / tp), vocab(m.vocab_size / tp) {}
  int QkvWidth() const { return (heads + 2 * kv_heads) * head_dim; }
};

}  // namespace servesim::calibrate::gpu
