// Least-significant-digit radix sort of values by an unsigned key that
// orders as they do and lies in [0, 2^bits) (keys offset by the smallest
// one: only the bits in which keys differ cost passes). At most four
// passes of at most 8 bits: keys wider than 32 bits are radix-sorted by
// their top 32 bits, then each run of values sharing those bits (rare: a
// sample of a few million spread over 2^32 cells) is sorted by the whole
// key. Through a second array of at most max_run values: longer inputs are
// sorted in runs merged one by one from the back (a 10 M-request summary's
// second array holds one run, not the sample). Values with equal keys must
// be equal, so the result is the one sorted sequence (what std::sort gives).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace servesim {
namespace radix_internal {

// 8-bit digits: on this project's machine a pass scattering into 256
// places costs about a third of one into 2048 (1 M 64-bit values: 1.0 ms
// against 3.0 ms), more than paying for the extra passes.
constexpr int kDigitBits = 8;
constexpr int kMaxPasses = 4;

// By bits [low, low + kPasses * width) of the key.
template <int kPasses, typename T, typename Key>
void SortDigits(T* v, size_t n, int low, int width, T* scratch, Key key) {
  const size_t radix = size_t{1} << width;
  const uint64_t mask = radix - 1;
  // Counts fit 32 bits: runs are at most max_run (< 2^32) values.
  std::vector<uint32_t> counts(kPasses * radix, 0);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t k = key(v[i]) >> low;
    for (int p = 0; p < kPasses; ++p) ++counts[p * radix + ((k >> (p * width)) & mask)];
  }
  T* src = v;
  T* dst = scratch;
  for (int p = 0; p < kPasses; ++p) {
    uint32_t* c = &counts[p * radix];
    if (std::find(c, c + radix, n) != c + radix) continue;  // one digit
    uint32_t sum = 0;
    for (size_t d = 0; d < radix; ++d) {
      const uint32_t here = c[d];
      c[d] = sum;
      sum += here;
    }
    const int shift = low + p * width;
    for (size_t i = 0; i < n; ++i) {
      const T x = src[i];
      dst[c[(key(x) >> shift) & mask]++] = x;
    }
    std::swap(src, dst);
  }
  if (src != v) std::copy(src, src + n, v);
}

// v sorted by key >> low: sorts each run of equal key >> low by the key.
template <typename T, typename Key>
void SortRunsOfEqualTop(T* v, size_t n, int low, Key key) {
  size_t i = 0;
  while (i + 1 < n) {
    const uint64_t top = key(v[i]) >> low;
    if ((key(v[i + 1]) >> low) != top) {
      ++i;
      continue;
    }
    size_t j = i + 2;
    while (j < n && (key(v[j]) >> low) == top) ++j;
    std::sort(v + i, v + j, [&](const T& a, const T& b) { return key(a) < key(b); });
    i = j;
  }
}

template <typename T, typename Key>
void SortRun(T* v, size_t n, int bits, T* scratch, Key key) {
  const int top = std::min(bits, kMaxPasses * kDigitBits);
  const int passes = (top + kDigitBits - 1) / kDigitBits;
  if (passes == 0) return;  // all keys 0
  const int width = (top + passes - 1) / passes;
  const int low = bits - passes * width > 0 ? bits - passes * width : 0;
  switch (passes) {
    case 1: SortDigits<1>(v, n, low, width, scratch, key); break;
    case 2: SortDigits<2>(v, n, low, width, scratch, key); break;
    case 3: SortDigits<3>(v, n, low, width, scratch, key); break;
    default: SortDigits<4>(v, n, low, width, scratch, key); break;
  }
  if (low > 0) SortRunsOfEqualTop(v, n, low, key);
}

// v[0, a) and v[a, b) sorted; merges them in place through scratch
// (>= b - a values), from the back.
template <typename T>
void MergeRunFromBack(T* v, size_t a, size_t b, T* scratch) {
  std::copy(v + a, v + b, scratch);
  size_t i = a, j = b - a, k = b;
  while (j > 0) {
    if (i > 0 && v[i - 1] > scratch[j - 1]) {
      v[--k] = v[--i];
    } else {
      v[--k] = scratch[--j];
    }
  }
}

}  // namespace radix_internal

// Sorts v[0, n) by key(v[i]) (uint64_t, < 2^bits, bits <= 64).
template <typename T, typename Key>
void RadixSortBy(T* v, size_t n, int bits, size_t max_run, Key key) {
  if (n < 2) return;
  const size_t runs = (n + max_run - 1) / max_run;
  const size_t run = (n + runs - 1) / runs;
  const auto scratch = std::make_unique_for_overwrite<T[]>(std::min(n, run));
  for (size_t a = 0; a < n; a += run) {
    const size_t b = std::min(n, a + run);
    radix_internal::SortRun(v + a, b - a, bits, scratch.get(), key);
    if (a > 0) radix_internal::MergeRunFromBack(v, a, b, scratch.get());
  }
}

}  // namespace servesim
