// Statistics worked out by hand on tiny schedules.
#include <gtest/gtest.h>

#include <cmath>

#include "core/analysis/stats.h"
#include "support/trace_builder.h"

using core::analysis::computeStats;
using testing_support::TraceBuilder;

namespace {
const core::analysis::TaskStats& task(const core::analysis::RunStats& s, int tid) {
  for (const auto& t : s.tasks)
    if (t.tid == tid) return t;
  throw std::runtime_error("no task " + std::to_string(tid));
}

// One CPU. A(1) runs from 0; wakes B(2) at 500; is preempted by B at 1000; B sleeps at 1500; A runs to 2000.
std::shared_ptr<core::TraceModel> preemption() {
  TraceBuilder t;
  t.other(0, 0, 1).waking(500, 0, 1, 2, 0).sw(1000, 0, 1, "R+", 2).sw(1500, 0, 2, "S", 1).other(2000, 0, 1);
  return t.build();
}
}  // namespace

TEST(Stats, TimesSwitchesAndLatencies) {
  auto m = preemption();
  const auto s = computeStats(*m);
  EXPECT_EQ(s.range.from, 0);
  EXPECT_EQ(s.range.to, 2001);
  const auto& a = task(s, 1);
  const auto& b = task(s, 2);
  EXPECT_EQ(a.runtimeNs, 1500);
  EXPECT_EQ(a.waitNs, 500);
  EXPECT_EQ(a.switchesInvoluntary, 1u);
  EXPECT_EQ(a.switchesVoluntary, 0u);
  EXPECT_EQ(a.schedDelay.count, 1u);
  EXPECT_EQ(a.schedDelay.max, 500);
  EXPECT_EQ(a.wakeupLatency.count, 0u);  // preempted, not woken
  EXPECT_EQ(b.runtimeNs, 500);
  EXPECT_EQ(b.waitNs, 500);
  EXPECT_EQ(b.sleepNs, 500);
  EXPECT_EQ(b.switchesVoluntary, 1u);
  EXPECT_EQ(b.wakeups, 1u);
  EXPECT_EQ(b.wakeupLatency.count, 1u);
  EXPECT_EQ(b.wakeupLatency.p50, 500);
  EXPECT_DOUBLE_EQ(a.cpuShare, 1500.0 / 2001.0);
  ASSERT_EQ(s.cpus.size(), 1u);
  EXPECT_EQ(s.cpus[0].busyNs, 2000);
  EXPECT_DOUBLE_EQ(s.cpus[0].utilisation, 2000.0 / 2001.0);
}

TEST(Stats, FairnessByHand) {
  auto m = preemption();
  const auto s = computeStats(*m);
  // x_A = 1500/(1024*2000), x_B = 500/(1024*1000): J = (0.75+0.5)^2 / (2*(0.5625+0.25)).
  EXPECT_NEAR(s.fairness.jain, 1.5625 / 1.625, 1e-9);
  EXPECT_EQ(s.fairness.competingTasks, 2u);
  // GPS on one CPU: A alone until 500; both share at 1/2 until 1500; A alone after.
  // A: at 1000 ideal 750 (500 + 250), got 1000 -> lag -250; at 1500 ideal 1000, got 1000 -> 0.
  // B: at 1000 ideal 250, got 0 -> +250; at 1500 ideal 500, got 500 -> 0.
  EXPECT_EQ(s.fairness.gpsLagMaxNs, 250);
  EXPECT_EQ(s.fairness.gpsLagMeanNs, 250);
}

TEST(Stats, RangeClipsIntervals) {
  auto m = preemption();
  const auto s = computeStats(*m, {750, 1250});
  const auto& a = task(s, 1);
  const auto& b = task(s, 2);
  EXPECT_EQ(a.runtimeNs, 250);
  EXPECT_EQ(a.waitNs, 250);
  EXPECT_EQ(b.runtimeNs, 250);
  EXPECT_EQ(b.waitNs, 250);
  // B's wakeup at 500 began before the range: its latency belongs to the earlier range.
  EXPECT_EQ(b.wakeupLatency.count, 0u);
  EXPECT_EQ(a.switchesInvoluntary, 1u);
}

TEST(Stats, WeightedShareOfTwoHogs) {
  // Two CPU hogs on one CPU, nice 0 (prio 120) and nice 5 (prio 125), switched in
  // CFS-like proportions: 1024/(1024+335) of every 1359 ns to the nice-0 task.
  TraceBuilder t;
  int64_t ts = 0;
  t.other(0, 0, 1);
  for (int i = 0; i < 100; ++i) {
    t.sw(ts += 1024, 0, 1, "R+", 2, 120, 125);
    t.sw(ts += 335, 0, 2, "R+", 1, 125, 120);
  }
  auto m = t.build();
  const auto s = computeStats(*m);
  const auto& a = task(s, 1);
  const auto& b = task(s, 2);
  EXPECT_NEAR(static_cast<double>(a.runtimeNs) / static_cast<double>(a.runtimeNs + b.runtimeNs), 1024.0 / 1359.0,
              1e-3);
  // Weight-fair service: Jain's index over weight-normalised rates is ~1.
  EXPECT_GT(s.fairness.jain, 0.999);
  // GPS lag stays within one switching period.
  EXPECT_LE(s.fairness.gpsLagMaxNs, 1359);
}

TEST(Stats, UnfairShareShowsInJain) {
  // Two equal-weight hogs, but one gets 90% of the CPU.
  TraceBuilder t;
  int64_t ts = 0;
  t.other(0, 0, 1);
  for (int i = 0; i < 100; ++i) {
    t.sw(ts += 900, 0, 1, "R+", 2);
    t.sw(ts += 100, 0, 2, "R+", 1);
  }
  auto m = t.build();
  const auto s = computeStats(*m);
  // x = 0.9, 0.1 (per unit weight): J = 1 / (2 * (0.81 + 0.01)).
  EXPECT_NEAR(s.fairness.jain, 1.0 / (2 * 0.82), 1e-3);
  // Over 100 periods task 2 falls behind by 0.4 of each 1000 ns period.
  EXPECT_NEAR(static_cast<double>(s.fairness.gpsLagMaxNs), 40000.0, 600.0);
}

TEST(Stats, DistributionPercentilesAreNearestRank) {
  const auto d = core::analysis::Distribution::of({5, 1, 4, 2, 3, 10, 9, 8, 7, 6});
  EXPECT_EQ(d.count, 10u);
  EXPECT_EQ(d.p50, 5);
  EXPECT_EQ(d.p90, 9);
  EXPECT_EQ(d.p99, 10);
  EXPECT_EQ(d.max, 10);
  EXPECT_DOUBLE_EQ(d.mean, 5.5);
}

TEST(Stats, WeightsMatchTheKernelTable) {
  EXPECT_EQ(core::analysis::weightOfPrio(120), 1024);
  EXPECT_EQ(core::analysis::weightOfPrio(125), 335);
  EXPECT_EQ(core::analysis::weightOfPrio(100), 88761);
  EXPECT_EQ(core::analysis::weightOfPrio(139), 15);
}

TEST(Stats, ProcessesAggregateThreads) {
  core::SchedBuilder b;
  b.onTaskInfo(11, 10, "worker");
  b.onTaskInfo(10, 10, "server");
  core::SwitchArgs a;
  a.prevTid = 0;
  a.nextTid = 10;
  a.nextComm = "server";
  b.onSwitch({0, 0, 0, 0}, a);
  a.prevTid = 10;
  a.prevComm = "server";
  a.prevState = core::TaskState::Sleeping;
  a.nextTid = 11;
  a.nextComm = "worker";
  b.onSwitch({100, 0, 10, 0}, a);
  b.onOtherEvent({300, 0, 11, 0});
  auto m = b.finalize();
  const auto s = computeStats(*m);
  const auto procs = core::analysis::aggregateByProcess(s);
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs[0].tgid, 10);
  EXPECT_EQ(procs[0].name, "server");
  EXPECT_EQ(procs[0].threads, 2u);
  EXPECT_EQ(procs[0].total.runtimeNs, 300);
}

// One core of four threads. CPU 0 runs t1 and CPU 1 runs t2 over [0, 10 ms);
// CPU 2 is forced idle over the whole span, CPU 3 over [5, 10 ms).
// core_forceidle_sum as mainline charges it: [0, 5): 1 forced / 2 running ->
// 2.5 ms each; [5, 10): 2 / 2 -> 5 ms each; 7.5 ms per task.
TEST(Stats, ForceidleSumScalesByForcedOverRunningSiblings) {
  TraceBuilder b;
  b.builder().setTopology(core::Topology::uniform(1, 4, "test"));
  auto toIdle = [&](int64_t ts, int cpu, bool forced) {
    core::SwitchArgs a;
    a.prevTid = 0, a.prevComm = "swapper", a.prevState = core::TaskState::RunnablePreempted;
    a.nextTid = 0, a.nextComm = "swapper", a.forcedIdle = forced;
    b.builder().onSwitch({ts, cpu, 0, 0}, a);
  };
  b.sw(0, 0, 0, "R", 1).sw(0, 1, 0, "R", 2);
  toIdle(0, 2, true);
  toIdle(0, 3, false);
  b.builder().onIdleKind({5'000'000, 3, 0, 0}, true);
  b.other(10'000'000, 0, 1);
  const auto s = computeStats(*b.build());
  EXPECT_EQ(task(s, 1).forceidleSumNs, 7'500'000);
  EXPECT_EQ(task(s, 2).forceidleSumNs, 7'500'000);
  ASSERT_EQ(s.cores.size(), 1u);
  EXPECT_EQ(s.cores[0].forcedIdleNs, 15'000'000);
  EXPECT_EQ(s.cores[0].anyForcedIdleNs, 10'000'000);
  EXPECT_EQ(s.cpus[3].forcedIdleNs, 5'000'000);
  EXPECT_EQ(s.cpus[3].idleNs, 5'000'000);
}
