// Content names of a request's KV blocks for the prefix cache: block i's
// content (see PromptContent) chained with its parent's hash, so equal
// hashes mean equal whole prefixes. Computed lazily, once per full block:
// no per-token work.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/engine/request.h"

namespace servesim {

// The chained hashes of shared prefixes' leading blocks, equal for every
// request with that prefix (and no trace): computed once per prefix rather
// than once per request. Bounded: past kMaxHashes it stops memoising new
// prefixes (a prefix model may give every request its own).
class PrefixHashMemo {
 public:
  static constexpr size_t kMaxHashes = size_t{1} << 20;
  // The first `blocks` hashes of prefix `prefix_id`, or null when the memo
  // is full and does not hold that prefix.
  const std::vector<uint64_t>* Chain(uint64_t prefix_id, int32_t blocks);

 private:
  std::unordered_map<uint64_t, std::vector<uint64_t>> chains_;
  size_t hashes_ = 0;
};

// Extends r->block_hashes to cover the first `blocks` blocks; takes shared
// prefix blocks from `memo` when given.
void EnsureBlockHashes(Request* r, int32_t blocks, int32_t block_size,
                       PrefixHashMemo* memo = nullptr);

// The first block from which on every block is the request's own stream
// content (past its shared prefix and trace blocks): no other request can
// ever hit those blocks, only this one if it is preempted and resumes.
// INT32_MAX when the stream is shared (sessions).
int32_t FirstPrivateBlock(const Request& r, int32_t block_size);

}  // namespace servesim
