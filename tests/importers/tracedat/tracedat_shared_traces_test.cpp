// Every trace.dat of the shared traces (traces/recorded: v7 zstd from Linux
// 6.18; traces/public: v6 from arm64 Linux 4.x) against the reference tools:
// per-event-type counts equal `trace-cmd report`'s and the MANIFEST's figures,
// and record by record (CPU, timestamp, event id, decoded prev_state) equal to
// libtracecmd's own iteration with libtraceevent's printing. Skipped when the
// shared traces (or trace-cmd) are absent.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <stop_token>
#include <tuple>

#include "importers/tracedat/cpu_stream.h"
#include "tracecmd_oracle.h"
#include "tracedat_test_support.h"

// libtraceevent 1.7.1 and libtracecmd 3.1.6 leak a few bytes per file they open
// (format parsing; the trace clock string, allocated by sscanf("%ms"): its stack
// stops in libc); the reference reader opens many here. The importer uses neither.
// Only the sanitizer builds call this.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libtraceevent.so\nleak:libtracecmd.so\nleak:__isoc99_vsscanf\n";
}

namespace {

using namespace tracedat_test;

class SharedTraceDats : public ::testing::Test {
 protected:
  void SetUp() override {
    m_paths = sharedTraceDats();
    if (m_paths.empty()) GTEST_SKIP() << "no shared traces at " << sharedTraces();
  }
  std::vector<std::string> m_paths;
};

// The two forms trace-cmd 3.1.6 printed for the same line of
// trappy/raw_trace.dat, run to run ("ls-4734  [002] 106439.675571: bprint: ..."
// and "ls-4734  [002]106439675570920: bprint: ..."), and tokens that are not timestamps.
TEST(TraceCmdReportParsing, BothTimestampFormsAreTimestamps) {
  EXPECT_TRUE(isTraceCmdTimestamp("106439.675571:"));
  EXPECT_TRUE(isTraceCmdTimestamp("[002]106439675570920:"));
  EXPECT_FALSE(isTraceCmdTimestamp("[002]"));
  EXPECT_FALSE(isTraceCmdTimestamp("106439675570920:"));  // a bare number: no cpu, no point
  EXPECT_FALSE(isTraceCmdTimestamp("ls-4734"));
  EXPECT_FALSE(isTraceCmdTimestamp("bprint:"));
}

TEST_F(SharedTraceDats, AllImportWithTraceCmdReportCounts) {
  const bool report = haveTraceCmd();
  for (const auto& path : m_paths) {
    SCOPED_TRACE(path);
    auto r = importers::importTrace(path);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_FALSE(r->error) << r->error->message();
    EXPECT_EQ(r->model->diagnostics.count(core::DiagCode::malformed_record), 0u);
    if (report) {
      EXPECT_EQ(counts(*r->model), traceCmdReportCounts(path));
    }
  }
  if (!report) GTEST_SKIP() << "trace-cmd is not installed: counts checked against the MANIFEST only";
}

// The figures traces/public/MANIFEST.md and traces/recorded/README.md state.
TEST_F(SharedTraceDats, ManifestFigures) {
  struct Expected {
    std::string file;
    std::string format;
    int cpus;
    std::map<std::string, uint64_t> counts;
    uint64_t total;  // 0: not stated
    std::string clock;
  };
  const std::vector<Expected> table = {
      {"public/trappy/raw_trace.dat", "trace.dat v6", 6, {{"sched_switch", 755}}, 757, "local"},
      {"public/lisa/example_rtapp/trace.dat", "trace.dat v6", 6, {{"sched_switch", 1552}}, 7820, ""},
      {"public/lisa/sched_load/trace.dat",
       "trace.dat v6",
       6,
       {{"sched_switch", 399}, {"sched_migrate_task", 28}},
       3724,
       ""},
      {"recorded/hackbench-proc/trace.dat", "trace.dat v7 (zstd)", 2, {{"sched_switch", 7658}}, 0, "local"},
      {"recorded/nicemix/trace.dat", "trace.dat v7 (zstd)", 2, {{"sched_switch", 792}}, 0, "local"},
      {"recorded/pipe-threads/trace.dat", "trace.dat v7 (zstd)", 2, {{"sched_switch", 12014}}, 0, "local"},
      {"recorded/sysbench-mix/trace.dat", "trace.dat v7 (zstd)", 2, {{"sched_switch", 1203}}, 0, "local"},
  };
  for (const auto& e : table) {
    const std::string path = sharedTraces() + "/" + e.file;
    SCOPED_TRACE(e.file);
    // The shared traces are there (SetUp): a file of the MANIFEST missing from them is a failure, not a pass.
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    auto r = importers::importTrace(path);
    ASSERT_TRUE(r) << r.error().message();
    const auto& m = *r->model;
    EXPECT_EQ(m.format, e.format);
    EXPECT_EQ(m.topology.cpuCount(), e.cpus);
    const auto c = counts(m);
    for (const auto& [name, n] : e.counts) EXPECT_EQ(c.count(name) ? c.at(name) : 0, n) << name;
    if (e.total) {
      EXPECT_EQ(m.eventCount, e.total);
    }
    if (!e.clock.empty()) {
      EXPECT_EQ(m.metadata.count("clock") ? m.metadata.at("clock") : "", e.clock);
    }
  }
  // LISA's sched_load has no options and no trace_clock section.
  {
    auto r = importers::importTrace(sharedTraces() + "/public/lisa/sched_load/trace.dat");
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->model->metadata.count("clock"), 0u);
  }
  // example_rtapp has prev_state=x (dead task, Linux 4.x encoding) switches.
  {
    auto r = importers::importTrace(sharedTraces() + "/public/lisa/example_rtapp/trace.dat");
    ASSERT_TRUE(r) << r.error().message();
    uint64_t exited = 0;
    for (const auto& t : r->model->cpuSlices)
      for (auto reason : t.endReason) exited += reason == core::SliceEnd::Exited;
    EXPECT_GT(exited, 0u);
  }
}

// Linux 6.18.44-fc traces no switch out of some tasks (a guest agent's
// threads). Walking `trace-cmd report` by hand (the current task of each CPU
// from its switches, a task replaced when an event names another one current,
// then that task's next event): nicemix has 11 such tasks woken next (they had
// slept) and 2 switched in again with no wakeup (preempted), sysbench-mix 2
// and 1; the import says the same, slice by slice.
TEST_F(SharedTraceDats, UntracedSwitchOutsTakeTheirEndFromTheNextEvent) {
  const std::vector<std::tuple<std::string, int, int>> table = {{"recorded/nicemix/trace.dat", 11, 2},
                                                                {"recorded/sysbench-mix/trace.dat", 2, 1}};
  for (const auto& [file, slept, preempted] : table) {
    SCOPED_TRACE(file);
    auto r = importers::importTrace(sharedTraces() + "/" + file);
    ASSERT_TRUE(r) << r.error().message();
    int sleeping = 0, runnable = 0;
    for (const auto& t : r->model->cpuSlices)
      for (size_t i = 0; i < t.size(); ++i) {
        if (!(t.flags[i] & core::kSliceEndInferred)) continue;
        EXPECT_EQ(t.endReason[i], core::SliceEnd::Mismatch);
        sleeping += t.endState[i] == core::TaskState::Sleeping;
        runnable += t.endState[i] == core::TaskState::RunnablePreempted;
      }
    EXPECT_EQ(sleeping, slept);
    EXPECT_EQ(runnable, preempted);
    EXPECT_EQ(r->model->diagnostics.count(core::DiagCode::switch_out_state_inferred),
              static_cast<uint64_t>(slept + preempted));
  }
}

// Cancel is checked before each block of events goes to the sorter
// (importers/tracedat/tracedat_importer.cpp), so it needs a trace longer than
// the fixtures: pipe-threads has 12014 switches alone (recorded/README.md). A
// stop requested before the import begins ends it at the first check, with an
// error and no model.
TEST_F(SharedTraceDats, CancelledImportEndsWithAnError) {
  const std::string path = sharedTraces() + "/recorded/pipe-threads/trace.dat";
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  std::stop_source stop;
  stop.request_stop();
  importers::ImportOptions cancelled;
  cancelled.stop = stop.get_token();
  auto r = importers::importTrace(path, cancelled);
  ASSERT_FALSE(r) << "imported " << r->model->eventCount << " events despite the stop";
  EXPECT_EQ(r.error().message(), path + ": import cancelled");
}

// Record by record against libtracecmd: per CPU, the same records in the same
// order with the same timestamps and event ids, and for sched_switch the same
// task state as libtraceevent prints through the kernel's print fmt.
TEST_F(SharedTraceDats, RecordByRecordLikeLibtracecmd) {
  using namespace importers::tracedat;
  std::vector<std::string> paths = m_paths;
  for (const auto& f : fixtures()) paths.push_back(f);
  for (const auto& path : paths) {
    SCOPED_TRACE(path);
    struct Ref {
      uint64_t ts;
      int type;
      std::string prevState;
    };
    std::map<int, std::vector<Ref>> ref;
    const int rc = oracle_iterate(
        path.c_str(),
        [](void* ctx, int cpu, unsigned long long ts, int type, const char* prevState) {
          (*static_cast<std::map<int, std::vector<Ref>>*>(ctx))[cpu].push_back(
              {ts, type, prevState ? prevState : ""});
          return 0;
        },
        &ref);
    ASSERT_EQ(rc, 0);

    auto file = TraceFile::open(path);
    ASSERT_TRUE(file);
    auto layout = readLayout(**file);
    ASSERT_TRUE(layout) << layout.error().message();
    EventDecoderTable table;
    std::string error;
    DecodeConfig config;
    config.swap = layout->swap;
    ASSERT_TRUE(table.build(layout->formats, layout->uname, config, error)) << error;
    uint64_t compared = 0;
    for (const auto& cpuRef : layout->cpuData) {
      if (!cpuRef.size) continue;
      CpuStreamDecoder stream(**file, *layout, table, cpuRef);
      const auto& expected = ref[cpuRef.cpu];
      size_t i = 0;
      EventBlock block;
      do {
        stream.fill(block, 4096);
        ASSERT_FALSE(block.error) << block.error->message;
        for (const auto& e : block.events()) {
          if (e.op == core::EventOp::DataLoss) continue;
          ASSERT_LT(i, expected.size()) << "cpu " << cpuRef.cpu;
          ASSERT_EQ(static_cast<uint64_t>(e.ts), expected[i].ts) << "cpu " << cpuRef.cpu << " record " << i;
          ASSERT_EQ(e.countKey, expected[i].type) << "cpu " << cpuRef.cpu << " record " << i;
          if (e.op == core::EventOp::Switch) {
            const auto want = core::taskStateFromLetters(expected[i].prevState);
            ASSERT_TRUE(want) << expected[i].prevState;
            ASSERT_EQ(e.state, *want) << "prev_state=" << expected[i].prevState << " record " << i;
          }
          ++i;
          ++compared;
        }
      } while (!block.last);
      EXPECT_EQ(i, expected.size()) << "cpu " << cpuRef.cpu;
    }
    EXPECT_GT(compared, 0u);
  }
}

// The field offsets read from the formats equal libtraceevent's (tep_find_any_field).
TEST_F(SharedTraceDats, FieldOffsetsLikeLibtraceevent) {
  using namespace importers::tracedat;
  for (const auto& path : m_paths) {
    SCOPED_TRACE(path);
    auto file = TraceFile::open(path);
    auto layout = readLayout(**file);
    ASSERT_TRUE(layout);
    std::unique_ptr<oracle_head, void (*)(oracle_head*)> head(oracle_open_head(path.c_str()), oracle_close_head);
    ASSERT_TRUE(head);
    int checked = 0;
    for (const auto& text : layout->formats) {
      if (text.system != "sched") continue;
      auto f = parseEventFormat(text.text, text.system);
      ASSERT_TRUE(f);
      for (const auto& field : f->fields) {
        int offset = -1, size = -1;
        ASSERT_EQ(oracle_field(head.get(), "sched", f->name.c_str(), field.name.c_str(), &offset, &size), 0)
            << f->name << "." << field.name;
        EXPECT_EQ(field.offset, static_cast<uint32_t>(offset)) << f->name << "." << field.name;
        EXPECT_EQ(field.size, static_cast<uint32_t>(size)) << f->name << "." << field.name;
        ++checked;
      }
    }
    EXPECT_GT(checked, 10);
  }
}

}  // namespace
