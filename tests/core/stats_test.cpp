// Statistics worked out by hand on tiny schedules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

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
  // The whole trace is [0, 2001), the smallest half-open range holding the last
  // event at 2000; it covers [0, 2000], 2000 ns.
  EXPECT_EQ(s.range.from, 0);
  EXPECT_EQ(s.range.to, 2001);
  EXPECT_EQ(s.coveredNs, 2000);
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
  // A ran [0, 1000) and [1500, 2000) of the 2000 ns; the CPU was never idle.
  EXPECT_DOUBLE_EQ(a.cpuShare, 1500.0 / 2000.0);
  ASSERT_EQ(s.cpus.size(), 1u);
  EXPECT_EQ(s.cpus[0].busyNs, 2000);
  EXPECT_DOUBLE_EQ(s.cpus[0].utilisation, 1.0);
  // Switches at 1000 and 1500; A's slice at 0 starts with the CPU's record, not at a switch.
  EXPECT_EQ(s.cpus[0].switches, 2u);
}

TEST(Stats, FairnessByHand) {
  auto m = preemption();
  const auto s = computeStats(*m);
  // Demand: A wants the CPU throughout (still running at the end: unbounded); B
  // wants it from its wakeup at 500 and took 500 ns before sleeping.
  // Ideal on one CPU: A alone on [0, 500); A and B at 1/2 each from 500 until B's
  // 500 ns are served at 1500; A alone after. S*_A = 500 + 500 + 500 = 1500,
  // S*_B = 500; they got S_A = 1500, S_B = 500: x = 1, 1 and J = 1.
  EXPECT_DOUBLE_EQ(s.fairness.jain, 1.0);
  EXPECT_EQ(s.fairness.competingTasks, 2u);  // both waited
  EXPECT_EQ(task(s, 1).idealNs, 1500);
  EXPECT_EQ(task(s, 2).idealNs, 500);
  // Lag: A at 1000 ideal 750, got 1000 -> -250; at 1500 ideal 1000, got 1000 -> 0.
  // B at 1000 ideal 250, got 0 -> +250; at 1500 ideal 500, got 500 -> 0.
  EXPECT_EQ(s.fairness.gpsLagMaxNs, 250);
  EXPECT_EQ(s.fairness.gpsLagMeanNs, 250);
}

TEST(Stats, TheHookSeesEverythingButTheFairShare) {
  auto m = preemption();
  bool called = false;
  const auto s = computeStats(*m, core::analysis::wholeTrace(*m), [&](const core::analysis::RunStats& early) {
    called = true;
    // The figures FairnessByHand and TimesSwitchesAndLatencies work out by hand.
    EXPECT_EQ(early.switchesVoluntary, 1u);
    EXPECT_EQ(early.switchesInvoluntary, 1u);
    EXPECT_EQ(early.wakeupLatency.count, 1u);
    EXPECT_EQ(early.wakeupLatency.p50, 500);
    EXPECT_EQ(early.schedDelay.count, 2u);
    EXPECT_EQ(task(early, 2).wakeupLatency.p50, 500);
    EXPECT_DOUBLE_EQ(task(early, 1).cpuShare, 0.75);
    // Not yet: the sweep's.
    EXPECT_EQ(early.fairness.competingTasks, 0u);
    EXPECT_EQ(task(early, 1).idealNs, 0);
  });
  EXPECT_TRUE(called);
  EXPECT_EQ(s.fairness.competingTasks, 2u);
  EXPECT_EQ(task(s, 1).idealNs, 1500);
}

TEST(Stats, AFairShareStartedEarlierGivesTheSameFairness) {
  auto m = preemption();
  const auto range = core::analysis::wholeTrace(*m);
  const auto s = computeStats(*m, range, core::analysis::startFairShare(*m, range));
  // FairnessByHand's figures.
  EXPECT_DOUBLE_EQ(s.fairness.jain, 1.0);
  EXPECT_EQ(s.fairness.competingTasks, 2u);
  EXPECT_EQ(task(s, 1).idealNs, 1500);
  EXPECT_EQ(s.fairness.gpsLagMaxNs, 250);
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

// Range edges are one rule, [from, to). preemption() has switches at 1000 and
// 1500 (its slice at 0 begins with the CPU's record, not at a switch).
TEST(Stats, SwitchAtRangeStartCountsPerCpuAndPerTask) {
  auto m = preemption();
  const auto s = computeStats(*m, {1000, 2000});
  EXPECT_EQ(s.cpus[0].switches, 2u);              // at 1000 and 1500
  EXPECT_EQ(task(s, 1).switchesInvoluntary, 1u);  // A preempted at 1000
  EXPECT_EQ(task(s, 2).switchesVoluntary, 1u);    // B slept at 1500
}

TEST(Stats, SwitchAtRangeEndCountsNowhere) {
  auto m = preemption();
  const auto s = computeStats(*m, {0, 1000});
  EXPECT_EQ(s.cpus[0].switches, 0u);
  EXPECT_EQ(task(s, 1).switchesInvoluntary, 0u);
  // B's wakeup at 500 is inside: its wakeup, its wait [500, 1000) and its latency
  // sample (which belongs to the range in which the wait started).
  EXPECT_EQ(task(s, 2).wakeups, 1u);
  EXPECT_EQ(task(s, 2).waitNs, 500);
  EXPECT_EQ(task(s, 2).wakeupLatency.count, 1u);
  const auto after = computeStats(*m, {500, 2001});
  EXPECT_EQ(task(after, 2).wakeupLatency.count, 1u);  // the wait starts at 500: inside
  const auto later = computeStats(*m, {501, 2001});
  EXPECT_EQ(task(later, 2).wakeupLatency.count, 0u);
  EXPECT_EQ(task(later, 2).wakeups, 0u);
}

// Because every edge is half-open, splitting a range anywhere partitions it:
// each count and time of the whole is the sum of the two parts.
TEST(Stats, AdjacentRangesAddUpToTheWhole) {
  TraceBuilder t;
  t.other(0, 0, 1).waking(500, 0, 1, 2, 0).sw(1000, 0, 1, "R+", 2).migrate(1200, 0, 1, 0, 1);
  t.sw(1500, 0, 2, "S", 1).sw(2000, 0, 1, "S", 0);
  auto m = t.build();
  const auto whole = computeStats(*m);
  for (int64_t x : {1, 499, 500, 501, 1000, 1200, 1500, 1999, 2000}) {
    const auto a = computeStats(*m, {whole.range.from, x});
    const auto b = computeStats(*m, {x, whole.range.to});
    EXPECT_EQ(a.coveredNs + b.coveredNs, whole.coveredNs) << x;
    EXPECT_EQ(a.cpus[0].switches + b.cpus[0].switches, whole.cpus[0].switches) << x;
    EXPECT_EQ(a.cpus[0].busyNs + b.cpus[0].busyNs, whole.cpus[0].busyNs) << x;
    EXPECT_EQ(a.migrations + b.migrations, whole.migrations) << x;
    for (int tid : {1, 2}) {
      const auto& w = task(whole, tid);
      auto sum = [&](auto field) {
        auto part = [&](const core::analysis::RunStats& r) -> uint64_t {
          for (const auto& k : r.tasks)
            if (k.tid == tid) return static_cast<uint64_t>(field(k));
          return 0;  // did not exist in that part
        };
        return part(a) + part(b);
      };
      EXPECT_EQ(sum([](const auto& k) { return k.runtimeNs; }), static_cast<uint64_t>(w.runtimeNs)) << x;
      EXPECT_EQ(sum([](const auto& k) { return k.waitNs; }), static_cast<uint64_t>(w.waitNs)) << x;
      EXPECT_EQ(sum([](const auto& k) { return k.sleepNs; }), static_cast<uint64_t>(w.sleepNs)) << x;
      EXPECT_EQ(sum([](const auto& k) { return k.switchesVoluntary + k.switchesInvoluntary; }),
                w.switchesVoluntary + w.switchesInvoluntary) << x;
      EXPECT_EQ(sum([](const auto& k) { return k.wakeups; }), w.wakeups) << x;
      EXPECT_EQ(sum([](const auto& k) { return k.schedDelay.count; }), w.schedDelay.count) << x;
    }
  }
  // The whole trace holds every event, the last one (A sleeping at 2000) too, and
  // its length is the span: a CPU busy throughout is 100% utilised.
  EXPECT_EQ(whole.range.to, 2001);
  EXPECT_EQ(task(whole, 1).switchesVoluntary, 1u);
  EXPECT_EQ(whole.cpus[0].switches, 3u);
  // Moved to CPU 1 at 1200, A runs on CPU 0 at 1500 again: a second move, with
  // no sched_migrate_task for it, inferred at that switch-in.
  EXPECT_EQ(whole.migrations, 2u);
  EXPECT_EQ(whole.migrationsInferred, 1u);
  EXPECT_EQ(task(whole, 1).migrationsInferred, 1u);
  EXPECT_DOUBLE_EQ(whole.cpus[0].utilisation, 1.0);
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
  // Range [0, 100000). Task 2 is first seen at its switch-in at 900, so the ideal
  // gives task 1 the CPU alone on [0, 900) and half of it after:
  // S*_1 = 900 + 99100 / 2 = 50450, S*_2 = 49550; S_1 = 100 * 900, S_2 = 100 * 100.
  const double x1 = 90000.0 / 50450.0, x2 = 10000.0 / 49550.0;
  EXPECT_NEAR(s.fairness.jain, (x1 + x2) * (x1 + x2) / (2 * (x1 * x1 + x2 * x2)), 1e-9);
  // Task 2 falls behind by 0.4 of each 1000 ns period: lag 400 k just before its
  // k-th switch-in at 1000 k + 900, largest at k = 99 (t = 99900): 39600. Task 1
  // is ahead by as much at the same instants.
  EXPECT_EQ(s.fairness.gpsLagMaxNs, 39600);
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

// The run's distribution is made from the tasks' samples: the same as sorting
// them all, whatever the parts (empty ones, one value repeated across parts,
// long runs of one part, negative values).
TEST(Stats, DistributionOfPartsIsTheSortOfTheUnion) {
  std::mt19937_64 rng(23);
  for (int shape = 0; shape < 3; ++shape) {
    std::vector<std::vector<int64_t>> parts(shape == 0 ? 1 : 200);
    std::vector<int64_t> all;
    for (auto& part : parts) {
      const size_t n = rng() % 7 == 0 ? 0 : rng() % (shape == 2 ? 5000 : 40);
      for (size_t i = 0; i < n; ++i) {
        const int64_t v = shape == 1 ? static_cast<int64_t>(rng() % 5) : static_cast<int64_t>(rng() % 2'000'000) - 1000;
        part.push_back(v);
        all.push_back(v);
      }
      std::sort(part.begin(), part.end());
    }
    std::vector<const std::vector<int64_t>*> pointers;
    for (const auto& part : parts) pointers.push_back(&part);
    const auto merged = core::analysis::Distribution::ofParts(pointers);
    const auto sorted = core::analysis::Distribution::of(all);
    EXPECT_EQ(merged.sorted, sorted.sorted) << "shape " << shape;
    EXPECT_EQ(merged.count, sorted.count);
    EXPECT_EQ(merged.p50, sorted.p50);
    EXPECT_EQ(merged.p99, sorted.p99);
    EXPECT_DOUBLE_EQ(merged.mean, sorted.mean);
  }
  EXPECT_EQ(core::analysis::Distribution::ofParts({}).count, 0u);
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
