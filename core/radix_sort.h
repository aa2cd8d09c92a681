// Stable LSD radix sorts for the statistics' big sorts (latency samples,
// state changes of a whole trace): millions of 64-bit keys, where introsort's
// comparisons cost several times more than a few counting passes. The digits
// are sized to the widest key, so keys spanning a small range (durations,
// times within a trace) take two to four passes.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace core {

/// Sorts `v` by keyOf(element) (a uint64_t), keeping the input order among equal keys.
template <typename T, typename KeyOf>
void radixSortByKey(std::vector<T>& v, KeyOf keyOf) {
  const size_t n = v.size();
  if (n < 2) return;
  if (n < 1024) {  // counting passes do not pay off below about a thousand elements
    std::stable_sort(v.begin(), v.end(), [&](const T& a, const T& b) { return keyOf(a) < keyOf(b); });
    return;
  }
  uint64_t widest = 0;
  for (const T& x : v) widest |= keyOf(x);
  const int bits = std::max(1, static_cast<int>(std::bit_width(widest)));
  // Digits of at most 11 bits keep the counts and the scatter targets in cache.
  constexpr int kMaxDigitBits = 11;
  const int passes = (bits + kMaxDigitBits - 1) / kMaxDigitBits;
  const int digitBits = (bits + passes - 1) / passes;
  const size_t radix = size_t{1} << digitBits;
  const uint64_t mask = radix - 1;
  std::vector<size_t> counts(radix * static_cast<size_t>(passes), 0);
  for (const T& x : v) {
    const uint64_t k = keyOf(x);
    for (int d = 0; d < passes; ++d) ++counts[static_cast<size_t>(d) * radix + ((k >> (digitBits * d)) & mask)];
  }
  std::vector<T> scratch(n);
  std::vector<T>* from = &v;
  std::vector<T>* to = &scratch;
  for (int d = 0; d < passes; ++d) {
    size_t* c = counts.data() + static_cast<size_t>(d) * radix;
    if (std::any_of(c, c + radix, [n](size_t x) { return x == n; })) continue;  // one digit value: nothing moves
    size_t sum = 0;
    for (size_t i = 0; i < radix; ++i) {
      const size_t here = c[i];
      c[i] = sum;
      sum += here;
    }
    const int shift = digitBits * d;
    for (const T& x : *from) (*to)[c[(keyOf(x) >> shift) & mask]++] = x;
    std::swap(from, to);
  }
  if (from != &v) v.swap(*from);
}

/// Sorts signed 64-bit values ascending.
inline void radixSort(std::vector<int64_t>& v) {
  if (v.empty()) return;
  const int64_t least = *std::min_element(v.begin(), v.end());
  // x - least fits in 64 unsigned bits for any two int64 values.
  radixSortByKey(v, [least](int64_t x) { return static_cast<uint64_t>(x) - static_cast<uint64_t>(least); });
}

}  // namespace core
