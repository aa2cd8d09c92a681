// The CTF importer on tests/data/ctf/synthetic-lttng (written by
// make_synthetic_lttng.py): the LTTng features the real traces lack — CPU
// topology statedump, statedump state seeds, enumeration prev_state in the
// TASK_REPORT encoding, discarded events between packets, big-endian data, a
// clock offset, a wakeup inside an irq handler; and synthetic-power's power
// events. Every expectation below is worked out by hand from the timeline in
// the generator.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "core/analysis/stats.h"
#include "importers/importer.h"
#include "importers/ctf/ctf_test_support.h"

namespace {

constexpr int64_t kOffset = 1'700'000'000'000'000'000;  // clock offset_s = 1700000000

class CtfSynthetic : public testing::Test {
 protected:
  void SetUp() override {
    auto result = importers::importTrace(ctftest::dataPath("ctf/synthetic-lttng"));
    ASSERT_TRUE(result.has_value()) << result.error().message();
    ASSERT_FALSE(result->error) << result->error->message();
    model = result->model;
  }
  core::Utid utidOf(int32_t tid) const {
    for (uint32_t u = 0; u < model->threads.size(); ++u)
      if (model->threads.tid[u] == tid) return core::Utid(u);
    ADD_FAILURE() << "no task " << tid;
    return core::Utid(0);
  }
  /// The slice of `tid` starting at `ts` (ns after the offset) on `cpu`.
  size_t sliceAt(int cpu, int32_t tid, int64_t ts) const {
    const auto& s = model->cpuSlices[static_cast<size_t>(cpu)];
    for (size_t i = 0; i < s.size(); ++i)
      if (s.ts[i] == kOffset + ts && model->threads.tid[s.utid[i].value] == tid && s.kind[i] == core::SliceKind::Task)
        return i;
    ADD_FAILURE() << "no slice of " << tid << " at " << ts << " on cpu " << cpu;
    return 0;
  }
  std::vector<std::pair<int64_t, core::TaskState>> statesOf(int32_t tid) const {
    std::vector<std::pair<int64_t, core::TaskState>> out;
    const auto [b, e] = model->stateRowsOf(utidOf(tid));
    for (uint32_t r = b; r < e; ++r) out.emplace_back(model->threadStates.ts[r] - kOffset, model->threadStates.state[r]);
    return out;
  }
  std::shared_ptr<core::TraceModel> model;
};

TEST_F(CtfSynthetic, EventsMetadataAndClockOffset) {
  const std::map<std::string, uint64_t> expected = {
      {"irq_handler_entry", 1}, {"irq_handler_exit", 1}, {"lttng_statedump_cpu_topology", 4},
      {"lttng_statedump_process_state", 3}, {"sched_process_fork", 1}, {"sched_switch", 8},
      {"sched_wakeup", 1}, {"sched_waking", 3}};
  const std::map<std::string, uint64_t> counts(model->eventCounts.begin(), model->eventCounts.end());
  EXPECT_EQ(counts, expected);
  EXPECT_EQ(model->format, "ctf (lttng-modules 2.13)");
  EXPECT_EQ(model->metadata["tracer"], "lttng-modules 2.13.4");
  EXPECT_EQ(model->metadata["hostname"], "synth");
  EXPECT_EQ(model->metadata["osrelease"], "5.15.0-synthetic");
  EXPECT_EQ(model->metadata["prev_state_encoding"], "TASK_REPORT bits (Linux 4.14+)");
  EXPECT_EQ(model->firstTs, kOffset + 1000);
  EXPECT_EQ(model->lastTs, kOffset + 12000);
  if (!ctftest::babeltraceInstalled())
    GTEST_SKIP() << "babeltrace2 CLI (make setup) not installed: counts not compared with it";
  EXPECT_EQ(ctftest::babeltraceCounts(ctftest::dataPath("ctf/synthetic-lttng")), expected);
}

TEST_F(CtfSynthetic, TopologyFromStatedump) {
  // cpu0/cpu2 share core 0 and cpu1/cpu3 core 1 of package 0.
  EXPECT_EQ(model->topology.source(), "lttng");
  EXPECT_EQ(model->topology.cores(), (std::vector<std::vector<int>>{{0, 2}, {1, 3}}));
  EXPECT_EQ(model->topology.siblingsOf(2), std::vector<int>{0});
  EXPECT_EQ(model->cpuCount(), 4);
}

TEST_F(CtfSynthetic, StatedumpNamesTgidsAndSeeds) {
  EXPECT_EQ(model->comm(utidOf(200)), "daemon");
  EXPECT_EQ(model->threads.tgid[utidOf(100).value], 100);
  EXPECT_EQ(model->threads.tgid[utidOf(101).value], 100);
  EXPECT_EQ(model->threads.tgid[utidOf(102).value], 100);  // LTTng's child_pid is the tgid
  EXPECT_EQ(model->threads.tgid[utidOf(200).value], 200);
  // daemon: WAIT in the statedump at 1020, woken from the irq at 9100, runs at 9300.
  using S = core::TaskState;
  EXPECT_EQ(statesOf(200), (std::vector<std::pair<int64_t, S>>{
                               {1020, S::Sleeping}, {9100, S::Runnable}, {9300, S::Running}, {12000, S::RunnablePreempted}}));
  // app-worker: RUN at 1010; its first switch out (D) at 1500; woken at 3000.
  EXPECT_EQ(statesOf(101), (std::vector<std::pair<int64_t, S>>{
                               {1010, S::Runnable}, {1500, S::Blocked}, {3000, S::Runnable}, {3100, S::Running}, {6000, S::Idle}}));
}

TEST_F(CtfSynthetic, PrevStateEnumAndPrio) {
  using S = core::TaskState;
  const auto& cpu0 = model->cpuSlices[0];
  const auto& cpu1 = model->cpuSlices[1];
  size_t i = sliceAt(0, 100, 2100);
  EXPECT_EQ(cpu0.dur[i], 2900);
  EXPECT_EQ(cpu0.endState[i], S::Sleeping);  // 1
  i = sliceAt(0, 200, 9300);
  EXPECT_EQ(cpu0.endState[i], S::RunnablePreempted);  // 256 = TASK_REPORT_MAX
  EXPECT_EQ(cpu0.endReason[i], core::SliceEnd::Preempted);
  EXPECT_EQ(cpu0.prio[i], 120);  // lttng's 20 + MAX_RT_PRIO
  i = sliceAt(1, 101, 3100);
  EXPECT_EQ(cpu1.endState[i], S::Idle);  // 128 = TASK_REPORT_IDLE
  i = sliceAt(1, 102, 6000);
  EXPECT_EQ(cpu1.endState[i], S::Dead);  // 16 = EXIT_DEAD
  EXPECT_EQ(cpu1.endReason[i], core::SliceEnd::Exited);
  EXPECT_EQ(model->threads.prio[utidOf(101).value], 120);
}

TEST_F(CtfSynthetic, DiscardedEventsBetweenPackets) {
  // events_discarded went 0 -> 3 between CPU 0's packets (last event 5000,
  // next packet begins 9000): one loss on CPU 0, outside both packets' events.
  const auto& d = model->dataLoss;
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d.cpu[0], 0);
  EXPECT_EQ(d.count[0], 3);
  EXPECT_EQ(d.tsBegin[0], kOffset + 5000);
  EXPECT_EQ(d.tsEnd[0], kOffset + 9000);
  EXPECT_EQ(model->lostEvents(), 3);
  EXPECT_EQ(model->diagnostics.count(core::DiagCode::lost_events), 3u);
}

TEST_F(CtfSynthetic, WakeupInsideIrqHasNoWaker) {
  const auto& w = model->wakeups;
  const core::Utid daemon = utidOf(200);
  const core::Utid worker = utidOf(101);
  bool sawDaemon = false;
  bool sawWorker = false;
  for (size_t r = 0; r < w.size(); ++r) {
    if (w.wakee[r] == daemon) {
      sawDaemon = true;
      EXPECT_EQ(w.ts[r], kOffset + 9100);
      EXPECT_TRUE(w.flags[r] & core::kWakeupFromIrq);
      EXPECT_FALSE(w.waker[r].isValid());
    }
    if (w.wakee[r] == worker) {
      sawWorker = true;  // sched_waking at 3000 and sched_wakeup at 3050: one row
      EXPECT_EQ(w.ts[r], kOffset + 3000);
      EXPECT_TRUE(w.flags[r] & core::kWakeupHadWaking);
      EXPECT_TRUE(w.flags[r] & core::kWakeupHadWakeup);
    }
  }
  EXPECT_TRUE(sawDaemon);
  EXPECT_TRUE(sawWorker);
}

}  // namespace

// tests/data/ctf/synthetic-power (make_synthetic_lttng.py): CPU 0 sets 1.2 GHz
// for itself (1000) and CPU 1 (1010), 600 MHz for itself at 9000; CPU 0 leaves
// idle ((u32)-1) at 1900 and enters state 2 at 5050; CPU 1 enters state 1 at
// 1500 and leaves at 8000. The trace covers [1000, 12000].
TEST(CtfSyntheticPower, PowerEventsBecomeCountersAndResidencies) {
  auto result = importers::importTrace(ctftest::dataPath("ctf/synthetic-power"));
  ASSERT_TRUE(result.has_value()) << result.error().message();
  const core::TraceModel& m = *result->model;
  const auto& ct = m.counters;
  const size_t freq1 = ct.find(core::CounterKind::CpuFrequencyKhz, 1);
  const size_t idle0 = ct.find(core::CounterKind::CpuIdleState, 0);
  ASSERT_NE(freq1, SIZE_MAX);
  ASSERT_NE(idle0, SIZE_MAX);
  EXPECT_EQ(ct.ts[ct.rowsOf(freq1).first], kOffset + 1010);
  const auto [ib, ie] = ct.rowsOf(idle0);
  ASSERT_EQ(ie - ib, 2u);
  EXPECT_EQ(ct.value[ib], static_cast<double>(core::kIdleStateRunning));
  EXPECT_EQ(ct.value[ib + 1], 2.0);

  const auto stats = core::analysis::computeStats(m);
  ASSERT_EQ(stats.coveredNs, 11000);
  ASSERT_EQ(stats.cpus.size(), 2u);
  const auto& c0 = stats.cpus[0];
  const auto& c1 = stats.cpus[1];
  EXPECT_EQ(c0.freqUnknownNs, 0);
  EXPECT_EQ(c0.freqResidencyNs, (std::map<int64_t, int64_t>{{600000, 3000}, {1200000, 8000}}));
  EXPECT_NEAR(c0.meanBusyFreqKhz, 1200000, 1e-6);  // app ran [2000, 5000), all at 1.2 GHz
  EXPECT_EQ(c1.freqUnknownNs, 10);
  EXPECT_EQ(c1.freqResidencyNs, (std::map<int64_t, int64_t>{{1200000, 10990}}));
  EXPECT_EQ(c0.idleUnknownNs, 900);
  EXPECT_EQ(c0.idleResidencyNs, (std::map<int64_t, int64_t>{{core::kIdleStateRunning, 3150}, {2, 6950}}));
  EXPECT_EQ(c1.idleUnknownNs, 500);
  EXPECT_EQ(c1.idleResidencyNs, (std::map<int64_t, int64_t>{{core::kIdleStateRunning, 4000}, {1, 6500}}));
}

namespace {

// tests/data/ctf/synthetic-ties (make_synthetic_lttng.py): at 5000 task a (300)
// sleeps on CPU 0 and c (302) wakes it from CPU 1, whose stream was read last
// (4000). The importer merges the streams itself; at one instant the first
// stream's event goes first, as babeltrace2's muxer orders them (the first
// test holds the babeltrace2 command to it): a sleeps, then is woken. The other
// order would make the waking one of a running task (no effect), a left asleep.
TEST(CtfSyntheticTies, TheBabeltraceCommandPrintsTheFirstStreamsEventFirst) {
  if (!ctftest::babeltraceInstalled()) GTEST_SKIP() << "babeltrace2 CLI (make setup) not installed: no reference";
  std::vector<std::string> lines;
  FILE* pipe = ::popen(("babeltrace2 '" + ctftest::dataPath("ctf/synthetic-ties") + "' 2>/dev/null").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), pipe)) lines.emplace_back(buf.data());
  ASSERT_EQ(::pclose(pipe), 0);
  auto lineOf = [&](const char* text) {
    for (size_t i = 0; i < lines.size(); ++i)
      if (lines[i].find(text) != std::string::npos) return i;
    ADD_FAILURE() << "babeltrace2 printed no event with " << text;
    return lines.size();
  };
  EXPECT_LT(lineOf("prev_tid = 300"), lineOf("tid = 300, prio"));
}

TEST(CtfSyntheticTies, TheImporterTakesThemInTheSameOrder) {
  const std::string dir = ctftest::dataPath("ctf/synthetic-ties");
  auto result = importers::importTrace(dir);
  ASSERT_TRUE(result.has_value()) << result.error().message();
  const core::TraceModel& m = *result->model;
  core::Utid a;
  for (uint32_t u = 0; u < m.threads.size(); ++u)
    if (m.threads.tid[u] == 300) a = core::Utid(u);
  const auto [b, e] = m.stateRowsOf(a);
  std::vector<std::pair<int64_t, core::TaskState>> states;
  for (uint32_t r = b; r < e; ++r) states.emplace_back(m.threadStates.ts[r] - kOffset, m.threadStates.state[r]);
  const std::vector<std::pair<int64_t, core::TaskState>> expected = {
      {1000, core::TaskState::Running}, {5000, core::TaskState::Sleeping}, {5000, core::TaskState::Runnable}};
  EXPECT_EQ(states, expected);
  EXPECT_EQ(m.diagnostics.count(core::DiagCode::wakeup_of_running_task), 0u);
  const auto wakeups = m.wakeupsOf(a);
  ASSERT_EQ(wakeups.size(), 1u);
  EXPECT_FALSE(m.wakeups.flags[wakeups[0]] & core::kWakeupNoEffect);
}

}  // namespace
