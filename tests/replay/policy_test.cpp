// Hand-worked expectations for each scheduler model.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <ostream>
#include <set>

#include "core/analysis/stats.h"
#include "replay/policies/bfs_policy.h"
#include "replay/policies/fair_policy.h"
#include "replay_test_util.h"

using replay_test::replayOn;
using replay_test::rtapp;
using replay_test::share;
using replay_test::twoHogs;

// --- BFS arithmetic (docs/models.md §1.2 derived table) ---

TEST(BfsDeadline, PrioRatiosAndOffsetsMatchTheDerivedTable) {
  EXPECT_EQ(replay::bfs::prioRatio(0), 128);     // nice -20
  EXPECT_EQ(replay::bfs::prioRatio(10), 324);    // nice -10
  EXPECT_EQ(replay::bfs::prioRatio(15), 520);    // nice -5
  EXPECT_EQ(replay::bfs::prioRatio(20), 836);    // nice 0
  EXPECT_EQ(replay::bfs::prioRatio(25), 1344);   // nice 5
  EXPECT_EQ(replay::bfs::prioRatio(30), 2161);   // nice 10
  EXPECT_EQ(replay::bfs::prioRatio(39), 5089);   // nice 19
  // ratio x rr_interval x 8192 ns: nice 0 -> 41.09 ms, nice 5 -> 66.06 ms.
  EXPECT_EQ(replay::bfs::deadlineDiff(0, 6), 836LL * 6 * 8192);
  EXPECT_NEAR(replay::bfs::deadlineDiff(0, 6) / 1e6, 41.09, 0.01);
  EXPECT_NEAR(replay::bfs::deadlineDiff(5, 6) / 1e6, 66.06, 0.01);
  EXPECT_EQ(replay::bfs::timesliceUs(6) << 10, 6'291'456);  // the full slice in ns
}

// docs/models.md §1.11: on one CPU, nice 0 gets 80% against nice 5 (it gets one
// slice per 66.06 - 41.09 ms of the other's deadline lead: 4 slices to 1).
TEST(BfsPolicy, NiceZeroGetsEightyPercentAgainstNiceFive) {
  const auto w = rtapp(twoHogs(0, 5, 10));
  const auto r = replayOn(w, "bfs", 1);
  EXPECT_NEAR(share(r, 0), 0.80, 0.01);
}

// The rest of docs/models.md §1.11's table assumes slices of exactly 6.29 ms.
// With a tick, a slice ends at the tick nearest its end (dither): 6 ms at
// HZ=1000, where the table holds. In steady state the leading task A runs
// n = floor((diff_B - diff_A) / slice) + 1 slices per slice of B.
TEST(BfsPolicy, OtherDerivedSharesOfTheTableAtHz1000) {
  struct Case {
    int other;
    double shareOfNiceZero;
  };
  for (const Case c : {Case{1, 0.50}, Case{2, 0.667}, Case{10, 0.917}, Case{19, 0.971}}) {
    const auto r = replayOn(rtapp(twoHogs(0, c.other, 20)), "bfs", 1, {"hz=1000"});
    EXPECT_NEAR(share(r, 0), c.shareOfNiceZero, 0.005) << "nice 0 vs nice " << c.other;
  }
  // nice -20 against nice 0: 85.7% for the nice -20 task.
  const auto r = replayOn(rtapp(twoHogs(-20, 0, 20)), "bfs", 1, {"hz=1000"});
  EXPECT_NEAR(share(r, 0), 0.857, 0.005);
}

// At HZ=250 the 6.29 ms slice ends at the second tick (8 ms): nice 0 vs nice
// 10 gives n = floor(65.13 / 8) + 1 = 9 slices to 1 (90%), nice -20 vs 0
// n = floor(34.80 / 8) + 1 = 5 (83.3%); nice 5 stays at 80% (n = 4).
TEST(BfsPolicy, TickQuantisedSharesAtHz250) {
  EXPECT_NEAR(share(replayOn(rtapp(twoHogs(0, 10, 20)), "bfs", 1), 0), 0.900, 0.005);
  EXPECT_NEAR(share(replayOn(rtapp(twoHogs(-20, 0, 20)), "bfs", 1), 0), 5.0 / 6, 0.005);
  EXPECT_NEAR(share(replayOn(rtapp(twoHogs(0, 5, 20)), "bfs", 1), 0), 0.800, 0.005);
}

TEST(GcAndVrq, NiceZeroAgainstNiceFiveAsBfs) {
  for (const char* model : {"gc", "vrq"}) {
    const auto r = replayOn(rtapp(twoHogs(0, 5, 10)), model, 1);
    EXPECT_NEAR(share(r, 0), 0.80, 0.01) << model;
  }
}

// CFS shares by weight: 1024 / (1024 + 335).
TEST(CfsPolicy, NiceZeroAgainstNiceFiveSharesByWeight) {
  const auto r = replayOn(rtapp(twoHogs(0, 5, 10)), "cfs", 1);
  EXPECT_NEAR(share(r, 0), 1024.0 / (1024.0 + 335.0), 0.005);
}

TEST(EevdfPolicy, NiceZeroAgainstNiceFiveSharesByWeight) {
  const auto r = replayOn(rtapp(twoHogs(0, 5, 10)), "eevdf", 1);
  EXPECT_NEAR(share(r, 0), 1024.0 / (1024.0 + 335.0), 0.005);
}

TEST(CfsPolicy, EqualHogsOnTwoCpusEachGetACpu) {
  const auto w = rtapp(R"({"global": {"duration": 2}, "tasks": {"h": {"instance": 2, "loop": -1, "run": 100000}}})");
  for (const char* model : {"cfs", "eevdf", "bfs", "gc", "vrq"}) {
    const auto r = replayOn(w, model, 2);
    EXPECT_NEAR(share(r, 0), 0.5, 0.01) << model;
    EXPECT_NEAR(static_cast<double>(r.outcomes[0].runtimeNs), 2e9, 2e7) << model;
  }
}

// Three equal hogs on two CPUs: every model keeps both CPUs busy.
TEST(AllPolicies, ThreeHogsOnTwoCpusKeepBothBusy) {
  const auto w = rtapp(R"({"global": {"duration": 4}, "tasks": {"h": {"instance": 3, "loop": -1, "run": 100000}}})");
  for (const char* model : {"cfs", "eevdf", "bfs", "gc", "vrq"}) {
    const auto r = replayOn(w, model, 2);
    int64_t total = 0;
    for (const auto& o : r.outcomes) total += o.runtimeNs;
    EXPECT_NEAR(static_cast<double>(total), 8e9, 1e8) << model;
  }
  // CFS rotates the odd task through load balancing (nr_balance_failed), so no
  // hog starves: each gets at least half a CPU.
  for (const char* model : {"cfs", "eevdf"}) {
    const auto r = replayOn(w, model, 2);
    for (size_t i = 0; i < 3; ++i) EXPECT_GT(share(r, i), 0.24) << model << " task " << i;
  }
}

// Eight equal hogs on two sockets of four cores (two NUMA nodes, an LLC each):
// balancing over the SMT/LLC/NUMA domains must fill both nodes, each hog
// getting a whole CPU (16 s of CPU time in 2 s); with one node left idle they
// would share four CPUs and get 8 s.
TEST(FairDomains, HogsFillBothNodesOfATwoSocketMachine) {
  const auto w = rtapp(R"({"global": {"duration": 2}, "tasks": {"h": {"instance": 8, "loop": -1, "run": 100000}}})");
  for (const char* model : {"cfs", "eevdf"}) {
    replay::ReplayOptions o;
    o.model = model;
    o.topology = *core::Topology::parseSpec("2s:4c");
    auto r = replay::runReplay(w, o);
    ASSERT_TRUE(r) << r.error().message();
    int64_t total = 0;
    for (const auto& out : r->outcomes) total += out.runtimeNs;
    EXPECT_NEAR(static_cast<double>(total), 16e9, 2e8) << model;
    for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(share(*r, i), 0.125, 0.01) << model << " task " << i;
  }
}

// --- EEVDF lag and eligibility, worked by hand ---

TEST(EevdfArithmetic, AverageVruntimeAndEligibility) {
  using replay::fair::FairRq;
  std::vector<FairRq::Entity> ents(3);
  FairRq rq;
  // Three entities at v = 0, 3 ms, 6 ms with weights 1024, 1024, 2048.
  ents[0].vruntime = 0, ents[0].weight = 1024, ents[0].onRq = true;
  ents[1].vruntime = 3'000'000, ents[1].weight = 1024, ents[1].onRq = true;
  ents[2].vruntime = 6'000'000, ents[2].weight = 2048, ents[2].onRq = true;
  // Deadlines are set before the entities join the tree, whose keys carry them.
  ents[0].deadline = 9'000'000;
  ents[1].deadline = 4'000'000;
  ents[2].deadline = 1'000'000;  // earliest, but not eligible
  for (uint32_t i = 0; i < 3; ++i) rq.treeInsert(ents, i);
  // V = (0*1024 + 3ms*1024 + 6ms*2048) / 4096 = 3.75 ms.
  EXPECT_EQ(rq.avgVruntimeOf(ents), 3'750'000);
  EXPECT_TRUE(rq.eligible(ents, 0));   // v <= V
  EXPECT_TRUE(rq.eligible(ents, 1));
  EXPECT_FALSE(rq.eligible(ents, 2));  // 6 ms > 3.75 ms
  // The eligible entity with the earliest deadline wins, even if not leftmost.
  EXPECT_EQ(rq.earliestEligible(ents), 1u);
  // min_vruntime moves to the leftmost; V is unchanged by that bookkeeping.
  rq.updateMinVruntime(ents);
  EXPECT_EQ(rq.minVruntime, 0);
  rq.treeErase(ents, 0);
  rq.updateMinVruntime(ents);
  EXPECT_EQ(rq.minVruntime, 3'000'000);
  // V = (3ms*1024 + 6ms*2048) / 3072 = 5 ms.
  EXPECT_EQ(rq.avgVruntimeOf(ents), 5'000'000);
  EXPECT_TRUE(rq.eligible(ents, 1));
  EXPECT_FALSE(rq.eligible(ents, 2));
}

// A task that slept with positive lag (it was owed service) comes back placed
// before V and so runs first: here it preempts the hog that ran meanwhile.
TEST(EevdfPolicy, SleeperWithLagPreemptsOnWakeup) {
  // t0 hogs; t1 runs 1 ms, sleeps 20 ms, repeats. With EEVDF t1's wakeup
  // latency stays far below a slice because it is placed at V - lag with lag >= 0.
  const auto w = rtapp(R"({"global": {"duration": 2}, "tasks": {
      "hog": {"loop": -1, "run": 100000},
      "io": {"loop": -1, "run": 1000, "sleep": 20000}}})");
  const auto r = replayOn(w, "eevdf", 1);
  // io needs ~1 ms per 21 ms: ~4.76% of the CPU and gets all of it.
  EXPECT_NEAR(share(r, 1), 1.0 / 21, 0.005);
  // And without waiting: the hog has overrun its 0.75 ms slice by the time io
  // wakes (its deadline is only renewed at ticks), so io is the eligible entity
  // with the earliest deadline and preempts at once.
  ASSERT_TRUE(r.model);
  const auto stats = core::analysis::computeStats(*r.model);
  for (const auto& t : stats.tasks)
    if (t.comm == "io") {
      EXPECT_GT(t.wakeupLatency.count, 80u);
      EXPECT_LT(t.wakeupLatency.max, 1'000'000);
    }
}

// --- VRQ: idle CPUs pull queue heads ---

TEST(VrqPolicy, CpuGoingIdlePullsTheHeadOfABusyQueue) {
  // At t=0: "short" (pinned to CPU 1, 5 ms of work) takes CPU 1, "pinned" takes
  // CPU 0, and "free" finds no idle CPU and no CPU it can preempt (equal
  // deadlines), so it is queued on CPU 0. At 5 ms CPU 1 goes idle and pulls
  // the head of CPU 0's queue: "free" runs there for the rest of the second.
  const auto w = rtapp(R"({"global": {"duration": 1}, "tasks": {
      "short": {"loop": 1, "cpus": [1], "run": 5000},
      "pinned": {"loop": -1, "cpus": [0], "run": 100000},
      "free": {"loop": -1, "run": 100000}}})");
  const auto r = replayOn(w, "vrq", 2);
  EXPECT_EQ(r.outcomes[0].runtimeNs, 5'000'000);
  EXPECT_NEAR(static_cast<double>(r.outcomes[1].runtimeNs), 1e9, 1e6);
  EXPECT_NEAR(static_cast<double>(r.outcomes[2].runtimeNs), 1e9 - 5e6, 1e6);
  EXPECT_EQ(r.stats.migrations, 1u);
  ASSERT_TRUE(r.model);
  ASSERT_EQ(r.model->migrations.size(), 1u);
  EXPECT_EQ(r.model->migrations.ts[0], 5'000'000);
  EXPECT_EQ(r.model->migrations.origCpu[0], 0);
  EXPECT_EQ(r.model->migrations.destCpu[0], 1);
}

TEST(VrqPolicy, CpuGoingIdlePullsFromBusyQueue) {
  const auto w = rtapp(R"({"global": {"duration": 1}, "tasks": {
      "short": {"loop": 1, "cpus": [1], "run": 5000},
      "hog": {"instance": 2, "loop": -1, "cpus": [0, 1], "run": 100000}}})");
  const auto r = replayOn(w, "vrq", 2);
  int64_t hogs = r.outcomes[1].runtimeNs + r.outcomes[2].runtimeNs;
  EXPECT_NEAR(static_cast<double>(hogs), 2e9 - 5e6, 2e7);
  EXPECT_GT(r.stats.migrations, 0u);
}

// --- BFS sticky tasks ---

// Three equal hogs on two CPUs. Worked by hand with docs/models.md §1.4-1.6:
// whenever a CPU's slice expires its task is requeued as that CPU's sticky task. On the
// other CPU a sticky task is keyed deadline << locality (x4 here), which loses
// to any fresh deadline, so the task alone on CPU 1 always wins its own CPU
// back, while CPU 0's sticky swap releases the older of its two tasks, which
// CPU 0 itself then takes (earliest deadline). Result: the task on CPU 1 keeps
// a whole CPU, the other two alternate on CPU 0 - and nothing migrates after
// the start. Without stickiness the older deadline would move to CPU 1.
TEST(BfsPolicy, StickyTasksKeepTheirCpu) {
  const auto w = rtapp(R"({"global": {"duration": 4}, "tasks": {"h": {"instance": 3, "loop": -1, "run": 100000}}})");
  for (const char* model : {"bfs", "gc"}) {
    const auto r = replayOn(w, model, 2);
    std::vector<double> s = {share(r, 0), share(r, 1), share(r, 2)};
    std::sort(s.begin(), s.end());
    EXPECT_NEAR(s[0], 0.25, 0.01) << model;
    EXPECT_NEAR(s[1], 0.25, 0.01) << model;
    EXPECT_NEAR(s[2], 0.50, 0.01) << model;
    EXPECT_LE(r.stats.migrations, 1u) << model;
  }
}

// --- Wakeups from interrupt context and wake_affine_weight() (docs/models.md §5.5, §8.1) ---

namespace {

/// A task that arrives on `cpu` at `startTs` with `firstWork` ns to do and exits after its last burst.
replay::Task exitingTask(int32_t tid, const char* comm, int cpu, int64_t firstWork, int64_t startTs = 0) {
  replay::Task t;
  t.tid = t.tgid = tid;
  t.comm = comm;
  t.startCpu = cpu;
  t.startTs = startTs;
  t.exits = true;
  t.bursts.push_back(replay::Burst{.work = firstWork});
  return t;
}

/// The CPUs on which the replay ran the task called `comm`.
std::set<int> cpusThatRan(const replay::ReplayResult& r, const std::string& comm) {
  std::set<int> cpus;
  for (size_t cpu = 0; cpu < r.model->cpuSlices.size(); ++cpu) {
    const auto& slices = r.model->cpuSlices[cpu];
    for (size_t i = 0; i < slices.size(); ++i)
      if (slices.kind[i] == core::SliceKind::Task && r.model->comm(slices.utid[i]) == comm)
        cpus.insert(static_cast<int>(cpu));
  }
  return cpus;
}

// "make" (tid 100, on CPU 0) with these bursts forks "sh" (1 ms of work) when
// its work reaches `forkAt` of burst `forkBurst`.
replay::Workload makeForksSh(std::vector<replay::Burst> bursts, uint32_t forkBurst, int64_t forkAt) {
  replay::Workload w;
  w.kind = "rt-app";
  replay::Task parent;
  parent.tid = parent.tgid = 100;
  parent.comm = "make";
  parent.startCpu = 0;
  parent.exits = true;
  parent.bursts = std::move(bursts);
  parent.triggers.push_back(
      replay::Trigger{.offset = forkAt, .burst = forkBurst, .target = 1, .kind = replay::TriggerKind::Fork});
  replay::Task child;
  child.tid = child.tgid = 101;
  child.comm = "sh";
  child.parent = 0;
  child.exits = true;
  child.bursts.push_back(replay::Burst{.work = 1'000'000});
  w.tasks = {parent, child};
  return w;
}

// Hogs pinned to the given CPUs, and "s": `workUs` of work, then sleeps of
// `sleepMs` ended by an interrupt on `irqCpu`, starting on `startCpu`.
replay::Workload sleeperBesideHogs(std::vector<int> hogCpus, int startCpu, int64_t workUs, int64_t sleepMs, int irqCpu,
                                   int cycles) {
  replay::Workload w;
  w.kind = "rt-app";
  w.durationNs = cycles * (sleepMs + 2) * 1'000'000;
  int32_t tid = 100;
  for (int cpu : hogCpus) {
    replay::Task h;
    h.tid = h.tgid = ++tid;
    h.comm = "hog" + std::to_string(cpu);
    h.affinity = {cpu};
    h.startCpu = cpu;
    h.bursts.push_back(replay::Burst{.work = 10 * w.durationNs});
    w.tasks.push_back(std::move(h));
  }
  replay::Task s;
  s.tid = s.tgid = ++tid;
  s.comm = "s";
  s.startCpu = startCpu;
  s.bursts.push_back(replay::Burst{.work = workUs * 1000});
  for (int i = 1; i < cycles; ++i)
    s.bursts.push_back(
        replay::Burst{.work = workUs * 1000, .wake = replay::WakeKind::Sleep, .sleepNs = sleepMs * 1'000'000, .wakeCpu = irqCpu});
  w.tasks.push_back(std::move(s));
  return w;
}

}  // namespace

// "s" sleeps on idle CPU 0 and is woken by an interrupt that, in the
// recording, fired on CPU 1 (busy with a pinned hog). With irq_wakeup_cpu=sleeper
// the wakeup happens in CPU 0's own context: idle exit after a local interrupt,
// idle_irq_wakeup_ns = 5 µs. With =recorded it happens on CPU 1: the waker's CPU
// is busy, s's previous CPU is idle (wake_affine_idle() keeps it there), so CPU
// 0 is woken from CPU 1: idle_wakeup_ns = 40 µs. Either way s stays on CPU 0.
// =kthreads takes the recorded CPU only when s is a kernel thread (a
// timer-wheel timeout, which timer migration expires on a busy CPU); a user
// task's timer is an hrtimer of its own CPU.
TEST(FairPlacement, InterruptWakeupHappensOnTheRecordedCpu) {
  for (const bool kernelThread : {false, true}) {
    auto w = sleeperBesideHogs({1}, 0, 100, 10, 1, 20);
    w.tasks.back().kernelThread = kernelThread;
    for (const std::string ctx : {"sleeper", "recorded", "kthreads"}) {
      SCOPED_TRACE(ctx + (kernelThread ? ", kernel thread" : ", user task"));
      const auto r = replayOn(w, "eevdf", 2,
                              {"irq_wakeup_cpu=" + ctx, "idle_wakeup_ns=40000", "idle_irq_wakeup_ns=5000"});
      ASSERT_TRUE(r.model);
      EXPECT_EQ(r.stats.migrations, 0u);
      const bool fromCpu1 = ctx == "recorded" || (ctx == "kthreads" && kernelThread);
      const auto stats = core::analysis::computeStats(*r.model);
      bool seen = false;
      for (const auto& t : stats.tasks)
        if (t.comm == "s") {
          seen = true;
          EXPECT_EQ(t.wakeupLatency.count, 19u);
          EXPECT_EQ(t.wakeupLatency.max, fromCpu1 ? 40'000 : 5'000);
        }
      EXPECT_TRUE(seen);
    }
  }
}

// irq_wake_pack (docs/models.md §5.5): kernel thread "s" last ran on CPU 0,
// now idle, and is woken by interrupts on CPU 1, busy with a pinned hog, as in
// the test above. fair.c sends it to idle CPU 0 (40 us: a remote idle wakeup).
// Had the recording kept all of its (at least 8) such wakeups on the busy CPU,
// such a wakeup stays there without preempting the hog, and s runs on CPU 1 at
// the hog's next tick (at most 4 ms later), where EEVDF picks it. Its next
// wakeup finds its previous CPU busy, not idle: fair.c's idle search sends it
// to CPU 0 (40 us), and the one after stays again. Fewer than 8 such wakeups,
// or none kept, tell no share: fair.c's placement every time.
TEST(FairPlacement, InterruptWakeupsTheRecordingKeptOnTheBusyCpuStayThere) {
  struct Seen {
    std::vector<int64_t> latencies;
    std::set<int> cpus;
  };
  const auto replayed = [](uint32_t besideIdle, uint32_t kept, const char* pack) {
    auto w = sleeperBesideHogs({1}, 0, 100, 10, 1, 20);
    w.tasks.back().kernelThread = true;
    w.tasks.back().irqWakeupsBesideIdle = besideIdle;
    w.tasks.back().irqWakeupsKeptBusy = kept;
    const auto r = replayOn(w, "eevdf", 2,
                            {std::string("irq_wake_pack=") + pack, "irq_wakeup_cpu=kthreads", "idle_wakeup_ns=40000",
                             "idle_irq_wakeup_ns=5000"});
    Seen seen;
    EXPECT_TRUE(r.model);
    if (!r.model) return seen;
    EXPECT_EQ(r.outcomes.back().workDone, 20 * 100'000);
    seen.cpus = cpusThatRan(r, "s");
    for (const auto& t : core::analysis::computeStats(*r.model).tasks)
      if (t.comm == "s") seen.latencies = t.wakeupLatency.sorted;
    return seen;
  };
  const Seen kept = replayed(10, 10, "measured");
  ASSERT_EQ(kept.latencies.size(), 19u);
  EXPECT_EQ(kept.cpus, (std::set<int>{0, 1}));
  EXPECT_EQ(std::count(kept.latencies.begin(), kept.latencies.end(), 40'000), 9) << ::testing::PrintToString(kept.latencies);
  EXPECT_GT(kept.latencies[9], 40'000);
  EXPECT_LE(kept.latencies.back(), 4'000'000);
  for (const auto& [besideIdle, keptBusy, pack] :
       {std::tuple{10u, 10u, "off"}, std::tuple{10u, 0u, "measured"}, std::tuple{7u, 7u, "measured"}}) {
    SCOPED_TRACE(std::to_string(besideIdle) + " " + std::to_string(keptBusy) + " " + pack);
    const Seen fairC = replayed(besideIdle, keptBusy, pack);
    EXPECT_EQ(fairC.cpus, std::set<int>{0});
    EXPECT_EQ(fairC.latencies, std::vector<int64_t>(19, 40'000));
  }
}

// Both CPUs run a pinned nice-0 hog; "s" (0.2 ms of work, then 200 ms asleep)
// last ran on CPU 1 and is woken by interrupts on CPU 0. With the weights
// queued now (wake_affine_load=runnable) prev's load minus s's weight is 0, so
// s always stays on CPU 1. With PELT s's load decays while it sleeps: it starts
// at its weight (1024), is ~15 after the first 200 ms asleep and ~19 after
// running again, while each CPU's load approaches the hog's 1024. At the third
// wakeup this_eff = (1024 + 19) x 100 = 104300 < prev_eff = (1024 - 19) x 108 =
// 108540 (WA_BIAS: half of imbalance_pct 117's extra): s moves to CPU 0, and,
// woken there in CPU 0's own context from then on, stays.
TEST(FairPlacement, WakeAffineWeightComparesPeltLoads) {
  const auto w = sleeperBesideHogs({0, 1}, 1, 200, 200, 0, 8);
  for (const std::string load : {"runnable", "pelt"}) {
    SCOPED_TRACE(load);
    const auto r = replayOn(w, "eevdf", 2, {"irq_wakeup_cpu=recorded", "wake_affine_load=" + load});
    EXPECT_EQ(r.stats.migrations, load == "runnable" ? 0u : 1u);
    EXPECT_EQ(r.outcomes.back().workDone, 8 * 200'000);
  }
}

// The measured share of wakeups packed onto the waker's CPU (docs/models.md
// §5.5): 1 / (1 + (H / idle)^5), H the half-way idle time for the waker CPU's
// util, linear between the measured points (0.10, 4 ms), (0.25, 3.5 ms),
// (0.50, 5.5 ms), (0.62, 10 ms), (0.72, 40 ms), none from 0.72 on.
TEST(FairPlacement, MeasuredPackingShare) {
  using replay::fair::measuredPackingShare;
  EXPECT_NEAR(measuredPackingShare(0.50, 5.5), 0.5, 1e-12);
  EXPECT_NEAR(measuredPackingShare(0.50, 4.0), 1 / (1 + std::pow(5.5 / 4, 5)), 1e-12);  // 0.169; 26% measured
  EXPECT_NEAR(measuredPackingShare(0.50, 8.0), 1 / (1 + std::pow(5.5 / 8, 5)), 1e-12);  // 0.867; 95% measured
  EXPECT_NEAR(measuredPackingShare(0.19, 3.7), 0.5, 1e-12);  // H = 4 - 0.5 x 0.09 / 0.15
  EXPECT_NEAR(measuredPackingShare(0.56, 7.75), 0.5, 1e-12);  // H = 5.5 + 4.5 x 0.06 / 0.12
  // A pipe ping-pong's previous CPU idles tens of microseconds: none moves.
  EXPECT_LT(measuredPackingShare(0.30, 0.05), 1e-9);
  EXPECT_EQ(measuredPackingShare(0.72, 1000), 0);
  EXPECT_EQ(measuredPackingShare(0.30, 0), 0);
}

// wake_pack=measured (docs/models.md §5.5): "s" ran 0.1 ms on CPU 0 and
// sleeps until an interrupt on CPU 1 wakes it. "hog", pinned to CPU 1, ran
// 0.1 ms too and sleeps 100 ms, then runs on; so at s's wakeup CPU 1 has run
// it for `hogMs`, and its util is 1024 x (1 - 2^(-hogMs/32.768)) (PELT's
// half-life, 32 periods of 1024 µs): 0.19 x 1024 after 10 ms, 0.82 x 1024
// after 80 ms. s's CPU 0 has been idle since s slept, 110 ms, unless "k",
// pinned to CPU 0, ran there until `cpu0IdleUs` before the wakeup. At 0.19
// the measured half-way point is 3.7 ms of idle (4 ms at 0.10, 3.5 ms at
// 0.25), and the share moved is 1 / (1 + (3.7 ms / idle)^5): all after
// 110 ms; none after 0.1 ms (3e-8); about half after 3.7 ms. From 72%
// util on none moves, and fair.c's reading (off) keeps s on its idle
// previous CPU always. Each case is replayed with seeds 1-40 (the draws).
TEST(FairPlacement, MeasuredPackingWakesOnTheWakersLightlyUsedCpu) {
  // Runs 0.1 ms on `cpu`, sleeps `sleepNs` until an interrupt on `irqCpu`, then runs `work`.
  const auto sleeper = [](int32_t tid, const char* comm, int cpu, bool pinned, int64_t sleepNs, int irqCpu,
                          int64_t work) {
    replay::Task t;
    t.tid = t.tgid = tid;
    t.comm = comm;
    t.startCpu = cpu;
    if (pinned) t.affinity = {cpu};
    t.exits = true;
    t.bursts.push_back(replay::Burst{.work = 100'000});
    t.bursts.push_back(replay::Burst{.work = work, .wake = replay::WakeKind::Sleep, .sleepNs = sleepNs, .wakeCpu = irqCpu});
    return t;
  };
  const auto workload = [&](int64_t hogMs, int64_t cpu0IdleUs) {
    replay::Workload w;
    w.kind = "rt-app";
    const int64_t wakeAt = 100'100'000 + hogMs * 1'000'000;
    w.durationNs = wakeAt + 10'000'000;
    w.tasks = {sleeper(100, "hog", 1, true, 100'000'000, 1, 10 * w.durationNs),
               sleeper(101, "s", 0, false, wakeAt - 100'000, 1, 100'000)};
    // k's last 0.1 ms of work ends cpu0IdleUs before s's wakeup.
    if (cpu0IdleUs >= 0)
      w.tasks.push_back(sleeper(102, "k", 0, true, wakeAt - 200'000 - cpu0IdleUs * 1000, 0, 100'000));
    return w;
  };
  // Of 40 seeds, how many replays woke s on CPU 1.
  const auto movedOf40 = [&](int64_t hogMs, int64_t cpu0IdleUs, const char* pack) {
    int moved = 0;
    for (int seed = 1; seed <= 40; ++seed) {
      const auto r = replayOn(workload(hogMs, cpu0IdleUs), "eevdf", 2,
                              {std::string("wake_pack=") + pack, "irq_wakeup_cpu=recorded", "irq_wakeup_time=relative",
                               "idle_wakeup_ns=20000", "idle_irq_wakeup_ns=20000", "seed=" + std::to_string(seed)});
      EXPECT_TRUE(r.model && r.outcomes[1].workDone == 200'000) << "seed " << seed;
      if (r.model) moved += cpusThatRan(r, "s").count(1) != 0;
    }
    return moved;
  };
  EXPECT_EQ(movedOf40(10, -1, "measured"), 40);
  EXPECT_EQ(movedOf40(10, -1, "off"), 0);
  EXPECT_EQ(movedOf40(80, -1, "measured"), 0);
  EXPECT_EQ(movedOf40(10, 100, "measured"), 0);
  // The idle search's side: s last ran on CPU 1, arriving there at 1 ms when
  // hog had slept. At its wakeup CPU 1 runs hog (util 0.19) and CPU 0 has
  // been idle all along: select_idle_sibling()'s search finds CPU 0, which
  // the measured rule leaves for the busy CPU as it leaves an idle previous one.
  const auto onBusyPrev = [&](const char* pack) {
    auto w = workload(10, -1);
    w.tasks[1].startCpu = 1;
    w.tasks[1].startTs = 1'000'000;
    w.tasks[1].bursts[1].sleepNs -= 1'000'000;
    const auto r = replayOn(w, "eevdf", 2,
                            {std::string("wake_pack=") + pack, "irq_wakeup_cpu=recorded", "irq_wakeup_time=relative",
                             "idle_wakeup_ns=20000", "idle_irq_wakeup_ns=20000"});
    return r.model ? cpusThatRan(r, "s") : std::set<int>{-1};
  };
  EXPECT_EQ(onBusyPrev("measured"), std::set<int>{1});
  EXPECT_EQ(onBusyPrev("off"), (std::set<int>{0, 1}));
  // About half: 20 expected, 10-30 is over three standard deviations (3.2) wide.
  const int halfWay = movedOf40(10, 3700, "measured");
  EXPECT_GE(halfWay, 10);
  EXPECT_LE(halfWay, 30);
}

// The busy previous CPU's side of wake_pack=measured (docs/models.md §5.5):
// 1 / (1 + (H / slept)^20), H the measured step for the busy CPU's util,
// linear between (0.10, 2.9 ms), (0.25, 3.0 ms), (0.50, 7.0 ms),
// (0.62, 10 ms), (0.72, 40 ms), none from 0.72 on.
TEST(FairPlacement, MeasuredStayShare) {
  using replay::fair::measuredStayShare;
  EXPECT_NEAR(measuredStayShare(0.50, 7.0), 0.5, 1e-12);
  EXPECT_NEAR(measuredStayShare(0.50, 8.0), 1 / (1 + std::pow(7.0 / 8, 20)), 1e-12);  // 0.93; 39-40 of 40 measured
  EXPECT_NEAR(measuredStayShare(0.50, 6.0), 1 / (1 + std::pow(7.0 / 6, 20)), 1e-12);  // 0.045; none measured
  EXPECT_NEAR(measuredStayShare(0.375, 5.0), 0.5, 1e-12);  // H = 3 + 4 x 0.125 / 0.25
  EXPECT_LT(measuredStayShare(0.10, 2.0), 1e-3);  // 0-2 of 40 after 2 ms
  EXPECT_GT(measuredStayShare(0.10, 4.0), 0.99);  // 39-40 of 40 from 4 ms
  EXPECT_EQ(measuredStayShare(0.72, 1000), 0);
  EXPECT_EQ(measuredStayShare(0.30, 0), 0);
}

// On its busy previous CPU, what keeps a wakee there is how long it slept, not
// how long the idle CPU the search finds has idled (tools/experiments/
// idle-prev-wakeup.c with IPW_SLEEP_ON_B=1, and IPW_POKE_A=1 alike). "hog",
// pinned to CPU 1, runs from 100.1 ms on; "s" ran 0.1 ms on CPU 1 and is
// woken there by CPU 1's interrupt after sleeping `sleptMs` (it started
// beside hog when that is short). At the wakeup hog's util is 0.47 (30 ms of
// running: H = 6.5 ms): s stays on CPU 1 at every seed after 20 ms asleep,
// also when "k", pinned to CPU 0, ran there until 0.1 ms before, and goes to
// idle CPU 0 at every seed after 1 ms asleep, though CPU 0 idled 130 ms.
TEST(FairPlacement, MeasuredStayFollowsTheWakeesSleep) {
  const auto stayedOf20 = [](int64_t sleptMs, bool cpu0Busy) {
    const int64_t wakeAt = 130'100'000;
    replay::Workload w;
    w.kind = "rt-app";
    w.durationNs = wakeAt + 10'000'000;
    replay::Task hog = exitingTask(100, "hog", 1, 100'000);
    hog.affinity = {1};
    hog.bursts.push_back(replay::Burst{.work = 10 * w.durationNs, .wake = replay::WakeKind::Sleep, .sleepNs = 100'000'000, .wakeCpu = 1});
    const int64_t sStart = wakeAt - sleptMs * 1'000'000 - 100'000;
    replay::Task s = exitingTask(101, "s", 1, 100'000, sStart);
    s.bursts.push_back(replay::Burst{.work = 100'000, .wake = replay::WakeKind::Sleep, .sleepNs = wakeAt - sStart - 100'000, .wakeCpu = 1});
    w.tasks = {hog, s};
    if (cpu0Busy) {
      w.tasks.push_back(exitingTask(102, "k", 0, wakeAt - 100'000));
      w.tasks.back().affinity = {0};
    }
    int stayed = 0;
    for (int seed = 1; seed <= 20; ++seed) {
      const auto r = replayOn(w, "eevdf", 2,
                              {"wake_pack=measured", "irq_wakeup_cpu=recorded", "irq_wakeup_time=recorded",
                               "idle_wakeup_ns=20000", "idle_irq_wakeup_ns=20000", "seed=" + std::to_string(seed)});
      EXPECT_TRUE(r.model && r.outcomes[1].workDone == 200'000) << "seed " << seed;
      if (r.model) stayed += cpusThatRan(r, "s") == std::set<int>{1};
    }
    return stayed;
  };
  EXPECT_EQ(stayedOf20(20, false), 20);
  EXPECT_EQ(stayedOf20(20, true), 20);
  EXPECT_EQ(stayedOf20(1, false), 0);
}

// --- Idle balance and detach_tasks() (docs/models.md §5.5, §8.3) ---

// make forks g++ and blocks at once (vfork): the child is placed on idle CPU 0
// and waits there for CPU 0 to leave idle (50 µs), while CPU 1, emptied by the
// parent's block, balances. The kernel's idle balance takes nothing from a
// runqueue holding one task (detach_tasks(): nr_running <= 1), so the child
// runs where fork placed it and the parent, woken by it, on its own idle CPU:
// nothing migrates. A model that pulls the child (as this one did) moves both.
TEST(FairPlacement, IdleBalanceLeavesTheOnlyTaskOfARunqueue) {
  replay::Workload w;
  w.kind = "rt-app";
  replay::Task parent;
  parent.tid = parent.tgid = 100;
  parent.comm = "make";
  parent.startCpu = 1;
  parent.exits = true;
  parent.bursts.push_back(replay::Burst{.work = 1'000'000});
  parent.bursts.push_back(replay::Burst{.work = 1'000'000, .wake = replay::WakeKind::Task, .waker = 1});
  parent.triggers.push_back(replay::Trigger{.offset = 1'000'000, .burst = 0, .target = 1, .kind = replay::TriggerKind::Fork});
  replay::Task child;
  child.tid = child.tgid = 101;
  child.comm = "g++";
  child.parent = 0;
  child.exits = true;
  child.bursts.push_back(replay::Burst{.work = 5'000'000});
  child.triggers.push_back(replay::Trigger{.offset = 100'000, .burst = 0, .target = 0, .targetBurst = 1});
  w.tasks = {parent, child};
  for (const char* model : {"cfs", "eevdf"}) {
    SCOPED_TRACE(model);
    const auto r = replayOn(w, model, 2, {"idle_wakeup_ns=50000"});
    ASSERT_TRUE(r.model);
    EXPECT_EQ(r.outcomes[1].runtimeNs, 5'000'000);
    // g++ ran on CPU 0 only.
    const auto& cpu1 = r.model->cpuSlices[1];
    for (size_t i = 0; i < cpu1.size(); ++i) {
      if (cpu1.kind[i] == core::SliceKind::Task) {
        EXPECT_NE(r.model->comm(cpu1.utid[i]), "g++");
      }
    }
    EXPECT_EQ(r.stats.migrations, 0u);
  }
}

// core.c's wakelist (ttwu_queue, Linux 6.0+; docs/models.md §8.1): "a" on
// CPU 0 wakes "b" and "c", whose previous CPU 1 is idle, and exits 0.1 ms
// later; CPU 1 takes 200 µs to leave idle (idle_wakeup_ns). On the wakelist
// neither wakee is queued on CPU 1 until then, so CPU 0, idle from 1 ms, finds
// nothing to pull: both run on CPU 1, switched in at 1.1 ms and 1.12 ms. Queued
// at once (ttwu_queue=false), CPU 1 holds two tasks when CPU 0 goes idle and
// its idle balance takes one, as the pipe-threads replays did with a timer's
// wakee where the recording never moved it.
TEST(FairPlacement, WakelistKeepsAWakeeFromOtherCpusBalancing) {
  replay::Workload w;
  w.kind = "rt-app";
  w.tasks.push_back(exitingTask(100, "a", 0, 1'000'000));
  w.tasks.back().affinity = {0};
  for (const char* comm : {"b", "c"}) {
    replay::Task t = exitingTask(100 + static_cast<int32_t>(w.tasks.size()), comm, 1, 10'000);
    t.bursts.push_back(replay::Burst{.work = 20'000, .wake = replay::WakeKind::Task, .waker = 0});
    w.tasks[0].triggers.push_back(replay::Trigger{.offset = 900'000, .burst = 0, .target = static_cast<replay::TaskId>(w.tasks.size()), .targetBurst = 1});
    w.tasks.push_back(t);
  }
  for (const char* model : {"cfs", "eevdf"}) {
    SCOPED_TRACE(model);
    for (const bool wakelist : {true, false}) {
      SCOPED_TRACE(wakelist ? "ttwu_queue=true" : "ttwu_queue=false");
      const auto r = replayOn(w, model, 2, {"idle_wakeup_ns=200000", std::string("ttwu_queue=") + (wakelist ? "true" : "false")});
      ASSERT_TRUE(r.model);
      EXPECT_EQ(r.outcomes[1].workDone + r.outcomes[2].workDone, 60'000);
      EXPECT_EQ(r.stats.migrations, wakelist ? 0u : 1u);
      if (!wakelist) continue;
      EXPECT_EQ(cpusThatRan(r, "b"), std::set<int>{1});
      EXPECT_EQ(cpusThatRan(r, "c"), std::set<int>{1});
      const auto stats = core::analysis::computeStats(*r.model);
      std::vector<int64_t> latencies;
      for (const auto& t : stats.tasks)
        if (t.comm == "b" || t.comm == "c") latencies.push_back(t.wakeupLatency.max);
      std::sort(latencies.begin(), latencies.end());
      EXPECT_EQ(latencies, (std::vector<int64_t>{200'000, 220'000}));
    }
  }
}

// While a wakee is on an idle CPU's wakelist that CPU is not idle to the next
// wakeup's search (idle_cpu() checks rq->ttwu_pending). Three CPUs: "a" on CPU
// 0 wakes "b" (previous CPU 1, idle: its wakelist, 200 µs) and at the same
// point "c", whose previous CPU 2 runs the pinned "h". The search for c finds
// no idle CPU, so c waits for CPU 2 or 0 (a exits 0.1 ms later); with CPU 1
// taken for idle it would have gone there.
TEST(FairPlacement, AWakelistTakesItsCpuOutOfTheIdleSearch) {
  replay::Workload w;
  w.kind = "rt-app";
  w.tasks.push_back(exitingTask(100, "a", 0, 1'000'000));
  w.tasks.back().affinity = {0};
  for (const auto& [comm, cpu] : {std::pair{"b", 1}, std::pair{"c", 2}}) {
    replay::Task t = exitingTask(100 + static_cast<int32_t>(w.tasks.size()), comm, cpu, 10'000);
    t.bursts.push_back(replay::Burst{.work = 20'000, .wake = replay::WakeKind::Task, .waker = 0});
    w.tasks[0].triggers.push_back(replay::Trigger{.offset = 900'000, .burst = 0, .target = static_cast<replay::TaskId>(w.tasks.size()), .targetBurst = 1});
    w.tasks.push_back(t);
  }
  w.tasks.push_back(exitingTask(103, "h", 2, 2'000'000, 50'000));
  w.tasks.back().affinity = {2};
  for (const char* model : {"cfs", "eevdf"}) {
    SCOPED_TRACE(model);
    const auto r = replayOn(w, model, 3, {"idle_wakeup_ns=200000"});
    ASSERT_TRUE(r.model);
    EXPECT_EQ(r.outcomes[2].workDone, 30'000);
    EXPECT_EQ(cpusThatRan(r, "b"), std::set<int>{1});
    EXPECT_EQ(cpusThatRan(r, "c").count(1), 0u);
  }
}

// A parent alone on CPU 0 of two forks a child that runs 1 ms (docs/models.md
// §5.5). Measured on 6.18.44 (tools/experiments/fork-placement.c): the child
// stays on the parent's CPU while that CPU has spare capacity, though CPU 1 is
// idle; fair.c's find_idlest_group() reading (fork_lone_parent=false)
// puts it on idle CPU 1. A parent that ran `busyMs` straight before forking
// has util 1024 x (1 - 2^(-busyMs/32)): at 178 ms that is 1002, above
// 1024 x 100/117 = 875, so its CPU is fully busy and the child goes to CPU 1.
// A parent that worked 0.2 ms and slept 150 ms has util near 0.
TEST(FairPlacement, ALoneParentWithSpareCapacityKeepsItsForkedChild) {
  const auto workload = [](int64_t busyMs) {
    if (busyMs > 0) return makeForksSh({replay::Burst{.work = busyMs * 1'000'000 + 50'000}}, 0, busyMs * 1'000'000);
    return makeForksSh({replay::Burst{.work = 200'000},
                        replay::Burst{.work = 100'000, .wake = replay::WakeKind::Sleep, .sleepNs = 150'000'000, .wakeCpu = 0}},
                       1, 50'000);
  };
  const std::set<int> parentsCpu{0}, idleCpu{1};
  EXPECT_EQ(cpusThatRan(replayOn(workload(0), "eevdf", 2), "sh"), parentsCpu);
  EXPECT_EQ(cpusThatRan(replayOn(workload(0), "eevdf", 2, {"release=6.12"}), "sh"), idleCpu);
  EXPECT_EQ(cpusThatRan(replayOn(workload(0), "eevdf", 2, {"fork_lone_parent=false"}), "sh"), idleCpu);
  EXPECT_EQ(cpusThatRan(replayOn(workload(0), "cfs", 2), "sh"), idleCpu);
  EXPECT_EQ(cpusThatRan(replayOn(workload(0), "cfs", 2, {"fork_lone_parent=true"}), "sh"), parentsCpu);
  EXPECT_EQ(cpusThatRan(replayOn(workload(178), "eevdf", 2), "sh"), idleCpu);
}

// A hog pinned to CPU 0 runs 200 ms and exits; 1 ms later make, asleep since
// the start, wakes on idle CPU 0 and forks. CPU 0's util, running time decayed,
// is still 1002 x 2^(-1/32) = 980; but the hog took its own util with it at
// exit (task_dead_fair(): remove_entity_load_avg()), leaving make's few µs, so
// CPU 0 has spare capacity and the child stays beside its lone parent.
TEST(FairPlacement, AnExitingTaskTakesItsUtilOffItsCpu) {
  replay::Workload w = makeForksSh(
      {replay::Burst{.work = 10'000},
       replay::Burst{.work = 100'000, .wake = replay::WakeKind::Sleep, .sleepNs = 201'000'000, .wakeCpu = 0}},
      1, 50'000);
  replay::Task hog;
  hog.tid = hog.tgid = 102;
  hog.comm = "hog";
  hog.affinity = {0};
  hog.startCpu = 0;
  hog.exits = true;
  hog.bursts.push_back(replay::Burst{.work = 200'000'000});
  w.tasks.push_back(hog);
  const auto r = replayOn(w, "eevdf", 2);
  ASSERT_TRUE(r.model);
  EXPECT_EQ(cpusThatRan(r, "sh"), std::set<int>{0});
}

// sched_exec() (docs/models.md §5.5): x execs after `beforeMs` of its 1 ms
// burst on CPU 0 of two. Beside a hog pinned to CPU 0, fair.c's
// find_idlest_cpu() leaves x out of its own CPU and still counts the hog (1
// against idle CPU 1's 0): the stopper moves x to CPU 1, where it finishes. Alone
// on CPU 0, x leaves it idle-looking too, tied with CPU 1: x stays, also after
// running 178 ms (util 1002: the fork rule's util test is not the exec's, as
// tools/experiments/fork-placement.c measured). An RT task is not moved
// (select_task_rq_rt() ignores WF_EXEC).
TEST(FairPlacement, ExecMovesATaskFromABusyCpuToAnIdleOne) {
  const auto workload = [](bool hog, int64_t beforeMs, int prio) {
    replay::Workload w;
    w.kind = "rt-app";
    replay::Task x;
    x.tid = x.tgid = 100;
    x.comm = "x";
    x.prio = prio;
    x.policy = prio < 100 ? replay::SchedPolicy::Fifo : replay::SchedPolicy::Normal;
    x.startCpu = 0;
    x.exits = true;
    const int64_t before = beforeMs > 0 ? beforeMs * 1'000'000 : 100'000;
    x.bursts.push_back(replay::Burst{.work = before + 900'000});
    x.triggers.push_back(replay::Trigger{.offset = before, .burst = 0, .target = 0, .kind = replay::TriggerKind::Exec});
    w.tasks.push_back(x);
    if (hog) {
      replay::Task h;
      h.tid = h.tgid = 101;
      h.comm = "hog";
      h.affinity = {0};
      h.startCpu = 0;
      h.bursts.push_back(replay::Burst{.work = 3'000'000});
      w.tasks.push_back(h);
    }
    return w;
  };
  const std::set<int> both{0, 1}, first{0};
  const auto moved = replayOn(workload(true, 0, 120), "eevdf", 2);
  EXPECT_EQ(cpusThatRan(moved, "x"), both);
  EXPECT_EQ(moved.outcomes[0].runtimeNs, 1'000'000);
  EXPECT_EQ(cpusThatRan(replayOn(workload(true, 0, 120), "cfs", 2), "x"), both);
  EXPECT_EQ(cpusThatRan(replayOn(workload(false, 0, 120), "eevdf", 2), "x"), first);
  EXPECT_EQ(cpusThatRan(replayOn(workload(false, 178, 120), "eevdf", 2), "x"), first);
  EXPECT_EQ(cpusThatRan(replayOn(workload(true, 0, 50), "eevdf", 2), "x"), first);
}

// --- When an interrupt's sleep ends (irq_wakeup_time, docs/models.md §8.1) ---

// One task alone: 1 ms of work, a sleep the recording saw end by an interrupt
// after 2 ms, at 5 ms of the trace, then 1 ms more. Relative, the sleep lasts
// its 2 ms from the replayed block (wakes at 3 ms, done at 4 ms); recorded, it
// ends at the recorded 5 ms (done at 6 ms); a sleep whose recorded end the
// replay has already passed (recorded at 0.5 ms) does not sleep at all.
TEST(SleepEnd, RecordedInstantOrRecordedLength) {
  auto workload = [](int64_t recordedWake) {
    replay::Workload w;
    w.kind = "trace";
    replay::Task s;
    s.tid = s.tgid = 100;
    s.comm = "s";
    s.startCpu = 0;
    s.bursts.push_back(replay::Burst{.work = 1'000'000, .recordedStart = 0});
    s.bursts.push_back(replay::Burst{
        .work = 1'000'000, .wake = replay::WakeKind::Sleep, .sleepNs = 2'000'000, .recordedStart = recordedWake});
    w.tasks.push_back(std::move(s));
    return w;
  };
  EXPECT_EQ(replayOn(workload(5'000'000), "eevdf", 1, {"idle_irq_wakeup_ns=0"}).outcomes[0].lastEnd, 4'000'000);
  EXPECT_EQ(replayOn(workload(5'000'000), "eevdf", 1, {"idle_irq_wakeup_ns=0", "irq_wakeup_time=recorded"})
                .outcomes[0].lastEnd,
            6'000'000);
  EXPECT_EQ(replayOn(workload(500'000), "eevdf", 1, {"idle_irq_wakeup_ns=0", "irq_wakeup_time=recorded"})
                .outcomes[0].lastEnd,
            2'000'000);
}

// Timer slack (timer_slack_ns): two CPUs. A runs 1 ms on CPU 0 and sleeps;
// the recording saw a timer end that sleep 3 ms later, so its timer's hard
// expiry is at 4 ms and, with 50 us of slack, its soft expiry at 3.95 ms. B,
// pinned to CPU 0, sleeps from the trace start until its timer fires at
// `bWake`. When that interrupt of CPU 0 comes at or after A's soft expiry, it
// ends A's sleep too (__hrtimer_run_queues() runs every timer past its soft
// expiry): A finds B on CPU 0, takes idle CPU 1 and runs 1 ms from there.
// Otherwise A wakes at its hard expiry, 4 ms, done at 5 ms. An RT task sleeps
// with no slack.
TEST(SleepEnd, TimerSlackEndsASleepWithAnEarlierInterruptOfItsCpu) {
  auto workload = [](int64_t bWake, int aPrio) {
    replay::Workload w;
    w.kind = "trace";
    replay::Task a;
    a.tid = a.tgid = 100;
    a.comm = "a";
    a.prio = aPrio;
    a.policy = aPrio < 100 ? replay::SchedPolicy::Fifo : replay::SchedPolicy::Normal;
    a.startCpu = 0;
    a.bursts.push_back(replay::Burst{.work = 1'000'000, .recordedStart = 0});
    a.bursts.push_back(replay::Burst{.work = 1'000'000,
                                     .wake = replay::WakeKind::Sleep,
                                     .interruptWake = true,
                                     .sleepNs = 3'000'000,
                                     .recordedStart = 4'000'000});
    replay::Task b;
    b.tid = b.tgid = 200;
    b.comm = "b";
    b.startCpu = 0;
    b.affinity = {0};
    b.bursts.push_back(replay::Burst{.work = 500'000,
                                     .wake = replay::WakeKind::Sleep,
                                     .interruptWake = true,
                                     .sleepNs = bWake,
                                     .recordedStart = bWake});
    w.tasks.push_back(std::move(a));
    w.tasks.push_back(std::move(b));
    return w;
  };
  const std::vector<std::string> noDelays = {"idle_wakeup_ns=0", "idle_irq_wakeup_ns=0"};
  EXPECT_EQ(replayOn(workload(3'970'000, 120), "eevdf", 2, noDelays).outcomes[0].lastEnd, 4'970'000);
  EXPECT_EQ(replayOn(workload(3'950'000, 120), "eevdf", 2, noDelays).outcomes[0].lastEnd, 4'950'000);
  EXPECT_EQ(replayOn(workload(3'900'000, 120), "eevdf", 2, noDelays).outcomes[0].lastEnd, 5'000'000);
  EXPECT_EQ(replayOn(workload(3'970'000, 50), "eevdf", 2, noDelays).outcomes[0].lastEnd, 5'000'000);
  auto noSlack = noDelays;
  noSlack.push_back("timer_slack_ns=0");
  EXPECT_EQ(replayOn(workload(3'970'000, 120), "eevdf", 2, noSlack).outcomes[0].lastEnd, 5'000'000);
}

// --- requeue_lag_curr: the lag of a delayed task woken while queued ---

namespace {

// One CPU: A runs alone, forks B at 10 us of its work and blocks at 20 us,
// ahead of B in vruntime, so DELAY_DEQUEUE keeps it queued; B runs 300 us.
// `aAfter` are A's bursts after that block; B wakes the i-th of them at
// `bWakesAt[i]` of its work.
replay::Workload delayedSleeper(const std::vector<replay::Burst>& aAfter, const std::vector<int64_t>& bWakesAt) {
  replay::Workload w;
  w.kind = "rt-app";
  replay::Task a;
  a.tid = a.tgid = 100;
  a.comm = "a";
  a.exits = true;
  a.bursts.push_back(replay::Burst{.work = 20'000});
  a.bursts.insert(a.bursts.end(), aAfter.begin(), aAfter.end());
  a.triggers.push_back(replay::Trigger{.offset = 10'000, .burst = 0, .target = 1, .kind = replay::TriggerKind::Fork});
  replay::Task b;
  b.tid = b.tgid = 101;
  b.comm = "b";
  b.parent = 0;
  b.exits = true;
  b.bursts.push_back(replay::Burst{.work = 300'000});
  for (size_t i = 0; i < bWakesAt.size(); ++i)
    b.triggers.push_back(
        replay::Trigger{.offset = bWakesAt[i], .burst = 0, .target = 0, .targetBurst = static_cast<uint32_t>(i + 1)});
  w.tasks = {a, b};
  return w;
}

const replay::Burst kWokenByB{.work = 3'000, .wake = replay::WakeKind::Task, .waker = 1};

struct Switches {
  uint64_t voluntary = 0, involuntary = 0;
  bool operator==(const Switches&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Switches& s) {
  return os << "(voluntary " << s.voluntary << ", involuntary " << s.involuntary << ")";
}

// The replayed switches of the task named `comm` (a failure when there is none).
Switches switchesOf(const replay::ReplayResult& r, const std::string& comm) {
  EXPECT_TRUE(r.model);
  if (!r.model) return {};
  for (const auto& t : core::analysis::computeStats(*r.model).tasks)
    if (t.comm == comm) return {t.switchesVoluntary, t.switchesInvoluntary};
  ADD_FAILURE() << "no task " << comm;
  return {};
}

}  // namespace

// delayedSleeper() on one CPU (a 0.7 ms slice): A forks B at 10 us of its work (B is
// placed at V = 10 us, 6.18.33+ forks do not preempt) and blocks at 20 us,
// ahead of B in vruntime: not eligible (V = 15), so DELAY_DEQUEUE keeps it
// queued and B runs. At 11 us of its work B wakes A. The kernel takes A's lag
// against B's vruntime of its last update_curr(), at its pick: V = (20 + 10)/2,
// lag -5 us, so A keeps vruntime 20; the wakeup preemption test then brings B
// to 21, past V = 20.5: B is no longer eligible and A, the only eligible
// entity, preempts it; the same happens at B's second wakeup of A (11 us
// later). Brought up to date first, A's lag is +0.5 us: DELAY_ZERO places it
// anew at V = 21 beside B, which stays eligible and protected and runs its
// whole 300 us burst before A runs again.
TEST(EevdfPolicy, RequeuedDelayedTaskMeasuresItsLagAgainstTheRunningTasksLastUpdate) {
  const replay::Workload w = delayedSleeper({kWokenByB, kWokenByB}, {11'000, 22'000});
  const auto preemptionsOfB = [&](const char* lag) {
    std::vector<std::string> params = {"release=6.18.44"};
    if (*lag) params.push_back(std::string("requeue_lag_curr=") + lag);
    return switchesOf(replayOn(w, "eevdf", 1, params), "b").involuntary;
  };
  EXPECT_EQ(preemptionsOfB("stale"), 2u);
  EXPECT_EQ(preemptionsOfB("updated"), 0u);
  EXPECT_EQ(preemptionsOfB(""), 2u) << "the default is the kernel's";
}

// --- the wakeup test's pick and delayed tasks (6.18.33, ac8e69e69363) ---

namespace {

// One CPU, as make forks g++ and g++ vforks cc1plus (tools/experiments/vfork-wakeup.c):
// G runs 5 us and sleeps 1 ms, then runs 30 us, forking P at 10 us, and sleeps;
// P runs 42 us, vforking C at 40 us, and sleeps until C wakes it at
// `cWakesPAt` of its work; C runs 500 us.
replay::Workload vforkChain(int64_t cWakesPAt) {
  const auto sleepFor = [](int64_t work, int64_t sleepNs) {
    return replay::Burst{.work = work, .wake = replay::WakeKind::Sleep, .interruptWake = true, .sleepNs = sleepNs};
  };
  replay::Task g = replay_test::exitingTask(
      100, "g", -1, {replay::Burst{.work = 5'000}, sleepFor(30'000, 1'000'000), sleepFor(10'000, 100'000'000)});
  g.triggers.push_back(replay::Trigger{.offset = 10'000, .burst = 1, .target = 1, .kind = replay::TriggerKind::Fork});
  replay::Task p = replay_test::exitingTask(
      101, "p", -1,
      {replay::Burst{.work = 42'000}, replay::Burst{.work = 5'000, .wake = replay::WakeKind::Task, .waker = 2}});
  p.parent = 0;
  p.triggers.push_back(replay::Trigger{.offset = 40'000, .burst = 0, .target = 2, .kind = replay::TriggerKind::Fork});
  replay::Task c = replay_test::exitingTask(102, "c", -1, {replay::Burst{.work = 500'000}});
  c.parent = 1;
  c.triggers.push_back(replay::Trigger{.offset = cWakesPAt, .burst = 0, .target = 1, .targetBurst = 1});
  replay::Workload w;
  w.kind = "rt-app";
  w.tasks = {g, p, c};
  return w;
}

}  // namespace

// vforkChain(20 us), vruntimes from G's wakeup, which gives it a whole 0.7 ms
// slice (deadline 700): P is placed at 10 (deadline 10 + 350, half a slice);
// G sleeps at 30 behind V = 20, so DELAY_DEQUEUE keeps it queued. P places C
// at V = (30 + 50)/2 = 40 (deadline 390) and sleeps at 52 behind V = (30 + 52 +
// 40)/3 = 40.7: delayed too; the pick takes C, whose deadline is earlier than
// G's. C wakes P at 60; P keeps vruntime 52 (its lag against C's vruntime of
// its pick is negative). With G counted, V = (30 + 52 + 60)/3 = 47.3: P is not
// eligible, and the pick is G, the only eligible entity, so before 6.18.33 C
// runs on and finishes its 500 us with no preemption. From 6.18.33 the wakeup test picks
// as pick_next_entity() does: G leaves the queue, V = (52 + 60)/2 = 56, P is
// eligible with the earlier deadline (360 against C's 390) and preempts C. The
// kernel does the latter for the vfork parent of tools/experiments/vfork-wakeup.c
// (docs/models.md §8.3). Both runs leave out fork preemption, on before 6.18.33.
TEST(EevdfPolicy, WakeupTestDequeuesTheDelayedTaskItsPickReaches) {
  const auto involuntaryOfC = [](const char* release, int64_t cWakesPAt) {
    const auto r = replayOn(vforkChain(cWakesPAt), "eevdf", 1,
                            {std::string("release=") + release, "wakeup_preempt_fork=false"});
    return switchesOf(r, "c").involuntary;
  };
  EXPECT_EQ(involuntaryOfC("6.18.33", 20'000), 1u);
  EXPECT_EQ(involuntaryOfC("6.18.32", 20'000), 0u);
  // At 10 us of C's work V = (52 + 50)/2 = 51 without G: P is not eligible
  // there either, and C keeps the CPU in both.
  EXPECT_EQ(involuntaryOfC("6.18.33", 10'000), 0u);
}

// --- preempt: a vfork parent runs on to its vfork wait under PREEMPT_NONE ---

// One CPU. P runs 5 us and sleeps 1 ms; 98 us after it wakes it vforks C,
// and 2 us later it sleeps uninterruptibly until C, 50 us into its run,
// releases it. C has a 100 us custom slice, so PREEMPT_SHORT lets it preempt
// P at its fork (deadline 98 + 50 against P's 700 us of vruntime). The kernel
// has no preemption point between wake_up_new_task() and the vfork wait
// unless it is built for voluntary preemption (might_sleep() in
// wait_for_completion()), so under preempt=none P sleeps 2 us later as
// recorded, a voluntary switch; under voluntary it is preempted at once
// (no measured delay here), and by the time it runs again C has released
// it, so it never sleeps there.
TEST(EngineVfork, ParentRunsOnToItsVforkWaitWithoutPreemption) {
  replay::Task p = replay_test::exitingTask(
      100, "p", -1,
      {replay::Burst{.work = 5'000},
       replay::Burst{.work = 100'000, .wake = replay::WakeKind::Sleep, .interruptWake = true, .sleepNs = 1'000'000},
       replay::Burst{
           .work = 10'000, .wake = replay::WakeKind::Task, .blockState = core::TaskState::Blocked, .waker = 1}});
  p.triggers.push_back(replay::Trigger{.offset = 98'000, .burst = 1, .target = 1, .kind = replay::TriggerKind::Fork});
  replay::Task c = replay_test::exitingTask(101, "c", -1, {replay::Burst{.work = 200'000}});
  c.parent = 0;
  c.triggers.push_back(replay::Trigger{.offset = 50'000, .burst = 0, .target = 0, .targetBurst = 2});
  replay::Workload w;
  w.kind = "rt-app";
  w.tasks = {p, c};
  const auto switchesOfP = [&](const char* preempt) {
    return switchesOf(
        replayOn(w, "eevdf", 1, {"release=6.18.44", "task_slice=tid:101=100000", std::string("preempt=") + preempt}),
        "p");
  };
  // The 1 ms sleep, the vfork wait and the exit are voluntary.
  EXPECT_EQ(switchesOfP("none"), (Switches{3, 0}));
  EXPECT_EQ(switchesOfP("voluntary"), (Switches{2, 1}));
}

// Two CPUs. P, on CPU 0, vforks C at 10 us of its 100 us burst and then waits
// for C, which runs on CPU 1 and releases it 5 us into its run, before P gets
// to its wait. Q arrives on CPU 0 at 30 us with a 100 us custom slice: under
// preempt=none its preemption of P waits for P's return to user space, at the
// end of P's burst, where P finds itself released and goes on without
// sleeping: Q runs from 100 us, P's only involuntary switch. Under voluntary
// Q runs at once.
TEST(EngineVfork, PreemptionDeferredInAVforkTakesEffectWhenTheParentRunsOn) {
  replay::Task p = replay_test::exitingTask(
      100, "p", 0,
      {replay::Burst{.work = 100'000},
       replay::Burst{
           .work = 200'000, .wake = replay::WakeKind::Task, .blockState = core::TaskState::Blocked, .waker = 1}});
  p.triggers.push_back(replay::Trigger{.offset = 10'000, .burst = 0, .target = 1, .kind = replay::TriggerKind::Fork});
  replay::Task c = replay_test::exitingTask(101, "c", -1, {replay::Burst{.work = 50'000}});
  c.parent = 0;
  c.affinity = {1};
  c.triggers.push_back(replay::Trigger{.offset = 5'000, .burst = 0, .target = 0, .targetBurst = 1});
  replay::Task q = replay_test::exitingTask(102, "q", 0, {replay::Burst{.work = 20'000}});
  q.startTs = 30'000;
  q.affinity = {0};
  replay::Workload w;
  w.kind = "rt-app";
  w.tasks = {p, c, q};
  const auto firstRunOf = [](const replay::ReplayResult& r, const std::string& comm) {
    int64_t first = INT64_MAX;
    for (const auto& slices : r.model->cpuSlices)
      for (size_t i = 0; i < slices.size(); ++i)
        if (slices.kind[i] == core::SliceKind::Task && r.model->comm(slices.utid[i]) == comm)
          first = std::min(first, slices.ts[i]);
    return first;
  };
  const auto run = [&](const char* preempt) {
    return replayOn(w, "eevdf", 2, {"release=6.18.44", "task_slice=tid:102=100000", std::string("preempt=") + preempt});
  };
  const auto none = run("none");
  EXPECT_EQ(firstRunOf(none, "q"), 100'000);
  EXPECT_EQ(switchesOf(none, "p"), (Switches{1, 1}));  // preempted by Q, then its exit
  EXPECT_EQ(firstRunOf(run("voluntary"), "q"), 30'000);
}

// --- the model's DELAY_DEQUEUE counters (replay's "Model:" line) ---

// delayedSleeper(): A blocks at 20 us behind B and is kept queued.
// Woken by B at 11 us of B's work, it was held 11 us; asleep for 10 ms
// instead, it is held until B exits at 320 us and the pick reaches it. The
// shares are of the busy time, the work of both tasks.
TEST(EevdfPolicy, CountsTheSleepersDelayDequeueKeptQueued) {
  const auto workload = [](bool wokenByB) {
    const replay::Burst asleep{
        .work = 10'000, .wake = replay::WakeKind::Sleep, .interruptWake = true, .sleepNs = 10'000'000};
    return wokenByB ? delayedSleeper({kWokenByB}, {11'000}) : delayedSleeper({asleep}, {});
  };
  const auto counters = [](const replay::ReplayResult& r) {
    return std::map<std::string, double>(r.modelCounters.values.begin(), r.modelCounters.values.end());
  };
  const std::vector<std::string> release = {"release=6.18.44"};
  const auto woken = counters(replayOn(workload(true), "eevdf", 1, release));
  EXPECT_EQ(woken.at("delayed_dequeues"), 1);
  EXPECT_EQ(woken.at("delayed_woken"), 1);
  EXPECT_EQ(woken.at("delayed_picked"), 0);
  EXPECT_NEAR(woken.at("delayed_busy_share"), 11.0 / 323, 1e-9);
  EXPECT_EQ(woken.at("delayed_mean_while_held"), 1);
  const auto picked = counters(replayOn(workload(false), "eevdf", 1, release));
  EXPECT_EQ(picked.at("delayed_dequeues"), 1);
  EXPECT_EQ(picked.at("delayed_woken"), 0);
  EXPECT_EQ(picked.at("delayed_picked"), 1);
  EXPECT_NEAR(picked.at("delayed_busy_share"), 300.0 / 330, 1e-9);
  // Without DELAY_DEQUEUE (or before 6.12) nothing is kept, and nothing is said.
  EXPECT_TRUE(replayOn(workload(true), "eevdf", 1, {"release=6.6.0"}).modelCounters.summary.empty());
  const auto off = replayOn(workload(false), "eevdf", 1, {"release=6.18.44", "delay_dequeue=false"});
  EXPECT_TRUE(off.modelCounters.values.empty());
}

// --- SIS_UTIL: how far select_idle_cpu() looks (docs/models.md §5.5) ---

// hog0 (pinned to CPU 0) runs throughout; h1 (pinned to CPU 1) runs 300 ms,
// sleeps 50 ms, runs again. "s" ran 0.1 ms on CPU 0 at the start and is woken
// by an interrupt on CPU 0 at 310 ms, while CPU 1 is idle. Both CPUs' PELT util
// is then near 1024 (300 ms running: 1024 x (1 - 2^(-300/32.8)) = 1022; CPU 1's
// decays to ~830 over the 10 ms idle), so the LLC domain's periodic balance has
// left nr_idle_scan = 0: x = sum / 2 >= 925, y = 1024 - min(1024, x^2 x 117^2 /
// (10000 x 1024)) = 0 (on two CPUs nr_idle_scan = 2y / 1024 is 0 above x = 619). s's previous CPU, the wakeup's target, is
// busy, so with SIS_UTIL it is queued there; without, the scan finds CPU 1.
TEST(FairPlacement, SisUtilSkipsTheIdleScanWhenTheLlcIsBusy) {
  replay::Workload w;
  w.kind = "rt-app";
  replay::Task hog;
  hog.tid = hog.tgid = 100;
  hog.comm = "hog0";
  hog.affinity = {0};
  hog.startCpu = 0;
  hog.bursts.push_back(replay::Burst{.work = 700'000'000});
  replay::Task h1;
  h1.tid = h1.tgid = 101;
  h1.comm = "h1";
  h1.affinity = {1};
  h1.startCpu = 1;
  h1.bursts.push_back(replay::Burst{.work = 300'000'000});
  h1.bursts.push_back(replay::Burst{.work = 300'000'000, .wake = replay::WakeKind::Sleep, .sleepNs = 50'000'000, .wakeCpu = 1});
  replay::Task s;
  s.tid = s.tgid = 102;
  s.comm = "s";
  s.startCpu = 0;
  s.bursts.push_back(replay::Burst{.work = 100'000});
  s.bursts.push_back(replay::Burst{.work = 100'000, .wake = replay::WakeKind::Sleep, .sleepNs = 310'000'000, .wakeCpu = 0});
  w.tasks = {hog, h1, s};
  w.durationNs = 700'000'000;
  for (const bool sisUtil : {true, false}) {
    SCOPED_TRACE(sisUtil ? "sis_util=true" : "sis_util=false");
    const auto r = replayOn(w, "eevdf", 2, {std::string("sis_util=") + (sisUtil ? "true" : "false"),
                                             "irq_wakeup_cpu=recorded", "irq_wakeup_time=relative",
                                             "idle_wakeup_ns=20000"});
    ASSERT_TRUE(r.model);
    // Where s ran after the wakeup (on CPU 0 it preempts hog0 at once; on CPU
    // 1 it waits 20 µs for the CPU to leave idle).
    int ranOn = -1;
    for (uint32_t u = 1; u < r.model->threads.size(); ++u) {
      if (r.model->comm(core::Utid(u)) != "s") continue;
      const auto [b, e] = r.model->stateRowsOf(core::Utid(u));
      for (uint32_t row = b; row < e; ++row)
        if (r.model->threadStates.state[row] == core::TaskState::Running &&
            r.model->threadStates.ts[row] > r.model->firstTs + 300'000'000)
          ranOn = r.model->threadStates.cpu[row];
    }
    EXPECT_EQ(ranOn, sisUtil ? 0 : 1);
    EXPECT_EQ(r.outcomes[2].workDone, 200'000);
  }
}

// --- Periodic balance (docs/models.md §5.5) ---

// rebalance_domains() keeps each domain's last balance in jiffies: a busy CPU
// of the 2-CPU LLC balances every balance_interval x busy_factor = 2 ms x 16
// = 32 ms, i.e. every 8th tick at HZ=250, however late each tick's interrupt
// runs. Three hogs (nice 0, 0 and 5) on two CPUs keep both CPUs busy and
// never sleep, so every migration is a periodic balance pulling a task to
// the balancing CPU; each lands 8k jiffies after that CPU's first one. The
// ticks here run 0-80 us late, drawn per tick (tick_delay_ns=-1 measured
// from offsets given to the workload); a balance clock read in ns rather than
// in jiffies skips to the 9th tick whenever the tick that set it ran later
// than the 8th one after it.
TEST(FairBalance, PeriodicBalanceCountsItsIntervalInJiffiesWhenTicksRunLate) {
  const std::string json = R"({"global": {"duration": 2},
    "tasks": {
      "a": {"loop": -1, "priority": 0, "run": 100000},
      "b": {"loop": -1, "priority": 0, "run": 100000},
      "c": {"loop": -1, "priority": 5, "run": 100000}}})";
  replay::Workload w = replay_test::rtapp(json);
  constexpr int64_t kTick = 4'000'000;
  for (int64_t i = 0; i < 1000; ++i) w.tickPreemptions.push_back(i * kTick + (i * 37'000) % 80'000);
  for (const char* model : {"cfs", "eevdf"}) {
    SCOPED_TRACE(model);
    const auto r = replayOn(w, model, 2, {"tick_delay_ns=-1"});
    ASSERT_TRUE(r.model);
    const auto& m = r.model->migrations;
    ASSERT_GE(m.size(), 3u);
    std::array<int64_t, 2> firstJiffy = {-1, -1};
    for (size_t i = 0; i < m.size(); ++i) {
      const int64_t jiffy = m.ts[i] / kTick;  // an rt-app replay starts at 0
      int64_t& first = firstJiffy.at(m.destCpu[i]);
      if (first < 0) first = jiffy;
      EXPECT_EQ((jiffy - first) % 8, 0) << "migration " << i << " to CPU " << m.destCpu[i] << " at jiffy " << jiffy;
    }
  }
}

// nohz_idle_balance() is rebalance_domains() as CPU_IDLE: its failed attempts
// count (sd->nr_balance_failed), and once more than cache_nice_tries (1) have
// failed it moves a cache-hot task. "a" runs 4.1 ms on CPU 0 and exits; "b"
// and "c", 40 ms each, take turns on CPU 1 at its ticks (HZ=250: 4, 8, 12 ms
// ...; EEVDF's 0.7 ms slices end at each tick, where CFS's 6 ms ones would
// leave "c" not yet run, cold, at 4.1 ms). CPU 0 goes idle at 4.1 ms, when the
// waiting hog left CPU 1 0.1 ms ago
// (cache-hot: migration_cost 0.5 ms), so its newidle pull takes nothing. CPU
// 1's ticks then kick it, and it balances 20 us later (idle_wakeup_ns), after
// the tick's switch: the waiting hog left 20 us before. The periodic balance
// of CPU 0 at its own 4 ms tick failed once already (the waiting hog was
// cache-hot, or weighed more than half the load between the CPUs), the kick
// at 8 ms fails too (2 failures), and the kick at 12 ms moves "b", switched out
// by that tick: "b" runs on CPU 0 from 12.02 ms and "c" stays on CPU 1. A kick
// that pulled as a newidle balance does never counts, found a hot hog at every
// tick, and left both on CPU 1 to 80 ms.
TEST(FairBalance, NohzIdleBalanceMovesACacheHotTaskAfterFailedAttempts) {
  replay::Workload w;
  w.kind = "rt-app";
  w.tasks.push_back(exitingTask(100, "a", 0, 4'100'000));
  w.tasks.push_back(exitingTask(101, "b", 1, 40'000'000));
  w.tasks.push_back(exitingTask(102, "c", 1, 40'000'000));
  const auto r = replayOn(w, "eevdf", 2, {"idle_wakeup_ns=20000", "tick_delay_ns=0"});
  ASSERT_TRUE(r.model);
  const auto& m = r.model->migrations;
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(r.model->comm(m.utid[0]), "b");
  EXPECT_EQ(m.destCpu[0], 0);
  EXPECT_EQ(m.ts[0], 12'020'000);
  EXPECT_EQ(r.outcomes[1].lastEnd, 12'020'000 + 32'000'000);  // "b": 8 ms done by 12 ms
  EXPECT_EQ(r.outcomes[2].lastEnd, 12'000'000 + 36'000'000);  // "c": 4 ms done by 12 ms
}
