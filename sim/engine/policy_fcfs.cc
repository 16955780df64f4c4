// FCFS (vLLM's default): admit in arrival order, preempt the newest running
// request first.
#include "sim/engine/scheduler_policy.h"

namespace servesim {
namespace {

class FcfsPolicy : public SchedulerPolicy {
 public:
  size_t PickNext(const std::deque<int64_t>&, const RequestTable&) const override {
    return 0;
  }
  size_t PickVictim(const std::vector<int64_t>& running, size_t,
                    const RequestTable&) const override {
    return running.size() - 1;
  }
};

}  // namespace

std::unique_ptr<SchedulerPolicy> MakeFcfsPolicy() {
  return std::make_unique<FcfsPolicy>();
}

}  // namespace servesim
