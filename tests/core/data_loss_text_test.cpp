// The data-loss sentence of `info`, the GUI's run list and reports: ranges
// whose count the tracer did not give are said to be of unknown count, never
// added up as 0.
#include <gtest/gtest.h>

#include "core/data_loss_text.h"
#include "support/trace_builder.h"

namespace {

using testing_support::TraceBuilder;

// Two CPUs, each running t1/t2 with losses between their events.
std::shared_ptr<core::TraceModel> withLosses(std::initializer_list<int64_t> counts) {
  TraceBuilder t;
  t.sw(10, 0, 0, "R", 1).sw(10, 1, 0, "R", 2);
  int64_t ts = 100;
  int cpu = 0;
  for (int64_t n : counts) {
    t.loss(cpu, ts, n).other(ts, cpu, cpu + 1);
    ts += 100;
    cpu = 1 - cpu;
  }
  return t.build();
}

TEST(DataLossText, NoLoss) {
  auto m = withLosses({});
  EXPECT_EQ(m->lostRangesOfUnknownCount(), 0u);
  EXPECT_EQ(core::describeLostEvents(*m), "none");
}

TEST(DataLossText, EveryRangeCounted) {
  auto m = withLosses({1000, 234, 0});
  EXPECT_EQ(m->lostRangesOfUnknownCount(), 0u);
  EXPECT_EQ(core::describeLostEvents(*m), "1234 in 3 ranges");
  EXPECT_EQ(core::describeLostEvents(*withLosses({5})), "5 in 1 range");
}

TEST(DataLossText, SomeRangesOfUnknownCountAreSaidSo) {
  // 1234 counted in one range; the other two say nothing: 1234 is a lower bound.
  auto m = withLosses({-1, 1234, -1});
  EXPECT_EQ(m->lostEvents(), 1234);
  EXPECT_EQ(m->lostRangesOfUnknownCount(), 2u);
  EXPECT_EQ(core::describeLostEvents(*m), "1234 in 3 ranges, 2 of them of unknown count");
}

TEST(DataLossText, OnlyRangesOfUnknownCountIsNoNumber) {
  EXPECT_EQ(core::describeLostEvents(*withLosses({-1})), "unknown number in 1 range");
  EXPECT_EQ(core::describeLostEvents(*withLosses({-1, -1})), "unknown number in 2 ranges");
}

}  // namespace
