// core::TidTable: a value per tid over all of pid_max, in pages made when written.
#include "core/tid_table.h"

#include <gtest/gtest.h>

namespace {

using Table = core::TidTable<uint32_t, 77>;

TEST(TidTable, UnwrittenTidsAndTidsBeyondPidMaxReadAsAbsent) {
  Table t;
  EXPECT_EQ(t.get(1), 77u);
  t.at(1) = 5;
  EXPECT_EQ(t.get(1), 5u);
  EXPECT_EQ(t.get(0), 77u);
  EXPECT_EQ(t.get(2), 77u);
  EXPECT_EQ(t.get(4095), 77u);  // the same page, never written
  EXPECT_EQ(t.get(4096), 77u);  // the next page, never made
  EXPECT_EQ(t.get(-1), 77u);
  EXPECT_EQ(t.get(1 << 22), 77u);  // PID_MAX_LIMIT: no kernel hands it out
  EXPECT_TRUE(Table::holds(0));
  EXPECT_TRUE(Table::holds((1 << 22) - 1));
  EXPECT_FALSE(Table::holds(1 << 22));
  EXPECT_FALSE(Table::holds(-1));
}

// Pages are made out of order (the highest tid first) and each tid keeps its
// own value as later pages move the earlier ones.
TEST(TidTable, TidsInPagesMadeOutOfOrderKeepTheirValues) {
  Table t;
  const int32_t tids[] = {(1 << 22) - 1, 4096, 4095, 0, 3 * 4096 + 17, 2'000'000, 4097};
  uint32_t value = 100;
  for (int32_t tid : tids) t.at(tid) = value++;
  value = 100;
  for (int32_t tid : tids) EXPECT_EQ(t.get(tid), value++) << "tid " << tid;
  EXPECT_EQ(t.get(4098), 77u);
  EXPECT_EQ(t.get((1 << 22) - 2), 77u);
  EXPECT_EQ(t.get(3 * 4096 + 16), 77u);
  // 0..4095, 4096..8191, 3*4096.., 2,000,000's and the last: 64 KiB, not a table up to 4M.
  EXPECT_EQ(t.pages(), 5u);
}

}  // namespace
