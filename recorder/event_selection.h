// Which tracepoints a recording enables: the --events text of `schedlab-cli
// record` and the Record dialog, checked against the running kernel's tracefs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace recorder {

struct TraceEvent {
  std::string system;  ///< "sched"
  std::string name;    ///< "sched_switch"
  std::string id() const { return system + ":" + name; }
  bool operator==(const TraceEvent&) const = default;
};

/// The scheduler events SchedLab reads (the shared recordings' set).
const std::vector<TraceEvent>& schedEvents();
/// CPU frequency and idle-state changes.
const std::vector<TraceEvent>& powerEvents();

/// `spec`: terms separated by ',' or '+', each a preset ("sched", "power"),
/// SYSTEM:EVENT, or SYSTEM:* (every event of that system); "sched+power",
/// "sched,irq:softirq_entry". Checked against `eventsDir` (tracefs events/):
/// the error names every event this kernel does not have. A preset's events
/// that the kernel lacks are left out with a line in `notes`, except
/// sched_switch, without which there is no schedule.
core::Result<std::vector<TraceEvent>> selectEvents(std::string_view spec, const std::string& eventsDir,
                                                   std::vector<std::string>& notes);

}  // namespace recorder
