// Core scheduling, SMT contention and cookie rules in the replay: hand-worked
// schedules of the core-wide pick for every variant, the untagged identity
// with the plain baseline, forced idle on a real recording, and the
// core-scheduling fairness scenario of docs/models.md §6.1.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <sstream>

#include "core/analysis/stats.h"
#include "importers/importer.h"
#include "replay/policies/registry.h"
#include "replay/replay.h"
#include "replay/scenarios/coresched_fairness.h"
#include "replay/workload/task_rules.h"
#include "replay/workload/trace_extractor.h"

namespace {

using replay::Burst;
using replay::Task;
using replay::Workload;

// Always-runnable tasks (comm, allowed CPUs or {} for all, start in µs) for `ms` milliseconds.
Workload hogs(std::vector<std::tuple<std::string, std::vector<int>, int64_t>> specs, int64_t ms) {
  Workload w;
  w.kind = "rt-app";
  w.durationNs = ms * 1'000'000;
  int32_t tid = 100;
  for (auto& [comm, cpus, startUs] : specs) {
    Task t;
    t.tid = t.tgid = ++tid;
    t.comm = comm;
    t.affinity = cpus;
    t.startTs = startUs * 1000;
    t.bursts.push_back(Burst{.work = 10 * w.durationNs});
    w.tasks.push_back(std::move(t));
  }
  return w;
}

replay::ReplayResult run(const Workload& w, const std::string& model, std::vector<std::string> params,
                         const std::string& topology = "1x2") {
  replay::ReplayOptions o;
  o.model = model;
  o.topology = *core::Topology::parseSpec(topology);
  o.params = std::move(params);
  auto r = replay::runReplay(w, o);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message());
  return r ? std::move(*r) : replay::ReplayResult();
}

// "a@0 FI@1000 a@8000": who ran on the CPU from when (µs), FI = forced idle.
std::string timeline(const core::TraceModel& m, int cpu) {
  std::ostringstream out;
  std::string last;
  const auto& s = m.cpuSlices[static_cast<size_t>(cpu)];
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.dur[i] == 0) continue;
    std::string label = s.kind[i] == core::SliceKind::Task         ? std::string(m.comm(s.utid[i]))
                        : s.kind[i] == core::SliceKind::ForcedIdle ? "FI"
                                                                   : "idle";
    if (label == last) continue;
    if (!last.empty()) out << ' ';
    out << label << '@' << (s.ts[i] - m.firstTs) / 1000;
    last = label;
  }
  return out.str();
}

// Core scheduling's promise, checked on the output: at no instant do two
// siblings run tasks of different cookies. Returns the first violation.
std::string cookiesShareACore(const core::TraceModel& m) {
  for (const auto& cpus : m.topology.cores()) {
    std::vector<size_t> at(cpus.size(), 0);
    std::vector<int64_t> times;
    for (int c : cpus)
      for (size_t i = 0; i < m.cpuSlices[static_cast<size_t>(c)].size(); ++i)
        times.push_back(m.cpuSlices[static_cast<size_t>(c)].ts[i]);
    std::sort(times.begin(), times.end());
    for (int64_t t : times) {
      std::optional<uint32_t> cookie;
      for (size_t k = 0; k < cpus.size(); ++k) {
        const auto& s = m.cpuSlices[static_cast<size_t>(cpus[k])];
        while (at[k] < s.size() && s.end(at[k]) <= t) ++at[k];
        if (at[k] >= s.size() || s.ts[at[k]] > t || s.kind[at[k]] != core::SliceKind::Task) continue;
        const uint32_t c = m.threads.cookie[s.utid[at[k]].value];
        if (cookie && *cookie != c)
          return "cookies " + std::to_string(*cookie) + " and " + std::to_string(c) + " share a core at " +
                 std::to_string(t);
        cookie = c;
      }
    }
  }
  return {};
}

// a (cookie A) pinned to CPU 0 from 0, b (cookie B) pinned to CPU 1 from 1 ms,
// 24 ms, HZ 250 (ticks at 4, 8, ... ms), tunables unscaled: latency 6 ms.
std::pair<std::string, std::string> twoCookies(const std::string& variant, const std::string& base = "cfs") {
  const Workload w = hogs({{"a", {0}, 0}, {"b", {1}, 1000}}, 24);
  auto r = run(w, base + "+coresched",
               {"tunable_scaling=none", "coresched.variant=" + variant, "coresched.cookie=comm:^a$=A;comm:^b$=B"});
  if (!r.model) return {};
  return {timeline(*r.model, 0), timeline(*r.model, 1)};
}

}  // namespace

// At 1 ms b arrives; the selection runs on CPU 1, which wins ties, so every
// variant forces CPU 0 idle there (b's vruntime 0 is not behind a's 1 ms under
// any comparison). What happens next is the variant's.
TEST(CoreschedPick, V3NeverLetsTheForcedIdleSiblingBack) {
  // No tick check: a waits until b sleeps, which it never does (the v3 stall).
  auto [cpu0, cpu1] = twoCookies("v3");
  EXPECT_EQ(cpu0, "a@0 FI@1000");
  EXPECT_EQ(cpu1, "b@1000");
}

TEST(CoreschedPick, CoreVruntimeFlipsAfterASliceWithOneTask) {
  // Tick check with nr_running 1: b ran 7 ms > 6 ms at the 8 ms tick; raw
  // vruntimes 7 vs 1 give the core to a; a ran 8 ms > 6 at 16 ms: 9 vs 7, back to b.
  auto [cpu0, cpu1] = twoCookies("v3-corevrt");
  EXPECT_EQ(cpu0, "a@0 FI@1000 a@8000 FI@16000");
  EXPECT_EQ(cpu1, "b@1000 FI@8000 b@16000");
}

TEST(CoreschedPick, ForcedIdleAccountingCreditsTheIdleCpu) {
  // At 8 ms CPU 0's min_vruntime got 7 ms of forced-idle credit: a's
  // normalised vruntime is -7 ms against b's 0; at 16 ms CPU 1 got 8 ms: b wins.
  auto [cpu0, cpu1] = twoCookies("v3-fiaccount");
  EXPECT_EQ(cpu0, "a@0 FI@1000 a@8000 FI@16000");
  EXPECT_EQ(cpu1, "b@1000 FI@8000 b@16000");
}

TEST(CoreschedPick, AllowanceFlipsWhenSpentAndRefills) {
  // CPU 1 spends its 5 ms: 2 ms left at 4, -2 at 8 -> a (5 ms) wins. CPU 0:
  // 1 at 12, -3 at 16: all spent, +5 each (2 and 3), no flip; -2 at 20 -> b.
  auto [cpu0, cpu1] = twoCookies("v3-allowance");
  EXPECT_EQ(cpu0, "a@0 FI@1000 a@8000 FI@20000");
  EXPECT_EQ(cpu1, "b@1000 FI@8000 b@20000");
}

TEST(CoreschedPick, CoreschedIdleTicksLetTheWaitingTaskInEachTick) {
  // The forced-idle side ticks too: at every tick its task is behind the running one.
  auto [cpu0, cpu1] = twoCookies("v3-coresched-idle");
  EXPECT_EQ(cpu0, "a@0 FI@1000 a@4000 FI@8000 a@12000 FI@16000 a@20000");
  EXPECT_EQ(cpu1, "b@1000 FI@4000 b@8000 FI@12000 b@16000 FI@20000");
}

TEST(CoreschedPick, MainlineComparesAgainstForcedIdleSnapshots) {
  // Snapshots at 1 ms: fi0 = 1 ms, fi1 = 0, frozen while the core stays forced
  // idle. The slice of one task is 6 ms less 2 ns (__calc_delta's rounding),
  // so 3 ms used is half of it. 4 ms: b ran 3: (3-1)+(1-0) > 0, a wins.
  // 8: a ran 4: (5-3)+(0-1) > 0, b. 12: (7-5)+(1-0) > 0, a. And so on.
  auto [cpu0, cpu1] = twoCookies("mainline");
  EXPECT_EQ(cpu0, "a@0 FI@1000 a@4000 FI@8000 a@12000 FI@16000 a@20000");
  EXPECT_EQ(cpu1, "b@1000 FI@4000 b@8000 FI@12000 b@16000 FI@20000");
}

TEST(CoreschedPick, MainlineOnEevdfFlipsEveryTick) {
  // EEVDF's slice is base_slice (0.75 ms unscaled): half of it is used long before any tick.
  auto [cpu0, cpu1] = twoCookies("mainline", "eevdf");
  EXPECT_EQ(cpu0, "a@0 FI@1000 a@4000 FI@8000 a@12000 FI@16000 a@20000");
  EXPECT_EQ(cpu1, "b@1000 FI@4000 b@8000 FI@12000 b@16000 FI@20000");
}

TEST(CoreschedPick, MainlineWithALongerSliceFlipsEverySecondTick) {
  // latency 8 ms: half a slice is 4 ms, so 3 ms at the first tick is not enough.
  const Workload w = hogs({{"a", {0}, 0}, {"b", {1}, 1000}}, 24);
  auto r = run(w, "cfs+coresched",
               {"tunable_scaling=none", "latency_ns=8000000", "coresched.cookie=comm:^a$=A;comm:^b$=B"});
  ASSERT_TRUE(r.model);
  // 8 ms: b ran 7: (7-1)+(1-0) > 0, a. 12: a ran 4 (8 > 8 ms - 2 ns):
  // (5-7)+(0-1) < 0, a is picked again. 16: (9-7)+(0-1) > 0, b. 20: b ran 4:
  // (11-9)+(1-0) > 0, a.
  EXPECT_EQ(timeline(*r.model, 0), "a@0 FI@1000 a@8000 FI@16000 a@20000");
  EXPECT_EQ(timeline(*r.model, 1), "b@1000 FI@8000 b@16000 FI@20000");
}

TEST(CoreschedPick, SameCookieRunsTogetherWithoutForcedIdle) {
  const Workload w = hogs({{"a", {0}, 0}, {"b", {1}, 1000}}, 24);
  for (const auto& variant : replay::scenario::coreschedVariants()) {
    auto r = run(w, "cfs+coresched", {"coresched.variant=" + variant, "coresched.cookie=all=shared"});
    ASSERT_TRUE(r.model);
    EXPECT_EQ(core::analysis::computeStats(*r.model).forcedIdleNs, 0) << variant;
    EXPECT_EQ(timeline(*r.model, 1), "b@1000") << variant;
  }
}

TEST(CoreschedPick, UntaggedTaskIsIncompatibleWithTaggedOne) {
  // Cookie 0 is not in the core tree: with b tagged and a not, they never share the core.
  const Workload w = hogs({{"a", {0}, 0}, {"b", {1}, 1000}}, 24);
  auto r = run(w, "cfs+coresched", {"coresched.cookie=comm:^b$=B"});
  ASSERT_TRUE(r.model);
  const auto stats = core::analysis::computeStats(*r.model);
  EXPECT_GT(stats.forcedIdleNs, 0);
  // One of the two CPUs is forced idle at any time after 1 ms: busy + forced idle = 2 x 23 ms + a's first ms.
  EXPECT_EQ(stats.busyNs + stats.forcedIdleNs, 47'000'000);
}

TEST(Coresched, UntaggedWorkloadsScheduleExactlyLikeTheBaseline) {
  const Workload w = hogs({{"a", {}, 0}, {"b", {}, 300}, {"c", {}, 700}, {"d", {0}, 900}}, 50);
  for (const std::string base : {"cfs", "eevdf"}) {
    auto plain = run(w, base, {}, "2x2");
    ASSERT_TRUE(plain.model);
    for (const auto& variant : replay::scenario::coreschedVariants()) {
      auto cs = run(w, base + "+coresched", {"coresched.variant=" + variant}, "2x2");
      ASSERT_TRUE(cs.model);
      EXPECT_EQ(replay::modelHash(*cs.model), replay::modelHash(*plain.model)) << base << " " << variant;
      EXPECT_EQ(core::analysis::computeStats(*cs.model).forcedIdleNs, 0);
    }
  }
}

TEST(Coresched, ForcedIdleBalanceStealsACookieMatchingTask) {
  // 2 cores x 2 threads. Core 0: x (cookie X) on CPU 0 and y (Y) on CPU 1, so
  // one of them is always forced idle. Core 1: z (Z) on CPU 3, and x2, x3 (X,
  // allowed on CPUs 1 and 2) queued on CPU 2: core 1 too runs one task at a
  // time. When CPU 1 is forced idle under core cookie X, it may steal x3 from
  // CPU 2 (queued, not picked, allowed, from a core no busier than its own).
  // Periodic and nohz balancing are off so that only stealing moves tasks.
  const Workload w = hogs({{"x", {0}, 0}, {"y", {1}, 100}, {"x2", {1, 2}, 200}, {"x3", {1, 2}, 300}, {"z", {3}, 400}}, 200);
  const std::vector<std::string> common = {"coresched.cookie=comm:^x=X;comm:^y$=Y;comm:^z$=Z",
                                           "balance_interval_ms=100000", "nohz_idle_balance=false"};
  auto with = run(w, "cfs+coresched", common, "2x2");
  auto params = common;
  params.push_back("coresched.forceidle_balance=false");
  auto without = run(w, "cfs+coresched", params, "2x2");
  ASSERT_TRUE(with.model && without.model);
  const auto fiWith = core::analysis::computeStats(*with.model).forcedIdleNs;
  const auto fiWithout = core::analysis::computeStats(*without.model).forcedIdleNs;
  EXPECT_GT(fiWithout, 0);
  EXPECT_LT(fiWith, fiWithout);
  EXPECT_EQ(without.stats.migrations, 0u);
  EXPECT_GT(with.stats.migrations, 0u);
  EXPECT_NE(timeline(*with.model, 1).find("x3@"), std::string::npos) << timeline(*with.model, 1);
  EXPECT_EQ(cookiesShareACore(*with.model), "");
  EXPECT_EQ(cookiesShareACore(*without.model), "");
}

TEST(Coresched, CookiesAndForceidleSumInTheModel) {
  const Workload w = hogs({{"a", {0}, 0}, {"b", {1}, 1000}}, 24);
  auto r = run(w, "cfs+coresched", {"coresched.variant=v3-corevrt", "coresched.cookie=comm:^a$=A;comm:^b$=B"});
  ASSERT_TRUE(r.model);
  const auto stats = core::analysis::computeStats(*r.model);
  ASSERT_EQ(stats.cookies.size(), 2u);
  EXPECT_EQ(stats.cookies[0].name, "A");
  EXPECT_EQ(stats.cookies[1].name, "B");
  // From the hand-worked v3-corevrt schedule: a ran 1 + 8 ms, 8 of them with CPU 1 forced idle.
  EXPECT_EQ(stats.cookies[0].runtimeNs, 9'000'000);
  EXPECT_EQ(stats.cookies[0].forcedIdleCausedNs, 8'000'000);
  EXPECT_EQ(stats.cookies[1].runtimeNs, 15'000'000);
  EXPECT_EQ(stats.cookies[1].forcedIdleCausedNs, 15'000'000);
  EXPECT_EQ(stats.cpus[0].forcedIdleNs, 15'000'000);
  EXPECT_EQ(stats.cpus[1].forcedIdleNs, 8'000'000);
}

TEST(Smt, SiblingsSlowEachOtherDown) {
  // Both threads busy for 100 ms: each does 65 ms of work at the default factor;
  // alone on its core a task runs at full speed.
  const Workload w = hogs({{"a", {0}, 0}, {"b", {1}, 0}}, 100);
  auto smt = run(w, "cfs", {}, "1x2");
  EXPECT_EQ(smt.outcomes[0].workDone, 65'000'000);
  EXPECT_EQ(smt.outcomes[1].workDone, 65'000'000);
  auto own = run(w, "cfs", {"smt.task_factor=comm:^b$=0.9"}, "1x2");
  EXPECT_EQ(own.outcomes[0].workDone, 65'000'000);
  EXPECT_EQ(own.outcomes[1].workDone, 90'000'000);
  auto apart = run(w, "cfs", {}, "2x1");
  EXPECT_EQ(apart.outcomes[0].workDone, 100'000'000);
  // Forced idle is not busy: with different cookies each runs alone, at full speed.
  auto cs = run(w, "cfs+coresched", {"coresched.cookie=per-thread"}, "1x2");
  EXPECT_EQ(cs.outcomes[0].workDone + cs.outcomes[1].workDone, 100'000'000);
}

TEST(TaskRules, CookiesPerProcessPerThreadAndByRule) {
  Workload w;
  auto add = [&](int32_t tid, int32_t tgid, const char* comm, replay::TaskId parent = replay::kNoTask,
                 bool kthread = false) {
    Task t;
    t.tid = tid, t.tgid = tgid, t.comm = comm, t.parent = parent, t.kernelThread = kthread;
    w.tasks.push_back(t);
  };
  add(10, 10, "make");
  add(11, 11, "cc1", 0);
  add(12, 10, "make-worker");
  add(13, 13, "kworker/0:1", replay::kNoTask, true);
  std::vector<replay::TaskAttributes> a;
  std::vector<std::string> names;
  ASSERT_TRUE(replay::resolveCookies(w, "per-process", a, &names));
  EXPECT_EQ(a[0].cookie, a[2].cookie);  // one process
  EXPECT_NE(a[0].cookie, a[1].cookie);
  EXPECT_EQ(a[3].cookie, 0u);  // kernel threads stay untagged
  EXPECT_EQ(names[a[1].cookie], "tgid:11");
  a.clear();
  ASSERT_TRUE(replay::resolveCookies(w, "per-thread", a));
  EXPECT_NE(a[0].cookie, a[2].cookie);
  a.clear();
  // A rule on the parent reaches the child that no rule names; later rules win.
  ASSERT_TRUE(replay::resolveCookies(w, "comm:^make$=build;tid:12=other", a, &names));
  EXPECT_EQ(names[a[0].cookie], "build");
  EXPECT_EQ(a[1].cookie, a[0].cookie);
  EXPECT_EQ(names[a[2].cookie], "other");
  EXPECT_EQ(a[3].cookie, 0u);
  a.clear();
  auto bad = replay::resolveCookies(w, "comm:([=x", a);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("invalid regular expression"), std::string::npos) << bad.message();
  // Patterns std::regex cannot be trusted with are refused before it sees them,
  // read as it reads them: \c takes the next character, a backslash too, so
  // the digits after \c\\ are a back-reference (one whose number overflowed
  // an int inside libstdc++).
  // In ECMAScript "[]" is an empty class: what follows it is read as pattern again.
  for (const char* rules : {"comm:\\5555=x", "comm:a\\c\\\\5555555555555555555=x", "comm:[]\\5555=x"}) {
    auto refused = replay::resolveCookies(w, rules, a);
    ASSERT_FALSE(refused) << rules;
    EXPECT_NE(refused.message().find("a back-reference above 999"), std::string::npos) << refused.message();
  }
  ASSERT_TRUE(replay::resolveCookies(w, "comm:^\\\\5555=x", a));  // an escaped backslash, then digits
  a.clear();
  EXPECT_FALSE(replay::resolveCookies(w, "pid:3=x", a));
  EXPECT_FALSE(replay::resolveCookies(w, "tid:3=", a));
  EXPECT_FALSE(replay::resolveSmtFactors(w, "all=1.5", a));
  EXPECT_FALSE(replay::resolveUclamp(w, "all=900:100", a));
  ASSERT_TRUE(replay::resolveUclamp(w, "comm:^make$=:512", a));
  EXPECT_EQ(a[0].uclampMin, -1);
  EXPECT_EQ(a[0].uclampMax, 512);
  EXPECT_EQ(a[1].uclampMax, 512);  // inherited by the child
}

TEST(Coresched, ModelNamesAndErrors) {
  EXPECT_EQ(replay::parseModel("eevdf+uclamp+coresched")->name, "eevdf+coresched+uclamp");
  EXPECT_FALSE(replay::parseModel("bfs+coresched"));
  EXPECT_FALSE(replay::parseModel("cfs+smt"));
  auto params = replay::defaultParams("cfs+coresched");
  ASSERT_TRUE(params);
  EXPECT_EQ(params->get("coresched.variant"), "mainline");
  EXPECT_FALSE(params->set("coresched.variant", "v4"));
  EXPECT_FALSE(replay::defaultParams("cfs")->has("coresched.cookie"));
}

// sysbench-mix: two sysbench processes (tids 11127 and 11128), each running two
// CPU-bound threads (11131/11132 and 11129/11130), on a 2-CPU machine; replayed
// here on one SMT core (1x2). The trace.dat records no tgids, so per-process
// cookies fall back to one cookie per thread.
TEST(CoreschedRecording, PerThreadCookiesOnSysbenchMixRunOneHogAtATime) {
  const std::filesystem::path trace = std::filesystem::path(SCHEDLAB_SHARED_TRACES) / "recorded/sysbench-mix/trace.dat";
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << trace << " not present";
  auto imported = importers::importTrace(trace.string());
  ASSERT_TRUE(imported.has_value() && imported->model);
  auto w = replay::extractWorkload(*imported->model, {});
  ASSERT_TRUE(w);
  auto plain = run(*w, "cfs", {});
  auto untagged = run(*w, "cfs+coresched", {});
  ASSERT_TRUE(plain.model && untagged.model);
  EXPECT_EQ(replay::modelHash(*plain.model), replay::modelHash(*untagged.model));
  auto tagged = run(*w, "cfs+coresched", {"coresched.cookie=per-process"});
  ASSERT_TRUE(tagged.model);
  EXPECT_TRUE(tagged.validation.workConserved);
  EXPECT_EQ(cookiesShareACore(*tagged.model), "");
  // Four mutually incompatible hogs on one core: at most one runs at any time,
  // so the run lasts at least their summed work.
  int64_t hogWork = 0;
  for (const auto& t : w->tasks)
    if (t.tid >= 11129 && t.tid <= 11132) hogWork += t.totalWork();
  EXPECT_GT(hogWork, 3'800'000'000);  // ~0.97 s each in the recording
  EXPECT_GE(tagged.validation.makespanReplayNs, hogWork);
  for (const std::string variant : {"v3", "v3-corevrt", "v3-fiaccount", "v3-allowance", "v3-coresched-idle"}) {
    auto v = run(*w, "cfs+coresched", {"coresched.cookie=per-process", "coresched.variant=" + variant}, "2x2");
    ASSERT_TRUE(v.model);
    EXPECT_TRUE(v.validation.workConserved) << variant;
    EXPECT_EQ(cookiesShareACore(*v.model), "") << variant;
  }
}

// The same recording with one cookie per sysbench process, set on the two
// parents and inherited by their threads (as PR_SCHED_CORE_CREATE before the
// threads start): two runnable hogs of each cookie always give the core-wide
// pick a same-cookie task for the sibling, so a CPU is forced idle only while a
// cookie has a single runnable hog (thread start-up and exit), and the core
// stays about as busy as without core scheduling.
TEST(CoreschedRecording, PerProcessCookiesOnSysbenchMixKeepBothSiblingsBusy) {
  const std::filesystem::path trace = std::filesystem::path(SCHEDLAB_SHARED_TRACES) / "recorded/sysbench-mix/trace.dat";
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << trace << " not present";
  auto imported = importers::importTrace(trace.string());
  ASSERT_TRUE(imported.has_value() && imported->model);
  auto w = replay::extractWorkload(*imported->model, {});
  ASSERT_TRUE(w);
  auto plain = run(*w, "cfs", {});
  auto tagged = run(*w, "cfs+coresched", {"coresched.cookie=tid:11127=one;tid:11128=two"});
  ASSERT_TRUE(plain.model && tagged.model);
  EXPECT_TRUE(tagged.validation.workConserved);
  EXPECT_EQ(cookiesShareACore(*tagged.model), "");
  const auto stats = core::analysis::computeStats(*tagged.model);
  ASSERT_EQ(stats.cookies.size(), 3u);  // untagged, one, two
  EXPECT_EQ(stats.cookies[1].tasks, 3u);  // a parent and its two threads
  EXPECT_EQ(stats.cookies[2].tasks, 3u);
  for (const auto& c : stats.cpus) {
    EXPECT_GT(c.forcedIdleNs, 0) << "cpu " << c.cpu;
    EXPECT_LT(c.forcedIdleNs, stats.range.length() / 40) << "cpu " << c.cpu;  // under 2.5% of the run
  }
  EXPECT_LT(tagged.validation.makespanReplayNs, plain.validation.makespanReplayNs * 105 / 100);
  int64_t fiSum = 0;
  for (const auto& t : stats.tasks) fiSum += t.forceidleSumNs;
  // Two threads per core: forced idle has one runner beside it, except while
  // the task that made it so waits on its idle CPU for the IPI (idle_wakeup_ns).
  EXPECT_LE(fiSum, stats.forcedIdleNs);
  EXPECT_GT(fiSum, stats.forcedIdleNs * 9 / 10);
}

TEST(Scenario, CoreschedFairnessReproducesTheExperimentWhereItShould) {
  replay::scenario::FairnessOptions o;
  o.runs = 4;
  o.seconds = 3;
  auto rows = replay::scenario::runCoreschedFairness(o);
  ASSERT_TRUE(rows);
  auto find = [&](const std::string& v, const std::string& t) {
    for (const auto& r : *rows)
      if (r.variant == v && r.tagging == t) return r;
    ADD_FAILURE() << v << " " << t;
    return replay::scenario::FairnessRow{};
  };
  EXPECT_DOUBLE_EQ(find("alone", "-").mean, 1.0);
  EXPECT_NEAR(find("nosmt", "-").mean, 0.5, 0.01);
  for (const auto& v : replay::scenario::coreschedVariants()) {
    EXPECT_NEAR(find(v, "no-tag").mean, 0.65, 0.001) << v;  // both co-run at smt.factor
  }
  for (const std::string v : {"mainline", "v3-coresched-idle"}) {
    const auto r = find(v, "both-tagged");
    EXPECT_NEAR(r.mean, 0.5, 0.02) << v;  // docs/models.md §6.1: 653/1307
    EXPECT_LT(r.stddev, 0.01) << v;
  }
  // v3's stall: whoever takes the core first keeps it.
  EXPECT_GT(find("v3", "both-tagged").stddev, 0.3);
}

// The core-wide selection charges every sibling's running task before it
// picks (update_curr()), which moves V: a sleeper DELAY_DEQUEUE kept queued
// can become a sibling's pick then, and must leave the queue, as
// pick_task_fair() makes it, not be handed to the sibling to run. A build's
// recording on one core of two threads and on two cores met it (the replay
// stopped: "picked task rcu_preempt on CPU 1 though it is not runnable").
TEST(CoreschedRecording, DelayedSleepersMetByTheCoreWideSelectionLeaveTheQueue) {
  const std::string path = (std::filesystem::path(SCHEDLAB_TEST_DATA) / "fidelity" / "make-j2.perfetto-trace").string();
  auto imported = importers::importTrace(path);
  ASSERT_TRUE(imported) << imported.error().message();
  auto w = replay::extractWorkload(*imported->model, {});
  ASSERT_TRUE(w) << w.error().message();
  for (const char* topology : {"1x2", "2x2"}) {
    SCOPED_TRACE(topology);
    const auto r = run(*w, "eevdf+coresched", {"coresched.cookie=per-process"}, topology);
    ASSERT_EQ(r.outcomes.size(), w->tasks.size());
    for (size_t t = 0; t < w->tasks.size(); ++t) EXPECT_EQ(r.outcomes[t].workDone, w->tasks[t].totalWork()) << t;
  }
}
