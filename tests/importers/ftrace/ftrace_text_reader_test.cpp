// The ftrace-text importer end to end on small traces recorded here
// (tests/data/ftrace/good: tracefs with and without the irq column, with tgid,
// latency layout, trace_pipe with LOST EVENTS, trace-cmd report in its three
// styles) and on bad input (tests/data/ftrace/bad), through importers::importTrace.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

#include "importers/ftrace/ftrace_text_reader.h"
#include "importers/ftrace/independent_ftrace_parser.h"
#include "importers/importer.h"
#include "importers/registered.h"

namespace {

namespace fs = std::filesystem;

std::string dataPath(const std::string& rel) { return std::string(SCHEDLAB_TEST_DATA) + "/ftrace/" + rel; }

std::shared_ptr<core::TraceModel> importOk(const std::string& path) {
  auto result = importers::importTrace(path);
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().message());
  if (!result) return nullptr;
  EXPECT_FALSE(result->error) << result->error->message();
  EXPECT_EQ(result->model->format, "ftrace-text");
  return result->model;
}

std::map<std::string, uint64_t> countsOf(const core::TraceModel& m) {
  return {m.eventCounts.begin(), m.eventCounts.end()};
}

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class TempFile {
 public:
  explicit TempFile(const std::string& content, const std::string& suffix = ".txt") {
    m_path = (fs::temp_directory_path() / ("schedlab-ftrace-" + std::to_string(::getpid()) + "-" +
                                           std::to_string(s_counter++) + suffix))
                 .string();
    std::ofstream(m_path, std::ios::binary) << content;
  }
  ~TempFile() { std::remove(m_path.c_str()); }
  const std::string& path() const { return m_path; }

 private:
  static inline int s_counter = 0;
  std::string m_path;
};

// What a schedule looks like, to compare two imports of the same events.
using SliceRow = std::tuple<int, int64_t, int64_t, int, int, int>;  // cpu, ts, dur, tid, endState, endReason
std::vector<SliceRow> slicesOf(const core::TraceModel& m) {
  std::vector<SliceRow> rows;
  for (size_t cpu = 0; cpu < m.cpuSlices.size(); ++cpu) {
    const auto& t = m.cpuSlices[cpu];
    for (size_t i = 0; i < t.size(); ++i)
      rows.emplace_back(static_cast<int>(cpu), t.ts[i], t.dur[i], m.threads.tid[t.utid[i].value],
                        static_cast<int>(t.endState[i]), static_cast<int>(t.endReason[i]));
  }
  return rows;
}

const char* const kBracketFixtures[] = {"tracefs_irq.txt",     "tracefs_noirq.txt",      "tracefs_tgid.txt",
                                        "trace_pipe.txt",      "trace_pipe_lost.txt",    "tracecmd_report.txt",
                                        "tracecmd_report_raw.txt"};

}  // namespace

class FtraceFixture : public testing::TestWithParam<const char*> {};

TEST_P(FtraceFixture, CountsAndRuntimeEqualTheIndependentReading) {
  const std::string path = dataPath(std::string("good/") + GetParam());
  auto m = importOk(path);
  ASSERT_TRUE(m);
  const auto independent = ftrace_test::readIndependently(path);
  EXPECT_EQ(countsOf(*m), independent.eventCounts);
  EXPECT_EQ(static_cast<uint64_t>(m->lostEvents()), independent.lostEvents);
  std::map<int, int64_t> runtime;
  for (const auto& t : m->cpuSlices)
    for (size_t i = 0; i < t.size(); ++i)
      if (t.kind[i] == core::SliceKind::Task && t.dur[i] > 0) runtime[m->threads.tid[t.utid[i].value]] += t.dur[i];
  EXPECT_EQ(runtime, independent.runtimeByTid);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::malformed_record), 0u);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::unsupported_event), 0u);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::unknown_prev_state), 0u);
  EXPECT_EQ(m->topology.cpuCount(), 2);
}

INSTANTIATE_TEST_SUITE_P(Recorded, FtraceFixture, testing::ValuesIn(kBracketFixtures),
                         [](const testing::TestParamInfo<const char*>& param) {
                           std::string n = param.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(FtraceFixtureDetails, LatencyLayoutCountsEveryEventLine) {
  const std::string path = dataPath("good/tracefs_latency.txt");
  auto m = importOk(path);
  ASSERT_TRUE(m);
  // "  rec.sh-8532      1d..2. 45135us+: sched_wakeup_new: ..."
  std::map<std::string, uint64_t> expected;
  const std::regex event(R"(-\d+ +\d+\S* +\d+us.: (\w+):)");
  std::istringstream in(readAll(path));
  std::string line;
  std::smatch sm;
  while (std::getline(in, line))
    if (std::regex_search(line, sm, event)) ++expected[sm[1]];
  EXPECT_EQ(countsOf(*m), expected);
  EXPECT_EQ(m->metadata.at("osrelease"), "6.18.44-fc-v669");
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::malformed_record), 0u);
  // Relative microseconds: " rec2.sh-13805     0d.s4. 26514us : sched_waking: ..." is the first event.
  EXPECT_EQ(m->firstTs, 26514000);
}

TEST(FtraceFixtureDetails, TraceCmdReportStylesBuildTheSameSchedule) {
  // One trace.dat, printed by trace-cmd report 3.1.6 with its sched plugins
  // ("bash:8628 [120] S ==> ..."), with -R (raw fields, prev_state=256) and
  // with -l (latency columns). The plugin's letters and the raw bits must decode
  // to the same states.
  auto plugin = importOk(dataPath("good/tracecmd_report.txt"));
  auto raw = importOk(dataPath("good/tracecmd_report_raw.txt"));
  auto latency = importOk(dataPath("good/tracecmd_report_latency.txt"));
  ASSERT_TRUE(plugin && raw && latency);
  EXPECT_EQ(countsOf(*plugin), countsOf(*raw));
  EXPECT_EQ(countsOf(*plugin), countsOf(*latency));
  EXPECT_EQ(slicesOf(*plugin), slicesOf(*raw));
  EXPECT_EQ(slicesOf(*plugin), slicesOf(*latency));
  EXPECT_EQ(plugin->wakeups.size(), raw->wakeups.size());
  EXPECT_EQ(raw->metadata.at("prev_state_encoding"), "4.14+ report bits");
  EXPECT_EQ(plugin->topology.cpuCount(), 2);  // "cpus=2"
}

TEST(FtraceFixtureDetails, IrqColumnMarksWakeupsFromSoftirq) {
  // Line 25: "ls-13780 [001] dNs3. 902.121247: sched_waking: comm=rcu_preempt pid=15": softirq, no waker.
  auto m = importOk(dataPath("good/tracefs_irq.txt"));
  ASSERT_TRUE(m);
  bool found = false;
  for (size_t i = 0; i < m->wakeups.size(); ++i) {
    if (m->wakeups.ts[i] != 902121247000) continue;
    found = true;
    EXPECT_EQ(m->threads.tid[m->wakeups.wakee[i].value], 15);
    EXPECT_TRUE(m->wakeups.flags[i] & core::kWakeupFromIrq);
    EXPECT_FALSE(m->wakeups.waker[i].isValid());
  }
  EXPECT_TRUE(found);
}

// Without sched_wakeup (Perfetto's usual set, or a tracefs one like it),
// sched_waking names the CPU the wakee was on, and where try_to_wake_up() sent
// it is the sched_migrate_task traced next on the waker's CPU. A move traced
// later (here after the waker forks, as a balancer's would be) is not the
// wakeup's.
TEST(FtraceFixtureDetails, TheMoveRightAfterASchedWakingIsItsTarget) {
  const std::string head =
      "# tracer: nop\n#\n"
      "          <idle>-0       [000] d..2.   100.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 "
      "prev_state=R ==> next_comm=waker next_pid=10 next_prio=120\n"
      "          <idle>-0       [001] d..2.   100.000000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 "
      "prev_state=R ==> next_comm=wakee next_pid=20 next_prio=120\n"
      "           wakee-20      [001] d..2.   100.000100: sched_switch: prev_comm=wakee prev_pid=20 prev_prio=120 "
      "prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n"
      "           waker-10      [000] d..4.   100.000200: sched_waking: comm=wakee pid=20 prio=120 target_cpu=001\n";
  const std::string move =
      "           waker-10      [000] d..4.   100.000203: sched_migrate_task: comm=wakee pid=20 prio=120 orig_cpu=1 "
      "dest_cpu=0\n";
  const std::string other =
      "           waker-10      [000] .....   100.000202: sched_process_fork: comm=waker pid=10 child_comm=waker "
      "child_pid=31\n";
  const auto targetOfWakee = [](const core::TraceModel& m) {
    for (size_t i = 0; i < m.wakeups.size(); ++i)
      if (m.threads.tid[m.wakeups.wakee[i].value] == 20) return static_cast<int>(m.wakeups.targetCpu[i]);
    return -1;
  };
  TempFile adjacent(head + move);
  auto m = importOk(adjacent.path());
  ASSERT_TRUE(m);
  EXPECT_EQ(targetOfWakee(*m), 0);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::migrate_wrong_cpu), 0u);
  TempFile later(head + other + move);
  m = importOk(later.path());
  ASSERT_TRUE(m);
  EXPECT_EQ(targetOfWakee(*m), 1);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::migrate_wrong_cpu), 0u);
}

TEST(FtraceFixtureDetails, TgidColumnSetsTheProcess) {
  auto m = importOk(dataPath("good/tracefs_tgid.txt"));
  ASSERT_TRUE(m);
  // "rec2.sh-13794   (  13794) [001]"
  bool found = false;
  for (size_t u = 0; u < m->threads.size(); ++u)
    if (m->threads.tid[u] == 13794) {
      found = true;
      EXPECT_EQ(m->threads.tgid[u], 13794);
    }
  EXPECT_TRUE(found);
  EXPECT_GT(m->processes.size(), 0u);
}

TEST(FtraceFixtureDetails, LostEventsBecomeDataLossRanges) {
  // "CPU:0 [LOST 1239 EVENTS]" before CPU 0's first event at 903.176404, and
  // "CPU:1 [LOST 1087 EVENTS]" before CPU 1's first event at 903.177338.
  auto m = importOk(dataPath("good/trace_pipe_lost.txt"));
  ASSERT_TRUE(m);
  ASSERT_EQ(m->dataLoss.size(), 2u);
  EXPECT_EQ(m->dataLoss.cpu[0], 0);
  EXPECT_EQ(m->dataLoss.count[0], 1239);
  EXPECT_EQ(m->dataLoss.tsEnd[0], 903176404000);
  EXPECT_EQ(m->dataLoss.cpu[1], 1);
  EXPECT_EQ(m->dataLoss.count[1], 1087);
  EXPECT_EQ(m->dataLoss.tsEnd[1], 903177338000);
  EXPECT_EQ(m->lostEvents(), 2326);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::lost_events), 2326u);
}

// The same events in other wrappings: CRLF, no final newline, a JavaScript
// string (legacy systrace .txt) and a systrace HTML page.
TEST(FtraceVariants, WrappingsOfOneTraceImportIdentically) {
  const std::string original = readAll(dataPath("good/tracefs_irq.txt"));
  auto reference = importOk(dataPath("good/tracefs_irq.txt"));
  ASSERT_TRUE(reference);

  std::string crlf;
  for (char c : original) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  std::string noFinalNewline = original.substr(0, original.size() - 1);
  std::string js;
  {
    std::istringstream in(original);
    std::string line;
    while (std::getline(in, line)) js += line + "\\n\\\n";
  }
  std::string html = "<!DOCTYPE html>\n<html>\n<head><title>Android System Trace</title>\n<script>var x = 1;</script>\n"
                     "</head><body>\n  <script>\n  var linuxPerfData = \"\\\n" +
                     js + "           dummy-0000  [000] 0.0: 0: trace_event_clock_sync: parent_ts=0.0\\n\";\n"
                          "  </script>\n</body>\n</html>\n";

  for (const auto& [label, content, suffix] :
       {std::tuple{"crlf", crlf, ".txt"}, std::tuple{"no final newline", noFinalNewline, ".txt"},
        std::tuple{"js string", js, ".txt"}, std::tuple{"systrace html", html, ".html"}}) {
    SCOPED_TRACE(label);
    TempFile file(content, suffix);
    auto m = importOk(file.path());
    ASSERT_TRUE(m);
    auto counts = countsOf(*m);
    if (std::string(label) == "systrace html") {
      EXPECT_EQ(counts["tracing_mark_write"], 1u);  // the clock-sync marker is an event too
      counts.erase("tracing_mark_write");
      EXPECT_EQ(m->metadata.at("clock_sync"), "parent_ts=0.0");
    }
    EXPECT_EQ(counts, countsOf(*reference));
    EXPECT_EQ(slicesOf(*m), slicesOf(*reference));
    EXPECT_EQ(m->firstTs, reference->firstTs);
    EXPECT_EQ(m->lastTs, reference->lastTs);
    EXPECT_EQ(m->diagnostics.count(core::DiagCode::malformed_record), 0u);
    EXPECT_EQ(m->diagnostics.count(core::DiagCode::out_of_order_timestamp), 0u);
  }
}

TEST(FtraceVariants, OverlongLineIsReportedAndSkipped) {
  const std::string original = readAll(dataPath("good/tracefs_irq.txt"));
  const size_t cut = original.find('\n', original.find("sched_", 1000)) + 1;
  const auto linesBefore = static_cast<int>(std::count(original.begin(), original.begin() + static_cast<long>(cut), '\n'));
  const std::string content = original.substr(0, cut) + std::string(9u << 20, 'x') + "\n" + original.substr(cut);
  TempFile file(content);
  auto m = importOk(file.path());
  ASSERT_TRUE(m);
  auto reference = importOk(dataPath("good/tracefs_irq.txt"));
  EXPECT_EQ(countsOf(*m), countsOf(*reference));
  ASSERT_EQ(m->diagnostics.count(core::DiagCode::malformed_record), 1u);
  const std::string msg = m->diagnostics.records().front().format();
  EXPECT_NE(msg.find(": line " + std::to_string(linesBefore + 1) + ": line longer than"), std::string::npos) << msg;
}

// ---- bad input -------------------------------------------------------------

struct BadCase {
  const char* file;           ///< under tests/data/ftrace/bad
  bool fails;                 ///< importTrace returns an error (else: a model with a diagnostic)
  core::DiagCode code;        ///< the diagnostic expected when it does not fail
  const char* fragment;       ///< in the error or in the first diagnostic of `code`
};

const BadCase kBadCases[] = {
    {"empty.txt", true, core::DiagCode::malformed_record, "empty file"},
    {"random_bytes.bin", true, core::DiagCode::malformed_record, "unknown format"},
    {"header_then_garbage.txt", true, core::DiagCode::malformed_record, "header_then_garbage.txt: line 13: not an ftrace text trace"},
    {"garbage_lines.txt", false, core::DiagCode::malformed_record, "garbage_lines.txt: line 31: cannot parse line: \"this line is not ftrace\""},
    {"truncated_last_line.txt", false, core::DiagCode::truncated_input, "truncated_last_line.txt: line 79 (cpu 0): last line is truncated"},
    {"binary_junk_middle.txt", false, core::DiagCode::malformed_record, "binary_junk_middle.txt: line 41: cannot parse line"},
    {"nul_byte_line.txt", false, core::DiagCode::malformed_record, "nul_byte_line.txt: line 21: cannot parse line: \"              ls-13780   [001] d..4.   902.121127: sch?ed_"},
    {"unparsable_sched_fields.txt", false, core::DiagCode::unsupported_event, "unparsable_sched_fields.txt: line 21 (cpu 0): cannot read the fields of sched_switch"},
};

class FtraceBadInput : public testing::TestWithParam<BadCase> {};

TEST_P(FtraceBadInput, ClearErrorOrLocatedDiagnostic) {
  const BadCase& c = GetParam();
  const std::string path = dataPath(std::string("bad/") + c.file);
  auto result = importers::importTrace(path);
  if (c.fails) {
    ASSERT_FALSE(result.has_value());
    EXPECT_NE(result.error().message().find(c.fragment), std::string::npos) << result.error().message();
    EXPECT_NE(result.error().message().find(path), std::string::npos) << result.error().message();
    return;
  }
  ASSERT_TRUE(result.has_value()) << result.error().message();
  const auto& m = *result->model;
  EXPECT_GT(m.eventCount, 0u);
  ASSERT_GT(m.diagnostics.count(c.code), 0u);
  std::string first;
  for (const auto& r : m.diagnostics.records())
    if (r.code == c.code) {
      first = r.format();
      break;
    }
  EXPECT_NE(first.find(c.fragment), std::string::npos) << first;
}

// tracefs' `trace` and the files of /proc say they are 0 bytes long until
// read: the format is still told from what they hold, not called empty.
TEST(FtraceBadInput, AFileSizedOnlyWhenReadIsProbedByItsBytes) {
  const std::string path = "/proc/self/status";
  std::error_code ec;
  if (std::filesystem::file_size(path, ec) != 0 || ec) GTEST_SKIP() << path << " has a size here";
  auto result = importers::importTrace(path);
  ASSERT_FALSE(result.has_value());
  EXPECT_NE(result.error().message().find(path + ": unknown format (byte offset 0)"), std::string::npos) << result.error().message();
}

INSTANTIATE_TEST_SUITE_P(Table, FtraceBadInput, testing::ValuesIn(kBadCases),
                         [](const testing::TestParamInfo<BadCase>& param) {
                           std::string n = param.param.file;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(FtraceBadInputDetails, GarbageLinesAreSkippedAndTheRestIsRead) {
  auto m = importOk(dataPath("bad/garbage_lines.txt"));
  auto reference = importOk(dataPath("good/tracefs_irq.txt"));
  ASSERT_TRUE(m && reference);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::malformed_record), 3u);
  EXPECT_EQ(countsOf(*m), countsOf(*reference));
  EXPECT_EQ(slicesOf(*m), slicesOf(*reference));
}

TEST(FtraceBadInputDetails, FolderAndMissingFile) {
  const fs::path dir = fs::temp_directory_path() / ("schedlab-ftrace-dir-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto result = importers::importTrace(dir.string());
  EXPECT_FALSE(result.has_value());
  // The importer itself, called on a folder, says so too.
  core::SchedBuilder builder;
  auto importer = importers::makeFtraceTextImporter();
  const core::Status status = importer->read(dir.string(), builder, {});
  EXPECT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("is a folder"), std::string::npos) << status.message();
  fs::remove_all(dir);
  result = importers::importTrace(dir.string() + "/nope.txt");
  ASSERT_FALSE(result.has_value());
  EXPECT_NE(result.error().message().find("no such file"), std::string::npos);
}

TEST(FtraceBadInputDetails, ReadingANonFtraceFileDirectlyNamesItsFirstLine) {
  core::SchedBuilder builder;
  auto importer = importers::makeFtraceTextImporter();
  const std::string path = dataPath("bad/random_bytes.bin");
  const core::Status status = importer->read(path, builder, {});
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find(path + ": line 1: not an ftrace text trace"), std::string::npos) << status.message();
}

TEST(FtraceBadInputDetails, EveryPrefixOfATraceImportsOrFailsCleanly) {
  // Truncation at any offset: never a crash, and a non-empty prefix keeps its events.
  const std::string original = readAll(dataPath("good/tracefs_tgid.txt"));
  const size_t firstEventEnd = original.find('\n', original.find("sched_process_fork")) + 1;
  for (size_t len = 0; len <= original.size(); len += 97) {
    TempFile file(original.substr(0, len));
    auto result = importers::importTrace(file.path());
    if (len >= firstEventEnd) {
      ASSERT_TRUE(result.has_value()) << len << ": " << result.error().message();
      EXPECT_GT(result->model->eventCount, 0u) << len;
    }
  }
}

TEST(FtraceProbe, ClaimsFtraceTextAndNothingElse) {
  using importers::ftrace::probeFtraceText;
  const std::string tracefs = readAll(dataPath("good/tracefs_irq.txt"));
  EXPECT_GE(probeFtraceText(tracefs), 90);
  EXPECT_GE(probeFtraceText(readAll(dataPath("good/trace_pipe.txt"))), 90);
  EXPECT_GE(probeFtraceText(readAll(dataPath("good/tracecmd_report.txt"))), 90);
  EXPECT_EQ(probeFtraceText(""), 0);
  EXPECT_EQ(probeFtraceText(readAll(dataPath("bad/random_bytes.bin"))), 0);
  // perf script text is another importer's.
  EXPECT_EQ(probeFtraceText("            perf 19790 [000]   811.591691:       sched:sched_waking: comm=migration/0 pid=18 "
                            "prio=0 target_cpu=000\n"),
            0);
  EXPECT_EQ(probeFtraceText("<!DOCTYPE html><html><body>hello</body></html>\n"), 0);
}

TEST(FtraceOptions, ProgressRisesToOneAndStopCancels) {
  const std::string path = dataPath("good/trace_pipe.txt");
  std::vector<double> seen;
  importers::ImportOptions options;
  options.progress = [&](double f) { seen.push_back(f); };
  auto result = importers::importTrace(path, options);
  ASSERT_TRUE(result.has_value());
  ASSERT_FALSE(seen.empty());
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);

  std::stop_source stop;
  stop.request_stop();
  importers::ImportOptions cancelled;
  cancelled.stop = stop.get_token();
  result = importers::importTrace(path, cancelled);
  ASSERT_FALSE(result.has_value());
  EXPECT_NE(result.error().message().find("cancelled"), std::string::npos) << result.error().message();
}

// Parsing on a worker thread (Threading::Auto on inputs of 4 MiB and more
// with a core to spare) hands the builder what parsing here gives it, in the
// same order: the same model, the same diagnostics with the same line numbers,
// the same result. Every fixture, good and bad, and the shared recordings'
// tracefs text when they are beside the checkout.
TEST(FtraceThreading, ParsingOnAWorkerBuildsTheSameModel) {
  std::vector<std::string> paths;
  for (const char* dir : {"good", "bad"})
    for (const auto& e : fs::directory_iterator(dataPath(dir))) paths.push_back(e.path().string());
  const fs::path shared = fs::path(SCHEDLAB_SHARED_TRACES) / "recorded";
  if (fs::is_directory(shared))
    for (const auto& e : fs::directory_iterator(shared))
      if (fs::exists(e.path() / "trace.txt")) paths.push_back((e.path() / "trace.txt").string());
  std::sort(paths.begin(), paths.end());
  ASSERT_GE(paths.size(), 17u);
  for (const std::string& path : paths) {
    struct Read {
      core::Status status;
      std::shared_ptr<core::TraceModel> model;
    };
    const auto read = [&](importers::Threading threading) {
      core::SchedBuilder builder;
      builder.setCurrentFile(path);
      const importers::ImportOptions options;  // the reader keeps a reference to it
      importers::ftrace::FtraceTextReader reader(builder, options, threading);
      Read r{reader.read(path), nullptr};
      r.model = builder.finalize();
      return r;
    };
    const Read direct = read(importers::Threading::Never);
    const Read worker = read(importers::Threading::Always);
    EXPECT_EQ(worker.status.isOk(), direct.status.isOk()) << path;
    EXPECT_EQ(worker.status.message(), direct.status.message()) << path;
    const core::TraceModel& a = *direct.model;
    const core::TraceModel& b = *worker.model;
    EXPECT_EQ(b.eventCounts, a.eventCounts) << path;
    EXPECT_EQ(b.metadata, a.metadata) << path;
    EXPECT_EQ(slicesOf(b), slicesOf(a)) << path;
    EXPECT_EQ(b.threads.tid, a.threads.tid) << path;
    EXPECT_EQ(b.threads.tgid, a.threads.tgid) << path;
    EXPECT_EQ(b.wakeups.size(), a.wakeups.size()) << path;
    EXPECT_EQ(b.topology.cpuCount(), a.topology.cpuCount()) << path;
    for (size_t code = 0; code < static_cast<size_t>(core::DiagCode::Count); ++code)
      EXPECT_EQ(b.diagnostics.count(static_cast<core::DiagCode>(code)),
                a.diagnostics.count(static_cast<core::DiagCode>(code)))
          << path << ": diagnostic " << code;
    std::vector<std::string> recordsA, recordsB;
    for (const auto& r : a.diagnostics.records()) recordsA.push_back(r.format());
    for (const auto& r : b.diagnostics.records()) recordsB.push_back(r.format());
    EXPECT_EQ(recordsB, recordsA) << path;
  }
}
