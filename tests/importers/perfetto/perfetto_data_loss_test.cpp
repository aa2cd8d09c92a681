// Data loss in Perfetto traces: a bundle flagged lost_events, a bundle missing
// from the trace (the next one's previous_bundle_end_timestamp names events
// the trace lacks), and ftrace_stats overruns. The fixture's bundles are split
// and damaged by the test's own writer; where each loss must begin and end is
// taken from the events around it, as the writer placed them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <tuple>

#include "importers/importer.h"
#include "importers/perfetto/perfetto_writer.h"
#include "support/trace_builder.h"
#include "tests/importers/perfetto/perfetto_test_support.h"

namespace {

using namespace perfetto_test;
namespace fs = std::filesystem;

struct Bundle {
  uint64_t cpu = 0;
  std::vector<Bytes> events;
  uint64_t firstTs = 0, lastTs = 0;
};

struct SplitTrace {
  Bytes otherPackets;           // every packet but the ftrace bundles, as they were
  std::vector<Bundle> bundles;  // by first event time
};

uint64_t timestampOf(const Bytes& event) {
  for (const auto& f : parse(event))
    if (f.num == 1 && f.wire == 0) return f.v;
  return 0;
}

// The fixture's per-event bundles cut into bundles of `perBundle` events.
SplitTrace split(const Bytes& trace, size_t perBundle) {
  SplitTrace out;
  for (const auto& top : parse(trace)) {
    bool isBundle = false;
    for (const auto& pf : parse(top.bytes)) {
      if (pf.num != 1 || pf.wire != 2) continue;
      isBundle = true;
      uint64_t cpu = 0;
      std::vector<Bytes> events;
      for (const auto& bf : parse(pf.bytes)) {
        if (bf.num == 1 && bf.wire == 0) cpu = bf.v;
        if (bf.num == 2) events.push_back(bf.bytes);
      }
      for (size_t i = 0; i < events.size(); i += perBundle) {
        Bundle b;
        b.cpu = cpu;
        b.events.assign(events.begin() + static_cast<long>(i),
                        events.begin() + static_cast<long>(std::min(events.size(), i + perBundle)));
        b.firstTs = timestampOf(b.events.front());
        b.lastTs = timestampOf(b.events.back());
        out.bundles.push_back(std::move(b));
      }
    }
    if (!isBundle) putBytes(out.otherPackets, 1, top.bytes);
  }
  std::stable_sort(out.bundles.begin(), out.bundles.end(),
                   [](const Bundle& a, const Bundle& b) { return a.firstTs < b.firstTs; });
  return out;
}

// The trace again, each bundle naming the end of the CPU's bundle before it
// (as Perfetto v47+ writes); `lost` flags bundles lost_events, `dropped` leaves bundles out.
Bytes assemble(const SplitTrace& t, const std::set<size_t>& lost, const std::set<size_t>& dropped,
               const Bytes& extraPackets = {}) {
  Bytes out = t.otherPackets;
  std::map<uint64_t, uint64_t> previousEnd;
  for (size_t i = 0; i < t.bundles.size(); ++i) {
    const Bundle& b = t.bundles[i];
    if (!dropped.count(i)) {
      Bytes bundle, packet;
      putInt(bundle, 1, b.cpu);
      if (lost.count(i)) putInt(bundle, 3, 1);
      if (previousEnd.count(b.cpu)) putInt(bundle, 10, previousEnd[b.cpu]);
      for (const auto& e : b.events) putBytes(bundle, 2, e);
      putBytes(packet, 1, bundle);
      putInt(packet, 10, 1);  // trusted_packet_sequence_id
      putBytes(out, 1, packet);
    }
    previousEnd[b.cpu] = b.lastTs;
  }
  out.insert(out.end(), extraPackets.begin(), extraPackets.end());
  return out;
}

// The index of the `k`-th bundle of `cpu`, and of that CPU's bundles before and after it.
struct Neighbours {
  size_t before, at, after;
};
Neighbours bundleOfCpu(const SplitTrace& t, uint64_t cpu, size_t k) {
  std::vector<size_t> of;
  for (size_t i = 0; i < t.bundles.size(); ++i)
    if (t.bundles[i].cpu == cpu) of.push_back(i);
  if (k == 0 || of.size() <= k + 1) {
    ADD_FAILURE() << "the fixture has " << of.size() << " bundles on cpu " << cpu;
    return {0, 0, 0};
  }
  return {of[k - 1], of[k], of[k + 1]};
}

std::shared_ptr<core::TraceModel> importBytes(const Bytes& b, const std::string& name) {
  const std::string path =
      (fs::temp_directory_path() / ("schedlab-perfetto-loss-" + std::to_string(::getpid()) + "-" + name)).string();
  writeFile(path, b);
  auto r = importers::importTrace(path);
  fs::remove(path);
  EXPECT_TRUE(r) << (r ? "" : r.error().message());
  if (!r) return nullptr;
  EXPECT_FALSE(r->error) << r->error->message();
  return r->model;
}

class PerfettoDataLoss : public ::testing::Test {
 protected:
  void SetUp() override {
    trace = split(readFile(testData("perfetto/tiny.perfetto-trace")), 40);
    ASSERT_GT(trace.bundles.size(), 8u);
  }
  SplitTrace trace;
};

TEST_F(PerfettoDataLoss, SplitBundlesLoseNothing) {
  auto m = importBytes(assemble(trace, {}, {}), "split.perfetto-trace");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->dataLoss.size(), 0u);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::lost_event_ranges), 0u);
}

TEST_F(PerfettoDataLoss, ABundleFlaggedLostEventsIsALossBeforeIt) {
  const Neighbours n = bundleOfCpu(trace, 1, 2);
  auto m = importBytes(assemble(trace, {n.at}, {}), "lost.perfetto-trace");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->dataLoss.size(), 1u);
  EXPECT_EQ(m->dataLoss.cpu[0], 1);
  EXPECT_EQ(m->dataLoss.count[0], -1);  // lost_events does not say how many
  EXPECT_EQ(m->dataLoss.tsBegin[0], static_cast<int64_t>(trace.bundles[n.before].lastTs));
  EXPECT_EQ(m->dataLoss.tsEnd[0], static_cast<int64_t>(trace.bundles[n.at].firstTs));
}

TEST_F(PerfettoDataLoss, ABundleMissingFromTheTraceIsALossWhereItWas) {
  const Neighbours n = bundleOfCpu(trace, 1, 4);
  auto m = importBytes(assemble(trace, {}, {n.at}), "gap.perfetto-trace");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->dataLoss.size(), 1u);
  EXPECT_EQ(m->dataLoss.cpu[0], 1);
  EXPECT_EQ(m->dataLoss.tsBegin[0], static_cast<int64_t>(trace.bundles[n.before].lastTs));
  EXPECT_EQ(m->dataLoss.tsEnd[0], static_cast<int64_t>(trace.bundles[n.after].firstTs));
}

TEST_F(PerfettoDataLoss, FtraceStatsOverrunsAreLostEventsOfTheirCpu) {
  // FtraceStats {phase 1, cpu_stats 2 {cpu 1, overrun 3}}: 5 overruns at the
  // start, 12 at the end on CPU 1, none on CPU 0: 7 events lost on CPU 1.
  Bytes extra;
  for (const auto& [phase, overrun] : {std::pair<uint64_t, uint64_t>{1, 5}, {2, 12}}) {
    Bytes stats, packet;
    putInt(stats, 1, phase);
    for (uint64_t cpu : {0, 1}) {
      Bytes cpuStats;
      putInt(cpuStats, 1, cpu);
      putInt(cpuStats, 3, cpu == 1 ? overrun : 0);
      putBytes(stats, 2, cpuStats);
    }
    putBytes(packet, 34, stats);
    putBytes(extra, 1, packet);
  }
  auto m = importBytes(assemble(trace, {}, {}, extra), "overrun.perfetto-trace");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->dataLoss.size(), 1u);
  EXPECT_EQ(m->dataLoss.cpu[0], 1);
  EXPECT_EQ(m->dataLoss.count[0], 7);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::lost_events), 7u);
}

// SchedLab's export of counted losses: a reading of the overrun counters
// after each, so that the counts come back to their ranges; one the tracer
// did not count stays uncounted, never 0.
TEST(PerfettoDataLossExport, LostCountsSurviveTheRoundTripAndUnknownOnesStayUnknown) {
  testing_support::TraceBuilder t;
  // CPU 0 loses 1000 events in [20, 100) and an unknown number in [150, 300);
  // CPU 1 loses 234 in [30, 200). Each loss starts at the CPU's last event.
  t.sw(10, 0, 0, "R", 1).sw(10, 1, 0, "R", 2).other(20, 0, 1).other(30, 1, 2);
  t.loss(0, 100, 1000).sw(150, 0, 1, "S", 0);
  t.loss(1, 200, 234).sw(250, 1, 2, "S", 0);
  t.loss(0, 300, -1).sw(350, 0, 0, "R", 1).other(400, 0, 1).other(400, 1, 0);
  auto original = t.build();
  ASSERT_EQ(original->dataLoss.size(), 3u);

  const std::string bytes = importers::perfetto::encodePerfetto(*original);
  auto back = importBytes(Bytes(bytes.begin(), bytes.end()), "counted-loss.perfetto-trace");
  ASSERT_TRUE(back);
  std::map<std::tuple<int32_t, int64_t, int64_t>, int64_t> counts;
  for (size_t i = 0; i < back->dataLoss.size(); ++i)
    counts[{back->dataLoss.cpu[i], back->dataLoss.tsBegin[i], back->dataLoss.tsEnd[i]}] = back->dataLoss.count[i];
  const std::map<std::tuple<int32_t, int64_t, int64_t>, int64_t> expected = {
      {{0, 20, 100}, 1000}, {{0, 150, 300}, -1}, {{1, 30, 200}, 234}};
  EXPECT_EQ(counts, expected);
  EXPECT_EQ(back->lostEvents(), 1234);
  EXPECT_EQ(back->lostRangesOfUnknownCount(), 1u);
  EXPECT_EQ(back->diagnostics.count(core::DiagCode::lost_events), 1234u);
}

// Two losses in one stretch between overrun readings: how the growth splits
// is unknown, so neither gets a count (and nothing is made up as 0).
TEST_F(PerfettoDataLoss, GrowthOverSeveralLossesLeavesThemUncounted) {
  const Neighbours a = bundleOfCpu(trace, 1, 2), b = bundleOfCpu(trace, 1, 4);
  Bytes extra;
  for (const auto& [phase, overrun] : {std::pair<uint64_t, uint64_t>{1, 0}, {2, 50}}) {
    Bytes stats, cpuStats, packet;
    putInt(stats, 1, phase);
    putInt(cpuStats, 1, 1);
    putInt(cpuStats, 3, overrun);
    putBytes(stats, 2, cpuStats);
    putBytes(packet, 34, stats);
    putBytes(extra, 1, packet);
  }
  auto m = importBytes(assemble(trace, {a.at, b.at}, {}, extra), "split-growth.perfetto-trace");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->dataLoss.size(), 2u);
  EXPECT_EQ(m->dataLoss.count[0], -1);
  EXPECT_EQ(m->dataLoss.count[1], -1);
  EXPECT_EQ(m->lostRangesOfUnknownCount(), 2u);
}

}  // namespace
