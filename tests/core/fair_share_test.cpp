// The ideal weighted-fair service (fair_share.h) and the fairness statistics
// built on it, on schedules worked out by hand, plus an independent oracle for
// the affinity-constrained allocation (brute force over CPU subsets).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/analysis/fair_share.h"
#include "core/analysis/stats.h"
#include "support/trace_builder.h"

using core::analysis::computeFairShare;
using core::analysis::computeStats;
using testing_support::TraceBuilder;

namespace {

constexpr int64_t kMs = 1'000'000;

const core::analysis::TaskStats& task(const core::analysis::RunStats& s, int tid) {
  for (const auto& t : s.tasks)
    if (t.tid == tid) return t;
  throw std::runtime_error("no task " + std::to_string(tid));
}

size_t utidOf(const core::TraceModel& m, int tid) {
  for (size_t u = 1; u < m.threads.size(); ++u)
    if (m.threads.tid[u] == tid) return u;
  throw std::runtime_error("no task " + std::to_string(tid));
}

void pin(TraceBuilder& t, int tid, std::vector<core::CpuId> cpus) {
  t.builder().setTaskPolicy(tid, core::TaskPolicy::Normal, std::move(cpus));
}

// A on CPU 0 for 10 ms; B and C alternate on CPU 1 every millisecond, all three
// runnable from 0 (woken at 0, as the recorded fixture does).
void threeHogs(TraceBuilder& t) {
  t.builder().setTopology(core::Topology::flat(2, "test"));
  t.wakeup(0, 0, 0, 1, 0).wakeup(0, 1, 0, 2, 1).wakeup(0, 1, 0, 3, 1);
  t.sw(0, 0, 0, "R", 1).sw(0, 1, 0, "R", 2);
  for (int k = 1; k <= 10; ++k) t.sw(k * kMs, 1, k % 2 ? 2 : 3, "R+", k % 2 ? 3 : 2);
}

}  // namespace

TEST(FairShare, ClassesFollowPolicyElsePrio) {
  using core::SchedClass;
  using core::TaskPolicy;
  EXPECT_EQ(core::schedClassOf(-1, TaskPolicy::Unknown), SchedClass::Deadline);
  EXPECT_EQ(core::schedClassOf(0, TaskPolicy::Unknown), SchedClass::RealTime);
  EXPECT_EQ(core::schedClassOf(99, TaskPolicy::Unknown), SchedClass::RealTime);
  EXPECT_EQ(core::schedClassOf(100, TaskPolicy::Unknown), SchedClass::Fair);
  EXPECT_EQ(core::schedClassOf(core::kPrioUnknown, TaskPolicy::Unknown), SchedClass::Fair);
  EXPECT_EQ(core::schedClassOf(120, TaskPolicy::Idle), SchedClass::Idle);
  EXPECT_EQ(core::schedClassOf(120, TaskPolicy::Deadline), SchedClass::Deadline);
  // A known fair policy outlasts an RT prio seen during a priority-inheritance boost.
  EXPECT_EQ(core::schedClassOf(49, TaskPolicy::Normal), SchedClass::Fair);
  EXPECT_EQ(core::analysis::fairWeight(120, TaskPolicy::Idle), 3);
  EXPECT_EQ(core::analysis::fairWeight(125, TaskPolicy::Unknown), 335);
}

// Three hogs free to run anywhere on two CPUs, served 10 / 5 / 5 ms of 10 ms:
// the ideal gives each 2/3 of a CPU, 6.667 ms. x = 1.5, 0.75, 0.75:
// J = 3^2 / (3 * (2.25 + 0.5625 + 0.5625)) = 8/9.
TEST(FairShare, ThreeFreeHogsServedOneHalfHalf) {
  TraceBuilder t;
  threeHogs(t);
  const auto s = computeStats(*t.build());
  EXPECT_NEAR(s.fairness.jain, 8.0 / 9.0, 1e-9);
  // A never waited, but the ideal gave it 2/3 of a CPU: it competed.
  EXPECT_EQ(s.fairness.competingTasks, 3u);
  EXPECT_EQ(task(s, 1).idealNs, 6'666'667);
  // Lag 2t/3 - S(t) at each task's own switches (t in ms): A's -t/3 peaks at the
  // end (3.333); B (S = ceil(t/2)) peaks at t = 10 (6.667 - 5 = 1.667); C
  // (S = floor(t/2)) at t = 9 (6 - 4 = 2). Mean (3.333 + 1.667 + 2) / 3 = 2.333.
  EXPECT_EQ(task(s, 1).gpsLagMaxNs, 3'333'333);
  EXPECT_EQ(task(s, 2).gpsLagMaxNs, 1'666'667);
  EXPECT_EQ(task(s, 3).gpsLagMaxNs, 2'000'000);
  EXPECT_EQ(s.fairness.gpsLagMaxNs, 3'333'333);
  EXPECT_EQ(s.fairness.gpsLagMeanNs, 2'333'333);
}

// The same schedule with A pinned to CPU 0 and B, C to CPU 1 is the best any
// scheduler can do: the ideal is 1 / 0.5 / 0.5, J = 1, and the lag is only the
// 1 ms alternation on CPU 1 (+-0.5 ms).
TEST(FairShare, PinnedHogsAreJudgedWithinTheirCpus) {
  TraceBuilder t;
  threeHogs(t);
  pin(t, 1, {0});
  pin(t, 2, {1});
  pin(t, 3, {1});
  const auto s = computeStats(*t.build());
  EXPECT_NEAR(s.fairness.jain, 1.0, 1e-12);
  EXPECT_EQ(task(s, 1).idealNs, 10 * kMs);
  EXPECT_EQ(task(s, 2).idealNs, 5 * kMs);
  EXPECT_EQ(task(s, 1).gpsLagMaxNs, 0);
  EXPECT_EQ(s.fairness.gpsLagMaxNs, kMs / 2);
  EXPECT_EQ(s.fairness.competingTasks, 2u);  // A had its CPU whenever it wanted one, in both schedules
}

// A pinned to CPU 0 alone does not change the ideal: B and C can use the third
// of CPU 0 that A leaves them, so all three still get 2/3 (and J = 8/9).
TEST(FairShare, OnePinnedHogBesideTwoFreeOnesStillSharesEvenly) {
  TraceBuilder t;
  threeHogs(t);
  pin(t, 1, {0});
  const auto m = t.build();
  const auto shares = computeFairShare(*m, core::analysis::wholeTrace(*m));
  for (int tid : {1, 2, 3}) EXPECT_NEAR(shares[utidOf(*m, tid)].idealNs, 10.0 * kMs * 2 / 3, 1e-3) << tid;
  EXPECT_NEAR(computeStats(*m).fairness.jain, 8.0 / 9.0, 1e-9);
}

// Two hogs pinned to CPU 0 and one free: the pinned pair saturates CPU 0 at 1/2
// each and the free one is capped at one CPU. A schedule that runs A on CPU 0
// and C on CPU 1 and starves B gets x_A = 2, x_B = 0; C had a whole CPU in both
// schedules and does not compete: J = 2^2 / (2 * 4) = 0.5.
TEST(FairShare, SaturatedCpuFreezesItsPinnedTasks) {
  TraceBuilder t;
  t.builder().setTopology(core::Topology::flat(2, "test"));
  t.wakeup(0, 0, 0, 1, 0).wakeup(0, 0, 0, 2, 0).wakeup(0, 1, 0, 3, 1);
  t.sw(0, 0, 0, "R", 1).sw(0, 1, 0, "R", 3).other(10 * kMs, 0, 1);
  pin(t, 1, {0});
  pin(t, 2, {0});
  const auto m = t.build();
  const auto shares = computeFairShare(*m, core::analysis::wholeTrace(*m));
  EXPECT_NEAR(shares[utidOf(*m, 1)].idealNs, 5.0 * kMs, 1e-3);
  EXPECT_NEAR(shares[utidOf(*m, 2)].idealNs, 5.0 * kMs, 1e-3);
  EXPECT_NEAR(shares[utidOf(*m, 3)].idealNs, 10.0 * kMs, 1e-3);
  const auto s = computeStats(*m);
  EXPECT_EQ(s.fairness.competingTasks, 2u);
  EXPECT_NEAR(s.fairness.jain, 0.5, 1e-9);
}

// The cookie index judges cookies as Jain's index judges tasks. With hogA in
// cookie 1, hogB in cookie 2 and hogC untagged on the three-hog schedule, each
// cookie's x_K is its one task's x: 1.5, 0.75, 0.75, and the index is 8/9. The
// untagged cookie 0 counts: without it the index would be 2.25^2 / (2 * 2.8125) = 0.9.
TEST(FairShare, CookieIndexJudgesEachCookieAgainstItsIdeal) {
  TraceBuilder t;
  threeHogs(t);
  t.builder().setTaskAttributes(1, 1, -1, -1);
  t.builder().setTaskAttributes(2, 2, -1, -1);
  const auto s = computeStats(*t.build());
  ASSERT_EQ(s.cookies.size(), 3u);
  EXPECT_EQ(s.cookies[0].cookie, 0u);
  ASSERT_TRUE(s.cookies[0].serviceRatio && s.cookies[1].serviceRatio && s.cookies[2].serviceRatio);
  EXPECT_NEAR(*s.cookies[0].serviceRatio, 0.75, 1e-9);
  EXPECT_NEAR(*s.cookies[1].serviceRatio, 1.5, 1e-9);
  EXPECT_NEAR(*s.cookies[2].serviceRatio, 0.75, 1e-9);
  EXPECT_NEAR(s.fairness.jainCookies, 8.0 / 9.0, 1e-9);
}

// A hog beside a task that wakes every 10 ms, runs 1 ms at once and sleeps, on
// one CPU (a weighted-fair schedule). In the ideal the sleeper shares the CPU
// for 2 ms to get its 1 ms, and the hog loses nothing over a period: S* = S for
// both (9 and 1 ms a period), J = 1, and the lag is +-0.5 ms within each period
// (at 10k + 1 ms the sleeper got 1 ms, the ideal 0.5 ms) instead of growing.
TEST(FairShare, SleeperIsServedItsDemandNotItsRunnableInterval) {
  TraceBuilder t;
  t.other(0, 0, 1);
  for (int k = 0; k < 10; ++k) {
    t.waking(10 * k * kMs, 0, 0, 2, 0, core::kCtxHardIrq);
    t.sw(10 * k * kMs, 0, 1, "R+", 2);
    t.sw((10 * k + 1) * kMs, 0, 2, "S", 1);
  }
  t.other(100 * kMs, 0, 1);
  const auto s = computeStats(*t.build());
  EXPECT_NEAR(s.fairness.jain, 1.0, 1e-12);
  EXPECT_EQ(task(s, 1).idealNs, 90 * kMs);
  EXPECT_EQ(task(s, 2).idealNs, 10 * kMs);
  EXPECT_EQ(s.fairness.gpsLagMaxNs, kMs / 2);
  EXPECT_EQ(s.fairness.gpsLagMeanNs, kMs / 2);
  EXPECT_EQ(s.fairness.competingTasks, 2u);  // the hog waited; the sleeper shared in the ideal
}

// RT tasks take their CPU away from the fair ones: with an RT task on CPU 1
// throughout, two fair hogs alternating on CPU 0 should each get 1/2, not 1.
TEST(FairShare, RtTaskTakesItsCpuFromTheIdeal) {
  TraceBuilder t;
  t.builder().setTopology(core::Topology::flat(2, "test"));
  t.wakeup(0, 0, 0, 1, 0).wakeup(0, 0, 0, 2, 0);
  t.sw(0, 1, 0, "R", 9, 120, 50);  // prio 50: SCHED_FIFO
  t.sw(0, 0, 0, "R", 1);
  for (int k = 1; k <= 10; ++k) t.sw(k * kMs, 0, k % 2 ? 1 : 2, "R+", k % 2 ? 2 : 1);
  const auto s = computeStats(*t.build());
  EXPECT_EQ(task(s, 9).schedClass, core::SchedClass::RealTime);
  EXPECT_FALSE(task(s, 9).competing);
  EXPECT_EQ(task(s, 1).idealNs, 5 * kMs);
  EXPECT_EQ(task(s, 2).idealNs, 5 * kMs);
  EXPECT_EQ(s.fairness.competingTasks, 2u);
  EXPECT_NEAR(s.fairness.jain, 1.0, 1e-12);
}

// SCHED_DEADLINE tasks (prio -1) are not fair tasks: they are left out of the
// index and, like RT, only take their CPU time away. One CPU: DL runs [0, 2 ms),
// then two fair tasks runnable since 0 run 1 ms each: the ideal gives them
// nothing while DL runs and 1/2 each after, 1 ms each = what they got.
TEST(FairShare, DeadlineTaskIsNotJudgedAsFair) {
  TraceBuilder t;
  t.wakeup(0, 0, 0, 1, 0).wakeup(0, 0, 0, 2, 0);
  t.sw(0, 0, 0, "R", 5, 120, -1);
  t.sw(2 * kMs, 0, 5, "S", 1, -1, 120);
  t.sw(3 * kMs, 0, 1, "R+", 2).sw(4 * kMs, 0, 2, "R+", 1);
  const auto m = t.build();
  EXPECT_EQ(m->threads.prio[utidOf(*m, 5)], -1);
  const auto s = computeStats(*m);
  EXPECT_EQ(task(s, 5).schedClass, core::SchedClass::Deadline);
  EXPECT_FALSE(task(s, 5).competing);
  EXPECT_EQ(s.fairness.competingTasks, 2u);
  EXPECT_EQ(task(s, 1).idealNs, kMs);
  EXPECT_NEAR(s.fairness.jain, 1.0, 1e-12);
  EXPECT_EQ(s.fairness.gpsLagMaxNs, kMs / 2);
}

// SCHED_IDLE competes at weight 3 (WEIGHT_IDLEPRIO): slots of 1024 and 3 ns are its fair share.
TEST(FairShare, SchedIdleCompetesAtTheIdleWeight) {
  TraceBuilder t;
  t.wakeup(0, 0, 0, 1, 0).wakeup(0, 0, 0, 2, 0);
  t.builder().setTaskPolicy(2, core::TaskPolicy::Idle, {});
  t.sw(0, 0, 0, "R", 1);
  int64_t ts = 0;
  for (int i = 0; i < 100; ++i) {
    t.sw(ts += 1024, 0, 1, "R+", 2);
    t.sw(ts += 3, 0, 2, "R+", 1);
  }
  const auto s = computeStats(*t.build());
  EXPECT_EQ(task(s, 2).schedClass, core::SchedClass::Idle);
  EXPECT_NEAR(s.fairness.jain, 1.0, 1e-9);
  // Within a period the idle task's ideal grows by at most 3/1027 of 1024 ns before its slot.
  EXPECT_LE(s.fairness.gpsLagMaxNs, 3);
}

// The affinity-constrained allocation against a second, deliberately simple
// one: for hogs runnable over the whole range the ideal rates are constant, and
// weighted max-min fairness can be found by raising a level by bisection and
// checking Hall's condition on every subset of CPUs (sum of the rates of the
// tasks confined to S <= the free CPUs of S).
namespace {
struct Hog {
  int weight;
  std::vector<int> cpus;  // allowed
};

std::vector<double> oracleRates(const std::vector<Hog>& hogs, const std::vector<bool>& cpuFree) {
  const size_t n = hogs.size(), m = cpuFree.size();
  std::vector<double> rate(n, 0);
  std::vector<bool> frozen(n, false);
  auto confined = [&](size_t i, unsigned mask) {
    return std::all_of(hogs[i].cpus.begin(), hogs[i].cpus.end(), [&](int c) { return (mask >> c) & 1U; });
  };
  auto slack = [&](double level, unsigned mask) {  // free CPUs of mask minus the rates confined to it
    double cap = 0, used = 0;
    for (size_t c = 0; c < m; ++c)
      if ((mask >> c) & 1U && cpuFree[c]) cap += 1;
    for (size_t i = 0; i < n; ++i)
      if (confined(i, mask)) used += frozen[i] ? rate[i] : std::min(1.0, hogs[i].weight * level);
    return cap - used;
  };
  auto feasible = [&](double level) {
    for (unsigned mask = 1; mask < (1U << m); ++mask)
      if (slack(level, mask) < -1e-12) return false;
    return true;
  };
  while (std::find(frozen.begin(), frozen.end(), false) != frozen.end()) {
    double lo = 0, hi = 1.0;  // every weight is >= 1, so level 1 caps everyone
    for (int it = 0; it < 200; ++it) {
      const double mid = (lo + hi) / 2;
      (feasible(mid) ? lo : hi) = mid;
    }
    for (size_t i = 0; i < n; ++i) {
      if (frozen[i]) continue;
      bool tight = hogs[i].weight * lo >= 1 - 1e-9;
      for (unsigned mask = 1; mask < (1U << m) && !tight; ++mask) tight = confined(i, mask) && slack(lo, mask) < 1e-9;
      if (tight) frozen[i] = true, rate[i] = std::min(1.0, hogs[i].weight * lo);
    }
  }
  return rate;
}
}  // namespace

TEST(FairShare, AffinityAllocationMatchesBruteForceOracle) {
  std::mt19937 rng(13);
  const int weights[] = {1024, 335, 3121, 15, 88761};
  for (int instance = 0; instance < 300; ++instance) {
    const int m = 1 + static_cast<int>(rng() % 4);
    const int n = 1 + static_cast<int>(rng() % 6);
    std::vector<Hog> hogs;
    for (int i = 0; i < n; ++i) {
      Hog h{weights[rng() % 5], {}};
      for (int c = 0; c < m; ++c)
        if (rng() % 2) h.cpus.push_back(c);
      if (h.cpus.empty() || rng() % 3 == 0) {  // free to run anywhere
        h.cpus.clear();
        for (int c = 0; c < m; ++c) h.cpus.push_back(c);
      }
      hogs.push_back(h);
    }
    std::vector<bool> cpuFree(static_cast<size_t>(m), true);
    TraceBuilder t;
    t.builder().setTopology(core::Topology::flat(m, "test"));
    for (int c = 0; c < m; ++c)
      if (m > 1 && rng() % 4 == 0) {  // an RT task holds this CPU throughout
        cpuFree[static_cast<size_t>(c)] = false;
        t.sw(0, c, 0, "R", 900 + c, 120, 10);
      }
    static const int kNiceOfWeight[] = {0, 5, -5, 19, -20};
    for (int i = 0; i < n; ++i) {
      const int nice = kNiceOfWeight[std::find(std::begin(weights), std::end(weights), hogs[i].weight) - weights];
      core::WakeArgs a{100 + i, "hog", 120 + nice, 0};
      t.builder().onWakeup({0, 0, -1, 0}, a, false);  // no context: CPU 0 may run the RT task
      std::vector<core::CpuId> cpus(hogs[i].cpus.begin(), hogs[i].cpus.end());
      t.builder().setTaskPolicy(100 + i, core::TaskPolicy::Normal, cpus);
    }
    t.other(kMs, 0, -1);
    const auto model = t.build();
    const auto shares = computeFairShare(*model, core::analysis::wholeTrace(*model));
    const auto expected = oracleRates(hogs, cpuFree);
    for (int i = 0; i < n; ++i)
      EXPECT_NEAR(shares[utidOf(*model, 100 + i)].idealNs / kMs, expected[static_cast<size_t>(i)], 1e-6)
          << "instance " << instance << " task " << i;
  }
}
