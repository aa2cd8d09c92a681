// The radix sort against std::stable_sort as the oracle: the same order, ties
// kept in input order, over keys that exercise negative values, skipped
// digits and every digit position.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "core/radix_sort.h"

namespace {

TEST(RadixSort, SignedValuesMatchStdSortIncludingExtremes) {
  std::mt19937_64 rng(7);
  std::vector<int64_t> v(5000);
  for (auto& x : v) x = static_cast<int64_t>(rng());
  v[10] = std::numeric_limits<int64_t>::min();
  v[11] = std::numeric_limits<int64_t>::max();
  v[12] = 0;
  v[13] = -1;
  auto expected = v;
  std::sort(expected.begin(), expected.end());
  core::radixSort(v);
  EXPECT_EQ(v, expected);
}

TEST(RadixSort, NarrowKeysTakeFewerPasses) {
  // Durations under 65536 ns: 16-bit keys, two passes of 8 bits.
  std::mt19937_64 rng(11);
  std::vector<int64_t> v(3000);
  for (auto& x : v) x = static_cast<int64_t>(rng() % 65536);
  auto expected = v;
  std::sort(expected.begin(), expected.end());
  core::radixSort(v);
  EXPECT_EQ(v, expected);
}

TEST(RadixSort, ADigitEqualForEveryKeyIsSkipped) {
  // The low 22 bits are the same for every key: the first two passes move nothing.
  std::mt19937_64 rng(5);
  std::vector<int64_t> v(3000);
  for (auto& x : v) x = static_cast<int64_t>((rng() % 100000) << 22 | 5);
  auto expected = v;
  std::sort(expected.begin(), expected.end());
  core::radixSort(v);
  EXPECT_EQ(v, expected);
}

TEST(RadixSort, EqualKeysKeepTheirInputOrder) {
  std::mt19937_64 rng(3);
  std::vector<std::pair<uint64_t, int>> v;
  for (int i = 0; i < 4000; ++i) v.emplace_back(rng() % 50 * 1'000'003, i);  // many ties, keys above one byte
  auto expected = v;
  std::stable_sort(expected.begin(), expected.end(), [](auto& a, auto& b) { return a.first < b.first; });
  core::radixSortByKey(v, [](const auto& p) { return p.first; });
  EXPECT_EQ(v, expected);
}

TEST(RadixSort, BigInputsSplitByTheTopDigitKeepTiesInInputOrder) {
  // Above the in-cache size the sort splits by the most significant digit
  // first: trace-like times (uniform over the range) with many ties.
  std::mt19937_64 rng(13);
  std::vector<std::pair<uint64_t, int>> v;
  for (int i = 0; i < 300000; ++i) v.emplace_back(rng() % 2'000'000 * 4096, i);
  auto expected = v;
  std::stable_sort(expected.begin(), expected.end(), [](auto& a, auto& b) { return a.first < b.first; });
  core::radixSortByKey(v, [](const auto& p) { return p.first; });
  EXPECT_EQ(v, expected);
}

TEST(RadixSort, AScratchKeptAcrossSortsServesSmallerInputsAfterBiggerOnes) {
  // The fair-share sweep sorts window after window with one scratch; the sort
  // may hand its result back in the scratch's buffer, which is bigger then.
  std::mt19937_64 rng(19);
  std::vector<std::pair<uint64_t, int>> scratch;
  for (const int n : {50000, 3000, 20000}) {
    std::vector<std::pair<uint64_t, int>> v;
    for (int i = 0; i < n; ++i) v.emplace_back(rng() % 5000 * 977, i);
    auto expected = v;
    std::stable_sort(expected.begin(), expected.end(), [](auto& a, auto& b) { return a.first < b.first; });
    core::radixSortByKey(v, scratch, [](const auto& p) { return p.first; });
    EXPECT_EQ(v, expected) << n << " elements";
  }
}

TEST(RadixSort, SkewedBigInputsSplitTheCrowdedPartAgain) {
  // Latency-like durations: almost all small, a few up to 2^40, so one part of
  // the first split holds nearly everything and is split again.
  std::mt19937_64 rng(17);
  std::vector<int64_t> v(200000);
  for (auto& x : v) x = rng() % 100 == 0 ? static_cast<int64_t>(rng() % (int64_t{1} << 40)) : static_cast<int64_t>(rng() % 50000);
  auto expected = v;
  std::sort(expected.begin(), expected.end());
  core::radixSort(v);
  EXPECT_EQ(v, expected);
}

TEST(RadixSort, BigValueInputsSortInPlaceOverEveryDigitPosition) {
  // Above the in-cache size plain values are split in place, part by part:
  // full-width values, a narrow range, few distinct values and all equal.
  std::mt19937_64 rng(19);
  for (int shape = 0; shape < 4; ++shape) {
    std::vector<int64_t> v(100000);
    for (auto& x : v) {
      const uint64_t r = rng();
      x = shape == 0 ? static_cast<int64_t>(r) : shape == 1 ? static_cast<int64_t>(r % 3'000'000) - 1'500'000
                                               : shape == 2 ? static_cast<int64_t>(r % 7) * 1'000'000'007
                                                            : 42;
    }
    auto expected = v;
    std::sort(expected.begin(), expected.end());
    core::radixSort(v);
    EXPECT_EQ(v, expected) << "shape " << shape;
  }
}

TEST(RadixSort, SmallAndEmptyInputs) {
  std::vector<int64_t> empty;
  core::radixSort(empty);
  EXPECT_TRUE(empty.empty());
  std::vector<int64_t> few{5, -3, 5, 0};
  core::radixSort(few);
  EXPECT_EQ(few, (std::vector<int64_t>{-3, 0, 5, 5}));
}

}  // namespace
