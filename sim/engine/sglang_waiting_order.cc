// SGLang's waiting-queue order (see sglang_waiting_order.h).
#include "sim/engine/sglang_waiting_order.h"

#include <algorithm>
#include <numeric>

#include "sim/core/check.h"

namespace servesim {
namespace {

// IN_BATCH_PREFIX_CACHING_CHECK_THRESHOLD and _DEPRIORITIZE_THRESHOLD.
constexpr int64_t kInBatchCheck = 32;
constexpr int64_t kInBatchDeprioritise = 32;
// WAITING_QUEUE_PREFIX_MATCH_MAX: lpm turns fcfs above it; the LRU refresh
// touches at most this many.
constexpr size_t kPrefixMatchMax = 128;
constexpr int64_t kRefreshInterval = 32;  // WAITING_PREFIX_REFRESH_INTERVAL

template <typename T>
void Permute(std::vector<T>* v, const std::vector<size_t>& order) {
  std::vector<T> out;
  out.reserve(order.size());
  for (size_t i : order) out.push_back((*v)[i]);
  *v = std::move(out);
}

}  // namespace

void SglangWaitingOrder::MatchAll(const std::vector<Entry>& queue, std::vector<int64_t>* matched,
                                  std::vector<SglangRadixCache::NodeId>* nodes,
                                  std::vector<bool>* deprioritised) {
  // The in-batch tree holds whole sequences: a match against it is the
  // longest common prefix with any sequence inserted so far.
  std::vector<const Entry*> in_batch;
  for (const Entry& r : queue) {
    const SglangRadixCache::Match m = cache_->MatchPrefix(r.tokens, r.fill_len);
    matched->push_back(std::min(m.len, std::max<int64_t>(r.fill_len - 1, 0)));
    nodes->push_back(m.node);
    bool later = false;
    if (m.len <= kInBatchCheck) {
      int64_t shared = 0;
      for (const Entry* q : in_batch) {
        shared = std::max(shared, std::min({CommonPrefix(r.tokens, q->tokens), r.fill_len,
                                            q->fill_len}));
      }
      later = shared >= kInBatchDeprioritise;
      if (!later) in_batch.push_back(&r);
    }
    deprioritised->push_back(later);
  }
}

void SglangWaitingOrder::RefreshLru(const std::vector<Entry>& queue) {
  if (queue.empty() || cache_->disabled()) return;
  if (refresh_calls_++ % kRefreshInterval != 0) return;
  const size_t n = std::min(queue.size(), kPrefixMatchMax);
  for (size_t i = n; i-- > 0;) cache_->MatchPrefix(queue[i].tokens, queue[i].fill_len);
}

void SglangWaitingOrder::Sort(std::vector<Entry>* queue) {
  SglangPolicy active = policy_;
  if (cache_->disabled() && (active == SglangPolicy::kLpm || active == SglangPolicy::kDfsWeight)) {
    active = SglangPolicy::kFcfs;  // cache-aware orders need the cache
  }
  if (active == SglangPolicy::kLpm && queue->size() > kPrefixMatchMax) active = SglangPolicy::kFcfs;
  std::vector<size_t> order(queue->size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (active == SglangPolicy::kLpm || active == SglangPolicy::kDfsWeight) {
    std::vector<int64_t> matched;
    std::vector<SglangRadixCache::NodeId> nodes;
    std::vector<bool> later;
    MatchAll(*queue, &matched, &nodes, &later);
    if (active == SglangPolicy::kLpm) {
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (later[a] != later[b]) return !later[a];
        return !later[a] && matched[a] > matched[b];
      });
    } else {
      order = cache_->DfsWeightOrder(nodes);
    }
    Permute(queue, order);
    return;
  }
  if (active == SglangPolicy::kLof) {
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return (*queue)[a].max_new_tokens > (*queue)[b].max_new_tokens;
    });
    Permute(queue, order);
  } else if (active == SglangPolicy::kRandom && random_) {
    std::vector<int64_t> ids;
    for (const Entry& e : *queue) ids.push_back(e.id);
    const std::vector<int64_t> shuffled = random_(ids);
    SERVESIM_CHECK(std::is_permutation(ids.begin(), ids.end(), shuffled.begin(), shuffled.end()),
                   "SGLang random order: the hook's order is not a shuffle of the %zu waiting",
                   ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      order[i] = static_cast<size_t>(std::find(ids.begin(), ids.end(), shuffled[i]) - ids.begin());
    }
    Permute(queue, order);
  }
  RefreshLru(*queue);
}

}  // namespace servesim
