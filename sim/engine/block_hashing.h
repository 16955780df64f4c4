// Content names of a request's KV blocks for the prefix cache: block i's
// content (see PromptContent) chained with its parent's hash, so equal
// hashes mean equal whole prefixes. Computed lazily, once per full block:
// no per-token work.
#pragma once

#include <cstdint>

#include "sim/engine/request.h"

namespace servesim {

// Extends r->block_hashes to cover the first `blocks` blocks.
void EnsureBlockHashes(Request* r, int32_t blocks, int32_t block_size);

// The first block from which on every block is the request's own stream
// content (past its shared prefix and trace blocks): no other request can
// ever hit those blocks, only this one if it is preempted and resumes.
// INT32_MAX when the stream is shared (sessions).
int32_t FirstPrivateBlock(const Request& r, int32_t block_size);

}  // namespace servesim
