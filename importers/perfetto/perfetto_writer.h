// Writes any run (a recording of any format, or a replay) as a Perfetto trace
// that ui.perfetto.dev opens: per-CPU ftrace bundles with the sched_switch,
// sched_waking/wakeup/wakeup_new, sched_migrate_task, fork/exec/exit events
// the model stands for, a process_tree with thread names and tgids, cpu_info
// and system_info, CPU frequency and idle states as cpu_frequency and cpu_idle
// events, atrace user slices as print events, states known before a task's
// first event as GenericKernelTaskStateEvent packets, and forced-idle and
// lost-data spans as named tracks. What Perfetto has no field
// for (forced idle on a switch, SMT topology, core-scheduling cookies, uclamp,
// replay policies) rides in SchedLab's own field numbers, which Perfetto skips,
// so that SchedLab reads its exports back to the same model. Called by the
// CLI's `export`, the GUI's File → Export → Perfetto trace…, and the tests.
#pragma once

#include <string>

#include "core/result.h"
#include "core/trace_model.h"

namespace importers::perfetto {

/// What an export could not carry, counted (nothing in the formats' fields
/// holds it), so that whoever exports can say so.
struct PerfettoExportLosses {
  /// Tasks known before any event named them (LTTng's statedump) in a state
  /// GenericKernelTaskStateEvent.TaskStateEnum has no value for (traced,
  /// parked, the idle states): their state until their first event.
  uint64_t initialStates = 0;
  /// User-slice marks (begin, end, instant) of a writer the model has running
  /// on no CPU at the time: a print event needs its writer's context.
  uint64_t userMarks = 0;
  bool any() const { return initialStates || userMarks; }
  std::string describe() const;
};

/// The trace's bytes; `losses`, if given, says what they lack.
std::string encodePerfetto(const core::TraceModel& model, PerfettoExportLosses* losses = nullptr);
/// Writes the trace to `path`; an error names the file.
core::Status writePerfetto(const core::TraceModel& model, const std::string& path, PerfettoExportLosses* losses = nullptr);

}  // namespace importers::perfetto
