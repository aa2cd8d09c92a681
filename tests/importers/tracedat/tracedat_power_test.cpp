// lisa/sched_load (arm64 big.LITTLE, trace.dat v6) holds cpu_frequency,
// cpu_idle, devlib's cpu_frequency_devlib markers and the out-of-tree PELT
// events sched_load_cfs_rq / sched_load_se; lisa/example_rtapp cpu_frequency
// and the older devlib markers ("cpu_frequency: ..." written to trace_marker).
// Their model and the residencies computed from it against an independent
// computation over `trace-cmd report -t` lines (nanosecond timestamps): each
// sample holds until the next of its CPU, the last until the trace's last
// event. Skipped without the shared traces or trace-cmd.
#include <gtest/gtest.h>

#include <charconv>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/analysis/stats.h"
#include "tracedat_test_support.h"

namespace {

using namespace tracedat_test;

struct Sample {
  int64_t ts;
  int64_t value;
};

struct ReportPower {
  int64_t firstTs = INT64_MAX, lastTs = INT64_MIN;
  std::map<int, std::vector<Sample>> freq, idle;  // by cpu_id, in file (= time) order
  uint64_t rootCfsRq = 0, taskSe = 0;              // PELT lines the model keeps
};

int64_t field(std::string_view line, std::string_view key) {
  const size_t at = line.find(key);
  int64_t v = 0;
  std::from_chars(line.data() + at + key.size(), line.data() + line.size(), v);
  return v;
}

ReportPower readReport(const std::string& path) {
  ReportPower r;
  const std::string cmd = "trace-cmd report -t '" + path + "' 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  char buf[8192];
  while (pipe && fgets(buf, sizeof buf, pipe.get())) {
    std::string_view line(buf);
    // "  comm-pid  [cpu]  SECONDS.NANOS: event: fields", or (trace-cmd 3.1.6
    // on a root without /sys) "  comm-pid  [cpu]NANOS: event: fields".
    const size_t open = line.find('[');
    const size_t bracket = line.find(']', open);
    if (open == std::string_view::npos || bracket == std::string_view::npos) continue;
    const size_t tsBegin = line.find_first_not_of(' ', bracket + 1);
    const size_t colon = line.find(": ", tsBegin);
    if (tsBegin == std::string_view::npos || colon == std::string_view::npos) continue;
    const std::string_view stamp = line.substr(tsBegin, colon - tsBegin);
    const size_t dot = stamp.find('.');
    int64_t ts = 0;
    if (dot == std::string_view::npos) {
      const auto [end, err] = std::from_chars(stamp.data(), stamp.data() + stamp.size(), ts);
      EXPECT_TRUE(err == std::errc() && end == stamp.data() + stamp.size()) << "a time in ns: " << line;
    } else {
      int64_t s = 0, ns = 0;
      std::from_chars(stamp.data(), stamp.data() + dot, s);
      std::from_chars(stamp.data() + dot + 1, stamp.data() + stamp.size(), ns);
      EXPECT_EQ(stamp.size() - dot - 1, 9u) << "trace-cmd report -t prints nanoseconds: " << line;
      ts = s * 1'000'000'000 + ns;
    }
    r.firstTs = std::min(r.firstTs, ts);
    r.lastTs = std::max(r.lastTs, ts);
    const std::string_view rest = line.substr(colon + 2);
    const bool devlibMarker = rest.starts_with("print:") && (rest.find(": cpu_frequency:") != std::string_view::npos ||
                                                             rest.find(": cpu_frequency_devlib:") != std::string_view::npos);
    if (rest.starts_with("cpu_frequency:") || devlibMarker)
      r.freq[static_cast<int>(field(rest, "cpu_id="))].push_back({ts, field(rest, "state=")});
    else if (rest.starts_with("cpu_idle:"))
      r.idle[static_cast<int>(field(rest, "cpu_id="))].push_back(
          {ts, static_cast<int32_t>(static_cast<uint32_t>(field(rest, "state=")))});
    else if (rest.starts_with("sched_load_cfs_rq:") && rest.find(" path=/ ") != std::string_view::npos)
      ++r.rootCfsRq;
    else if (rest.starts_with("sched_load_se:") && field(rest, " pid=") >= 0)
      ++r.taskSe;
  }
  return r;
}

// Each value's time over [firstTs, lastTs], and the time before the first sample.
std::map<int64_t, int64_t> residency(const std::vector<Sample>& s, int64_t firstTs, int64_t lastTs, int64_t& unknown) {
  std::map<int64_t, int64_t> out;
  unknown = s.front().ts - firstTs;
  for (size_t i = 0; i < s.size(); ++i) {
    const int64_t until = i + 1 < s.size() ? s[i + 1].ts : lastTs;
    if (until > s[i].ts) out[s[i].value] += until - s[i].ts;
  }
  return out;
}

struct PowerTrace {
  const char* path;
  uint64_t freqSamples;  // cpu_frequency events + devlib markers
  uint64_t idleSamples;
  size_t cpusWithFrequency;
  bool pelt;  // sched_load_cfs_rq / sched_load_se
};
// The counts from `trace-cmd report` (MANIFEST.md): sched_load 16 cpu_frequency
// events and 6 cpu_frequency_devlib markers, 474 cpu_idle; example_rtapp 12
// cpu_frequency events on 4 CPUs and 12 "cpu_frequency:" markers (two rounds over 6 CPUs).
const PowerTrace kPowerTraces[] = {{"public/lisa/sched_load/trace.dat", 22, 474, 6, true},
                                   {"public/lisa/example_rtapp/trace.dat", 24, 0, 6, false}};

class SchedLoadPower : public ::testing::TestWithParam<PowerTrace> {
 protected:
  void SetUp() override {
    m_path = sharedTraces() + "/" + GetParam().path;
    if (!std::filesystem::exists(m_path)) GTEST_SKIP() << "shared trace not found: " << m_path;
    if (!haveTraceCmd()) GTEST_SKIP() << "trace-cmd is not installed: nothing to compare with";
    auto r = importers::importTrace(m_path);
    ASSERT_TRUE(r) << r.error().message();
    m_model = r->model;
    m_report = readReport(m_path);
  }
  std::string m_path;
  core::TraceModelPtr m_model;
  ReportPower m_report;
};

TEST_P(SchedLoadPower, CountersHoldEverySample) {
  const core::TraceModel& m = *m_model;
  ASSERT_EQ(m.firstTs, m_report.firstTs);
  ASSERT_EQ(m.lastTs, m_report.lastTs);
  uint64_t freqSamples = 0, idleSamples = 0, cpuPelt = 0, taskPelt = 0;
  for (size_t k = 0; k < m.counters.tracks.size(); ++k) {
    const auto& t = m.counters.tracks[k];
    const uint64_t n = m.counters.rowsBegin[k + 1] - m.counters.rowsBegin[k];
    if (t.kind == core::CounterKind::CpuFrequencyKhz) freqSamples += n;
    if (t.kind == core::CounterKind::CpuIdleState) idleSamples += n;
    // sched_load_* carry load and util: one sample of each per line.
    if (t.kind == core::CounterKind::Utilisation) (t.scope == core::CounterScope::Cpu ? cpuPelt : taskPelt) += n;
  }
  EXPECT_EQ(freqSamples, GetParam().freqSamples);
  EXPECT_EQ(idleSamples, GetParam().idleSamples);
  EXPECT_EQ(cpuPelt, m_report.rootCfsRq);
  EXPECT_EQ(taskPelt, m_report.taskSe);
  EXPECT_EQ(m_report.taskSe > 0 && m_report.rootCfsRq > 0, GetParam().pelt);
}

TEST_P(SchedLoadPower, ResidenciesMatchTheReportAndCoverEachCpu) {
  const core::TraceModel& m = *m_model;
  const auto stats = core::analysis::computeStats(m);
  ASSERT_EQ(m_report.freq.size(), GetParam().cpusWithFrequency);
  ASSERT_EQ(m_report.idle.size(), GetParam().idleSamples ? 6u : 0u);
  for (const core::analysis::CpuStats& c : stats.cpus) {
    SCOPED_TRACE("cpu " + std::to_string(c.cpu));
    int64_t unknown = 0;
    ASSERT_TRUE(m_report.freq.count(c.cpu));
    EXPECT_EQ(c.freqResidencyNs, residency(m_report.freq.at(c.cpu), m.firstTs, m.lastTs, unknown));
    EXPECT_EQ(c.freqUnknownNs, unknown);
    // Known and unknown time together are the CPU's whole span, to the microsecond.
    int64_t freqSum = c.freqUnknownNs;
    for (const auto& [khz, ns] : c.freqResidencyNs) freqSum += ns;
    EXPECT_NEAR(static_cast<double>(freqSum), static_cast<double>(stats.coveredNs), 1000.0);
    EXPECT_GT(c.meanFreqKhz, 0);
    EXPECT_GT(c.meanBusyFreqKhz, 0);
    if (!m_report.idle.count(c.cpu)) {
      EXPECT_TRUE(c.idleResidencyNs.empty());
      continue;
    }
    EXPECT_EQ(c.idleResidencyNs, residency(m_report.idle.at(c.cpu), m.firstTs, m.lastTs, unknown));
    EXPECT_EQ(c.idleUnknownNs, unknown);
    int64_t idleSum = c.idleUnknownNs;
    for (const auto& [state, ns] : c.idleResidencyNs) idleSum += ns;
    EXPECT_NEAR(static_cast<double>(idleSum), static_cast<double>(stats.coveredNs), 1000.0);
    EXPECT_TRUE(c.idleResidencyNs.count(core::kIdleStateRunning));
  }
}

INSTANTIATE_TEST_SUITE_P(Lisa, SchedLoadPower, ::testing::ValuesIn(kPowerTraces),
                         [](const auto& param) { return std::string(param.index == 0 ? "sched_load" : "example_rtapp"); });

}  // namespace
