// The scheduler settings beside a trace (`schedlab-cli record` writes
// TRACE.sched) go into the run's metadata whatever the format; a line that is
// no setting is counted and located, the others kept; a replay of a recording
// made with autogroup on counts it as not modelled.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/sched_settings.h"
#include "importers/importer.h"
#include "replay/replay.h"
#include "replay/workload/rtapp_reader.h"
#include "replay/workload/trace_extractor.h"
#include "support/scratch_dir.h"

namespace {

namespace fs = std::filesystem;
using test_support::ScratchDir;

std::string demoCopy(const ScratchDir& dir) {
  const std::string path = dir.file("demo.txt");
  fs::copy_file(fs::path(SCHEDLAB_TEST_DATA) / "../../resources/demo/pipe-and-hogs.txt", path);
  return path;
}

std::string metadata(const core::TraceModel& m, const std::string& key) {
  const auto it = m.metadata.find(key);
  return it == m.metadata.end() ? "(none)" : it->second;
}

uint64_t autogroupCount(const core::TraceModel& m) {
  auto w = replay::extractWorkload(m, {});
  EXPECT_TRUE(w) << w.error().message();
  return w ? w->unmodelled.recordedWithAutogroup : 99;
}

using Pair = std::pair<std::string, std::string>;

// Imports `trace` with `settings` written beside it (nullptr: as it is) and
// returns the value of parameter `key` in its EEVDF replay, and what set it.
Pair paramWithSettings(const std::string& trace, const char* settings, const std::string& key) {
  if (settings) std::ofstream(core::schedSettingsPath(trace)) << settings;
  auto imported = importers::importTrace(trace);
  if (!imported) return {"(not imported)", imported.error().message()};
  auto w = replay::extractWorkload(*imported->model, {});
  if (!w) return {"(no workload)", w.error().message()};
  replay::ReplayOptions options;
  options.model = "eevdf";
  auto r = replay::runReplay(*w, options);
  if (!r) return {"(no replay)", r.error().message()};
  for (const auto& p : r->params)
    if (p.key == key) return {p.value, p.origin};
  return {"(absent)", ""};
}

// wake_pack=settings (the default) follows kernel.sched_vcpu_pack in the
// settings beside the recording: packing is modelled where the knob is set.
// The parameter says which setting decided it.
TEST(SchedSettingsBeside, VcpuPackingSettingTurnsWakePackOn) {
  ScratchDir dir("sched-settings-vcpu-pack");
  const std::string trace = demoCopy(dir);
  const auto wakePackWith = [&](const char* settings) { return paramWithSettings(trace, settings, "wake_pack"); };
  EXPECT_EQ(wakePackWith(nullptr),
            Pair("off", "no scheduler settings beside the recording; schedlab-cli record saves them"));
  EXPECT_EQ(wakePackWith("kernel.sched_autogroup_enabled = 1\n"),
            Pair("off", "the settings beside the recording do not have kernel.sched_vcpu_pack"));
  EXPECT_EQ(wakePackWith("kernel.sched_vcpu_pack = 0\n"),
            Pair("off", "the settings beside the recording: kernel.sched_vcpu_pack = 0"));
  EXPECT_EQ(wakePackWith("kernel.sched_autogroup_enabled = 1\nkernel.sched_vcpu_pack = 15\n"),
            Pair("measured", "the settings beside the recording: kernel.sched_vcpu_pack = 15"));
}

// preempt=settings (the default) takes the preemption model that `schedlab-cli
// record` saves as sched.preempt; lazy defers a fair task's reschedule to the
// return to user space or the tick, so in a vfork it is none's; without the
// setting, Kconfig's default, none.
TEST(SchedSettingsBeside, PreemptFollowsTheRecordedPreemptionModel) {
  ScratchDir dir("sched-settings-preempt");
  const std::string trace = demoCopy(dir);
  const auto preemptWith = [&](const char* settings) { return paramWithSettings(trace, settings, "preempt"); };
  EXPECT_EQ(preemptWith(nullptr), Pair("none", "no scheduler settings beside the recording: Kconfig's default"));
  EXPECT_EQ(preemptWith("kernel.sched_autogroup_enabled = 1\n"),
            Pair("none", "the settings beside the recording do not have sched.preempt: Kconfig's default"));
  EXPECT_EQ(preemptWith("sched.preempt = voluntary\n"),
            Pair("voluntary", "the settings beside the recording: sched.preempt = voluntary"));
  EXPECT_EQ(preemptWith("sched.preempt = full\n"),
            Pair("full", "the settings beside the recording: sched.preempt = full"));
  EXPECT_EQ(preemptWith("sched.preempt = lazy\n"),
            Pair("none", "the settings beside the recording: sched.preempt = lazy, none's in a vfork"));
}

// autogroup=settings (the default) models the sessions' groups as the
// settings beside the recording say, and, without them, as the kernel does
// by default; a written workload has no sessions.
TEST(SchedSettingsBeside, AutogroupFollowsTheSettingOrTheKernelsDefault) {
  ScratchDir dir("sched-settings-autogroup");
  const std::string trace = demoCopy(dir);
  const auto autogroupWith = [&](const char* settings) { return paramWithSettings(trace, settings, "autogroup"); };
  EXPECT_EQ(autogroupWith(nullptr), Pair("on", "no scheduler settings beside the recording: the kernel's default, on "
                                               "when built with CONFIG_SCHED_AUTOGROUP"));
  EXPECT_EQ(autogroupWith("kernel.sched_vcpu_pack = 15\n"),
            Pair("on", "the settings beside the recording do not have kernel.sched_autogroup_enabled: the kernel's "
                       "default, on when built with CONFIG_SCHED_AUTOGROUP"));
  EXPECT_EQ(autogroupWith("kernel.sched_autogroup_enabled = 0\n"),
            Pair("off", "the settings beside the recording: kernel.sched_autogroup_enabled = 0"));
  EXPECT_EQ(autogroupWith("kernel.sched_autogroup_enabled = 1\n"),
            Pair("on", "the settings beside the recording: kernel.sched_autogroup_enabled = 1"));
  auto written = replay::readRtAppWorkload(R"({"tasks": {"a": {"loop": 1, "run": 1000}}})", "written.json");
  ASSERT_TRUE(written) << written.error().message();
  replay::ReplayOptions options;
  options.model = "eevdf";
  auto r = replay::runReplay(*written, options);
  ASSERT_TRUE(r) << r.error().message();
  const auto it = std::find_if(r->params.begin(), r->params.end(), [](const auto& p) { return p.key == "autogroup"; });
  ASSERT_NE(it, r->params.end());
  EXPECT_EQ(Pair(it->value, it->origin), Pair("off", "a written workload has no sessions"));
}

TEST(SchedSettingsBeside, GoIntoTheRunsMetadata) {
  ScratchDir dir("sched-settings-beside");
  const std::string trace = demoCopy(dir);
  auto plain = importers::importTrace(trace);
  ASSERT_TRUE(plain) << plain.error().message();
  EXPECT_EQ(metadata(*plain->model, "kernel.sched_autogroup_enabled"), "(none)");
  EXPECT_EQ(autogroupCount(*plain->model), 0u);

  std::ofstream(core::schedSettingsPath(trace)) << "# saved by hand\nkernel.sched_autogroup_enabled = 1\n"
                                                   "kernel.sched_rr_timeslice_ms = 100\n";
  auto r = importers::importTrace(trace);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(metadata(*r->model, "kernel.sched_autogroup_enabled"), "1");
  EXPECT_EQ(metadata(*r->model, "kernel.sched_rr_timeslice_ms"), "100");
  EXPECT_EQ(metadata(*r->model, "sched_settings_from"), core::schedSettingsPath(trace));
  EXPECT_EQ(r->model->diagnostics.count(core::DiagCode::malformed_record), 0u);
  EXPECT_EQ(autogroupCount(*r->model), 1u);

  std::ofstream(core::schedSettingsPath(trace)) << "kernel.sched_autogroup_enabled = 0\n";
  auto off = importers::importTrace(trace);
  ASSERT_TRUE(off) << off.error().message();
  EXPECT_EQ(metadata(*off->model, "kernel.sched_autogroup_enabled"), "0");
  EXPECT_EQ(autogroupCount(*off->model), 0u);
}

TEST(SchedSettingsBeside, ALineThatIsNoSettingIsLocatedAndTheOthersKept) {
  ScratchDir dir("sched-settings-beside-bad");
  const std::string trace = demoCopy(dir);
  std::ofstream(core::schedSettingsPath(trace)) << "kernel.sched_autogroup_enabled = 1\nnot a setting\n";
  auto r = importers::importTrace(trace);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_FALSE(r->error);
  EXPECT_EQ(metadata(*r->model, "kernel.sched_autogroup_enabled"), "1");
  ASSERT_EQ(r->model->diagnostics.count(core::DiagCode::malformed_record), 1u);
  for (const auto& rec : r->model->diagnostics.records()) {
    if (rec.code != core::DiagCode::malformed_record) continue;
    EXPECT_EQ(rec.format(),
              core::schedSettingsPath(trace) + ": line 2: expected NAME = VALUE (as sysctl prints a setting)");
  }
}

TEST(SchedSettingsBeside, AFileTooBigToBeSettingsIsReportedNotRead) {
  ScratchDir dir("sched-settings-beside-big");
  const std::string trace = demoCopy(dir);
  const std::string content = "kernel.sched_autogroup_enabled = 1\n" + std::string(1 << 20, '#');
  std::ofstream(core::schedSettingsPath(trace)) << content;
  auto r = importers::importTrace(trace);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(metadata(*r->model, "kernel.sched_autogroup_enabled"), "(none)");
  ASSERT_EQ(r->model->diagnostics.count(core::DiagCode::malformed_record), 1u);
  for (const auto& rec : r->model->diagnostics.records()) {
    if (rec.code != core::DiagCode::malformed_record) continue;
    EXPECT_EQ(rec.format(), core::schedSettingsPath(trace) + ": " + std::to_string(content.size()) +
                                " bytes: too large to be scheduler settings (at most 1 MiB); not read");
  }
}

}  // namespace
