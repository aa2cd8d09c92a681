// Autogroup under EEVDF (replay/policies/fair/autogroup.cpp, docs/models.md
// §5.6): the sessions' groups share a CPU as entities, whatever their number
// of tasks; who is in which group; and a real recording of two sessions.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>

#include "importers/importer.h"
#include "replay/replay.h"
#include "replay/workload/trace_extractor.h"
#include "replay_test_util.h"
#include "support/scratch_dir.h"

namespace fs = std::filesystem;
using replay::Burst;
using replay::Task;
using replay::Workload;

namespace {

double counter(const replay::ReplayResult& r, const std::string& key) {
  for (const auto& [k, v] : r.modelCounters.values)
    if (k == key) return v;
  ADD_FAILURE() << "no model counter " << key << " in: " << r.modelCounters.summary;
  return -1;
}

// Process 100 with one task and process 200 with three, each task 200 ms of
// work, all runnable at 0 on one CPU, each process in its own session.
Workload oneAgainstThree() {
  Workload w;
  w.kind = "trace";
  const auto add = [&](int32_t tid, int32_t tgid) {
    Task t = replay_test::exitingTask(tid, "hog", 0, {Burst{}});
    t.tgid = tgid;
    t.bursts[0].work = 200'000'000;
    w.tasks.push_back(t);
  };
  add(100, 100);
  for (int32_t tid : {201, 202, 203}) add(tid, 200);
  return w;
}

// A task of 1 ms of work for the membership tests; `parent` forks it.
struct Member {
  int32_t tid;
  int32_t tgid;
  int32_t autogroup = -1;  // as saved beside the recording; -1: not saved
  bool kernelThread = false;
  replay::TaskId parent = replay::kNoTask;
};
Workload membersWorkload(const std::vector<Member>& members) {
  Workload w;
  w.kind = "trace";
  for (const Member& m : members) {
    Task t = replay_test::exitingTask(m.tid, m.kernelThread ? "kworker/0:1" : "task", 0, {Burst{}});
    t.tgid = m.tgid;
    t.autogroup = m.autogroup;
    t.kernelThread = m.kernelThread;
    t.parent = m.parent;
    t.bursts[0].work = 1'000'000;
    w.tasks.push_back(t);
  }
  for (replay::TaskId child = 0; child < w.tasks.size(); ++child)
    if (const replay::TaskId parent = w.tasks[child].parent; parent != replay::kNoTask) {
      replay::Trigger fork;
      fork.kind = replay::TriggerKind::Fork;
      fork.target = child;
      w.tasks[parent].triggers.push_back(fork);
    }
  return w;
}

}  // namespace

// Worked by hand: with autogroup each session's entity has half the CPU, so
// the lone task runs at 50% and is done at 400 ms, while the three share the
// other half (1/6 each, 66.7 ms done by then) and finish their remaining
// 3 x 133.3 ms at 800 ms. On one flat queue all four run at 25% and end
// together at 800 ms.
TEST(Autogroup, TwoSessionsShareACpuHalfAndHalfWhateverTheirTaskCounts) {
  const Workload w = oneAgainstThree();
  const auto grouped = replay_test::replayOn(w, "eevdf", 1, {"autogroup=on"});
  ASSERT_EQ(grouped.outcomes.size(), 4u);
  EXPECT_NEAR(grouped.outcomes[0].lastEnd, 400'000'000, 20'000'000);
  for (size_t i = 1; i < 4; ++i) EXPECT_NEAR(grouped.outcomes[i].lastEnd, 800'000'000, 20'000'000) << i;
  const auto flat = replay_test::replayOn(w, "eevdf", 1, {"autogroup=off"});
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(flat.outcomes[i].lastEnd, 800'000'000, 20'000'000) << i;
}

// A kernel thread is in the root group; the threads of a process alive when
// the trace began share its group; a task forked in the trace joins its
// parent's, though it is another process; a task without a process id is
// its own process.
TEST(Autogroup, KernelThreadsAtTheRootChildrenInTheirParentsGroup) {
  const Workload w = membersWorkload({
      {.tid = 5, .tgid = 5, .kernelThread = true},  // root
      {.tid = 10, .tgid = 10},                      // group of process 10
      {.tid = 11, .tgid = 10},                      // same process, same group
      {.tid = 20, .tgid = 20},                      // group of process 20
      {.tid = 30, .tgid = 30, .parent = 1},         // forked by 10: its group
      {.tid = 40, .tgid = -1},                      // no process id: a group of its own
  });
  const auto r = replay_test::replayOn(w, "eevdf", 2, {"autogroup=on"});
  EXPECT_EQ(counter(r, "autogroup_groups"), 3);
  EXPECT_EQ(counter(r, "autogroup_root_tasks"), 1);
  const auto flat = replay_test::replayOn(w, "eevdf", 2, {"autogroup=off"});
  EXPECT_EQ(flat.modelCounters.summary.find("autogroup"), std::string::npos) << flat.modelCounters.summary;
}

// A recording of three sessions (tests/data/fidelity/README.md): two CPU
// hogs, each started with setsid before the trace, beside six hogs the traced
// command started. With autogroup each CPU is shared by groups, not tasks:
// the six, one group, get a third of the machine between them and wait about
// seven times as long as they run (1.8 s for 0.24 s), the two far less. The
// replay must give back each task's wait; on flat queues all eight share
// alike and the six wait less than half as long as recorded.
TEST(Autogroup, ReplaysTheWaitsOfTwoRecordedSessions) {
  const std::string path = (fs::path(SCHEDLAB_TEST_DATA) / "fidelity" / "sessions.perfetto-trace").string();
  auto imported = importers::importTrace(path);
  ASSERT_TRUE(imported) << imported.error().message();
  const core::TraceModel& m = *imported->model;
  const auto waitsByTid = [&](const std::string& autogroup) {
    replay::ReplayOptions o;
    o.model = "eevdf";
    o.params = {"autogroup=" + autogroup};
    auto r = replay::replayRecording(m, o);
    EXPECT_TRUE(r) << (r ? "" : r.error().message());
    std::map<int32_t, std::pair<int64_t, int64_t>> waits;  // tid -> recorded, replayed
    if (!r || !r->result.validation.fidelity) return waits;
    for (const auto& t : r->result.validation.fidelity->tasks)
      if (t.comm == "sh") waits[t.tid] = {t.waitRecordedNs, t.waitReplayedNs};
    return waits;
  };
  const auto grouped = waitsByTid("on");
  ASSERT_EQ(grouped.size(), 8u);
  int sessionHogs = 0;
  for (const auto& [tid, wait] : grouped) {
    const auto [recorded, replayed] = wait;
    SCOPED_TRACE("tid " + std::to_string(tid));
    EXPECT_NEAR(static_cast<double>(replayed), static_cast<double>(recorded), 0.15 * static_cast<double>(recorded));
    sessionHogs += recorded < 1'000'000'000;
  }
  EXPECT_EQ(sessionHogs, 2);  // the two setsid hogs waited under a second of the 2.27 s, the six far more
  const auto flat = waitsByTid("off");
  ASSERT_EQ(flat.size(), 8u);
  for (const auto& [tid, wait] : flat) {
    const auto [recorded, replayed] = wait;
    SCOPED_TRACE("tid " + std::to_string(tid));
    if (recorded > 1'000'000'000) {
      EXPECT_LT(replayed, 0.5 * static_cast<double>(recorded));
    }
  }
}

// The autogroups saved beside a recording decide over the process tree: two
// processes of one session share its group; a process the file puts in the
// root group (one that never called setsid()) stays there; a task forked in
// the trace still joins its parent's; tasks the file does not name are
// grouped as before.
TEST(Autogroup, SavedAutogroupsDecideOverTheProcessTree) {
  const Workload w = membersWorkload({
      {.tid = 10, .tgid = 10, .autogroup = 7},            // session 7
      {.tid = 20, .tgid = 20, .autogroup = 7},            // another process of session 7: the same group
      {.tid = 30, .tgid = 30, .autogroup = 0},            // saved in the root group
      {.tid = 40, .tgid = 40, .parent = 0},               // forked by 10: session 7
      {.tid = 50, .tgid = 50},                            // not saved: its process's own group
      {.tid = 5, .tgid = 5, .kernelThread = true},        // a kernel thread: root
  });
  const auto r = replay_test::replayOn(w, "eevdf", 2, {"autogroup=on"});
  EXPECT_EQ(counter(r, "autogroup_groups"), 2);
  EXPECT_EQ(counter(r, "autogroup_root_tasks"), 2);
  EXPECT_EQ(counter(r, "autogroup_saved_tasks"), 3);
}

// A group's shares follow its nice (autogroup.c: /proc/PID/autogroup's nice
// sets tg->shares to sched_prio_to_weight). Worked by hand: two sessions of
// one task each, 100 ms of work, on one CPU; at nice 0 and 5 the entities
// weigh 1024 and 335, so the first runs at 1024/1359 = 75.4% and is done at
// 132.7 ms, the second (32.7 ms done by then) at 200 ms. At equal nice both
// end at 200 ms.
TEST(Autogroup, AGroupsNiceSetsItsShares) {
  const auto ends = [](int secondNice) {
    Workload w;
    w.kind = "trace";
    for (int32_t i = 0; i < 2; ++i) {
      Task t = replay_test::exitingTask(100 + i, "hog", 0, {Burst{}});
      t.tgid = 100 + i;
      t.autogroup = 1 + i;
      t.autogroupNice = static_cast<int8_t>(i == 1 ? secondNice : 0);
      t.bursts[0].work = 100'000'000;
      w.tasks.push_back(t);
    }
    const auto r = replay_test::replayOn(w, "eevdf", 1, {"autogroup=on"});
    EXPECT_EQ(r.outcomes.size(), 2u);
    return r.outcomes.size() == 2 ? std::make_pair(r.outcomes[0].lastEnd, r.outcomes[1].lastEnd)
                                   : std::make_pair(int64_t{0}, int64_t{0});
  };
  const auto [first, second] = ends(5);
  EXPECT_NEAR(first, 132'700'000, 3'000'000);
  EXPECT_NEAR(second, 200'000'000, 3'000'000);
  const auto [firstEqual, secondEqual] = ends(0);
  EXPECT_NEAR(firstEqual, 200'000'000, 3'000'000);
  EXPECT_NEAR(secondEqual, 200'000'000, 3'000'000);
}

// A recording made by `schedlab-cli record` (tests/data/fidelity/README.md):
// three CPU hogs started as jobs of one setsid session before the trace,
// beside one hog of the traced command. The session's group has one CPU's
// worth, a third for each job; the traced hog's group the other CPU to
// itself. Only the autogroups saved beside the trace show the three as one
// session: the process tree makes each its own group, and the traced hog
// then shares the machine with three groups instead of one.
TEST(Autogroup, SavedSessionsGiveBackTheSharesOfJobsStartedBeforeTheTrace) {
  const fs::path fixture = fs::path(SCHEDLAB_TEST_DATA) / "fidelity" / "session-jobs.perfetto-trace";
  const auto sharesOfHogs = [](const std::string& path) {
    std::vector<std::pair<double, double>> shares;  // recorded, replayed; the traced hog first
    auto imported = importers::importTrace(path);
    EXPECT_TRUE(imported) << imported.error().message();
    if (!imported) return shares;
    replay::ReplayOptions o;
    o.model = "eevdf";
    auto r = replay::replayRecording(*imported->model, o);
    EXPECT_TRUE(r) << (r ? "" : r.error().message());
    if (!r || !r->result.validation.fidelity) return shares;
    for (const auto& t : r->result.validation.fidelity->tasks)
      if (t.comm == "sh" && t.shareRecorded > 0.2) shares.emplace_back(t.shareRecorded, t.shareReplayed);
    std::sort(shares.begin(), shares.end(), std::greater<>());
    return shares;
  };
  const auto saved = sharesOfHogs(fixture.string());
  ASSERT_EQ(saved.size(), 4u);
  EXPECT_GT(saved[0].first, 0.9);  // the recording: the traced hog had a CPU
  EXPECT_GT(saved[0].second, 0.9);
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_NEAR(saved[i].first, 1.0 / 3, 0.03) << i;  // the jobs a third each
    EXPECT_NEAR(saved[i].second, 1.0 / 3, 0.03) << i;
  }
  test_support::ScratchDir dir("autogroup-session-jobs");
  const std::string bare = dir.file("session-jobs.perfetto-trace");
  fs::copy_file(fixture, bare);
  const auto guessed = sharesOfHogs(bare);
  ASSERT_EQ(guessed.size(), 4u);
  EXPECT_LT(guessed[0].second, 0.85);  // four groups for two CPUs
}
