// The autogroups beside a trace (`schedlab-cli record` writes TRACE.autogroup)
// go into the thread table whatever the format: a "start" entry to the task a
// tid named when tracing began, an "end" entry to the one it named when it
// stopped; a line that is no entry is counted and located, the others kept.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/autogroup_snapshot.h"
#include "core/sched_settings.h"
#include "importers/importer.h"
#include "support/scratch_dir.h"

namespace {

namespace fs = std::filesystem;
using test_support::ScratchDir;

// Task 101 exits and its tid comes back as a child of 102: two rows, 101's first
// and last (tests/data/autogroups/tid-reused.txt), copied where a test writes
// the autogroups beside it.
std::string tidReusedTrace(const ScratchDir& dir) {
  const std::string trace = dir.file("tid-reused.txt");
  fs::copy_file(fs::path(SCHEDLAB_TEST_DATA) / "autogroups" / "tid-reused.txt", trace);
  return trace;
}

TEST(AutogroupsBeside, StartEntriesNameTheFirstTaskOfATidEndEntriesTheLast) {
  ScratchDir dir("autogroups-beside");
  const std::string trace = tidReusedTrace(dir);
  std::ofstream(core::autogroupsPath(trace)) << "# saved by hand\n"
                                                "start 101 5 0\n"
                                                "start 102 0 0\n"
                                                "end 101 9 -3\n"
                                                "end 102 3 0\n"  // 102 was alive at the start: its start entry wins
                                                "end 999 4 0\n"  // a task the trace never shows
                                                "start 103\n";
  auto imported = importers::importTrace(trace);
  ASSERT_TRUE(imported) << imported.error().message();
  const core::TraceModel& m = *imported->model;
  std::vector<std::tuple<int32_t, int32_t, int>> rows;  // tid, autogroup, nice in row order
  for (uint32_t u = 0; u < m.threads.size(); ++u)
    if (m.threads.tid[u] > 0) rows.emplace_back(m.threads.tid[u], m.threads.autogroup[u], m.threads.autogroupNice[u]);
  EXPECT_EQ(rows, (std::vector<std::tuple<int32_t, int32_t, int>>{{101, 5, 0}, {102, 0, 0}, {101, 9, -3}}));
  EXPECT_EQ(m.metadata.at(core::kAutogroupsFromKey), core::autogroupsPath(trace));
  bool located = false;
  for (const auto& d : m.diagnostics.records())
    located |= d.file == core::autogroupsPath(trace) && d.line == std::optional<uint64_t>(7);
  EXPECT_TRUE(located) << "the bad line 7 is not in the diagnostics";
}

// Without the file nothing is known; a file far too large to be autogroups is
// not read, and says so.
TEST(AutogroupsBeside, NoneOrTooLargeLeavesEveryTaskUnknown) {
  ScratchDir dir("autogroups-none");
  const std::string trace = tidReusedTrace(dir);
  for (const bool huge : {false, true}) {
    if (huge) {
      std::ofstream out(core::autogroupsPath(trace));
      out << "start 101 5 0\n";
      out.seekp((64 << 20) + 1);
      out << '\n';
    }
    auto imported = importers::importTrace(trace);
    ASSERT_TRUE(imported) << imported.error().message();
    const core::TraceModel& m = *imported->model;
    for (uint32_t u = 0; u < m.threads.size(); ++u) EXPECT_EQ(m.threads.autogroup[u], -1) << u;
    EXPECT_EQ(m.metadata.count(core::kAutogroupsFromKey), 0u);
    bool noted = false;
    for (const auto& d : m.diagnostics.records())
      noted |= d.file == core::autogroupsPath(trace) && d.message.find("too large") != std::string::npos;
    EXPECT_EQ(noted, huge);
  }
}

}  // namespace

namespace {

std::string readAll(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A copy of the trace in another format (schedlab-cli export, File → Export)
// gets the settings and autogroups saved beside the original, so that it
// replays the same; a trace with none beside it gets none.
TEST(AutogroupsBeside, CopiedBesideAnExportOfTheTrace) {
  ScratchDir dir("autogroups-export");
  const std::string trace = tidReusedTrace(dir);
  auto bare = importers::importTrace(trace);
  ASSERT_TRUE(bare) << bare.error().message();
  const auto none = importers::copyFilesBeside(*bare->model, dir.file("bare.perfetto-trace"));
  ASSERT_TRUE(none) << none.error().message();
  EXPECT_TRUE(none->empty());

  const std::string settings = "kernel.sched_autogroup_enabled = 1\n", groups = "start 101 5 0\n";
  std::ofstream(core::schedSettingsPath(trace)) << settings;
  std::ofstream(core::autogroupsPath(trace)) << groups;
  auto imported = importers::importTrace(trace);
  ASSERT_TRUE(imported) << imported.error().message();
  const std::string copy = dir.file("copy.perfetto-trace");
  const auto written = importers::copyFilesBeside(*imported->model, copy);
  ASSERT_TRUE(written) << written.error().message();
  EXPECT_EQ(*written, (std::vector<std::string>{core::schedSettingsPath(copy), core::autogroupsPath(copy)}));
  EXPECT_EQ(readAll(core::schedSettingsPath(copy)), settings);
  EXPECT_EQ(readAll(core::autogroupsPath(copy)), groups);

  fs::create_directories(core::autogroupsPath(dir.file("blocked.perfetto-trace")));  // a folder where the file goes
  const auto blocked = importers::copyFilesBeside(*imported->model, dir.file("blocked.perfetto-trace"));
  ASSERT_FALSE(blocked);
  EXPECT_NE(blocked.error().message().find(core::autogroupsPath(dir.file("blocked.perfetto-trace"))), std::string::npos)
      << blocked.error().message();
}

}  // namespace
