// The CTF importer over the real CTF traces in shared/traces: per-event-type
// counts against the MANIFEST figures and against the babeltrace2 CLI's own
// output (when installed), metadata, prev_state encodings and statedump seeds;
// and each recorded perf-converted CTF against the same recording's perf.data
// (or its perf-script.txt). Skipped when shared/traces is not beside the checkout.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "core/analysis/stats.h"
#include "importers/importer.h"
#include "importers/ctf/ctf_test_support.h"

namespace {

namespace fs = std::filesystem;
using ctftest::sharedPath;

struct SharedCtf {
  const char* path;  ///< under shared/traces
  const char* format;
  int cpus;
  const char* osrelease;
  const char* prevStateEncoding;  ///< prefix of the metadata value
  uint64_t total;                 ///< MANIFEST "events in total" (0: not stated)
  std::map<std::string, uint64_t> manifest;
};

const SharedCtf kTraces[] = {
    {"public/tracecompass-test-traces/many-threads",
     "ctf (lttng-modules 2.8)",
     8,
     "4.4.3-1-ARCH",
     "raw task->state",
     240644,
     {{"sched_switch", 28325},
      {"sched_waking", 6743},
      {"sched_wakeup", 6743},
      {"sched_process_fork", 8003},
      {"sched_process_exit", 8003},
      {"sched_process_free", 7639}}},
    {"public/tracecompass-test-traces/bug446190",
     "ctf (lttng-modules 2.5)",
     4,
     "3.10.31-ltsi",
     "raw task->state",
     31556,
     {{"sched_switch", 1052},
      {"sched_wakeup", 566},
      {"sched_wakeup_new", 2},
      {"sched_migrate_task", 34},
      {"sched_process_fork", 2},
      {"sched_process_exit", 2},
      {"sched_process_exec", 2},
      {"sched_stat_runtime", 757}}},
    {"public/tracecompass-test-traces/flipping-endianness",
     "ctf (lttng-modules 2.5)",
     1,
     "3.14.23-WR7.0.0.0_standard",
     "raw task->state",
     14310,
     {{"sched_switch", 2540}, {"sched_process_fork", 8}}},
    {"public/tracecompass-test-traces/perf-taskset2",
     "ctf (perf data convert)",
     4,
     "3.10.92-stih418_family+",
     "raw task->state",
     1500,
     {{"sched_switch", 562},
      {"sched_wakeup", 346},
      {"sched_migrate_task", 4},
      {"sched_process_exec", 2},
      {"sched_process_exit", 1},
      {"sched_stat_runtime", 585}}},
    // lttng-modules 2.10 writes raw task->state even on 4.15 (values 4096, 1026).
    {"public/babeltrace/lttng-tracefile-rotation/kernel",
     "ctf (lttng-modules 2.10)",
     4,
     "4.15.0-65-generic",
     "raw task->state",
     12305,
     {{"sched_switch", 4687},
      {"sched_waking", 2378},
      {"sched_wakeup", 2378},
      {"sched_wakeup_new", 5},
      {"sched_migrate_task", 269},
      {"sched_process_fork", 5},
      {"sched_process_exit", 6},
      {"sched_process_exec", 3},
      {"sched_stat_runtime", 2557}}},
    {"recorded/hackbench-proc/ctf", "ctf (perf data convert)", 2, "6.18.44-fc-v857", "TASK_REPORT", 0,
     {{"sched_switch", 10803}}},
    {"recorded/nicemix/ctf", "ctf (perf data convert)", 2, "6.18.44-fc-v857", "TASK_REPORT", 0,
     {{"sched_switch", 453}}},
    {"recorded/pipe-threads/ctf", "ctf (perf data convert)", 2, "6.18.44-fc-v857", "TASK_REPORT", 0,
     {{"sched_switch", 8693}}},
    {"recorded/sysbench-mix/ctf", "ctf (perf data convert)", 2, "6.18.44-fc-v857", "TASK_REPORT", 0,
     {{"sched_switch", 1218}}},
};

std::map<std::string, uint64_t> countsOf(const core::TraceModel& m) {
  return {m.eventCounts.begin(), m.eventCounts.end()};
}

class CtfSharedTrace : public testing::TestWithParam<SharedCtf> {
 protected:
  void SetUp() override {
    if (!fs::exists(SCHEDLAB_SHARED_TRACES)) GTEST_SKIP() << "shared/traces not present";
    path = sharedPath(GetParam().path);
    if (!fs::exists(path)) GTEST_SKIP() << path << " not present";
    auto result = importers::importTrace(path);
    ASSERT_TRUE(result.has_value()) << result.error().message();
    ASSERT_FALSE(result->error) << result->error->message();
    model = result->model;
  }
  std::string path;
  std::shared_ptr<core::TraceModel> model;
};

TEST_P(CtfSharedTrace, CountsMatchManifest) {
  const auto& t = GetParam();
  EXPECT_EQ(model->format, t.format);
  const auto counts = countsOf(*model);
  for (const auto& [name, n] : t.manifest) EXPECT_EQ(counts.count(name) ? counts.at(name) : 0, n) << name;
  if (t.total) {
    EXPECT_EQ(model->eventCount, t.total);
  }
  EXPECT_EQ(model->cpuCount(), t.cpus);
  EXPECT_FALSE(model->partial);
}

TEST_P(CtfSharedTrace, CountsMatchBabeltraceCli) {
  if (!ctftest::babeltraceInstalled()) GTEST_SKIP() << "babeltrace2 CLI not installed";
  const auto reference = ctftest::babeltraceCounts(path);
  ASSERT_TRUE(reference.has_value()) << "babeltrace2 failed on " << path;
  EXPECT_EQ(countsOf(*model), *reference);
}

TEST_P(CtfSharedTrace, MetadataAndStates) {
  const auto& t = GetParam();
  EXPECT_EQ(model->metadata["osrelease"], t.osrelease);
  EXPECT_EQ(model->metadata["prev_state_encoding"].rfind(t.prevStateEncoding, 0), 0u)
      << model->metadata["prev_state_encoding"];
  EXPECT_FALSE(model->metadata["hostname"].empty());
  // Every prev_state of these traces is one the kernel of the day could write.
  EXPECT_EQ(model->diagnostics.count(core::DiagCode::unknown_prev_state), 0u);
  EXPECT_EQ(model->diagnostics.count(core::DiagCode::out_of_order_timestamp), 0u);
  EXPECT_EQ(model->diagnostics.count(core::DiagCode::unsupported_event), 0u);
  EXPECT_EQ(model->lostEvents(), 0);
}

INSTANTIATE_TEST_SUITE_P(Traces, CtfSharedTrace, testing::ValuesIn(kTraces), [](const auto& p) {
  std::string name = p.param.path;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
});

std::shared_ptr<core::TraceModel> importOrSkip(const std::string& rel) {
  const std::string path = sharedPath(rel);
  if (!fs::exists(path)) return nullptr;
  auto result = importers::importTrace(path);
  if (!result) ADD_FAILURE() << result.error().message();
  return result ? result->model : nullptr;
}

const core::Utid* findTid(const core::TraceModel& m, int32_t tid, core::Utid* out) {
  for (uint32_t u = 0; u < m.threads.size(); ++u)
    if (m.threads.tid[u] == tid) {
      *out = core::Utid(u);
      return out;
    }
  return nullptr;
}

TEST(CtfSharedTraces, LttngStatedumpSeedsNamesAndTgids) {
  auto m = importOrSkip("public/tracecompass-test-traces/many-threads");
  if (!m) GTEST_SKIP() << "many-threads not present";
  core::Utid u;
  // lttng_statedump_process_state { tid = 1, pid = 1, name = "systemd", status = 5 }:
  // systemd never runs in the trace; the statedump alone names it.
  ASSERT_NE(findTid(*m, 1, &u), nullptr);
  EXPECT_EQ(m->comm(u), "systemd");
  EXPECT_EQ(m->threads.tgid[u.value], 1);
  // { tid = 3999, pid = 3997, name = "lttng-sessiond" }: a thread of lttng-sessiond.
  ASSERT_NE(findTid(*m, 3999, &u), nullptr);
  EXPECT_EQ(m->threads.tgid[u.value], 3997);
  EXPECT_EQ(m->comm(u), "lttng-sessiond");
}

TEST(CtfSharedTraces, LttngPrioIsKernelPrio) {
  // lttng-modules writes prio - 100: "next_comm = lttng-consumerd, next_tid = 4297, next_prio = 20".
  auto m = importOrSkip("public/tracecompass-test-traces/many-threads");
  if (!m) GTEST_SKIP() << "many-threads not present";
  core::Utid u;
  ASSERT_NE(findTid(*m, 4297, &u), nullptr);
  EXPECT_EQ(m->threads.prio[u.value], 120);
}

TEST(CtfSharedTraces, LttngRawStatesDecoded) {
  // Rotation trace (lttng-modules 2.10.8, Linux 4.15): the first sched_switch of
  // lttng-consumerd 31407 on CPU 2 has prev_state = 2 (TASK_UNINTERRUPTIBLE), and
  // 9 switches carry 4096 (TASK_STATE_MAX: preempted).
  auto m = importOrSkip("public/babeltrace/lttng-tracefile-rotation/kernel");
  if (!m) GTEST_SKIP() << "rotation trace not present";
  core::Utid u;
  ASSERT_NE(findTid(*m, 31407, &u), nullptr);
  const auto& slices = m->cpuSlices[2];
  size_t first = SIZE_MAX;
  for (size_t i = 0; i < slices.size(); ++i)
    if (slices.utid[i] == u) {
      first = i;
      break;
    }
  ASSERT_NE(first, SIZE_MAX);
  EXPECT_EQ(slices.endState[first], core::TaskState::Blocked);
  size_t preempted = 0;
  for (const auto& cpu : m->cpuSlices)
    for (size_t i = 0; i < cpu.size(); ++i) preempted += cpu.endReason[i] == core::SliceEnd::Preempted;
  EXPECT_GE(preempted, 9u);
}

// --- perf-converted CTF against the same recording's other forms ---

class RecordedCtf : public testing::TestWithParam<const char*> {};

TEST_P(RecordedCtf, SameScheduleAsPerfData) {
  const std::string dir = sharedPath(std::string("recorded/") + GetParam());
  if (!fs::exists(dir + "/ctf")) GTEST_SKIP() << dir << " not present";
  auto ctf = importers::importTrace(dir + "/ctf");
  ASSERT_TRUE(ctf.has_value()) << ctf.error().message();
  // Prefer the perf.data importer, then the perf-script one, when built.
  const importers::Importer* other = nullptr;
  std::string otherPath;
  for (const auto& imp : importers::allImporters()) {
    if (imp->name() == "perf.data" && fs::exists(dir + "/perf.data")) {
      other = imp.get();
      otherPath = dir + "/perf.data";
      break;
    }
    if (imp->name() == "perf-script" && !other) {
      other = imp.get();
      otherPath = dir + "/perf-script.txt";
    }
  }
  if (!other) GTEST_SKIP() << "neither the perf.data nor the perf-script importer is built";
  auto ref = importers::importTrace(otherPath);
  ASSERT_TRUE(ref.has_value()) << ref.error().message();
  const auto& a = *ctf->model;
  const auto& b = *ref->model;
  // perf.data and the CTF hold the same nanoseconds; `perf script` prints
  // microseconds, so against it each interval edge may move by up to 1 us.
  const bool exact = other->name() == "perf.data";
  const int64_t edge = exact ? 0 : 1000;
  EXPECT_EQ(countsOf(a), countsOf(b)) << "vs " << otherPath;
  EXPECT_NEAR(a.firstTs, b.firstTs, edge);
  EXPECT_NEAR(a.lastTs, b.lastTs, edge);
  // Per tid: runtime and switches, summed over the task identities of a tid.
  struct Sum {
    int64_t runtime = 0;
    uint64_t voluntary = 0;
    uint64_t involuntary = 0;
    uint64_t wakeups = 0;
  };
  auto perTid = [](const core::TraceModel& m) {
    std::map<int32_t, Sum> out;
    for (const auto& t : core::analysis::computeStats(m).tasks) {
      Sum& s = out[t.tid];
      s.runtime += t.runtimeNs;
      s.voluntary += t.switchesVoluntary;
      s.involuntary += t.switchesInvoluntary;
      s.wakeups += t.wakeups;
    }
    return out;
  };
  const auto sa = perTid(a);
  const auto sb = perTid(b);
  EXPECT_EQ(sa.size(), sb.size());
  for (const auto& [tid, s] : sa) {
    auto it = sb.find(tid);
    if (it == sb.end()) {
      ADD_FAILURE() << "tid " << tid << " missing from " << otherPath;
      continue;
    }
    const auto slices = static_cast<int64_t>(s.voluntary + s.involuntary + 1);
    EXPECT_NEAR(s.runtime, it->second.runtime, 2 * edge * slices) << "tid " << tid;
    EXPECT_EQ(s.voluntary, it->second.voluntary) << "tid " << tid;
    EXPECT_EQ(s.involuntary, it->second.involuntary) << "tid " << tid;
    EXPECT_EQ(s.wakeups, it->second.wakeups) << "tid " << tid;
  }
}

TEST_P(RecordedCtf, SameEventsAsPerfScriptText) {
  const std::string dir = sharedPath(std::string("recorded/") + GetParam());
  if (!fs::exists(dir + "/ctf")) GTEST_SKIP() << dir << " not present";
  auto ctf = importers::importTrace(dir + "/ctf");
  ASSERT_TRUE(ctf.has_value()) << ctf.error().message();
  const auto script = ctftest::perfScriptCounts(dir + "/perf-script.txt");
  const auto& m = *ctf->model;
  EXPECT_EQ(countsOf(m), script.events);
  // Each sched_switch closes a run slice of its prev task (a fresh one when the
  // CPU's first switch names it, or after a mismatch): count them per tid.
  std::map<int, uint64_t> switchedOut;
  for (const auto& cpu : m.cpuSlices)
    for (size_t i = 0; i < cpu.size(); ++i) {
      const auto r = cpu.endReason[i];
      if (r == core::SliceEnd::Preempted || r == core::SliceEnd::Blocked || r == core::SliceEnd::Exited)
        ++switchedOut[m.threads.tid[cpu.utid[i].value]];
    }
  EXPECT_EQ(switchedOut, script.switchesOutByTid);
}

INSTANTIATE_TEST_SUITE_P(Recordings, RecordedCtf,
                         testing::Values("hackbench-proc", "nicemix", "pipe-threads", "sysbench-mix"),
                         [](const auto& p) {
                           std::string n = p.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
