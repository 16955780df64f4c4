// SGLang 0.5.23's waiting-queue order (SchedulePolicy.calc_priority), run
// once per prefill attempt:
//  - fcfs keeps arrival order, lof sorts by longest max_new_tokens, random
//    takes SGLang's own shuffle from a hook (none: left as is);
//  - lpm matches every waiting request against the radix tree and sorts by
//    longest match (capped at its length - 1), except that a request whose
//    cached match is at most 32 tokens while it shares 32 or more with a
//    request earlier in this pass goes last (in-batch prefix caching); with
//    more than 128 waiting, lpm runs as fcfs;
//  - dfs-weight orders by a depth-first walk of the tree (the heaviest
//    subtree first) from each request's match;
//  - the cache-agnostic orders refresh the waiting requests' paths in the
//    tree's LRU every 32nd call, queue head last.
// Matching touches and splits tree nodes: the eviction order depends on it.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/engine/sglang_config.h"
#include "sim/engine/sglang_radix_cache.h"

namespace servesim {

class SglangWaitingOrder {
 public:
  struct Entry {
    int64_t id;
    SglangTokens tokens;
    int64_t fill_len;  // prompt + output tokens
    int32_t max_new_tokens;
  };
  // Given the waiting ids in queue order, returns SGLang's shuffle of them.
  using RandomOrder = std::function<std::vector<int64_t>(const std::vector<int64_t>&)>;

  SglangWaitingOrder(SglangPolicy policy, SglangRadixCache* cache)
      : policy_(policy), cache_(cache) {}
  void set_random_order(RandomOrder f) { random_ = std::move(f); }

  void Sort(std::vector<Entry>* queue);

 private:
  // _compute_prefix_matches: each request's match (capped) and tree node;
  // marks the requests deprioritised for in-batch prefix caching.
  void MatchAll(const std::vector<Entry>& queue, std::vector<int64_t>* matched,
                std::vector<SglangRadixCache::NodeId>* nodes, std::vector<bool>* deprioritised);
  void RefreshLru(const std::vector<Entry>& queue);

  SglangPolicy policy_;
  SglangRadixCache* cache_;
  RandomOrder random_;
  int64_t refresh_calls_ = 0;
};

}  // namespace servesim
