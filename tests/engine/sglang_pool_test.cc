// SGLang's pool sizing from mem_fraction_static (sim/engine/sglang_pool.h),
// on hand-computed cases.
#include "sim/engine/sglang_pool.h"

#include <gtest/gtest.h>

namespace servesim {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// Llama-3.1-8B-like: 8 KV heads x 128 x 32 layers x 2 (K, V) x 2 bytes.
constexpr double kKvPerToken = 8 * 128 * 32 * 2 * 2;  // 131,072 bytes

TEST(SglangPool, BudgetIsFreeAfterLoadLessTheSlack) {
  SglangPoolInputs in;
  in.free_before_load_bytes = 80 * kGiB;
  in.free_after_load_bytes = 65 * kGiB;  // 15 GiB of weights
  in.mem_fraction_static = 0.9;          // slack 8 GiB: 57 GiB of KV
  in.kv_bytes_per_token = kKvPerToken;
  in.page_size = 16;
  in.context_length = 131072;
  SglangPool p;
  std::string err;
  ASSERT_TRUE(SizeSglangPool(in, &p, &err)) << err;
  // 57 GiB / 128 KiB = 466,944 tokens (a whole number of 16-token pages).
  EXPECT_EQ(p.max_total_tokens, 466944);
  // 466,944 / 131,072 x 512 = 1824, raised to the floor of 2048.
  EXPECT_EQ(p.max_running_requests, 2048);
}

TEST(SglangPool, PoolEndsOnAPageAndTheRequestLimitOnHalfThePool) {
  SglangPoolInputs in;
  in.free_before_load_bytes = 10 * kGiB;
  in.free_after_load_bytes = 1 * kGiB + 1000 * kKvPerToken + 5 * kKvPerToken;
  in.mem_fraction_static = 0.9;  // slack 1 GiB: 1005 tokens of KV
  in.kv_bytes_per_token = kKvPerToken;
  in.page_size = 16;
  in.context_length = 4096;
  in.max_running_requests = 4000;  // by hand: still capped at tokens / 2
  SglangPool p;
  std::string err;
  ASSERT_TRUE(SizeSglangPool(in, &p, &err)) << err;
  EXPECT_EQ(p.max_total_tokens, 992);  // 1005 down to 62 pages of 16
  EXPECT_EQ(p.max_running_requests, 496);
}

TEST(SglangPool, WeightsThatLeaveNoKvMemoryAreRefused) {
  SglangPoolInputs in;
  in.free_before_load_bytes = 80 * kGiB;
  in.free_after_load_bytes = 7 * kGiB;  // slack at 0.9 is 8 GiB
  in.mem_fraction_static = 0.9;
  in.kv_bytes_per_token = kKvPerToken;
  in.context_length = 8192;
  SglangPool p;
  std::string err;
  EXPECT_FALSE(SizeSglangPool(in, &p, &err));
  EXPECT_NE(err.find("mem_fraction_static 0.900"), std::string::npos) << err;
}

}  // namespace
}  // namespace servesim
