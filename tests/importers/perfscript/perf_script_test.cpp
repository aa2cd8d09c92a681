// The perf-script text importer: the line tokenizer on the layouts perf script
// prints, two real excerpts (a task renamed to "Web Content" and then to the
// adversarial "x [001] 1.0: y", in default and -F pid,tid --ns layouts), and bad
// input that must fail with the file and line; power events from a hand-written excerpt.
#include <gtest/gtest.h>

#include <random>

#include "core/analysis/stats.h"
#include "importers/importer.h"
#include "importers/perfscript/perf_script_tokenizer.h"
#include "../perf/perf_test_support.h"

namespace {

using namespace perf_test;
using importers::perfscript::LineKind;
using importers::perfscript::ScriptLine;
using importers::perfscript::tokenizeLine;

struct LineCase {
  std::string name;
  std::string line;
  LineKind kind;
  std::string comm;
  int32_t tid = -1;
  int32_t pid = -1;
  int32_t cpu = -1;
  int64_t ts = 0;
  std::string event;
  std::string argsPrefix;
};

class PerfScriptLine : public ::testing::TestWithParam<LineCase> {};

TEST_P(PerfScriptLine, Tokenizes) {
  const auto& c = GetParam();
  ScriptLine sl;
  ASSERT_EQ(tokenizeLine(c.line, sl), c.kind);
  if (c.kind != LineKind::Sample) return;
  EXPECT_EQ(sl.comm, c.comm);
  EXPECT_EQ(sl.tid, c.tid);
  EXPECT_EQ(sl.pid, c.pid);
  EXPECT_EQ(sl.cpu, c.cpu);
  EXPECT_EQ(sl.ts, c.ts);
  EXPECT_EQ(sl.event, c.event);
  EXPECT_EQ(sl.args.substr(0, c.argsPrefix.size()), c.argsPrefix);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, PerfScriptLine,
    ::testing::Values(
        LineCase{"default",
                 "            perf 19790 [000]   811.591691:       sched:sched_waking: comm=migration/0 pid=18 prio=0 target_cpu=000",
                 LineKind::Sample, "perf", 19790, -1, 0, 811591691000, "sched_waking", "comm=migration/0"},
        LineCase{"comm_with_spaces",
                 "     Web Content  1231 [000]  1900.689670:       sched:sched_switch: prev_comm=Web Content prev_pid=1231",
                 LineKind::Sample, "Web Content", 1231, -1, 0, 1900689670000, "sched_switch", "prev_comm=Web Content"},
        LineCase{"comm_like_columns",
                 "  x [001] 1.0: y  1231 [000]  1900.734518:       sched:sched_switch: prev_comm=x [001] 1.0: y prev_pid=1231",
                 LineKind::Sample, "x [001] 1.0: y", 1231, -1, 0, 1900734518000, "sched_switch", "prev_comm=x [001]"},
        LineCase{"pid_tid_ns",
                 "     Web Content  1231/1231  [000]  1900.689670632:       sched:sched_switch: prev_comm=Web Content",
                 LineKind::Sample, "Web Content", 1231, 1231, 0, 1900689670632, "sched_switch", "prev_comm="},
        LineCase{"no_cpu", "            bash  4242   123.000001: sched:sched_process_exec: filename=/bin/ls pid=4242",
                 LineKind::Sample, "bash", 4242, -1, -1, 123000001000, "sched_process_exec", "filename=/bin/ls"},
        LineCase{"unknown_comm", "          :-1    -1 [001]     0.000002: sched:sched_switch: prev_comm=a", LineKind::Sample,
                 ":-1", -1, -1, 1, 2000, "sched_switch", "prev_comm=a"},
        LineCase{"hw_event_keeps_modifier", "            perf  1 [000]   1.000000:     100 cycles:u:  ffffffff81000000",
                 LineKind::Sample, "perf", 1, -1, 0, 1000000000, "cycles:u", "ffffffff"},
        LineCase{"callchain", "\t    ffffffff8100a1b2 __schedule+0x312 ([kernel.kallsyms])", LineKind::Skip, "", -1, -1, -1, 0, "", ""},
        LineCase{"comment", "# ========", LineKind::Skip, "", -1, -1, -1, 0, "", ""},
        LineCase{"blank", "   ", LineKind::Skip, "", -1, -1, -1, 0, "", ""},
        LineCase{"ftrace_text_is_not_perf_script",
                 "          <idle>-0       [000] d..2  123.456789: sched_switch: prev_comm=swapper/0", LineKind::Malformed, "", -1, -1, -1, 0, "", ""},
        LineCase{"garbage", "hello world", LineKind::Malformed, "", -1, -1, -1, 0, "", ""},
        LineCase{"no_event", "            perf 19790 [000]   811.591691:", LineKind::Malformed, "", -1, -1, -1, 0, "", ""}),
    [](const auto& tc) { return tc.param.name; });

TEST(PerfScriptFields, PrevStateForms) {
  using importers::perfscript::decodePrevState;
  EXPECT_EQ(decodePrevState("S"), core::TaskState::Sleeping);
  EXPECT_EQ(decodePrevState("R+"), core::TaskState::RunnablePreempted);
  EXPECT_EQ(decodePrevState("D|K"), core::TaskState::Blocked);
  EXPECT_EQ(decodePrevState("I"), core::TaskState::Idle);
  EXPECT_EQ(decodePrevState("Z"), core::TaskState::Dead);
  EXPECT_EQ(decodePrevState("1"), core::TaskState::Sleeping);        // raw, 4.14+ encoding
  EXPECT_EQ(decodePrevState("0x100"), core::TaskState::RunnablePreempted);
  EXPECT_EQ(decodePrevState("?"), core::TaskState::Unknown);
}

TEST(PerfScriptFields, ValuesWithSpaces) {
  using importers::perfscript::intValue;
  using importers::perfscript::valueBetween;
  const std::string_view a = "comm=Web Content pid=1231 prio=120 target_cpu=001";
  EXPECT_EQ(valueBetween(a, "comm", "pid"), "Web Content");
  EXPECT_EQ(intValue(a, "pid"), 1231);
  EXPECT_EQ(intValue(a, "target_cpu"), 1);
  EXPECT_EQ(intValue(a, "missing"), std::nullopt);
  // "comm=" must not match inside "child_comm=".
  const std::string_view f = "comm=sh pid=1 child_comm=sh 2 child_pid=2";
  EXPECT_EQ(valueBetween(f, "comm", "pid"), "sh");
  EXPECT_EQ(valueBetween(f, "child_comm", "child_pid"), "sh 2");
}

struct Excerpt {
  std::string file;
  bool ns;
};

class PerfScriptExcerpt : public ::testing::TestWithParam<Excerpt> {};

TEST_P(PerfScriptExcerpt, ImportsRenamedTask) {
  const std::string path = testData("perfscript/" + GetParam().file);
  auto m = importOk(path);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->format, "perf-script");
  const auto bytes = readBytes(path);
  EXPECT_EQ(modelCounts(*m), countScriptEvents(std::string(bytes.begin(), bytes.end())));
  // tid 1231 was renamed by prctl(PR_SET_NAME) twice; its last comm is the odd one.
  bool found = false;
  for (size_t u = 1; u < m->threads.size(); ++u) {
    if (m->threads.tid[u] != 1231) continue;
    found = true;
    EXPECT_EQ(m->strings.get(m->threads.comm[u]), "x [001] 1.0: y");
  }
  EXPECT_TRUE(found);
  bool sawWebContent = false;
  for (size_t i = 0; i < m->commChanges.utid.size(); ++i)
    sawWebContent |= m->strings.get(m->commChanges.comm[i]) == "x [001] 1.0: y";
  EXPECT_TRUE(sawWebContent);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::malformed_record), 0u);
  if (GetParam().ns) {
    EXPECT_NE(m->firstTs % 1000, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Files, PerfScriptExcerpt,
                         ::testing::Values(Excerpt{"renamed-comm.txt", false}, Excerpt{"renamed-comm-pid-ns.txt", true}),
                         [](const auto& tc) { return tc.param.ns ? std::string("pid_ns") : std::string("default"); });

// Both layouts of one recording: the same schedule, within the µs rounding.
TEST(PerfScriptExcerpt, LayoutsAgree) {
  auto us = importOk(testData("perfscript/renamed-comm.txt"));
  auto ns = importOk(testData("perfscript/renamed-comm-pid-ns.txt"));
  ASSERT_TRUE(us && ns);
  EXPECT_EQ(modelCounts(*us), modelCounts(*ns));
  expectSameTaskStats(*ns, *us, 1000);
}

struct BadText {
  std::string name;
  std::string text;
  std::string message;
  bool keepsPrefix;
};

class PerfScriptBadInput : public ::testing::TestWithParam<BadText> {};

const std::string kGood =
    "            perf 19790 [000]   811.591691:       sched:sched_waking: comm=migration/0 pid=18 prio=0 target_cpu=000\n"
    "            perf 19790 [000]   811.591694:       sched:sched_wakeup: comm=migration/0 pid=18 prio=0 target_cpu=000\n"
    "            perf 19790 [000]   811.591697:       sched:sched_switch: prev_comm=perf prev_pid=19790 prev_prio=120 "
    "prev_state=D ==> next_comm=migration/0 next_pid=18 next_prio=0\n";

TEST_P(PerfScriptBadInput, FailsWithLine) {
  const auto& c = GetParam();
  TempDir dir;
  const std::string path = dir.write(c.name + ".txt", std::vector<uint8_t>(c.text.begin(), c.text.end()));
  auto r = importers::importTrace(path);
  std::string message;
  if (!r) {
    message = r.error().message();
    EXPECT_FALSE(c.keepsPrefix) << message;
  } else {
    ASSERT_TRUE(r->error) << c.name << " was accepted";
    message = r->error->message();
    EXPECT_TRUE(c.keepsPrefix);
    EXPECT_TRUE(r->model->partial);
    EXPECT_GE(r->model->eventCount, 3u);  // a line whose fields are cut is still counted
  }
  EXPECT_NE(message.find(path + ": line "), std::string::npos) << message;
  EXPECT_NE(message.find(c.message), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PerfScriptBadInput,
    ::testing::Values(
        BadText{"truncated_last_line", kGood + "            perf 19790 [000]   811.5917", "line 4: the file ends inside a line", true},
        BadText{"binary_after_lines", kGood + std::string("\0\1\2\3\n", 5), "line 4: binary data", true},
        BadText{"switch_fields_cut", kGood + "            perf 19790 [000]   811.591698:       sched:sched_switch: prev_comm=perf",
                "line 4: the file ends inside a line", true}),
    [](const auto& tc) { return tc.param.name; });

// Lines perf script never prints are counted, located and skipped; the rest imports.
TEST(PerfScriptBadInputLines, GarbageLinesAreSkipped) {
  TempDir dir;
  const std::string text = kGood + "this is not perf script\n" + kGood;
  const std::string path = dir.write("garbage.txt", std::vector<uint8_t>(text.begin(), text.end()));
  auto r = importers::importTrace(path);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->error);
  EXPECT_EQ(r->model->eventCount, 6u);
  EXPECT_EQ(r->model->diagnostics.count(core::DiagCode::malformed_record), 1u);
  ASSERT_FALSE(r->model->diagnostics.records().empty());
  EXPECT_NE(r->model->diagnostics.records().front().format().find("line 4"), std::string::npos);
}

// Cut the real excerpt anywhere and flip bytes: an error names the line, or the
// model imports; never a crash.
TEST(PerfScriptBadInputLines, TruncatedAndCorruptedAnywhere) {
  const auto full = readBytes(testData("perfscript/renamed-comm.txt"));
  TempDir dir;
  std::mt19937_64 rng(3);
  for (size_t n = 1; n < full.size(); n += 997) {
    std::vector<uint8_t> b(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    if (rng() % 2) b[rng() % b.size()] = static_cast<uint8_t>(rng());
    const std::string path = dir.write("cut.txt", b);
    auto r = importers::importTrace(path);
    const std::string message = !r ? r.error().message() : (r->error ? r->error->message() : "");
    if (!message.empty()) {
      EXPECT_NE(message.find(path), std::string::npos) << message;
    }
  }
}

}  // namespace

// power-steps.txt (hand-written, tests/data/perfscript/README.md): CPU 0 at
// 1 GHz over [100.0, 100.25) s and 2 GHz to 101.0 s; out of idle over
// [100.0, 100.5) s (hog runs), in state 1 after; one cpu_idle line unreadable.
TEST(PerfScriptPower, PowerEventsBecomeCountersAndResidencies) {
  auto m = importOk(testData("perfscript/power-steps.txt"));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->diagnostics.count(core::DiagCode::malformed_record), 1u);
  ASSERT_NE(m->counters.find(core::CounterKind::CpuFrequencyKhz, 1), SIZE_MAX);  // set from CPU 0
  const auto stats = core::analysis::computeStats(*m);
  ASSERT_EQ(stats.coveredNs, 1'000'000'000);
  const auto& c = stats.cpus.at(0);
  EXPECT_EQ(c.freqUnknownNs, 0);
  EXPECT_EQ(c.freqResidencyNs, (std::map<int64_t, int64_t>{{1'000'000, 250'000'000}, {2'000'000, 750'000'000}}));
  EXPECT_NEAR(c.meanBusyFreqKhz, 1'500'000, 1e-6);  // hog ran half at each
  EXPECT_EQ(c.idleResidencyNs,
            (std::map<int64_t, int64_t>{{core::kIdleStateRunning, 500'000'000}, {1, 500'000'000}}));
}
