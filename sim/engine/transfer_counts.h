// KV blocks moved between the GPU and the CPU tier (engine.kv_offload), as
// the KV manager counts them and a step's record reports them.
#pragma once

#include <cstdint>

namespace servesim {

// KV blocks moved between the GPU and the CPU tier (engine.kv_offload).
struct TransferCounts {
  int64_t swap_out = 0;  // GPU -> CPU: swap preemption
  int64_t swap_in = 0;   // CPU -> GPU: a swapped request resumed
  int64_t load = 0;      // CPU -> GPU: prefix hits in the CPU tier
  int64_t store = 0;     // GPU -> CPU: GPU prefix evictions kept on CPU
  TransferCounts& operator+=(const TransferCounts& o) {
    swap_out += o.swap_out;
    swap_in += o.swap_in;
    load += o.load;
    store += o.store;
    return *this;
  }
  bool empty() const { return swap_out == 0 && swap_in == 0 && load == 0 && store == 0; }
};

}  // namespace servesim
