// The recorded fixtures (tests/data/tracedat): one run of `perf bench sched pipe
// -l 200` on Linux 6.18, written by trace-cmd 3.1.6 as v7 zstd, converted by
// trace-cmd to v7 uncompressed and to v6 (tests/data/tracedat/reduce_tracedat.py
// says how). The three must import to the same model, with the counts and the
// events `trace-cmd report` shows for them.
#include <gtest/gtest.h>

#include "tracedat_test_support.h"

namespace {

using namespace tracedat_test;

struct Loaded {
  std::shared_ptr<core::TraceModel> model;
};

core::Utid findThread(const core::TraceModel& m, int32_t tid) {
  for (uint32_t u = 1; u < m.threads.size(); ++u)
    if (m.threads.tid[u] == tid) return core::Utid(u);
  return core::Utid();
}

TEST(TraceDatFixtures, FormatsAndCountsAsTraceCmdReportShowsThem) {
  const std::map<std::string, std::string> formats = {{fixture("tiny-v6.dat"), "trace.dat v6"},
                                                      {fixture("tiny-v7-none.dat"), "trace.dat v7"},
                                                      {fixture("tiny-v7-zstd.dat"), "trace.dat v7 (zstd)"}};
  // `trace-cmd report tiny-v7-zstd.dat`, event names counted (the same for all three).
  const std::map<std::string, uint64_t> expected = {
      {"sched_process_exec", 1}, {"sched_process_exit", 2}, {"sched_process_fork", 2}, {"sched_switch", 434},
      {"sched_wakeup", 224},     {"sched_wakeup_new", 2},   {"sched_waking", 224}};
  for (const auto& [path, format] : formats) {
    SCOPED_TRACE(path);
    auto m = importWhole(path);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->format, format);
    EXPECT_EQ(counts(*m), expected);
    EXPECT_EQ(m->eventCount, 889u);
    EXPECT_EQ(m->topology.cpuCount(), 2);
    EXPECT_EQ(m->metadata["clock"], "local");
    EXPECT_EQ(m->metadata["kernel"].substr(0, 15), "Linux vm 6.18.4");
    EXPECT_FALSE(m->partial);
    // First and last event (trace-cmd report: 3633.487560 fork, 3633.518852 switch).
    EXPECT_EQ(m->firstTs, 3633487560349);
    EXPECT_EQ(m->lastTs, 3633518852338);
    EXPECT_EQ(m->lostEvents(), 0);
    EXPECT_EQ(m->diagnostics.count(core::DiagCode::malformed_record), 0u);
    EXPECT_EQ(m->diagnostics.count(core::DiagCode::truncated_input), 0u);
  }
}

TEST(TraceDatFixtures, HandWorkedEventsOfTheRecording) {
  auto m = importWhole(fixture("tiny-v7-zstd.dat"));
  ASSERT_TRUE(m);
  // bash 22592 forks 22594 (CPU 1), which execs /usr/bin/perf, renames itself
  // sched-pipe (prctl: no event, the later events carry the name), forks 22595,
  // and both exit; the last event is 22594 switching out dead (prev_state X) to bash.
  const core::Utid parent = findThread(*m, 22592);
  const core::Utid pipe = findThread(*m, 22594);
  const core::Utid child = findThread(*m, 22595);
  ASSERT_TRUE(parent.isValid());
  ASSERT_TRUE(pipe.isValid());
  ASSERT_TRUE(child.isValid());
  EXPECT_EQ(m->comm(parent), "bash");
  EXPECT_EQ(m->comm(pipe), "sched-pipe");
  EXPECT_EQ(m->threads.parent[pipe.value], parent);
  EXPECT_EQ(m->threads.parent[child.value], pipe);
  EXPECT_TRUE(m->threads.flags[pipe.value] & core::kThreadExited);
  EXPECT_TRUE(m->threads.flags[child.value] & core::kThreadExited);
  EXPECT_EQ(m->threads.startTs[pipe.value], 3633487560349);  // the fork

  bool exec = false;
  for (size_t i = 0; i < m->taskEvents.ts.size(); ++i)
    if (m->taskEvents.kind[i] == core::TaskEventKind::Exec) {
      exec = true;
      EXPECT_EQ(m->taskEvents.utid[i], pipe);
      EXPECT_EQ(m->strings.get(m->taskEvents.text[i]), "/usr/bin/perf");
      EXPECT_EQ((m->taskEvents.ts[i] + 500) / 1000, 3633495608);  // 3633.495608, as report rounds it
    }
  EXPECT_TRUE(exec);

  // The last slice of CPU 1 before bash: sched-pipe 22594, ended by its exit.
  const auto& s = m->cpuSlices[1];
  bool sawExit = false;
  for (size_t i = 0; i < s.ts.size(); ++i)
    if (s.utid[i] == pipe && s.ts[i] + s.dur[i] == 3633518852338) {
      sawExit = true;
      EXPECT_EQ(s.endReason[i], core::SliceEnd::Exited);
    }
  EXPECT_TRUE(sawExit);
}

// v6, v7 and v7 zstd hold the same pages: every table must come out the same.
TEST(TraceDatFixtures, AllVersionsBuildTheSameModel) {
  auto a = importWhole(fixture("tiny-v7-zstd.dat"));
  ASSERT_TRUE(a);
  for (const auto& other : {fixture("tiny-v6.dat"), fixture("tiny-v7-none.dat")}) {
    SCOPED_TRACE(other);
    auto b = importWhole(other);
    ASSERT_TRUE(b);
    ASSERT_EQ(a->cpuSlices.size(), b->cpuSlices.size());
    for (size_t c = 0; c < a->cpuSlices.size(); ++c) {
      EXPECT_EQ(a->cpuSlices[c].ts, b->cpuSlices[c].ts);
      EXPECT_EQ(a->cpuSlices[c].dur, b->cpuSlices[c].dur);
      EXPECT_EQ(a->cpuSlices[c].utid, b->cpuSlices[c].utid);
      EXPECT_EQ(a->cpuSlices[c].endState, b->cpuSlices[c].endState);
    }
    EXPECT_EQ(a->threadStates.ts, b->threadStates.ts);
    EXPECT_EQ(a->threadStates.state, b->threadStates.state);
    EXPECT_EQ(a->wakeups.ts, b->wakeups.ts);
    EXPECT_EQ(a->wakeups.waker, b->wakeups.waker);
    EXPECT_EQ(a->threads.tid, b->threads.tid);
    EXPECT_EQ(a->threads.comm.size(), b->threads.comm.size());
    for (size_t u = 0; u < a->threads.size(); ++u)
      EXPECT_EQ(a->comm(core::Utid(static_cast<uint32_t>(u))), b->comm(core::Utid(static_cast<uint32_t>(u))));
  }
}

// Cancel: tracedat_shared_traces_test.cpp (a fixture ends before the first check).
TEST(TraceDatFixtures, ProgressEndsAtOne) {
  std::vector<double> seen;
  importers::ImportOptions options;
  options.progress = [&](double f) { seen.push_back(f); };
  auto r = importers::importTrace(fixture("tiny-v7-zstd.dat"), options);
  ASSERT_TRUE(r);
  ASSERT_FALSE(seen.empty());
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_LE(seen[i - 1], seen[i]);
}

}  // namespace
