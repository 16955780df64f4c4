// Chained content hashes of KV blocks (see block_hashing.h).
#include "sim/engine/block_hashing.h"

#include <algorithm>
#include <climits>

namespace servesim {
namespace {

uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t Combine(uint64_t a, uint64_t b) {
  return Mix(a ^ (Mix(b) + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2)));
}

// Tags keep the three kinds of content apart.
constexpr uint64_t kTraceTag = 0x7472616365ULL;
constexpr uint64_t kPrefixTag = 0x707265666978ULL;
constexpr uint64_t kStreamTag = 0x73747265616dULL;

uint64_t BlockContent(const Request& r, int32_t i, int32_t bs) {
  const int64_t first = static_cast<int64_t>(i) * bs;
  const int64_t last = first + bs - 1;
  const PromptContent& c = r.content;
  if (c.trace_hashes && last < r.prompt_len) {
    const int64_t tb = c.trace_block_tokens;
    const auto& ids = *c.trace_hashes;
    const size_t a = static_cast<size_t>(first / tb), b = static_cast<size_t>(last / tb);
    if (b < ids.size()) {
      return Combine(Combine(kTraceTag, ids[a]), Combine(ids[b], first % tb));
    }
  }
  if (last < c.prefix_len) return Combine(Combine(kPrefixTag, c.prefix_id), i);
  return Combine(Combine(kStreamTag, c.stream_id), i);
}

}  // namespace

int32_t FirstPrivateBlock(const Request& r, int32_t bs) {
  const PromptContent& c = r.content;
  if (c.shared_stream) return INT32_MAX;
  // As BlockContent: block i is a prefix block while (i + 1) * bs <=
  // prefix_len, a trace block while (i + 1) * bs <= min(prompt_len, the
  // tokens the trace names).
  int64_t shared = c.prefix_len / bs;
  if (c.trace_hashes) {
    const int64_t named =
        static_cast<int64_t>(c.trace_hashes->size()) * c.trace_block_tokens;
    shared = std::max<int64_t>(shared, std::min<int64_t>(r.prompt_len, named) / bs);
  }
  return static_cast<int32_t>(std::min<int64_t>(shared, INT32_MAX));
}

namespace {

// Block i's hash from its parent's (0x5eed for the first).
uint64_t Chained(const std::vector<uint64_t>& h, uint64_t content) {
  const uint64_t x = Combine(h.empty() ? 0x5eedULL : h.back(), content);
  return x == 0 ? 1 : x;  // 0 means "not registered" in the cache
}

}  // namespace

const std::vector<uint64_t>* PrefixHashMemo::Chain(uint64_t prefix_id,
                                                   int32_t blocks) {
  auto it = chains_.find(prefix_id);
  if (it == chains_.end()) {
    if (hashes_ >= kMaxHashes) return nullptr;
    it = chains_.emplace(prefix_id, std::vector<uint64_t>()).first;
  }
  std::vector<uint64_t>& h = it->second;
  while (static_cast<int32_t>(h.size()) < blocks) {
    const int32_t i = static_cast<int32_t>(h.size());
    h.push_back(Chained(h, Combine(Combine(kPrefixTag, prefix_id), i)));
    ++hashes_;
  }
  return &h;
}

void EnsureBlockHashes(Request* r, int32_t blocks, int32_t block_size,
                       PrefixHashMemo* memo) {
  auto& h = r->block_hashes;
  const PromptContent& c = r->content;
  // Without a trace, blocks i < prefix_len / block_size are prefix blocks
  // (BlockContent), named by the prefix alone.
  const int32_t prefix_blocks = std::min(blocks, c.prefix_len / block_size);
  if (memo != nullptr && !c.trace_hashes &&
      static_cast<int32_t>(h.size()) < prefix_blocks) {
    if (const std::vector<uint64_t>* chain = memo->Chain(c.prefix_id, prefix_blocks)) {
      h.insert(h.end(), chain->begin() + static_cast<ptrdiff_t>(h.size()),
               chain->begin() + prefix_blocks);
    }
  }
  while (static_cast<int32_t>(h.size()) < blocks) {
    const int32_t i = static_cast<int32_t>(h.size());
    h.push_back(Chained(h, BlockContent(*r, i, block_size)));
  }
}

}  // namespace servesim
