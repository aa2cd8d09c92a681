// The PELT, util_est and frequency-limit events no public trace has, from a
// hand-written ftrace text (tests/data/ftrace/handmade/pelt_util_est_limits.txt,
// whose lines follow the formats the README there cites): which counter tracks
// they make, whose they are, their samples, and the residencies over them. The
// expected values are read off the file's lines in the comments.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/analysis/stats.h"
#include "importers/importer.h"

namespace {

using core::CounterKind;
using core::CounterScope;
using Samples = std::vector<std::pair<int64_t, double>>;  // (us after the first event, value)

constexpr int64_t kFirstTs = 100'000'000'000;  // 100.000000 s

struct Fixture {
  std::shared_ptr<core::TraceModel> model;

  core::Utid utidOf(int tid) const {
    for (size_t u = 0; u < model->threads.size(); ++u)
      if (model->threads.tid[u] == tid) return core::Utid(static_cast<uint32_t>(u));
    return core::Utid();
  }
  // A track's samples, or none when the model has no such track.
  Samples samples(CounterKind kind, int32_t index, CounterScope scope = CounterScope::Cpu) const {
    const core::CounterTable& ct = model->counters;
    const size_t k = ct.find(kind, index, scope);
    if (k == SIZE_MAX) return {};
    Samples out;
    const auto [b, e] = ct.rowsOf(k);
    for (uint32_t r = b; r < e; ++r) out.emplace_back((ct.ts[r] - kFirstTs) / 1000, ct.value[r]);
    return out;
  }
  Samples task(CounterKind kind, int tid) const {
    return samples(kind, static_cast<int32_t>(utidOf(tid).value), CounterScope::Task);
  }
};

Fixture load() {
  auto result = importers::importTrace(std::string(SCHEDLAB_TEST_DATA) + "/ftrace/handmade/pelt_util_est_limits.txt");
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().message());
  if (!result) return {};
  EXPECT_FALSE(result->error) << result->error->message();
  return {result->model};
}

}  // namespace

TEST(FtracePowerFixture, EveryEventIsReadNoneIsUnsupported) {
  const Fixture f = load();
  ASSERT_TRUE(f.model);
  // 24 event lines; every power and PELT line decodes (cpu_frequency_limits
  // prints "min=" and "max=", not its field names min_freq / max_freq).
  EXPECT_EQ(f.model->diagnostics.count(core::DiagCode::unsupported_event), 0u);
  EXPECT_EQ(f.model->firstTs, kFirstTs);
  EXPECT_EQ(f.model->lastTs, kFirstTs + 1'000'000);
}

TEST(FtracePowerFixture, FrequencyLimitsPerCpu) {
  const Fixture f = load();
  ASSERT_TRUE(f.model);
  // CPU 0: min=500000 max=2000000 at 0, then max=1500000 (a thermal cap) at 400 us.
  EXPECT_EQ(f.samples(CounterKind::CpuFrequencyMinKhz, 0), (Samples{{0, 500000}, {400, 500000}}));
  EXPECT_EQ(f.samples(CounterKind::CpuFrequencyMaxKhz, 0), (Samples{{0, 2000000}, {400, 1500000}}));
  EXPECT_TRUE(f.samples(CounterKind::CpuFrequencyMaxKhz, 1).empty());
  EXPECT_EQ(f.samples(CounterKind::CpuFrequencyKhz, 0), (Samples{{0, 1000000}, {400, 1500000}}));
}

TEST(FtracePowerFixture, RootCfsRqAndRqSignalsArePerCpuGroupsAreDropped) {
  const Fixture f = load();
  ASSERT_TRUE(f.model);
  // sched_pelt_cfs path=/ at 100 us: load=220 runnable=230 util=190; the
  // /autogroup-5 line beside it (201/211/181) is a task group's, not the CPU's.
  EXPECT_EQ(f.samples(CounterKind::PeltLoad, 0), (Samples{{100, 220}}));
  EXPECT_EQ(f.samples(CounterKind::PeltRunnable, 0), (Samples{{100, 230}}));
  EXPECT_EQ(f.samples(CounterKind::Utilisation, 0), (Samples{{100, 190}}));
  // sched_util_est_cfs path=/ at 200 us on CPU 0, lisa__sched_util_est_cfs (LISA's newer module) at 1000 us on CPU 1.
  EXPECT_EQ(f.samples(CounterKind::UtilEstEnqueued, 0), (Samples{{200, 150}}));
  EXPECT_EQ(f.samples(CounterKind::UtilEstEwma, 0), (Samples{{200, 160}}));
  EXPECT_EQ(f.samples(CounterKind::UtilEstEnqueued, 1), (Samples{{1000, 0}}));
  EXPECT_EQ(f.samples(CounterKind::UtilEstEwma, 1), (Samples{{1000, 30}}));
  // sched_pelt_rt / _dl / _irq at 300 us: util=12, 3, 7.
  EXPECT_EQ(f.samples(CounterKind::UtilRt, 0), (Samples{{300, 12}}));
  EXPECT_EQ(f.samples(CounterKind::UtilDl, 0), (Samples{{300, 3}}));
  EXPECT_EQ(f.samples(CounterKind::UtilIrq, 0), (Samples{{300, 7}}));
}

TEST(FtracePowerFixture, TaskEntitiesAreTheTasksOwnTracks) {
  const Fixture f = load();
  ASSERT_TRUE(f.model);
  ASSERT_TRUE(f.utidOf(300).isValid());
  ASSERT_TRUE(f.utidOf(301).isValid());
  // worker (300): sched_pelt_se at 100 us (load=200 runnable=210 util=180) and
  // lisa__sched_pelt_se at 1000 us, whose runnable comes last (150, 140, 120);
  // sched_util_est_se at 200 us: enqueued=150 ewma=160.
  EXPECT_EQ(f.task(CounterKind::PeltLoad, 300), (Samples{{100, 200}, {1000, 150}}));
  EXPECT_EQ(f.task(CounterKind::PeltRunnable, 300), (Samples{{100, 210}, {1000, 140}}));
  EXPECT_EQ(f.task(CounterKind::Utilisation, 300), (Samples{{100, 180}, {1000, 120}}));
  EXPECT_EQ(f.task(CounterKind::UtilEstEnqueued, 300), (Samples{{200, 150}}));
  EXPECT_EQ(f.task(CounterKind::UtilEstEwma, 300), (Samples{{200, 160}}));
  // reader (301): only sched_util_est_se at 500 us, enqueued=40 ewma=35.
  EXPECT_EQ(f.task(CounterKind::UtilEstEnqueued, 301), (Samples{{500, 40}}));
  EXPECT_EQ(f.task(CounterKind::UtilEstEwma, 301), (Samples{{500, 35}}));
  EXPECT_TRUE(f.task(CounterKind::Utilisation, 301).empty());
  // The group entity (pid=-1) made no task: 300 and 301 are the only tasks with signals.
  size_t taskTracks = 0;
  for (const core::CounterTrack& t : f.model->counters.tracks) taskTracks += t.scope == CounterScope::Task;
  EXPECT_EQ(taskTracks, 5u + 2u);
}

TEST(FtracePowerFixture, ResidenciesSumToTheSpan) {
  const Fixture f = load();
  ASSERT_TRUE(f.model);
  const auto s = core::analysis::computeStats(*f.model);
  ASSERT_EQ(s.coveredNs, 1'000'000);
  ASSERT_GE(s.cpus.size(), 2u);
  const auto& c0 = s.cpus[0];
  // CPU 0: 1 GHz over [0, 400) us, 1.5 GHz over [400, 1000]; running to 600 us
  // (cpu_idle 4294967295 = (u32)-1 at 0), state 1 after.
  EXPECT_EQ(c0.freqResidencyNs, (std::map<int64_t, int64_t>{{1'000'000, 400'000}, {1'500'000, 600'000}}));
  EXPECT_EQ(c0.freqUnknownNs, 0);
  EXPECT_NEAR(c0.meanFreqKhz, (1e6 * 400 + 1.5e6 * 600) / 1000, 1e-6);  // 1.3 GHz
  // worker runs [0, 600) us: 400 us at 1 GHz, 200 us at 1.5 GHz.
  EXPECT_NEAR(c0.meanBusyFreqKhz, (1e6 * 400 + 1.5e6 * 200) / 600, 1e-6);
  EXPECT_EQ(c0.idleResidencyNs, (std::map<int64_t, int64_t>{{core::kIdleStateRunning, 600'000}, {1, 400'000}}));
  // CPU 1: its first cpu_idle at 50 us (unknown before), running to 800 us, state 2 after; no frequency.
  const auto& c1 = s.cpus[1];
  EXPECT_EQ(c1.idleUnknownNs, 50'000);
  EXPECT_EQ(c1.idleResidencyNs, (std::map<int64_t, int64_t>{{core::kIdleStateRunning, 750'000}, {2, 200'000}}));
  EXPECT_TRUE(c1.freqResidencyNs.empty());
}
