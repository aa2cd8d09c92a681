// perf.data as perf 6.x writes it besides the plain file: zstd-compressed
// records (perf record -z) and the folder of perf record --threads. Each real
// recording (tests/data/perf/README.md) must give the model its plain twin gives
// — the same events in an uncompressed single file, made by the simple helpers
// of perf_test_support.h and checked against `perf script` — and bad input the
// usual located error.
#include <gtest/gtest.h>

#include "importers/importer.h"
#include "perf_test_support.h"

namespace {

using namespace perf_test;
using importers::perf::Threading;

const std::string kCompressed = "perf/hackbench-sched-z.perf.data";
const std::string kFolder = "perf/hackbench-sched-threads.perf.data";

// The twin holds the same events: perf itself prints the two identically.
void expectPerfPrintsTheSame(const std::string& a, const std::string& b) {
  if (!perfAvailable()) return;
  const auto sa = perfScript(a, "--ns");
  const auto sb = perfScript(b, "--ns");
  ASSERT_TRUE(sa && sb);
  EXPECT_FALSE(sa->empty());
  EXPECT_EQ(*sa, *sb);
}

TEST(PerfDataLayouts, CompressedRecordsImportLikeTheirPlainTwin) {
  const auto bytes = readBytes(testData(kCompressed));
  TempDir dir;
  const std::string twin = dir.write("plain.data", decompressedTwin(bytes));
  expectPerfPrintsTheSame(testData(kCompressed), twin);
  const Built z = build(testData(kCompressed), Threading::Never);
  const Built plain = build(twin, Threading::Never);
  ASSERT_TRUE(z.status.isOk()) << z.status.message();
  expectSameModel(z, plain, false);
  // Counted from the recording's `perf script` (README): 204 samples.
  EXPECT_EQ(z.model->eventCount, 204u);
  auto m = importOk(testData(kCompressed));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->metadata.at("perf_compression"), "zstd level 1, ratio 5");
  if (auto live = perfScript(testData(kCompressed))) {
    EXPECT_EQ(modelCounts(*m), countScriptEvents(*live));
  }
}

// A record of `type` holding `data`, `size` bytes long with padding: for
// COMPRESSED2 (83) a u64 data size comes first; size 0 means exactly what it holds.
std::vector<uint8_t> recordOf(uint32_t type, size_t size, const uint8_t* data, uint64_t n) {
  std::vector<uint8_t> out(8);
  std::memcpy(out.data(), &type, sizeof type);
  if (type == 83) out.insert(out.end(), reinterpret_cast<const uint8_t*>(&n), reinterpret_cast<const uint8_t*>(&n) + 8);
  out.insert(out.end(), data, data + n);
  out.resize(std::max(size, out.size()), 0);
  const auto size16 = static_cast<uint16_t>(out.size());
  std::memcpy(out.data() + 6, &size16, sizeof size16);
  return out;
}

// In the pipe layout the COMPRESSED feature comes as a record before the data.
// Counts from the recording's `perf script` (README): 28 switches, 17 wakings.
TEST(PerfDataLayouts, CompressedRecordsInThePipeLayout) {
  const std::string file = testData("perf/sleep-0.05-z.pipe.perf.data");
  auto m = importOk(file);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->metadata.at("perf_data_layout"), "pipe");
  EXPECT_EQ(m->metadata.at("perf_compression").rfind("zstd level 1", 0), 0u);
  EXPECT_EQ(modelCounts(*m), (std::map<std::string, uint64_t>{{"sched_switch", 28}, {"sched_waking", 17}}));
  if (auto live = perfScript(file)) {
    EXPECT_EQ(modelCounts(*m), countScriptEvents(*live));
  }
}

// perf 6.15 writes PERF_RECORD_COMPRESSED2 (type 83: u64 data_size, the zstd
// data, zero padding to 8 bytes); perf 6.1 cannot, so the fixture's records are
// rewritten in that form.
TEST(PerfDataLayouts, Compressed2RecordsImportLikeCompressedOnes) {
  const auto bytes = readBytes(testData(kCompressed));
  PerfDataFile f(bytes);
  size_t rewritten = 0;
  for (auto& r : f.records) {
    if (r.type != kCompressedRecord) continue;
    const uint64_t n = r.bytes.size() - 8;
    const size_t size = (16 + n + 7) / 8 * 8;
    ASSERT_LE(size, 0xffffu);
    r.type = 83;
    r.bytes = recordOf(r.type, size, r.bytes.data() + 8, n);
    ++rewritten;
  }
  ASSERT_GT(rewritten, 0u);
  TempDir dir;
  const Built v2 = build(dir.write("v2.data", f.assemble()), Threading::Never);
  const Built v1 = build(testData(kCompressed), Threading::Never);
  ASSERT_TRUE(v2.status.isOk()) << v2.status.message();
  expectSameModel(v1, v2, false);
}

TEST(PerfDataLayouts, FolderImportsLikeItsMergedTwin) {
  TempDir dir;
  const std::string twin = dir.write("merged.data", mergedTwin(testData(kFolder)));
  expectPerfPrintsTheSame(testData(kFolder), twin);
  const Built folder = build(testData(kFolder), Threading::Never);
  const Built plain = build(twin, Threading::Never);
  ASSERT_TRUE(folder.status.isOk()) << folder.status.message();
  expectSameModel(folder, plain, false);
  EXPECT_EQ(folder.model->eventCount, 202u);  // `perf script` of the recording prints 202 samples
  // Through the registry: the folder is claimed by the perf.data importer, and
  // its `data` file opened alone reads the data.N files beside it.
  auto m = importOk(testData(kFolder));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->format, "perf.data");
  EXPECT_EQ(m->metadata.at("perf_data_layout"), "folder");
  auto viaHeader = importOk(testData(kFolder + "/data"));
  ASSERT_TRUE(viaHeader);
  expectSameTaskStats(*m, *viaHeader, 0);
}

// Real recordings of a few MB split the way perf record --threads writes them
// (one data.N per CPU, no FINISHED_ROUND): read a MiB of a file at a time, the
// merge must put every event where the rounds of the original put it.
TEST(PerfDataLayouts, LargeFolderMergesLikeTheRoundsOfTheOriginal) {
  const fs::path root = fs::path(SCHEDLAB_SHARED_TRACES) / "recorded";
  if (!fs::is_directory(root)) GTEST_SKIP() << root << " is absent";
  TempDir dir;
  int checked = 0;
  for (const char* name : {"hackbench-proc", "pipe-threads"}) {
    const std::string file = (root / name / "perf.data").string();
    if (!fs::exists(file)) continue;
    SCOPED_TRACE(file);
    const std::string folder = dir.path(name);
    splitIntoFolder(readBytes(file), folder);
    ASSERT_GT(fs::file_size(folder + "/data.0"), size_t{1} << 20) << "not large enough to need several chunks";
    const Built original = build(file, Threading::Never);
    for (Threading t : {Threading::Never, Threading::Always}) {
      const Built split = build(folder, t);
      ASSERT_TRUE(split.status.isOk()) << split.status.message();
      ASSERT_EQ(split.model->metadata.at("perf_data_layout"), "folder");
      // The CPUs' records were read a MiB at a time, interleaved in time, and put back in order.
      EXPECT_EQ(split.model->diagnostics.count(core::DiagCode::unsorted_input), 0u);
      EXPECT_EQ(split.model->diagnostics.count(core::DiagCode::out_of_order_timestamp),
                original.model->diagnostics.count(core::DiagCode::out_of_order_timestamp));
      EXPECT_EQ(modelCounts(*split.model), modelCounts(*original.model));
      for (size_t c = 0; c < original.model->cpuSlices.size(); ++c) {
        EXPECT_EQ(split.model->cpuSlices[c].ts, original.model->cpuSlices[c].ts);
        EXPECT_EQ(split.model->cpuSlices[c].utid, original.model->cpuSlices[c].utid);
      }
      EXPECT_EQ(split.model->wakeups.ts, original.model->wakeups.ts);
    }
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no hackbench-proc or pipe-threads recording in " << root;
}

// --- bad input: the file and offset of the damage, the valid part kept ---------

std::string locatedAt(const std::string& file, uint64_t off) {
  char hex[32];
  std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(off));
  return file + ": byte offset " + std::to_string(off) + " (0x" + hex + ")";
}

size_t firstCompressedRecord(const PerfDataFile& f) {
  size_t i = 0;
  while (i < f.records.size() && f.records[i].type != kCompressedRecord) ++i;
  return i;
}

TEST(PerfDataLayouts, FolderWithoutDataFiles) {
  TempDir dir;
  fs::create_directories(dir.path("t.data"));
  fs::copy_file(testData(kFolder + "/data"), dir.path("t.data/data"));
  auto r = importers::importTrace(dir.path("t.data"));
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("t.data/data: byte offset"), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().message().find("but the folder has none with data"), std::string::npos) << r.error().message();
}

TEST(PerfDataLayouts, CorruptDataFileNamesItself) {
  TempDir dir;
  const std::string folder = dir.path("t.data");
  fs::copy(testData(kFolder), folder);
  auto part = readBytes(folder + "/data.1");
  const auto records = splitRecords(part);
  ASSERT_GT(records.size(), 20u);
  size_t at = 0;
  for (size_t i = 0; i < records.size() / 2; ++i) at += records[i].bytes.size();
  const uint16_t zero = 0;
  std::memcpy(part.data() + at + 6, &zero, 2);
  fs::remove(folder + "/data.1");
  std::ofstream(folder + "/data.1", std::ios::binary).write(reinterpret_cast<const char*>(part.data()), static_cast<std::streamsize>(part.size()));
  auto r = importers::importTrace(folder);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_TRUE(r->model->partial);
  ASSERT_TRUE(r->error);
  EXPECT_EQ(r->error->message(), locatedAt(folder + "/data.1", at) + ": record size 0 is smaller than a record header (type 9)");
  EXPECT_GT(r->model->eventCount, 50u);
}

// perf writes its header records (tracing data, attributes, features) to the
// header file only: in a data.N file they are skipped with a diagnostic there,
// and a tracing-data record's payload is read from that file's bytes, not the header's.
TEST(PerfDataLayouts, HeaderRecordsInADataFileAreSkipped) {
  TempDir dir;
  const std::string folder = dir.path("t.data");
  fs::copy(testData(kFolder), folder);
  auto part = readBytes(folder + "/data.1");
  const uint64_t at = part.size();
  const std::vector<uint8_t> payload(1 << 16, 0x41);  // larger than the header file's data section
  std::vector<uint8_t> rec = recordOf(66, 16, nullptr, 0);  // PERF_RECORD_HEADER_TRACING_DATA, u32 size
  const auto size32 = static_cast<uint32_t>(payload.size());
  std::memcpy(rec.data() + 8, &size32, 4);
  part.insert(part.end(), rec.begin(), rec.end());
  part.insert(part.end(), payload.begin(), payload.end());
  fs::remove(folder + "/data.1");
  std::ofstream(folder + "/data.1", std::ios::binary).write(reinterpret_cast<const char*>(part.data()), static_cast<std::streamsize>(part.size()));
  auto m = importOk(folder);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->eventCount, 202u);
  bool named = false;
  for (const auto& r : m->diagnostics.records())
    named |= r.format() == locatedAt(folder + "/data.1", at) + ": tracing data in a data.N file (perf writes it to the header file); skipped";
  EXPECT_TRUE(named);
}

// Bytes flipped inside the zstd data of the first compressed record: zstd
// rejects them there (its frame checks), and nothing after it is read.
TEST(PerfDataLayouts, CorruptCompressedDataIsLocated) {
  auto bytes = readBytes(testData(kCompressed));
  PerfDataFile f(bytes);
  const size_t first = firstCompressedRecord(f);
  ASSERT_LT(first, f.records.size());
  const uint64_t off = f.originalOffset(first);
  for (uint64_t p = off + 8 + 4; p < off + 8 + 64 && p < bytes.size(); ++p) bytes[p] ^= 0xa5;
  TempDir dir;
  const std::string path = dir.write("bad-z.data", bytes);
  auto r = importers::importTrace(path);
  const std::string message = r.has_value() ? (r->error ? r->error->message() : "") : r.error().message();
  EXPECT_EQ(message.find(path + ": byte offset " + std::to_string(off) + " "), 0u) << message;
  EXPECT_NE(message.find("zstd"), std::string::npos) << message;
}

// A compressed record whose data decompresses to a record declaring 4 bytes.
TEST(PerfDataLayouts, BadRecordInsideCompressedData) {
  auto bytes = readBytes(testData(kCompressed));
  PerfDataFile f(bytes);
  const size_t first = firstCompressedRecord(f);
  ASSERT_LT(first, f.records.size());
  // One frame of its own is a valid start of the file's zstd stream.
  const uint8_t bad[8] = {9, 0, 0, 0, 0, 0, 4, 0};
  std::vector<uint8_t> frame(ZSTD_compressBound(sizeof bad));
  const size_t framed = ZSTD_compress(frame.data(), frame.size(), bad, sizeof bad, 1);
  ASSERT_FALSE(ZSTD_isError(framed));
  frame.resize(framed);
  const auto rec = recordOf(kCompressedRecord, 0, frame.data(), frame.size());
  f.records.insert(f.records.begin() + static_cast<std::ptrdiff_t>(first), {kCompressedRecord, rec});
  TempDir dir;
  const std::string path = dir.write("bad-inner.data", f.assemble());
  auto r = importers::importTrace(path);
  const std::string message = r.has_value() ? (r->error ? r->error->message() : "") : r.error().message();
  EXPECT_NE(message.find(path + ": byte offset " + std::to_string(f.originalOffset(first)) + " "), std::string::npos)
      << message;
  EXPECT_NE(message.find("decompressed byte 0: record size 4 is smaller than a record header"), std::string::npos)
      << message;
}

}  // namespace
