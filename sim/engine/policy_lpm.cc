// Longest prefix match (SGLang's --schedule-policy lpm), as read in
// python/sglang/srt/managers/schedule_policy.py (SchedulePolicy.calc_priority,
// _compute_prefix_matches, _sort_by_longest_prefix) at SGLang commit
// 00550cd11b35def9d584bf761a1e32729c20a21d. Once per step, before admission:
//  - with more than 128 waiting requests nothing is sorted (SGLang turns
//    the "expensive prefix matching and sorting" off and serves the queue
//    as it stands, which after earlier sorts is not arrival order);
//  - else each waiting request's prefix-cache match is computed, and the
//    queue is stably sorted by matched tokens, longest first, in place;
//  - in-batch prefix caching: walking the queue in order, a request whose
//    cache match is at most 32 tokens but which shares at least 32 tokens
//    with an earlier such request in the queue is deprioritised (sorted
//    last), so one of them computes the shared prefix and the others hit
//    it next step (IN_BATCH_PREFIX_CACHING_CHECK_THRESHOLD and
//    _DEPRIORITIZE_THRESHOLD, both 32 by default).
// Differences, stated: matches are whole KV blocks (servesim names block
// contents, not tokens), so a share is seen in multiples of block_size;
// preemption and the rest of the step are the vLLM mechanism's (victim:
// the newest running request, as FCFS), not SGLang's. Without prefix
// caching every match is 0 and the order is FCFS, as SGLang falls back to
// FCFS when its radix cache is disabled.
#include "sim/engine/scheduler_policy.h"

#include <algorithm>
#include <unordered_set>

namespace servesim {
namespace {

constexpr size_t kMaxSortedQueue = 128;
constexpr int32_t kInBatchCheckTokens = 32;
constexpr int32_t kInBatchDeprioritizeTokens = 32;

class LongestPrefixMatchPolicy : public SchedulerPolicy {
 public:
  size_t PickNext(const std::deque<int64_t>&, const RequestTable&) const override {
    return 0;  // OrderWaiting sorted the queue
  }
  size_t PickVictim(const std::vector<int64_t>& running, size_t,
                    const RequestTable&) const override {
    return running.size() - 1;
  }
  bool orders_waiting() const override { return true; }

  void OrderWaiting(std::deque<int64_t>* waiting, const RequestTable&,
                    const PrefixProbe& probe, int32_t block_size) const override {
    if (waiting->size() > kMaxSortedQueue || waiting->size() < 2) return;
    keys_.clear();
    in_queue_.clear();
    // Sharing at least kInBatchDeprioritizeTokens with an earlier request
    // is sharing its first `t` blocks. Block hashes are chained (a hash
    // names its whole prefix), so that is sharing block t - 1's hash: one
    // hash per request stands for the prefix run SGLang's tree matches.
    // (Every hash of every prompt, as first written, made a step cost
    // O(waiting x prompt blocks) hash-set inserts: 32 ms a step on a
    // Mooncake trace of long prompts, fuzzer seed 934459.)
    const int32_t t = (kInBatchDeprioritizeTokens + block_size - 1) / block_size;
    for (int64_t id : *waiting) {
      const PrefixMatch m = probe(id);
      int64_t key = -static_cast<int64_t>(m.cached_tokens);
      if (m.cached_tokens <= kInBatchCheckTokens && m.num_hashes >= t) {
        const uint64_t run = m.hashes[t - 1];
        if (in_queue_.count(run)) {
          key = INT64_MAX;
        } else {
          in_queue_.insert(run);
        }
      }
      keys_.emplace_back(key, id);
    }
    std::stable_sort(keys_.begin(), keys_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < keys_.size(); ++i) (*waiting)[i] = keys_[i].second;
  }

 private:
  // Scratch, reused across steps (a policy belongs to one scheduler).
  mutable std::vector<std::pair<int64_t, int64_t>> keys_;
  mutable std::unordered_set<uint64_t> in_queue_;
};

}  // namespace

std::unique_ptr<SchedulerPolicy> MakeLongestPrefixMatchPolicy() {
  return std::make_unique<LongestPrefixMatchPolicy>();
}

}  // namespace servesim
