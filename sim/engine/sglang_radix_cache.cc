// SGLang's radix cache over token identities (see sglang_radix_cache.h).
#include "sim/engine/sglang_radix_cache.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace servesim {

int64_t CommonPrefix(const SglangTokens& a, const SglangTokens& b) {
  // Each sequence is its prefix's tokens, then its own stream's.
  const int64_t both_prefix = std::min(a.prefix_len, b.prefix_len);
  if (both_prefix > 0 && a.prefix_id != b.prefix_id) return 0;
  if (a.prefix_len != b.prefix_len) return both_prefix;  // prefix vs stream
  if (a.stream_id == b.stream_id) return std::numeric_limits<int64_t>::max();
  return both_prefix;
}

SglangRadixCache::SglangRadixCache(int64_t page_size, bool disabled)
    : page_(std::max<int64_t>(page_size, 1)), disabled_(disabled) {
  nodes_.resize(1);
  nodes_[kRoot].alive = true;
  nodes_[kRoot].lock_ref = 1;  // the root is never evicted
}

SglangRadixCache::NodeId SglangRadixCache::NewNode() {
  NodeId id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
    nodes_[id] = Node{};
  } else {
    id = static_cast<NodeId>(nodes_.size());
    nodes_.emplace_back();
  }
  nodes_[id].alive = true;
  nodes_[id].last_access = ++clock_;  // TreeNode() reads the clock
  return id;
}

void SglangRadixCache::Refresh(NodeId id) {
  Node& n = nodes_[id];
  if (n.leaf_key != 0) {
    evictable_leaves_.erase({n.leaf_key, id});
    n.leaf_key = 0;
  }
  if (id != kRoot && n.alive && n.lock_ref == 0 && n.num_children == 0) {
    evictable_leaves_.insert({n.last_access, id});
    n.leaf_key = n.last_access;
  }
}

SglangRadixCache::Key SglangRadixCache::ChildKey(NodeId parent, const SglangTokens& t,
                                                int64_t pos) const {
  // The page [pos, pos + page) lies in the shared prefix, or (partly)
  // beyond it, in the sequence's own stream: two sequences share it
  // exactly when these agree (CommonPrefix).
  if (t.prefix_len >= pos + page_) return {parent, true, t.prefix_id};
  return {parent, false, t.stream_id};
}

int64_t SglangRadixCache::MatchEnd(const Node& n, const SglangTokens& t, int64_t key_len) const {
  const int64_t common = std::min(CommonPrefix(t, n.src), key_len);
  return std::max(n.start, std::min(n.end, Aligned(common)));
}

SglangRadixCache::NodeId SglangRadixCache::ChildMatching(NodeId parent,
                                                        const SglangTokens& t) const {
  const Node& p = nodes_[parent];
  const int64_t pos = parent == kRoot ? 0 : p.end;
  const auto it = child_of_.find(ChildKey(parent, t, pos));
  return it == child_of_.end() ? -1 : it->second;
}

void SglangRadixCache::AppendChild(NodeId parent, NodeId child) {
  Node& p = nodes_[parent];
  Node& c = nodes_[child];
  c.parent = parent;
  c.prev = p.last_child;
  c.next = -1;
  if (p.last_child >= 0) {
    nodes_[p.last_child].next = child;
  } else {
    p.first_child = child;
  }
  p.last_child = child;
  ++p.num_children;
  child_of_[ChildKey(parent, c.src, c.start)] = child;
}

SglangRadixCache::NodeId SglangRadixCache::Split(NodeId child, int64_t at) {
  const NodeId top = NewNode();
  Node& n = nodes_[top];
  Node& c = nodes_[child];
  n.parent = c.parent;
  n.src = c.src;
  n.start = c.start;
  n.end = at;
  n.lock_ref = c.lock_ref;
  // `top` takes the child's place (and key) among its siblings.
  Node& p = nodes_[n.parent];
  n.prev = c.prev;
  n.next = c.next;
  if (c.prev >= 0) nodes_[c.prev].next = top; else p.first_child = top;
  if (c.next >= 0) nodes_[c.next].prev = top; else p.last_child = top;
  child_of_[ChildKey(n.parent, n.src, n.start)] = top;
  // The child continues below it from `at`.
  n.first_child = n.last_child = child;
  n.num_children = 1;
  c.parent = top;
  c.prev = c.next = -1;
  c.start = at;
  child_of_[ChildKey(top, c.src, c.start)] = child;
  return top;
}

SglangRadixCache::Match SglangRadixCache::MatchPrefix(const SglangTokens& t, int64_t len) {
  const int64_t key_len = Aligned(len);
  if (disabled_ || key_len == 0) return {};
  const uint64_t now = ++clock_;
  nodes_[kRoot].last_access = now;
  Match m;
  NodeId c;
  while (m.len < key_len && (c = ChildMatching(m.node, t)) >= 0) {
    Touch(c, now);
    const int64_t end = MatchEnd(nodes_[c], t, key_len);
    m.node = end < nodes_[c].end ? Split(c, end) : c;
    m.len = end;
    if (m.node != c) break;
  }
  return m;
}

int64_t SglangRadixCache::Insert(const SglangTokens& t, int64_t len) {
  if (disabled_) return 0;
  const int64_t key_len = Aligned(len);
  const uint64_t now = ++clock_;
  nodes_[kRoot].last_access = now;
  NodeId node = kRoot;
  int64_t pos = 0;
  NodeId c;
  while (pos < key_len && (c = ChildMatching(node, t)) >= 0) {
    Touch(c, now);
    const int64_t end = MatchEnd(nodes_[c], t, key_len);
    node = end < nodes_[c].end ? Split(c, end) : c;
    pos = end;
  }
  const int64_t cached = pos;
  if (pos < key_len) {
    const NodeId leaf = NewNode();
    Node& n = nodes_[leaf];
    n.src = t;
    n.start = pos;
    n.end = key_len;
    AppendChild(node, leaf);
    Refresh(node);
    Refresh(leaf);
    evictable_ += key_len - pos;
  }
  return cached;
}

void SglangRadixCache::Lock(NodeId node) {
  if (disabled_) return;
  for (; node != kRoot; node = nodes_[node].parent) {
    if (nodes_[node].lock_ref++ == 0) {
      evictable_ -= Len(node);
      protected_ += Len(node);
      Refresh(node);
    }
  }
}

void SglangRadixCache::Unlock(NodeId node) {
  if (disabled_) return;
  for (; node != kRoot; node = nodes_[node].parent) {
    if (--nodes_[node].lock_ref == 0) {
      evictable_ += Len(node);
      protected_ -= Len(node);
      Refresh(node);
    }
  }
}

void SglangRadixCache::DeleteLeaf(NodeId id) {
  Node& n = nodes_[id];
  Node& p = nodes_[n.parent];
  if (n.prev >= 0) nodes_[n.prev].next = n.next; else p.first_child = n.next;
  if (n.next >= 0) nodes_[n.next].prev = n.prev; else p.last_child = n.prev;
  --p.num_children;
  child_of_.erase(ChildKey(n.parent, n.src, n.start));
  evictable_ -= Len(id);
  n.alive = false;
  Refresh(id);
  Refresh(n.parent);
  free_ids_.push_back(id);
}

int64_t SglangRadixCache::Evict(int64_t tokens) {
  int64_t evicted = 0;
  if (disabled_) return 0;
  // SGLang pops leaves from a heap on last access; a parent left childless
  // joins it. The evictable leaves are kept ordered by access time (never
  // tied between leaves), so taking the first each time evicts the same
  // nodes in the same order.
  while (evicted < tokens && !evictable_leaves_.empty()) {
    const NodeId oldest = evictable_leaves_.begin()->second;
    evicted += Len(oldest);
    DeleteLeaf(oldest);
  }
  return evicted;
}

std::vector<size_t> SglangRadixCache::DfsWeightOrder(const std::vector<NodeId>& nodes) const {
  std::unordered_map<NodeId, std::vector<size_t>> at;
  for (size_t i = 0; i < nodes.size(); ++i) at[nodes[i]].push_back(i);
  std::vector<int64_t> weight(nodes_.size(), 0);
  // Subtree weights, children before parents.
  std::vector<NodeId> post, stack = {kRoot};
  while (!stack.empty()) {
    const NodeId n = stack.back();
    stack.pop_back();
    post.push_back(n);
    for (NodeId c = nodes_[n].first_child; c >= 0; c = nodes_[c].next) stack.push_back(c);
  }
  for (auto it = post.rbegin(); it != post.rend(); ++it) {
    auto found = at.find(*it);
    weight[*it] += found == at.end() ? 0 : static_cast<int64_t>(found->second.size());
    if (*it != kRoot) weight[nodes_[*it].parent] += weight[*it];
  }
  // Post-order: heaviest child first (ties in insertion order), then the
  // node's own requests in queue order.
  std::vector<size_t> order;
  struct Frame {
    NodeId node;
    bool visited;
  };
  std::vector<Frame> frames = {{kRoot, false}};
  while (!frames.empty()) {
    const Frame f = frames.back();
    frames.pop_back();
    if (f.visited) {
      auto found = at.find(f.node);
      if (found != at.end()) order.insert(order.end(), found->second.begin(), found->second.end());
      continue;
    }
    std::vector<NodeId> kids;
    for (NodeId c = nodes_[f.node].first_child; c >= 0; c = nodes_[c].next) kids.push_back(c);
    std::stable_sort(kids.begin(), kids.end(),
                     [&](NodeId a, NodeId b) { return weight[a] > weight[b]; });
    frames.push_back({f.node, true});
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) frames.push_back({*it, false});
  }
  return order;
}

}  // namespace servesim
