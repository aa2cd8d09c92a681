// The two public Android traces (shared/traces/public/ms-perf-tools-linux-android):
// event counts, per-task runtime and the process tree, each against the
// independent walk of perfetto_test_support.h (the MANIFEST's sched_switch
// counts, 24,698 and 15,267, come from yet another walker).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "importers/importer.h"
#include "importers/perfetto/perfetto_reader.h"
#include "tests/importers/perfetto/perfetto_test_support.h"

namespace {

using namespace perfetto_test;

struct PublicTrace {
  const char* file;
  uint64_t manifestSwitches;
  int manifestCpus;  // the second has no events on CPUs 4 and 7
  const char* manifestKernel;  // SystemInfo's utsname release, as the MANIFEST gives it
};
const PublicTrace kTraces[] = {
    {"public/ms-perf-tools-linux-android/perfetto_trace_cpu_sampling_not_scoped.pftrace", 24698, 4, "5.10.43"},
    {"public/ms-perf-tools-linux-android/test_trace.perfetto-trace", 15267, 8, "4.19.113"},
};

uint64_t countOf(const core::TraceModel& m, const std::string& name) {
  for (const auto& [n, c] : m.eventCounts)
    if (n == name) return c;
  return 0;
}

class PublicPerfettoTrace : public ::testing::TestWithParam<PublicTrace> {};

TEST_P(PublicPerfettoTrace, EventCountsRuntimesAndTheProcessTreeMatchAnIndependentWalk) {
  const std::string path = sharedTrace(GetParam().file);
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "shared trace missing: " << path;
  Census census;
  censusOfTrace(readFile(path), census);
  ASSERT_EQ(census.events[4], GetParam().manifestSwitches) << "the walk disagrees with the MANIFEST";

  auto result = importers::importTrace(path);
  ASSERT_TRUE(result) << result.error().message();
  ASSERT_FALSE(result->error) << result->error->message();
  const core::TraceModel& m = *result->model;
  EXPECT_EQ(m.format, "perfetto");
  // The release the replay's baseline follows (it was read but filed where
  // kernelRelease() did not look, so these replayed as "not recorded").
  EXPECT_EQ(m.kernelRelease().rfind(GetParam().manifestKernel, 0), 0u) << m.kernelRelease();
  EXPECT_EQ(countOf(m, "sched_switch"), census.events[4]);
  EXPECT_EQ(countOf(m, "sched_waking"), census.events[20]);
  EXPECT_EQ(countOf(m, "sched_wakeup"), census.events[17]);
  EXPECT_EQ(countOf(m, "sched_wakeup_new"), census.events[114]);
  EXPECT_EQ(countOf(m, "cpu_idle"), census.events[13]);
  EXPECT_EQ(countOf(m, "cpu_frequency"), census.events[11]);
  // Neither has system_info's num_cpus or cpu_info: ftrace_stats name every CPU.
  ASSERT_EQ(census.ftraceStatsCpus.size(), static_cast<size_t>(GetParam().manifestCpus));
  EXPECT_EQ(m.topology.cpuCount(), static_cast<int>(*census.ftraceStatsCpus.rbegin() + 1));
  EXPECT_EQ(m.diagnostics.count(core::DiagCode::out_of_order_timestamp), 0u);
  EXPECT_EQ(m.diagnostics.count(core::DiagCode::sort_window_exceeded), 0u);

  // Runtime of every task: the model's run slices against the switches alone.
  const auto expected = runtimeFromSwitches(census);
  std::map<int32_t, int64_t> actual;
  for (const auto& s : m.cpuSlices)
    for (size_t i = 0; i < s.size(); ++i)
      if (s.kind[i] == core::SliceKind::Task && s.dur[i] > 0) actual[m.threads.tid[s.utid[i].value]] += s.dur[i];
  size_t compared = 0;
  for (const auto& [tid, ns] : expected) {
    if (tid <= 0) continue;
    EXPECT_EQ(actual[tid], ns) << "tid " << tid;
    ++compared;
  }
  EXPECT_GT(compared, 50u);

  // tgids and names from the process tree (a snapshot at the start: it names
  // the first task of each tid; a task that reuses the tid later is another).
  size_t withTgid = 0, named = 0;
  std::set<int32_t> seen;
  for (size_t u = 1; u < m.threads.size(); ++u) {
    const int32_t tid = m.threads.tid[u];
    if (!seen.insert(tid).second) continue;
    if (auto it = census.tgidOfThread.find(tid); it != census.tgidOfThread.end()) {
      EXPECT_EQ(m.threads.tgid[u], it->second) << "tid " << tid;
      ++withTgid;
    }
    if (auto it = census.nameOfThread.find(tid); it != census.nameOfThread.end() && !census.commsInEvents.count(tid)) {
      // Named only by the tree (a waker seen as context, a task that never switched).
      EXPECT_EQ(m.comm(core::Utid{static_cast<uint32_t>(u)}), it->second.substr(0, 15)) << "tid " << tid;
      ++named;
    }
  }
  if (census.tgidOfThread.empty()) {
    EXPECT_EQ(withTgid, 0u) << "the trace has no process tree";
  } else {
    EXPECT_GT(withTgid, 50u);
  }
  (void)named;
}

// cpu_frequency and cpu_idle become each CPU's frequency and idle-state
// counter tracks, sample for sample, against the walk's own reading of the
// events (both traces have cpu_idle on every CPU, test_trace cpu_frequency on 7).
TEST_P(PublicPerfettoTrace, FrequencyAndIdleSamplesBecomeEachCpusCounterTracks) {
  const std::string path = sharedTrace(GetParam().file);
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "shared trace missing: " << path;
  Census census;
  censusOfTrace(readFile(path), census);
  ASSERT_FALSE(census.idleByCpu.empty()) << "the trace was expected to carry cpu_idle";
  auto result = importers::importTrace(path);
  ASSERT_TRUE(result) << result.error().message();
  const core::TraceModel& m = *result->model;
  EXPECT_EQ(m.diagnostics.count(core::DiagCode::unsupported_event), 0u);
  const auto expectTracks = [&](core::CounterKind kind, const auto& byCpu) {
    size_t tracks = 0;
    for (size_t k = 0; k < m.counters.tracks.size(); ++k) tracks += m.counters.tracks[k].kind == kind;
    EXPECT_EQ(tracks, byCpu.size());
    for (const auto& [cpu, expected] : byCpu) {
      const size_t k = m.counters.find(kind, static_cast<int32_t>(cpu));
      ASSERT_NE(k, SIZE_MAX) << "cpu " << cpu;
      std::multiset<std::pair<uint64_t, int64_t>> actual;
      const auto [b, e] = m.counters.rowsOf(k);
      for (uint32_t r = b; r < e; ++r)
        actual.emplace(static_cast<uint64_t>(m.counters.ts[r]), static_cast<int64_t>(m.counters.value[r]));
      EXPECT_EQ(actual, expected) << "cpu " << cpu;
    }
  };
  expectTracks(core::CounterKind::CpuFrequencyKhz, census.frequencyByCpu);
  expectTracks(core::CounterKind::CpuIdleState, census.idleByCpu);
}

INSTANTIATE_TEST_SUITE_P(Android, PublicPerfettoTrace, ::testing::ValuesIn(kTraces),
                         [](const auto& param) { return param.index == 0 ? std::string("cpu_sampling") : std::string("test_trace"); });

}  // namespace

namespace {

// Decoding on a worker thread while this one builds (the way large files are
// read) gives the model the direct way gives.
TEST(PerfettoThreading, DecodingOnAWorkerBuildsTheSameModel) {
  const std::string path = sharedTrace(kTraces[1].file);
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "shared trace missing: " << path;
  auto build = [&](importers::perfetto::Threading threading) {
    core::SchedBuilder b;
    const core::Status st = importers::perfetto::readPerfetto(path, b, {}, threading);
    EXPECT_TRUE(st) << st.message();
    return b.finalize();
  };
  const auto direct = build(importers::perfetto::Threading::Never);
  const auto threaded = build(importers::perfetto::Threading::Always);
  EXPECT_EQ(threaded->eventCounts, direct->eventCounts);
  EXPECT_EQ(threaded->metadata, direct->metadata);
  ASSERT_EQ(threaded->cpuSlices.size(), direct->cpuSlices.size());
  for (size_t c = 0; c < direct->cpuSlices.size(); ++c) {
    EXPECT_EQ(threaded->cpuSlices[c].ts, direct->cpuSlices[c].ts) << "cpu " << c;
    EXPECT_EQ(threaded->cpuSlices[c].dur, direct->cpuSlices[c].dur) << "cpu " << c;
  }
  EXPECT_EQ(threaded->threads.tgid, direct->threads.tgid);
  EXPECT_EQ(threaded->diagnostics.total(core::Severity::Info), direct->diagnostics.total(core::Severity::Info));
}

}  // namespace
