// SGLang 0.5.23's radix-tree prefix cache (mem_cache/radix_cache.py) over
// token identities rather than token ids. A request's tokens are described
// by SglangTokens: position p < prefix_len is the shared prefix prefix_id's
// token p, every other position (the rest of the prompt, then the outputs)
// its own stream's token p -- as PromptContent names them. Two sequences
// therefore agree up to a point computable without tokens (CommonPrefix).
//
// What is modelled because scheduling depends on it: page-aligned matches
// and inserts that split nodes where SGLang does, lock references
// (evictable vs protected sizes), LRU leaf eviction ordered by SGLang's
// access times (a logical clock that ticks where SGLang reads
// time.monotonic(): each match, each insert, each node created), and the
// children's insertion order (dfs-weight walks it). Node values (KV slots)
// are not: only their counts matter to the scheduler.
//
// Cost: a node's children are found by their first page's identity (a hash
// map, as SGLang's dict of child keys), kept in insertion order as a sibling
// list, and the evictable leaves in an ordered set by access time, so a
// match, an insert or an eviction costs the path, not the tree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

namespace servesim {

struct SglangTokens {
  uint64_t prefix_id = 0;  // 0: no shared prefix
  int64_t prefix_len = 0;
  uint64_t stream_id = 0;  // unique per request (or stream)
};

// Positions both sequences agree on from the start (INT64_MAX: all).
int64_t CommonPrefix(const SglangTokens& a, const SglangTokens& b);

class SglangRadixCache {
 public:
  using NodeId = int32_t;
  static constexpr NodeId kRoot = 0;

  SglangRadixCache(int64_t page_size, bool disabled);

  struct Match {
    int64_t len = 0;
    NodeId node = kRoot;
  };
  // match_prefix over the first `len` tokens (cut to whole pages): touches
  // the path and splits the node the match ends inside.
  Match MatchPrefix(const SglangTokens& t, int64_t len);
  // insert of the first `len` tokens (whole pages); returns how many were
  // already cached (the caller's copies of those are duplicates).
  int64_t Insert(const SglangTokens& t, int64_t len);
  void Lock(NodeId node);
  void Unlock(NodeId node);
  // Evicts unlocked leaves, least recently used first, until `tokens` are
  // freed or none is left; returns the tokens freed.
  int64_t Evict(int64_t tokens);

  int64_t evictable_size() const { return evictable_; }
  int64_t protected_size() const { return protected_; }
  bool disabled() const { return disabled_; }

  // dfs_weight_order: indices into `nodes` ordered by a post-order walk
  // whose children go heaviest first (weight: requests in the subtree).
  std::vector<size_t> DfsWeightOrder(const std::vector<NodeId>& nodes) const;

 private:
  struct Node {
    NodeId parent = -1;
    // Children in insertion order, as SGLang's dict: a sibling list.
    NodeId first_child = -1, last_child = -1, prev = -1, next = -1;
    int32_t num_children = 0;
    SglangTokens src;            // the sequence its tokens come from
    int64_t start = 0, end = 0;  // its tokens' positions
    int32_t lock_ref = 0;
    uint64_t last_access = 0;
    uint64_t leaf_key = 0;  // its access time in evictable_leaves_, 0: not in
    bool alive = false;
  };
  // A child's first page, as far as matching can tell: the shared prefix
  // it lies in, or the stream it belongs to (ChildKey).
  struct Key {
    NodeId parent;
    bool prefix;
    uint64_t id;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<uint64_t>()(k.id * 0x9E3779B97F4A7C15ull ^
                                   (static_cast<uint64_t>(k.parent) << 1 | k.prefix));
    }
  };

  int64_t Aligned(int64_t n) const { return n / page_ * page_; }
  // The key of the page of `t` starting at `pos` under `parent`.
  Key ChildKey(NodeId parent, const SglangTokens& t, int64_t pos) const;
  // The child of `parent` whose first page `t` shares, or -1.
  NodeId ChildMatching(NodeId parent, const SglangTokens& t) const;
  // Where `t`'s first `key_len` tokens stop agreeing with `n` (page-aligned).
  int64_t MatchEnd(const Node& n, const SglangTokens& t, int64_t key_len) const;
  NodeId Split(NodeId child, int64_t at);
  NodeId NewNode();
  void AppendChild(NodeId parent, NodeId child);
  void DeleteLeaf(NodeId id);
  // Puts `id` in, or takes it out of, the evictable leaves as its state
  // says (alive, unlocked, childless), keyed by its current access time.
  void Refresh(NodeId id);
  void Touch(NodeId id, uint64_t now) {
    nodes_[id].last_access = now;
    Refresh(id);
  }
  int64_t Len(NodeId id) const { return nodes_[id].end - nodes_[id].start; }

  int64_t page_;
  bool disabled_;
  std::vector<Node> nodes_;
  std::vector<NodeId> free_ids_;
  std::unordered_map<Key, NodeId, KeyHash> child_of_;
  std::set<std::pair<uint64_t, NodeId>> evictable_leaves_;
  uint64_t clock_ = 0;
  int64_t evictable_ = 0, protected_ = 0;
};

}  // namespace servesim
