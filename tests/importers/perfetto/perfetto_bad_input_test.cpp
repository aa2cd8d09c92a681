// Bad Perfetto input: truncated varints, wrong wire types, lengths past the
// end, decompression failures, a file cut anywhere. Each ends in an error that
// names the file and the byte offset, with the events before the damage kept.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "importers/importer.h"
#include "tests/importers/perfetto/perfetto_test_support.h"

namespace {

using namespace perfetto_test;
namespace fs = std::filesystem;

std::string scratch(const std::string& name) {
  return (fs::temp_directory_path() / ("schedlab-perfetto-bad-" + std::to_string(::getpid()) + "-" + name)).string();
}

// Byte offsets of the top-level packets (their tag byte).
std::vector<size_t> packetOffsets(const Bytes& b) {
  std::vector<size_t> out;
  size_t i = 0;
  while (i < b.size()) {
    out.push_back(i);
    ++i;  // tag 0x0a
    uint64_t n = 0;
    for (int s = 0;; s += 7) {
      const uint8_t c = b[i++];
      n |= uint64_t(c & 0x7f) << s;
      if (!(c & 0x80)) break;
    }
    i += n;
  }
  return out;
}

struct Outcome {
  bool imported = false;  // a (partial) model
  uint64_t events = 0;
  std::string message;
};

Outcome importBytes(const std::string& name, const Bytes& bytes) {
  const std::string path = scratch(name);
  writeFile(path, bytes);
  Outcome o;
  auto r = importers::importTrace(path);
  if (r) {
    o.imported = true;
    o.events = r->model->eventCount;
    if (r->error) o.message = r->error->message();
  } else {
    o.message = r.error().message();
  }
  fs::remove(path);
  return o;
}

const Bytes& fixture() {
  static const Bytes b = readFile(testData("perfetto/tiny.perfetto-trace"));
  return b;
}

TEST(PerfettoBadInput, AFileCutAnywhereKeepsItsValidPrefixAndNamesTheOffset) {
  const Bytes& good = fixture();
  ASSERT_GT(good.size(), 10000u);
  const auto packets = packetOffsets(good);
  ASSERT_GE(packets.size(), 5u);  // system_info, cpu_info, process_tree, one bundle per CPU
  // Cut inside the last packet (the second CPU's bundle): the packets before it are kept.
  const size_t packet = packets.back();
  const Bytes cut(good.begin(), good.begin() + static_cast<long>(packet + 9));
  const Outcome o = importBytes("cut.perfetto-trace", cut);
  ASSERT_TRUE(o.imported) << o.message;
  EXPECT_GT(o.events, 10u);
  EXPECT_NE(o.message.find(": byte offset " + std::to_string(packet) + " "), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("past the end"), std::string::npos) << o.message;
  // And at every 251st byte: never a crash, always located when it fails.
  for (size_t n = 1; n < good.size(); n += 251) {
    const Outcome p = importBytes("cut-n.perfetto-trace", Bytes(good.begin(), good.begin() + static_cast<long>(n)));
    if (!p.message.empty()) {
      EXPECT_NE(p.message.find("byte offset"), std::string::npos) << n << ": " << p.message;
    }
  }
}

TEST(PerfettoBadInput, ATruncatedVarintIsNamedWithItsOffset) {
  Bytes b = fixture();
  b.push_back(0x0a);
  b.push_back(0x80);  // a length whose varint never ends
  const Outcome o = importBytes("varint.perfetto-trace", b);
  ASSERT_TRUE(o.imported);
  EXPECT_NE(o.message.find("byte offset " + std::to_string(fixture().size())), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("truncated varint"), std::string::npos) << o.message;
}

TEST(PerfettoBadInput, AWrongWireTypeIsNamedWithItsOffset) {
  // A packet holding one field of wire type 3 (a group), after the good ones.
  Bytes b = fixture();
  const size_t at = b.size();
  b.insert(b.end(), {0x0a, 0x02, 0x0b, 0x00});
  const Outcome o = importBytes("wire.perfetto-trace", b);
  ASSERT_TRUE(o.imported);
  EXPECT_NE(o.message.find("byte offset " + std::to_string(at + 2)), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("wire type 3"), std::string::npos) << o.message;
}

TEST(PerfettoBadInput, ALengthPastTheEndOfItsMessageIsNamedWithItsOffset) {
  // A packet whose ftrace_events field claims 100 bytes of a 3-byte packet.
  Bytes b = fixture();
  const size_t at = b.size();
  b.insert(b.end(), {0x0a, 0x03, 0x0a, 0x64, 0x00});
  const Outcome o = importBytes("length.perfetto-trace", b);
  ASSERT_TRUE(o.imported);
  EXPECT_NE(o.message.find("byte offset " + std::to_string(at + 2)), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("declares 100 bytes"), std::string::npos) << o.message;
}

TEST(PerfettoBadInput, CorruptCompressedPacketsAreNamedWithTheirOffset) {
  for (bool zstd : {false, true}) {
    Bytes b = compressedTrace(fixture(), zstd, 1);
    const auto packets = packetOffsets(b);
    ASSERT_GE(packets.size(), 5u);
    // Damage the compressed bytes of the last packet (past its two tags and lengths).
    const size_t packet = packets.back();
    for (size_t k = packet + 12; k < packet + 40 && k < b.size(); ++k) b[k] ^= 0x5a;
    const Outcome o = importBytes(zstd ? "zstd-bad.perfetto-trace" : "deflate-bad.perfetto-trace", b);
    ASSERT_TRUE(o.imported) << o.message;
    EXPECT_GT(o.events, 0u);  // the first CPU's bundle, in the packets before
    EXPECT_NE(o.message.find("byte offset"), std::string::npos) << o.message;
    EXPECT_NE(o.message.find(zstd ? "zstd" : "deflate"), std::string::npos) << o.message;
  }
}

}  // namespace
