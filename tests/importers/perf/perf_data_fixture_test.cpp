// The perf.data importer on fixtures recorded on this project's 2-vCPU test
// machine (tests/data/perf/README.md): counts against the `perf script` text
// stored beside them and against a live `perf script` (skipped, saying so, where
// perf is not installed: `make setup` installs it), header metadata and topology,
// pipe layout, ordering, data loss, topology forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/topology.h"
#include "importers/importer.h"
#include "perf_test_support.h"

namespace {

using namespace perf_test;

const std::string kFile = "perf/sleep-0.1.perf.data";
const std::string kFileScriptNs = "perf/sleep-0.1.perf-script-ns.txt";
const std::string kPipe = "perf/sleep-0.05.pipe.perf.data";
const std::string kPipeScript = "perf/sleep-0.05.pipe.perf-script.txt";

std::string readText(const std::string& path) {
  const auto b = readBytes(path);
  return {b.begin(), b.end()};
}

TEST(PerfDataFixture, CountsMatchPerfScript) {
  auto m = importOk(testData(kFile));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->format, "perf.data");
  const auto expected = countScriptEvents(readText(testData(kFileScriptNs)));
  // Worked out from the stored `perf script` text: 159 switches, 80 wakeups...
  EXPECT_EQ(expected.at("sched_switch"), 159u);
  EXPECT_EQ(expected.at("sched_waking"), 80u);
  EXPECT_EQ(modelCounts(*m), expected);
  EXPECT_EQ(m->metadata.at("perf_data_layout"), "file");
  if (!perfAvailable()) GTEST_SKIP() << "perf (linux-perf, make setup) not installed: not compared with a live perf script";
  const auto live = perfScript(testData(kFile));
  ASSERT_TRUE(live) << "perf script failed on " << testData(kFile);
  EXPECT_EQ(modelCounts(*m), countScriptEvents(*live));
}

TEST(PerfDataFixture, HeaderMetadata) {
  auto m = importOk(testData(kFile));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->metadata.at("hostname"), "vm");
  EXPECT_EQ(m->metadata.at("osrelease"), "6.18.44-fc-v669");
  EXPECT_EQ(m->metadata.at("nrcpus"), "2");
  EXPECT_EQ(m->metadata.at("arch"), "x86_64");
  EXPECT_EQ(m->metadata.at("cmdline").rfind("/usr/bin/perf record -a -e sched:sched_switch", 0), 0u);
  EXPECT_NE(m->metadata.at("cmdline").find("-- sleep 0.1"), std::string::npos);
}

// The recording machine: 2 vCPUs, one thread per core, one package
// (/sys/devices/system/cpu/cpu{0,1}/topology: thread_siblings_list 0 and 1,
// core_id 0 and 1, physical_package_id 0).
TEST(PerfDataFixture, TopologyFromHeader) {
  auto m = importOk(testData(kFile));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->topology.source(), "perf.data header");
  EXPECT_EQ(m->topology.cores(), (std::vector<std::vector<int>>{{0}, {1}}));
  EXPECT_FALSE(m->topology.hasSmt());
  EXPECT_EQ(m->topology.cpu(1)->package, 0);
}

// Records a tiny trace here (needs perf and permission to trace) and checks the
// header's topology against this machine's sysfs.
TEST(PerfDataLive, RecordedTopologyMatchesSysfs) {
  if (!perfAvailable()) GTEST_SKIP() << "perf not installed";
  TempDir dir;
  const std::string out = dir.path("live.data");
  if (!run("perf record -q -a -e sched:sched_switch -o '" + out + "' -- sleep 0.01 >/dev/null 2>&1"))
    GTEST_SKIP() << "cannot record here (needs root and tracefs)";
  auto m = importOk(out);
  ASSERT_TRUE(m);
  auto sys = core::Topology::fromSysfs("/sys/devices/system/cpu");
  if (!sys) GTEST_SKIP() << sys.error().message();
  EXPECT_EQ(m->topology.source(), "perf.data header");
  EXPECT_EQ(m->topology.cores(), sys->cores());
  const auto live = perfScript(out);
  ASSERT_TRUE(live) << "perf script failed on the file perf record just wrote";
  EXPECT_EQ(modelCounts(*m), countScriptEvents(*live));
}

TEST(PerfDataFixture, PipeLayout) {
  auto m = importOk(testData(kPipe));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->metadata.at("perf_data_layout"), "pipe");
  const auto expected = countScriptEvents(readText(testData(kPipeScript)));
  EXPECT_EQ(expected.at("sched_switch"), 34u);
  EXPECT_EQ(modelCounts(*m), expected);
  // Pipe data carries its header features as records.
  EXPECT_EQ(m->topology.source(), "perf.data header");
  EXPECT_EQ(m->metadata.at("hostname"), "vm");
  if (!perfAvailable()) GTEST_SKIP() << "perf (linux-perf, make setup) not installed: not compared with a live perf script";
  const auto live = perfScript(testData(kPipe));
  ASSERT_TRUE(live) << "perf script failed on " << testData(kPipe);
  EXPECT_EQ(modelCounts(*m), countScriptEvents(*live));
}

// The same recording as perf.data and as `perf script --ns` text: identical schedules.
TEST(PerfDataFixture, SameScheduleAsPerfScriptNsText) {
  auto bin = importOk(testData(kFile));
  auto text = importOk(testData(kFileScriptNs));
  ASSERT_TRUE(bin && text);
  EXPECT_EQ(text->format, "perf-script");
  EXPECT_EQ(modelCounts(*bin), modelCounts(*text));
  expectSameTaskStats(*bin, *text, 0);
  ASSERT_EQ(bin->cpuSlices.size(), text->cpuSlices.size());
  for (size_t c = 0; c < bin->cpuSlices.size(); ++c) {
    const auto& a = bin->cpuSlices[c];
    const auto& b = text->cpuSlices[c];
    ASSERT_EQ(a.size(), b.size()) << "cpu " << c;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a.ts[i], b.ts[i]);
      EXPECT_EQ(a.dur[i], b.dur[i]);
      EXPECT_EQ(bin->threads.tid[a.utid[i].value], text->threads.tid[b.utid[i].value]);
      EXPECT_EQ(a.endState[i], b.endState[i]);
    }
  }
}

// The file with every event id rewritten through `newId` (ids it does not
// name stay): in the attrs' id lists, the EVENT_DESC feature, each sample's
// IDENTIFIER and the sample_id_all trailer of kernel records. The fixture's
// samples carry IDENTIFIER, whose place is fixed: right after the header, and
// last in the trailer.
std::vector<uint8_t> withEventIds(std::vector<uint8_t> bytes, const std::map<uint64_t, uint64_t>& newId) {
  auto rewrite = [&](std::vector<uint8_t>& d, uint64_t off) {
    if (auto it = newId.find(PerfDataFile::u64(d, off)); it != newId.end()) std::memcpy(d.data() + off, &it->second, 8);
  };
  constexpr uint64_t kIdentifier = 1u << 16;
  const uint64_t attrSize = PerfDataFile::u64(bytes, 16), attrs = PerfDataFile::u64(bytes, 24);
  const uint64_t attrCount = PerfDataFile::u64(bytes, 32) / attrSize;
  bool trailers = false;
  for (uint64_t i = 0; i < attrCount; ++i) {
    const uint64_t attr = attrs + i * attrSize;
    EXPECT_TRUE(PerfDataFile::u64(bytes, attr + 24) & kIdentifier) << "attr " << i;
    trailers |= PerfDataFile::u64(bytes, attr + 40) >> 18 & 1;  // sample_id_all
    const uint64_t ids = PerfDataFile::u64(bytes, attr + attrSize - 16), idBytes = PerfDataFile::u64(bytes, attr + attrSize - 8);
    for (uint64_t at = ids; at < ids + idBytes; at += 8) rewrite(bytes, at);
  }
  PerfDataFile file(bytes);
  for (auto& r : file.records) {
    if (r.type == 9) rewrite(r.bytes, 8);
    else if (r.type < 64 && trailers) rewrite(r.bytes, r.bytes.size() - 8);
  }
  constexpr int kEventDescFeature = 12;
  if (auto desc = file.features.find(kEventDescFeature); desc != file.features.end()) {
    auto& d = desc->second;
    const uint32_t events = PerfDataFile::u32(d, 0), descAttrSize = PerfDataFile::u32(d, 4);
    uint64_t pos = 8;
    for (uint32_t e = 0; e < events; ++e) {
      pos += descAttrSize;
      const uint32_t idCount = PerfDataFile::u32(d, pos);
      pos += 8 + PerfDataFile::u32(d, pos + 4);  // the count, then the name: u32 length and its bytes
      for (uint32_t k = 0; k < idCount; ++k, pos += 8) rewrite(d, pos);
    }
  }
  return file.assemble();
}

// perf's event ids come from one kernel-wide counter: wherever it stood, and
// however far apart a corrupt header puts them, each sample finds its event.
// The fixture's ids are 293..310, two per event in attr order. The reader keeps
// ids within 4096 + 16 per id of the first in a table, the others in a map;
// sched_wakeup's ids here lie past that reach when read, then inside the table
// once the dummy event's ids, read last, widen it.
TEST(PerfDataFixture, EventIdsAnywhereFindTheirEvents) {
  const uint64_t first = 293;
  const std::map<uint64_t, uint64_t> newId = {
      {295, first + 4300}, {296, first + 4301},                    // sched_wakeup: beyond the reach when read
      {297, 7}, {298, 8},                                          // sched_waking: below the first id
      {299, (uint64_t{1} << 40) + 1}, {300, (uint64_t{1} << 40)},  // sched_wakeup_new: far above
      {301, (1u << 20) + 1}, {302, 1u << 20},                      // sched_migrate_task
      {309, first + 4350}, {310, first + 4351},                    // dummy: widens the table past sched_wakeup's
  };
  TempDir dir;
  const std::string moved = dir.write("moved.data", withEventIds(readBytes(testData(kFile)), newId));
  const Built original = build(testData(kFile), importers::perf::Threading::Never);
  const Built renumbered = build(moved, importers::perf::Threading::Never);
  ASSERT_TRUE(renumbered.status.isOk()) << renumbered.status.message();
  expectSameModel(original, renumbered, false);
  EXPECT_EQ(modelCounts(*renumbered.model), countScriptEvents(readText(testData(kFileScriptNs))));
  if (const auto live = perfScript(moved, "--ns")) {
    EXPECT_EQ(*live, readText(testData(kFileScriptNs))) << "perf itself prints the renumbered file as the original";
  }
}

// perf record only promises order across FINISHED_ROUND records: shuffling the
// records inside every round must not change the schedule.
TEST(PerfDataFixture, RecordsAreSortedWithinRounds) {
  PerfDataFile f(readBytes(testData(kFile)));
  std::mt19937 rng(7);
  size_t begin = 0;
  size_t rounds = 0;
  for (size_t i = 0; i <= f.records.size(); ++i) {
    if (i == f.records.size() || f.records[i].type == 68) {
      std::shuffle(f.records.begin() + static_cast<std::ptrdiff_t>(begin), f.records.begin() + static_cast<std::ptrdiff_t>(i), rng);
      begin = i + 1;
      ++rounds;
    }
  }
  EXPECT_GE(rounds, 2u);
  TempDir dir;
  auto shuffled = importOk(dir.write("shuffled.data", f.assemble()));
  auto original = importOk(testData(kFile));
  ASSERT_TRUE(shuffled && original);
  EXPECT_EQ(modelCounts(*shuffled), modelCounts(*original));
  EXPECT_EQ(shuffled->diagnostics.count(core::DiagCode::out_of_order_timestamp), 0u);
  expectSameTaskStats(*shuffled, *original, 0);
}

// A PERF_RECORD_LOST becomes a data-loss range on its CPU, at its time.
TEST(PerfDataFixture, LostRecordBecomesDataLoss) {
  PerfDataFile f(readBytes(testData(kFile)));
  // Build a LOST record from the first sample's sample_id fields: this file's
  // attrs sample IP|TID|TIME|CPU|PERIOD|RAW|IDENTIFIER, so the trailer of other
  // records is TID, TIME, CPU, IDENTIFIER (8 bytes each).
  size_t at = 0;
  while (f.records[at].type != 9) ++at;
  const auto& s = f.records[at].bytes;
  const uint64_t id = PerfDataFile::u64(s, 8), tidPid = PerfDataFile::u64(s, 24), time = PerfDataFile::u64(s, 32),
                 cpu = PerfDataFile::u64(s, 40);
  std::vector<uint8_t> lost(8 + 16 + 32);
  const uint32_t type = 2;
  const uint16_t size = static_cast<uint16_t>(lost.size());
  const uint64_t count = 1234;
  std::memcpy(lost.data(), &type, 4);
  std::memcpy(lost.data() + 6, &size, 2);
  std::memcpy(lost.data() + 8, &id, 8);
  std::memcpy(lost.data() + 16, &count, 8);
  std::memcpy(lost.data() + 24, &tidPid, 8);
  std::memcpy(lost.data() + 32, &time, 8);
  std::memcpy(lost.data() + 40, &cpu, 8);
  std::memcpy(lost.data() + 48, &id, 8);
  f.records.insert(f.records.begin() + static_cast<std::ptrdiff_t>(at), {2, lost});
  TempDir dir;
  auto m = importOk(dir.write("lost.data", f.assemble()));
  ASSERT_TRUE(m);
  ASSERT_EQ(m->dataLoss.size(), 1u);
  EXPECT_EQ(m->dataLoss.count[0], 1234);
  EXPECT_EQ(m->dataLoss.cpu[0], static_cast<int32_t>(cpu & 0xffffffff));
  EXPECT_EQ(m->dataLoss.tsEnd[0], static_cast<int64_t>(time));
  EXPECT_EQ(m->lostEvents(), 1234u);
  // Loss is not an event perf script prints.
  EXPECT_EQ(modelCounts(*m), modelCounts(*importOk(testData(kFile))));
}

// Garbled print formats made libtraceevent's print-fmt parser crash under the
// fuzzer. Decoding needs only the field layout, so garbage there changes nothing.
TEST(PerfDataFixture, GarbledPrintFormatIsHarmless) {
  PerfDataFile f(readBytes(testData(kFile)));
  auto& tracing = f.features.at(1);
  const std::string needle = "print fmt: ";
  const std::string_view kGarbage = "((((,{\\\"REC->";
  size_t garbled = 0;
  for (auto it = std::search(tracing.begin(), tracing.end(), needle.begin(), needle.end()); it != tracing.end();
       it = std::search(it + 1, tracing.end(), needle.begin(), needle.end())) {
    const auto at = static_cast<size_t>(it - tracing.begin()) + needle.size();
    for (size_t i = 0; i < 40 && at + i < tracing.size(); ++i) tracing[at + i] = static_cast<uint8_t>(kGarbage[i % kGarbage.size()]);
    ++garbled;
  }
  EXPECT_EQ(garbled, 8u);
  TempDir dir;
  auto m = importOk(dir.write("garbled.data", f.assemble()));
  ASSERT_TRUE(m);
  EXPECT_EQ(modelCounts(*m), modelCounts(*importOk(testData(kFile))));
  expectSameTaskStats(*m, *importOk(testData(kFile)), 0);
}

struct TopologyCase {
  std::string name;
  std::vector<std::string> packages;
  std::vector<std::string> threads;
  std::vector<std::vector<int>> cores;
  std::vector<int> packageOfCpu;
};

class PerfDataTopology : public ::testing::TestWithParam<TopologyCase> {};

TEST_P(PerfDataTopology, ReadsSiblingLists) {
  const auto& c = GetParam();
  PerfDataFile f(readBytes(testData(kFile)));
  f.features[13] = cpuTopologyFeature(c.packages, c.threads);
  TempDir dir;
  auto m = importOk(dir.write("topo.data", f.assemble()));
  ASSERT_TRUE(m);
  if (c.cores.empty()) {
    EXPECT_EQ(m->topology.source(), "default");
    EXPECT_GT(m->diagnostics.count(core::DiagCode::malformed_record), 0u);
    return;
  }
  EXPECT_EQ(m->topology.source(), "perf.data header");
  EXPECT_EQ(m->topology.cores(), c.cores);
  for (size_t cpu = 0; cpu < c.packageOfCpu.size(); ++cpu)
    EXPECT_EQ(m->topology.cpu(static_cast<int>(cpu))->package, c.packageOfCpu[cpu]) << "cpu " << cpu;
}

// An 8-CPU machine of two packages, each with two dies of one two-thread core
// (x86 numbering: siblings c and c+4), an L3 per package and a NUMA node per
// package, written as perf 5.3+ writes the features; worked out by hand from
// the lists below.
TEST(PerfDataTopologyFeatures, DiesLlcsAndNodes) {
  PerfDataFile f(readBytes(testData(kFile)));
  std::vector<uint8_t> nrcpus;
  appendU32(nrcpus, 8);
  appendU32(nrcpus, 8);
  f.features[7] = nrcpus;
  auto topo = cpuTopologyFeature({"0-1,4-5", "2-3,6-7"}, {"0,4", "1,5", "2,6", "3,7"});
  appendCpuIdsAndDies(topo, {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 0}, {1, 0}, {0, 1}, {1, 1}},
                      {"0,4", "1,5", "2,6", "3,7"}, {0, 1, 0, 1, 0, 1, 0, 1});
  f.features[13] = topo;
  f.features[14] = numaTopologyFeature({{0, "0-1,4-5"}, {1, "2-3,6-7"}, {2, ""}});
  f.features[20] = cacheFeature({{1, "Data", "0,4"}, {1, "Instruction", "0,4"}, {2, "Unified", "0,4"},
                                 {2, "Unified", "1,5"}, {3, "Unified", "0-1,4-5"}, {3, "Unified", "2-3,6-7"},
                                 {4, "Instruction", "0-7"}});
  TempDir dir;
  auto m = importOk(dir.write("big.data", f.assemble()));
  ASSERT_TRUE(m);
  const core::Topology& t = m->topology;
  EXPECT_EQ(t.cores(), (std::vector<std::vector<int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  // The L3 of each package, not the per-core L1/L2 nor the L4 instruction cache.
  EXPECT_EQ(t.llcs(), (std::vector<std::vector<int>>{{0, 1, 4, 5}, {2, 3, 6, 7}}));
  const int dieOf[8] = {0, 1, 0, 1, 0, 1, 0, 1};
  const int nodeOf[8] = {0, 0, 1, 1, 0, 0, 1, 1};
  for (int cpu = 0; cpu < 8; ++cpu) {
    EXPECT_EQ(t.cpu(cpu)->die, dieOf[cpu]) << cpu;
    EXPECT_EQ(t.cpu(cpu)->node, nodeOf[cpu]) << cpu;
    EXPECT_EQ(t.cpu(cpu)->package, nodeOf[cpu]) << cpu;
  }
  EXPECT_EQ(t.count(core::Topology::Level::Die), 4);
  EXPECT_EQ(t.describe(), "2 packages x 2 cores x 2 threads, 2 NUMA nodes (perf.data header)");
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::malformed_record), 0u);

  // A cache map that is no CPU list: counted, the LLCs stay the dies'.
  f.features[20] = cacheFeature({{3, "Unified", "0-x"}});
  auto bad = importOk(dir.write("badcache.data", f.assemble()));
  ASSERT_TRUE(bad);
  EXPECT_GT(bad->diagnostics.count(core::DiagCode::malformed_record), 0u);
  EXPECT_EQ(bad->topology.llcs().size(), 4u);  // one per (package, die)
  EXPECT_EQ(bad->topology.cpu(3)->node, 1);
}

INSTANTIATE_TEST_SUITE_P(
    Forms, PerfDataTopology,
    ::testing::Values(
        // x86 with SMT: siblings numbered apart ("0,2").
        TopologyCase{"x86_smt", {"0-3"}, {"0,2", "1,3"}, {{0, 2}, {1, 3}}, {0, 0, 0, 0}},
        // Siblings numbered together ("0-1").
        TopologyCase{"ranges", {"0-3"}, {"0-1", "2-3"}, {{0, 1}, {2, 3}}, {0, 0, 0, 0}},
        // Two packages, one thread per core.
        TopologyCase{"two_packages", {"0-1", "2-3"}, {"0", "1", "2", "3"}, {{0}, {1}, {2}, {3}}, {0, 0, 1, 1}},
        // A CPU in two cores: rejected, default topology.
        TopologyCase{"overlap", {"0-3"}, {"0-1", "1-2"}, {}, {}},
        TopologyCase{"garbage", {"0-3"}, {"zero"}, {}, {}}),
    [](const auto& tc) { return tc.param.name; });

}  // namespace
