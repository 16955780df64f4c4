// Argument checks shared by the attention launchers (host only).
#pragma once

#include <string>

#include "kernels/attention.h"

namespace servesim::kernels {

inline Status CheckPagedArgs(const char* who, const void* q, const void* out,
                             const PagedKvCache& kv, int batch, int heads,
                             int max_total) {
  auto err = [&](const std::string& what) {
    return Status::Error(std::string(who) + ": " + what);
  };
  if (!q || !out || !kv.k || !kv.v || !kv.block_table)
    return err("null pointer argument");
  if (batch <= 0 || heads <= 0 || kv.kv_heads <= 0)
    return err("batch, heads and kv_heads must be positive");
  if (heads % kv.kv_heads != 0)
    return err("heads (" + std::to_string(heads) +
               ") must be a multiple of kv_heads (" +
               std::to_string(kv.kv_heads) + ")");
  if (heads / kv.kv_heads > 16)
    return err("query heads per KV head above 16 are not supported");
  if (kv.head_dim != 64 && kv.head_dim != 128)
    return err("head_dim must be 64 or 128, got " +
               std::to_string(kv.head_dim));
  if (kv.block_size <= 0 || kv.max_blocks_per_seq <= 0)
    return err("block_size and max_blocks_per_seq must be positive");
  if (max_total <= 0 ||
      static_cast<int64_t>(kv.max_blocks_per_seq) * kv.block_size < max_total)
    return err("block table of " + std::to_string(kv.max_blocks_per_seq) +
               " blocks x " + std::to_string(kv.block_size) +
               " tokens cannot hold " + std::to_string(max_total) + " tokens");
  return Status::Ok();
}

}  // namespace servesim::kernels
