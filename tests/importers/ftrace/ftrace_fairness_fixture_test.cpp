// Fairness statistics of recorded schedules written by hand as ftrace text
// (tests/data/ftrace/handmade), imported like any recording: the expected
// values are worked out in the comments from the schedule each file spells out.
#include <gtest/gtest.h>

#include <string>

#include "core/analysis/stats.h"
#include "importers/importer.h"

namespace {

constexpr int64_t kMs = 1'000'000;

std::shared_ptr<core::TraceModel> importHandmade(const std::string& name) {
  auto result = importers::importTrace(std::string(SCHEDLAB_TEST_DATA) + "/ftrace/handmade/" + name);
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().message());
  if (!result) return nullptr;
  EXPECT_FALSE(result->error) << result->error->message();
  return result->model;
}

const core::analysis::TaskStats& task(const core::analysis::RunStats& s, int tid) {
  for (const auto& t : s.tasks)
    if (t.tid == tid) return t;
  throw std::runtime_error("no task " + std::to_string(tid));
}

}  // namespace

// three_hogs_two_cpus.txt: hogA (101), hogB (102), hogC (103) all woken at
// 500.000000 on 2 CPUs; hogA runs on CPU 0 throughout, hogB and hogC take turns
// on CPU 1 every millisecond; the last switch is at 500.010000. Traces carry no
// affinity, so each may run anywhere: the ideal gives each 2/3 of a CPU over the
// 10 ms, 6.667 ms. They got 10, 5 and 5 ms: x = 1.5, 0.75, 0.75, and
// J = (1.5 + 0.75 + 0.75)^2 / (3 * (2.25 + 0.5625 + 0.5625)) = 9 / 10.125 = 0.889.
TEST(FtraceFairnessFixture, ThreeHogsOnTwoCpusServedOneHalfHalf) {
  const auto m = importHandmade("three_hogs_two_cpus.txt");
  ASSERT_TRUE(m);
  const auto s = core::analysis::computeStats(*m);
  EXPECT_EQ(task(s, 101).runtimeNs, 10 * kMs);
  EXPECT_EQ(task(s, 102).runtimeNs, 5 * kMs);
  EXPECT_EQ(task(s, 103).runtimeNs, 5 * kMs);
  EXPECT_EQ(s.fairness.competingTasks, 3u);
  EXPECT_NEAR(s.fairness.jain, 8.0 / 9.0, 1e-9);
  // hogA's lag 2t/3 - t is largest at the end: 10/3 ms.
  EXPECT_EQ(s.fairness.gpsLagMaxNs, 3'333'333);
}

// deadline_and_two_fair.txt, one CPU: dl (200, prio=-1: SCHED_DEADLINE) runs
// 700.000 - 700.002 and sleeps; fairA (201) and fairB (202), woken at 700.000,
// then run 1 ms each. The prio -1 must survive import; DL is no fair task, so it
// is left out of the index and only takes its 2 ms away from the fair ones: the
// ideal gives fairA and fairB nothing while dl runs and 1/2 each after, 1 ms each,
// which is what they got (J = 1; lag +-0.5 ms while they take turns).
TEST(FtraceFairnessFixture, DeadlinePrioSurvivesImportAndIsNotAFairTask) {
  const auto m = importHandmade("deadline_and_two_fair.txt");
  ASSERT_TRUE(m);
  const auto s = core::analysis::computeStats(*m);
  EXPECT_EQ(task(s, 200).prio, -1);
  EXPECT_EQ(task(s, 200).schedClass, core::SchedClass::Deadline);
  EXPECT_FALSE(task(s, 200).competing);
  EXPECT_EQ(task(s, 201).schedClass, core::SchedClass::Fair);
  EXPECT_EQ(s.fairness.competingTasks, 2u);
  EXPECT_EQ(task(s, 201).idealNs, kMs);
  EXPECT_EQ(task(s, 202).idealNs, kMs);
  EXPECT_NEAR(s.fairness.jain, 1.0, 1e-12);
  EXPECT_EQ(s.fairness.gpsLagMaxNs, kMs / 2);
}
