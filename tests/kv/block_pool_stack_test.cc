// Without prefix caching the free queue is kept as a stack; it must hand
// out the same blocks in the same order as the linked free queue.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "sim/kv/block_pool.h"

namespace servesim {
namespace {

TEST(BlockPoolStack, SameBlocksAsTheLinkedQueue) {
  constexpr int32_t kBlocks = 300;
  BlockPool list(kBlocks), stack(kBlocks, /*stack_only=*/true);
  std::mt19937_64 gen(5);
  std::vector<std::vector<int32_t>> held_list, held_stack;
  for (int step = 0; step < 20000; ++step) {
    if (!held_list.empty() && gen() % 3 == 0) {
      const size_t i = gen() % held_list.size();
      list.Release(held_list[i], nullptr);
      stack.Release(held_stack[i], nullptr);
      held_list.erase(held_list.begin() + static_cast<ptrdiff_t>(i));
      held_stack.erase(held_stack.begin() + static_cast<ptrdiff_t>(i));
    } else {
      const int32_t n = static_cast<int32_t>(gen() % 12);
      std::vector<int32_t> a, b;
      const bool ok_list = list.Allocate(n, &a);
      ASSERT_EQ(ok_list, stack.Allocate(n, &b));
      ASSERT_EQ(a, b) << "step " << step;
      if (ok_list) {
        held_list.push_back(a);
        held_stack.push_back(b);
      }
    }
    ASSERT_EQ(list.num_free(), stack.num_free());
  }
  list.CheckInvariants();
  stack.CheckInvariants();
}

}  // namespace
}  // namespace servesim
