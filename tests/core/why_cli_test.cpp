// `schedlab-cli why` and the idle-while-runnable total of `stats --json`: the
// stable JSON names of issue 16 with the hand-worked numbers of
// tests/core/why_test.cpp, and the breakdown diff of a recording against its
// replay (`--against`) agreeing with the breakdowns of the two runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "app/cli/cli.h"
#include "core/analysis/why.h"
#include "importers/importer.h"

namespace {

std::string data(const std::string& name) { return std::string(SCHEDLAB_TEST_DATA) + "/" + name; }

int runCli(const std::vector<std::string>& argv, std::string& out) {
  std::ostringstream o, e;
  const int rc = app::cli::run(argv, o, e);
  out = o.str() + e.str();
  return rc;
}

// `"key": value` as the JSON writer prints it (pretty, one field a line).
std::string field(const std::string& key, const std::string& value) { return "\"" + key + "\": " + value; }

}  // namespace

// chain.txt, taskC (worked out in why_test.cpp): running 2400 us, sleeping
// 2400, runnable 200; antagonists A and B 200 each; woken once by B ending 2400
// of sleep; a 10-segment path from A running 0..50 us to C running 3000..5000.
TEST(WhyCli, JsonCarriesTheStableNames) {
  std::string out;
  ASSERT_EQ(runCli({"why", data("why/chain.txt"), "--task", "taskC", "--json"}, out), 0) << out;
  for (const auto& f : {field("running_ns", "2400000"), field("sleeping_ns", "2400000"), field("runnable_ns", "200000"),
                        field("blocked_ns", "0"), field("idle_while_runnable_ns", "0"), field("from_ns", "100000000000"),
                        field("to_ns", "100005000001"), field("critical_path_stop", "\"range start\"")})
    EXPECT_NE(out.find(f), std::string::npos) << f << "\n" << out;
  for (const char* key : {"\"task\"", "\"range\"", "\"antagonists\"", "\"wakers\"", "\"critical_path\"", "\"state\"", "\"tid\"",
                          "\"comm\"", "\"count\"", "\"ns\""})
    EXPECT_NE(out.find(key), std::string::npos) << key;
  // The path's first segment: A running from the trace start to 50 us.
  const auto path = out.find("\"critical_path\"");
  ASSERT_NE(path, std::string::npos);
  const std::string first = out.substr(path, 200);
  EXPECT_NE(first.find(field("tid", "101")), std::string::npos) << first;
  EXPECT_NE(first.find(field("state", "\"running\"")), std::string::npos) << first;
  EXPECT_NE(first.find(field("to_ns", "100000050000")), std::string::npos) << first;

  // B's preempted wait, 2000..2600 us, ended behind D.
  const auto behind = out.find("\"waited_behind\"");
  ASSERT_NE(behind, std::string::npos);
  EXPECT_NE(out.substr(behind, 80).find(field("tid", "104")), std::string::npos) << out.substr(behind, 80);
  const std::string piece = out.substr(out.rfind('{', out.rfind(field("state", ""), behind)), 200);
  EXPECT_NE(piece.find(field("state", "\"runnable\"")), std::string::npos) << piece;
  EXPECT_NE(piece.find(field("from_ns", "100002000000")), std::string::npos) << piece;

  // An interrupt waker has a null tid: taskA was woken by a hardirq.
  ASSERT_EQ(runCli({"why", data("why/chain.txt"), "--task", "101", "--json"}, out), 0) << out;
  EXPECT_NE(out.find(field("tid", "null")), std::string::npos) << out;
  EXPECT_NE(out.find(field("comm", "\"<irq>\"")), std::string::npos);

  // The run's idle-while-runnable in `stats --json` totals: 1700 us (why_test.cpp).
  ASSERT_EQ(runCli({"stats", data("why/idle_while_runnable.txt"), "--json"}, out), 0) << out;
  EXPECT_NE(out.find(field("idle_while_runnable_ns", "1700000")), std::string::npos) << out;
}

TEST(WhyCli, BadTaskAndUsage) {
  std::string out;
  EXPECT_EQ(runCli({"why", data("why/chain.txt"), "--task", "nosuchtask"}, out), app::cli::kExitFailure);
  EXPECT_NE(out.find("no task with tid or comm 'nosuchtask'"), std::string::npos) << out;
  EXPECT_EQ(runCli({"why", data("why/chain.txt")}, out), app::cli::kExitUsage);
}

// The demo against its BFS replay: the diff's A and B are the breakdowns of
// sched-pipe in each run, and its changes are B - A.
TEST(WhyCli, AgainstAReplayDiffsTheBreakdowns) {
  const std::string demo = std::string(SCHEDLAB_TEST_DATA) + "/../../resources/demo/pipe-and-hogs.txt";
  const auto replayed = (std::filesystem::temp_directory_path() / "why_cli_test_bfs.txt").string();
  std::string out;
  ASSERT_EQ(runCli({"replay", demo, "--model", "bfs", "--out", replayed}, out), 0) << out;
  ASSERT_EQ(runCli({"why", demo, "--task", "sched-pipe", "--against", replayed, "--json"}, out), 0) << out;
  auto a = importers::importTrace(demo);
  auto b = importers::importTrace(replayed);
  ASSERT_TRUE(a && b);
  const auto& ma = *a->model;
  const auto& mb = *b->model;
  const core::Utid ua = core::analysis::busiestTask(ma, core::analysis::findTasks(ma, "sched-pipe"), core::analysis::wholeTrace(ma));
  const core::Utid ub = core::analysis::matchTask(ma, ua, mb);
  ASSERT_TRUE(ub.isValid());
  const auto wa = core::analysis::explainTask(ma, ua, core::analysis::wholeTrace(ma));
  const auto wb = core::analysis::explainTask(mb, ub, core::analysis::wholeTrace(mb));
  const auto changes = out.find("\"changes\"");
  ASSERT_NE(changes, std::string::npos);
  const std::string runnable = out.substr(out.find("\"runnable_ns\"", changes), 160);
  std::ostringstream expectA, expectB;
  expectA << "\"a\": " << wa.runnableNs;
  expectB << "\"b\": " << wb.runnableNs;
  EXPECT_NE(runnable.find(expectA.str()), std::string::npos) << runnable;
  EXPECT_NE(runnable.find(expectB.str()), std::string::npos) << runnable;
  std::filesystem::remove(replayed);
}
