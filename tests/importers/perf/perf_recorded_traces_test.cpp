// The perf.data and perf-script importers on the traces recorded for the project
// (shared/traces/recorded/*/: perf.data, perf.data.old, perf-script.txt). Counts
// per event type must equal what `perf script` prints, and perf.data and its
// perf script text (µs, and --ns generated here) must give the same schedule.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/analysis/stats.h"
#include "importers/importer.h"
#include "perf_test_support.h"

namespace {

using namespace perf_test;

std::vector<std::string> recordedDirs() {
  std::vector<std::string> out;
  const fs::path root = fs::path(SCHEDLAB_SHARED_TRACES) / "recorded";
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return out;
  for (const auto& e : fs::directory_iterator(root, ec))
    if (e.is_directory() && fs::exists(e.path() / "perf.data")) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// perf.data, and perf.data.old where the recording tool left the previous run
// (perf record renames it): both are recordings of the workload.
std::vector<std::string> perfDataFiles(const std::string& dir) {
  std::vector<std::string> out{dir + "/perf.data"};
  if (fs::exists(dir + "/perf.data.old")) out.push_back(dir + "/perf.data.old");
  return out;
}

#define REQUIRE_RECORDED(dirs)                                                               \
  const auto dirs = recordedDirs();                                                          \
  if (dirs.empty()) GTEST_SKIP() << SCHEDLAB_SHARED_TRACES << "/recorded has no perf traces"

TEST(PerfRecordedTraces, PerfDataCountsMatchPerfScript) {
  REQUIRE_RECORDED(dirs);
  if (!perfAvailable()) GTEST_SKIP() << "perf not installed";
  for (const auto& dir : dirs) {
    for (const std::string& file : perfDataFiles(dir)) {
      SCOPED_TRACE(file);
      auto m = importOk(file);
      ASSERT_TRUE(m);
      const auto reference = perfScript(file);
      ASSERT_TRUE(reference);
      EXPECT_EQ(modelCounts(*m), countScriptEvents(*reference));
      EXPECT_EQ(m->topology.source(), "perf.data header");
    }
  }
}

TEST(PerfRecordedTraces, PerfScriptTextCounts) {
  REQUIRE_RECORDED(dirs);
  for (const auto& dir : dirs) {
    const std::string file = dir + "/perf-script.txt";
    SCOPED_TRACE(file);
    ASSERT_TRUE(fs::exists(file)) << "recorded/README.md: every perf recording comes with its perf script text";
    auto m = importOk(file);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->format, "perf-script");
    const auto bytes = readBytes(file);
    EXPECT_EQ(modelCounts(*m), countScriptEvents(std::string(bytes.begin(), bytes.end())));
    // The text is `perf script` of the perf.data beside it.
    auto bin = importOk(dir + "/perf.data");
    ASSERT_TRUE(bin);
    EXPECT_EQ(modelCounts(*m), modelCounts(*bin));
  }
}

// perf script prints µs: every slice edge may move by up to 1 µs.
TEST(PerfRecordedTraces, SameTaskStatsAsPerfScriptText) {
  REQUIRE_RECORDED(dirs);
  for (const auto& dir : dirs) {
    SCOPED_TRACE(dir);
    ASSERT_TRUE(fs::exists(dir + "/perf-script.txt")) << "recorded/README.md: every perf recording comes with its perf script text";
    auto bin = importOk(dir + "/perf.data");
    auto text = importOk(dir + "/perf-script.txt");
    ASSERT_TRUE(bin && text);
    expectSameTaskStats(*bin, *text, 1000);
  }
}

// With --ns the text carries the exact timestamps: identical statistics.
TEST(PerfRecordedTraces, SameTaskStatsAsPerfScriptNs) {
  REQUIRE_RECORDED(dirs);
  if (!perfAvailable()) GTEST_SKIP() << "perf not installed";
  TempDir tmp;
  for (const auto& dir : dirs) {
    for (const std::string& file : perfDataFiles(dir)) {
      SCOPED_TRACE(file);
      const auto text = perfScript(file, "--ns");
      ASSERT_TRUE(text);
      const std::string textFile = tmp.write("script-ns.txt", std::vector<uint8_t>(text->begin(), text->end()));
      auto a = importOk(file);
      auto b = importOk(textFile);
      ASSERT_TRUE(a && b);
      EXPECT_EQ(modelCounts(*a), modelCounts(*b));
      expectSameTaskStats(*a, *b, 0);
      EXPECT_EQ(a->firstTs, b->firstTs);
      EXPECT_EQ(a->lastTs, b->lastTs);
    }
  }
}


// A move with no sched_migrate_task is inferred (core::kMigrationInferred) where
// a task is next seen on another CPU. The kernel traces every move
// (set_task_cpu()), so the trace.dat of each recording, which tracefs wrote,
// gets none inferred: one there would be a false one. Each perf.data keeps
// what `perf script` prints as traced and infers the rest, as its perf script
// text does.
TEST(PerfRecordedTraces, MovesPerfDataLacksAreInferredAndNoneInATraceDat) {
  REQUIRE_RECORDED(dirs);
  size_t inferredSomewhere = 0;
  for (const auto& dir : dirs) {
    SCOPED_TRACE(dir);
    if (fs::exists(dir + "/trace.dat")) {
      auto dat = importOk(dir + "/trace.dat");
      ASSERT_TRUE(dat);
      EXPECT_EQ(core::analysis::computeStats(*dat).migrationsInferred, 0u);
    }
    auto bin = importOk(dir + "/perf.data");
    auto text = importOk(dir + "/perf-script.txt");
    ASSERT_TRUE(bin && text);
    const auto& mg = bin->migrations;
    const auto inferred = static_cast<uint64_t>(
        std::count_if(mg.flags.begin(), mg.flags.end(), [](uint8_t f) { return (f & core::kMigrationInferred) != 0; }));
    const auto bytes = readBytes(dir + "/perf-script.txt");
    EXPECT_EQ(mg.size() - inferred, countScriptEvents(std::string(bytes.begin(), bytes.end()))["sched_migrate_task"]);
    EXPECT_EQ(bin->diagnostics.count(core::DiagCode::migration_inferred), inferred);
    EXPECT_EQ(core::analysis::computeStats(*text).migrationsInferred, inferred);
    inferredSomewhere += inferred > 0;
  }
  EXPECT_GT(inferredSomewhere, 0u) << "recorded/hackbench-proc's perf.data lacks moves its runs show";
}

}  // namespace
