// The model's honesty check: replaying a recording through the baseline
// (cfs, eevdf) on its recorded topology conserves every task's CPU work exactly
// and reproduces the recorded makespan within 10%. Runs over the shared
// recorded traces when present, else over the small fixtures in tests/data/replay.
// The fidelity of the baseline replays of the shared trace.dat recordings,
// metric by metric, against the bounds where the README's table says
// they hold. Also: determinism (same input, same hash) and the ftrace text
// round trip.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "importers/importer.h"
#include "replay/policies/registry.h"
#include "replay/replay.h"
#include "replay/workload/trace_extractor.h"
#include "replay_test_util.h"

namespace fs = std::filesystem;

namespace {

std::vector<std::string> identityTraces() {
  std::vector<std::string> out;
  const fs::path shared = fs::path(SCHEDLAB_SHARED_TRACES) / "recorded";
  if (fs::is_directory(shared)) {
    // recorded/README.md: each workload as ftrace text and as trace.dat.
    for (const char* w : {"hackbench-proc", "nicemix", "pipe-threads", "sysbench-mix"})
      for (const char* f : {"trace.txt", "trace.dat"}) out.push_back((shared / w / f).string());
  } else {
    for (const char* f : {"pipe-small.txt", "hogs-small.txt"})
      out.push_back((fs::path(SCHEDLAB_TEST_DATA) / "replay" / f).string());
  }
  return out;
}

// Sum of run-slice time per tid (tids are not reused in these traces' tasks we check).
std::map<int32_t, int64_t> runtimeByTid(const core::TraceModel& m) {
  std::map<int32_t, int64_t> out;
  for (const auto& t : m.cpuSlices)
    for (size_t i = 0; i < t.size(); ++i)
      if (t.kind[i] == core::SliceKind::Task) out[m.threads.tid[t.utid[i].value]] += t.dur[i];
  return out;
}

std::shared_ptr<core::TraceModel> import(const std::string& path, std::string& why) {
  auto r = importers::importTrace(path);
  if (!r) {
    why = r.error().message();
    return nullptr;
  }
  return r->model;
}

}  // namespace

TEST(ReplayIdentity, BaselineConservesWorkAndMakespan) {
  int checked = 0;
  for (const std::string& path : identityTraces()) {
    std::string why;
    auto recorded = import(path, why);
    ASSERT_TRUE(recorded) << path << ": " << why;
    auto workload = replay::extractWorkload(*recorded);
    ASSERT_TRUE(workload.has_value()) << path;
    std::map<int32_t, int64_t> workByTid;
    for (const auto& t : workload->tasks) workByTid[t.tid] += t.totalWork();
    for (const char* model : {"cfs", "eevdf"}) {
      SCOPED_TRACE(path + " through " + model);
      replay::ReplayOptions o;
      o.model = model;  // recorded topology
      auto r = replay::runReplay(*workload, o);
      ASSERT_TRUE(r.has_value()) << r.error().message();
      const auto& v = r->validation;
      EXPECT_TRUE(v.workConserved) << v.tasksUnfinished << " unfinished, " << v.tasksWorkMismatch << " mismatched";
      // Every task's CPU time in the replayed model is exactly its work.
      EXPECT_EQ(runtimeByTid(*r->model), workByTid);
      ASSERT_GT(v.makespanRecordedNs, 0);
      // The makespan bound is the identity replay's: these recordings come from
      // Linux 6.18, whose model is eevdf (release auto); cfs only conserves work.
      if (std::string(model) != "eevdf") continue;
      // pipe-threads/trace.txt is a known gap (1.126, docs/fidelity.md
      // and docs/models.md §8.3): the recording keeps both ends of the pipe on
      // one CPU for stretches (the reader requeued by DELAY_DEQUEUE at each
      // wakeup); the replay spreads them and pays an IPI each round.
      // The test holds that gap as stated, so that closing it shows up here.
      if (path.find("pipe-threads/trace.txt") != std::string::npos) {
        EXPECT_GT(v.makespanRatio(), 1.10) << "the documented gap closed: update the README and docs/models.md §8.3";
        ++checked;
        continue;
      }
      EXPECT_GE(v.makespanRatio(), 0.90) << v.makespanReplayNs << " vs " << v.makespanRecordedNs;
      EXPECT_LE(v.makespanRatio(), 1.10) << v.makespanReplayNs << " vs " << v.makespanRecordedNs;
      ++checked;
    }
    // The work is exactly the recording's own per-task CPU time (switch-ins the
    // trace lacks are inferred at import, so the recording's statistics count them too).
    auto recordedRuntime = runtimeByTid(*recorded);
    for (auto it = recordedRuntime.begin(); it != recordedRuntime.end();)
      it = it->second == 0 ? recordedRuntime.erase(it) : std::next(it);
    for (auto it = workByTid.begin(); it != workByTid.end();)
      it = it->second == 0 ? workByTid.erase(it) : std::next(it);
    EXPECT_EQ(workByTid, recordedRuntime) << path;
  }
  EXPECT_GT(checked, 0);
}

namespace {

// Every metric the identity bounds judge (core/analysis/fidelity.h).
const std::vector<std::string> kJudgedMetrics = {
    "makespan_ns",           "cpu_work_ns",           "switches_voluntary",    "switches_involuntary",
    "migrations",            "wakeup_latency_p50_ns", "wakeup_latency_p90_ns", "wakeup_latency_p99_ns",
    "wakeup_latency_ks",     "sched_delay_p50_ns",    "sched_delay_p90_ns",    "sched_delay_p99_ns",
    "sched_delay_ks",        "task_cpu_share_pp"};

// Replays the recording at `path` through its baseline (with `seed`) and
// returns the metrics of `withinBounds` outside the identity bounds
// (core/analysis/fidelity.h, from the issue); with `expectPass` each is a failure.
std::vector<std::string> expectBaselineWithinBounds(const std::string& path, const std::vector<std::string>& withinBounds,
                                                   int seed = 1, bool expectPass = true,
                                                   const std::vector<std::string>& params = {}) {
  SCOPED_TRACE(path + ", seed " + std::to_string(seed));
  std::vector<std::string> failed;
  std::string why;
  auto recorded = import(path, why);
  EXPECT_TRUE(recorded) << why;
  if (!recorded) return withinBounds;
  replay::ReplayOptions o;
  o.model = replay::resolveBaseline("baseline", recorded->kernelRelease());
  o.params = params;
  o.params.push_back("seed=" + std::to_string(seed));
  // Every recording here comes from Linux 6.18.44: the baseline is that release's EEVDF.
  EXPECT_EQ(o.model, "eevdf");
  auto r = replay::replayRecording(*recorded, o);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message());
  if (!r || !r->result.validation.fidelity) return withinBounds;
  for (const std::string& key : withinBounds) {
    const auto* m = r->result.validation.fidelity->metric(key);
    EXPECT_NE(m, nullptr) << key;
    if (m && m->verdict == core::analysis::Verdict::Pass) continue;
    failed.push_back(key);
    if (m && expectPass)
      ADD_FAILURE() << key << ": recorded " << m->recorded.value_or(-1) << ", replayed " << m->replayed.value_or(-1)
                    << ", measure " << m->measure << " against " << m->bound;
  }
  return failed;
}

}  // namespace

// The metrics README "Replay fidelity" lists as within their bounds for each
// shared recording's trace.dat: a change of the model, the workload or the
// statistics that breaks one of them fails here. The metrics out of bounds
// there (hackbench's switches, pipe-threads' migrations...) are the documented
// gaps, not asserted: hackbench's replay is chaotic (docs/models.md §8.3).
TEST(ReplayIdentity, BaselineFidelityHoldsWhereTheReadmeSaysItDoes) {
  const fs::path shared = fs::path(SCHEDLAB_SHARED_TRACES) / "recorded";
  if (!fs::is_directory(shared)) GTEST_SKIP() << "needs ../shared/traces/recorded (absent: " << shared << ")";
  const std::vector<std::string> always = {"makespan_ns", "cpu_work_ns", "task_cpu_share_pp"};
  const std::map<std::string, std::vector<std::string>> alsoHolds = {
      {"hackbench-proc", {"switches_involuntary", "migrations", "wakeup_latency_p90_ns",
                          "wakeup_latency_p99_ns", "wakeup_latency_ks", "sched_delay_p90_ns", "sched_delay_p99_ns",
                          "sched_delay_ks"}},
      {"nicemix", {"switches_voluntary", "switches_involuntary", "migrations", "wakeup_latency_p50_ns",
                   "wakeup_latency_p90_ns", "wakeup_latency_p99_ns", "wakeup_latency_ks", "sched_delay_p50_ns",
                   "sched_delay_p99_ns", "sched_delay_ks"}},
      {"pipe-threads", {"switches_voluntary", "wakeup_latency_p50_ns", "wakeup_latency_p99_ns", "wakeup_latency_ks",
                        "sched_delay_p50_ns", "sched_delay_p99_ns", "sched_delay_ks"}},
      {"sysbench-mix", {"switches_voluntary", "switches_involuntary", "wakeup_latency_p50_ns", "wakeup_latency_p99_ns",
                        "wakeup_latency_ks", "sched_delay_p50_ns", "sched_delay_p99_ns", "sched_delay_ks"}},
  };
  // nicemix's `awk | grep` blocks as recorded only when grep, which ran
  // before awk first woke it, waits for awk's progress where it was switched
  // in again (the first waker as its producer, docs/models.md §8.1): without
  // that, 77 of 133 blocks are replayed, voluntary switches 0.83x, delay p50
  // 7.6x. At seeds 2 and 6 a balance pulls grep to the other CPU and they
  // fail still (docs/fidelity.md).
  // sysbench-mix's migrations are 8 recorded: 3-7 replayed over seeds 1-6,
  // out of their factor-2 bound at seeds 1, 3 and 5 (with exact ticks 3-5,
  // out at seeds 2 and 3), so one move decides; docs/fidelity.md.
  for (const auto& [workload, metrics] : alsoHolds) {
    std::vector<std::string> judged = always;
    judged.insert(judged.end(), metrics.begin(), metrics.end());
    expectBaselineWithinBounds((shared / workload / "trace.dat").string(), judged);
  }
  // hackbench-proc's latency p50 sits near its bound's edge and moves with the
  // replay's draw of wakeup delays (README "Replay fidelity" on seeds):
  // ratios 0.298-1.001 over seeds 1-6 with PELT loads in wake_affine_weight()
  // and kernel threads' timers on their recorded CPU (the defaults since
  // 2026-12-05, which fail fewer metrics on every other set measured), three
  // seeds out; 0.662-0.981 and one out with the defaults before.
  int p50Failures = 0;
  for (int seed = 1; seed <= 6; ++seed)
    p50Failures += !expectBaselineWithinBounds((shared / "hackbench-proc" / "trace.dat").string(),
                                               {"wakeup_latency_p50_ns"}, seed, false)
                        .empty();
  EXPECT_LE(p50Failures, 3) << "hackbench-proc's wakeup latency p50 out of bounds for " << p50Failures << " of 6 seeds";
  // nicemix holds every bound at seeds 1, 3, 4 and 5; at 2 and 6 a balance
  // pulls grep away from awk (docs/fidelity.md). Before grep was gated
  // on its first writer it held them at none.
  int nicemixSeedsWithin = 0;
  for (int seed = 1; seed <= 6; ++seed)
    nicemixSeedsWithin +=
        expectBaselineWithinBounds((shared / "nicemix" / "trace.dat").string(), kJudgedMetrics, seed, false).empty();
  EXPECT_GE(nicemixSeedsWithin, 4) << "nicemix within every bound at " << nicemixSeedsWithin << " of 6 seeds";
}

// The same for the small recordings in tests/data/fidelity (README there),
// which need nothing beside the checkout.
TEST(ReplayIdentity, FixturesKeepTheirBounds) {
  // Out of bounds there, and why (README "Replay fidelity", docs/fidelity.md):
  // the tail latency of the light loads is the busy host's other work. make-j2's and
  // interactive-batch's migrations (51 and 7 recorded) come within their
  // bound with the defaults of 2026-12-05 (1.61x, 1.43x): rcu_preempt's timer
  // wakeups happen on the CPU that took them in the recording and
  // wake_affine_weight() compares PELT loads, which send a wakee that slept
  // long to the busy waker as the kernel did; before, 0.35x and 0.29x
  // (docs/models.md §8.3).
  // The periodic loads hold every bound with this seed; with seeds 2, 4 and 6
  // cyclictest-fair's involuntary switches (5 recorded) come to 7, 1.40x, and
  // with 3 to 5 cyclictest-rt's migrations (21 recorded) to 8-10.
  // interactive-batch's latency p99 (101 us recorded) is 3.4x with autogroup
  // at this seed and 3: the first wakeup of each kernel thread starts with no
  // lag and loses pick_eevdf() to the hogs' group entity, waiting for the tick
  // (kworker/u8:0, kcompactd0, rcu_preempt: 2.8 ms), where the recording's
  // preempt at once; their later wakeups carry the lag of that wait and
  // preempt (docs/fidelity.md). On flat queues it was 1.80x.
  // make-j1's latency and delay p99 (3.99 ms recorded: rcu_preempt and the
  // per-CPU kworkers waiting a whole tick) are 1.41 ms: the replay's kept
  // rcu_preempt waits for the rest of a tick, the recording's a whole one
  // (docs/models.md §5.5, irq_wake_pack).
  // sessions holds every bound with autogroup, and fails 5 on flat queues.
  // session-jobs holds every bound with the autogroups saved beside it, and
  // fails 7 without them; at seed 2 its migrations (4 recorded) come to 9.
  const std::map<std::string, std::vector<std::string>> documentedGaps = {
      {"make-j1", {"wakeup_latency_p99_ns", "sched_delay_p99_ns"}},
      {"make-j2", {}},
      {"nicemix", {"wakeup_latency_p90_ns", "wakeup_latency_p99_ns"}},
      {"interactive-batch", {"wakeup_latency_p99_ns"}},
      {"cyclictest-fair", {}},
      {"cyclictest-rt", {}},
      {"sessions", {}},
      {"session-jobs", {}},
  };
  for (const auto& [name, gaps] : documentedGaps) {
    std::vector<std::string> judged;
    for (const std::string& key : kJudgedMetrics)
      if (std::find(gaps.begin(), gaps.end(), key) == gaps.end()) judged.push_back(key);
    expectBaselineWithinBounds((fs::path(SCHEDLAB_TEST_DATA) / "fidelity" / (name + ".perfetto-trace")).string(), judged);
  }
}

// make-j1's rcu_preempt (tests/data/fidelity/README.md): trace-cmd report -l
// of its trace.dat shows 74 wakeups of it from interrupt context on the CPU
// running the compiler while its previous CPU idled, 24 left on the busy CPU
// (the rest went to the idle one, as fair.c sends them). Kept there in that
// share (irq_wake_pack=measured, docs/models.md §5.5) the replay's migrations
// come within their bound (98 recorded); sent to the idle CPU every time
// (off) they are 37, out of it.
TEST(ReplayIdentity, InterruptWakeupsKeptOnABusyCpuAsTheRecordingDid) {
  const std::string path = (fs::path(SCHEDLAB_TEST_DATA) / "fidelity" / "make-j1.perfetto-trace").string();
  std::string why;
  auto recorded = import(path, why);
  ASSERT_TRUE(recorded) << why;
  auto w = replay::extractWorkload(*recorded);
  ASSERT_TRUE(w.has_value()) << w.error().message();
  const auto rcu = std::find_if(w->tasks.begin(), w->tasks.end(), [](const replay::Task& t) { return t.tid == 15; });
  ASSERT_NE(rcu, w->tasks.end());
  EXPECT_EQ(rcu->comm, "rcu_preempt");
  EXPECT_EQ(rcu->irqWakeupsBesideIdle, 74u);
  EXPECT_EQ(rcu->irqWakeupsKeptBusy, 24u);
  size_t othersKept = 0;
  for (const replay::Task& t : w->tasks) othersKept += t.tid != 15 && t.irqWakeupsKeptBusy > 0;
  EXPECT_EQ(othersKept, 0u);
  EXPECT_TRUE(expectBaselineWithinBounds(path, {"migrations"}).empty());
  EXPECT_EQ(expectBaselineWithinBounds(path, {"migrations"}, 1, false, {"irq_wake_pack=off"}),
            std::vector<std::string>{"migrations"});
}

// The dataflow gates of the default workload (wakeup_dependency=dataflow,
// docs/models.md §8.1) split bursts without changing any task's work and
// cannot deadlock a replay; on hackbench they give back blocks that exact
// wakeup dependencies alone lose (0.27 -> 0.49 of its voluntary switches,
// docs/fidelity.md).
TEST(ReplayIdentity, DataflowGatesConserveWorkAndGiveBackBlocks) {
  for (const std::string& path : identityTraces()) {
    SCOPED_TRACE(path);
    std::string why;
    auto recorded = import(path, why);
    ASSERT_TRUE(recorded) << why;
    replay::ExtractOptions exactOnly;
    exactOnly.dataflowGates = false;
    auto plain = replay::extractWorkload(*recorded, exactOnly);
    auto workload = replay::extractWorkload(*recorded);
    ASSERT_TRUE(plain.has_value() && workload.has_value());
    EXPECT_EQ(plain->dataflowGates, 0u);
    ASSERT_EQ(plain->tasks.size(), workload->tasks.size());
    for (size_t t = 0; t < plain->tasks.size(); ++t) EXPECT_EQ(plain->tasks[t].totalWork(), workload->tasks[t].totalWork());
    size_t gates = 0;
    for (const auto& t : workload->tasks)
      for (const auto& b : t.bursts) gates += b.gate;
    EXPECT_EQ(gates, workload->dataflowGates);
    EXPECT_EQ(workload->burstCount(), plain->burstCount() + gates);
    // Each recorded burst is split, nothing more: its first piece opens as it
    // did, each piece ends where the next (a gate) opens, the last ends as the
    // burst did, and the pieces' work adds up to the burst's.
    for (size_t t = 0; t < plain->tasks.size(); ++t) {
      const auto& whole = plain->tasks[t].bursts;
      const auto& pieces = workload->tasks[t].bursts;
      size_t p = 0;
      for (size_t b = 0; b < whole.size() && p < pieces.size(); ++b) {
        ASSERT_FALSE(pieces[p].gate) << "task " << t << " burst " << b;
        EXPECT_EQ(pieces[p].recordedStart, whole[b].recordedStart);
        EXPECT_EQ(pieces[p].wake, whole[b].wake);
        int64_t work = pieces[p].work;
        for (; p + 1 < pieces.size() && pieces[p + 1].gate; ++p) {
          EXPECT_EQ(pieces[p].recordedEnd, pieces[p + 1].recordedStart) << "task " << t << " burst " << b;
          work += pieces[p + 1].work;
        }
        EXPECT_EQ(pieces[p].recordedEnd, whole[b].recordedEnd) << "task " << t << " burst " << b;
        EXPECT_EQ(work, whole[b].work) << "task " << t << " burst " << b;
        ++p;
      }
      EXPECT_EQ(p, pieces.size()) << "task " << t;
    }
    replay::ReplayOptions o;
    o.model = "eevdf";
    auto r = replay::runReplay(*workload, o);
    ASSERT_TRUE(r.has_value()) << r.error().message();
    EXPECT_TRUE(r->validation.workConserved) << r->validation.tasksUnfinished << " unfinished";
  }
  const fs::path shared = fs::path(SCHEDLAB_SHARED_TRACES) / "recorded";
  if (!fs::is_directory(shared)) GTEST_SKIP() << "needs ../shared/traces/recorded (absent: " << shared << ")";
  std::string why;
  auto hackbench = import((shared / "hackbench-proc" / "trace.dat").string(), why);
  ASSERT_TRUE(hackbench) << why;
  replay::ReplayOptions o;
  o.model = replay::resolveBaseline("baseline", hackbench->kernelRelease());
  auto gated = replay::replayRecording(*hackbench, o);
  o.params = {"wakeup_dependency=exact"};
  auto exact = replay::replayRecording(*hackbench, o);
  ASSERT_TRUE(exact.has_value() && gated.has_value());
  const auto voluntary = [](const replay::RecordingReplay& r) {
    return r.result.validation.fidelity->metric("switches_voluntary")->replayed.value_or(0);
  };
  EXPECT_GT(voluntary(*gated), 1.4 * voluntary(*exact));
  EXPECT_GT(gated->workload.dataflowGates, 0u);
  EXPECT_EQ(exact->workload.dataflowGates, 0u);
  // The engine's count of the recorded blocks a task's wakeup ended: each is
  // met once, replayed or lost (its waker already past its point), with gates
  // or without, and they are some of the recording's voluntary switches.
  const auto& st = gated->result.stats;
  const auto& ex = exact->result.stats;
  EXPECT_EQ(st.taskBlocks + st.taskBlocksSkipped, ex.taskBlocks + ex.taskBlocksSkipped);
  EXPECT_LE(st.taskBlocks + st.taskBlocksSkipped,
            gated->result.validation.fidelity->metric("switches_voluntary")->recorded.value_or(0));
  EXPECT_GT(st.taskBlocks, ex.taskBlocks);
}

// The shared sysbench-mix's hogs wait 4 ms +- a few us from one tick to a
// later one; with exact ticks every such wait of the replay is 4000.000 us,
// and the scheduling delays' KS distance is that step (README "Replay
// fidelity"). Ticks delayed by draws of the recording's measured offsets from
// the HZ grid (the default) spread them as the recording does.
TEST(ReplayIdentity, MeasuredTickDelaysSpreadTheWaitsFromTickToTick) {
  const fs::path trace = fs::path(SCHEDLAB_SHARED_TRACES) / "recorded" / "sysbench-mix" / "trace.dat";
  if (!fs::exists(trace)) GTEST_SKIP() << "needs ../shared/traces/recorded (absent: " << trace << ")";
  std::string why;
  auto recorded = import(trace.string(), why);
  ASSERT_TRUE(recorded) << why;
  replay::ReplayOptions o;
  o.model = replay::resolveBaseline("baseline", recorded->kernelRelease());
  size_t preemptionsGathered = 0;
  const auto delayKs = [&](std::vector<std::string> params) {
    o.params = std::move(params);
    auto r = replay::replayRecording(*recorded, o);
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message());
    preemptionsGathered = r ? r->workload.tickPreemptions.size() : 0;
    return r ? r->result.validation.fidelity->metric("sched_delay_ks")->measure : 1.0;
  };
  EXPECT_GT(delayKs({"tick_delay_ns=0"}), 0.25);
  EXPECT_EQ(preemptionsGathered, 0u);  // only tick_delay_ns=-1 reads them: not gathered otherwise
  EXPECT_LT(delayKs({}), 0.1);  // the default: measured
  EXPECT_GT(preemptionsGathered, 100u);
}

// Extraction's first pass runs on two threads on big traces; forced onto two
// threads here (a threshold of 0 rows) it must give exactly the one-thread workload.
TEST(ReplayDeterminism, ExtractionOnTwoThreadsGivesTheOneThreadWorkload) {
  for (const std::string& path : identityTraces()) {
    SCOPED_TRACE(path);
    std::string why;
    auto recorded = import(path, why);
    ASSERT_TRUE(recorded) << why;
    ASSERT_GE(recorded->threads.size(), 3u);  // two parts, each with tasks
    replay::ExtractOptions one, two;
    one.twoThreadsFromStateRows = UINT32_MAX;
    two.twoThreadsFromStateRows = 0;
    auto a = replay::extractWorkload(*recorded, one);
    auto b = replay::extractWorkload(*recorded, two);
    ASSERT_TRUE(a.has_value() && b.has_value());
    ASSERT_EQ(a->tasks.size(), b->tasks.size());
    for (size_t t = 0; t < a->tasks.size(); ++t) EXPECT_TRUE(a->tasks[t] == b->tasks[t]) << "task " << a->tasks[t].tid;
    EXPECT_TRUE(a->unmodelled == b->unmodelled);
    EXPECT_GT(a->unmodelled.total(), 0u);
    EXPECT_TRUE(a->wakeupDelays == b->wakeupDelays);
    EXPECT_EQ(a->dataflowGates, b->dataflowGates);
    EXPECT_EQ(a->recordedMakespanNs, b->recordedMakespanNs);
  }
}

TEST(ReplayDeterminism, SameInputSameHashForEveryModel) {
  const std::string path = (fs::path(SCHEDLAB_TEST_DATA) / "replay" / "pipe-small.txt").string();
  std::string why;
  auto recorded = import(path, why);
  ASSERT_TRUE(recorded) << why;
  auto workload = replay::extractWorkload(*recorded);
  ASSERT_TRUE(workload.has_value());
  std::map<uint64_t, std::string> seen;
  for (const char* model : {"cfs", "eevdf", "bfs", "gc", "vrq"}) {
    replay::ReplayOptions o;
    o.model = model;
    auto a = replay::runReplay(*workload, o);
    auto b = replay::runReplay(*workload, o);
    ASSERT_TRUE(a.has_value() && b.has_value());
    const uint64_t ha = replay::modelHash(*a->model);
    EXPECT_EQ(ha, replay::modelHash(*b->model)) << model;
    EXPECT_EQ(a->stats.switches, b->stats.switches) << model;
    seen.emplace(ha, model);
  }
  // The models do schedule differently.
  EXPECT_GE(seen.size(), 3u);
  // A parameter change changes the schedule.
  replay::ReplayOptions o;
  o.model = "cfs";
  auto base = replay::runReplay(*workload, o);
  o.params = {"context_switch_ns=2000"};
  auto costly = replay::runReplay(*workload, o);
  ASSERT_TRUE(base.has_value() && costly.has_value());
  EXPECT_NE(replay::modelHash(*base->model), replay::modelHash(*costly->model));
}

// --out writes ftrace text that the ftrace importer reads back into the same schedule.
TEST(ReplayOutput, FtraceTextRoundTrip) {
  const std::string path = (fs::path(SCHEDLAB_TEST_DATA) / "replay" / "pipe-small.txt").string();
  std::string why;
  auto recorded = import(path, why);
  ASSERT_TRUE(recorded) << why;
  auto workload = replay::extractWorkload(*recorded);
  ASSERT_TRUE(workload.has_value());
  const std::string out = (fs::temp_directory_path() / "schedlab-replay-roundtrip.txt").string();
  for (const char* model : {"cfs", "bfs", "vrq"}) {
    SCOPED_TRACE(model);
    replay::ReplayOptions o;
    o.model = model;
    o.outTrace = out;
    auto r = replay::runReplay(*workload, o);
    ASSERT_TRUE(r.has_value()) << r.error().message();
    auto back = import(out, why);
    ASSERT_TRUE(back) << why;
    EXPECT_EQ(back->format, "ftrace-text");
    EXPECT_EQ(back->eventCount, r->model->eventCount);
    EXPECT_EQ(back->eventCounts, r->model->eventCounts);
    EXPECT_EQ(runtimeByTid(*back), runtimeByTid(*r->model));
    EXPECT_EQ(back->wakeups.size(), r->model->wakeups.size());
    EXPECT_EQ(back->migrations.size(), r->model->migrations.size());
    EXPECT_EQ(replay::modelHash(*back), replay::modelHash(*r->model));
    EXPECT_EQ(back->diagnostics.total(core::Severity::Error), 0u);
  }
  std::remove(out.c_str());
}

// A recording replayed on fewer CPUs: per-CPU kernel threads pinned (by name)
// to a CPU the replay does not have run unpinned instead of failing the replay.
TEST(ReplayTopology, SmallerTopologyUnpinsPerCpuThreads) {
  const std::string path = (fs::path(SCHEDLAB_TEST_DATA) / "replay" / "hogs-small.txt").string();
  std::string why;
  auto recorded = import(path, why);
  ASSERT_TRUE(recorded) << why;
  auto workload = replay::extractWorkload(*recorded);
  ASSERT_TRUE(workload.has_value());
  for (const char* model : {"cfs", "eevdf", "bfs", "gc", "vrq"}) {
    replay::ReplayOptions o;
    o.model = model;
    o.topology = core::Topology::flat(1, "test");
    auto r = replay::runReplay(*workload, o);
    ASSERT_TRUE(r.has_value()) << model << ": " << r.error().message();
    EXPECT_TRUE(r->validation.workConserved) << model;
    EXPECT_EQ(r->model->cpuCount(), 1) << model;
    // Three CPU hogs recorded on two CPUs take well over 1.5 times as long on one.
    EXPECT_GE(r->validation.makespanRatio(), 1.5) << model;
  }
}
