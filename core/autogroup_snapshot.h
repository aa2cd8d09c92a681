// Each task's autogroup (/proc/PID/autogroup), saved beside a trace recorded
// here (`schedlab-cli record`) when tracing starts and when it stops, and read
// back into the model's thread table when the trace is imported. No trace
// format carries sessions, and with kernel.sched_autogroup_enabled=1 they
// decide which tasks compete as one group (docs/models.md §5.6): without this
// file a replay can only guess them from the process tree.
//
// One line per task: "WHEN TID AUTOGROUP NICE", WHEN being "start" or "end",
// AUTOGROUP the number of /autogroup-N (0: the root task group, where kernel
// threads and the processes that never called setsid() stay) and NICE the
// group's nice (/proc/PID/autogroup's "nice", which sets its shares).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace core {

enum class SnapshotWhen : uint8_t { Start, End };

/// Every thread of every process under `procRoot`, with its process's
/// autogroup, as lines of the file above. Fails (naming the folder) when no
/// process shows an autogroup: a kernel built without CONFIG_SCHED_AUTOGROUP.
Result<std::string> captureAutogroups(SnapshotWhen when, const std::string& procRoot = "/proc");

struct AutogroupEntry {
  SnapshotWhen when = SnapshotWhen::Start;
  int32_t tid = 0;
  int32_t group = 0;  ///< 0: the root task group
  int8_t nice = 0;
};
struct ParsedAutogroups {
  std::vector<AutogroupEntry> entries;
  struct BadLine {
    uint64_t line;  ///< 1-based
    std::string why;
  };
  std::vector<BadLine> badLines;
};
ParsedAutogroups parseAutogroups(std::string_view text);

/// "run.dat.autogroup" beside "run.dat".
std::string autogroupsPath(const std::string& tracePath);
/// The metadata key naming the autogroup file an import read.
inline constexpr const char* kAutogroupsFromKey = "autogroups_from";

}  // namespace core
