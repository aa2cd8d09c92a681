// The ftrace-text importer over real traces from shared/traces: per-event-type
// counts against an independent line count and the MANIFEST figures, and
// per-task runtime against an independent sum over the raw sched_switch lines.
// Skipped when shared/traces is not beside the checkout.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "importers/ftrace/independent_ftrace_parser.h"
#include "importers/importer.h"

namespace {

namespace fs = std::filesystem;

struct SharedTrace {
  const char* path;  ///< under shared/traces
  std::map<std::string, uint64_t> manifest;  ///< counts the MANIFEST (or recorded/README.md) states
  int cpus = 0;      ///< from the header (#P, cpus=), 0 if it has none
};

const SharedTrace kTraces[] = {
    {"recorded/hackbench-proc/trace.txt", {{"sched_switch", 8540}}, 2},
    {"recorded/nicemix/trace.txt", {{"sched_switch", 640}}, 2},
    {"recorded/pipe-threads/trace.txt", {{"sched_switch", 9797}}, 2},
    {"recorded/sysbench-mix/trace.txt", {{"sched_switch", 1167}}, 2},
    {"public/lisa/trace_txt/trace.txt", {{"sched_switch", 1856}, {"sched_wakeup", 1068}, {"print", 14}}, 6},
    {"public/catapult/android_systrace.html", {{"sched_switch", 11074}, {"sched_wakeup", 6827}}, 0},
    {"public/catapult/android_systrace.txt", {{"sched_switch", 58}, {"sched_wakeup", 33}}, 0},
    {"public/catapult/atrace_data", {{"sched_switch", 72}, {"sched_wakeup", 44}}, 1},
    {"public/tracecompass-incubator/atrace-test",
     {{"sched_switch", 2582}, {"sched_wakeup", 1540}, {"tracing_mark_write", 332}},
     4},
    {"public/tracecompass-incubator/ftrace_syscalls.txt",
     {{"sched_switch", 60},
      {"sched_waking", 30},
      {"sched_wakeup", 30},
      {"sched_wakeup_new", 1},
      {"sched_migrate_task", 3},
      {"sched_process_fork", 1},
      {"sched_process_exit", 2},
      {"sched_wake_idle_without_ipi", 24}},
     0},
};

std::string sharedPath(const char* rel) { return std::string(SCHEDLAB_SHARED_TRACES) + "/" + rel; }

class FtraceSharedTrace : public testing::TestWithParam<SharedTrace> {
 protected:
  void SetUp() override {
    if (!fs::exists(SCHEDLAB_SHARED_TRACES)) GTEST_SKIP() << "shared/traces not present";
    path = sharedPath(GetParam().path);
    if (!fs::exists(path)) GTEST_SKIP() << path << " not present";
    auto result = importers::importTrace(path);
    ASSERT_TRUE(result.has_value()) << result.error().message();
    ASSERT_FALSE(result->error) << result->error->message();
    model = result->model;
    ASSERT_EQ(model->format, "ftrace-text");
  }
  std::string path;
  std::shared_ptr<core::TraceModel> model;
};

std::string printableName(const testing::TestParamInfo<SharedTrace>& info) {
  std::string name = info.param.path;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

}  // namespace

TEST_P(FtraceSharedTrace, EventCountsEqualAnIndependentLineCount) {
  const auto independent = ftrace_test::readIndependently(path);
  std::map<std::string, uint64_t> imported(model->eventCounts.begin(), model->eventCounts.end());
  EXPECT_EQ(imported, independent.eventCounts);
  uint64_t total = 0;
  for (const auto& [name, n] : independent.eventCounts) total += n;
  EXPECT_EQ(model->eventCount, total);
}

TEST_P(FtraceSharedTrace, EventCountsMatchTheManifest) {
  std::map<std::string, uint64_t> imported(model->eventCounts.begin(), model->eventCounts.end());
  for (const auto& [name, n] : GetParam().manifest) EXPECT_EQ(imported[name], n) << name;
  if (GetParam().cpus > 0) {
    EXPECT_EQ(model->topology.cpuCount(), GetParam().cpus);
  }
}

TEST_P(FtraceSharedTrace, RuntimePerTaskEqualsTheRawSwitchLines) {
  const auto independent = ftrace_test::readIndependently(path);
  // Runs whose both switches are in the trace: not inferred, not ended by an untraced switch.
  std::map<int, int64_t> fromModel;
  for (const auto& table : model->cpuSlices)
    for (size_t i = 0; i < table.size(); ++i) {
      if (table.kind[i] != core::SliceKind::Task || (table.flags[i] & core::kSliceStartInferred) ||
          table.endReason[i] == core::SliceEnd::Mismatch)
        continue;
      const int tid = model->threads.tid[table.utid[i].value];
      if (tid != 0 && table.dur[i] > 0) fromModel[tid] += table.dur[i];
    }
  EXPECT_FALSE(fromModel.empty());
  EXPECT_EQ(fromModel, independent.runtimeByTid);
  EXPECT_EQ(model->diagnostics.count(core::DiagCode::switch_in_inferred), independent.untracedSwitches);
}

TEST_P(FtraceSharedTrace, NothingIsMalformed) {
  EXPECT_EQ(model->diagnostics.count(core::DiagCode::malformed_record), 0u);
  EXPECT_EQ(model->diagnostics.count(core::DiagCode::unsupported_event), 0u);
  EXPECT_EQ(model->diagnostics.count(core::DiagCode::unknown_prev_state), 0u);
  EXPECT_EQ(model->diagnostics.count(core::DiagCode::out_of_order_timestamp), 0u);
}

INSTANTIATE_TEST_SUITE_P(Shared, FtraceSharedTrace, testing::ValuesIn(kTraces), printableName);

TEST(FtraceSharedTraceDetails, LisaRawPrevStateUsesThePre414Encoding) {
  const std::string path = sharedPath("public/lisa/trace_txt/trace.txt");
  if (!fs::exists(path)) GTEST_SKIP() << path << " not present";
  auto result = importers::importTrace(path);
  ASSERT_TRUE(result.has_value()) << result.error().message();
  const auto& m = *result->model;
  EXPECT_EQ(m.metadata.at("prev_state_encoding"), "pre-4.14 raw bits");
  // First switch: "<...>-1701 [001] 76.211513: prev_comm=trace-cmd prev_pid=1701 prev_state=64" (x, dead).
  // sh-1642 prev_state=4096 (preempted) and kworker prev_state=1 (S) follow on CPU 2.
  size_t preempted = 0, dead = 0, sleeping = 0;
  for (const auto& t : m.cpuSlices)
    for (size_t i = 0; i < t.size(); ++i) {
      preempted += t.endReason[i] == core::SliceEnd::Preempted;
      dead += t.endReason[i] == core::SliceEnd::Exited;
      sleeping += t.endState[i] == core::TaskState::Sleeping;
    }
  EXPECT_GT(preempted, 0u);
  EXPECT_GT(dead, 0u);
  EXPECT_GT(sleeping, 0u);
  // prev_state=64 is x (TASK_DEAD) before 4.14, P (parked) after: trace-cmd-1701 must have died.
  bool found = false;
  for (size_t u = 0; u < m.threads.size(); ++u)
    if (m.threads.tid[u] == 1701) {
      found = true;
      EXPECT_TRUE(m.threads.flags[u] & core::kThreadExited);
    }
  EXPECT_TRUE(found);
}

TEST(FtraceSharedTraceDetails, AtraceTgidColumnGroupsThreadsIntoProcesses) {
  const std::string path = sharedPath("public/tracecompass-incubator/atrace-test");
  if (!fs::exists(path)) GTEST_SKIP() << path << " not present";
  auto result = importers::importTrace(path);
  ASSERT_TRUE(result.has_value()) << result.error().message();
  const auto& m = *result->model;
  // "Binder:549_4-2029  (  549)" and "EventThread-654   (  549)": two threads of process 549.
  int tgidOf2029 = 0, tgidOf654 = 0;
  for (size_t u = 0; u < m.threads.size(); ++u) {
    if (m.threads.tid[u] == 2029) tgidOf2029 = m.threads.tgid[u];
    if (m.threads.tid[u] == 654) tgidOf654 = m.threads.tgid[u];
  }
  EXPECT_EQ(tgidOf2029, 549);
  EXPECT_EQ(tgidOf654, 549);
  EXPECT_GT(m.processes.size(), 10u);
}
