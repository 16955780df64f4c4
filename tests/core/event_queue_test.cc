// Event ordering: by time, then by push order (FIFO ties).
#include "sim/core/event_queue.h"

#include <gtest/gtest.h>

namespace servesim {
namespace {

TEST(EventQueue, OrdersByTimeThenPushOrder) {
  EventQueue q;
  q.Push(30, EventKind::kArrival, 1);
  q.Push(10, EventKind::kStepDone, 2);
  q.Push(30, EventKind::kClientSend, 3);
  q.Push(10, EventKind::kArrival, 4);
  q.Push(20, EventKind::kArrival, 5);
  std::vector<int64_t> order;
  while (!q.Empty()) order.push_back(q.Pop().payload);
  EXPECT_EQ(order, (std::vector<int64_t>{2, 4, 5, 1, 3}));
}

TEST(EventQueue, ManySimultaneousEventsStayFifo) {
  EventQueue q;
  for (int i = 0; i < 1000; ++i) q.Push(5, EventKind::kArrival, i);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(q.Pop().payload, i);
}

}  // namespace
}  // namespace servesim
