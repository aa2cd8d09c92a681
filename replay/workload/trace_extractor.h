// Turns a recorded core::TraceModel into a replayable Workload: per task,
// bursts of CPU work each ended by a block, each block ended by the wakeup
// that ended it in the recording (kept as a dependency on the waker's
// progress, or as a sleep when no task woke it). Called by replay::runReplay,
// the CLI and the GUI's replay worker.
#pragma once

#include <string>

#include "core/result.h"
#include "core/trace_model.h"
#include "replay/workload/workload.h"

namespace replay {

struct ExtractOptions {
  /// Per-CPU kernel threads ("ksoftirqd/1", "kworker/0:2", "migration/3", ...)
  /// that only ever ran on their CPU stay pinned to it; the trace records no
  /// affinity, so everything else may run anywhere.
  bool pinPerCpuKthreads = true;
  /// Replay only the tasks created during the trace (the traced command and
  /// its descendants), leaving out what else ran on the machine. Wakeups by
  /// left-out tasks become sleeps of the recorded length; a child of a left-out
  /// parent starts at its recorded time. Ignored when the trace created no task.
  bool onlyCreatedTasks = false;
  /// When set, replay only the first task created in the trace whose comm is
  /// this (e.g. "make") and its descendants; wakeups and forks by anything else
  /// are handled as for onlyCreatedTasks. Ignored when no such task exists.
  std::string treeOf;
  /// Dataflow gates (`wakeup_dependency=dataflow`, docs/models.md §8.1): a
  /// recorded burst is split where the task was switched in again after a
  /// preemption, and the rest of it waits (blocks only if it must) until the
  /// task that woke the burst has reached its recorded progress at that time.
  /// A recording's wakeups only show the data a task slept for; these gates
  /// add the data it found waiting, so a replayed consumer cannot run ahead
  /// of its producer by more than the recording did at each of its returns.
  bool dataflowGates = true;
  /// Gather the preemptions no wakeup explains (Workload::tickPreemptions),
  /// which only `tick_delay_ns=-1` reads.
  bool tickPreemptions = true;
  /// From this many state rows on, the first pass (each task's bursts) runs
  /// on two threads. The workload is the same either way; below this a
  /// second thread costs more than it saves.
  uint32_t twoThreadsFromStateRows = 200'000;

  bool operator==(const ExtractOptions&) const = default;
};

/// Fails only when the model holds no task that ever ran.
core::Result<Workload> extractWorkload(const core::TraceModel& model, const ExtractOptions& options = {});

/// Kernel threads by name (kworker/, ksoftirqd/, rcu_*, ...): the trace records no mm.
bool looksLikeKernelThread(std::string_view comm);

/// The CPU a per-CPU kernel thread's comm names ("ksoftirqd/3" -> 3), or -1.
int perCpuKthreadCpu(std::string_view comm);

}  // namespace replay
