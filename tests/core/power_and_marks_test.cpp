// Power counters and user-space slices through the SchedBuilder, and the
// statistics over them, on hand-worked schedules: the atrace text forms, slice
// nesting per thread, async lanes, unmatched ends and slices left open, and
// frequency / idle-state residency with the time before a CPU's first sample.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "core/analysis/stats.h"
#include "core/analysis/stats_json.h"
#include "core/atrace_marker.h"
#include "support/trace_builder.h"

using core::AtraceMarker;
using core::parseAtraceMarker;
using testing_support::TraceBuilder;

namespace {

core::Utid utidOfTid(const core::TraceModel& m, int tid) {
  for (size_t u = 0; u < m.threads.size(); ++u)
    if (m.threads.tid[u] == tid) return core::Utid(static_cast<uint32_t>(u));
  return core::Utid();
}

void mark(TraceBuilder& t, int64_t ts, int cpu, int tid, std::string_view text) {
  t.builder().onUserMark({ts, cpu, tid, 0}, tid, text);
}

std::vector<std::string> csvLines(const std::string& csv) {
  std::vector<std::string> lines;
  std::istringstream in(csv);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST(AtraceMarker, ReadsEveryRecordTypeAndKeepsTheRestPlain) {
  AtraceMarker m = parseAtraceMarker("B|1234|Choreographer#doFrame|extra\n");
  EXPECT_EQ(m.type, AtraceMarker::Type::Begin);
  EXPECT_EQ(m.tgid, 1234);
  EXPECT_EQ(m.name, "Choreographer#doFrame|extra");  // a name may hold '|'
  m = parseAtraceMarker("E");
  EXPECT_EQ(m.type, AtraceMarker::Type::End);
  EXPECT_EQ(m.tgid, -1);
  EXPECT_EQ(parseAtraceMarker("E|77").tgid, 77);
  m = parseAtraceMarker("C|55|VSYNC-app|1");
  EXPECT_EQ(m.type, AtraceMarker::Type::Counter);
  EXPECT_EQ(m.name, "VSYNC-app");
  EXPECT_EQ(m.value, 1.0);
  m = parseAtraceMarker("C|55|queued|-2.5|gfx");  // newer writers append a category
  EXPECT_EQ(m.type, AtraceMarker::Type::Counter);
  EXPECT_EQ(m.value, -2.5);
  m = parseAtraceMarker("S|9|load|42");
  EXPECT_EQ(m.type, AtraceMarker::Type::AsyncBegin);
  EXPECT_EQ(m.cookie, 42);
  EXPECT_EQ(parseAtraceMarker("F|9|load|42").type, AtraceMarker::Type::AsyncEnd);
  EXPECT_EQ(parseAtraceMarker("I|9|tick").type, AtraceMarker::Type::Instant);
  // Not atrace: plain instant text, trimmed.
  for (const char* text : {"hello world", "B|x|name", "C|1|n|notanumber", "S|1|n", "Begin|1|x", "B|12"}) {
    m = parseAtraceMarker(text);
    EXPECT_EQ(m.type, AtraceMarker::Type::Plain) << text;
    EXPECT_EQ(m.name, std::string_view(text)) << text;
  }
}

TEST(UserSlices, NestPerThreadAndCloseInnermostFirst) {
  TraceBuilder t;
  t.sw(0, 0, 0, "R", 10).sw(0, 1, 0, "R", 11);
  mark(t, 100, 0, 10, "B|10|outer");
  mark(t, 110, 1, 11, "B|10|other thread");  // same process, its own stack
  mark(t, 120, 0, 10, "B|10|inner");
  mark(t, 150, 0, 10, "E|10");   // ends inner
  mark(t, 160, 1, 11, "E|10");   // ends "other thread"
  mark(t, 170, 1, 11, "E|10");   // nothing open on 11: counted, ignored
  mark(t, 200, 0, 10, "E|10");   // ends outer
  mark(t, 250, 0, 10, "B|10|never ends");
  mark(t, 260, 0, 10, "just text");
  t.other(300, 0, 10);
  const auto m = t.build();
  const auto& us = m->userSlices;
  const auto [b, e] = us.rowsOf(utidOfTid(*m, 10));
  ASSERT_EQ(e - b, 4u);
  // By begin time: outer [100,200) depth 0, inner [120,150) depth 1, the open one to the end, the marker.
  EXPECT_EQ(m->strings.get(us.name[b]), "outer");
  EXPECT_EQ(us.ts[b], 100);
  EXPECT_EQ(us.dur[b], 100);
  EXPECT_EQ(us.depth[b], 0);
  EXPECT_EQ(m->strings.get(us.name[b + 1]), "inner");
  EXPECT_EQ(us.dur[b + 1], 30);
  EXPECT_EQ(us.depth[b + 1], 1);
  EXPECT_EQ(us.dur[b + 2], 50);  // 250 to the trace's last event at 300
  EXPECT_EQ(us.flags[b + 2], core::kUserSliceOpenAtEnd);
  EXPECT_EQ(us.kind[b + 3], core::UserSliceKind::Instant);
  EXPECT_EQ(m->strings.get(us.name[b + 3]), "just text");
  const auto [b11, e11] = us.rowsOf(utidOfTid(*m, 11));
  ASSERT_EQ(e11 - b11, 1u);
  EXPECT_EQ(us.dur[b11], 50);
  EXPECT_EQ(us.depth[b11], 0);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::user_slice_end_unmatched), 1u);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::user_slice_open_at_end), 1u);
  // The marker's tgid names the thread's process when the trace did not.
  EXPECT_EQ(m->threads.tgid[utidOfTid(*m, 11).value], 10);

  // Time in state: completed slices by name; the open one only as open.
  const auto stats = core::analysis::computeStats(*m);
  ASSERT_EQ(stats.userSlices.size(), 4u);
  EXPECT_EQ(stats.userSlices[0].name, "outer");  // the longest total first
  EXPECT_EQ(stats.userSlices[0].totalNs, 100);
  EXPECT_EQ(stats.userSlices[1].name, "other thread");
  EXPECT_EQ(stats.userSlices[2].name, "inner");
  EXPECT_EQ(stats.userSlices[2].p50Ns, 30);
  EXPECT_EQ(stats.userSlices[3].name, "never ends");
  EXPECT_EQ(stats.userSlices[3].count, 0u);
  EXPECT_EQ(stats.userSlices[3].open, 1u);
}

TEST(UserSlices, AsyncSlicesPairByCookieAndTakeFreeLanes) {
  TraceBuilder t;
  t.sw(0, 0, 0, "R", 20);
  mark(t, 10, 0, 20, "S|20|load|1");
  mark(t, 20, 0, 20, "S|20|load|2");  // overlaps cookie 1: the next lane
  mark(t, 30, 0, 20, "F|20|load|1");
  mark(t, 40, 0, 20, "S|20|load|3");  // lane 0 is free again
  mark(t, 50, 0, 20, "F|20|load|2");
  mark(t, 60, 0, 20, "F|20|load|3");
  mark(t, 70, 0, 20, "F|20|load|9");  // never began
  mark(t, 80, 0, 20, "C|20|queue|3");
  mark(t, 90, 0, 20, "C|20|queue|1");
  const auto m = t.build();
  const auto& us = m->userSlices;
  const auto [b, e] = us.rowsOf(utidOfTid(*m, 20));
  ASSERT_EQ(e - b, 3u);
  EXPECT_EQ(us.dur[b], 20);
  EXPECT_EQ(us.depth[b], 0);
  EXPECT_EQ(us.dur[b + 1], 30);
  EXPECT_EQ(us.depth[b + 1], 1);
  EXPECT_EQ(us.dur[b + 2], 20);
  EXPECT_EQ(us.depth[b + 2], 0);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::user_slice_end_unmatched), 1u);
  // The counter: a track of process 20 named "queue" with both samples.
  size_t track = SIZE_MAX;
  for (size_t k = 0; k < m->counters.tracks.size(); ++k)
    if (m->counters.tracks[k].kind == core::CounterKind::User) track = k;
  ASSERT_NE(track, SIZE_MAX);
  EXPECT_EQ(m->counters.tracks[track].index, 20);
  EXPECT_EQ(m->counters.tracks[track].scope, core::CounterScope::Process);
  EXPECT_EQ(m->strings.get(m->counters.tracks[track].name), "queue");
  const auto [cb, ce] = m->counters.rowsOf(track);
  ASSERT_EQ(ce - cb, 2u);
  EXPECT_EQ(m->counters.value[cb], 3.0);
  EXPECT_EQ(m->counters.value[cb + 1], 1.0);
}

TEST(PowerResidency, EachSampleHoldsUntilTheNextAndTheStartIsUnknown) {
  // CPU 0 over [0, 1000]: task 5 runs [0, 400), idle after. Frequency unknown
  // until 100, then 1 GHz to 300 and 2 GHz to the end; idle state: running
  // (-1) from 0, state 1 at 400, state 2 at 700.
  TraceBuilder t;
  t.sw(0, 0, 0, "R", 5);
  core::SchedBuilder& b = t.builder();
  b.onCpuIdle({0, 0, 5, 0}, 0, core::kIdleStateRunning);
  b.onCpuFrequency({100, 0, 5, 0}, 0, 1'000'000);
  b.onCpuFrequency({300, 0, 5, 0}, 0, 2'000'000);
  t.sw(400, 0, 5, "S", 0);
  b.onCpuIdle({400, 0, 0, 0}, 0, 1);
  b.onCpuIdle({700, 0, 0, 0}, 0, 2);
  b.onCpuFrequency({800, 0, 0, 0}, 9, 3'000'000);  // another CPU's frequency: CPU 9 has no slices
  b.onCpuIdle({900, 0, 0, 0}, 4096, 1);            // out of range: counted, dropped
  t.other(1000, 0, 0);
  const auto m = t.build();
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::cpu_out_of_range), 1u);
  const auto stats = core::analysis::computeStats(*m);
  ASSERT_EQ(stats.coveredNs, 1000);
  const auto& c = stats.cpus.at(0);
  EXPECT_EQ(c.freqUnknownNs, 100);
  EXPECT_EQ(c.freqResidencyNs, (std::map<int64_t, int64_t>{{1'000'000, 200}, {2'000'000, 700}}));
  // Time-weighted: (1 GHz * 200 + 2 GHz * 700) / 900; busy-weighted over [100, 400): (200 * 1 + 100 * 2) / 300 GHz.
  EXPECT_NEAR(c.meanFreqKhz, (1e6 * 200 + 2e6 * 700) / 900, 1e-6);
  EXPECT_NEAR(c.meanBusyFreqKhz, (1e6 * 200 + 2e6 * 100) / 300, 1e-6);
  EXPECT_EQ(c.idleUnknownNs, 0);
  EXPECT_EQ(c.idleResidencyNs, (std::map<int64_t, int64_t>{{core::kIdleStateRunning, 400}, {1, 300}, {2, 300}}));

  // A range cuts every residency to its overlap.
  const auto part = core::analysis::computeStats(*m, {200, 500});
  EXPECT_EQ(part.cpus.at(0).freqUnknownNs, 0);
  EXPECT_EQ(part.cpus.at(0).freqResidencyNs, (std::map<int64_t, int64_t>{{1'000'000, 100}, {2'000'000, 200}}));
  EXPECT_EQ(part.cpus.at(0).idleResidencyNs, (std::map<int64_t, int64_t>{{core::kIdleStateRunning, 200}, {1, 100}}));
}

TEST(StatsCsv, ResidenciesAndUserSlicesAsLongTablesAndTheCpuColumns) {
  // CPU 0 over [0, 1000]: t5 runs [0, 400), idle (state 1) [400, 600), t6
  // runs [600, 1000). Frequency unknown to 100, 1 GHz to 300, 2 GHz after.
  // t5 writes "draw" over [50, 250) and [300, 350); t6 "draw" over [700, 800),
  // "io" over [850, 900), and begins "frame" at 950 without an end.
  TraceBuilder t;
  core::SchedBuilder& b = t.builder();
  t.sw(0, 0, 0, "R", 5);
  b.onCpuIdle({0, 0, 5, 0}, 0, core::kIdleStateRunning);
  mark(t, 50, 0, 5, "B|5|draw");
  b.onCpuFrequency({100, 0, 5, 0}, 0, 1'000'000);
  mark(t, 250, 0, 5, "E|5");
  mark(t, 300, 0, 5, "B|5|draw");
  b.onCpuFrequency({300, 0, 5, 0}, 0, 2'000'000);
  mark(t, 350, 0, 5, "E|5");
  t.sw(400, 0, 5, "S", 0);
  b.onCpuIdle({400, 0, 0, 0}, 0, 1);
  b.onCpuIdle({600, 0, 0, 0}, 0, core::kIdleStateRunning);
  t.sw(600, 0, 0, "R", 6);
  mark(t, 700, 0, 6, "B|6|draw");
  mark(t, 800, 0, 6, "E|6");
  mark(t, 850, 0, 6, "B|6|io");
  mark(t, 900, 0, 6, "E|6");
  mark(t, 950, 0, 6, "B|6|frame");
  t.other(1000, 0, 6);
  const auto stats = core::analysis::computeStats(*t.build());
  using core::analysis::runStatsCsv;
  using core::analysis::StatsCsvTable;

  // Residencies: each sample holds to the next, the last to the end (1000).
  EXPECT_EQ(runStatsCsv(stats, StatsCsvTable::FreqResidency),
            "cpu,freq_khz,residency_ns\n"
            "0,1000000,200\n"   // [100, 300)
            "0,2000000,700\n");  // [300, 1000]
  EXPECT_EQ(runStatsCsv(stats, StatsCsvTable::IdleResidency),
            "cpu,state,residency_ns\n"
            "0,-1,800\n"  // [0, 400) and [600, 1000]
            "0,1,200\n");

  // User slices, per task and over all, by total time (nearest-rank percentiles):
  // draw of t5: 200 and 50; of t6: 100; over all {50, 100, 200}: p50 100, p99 200.
  // A task's tgid is the one its "B|tgid|name" lines name (each its own process here).
  auto slices = csvLines(runStatsCsv(stats, StatsCsvTable::UserSlices));
  ASSERT_FALSE(slices.empty());
  EXPECT_EQ(slices.front(), "scope,tid,tgid,comm,name,count,open,total_ns,p50_ns,p99_ns,max_ns");
  slices.erase(slices.begin());
  std::vector<std::string> expected = {
      "task,5,5,t5,draw,2,0,250,50,200,200",  "task,6,6,t6,draw,1,0,100,100,100,100",
      "task,6,6,t6,io,1,0,50,50,50,50",       "task,6,6,t6,frame,0,1,0,0,0,0",
      "all,,,,draw,3,0,350,100,200,200",     "all,,,,io,1,0,50,50,50,50",
      "all,,,,frame,0,1,0,0,0,0",
  };
  // Task rows come task by task, the overall ones last, each by total time.
  EXPECT_EQ(std::vector<std::string>(slices.end() - 3, slices.end()),
            std::vector<std::string>(expected.end() - 3, expected.end()));
  std::sort(slices.begin(), slices.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(slices, expected);

  // The CPU table's frequency and idle columns: known for CPU 0 (mean 1 GHz x 200
  // + 2 GHz x 700 over 900 ns; over its busy known time, [100, 400) and [600,
  // 1000]: (1 GHz x 200 + 2 GHz x 500) / 700), empty for a CPU without samples.
  const auto cpuLines = csvLines(runStatsCsv(stats, core::analysis::StatsGrouping::Cpu));
  ASSERT_EQ(cpuLines.size(), 2u);
  EXPECT_EQ(cpuLines[0],
            "cpu,busy_ns,idle_ns,forced_idle_ns,lost_ns,utilisation,switches,freq_unknown_ns,mean_freq_khz,"
            "mean_busy_freq_khz,idle_unknown_ns");
  EXPECT_TRUE(cpuLines[1].starts_with("0,800,200,0,0,0.800000,")) << cpuLines[1];
  EXPECT_TRUE(cpuLines[1].ends_with(",100,1777777.8,1714285.7,0")) << cpuLines[1];
  core::analysis::RunStats bare = stats;
  bare.cpus[0].freqResidencyNs.clear();
  bare.cpus[0].idleResidencyNs.clear();
  EXPECT_TRUE(csvLines(runStatsCsv(bare, core::analysis::StatsGrouping::Cpu))[1].ends_with(",,,,"));
}
