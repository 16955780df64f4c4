// The fast prefix cache's eviction order (PrefixCache): its free blocks
// that hold something cached, least recently freed first (evicted from the
// head). An entry is one of:
//  - a named block (a hashed one, by id: a hit takes it out of the middle);
//  - a run of anonymous private blocks -- blocks of a request's own stream,
//    which nobody will ever look up: freed together, they are
//    interchangeable, so freeing or evicting n of them is O(1);
//  - a parked shared run: named blocks that the last holder of a shared
//    run freed together, as one entry, so that when the run is taken again
//    before any of them is touched alone it leaves the queue in O(1). The
//    caller keeps their ids and lays the entry out (Unpark) as those named
//    blocks, in place, before one is touched alone.
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

  // n >= 1 named blocks as one parked entry at the tail; `tag` is the
  // caller's name for it (HeadParked). Returns its node.
  int32_t PushParked(int32_t tag, int32_t n);
  // The parked entry `node` leaves the queue whole.
  void RemoveParked(int32_t node);
  // The parked entry `node` becomes the named blocks[0..n) (n: its count),
  // in that order, where it stood.
  void Unpark(int32_t node, const int32_t* blocks, int32_t n);

  // The head entry: a named block (>= 0), or -1 for a run (anonymous or
  // parked).
  int32_t HeadBlock() const { return head_ < num_blocks_ ? head_ : -1; }
  // The head entry's tag if it is parked, else -1.
  int32_t HeadParked() const {
    return head_ >= num_blocks_ ? parked_tag_[head_ - num_blocks_] : -1;
  }
  // Takes up to n blocks of the head run; returns how many.
  int32_t TakeFromHeadRun(int32_t n);

  void CheckInvariants() const;  // aborts with a description

 private:
  struct Link {
    int32_t prev = -1, next = -1;
  };
  // Nodes [0, num_blocks) are the named blocks, those above runs
  // (anonymous or parked).
  bool IsRun(int32_t node) const { return node >= num_blocks_; }
  bool IsAnonymousRun(int32_t node) const {
    return IsRun(node) && parked_tag_[node - num_blocks_] < 0;
  }
  int32_t& RunCount(int32_t node) { return run_count_[node - num_blocks_]; }
  int32_t NewRunNode(int32_t n, int32_t tag);
  void FreeRunNode(int32_t node);
  void Append(int32_t node);
  void InsertAfter(int32_t prev, int32_t node);  // prev -1: at the head
  void Remove(int32_t node);

  int32_t num_blocks_;
  std::vector<Link> links_;
  std::vector<int32_t> run_count_;  // by run node - num_blocks_
  std::vector<int32_t> parked_tag_;  // by run node - num_blocks_; -1: anonymous
  std::vector<int32_t> free_runs_;  // run nodes not in use
  std::vector<uint8_t> on_queue_;   // by named block
  int32_t head_ = -1, tail_ = -1;
  int32_t blocks_ = 0;
};

}  // namespace servesim
