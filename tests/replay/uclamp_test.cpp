// uclamp + schedutil (+uclamp models): hand-worked bucket aggregation,
// effective clamps, and replays whose frequencies and energy follow from the
// default OPP/power tables (docs/models.md §4).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/analysis/stats.h"
#include "replay/policies/uclamp_policy.h"
#include "replay_test_util.h"

using replay::uclamp::ClampId;
using replay::uclamp::EffectiveClamps;
using replay::uclamp::UclampRq;
using replay_test::replayOn;
using replay_test::rtapp;

namespace {

EffectiveClamps clamps(int min, int max) { return EffectiveClamps{min, max}; }

// The default table (schedutil.opp_khz / schedutil.power_mw).
constexpr double kTopKhz = 3'000'000, kLowKhz = 800'000;
constexpr double kTopMw = 5000, kLowMw = 454, kIdleMw = 50;

/// The frequency (kHz) in effect on `cpu` at `ts`: the last counter sample at or before it.
double freqAt(const core::TraceModel& m, int cpu, int64_t ts) {
  const auto& ct = m.counters;
  double f = -1;
  for (size_t k = 0; k < ct.tracks.size(); ++k) {
    if (ct.tracks[k].kind != core::CounterKind::CpuFrequencyKhz || ct.tracks[k].index != cpu) continue;
    for (uint32_t r = ct.rowsBegin[k]; r < ct.rowsBegin[k + 1] && ct.ts[r] <= ts; ++r) f = ct.value[r];
  }
  return f;
}

/// Every distinct frequency in effect while `comm` ran on `cpu` at or after `from`,
/// sampled at each slice's start, middle and last ns.
std::map<double, int> freqsWhileRunning(const core::TraceModel& m, int cpu, const std::string& comm, int64_t from = 0) {
  std::map<double, int> out;
  const auto& s = m.cpuSlices[static_cast<size_t>(cpu)];
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.kind[i] != core::SliceKind::Task || m.comm(s.utid[i]) != comm || s.ts[i] < from) continue;
    for (int64_t t : {s.ts[i], s.ts[i] + s.dur[i] / 2, s.end(i) - 1}) ++out[freqAt(m, cpu, t)];
  }
  return out;
}

// 1 ms of work every 10 ms for 1 s: 100 activations.
const char* kRtPeriodic = R"({"global": {"duration": 1}, "tasks": {
    "rt": {"policy": "SCHED_FIFO", "priority": 50, "loop": -1, "run": 1000, "timer": {"ref": "t", "period": 10000}}}})";
const char* kFairPeriodic = R"({"global": {"duration": 1}, "tasks": {
    "light": {"loop": -1, "run": 1000, "timer": {"ref": "t", "period": 10000}}}})";
const char* kFairHog = R"({"global": {"duration": 1}, "tasks": {"hog": {"loop": -1, "run": 100000}}})";

}  // namespace

// --- Effective clamps (docs/models.md §4.2, §4.6) ---

TEST(UclampEffective, ClassDefaultsRtDefaultAndSysctlCaps) {
  const replay::uclamp::Sysctls def;
  auto e = replay::uclamp::effectiveClamps(-1, -1, false, def);
  EXPECT_EQ(e.min, 0);
  EXPECT_EQ(e.max, 1024);
  e = replay::uclamp::effectiveClamps(-1, -1, true, def);  // RT: boosted to max by default
  EXPECT_EQ(e.min, 1024);
  EXPECT_EQ(e.max, 1024);
  e = replay::uclamp::effectiveClamps(200, -1, true, def);  // a user-set min wins over the RT default
  EXPECT_EQ(e.min, 200);

  replay::uclamp::Sysctls rt0;
  rt0.utilClampMinRtDefault = 0;
  EXPECT_EQ(replay::uclamp::effectiveClamps(-1, -1, true, rt0).min, 0);
  EXPECT_EQ(replay::uclamp::effectiveClamps(-1, -1, false, rt0).min, 0);

  replay::uclamp::Sysctls caps;
  caps.utilClampMin = 512;
  caps.utilClampMax = 600;
  e = replay::uclamp::effectiveClamps(800, -1, false, caps);
  EXPECT_EQ(e.min, 512);  // the request is capped by sched_util_clamp_min
  EXPECT_EQ(e.max, 600);  // even the default max is capped by sched_util_clamp_max
  EXPECT_EQ(replay::uclamp::effectiveClamps(-1, 300, true, caps).min, 512);  // RT default 1024 capped
  EXPECT_EQ(replay::uclamp::effectiveClamps(-1, 300, true, caps).max, 300);
}

// --- Bucket aggregation (docs/models.md §4.3) ---

TEST(UclampRq, BucketDeltaAndIds) {
  EXPECT_EQ(UclampRq::bucketDelta(5), 205);
  EXPECT_EQ(UclampRq::bucketDelta(20), 51);  // DIV_ROUND_CLOSEST(1024, 20) = 51.2 -> 51
  const UclampRq rq5(5);
  EXPECT_EQ(rq5.bucketId(0), 0);
  EXPECT_EQ(rq5.bucketId(204), 0);
  EXPECT_EQ(rq5.bucketId(205), 1);
  EXPECT_EQ(rq5.bucketId(819), 3);
  EXPECT_EQ(rq5.bucketId(820), 4);
  EXPECT_EQ(rq5.bucketId(1024), 4);  // 1024 / 205 = 4
  const UclampRq rq20(20);
  EXPECT_EQ(rq20.bucketId(1024), 19);  // 1024 / 51 = 20, capped at the last bucket
}

TEST(UclampRq, FreshRqIsIdleWithMaxAtCapacity) {
  const UclampRq rq;
  EXPECT_TRUE(rq.idle());
  EXPECT_EQ(rq.value(ClampId::Min), 0);
  EXPECT_EQ(rq.value(ClampId::Max), 1024);
}

TEST(UclampRq, MaxAggregationOverRunnableTasks) {
  UclampRq rq;
  rq.inc(clamps(0, 300));  // bucket 1
  EXPECT_FALSE(rq.idle());
  EXPECT_EQ(rq.value(ClampId::Max), 300);  // idle reset: not max(1024, 300)
  rq.inc(clamps(0, 1024));                 // bucket 4: one unclamped task disables capping
  EXPECT_EQ(rq.value(ClampId::Max), 1024);
  rq.dec(clamps(0, 300));  // its bucket empties below the rq value: nothing to recompute
  EXPECT_EQ(rq.value(ClampId::Max), 1024);
  rq.inc(clamps(0, 300));
  rq.dec(clamps(0, 1024));  // the top bucket empties: the highest non-empty one (bucket 1) rules
  EXPECT_EQ(rq.value(ClampId::Max), 300);
  EXPECT_EQ(rq.bucketTasks(ClampId::Max, 1), 1);
  EXPECT_EQ(rq.bucketTasks(ClampId::Max, 4), 0);
}

// Two tasks in bucket 1 (205..409): the bucket keeps the larger value while
// it is refcounted, so the remaining task is over-boosted until it leaves.
TEST(UclampRq, OverBoostWhileTheBucketIsRefcounted) {
  UclampRq rq;
  rq.inc(clamps(300, 1024));
  rq.inc(clamps(400, 1024));
  EXPECT_EQ(rq.bucketTasks(ClampId::Min, 1), 2);
  EXPECT_EQ(rq.bucketValue(ClampId::Min, 1), 400);
  EXPECT_EQ(rq.value(ClampId::Min), 400);
  rq.dec(clamps(400, 1024));
  // Only the 300 task is left, but the bucket (and the rq) still say 400.
  EXPECT_EQ(rq.bucketTasks(ClampId::Min, 1), 1);
  EXPECT_EQ(rq.bucketValue(ClampId::Min, 1), 400);
  EXPECT_EQ(rq.value(ClampId::Min), 400);
  // A task in a lower bucket does not change that.
  rq.inc(clamps(100, 1024));
  EXPECT_EQ(rq.value(ClampId::Min), 400);
  rq.dec(clamps(300, 1024));  // bucket 1 empties (400 >= rq 400): recomputed from bucket 0
  EXPECT_EQ(rq.value(ClampId::Min), 100);
  rq.dec(clamps(100, 1024));  // no runnable task: MIN drops to 0
  EXPECT_EQ(rq.value(ClampId::Min), 0);
  // The bucket's value restarts with the next task that enters it alone.
  rq.inc(clamps(250, 1024));
  EXPECT_EQ(rq.bucketValue(ClampId::Min, 1), 250);
  EXPECT_EQ(rq.value(ClampId::Min), 250);
}

// The last task's MAX is held while the rq is idle (UCLAMP_FLAG_IDLE) and
// replaced, not max-aggregated, by the next task's.
TEST(UclampRq, MaxIsHeldWhileIdleUntilTheNextEnqueue) {
  UclampRq rq;
  rq.inc(clamps(0, 300));
  rq.dec(clamps(0, 300));
  EXPECT_TRUE(rq.idle());
  EXPECT_EQ(rq.value(ClampId::Max), 300);
  EXPECT_EQ(rq.value(ClampId::Min), 0);
  rq.inc(clamps(50, 200));
  EXPECT_FALSE(rq.idle());
  EXPECT_EQ(rq.value(ClampId::Max), 200);
  EXPECT_EQ(rq.value(ClampId::Min), 50);
  // The held value is the last removed task's own value (uclamp_idle_value).
  rq.inc(clamps(0, 220));   // bucket 1; the 200 task is in bucket 0
  rq.dec(clamps(50, 200));  // bucket 0 empties below the rq MAX (220): unchanged
  EXPECT_EQ(rq.value(ClampId::Max), 220);
  rq.dec(clamps(0, 220));
  EXPECT_TRUE(rq.idle());
  EXPECT_EQ(rq.value(ClampId::Max), 220);
  // Over-boosted bucket: 350 leaves first, the bucket stays at 350 for the 300
  // task; when that one leaves, the rq holds 300 (the task's value), not 350.
  rq.inc(clamps(0, 300));
  rq.inc(clamps(0, 350));
  rq.dec(clamps(0, 350));
  EXPECT_EQ(rq.value(ClampId::Max), 350);
  rq.dec(clamps(0, 300));
  EXPECT_TRUE(rq.idle());
  EXPECT_EQ(rq.value(ClampId::Max), 300);
}

// --- Replays: frequencies and energy (default tables) ---

// Default sysctl: with no uclamp request anywhere the static key is off and
// schedutil runs a CPU with a runnable RT task at max; every activation runs
// 1 ms at 3.0 GHz, and the CPU drops to 0.8 GHz at each dequeue (util ~112 ->
// target 0.41 GHz, rate limit 1 ms just met). Energy: 100 x 1 ms x 5 W +
// 900 ms x 50 mW = 0.545 J.
TEST(UclampReplay, RtTaskRunsAtTopOppWithTheDefaultRtBoost) {
  const auto r = replayOn(rtapp(kRtPeriodic), "cfs+uclamp", 1);
  ASSERT_TRUE(r.model);
  const auto freqs = freqsWhileRunning(*r.model, 0, "rt");
  ASSERT_EQ(freqs.size(), 1u);
  EXPECT_EQ(freqs.begin()->first, kTopKhz);
  // Activations at 0, 10, ..., 990 ms: 100 in the 1 s; a FIFO task alone on its
  // CPU is never preempted, so each is one slice, sampled 3 times (start, middle, end).
  EXPECT_EQ(freqs.begin()->second, 100 * 3);
  ASSERT_TRUE(r.energyJoules.has_value());
  EXPECT_NEAR(*r.energyJoules, 0.1 * kTopMw / 1000 + 0.9 * kIdleMw / 1000, 1e-6);
  EXPECT_EQ(r.outcomes[0].runtimeNs, 100'000'000);

  const auto stats = core::analysis::computeStats(*r.model);
  const auto& res = stats.cpus.at(0).freqResidencyNs;
  ASSERT_EQ(res.size(), 2u);
  EXPECT_EQ(res.at(3'000'000), 100'000'000);
  EXPECT_NEAR(static_cast<double>(res.at(800'000)), 900'000'000,
              1);  // the whole-trace range ends 1 ns after the last event
}

// The same with uclamp.static_key=on: the boost now comes from the RT task's
// uclamp.min (1024) through the rq MIN clamp. Same frequencies, same energy.
TEST(UclampReplay, RtBoostThroughTheRqMinClampWhenUclampIsInUse) {
  const auto r = replayOn(rtapp(kRtPeriodic), "cfs+uclamp", 1, {"uclamp.static_key=on"});
  const auto freqs = freqsWhileRunning(*r.model, 0, "rt");
  ASSERT_EQ(freqs.size(), 1u);
  EXPECT_EQ(freqs.begin()->first, kTopKhz);
  EXPECT_NEAR(*r.energyJoules, 0.545, 1e-6);
}

// sched_util_clamp_min_rt_default=0: the RT task's util (<= ~110) asks for
// 0.41 GHz, so it stays at 0.8 GHz and each activation takes 1 / (0.8/3.0) =
// 3.75 ms. Energy: 100 x 3.75 ms x 454 mW + 625 ms x 50 mW = 0.20150 J.
TEST(UclampReplay, RtTaskStaysLowWithoutTheRtDefaultBoost) {
  const auto r = replayOn(rtapp(kRtPeriodic), "cfs+uclamp", 1, {"sysctl.sched_util_clamp_min_rt_default=0"});
  ASSERT_TRUE(r.model);
  const auto freqs = freqsWhileRunning(*r.model, 0, "rt");
  ASSERT_EQ(freqs.size(), 1u);
  EXPECT_EQ(freqs.begin()->first, kLowKhz);
  EXPECT_NEAR(static_cast<double>(r.outcomes[0].runtimeNs), 375e6, 100 * 2.0);  // ns rounding per activation
  ASSERT_TRUE(r.energyJoules.has_value());
  EXPECT_NEAR(*r.energyJoules, 0.375 * kLowMw / 1000 + 0.625 * kIdleMw / 1000, 1e-5);
  const auto boosted = replayOn(rtapp(kRtPeriodic), "cfs+uclamp", 1);
  EXPECT_LT(*r.energyJoules, *boosted.energyJoules);
}

// A CFS hog capped at uclamp.max 300: target 1.25 x 3.0 GHz x 300/1024 =
// 1.099 GHz -> 1.1 GHz from its first enqueue to the end (its util, 512 at
// start and 1024 x 1.1/3.0 = 375 at most later, is always above 300).
TEST(UclampReplay, MaxClampCapsTheFrequencyOfAFairHog) {
  const auto r = replayOn(rtapp(kFairHog), "cfs+uclamp", 1, {"uclamp.clamp=comm:^hog$=0:300"});
  ASSERT_TRUE(r.model);
  const auto stats = core::analysis::computeStats(*r.model);
  const auto& res = stats.cpus.at(0).freqResidencyNs;
  ASSERT_EQ(res.size(), 1u);
  EXPECT_EQ(res.begin()->first, 1'100'000);
  EXPECT_NEAR(*r.energyJoules, 0.751, 1e-6);  // 1 s x 751 mW
  EXPECT_NEAR(static_cast<double>(r.outcomes[0].workDone), 1e9 * 1.1 / 3.0, 1e3);

  // Unclamped, the same hog climbs to the top OPP (util 512 -> 2.0 GHz -> ... -> 3.0 GHz).
  const auto free = replayOn(rtapp(kFairHog), "cfs+uclamp", 1);
  const auto freeStats = core::analysis::computeStats(*free.model);
  EXPECT_GT(freeStats.cpus.at(0).freqResidencyNs.at(3'000'000), 900'000'000);
}

// A light CFS task (1 ms / 10 ms, util ~110 in steady state) runs at 0.8 GHz;
// uclamp.min 400 floors it at 1.25 x 3.0 x 400/1024 = 1.46 GHz -> 1.7 GHz,
// uclamp.min 800 at 2.93 GHz -> 3.0 GHz, whenever it runs (second half: its
// initial util of 512 has decayed).
TEST(UclampReplay, MinClampBoostsALightFairTask) {
  struct Case {
    const char* rule;
    double khz;
  };
  for (const Case c : {Case{"", kLowKhz}, Case{"comm:^light$=400:", 1'700'000}, Case{"comm:^light$=800:", kTopKhz}}) {
    std::vector<std::string> params;
    if (*c.rule) params.push_back(std::string("uclamp.clamp=") + c.rule);
    const auto r = replayOn(rtapp(kFairPeriodic), "cfs+uclamp", 1, params);
    ASSERT_TRUE(r.model);
    const auto freqs = freqsWhileRunning(*r.model, 0, "light", 500'000'000);
    ASSERT_EQ(freqs.size(), 1u) << c.rule;
    EXPECT_EQ(freqs.begin()->first, c.khz) << c.rule;
  }
}

// The decorator only sets frequencies: with a single OPP the schedule is the
// base model's, bit for bit (placement, balancing, picks), on several CPUs.
TEST(UclampReplay, DecisionsAreTheBaseModelsWithASingleOpp) {
  const auto w = rtapp(R"({"global": {"duration": 0.5}, "tasks": {
      "hog": {"instance": 3, "loop": -1, "run": 30000, "sleep": 2000},
      "rt": {"policy": "SCHED_FIFO", "priority": 10, "loop": -1, "run": 500, "timer": {"ref": "t", "period": 7000}},
      "light": {"instance": 2, "loop": -1, "run": 700, "sleep": 3000}}})");
  for (const char* base : {"cfs", "eevdf"}) {
    const auto plain = replayOn(w, base, 2);
    const auto u = replayOn(w, std::string(base) + "+uclamp", 2,
                            {"schedutil.opp_khz=3000000", "schedutil.power_mw=5000", "uclamp.clamp=comm:hog=0:200"});
    ASSERT_TRUE(plain.model && u.model);
    EXPECT_EQ(replay::modelHash(*plain.model), replay::modelHash(*u.model)) << base;
    EXPECT_GT(plain.stats.migrations, 0u) << base;
  }
}

TEST(UclampReplay, SameInputSameFrequenciesAndEnergy) {
  const auto w = rtapp(R"({"global": {"duration": 0.3}, "tasks": {
      "hog": {"instance": 3, "loop": -1, "run": 30000, "sleep": 2000},
      "rt": {"policy": "SCHED_FIFO", "priority": 10, "loop": -1, "run": 500, "timer": {"ref": "t", "period": 7000}}}})");
  const std::vector<std::string> params = {"uclamp.clamp=comm:hog-1=300:600",
                                           "sysctl.sched_util_clamp_min_rt_default=200"};
  const auto a = replayOn(w, "eevdf+coresched+uclamp", 2, params, 2);
  const auto b = replayOn(w, "eevdf+coresched+uclamp", 2, params, 2);
  ASSERT_TRUE(a.model && b.model);
  EXPECT_EQ(replay::modelHash(*a.model), replay::modelHash(*b.model));
  EXPECT_EQ(a.model->counters.value, b.model->counters.value);
  EXPECT_EQ(*a.energyJoules, *b.energyJoules);
}

TEST(UclampReplay, BadTablesAreRejectedWithTheParameterName) {
  replay::ReplayOptions o;
  o.model = "cfs+uclamp";
  o.topology = core::Topology::uniform(1, 1, "test");
  const auto w = rtapp(kFairHog);
  o.params = {"schedutil.opp_khz=800000,1200000", "schedutil.power_mw=400"};
  auto r = replay::runReplay(w, o);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("schedutil.power_mw"), std::string::npos);
  o.params = {"schedutil.opp_khz=800000,abc"};
  r = replay::runReplay(w, o);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("schedutil.opp_khz"), std::string::npos);
  o.params = {"sysctl.sched_util_clamp_min=900", "sysctl.sched_util_clamp_max=800"};
  EXPECT_FALSE(replay::runReplay(w, o).has_value());
}

// Frequencies on a shared domain follow the busiest CPU.
TEST(UclampReplay, SharedDomainRunsAtTheMaxRequest) {
  const auto w = rtapp(R"({"global": {"duration": 0.5}, "tasks": {
      "hog": {"loop": -1, "run": 100000, "cpus": [0]},
      "light": {"loop": -1, "run": 1000, "timer": {"ref": "t", "period": 10000}, "cpus": [1]}}})");
  const auto percpu = replayOn(w, "cfs+uclamp", 2, {"schedutil.domain=cpu"});
  const auto shared = replayOn(w, "cfs+uclamp", 2, {"schedutil.domain=all"});
  EXPECT_EQ(freqsWhileRunning(*percpu.model, 1, "light", 250'000'000).begin()->first, kLowKhz);
  const auto sharedFreqs = freqsWhileRunning(*shared.model, 1, "light", 250'000'000);
  ASSERT_EQ(sharedFreqs.size(), 1u);
  EXPECT_EQ(sharedFreqs.begin()->first, kTopKhz);  // the hog's CPU 0 asks for the top
}

// docs/models.md §4.7: with uclamp in use every enqueue and dequeue costs the CPU doing
// it uclamp.rq_update_cost_ns. A 1-in-10 ms periodic task beside a hog on one
// CPU: each period the wakeup (the timer interrupts the hog) and the sleep
// (the hog runs next) cost the hog 2 x 10 us of work. One OPP, so no
// frequency changes blur it.
TEST(UclampCost, EnqueueAndDequeueCostTheirCpu) {
  const auto w = rtapp(R"({"global": {"duration": 1}, "tasks": {
      "light": {"loop": -1, "run": 1000, "timer": {"ref": "t", "period": 10000}},
      "hog": {"loop": -1, "run": 100000}}})");
  const std::vector<std::string> common = {"schedutil.opp_khz=1000000", "schedutil.power_mw=1000",
                                           "uclamp.static_key=on"};
  auto params = common;
  params.push_back("uclamp.rq_update_cost_ns=10000");
  const auto free = replayOn(w, "cfs+uclamp", 1, common);
  const auto costly = replayOn(w, "cfs+uclamp", 1, params);
  ASSERT_EQ(free.outcomes.size(), 2u);
  ASSERT_EQ(costly.outcomes.size(), 2u);
  const int64_t lost = free.outcomes[1].workDone - costly.outcomes[1].workDone;
  // 100 periods; the very first wakeup happens before the hog runs, the last sleep may fall after the end.
  EXPECT_GE(lost, 198 * 10'000);
  EXPECT_LE(lost, 200 * 10'000);
  EXPECT_EQ(free.outcomes[0].workDone, costly.outcomes[0].workDone);  // the light task does all its work anyway
  // Without uclamp in use the fast paths are off (sched_uclamp_used): no cost.
  auto unused = params;
  unused.back() = "uclamp.rq_update_cost_ns=10000";
  unused[2] = "uclamp.static_key=auto";
  EXPECT_EQ(replayOn(w, "cfs+uclamp", 1, unused).outcomes[1].workDone, free.outcomes[1].workDone);
}
