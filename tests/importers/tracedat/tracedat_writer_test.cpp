// The trace.dat v7 writer (tracedat_writer.h), checked by reading back what it
// writes: the pages and formats of the uncompressed fixture, written again as
// zstd, zlib and uncompressed v7, import to the fixture's own model, and
// `trace-cmd report` (libtracecmd, an independent reader) prints the same events
// for them. A CPUSTAT overrun gives a loss the page could not count its count.
#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "importers/tracedat/tracedat_layout.h"
#include "importers/tracedat/tracedat_writer.h"
#include "support/scratch_dir.h"
#include "tracedat_test_support.h"

namespace {

using namespace tracedat_test;
using namespace importers::tracedat;
using test_support::ScratchDir;
namespace fs = std::filesystem;

// The uncompressed fixture, opened for its layout and, through `fd`, its pages.
struct Source {
  TraceLayout layout;
  int fd = -1;
  ~Source() {
    if (fd >= 0) ::close(fd);
  }
};

std::unique_ptr<Source> openFixture() {
  auto file = TraceFile::open(fixture("tiny-v7-none.dat"));
  if (!file) return nullptr;
  auto layout = readLayout(**file);
  if (!layout) return nullptr;
  auto s = std::make_unique<Source>();
  s->layout = std::move(*layout);
  s->fd = ::open(fixture("tiny-v7-none.dat").c_str(), O_RDONLY | O_CLOEXEC);
  return s;
}

TraceDatContent contentOf(const Source& s, Compression compression) {
  const TraceLayout& l = s.layout;
  TraceDatContent c = metadataOf(l);
  c.compression = compression;
  c.traceClock = "[local] global counter uptime perf mono mono_raw boot tai x86-tsc\n";
  c.version = "SchedLab test";
  c.traceId = 0x5eed;
  for (const auto& ref : l.cpuData) c.cpus.push_back({ref.cpu, s.fd, ref.offset, ref.size, {}});
  return c;
}

// `trace-cmd report` without its first line ("cpus=2"), or empty when it fails.
std::vector<std::string> reportLines(const std::string& path) {
  std::vector<std::string> lines;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(("trace-cmd report '" + path + "' 2>&1").c_str(), "r"), pclose);
  char buf[4096];
  while (pipe && fgets(buf, sizeof buf, pipe.get())) lines.emplace_back(buf);
  return lines;
}

TEST(TraceDatWriter, RewrittenFixtureImportsAsTheOriginal) {
  auto source = openFixture();
  ASSERT_TRUE(source);
  auto original = importWhole(fixture("tiny-v7-none.dat"));
  ASSERT_TRUE(original);
  ScratchDir dir("writer-roundtrip");
  const std::pair<Compression, std::string> kinds[] = {
      {Compression::Zstd, "trace.dat v7 (zstd)"}, {Compression::Zlib, "trace.dat v7 (zlib)"}, {Compression::None, "trace.dat v7"}};
  for (const auto& [compression, format] : kinds) {
    SCOPED_TRACE(format);
    const std::string out = dir.file("out.dat");
    double lastProgress = 0;
    ASSERT_TRUE(writeTraceDat(out, contentOf(*source, compression), [&](double f) { lastProgress = f; }));
    EXPECT_DOUBLE_EQ(lastProgress, 1.0);
    EXPECT_FALSE(fs::exists(out + ".part"));
    // trace.dat.v7(5): each CPU's data starts page-aligned (trace-cmd maps the pages).
    auto written = TraceFile::open(out);
    ASSERT_TRUE(written);
    auto layout = readLayout(**written);
    ASSERT_TRUE(layout) << layout.error().message();
    ASSERT_EQ(layout->cpuData.size(), 2u);
    for (const auto& ref : layout->cpuData) EXPECT_EQ(ref.offset % layout->pageSize, 0u) << "cpu " << ref.cpu;
    auto m = importWhole(out);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->format, format);
    EXPECT_EQ(counts(*m), counts(*original));
    EXPECT_EQ(m->eventCount, original->eventCount);
    EXPECT_EQ(m->firstTs, original->firstTs);
    EXPECT_EQ(m->lastTs, original->lastTs);
    EXPECT_EQ(m->metadata["recorder"], "SchedLab test");
    EXPECT_EQ(m->metadata["clock"], "local");
    ASSERT_EQ(m->cpuSlices.size(), original->cpuSlices.size());
    for (size_t cpu = 0; cpu < m->cpuSlices.size(); ++cpu) {
      EXPECT_EQ(m->cpuSlices[cpu].ts, original->cpuSlices[cpu].ts) << "cpu " << cpu;
      EXPECT_EQ(m->cpuSlices[cpu].dur, original->cpuSlices[cpu].dur) << "cpu " << cpu;
    }
    ASSERT_EQ(m->threads.size(), original->threads.size());
    for (uint32_t u = 1; u < m->threads.size(); ++u) EXPECT_EQ(m->threads.tid[u], original->threads.tid[u]);
  }
}

TEST(TraceDatWriter, TraceCmdReportsTheSameEventsAsForTheOriginal) {
  if (!haveTraceCmd()) GTEST_SKIP() << "trace-cmd is not installed: it is the reference reader here";
  auto source = openFixture();
  ASSERT_TRUE(source);
  ScratchDir dir("writer-report");
  const std::string out = dir.file("zstd.dat");
  ASSERT_TRUE(writeTraceDat(out, contentOf(*source, Compression::Zstd)));
  const auto expected = reportLines(fixture("tiny-v7-none.dat"));
  const auto got = reportLines(out);
  ASSERT_GT(expected.size(), 800u);  // 889 events
  EXPECT_EQ(got, expected);
  EXPECT_EQ(traceCmdReportCounts(out), traceCmdReportCounts(fixture("tiny-v7-none.dat")));
}

// CPU 1's pages with RB_MISSED_EVENTS set in the commit word of the pages named
// (no RB_MISSED_STORED: a full page has no room for the count).
std::string pagesWithLoss(const Source& s, const std::vector<size_t>& lossyPages, const ScratchDir& dir) {
  const CpuDataRef& ref = s.layout.cpuData.at(1);
  std::vector<uint8_t> pages(ref.size);
  EXPECT_EQ(::pread(s.fd, pages.data(), pages.size(), static_cast<off_t>(ref.offset)), static_cast<ssize_t>(pages.size()));
  for (size_t page : lossyPages) {
    uint64_t commit;
    std::memcpy(&commit, pages.data() + page * s.layout.pageSize + 8, 8);
    commit |= 1ULL << 31;
    std::memcpy(pages.data() + page * s.layout.pageSize + 8, &commit, 8);
  }
  const std::string path = dir.file("cpu1.pages");
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(pages.data()), static_cast<std::streamsize>(pages.size()));
  return path;
}

std::vector<int64_t> lossCounts(const core::TraceModel& m, int cpu) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < m.dataLoss.size(); ++i)
    if (m.dataLoss.cpu[i] == cpu) out.push_back(m.dataLoss.count[i]);
  return out;
}

TEST(TraceDatWriter, CpuStatOverrunCountsTheLossAPageCouldNotCount) {
  auto source = openFixture();
  ASSERT_TRUE(source);
  ASSERT_GE(source->layout.cpuData.at(1).size / source->layout.pageSize, 3u);
  ScratchDir dir("writer-cpustat");
  const std::string stats = "entries: 0\noverrun: 7\ncommit overrun: 0\nbytes: 0\n";
  struct Case {
    std::vector<size_t> lossyPages;
    std::string stats;
    std::vector<int64_t> expected;
  };
  // One uncounted loss and an overrun of 7: those 7. Two: how the 7 split is unknown.
  const Case cases[] = {{{0}, "", {-1}}, {{0}, stats, {7}}, {{0, 2}, stats, {-1, -1}}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.lossyPages.size());
    SCOPED_TRACE(c.stats);
    const std::string pagesPath = pagesWithLoss(*source, c.lossyPages, dir);
    const int fd = ::open(pagesPath.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    TraceDatContent content = contentOf(*source, Compression::Zstd);
    content.cpus.at(1) = {1, fd, 0, source->layout.cpuData.at(1).size, c.stats};
    const std::string out = dir.file("loss.dat");
    ASSERT_TRUE(writeTraceDat(out, content));
    ::close(fd);
    auto m = importWhole(out);
    ASSERT_TRUE(m);
    EXPECT_EQ(lossCounts(*m, 1), c.expected);
    EXPECT_EQ(m->diagnostics.count(core::DiagCode::lost_events), c.expected == std::vector<int64_t>{7} ? 7u : 0u);
    if (haveTraceCmd()) {
      size_t dropped = 0;
      for (const auto& line : reportLines(out)) dropped += line.find("EVENTS DROPPED]") != std::string::npos;
      EXPECT_EQ(dropped, c.lossyPages.size());
    }
  }
}

TEST(TraceDatWriter, AFolderThatCannotBeWrittenSaysSo) {
  auto source = openFixture();
  ASSERT_TRUE(source);
  const auto st = writeTraceDat("/nonexistent-schedlab-folder/out.dat", contentOf(*source, Compression::Zstd));
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("/nonexistent-schedlab-folder/out.dat: cannot create"), std::string::npos) << st.message();
}

TEST(TraceDatWriter, DiskFullLeavesNoFileAndSaysSo) {
  auto source = openFixture();
  ASSERT_TRUE(source);
  ScratchDir dir("writer-full");
  const std::string small = dir.file("small");
  fs::create_directories(small);
  // 16 KB of tmpfs: the fixture's 53 KB of pages do not fit.
  if (::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=16k") != 0)
    GTEST_SKIP() << "cannot mount a small tmpfs to fill (needs root): " << std::strerror(errno);
  const std::string out = small + "/out.dat";
  const auto st = writeTraceDat(out, contentOf(*source, Compression::None));
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(small)) left.push_back(e.path().filename().string());
  ::umount(small.c_str());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(), out + ": disk full (" + std::strerror(ENOSPC) + ")");
  EXPECT_TRUE(left.empty()) << left.front();
}

}  // namespace
