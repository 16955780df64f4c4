#include "sim/engine/sglang_pool.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace servesim {

bool SizeSglangPool(const SglangPoolInputs& in, SglangPool* pool, std::string* error) {
  const double slack = in.free_before_load_bytes * (1 - in.mem_fraction_static);
  const double budget = in.free_after_load_bytes - slack;
  if (budget <= 0 || in.kv_bytes_per_token <= 0) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "the weights leave no GPU memory for the KV cache under "
                  "mem_fraction_static %.3f (SGLang refuses to start)",
                  in.mem_fraction_static);
    *error = buf;
    return false;
  }
  const int64_t page = std::max(in.page_size, 1);
  const int64_t tokens =
      static_cast<int64_t>(std::floor(budget / in.kv_bytes_per_token)) / page * page;
  if (tokens < page) {
    *error = "the KV budget holds no whole page";
    return false;
  }
  pool->max_total_tokens = tokens;
  pool->max_running_requests =
      SglangRequestLimit(tokens, in.context_length, in.max_running_requests);
  return true;
}

int32_t SglangRequestLimit(int64_t tokens, int64_t context_length, int32_t requested) {
  int64_t limit;
  if (requested > 0) {
    limit = requested;
  } else {
    const auto estimated = static_cast<int64_t>(static_cast<double>(tokens) /
                                                static_cast<double>(context_length) * 512);
    limit = std::max<int64_t>(std::min<int64_t>(estimated, 4096), 2048);
  }
  return static_cast<int32_t>(std::min(limit, tokens / 2));
}

}  // namespace servesim
