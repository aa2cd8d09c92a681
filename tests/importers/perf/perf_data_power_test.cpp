// power:* tracepoints in a real perf.data (tests/data/perf/sleep-0.05-power.perf.data,
// `perf record -a -e 'sched:*' -e 'power:*'` on the 2-vCPU test machine, which
// has cpuidle (haltpoll) but no cpufreq): the counts against `perf script`,
// and CPU 0's cpu_idle samples and idle-state residency against the
// power:cpu_idle lines of its stored `perf script --ns` text, read here by a
// second, deliberately simple parser; the perf script importer reads that text
// to the same residency.
#include <gtest/gtest.h>

#include <charconv>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/analysis/stats.h"
#include "perf_test_support.h"

namespace {

using namespace perf_test;

const std::string kFile = "perf/sleep-0.05-power.perf.data";
const std::string kScript = "perf/sleep-0.05-power.perf-script-ns.txt";

struct IdleSample {
  int cpu;
  int64_t ts;
  int64_t state;
};

struct ScriptPower {
  int64_t firstTs = INT64_MAX, lastTs = 0;
  std::vector<IdleSample> idle;
};

// "27960.594395150:" -> ns (perf script --ns prints nine digits).
int64_t nsOf(std::string_view s) {
  const size_t dot = s.find('.');
  int64_t sec = 0, frac = 0;
  std::from_chars(s.data(), s.data() + dot, sec);
  std::from_chars(s.data() + dot + 1, s.data() + dot + 10, frac);
  return sec * 1'000'000'000 + frac;
}

ScriptPower readScript(const std::string& text) {
  ScriptPower out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    // COMM  TID [CPU] SECONDS.NS: EVENT: FIELDS
    const size_t cpuAt = line.find(" [");
    if (cpuAt == std::string::npos) continue;
    const int cpu = std::stoi(line.substr(cpuAt + 2, 3));
    const size_t tsAt = line.find_first_not_of(' ', line.find(']', cpuAt) + 1);
    const int64_t ts = nsOf(std::string_view(line).substr(tsAt));
    out.firstTs = std::min(out.firstTs, ts);
    out.lastTs = std::max(out.lastTs, ts);
    const size_t ev = line.find("power:cpu_idle: state=");
    if (ev == std::string::npos) continue;
    const int64_t state = std::stoll(line.substr(ev + 22));
    const int cpuId = std::stoi(line.substr(line.find("cpu_id=") + 7));
    EXPECT_EQ(cpuId, cpu);  // a CPU reports its own idle state
    out.idle.push_back({cpuId, ts, state == 4294967295LL ? -1 : state});
  }
  return out;
}

std::string readText(const std::string& path) {
  const auto b = readBytes(path);
  return {b.begin(), b.end()};
}

}  // namespace

TEST(PerfDataPower, CountsMatchPerfScript) {
  auto m = importOk(testData(kFile));
  ASSERT_TRUE(m);
  const auto expected = countScriptEvents(readText(testData(kScript)));
  // From the stored text: 6 cpu_idle, 3 guest_halt_poll_ns (not modelled), 47 switches.
  EXPECT_EQ(expected.at("cpu_idle"), 6u);
  EXPECT_EQ(expected.at("guest_halt_poll_ns"), 3u);
  EXPECT_EQ(expected.at("sched_switch"), 47u);
  EXPECT_EQ(modelCounts(*m), expected);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::unsupported_event), 0u);
  if (!perfAvailable()) GTEST_SKIP() << "perf (linux-perf, make setup) not installed: not compared with a live perf script";
  const auto live = perfScript(testData(kFile), "--ns");
  ASSERT_TRUE(live) << "perf script failed on " << testData(kFile);
  EXPECT_EQ(*live, readText(testData(kScript)));  // the stored text is this file's
}

TEST(PerfDataPower, CpuIdleSamplesAreTheScriptsLines) {
  auto m = importOk(testData(kFile));
  ASSERT_TRUE(m);
  const ScriptPower script = readScript(readText(testData(kScript)));
  ASSERT_EQ(script.idle.size(), 6u);
  EXPECT_EQ(m->firstTs, script.firstTs);
  EXPECT_EQ(m->lastTs, script.lastTs);
  const core::CounterTable& ct = m->counters;
  const size_t k = ct.find(core::CounterKind::CpuIdleState, 0);
  ASSERT_NE(k, SIZE_MAX) << "no idle-state track for CPU 0";
  EXPECT_EQ(ct.find(core::CounterKind::CpuIdleState, 1), SIZE_MAX);  // CPU 1 never idled in the window
  EXPECT_EQ(ct.find(core::CounterKind::CpuFrequencyKhz, 0), SIZE_MAX);  // no cpufreq on this VM
  const auto [b, e] = ct.rowsOf(k);
  ASSERT_EQ(e - b, script.idle.size());
  for (uint32_t r = b; r < e; ++r) {
    EXPECT_EQ(ct.ts[r], script.idle[r - b].ts) << r - b;
    EXPECT_EQ(ct.value[r], static_cast<double>(script.idle[r - b].state)) << r - b;
  }
}

TEST(PerfDataPower, IdleResidencyOfCpu0) {
  auto m = importOk(testData(kFile));
  ASSERT_TRUE(m);
  const auto s = core::analysis::computeStats(*m);
  // From the stored text: the trace spans 27960.553885181 .. .608816014 s
  // (54,930,833 ns); CPU 0 enters state 1 at .594395150, .596505099 and
  // .599760894 and leaves it ((u32)-1) at .596503306, .599759775 and .599834619.
  // Unknown before the first: 40,509,969 ns; state 1: 2,108,156 + 3,254,676 +
  // 73,725 = 5,436,557 ns; not idle: 1,793 + 1,119 + (to the end) 8,981,395 =
  // 8,984,307 ns. They add up to the span.
  ASSERT_EQ(s.coveredNs, 54'930'833);
  const auto& c0 = s.cpus.at(0);
  EXPECT_EQ(c0.idleUnknownNs, 40'509'969);
  EXPECT_EQ(c0.idleResidencyNs, (std::map<int64_t, int64_t>{{core::kIdleStateRunning, 8'984'307}, {1, 5'436'557}}));
  EXPECT_TRUE(s.cpus.at(1).idleResidencyNs.empty());
  // The perf script text of the same recording, read by the text importer, says the same.
  auto text = importOk(testData(kScript));
  ASSERT_TRUE(text);
  EXPECT_EQ(text->format, "perf-script");
  const auto fromText = core::analysis::computeStats(*text);
  EXPECT_EQ(fromText.cpus.at(0).idleUnknownNs, c0.idleUnknownNs);
  EXPECT_EQ(fromText.cpus.at(0).idleResidencyNs, c0.idleResidencyNs);
}
