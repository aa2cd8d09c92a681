// The why-not-running breakdown, idle-while-runnable and the critical path on
// schedules written by hand as ftrace text (tests/data/why, README there), imported
// like any recording. Every expected number is worked out in the comments from
// the events the file spells out; times are microseconds after 100 s.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>

#include "core/analysis/latency.h"
#include "core/analysis/stats.h"
#include "core/analysis/why.h"
#include "importers/importer.h"

using core::analysis::PathState;

namespace {

constexpr int64_t kUs = 1000;
constexpr int64_t kT0 = 100'000'000'000;  // 100 s, every file's first event

std::shared_ptr<core::TraceModel> importWhy(const std::string& name) {
  auto result = importers::importTrace(std::string(SCHEDLAB_TEST_DATA) + "/why/" + name);
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().message());
  if (!result) return nullptr;
  EXPECT_FALSE(result->error) << result->error->message();
  return result->model;
}

core::Utid task(const core::TraceModel& m, int tid) {
  const auto found = core::analysis::findTasks(m, std::to_string(tid));
  EXPECT_EQ(found.size(), 1u) << "tid " << tid;
  return found.empty() ? core::Utid() : found.front();
}

struct Expected {
  int tid;
  PathState state;
  int64_t fromUs, toUs;
};

void expectPath(const core::TraceModel& m, const core::analysis::CriticalPath& path,
                const std::vector<Expected>& expected) {
  ASSERT_EQ(path.segments.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto& s = path.segments[i];
    EXPECT_EQ(m.threads.tid[s.utid.value], expected[i].tid) << "segment " << i;
    EXPECT_EQ(s.state, expected[i].state) << "segment " << i;
    EXPECT_EQ(s.from, kT0 + expected[i].fromUs * kUs) << "segment " << i;
    EXPECT_EQ(s.to, kT0 + expected[i].toUs * kUs) << "segment " << i;
  }
}

int64_t pathSum(const core::analysis::CriticalPath& p) {
  return std::accumulate(p.segments.begin(), p.segments.end(), int64_t{0},
                         [](int64_t n, const auto& s) { return n + s.length(); });
}

}  // namespace

// chain.txt, two CPUs. taskA (101) runs on CPU 0 from 0, sleeps at 50; an
// interrupt (hardirq flag, in taskC's context on CPU 1) wakes it at 100; it runs
// on CPU 0 from 300. taskC (103) runs on CPU 1 from 0 and sleeps at 400; taskB
// (102) runs there 400..600 and sleeps. A wakes B at 1000 (target CPU 1, idle);
// B runs from 1200; a softirq in B's context wakes taskD (104) at 1900; D
// preempts B at 2000 and sleeps at 2600; B runs again, wakes C at 2800 (target
// CPU 0, where A runs) and sleeps at 3500. A sleeps at 3000 and C runs on CPU 0
// until it sleeps at 5000, the last event.
//
// C's critical path from its end (5000) back to the start (0):
//   C running 3000..5000; C runnable 2800..3000 (woken at 2800, waiting for A to
//   leave CPU 0); C was woken by B, so the path goes to B at 2800: B running
//   2600..2800; B runnable 2000..2600 (preempted by D: B's own runnable time);
//   B running 1200..2000; B runnable 1000..1200 (woken at 1000); B was woken by
//   A: A running 300..1000; A runnable 100..300; A was woken by an interrupt:
//   the chain of wakers ends, A's own sleep 50..100 is on the path, then A
//   running 0..50. 2000+200+200+600+800+200+700+200+50+50 = 5000 us, the range.
TEST(WhyChain, CriticalPathFollowsWakersAndStopsAtTheInterrupt) {
  const auto m = importWhy("chain.txt");
  ASSERT_TRUE(m);
  const auto range = core::analysis::wholeTrace(*m);
  const auto path = core::analysis::criticalPath(*m, task(*m, 103), range);
  expectPath(*m, path,
             {{101, PathState::Running, 0, 50},
              {101, PathState::Sleeping, 50, 100},
              {101, PathState::Runnable, 100, 300},
              {101, PathState::Running, 300, 1000},
              {102, PathState::Runnable, 1000, 1200},
              {102, PathState::Running, 1200, 2000},
              {102, PathState::Runnable, 2000, 2600},
              {102, PathState::Running, 2600, 2800},
              {103, PathState::Runnable, 2800, 3000},
              {103, PathState::Running, 3000, 5000}});
  EXPECT_EQ(path.stop, core::analysis::PathStop::RangeStart);
  EXPECT_EQ(pathSum(path), 5000 * kUs);
  EXPECT_EQ(path.end, kT0 + 5000 * kUs);
  // Who each wait ended behind: B's preemption behind D, C behind A (CPU 0 was
  // A's until 3000); A and B at their wakeups came in on idle CPUs.
  const auto behind = [&](size_t i) {
    const core::Utid u = path.segments[i].waitedBehind;
    return u.isValid() ? m->threads.tid[u.value] : -1;
  };
  EXPECT_EQ(behind(2), -1);
  EXPECT_EQ(behind(4), -1);
  EXPECT_EQ(behind(6), 104);
  EXPECT_EQ(behind(8), 101);
  EXPECT_EQ(behind(9), -1);  // running
}

// The breakdown of C over the whole trace [0, 5000]: running 0..400 and
// 3000..5000 = 2400; sleeping 400..2800 = 2400; runnable 2800..3000 = 200.
// While it waited, A ran on CPU 0 and B on CPU 1, 200 each (ties: lower tid
// first). Its queue CPU 0 was busy and CPU 1 too: no idle-while-runnable. One
// wakeup, by B, ending the 2400 us sleep.
TEST(WhyChain, BreakdownOfTheChainsEnd) {
  const auto m = importWhy("chain.txt");
  ASSERT_TRUE(m);
  const auto why = core::analysis::explainTask(*m, task(*m, 103), core::analysis::wholeTrace(*m));
  EXPECT_EQ(why.runningNs, 2400 * kUs);
  EXPECT_EQ(why.sleepingNs, 2400 * kUs);
  EXPECT_EQ(why.runnableNs, 200 * kUs);
  EXPECT_EQ(why.blockedNs, 0);
  EXPECT_EQ(why.unknownNs, 0);
  EXPECT_EQ(why.idleWhileRunnableNs, 0);
  ASSERT_EQ(why.antagonists.size(), 2u);
  EXPECT_EQ(m->threads.tid[why.antagonists[0].utid.value], 101);
  EXPECT_EQ(why.antagonists[0].ns, 200 * kUs);
  EXPECT_EQ(m->threads.tid[why.antagonists[1].utid.value], 102);
  EXPECT_EQ(why.antagonists[1].ns, 200 * kUs);
  ASSERT_EQ(why.wakers.size(), 1u);
  EXPECT_EQ(m->threads.tid[why.wakers[0].utid.value], 102);
  EXPECT_EQ(why.wakers[0].count, 1u);
  EXPECT_EQ(why.wakers[0].sleepNs, 2400 * kUs);
}

// B, first seen switching in at 400: running 400..600, 1200..2000, 2600..3500 =
// 1900; runnable 1000..1200 (woken) + 2000..2600 (preempted) = 800; sleeping
// 600..1000 + 3500..5000 = 1900. Antagonists: A on CPU 0 during both waits,
// 200 + 600 = 800; D on CPU 1 during the preemption, 600; CPU 1 was idle during
// 1000..1200 but that was B's own queue CPU coming out of idle, not a miss.
// Woken once, by A, ending the sleep 600..1000.
TEST(WhyChain, PreemptedTaskNamesItsPreemptor) {
  const auto m = importWhy("chain.txt");
  ASSERT_TRUE(m);
  const auto why = core::analysis::explainTask(*m, task(*m, 102), core::analysis::wholeTrace(*m));
  EXPECT_EQ(why.runningNs, 1900 * kUs);
  EXPECT_EQ(why.runnableNs, 800 * kUs);
  EXPECT_EQ(why.sleepingNs, 1900 * kUs);
  EXPECT_EQ(why.idleWhileRunnableNs, 0);
  ASSERT_EQ(why.antagonists.size(), 2u);
  EXPECT_EQ(m->threads.tid[why.antagonists[0].utid.value], 101);
  EXPECT_EQ(why.antagonists[0].ns, 800 * kUs);
  EXPECT_EQ(m->threads.tid[why.antagonists[1].utid.value], 104);
  EXPECT_EQ(why.antagonists[1].ns, 600 * kUs);
  ASSERT_EQ(why.wakers.size(), 1u);
  EXPECT_EQ(m->threads.tid[why.wakers[0].utid.value], 101);
  EXPECT_EQ(why.wakers[0].sleepNs, 400 * kUs);
}

// Interrupt wakeups have no waker task. A was woken by a hardirq in C's context:
// its waker is <irq> (not C), ending the 50 us sleep 50..100. D was woken by a
// softirq in B's context at 1900 and nothing of D is traced before: its path
// (from its end, 5000) is D sleeping 2600..5000, running 2000..2600, runnable
// 1900..2000, and stops there, the interrupt ending the chain and no earlier
// state to go on with.
TEST(WhyChain, InterruptWakeupsEndTheChain) {
  const auto m = importWhy("chain.txt");
  ASSERT_TRUE(m);
  const auto range = core::analysis::wholeTrace(*m);
  const auto a = core::analysis::explainTask(*m, task(*m, 101), range);
  ASSERT_EQ(a.wakers.size(), 1u);
  EXPECT_FALSE(a.wakers[0].utid.isValid());
  EXPECT_EQ(a.wakers[0].count, 1u);
  EXPECT_EQ(a.wakers[0].sleepNs, 50 * kUs);
  // A's own path: sleeping 3000..5000 after its last run, and from 1000 on only A.
  const auto pathA = core::analysis::criticalPath(*m, task(*m, 101), range);
  expectPath(*m, pathA,
             {{101, PathState::Running, 0, 50},
              {101, PathState::Sleeping, 50, 100},
              {101, PathState::Runnable, 100, 300},
              {101, PathState::Running, 300, 3000},
              {101, PathState::Sleeping, 3000, 5000}});

  const auto pathD = core::analysis::criticalPath(*m, task(*m, 104), range);
  expectPath(*m, pathD,
             {{104, PathState::Runnable, 1900, 2000},
              {104, PathState::Running, 2000, 2600},
              {104, PathState::Sleeping, 2600, 5000}});
  EXPECT_EQ(pathD.stop, core::analysis::PathStop::TaskUnseen);
}

// A path ending inside the range stops where the user points (--to), and a
// range starting mid-chain cuts the first segment there: C's path over
// [1100, 2900) is B runnable 1100..1200 (cut), B running, B runnable, B running
// 2600..2800, C runnable 2800..2900.
TEST(WhyChain, PathOverAPartialRange) {
  const auto m = importWhy("chain.txt");
  ASSERT_TRUE(m);
  const core::analysis::TimeRange range{kT0 + 1100 * kUs, kT0 + 2900 * kUs};
  const auto path = core::analysis::criticalPath(*m, task(*m, 103), range);
  expectPath(*m, path,
             {{102, PathState::Runnable, 1100, 1200},
              {102, PathState::Running, 1200, 2000},
              {102, PathState::Runnable, 2000, 2600},
              {102, PathState::Running, 2600, 2800},
              {103, PathState::Runnable, 2800, 2900}});
  EXPECT_EQ(pathSum(path), range.length());
}

// idle_while_runnable.txt, two CPUs. hogY (201) runs on CPU 0 from 0; it wakes
// waitX (202) at 1000 onto CPU 0 and keeps running until it is preempted by X
// at 3000. X's sched_waking names CPU 1 (task_cpu(), where it last ran), its
// sched_wakeup CPU 0: X queues where the wakeup put it; taken from the
// sched_waking, X would wait on an idle CPU 1 and miss nothing. CPU 1 is idle
// from 0 except for irqZ (203), woken by an interrupt at 1900 and running
// 2000..2500. At 3200 CPU 1 pulls Y (sched_migrate_task 0 -> 1)
// and runs it from 3300; X sleeps at 4000, the last event.
//
// X waited 1000..3000 on CPU 0, busy with Y throughout, while CPU 1 idled
// 1000..2000 and 2500..3000: idle-while-runnable 1000 + 500 = 1500. Antagonists:
// Y 2000 on CPU 0, Z 500 on CPU 1.
TEST(WhyIdleWhileRunnable, TaskWaitsOnCpu0WhileCpu1Idles) {
  const auto m = importWhy("idle_while_runnable.txt");
  ASSERT_TRUE(m);
  const auto why = core::analysis::explainTask(*m, task(*m, 202), core::analysis::wholeTrace(*m));
  EXPECT_EQ(why.runnableNs, 2000 * kUs);
  EXPECT_EQ(why.runningNs, 1000 * kUs);
  EXPECT_EQ(why.idleWhileRunnableNs, 1500 * kUs);
  ASSERT_EQ(why.antagonists.size(), 2u);
  EXPECT_EQ(m->threads.tid[why.antagonists[0].utid.value], 201);
  EXPECT_EQ(why.antagonists[0].ns, 2000 * kUs);
  EXPECT_EQ(m->threads.tid[why.antagonists[1].utid.value], 203);
  EXPECT_EQ(why.antagonists[1].ns, 500 * kUs);
  // X's path: Y running until it woke X, then X waiting and running.
  const auto path = core::analysis::criticalPath(*m, task(*m, 202), core::analysis::wholeTrace(*m));
  expectPath(*m, path,
             {{201, PathState::Running, 0, 1000},
              {202, PathState::Runnable, 1000, 3000},
              {202, PathState::Running, 3000, 4000}});
}

// Y, preempted at 3000, waits on CPU 0 (busy with X) while CPU 1 idles until the
// migration at 3200: 200 us missed; from 3200 it waits on CPU 1, idle, on its
// way in, which is no miss. Without following the migration it would be 300.
// Z waited 1900..2000 on its own idle CPU: no miss either.
TEST(WhyIdleWhileRunnable, MigrationMovesTheQueueCpu) {
  const auto m = importWhy("idle_while_runnable.txt");
  ASSERT_TRUE(m);
  const auto range = core::analysis::wholeTrace(*m);
  const auto y = core::analysis::explainTask(*m, task(*m, 201), range);
  EXPECT_EQ(y.runnableNs, 300 * kUs);
  EXPECT_EQ(y.idleWhileRunnableNs, 200 * kUs);
  ASSERT_EQ(y.antagonists.size(), 1u);
  EXPECT_EQ(y.antagonists[0].ns, 300 * kUs);  // X on CPU 0, 3000..3300
  EXPECT_EQ(core::analysis::explainTask(*m, task(*m, 203), range).idleWhileRunnableNs, 0);
}

// The run's idle-while-runnable is wall time: X's 1500 and Y's 200 do not
// overlap, 1700 us; in `stats` totals too. chain.txt has none: whenever a task
// waited on a busy CPU there, the other CPU was busy as well.
TEST(WhyIdleWhileRunnable, PerRunStatistic) {
  const auto m = importWhy("idle_while_runnable.txt");
  ASSERT_TRUE(m);
  EXPECT_EQ(core::analysis::idleWhileRunnableNs(*m, core::analysis::wholeTrace(*m)), 1700 * kUs);
  EXPECT_EQ(core::analysis::computeStats(*m).idleWhileRunnableNs, 1700 * kUs);
  // Half-open range [2600, 3100): X's 2600..3000 and Y's 3000..3100.
  EXPECT_EQ(core::analysis::idleWhileRunnableNs(*m, {kT0 + 2600 * kUs, kT0 + 3100 * kUs}), 500 * kUs);
  const auto chain = importWhy("chain.txt");
  ASSERT_TRUE(chain);
  EXPECT_EQ(core::analysis::idleWhileRunnableNs(*chain, core::analysis::wholeTrace(*chain)), 0);
}

// make_j2_report.txt: `make -j2` of four C files (tests/data/why/README.md),
// recorded on a busy 2-CPU machine (other builds ran: cc1plus, ctf_fuzzer). The
// build's last cc1 is the one that exits last, 17506 (its final switch-out, X,
// at 6281.920145, line 638). Its critical path over the whole trace, read back
// from there, hops at each wakeup to the waker (line numbers of the fixture):
//   cc1 17506 was forked by cc 17505 (wakeup_new, 6281.820757, line 470);
//   cc 17505 by make 17494 (6281.819523, line 462);
//   make was woken by cc 17497 exiting (6281.811534, line 445);
//   cc 17497 by as 17504 exiting (6281.804304, line 420), after an interrupt
//   wakeup of cc's own (its blocked stretch stays on the path);
//   as 17504 was forked by cc 17497 (6281.784916, line 382);
//   cc 17497 woken by cc1 17499 exiting (6281.773500, line 353);
//   cc1 17499 forked by cc 17497 (6281.656544, line 150);
//   cc 17497 forked by make (6281.611576, line 88);
//   make woken by its vfork child 17495 (6281.587498, line 45: the exec frees it);
//   17495 forked by make (6281.582025, line 36);
//   make (then still bash's child 17494) forked by the recorder's shell bash
//   17489 (6281.565409, line 3), which runs from the trace's first event
//   (6281.565403, line 2).
// So the path ends (read backwards) at the trace's make, and before make only
// the 6 us of the shell that started it; its segments sum to the range up to cc1's end.
TEST(WhyMakeBuild, LastCc1CriticalPathEndsAtMake) {
  const auto m = importWhy("make_j2_report.txt");
  ASSERT_TRUE(m);
  core::Utid last;
  for (const core::Utid u : core::analysis::findTasks(*m, "cc1"))
    if (!last.isValid() || m->threads.endTs[u.value] > m->threads.endTs[last.value]) last = u;
  ASSERT_TRUE(last.isValid());
  EXPECT_EQ(m->threads.tid[last.value], 17506);
  const auto range = core::analysis::wholeTrace(*m);
  const auto path = core::analysis::criticalPath(*m, last, range);
  constexpr int64_t kS = 6281'000'000'000;
  EXPECT_EQ(path.end, kS + 920'145'000);
  EXPECT_EQ(path.stop, core::analysis::PathStop::RangeStart);
  EXPECT_EQ(pathSum(path), path.end - range.from);
  EXPECT_EQ(range.from, kS + 565'403'000);
  // The tasks in path order, each with the time the path enters it.
  std::vector<std::pair<int, int64_t>> hops;
  for (const auto& s : path.segments)
    if (hops.empty() || hops.back().first != m->threads.tid[s.utid.value])
      hops.emplace_back(m->threads.tid[s.utid.value], s.from - kS);
  const std::vector<std::pair<int, int64_t>> expected = {
      {17489, 565'403'000}, {17494, 565'409'000}, {17495, 582'025'000}, {17494, 587'498'000},
      {17497, 611'576'000}, {17499, 656'544'000}, {17497, 773'500'000}, {17504, 784'916'000},
      {17497, 804'304'000}, {17494, 811'534'000}, {17505, 819'523'000}, {17506, 820'757'000}};
  EXPECT_EQ(hops, expected);
  EXPECT_EQ(m->comm(path.segments[1].utid), "make");

  // From make's own start (its fork), the path begins with make and covers the range.
  const core::analysis::TimeRange fromMake{kS + 565'409'000, range.to};
  const auto fromMakePath = core::analysis::criticalPath(*m, last, fromMake);
  ASSERT_FALSE(fromMakePath.segments.empty());
  EXPECT_EQ(m->threads.tid[fromMakePath.segments.front().utid.value], 17494);
  EXPECT_EQ(pathSum(fromMakePath), fromMakePath.end - fromMake.from);
}

// Latency samples carry their task and time: in chain.txt the waits that ended
// in a switch-in are A woken 100..300, B woken 1000..1200, D woken 1900..2000,
// B preempted 2000..2600 and C woken 2800..3000. B's worst scheduling delay is
// the preemption (600 at 2000), its worst wakeup latency 200 at 1000; the
// per-task distributions agree with the statistics'.
TEST(WhyLatency, SamplesWithTheirWorstInstance) {
  const auto m = importWhy("chain.txt");
  ASSERT_TRUE(m);
  const auto range = core::analysis::wholeTrace(*m);
  const auto samples = core::analysis::latencySamples(*m, range);
  ASSERT_EQ(samples.size(), 5u);
  const int64_t starts[] = {100, 1000, 1900, 2000, 2800};
  const int64_t lengths[] = {200, 200, 100, 600, 200};
  const int tids[] = {101, 102, 104, 102, 103};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(samples[i].ts, kT0 + starts[i] * kUs) << i;
    EXPECT_EQ(samples[i].ns, lengths[i] * kUs) << i;
    EXPECT_EQ(m->threads.tid[samples[i].utid.value], tids[i]) << i;
    EXPECT_EQ(samples[i].woken, i != 3) << i;
  }
  const auto tasks = core::analysis::taskLatencies(*m, samples);
  const auto b = std::find_if(tasks.begin(), tasks.end(), [&](const auto& t) { return m->threads.tid[t.utid.value] == 102; });
  ASSERT_NE(b, tasks.end());
  EXPECT_EQ(b->worstDelay.ts, kT0 + 2000 * kUs);
  EXPECT_EQ(b->worstDelay.ns, 600 * kUs);
  EXPECT_EQ(b->worstWakeup.ts, kT0 + 1000 * kUs);
  EXPECT_EQ(b->schedDelay.count, 2u);
  EXPECT_EQ(b->wakeupLatency.count, 1u);
  const auto stats = core::analysis::computeStats(*m, range);
  for (const auto& t : stats.tasks) {
    const auto l = std::find_if(tasks.begin(), tasks.end(), [&](const auto& x) { return x.utid == t.utid; });
    const uint64_t expectedCount = l == tasks.end() ? 0 : l->schedDelay.count;
    EXPECT_EQ(t.schedDelay.count, expectedCount) << t.comm;
    if (l != tasks.end()) {
      EXPECT_EQ(t.schedDelay.max, l->schedDelay.max) << t.comm;
    }
  }
}

// Affinity (replays record it): waitX pinned to CPU 0 could not have used the
// idle CPU 1, so it missed nothing; the run keeps Y's 200 us. Pinned to both
// CPUs it is as free as a task with no affinity: 1500 and 1700 again. An
// antagonist only counts on CPUs the task may use: pinned, X's is Y alone.
TEST(WhyIdleWhileRunnable, AffinityLimitsTheCpusThatCount) {
  auto result = importers::importTrace(std::string(SCHEDLAB_TEST_DATA) + "/why/idle_while_runnable.txt");
  ASSERT_TRUE(result.has_value());
  auto m = result->model;
  const core::Utid x = task(*m, 202);
  const auto range = core::analysis::wholeTrace(*m);
  m->threads.affinity[x.value] = {0};
  const auto pinned = core::analysis::explainTask(*m, x, range);
  EXPECT_EQ(pinned.idleWhileRunnableNs, 0);
  ASSERT_EQ(pinned.antagonists.size(), 1u);
  EXPECT_EQ(m->threads.tid[pinned.antagonists[0].utid.value], 201);
  EXPECT_EQ(core::analysis::idleWhileRunnableNs(*m, range), 200 * kUs);
  m->threads.affinity[x.value] = {0, 1};
  EXPECT_EQ(core::analysis::explainTask(*m, x, range).idleWhileRunnableNs, 1500 * kUs);
  EXPECT_EQ(core::analysis::idleWhileRunnableNs(*m, range), 1700 * kUs);
}
