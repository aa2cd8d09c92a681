// Bad trace.dat input, table-driven over the fixtures: cut at many offsets,
// flipped bytes, random bytes, huge declared sizes, wrong versions. Every case
// must end (no crash, no hang) in either a one-line error naming the file and a
// byte offset, or a model — partial, with such an error, when the file was cut
// or turned corrupt part-way.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <random>

#include "importers/registered.h"
#include "importers/tracedat/tracedat_layout.h"
#include "tracedat_test_support.h"

namespace {

using namespace tracedat_test;

enum class Expect { Error, Partial, ErrorOrPartial, Anything };

struct Outcome {
  bool error = false;      // no model
  bool partial = false;    // a model, marked partial
  uint64_t events = 0;
  std::string message;
};

Outcome run(const std::vector<uint8_t>& bytes) {
  TempFile file(bytes);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = importers::importTrace(file.path());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 20.0) << "import took too long";
  Outcome o;
  if (!r) {
    o.error = true;
    o.message = r.error().message();
  } else {
    o.events = r->model->eventCount;
    o.partial = r->model->partial;
    if (r->error) o.message = r->error->message();
    EXPECT_EQ(o.partial, r->error.has_value());
  }
  if (!o.message.empty()) {
    EXPECT_EQ(o.message.find(file.path()), 0u) << o.message;
    EXPECT_NE(o.message.find("byte offset"), std::string::npos) << o.message;
    EXPECT_EQ(o.message.find('\n'), std::string::npos) << o.message;
  }
  return o;
}

void check(const Outcome& o, Expect e) {
  switch (e) {
    case Expect::Error:
      EXPECT_TRUE(o.error) << "expected an error, got a model of " << o.events << " events";
      break;
    case Expect::Partial:
      EXPECT_TRUE(o.partial) << (o.error ? "expected a partial model, got: " + o.message : "model not partial");
      break;
    case Expect::ErrorOrPartial:
      EXPECT_TRUE(o.error || o.partial) << "a damaged file imported as if it were whole";
      break;
    case Expect::Anything:
      break;
  }
}

std::vector<uint8_t> cut(const std::vector<uint8_t>& bytes, size_t size) {
  return {bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(std::min(size, bytes.size()))};
}

const importers::tracedat::TraceLayout& layoutOf(const std::string& path) {
  static std::map<std::string, importers::tracedat::TraceLayout> cache;
  auto it = cache.find(path);
  if (it == cache.end()) {
    auto file = importers::tracedat::TraceFile::open(path);
    auto layout = importers::tracedat::readLayout(**file);
    it = cache.emplace(path, std::move(*layout)).first;
  }
  return it->second;
}

// --- Cut at any offset ---

TEST(TraceDatBadInput, CutAtManyOffsets) {
  for (const auto& path : fixtures()) {
    const auto bytes = readBytes(path);
    const auto& layout = layoutOf(path);
    std::vector<size_t> offsets;
    for (size_t i = 0; i < 600; ++i) offsets.push_back(i);  // every offset of the header
    for (size_t p = 4096; p < bytes.size(); p += 4096)
      for (size_t d : {size_t{0}, size_t{1}, size_t{7}, size_t{4095}}) offsets.push_back(p + d);
    std::mt19937 rng(7);
    for (int i = 0; i < 64; ++i) offsets.push_back(rng() % bytes.size());
    offsets.push_back(bytes.size() - 1);
    uint64_t keptPrefix = 0;
    for (size_t off : offsets) {
      if (off >= bytes.size()) continue;
      SCOPED_TRACE(path + " cut at " + std::to_string(off));
      const Outcome o = run(cut(bytes, off));
      check(o, Expect::ErrorOrPartial);
      // Once a whole CPU's data is in, its events are kept.
      if (layout.version == 6 && off > layout.cpuData[0].offset + layout.cpuData[0].size) {
        EXPECT_TRUE(o.partial) << o.message;
        EXPECT_GT(o.events, 0u);
        keptPrefix = std::max(keptPrefix, o.events);
      }
    }
    if (layout.version == 6) {
      EXPECT_GT(keptPrefix, 800u);
    }
  }
}

TEST(TraceDatBadInput, CutCompressedFileKeepsWhatItsChunksHold) {
  // trace-cmd writes the option that lists the CPU data after the data, so a
  // cut v7 file has lost it; the importer walks the flyrecord section instead.
  const auto bytes = readBytes(fixture("tiny-v7-zstd.dat"));
  const auto& layout = layoutOf(fixture("tiny-v7-zstd.dat"));
  uint64_t end = 0;
  for (const auto& ref : layout.cpuData) end = std::max(end, ref.offset + ref.size + 4);
  const Outcome whole = run(cut(bytes, end));
  EXPECT_TRUE(whole.partial) << whole.message;
  EXPECT_EQ(whole.events, 889u);
  EXPECT_NE(whole.message.find("listing the CPU data"), std::string::npos) << whole.message;
  // Cut inside CPU 1's chunks: CPU 0 complete, CPU 1 up to the cut.
  const Outcome half = run(cut(bytes, layout.cpuData[1].offset + layout.cpuData[1].size / 2));
  EXPECT_TRUE(half.partial) << half.message;
  EXPECT_GT(half.events, 0u);
  EXPECT_LT(half.events, 889u);
}

// --- Flipped and random bytes ---

TEST(TraceDatBadInput, FlippedBytes) {
  for (const auto& path : fixtures()) {
    const auto bytes = readBytes(path);
    std::mt19937 rng(11);
    for (int i = 0; i < 300; ++i) {
      auto mutated = bytes;
      const int flips = 1 + static_cast<int>(rng() % 4);
      // Half the cases aim at the metadata before the data, where sizes live.
      const size_t span = i % 2 ? mutated.size() : std::min<size_t>(mutated.size(), 40000);
      std::string where;
      for (int f = 0; f < flips; ++f) {
        const size_t pos = rng() % span;
        mutated[pos] ^= static_cast<uint8_t>(1u << (rng() % 8));
        if (rng() % 4 == 0) mutated[pos] = static_cast<uint8_t>(rng());
        where += " " + std::to_string(pos);
      }
      SCOPED_TRACE(path + " flipped at" + where);
      run(mutated);
    }
  }
}

TEST(TraceDatBadInput, RandomBytes) {
  std::mt19937 rng(3);
  const auto good = readBytes(fixture("tiny-v7-zstd.dat"));
  for (int i = 0; i < 60; ++i) {
    std::vector<uint8_t> bytes(1 + rng() % 20000);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    if (i % 3 == 1) std::memcpy(bytes.data(), "\x17\x08\x44tracing", std::min<size_t>(10, bytes.size()));
    if (i % 3 == 2 && bytes.size() > 48) std::memcpy(bytes.data(), good.data(), 48);  // a real header
    SCOPED_TRACE("random case " + std::to_string(i));
    const Outcome o = run(bytes);
    check(o, Expect::ErrorOrPartial);
  }
  // Random pages where the data should be: every page fails or decodes, never more.
  auto bytes = readBytes(fixture("tiny-v6.dat"));
  const auto& layout = layoutOf(fixture("tiny-v6.dat"));
  for (size_t i = layout.dataStart; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(rng());
  check(run(bytes), Expect::Anything);
}

TEST(TraceDatBadInput, EmptyFile) {
  const Outcome o = run({});
  EXPECT_TRUE(o.error);
  EXPECT_NE(o.message.find("empty"), std::string::npos) << o.message;
}

// --- Crafted damage: huge sizes, wrong versions ---

struct Mutation {
  std::string name;
  std::string fixture;
  std::function<void(std::vector<uint8_t>&, const importers::tracedat::TraceLayout&)> apply;
  Expect expect;
  std::string messagePart;  ///< a fragment the error must contain
  std::optional<uint64_t> offset;  ///< the byte offset the error must name
};

void put64(std::vector<uint8_t>& b, size_t at, uint64_t v) { std::memcpy(b.data() + at, &v, 8); }
void put32(std::vector<uint8_t>& b, size_t at, uint32_t v) { std::memcpy(b.data() + at, &v, 4); }
size_t find(const std::vector<uint8_t>& b, std::string_view s) {
  auto it = std::search(b.begin(), b.end(), s.begin(), s.end());
  return static_cast<size_t>(it - b.begin());
}
std::string offsetText(uint64_t off) { return "byte offset " + std::to_string(off) + " "; }

// v6: magic(10) "6\0"(2) endian(1) long(1) page(4) "header_page\0"(12) size(8)
constexpr size_t kV6HeaderPageSize = 30;

const std::vector<Mutation>& mutations() {
  static const std::vector<Mutation> list = {
      {"v6_version_5", "tiny-v6.dat", [](auto& b, auto&) { b[10] = '5'; }, Expect::Error,
       "unsupported trace.dat version \"5\"", 10},
      {"v7_version_9", "tiny-v7-zstd.dat", [](auto& b, auto&) { b[10] = '9'; }, Expect::Error,
       "unsupported trace.dat version \"9\"", 10},
      {"version_not_a_number", "tiny-v6.dat", [](auto& b, auto&) { b[10] = 'x'; }, Expect::Error,
       "unsupported trace.dat version", 10},
      {"version_unterminated", "tiny-v6.dat", [](auto& b, auto&) { std::memset(b.data() + 10, '6', 40); },
       Expect::Error, "not terminated", std::nullopt},
      {"bad_endianness", "tiny-v6.dat", [](auto& b, auto&) { b[12] = 7; }, Expect::Error, "endianness", 12},
      {"bad_long_size", "tiny-v6.dat", [](auto& b, auto&) { b[13] = 3; }, Expect::Error, "long size", 13},
      {"page_size_zero", "tiny-v6.dat", [](auto& b, auto&) { put32(b, 14, 0); }, Expect::Error, "page size", 14},
      {"huge_header_page", "tiny-v6.dat", [](auto& b, auto&) { put64(b, kV6HeaderPageSize, uint64_t{1} << 62); },
       Expect::Error, "header_page declares", kV6HeaderPageSize + 8},
      {"huge_ftrace_count", "tiny-v6.dat",
       [](auto& b, auto&) {
         uint64_t hp, he;
         std::memcpy(&hp, b.data() + kV6HeaderPageSize, 8);
         const size_t ev = kV6HeaderPageSize + 8 + hp + 13;
         std::memcpy(&he, b.data() + ev, 8);
         put32(b, ev + 8 + he, 0xffffffffu);
       },
       Expect::Error, "implausible ftrace format count", std::nullopt},
      {"huge_cpu_count", "tiny-v6.dat",
       [](auto& b, auto&) {
         // The CPU count comes just before the "options  " block (or "flyrecord" without options).
         size_t at = find(b, std::string_view("options  \0", 10));
         if (at == b.size()) at = find(b, std::string_view("flyrecord\0", 10));
         put32(b, at - 4, 1000000);
       },
       Expect::Error, "CPU count", std::nullopt},
      {"cpu_data_beyond_file", "tiny-v6.dat",
       [](auto& b, auto&) {
         const size_t table = find(b, std::string_view("flyrecord\0", 10)) + 10;
         put64(b, table + 16 + 8, uint64_t{1} << 40);  // CPU 1's size
       },
       Expect::Partial, "the file ends inside this CPU's ring-buffer data", std::nullopt},
      {"cpu_data_offset_beyond_file", "tiny-v6.dat",
       [](auto& b, auto&) {
         const size_t table = find(b, std::string_view("flyrecord\0", 10)) + 10;
         put64(b, table + 16, uint64_t{1} << 50);  // CPU 1's offset
       },
       Expect::Partial, "(cpu 1)", std::nullopt},
      {"page_commit_huge", "tiny-v6.dat",
       [](auto& b, auto& l) { put64(b, l.cpuData[1].offset + 8, (1u << 27) - 1); }, Expect::Partial,
       "page commit size larger than the page", std::nullopt},
      {"huge_chunk_count", "tiny-v7-zstd.dat",
       [](auto& b, auto& l) { put32(b, l.cpuData[1].offset, 0xfffffff0u); }, Expect::Partial, "chunk count",
       std::nullopt},
      {"huge_chunk_size", "tiny-v7-zstd.dat",
       [](auto& b, auto& l) { put32(b, l.cpuData[1].offset + 4, 0x7fffffffu); }, Expect::Partial,
       "implausible sizes", std::nullopt},
      {"chunk_not_zstd", "tiny-v7-zstd.dat",
       [](auto& b, auto& l) { std::memset(b.data() + l.cpuData[1].offset + 12, 0x55, 16); }, Expect::Partial,
       "does not decompress", std::nullopt},
      {"options_offset_beyond_file", "tiny-v7-zstd.dat",
       [](auto& b, auto&) { put64(b, find(b, std::string_view("zstd\0", 5)) + 5 + 6, uint64_t{1} << 40); },
       Expect::Error, "the options section lies past the end of the file (16005 bytes)", uint64_t{1} << 40},
      {"unknown_compression", "tiny-v7-zstd.dat",
       [](auto& b, auto&) { std::memcpy(b.data() + find(b, std::string_view("zstd\0", 5)), "lz4x", 4); },
       Expect::Error, "unsupported compression \"lz4x\"", std::nullopt},
      {"section_size_huge", "tiny-v7-zstd.dat",
       [](auto& b, auto&) {
         // The HEADER_INFO section right after the header: id 16, flags, desc, size.
         const size_t at = find(b, std::string_view("zstd\0", 5)) + 5 + 6 + 8;
         put64(b, at + 8, uint64_t{1} << 61);
       },
       Expect::Error, "section declares", std::nullopt},
  };
  return list;
}

class TraceDatMutation : public ::testing::TestWithParam<size_t> {};

TEST_P(TraceDatMutation, FailsCleanlyNamingTheOffset) {
  const Mutation& m = mutations()[GetParam()];
  SCOPED_TRACE(m.name);
  auto bytes = readBytes(fixture(m.fixture));
  m.apply(bytes, layoutOf(fixture(m.fixture)));
  const Outcome o = run(bytes);
  check(o, m.expect);
  EXPECT_NE(o.message.find(m.messagePart), std::string::npos) << o.message;
  if (m.offset) {
    EXPECT_NE(o.message.find(offsetText(*m.offset)), std::string::npos) << o.message;
  }
}

INSTANTIATE_TEST_SUITE_P(Table, TraceDatMutation, ::testing::Range<size_t>(0, mutations().size()),
                         [](const auto& param) { return mutations()[param.param].name; });

TEST(TraceDatBadInput, WrongMagicIsNotClaimed) {
  auto bytes = readBytes(fixture("tiny-v6.dat"));
  bytes[3] = 'T';
  const Outcome o = run(bytes);
  EXPECT_TRUE(o.error);
  // The registry finds no importer; called directly, the importer says why.
  TempFile file(bytes);
  core::SchedBuilder builder;
  auto st = importers::makeTraceDatImporter()->read(file.path(), builder, {});
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("byte offset 0 (0x0): expected the trace.dat magic"), std::string::npos)
      << st.message();
}

}  // namespace
