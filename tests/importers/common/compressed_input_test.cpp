// Traces shared compressed: a gzip or zstd file imports as the trace it holds,
// whatever the format inside; a cut or corrupt stream keeps what came before
// and says where it broke; other compressions are named with the command that
// opens them; nothing names or leaves behind the decompressed copy.
#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <stop_token>
#include <tuple>
#include <utility>
#include <string>
#include <vector>

#include "core/topology_snapshot.h"
#include "importers/compressed_input.h"
#include "importers/importer.h"
#include "support/scratch_dir.h"

namespace {

namespace fs = std::filesystem;
using test_support::ScratchDir;

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// One gzip member (RFC 1952), as `gzip` writes it.
std::string gzipMember(const std::string& data) {
  z_stream s{};
  EXPECT_EQ(deflateInit2(&s, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&s, static_cast<uLong>(data.size())) + 64, '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  s.avail_in = static_cast<uInt>(data.size());
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  s.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&s, Z_FINISH), Z_STREAM_END);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

// One zstd frame (RFC 8878), as `zstd` writes it.
std::string zstdFrame(const std::string& data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  const size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

// What a model says, enough to tell two imports of different bytes apart.
std::string summary(const core::TraceModel& m) {
  std::string s = m.format + " events=" + std::to_string(m.eventCount) + " threads=" +
                  std::to_string(m.threads.size()) + " states=" + std::to_string(m.threadStates.size()) +
                  " wakeups=" + std::to_string(m.wakeups.size()) + " first=" + std::to_string(m.firstTs) +
                  " last=" + std::to_string(m.lastTs);
  for (const auto& cpu : m.cpuSlices) s += " slices=" + std::to_string(cpu.size());
  for (size_t c = 0; c < core::kDiagCount; ++c)
    if (const uint64_t n = m.diagnostics.count(static_cast<core::DiagCode>(c)))
      s += " " + std::string(core::diagName(static_cast<core::DiagCode>(c))) + "=" + std::to_string(n);
  return s;
}

// A trace of each format the registry reads from one file, and what it imports to uncompressed.
const char* const kFixtures[] = {
    "../../resources/demo/pipe-and-hogs.txt",  // ftrace text
    "tracedat/tiny-v6.dat",                    // trace.dat (libtracecmd opens the copy)
    "perf/sleep-0.1.perf.data",                // perf.data
    "perf/sleep-0.1.perf-script-ns.txt",       // perf script text
};

std::string fixture(const char* name) { return (fs::path(SCHEDLAB_TEST_DATA) / name).string(); }

TEST(CompressedTraces, GzipAndZstdFilesImportAsTheTraceTheyHold) {
  ScratchDir dir("compressed-formats");
  for (const char* name : kFixtures) {
    SCOPED_TRACE(name);
    const std::string original = fixture(name);
    auto plain = importers::importTrace(original);
    ASSERT_TRUE(plain) << plain.error().message();
    ASSERT_GT(plain->model->eventCount, 0u);
    const std::string bytes = readFile(original);
    const std::string base = fs::path(name).filename().string();
    for (const auto& [suffix, packed, method] :
         {std::tuple{".gz", gzipMember(bytes), "gzip"}, std::tuple{".zst", zstdFrame(bytes), "zstd"}}) {
      const std::string path = dir.file(base + suffix);
      writeFile(path, packed);
      auto r = importers::importTrace(path);
      ASSERT_TRUE(r) << r.error().message();
      EXPECT_FALSE(r->error) << r->error->message();
      EXPECT_EQ(summary(*r->model), summary(*plain->model)) << suffix;
      EXPECT_EQ(r->model->sourceFiles, std::vector<std::string>{path});
      EXPECT_EQ(r->model->metadata.at("compression"), method);
    }
  }
}

// The decompressed copy holds the very bytes of the original, across gzip
// members (`cat a.gz b.gz`, pigz) and zstd frames, and across the
// decompressor's chunks (the demo's text is repeated to pass several).
TEST(CompressedTraces, MembersFramesAndChunksDecompressToTheOriginalBytes) {
  ScratchDir dir("compressed-members");
  std::string text = readFile(fixture("../../resources/demo/pipe-and-hogs.txt"));
  while (text.size() < (size_t{9} << 20)) text += text;  // beyond two 4 MiB output chunks
  const size_t half = text.size() / 2 + 12345;
  const std::string members = gzipMember(text.substr(0, half)) + gzipMember(text.substr(half));
  const std::string frames = zstdFrame(text.substr(0, half)) + zstdFrame(text.substr(half));
  // And a few KiB that inflate to many output chunks: the decompressor holds
  // output back after it has read its last input.
  const std::string zeros(size_t{20} << 20, '\0');
  for (const auto& [packed, c, original] :
       {std::tuple{members, importers::Compression::Gzip, &std::as_const(text)},
        std::tuple{frames, importers::Compression::Zstd, &std::as_const(text)},
        std::tuple{gzipMember(zeros), importers::Compression::Gzip, &zeros},
        std::tuple{zstdFrame(zeros), importers::Compression::Zstd, &zeros}}) {
    const std::string path = dir.file("two-parts");
    writeFile(path, packed);
    std::string copyPath;
    {
      auto copy = importers::decompressToTemp(path, c, {});
      ASSERT_TRUE(copy) << copy.error().message();
      EXPECT_FALSE(copy->damage());
      EXPECT_TRUE(readFile(copy->path()) == *original) << importers::compressionName(c) << " of " << original->size();
      copyPath = copy->path();
    }
    EXPECT_FALSE(fs::exists(fs::path(copyPath).parent_path()));
  }
}

TEST(CompressedTraces, ACutOrCorruptStreamKeepsWhatCameBeforeAndSaysWhere) {
  ScratchDir dir("compressed-damaged");
  const std::string text = readFile(fixture("../../resources/demo/pipe-and-hogs.txt"));
  auto whole = importers::importTrace(fixture("../../resources/demo/pipe-and-hogs.txt"));
  ASSERT_TRUE(whole);
  const std::string packed = gzipMember(text);

  // Cut at two thirds: the stream ends where the file does.
  for (const auto& [name, stream, method] :
       {std::tuple{"cut.txt.gz", packed, "gzip"}, std::tuple{"cut.txt.zst", zstdFrame(text), "zstd"}}) {
    SCOPED_TRACE(method);
    const std::string cut = dir.file(name);
    const size_t cutAt = stream.size() * 2 / 3;
    writeFile(cut, stream.substr(0, cutAt));
    auto r = importers::importTrace(cut);
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_TRUE(r->error);
    const std::string expected =
        cut + ": byte offset " + std::to_string(cutAt) + ": " + method + " data ends early (truncated)";
    EXPECT_EQ(r->error->message().rfind(expected, 0), 0u) << r->error->message();
    EXPECT_GT(r->model->eventCount, 0u);
    EXPECT_LT(r->model->eventCount, whole->model->eventCount);
    // The stream's end, at its offset in the compressed file (the text's cut last line is another).
    bool streamCut = false;
    for (const auto& rec : r->model->diagnostics.records())
      streamCut |= rec.code == core::DiagCode::truncated_input && rec.file == cut && rec.byteOffset == cutAt;
    EXPECT_TRUE(streamCut);
    EXPECT_TRUE(r->model->partial);
  }

  // Bytes overwritten in the middle: decoding stops at or after them, never before.
  std::string corrupt = packed;
  const size_t at = packed.size() / 2;
  for (size_t i = 0; i < 16; ++i) corrupt[at + i] = static_cast<char>(0xff);
  const std::string bad = dir.file("bad.txt.gz");
  writeFile(bad, corrupt);
  auto r = importers::importTrace(bad);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_TRUE(r->error);
  const std::string& why = r->error->message();
  ASSERT_EQ(why.rfind(bad + ": byte offset ", 0), 0u) << why;
  const uint64_t stoppedAt = std::stoull(why.substr((bad + ": byte offset ").size()));
  EXPECT_GE(stoppedAt, at);
  EXPECT_LE(stoppedAt, packed.size());
  EXPECT_NE(why.find("gzip data corrupt"), std::string::npos) << why;
  EXPECT_GT(r->model->eventCount, 0u);
  EXPECT_LT(r->model->eventCount, whole->model->eventCount);

  // Corrupt from its first block: nothing to keep, and an error rather than an empty model.
  std::string headless = packed;
  for (size_t i = 10; i < 40; ++i) headless[i] = static_cast<char>(0xff);
  writeFile(bad, headless);
  auto none = importers::importTrace(bad);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message().rfind(bad + ": byte offset ", 0), 0u) << none.error().message();
}

// Damage anywhere, of any kind: the decompressor ends (no hang, no crash), and
// names the damage at a byte offset inside the file. Random, from a fixed
// seed: the same cases every run.
TEST(CompressedTraces, DamageAnywhereEndsAndIsNamedInsideTheFile) {
  ScratchDir dir("compressed-mutated");
  const std::string text = readFile(fixture("perf/sleep-0.1.perf-script-ns.txt"));
  std::mt19937_64 rng(20261206);
  for (const auto& [packed, c] : {std::pair{gzipMember(text) + gzipMember(text), importers::Compression::Gzip},
                                  std::pair{zstdFrame(text) + zstdFrame(text), importers::Compression::Zstd}}) {
    const std::string original = text + text;
    for (int round = 0; round < 150; ++round) {
      std::string damaged = packed;
      switch (round % 3) {
        case 0: damaged.resize(rng() % damaged.size()); break;                    // cut
        case 1: damaged[rng() % damaged.size()] ^= static_cast<char>(1 + rng() % 255); break;  // a byte changed
        case 2: damaged.insert(rng() % damaged.size(), std::string(1 + rng() % 64, static_cast<char>(rng())));  // bytes in
      }
      const std::string path = dir.file("damaged");
      writeFile(path, damaged);
      SCOPED_TRACE(std::string(importers::compressionName(c)) + " round " + std::to_string(round));
      auto copy = importers::decompressToTemp(path, c, {});
      if (!copy) {
        EXPECT_EQ(copy.error().message().rfind(path + ": byte offset ", 0), 0u) << copy.error().message();
        continue;
      }
      if (const auto& damage = copy->damage()) {
        EXPECT_LE(damage->offset, damaged.size());
      }
      // A cut stream keeps a prefix of the original. (A changed byte may
      // decompress to other bytes before a checksum at the end of its member
      // or frame tells: gzip -d and zstd -d write those too.)
      if (round % 3 == 0) {
        EXPECT_TRUE(original.starts_with(readFile(copy->path())));
      }
    }
  }
}

TEST(CompressedTraces, OtherCompressionsAreNamedWithTheCommandThatOpensThem) {
  ScratchDir dir("compressed-others");
  const std::pair<std::string, std::string> cases[] = {
      {std::string("\xfd" "7zXZ\0\0\x04", 8), "xz-compressed (byte offset 0)"},
      {"BZh91AY&SY", "bzip2-compressed (byte offset 0)"},
      {std::string("\x04\x22\x4d\x18\x64\x40\xa7", 7), "lz4-compressed (byte offset 0)"},
  };
  for (const auto& [bytes, expected] : cases) {
    const std::string path = dir.file("trace.txt.x");
    writeFile(path, bytes + std::string(100, 'x'));
    auto r = importers::importTrace(path);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message().rfind(path + ": " + expected, 0), 0u) << r.error().message();
    const std::string tool = expected.substr(0, expected.find('-'));
    EXPECT_NE(r.error().message().find("decompress it first (" + tool + " -dk FILE)"), std::string::npos)
        << r.error().message();
  }
  // gzip, but of nothing, and of something that is no trace.
  const std::string path = dir.file("odd.gz");
  writeFile(path, gzipMember(""));
  auto empty = importers::importTrace(path);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().message(), path + ": gzip-compressed and decompresses to nothing");
  writeFile(path, gzipMember(std::string(5000, '\x01')));
  auto unknown = importers::importTrace(path);
  ASSERT_FALSE(unknown);
  const std::string noFormat = ": gzip-compressed, and what it decompresses to is of no known format";
  EXPECT_EQ(unknown.error().message().rfind(path + noFormat, 0), 0u)
      << unknown.error().message();
}

// The importer reads a copy in the temp folder; the user only ever sees the
// file they gave, and the copy is gone when the import is.
class TempFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* old = std::getenv("TMPDIR")) m_oldTmp = old;
    m_tmp.emplace("compressed-tmpdir");
    m_dir.emplace("compressed-names");
    ::setenv("TMPDIR", m_tmp->path().c_str(), 1);
  }
  void TearDown() override {
    if (m_oldTmp) ::setenv("TMPDIR", m_oldTmp->c_str(), 1);
    else ::unsetenv("TMPDIR");
  }
  bool tempFolderEmpty() const { return fs::is_empty(m_tmp->path()); }
  std::string tempFolder() const { return m_tmp->path().string(); }
  const ScratchDir& dir() const { return *m_dir; }

 private:
  std::optional<ScratchDir> m_tmp, m_dir;
  std::optional<std::string> m_oldTmp;
};

TEST_F(TempFolder, DiagnosticsNameTheCompressedFileAndTheCopyIsRemoved) {
  // Lines that are not events: reported with their line numbers in the decompressed text.
  const std::string path = dir().file("garbage_lines.txt.gz");
  writeFile(path, gzipMember(readFile(fixture("ftrace/bad/garbage_lines.txt"))));
  auto plain = importers::importTrace(fixture("ftrace/bad/garbage_lines.txt"));
  ASSERT_TRUE(plain);
  auto r = importers::importTrace(path);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(tempFolderEmpty());
  const auto& records = r->model->diagnostics.records();
  ASSERT_EQ(records.size(), plain->model->diagnostics.records().size());
  ASSERT_FALSE(records.empty());
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i].file, path + " (decompressed)");
    EXPECT_EQ(records[i].line, plain->model->diagnostics.records()[i].line);
    EXPECT_EQ(records[i].message.find(tempFolder()), std::string::npos) << records[i].message;
  }

  // Cancelled before it began: an error, and nothing left in the temp folder.
  std::stop_source stop;
  stop.request_stop();
  importers::ImportOptions cancelled;
  cancelled.stop = stop.get_token();
  auto none = importers::importTrace(path, cancelled);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message(), path + ": import cancelled");
  EXPECT_TRUE(tempFolderEmpty());
}

// `schedlab-cli record` saves TRACE.topology beside TRACE; compressing the
// trace alone leaves it under the name the trace had.
TEST(CompressedTraces, FilesBesideTheUncompressedNameStillCount) {
  ScratchDir dir("compressed-beside");
  const std::string plain = dir.file("demo.txt");
  const std::string packed = plain + ".zst";
  writeFile(packed, zstdFrame(readFile(fixture("../../resources/demo/pipe-and-hogs.txt"))));
  std::ofstream(core::topologySnapshotPath(plain))
      << "cpu/cpu0/topology/core_id:0\ncpu/cpu0/topology/physical_package_id:0\n"
         "cpu/cpu1/topology/core_id:0\ncpu/cpu1/topology/physical_package_id:0\n";
  auto r = importers::importTrace(packed);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->model->topology.cores().size(), 1u);
  EXPECT_EQ(r->model->topology.cores()[0], (std::vector<int>{0, 1}));
}

}  // namespace
