// Stable radix sorts for the statistics' big sorts (latency samples, state
// changes of a whole trace): millions of 64-bit keys, where introsort's
// comparisons cost several times more than a few counting passes. The digits
// are sized to the widest key, so keys spanning a small range (durations,
// times within a trace) take two to four passes.
//
// A big input is first split by its most significant digit (one pass over
// memory), then each part is sorted by its remaining digits while it sits in
// cache: least-significant-digit passes over the whole input would each
// stream it through memory again, and on a trace's millions of state changes
// those passes were most of the fair-share sweep's cost.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace core {

namespace radix_detail {

// Digits of at most 11 bits keep the counts and the scatter targets in cache.
constexpr int kMaxDigitBits = 11;
// Parts of at most this many elements are sorted by LSD passes in cache.
constexpr size_t kInCacheElements = size_t{1} << 14;
// Below this, comparisons cost less than clearing the counts of a pass.
constexpr size_t kComparisonSortElements = 64;

// Sorts n elements of `a` by the low `bits` bits of their keys (the higher
// bits are equal within the part), stably, with `b` (n elements) as scratch.
// Returns whichever of the two holds the result.
template <typename T, typename KeyOf>
T* sortPart(T* a, T* b, size_t n, int bits, KeyOf& keyOf, std::vector<size_t>& counts) {
  if (n < 2 || bits <= 0) return a;
  if (n < kComparisonSortElements) {
    std::stable_sort(a, a + n, [&](const T& x, const T& y) { return keyOf(x) < keyOf(y); });
    return a;
  }
  if (n <= kInCacheElements) {
    // Least significant digit first; smaller parts take smaller digits, so that
    // clearing the counts costs less than moving the elements.
    const int widest = std::clamp(static_cast<int>(std::bit_width(n)) - 3, 4, kMaxDigitBits);
    const int passes = (bits + widest - 1) / widest;
    const int digitBits = (bits + passes - 1) / passes;
    const size_t radix = size_t{1} << digitBits;
    const uint64_t mask = radix - 1;
    counts.assign(radix * static_cast<size_t>(passes), 0);
    for (size_t i = 0; i < n; ++i) {
      const uint64_t k = keyOf(a[i]);
      for (int d = 0; d < passes; ++d) ++counts[static_cast<size_t>(d) * radix + ((k >> (digitBits * d)) & mask)];
    }
    T* from = a;
    T* to = b;
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
      for (size_t i = 0; i < n; ++i) to[c[(keyOf(from[i]) >> shift) & mask]++] = from[i];
      std::swap(from, to);
    }
    return from;
  }
  // Most significant digit first: scatter into parts, then sort each part.
  // Only as many parts as it takes to bring them down to the cache's size:
  // more and smaller parts each pay their own LSD passes and counts.
  const int digitBits =
      std::min({bits, kMaxDigitBits, std::max(1, static_cast<int>(std::bit_width(n / kInCacheElements)))});
  const int shift = bits - digitBits;
  const size_t radix = size_t{1} << digitBits;
  const uint64_t mask = radix - 1;
  std::vector<size_t> start(radix + 1, 0);
  for (size_t i = 0; i < n; ++i) ++start[((keyOf(a[i]) >> shift) & mask) + 1];
  if (std::any_of(start.begin() + 1, start.end(), [n](size_t x) { return x == n; }))
    return sortPart(a, b, n, shift, keyOf, counts);  // one digit value: nothing moves
  for (size_t i = 0; i < radix; ++i) start[i + 1] += start[i];
  std::vector<size_t> next(start.begin(), start.end() - 1);
  for (size_t i = 0; i < n; ++i) b[next[(keyOf(a[i]) >> shift) & mask]++] = a[i];
  for (size_t i = 0; i < radix; ++i) {
    const size_t len = start[i + 1] - start[i];
    T* sorted = sortPart(b + start[i], a + start[i], len, shift, keyOf, counts);
    if (sorted != b + start[i]) std::copy(sorted, sorted + len, b + start[i]);
  }
  return b;
}

}  // namespace radix_detail

/// Sorts `v` by keyOf(element) (a uint64_t), keeping the input order among equal keys.
/// `scratch` is working memory that a caller sorting again and again keeps: a
/// fresh one per call is fresh pages, each faulted in on first write. The two
/// vectors may trade buffers.
template <typename T, typename KeyOf>
void radixSortByKey(std::vector<T>& v, std::vector<T>& scratch, KeyOf keyOf) {
  const size_t n = v.size();
  if (n < 2) return;
  if (n < 1024) {
    std::stable_sort(v.begin(), v.end(), [&](const T& a, const T& b) { return keyOf(a) < keyOf(b); });
    return;
  }
  uint64_t widest = 0;
  for (const T& x : v) widest |= keyOf(x);
  const int bits = std::max(1, static_cast<int>(std::bit_width(widest)));
  if (scratch.size() < n) scratch.resize(n);
  std::vector<size_t> counts;
  if (radix_detail::sortPart(v.data(), scratch.data(), n, bits, keyOf, counts) != v.data()) {
    v.swap(scratch);
    v.resize(n);
  }
}

template <typename T, typename KeyOf>
void radixSortByKey(std::vector<T>& v, KeyOf keyOf) {
  std::vector<T> scratch;
  radixSortByKey(v, scratch, keyOf);
}

namespace radix_detail {

// Plain values need no stable order, so a big input is split by its most
// significant digit in place (American flag sort: each value is swapped
// straight into its digit's part), and only parts that fit in cache get a
// scratch of their own size. The latency samples of a 50M-event trace are
// tens of millions of values: an input-sized scratch was the statistics'
// peak of memory.
template <typename KeyOf>
void sortValuesInPlace(int64_t* a, size_t n, int bits, KeyOf& keyOf, std::vector<int64_t>& scratch,
                       std::vector<size_t>& counts) {
  if (n < 2 || bits <= 0) return;
  if (n <= kInCacheElements) {
    scratch.resize(n);
    const int64_t* sorted = sortPart(a, scratch.data(), n, bits, keyOf, counts);
    if (sorted != a) std::copy(sorted, sorted + n, a);
    return;
  }
  const int digitBits = std::min(bits, kMaxDigitBits);
  const int shift = bits - digitBits;
  const size_t radix = size_t{1} << digitBits;
  const uint64_t mask = radix - 1;
  const auto digitOf = [&](int64_t x) { return static_cast<size_t>((keyOf(x) >> shift) & mask); };
  std::vector<size_t> start(radix + 1, 0);
  for (size_t i = 0; i < n; ++i) ++start[digitOf(a[i]) + 1];
  for (size_t i = 0; i < radix; ++i) start[i + 1] += start[i];
  std::vector<size_t> next(start.begin(), start.end() - 1);
  for (size_t d = 0; d < radix; ++d) {
    while (next[d] < start[d + 1]) {
      int64_t x = a[next[d]];
      size_t k = digitOf(x);
      while (k != d) {  // carry x to its part, taking what was there
        std::swap(x, a[next[k]++]);
        k = digitOf(x);
      }
      a[next[d]++] = x;
    }
  }
  for (size_t d = 0; d < radix; ++d)
    sortValuesInPlace(a + start[d], start[d + 1] - start[d], shift, keyOf, scratch, counts);
}

}  // namespace radix_detail

/// Sorts signed 64-bit values ascending, in place (scratch memory of at most
/// an in-cache part, whatever the input's size).
inline void radixSort(std::vector<int64_t>& v) {
  const size_t n = v.size();
  if (n < 2) return;
  if (n < 1024) {
    std::sort(v.begin(), v.end());
    return;
  }
  const int64_t least = *std::min_element(v.begin(), v.end());
  // x - least fits in 64 unsigned bits for any two int64 values.
  auto keyOf = [least](int64_t x) { return static_cast<uint64_t>(x) - static_cast<uint64_t>(least); };
  uint64_t widest = 0;
  for (int64_t x : v) widest |= keyOf(x);
  std::vector<int64_t> scratch;
  std::vector<size_t> counts;
  radix_detail::sortValuesInPlace(v.data(), n, std::max(1, static_cast<int>(std::bit_width(widest))), keyOf, scratch,
                                  counts);
}

}  // namespace core
