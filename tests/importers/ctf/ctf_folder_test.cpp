// Folders given to the CTF importer: one LTTng session (kernel/ and ust/...)
// is one run; a folder holding traces of unrelated recordings is an error that
// names each of them (and importers::separateRunsIn() lists them to open one
// by one); hidden files beside a trace's metadata are not stream files. The
// folders are built here from copies of the fixtures in tests/data/ctf (and,
// for the shared-traces case, of recordings in shared/traces).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "importers/ctf/ctf_test_support.h"
#include "importers/ctf/ctf_trace_finder.h"
#include "importers/importer.h"

namespace {

namespace fs = std::filesystem;
using ctftest::dataPath;
using ctftest::TempCopy;

constexpr uint64_t kSyntheticEvents = 22;  // ctf_synthetic_test.cpp: the kernel trace's events
constexpr uint64_t kSessionTicks = 3;      // make_synthetic_lttng.py: app:tick in the session's ust trace
// The CTF reader names events without their provider ("sched:sched_switch" -> "sched_switch").
const std::string kTickName = "tick";

// An empty temporary folder (a TempCopy of nothing but a file removed again).
struct TempFolder {
  TempCopy copy{dataPath("ctf/perf-sleep/perf-script.txt")};
  TempFolder() { fs::remove(copy.path("perf-script.txt")); }
  std::string path(const std::string& rel) const { return copy.path(rel); }
  const std::string& dir() const { return copy.dir(); }
};

void copyTree(const std::string& from, const std::string& to) {
  fs::create_directories(to);
  fs::copy(from, to, fs::copy_options::recursive);
  for (const auto& e : fs::recursive_directory_iterator(to))
    fs::permissions(e.path(), fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::add);
}

void editMetadata(const std::string& file, const std::string& from, const std::string& to) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  in.close();
  std::ofstream(file) << std::regex_replace(text.str(), std::regex(from), to);
}

std::string errorOf(const std::string& path) {
  auto result = importers::importTrace(path);
  return result ? std::string() : result.error().message();
}

uint64_t countOf(const core::TraceModel& m, const std::string& name) {
  for (const auto& [n, c] : m.eventCounts)
    if (n == name) return c;
  return 0;
}

TEST(CtfFolder, AFolderWithTwoUnrelatedTracesIsAnErrorNamingBoth) {
  // An LTTng kernel trace (host synth) three levels down and a perf-converted
  // one (another host, no session) two levels down: /tmp at small scale.
  TempFolder tmp;
  const std::string lttng = tmp.path("a/b/synthetic-lttng");
  const std::string perf = tmp.path("c/ctf");
  copyTree(dataPath("ctf/synthetic-lttng"), lttng);
  copyTree(dataPath("ctf/perf-sleep/ctf"), perf);
  const std::string error = errorOf(tmp.dir());
  ASSERT_FALSE(error.empty()) << "a model was made of two unrelated traces";
  EXPECT_NE(error.find(tmp.dir() + ": holds 2 unrelated CTF traces"), std::string::npos) << error;
  EXPECT_NE(error.find("\n  " + lttng + ": lttng-modules 2.13 kernel trace, host synth"), std::string::npos) << error;
  EXPECT_NE(error.find("\n  " + perf + ": perf kernel trace"), std::string::npos) << error;
  // What the GUI offers to open, one run each; each of them opens.
  EXPECT_EQ(importers::separateRunsIn(tmp.dir()), (std::vector<std::string>{lttng, perf}));
  for (const auto& one : importers::separateRunsIn(tmp.dir())) EXPECT_EQ(errorOf(one), "") << one;
  // A folder that is one recording has nothing to separate.
  EXPECT_TRUE(importers::separateRunsIn(lttng).empty());
}

TEST(CtfFolder, TracesOfOneHostWithoutASessionNameStayApart) {
  // Same host, same tracer, but two traces and no session in their metadata or
  // in their folders' layout: two recordings.
  TempFolder tmp;
  copyTree(dataPath("ctf/synthetic-lttng"), tmp.path("monday"));
  copyTree(dataPath("ctf/lttng-session/kernel"), tmp.path("tuesday"));
  for (const char* key : {"trace_name", "trace_creation_datetime"})
    editMetadata(tmp.path("tuesday/metadata"), std::string("\\t") + key + " = [^;]*;\\n", "");
  const std::string error = errorOf(tmp.dir());
  EXPECT_NE(error.find("holds 2 unrelated CTF traces"), std::string::npos) << error;
}

TEST(CtfFolder, TwoCopiesOfOneTraceOrOneSessionAreTwoRuns) {
  // Muxed, two copies would double every event (the same UUID, the same session).
  TempFolder tmp;
  copyTree(dataPath("ctf/synthetic-lttng"), tmp.path("copy1"));
  copyTree(dataPath("ctf/synthetic-lttng"), tmp.path("backup/copy2"));
  EXPECT_NE(errorOf(tmp.dir()).find("holds 2 unrelated CTF traces"), std::string::npos) << errorOf(tmp.dir());
  TempFolder sessions;
  copyTree(dataPath("ctf/lttng-session"), sessions.path("s"));
  copyTree(dataPath("ctf/lttng-session"), sessions.path("old/s"));
  EXPECT_EQ(importers::separateRunsIn(sessions.dir()), (std::vector<std::string>{sessions.path("old/s"), sessions.path("s")}));
}

TEST(CtfFolder, TheChunksOfARotatedSessionAreOneRecording) {
  // lttng rotate: <session>/archives/<chunk>/kernel/, one trace per chunk.
  TempFolder tmp;
  const std::string session = tmp.path("sched-session-20240501-120000");
  copyTree(dataPath("ctf/lttng-session/kernel"), session + "/archives/20240501T120000+0000-20240501T120005+0000-0/kernel");
  copyTree(dataPath("ctf/lttng-session/kernel"), session + "/archives/20240501T120005+0000-20240501T120010+0000-1/kernel");
  const auto recordings = importers::ctf::findCtfRecordings(tmp.dir());
  ASSERT_EQ(recordings.size(), 1u);
  EXPECT_EQ(recordings.front().root, session);
  EXPECT_EQ(recordings.front().dirs.size(), 2u);
}

TEST(CtfFolder, AnLttngSessionFolderOpensAsOneRun) {
  // tests/data/ctf/lttng-session: kernel/ and ust/uid/1000/64-bit/ of one
  // session (trace_name, trace_creation_datetime and hostname agree).
  const std::string session = dataPath("ctf/lttng-session");
  auto result = importers::importTrace(session);
  ASSERT_TRUE(result.has_value()) << result.error().message();
  EXPECT_FALSE(result->error);
  const core::TraceModel& m = *result->model;
  EXPECT_EQ(m.eventCount, kSyntheticEvents + kSessionTicks);
  EXPECT_EQ(countOf(m, kTickName), kSessionTicks);
  EXPECT_EQ(countOf(m, "sched_switch"), 8u);  // make_synthetic_lttng.py: 4 on each CPU
  EXPECT_TRUE(importers::separateRunsIn(session).empty());
}

TEST(CtfFolder, AnOlderLttngSessionFolderOpensByItsLayout) {
  // LTTng before 2.11 wrote no trace_name: kernel/ and ust/ of one session
  // folder on one host belong together by where they lie.
  TempFolder tmp;
  const std::string session = tmp.path("auto-20160304-183000");
  copyTree(dataPath("ctf/lttng-session"), session);
  for (const char* trace : {"kernel", "ust/uid/1000/64-bit"})
    for (const char* key : {"trace_name", "trace_creation_datetime"})
      editMetadata(session + "/" + trace + "/metadata", std::string("\\t") + key + " = [^;]*;\\n", "");
  auto result = importers::importTrace(session);
  ASSERT_TRUE(result.has_value()) << result.error().message();
  EXPECT_EQ(result->model->eventCount, kSyntheticEvents + kSessionTicks);
  // Opened from further up (its ust/uid/1000/64-bit/ is then 5 levels down,
  // deeper than the walk goes), it is still the whole session.
  result = importers::importTrace(tmp.dir());
  ASSERT_TRUE(result.has_value()) << result.error().message();
  EXPECT_EQ(result->model->eventCount, kSyntheticEvents + kSessionTicks);
}

TEST(CtfFolder, TwoSessionsInOneFolderAreTwoRecordings) {
  // The same session layout twice, created at different times: each session
  // folder is offered as one run (kernel and ust together).
  TempFolder tmp;
  copyTree(dataPath("ctf/lttng-session"), tmp.path("first"));
  copyTree(dataPath("ctf/lttng-session"), tmp.path("second"));
  for (const char* trace : {"kernel", "ust/uid/1000/64-bit"})
    editMetadata(tmp.path(std::string("second/") + trace + "/metadata"), "20240501T120000", "20240502T090000");
  const std::string error = errorOf(tmp.dir());
  EXPECT_NE(error.find("holds 2 unrelated CTF traces"), std::string::npos) << error;
  EXPECT_NE(error.find("session 'sched-session' created 20240502T090000+0000"), std::string::npos) << error;
  EXPECT_EQ(importers::separateRunsIn(tmp.dir()), (std::vector<std::string>{tmp.path("first"), tmp.path("second")}));
  auto second = importers::importTrace(tmp.path("second"));
  ASSERT_TRUE(second.has_value()) << second.error().message();
  EXPECT_EQ(second->model->eventCount, kSyntheticEvents + kSessionTicks);
}

TEST(CtfFolder, UnrelatedSharedTracesInOneFolderAreNamed) {
  // Three real recordings: lttng-modules 2.8 (host wilbrod), 2.10 (host
  // smarchi-efficios) and perf on this project's VM.
  const std::vector<std::string> traces = {"public/tracecompass-test-traces/many-threads",
                                           "public/babeltrace/lttng-tracefile-rotation/kernel",
                                           "recorded/pipe-threads/ctf"};
  for (const auto& t : traces)
    if (!fs::exists(ctftest::sharedPath(t))) GTEST_SKIP() << ctftest::sharedPath(t) << " not present";
  TempFolder tmp;
  copyTree(ctftest::sharedPath(traces[0]), tmp.path("x/many-threads"));
  copyTree(ctftest::sharedPath(traces[1]), tmp.path("y/z/kernel"));
  copyTree(ctftest::sharedPath(traces[2]), tmp.path("pipe/ctf"));
  const std::string error = errorOf(tmp.dir());
  EXPECT_NE(error.find("holds 3 unrelated CTF traces"), std::string::npos) << error;
  EXPECT_NE(error.find(tmp.path("x/many-threads") + ": lttng-modules 2.8 kernel trace, host wilbrod"), std::string::npos)
      << error;
  // An LTTng kernel/ folder is offered as its session folder.
  EXPECT_NE(error.find(tmp.path("y/z") + ": lttng-modules 2.10 kernel trace, host smarchi-efficios"), std::string::npos)
      << error;
  EXPECT_NE(error.find(tmp.path("pipe/ctf") + ": perf kernel trace, host vm"), std::string::npos) << error;
}

TEST(CtfFolder, AHiddenFileBesideTheMetadataIsNotAStream) {
  TempCopy tmp(dataPath("ctf/synthetic-lttng"));
  std::ofstream(tmp.path(".gitkeep")).flush();
  auto result = importers::importTrace(tmp.dir());
  ASSERT_TRUE(result.has_value()) << result.error().message();
  EXPECT_FALSE(result->error) << result->error->message();
  EXPECT_EQ(result->model->eventCount, kSyntheticEvents);
  EXPECT_EQ(importers::ctf::streamFileNames(tmp.dir()), (std::vector<std::string>{"chan_0", "chan_1"}));
}

TEST(CtfFolder, ATraceWithOnlyMetadataAndAHiddenFileSaysSoWithoutBlamingTheHiddenFile) {
  TempCopy tmp(dataPath("ctf/synthetic-lttng"));
  fs::remove(tmp.path("chan_0"));
  fs::remove(tmp.path("chan_1"));
  std::ofstream(tmp.path(".gitkeep")).flush();
  const std::string error = errorOf(tmp.dir());
  EXPECT_EQ(error, tmp.dir() + ": the trace has no stream files (only its metadata)");
  // An empty stream file beside it is the one named.
  std::ofstream(tmp.path("chan_0")).flush();
  EXPECT_EQ(errorOf(tmp.dir()), tmp.path("chan_0") + ": empty stream file (byte offset 0); the trace has no events");
}

TEST(CtfFolder, NoTraceInTheFirstLevelsIsAnErrorAsBefore) {
  TempFolder tmp;
  copyTree(dataPath("ctf/synthetic-lttng"), tmp.path("1/2/3/4/5/deep"));
  const std::string error = errorOf(tmp.dir());
  EXPECT_NE(error.find(tmp.dir()), std::string::npos) << error;
  core::SchedBuilder builder;
  for (const auto& imp : importers::allImporters())
    if (imp->name() == "ctf") {
      const core::Status s = imp->read(tmp.dir(), builder, {});
      EXPECT_NE(s.message().find("no CTF trace here"), std::string::npos) << s.message();
    }
}

}  // namespace
