// Shortest prompt first: admit the waiting request with the fewest tokens
// left to prefill (ties by queue order); preempt the running request with
// the longest prompt (ties: the newest), as vLLM's priority policy preempts
// the lowest-priority request. A what-if policy: it cuts mean TTFT and can
// starve long prompts. It sees only what a real server knows (prompt
// length, tokens generated so far), never a request's true output length:
// that is shortest-prompt-first-oracle.
#include "sim/engine/scheduler_policy.h"

namespace servesim {

size_t PickShortestPrompt(const std::deque<int64_t>& waiting,
                          const RequestTable& requests) {
  // Tokens still to prefill: the prompt, plus after a preemption the
  // output generated so far.
  auto left = [&](size_t i) {
    const Request& r = requests[waiting[i]];
    return r.known_tokens() - r.num_computed;
  };
  size_t best = 0;
  for (size_t i = 1; i < waiting.size(); ++i) {
    if (left(i) < left(best)) best = i;
  }
  return best;
}

namespace {

class ShortestPromptFirstPolicy : public SchedulerPolicy {
 public:
  size_t PickNext(const std::deque<int64_t>& waiting,
                  const RequestTable& requests) const override {
    return PickShortestPrompt(waiting, requests);
  }
  size_t PickVictim(const std::vector<int64_t>& running, size_t first,
                    const RequestTable& requests) const override {
    size_t worst = running.size() - 1;
    for (size_t i = running.size(); i-- > first;) {
      if (requests[running[i]].prompt_len >
          requests[running[worst]].prompt_len) {
        worst = i;
      }
    }
    return worst;
  }
};

}  // namespace

std::unique_ptr<SchedulerPolicy> MakeShortestPromptFirstPolicy() {
  return std::make_unique<ShortestPromptFirstPolicy>();
}

}  // namespace servesim
