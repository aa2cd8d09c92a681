// Export -> import: a recording of every format, and a replay with core
// scheduling, read back from their Perfetto export to the same statistics
// (`stats --json`); and compact_sched twins of a real recording, which must
// build the same model as its per-event form.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <tuple>
#include <sstream>

#include "core/analysis/stats.h"
#include "core/analysis/stats_json.h"
#include "core/json_writer.h"
#include "importers/importer.h"
#include "importers/perfetto/perfetto_writer.h"
#include "replay/replay.h"
#include "replay/workload/trace_extractor.h"
#include "support/trace_builder.h"
#include "tests/importers/perfetto/perfetto_test_support.h"

namespace {

using namespace perfetto_test;
namespace fs = std::filesystem;

std::string statsJson(const core::TraceModel& m) {
  core::JsonWriter j;
  j.beginObject();
  core::analysis::writeRunStatsJson(j, core::analysis::computeStats(m), core::analysis::StatsGrouping::Task);
  j.endObject();
  return j.str();
}

std::string scratch(const std::string& name) {
  return (fs::temp_directory_path() / ("schedlab-perfetto-" + std::to_string(::getpid()) + "-" + name)).string();
}

std::shared_ptr<core::TraceModel> import(const std::string& path) {
  auto r = importers::importTrace(path);
  EXPECT_TRUE(r) << (r ? "" : r.error().message());
  if (!r) return nullptr;
  EXPECT_FALSE(r->error) << r->error->message();
  return r->model;
}

// The first lines where two stats JSON texts differ ("" when equal), for the failure message.
std::string firstJsonDifference(const std::string& a, const std::string& b) {
  auto lines = [](const std::string& t) {
    std::vector<std::string> out;
    std::istringstream in(t);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  };
  const auto x = lines(a), y = lines(b);
  std::string where;
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    const std::string la = i < x.size() ? x[i] : "(end)", lb = i < y.size() ? y[i] : "(end)";
    if (la.find("\"tid\"") != std::string::npos || la.find("\"cpu\":") != std::string::npos) where = la;
    if (la != lb) return "line " + std::to_string(i + 1) + " (after" + where + "): " + la + " vs " + lb;
  }
  return "";
}

// The first place two models' run slices differ, for the failure message.
std::string firstSliceDifference(const core::TraceModel& a, const core::TraceModel& b) {
  if (a.cpuSlices.size() != b.cpuSlices.size()) return "CPU count";
  for (size_t c = 0; c < a.cpuSlices.size(); ++c) {
    const auto &x = a.cpuSlices[c], &y = b.cpuSlices[c];
    for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
      if (i >= x.size() || i >= y.size()) return "cpu " + std::to_string(c) + ": slice count";
      if (x.ts[i] != y.ts[i] || x.dur[i] != y.dur[i] || a.threads.tid[x.utid[i].value] != b.threads.tid[y.utid[i].value] ||
          x.kind[i] != y.kind[i] || x.endReason[i] != y.endReason[i] || x.endState[i] != y.endState[i] ||
          x.flags[i] != y.flags[i])
      {
        auto show = [&](const core::TraceModel& m, const core::CpuSliceTable& t) {
          return "[" + std::to_string(t.ts[i]) + " +" + std::to_string(t.dur[i]) + " tid " +
                 std::to_string(m.threads.tid[t.utid[i].value]) + " end " + std::to_string(int(t.endReason[i])) +
                 " state " + std::to_string(int(t.endState[i])) + " kind " + std::to_string(int(t.kind[i])) + " flags " +
                 std::to_string(int(t.flags[i])) + "]";
        };
        return "cpu " + std::to_string(c) + " slice " + std::to_string(i) + ": " + show(a, x) + " vs " + show(b, y);
      }
    }
  }
  return "none";
}

std::map<int32_t, int64_t> runtimeByTid(const core::TraceModel& m) {
  std::map<int32_t, int64_t> rt;
  for (const auto& s : m.cpuSlices)
    for (size_t i = 0; i < s.size(); ++i)
      if (s.kind[i] == core::SliceKind::Task && s.dur[i] > 0) rt[m.threads.tid[s.utid[i].value]] += s.dur[i];
  return rt;
}

std::vector<std::pair<int64_t, int32_t>> wakeupsOf(const core::TraceModel& m) {
  std::vector<std::pair<int64_t, int32_t>> w;
  for (size_t i = 0; i < m.wakeups.ts.size(); ++i) w.emplace_back(m.wakeups.ts[i], m.threads.tid[m.wakeups.wakee[i].value]);
  std::sort(w.begin(), w.end());
  return w;
}

// The first wakeup row two models differ in (time, wakee, whether it had an effect), for the failure message.
std::string firstWakeupDifference(const core::TraceModel& a, const core::TraceModel& b) {
  auto rows = [](const core::TraceModel& m) {
    std::vector<std::tuple<int64_t, int32_t, bool>> w;
    for (size_t i = 0; i < m.wakeups.ts.size(); ++i)
      w.emplace_back(m.wakeups.ts[i], m.threads.tid[m.wakeups.wakee[i].value],
                     (m.wakeups.flags[i] & core::kWakeupNoEffect) != 0);
    std::sort(w.begin(), w.end());
    return w;
  };
  const auto x = rows(a), y = rows(b);
  const auto d = std::mismatch(x.begin(), x.end(), y.begin(), y.end());
  auto show = [](const auto& it, const auto& end) {
    if (it == end) return std::string("(end)");
    return std::to_string(std::get<0>(*it)) + " tid " + std::to_string(std::get<1>(*it)) +
           (std::get<2>(*it) ? " no effect" : "");
  };
  if (d.first == x.end() && d.second == y.end()) return "none";
  return show(d.first, x.end()) + " vs " + show(d.second, y.end());
}

// The first task whose state rows differ between two models (tasks matched in order), for the failure message.
std::string firstStateDifference(const core::TraceModel& a, const core::TraceModel& b) {
  for (size_t u = 1; u < std::min(a.threads.size(), b.threads.size()); ++u) {
    const auto [ab, ae] = a.stateRowsOf(core::Utid(static_cast<uint32_t>(u)));
    const auto [bb, be] = b.stateRowsOf(core::Utid(static_cast<uint32_t>(u)));
    for (uint32_t i = 0; i < std::max(ae - ab, be - bb); ++i) {
      auto row = [](const core::TraceModel& m, uint32_t r, uint32_t end) {
        return r < end ? std::to_string(m.threadStates.ts[r]) + " state " + std::to_string(int(m.threadStates.state[r]))
                       : std::string("(end)");
      };
      const std::string x = row(a, ab + i, ae), y = row(b, bb + i, be);
      if (x != y) return "tid " + std::to_string(a.threads.tid[u]) + ": " + x + " vs " + y;
    }
  }
  return "none";
}

uint64_t repairedSlices(const core::TraceModel& m) {
  uint64_t n = 0;
  for (const auto& s : m.cpuSlices)
    for (size_t i = 0; i < s.size(); ++i) n += s.endReason[i] == core::SliceEnd::Mismatch;
  return n;
}

void expectSameStats(const core::TraceModel& original, const std::string& exported) {
  auto back = import(exported);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->format, "perfetto");
  EXPECT_EQ(firstJsonDifference(statsJson(original), statsJson(*back)), "")
      << "first slice difference: " << firstSliceDifference(original, *back);
}

class RecordingRoundTrip : public ::testing::TestWithParam<const char*> {};

// These recordings hold switches the builder had to infer (switch_in_inferred):
// their export writes each as the repair it was, so they read back repaired
// alike, to the same statistics.
TEST_P(RecordingRoundTrip, ReadsItsExportBackToTheSameSchedule) {
  const std::string path = sharedTrace(std::string("recorded/hackbench-proc/") + GetParam());
  if (!fs::exists(path)) GTEST_SKIP() << "shared trace missing: " << path;
  auto original = import(path);
  ASSERT_TRUE(original);
  const std::string out = scratch(std::string(GetParam()) + ".perfetto-trace");
  ASSERT_TRUE(importers::perfetto::writePerfetto(*original, out));
  auto back = import(out);
  ASSERT_TRUE(back);
  ASSERT_GT(repairedSlices(*original), 0u);
  EXPECT_EQ(firstSliceDifference(*original, *back), "none");
  EXPECT_EQ(runtimeByTid(*back), runtimeByTid(*original));
  // The same wakeups (rows of equal times on different CPUs may come in
  // another order). Text formats print microseconds: there a waking and the
  // wakee's switch out on another CPU often share a time; whether the waking
  // found the task still running is its no-effect flag, which the export
  // writes (success 0) and orders the switch by.
  const auto x = wakeupsOf(*original), y = wakeupsOf(*back);
  EXPECT_EQ(y.size(), x.size());
  const auto d = std::mismatch(x.begin(), x.end(), y.begin(), y.end());
  EXPECT_TRUE(d.first == x.end()) << "first different wakeup at " << d.first->first << " of tid " << d.first->second;
  EXPECT_EQ(back->firstTs, original->firstTs);
  EXPECT_EQ(back->lastTs, original->lastTs);
  // The export's own markers (a CPU seen from here) are no event of the recording.
  for (const auto& [name, count] : back->eventCounts)
    EXPECT_TRUE(std::any_of(original->eventCounts.begin(), original->eventCounts.end(),
                            [&](const auto& e) { return e.first == name; }))
        << name << " (" << count << ") is not in the recording";
  EXPECT_EQ(back->topology.cpuCount(), original->topology.cpuCount());
  // The text forms do not say their kernel; the others do, and keep it.
  const bool text = std::string(GetParam()).find(".txt") != std::string::npos;
  EXPECT_EQ(original->kernelRelease().empty(), text) << original->kernelRelease();
  EXPECT_EQ(back->kernelRelease(), original->kernelRelease());
  expectSameStats(*original, out);
  fs::remove(out);
}

// A recording without repairs reads back to identical statistics.
TEST(PerfettoRoundTrip, ARecordingWithoutRepairsReadsBackToIdenticalStatistics) {
  auto original = import(testData("tracedat/tiny-v6.dat"));
  ASSERT_TRUE(original);
  ASSERT_EQ(repairedSlices(*original), 0u);
  const std::string out = scratch("tiny.perfetto-trace");
  ASSERT_TRUE(importers::perfetto::writePerfetto(*original, out));
  expectSameStats(*original, out);
  fs::remove(out);
}

INSTANTIATE_TEST_SUITE_P(HackbenchProc, RecordingRoundTrip,
                         ::testing::Values("trace.dat", "perf.data", "ctf", "trace.txt", "perf-script.txt"),
                         [](const auto& param) {
                           std::string n = param.param;
                           for (char& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(PerfettoRoundTrip, AReplayWithCoreSchedulingKeepsItsForcedIdleCookiesAndTopology) {
  const std::string path = sharedTrace("recorded/hackbench-proc/trace.dat");
  if (!fs::exists(path)) GTEST_SKIP() << "shared trace missing: " << path;
  auto recording = import(path);
  ASSERT_TRUE(recording);
  auto workload = replay::extractWorkload(*recording);
  ASSERT_TRUE(workload) << workload.error().message();
  replay::ReplayOptions options;
  options.model = "cfs+coresched";
  options.topology = core::Topology::uniform(1, 2);
  options.params = {"coresched.cookie=per-thread"};
  auto result = replay::runReplay(*workload, options);
  ASSERT_TRUE(result) << result.error().message();
  const core::TraceModel& replayed = *result->model;
  // What makes this case: forced idle on an SMT pair, tasks with cookies.
  int64_t forcedIdle = 0;
  for (const auto& s : replayed.cpuSlices)
    for (size_t i = 0; i < s.size(); ++i)
      if (s.kind[i] == core::SliceKind::ForcedIdle) forcedIdle += s.dur[i];
  ASSERT_GT(forcedIdle, 0);
  ASSERT_EQ(replayed.topology.threadsPerCore(), 2);

  const std::string out = scratch("replay.perfetto-trace");
  ASSERT_TRUE(importers::perfetto::writePerfetto(replayed, out));
  auto back = import(out);
  ASSERT_TRUE(back && back->replay);
  // The same schedule, forced idle and all.
  EXPECT_EQ(firstSliceDifference(replayed, *back), "none");
  EXPECT_EQ(runtimeByTid(*back), runtimeByTid(replayed));
  EXPECT_EQ(firstJsonDifference(statsJson(replayed), statsJson(*back)), "");
  const auto a = core::analysis::computeStats(replayed), b = core::analysis::computeStats(*back);
  EXPECT_EQ(b.forcedIdleNs, a.forcedIdleNs);
  EXPECT_EQ(b.busyNs, a.busyNs);
  ASSERT_EQ(b.cookies.size(), a.cookies.size());
  for (size_t i = 0; i < a.cookies.size(); ++i) {
    EXPECT_EQ(b.cookies[i].name, a.cookies[i].name);
    EXPECT_EQ(b.cookies[i].runtimeNs, a.cookies[i].runtimeNs);
    EXPECT_EQ(b.cookies[i].forcedIdleCausedNs, a.cookies[i].forcedIdleCausedNs);
  }
  EXPECT_EQ(back->replay->model, replayed.replay->model);
  EXPECT_EQ(back->replay->cookieNames, replayed.replay->cookieNames);
  EXPECT_EQ(back->topology.threadsPerCore(), 2);
  fs::remove(out);
}

// Core scheduling can hold a CPU idle before its first switch: its record
// then begins with a forced-idle slice (no switch to write). On one SMT pair
// with a cookie per thread, "a" (SCHED_FIFO) runs on CPU 1 from 0; "b", new at
// 1 ms on CPU 0, has another cookie, so CPU 0 is forced idle from 1 ms until
// "a" exits at 10 ms. The export writes that slice's kind with the event that
// begins CPU 0's record; a bare marker there read back as plain idle.
TEST(PerfettoRoundTrip, AForcedIdleSliceThatBeginsACpusRecordKeepsItsKind) {
  replay::Workload w;
  w.kind = "rt-app";
  for (int i = 0; i < 2; ++i) {
    replay::Task t;
    t.tid = t.tgid = 100 + i;
    t.comm = i ? "b" : "a";
    t.startCpu = 1 - i;
    t.startTs = i * 1'000'000;
    t.prio = i ? 120 : 0;  // "a" is SCHED_FIFO 99 and keeps the core
    if (!i) t.policy = replay::SchedPolicy::Fifo;
    t.exits = true;
    t.bursts.push_back(replay::Burst{.work = 10'000'000});
    w.tasks.push_back(t);
  }
  replay::ReplayOptions options;
  options.model = "eevdf+coresched";
  options.topology = core::Topology::uniform(1, 2);
  options.params = {"coresched.cookie=per-thread"};
  auto result = replay::runReplay(w, options);
  ASSERT_TRUE(result) << result.error().message();
  const core::TraceModel& replayed = *result->model;
  bool begins = false;
  for (const auto& s : replayed.cpuSlices)
    begins |= s.size() > 0 && s.kind[0] == core::SliceKind::ForcedIdle && (s.flags[0] & core::kSliceStartUnknown);
  ASSERT_TRUE(begins) << "no CPU's record begins forced idle: the case is not made";
  const std::string out = scratch("forced-idle-first.perfetto-trace");
  ASSERT_TRUE(importers::perfetto::writePerfetto(replayed, out));
  auto back = import(out);
  ASSERT_TRUE(back);
  EXPECT_EQ(firstSliceDifference(replayed, *back), "none");
  EXPECT_EQ(core::analysis::computeStats(*back).forcedIdleNs, core::analysis::computeStats(replayed).forcedIdleNs);
}

// The compact encoding of a real recording's events (its Perfetto export,
// re-encoded by the test's own writer) against their per-event form.
// The recordings: SchedLab's exports of a trace.dat (the fixture and a shared
// one), and the public Android traces, per-event Perfetto recordings themselves.
class CompactTwin : public ::testing::TestWithParam<const char*> {};

TEST_P(CompactTwin, BuildsTheSameModelAsItsPerEventForm) {
  const std::string source = GetParam();
  const bool shared = source.starts_with("shared:");
  const std::string path = shared ? sharedTrace(source.substr(7)) : testData(source);
  if (shared && !fs::exists(path)) GTEST_SKIP() << "shared trace missing: " << path;
  std::string perEvent = path;
  if (!source.ends_with(".perfetto-trace") && !source.ends_with(".pftrace")) {
    auto recording = import(path);
    ASSERT_TRUE(recording);
    perEvent = scratch("per-event.perfetto-trace");
    ASSERT_TRUE(importers::perfetto::writePerfetto(*recording, perEvent));
  }
  const std::string compact = scratch("compact.perfetto-trace");
  const Bytes perEventBytes = readFile(perEvent);
  const Bytes compactBytes = compactTrace(perEventBytes, /*keepFirstSwitchPerCpu=*/true);
  writeFile(compact, compactBytes);

  Census perEventCensus, c;
  censusOfTrace(perEventBytes, perEventCensus);
  censusOfTrace(compactBytes, c);
  ASSERT_EQ(perEventCensus.compactSwitches, 0u);
  ASSERT_GT(c.compactSwitches, 100u);  // the twin really is compact
  ASSERT_EQ(c.compactWakings + c.events[20], perEventCensus.events[20]);  // test_trace has no sched_waking

  // What the compact form cannot carry: the task a switch takes off other
  // than the switch before it put it on (the Android traces have tasks whose
  // priority changed while they ran), and SchedLab's own fields (an export's
  // repaired switches). The expected model is that of the per-event form as
  // far as the compact form carries it.
  uint64_t rewritten = 0;
  const std::string visible = scratch("compact-visible.perfetto-trace");
  writeFile(visible, compactVisible(perEventBytes, rewritten));
  std::cout << "switches the compact form cannot carry in full: " << rewritten << " of " << perEventCensus.events[4]
            << "\n";

  auto a = import(visible);
  auto b = import(compact);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(firstJsonDifference(statsJson(*a), statsJson(*b)), "");
  EXPECT_EQ(firstSliceDifference(*a, *b), "none");
  EXPECT_EQ(b->wakeups.ts, a->wakeups.ts);
  EXPECT_EQ(b->diagnostics.count(core::DiagCode::compact_switch_prev_unknown), 0u);
  // Counted like the per-event form.
  EXPECT_EQ(b->eventCounts, a->eventCounts);
  if (perEvent != path) fs::remove(perEvent);
  fs::remove(visible);
  fs::remove(compact);
}

INSTANTIATE_TEST_SUITE_P(Recordings, CompactTwin,
                         ::testing::Values("tracedat/tiny-v6.dat", "shared:recorded/hackbench-proc/trace.dat",
                                           "shared:public/ms-perf-tools-linux-android/test_trace.perfetto-trace",
                                           "shared:public/ms-perf-tools-linux-android/"
                                           "perfetto_trace_cpu_sampling_not_scoped.pftrace"),
                         [](const auto& param) {
                           std::string n = param.param;
                           n = n.substr(n.rfind('/') + 1);
                           for (char& ch : n)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return std::string(param.index < 2 ? "export_of_" : "") + n;
                         });

// Every recording there is: the shared ones (recorded/: each workload in every
// format; public/: every trace an importer reads) and the workload recordings
// beside the checkout (../rec/traces, the README's fidelity table), each read
// back from its export to the very same statistics.
std::vector<std::string> everyRecording() {
  std::vector<std::string> out;
  const fs::path shared(SCHEDLAB_SHARED_TRACES);
  auto sortedEntries = [](const fs::path& dir) {
    std::vector<fs::path> v;
    for (const auto& e : fs::directory_iterator(dir)) v.push_back(e.path());
    std::sort(v.begin(), v.end());
    return v;
  };
  for (const auto& run : sortedEntries(shared / "recorded"))
    if (fs::is_directory(run))
      for (const char* f : {"trace.dat", "perf.data", "perf.data.old", "ctf", "trace.txt", "perf-script.txt"})
        if (fs::exists(run / f)) out.push_back((run / f).string());
  // A CTF trace is the folder holding `metadata`; its stream files are no trace alone.
  std::vector<fs::path> publicFiles;
  for (const auto& e : fs::recursive_directory_iterator(shared / "public")) publicFiles.push_back(e.path());
  std::sort(publicFiles.begin(), publicFiles.end());
  std::set<fs::path> ctfDirs;
  for (const auto& p : publicFiles)
    if (p.filename() == "metadata") ctfDirs.insert(p.parent_path());
  for (const auto& p : publicFiles) {
    const std::string name = p.filename().string();
    bool insideCtf = false;
    for (const auto& d : ctfDirs) insideCtf |= p.string().starts_with(d.string() + "/");
    if (ctfDirs.count(p)) out.push_back(p.string());
    if (insideCtf || !fs::is_regular_file(p)) continue;
    if (name.starts_with("LICENSE") || name.starts_with("NOTICE") || name == "MANIFEST.md" || name == "SHA256SUMS" ||
        name == "README" || name.ends_with(".yml"))
      continue;
    out.push_back(p.string());
  }
  const fs::path rec(SCHEDLAB_REC_TRACES);
  if (fs::is_directory(rec))
    for (const auto& run : sortedEntries(rec))
      for (const char* f : {"trace.dat", "perf.data", "perf-script.txt", "ctf"})
        if (fs::exists(run / f)) out.push_back((run / f).string());
  return out;
}

// Recordings whose round trip still differs, each with its cause as measured
//. Listed so that the rest must be identical, and
// checked to still differ so that a fix shows here; none is a loss the
// Perfetto format forces, each is a bug left open (the causes are the first
// differences in the statistics, slices, wakeups and states, traced by hand).
const std::map<std::string, std::string> kKnownDifferences = {
    // Not diagnosed yet: at an inferred switch to idle, the displaced task is
    // Runnable in the recording's states and Unknown read back, at one instant.
    {"make-j1/trace.dat", "not diagnosed: displaced task's state at an inferred switch to idle"},
    {"make-j1/perf.data", "not diagnosed: displaced task's state at an inferred switch to idle"},
    {"make-j1/perf-script.txt", "not diagnosed: displaced task's state at an inferred switch to idle"},
    // perf data convert's CTF of workloads that exec from a thread: the model
    // holds two live tasks of one tid (a dead task's run goes on after a new
    // task of its tid appeared: tid_reused_without_fork); Perfetto names a
    // task by its tid, so the reader makes them one.
    {"cyclictest-fair/ctf", "two live tasks of one tid"},
    {"cyclictest-rt/ctf", "two live tasks of one tid"},
    {"make-j1/ctf", "two live tasks of one tid"},
    {"make-j2/ctf", "two live tasks of one tid"},
    {"make-j4/ctf", "two live tasks of one tid"},
    // Tasks first named by an event the export does not write (devlib's
    // cpu_frequency prints become counters, a context only) are made later
    // by the reader: the same tasks, listed in another order (stats lists
    // tasks in the order they appear).
    {"lisa/sched_load/trace.dat", "task order: first named by an event not exported"},
    {"perfetto_trace_cpu_sampling_not_scoped.pftrace", "task order: first named by an event not exported"},
    // Not diagnosed yet: a task Running in the recording's states is Unknown
    // read back at the same instant (catapult); Sleeping against Runnable at
    // one microsecond (pipe-proc).
    {"catapult/android_systrace.html", "not diagnosed: Running against Unknown at one instant"},
    // A trace without sched_migrate_task, whose sched_wakeup names another CPU
    // than its sched_waking and whose task then runs on a third: two moves,
    // inferred (core::kMigrationInferred). The export writes one wakeup, on the
    // CPU its sched_wakeup named, so read back the first move is not seen.
    {"tracecompass-test-traces/many-threads", "an untraced wakeup move and another after it: one CPU exported"},
    {"pipe-proc/perf-script.txt", "not diagnosed: Sleeping against Runnable at one microsecond"},
};

std::string knownDifference(const std::string& path) {
  for (const auto& [suffix, cause] : kKnownDifferences)
    if (path.ends_with(suffix)) return cause;
  return "";
}

TEST(PerfettoRoundTrip, EveryRecordingReadsItsExportBackToTheSameStatistics) {
  if (!fs::is_directory(SCHEDLAB_SHARED_TRACES)) GTEST_SKIP() << "shared traces missing: " << SCHEDLAB_SHARED_TRACES;
  if (!fs::is_directory(SCHEDLAB_REC_TRACES))
    std::cout << "workload recordings missing (" << SCHEDLAB_REC_TRACES << "): only the shared traces are checked\n";
  size_t identical = 0, compared = 0;
  std::vector<std::string> notImportable;
  for (const std::string& path : everyRecording()) {
    auto r = importers::importTrace(path);
    if (!r || r->error) {
      notImportable.push_back(path);
      continue;
    }
    const core::TraceModel& original = *r->model;
    importers::perfetto::PerfettoExportLosses losses;
    const std::string bytes = importers::perfetto::encodePerfetto(original, &losses);
    const std::string out = scratch("every.perfetto-trace");
    writeFile(out, Bytes(bytes.begin(), bytes.end()));
    auto back = import(out);
    fs::remove(out);
    ASSERT_TRUE(back) << path;
    ++compared;

    // What the export holds, by the independent walk, against the model it came from.
    Census census;
    censusOfTrace(Bytes(bytes.begin(), bytes.end()), census);
    uint64_t foundActive = 0, idleRows = 0, frequencyRows = 0, marks = 0;
    for (const uint8_t f : original.wakeups.flags) foundActive += (f & core::kWakeupNoEffect) != 0;
    const auto& counters = original.counters;
    for (size_t t = 0; t < counters.tracks.size(); ++t) {
      const uint64_t rows = counters.rowsBegin[t + 1] - counters.rowsBegin[t];
      idleRows += counters.tracks[t].kind == core::CounterKind::CpuIdleState ? rows : 0;
      frequencyRows += counters.tracks[t].kind == core::CounterKind::CpuFrequencyKhz ? rows : 0;
    }
    const auto& us = original.userSlices;
    for (size_t i = 0; i < us.size(); ++i)
      marks += us.kind[i] == core::UserSliceKind::Instant ? 1 : (us.flags[i] & core::kUserSliceOpenAtEnd) ? 1 : 2;
    EXPECT_EQ(census.events[20] + census.events[17] + census.events[114], original.wakeups.ts.size()) << path;
    EXPECT_EQ(census.wakeupsFoundActive, foundActive) << path;
    EXPECT_EQ(census.events[13], idleRows) << path;
    EXPECT_EQ(census.events[11], frequencyRows) << path;
    EXPECT_EQ(census.events[3] + losses.userMarks, marks) << path;
    // A wakeup's move follows its sched_waking, which names the CPU the task
    // left: read back, no move starts from a CPU other than the task's. (A
    // trace without sched_waking can still gain some: a task seeded at trace
    // start with no CPU, which the model keeps as CPU 0.)
    const bool hadWaking = std::any_of(original.wakeups.flags.begin(), original.wakeups.flags.end(),
                                       [](uint8_t f) { return (f & core::kWakeupHadWaking) != 0; });
    if (hadWaking) {
      EXPECT_EQ(back->diagnostics.count(core::DiagCode::migrate_wrong_cpu),
                original.diagnostics.count(core::DiagCode::migrate_wrong_cpu))
          << path;
    }
    if (losses.any()) std::cout << path << ": the export could not carry " << losses.describe() << "\n";

    const std::string difference = firstJsonDifference(statsJson(original), statsJson(*back));
    identical += difference.empty();
    if (const std::string known = knownDifference(path); !known.empty()) {
      EXPECT_NE(difference, "") << path << " reads back identical now: remove it from kKnownDifferences";
      std::cout << path << ": still differs (" << known << "): " << difference << "\n";
      continue;
    }
    EXPECT_EQ(difference, "") << path << "\n  first slice difference: " << firstSliceDifference(original, *back)
                              << "\n  first wakeup difference: " << firstWakeupDifference(original, *back)
                              << "\n  first state difference: " << firstStateDifference(original, *back);
  }
  std::cout << "identical statistics after the round trip: " << identical << " of " << compared << " recordings\n";
  for (const auto& p : notImportable) std::cout << "  not importable, not compared: " << p << "\n";
  // The shared traces: 24 recordings, 5 public CTF folders and 13 other public
  // files, of which schedviz's two .tar.gz do not import; and where the
  // workload recordings are, 11 workloads in 4 formats each.
  EXPECT_GE(compared, 40u + (fs::is_directory(SCHEDLAB_REC_TRACES) ? 44u : 0u));
}

// A model of TraceBuilder's, exported and read back.
std::shared_ptr<core::TraceModel> roundTrip(const core::TraceModel& m, const std::string& name) {
  const std::string out = scratch(name);
  EXPECT_TRUE(importers::perfetto::writePerfetto(m, out));
  auto back = import(out);
  fs::remove(out);
  return back;
}

uint64_t countOf(const core::TraceModel& m, const std::string& event) {
  for (const auto& [name, count] : m.eventCounts)
    if (name == event) return count;
  return 0;
}

// tid 2 wakes tid 3 on CPU 0 while tid 1 runs there by the switches: the
// import infers 2's switch-in (a repair), which the export marks. Read back,
// it is the same repair, not a fifth sched_switch of the recording.
TEST(PerfettoRoundTrip, AnInferredSwitchInIsReadBackAsARepairNotATracedSwitch) {
  testing_support::TraceBuilder t;
  t.sw(10, 0, 0, "R", 1).waking(20, 0, 2, 3, 0).sw(30, 0, 2, "S", 0).sw(40, 0, 0, "R", 3).sw(50, 0, 3, "S", 0);
  auto original = t.build();
  ASSERT_EQ(original->diagnostics.count(core::DiagCode::switch_in_inferred), 1u);
  auto back = roundTrip(*original, "inferred.perfetto-trace");
  ASSERT_TRUE(back);
  EXPECT_EQ(countOf(*back, "sched_switch"), 4u);  // the four traced: 0->1, 2->0, 0->3, 3->0
  EXPECT_EQ(back->eventCount, 5u);                // and the waking
  EXPECT_EQ(back->diagnostics.count(core::DiagCode::switch_in_inferred), 1u);
  EXPECT_EQ(back->diagnostics.count(core::DiagCode::mismatched_switch_prev_tid), 1u);
  EXPECT_EQ(firstSliceDifference(*original, *back), "none");
}

// nicemix tid 68 in small. B (tid 4) runs on CPU 0 from 100; its switch out
// there is not traced. C wakes it (found running: no effect), moves it and
// switches it in on CPU 1 at 155, where C's events at 160 show C current
// again (a repair: C back at 158, 3 ns after its bound, the one measured
// delay). CPU 0's next event at 400 shows A current: A's switch-in, placed 3 ns
// after B's start, at 103. The import marks B Unknown where CPU 1's repair
// displaced it, but not at CPU 0's: by the time it was found, B had gone on to
// CPU 1, so B's states say Running from 100 through 158. Read back, the same:
// B never waits (0 ns, no involuntary switch), ran 3 + 3 ns.
TEST(PerfettoRoundTrip, ARepairFoundAfterTheDisplacedTaskMovedOnLeavesItsStatesAlone) {
  testing_support::TraceBuilder t;
  t.sw(10, 1, 0, "R", 9).sw(12, 0, 0, "R", 2).waking(15, 0, 2, 3, 1).sw(20, 1, 9, "S", 0);
  t.sw(23, 1, 0, "R", 3);  // the one traced switch from idle to a woken task: 3 ns after its bound (the idle start)
  t.sw(100, 0, 2, "R", 4).waking(150, 1, 3, 4, 0).migrate(151, 1, 4, 0, 1).sw(155, 1, 3, "R", 4);
  t.sw(160, 1, 3, "S", 0).sw(400, 0, 2, "R", 5).sw(500, 0, 5, "S", 0);
  auto original = t.build();
  ASSERT_EQ(original->diagnostics.count(core::DiagCode::switch_in_inferred), 2u);
  auto statsOfB = [](const core::TraceModel& m) {
    for (const auto& task : core::analysis::computeStats(m).tasks)
      if (task.tid == 4) return task;
    ADD_FAILURE() << "no task 4";
    return core::analysis::TaskStats{};
  };
  const auto a = statsOfB(*original);
  ASSERT_EQ(a.runtimeNs, 6);
  ASSERT_EQ(a.waitNs, 0);
  ASSERT_EQ(a.switchesInvoluntary, 0u);
  auto back = roundTrip(*original, "moved-on.perfetto-trace");
  ASSERT_TRUE(back);
  const auto b = statsOfB(*back);
  EXPECT_EQ(b.runtimeNs, 6);
  EXPECT_EQ(b.waitNs, 0);
  EXPECT_EQ(b.switchesInvoluntary, 0u);
  EXPECT_EQ(firstStateDifference(*original, *back), "none");
  EXPECT_EQ(firstJsonDifference(statsJson(*original), statsJson(*back)), "");
}

// Tasks known only from outside the events (an LTTng statedump entry with no
// state, a saved comm): no event names them, yet they are tasks of the run.
TEST(PerfettoRoundTrip, TasksKnownWithoutEventsAreReadBack) {
  testing_support::TraceBuilder t;
  t.sw(10, 0, 0, "R", 1);
  t.builder().onTaskInfo(77, 70, "statedumped");
  t.builder().onTaskInfo(78, -1, "cmdline-only");
  t.sw(20, 0, 1, "S", 0);
  auto original = t.build();
  ASSERT_EQ(original->taskCount(), 3u);  // t1, and the two known from outside
  auto back = roundTrip(*original, "statedump.perfetto-trace");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->taskCount(), 3u);
  std::map<int32_t, std::pair<std::string, int32_t>> tasks;
  for (size_t u = 1; u < back->threads.size(); ++u)
    tasks[back->threads.tid[u]] = {std::string(back->comm(core::Utid(static_cast<uint32_t>(u)))), back->threads.tgid[u]};
  const std::map<int32_t, std::pair<std::string, int32_t>> expected = {
      {1, {"t1", -1}}, {77, {"statedumped", 70}}, {78, {"cmdline-only", -1}}};
  EXPECT_EQ(tasks, expected);
  // Listed where the run had them: after t1, in the order they were known.
  EXPECT_EQ(firstJsonDifference(statsJson(*original), statsJson(*back)), "");
}

TEST(PerfettoCompactSched, TheFirstCompactSwitchOfACpuIsCounted) {
  const Bytes compactBytes = compactTrace(readFile(testData("perfetto/tiny.perfetto-trace")), false);
  const std::string compact = scratch("all-compact.perfetto-trace");
  writeFile(compact, compactBytes);
  auto m = import(compact);
  ASSERT_TRUE(m);
  // One per CPU with switches: their prev_* is not in the compact form.
  size_t cpusWithSlices = 0;
  for (const auto& s : m->cpuSlices) cpusWithSlices += s.size() > 0;
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::compact_switch_prev_unknown), cpusWithSlices);
  // Every switch is still counted as the sched_switch it is.
  Census c;
  censusOfTrace(compactBytes, c);
  uint64_t counted = 0;
  for (const auto& [n, k] : m->eventCounts)
    if (n == "sched_switch") counted = k;
  EXPECT_EQ(counted, c.compactSwitches);
  fs::remove(compact);
}

TEST(PerfettoCompressed, DeflateAndZstdPacketsReadLikeTheirPlainForm) {
  const Bytes plain = readFile(testData("perfetto/tiny.perfetto-trace"));
  auto a = import(testData("perfetto/tiny.perfetto-trace"));
  ASSERT_TRUE(a);
  for (bool zstd : {false, true}) {
    const std::string path = scratch(zstd ? "zstd.perfetto-trace" : "deflate.perfetto-trace");
    writeFile(path, compressedTrace(plain, zstd, 7));
    auto b = import(path);
    ASSERT_TRUE(b);
    EXPECT_EQ(firstJsonDifference(statsJson(*a), statsJson(*b)), "") << (zstd ? "zstd" : "deflate");
    EXPECT_EQ(b->eventCounts, a->eventCounts);
    fs::remove(path);
  }
}

}  // namespace
