// The fast prefix cache's eviction order (PrefixCache): its free blocks
// that hold something cached, least recently freed first (evicted from the
// head). An entry is either a named block (a hashed one, by id: a hit takes
// it out of the middle) or a run of anonymous private blocks -- blocks of a
// request's own stream, which nobody will ever look up: freed together,
// they are interchangeable, so freeing or evicting n of them is O(1).
//
// Invariants (CheckInvariants): the links agree both ways, every run holds
// at least one block, blocks() is the sum over entries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace servesim {

class CachedQueue {
 public:
  explicit CachedQueue(int32_t num_blocks);

  int32_t blocks() const { return blocks_; }
  bool empty() const { return head_ < 0; }
  bool contains(int32_t block) const { return on_queue_[block] != 0; }

  void PushBlock(int32_t block);  // at the tail
  void PushRun(int32_t n);        // n >= 1 anonymous blocks at the tail
  void Unlink(int32_t block);     // a named block, from anywhere

  // The head entry: a named block (>= 0), or -1 for a run.
  int32_t HeadBlock() const { return head_ < num_blocks_ ? head_ : -1; }
  // Takes up to n blocks of the head run; returns how many.
  int32_t TakeFromHeadRun(int32_t n);

  void CheckInvariants() const;  // aborts with a description

 private:
  struct Link {
    int32_t prev = -1, next = -1;
  };
  // Nodes [0, num_blocks) are the named blocks, those above runs.
  bool IsRun(int32_t node) const { return node >= num_blocks_; }
  int32_t& RunCount(int32_t node) { return run_count_[node - num_blocks_]; }
  void Append(int32_t node);
  void Remove(int32_t node);

  int32_t num_blocks_;
  std::vector<Link> links_;
  std::vector<int32_t> run_count_;  // by run node - num_blocks_
  std::vector<int32_t> free_runs_;  // run nodes not in use
  std::vector<uint8_t> on_queue_;   // by named block
  int32_t head_ = -1, tail_ = -1;
  int32_t blocks_ = 0;
};

}  // namespace servesim
