// The autogroups saved beside a recorded trace: captured from a /proc-like
// folder, written and read back as "WHEN TID AUTOGROUP NICE" lines.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/autogroup_snapshot.h"
#include "support/scratch_dir.h"

namespace {

namespace fs = std::filesystem;
using test_support::ScratchDir;

void writeFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(AutogroupSnapshot, ReadsEntriesAndNamesTheLinesThatAreNot) {
  const auto parsed = core::parseAutogroups(
      "# a comment\n"
      "\n"
      "start 12 267 0\n"
      "end\t4000 0 -5\r\n"
      "start 13 267\n"          // no nice
      "later 14 3 0\n"          // neither start nor end
      "start 15 -1 0\n"         // no such group
      "start 16 3 20\n"         // nice out of range
      "start x 3 0\n"
      "end 17 268 19 extra\n");
  ASSERT_EQ(parsed.entries.size(), 2u);
  EXPECT_EQ(parsed.entries[0].when, core::SnapshotWhen::Start);
  EXPECT_EQ(parsed.entries[0].tid, 12);
  EXPECT_EQ(parsed.entries[0].group, 267);
  EXPECT_EQ(parsed.entries[0].nice, 0);
  EXPECT_EQ(parsed.entries[1].when, core::SnapshotWhen::End);
  EXPECT_EQ(parsed.entries[1].tid, 4000);
  EXPECT_EQ(parsed.entries[1].group, 0);
  EXPECT_EQ(parsed.entries[1].nice, -5);
  std::vector<uint64_t> bad;
  for (const auto& b : parsed.badLines) bad.push_back(b.line);
  EXPECT_EQ(bad, (std::vector<uint64_t>{5, 6, 7, 8, 9, 10}));
}

// /proc/PID/autogroup reads "/autogroup-N nice K", or nothing for the root
// task group; every thread of the process (/proc/PID/task) is listed with it.
// A process without the file, or whose file cannot be read (gone meanwhile),
// is left out.
TEST(AutogroupSnapshot, ListsEveryThreadWithItsProcesssGroup) {
  ScratchDir dir("autogroup-capture");
  const fs::path proc = dir.path();
  writeFile(proc / "100" / "autogroup", "/autogroup-7 nice 3\n");
  writeFile(proc / "100" / "task" / "100" / "stat", "");
  writeFile(proc / "100" / "task" / "101" / "stat", "");
  writeFile(proc / "2" / "autogroup", "");
  writeFile(proc / "2" / "task" / "2" / "stat", "");
  writeFile(proc / "300" / "task" / "300" / "stat", "");  // no autogroup file
  writeFile(proc / "self" / "autogroup", "/autogroup-9 nice 0\n");
  writeFile(proc / "400" / "autogroup", "garbage\n");
  writeFile(proc / "400" / "task" / "400" / "stat", "");
  // Opens, but its read fails, as a process's that exits between the open and
  // the read does (ESRCH; here EISDIR): left out, not thrown.
  fs::create_directories(proc / "500" / "autogroup");
  writeFile(proc / "500" / "task" / "500" / "stat", "");
  const auto captured = core::captureAutogroups(core::SnapshotWhen::End, proc.string());
  ASSERT_TRUE(captured) << captured.error().message();
  const auto parsed = core::parseAutogroups(*captured);
  EXPECT_TRUE(parsed.badLines.empty());
  std::vector<std::tuple<int32_t, int32_t, int>> got;
  for (const auto& e : parsed.entries) {
    EXPECT_EQ(e.when, core::SnapshotWhen::End);
    got.emplace_back(e.tid, e.group, e.nice);
  }
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::tuple<int32_t, int32_t, int>>{{2, 0, 0}, {100, 7, 3}, {101, 7, 3}}));
}

TEST(AutogroupSnapshot, FailsNamingTheFolderWhenNoProcessShowsAnAutogroup) {
  ScratchDir dir("autogroup-none");
  writeFile(dir.path() / "300" / "task" / "300" / "stat", "");
  const auto captured = core::captureAutogroups(core::SnapshotWhen::Start, dir.path().string());
  ASSERT_FALSE(captured);
  EXPECT_NE(captured.error().message().find(dir.path().string()), std::string::npos) << captured.error().message();
  EXPECT_NE(captured.error().message().find("CONFIG_SCHED_AUTOGROUP"), std::string::npos);
}

}  // namespace
