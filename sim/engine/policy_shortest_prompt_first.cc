// Shortest prompt first: admit the waiting request with the fewest tokens
// left to prefill (ties by queue order); preempt the running request with
// the most tokens left to generate. A what-if policy: it cuts mean TTFT and
// can starve long prompts.
#include "sim/engine/scheduler_policy.h"

namespace servesim {
namespace {

class ShortestPromptFirstPolicy : public SchedulerPolicy {
 public:
  size_t PickNext(const std::deque<int64_t>& waiting,
                  const RequestTable& requests) const override {
    size_t best = 0;
    for (size_t i = 1; i < waiting.size(); ++i) {
      if (Left(requests[waiting[i]]) < Left(requests[waiting[best]])) best = i;
    }
    return best;
  }
  size_t PickVictim(const std::vector<int64_t>& running, size_t first,
                    const RequestTable& requests) const override {
    size_t worst = running.size() - 1;
    for (size_t i = first; i < running.size(); ++i) {
      const Request& r = requests[running[i]];
      const Request& w = requests[running[worst]];
      if (r.output_len - r.num_output > w.output_len - w.num_output) worst = i;
    }
    return worst;
  }

 private:
  static int32_t Left(const Request& r) {
    return r.known_tokens() - r.num_computed;
  }
};

}  // namespace

std::unique_ptr<SchedulerPolicy> MakeShortestPromptFirstPolicy() {
  return std::make_unique<ShortestPromptFirstPolicy>();
}

}  // namespace servesim
