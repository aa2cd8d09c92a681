// TimeColumn (core/time_column.h): every value reads back as written, whether
// its block stays 32-bit or has to be widened, and the column costs about half
// of an int64 vector when neighbouring rows are close in time.
#include "core/time_column.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace {

using core::TimeColumn;

std::vector<int64_t> values(const TimeColumn& c) { return std::vector<int64_t>(c.begin(), c.end()); }

TEST(TimeColumn, CloseValuesStayNarrow) {
  TimeColumn c;
  // 600 rows 1 us apart from 10 s: ten blocks (9 x 64 + 24), all within 2^31 ns of their first row.
  for (int i = 0; i < 600; ++i) c.push_back(10'000'000'000 + i * 1000);
  ASSERT_EQ(c.size(), 600u);
  EXPECT_EQ(c.wideRows(), 0u);
  EXPECT_EQ(c[0], 10'000'000'000);
  EXPECT_EQ(c[63], 10'000'063'000);
  EXPECT_EQ(c[64], 10'000'064'000);
  EXPECT_EQ(c.back(), 10'000'599'000);
  // 600 x 4 bytes of differences + 10 x 8 bytes of block bases, against 4800 as int64.
  c.shrink_to_fit();
  EXPECT_EQ(c.memoryBytes(), 600u * 4 + 10 * 8);
}

TEST(TimeColumn, AFarValueWidensOnlyItsBlock) {
  TimeColumn c;
  for (int i = 0; i < 300; ++i) c.push_back(i == 10 ? int64_t{5'000'000'000} : i);  // row 10: 5 s from row 0
  // Block 0 (rows 0..63) is wide; the others (64..299) are not.
  EXPECT_EQ(c.wideRows(), 64u);
  EXPECT_EQ(c[9], 9);
  EXPECT_EQ(c[10], 5'000'000'000);
  EXPECT_EQ(c[11], 11);
  EXPECT_EQ(c[299], 299);
  // Negative differences and the extremes of int32 stay narrow.
  TimeColumn d{1000, 1000 - 2147483648LL, 1000 + 2147483647LL};
  EXPECT_EQ(d.wideRows(), 0u);
  EXPECT_EQ(values(d), (std::vector<int64_t>{1000, 1000 - 2147483648LL, 1000 + 2147483647LL}));
  TimeColumn e{1000, 1000 + 2147483648LL};
  EXPECT_EQ(e.wideRows(), 2u);
  EXPECT_EQ(e[1], 1000 + 2147483648LL);
}

TEST(TimeColumn, SetRewritesNarrowAndWideRows) {
  TimeColumn c;
  for (int i = 0; i < 512; ++i) c.push_back(i * 10);
  c.set(3, 7);  // still narrow
  EXPECT_EQ(c[3], 7);
  EXPECT_EQ(c.wideRows(), 0u);
  c.set(300, -9'000'000'000);  // widens block 4 (rows 256..319) only
  EXPECT_EQ(c.wideRows(), 64u);
  EXPECT_EQ(c[300], -9'000'000'000);
  EXPECT_EQ(c[299], 2990);
  EXPECT_EQ(c[511], 5110);
  c.set(301, 42);  // a wide block takes any value
  EXPECT_EQ(c[301], 42);
  c.push_back(77);  // a new block after the last one starts narrow
  EXPECT_EQ(c.wideRows(), 64u);
  EXPECT_EQ(c[512], 77);
}

TEST(TimeColumn, IteratorsServeBinarySearch) {
  TimeColumn c;
  for (int i = 0; i < 1000; ++i) c.push_back(int64_t{i} * 3);
  EXPECT_EQ(std::lower_bound(c.begin(), c.end(), 300) - c.begin(), 100);
  EXPECT_EQ(std::upper_bound(c.begin(), c.end(), 300) - c.begin(), 101);
  EXPECT_EQ(std::lower_bound(c.begin() + 500, c.end(), 301) - c.begin(), 500);
  EXPECT_EQ(c.end() - c.begin(), 1000);
  EXPECT_EQ(*(c.begin() + 999), 2997);
  EXPECT_EQ(c.begin()[7], 21);
}

TEST(TimeColumn, AFirstValueOfInt64MinIsKeptExactly) {
  TimeColumn c{INT64_MIN, INT64_MIN + 5, 0};
  EXPECT_EQ(values(c), (std::vector<int64_t>{INT64_MIN, INT64_MIN + 5, 0}));
}

// Corrupt traces can hold any times: differences that overflow int64 are kept exactly too.
TEST(TimeColumn, TimesAtBothEndsOfInt64AreKeptExactly) {
  const std::vector<int64_t> wild{INT64_MIN + 1, INT64_MAX, INT64_MAX - 3, -1, INT64_MIN + 1, 7};
  TimeColumn c;
  for (int64_t v : wild) c.push_back(v);
  EXPECT_EQ(values(c), wild);
  c.set(2, INT64_MIN + 2);
  EXPECT_EQ(c[2], INT64_MIN + 2);
}

// adopt() builds the column over storage of another 32-bit form (the importer's
// per-thread distances); it must keep every value and widen the same blocks as
// push_back(). 200 rows: a block of close values, one with a 3 s jump (wide),
// one starting at INT64_MIN (wide), and a short last block.
TEST(TimeColumn, AdoptedStorageReadsBackAndWidensAsPushBackDoes) {
  std::vector<int64_t> expected;
  for (int r = 0; r < 64; ++r) expected.push_back(5'000 + r * 1'000);
  for (int r = 0; r < 64; ++r) expected.push_back(1'000'000 + (r == 40 ? 3'000'000'000 : r));
  expected.push_back(INT64_MIN);
  for (int r = 1; r < 64; ++r) expected.push_back(INT64_MIN + r);
  for (int r = 0; r < 8; ++r) expected.push_back(INT64_MAX - r);
  std::vector<int32_t> storage(expected.size());
  std::iota(storage.begin(), storage.end(), 0);  // each slot names its row
  TimeColumn adopted;
  adopted.adopt(std::move(storage), [&](int32_t row) { return expected[static_cast<size_t>(row)]; });
  TimeColumn pushed;
  for (int64_t v : expected) pushed.push_back(v);
  EXPECT_EQ(values(adopted), expected);
  EXPECT_EQ(adopted.wideRows(), 128u);  // the jump's block and INT64_MIN's
  EXPECT_EQ(adopted.wideRows(), pushed.wideRows());
  adopted.set(3, 42);
  EXPECT_EQ(adopted[3], 42);
  EXPECT_EQ(adopted[4], expected[4]);
}

}  // namespace
