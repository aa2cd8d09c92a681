// Bad perf.data input, table-driven: every case must end in either a model or a
// clear error that names the file and the byte offset — never a crash or a
// hang — and a body that turns bad part-way keeps its valid prefix.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <random>

#include "importers/importer.h"
#include "perf_test_support.h"

// Under LeakSanitizer (asan preset): libtraceevent 1.7 leaks a few bytes on
// some error paths of tep_parse_format when a flipped bit garbles an event
// format. Third-party code; our own allocations stay checked.
extern "C" const char* __lsan_default_suppressions() { return "leak:libtraceevent.so\n"; }

namespace {

using namespace perf_test;
using Bytes = std::vector<uint8_t>;

const std::string kFile = "perf/sleep-0.1.perf.data";
const std::string kPipe = "perf/sleep-0.05.pipe.perf.data";

void put64(Bytes& b, size_t off, uint64_t v) { std::memcpy(b.data() + off, &v, 8); }
void put16(Bytes& b, size_t off, uint16_t v) { std::memcpy(b.data() + off, &v, 2); }

// Offset of the n-th sample record, walking the data section.
size_t nthSample(const Bytes& b, size_t n) {
  PerfDataFile f(b);
  for (size_t i = 0, seen = 0; i < f.records.size(); ++i)
    if (f.records[i].type == 9 && seen++ == n) return f.originalOffset(i);
  return 0;
}

struct Outcome {
  bool ok = false;
  bool partial = false;
  uint64_t events = 0;
  std::string message;
};

Outcome importBytes(const TempDir& dir, const std::string& name, const Bytes& bytes) {
  const std::string path = dir.write(name, bytes);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = importers::importTrace(path);
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 10.0) << name << " took too long";
  Outcome o;
  if (!r) {
    o.message = r.error().message();
  } else {
    o.ok = !r->error;
    o.partial = r->model->partial;
    o.events = r->model->eventCount;
    if (r->error) o.message = r->error->message();
  }
  if (!o.ok) {
    EXPECT_NE(o.message.find(path), std::string::npos) << "error does not name the file: " << o.message;
  }
  return o;
}

struct BadCase {
  std::string name;
  std::function<void(Bytes&)> mutate;
  std::string message;       // fragment the error must contain
  bool keepsPrefix = false;  // a partial model with events must come back
};

class PerfDataBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(PerfDataBadInput, FailsClearly) {
  const auto& c = GetParam();
  Bytes b = readBytes(testData(kFile));
  c.mutate(b);
  TempDir dir;
  const Outcome o = importBytes(dir, c.name + ".data", b);
  ASSERT_FALSE(o.ok) << c.name << " was accepted";
  EXPECT_NE(o.message.find(c.message), std::string::npos) << o.message;
  if (c.keepsPrefix) {
    EXPECT_TRUE(o.partial) << o.message;
    EXPECT_GT(o.events, 0u);
  }
}

const Bytes kOriginal = [] { return readBytes(testData(kFile)); }();

INSTANTIATE_TEST_SUITE_P(
    Cases, PerfDataBadInput,
    ::testing::Values(
        BadCase{"empty", [](Bytes& b) { b.clear(); }, "empty file (byte offset 0)"},
        BadCase{"magic_only", [](Bytes& b) { b.resize(8); }, "byte offset 0"},
        BadCase{"version1_magic", [](Bytes& b) { std::memcpy(b.data(), "PERFFILE", 8); }, "version 1"},
        BadCase{"header_size", [](Bytes& b) { put64(b, 8, 4096); }, "byte offset 8 (0x8): unsupported perf.data header size 4096"},
        BadCase{"attr_size_zero", [](Bytes& b) { put64(b, 16, 0); }, "byte offset 16 (0x10): implausible attr_size 0"},
        BadCase{"attr_size_huge", [](Bytes& b) { put64(b, 16, uint64_t{1} << 40); }, "implausible attr_size"},
        BadCase{"attrs_outside", [](Bytes& b) { put64(b, 24, uint64_t{1} << 50); }, "attrs section"},
        BadCase{"attrs_size_odd", [](Bytes& b) { put64(b, 32, PerfDataFile::u64(b, 32) - 1); }, "not a multiple of attr_size"},
        BadCase{"ids_outside",
                [](Bytes& b) { put64(b, PerfDataFile::u64(b, 24) + PerfDataFile::u64(b, 16) - 16, uint64_t{1} << 45); },
                "ids of event 0"},
        BadCase{"data_size_huge", [](Bytes& b) { put64(b, 48, uint64_t{1} << 40); }, "file ends inside the data section"},
        BadCase{"data_offset_beyond_end", [](Bytes& b) { put64(b, 40, uint64_t{1} << 62); }, "data section offset"},
        BadCase{"cut_after_data",
                [](Bytes& b) { b.resize(PerfDataFile::u64(b, 40) + PerfDataFile::u64(b, 48) / 2); },
                "file ends inside the data section"},
        BadCase{"no_tracing_feature", [](Bytes& b) { b[72] &= static_cast<uint8_t>(~2u); }, "no tracing data feature"},
        BadCase{"tracing_magic",
                [](Bytes& b) {
                  const uint64_t table = PerfDataFile::u64(b, 40) + PerfDataFile::u64(b, 48);
                  b[PerfDataFile::u64(b, table)] = 0;
                },
                "cannot read the tracing data"},
        BadCase{"tracing_header_page_huge",
                [](Bytes& b) {
                  const uint64_t table = PerfDataFile::u64(b, 40) + PerfDataFile::u64(b, 48);
                  const uint64_t td = PerfDataFile::u64(b, table);
                  // magic(3) "tracing"(7) "0.6\0"(4) endian(1) long(1) page(4) "header_page\0"(12)
                  put64(b, td + 32, uint64_t{1} << 60);
                },
                "tracing data ends inside header_page"},
        BadCase{"record_size_zero", [](Bytes& b) { put16(b, nthSample(b, 40) + 6, 0); },
                "record size 0 is smaller than a record header", true},
        BadCase{"record_size_four", [](Bytes& b) { put16(b, nthSample(b, 40) + 6, 4); },
                "record size 4 is smaller than a record header", true},
        BadCase{"record_runs_past_data",
                [](Bytes& b) {
                  PerfDataFile f(b);
                  put16(b, f.originalOffset(f.records.size() - 1) + 6, 0xfff8);
                },
                "runs past the end of the data", true},
        // A sample turned into a compressed record: its bytes are no zstd frame.
        BadCase{"compressed_record", [](Bytes& b) { std::memcpy(b.data() + nthSample(b, 40), "\x51\0\0\0", 4); },
                "zstd-compressed record: zstd cannot decompress the data after decompressed byte 0", true}),
    [](const auto& tc) { return tc.param.name; });

// The error names the exact offset of the bad record.
TEST(PerfDataBadInputOffsets, NamesTheBadRecord) {
  Bytes b = kOriginal;
  const size_t at = nthSample(b, 100);
  put16(b, at + 6, 2);
  TempDir dir;
  const Outcome o = importBytes(dir, "bad-record.data", b);
  ASSERT_FALSE(o.ok);
  char expect[64];
  std::snprintf(expect, sizeof expect, "byte offset %zu (0x%zx)", at, at);
  EXPECT_NE(o.message.find(expect), std::string::npos) << o.message;
  // Events before the bad record were kept (the first rounds).
  EXPECT_TRUE(o.partial);
  EXPECT_GE(o.events, 50u);
}

// The recording with `text` written over an event format's bytes, from `skip`
// bytes into the first `field` after "name: EVENT".
Bytes withFormatOverwritten(std::string_view event, std::string_view field, size_t skip, std::string_view text) {
  Bytes b = kOriginal;
  const std::string name = "name: " + std::string(event) + "\n";
  const auto at = std::search(b.begin(), b.end(), name.begin(), name.end());
  const auto found = std::search(at, b.end(), field.begin(), field.end());
  EXPECT_NE(found, b.end()) << event << " " << field;
  if (found != b.end()) std::copy(text.begin(), text.end(), found + static_cast<std::ptrdiff_t>(skip));
  return b;
}

// A byte outside printable ASCII starting a token of an event format
// ("char comm[\x9d6]" in sched_wakeup's, the mutation perfdata_fuzzer found)
// crashed libtraceevent 1.7, so every import of the file; the format is left
// out instead. Every record is still read and counted (324, the lines of the
// stored perf script text: 159 switches, 80 + 80 wakeups, 3 migrations, one
// exec, one exit); only the wakeups' fields are not decoded.
TEST(PerfDataBadInputFormats, BinaryBytesInAFormatDoNotReachLibtraceevent) {
  const Bytes b = withFormatOverwritten("sched_wakeup", "comm[16]", 5, "\x9d");
  TempDir dir;
  const Outcome o = importBytes(dir, "binary-format.data", b);
  ASSERT_TRUE(o.ok) << o.message;
  EXPECT_EQ(o.events, 324u) << o.message;
}

// A format cut inside a field's brackets ("char next_comm[" and then the
// "print fmt:" the importer stops at, the mutation perfdata_fuzzer found on
// 2026-12-07) crashed libtraceevent 1.7 too. Overwritten in place, so every
// size stays: the format is left out, every record still read and counted
// (324, as above); only the switches' fields are not decoded.
TEST(PerfDataBadInputFormats, AFormatCutInsideBracketsDoesNotReachLibtraceevent) {
  const Bytes b = withFormatOverwritten("sched_switch", "next_comm[16];", 10, "print fmt:");
  TempDir dir;
  const Outcome o = importBytes(dir, "cut-format.data", b);
  ASSERT_TRUE(o.ok) << o.message;
  EXPECT_EQ(o.events, 324u) << o.message;
}

// Cut anywhere: the header, the attrs, the data, the feature sections.
TEST(PerfDataBadInputSweep, TruncatedAnywhere) {
  const Bytes& full = kOriginal;
  TempDir dir;
  std::vector<size_t> cuts;
  for (size_t n = 1; n < 200; n += 7) cuts.push_back(n);
  for (size_t n = 200; n < full.size(); n += 613) cuts.push_back(n);
  cuts.push_back(full.size() - 1);
  size_t failed = 0;
  for (size_t n : cuts) {
    const Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    const Outcome o = importBytes(dir, "cut.data", cut);
    if (!o.ok) {
      ++failed;
      EXPECT_NE(o.message.find("byte offset"), std::string::npos) << "cut at " << n << ": " << o.message;
    }
  }
  // Only cuts inside the trailing optional features can still import.
  EXPECT_GT(failed, cuts.size() * 9 / 10);
}

// Pipe data has no index to lose: a cut keeps everything before it.
TEST(PerfDataBadInputSweep, PipeTruncatedKeepsPrefix) {
  const Bytes full = readBytes(testData(kPipe));
  TempDir dir;
  uint64_t previous = 0;
  size_t partials = 0;
  for (size_t n = 16; n < full.size(); n += 389) {
    const Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    const Outcome o = importBytes(dir, "cut.pipe.data", cut);
    if (o.ok) continue;  // cut right at a record boundary
    EXPECT_NE(o.message.find("byte offset"), std::string::npos) << "cut at " << n << ": " << o.message;
    if (o.partial) {
      ++partials;
      EXPECT_GE(o.events, previous) << "cut at " << n;
      previous = o.events;
    }
  }
  EXPECT_GT(partials, 10u);
}

// Single flipped bits all over the file: anything may come out, but no crash,
// no hang, and any error names the file.
TEST(PerfDataBadInputSweep, FlippedBits) {
  for (const std::string& fixture : {kFile, kPipe}) {
    const Bytes full = readBytes(testData(fixture));
    TempDir dir;
    std::mt19937_64 rng(42);
    for (int i = 0; i < 300; ++i) {
      Bytes b = full;
      const size_t at = rng() % b.size();
      b[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
      // Half the flips land in the headers, where they matter most.
      if (i % 2 == 0) b[rng() % std::min<size_t>(b.size(), 2048)] ^= static_cast<uint8_t>(1u << (rng() % 8));
      importBytes(dir, "flip.data", b);
    }
  }
}

// Random record sizes, huge lengths inside samples.
TEST(PerfDataBadInputSweep, WrongRecordAndFieldSizes) {
  std::mt19937_64 rng(9);
  TempDir dir;
  for (int i = 0; i < 100; ++i) {
    Bytes b = kOriginal;
    const size_t at = nthSample(b, rng() % 300);
    switch (i % 4) {
      case 0: put16(b, at + 6, static_cast<uint16_t>(rng())); break;                  // record size
      case 1: put64(b, at + 48 + 8, (rng() << 20) | 0xffffffffu); break;             // PERIOD+RAW size
      case 2: put64(b, at + 40, rng()); break;                                        // cpu
      case 3: std::memset(b.data() + at + 60, 0xff, 16); break;                       // raw payload
    }
    importBytes(dir, "sizes.data", b);
  }
}

}  // namespace
