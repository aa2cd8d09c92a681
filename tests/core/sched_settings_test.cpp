// The scheduler settings saved beside a recorded trace: captured from a
// /proc/sys/kernel-like folder, written and read back as sysctl lines.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/sched_settings.h"
#include "support/scratch_dir.h"

namespace {

namespace fs = std::filesystem;
using test_support::ScratchDir;

TEST(SchedSettings, ReadsSysctlLinesAndNamesTheOthers) {
  const auto parsed = core::parseSchedSettings(
      "# a comment\n"
      "\n"
      "kernel.sched_autogroup_enabled = 1\n"
      "kernel.sched_rr_timeslice_ms=100\n"
      "  kernel.sched_two =  3\t 4  \n"
      "no setting here\n"
      "kernel.a b = 1\n"
      "kernel.sched_empty =\n");
  ASSERT_EQ(parsed.settings.size(), 4u);
  EXPECT_EQ(parsed.settings[0].name, "kernel.sched_autogroup_enabled");
  EXPECT_EQ(parsed.settings[0].value, "1");
  EXPECT_EQ(parsed.settings[1].name, "kernel.sched_rr_timeslice_ms");
  EXPECT_EQ(parsed.settings[1].value, "100");
  EXPECT_EQ(parsed.settings[2].name, "kernel.sched_two");
  EXPECT_EQ(parsed.settings[2].value, "3 4");
  EXPECT_EQ(parsed.settings[3].name, "kernel.sched_empty");
  EXPECT_EQ(parsed.settings[3].value, "");
  ASSERT_EQ(parsed.badLines.size(), 2u);
  EXPECT_EQ(parsed.badLines[0].line, 6u);
  EXPECT_EQ(parsed.badLines[1].line, 7u);
}

TEST(SchedSettings, CapturesTheSchedFilesOfTheFolderAsSysctlPrintsThem) {
  ScratchDir dir("sched-settings");
  std::ofstream(dir.file("sched_autogroup_enabled")) << "1\n";
  std::ofstream(dir.file("sched_pair")) << "10\t20\n";
  std::ofstream(dir.file("hostname")) << "box\n";  // not a scheduler setting
  fs::create_directories(dir.path() / "sched_domain");  // a folder, not a setting
  auto text = core::captureSchedSettings(dir.path().string());
  ASSERT_TRUE(text) << text.error().message();
  const auto parsed = core::parseSchedSettings(*text);
  EXPECT_TRUE(parsed.badLines.empty());
  ASSERT_EQ(parsed.settings.size(), 2u);
  EXPECT_EQ(parsed.settings[0].name, "kernel.sched_autogroup_enabled");
  EXPECT_EQ(parsed.settings[0].value, "1");
  EXPECT_EQ(parsed.settings[1].name, "kernel.sched_pair");
  EXPECT_EQ(parsed.settings[1].value, "10 20");

  ScratchDir empty("sched-settings-none");
  auto none = core::captureSchedSettings(empty.path().string());
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message(), empty.path().string() + ": no readable sched_* setting");
}

// Against the machine itself: every value equals what /proc/sys shows.
TEST(SchedSettings, CapturesThisMachinesSettings) {
  if (!fs::is_directory("/proc/sys/kernel")) GTEST_SKIP() << "no /proc/sys/kernel on this machine";
  auto text = core::captureSchedSettings();
  if (!text) GTEST_SKIP() << "no readable sched_* setting here: " << text.error().message();
  const auto parsed = core::parseSchedSettings(*text);
  EXPECT_TRUE(parsed.badLines.empty());
  ASSERT_FALSE(parsed.settings.empty());
  for (const auto& s : parsed.settings) {
    ASSERT_TRUE(s.name.starts_with("kernel.sched")) << s.name;
    std::ifstream in(fs::path("/proc/sys/kernel") / s.name.substr(7));
    std::string word, words;
    while (in >> word) words += (words.empty() ? "" : " ") + word;
    EXPECT_EQ(s.value, words) << s.name;
  }
}

// The preemption model: debugfs's mode in parentheses first; else the
// configuration's choice, which preempt= overrides only with PREEMPT_DYNAMIC.
// This machine's /proc/config.gz reads CONFIG_PREEMPT_BUILD=y,
// CONFIG_PREEMPT_NONE=y, CONFIG_PREEMPTION=y, CONFIG_PREEMPT_DYNAMIC=y.
TEST(SchedSettings, PreemptionModelFromDebugfsConfigAndCommandLine) {
  const std::string dynamicNone =
      "# CONFIG_PREEMPT_NONE_BUILD is not set\nCONFIG_PREEMPT_BUILD=y\nCONFIG_PREEMPT_NONE=y\n"
      "# CONFIG_PREEMPT_VOLUNTARY is not set\n# CONFIG_PREEMPT is not set\nCONFIG_PREEMPTION=y\n"
      "CONFIG_PREEMPT_DYNAMIC=y\n";
  EXPECT_EQ(core::preemptionModel("none voluntary (full) lazy\n", dynamicNone, ""), "full");
  EXPECT_EQ(core::preemptionModel("(none) voluntary full lazy\n", "", "preempt=full"), "none");
  EXPECT_EQ(core::preemptionModel("", dynamicNone, "quiet sched_vcpu_pack=15"), "none");
  EXPECT_EQ(core::preemptionModel("", dynamicNone, "quiet preempt=voluntary console=ttyS0"), "voluntary");
  EXPECT_EQ(core::preemptionModel("", dynamicNone, "rcupdate.preempt=full nopreempt=lazy"), "none");
  EXPECT_EQ(core::preemptionModel("", dynamicNone, "preempt=bogus"), "none");
  // Without PREEMPT_DYNAMIC the kernel ignores preempt=.
  EXPECT_EQ(core::preemptionModel("", "CONFIG_PREEMPT_VOLUNTARY=y\n", "preempt=full"), "voluntary");
  EXPECT_EQ(core::preemptionModel("", "CONFIG_PREEMPT=y\nCONFIG_PREEMPTION=y\n", ""), "full");
  EXPECT_EQ(core::preemptionModel("", "CONFIG_PREEMPT_RT=y\n", ""), "full");
  EXPECT_EQ(core::preemptionModel("", "CONFIG_PREEMPT_LAZY=y\n", ""), "lazy");
  EXPECT_EQ(core::preemptionModel("", "CONFIG_PREEMPT_NONE=yes\n# CONFIG_PREEMPT_NONE is not set\n", ""), "");
  EXPECT_EQ(core::preemptionModel("no mode marked\n", "", ""), "");
}

}  // namespace
