// Diffs of hand-built runs: matching across runs and the KS distance.
#include <gtest/gtest.h>

#include "core/analysis/diff.h"
#include "support/trace_builder.h"

using core::analysis::diffRuns;
using core::analysis::ksDistance;
using testing_support::TraceBuilder;

TEST(Diff, KsDistanceByHand) {
  EXPECT_DOUBLE_EQ(ksDistance({1, 2, 3, 4}, {1, 2, 3, 4}), 0.0);
  EXPECT_DOUBLE_EQ(ksDistance({1, 2}, {3, 4}), 1.0);
  // F_a jumps to 0.5 at 1; F_b is 0 until 2: gap 0.5, then both 1 at 4... at 2: F_a=0.5, F_b=0.5.
  EXPECT_DOUBLE_EQ(ksDistance({1, 4}, {2, 4}), 0.5);
  EXPECT_DOUBLE_EQ(ksDistance({}, {1}), 0.0);
}

namespace {
// Task "t<tid>" names: the same workload under other tids in the second run.
std::shared_ptr<core::TraceModel> run(int tidA, int tidB, int64_t aSlice, int64_t bSlice, bool preempt) {
  TraceBuilder t;
  int64_t ts = 0;
  t.other(0, 0, tidA);
  for (int i = 0; i < 10; ++i) {
    t.sw(ts += aSlice, 0, tidA, preempt ? "R+" : "S", tidB);
    if (!preempt) t.waking(ts + bSlice / 2, 0, tidB, tidA, 0);
    t.sw(ts += bSlice, 0, tidB, "R+", tidA);
  }
  return t.build();
}
}  // namespace

TEST(Diff, MatchesTasksByNameAcrossRuns) {
  // Tids differ between runs, so comms are made equal through a rename.
  core::SchedBuilder ba, bb;
  auto build = [](core::SchedBuilder& b, int hog, int io, bool preempt) {
    core::SwitchArgs s;
    int64_t ts = 0;
    for (int i = 0; i < 10; ++i) {
      s.prevTid = hog;
      s.prevComm = "hog";
      s.prevState = preempt ? core::TaskState::RunnablePreempted : core::TaskState::Sleeping;
      s.nextTid = io;
      s.nextComm = "io";
      b.onSwitch({ts += 1000, 0, hog, 0}, s);
      s.prevTid = io;
      s.prevComm = "io";
      s.prevState = core::TaskState::RunnablePreempted;
      s.nextTid = hog;
      s.nextComm = "hog";
      b.onSwitch({ts += 1000, 0, io, 0}, s);
    }
  };
  build(ba, 100, 101, false);
  build(bb, 200, 201, true);
  auto a = ba.finalize();
  auto b = bb.finalize();
  const auto d = diffRuns(*a, core::analysis::computeStats(*a), "A", *b, core::analysis::computeStats(*b), "B");
  ASSERT_EQ(d.tasks.size(), 2u);
  for (const auto& t : d.tasks) {
    ASSERT_TRUE(t.a && t.b) << t.comm;
    EXPECT_EQ(t.tasksA, 1u);
    EXPECT_EQ(t.tasksB, 1u);
  }
  const auto hog = std::find_if(d.tasks.begin(), d.tasks.end(), [](const auto& t) { return t.comm == "hog"; });
  ASSERT_NE(hog, d.tasks.end());
  // The question of docs/models.md §6.5: voluntary sleeps in A became preemptions in B.
  EXPECT_EQ(hog->a->switchesVoluntary, 10u);
  EXPECT_EQ(hog->b->switchesVoluntary, 0u);
  EXPECT_EQ(hog->b->switchesInvoluntary, 10u);
  const auto frac = std::find_if(d.summary.begin(), d.summary.end(),
                                 [](const auto& m) { return m.name == "involuntary_fraction"; });
  ASSERT_NE(frac, d.summary.end());
  EXPECT_DOUBLE_EQ(frac->a, 10.0 / 20.0);
  EXPECT_DOUBLE_EQ(frac->b, 1.0);
}

TEST(Diff, UnmatchedTasksHaveOneSide) {
  auto a = run(1, 2, 100, 100, true);
  auto b = run(1, 3, 100, 100, true);
  const auto d = diffRuns(*a, core::analysis::computeStats(*a), "A", *b, core::analysis::computeStats(*b), "B");
  ASSERT_EQ(d.tasks.size(), 3u);
  size_t onlyA = 0, onlyB = 0;
  for (const auto& t : d.tasks) {
    onlyA += t.a && !t.b;
    onlyB += !t.a && t.b;
  }
  EXPECT_EQ(onlyA, 1u);
  EXPECT_EQ(onlyB, 1u);
}

TEST(Diff, SignificanceRuleSharedByTheDiffTabAndReports) {
  using core::analysis::MetricKind;
  // 20% of A and the floor, both needed: 100 -> 125 ms over a 1 s range is; 100 -> 110 ms is not;
  // 1 -> 2 ms doubles but stays under max(1 ms, 1% of 10 s).
  EXPECT_TRUE(core::analysis::isSignificant(MetricKind::Time, 100e6, 125e6, 1'000'000'000));
  EXPECT_FALSE(core::analysis::isSignificant(MetricKind::Time, 100e6, 110e6, 1'000'000'000));
  EXPECT_FALSE(core::analysis::isSignificant(MetricKind::Time, 1e6, 2e6, 10'000'000'000));
  EXPECT_FALSE(core::analysis::isSignificant(MetricKind::Latency, 10e3, 90e3, 1, 19, 500));  // too few wakeups
  EXPECT_TRUE(core::analysis::isSignificant(MetricKind::Latency, 10e3, 90e3, 1, 20, 500));
  // KS at the 1% level: 1.63 * sqrt(200 / 10000) = 0.2305.
  EXPECT_FALSE(core::analysis::ksSignificant(0.23, 100, 100));
  EXPECT_TRUE(core::analysis::ksSignificant(0.24, 100, 100));

  core::analysis::TaskDiff t;
  t.a = core::analysis::TaskStats();
  t.b = core::analysis::TaskStats();
  t.metrics = {{"runtime_ns", 100e6, 104e6}, {"switches_voluntary", 10, 40}};
  EXPECT_TRUE(core::analysis::taskSignificant(t, 1'000'000'000));  // the switches
  t.metrics[1].b = 15;
  EXPECT_FALSE(core::analysis::taskSignificant(t, 1'000'000'000));
  t.b.reset();  // gone in B: its runtime alone decides
  t.metrics = {{"runtime_ns", 100e6, 0}, {"switches_voluntary", 10, 0}};
  EXPECT_TRUE(core::analysis::taskSignificant(t, 1'000'000'000));
}

TEST(Diff, MeanFrequencyPerCpuWhereEitherRunKnowsIt) {
  // A: CPU 0 at 1 GHz over [0, 500) and 2 GHz over [500, 1000] -> 1500 MHz;
  // CPU 1 untraced. B: no frequencies at all (a replay without +uclamp).
  TraceBuilder ta;
  ta.sw(0, 0, 0, "R", 5).sw(0, 1, 0, "R", 6);
  ta.builder().onCpuFrequency({0, 0, 5, 0}, 0, 1'000'000);
  ta.builder().onCpuFrequency({500, 0, 5, 0}, 0, 2'000'000);
  ta.other(1000, 0, 5).other(1000, 1, 6);
  TraceBuilder tb;
  tb.sw(0, 0, 0, "R", 5).sw(0, 1, 0, "R", 6).other(1000, 0, 5).other(1000, 1, 6);
  const auto a = ta.build(), b = tb.build();
  const auto d = diffRuns(*a, core::analysis::computeStats(*a), "A", *b, core::analysis::computeStats(*b), "B");
  ASSERT_EQ(d.frequencies.size(), 1u);
  EXPECT_EQ(d.frequencies[0].name, "cpu0 mean_freq_mhz");
  EXPECT_NEAR(d.frequencies[0].a, 1500, 1e-9);
  EXPECT_EQ(d.frequencies[0].b, 0);
  const auto none = diffRuns(*b, core::analysis::computeStats(*b), "B", *b, core::analysis::computeStats(*b), "B");
  EXPECT_TRUE(none.frequencies.empty());
}
