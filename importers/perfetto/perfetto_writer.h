// Writes any run (a recording of any format, or a replay) as a Perfetto trace
// that ui.perfetto.dev opens: per-CPU ftrace bundles with the sched_switch,
// sched_waking/wakeup/wakeup_new, sched_migrate_task, fork/exec/exit events
// the model stands for, a process_tree with thread names and tgids, cpu_info
// and system_info, CPU frequency counters as cpu_frequency events, and
// forced-idle and lost-data spans as named tracks. What Perfetto has no field
// for (forced idle on a switch, SMT topology, core-scheduling cookies, uclamp,
// replay policies) rides in SchedLab's own field numbers, which Perfetto skips,
// so that SchedLab reads its exports back to the same model. Called by the
// CLI's `export`, the GUI's File → Export → Perfetto trace…, and the tests.
#pragma once

#include <string>

#include "core/result.h"
#include "core/trace_model.h"

namespace importers::perfetto {

/// The trace's bytes.
std::string encodePerfetto(const core::TraceModel& model);
/// Writes the trace to `path`; an error names the file.
core::Status writePerfetto(const core::TraceModel& model, const std::string& path);

}  // namespace importers::perfetto
