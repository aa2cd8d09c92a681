// Hand-worked schedules through the SchedBuilder: slices, states, wakeups,
// task identity and the diagnostics for contradictory input.
#include <gtest/gtest.h>

#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "core/analysis/stats.h"
#include "support/trace_builder.h"

using core::SliceEnd;
using core::SliceKind;
using core::TaskState;
using testing_support::TraceBuilder;

namespace {

// cpu0: A(1) runs; at 50 A wakes B(2); at 100 A is preempted by B; at 150 B sleeps, A runs to 200.
std::shared_ptr<core::TraceModel> preemptionTrace() {
  TraceBuilder t;
  t.other(0, 0, 1).waking(50, 0, 1, 2, 0).wakeup(52, 0, 1, 2, 0).sw(100, 0, 1, "R+", 2).sw(150, 0, 2, "S", 1).other(200, 0, 1);
  return t.build();
}

core::Utid utidOfTid(const core::TraceModel& m, int tid) {
  for (size_t u = 0; u < m.threads.size(); ++u)
    if (m.threads.tid[u] == tid) return core::Utid(static_cast<uint32_t>(u));
  return core::Utid();
}

}  // namespace

TEST(SchedBuilder, SlicesFollowSwitches) {
  auto m = preemptionTrace();
  ASSERT_EQ(m->cpuSlices.size(), 1u);
  const auto& s = m->cpuSlices[0];
  ASSERT_EQ(s.size(), 3u);
  const auto a = utidOfTid(*m, 1), b = utidOfTid(*m, 2);
  // The first slice begins at the CPU's first event, flagged as a lower bound.
  EXPECT_EQ(s.ts[0], 0);
  EXPECT_EQ(s.dur[0], 100);
  EXPECT_EQ(s.utid[0], a);
  EXPECT_EQ(s.endReason[0], SliceEnd::Preempted);
  EXPECT_EQ(s.flags[0], core::kSliceStartUnknown);
  EXPECT_EQ(s.ts[1], 100);
  EXPECT_EQ(s.dur[1], 50);
  EXPECT_EQ(s.utid[1], b);
  EXPECT_EQ(s.endReason[1], SliceEnd::Blocked);
  EXPECT_EQ(s.endState[1], TaskState::Sleeping);
  EXPECT_EQ(s.ts[2], 150);
  EXPECT_EQ(s.dur[2], 50);
  EXPECT_EQ(s.endReason[2], SliceEnd::TraceEnd);
  EXPECT_EQ(m->firstTs, 0);
  EXPECT_EQ(m->lastTs, 200);
}

TEST(SchedBuilder, WakingAndWakeupMergeIntoOneWakeup) {
  auto m = preemptionTrace();
  ASSERT_EQ(m->wakeups.size(), 1u);
  EXPECT_EQ(m->wakeups.ts[0], 50);
  EXPECT_EQ(m->wakeups.wakee[0], utidOfTid(*m, 2));
  EXPECT_EQ(m->wakeups.waker[0], utidOfTid(*m, 1));
  EXPECT_EQ(m->wakeups.flags[0], core::kWakeupHadWaking | core::kWakeupHadWakeup);
  ASSERT_EQ(m->wakeupsOf(utidOfTid(*m, 2)).size(), 1u);
}

// Only a traced sched_migrate_task moves a task in the trace; a task seen on
// another CPU than it was last seen on moved all the same (perf record traces
// none of its own moves), and the builder adds that move, flagged inferred.
// Worked by hand on two CPUs:
//  - tid 1 runs on CPU 0, sleeps, is woken by a sched_wakeup naming CPU 1 with
//    no move traced: inferred at that wakeup (600), 0 -> 1; it runs on CPU 1;
//  - tid 3, preempted on CPU 0 at 300, runs on CPU 1 at 700 with no event
//    between: inferred at that switch-in;
//  - tid 2 sleeps on CPU 0; its sched_waking names CPU 0 (the CPU it is on),
//    the sched_wakeup after it CPU 1: inferred at the sched_wakeup (805);
//  - tid 4 is moved 0 -> 1 by a traced sched_migrate_task: not inferred;
//  - tid 5, forked on CPU 0 and woken new onto CPU 1, was placed, not moved.
TEST(SchedBuilder, MovesWithNoSchedMigrateTaskAreInferred) {
  TraceBuilder t;
  t.sw(100, 0, 0, "R", 1).sw(200, 0, 1, "S", 3).sw(300, 0, 3, "R", 4).sw(400, 0, 4, "S", 2).sw(500, 0, 2, "S", 0);
  t.wakeup(600, 0, 0, 1, 1).sw(610, 1, 0, "R", 1).sw(700, 1, 1, "S", 3);
  t.waking(800, 0, 0, 2, 0).wakeup(805, 0, 0, 2, 1).sw(900, 1, 3, "R", 2).sw(950, 1, 2, "S", 0);
  t.migrate(1000, 0, 4, 0, 1).wakeup(1001, 0, 0, 4, 1).sw(1100, 1, 0, "R", 4).sw(1150, 1, 4, "S", 0);
  t.fork(1200, 0, 1, 5).wakeup(1201, 0, 0, 5, 1, true).sw(1300, 1, 0, "R", 5);
  auto m = t.build();
  using Row = std::tuple<int64_t, int, int, int, uint8_t>;  // ts, tid, from, to, flags
  std::vector<Row> got;
  const auto& mg = m->migrations;
  for (size_t i = 0; i < mg.size(); ++i)
    got.emplace_back(mg.ts[i], m->threads.tid[mg.utid[i].value], mg.origCpu[i], mg.destCpu[i], mg.flags[i]);
  const std::vector<Row> expected = {{600, 1, 0, 1, core::kMigrationInferred},
                                     {700, 3, 0, 1, core::kMigrationInferred},
                                     {805, 2, 0, 1, core::kMigrationInferred},
                                     {1000, 4, 0, 1, 0}};
  EXPECT_EQ(got, expected);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::migration_inferred), 3u);
  const auto stats = core::analysis::computeStats(*m);
  EXPECT_EQ(stats.migrations, 4u);
  EXPECT_EQ(stats.migrationsInferred, 3u);
}

TEST(SchedBuilder, ThreadStatesTrackEachTask) {
  auto m = preemptionTrace();
  const auto b = utidOfTid(*m, 2);
  const auto [first, last] = m->stateRowsOf(b);
  ASSERT_EQ(last - first, 3u);
  EXPECT_EQ(m->threadStates.ts[first], 50);
  EXPECT_EQ(m->threadStates.state[first], TaskState::Runnable);
  EXPECT_EQ(m->threadStates.state[first + 1], TaskState::Running);
  EXPECT_EQ(m->threadStates.ts[first + 2], 150);
  EXPECT_EQ(m->threadStates.state[first + 2], TaskState::Sleeping);
  EXPECT_EQ(m->stateEnd(first + 2), 200);
  const auto a = utidOfTid(*m, 1);
  const auto [fa, la] = m->stateRowsOf(a);
  ASSERT_EQ(la - fa, 3u);
  EXPECT_EQ(m->threadStates.state[fa], TaskState::Running);
  EXPECT_EQ(m->threadStates.state[fa + 1], TaskState::RunnablePreempted);
  EXPECT_EQ(m->threadStates.state[fa + 2], TaskState::Running);
}

// The row in force just before an instant: the last one that starts before it.
TEST(SchedBuilder, StateRowBeforeIsTheLastRowStartingEarlier) {
  auto m = preemptionTrace();
  const auto b = utidOfTid(*m, 2);
  const uint32_t first = m->stateRowsOf(b).first;  // Runnable at 50, Running at 100, Sleeping at 150
  EXPECT_EQ(m->stateRowBefore(b, 10), std::nullopt);
  EXPECT_EQ(m->stateRowBefore(b, 50), std::nullopt);  // a row starting at the instant is not before it
  EXPECT_EQ(m->stateRowBefore(b, 51), first);
  EXPECT_EQ(m->stateRowBefore(b, 100), first);
  EXPECT_EQ(m->stateRowBefore(b, 120), first + 1);
  EXPECT_EQ(m->stateRowBefore(b, 10'000), first + 2);
  // Another thread's rows do not count: A's first row starts at 0.
  EXPECT_EQ(m->stateRowBefore(utidOfTid(*m, 1), 1), m->stateRowsOf(utidOfTid(*m, 1)).first);
}

// A task stored thread by thread has its rows further apart than a CPU's: this
// one changes state three times every 60 ms, so 64 of its rows span 1.26 s and
// fit the time column's 32-bit differences (2.1 s), where 256 would span 5.1 s.
TEST(SchedBuilder, ThreadStatesOfARarelyRunningTaskStayIn32Bits) {
  TraceBuilder b;
  constexpr int64_t kMs = 1'000'000;
  for (int i = 0; i < 500; ++i) {
    const int64_t t = 1'000 * kMs + i * 60 * kMs;
    b.wakeup(t, 0, 0, 100, 0).sw(t + kMs / 100, 0, 0, "R", 100).sw(t + kMs, 0, 100, "S", 0);
  }
  auto m = b.build();
  const auto& s = m->threadStates;
  ASSERT_EQ(s.size(), 1500u);  // runnable, running, sleeping per cycle
  EXPECT_EQ(s.ts.wideRows(), 0u);
  EXPECT_EQ(s.ts[1499], 1'000 * kMs + 499 * 60 * kMs + kMs);
}

// During import a state row keeps its time as the distance from its thread's
// previous row, in 32 bits, and its thread in 16 bits until there are more
// threads than that holds (core/sched_builder.h). Task 1 sleeps 3.5 s (past
// int32, within uint32) and then 5 s (past uint32); 70000 tasks in between
// outgrow 16-bit threads while task 1 still has rows to come.
TEST(SchedBuilder, StateTimesSurviveLongSleepsAndMoreTasksThanSixteenBitsCount) {
  TraceBuilder b;
  constexpr int64_t kS = 1'000'000'000;
  constexpr int kTasks = 70'000;
  const int64_t task1Runs[] = {1'000, 1'000 + 3 * kS + kS / 2, 1'000 + 8 * kS + kS / 2};
  b.sw(task1Runs[0], 0, 0, "R", 1).sw(task1Runs[0] + 50, 0, 1, "S", 0);
  for (int i = 0; i < kTasks; ++i) {
    const int64_t t = 10'000 + int64_t{i} * 100;
    b.sw(t, 0, 0, "R", 2 + i).sw(t + 50, 0, 2 + i, "S", 0);
  }
  for (const int64_t t : {task1Runs[1], task1Runs[2]}) b.sw(t, 0, 0, "R", 1).sw(t + 50, 0, 1, "S", 0);
  auto m = b.build();

  const auto [first, last] = m->stateRowsOf(utidOfTid(*m, 1));
  ASSERT_EQ(last - first, 6u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(m->threadStates.ts[first + 2 * k], task1Runs[k]) << "run " << k;
    EXPECT_EQ(m->threadStates.state[first + 2 * k], TaskState::Running);
    EXPECT_EQ(m->threadStates.ts[first + 2 * k + 1], task1Runs[k] + 50);
    EXPECT_EQ(m->threadStates.state[first + 2 * k + 1], TaskState::Sleeping);
  }
  for (const int tid : {2, 2 + kTasks / 2, 1 + kTasks}) {
    const auto [f, l] = m->stateRowsOf(utidOfTid(*m, tid));
    ASSERT_EQ(l - f, 2u) << "tid " << tid;
    const int64_t t = 10'000 + int64_t{tid - 2} * 100;
    EXPECT_EQ(m->threadStates.ts[f], t) << "tid " << tid;
    EXPECT_EQ(m->threadStates.ts[f + 1], t + 50) << "tid " << tid;
    EXPECT_EQ(m->threadOfStateRow(f), utidOfTid(*m, tid));
  }
  EXPECT_EQ(m->threadStates.size(), 6u + 2u * kTasks);
}

TEST(SchedBuilder, WakeupFromIrqHasNoWaker) {
  TraceBuilder t;
  t.sw(10, 0, 3, "S", 0).waking(20, 0, 0, 3, 0).sw(30, 0, 0, "R", 3);
  t.sw(40, 0, 3, "S", 0).waking(50, 0, 0, 3, 0, core::kCtxHardIrq).sw(60, 0, 0, "R", 3);
  auto m = t.build();
  ASSERT_EQ(m->wakeups.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_FALSE(m->wakeups.waker[i].isValid());
    EXPECT_TRUE(m->wakeups.flags[i] & core::kWakeupFromIrq);
  }
}

TEST(SchedBuilder, TidReuseAfterExitMakesNewTask) {
  TraceBuilder t;
  t.sw(0, 0, 0, "R", 1).fork(10, 0, 1, 5).wakeup(11, 0, 1, 5, 0, true).sw(20, 0, 1, "S", 5);
  t.exit(30, 0, 5).sw(31, 0, 5, "X", 0);
  t.waking(40, 0, 0, 1, 0).sw(41, 0, 0, "R", 1).fork(50, 0, 1, 5).wakeup(51, 0, 1, 5, 0, true).sw(60, 0, 1, "S", 5);
  auto m = t.build();
  int tasksWithTid5 = 0;
  for (size_t u = 0; u < m->threads.size(); ++u) tasksWithTid5 += m->threads.tid[u] == 5;
  EXPECT_EQ(tasksWithTid5, 2);
  const auto first = utidOfTid(*m, 5);
  EXPECT_EQ(m->threads.endTs[first.value], 31);
  EXPECT_TRUE(m->threads.flags[first.value] & core::kThreadExited);
  EXPECT_EQ(m->threads.parent[first.value], utidOfTid(*m, 1));
  // The dying task's last slice ends as "exited".
  const auto& s = m->cpuSlices[0];
  bool sawExit = false;
  for (size_t i = 0; i < s.size(); ++i) sawExit |= s.utid[i] == first && s.endReason[i] == SliceEnd::Exited;
  EXPECT_TRUE(sawExit);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::tid_reused_without_fork), 0u);
}

// Tids anywhere up to pid_max (4M where systemd sets it), and a corrupt one
// beyond, each name their own task; one far up is reused after its exit like a small one.
TEST(SchedBuilder, TidsFarApartAndBeyondPidMaxNameTheirOwnTasks) {
  const int far = (1 << 22) - 1, beyond = 1 << 22, middle = 2'000'000;
  TraceBuilder t;
  t.sw(0, 0, 0, "R", 3).sw(10, 0, 3, "S", far).exit(20, 0, far).sw(21, 0, far, "X", middle).sw(30, 0, middle, "S", beyond);
  t.waking(35, 0, beyond, 3, 0).sw(40, 0, beyond, "S", 3);
  t.fork(45, 0, 3, 4096).fork(55, 0, 3, far);
  auto m = t.build();
  auto tasksOf = [&](int tid) {
    int n = 0;
    for (size_t u = 0; u < m->threads.size(); ++u) n += m->threads.tid[u] == tid;
    return n;
  };
  EXPECT_EQ(tasksOf(3), 1);
  EXPECT_EQ(tasksOf(middle), 1);
  EXPECT_EQ(tasksOf(beyond), 1);
  EXPECT_EQ(tasksOf(4096), 1);
  EXPECT_EQ(tasksOf(far), 2);  // exited at 20, forked anew at 55
  const auto& s = m->cpuSlices[0];
  ASSERT_EQ(s.size(), 5u);
  const int ran[] = {3, far, middle, beyond, 3};
  for (size_t i = 0; i < s.size(); ++i) EXPECT_EQ(m->threads.tid[s.utid[i].value], ran[i]) << "slice " << i;
  EXPECT_EQ(s.utid[0], s.utid[4]);
  ASSERT_EQ(m->wakeups.size(), 1u);
  EXPECT_EQ(m->wakeups.waker[0], s.utid[3]);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::tid_reused_without_fork), 0u);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::fork_of_existing_tid), 0u);
}

TEST(SchedBuilder, MismatchedPrevTidIsCountedAndRepaired) {
  TraceBuilder t;
  t.sw(10, 0, 0, "R", 2).sw(20, 0, 3, "S", 1).other(30, 0, 1);
  auto m = t.build();
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::mismatched_switch_prev_tid), 1u);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::switch_in_inferred), 1u);
  const auto& s = m->cpuSlices[0];
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s.utid[0], utidOfTid(*m, 2));
  EXPECT_EQ(s.endReason[0], SliceEnd::Mismatch);
  // prev_tid 3 was running, since when is unknown and the trace has no traced
  // switch from idle to a woken task to estimate it from: a zero-length slice at
  // the switch-out keeps its switch.
  EXPECT_EQ(s.utid[1], utidOfTid(*m, 3));
  EXPECT_EQ(s.dur[1], 0);
  EXPECT_EQ(s.flags[1], core::kSliceStartInferred);
  EXPECT_EQ(s.utid[2], utidOfTid(*m, 1));
}

// Some kernels never trace some tasks' switches out (Linux 6.18.44-fc: a guest
// agent's threads). The task next event tells how it left: A(1), replaced by
// B(2) seen in its own context at 60, runs again at 80 with no wakeup, so B
// had preempted it; woken at 70 after an idle-context event at 50 showed its
// CPU idle, it had slept; with nothing after, how it left stays unknown.
TEST(SchedBuilder, AnUntracedSwitchOutIsTakenFromTheTasksNextEvent) {
  const auto slicesOfA = [](const core::TraceModel& m) {
    std::vector<size_t> out;
    for (size_t i = 0; i < m.cpuSlices[0].size(); ++i)
      if (m.cpuSlices[0].utid[i] == utidOfTid(m, 1)) out.push_back(i);
    return out;
  };
  const auto switchesOfA = [](const core::TraceModel& m) {
    for (const auto& t : core::analysis::computeStats(m).tasks)
      if (t.tid == 1) return std::make_pair(t.switchesVoluntary, t.switchesInvoluntary);
    return std::make_pair(uint64_t{99}, uint64_t{99});
  };

  TraceBuilder preempted;
  preempted.sw(10, 0, 0, "R", 1).waking(50, 0, 1, 2, 0, core::kCtxHardIrq).other(60, 0, 2).sw(80, 0, 2, "S", 1);
  auto m = preempted.build();
  auto a = slicesOfA(*m);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(m->cpuSlices[0].endReason[a[0]], SliceEnd::Mismatch);
  EXPECT_EQ(m->cpuSlices[0].endState[a[0]], TaskState::RunnablePreempted);
  EXPECT_TRUE(m->cpuSlices[0].flags[a[0]] & core::kSliceEndInferred);
  EXPECT_EQ(switchesOfA(*m), std::make_pair(uint64_t{0}, uint64_t{1}));
  EXPECT_EQ(core::describeSliceEnd(m->cpuSlices[0], a[0]),
            "mismatched switch, then preempted (inferred: it ran again unwoken)");
  auto [first, last] = m->stateRowsOf(utidOfTid(*m, 1));
  ASSERT_EQ(last - first, 3u);
  EXPECT_EQ(m->threadStates.state[first + 1], TaskState::RunnablePreempted);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::switch_out_state_inferred), 1u);

  TraceBuilder slept;
  slept.sw(10, 0, 0, "R", 1).other(50, 0, 0).waking(70, 1, 3, 1, 0).sw(80, 0, 0, "R", 1);
  m = slept.build();
  a = slicesOfA(*m);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(m->cpuSlices[0].endState[a[0]], TaskState::Sleeping);
  EXPECT_EQ(switchesOfA(*m), std::make_pair(uint64_t{1}, uint64_t{0}));
  EXPECT_EQ(core::describeSliceEnd(m->cpuSlices[0], a[0]), "mismatched switch, then blocked (inferred: it was woken next)");
  std::tie(first, last) = m->stateRowsOf(utidOfTid(*m, 1));
  ASSERT_EQ(last - first, 4u);
  EXPECT_EQ(m->threadStates.state[first + 1], TaskState::Sleeping);
  EXPECT_EQ(m->threadStates.ts[first + 1], 50);
  EXPECT_EQ(m->threadStates.state[first + 2], TaskState::Runnable);

  TraceBuilder unseen;
  unseen.sw(10, 0, 0, "R", 1).other(50, 0, 0).other(90, 0, 0);
  m = unseen.build();
  a = slicesOfA(*m);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(m->cpuSlices[0].endState[a[0]], TaskState::Unknown);
  EXPECT_FALSE(m->cpuSlices[0].flags[a[0]] & core::kSliceEndInferred);
  EXPECT_EQ(core::describeSliceEnd(m->cpuSlices[0], a[0]), "mismatched switch");
  EXPECT_EQ(switchesOfA(*m), std::make_pair(uint64_t{0}, uint64_t{0}));
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::switch_out_state_inferred), 0u);
}

// CPU 0 shows how long this machine takes from a wakeup on an idle CPU to the
// switch-in (6 ns after the irq-context waking); CPU 1 lacks that switch-in,
// and the first event in the wakee's context shows it running.
std::shared_ptr<core::TraceModel> idleCpusWithOneLostSwitchIn(bool contextEventBeforeSwitchOut) {
  TraceBuilder t;
  t.sw(10, 0, 9, "S", 0).sw(20, 1, 8, "S", 0);
  t.waking(100, 0, 0, 5, 0, core::kCtxHardIrq).sw(106, 0, 0, "R", 5).sw(200, 0, 5, "S", 0);
  t.waking(300, 1, 0, 7, 1, core::kCtxHardIrq);
  if (contextEventBeforeSwitchOut) t.other(315, 1, 7);
  t.sw(330, 1, 7, "S", 0).other(400, 1, 0);
  return t.build();
}

TEST(SchedBuilder, SwitchInFoundFromTheContextIsPlacedAtTheMeasuredDelay) {
  auto m = idleCpusWithOneLostSwitchIn(true);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::switch_in_inferred), 1u);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::mismatched_switch_prev_tid), 0u);
  const auto& s = m->cpuSlices[1];
  ASSERT_EQ(s.size(), 4u);  // 8, idle, 7, idle
  // Lower bound 300 (the waking in idle's context) + the 6 ns measured on CPU 0;
  // the context event at 315 only bounds it from above.
  EXPECT_EQ(s.kind[1], SliceKind::Idle);
  EXPECT_EQ(s.ts[1], 20);
  EXPECT_EQ(s.dur[1], 286);
  EXPECT_EQ(s.utid[2], utidOfTid(*m, 7));
  EXPECT_EQ(s.ts[2], 306);
  EXPECT_EQ(s.dur[2], 24);
  EXPECT_EQ(s.flags[2], core::kSliceStartInferred);
  // Its state rows agree: runnable from the waking, running from 306.
  const auto [first, last] = m->stateRowsOf(utidOfTid(*m, 7));
  ASSERT_EQ(last - first, 3u);
  EXPECT_EQ(m->threadStates.state[first], TaskState::Runnable);
  EXPECT_EQ(m->threadStates.ts[first], 300);
  EXPECT_EQ(m->threadStates.state[first + 1], TaskState::Running);
  EXPECT_EQ(m->threadStates.ts[first + 1], 306);
  EXPECT_EQ(m->threadStates.ts[first + 2], 330);
}

TEST(SchedBuilder, SwitchOutAsTheOnlySignOfALostSwitchInStillGetsARun) {
  auto m = idleCpusWithOneLostSwitchIn(false);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::switch_in_inferred), 1u);
  const auto& s = m->cpuSlices[1];
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s.ts[2], 306);
  EXPECT_EQ(s.dur[2], 24);
  EXPECT_EQ(s.endReason[2], SliceEnd::Blocked);
  const auto [first, last] = m->stateRowsOf(utidOfTid(*m, 7));
  ASSERT_EQ(last - first, 3u);
  EXPECT_EQ(m->threadStates.state[first + 1], TaskState::Running);
  EXPECT_EQ(m->threadStates.ts[first + 1], 306);
  EXPECT_EQ(m->threadStates.state[first + 2], TaskState::Sleeping);
}

// As cyclictest's main thread was recorded: a timer on CPU 0 wakes it there
// (waking at 300, target CPU 0), the wakeup moves it to CPU 1 (310), and CPU 1
// lacks its switch-in. It cannot run on CPU 1 before it was moved there, so
// the measured delay after a remote wakeup (8 ns: task 6, woken from CPU 0 at
// 150, switched in on CPU 1 at 158) counts from the move: placed at 308 it
// ran on CPU 1 while its wakeup still had it on CPU 0, and its Perfetto
// export read back with the move's origin contradicting where it ran
// (migrate_wrong_cpu).
TEST(SchedBuilder, AnInferredSwitchInComesAfterTheMoveOntoItsCpu) {
  TraceBuilder t;
  t.sw(10, 0, 7, "S", 5).sw(20, 1, 8, "S", 0);
  t.waking(150, 0, 5, 6, 1).sw(158, 1, 0, "R", 6).sw(170, 1, 6, "S", 0).sw(200, 0, 5, "S", 0);
  t.waking(300, 0, 0, 7, 0, core::kCtxHardIrq).migrate(310, 0, 7, 0, 1);
  t.sw(330, 1, 7, "S", 0).other(400, 1, 0);
  auto m = t.build();
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::switch_in_inferred), 1u);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::migrate_wrong_cpu), 0u);
  const auto& s = m->cpuSlices[1];
  ASSERT_EQ(s.size(), 6u);  // 8, idle, 6, idle, 7, idle
  EXPECT_EQ(s.utid[4], utidOfTid(*m, 7));
  EXPECT_EQ(s.flags[4], core::kSliceStartInferred);
  EXPECT_EQ(s.ts[4], 318);
  EXPECT_EQ(s.dur[4], 12);
  const auto [first, last] = m->stateRowsOf(utidOfTid(*m, 7));
  ASSERT_EQ(last - first, 4u);  // sleeping from 10, runnable from 300, running from 318, sleeping from 330
  EXPECT_EQ(m->threadStates.ts[first + 1], 300);
  EXPECT_EQ(m->threadStates.state[first + 2], TaskState::Running);
  EXPECT_EQ(m->threadStates.ts[first + 2], 318);
}

// Found by the ftrace fuzzer: task 5 runs on CPU 0 when a move claims it for
// CPU 9, which the trace never shows, and it then wakes task 6 from CPU 1. Its
// switch-in on CPU 1 is inferred; the running task's old CPU (9) is past every
// CPU the builder holds, and must not be looked up there (ASan read past the
// vector; the fuzzer's input is in tests/fuzz/corpus/ftrace). Two switch-ins
// are inferred on CPU 1: task 5's at its waking, the idle task's at the
// idle-context event after it; the import goes on.
TEST(SchedBuilder, ARunningTaskMovedToAnUnseenCpuIsInferredWhereItActs) {
  TraceBuilder t;
  t.sw(10, 0, 0, "R", 5).sw(20, 1, 8, "S", 0);
  t.migrate(30, 0, 5, 0, 9);
  t.waking(40, 1, 5, 6, 1).other(60, 1, 0);
  auto m = t.build();
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::switch_in_inferred), 2u);
  const auto& s = m->cpuSlices[1];
  ASSERT_FALSE(s.size() == 0);
  bool ranOnCpu1 = false;
  for (size_t i = 0; i < s.size(); ++i) ranOnCpu1 |= s.utid[i] == utidOfTid(*m, 5);
  EXPECT_TRUE(ranOnCpu1);
}

// As perf recorded cyclictest on this machine: CPU 1's idle-context events
// (the timer wakeups and the switches from idle) are all missing, so the task
// is seen only switching out to sleep, again and again. Each run in between
// starts after a wakeup whose time is unknown: it stays at the switch-out that
// shows it, rather than a measured wakeup delay after the task fell asleep,
// which would hand it its whole sleep as CPU time.
TEST(SchedBuilder, SwitchInOfASleeperWithNoTracedWakeupStaysAtItsFirstEvent) {
  TraceBuilder t;
  t.sw(10, 0, 9, "S", 0).sw(20, 1, 8, "S", 0);
  t.waking(100, 0, 0, 5, 0, core::kCtxHardIrq).sw(106, 0, 0, "R", 5).sw(200, 0, 5, "S", 0);  // 6 ns measured
  t.sw(300, 1, 0, "R", 7).sw(310, 1, 7, "S", 0);  // traced: 7 runs 10 ns and sleeps
  t.sw(1310, 1, 7, "S", 0).sw(2310, 1, 7, "S", 0).other(2400, 1, 0);  // two runs without a wakeup or switch-in
  auto m = t.build();
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::switch_in_inferred), 2u);
  const auto& s = m->cpuSlices[1];
  const auto seven = utidOfTid(*m, 7);
  std::vector<std::pair<int64_t, int64_t>> runs;  // (start, duration) of 7's slices
  for (size_t i = 0; i < s.size(); ++i)
    if (s.utid[i] == seven) runs.emplace_back(s.ts[i], s.dur[i]);
  EXPECT_EQ(runs, (std::vector<std::pair<int64_t, int64_t>>{{300, 10}, {1310, 0}, {2310, 0}}));
  EXPECT_NE(m->metadata.at("switch_in_inferred_delay").find("2 of a blocked task with no traced wakeup kept at the first event"),
            std::string::npos)
      << m->metadata.at("switch_in_inferred_delay");
}

TEST(SchedBuilder, DataLossBecomesALostSpanAndUnknownStart) {
  TraceBuilder t;
  t.sw(10, 0, 0, "R", 2).other(20, 0, 2).loss(0, 30, 7).other(30, 0, 3).sw(40, 0, 3, "S", 1).other(50, 0, 1);
  auto m = t.build();
  ASSERT_EQ(m->dataLoss.size(), 1u);
  EXPECT_EQ(m->dataLoss.tsBegin[0], 20);
  EXPECT_EQ(m->dataLoss.tsEnd[0], 30);
  EXPECT_EQ(m->lostEvents(), 7);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::lost_events), 7u);
  const auto& s = m->cpuSlices[0];
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s.endReason[0], SliceEnd::DataLoss);
  EXPECT_EQ(s.kind[1], SliceKind::Lost);
  EXPECT_EQ(s.ts[1], 20);
  EXPECT_EQ(s.dur[1], 10);
  EXPECT_EQ(s.utid[2], utidOfTid(*m, 3));
  EXPECT_EQ(s.ts[2], 30);
  EXPECT_EQ(s.flags[2], core::kSliceStartUnknown);
}

TEST(SchedBuilder, TimeRunningBackOnItsCpuIsClampedAndCounted) {
  TraceBuilder t;
  t.sw(100, 0, 0, "R", 1).sw(90, 0, 1, "R", 2).other(120, 0, 2);
  auto m = t.build();
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::out_of_order_timestamp), 1u);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::unsorted_input), 0u);
  EXPECT_EQ(m->cpuSlices[0].ts[1], 100);  // tid 2 runs from the clamped switch
}

TEST(SchedBuilder, InputNotMergedByTimeIsClampedAndCountedApart) {
  // cpu1's own time does not run back: the importer did not merge the CPUs
  // (the EventSorter would have). Clamped, named for what it is.
  TraceBuilder t;
  t.sw(100, 0, 0, "R", 1).sw(90, 1, 0, "R", 2).other(120, 0, 1);
  auto m = t.build();
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::unsorted_input), 1u);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::out_of_order_timestamp), 0u);
  EXPECT_EQ(m->cpuSlices[1].ts[0], 100);
}

TEST(SchedBuilder, EventsOnImpossibleCpusAreDroppedWithADiagnostic) {
  TraceBuilder t;
  t.sw(10, 0, 0, "R", 1);
  t.builder().onOtherEvent({20, 70000, 1, 0});
  t.builder().onOtherEvent({20, -3, 1, 0});
  auto m = t.build();
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::cpu_out_of_range), 2u);
  EXPECT_EQ(m->cpuCount(), 1);
}

TEST(SchedBuilder, CountsEventsByName) {
  auto m = preemptionTrace();
  ASSERT_EQ(m->eventCounts.size(), 4u);
  EXPECT_EQ(m->eventCounts[0], (std::pair<std::string, uint64_t>{"other", 2}));
  EXPECT_EQ(m->eventCounts[1], (std::pair<std::string, uint64_t>{"sched_switch", 2}));
  EXPECT_EQ(m->eventCount, 6u);
}

TEST(SchedBuilder, CommChangesAreKept) {
  core::SchedBuilder b;
  core::SwitchArgs a;
  a.prevTid = 7;
  a.prevComm = "bash";
  a.prevState = TaskState::Sleeping;
  a.nextTid = 0;
  b.onSwitch({10, 0, 7, 0}, a);
  b.onExec({20, 0, 7, 0}, 7, 7, "/usr/bin/make");
  a.prevComm = "make";
  b.onSwitch({30, 0, 7, 0}, a);
  auto m = b.finalize();
  ASSERT_EQ(m->commChanges.size(), 1u);
  EXPECT_EQ(m->strings.get(m->commChanges.comm[0]), "make");
  EXPECT_EQ(m->commChanges.ts[0], 20);
  EXPECT_EQ(m->comm(m->threadOfStateRow(0)), "make");
}

// The builder keeps a thread's comm inline to spare the string pool: every
// length range it compares in its own way (1-3, 4-7, 8-16 bytes, longer), a
// name that differs only in its last byte, and a change back to an earlier name.
TEST(SchedBuilder, CommChangesAreKeptForEveryLengthAndChangeBack) {
  const std::vector<std::string> comms = {
      "ab",  "ac",  "ab",  "abcd1", "abcd2", "abcdefghij", "abcdefghiX", "abcdefghiX",
      "0123456789abcdef", "0123456789abcdeF", "0123456789abcdefghij", "0123456789abcdefghiJ",
      "0123456789abcdefghiJ", "ab"};
  core::SchedBuilder b;
  core::SwitchArgs a;
  a.prevTid = 7;
  a.prevState = TaskState::Sleeping;
  a.nextTid = 0;
  int64_t ts = 10;
  for (const std::string& comm : comms) {
    a.prevComm = comm;
    b.onSwitch({ts, 0, 7, 0}, a);
    ts += 10;
  }
  auto m = b.finalize();
  // Each name but the first and the two repeats ("abcdefghiX", "...ghiJ") is a change.
  const std::vector<std::string> changed = {"ac", "ab", "abcd1", "abcd2", "abcdefghij", "abcdefghiX",
                                            "0123456789abcdef", "0123456789abcdeF", "0123456789abcdefghij",
                                            "0123456789abcdefghiJ", "ab"};
  ASSERT_EQ(m->commChanges.size(), changed.size());
  for (size_t i = 0; i < changed.size(); ++i) EXPECT_EQ(m->strings.get(m->commChanges.comm[i]), changed[i]) << i;
  EXPECT_EQ(m->commChanges.ts[0], 20);
  EXPECT_EQ(m->commChanges.ts.back(), 140);
  EXPECT_EQ(m->comm(m->threadOfStateRow(0)), "ab");
}

TEST(SchedBuilder, ModelStaysWithinItsMemoryBudget) {
  // A busy two-CPU ping-pong: the model must stay at or below 32 bytes/event.
  TraceBuilder t;
  int64_t ts = 0;
  for (int i = 0; i < 20000; ++i) {
    const int cpu = i % 2;
    const int me = 100 + cpu, peer = 100 + (1 - cpu);
    t.waking(ts += 100, cpu, me, peer, 1 - cpu);
    t.wakeup(ts += 10, cpu, me, peer, 1 - cpu);
    t.sw(ts += 100, cpu, me, "S", 0);
    t.sw(ts += 50, 1 - cpu, 0, "R", peer);
  }
  auto m = t.build();
  const double perEvent = static_cast<double>(m->memoryBytes()) / static_cast<double>(m->eventCount);
  EXPECT_LE(perEvent, 32.0) << m->memoryBytes() << " bytes for " << m->eventCount << " events";
}

TEST(SchedBuilder, WildlyEarlyTimestampIsClampedWithoutOverflow) {
  TraceBuilder t;
  t.sw(100, 0, 0, "R", 1).sw(INT64_MIN + 5, 0, 1, "S", 0).other(200, 0, 0);
  auto m = t.build();
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::out_of_order_timestamp), 1u);
  EXPECT_EQ(m->lastTs, 200);
}

// A thread blocks inside do_exit() after its sched_process_exit (perf script of
// `hackbench -T` on 6.18, tid 8382: exit, switch out D, woken, switched in,
// wakes its joiner, switch out X). It is one task until the X, not a second
// one with the same tid.
TEST(SchedBuilder, TaskBlockedAfterItsExitLivesUntilItsFinalSwitch) {
  TraceBuilder t;
  t.sw(0, 0, 0, "R", 1).fork(10, 0, 1, 5).wakeup(11, 0, 1, 5, 0, true).sw(20, 0, 1, "S", 5);
  t.exit(30, 0, 5).sw(31, 0, 5, "D", 0);
  t.waking(40, 1, 0, 5, 0).sw(41, 0, 0, "R", 5).waking(45, 0, 5, 1, 0).sw(50, 0, 5, "X", 1);
  auto m = t.build();
  int tasksWithTid5 = 0;
  for (size_t u = 0; u < m->threads.size(); ++u) tasksWithTid5 += m->threads.tid[u] == 5;
  EXPECT_EQ(tasksWithTid5, 1);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::tid_reused_without_fork), 0u);
  const auto child = utidOfTid(*m, 5);
  EXPECT_EQ(m->threads.endTs[child.value], 50);
  EXPECT_TRUE(m->threads.flags[child.value] & core::kThreadExited);
  const auto& s = m->cpuSlices[0];
  std::vector<std::pair<SliceEnd, TaskState>> ends;
  for (size_t i = 0; i < s.size(); ++i)
    if (s.utid[i] == child) ends.emplace_back(s.endReason[i], s.endState[i]);
  const std::vector<std::pair<SliceEnd, TaskState>> expected = {{SliceEnd::Blocked, TaskState::Blocked},
                                                               {SliceEnd::Exited, TaskState::Dead}};
  EXPECT_EQ(ends, expected);
  ASSERT_EQ(m->wakeups.size(), 3u);
  EXPECT_EQ(m->wakeups.waker[2], child);  // the joiner, woken after the exit
}

// One that blocks after its exit and is never seen again died there, and a
// fork that names its tid later is a new task.
TEST(SchedBuilder, TaskBlockedAfterItsExitThatNeverRunsAgainDiedThere) {
  TraceBuilder t;
  t.sw(0, 0, 0, "R", 1).fork(10, 0, 1, 5).wakeup(11, 0, 1, 5, 0, true).sw(20, 0, 1, "S", 5);
  t.fork(15, 1, 2, 6).wakeup(16, 1, 2, 6, 1, true);
  t.exit(30, 0, 5).sw(31, 0, 5, "D", 0).exit(32, 1, 6).sw(33, 1, 6, "S", 0);
  t.waking(40, 0, 0, 1, 0).sw(41, 0, 0, "R", 1).fork(50, 0, 1, 6).wakeup(51, 0, 1, 6, 0, true).sw(60, 0, 1, "S", 6);
  t.other(70, 1, 0);
  auto m = t.build();
  const auto first5 = utidOfTid(*m, 5);
  EXPECT_EQ(m->threads.endTs[first5.value], 31);
  EXPECT_TRUE(m->threads.flags[first5.value] & core::kThreadExited);
  int tasksWithTid6 = 0;
  for (size_t u = 0; u < m->threads.size(); ++u) tasksWithTid6 += m->threads.tid[u] == 6;
  EXPECT_EQ(tasksWithTid6, 2);
  const auto first6 = utidOfTid(*m, 6);
  EXPECT_EQ(m->threads.endTs[first6.value], 33);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::fork_of_existing_tid), 0u);
  for (const auto& [slices, u, at] : {std::tuple{&m->cpuSlices[0], first5, 31}, std::tuple{&m->cpuSlices[1], first6, 33}}) {
    bool exitedThere = false;
    for (size_t i = 0; i < slices->size(); ++i)
      exitedThere |= slices->utid[i] == u && slices->ts[i] + slices->dur[i] == at &&
                     slices->endReason[i] == SliceEnd::Exited && slices->endState[i] == TaskState::Dead;
    EXPECT_TRUE(exitedThere) << "tid " << m->threads.tid[u.value];
  }
  const auto [from, to] = m->stateRowsOf(first5);
  ASSERT_LT(from, to);
  EXPECT_EQ(m->threadStates.state[to - 1], TaskState::Dead);
  EXPECT_EQ(m->threadStates.ts[to - 1], 31);
}
