// A vector stored in fixed chunks of 2^kShift elements, so that a run can
// free the leading chunks once it is done with them (a long run keeps only
// what is in flight) while indices stay those of the whole vector.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

namespace servesim {

template <typename T, int kShift>
class ChunkedVector {
 public:
  static constexpr size_t kChunk = size_t{1} << kShift;

  ChunkedVector() = default;
  ChunkedVector(ChunkedVector&&) noexcept = default;
  ChunkedVector& operator=(ChunkedVector&&) noexcept = default;
  ChunkedVector(const ChunkedVector& o) : size_(o.size_) {
    chunks_.reserve(o.chunks_.size());
    for (const auto& c : o.chunks_) {
      chunks_.emplace_back(c ? std::make_unique<T[]>(kChunk) : nullptr);
      if (c) std::copy(c.get(), c.get() + kChunk, chunks_.back().get());
    }
  }
  ChunkedVector& operator=(const ChunkedVector& o) {
    if (this != &o) *this = ChunkedVector(o);
    return *this;
  }

  T& operator[](size_t i) { return chunks_[i >> kShift][i & (kChunk - 1)]; }
  const T& operator[](size_t i) const { return chunks_[i >> kShift][i & (kChunk - 1)]; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void reserve(size_t n) { chunks_.reserve((n + kChunk - 1) >> kShift); }

  T& emplace_back() {
    const size_t j = size_ & (kChunk - 1);
    if (j == 0) chunks_.push_back(std::make_unique<T[]>(kChunk));
    ++size_;
    return chunks_.back()[j] = T{};
  }
  // Frees chunk c (elements [c * kChunk, (c + 1) * kChunk)); they must not
  // be used again. size() is unchanged.
  void ReleaseChunk(size_t c) { chunks_[c].reset(); }
  void clear() {
    chunks_.clear();
    size_ = 0;
  }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
  size_t size_ = 0;
};

}  // namespace servesim
