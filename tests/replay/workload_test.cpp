// Workload extraction from small hand-built models, and the rt-app reader.
#include <gtest/gtest.h>

#include <algorithm>

#include "replay/workload/json_reader.h"
#include "replay/workload/rtapp_reader.h"
#include "replay/workload/trace_extractor.h"
#include "replay_test_util.h"
#include "support/trace_builder.h"

using replay::WakeKind;

namespace {

// CPU 0: task 10 runs 1000..2000, wakes task 20 at 1500 (its work point 500),
// sleeps at 2000. CPU 1 (idle, its first event at 900): 20 runs 1600..1900 and
// sleeps; an interrupt on idle CPU 1 wakes it at 3000; it runs 3100..3500 and exits.
std::shared_ptr<core::TraceModel> pingModel() {
  testing_support::TraceBuilder b;
  b.other(900, 1, 0);
  b.sw(1000, 0, 0, "R", 10);
  b.waking(1500, 0, 10, 20, 1).wakeup(1501, 0, 10, 20, 1);
  b.sw(1600, 1, 0, "R", 20);
  b.sw(1900, 1, 20, "S", 0);
  b.sw(2000, 0, 10, "S", 0);
  b.waking(3000, 1, 0, 20, 1, core::kCtxHardIrq).wakeup(3001, 1, 0, 20, 1);
  b.sw(3100, 1, 0, "R", 20);
  b.exit(3400, 1, 20);
  b.sw(3500, 1, 20, "X", 0);
  b.other(4000, 0, 0);
  return b.build();
}

const replay::Task* byTid(const replay::Workload& w, int tid) {
  for (const auto& t : w.tasks)
    if (t.tid == tid) return &t;
  return nullptr;
}

}  // namespace

TEST(TraceExtractor, BurstsDependenciesAndSleeps) {
  const auto model = pingModel();
  auto w = replay::extractWorkload(*model);
  ASSERT_TRUE(w.has_value()) << w.error().message();
  ASSERT_EQ(w->tasks.size(), 2u);
  const replay::Task* t10 = byTid(*w, 10);
  const replay::Task* t20 = byTid(*w, 20);
  ASSERT_TRUE(t10 && t20);

  // 10: one burst of 1000 ns, present at trace start, no exit.
  ASSERT_EQ(t10->bursts.size(), 1u);
  EXPECT_EQ(t10->bursts[0].work, 1000);
  EXPECT_EQ(t10->bursts[0].wake, WakeKind::None);
  EXPECT_EQ(t10->startTs, 1000);
  EXPECT_FALSE(t10->exits);
  // Its wakeup of 20 is a trigger at its own work point 500.
  ASSERT_EQ(t10->triggers.size(), 1u);
  EXPECT_EQ(t10->triggers[0].burst, 0u);
  EXPECT_EQ(t10->triggers[0].offset, 500);
  EXPECT_EQ(t10->triggers[0].targetBurst, 0u);
  EXPECT_EQ(t10->triggers[0].kind, replay::TriggerKind::Wake);

  // 20: asleep from the start, woken by 10; then woken from interrupt context
  // after a sleep of 3000 - 1900 ns; exits after 400 ns of work.
  ASSERT_EQ(t20->bursts.size(), 2u);
  EXPECT_EQ(t20->bursts[0].wake, WakeKind::Task);
  EXPECT_EQ(t20->bursts[0].waker, static_cast<replay::TaskId>(t10 - w->tasks.data()));
  EXPECT_EQ(t20->bursts[0].work, 300);
  EXPECT_EQ(t20->bursts[1].wake, WakeKind::Sleep);
  EXPECT_EQ(t20->bursts[1].sleepNs, 1100);
  EXPECT_EQ(t20->bursts[1].work, 400);
  EXPECT_TRUE(t20->exits);

  EXPECT_EQ(w->unmodelled.wakeupsFromInterrupt, 1u);
  EXPECT_EQ(w->unmodelled.tasksStartedBeforeTrace, 1u);
  // No task was created in the trace, so every task counts: 1000 .. 3500.
  EXPECT_EQ(w->recordedMakespanNs, 2500);
  // Wakeup at 1500 by 10 on CPU 0 onto idle CPU 1, switch-in at 1600: the one
  // remote-idle sample; the interrupt on idle CPU 1 at 3000, switch-in at 3100:
  // the one local-idle sample; nothing was preempted.
  for (auto path : {replay::WakeupPath::RemoteIdle, replay::WakeupPath::LocalIdle}) {
    const auto& d = w->wakeupDelays[static_cast<size_t>(path)];
    EXPECT_EQ(d.samples, 1u);
    EXPECT_EQ(d.median(), 100);
  }
  for (auto path : {replay::WakeupPath::LocalPreempt, replay::WakeupPath::RemotePreempt})
    EXPECT_EQ(w->wakeupDelays[static_cast<size_t>(path)].samples, 0u);
}

TEST(TraceExtractor, ReplayThroughCfsFollowsTheDependencies) {
  const auto model = pingModel();
  auto w = replay::extractWorkload(*model);
  ASSERT_TRUE(w.has_value());
  const auto r = replay_test::replayOn(*w, "cfs", 2);
  ASSERT_TRUE(r.model);
  EXPECT_TRUE(r.validation.workConserved);
  // 20 is woken when 10 reaches 500 ns of work (t=1500), lands on idle CPU 1
  // after the recorded 100 ns of IPI and idle exit, runs 300 ns, sleeps 1100 ns
  // (its timer fires on its own idle CPU at 3000, which leaves idle in the
  // recorded 100 ns), runs 400 ns and exits: 1600..1900 and 3100..3500.
  const auto& s1 = r.model->cpuSlices[1];
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (size_t i = 0; i < s1.size(); ++i)
    if (s1.kind[i] == core::SliceKind::Task) runs.emplace_back(s1.ts[i], s1.end(i));
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0], std::make_pair(int64_t{1600}, int64_t{1900}));
  EXPECT_EQ(runs[1], std::make_pair(int64_t{3100}, int64_t{3500}));
  EXPECT_EQ(r.validation.makespanReplayNs, 2500);
  EXPECT_EQ(r.validation.makespanRecordedNs, 2500);
}

// A pipeline's reader (20) runs before its writer (10) ever woke it, as awk |
// grep did in the shared nicemix recording: 20 runs 1000..2000, a hog (30)
// takes the CPU, 10 runs 3000..3500 and blocks (pipe full), and 20 goes on at
// 3500 with what 10 wrote; 20 blocks at 4000, and 10, woken by an interrupt,
// wakes it at 4600 (its work point 500 + 100). The reader's switch-in at 3500
// is a dataflow gate on 10, the waker of the first burst a task woke: the
// rest of 20's burst waits for 10's recorded progress at 3500.
TEST(TraceExtractor, ReaderStartedBeforeItsWriterWroteIsGatedOnItsFirstWaker) {
  testing_support::TraceBuilder b;
  b.sw(1000, 0, 0, "R", 20);
  b.sw(2000, 0, 20, "R", 30);
  b.sw(3000, 0, 30, "R", 10);
  b.sw(3500, 0, 10, "S", 20);
  b.sw(4000, 0, 20, "S", 30);
  b.waking(4200, 0, 0, 10, 0, core::kCtxHardIrq).wakeup(4201, 0, 0, 10, 0);
  b.sw(4500, 0, 30, "R", 10);
  b.waking(4600, 0, 10, 20, 0).wakeup(4601, 0, 10, 20, 0);
  b.sw(4700, 0, 10, "S", 20);
  b.sw(5000, 0, 20, "S", 30);
  b.other(5500, 0, 30);
  auto w = replay::extractWorkload(*b.build());
  ASSERT_TRUE(w.has_value()) << w.error().message();
  const replay::Task* reader = byTid(*w, 20);
  const replay::Task* writer = byTid(*w, 10);
  ASSERT_TRUE(reader && writer);
  const auto writerId = static_cast<replay::TaskId>(writer - w->tasks.data());
  EXPECT_EQ(w->dataflowGates, 1u);
  ASSERT_EQ(reader->bursts.size(), 3u);
  EXPECT_FALSE(reader->bursts[0].gate);
  EXPECT_EQ(reader->bursts[0].work, 1000);
  EXPECT_TRUE(reader->bursts[1].gate);
  EXPECT_EQ(reader->bursts[1].waker, writerId);
  EXPECT_EQ(reader->bursts[1].recordedStart, 3500);
  EXPECT_EQ(reader->bursts[1].work, 500);
  EXPECT_EQ(reader->bursts[2].waker, writerId);
  // The writer opens the gate at the end of its first burst (500 ns of work),
  // and wakes the reader's last burst 100 ns into its second.
  ASSERT_EQ(writer->triggers.size(), 2u);
  for (const replay::Trigger& tr : writer->triggers) {
    const bool gate = tr.targetBurst == 1;
    EXPECT_EQ(tr.burst, gate ? 0u : 1u);
    EXPECT_EQ(tr.offset, gate ? 500 : 100);
    EXPECT_EQ(tr.targetBurst, gate ? 1u : 2u);
  }
}

// A wakeup that ends an uninterruptible sleep is a lock or I/O handed over in
// the kernel, not data (as two compilers of a parallel build hand over a page
// lock): it names no producer. 10 runs on CPU 1 throughout; 20 runs on CPU 0,
// sleeps at 1500 and is woken by 10 at 1800 (task context); 20 runs 1850..3000,
// a hog (30) woken by an interrupt takes CPU 0 until 3500, and 20 goes on at
// 3500 while 10 has run on since the wakeup, until it sleeps at 4000. Had 20
// slept interruptibly (a pipe), that switch-in would wait for 10's progress
// at 3500: a gate. When 10 hands it the lock once more (woken at 4500 from a
// second D sleep), the two take turns, and the gate keeps their order.
TEST(TraceExtractor, UninterruptibleSleepsNameNoProducer) {
  const auto gates = [](const char* sleepState, bool secondHandover) {
    testing_support::TraceBuilder b;
    b.sw(1000, 1, 0, "R", 10);
    b.sw(1000, 0, 0, "R", 20);
    b.sw(1500, 0, 20, sleepState, 0);
    b.waking(1800, 1, 10, 20, 0).wakeup(1801, 1, 10, 20, 0);
    b.sw(1850, 0, 0, "R", 20);
    b.waking(2900, 0, 0, 30, 0, core::kCtxHardIrq).wakeup(2901, 0, 0, 30, 0);
    b.sw(3000, 0, 20, "R", 30);
    b.sw(3500, 0, 30, "S", 20);
    if (secondHandover) {
      b.sw(4000, 0, 20, "D", 0);
      b.waking(4500, 1, 10, 20, 0).wakeup(4501, 1, 10, 20, 0);
      b.sw(4550, 0, 0, "R", 20);
      b.sw(4800, 0, 20, "S", 0);
    } else {
      b.sw(4000, 0, 20, "S", 0);
    }
    b.sw(5000, 1, 10, "S", 0);
    auto w = replay::extractWorkload(*b.build());
    EXPECT_TRUE(w.has_value()) << w.error().message();
    return w ? w->dataflowGates : ~uint64_t{0};
  };
  EXPECT_EQ(gates("S", false), 1u);
  EXPECT_EQ(gates("D", false), 0u);
  EXPECT_EQ(gates("I", false), 0u);  // TASK_IDLE: a kernel thread's uninterruptible wait
  EXPECT_EQ(gates("D", true), 1u);
}

// A child waking its parent is its exit, not data: 10 forks 40 at 1200, a hog
// (30) preempts 10 at 1500, 40 runs, 10 goes on at 2300 and waits for 40 at
// 2500, which wakes it as it exits at 2700. 10's switch-in at 2300 is no gate.
TEST(TraceExtractor, ParentIsNotGatedOnItsChild) {
  testing_support::TraceBuilder b;
  b.sw(1000, 0, 0, "R", 10);
  b.fork(1200, 0, 10, 40).wakeup(1201, 0, 10, 40, 0, true);
  b.sw(1500, 0, 10, "R", 30);
  b.sw(2000, 0, 30, "R", 40);
  b.sw(2300, 0, 40, "R", 10);
  b.sw(2500, 0, 10, "S", 40);
  b.exit(2700, 0, 40);
  b.waking(2710, 0, 40, 10, 0).wakeup(2711, 0, 40, 10, 0);
  b.sw(2750, 0, 40, "X", 10);
  b.sw(3000, 0, 10, "S", 30);
  b.other(3500, 0, 30);
  auto w = replay::extractWorkload(*b.build());
  ASSERT_TRUE(w.has_value()) << w.error().message();
  const replay::Task* parent = byTid(*w, 10);
  const replay::Task* child = byTid(*w, 40);
  ASSERT_TRUE(parent && child);
  EXPECT_EQ(child->parent, static_cast<replay::TaskId>(parent - w->tasks.data()));
  EXPECT_EQ(w->dataflowGates, 0u);
  ASSERT_EQ(parent->bursts.size(), 2u);
  EXPECT_EQ(parent->bursts[0].work, 700);
  EXPECT_EQ(parent->bursts[1].waker, static_cast<replay::TaskId>(child - w->tasks.data()));
}

// Two tasks start together on two CPUs: A runs `aWork` and at 50 us of its work
// wakes B's second burst; B's first burst is `bFirst` long. B ending it at 20 us
// finds A 30 us short of its point and blocks; at 70 us it finds A 20 us past
// it and runs on (the recorded block lost), or 10 us past it when A ended at
// 60 us.
TEST(Engine, MeasuresHowFarTheWakerIsFromItsRecordedPoint) {
  const auto run = [](int64_t bFirst, int64_t aWork = 100'000) {
    replay::Workload w;
    w.kind = "rt-app";
    replay::Task a = replay_test::exitingTask(100, "a", 0, {replay::Burst{.work = aWork}});
    a.triggers.push_back(replay::Trigger{.offset = 50'000, .burst = 0, .target = 1, .targetBurst = 1});
    const replay::Task b = replay_test::exitingTask(
        101, "b", 1, {replay::Burst{.work = bFirst}, replay::Burst{.work = 10'000, .wake = WakeKind::Task, .waker = 0}});
    w.tasks = {a, b};
    return replay_test::replayOn(w, "cfs", 2);
  };
  const auto kept = run(20'000);
  EXPECT_EQ(kept.stats.taskBlocks, 1u);
  ASSERT_TRUE(kept.wakerDrift);
  EXPECT_EQ(kept.wakerDrift->medianShortNs, 30'000);
  EXPECT_FALSE(kept.wakerDrift->medianPastNs);
  const auto lost = run(70'000);
  EXPECT_EQ(lost.stats.taskBlocksSkipped, 1u);
  ASSERT_TRUE(lost.wakerDrift);
  EXPECT_EQ(lost.wakerDrift->medianPastNs, 20'000);
  EXPECT_FALSE(lost.wakerDrift->medianShortNs);
  const auto afterExit = run(70'000, 60'000);
  ASSERT_TRUE(afterExit.wakerDrift);
  EXPECT_EQ(afterExit.wakerDrift->medianPastNs, 10'000);
}

TEST(Engine, WakerDriftTakesTheMedianOfEachSide) {
  std::vector<int64_t> past = {5, 1, 9}, none;
  const auto drift = replay::wakerDrift(past, none);
  ASSERT_TRUE(drift);
  EXPECT_EQ(drift->medianPastNs, 5);
  EXPECT_FALSE(drift->medianShortNs);
  EXPECT_FALSE(replay::wakerDrift(none, none));
}

// Two tasks, each woken 12 times by a timer interrupt on its own idle CPU.
// 30 (CPU 0) wakes on a 10 ms grid, give or take a few us, and runs 100 to
// 900 us each time: its intervals hold, its sleeps take up the runs, as an
// absolute timer (clock_nanosleep(TIMER_ABSTIME)) does. 40 (CPU 1) runs as
// long and then sleeps 7 ms give or take a few us: its sleeps hold and its
// intervals take up the runs, as nanosleep() does.
TEST(TraceExtractor, TimerSleepsOnAGridAreAbsoluteAndFixedLengthsRelative) {
  constexpr int kCycles = 12;
  const int64_t runs[] = {100'000, 900'000, 300'000, 700'000, 500'000, 200'000,
                          800'000, 400'000, 600'000, 150'000, 850'000, 450'000};
  const int64_t jitter[] = {0, 2'000, 1'000, 3'000, 0, 1'500, 2'500, 500, 1'000, 0, 3'000, 2'000};
  struct Ev {
    int64_t ts;
    int cpu, tid;
    bool wake;
  };
  std::vector<Ev> evs;
  int64_t wake40 = 5'000'000;
  for (int k = 0; k < kCycles; ++k) {
    const int64_t wake30 = 10'000'000 * (k + 1) + jitter[k];
    evs.push_back({wake30, 0, 30, true});
    evs.push_back({wake30 + 10 + runs[k], 0, 30, false});
    evs.push_back({wake40, 1, 40, true});
    evs.push_back({wake40 + 10 + runs[k], 1, 40, false});
    wake40 += 10 + runs[k] + 7'000'000 + jitter[k];
  }
  std::sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) { return a.ts < b.ts; });
  testing_support::TraceBuilder b;
  b.other(1'000, 0, 0).other(1'000, 1, 0);
  for (const Ev& e : evs) {
    if (e.wake) {
      b.waking(e.ts, e.cpu, 0, e.tid, e.cpu, core::kCtxHardIrq).wakeup(e.ts + 1, e.cpu, 0, e.tid, e.cpu);
      b.sw(e.ts + 10, e.cpu, 0, "R", e.tid);
    } else {
      b.sw(e.ts, e.cpu, e.tid, "S", 0);
    }
  }
  const auto model = b.build();
  auto w = replay::extractWorkload(*model);
  ASSERT_TRUE(w.has_value()) << w.error().message();
  const replay::Task* t30 = byTid(*w, 30);
  const replay::Task* t40 = byTid(*w, 40);
  ASSERT_TRUE(t30 && t40);
  ASSERT_EQ(t30->bursts.size(), static_cast<size_t>(kCycles));
  ASSERT_EQ(t40->bursts.size(), static_cast<size_t>(kCycles));
  EXPECT_EQ(w->timerTasksJudged, 2u);
  EXPECT_TRUE(t30->absoluteTimers);
  EXPECT_FALSE(t40->absoluteTimers);
  for (int k = 0; k < kCycles; ++k) {
    EXPECT_EQ(t30->bursts[static_cast<size_t>(k)].wake, WakeKind::Sleep);
    EXPECT_TRUE(t30->bursts[static_cast<size_t>(k)].interruptWake);
    EXPECT_TRUE(t40->bursts[static_cast<size_t>(k)].interruptWake);
  }
}

// Hog 10 runs on CPU 0 throughout. Task 50 runs 5 us at a time and sleeps; a
// softirq on CPU 0 wakes it 12 times, its previous CPU 1 idle each time. The
// kernel kept it on busy CPU 0 at every third wakeup (migrated there; CPU 1
// pulls it 4 ms later) and sent it to CPU 1 at the others: 4 of 12. Not
// counted: a wakeup by hog 10 itself (a task's, not an interrupt's), and an
// interrupt's on CPU 1 while it idles (the interrupted CPU is not busy).
TEST(TraceExtractor, CountsInterruptWakeupsKeptOnABusyCpuBesideAnIdleOne) {
  testing_support::TraceBuilder b;
  b.sw(1'000, 0, 0, "R", 10).other(1'000, 1, 0);
  b.sw(2'000, 1, 0, "R", 50).sw(2'005, 1, 50, "S", 0);
  int64_t ts = 10'000'000;
  for (int k = 0; k < 12; ++k, ts += 10'000'000) {
    b.waking(ts, 0, 10, 50, 1, core::kCtxSoftIrq);
    if (k % 3 == 2) {
      b.migrate(ts + 1, 0, 50, 1, 0).wakeup(ts + 2, 0, 10, 50, 0);
      b.migrate(ts + 4'000'000, 1, 50, 0, 1).sw(ts + 4'000'001, 1, 0, "R", 50);
      b.sw(ts + 4'000'006, 1, 50, "S", 0);
    } else {
      b.wakeup(ts + 1, 0, 10, 50, 1).sw(ts + 10'000, 1, 0, "R", 50).sw(ts + 10'005, 1, 50, "S", 0);
    }
  }
  b.waking(ts, 0, 10, 50, 1).wakeup(ts + 1, 0, 10, 50, 1).sw(ts + 10'000, 1, 0, "R", 50).sw(ts + 10'005, 1, 50, "S", 0);
  ts += 10'000'000;
  b.waking(ts, 1, 0, 50, 1, core::kCtxHardIrq).wakeup(ts + 1, 1, 0, 50, 1).sw(ts + 10'000, 1, 0, "R", 50);
  b.sw(ts + 10'005, 1, 50, "S", 0).other(ts + 20'000, 0, 10);
  auto w = replay::extractWorkload(*b.build());
  ASSERT_TRUE(w.has_value()) << w.error().message();
  const replay::Task* t50 = byTid(*w, 50);
  const replay::Task* hog = byTid(*w, 10);
  ASSERT_TRUE(t50 && hog);
  EXPECT_EQ(t50->irqWakeupsBesideIdle, 12u);
  EXPECT_EQ(t50->irqWakeupsKeptBusy, 4u);
  EXPECT_EQ(hog->irqWakeupsBesideIdle, 0u);
}

TEST(TraceExtractor, ForkStartsChildAtParentsWorkPoint) {
  testing_support::TraceBuilder b;
  b.sw(1000, 0, 0, "R", 10);
  b.fork(1200, 0, 10, 40).wakeup(1201, 0, 10, 40, 0, true);
  b.sw(1300, 0, 10, "R", 40);  // child runs first
  b.sw(1500, 0, 40, "S", 10);
  b.sw(2000, 0, 10, "S", 0);
  b.other(2500, 0, 0);
  auto w = replay::extractWorkload(*b.build());
  ASSERT_TRUE(w.has_value());
  const replay::Task* parent = byTid(*w, 10);
  const replay::Task* child = byTid(*w, 40);
  ASSERT_TRUE(parent && child);
  EXPECT_EQ(child->parent, static_cast<replay::TaskId>(parent - w->tasks.data()));
  ASSERT_EQ(parent->triggers.size(), 1u);
  EXPECT_EQ(parent->triggers[0].kind, replay::TriggerKind::Fork);
  EXPECT_EQ(parent->triggers[0].offset, 200);  // 10 had run 1000..1200
  EXPECT_EQ(parent->bursts[0].work, 300 + 500);
  EXPECT_EQ(child->bursts[0].work, 200);
  // Only the child was created in the trace: the makespan is its burst (1201..1500).
  EXPECT_TRUE(child->inMakespan);
  EXPECT_FALSE(parent->inMakespan);
  EXPECT_EQ(w->recordedMakespanNs, 1500 - 1201);

  const auto r = replay_test::replayOn(*w, "bfs", 1);
  EXPECT_TRUE(r.validation.workConserved);
  ASSERT_TRUE(r.model);
  EXPECT_EQ(r.model->taskEvents.size(), 1u);  // the fork, at the parent's work point
  EXPECT_EQ(r.model->taskEvents.ts[0], 1200);
}

// make (10) vforks 40 and waits (D); 40 runs 1210..1700, wakes make at 1600
// (the vfork release), and its exec is traced at 1650. sched_exec() ran at the
// start of execve(), before the release: the exec trigger goes just before the
// wakeup (work point 389 of 40's burst, the wakeup's 390), and a second exec
// traced after a block of its own (2150, in a burst that began at 2100) stays
// at its traced point (work 50 of that burst).
TEST(TraceExtractor, ExecBalancesBeforeTheVforkParentIsReleased) {
  testing_support::TraceBuilder b;
  b.sw(1000, 0, 0, "R", 10);
  b.fork(1200, 0, 10, 40).wakeup(1201, 0, 10, 40, 0, true);
  b.sw(1210, 0, 10, "D", 40);
  b.waking(1600, 0, 40, 10, 0).wakeup(1601, 0, 40, 10, 0);
  b.exec(1650, 0, 40, "/usr/bin/as");
  b.sw(1700, 0, 40, "S", 10);
  b.sw(2000, 0, 10, "S", 0);
  b.waking(2090, 0, 0, 40, 0, core::kCtxHardIrq).wakeup(2091, 0, 0, 40, 0);
  b.sw(2100, 0, 0, "R", 40);
  b.exec(2150, 0, 40, "/usr/bin/true");
  b.sw(2300, 0, 40, "S", 0);
  b.other(2500, 0, 0);
  auto w = replay::extractWorkload(*b.build());
  ASSERT_TRUE(w.has_value()) << w.error().message();
  const replay::Task* child = byTid(*w, 40);
  ASSERT_TRUE(child);
  const auto self = static_cast<replay::TaskId>(child - w->tasks.data());
  std::vector<replay::Trigger> execs, wakes;
  for (const auto& tr : child->triggers) (tr.kind == replay::TriggerKind::Exec ? execs : wakes).push_back(tr);
  ASSERT_EQ(execs.size(), 2u);
  ASSERT_EQ(wakes.size(), 1u);
  EXPECT_EQ(execs[0].target, self);
  EXPECT_EQ(execs[0].burst, 0u);
  EXPECT_EQ(execs[0].offset, 389);
  EXPECT_EQ(wakes[0].offset, 390);
  EXPECT_EQ(execs[1].burst, 1u);
  EXPECT_EQ(execs[1].offset, 50);
  EXPECT_EQ(w->unmodelled.execsNotRunning, 0u);
}

// The preemptions the tick delays are measured from: a task's slice that
// ends preempted and hands its CPU straight to another task, with no
// effective wakeup aimed at that CPU in the 250 us before. Worked by hand:
// - CPU 0 at 100 us: the only wakeup so far (2 us) was aimed at CPU 1: a tick.
// - CPU 0 at 200 us: 30 was woken onto CPU 0 at 190 us: wakeup preemption.
// - CPU 1 at 250 us: 50 was woken onto CPU 1 at 2 us, 248 us before: wakeup preemption.
// - CPU 1 at 500 us: the last wakeup aimed at CPU 1 is 498 us old: a tick.
// - CPU 0 at 600 us: the last one aimed at CPU 0 is 410 us old: a tick.
// - CPU 0 at 700 us: the waking of 30 at 650 us found it runnable already
//   (preempted at 600 us): no effect, so it explains nothing: a tick.
TEST(TraceExtractor, TickPreemptionsAreThoseNoWakeupOnTheirCpuExplains) {
  testing_support::TraceBuilder b;
  b.sw(1'000, 0, 0, "R", 10);
  b.sw(1'000, 1, 0, "R", 40);
  b.waking(2'000, 0, 10, 50, 1).wakeup(2'001, 0, 10, 50, 1);
  b.sw(100'000, 0, 10, "R", 20);
  b.waking(190'000, 1, 40, 30, 0).wakeup(190'001, 1, 40, 30, 0);
  b.sw(200'000, 0, 20, "R", 30);
  b.sw(250'000, 1, 40, "R", 50);
  b.sw(500'000, 1, 50, "R", 40);
  b.sw(600'000, 0, 30, "R", 10);
  b.waking(650'000, 1, 40, 30, 0).wakeup(650'001, 1, 40, 30, 0);
  b.sw(700'000, 0, 10, "R", 20);
  b.other(800'000, 0, 0);
  b.other(800'000, 1, 0);
  const auto model = b.build();
  auto w = replay::extractWorkload(*model);
  ASSERT_TRUE(w.has_value()) << w.error().message();
  std::vector<int64_t> ticks = w->tickPreemptions;
  std::sort(ticks.begin(), ticks.end());
  EXPECT_EQ(ticks, (std::vector<int64_t>{100'000, 500'000, 600'000, 700'000}));

  replay::ExtractOptions notAsked;
  notAsked.tickPreemptions = false;
  auto without = replay::extractWorkload(*model, notAsked);
  ASSERT_TRUE(without.has_value());
  EXPECT_TRUE(without->tickPreemptions.empty());
}

TEST(TraceExtractor, PerCpuKthreadNames) {
  EXPECT_EQ(replay::perCpuKthreadCpu("ksoftirqd/3"), 3);
  EXPECT_EQ(replay::perCpuKthreadCpu("kworker/1:2H"), 1);
  EXPECT_EQ(replay::perCpuKthreadCpu("kworker/u8:1"), -1);
  EXPECT_EQ(replay::perCpuKthreadCpu("migration/0"), 0);
  EXPECT_EQ(replay::perCpuKthreadCpu("bash"), -1);
  EXPECT_TRUE(replay::looksLikeKernelThread("kworker/0:1"));
  EXPECT_TRUE(replay::looksLikeKernelThread("kdamond.0"));  // DAMON
  EXPECT_FALSE(replay::looksLikeKernelThread("hackbench"));
}

TEST(TraceExtractor, EmptyModelIsAnError) {
  testing_support::TraceBuilder b;
  b.other(100, 0, 0);
  auto w = replay::extractWorkload(*b.build());
  ASSERT_FALSE(w.has_value());
  EXPECT_NE(w.error().message().find("no task ever ran"), std::string::npos);
}

// --- tick delays (tickSwitchDelays) ---

namespace {

// The tick delays' sample count, median and extremes.
void expectTickDelays(const replay::DelayDistribution& d, size_t samples, int64_t median, int64_t last) {
  EXPECT_EQ(d.samples, samples);
  EXPECT_EQ(d.median(), median);
  ASSERT_FALSE(d.quantiles.empty());
  EXPECT_EQ(d.quantiles.front(), 0);  // the earliest switch stands for the tick
  EXPECT_EQ(d.quantiles.back(), last);
}

}  // namespace

// Tick preemptions at 4 ms periods (HZ=250) from a phase of 1.234567 ms, each
// 0, 1, 2, 3 or 4 us late (20 of each), and two switches half a period off
// the grid. All 100 lie in one 20 us window of phases, whose median (2 us)
// places the grid, so the offsets are -2..2 us; the two off the grid are left
// out; less the 1st percentile (-2 us) the delays are 0..4 us: median 2 us,
// 100 samples.
TEST(TickDelays, OffsetsFromTheGridWhereTheSwitchesCrowd) {
  constexpr int64_t kPeriod = 4'000'000, kPhase = 1'234'567, kOrigin = 293'000'000'000;
  std::vector<int64_t> switches;
  for (int64_t i = 0; i < 100; ++i) switches.push_back(kOrigin + kPhase + i * kPeriod + (i % 5) * 1000);
  switches.push_back(kOrigin + kPhase + 7 * kPeriod + kPeriod / 2);
  switches.push_back(kOrigin + kPhase + 9 * kPeriod + kPeriod / 2);
  expectTickDelays(replay::tickSwitchDelays(switches, kPeriod), 100, 2000, 4000);
  // The same switches are not on a 3.3 ms grid (HZ=300): spread over its phases.
  EXPECT_EQ(replay::tickSwitchDelays(switches, 3'333'333).samples, 0u);
  // Too few to tell a grid.
  EXPECT_EQ(replay::tickSwitchDelays({kOrigin, kOrigin + kPeriod}, kPeriod).samples, 0u);
}

// A light load has few tick preemptions and some of other causes (the fourth
// set's interactive-batch perf.data: 7 of 9 on the grid). Here 9 are on the
// grid, 0-8 us late (one of each), and 6 elsewhere, 150 us to 1.7 ms before
// the tick. The 9 crowd in one 20 us window: the grid lies at their median
// (4 us), the offsets are -4..4 us, the 6 are left out, and the delays are
// 0..8 us, median 4 us. A circular mean of all 15 phases lands 211 us before
// the tick: only the switch 150 us before it lies within 100 us of that,
// fewer than half: no grid found.
TEST(TickDelays, PreemptionsOffTheGridDoNotMoveIt) {
  constexpr int64_t kPeriod = 4'000'000, kPhase = 1'500'000, kOrigin = 39'764'000'000'000;
  std::vector<int64_t> switches;
  for (int64_t i = 0; i < 9; ++i) switches.push_back(kOrigin + kPhase + (3 * i + 1) * kPeriod + i * 1000);
  int64_t tick = 30;
  for (int64_t before : {150'000, 330'000, 530'000, 1'420'000, 1'700'000, 1'670'000})
    switches.push_back(kOrigin + kPhase + (tick += 7) * kPeriod - before);
  expectTickDelays(replay::tickSwitchDelays(switches, kPeriod), 9, 4000, 8000);
}

// --- rt-app reader ---

TEST(RtAppReader, UnrollsLoopsIntoBurstsAndBlocks) {
  auto w = replay::readRtAppWorkload(R"({
    "global": {"duration": -1, "default_policy": "SCHED_OTHER", "calibration": "CPU0"},
    "tasks": {
      "t": {"instance": 2, "loop": 3, "priority": 5, "cpus": [1], "run": 1000, "run1": 500, "sleep": 2000},
      "rt": {"policy": "SCHED_FIFO", "priority": 50, "loop": 2, "phases": {
          "p1": {"loop": 2, "run": 100, "timer": {"ref": "tick", "period": 10000}}}}}})",
                                     "w.json");
  ASSERT_TRUE(w.has_value()) << w.error().message();
  ASSERT_EQ(w->tasks.size(), 3u);
  const auto& t0 = w->tasks[0];
  EXPECT_EQ(t0.comm, "t-0");
  EXPECT_EQ(w->tasks[1].comm, "t-1");
  EXPECT_EQ(t0.prio, 125);
  EXPECT_EQ(t0.affinity, std::vector<int>{1});
  // run 1000 + run1 500 merge into one burst; each sleep ends one: 3 loops -> 4 bursts (last empty).
  ASSERT_EQ(t0.bursts.size(), 4u);
  EXPECT_EQ(t0.bursts[0].work, 1'500'000);
  EXPECT_EQ(t0.bursts[1].wake, WakeKind::Sleep);
  EXPECT_EQ(t0.bursts[1].sleepNs, 2'000'000);
  EXPECT_EQ(t0.bursts[3].work, 0);
  const auto& rt = w->tasks[2];
  EXPECT_EQ(rt.policy, replay::SchedPolicy::Fifo);
  EXPECT_EQ(rt.prio, 49);
  ASSERT_EQ(rt.bursts.size(), 5u);  // 2 loops x 2 phase loops x (run, timer)
  EXPECT_EQ(rt.bursts[1].wake, WakeKind::Timer);
  EXPECT_EQ(w->timers.at(rt.bursts[1].timer).periodNs, 10'000'000);
}

TEST(RtAppReader, TimerWakesAtPeriodBoundaries) {
  // 2 ms of work every 10 ms: the task runs at 0, 10, 20, ... ms.
  auto w = replay_test::rtapp(R"({"global": {"duration": 0.1}, "tasks": {
      "p": {"loop": -1, "run": 2000, "timer": {"ref": "t", "period": 10000}}}})");
  const auto r = replay_test::replayOn(w, "cfs", 1);
  ASSERT_TRUE(r.model);
  const auto& s = r.model->cpuSlices[0];
  std::vector<int64_t> starts;
  for (size_t i = 0; i < s.size(); ++i)
    if (s.kind[i] == core::SliceKind::Task) starts.push_back(s.ts[i]);
  ASSERT_GE(starts.size(), 9u);
  for (size_t i = 0; i < 9; ++i) EXPECT_EQ(starts[i], static_cast<int64_t>(i) * 10'000'000) << i;
  EXPECT_NEAR(static_cast<double>(r.outcomes[0].runtimeNs), 20e6, 1e6);  // 10 periods x 2 ms in 100 ms
}

TEST(RtAppReader, MalformedJsonNamesLineAndColumn) {
  struct Case {
    const char* text;
    const char* fragment;
  };
  const Case cases[] = {
      {"", "line 1, column 1: expected a value, found end of input"},
      {"{\n  \"tasks\": {\n    \"a\": {\"run\": 10,}\n  }\n}", "line 3, column 21: expected a quoted key"},
      {"{\"tasks\": {\"a\": {\"run\": 1e}}}", "line 1, column 27: expected a digit in the exponent"},
      {"{\"tasks\": {\"a\": {\"run\": \"x}}}", "unterminated string"},
      {"{\"tasks\": {}} extra", "line 1, column 15: unexpected text after the JSON value"},
      {"[1, 2", "expected ',' or ']', found end of input"},
      {"{\"tasks\": {\"a\": {\"run\": -5}}}", "line 1, column 25: \"run\" -5 out of range"},
      {"{\"tasks\": {\"a\": {\"run\": 10, \"lock\": 1}}}", "line 1, column 37: unknown key \"lock\""},
      {"{\"tasks\": {\"a\": {\"policy\": \"SCHED_DEADLINE\", \"run\": 1}}}", "unknown policy \"SCHED_DEADLINE\""},
      {"{\"tasks\": {\"a\": {\"loop\": -1, \"run\": 1}}}", "loops for ever (loop -1) but global.duration is not set"},
      {"{\"tasks\": {\"a\": {\"policy\": \"SCHED_FIFO\", \"priority\": 0, \"run\": 1}}}", "must be 1..99"},
      {"{\"global\": {\"duration\": \"5\"}, \"tasks\": {\"a\": {\"run\": 1}}}", "\"duration\" must be a number"},
      {"{\"tasks\": []}", "\"tasks\" must be an object"},
      {"{\"tasks\": {\"a\": {\"cpus\": [0.5], \"run\": 1}}}", "a CPU number must be an integer"},
      // 9 loops of 8.4e15 us of work: each run fits int64 ns, their sum does not.
      {"{\"tasks\": {\"a\": {\"loop\": 9, \"run\": 8444444444444407}}}", "adds up to more than 4e9 seconds"},
      {"{\"tasks\": {\"a\": {\"instance\": 2, \"loop\": 1000000, \"run\": 1, \"sleep\": 1}, "
       "\"b\": {\"loop\": 1000000, \"run\": 1, \"sleep\": 1}}}",
       "the workload unrolls to more than 5M events by task \"b\""},
  };
  for (const Case& c : cases) {
    auto w = replay::readRtAppWorkload(c.text, "bad.json");
    ASSERT_FALSE(w.has_value()) << c.text;
    EXPECT_NE(w.error().message().find(c.fragment), std::string::npos)
        << "input: " << c.text << "\nmessage: " << w.error().message();
    EXPECT_EQ(w.error().message().rfind("bad.json: ", 0), 0u) << w.error().message();
  }
}

TEST(RtAppReader, DeepNestingAndRandomBytesNeverCrash) {
  std::string deep(5000, '[');
  auto w = replay::readRtAppWorkload(deep, "deep.json");
  ASSERT_FALSE(w.has_value());
  EXPECT_NE(w.error().message().find("nesting deeper than 256"), std::string::npos);
  uint32_t x = 12345;
  for (int round = 0; round < 200; ++round) {
    std::string junk;
    for (int i = 0; i < 64; ++i) {
      x = x * 1664525u + 1013904223u;
      junk += static_cast<char>("{}[]\":,0123456789.-eE tfnrsu\\\n"[x % 31]);
    }
    (void)replay::readRtAppWorkload(junk, "junk.json");  // must not crash or hang
  }
}

TEST(RtAppReader, MissingFileIsAnError) {
  auto w = replay::readRtAppWorkloadFile("/nonexistent/workload.json");
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().message(), "/nonexistent/workload.json: cannot open the file");
}
