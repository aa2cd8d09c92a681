// The CTF importer on the fixtures in tests/data/ctf: probing (trace folder,
// metadata file, folder above), counts against the recording's `perf script`
// text and the babeltrace2 CLI, progress and cancel, and bad input (truncated
// and scribbled stream files, corrupt metadata, empty folders, stray files):
// always a clear error naming the file, the valid prefix kept, never a crash.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stop_token>
#include <string>
#include <vector>

#include "importers/ctf/ctf_packet_check.h"
#include "importers/ctf/ctf_reader.h"
#include "importers/importer.h"
#include "importers/registered.h"
#include "importers/ctf/ctf_test_support.h"
#include "support/scratch_dir.h"

namespace {

namespace fs = std::filesystem;
using ctftest::dataPath;
using ctftest::TempCopy;

const std::string kPerfSleep = "ctf/perf-sleep";  // perf record -a -e sched:... -- sleep 0.05
constexpr uint64_t kPerfSleepEvents = 79;

std::map<std::string, uint64_t> countsOf(const core::TraceModel& m) {
  return {m.eventCounts.begin(), m.eventCounts.end()};
}

importers::Importer* ctfImporter() {
  for (const auto& imp : importers::allImporters())
    if (imp->name() == "ctf") return imp.get();
  return nullptr;
}

TEST(CtfImporter, Registered) {
  ASSERT_NE(ctfImporter(), nullptr);
  EXPECT_EQ(importers::makeCtfImporter()->name(), "ctf");
}

TEST(CtfImporter, OpensFolderMetadataFileAndFolderAbove) {
  const std::string trace = dataPath(kPerfSleep + "/ctf");
  for (const std::string& path : {trace, trace + "/metadata", dataPath(kPerfSleep)}) {
    auto picked = importers::pickImporter(path);
    ASSERT_TRUE(picked.has_value()) << path << ": " << picked.error().message();
    EXPECT_EQ(picked.value()->name(), "ctf") << path;
    auto result = importers::importTrace(path);
    ASSERT_TRUE(result.has_value()) << path << ": " << result.error().message();
    EXPECT_FALSE(result->error);
    EXPECT_EQ(result->model->eventCount, kPerfSleepEvents) << path;
    EXPECT_EQ(result->model->format, "ctf (perf data convert)");
  }
}

TEST(CtfImporter, OpensLttngSessionLayout) {
  // An LTTng session folder: <session>/kernel/ is the trace, with ust/ beside it.
  TempCopy tmp(dataPath("ctf/synthetic-lttng"));
  const std::string session = tmp.path("session-20260101-000000");
  fs::create_directories(session + "/ust/uid/1000/64-bit");
  fs::create_directories(session + "/kernel");
  for (const auto& e : fs::directory_iterator(tmp.dir()))
    if (e.is_regular_file()) fs::rename(e.path(), session + "/kernel/" + e.path().filename().string());
  auto result = importers::importTrace(session);
  ASSERT_TRUE(result.has_value()) << result.error().message();
  EXPECT_EQ(result->model->eventCount, 22u);
  // A metadata file with the wrong first bytes does not make a folder a trace.
  std::ofstream(session + "/ust/uid/1000/64-bit/metadata") << "not CTF\n";
  result = importers::importTrace(session);
  ASSERT_TRUE(result.has_value()) << result.error().message();
  EXPECT_EQ(result->model->eventCount, 22u);
}

TEST(CtfImporter, ProbeRejectsOtherFolders) {
  const auto* imp = ctfImporter();
  ASSERT_NE(imp, nullptr);
  importers::ProbeInput input;
  input.path = dataPath("ctf");  // holds traces below: claimed, less surely
  input.isDirectory = true;
  EXPECT_EQ(imp->probe(input), 90);
  TempCopy empty(dataPath("ctf/perf-sleep/perf-script.txt"));
  input.path = empty.dir();
  EXPECT_EQ(imp->probe(input), 0);
  // A text file is not CTF metadata.
  input.isDirectory = false;
  input.path = dataPath(kPerfSleep + "/perf-script.txt");
  const std::string text = "            perf 19970 [000]";
  std::vector<std::byte> head(text.size());
  std::memcpy(head.data(), text.data(), text.size());
  input.head = head;
  EXPECT_EQ(imp->probe(input), 0);
}

TEST(CtfImporter, CountsMatchPerfScriptAndBabeltrace) {
  auto result = importers::importTrace(dataPath(kPerfSleep + "/ctf"));
  ASSERT_TRUE(result.has_value()) << result.error().message();
  const auto& m = *result->model;
  const auto script = ctftest::perfScriptCounts(dataPath(kPerfSleep + "/perf-script.txt"));
  EXPECT_EQ(countsOf(m), script.events);
  // Hand count of the recording: 34 sched_switch, 19 waking/wakeup pairs.
  EXPECT_EQ(script.events.at("sched_switch"), 34u);
  EXPECT_EQ(script.events.at("sched_waking"), 19u);
  EXPECT_EQ(m.metadata.at("hostname"), "vm");
  EXPECT_EQ(m.metadata.at("osrelease"), "6.18.44-fc-v669");  // the kernel it was recorded on
  EXPECT_EQ(m.metadata.at("tracer"), "perf");
  EXPECT_EQ(m.cpuCount(), 2);
  // perf's clock has no offset: timestamps are the perf.data sample times.
  EXPECT_LT(m.firstTs, int64_t{1} << 50);
  if (!ctftest::babeltraceInstalled())
    GTEST_SKIP() << "babeltrace2 CLI (make setup) not installed: counts not compared with it";
  const auto reference = ctftest::babeltraceCounts(dataPath(kPerfSleep + "/ctf"));
  ASSERT_TRUE(reference.has_value());
  EXPECT_EQ(countsOf(m), *reference);
}

// The model is built on a second thread when a core is free for it
// (Threading::Auto), else on the decoding one: both ways must give the same
// model, for one trace and for a session of two (kernel and user space).
TEST(CtfImporter, BuilderOnAThreadOrNotGivesTheSameModel) {
  std::vector<std::vector<std::string>> traces = {
      {dataPath("ctf/perf-sleep/ctf")},
      {dataPath("ctf/synthetic-lttng")},
      {dataPath("ctf/synthetic-power")},
      {dataPath("ctf/lttng-session/kernel"), dataPath("ctf/lttng-session/ust/uid/1000/64-bit")}};
  if (fs::is_directory(ctftest::sharedPath("recorded/hackbench-proc/ctf")))
    traces.push_back({ctftest::sharedPath("recorded/hackbench-proc/ctf")});
  for (const auto& dirs : traces) {
    SCOPED_TRACE(dirs.front());
    std::shared_ptr<core::TraceModel> models[2];
    const importers::Threading ways[2] = {importers::Threading::Never, importers::Threading::Always};
    for (int k = 0; k < 2; ++k) {
      core::SchedBuilder builder;
      const core::Status status = importers::ctf::readCtfTraces(dirs, builder, {}, ways[k]);
      ASSERT_TRUE(status.isOk()) << status.message();
      models[k] = builder.finalize();
    }
    const core::TraceModel& a = *models[0];
    const core::TraceModel& b = *models[1];
    EXPECT_GT(a.eventCount, 0u);
    EXPECT_EQ(a.eventCount, b.eventCount);
    EXPECT_EQ(a.eventCounts, b.eventCounts);
    EXPECT_EQ(a.threads.tid, b.threads.tid);
    ASSERT_EQ(a.cpuSlices.size(), b.cpuSlices.size());
    for (size_t c = 0; c < a.cpuSlices.size(); ++c) {
      EXPECT_EQ(a.cpuSlices[c].ts, b.cpuSlices[c].ts);
      EXPECT_EQ(a.cpuSlices[c].dur, b.cpuSlices[c].dur);
      EXPECT_EQ(a.cpuSlices[c].utid, b.cpuSlices[c].utid);
    }
    EXPECT_EQ(a.threadStates.ts, b.threadStates.ts);
    EXPECT_EQ(a.threadStates.state, b.threadStates.state);
    EXPECT_EQ(a.wakeups.ts, b.wakeups.ts);
    EXPECT_EQ(a.wakeups.flags, b.wakeups.flags);
    EXPECT_EQ(a.counters.value, b.counters.value);
    EXPECT_EQ(a.metadata, b.metadata);
    EXPECT_EQ(a.lostEvents(), b.lostEvents());
  }
}

TEST(CtfImporter, ProgressAndCancel) {
  std::vector<double> seen;
  importers::ImportOptions options;
  options.progress = [&](double f) { seen.push_back(f); };
  auto result = importers::importTrace(dataPath(kPerfSleep + "/ctf"), options);
  ASSERT_TRUE(result.has_value());
  ASSERT_FALSE(seen.empty());
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_LE(seen[i - 1], seen[i]);

  std::stop_source stop;
  stop.request_stop();
  options.stop = stop.get_token();
  auto cancelled = importers::importTrace(dataPath(kPerfSleep + "/ctf"), options);
  ASSERT_FALSE(cancelled.has_value());
  EXPECT_NE(cancelled.error().message().find("cancelled"), std::string::npos);
}

TEST(CtfPacketLayout, ReadsPacketSizesFromTsdl) {
  // Plain-text TSDL, little-endian perf layout: one packet per stream file here.
  auto perf = importers::ctf::PacketLayout::fromMetadata(dataPath(kPerfSleep + "/ctf/metadata"));
  ASSERT_TRUE(perf.has_value());
  auto scan = perf->scan(dataPath(kPerfSleep + "/ctf/perf_stream_1"));
  EXPECT_TRUE(scan.problem.empty()) << scan.problem;
  EXPECT_EQ(scan.packets, 1u);
  EXPECT_EQ(scan.goodBytes, scan.fileSize);
  // Big-endian, typealiases and a named packet_context struct: chan_0 holds
  // two packets (make_synthetic_lttng.py).
  auto lttng = importers::ctf::PacketLayout::fromMetadata(dataPath("ctf/synthetic-lttng/metadata"));
  ASSERT_TRUE(lttng.has_value());
  scan = lttng->scan(dataPath("ctf/synthetic-lttng/chan_0"));
  EXPECT_TRUE(scan.problem.empty()) << scan.problem;
  EXPECT_EQ(scan.packets, 2u);
  EXPECT_EQ(scan.fileSize, 1000u);
  // Packetized LTTng metadata, 8 per-CPU stream files with an index folder.
  const std::string manyThreads = ctftest::sharedPath("public/tracecompass-test-traces/many-threads");
  if (!fs::exists(manyThreads)) GTEST_SKIP() << manyThreads << " not present: packetized metadata not checked";
  auto real = importers::ctf::PacketLayout::fromMetadata(manyThreads + "/metadata");
  ASSERT_TRUE(real.has_value());
  scan = real->scan(manyThreads + "/channel0_0");
  EXPECT_TRUE(scan.problem.empty()) << scan.problem;
  EXPECT_EQ(scan.packets, 6u);
}

// --- bad input ---

struct Outcome {
  bool model = false;
  uint64_t events = 0;
  bool partial = false;
  std::string error;  ///< the import error, or the partial model's reason
  core::DataLossTable dataLoss;
};
Outcome importOutcome(const std::string& path) {
  Outcome o;
  auto result = importers::importTrace(path);
  if (!result) {
    o.error = result.error().message();
    return o;
  }
  o.model = true;
  o.events = result->model->eventCount;
  o.partial = result->model->partial;
  o.dataLoss = result->model->dataLoss;
  if (result->error) o.error = result->error->message();
  return o;
}

TEST(CtfImporterBadInput, EmptyFolder) {
  TempCopy tmp(dataPath(kPerfSleep + "/perf-script.txt"));
  fs::remove(tmp.path("perf-script.txt"));
  const Outcome o = importOutcome(tmp.dir());
  EXPECT_FALSE(o.model);
  EXPECT_NE(o.error.find(tmp.dir()), std::string::npos) << o.error;
  // Called directly, the importer says what it looked for.
  core::SchedBuilder builder;
  const core::Status s = ctfImporter()->read(tmp.dir(), builder, {});
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("no CTF trace"), std::string::npos) << s.message();
}

// Valid metadata and no stream: a trace without events, as for babeltrace2
// (which prints nothing and exits 0) and for an ftrace file of headers only.
// babeltrace2 reads a trace with only its metadata as an empty trace; SchedLab
// refuses it as it refuses every empty input, saying what is missing and where.
TEST(CtfImporterBadInput, MetadataOnlyIsAnError) {
  TempCopy tmp(dataPath(kPerfSleep + "/ctf"));
  fs::remove(tmp.path("perf_stream_0"));
  fs::remove(tmp.path("perf_stream_1"));
  const Outcome o = importOutcome(tmp.dir());
  EXPECT_FALSE(o.model);
  EXPECT_EQ(o.error, tmp.dir() + ": the trace has no stream files (only its metadata)");
}

TEST(CtfImporterBadInput, CorruptMetadata) {
  TempCopy tmp(dataPath(kPerfSleep + "/ctf"));
  {
    std::ofstream out(tmp.path("metadata"), std::ios::trunc);
    out << "/* CTF 1.8 */\ntrace { major = 1; minor = 8; byte_order = le; packet.header := struct { ;;; } };\n";
  }
  const Outcome o = importOutcome(tmp.dir());
  EXPECT_FALSE(o.model);
  EXPECT_NE(o.error.find(tmp.dir()), std::string::npos) << o.error;
}

TEST(CtfImporterBadInput, TruncatedMetadata) {
  TempCopy tmp(dataPath(kPerfSleep + "/ctf"));
  const auto size = fs::file_size(tmp.path("metadata"));
  for (uint64_t keep : {uint64_t{12}, size / 3, size / 2, size - 10}) {
    fs::resize_file(tmp.path("metadata"), keep);
    const Outcome o = importOutcome(tmp.dir());
    // Cut anywhere, the TSDL loses a closing brace: babeltrace2 refuses it, and so do we.
    EXPECT_FALSE(o.model) << keep;
    EXPECT_NE(o.error.find(tmp.path("metadata") + ": invalid CTF metadata"), std::string::npos) << keep << ": " << o.error;
  }
}

TEST(CtfImporterBadInput, TruncatedStreamKeepsTheReadablePackets) {
  // perf_stream_1 cut at many offsets: perf_stream_0 and the whole packets of
  // perf_stream_1 before the cut are imported; the error names the file and
  // the offset where its readable part ends.
  const uint64_t size = fs::file_size(dataPath(kPerfSleep + "/ctf/perf_stream_1"));
  uint64_t previousEvents = 0;
  for (uint64_t keep = 1; keep < size; keep += 1531) {
    TempCopy tmp(dataPath(kPerfSleep + "/ctf"));
    fs::resize_file(tmp.path("perf_stream_1"), keep);
    const Outcome o = importOutcome(tmp.dir());
    ASSERT_TRUE(o.model) << keep << ": " << o.error;
    EXPECT_TRUE(o.partial) << keep;
    EXPECT_NE(o.error.find("perf_stream_1"), std::string::npos) << keep << ": " << o.error;
    EXPECT_NE(o.error.find("byte offset"), std::string::npos) << keep << ": " << o.error;
    EXPECT_LT(o.events, kPerfSleepEvents) << keep;
    EXPECT_GE(o.events, previousEvents) << keep;  // a longer prefix never reads less
    previousEvents = o.events;
  }
}

TEST(CtfImporterBadInput, ScribbledStreamReadsAsFarAsBabeltrace) {
  if (!ctftest::babeltraceInstalled()) GTEST_SKIP() << "babeltrace2 CLI (make setup) not installed: no reference";
  uint32_t readByBabeltrace = 0;
  const uint64_t size = fs::file_size(dataPath(kPerfSleep + "/ctf/perf_stream_0"));
  for (uint32_t seed = 1; seed <= 24; ++seed) {
    TempCopy tmp(dataPath(kPerfSleep + "/ctf"));
    const uint64_t offset = (seed * 2654435761u) % size;
    ctftest::scribble(tmp.path("perf_stream_0"), offset, 64 + seed * 97, seed);
    const Outcome o = importOutcome(tmp.dir());
    // babeltrace2 decodes noise that happens to be well-formed: where its CLI
    // reads the damaged trace to the end, so do we, event for event; where it
    // gives up, we keep what was readable (or nothing) and name the file.
    const auto reference = ctftest::babeltraceCounts(tmp.dir());
    if (reference) {
      ++readByBabeltrace;
      uint64_t events = 0;
      for (const auto& [name, n] : *reference) events += n;
      EXPECT_EQ(o.events, events) << seed;
      EXPECT_EQ(o.error, "") << seed;
    } else {
      EXPECT_NE(o.error.find(tmp.dir()), std::string::npos) << seed << ": " << o.error;
    }
  }
  // Both kinds occur among the seeds, so both halves above were exercised.
  EXPECT_GT(readByBabeltrace, 0u);
  EXPECT_LT(readByBabeltrace, 24u);
}

TEST(CtfImporterBadInput, AnErrorBabeltraceReadsOnAfterIsReportedNotAnAbort) {
  // A stream file of ctf_fuzzer's (the synthetic trace's first packet with its
  // strings scribbled): src.ctf.fs decodes 9 events, then an event header runs
  // past the packet's content ("Cannot handle state"). It appends that error
  // but returns an ordinary status, and the babeltrace2 command reads on and
  // exits 0; left on the thread, the error made our next bt_graph_run_once()
  // abort on a precondition, and the import end as "babeltrace2 aborted".
  TempCopy tmp(dataPath("ctf/synthetic-lttng"));
  fs::remove(tmp.path("chan_1"));
  fs::copy_file(dataPath("ctf/corrupt/read-on-error.chan_0"), tmp.path("chan_0"), fs::copy_options::overwrite_existing);
  const std::string& dir = tmp.dir();
  const Outcome o = importOutcome(dir);
  ASSERT_TRUE(o.model) << o.error;
  EXPECT_TRUE(o.partial);
  EXPECT_EQ(o.events, 9u);
  EXPECT_NE(o.error.find(dir + ": babeltrace2 reported an error and read on: Cannot handle state"), std::string::npos)
      << o.error;
  EXPECT_EQ(o.error.find("aborted"), std::string::npos) << o.error;
  if (!ctftest::babeltraceInstalled()) GTEST_SKIP() << "babeltrace2 CLI (make setup) not installed: count not compared";
  const auto reference = ctftest::babeltraceCounts(dir);
  ASSERT_TRUE(reference.has_value()) << "the babeltrace2 command reads this trace to its end";
  uint64_t events = 0;
  for (const auto& [name, n] : *reference) events += n;
  EXPECT_EQ(o.events, events);
}

TEST(CtfImporterBadInput, StreamOfRandomBytes) {
  TempCopy tmp(dataPath(kPerfSleep + "/ctf"));
  const auto size = fs::file_size(tmp.path("perf_stream_1"));
  ctftest::scribble(tmp.path("perf_stream_1"), 0, size, 7);
  const Outcome o = importOutcome(tmp.dir());
  ASSERT_TRUE(o.model) << o.error;  // perf_stream_0 is intact
  EXPECT_TRUE(o.partial);
  EXPECT_NE(o.error.find("perf_stream_1"), std::string::npos) << o.error;
  EXPECT_NE(o.error.find("file left out"), std::string::npos) << o.error;
}

TEST(CtfImporterBadInput, HugeDeclaredPacketSize) {
  // packet.context's packet_size (bits) of perf_stream_0's first packet:
  // header 24 bytes, then timestamp_begin, timestamp_end, content_size, packet_size.
  TempCopy tmp(dataPath(kPerfSleep + "/ctf"));
  {
    std::fstream f(tmp.path("perf_stream_0"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(24 + 3 * 8);
    const uint64_t huge = ~uint64_t{0} - 7;
    f.write(reinterpret_cast<const char*>(&huge), sizeof huge);
  }
  const Outcome o = importOutcome(tmp.dir());
  // perf_stream_0 is one packet: the packet walk leaves the file out; perf_stream_1 is intact.
  ASSERT_TRUE(o.model) << o.error;
  EXPECT_TRUE(o.partial);
  EXPECT_NE(o.error.find(tmp.path("perf_stream_0") + ": byte offset 0: not a readable CTF stream file"), std::string::npos)
      << o.error;
  EXPECT_NE(o.error.find("file left out"), std::string::npos) << o.error;
  EXPECT_GT(o.events, 0u);
  EXPECT_LT(o.events, kPerfSleepEvents);
}

TEST(CtfImporterBadInput, ZeroPacketSizeDoesNotHang) {
  // babeltrace2 2.0 indexes a packet_size of 0 forever, its memory growing
  // (found by ctf_fuzzer). The packet walk cuts the file before it.
  TempCopy tmp(dataPath("ctf/synthetic-lttng"));
  {
    // Big-endian: header (magic, uuid, stream_id) 24 bytes, then
    // timestamp_begin, timestamp_end, content_size, packet_size.
    std::fstream f(tmp.path("chan_0"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(24 + 2 * 8);
    const char zeros[16] = {};
    f.write(zeros, sizeof zeros);
  }
  const Outcome o = importOutcome(tmp.dir());
  ASSERT_TRUE(o.model) << o.error;  // chan_1 is intact
  EXPECT_TRUE(o.partial);
  EXPECT_NE(o.error.find("chan_0: byte offset 0: "), std::string::npos) << o.error;
  EXPECT_NE(o.error.find("packet_size 0 bits"), std::string::npos) << o.error;
}

TEST(CtfImporterBadInput, SecondPacketCorruptKeepsTheFirst) {
  // chan_0 holds two packets (472 + 528 bytes); break the second one's magic.
  TempCopy tmp(dataPath("ctf/synthetic-lttng"));
  const auto firstPacket = [&] {
    std::ifstream f(tmp.path("chan_0"), std::ios::binary);
    f.seekg(24 + 3 * 8);
    unsigned char b[8];
    f.read(reinterpret_cast<char*>(b), 8);
    uint64_t bits = 0;
    for (unsigned char c : b) bits = bits << 8 | c;
    return bits / 8;
  }();
  ctftest::scribble(tmp.path("chan_0"), firstPacket, 4, 11);
  const Outcome o = importOutcome(tmp.dir());
  ASSERT_TRUE(o.model) << o.error;
  EXPECT_NE(o.error.find("chan_0: byte offset " + std::to_string(firstPacket) + ": no CTF packet magic"),
            std::string::npos)
      << o.error;
  EXPECT_NE(o.error.find("the packets before were imported"), std::string::npos) << o.error;
  // First packet of chan_0 (10 events) and chan_1 (7 events).
  EXPECT_EQ(o.events, 17u);
}

TEST(CtfImporterBadInput, AStreamUnreadableMidwayEndsAloneAndTheOthersReadOn) {
  // perf_stream_1 scribbled inside its events: babeltrace2 decodes some of
  // them, then fails (a bogus event class id, or a time that goes back). The
  // muxer would end the whole trace there; the import ends only that stream
  // and reads perf_stream_0 to its end, so it holds exactly what babeltrace2
  // gives of each stream file read alone.
  if (!ctftest::babeltraceInstalled()) GTEST_SKIP() << "babeltrace2 CLI (make setup) not installed: no reference";
  const auto eventsOf = [](const std::string& dir, const std::string& stream) {
    test_support::ScratchDir alone("ctf-one-stream");
    fs::copy_file(dir + "/metadata", alone.file("metadata"));
    fs::copy_file(dir + "/" + stream, alone.file(stream));
    const auto counts = ctftest::babeltraceCounts(alone.path().string(), true);
    uint64_t events = 0;
    for (const auto& [name, n] : *counts) events += n;
    return events;
  };
  for (const uint64_t offset : {800u, 1200u, 1600u, 2400u}) {
    TempCopy tmp(dataPath(kPerfSleep + "/ctf"));
    ctftest::scribble(tmp.path("perf_stream_1"), offset, 64, 3);
    ASSERT_FALSE(ctftest::babeltraceCounts(tmp.dir()).has_value()) << offset << ": babeltrace2 reads it all";
    const uint64_t first = eventsOf(tmp.dir(), "perf_stream_0"), second = eventsOf(tmp.dir(), "perf_stream_1");
    ASSERT_EQ(first, eventsOf(dataPath(kPerfSleep + "/ctf"), "perf_stream_0")) << offset;
    ASSERT_LT(second, kPerfSleepEvents - first) << offset;

    const Outcome o = importOutcome(tmp.dir());
    ASSERT_TRUE(o.model) << offset << ": " << o.error;
    EXPECT_TRUE(o.partial) << offset;
    EXPECT_EQ(o.events, first + second) << offset;
    EXPECT_NE(o.error.find(tmp.path("perf_stream_1") + ": "), std::string::npos) << offset << ": " << o.error;
    EXPECT_NE(o.error.find("the other streams' were imported, its rest counted as lost"), std::string::npos)
        << offset << ": " << o.error;
    // Its CPU's timeline after its last event is a lost range of unknown size.
    ASSERT_EQ(o.dataLoss.size(), 1u) << offset;
    EXPECT_EQ(o.dataLoss.cpu[0], 1) << offset;
    EXPECT_LT(o.dataLoss.count[0], 0) << offset;
  }
}

// babeltrace2 names no place when a stream fails; the error names the packet.
// channel0_5 of the shared many-threads LTTng trace holds 4 packets, the
// third starting at byte 524288 (its CTF magic is there). Scribbled 1000
// bytes into that packet, the stream fails there, after babeltrace2 emitted
// the packet's beginning: its details sink, reading that stream alone, shows
// 3 packet beginnings before it gives up. The error names the third packet
// and its start.
TEST(CtfImporterBadInput, AStreamThatFailsMidwayNamesItsPacket) {
  const std::string shared = ctftest::sharedPath("public/tracecompass-test-traces/many-threads");
  if (!fs::is_directory(shared)) GTEST_SKIP() << "needs ../shared/traces (absent: " << shared << ")";
  if (!ctftest::babeltraceInstalled()) GTEST_SKIP() << "babeltrace2 CLI (make setup) not installed: no reference";
  TempCopy tmp(shared);
  const std::string stream = tmp.path("channel0_5");
  {
    std::ifstream in(stream, std::ios::binary);
    in.seekg(524288);
    char magic[4] = {};
    in.read(magic, 4);
    ASSERT_EQ(std::string(magic, 4), std::string("\xc1\x1f\xfc\xc1", 4)) << "no packet starts at 524288";
  }
  ctftest::scribble(stream, 524288 + 1000, 64, 3);
  test_support::ScratchDir alone("ctf-failing-stream");
  fs::copy_file(tmp.path("metadata"), alone.file("metadata"));
  fs::copy_file(stream, alone.file("channel0_5"));
  const std::string details = "babeltrace2 '" + alone.path().string() +
                              "' -c sink.text.details -p with-metadata=false,compact=true 2>/dev/null"
                              " | grep -c 'Packet beginning'";
  FILE* pipe = ::popen(details.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char count[32] = {};
  ASSERT_NE(std::fgets(count, sizeof count, pipe), nullptr);
  ::pclose(pipe);
  ASSERT_EQ(std::string(count), "3\n") << "babeltrace2 does not fail in the third packet";
  ASSERT_FALSE(ctftest::babeltraceCounts(alone.path().string()).has_value()) << "babeltrace2 reads it all";

  const Outcome o = importOutcome(tmp.dir());
  ASSERT_TRUE(o.model) << o.error;
  EXPECT_TRUE(o.partial);
  EXPECT_NE(o.error.find(stream + ": byte offset 524288: in or after the packet that starts here (packet 3 of 4): "
                                  "unreadable from here on (babeltrace2: "),
            std::string::npos)
      << o.error;
}

TEST(CtfImporterBadInput, StrayFileInTraceFolder) {
  // babeltrace2 takes every file of the folder for a stream file.
  TempCopy tmp(dataPath(kPerfSleep + "/ctf"));
  std::ofstream(tmp.path("README")) << "notes about this trace\n";
  const Outcome o = importOutcome(tmp.dir());
  ASSERT_TRUE(o.model) << o.error;
  EXPECT_EQ(o.events, kPerfSleepEvents);
  EXPECT_NE(o.error.find("README"), std::string::npos) << o.error;
}

}  // namespace
