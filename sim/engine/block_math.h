// Tokens to KV blocks for one block size: a shift when it is a power of two
// (these run several times per request per step), a division otherwise.
#pragma once

#include <cstdint>

namespace servesim {

class BlockMath {
 public:
  explicit BlockMath(int32_t block_size)
      : size_(block_size), shift_(ShiftOf(block_size)) {}

  int32_t size() const { return size_; }
  int32_t shift() const { return shift_; }  // log2 of the size, or -1
  // Blocks holding `tokens` (the last one possibly partial).
  int32_t Blocks(int32_t tokens) const {
    if (shift_ >= 0) return (tokens + size_ - 1) >> shift_;
    return (tokens + size_ - 1) / size_;
  }
  // Blocks `tokens` fill completely.
  int32_t Full(int32_t tokens) const {
    if (shift_ >= 0) return tokens >> shift_;
    return tokens / size_;
  }
  // x mod the size, in [0, size) for any x, negative too (a mask: the
  // two's-complement result is that residue).
  int32_t Phase(int64_t x) const {
    if (shift_ >= 0) return static_cast<int32_t>(x & (size_ - 1));
    const int64_t p = x % size_;
    return static_cast<int32_t>(p < 0 ? p + size_ : p);
  }

 private:
  // log2 of a power-of-two block size, else -1.
  static int32_t ShiftOf(int32_t block_size) {
    if (block_size <= 0 || (block_size & (block_size - 1)) != 0) return -1;
    return __builtin_ctz(static_cast<unsigned>(block_size));
  }

  int32_t size_;
  int32_t shift_;
};

}  // namespace servesim
