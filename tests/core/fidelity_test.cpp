// core::analysis::computeFidelity on hand-made statistics: every bound at,
// just inside and just outside its edge, the special cases of a recorded zero
// and of missing samples, and the task matching by tid.
#include <gtest/gtest.h>

#include "core/analysis/fidelity.h"

using core::analysis::computeFidelity;
using core::analysis::Distribution;
using core::analysis::Fidelity;
using core::analysis::RunStats;
using core::analysis::TaskStats;
using core::analysis::Verdict;

namespace {

TaskStats task(int32_t tid, double share, uint64_t vol = 0, uint64_t invol = 0) {
  TaskStats t;
  t.tid = tid;
  t.comm = "t" + std::to_string(tid);
  t.cpuShare = share;
  t.runtimeNs = static_cast<int64_t>(share * 1e9);
  t.switchesVoluntary = vol;
  t.switchesInvoluntary = invol;
  return t;
}

Verdict verdictOf(const Fidelity& f, const char* key) {
  const auto* m = f.metric(key);
  EXPECT_NE(m, nullptr) << key;
  return m ? m->verdict : Verdict::Info;
}

}  // namespace

TEST(Fidelity, CountsAgainstTheirBounds) {
  RunStats rec, rep;
  rec.switchesVoluntary = 100, rep.switchesVoluntary = 115;      // +15%: on the edge, inside
  rec.switchesInvoluntary = 10, rep.switchesInvoluntary = 14;    // +40%: outside 30%
  rec.migrations = 4, rep.migrations = 8;                        // x2: on the edge, inside
  const Fidelity f = computeFidelity(rec, rep, {1000, 1101, true, 5, 5});
  EXPECT_EQ(verdictOf(f, "switches_voluntary"), Verdict::Pass);
  EXPECT_DOUBLE_EQ(*f.metric("switches_voluntary")->ratio, 1.15);
  EXPECT_EQ(verdictOf(f, "switches_involuntary"), Verdict::Fail);
  EXPECT_EQ(verdictOf(f, "migrations"), Verdict::Pass);
  EXPECT_EQ(verdictOf(f, "makespan_ns"), Verdict::Fail);  // 1101 / 1000: 10.1%
  EXPECT_EQ(verdictOf(f, "cpu_work_ns"), Verdict::Pass);
  EXPECT_EQ(f.overall(), Verdict::Fail);

  rep.migrations = 1;  // 4 / 1 = x4
  EXPECT_EQ(verdictOf(computeFidelity(rec, rep, {1000, 1000, true, 5, 5}), "migrations"), Verdict::Fail);
}

TEST(Fidelity, ARecordedZeroMustBeReplayedAsZero) {
  RunStats rec, rep;
  rec.switchesInvoluntary = 0, rep.switchesInvoluntary = 2;
  rec.migrations = 0, rep.migrations = 0;
  const Fidelity f = computeFidelity(rec, rep, {-1, 0, false, 5, 4});
  EXPECT_EQ(verdictOf(f, "switches_involuntary"), Verdict::Fail);
  EXPECT_FALSE(f.metric("switches_involuntary")->ratio.has_value());
  EXPECT_EQ(verdictOf(f, "migrations"), Verdict::Pass);
  EXPECT_EQ(f.metric("makespan_ns"), nullptr);  // not recorded: no row
  EXPECT_EQ(verdictOf(f, "cpu_work_ns"), Verdict::Fail);
}

TEST(Fidelity, LatencyPercentilesAndDistributions) {
  RunStats rec, rep;
  // p50 10 us recorded: 30% is 3 us, so 12.5 us passes; 2 us recorded: 30% is
  // 0.6 us, but the 2 us floor lets 3.9 us pass and 4.1 us fail.
  rec.wakeupLatency = Distribution::of({8000, 10000, 12000});
  rep.wakeupLatency = Distribution::of({9000, 12500, 20000});
  rec.schedDelay = Distribution::of({1000, 2000, 3000});
  rep.schedDelay = Distribution::of({1000, 4100, 9000});
  Fidelity f = computeFidelity(rec, rep, {-1, 0, true, 0, 0});
  EXPECT_EQ(verdictOf(f, "wakeup_latency_p50_ns"), Verdict::Pass);
  EXPECT_EQ(verdictOf(f, "sched_delay_p50_ns"), Verdict::Fail);
  rep.schedDelay = Distribution::of({1000, 3900, 9000});
  f = computeFidelity(rec, rep, {-1, 0, true, 0, 0});
  EXPECT_EQ(verdictOf(f, "sched_delay_p50_ns"), Verdict::Pass);
  // p99 of three samples is the largest: 20000 / 12000 is within x2, 9000 / 3000 is not.
  EXPECT_EQ(verdictOf(f, "wakeup_latency_p99_ns"), Verdict::Pass);
  EXPECT_EQ(verdictOf(f, "sched_delay_p99_ns"), Verdict::Fail);
  // KS: the empirical CDFs of {8,10,12} and {9,12.5,20} are 1 and 1/3 on
  // [12, 12.5): the largest gap, 2/3; over 0.25.
  EXPECT_NEAR(f.metric("wakeup_latency_ks")->measure, 2.0 / 3, 1e-12);
  EXPECT_EQ(verdictOf(f, "wakeup_latency_ks"), Verdict::Fail);
  rep.wakeupLatency = rec.wakeupLatency;
  f = computeFidelity(rec, rep, {-1, 0, true, 0, 0});
  EXPECT_EQ(f.metric("wakeup_latency_ks")->measure, 0);
  // Neither run has a sample: shown, not judged.
  rec.wakeupLatency = rep.wakeupLatency = Distribution();
  f = computeFidelity(rec, rep, {-1, 0, true, 0, 0});
  EXPECT_EQ(verdictOf(f, "wakeup_latency_p50_ns"), Verdict::Info);
  EXPECT_EQ(verdictOf(f, "wakeup_latency_ks"), Verdict::Info);
}

TEST(Fidelity, TasksMatchedByTidInOrderAndJudgedByShare) {
  RunStats rec, rep;
  rec.tasks = {task(10, 0.50), task(20, 0.25), task(10, 0.10), task(30, 0.05)};
  // tid 10 twice (a reused tid): matched in order; 20 moves 2.5 points; 30 never ran in the replay.
  rep.tasks = {task(10, 0.51), task(20, 0.275), task(10, 0.10)};
  const Fidelity f = computeFidelity(rec, rep, {-1, 0, true, 0, 0});
  ASSERT_EQ(f.tasks.size(), 4u);
  EXPECT_EQ(f.tasks[0].tid, 30);  // 5 points: the largest difference first
  EXPECT_NEAR(f.tasks[0].shareDiffPp(), -5.0, 1e-9);
  EXPECT_EQ(f.tasks[0].verdict, Verdict::Fail);
  EXPECT_EQ(f.tasks[1].tid, 20);
  EXPECT_EQ(f.tasks[1].verdict, Verdict::Fail);
  EXPECT_EQ(f.tasks[2].tid, 10);
  EXPECT_NEAR(f.tasks[2].shareDiffPp(), 1.0, 1e-9);
  EXPECT_EQ(f.tasks[2].verdict, Verdict::Pass);
  EXPECT_EQ(f.tasks[3].shareDiffPp(), 0);
  const auto* share = f.metric("task_cpu_share_pp");
  EXPECT_NEAR(share->measure, 5.0, 1e-9);
  EXPECT_EQ(share->verdict, Verdict::Fail);
  EXPECT_NE(share->label.find("2 of 4 tasks outside"), std::string::npos) << share->label;
}
