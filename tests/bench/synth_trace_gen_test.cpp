// The scale benchmark's traces (synth_trace_gen) are what they claim: the same
// events in ftrace text, perf script text, trace.dat and perf.data, read alike
// by each SchedLab importer and by the reference tools (trace-cmd for the
// trace.dat, perf script for the perf.data); and the
// workload keeps the rules a kernel trace keeps (a sched_waking names the CPU
// the task last ran on, a migration moves it off that CPU).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "importers/perf/perf_test_support.h"
#include "importers/tracedat/tracedat_test_support.h"
#include "support/scratch_dir.h"

namespace {

using test_support::ScratchDir;

TEST(SynthTraceGen, EveryFormatCarriesTheSameEvents) {
  ScratchDir dir("synth-trace-gen");
  const std::string txt = dir.file("s.txt"), perf = dir.file("s.perf.txt"), dat = dir.file("s.dat"),
                    perfData = dir.file("s.perf.data");
  const std::string cmd = std::string(SYNTH_TRACE_GEN) + " --events 30000 --cpus 6 --seed 7 --ftrace " + txt +
                          " --perf-script " + perf + " --dat " + dat + " --perf-data " + perfData;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;

  auto fromText = tracedat_test::importWhole(txt);
  auto fromPerf = tracedat_test::importWhole(perf);
  auto fromDat = tracedat_test::importWhole(dat);
  auto fromPerfData = tracedat_test::importWhole(perfData);
  ASSERT_TRUE(fromText && fromPerf && fromDat && fromPerfData);
  EXPECT_EQ(fromPerfData->format, "perf.data");
  EXPECT_EQ(fromText->format, "ftrace-text");
  EXPECT_EQ(fromPerf->format, "perf-script");
  const auto counts = tracedat_test::counts(*fromText);
  EXPECT_EQ(fromText->eventCount, 30000u);
  EXPECT_EQ(tracedat_test::counts(*fromPerf), counts);
  EXPECT_EQ(tracedat_test::counts(*fromDat), counts);
  EXPECT_EQ(tracedat_test::counts(*fromPerfData), counts);
  EXPECT_EQ(fromPerf->sliceCount(), fromText->sliceCount());
  EXPECT_EQ(fromDat->sliceCount(), fromText->sliceCount());
  EXPECT_EQ(fromPerfData->sliceCount(), fromText->sliceCount());
  EXPECT_EQ(fromDat->wakeups.size(), fromText->wakeups.size());
  EXPECT_EQ(fromPerfData->wakeups.size(), fromText->wakeups.size());
  // Its header describes no real machine: six CPUs, as asked, and a made-up host.
  EXPECT_EQ(fromPerfData->cpuCount(), 6);
  EXPECT_EQ(fromPerfData->metadata["hostname"], "synthetic");
  EXPECT_NE(fromPerfData->metadata["osrelease"].find("synthetic"), std::string::npos);
  // Wakings and wakeups come in pairs (the last pair may be cut by the event count).
  EXPECT_LE(counts.at("sched_waking") - counts.at("sched_wakeup"), 1u);
  // Every migration leaves the CPU the task was on: the builder would count migrate_wrong_cpu otherwise.
  EXPECT_EQ(fromText->diagnostics.count(core::DiagCode::migrate_wrong_cpu), 0u);
  EXPECT_EQ(fromDat->diagnostics.count(core::DiagCode::migrate_wrong_cpu), 0u);

  // Labelled as made up, in the text header and in the trace.dat's uname.
  std::ifstream in(txt);
  std::string header(400, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header.size()));
  EXPECT_NE(header.find("SYNTHETIC"), std::string::npos);
  EXPECT_NE(fromDat->metadata["kernel"].find("synthetic"), std::string::npos) << fromDat->metadata["kernel"];

  // The reference tools read the binary files as the same events.
  std::string missing;
  if (tracedat_test::haveTraceCmd())
    EXPECT_EQ(tracedat_test::traceCmdReportCounts(dat), counts);
  else
    missing += "trace-cmd is not installed: the trace.dat is not cross-checked. ";
  if (const auto script = perf_test::perfScript(perfData))
    EXPECT_EQ(perf_test::countScriptEvents(*script), counts);
  else
    missing += "perf is not installed: the perf.data is not cross-checked.";
  if (!missing.empty()) GTEST_SKIP() << missing;
}

}  // namespace
