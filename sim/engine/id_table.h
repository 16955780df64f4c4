// Values keyed by non-negative request id, for a scheduler that holds a
// subset of a run's requests at a time: chunks of 1024 ids are allocated on
// first use and freed when their last value is erased, so a lookup is an
// index (no hashing) and memory follows what is live, not the largest id.
// (Ids routed to other replicas leave holes; a chunk is freed once this
// table's own values in it are gone.)
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/core/check.h"

namespace servesim {

template <typename T>
class IdTable {
 public:
  static constexpr int kShift = 10;
  static constexpr int64_t kChunk = int64_t{1} << kShift;

  // A value-initialised value for `id`, which must not be present.
  T& Insert(int64_t id) {
    SERVESIM_CHECK(id >= 0, "IdTable: negative id %lld", static_cast<long long>(id));
    const auto c = static_cast<size_t>(id >> kShift);
    if (c >= chunks_.size()) chunks_.resize(c + 1);
    if (!chunks_[c]) chunks_[c] = std::make_unique<Chunk>();
    Chunk& k = *chunks_[c];
    const size_t i = static_cast<size_t>(id & (kChunk - 1));
    SERVESIM_CHECK(!k.alive[i], "IdTable: id %lld inserted twice", static_cast<long long>(id));
    k.alive[i] = true;
    ++k.live;
    ++size_;
    k.values[i] = T{};
    return k.values[i];
  }
  T& at(int64_t id) { return chunks_[Present(id)]->values[static_cast<size_t>(id & (kChunk - 1))]; }
  const T& at(int64_t id) const {
    return chunks_[Present(id)]->values[static_cast<size_t>(id & (kChunk - 1))];
  }
  void erase(int64_t id) {
    const size_t c = Present(id);
    Chunk& k = *chunks_[c];
    k.alive[static_cast<size_t>(id & (kChunk - 1))] = false;
    --size_;
    if (--k.live == 0) chunks_[c].reset();
  }
  size_t size() const { return size_; }
  // f(id, value) for every value, in id order.
  template <typename F>
  void ForEach(F f) const {
    for (size_t c = 0; c < chunks_.size(); ++c) {
      if (!chunks_[c]) continue;
      for (size_t i = 0; i < static_cast<size_t>(kChunk); ++i) {
        if (chunks_[c]->alive[i]) f(static_cast<int64_t>(c) * kChunk + static_cast<int64_t>(i),
                                    chunks_[c]->values[i]);
      }
    }
  }

 private:
  struct Chunk {
    std::array<T, kChunk> values{};
    std::bitset<kChunk> alive;
    int32_t live = 0;
  };
  // The chunk index of a present id (aborts otherwise).
  size_t Present(int64_t id) const {
    const auto c = static_cast<size_t>(id >> kShift);
    SERVESIM_CHECK(id >= 0 && c < chunks_.size() && chunks_[c] &&
                       chunks_[c]->alive[static_cast<size_t>(id & (kChunk - 1))],
                   "IdTable: no value for id %lld", static_cast<long long>(id));
    return c;
  }

  std::vector<std::unique_ptr<Chunk>> chunks_;
  size_t size_ = 0;
};

}  // namespace servesim
