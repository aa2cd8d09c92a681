// The kernel's scheduler settings (/proc/sys/kernel/sched_*), saved as one text
// file beside a trace recorded here (`schedlab-cli record`, Record… in the GUI)
// and read back into the run's metadata when that trace is imported. No trace
// format carries them, and some decide what a replay does: with
// kernel.sched_autogroup_enabled=1, tasks of different sessions (and kernel
// threads, in none) compete as groups, which the replay then models
// (docs/models.md §5.6). One line per setting, as `sysctl` prints it:
// "kernel.sched_autogroup_enabled = 1".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace core {

struct SchedSetting {
  std::string name;  ///< as sysctl names it: "kernel.sched_autogroup_enabled"
  std::string value;
};

/// Every readable /proc/sys/kernel/sched_* file of this machine, as sysctl
/// lines under a comment line. Files the kernel refuses to show are left out.
/// Fails (naming the folder) when none can be read.
Result<std::string> captureSchedSettings(const std::string& procSysKernel = "/proc/sys/kernel");

struct ParsedSchedSettings {
  std::vector<SchedSetting> settings;
  struct BadLine {
    uint64_t line;  ///< 1-based
    std::string why;
  };
  std::vector<BadLine> badLines;  ///< lines that are neither a comment, blank, nor NAME = VALUE
};
ParsedSchedSettings parseSchedSettings(std::string_view text);

/// Where the settings of a trace sit: beside it, named after it ("run.dat.sched").
std::string schedSettingsPath(const std::string& tracePath);

/// The run's metadata keys of the settings a replay reads: "1" groups tasks per
/// session; a vendor knob, not upstream's, set (non-zero) on kernels that pack
/// work onto fewer vCPUs (docs/models.md §5.5, wake_pack).
inline constexpr const char* kAutogroupSetting = "kernel.sched_autogroup_enabled";
inline constexpr const char* kVcpuPackSetting = "kernel.sched_vcpu_pack";
/// The metadata key naming the settings file an import read.
inline constexpr const char* kSchedSettingsFromKey = "sched_settings_from";

/// The recording kernel's preemption model (none, voluntary, full or lazy),
/// which `schedlab-cli record` adds to the settings under this name: not a
/// sysctl, but what /sys/kernel/debug/sched/preempt shows. No trace carries it.
inline constexpr const char* kPreemptSetting = "sched.preempt";

/// A kernel's preemption model from what it shows: the mode in parentheses of
/// /sys/kernel/debug/sched/preempt ("none voluntary (full) lazy") when
/// `debugfs` has one; else its configuration (`config`, the text of
/// /proc/config.gz or /boot/config-RELEASE): CONFIG_PREEMPT_RT and
/// CONFIG_PREEMPT are "full", CONFIG_PREEMPT_LAZY "lazy",
/// CONFIG_PREEMPT_VOLUNTARY "voluntary", CONFIG_PREEMPT_NONE "none", and with
/// CONFIG_PREEMPT_DYNAMIC a preempt=MODE on the command line (`cmdline`)
/// chooses instead. Empty when neither tells.
std::string preemptionModel(std::string_view debugfs, std::string_view config, std::string_view cmdline);

}  // namespace core
