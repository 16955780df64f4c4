// Shortest prompt first with an oracle victim choice: admission as
// shortest-prompt-first, but preempt the running request with the most
// tokens left to generate, read from its true output length, which no real
// server knows. A bound on what knowing output lengths would buy, never a
// policy to deploy; the honest variant is shortest-prompt-first.
#include "sim/engine/scheduler_policy.h"

namespace servesim {
namespace {

class ShortestPromptFirstOraclePolicy : public SchedulerPolicy {
 public:
  size_t PickNext(const std::deque<int64_t>& waiting,
                  const RequestTable& requests) const override {
    return PickShortestPrompt(waiting, requests);
  }
  size_t PickVictim(const std::vector<int64_t>& running, size_t first,
                    const RequestTable& requests) const override {
    size_t worst = running.size() - 1;
    for (size_t i = first; i < running.size(); ++i) {
      if (Remaining(requests[running[i]]) >
          Remaining(requests[running[worst]])) {
        worst = i;
      }
    }
    return worst;
  }

 private:
  // The oracle's knowledge: the true output length.
  static int32_t Remaining(const Request& r) {
    return r.output_len - r.num_output;
  }
};

}  // namespace

std::unique_ptr<SchedulerPolicy> MakeShortestPromptFirstOraclePolicy() {
  return std::make_unique<ShortestPromptFirstOraclePolicy>();
}

}  // namespace servesim
