// What a prompt's tokens are, as far as the prefix cache can tell: enough
// to name every full KV block by content without simulating tokens.
//
// Token position p of a request's stream (prompt, then output) belongs to:
//  - trace block p / trace_block_tokens, named trace_hashes[...], while p is
//    inside the prompt and the request came from a hashed trace (Mooncake);
//  - else the shared prefix `prefix_id` while p < prefix_len;
//  - else the request's own stream `stream_id` (unique per request, or per
//    multi-turn session, so a later turn's history matches earlier turns).
// The engine chains block contents into block hashes (parent hash + this
// block's content), so a block matches only if its whole prefix matches.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace servesim {

struct PromptContent {
  uint64_t prefix_id = 0;   // 0: no shared prefix
  int32_t prefix_len = 0;   // tokens named by prefix_id
  uint64_t stream_id = 0;   // names every other token
  std::shared_ptr<const std::vector<uint64_t>> trace_hashes;  // may be null
  int32_t trace_block_tokens = 0;
  // The stream continues in later requests (multi-turn sessions), so its
  // blocks can be hit by another request; otherwise only by this one.
  bool shared_stream = false;
};

// The drawn shape of one request before it is sent.
struct RequestSpec {
  int32_t prompt_len = 0;
  int32_t output_len = 0;
  PromptContent content;
  int32_t request_class = -1;  // index into workload.classes, -1: none
  int32_t priority = 0;        // a trace record's (a class's overrides it)
};

}  // namespace servesim
