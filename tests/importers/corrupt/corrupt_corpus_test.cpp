// The corrupt-input corpus of tests/data/<format>/corrupt/ (written by
// make_corrupt_corpus.py beside this file): for every importer, an empty file,
// truncations, flipped bits, wrong record sizes, huge declared sizes and wrong
// versions. Each must end — fast, without a crash — in an error, or a partial
// model, or a model with a located diagnostic, whose message names the file
// and the byte offset (binary formats) or line (text formats) of the damage.
#include <gtest/gtest.h>

#include <chrono>
#include <ostream>
#include <string>

#include "importers/importer.h"

namespace {

enum class Outcome {
  Error,       ///< importTrace fails: nothing valid was read
  Partial,     ///< a model of the valid prefix, marked partial, with the error
  Diagnostic,  ///< a whole model with a diagnostic that locates the damage
};

struct CorruptCase {
  const char* path;      ///< under tests/data
  Outcome outcome;
  /// "byte offset N" or "line N", right after the file's name in the message; null
  /// where the fragment says it ("empty file (byte offset 0)") or nothing can:
  /// babeltrace2 only logs where TSDL metadata goes wrong (its error causes
  /// say "Cannot create trace"), and nothing says where in a stream file time
  /// goes back, so those CTF cases name the file or trace folder only.
  const char* where;
  const char* fragment;  ///< what the message must say about the damage
};

// Offsets and lines are those of the damage make_corrupt_corpus.py did (or of
// the first place the importer can see it), checked by hand against the file.
const CorruptCase kCases[] = {
    // perf.data
    {"perf/corrupt/empty.perf.data", Outcome::Error, nullptr, "empty file (byte offset 0)"},
    {"perf/corrupt/truncated-header.perf.data", Outcome::Error, "byte offset 0", "file ends inside the perf.data header"},
    {"perf/corrupt/truncated-data.perf.data", Outcome::Error, "byte offset 27655", "file ends inside the data section"},
    {"perf/corrupt/truncated-pipe.perf.data", Outcome::Partial, "byte offset 30148", "record of 96 bytes (type 9) runs past the end of the data"},
    {"perf/corrupt/flipped-bit-record-size.perf.data", Outcome::Partial, "byte offset 30180", "record size 0 is smaller than a record header"},
    {"perf/corrupt/flipped-bit-magic.perf.data", Outcome::Error, nullptr, "unknown format (byte offset 0)"},
    {"perf/corrupt/record-size-short.perf.data", Outcome::Partial, "byte offset 30148", "record size 4 is smaller than a record header"},
    {"perf/corrupt/record-size-zero.perf.data", Outcome::Partial, "byte offset 30148", "record size 0 is smaller than a record header"},
    {"perf/corrupt/record-size-beyond-end.perf.data", Outcome::Partial, "byte offset 34028", "record of 65528 bytes (type 68) runs past the end"},
    {"perf/corrupt/huge-data-size.perf.data", Outcome::Error, "byte offset 4096", "declared to end at byte 4611686018427389448"},
    {"perf/corrupt/huge-attr-size.perf.data", Outcome::Error, "byte offset 16", "implausible attr_size 1099511627776"},
    {"perf/corrupt/huge-tracing-data-size.perf.data", Outcome::Error, "byte offset 6572", "tracing data of 2147483640 bytes runs past the end"},
    {"perf/corrupt/wrong-version.perf.data", Outcome::Error, "byte offset 0", "perf.data version 1 (magic PERFFILE) is not supported"},
    {"perf/corrupt/wrong-header-size.perf.data", Outcome::Error, "byte offset 8", "unsupported perf.data header size 4096"},
    // perf.data with zstd-compressed records (perf record -z): the third of the
    // fixture's four compressed records (byte 24784) damaged.
    {"perf/corrupt/flipped-bits-compressed.perf.data", Outcome::Partial, "byte offset 24784", "zstd cannot decompress the data"},
    {"perf/corrupt/huge-compressed2-size.perf.data", Outcome::Partial, "byte offset 24784", "compressed record declares 1099511627776 bytes of data, more than its 302"},
    {"perf/corrupt/wrong-compression-type.perf.data", Outcome::Error, "byte offset 22936", "header declares compression type 7"},
    // The folder of perf record --threads: the file named is the one inside it.
    {"perf/corrupt/threads-no-data-files.perf.data", Outcome::Error, nullptr, "data: byte offset 23072 (0x5a20): the header says the data lies in data.N files"},
    {"perf/corrupt/threads-truncated-data-file.perf.data", Outcome::Partial, nullptr, "data.1: byte offset 10744 (0x29f8): record of 96 bytes (type 9) runs past the end of the data (57 bytes left)"},
    // trace.dat
    {"tracedat/corrupt/empty.dat", Outcome::Error, nullptr, "empty file (byte offset 0)"},
    {"tracedat/corrupt/truncated-header.dat", Outcome::Error, "byte offset 38", "file ends inside header_page"},
    {"tracedat/corrupt/truncated-data.dat", Outcome::Partial, "byte offset 65536", "the file ends inside this CPU's ring-buffer data (24576 of 49152 bytes present)"},
    {"tracedat/corrupt/truncated-compressed.dat", Outcome::Partial, "byte offset 6070", "the file is cut inside section 3"},
    {"tracedat/corrupt/flipped-bits-compressed.dat", Outcome::Partial, "byte offset 12292", "event of impossible length"},
    {"tracedat/corrupt/flipped-bits-records.dat", Outcome::Diagnostic, "byte offset 41164", "record of no known event (id 502)"},
    {"tracedat/corrupt/page-commit-beyond-page.dat", Outcome::Partial, "byte offset 45064", "page commit size larger than the page"},
    {"tracedat/corrupt/huge-cpu-data-size.dat", Outcome::Partial, "byte offset 45056", "4096 of 1152921504606846976 bytes present"},
    {"tracedat/corrupt/huge-header-page-size.dat", Outcome::Error, "byte offset 38", "header_page declares 1152921504606846976 bytes"},
    {"tracedat/corrupt/wrong-version.dat", Outcome::Error, "byte offset 10", "unsupported trace.dat version \"9\""},
    // perf script
    {"perfscript/corrupt/empty.txt", Outcome::Error, nullptr, "empty file (byte offset 0)"},
    {"perfscript/corrupt/truncated-line.txt", Outcome::Partial, "line 40", "the file ends inside a line"},
    {"perfscript/corrupt/flipped-bits.txt", Outcome::Diagnostic, "line 30", "not a perf script sample line"},
    {"perfscript/corrupt/short-fields.txt", Outcome::Diagnostic, "line 22", "sched_switch fields not understood"},
    {"perfscript/corrupt/huge-cpu.txt", Outcome::Diagnostic, "line 26", "event on cpu 99999999 ignored"},
    {"perfscript/corrupt/huge-timestamp.txt", Outcome::Diagnostic, "line 13", "not a perf script sample line"},
    {"perfscript/corrupt/wrong-layout.txt", Outcome::Error, nullptr, "unknown format (byte offset 0)"},
    // ftrace text
    {"ftrace/bad/empty.txt", Outcome::Error, nullptr, "empty file"},
    {"ftrace/bad/truncated_last_line.txt", Outcome::Diagnostic, "line 79", "last line is truncated"},
    {"ftrace/corrupt/flipped-bits.txt", Outcome::Diagnostic, "line 25", "cannot parse line"},
    {"ftrace/corrupt/short-fields.txt", Outcome::Diagnostic, "line 27", "cannot read the fields of sched_switch"},
    {"ftrace/corrupt/huge-cpu.txt", Outcome::Diagnostic, "line 30", "event on cpu 99999 ignored"},
    {"ftrace/corrupt/huge-timestamp.txt", Outcome::Diagnostic, "line 36", "cannot parse line"},
    {"ftrace/bad/header_then_garbage.txt", Outcome::Error, "line 13", "not an ftrace text trace"},
    // CTF (folders)
    {"ctf/corrupt/empty-stream", Outcome::Error, nullptr, "chan_0: empty stream file (byte offset 0)"},
    {"ctf/corrupt/empty-metadata", Outcome::Error, nullptr, "folder is neither a CTF trace nor a perf record --threads folder"},
    {"ctf/corrupt/truncated-stream", Outcome::Error, nullptr, "chan_0: byte offset 0: not a readable CTF stream file (packet of 704 bytes cut short"},
    {"ctf/corrupt/truncated-metadata", Outcome::Error, nullptr, "metadata: invalid CTF metadata"},
    // The times are babeltrace2's own muxer's ("ts=1700000000000001030,
    // last-returned-ts=4294073385365415932"), which the reader used to run.
    // The event whose time goes back is in chan_0's first packet, of two:
    // `babeltrace2 -c sink.text.details` shows it before the second packet's beginning.
    {"ctf/corrupt/flipped-bits", Outcome::Partial, nullptr,
     "chan_0: byte offset 0: in the packet that starts here (packet 1 of 2): time goes back from "
     "4294073385365415932 ns to 1700000000000001030 ns; the stream cannot be merged in time order from here on; "
     "its events before were imported, its rest counted as lost"},
    {"ctf/corrupt/huge-content-size", Outcome::Error, nullptr, "chan_0: byte offset 0: not a readable CTF stream file (content_size 18446744073709551608 bits does not fit packet_size 5632"},
    {"ctf/corrupt/huge-packet-size", Outcome::Error, nullptr, "chan_0: byte offset 0: not a readable CTF stream file (packet of 137438953472 bytes cut short by the end of the file"},
    {"ctf/corrupt/packet-size-below-header", Outcome::Error, nullptr, "chan_0: byte offset 0: not a readable CTF stream file (packet_size 64 bits is smaller than its own header"},
    {"ctf/corrupt/wrong-version", Outcome::Error, nullptr, "metadata: invalid CTF metadata"},
    // Perfetto (offsets printed by make_corrupt_corpus.py: the damaged packet's tag,
    // the field inside an appended packet, the deflated bytes of the last packet)
    {"perfetto/corrupt/empty.perfetto-trace", Outcome::Error, nullptr, "empty file (byte offset 0)"},
    {"perfetto/corrupt/truncated.perfetto-trace", Outcome::Partial, "byte offset 29791", "declares 693 bytes, past the end"},
    {"perfetto/corrupt/huge-length.perfetto-trace", Outcome::Partial, "byte offset 30487", "declares 1099511627776 bytes"},
    {"perfetto/corrupt/wrong-wire-type.perfetto-trace", Outcome::Partial, "byte offset 30489", "wire type 7 of field 1"},
    {"perfetto/corrupt/truncated-varint.perfetto-trace", Outcome::Partial, "byte offset 30489", "truncated varint"},
    {"perfetto/corrupt/corrupt-deflate.perfetto-trace", Outcome::Partial, "byte offset 3648", "deflate data is corrupt"},
};

std::string dataPath(const std::string& rel) { return std::string(SCHEDLAB_TEST_DATA) + "/" + rel; }

void PrintTo(const CorruptCase& c, std::ostream* os) { *os << c.path; }

class CorruptCorpus : public testing::TestWithParam<CorruptCase> {};

TEST_P(CorruptCorpus, FailsCleanlyNamingFileAndPlace) {
  const CorruptCase& c = GetParam();
  const std::string path = dataPath(c.path);
  const auto t0 = std::chrono::steady_clock::now();
  auto result = importers::importTrace(path);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20.0) << "too slow: a hang?";

  std::string message;
  switch (c.outcome) {
    case Outcome::Error:
      ASSERT_FALSE(result.has_value()) << "imported " << result->model->eventCount << " events from " << path;
      message = result.error().message();
      break;
    case Outcome::Partial:
      ASSERT_TRUE(result.has_value()) << result.error().message();
      EXPECT_TRUE(result->model->partial);
      EXPECT_GT(result->model->eventCount, 0u) << "the valid prefix was not kept";
      ASSERT_TRUE(result->error.has_value());
      message = result->error->message();
      break;
    case Outcome::Diagnostic: {
      ASSERT_TRUE(result.has_value()) << result.error().message();
      ASSERT_NE(c.where, nullptr);
      EXPECT_GT(result->model->eventCount, 0u);
      // The first diagnostic that locates the damage (others may follow from it).
      for (const auto& r : result->model->diagnostics.records()) {
        const std::string text = r.format();
        if (text.find(c.where) != std::string::npos) {
          message = text;
          break;
        }
      }
      if (message.empty() && result->error) message = result->error->message();
      ASSERT_FALSE(message.empty()) << "no diagnostic at " << c.where;
      break;
    }
  }
  // "FILE: byte offset N ...: what" / "FILE: line N: what" (the CTF reader names
  // the stream or metadata file inside the trace folder).
  EXPECT_EQ(message.find(path), 0u) << message;
  if (c.where) {
    EXPECT_NE(message.find(path + ": " + c.where), std::string::npos) << message;
  }
  EXPECT_NE(message.find(c.fragment), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorruptCorpus, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<CorruptCase>& param) {
                           std::string n = param.param.path;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

}  // namespace
