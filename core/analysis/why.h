// Why was a task not running? For one task over a range: where its time went
// (running, runnable, sleeping, blocked), who held the CPUs while it waited
// (antagonists), how long a CPU idled while it waited behind another task
// (idle-while-runnable), who woke it, and its critical path back through the
// wakeup chain. `schedlab-cli why`, the GUI's breakdown panel and critical-path
// overlay, the reports and the breakdown diff all read explainTask().
//
// Definitions (README "Why a task waited, defined" says the same in full):
// - running / runnable / sleeping / blocked: the task's state rows clipped to the
//   range, classified as the statistics classify them (stats.h); time in no
//   known state (lost data, before the task's first event) is unknown_ns.
// - queue CPU of a runnable stretch: the CPU its wakeup targeted (sched_wakeup's
//   target_cpu) or that it was preempted on, changed by each sched_migrate_task
//   while it waits.
// - allowed CPUs: the task's affinity where the run records it (replays), else
//   every CPU.
// - antagonists: per other task, the CPU time it ran on the allowed CPUs while
//   the task was runnable, summed over CPUs (up to CPUs x runnable time).
// - idle-while-runnable: the wall time the task waited on a queue CPU running
//   another task while some other allowed CPU was idle: a placement or balancing
//   miss, the per-task side of SchedViz's "idle while overloaded". Waiting on an
//   idle queue CPU (a wakeup's path out of idle) is not a miss; forced-idle and
//   lost-data spans are not idle.
// - wakers: per waker (a task, or none for interrupt context or the idle task)
//   the wakeups in the range that made the task runnable, and the sleep each
//   ended (from the switch-out to the wakeup, clipped to the range).
// - critical path: see criticalPath().
// Ranges are half-open, [from, to), as in stats.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/analysis/diff.h"
#include "core/analysis/stats.h"
#include "core/json_writer.h"
#include "core/trace_model.h"

namespace core::analysis {

struct Antagonist {
  Utid utid;
  int64_t ns = 0;
};

struct WakerShare {
  Utid utid;  ///< invalid: interrupt context or no task (the idle task)
  uint64_t count = 0;
  int64_t sleepNs = 0;  ///< the sleep its wakeups ended, within the range
};

enum class PathState : uint8_t { Running, Runnable, Sleeping, Blocked };
std::string_view toString(PathState state);

/// One piece of a critical path: `utid` was in `state` over [from, to).
struct PathSegment {
  Utid utid;
  PathState state = PathState::Running;
  int64_t from = 0;
  int64_t to = 0;
  /// Runnable pieces that end at the task's switch-in: the task that held that
  /// CPU until then (it preempted the waiter, or ran first); invalid when the
  /// CPU came out of idle or the piece ends elsewhere.
  Utid waitedBehind;
  int64_t length() const { return to - from; }
};

/// Why a critical path stops where it does (its first segment's start).
enum class PathStop : uint8_t {
  RangeStart,    ///< it reached the range's start: the path covers [from, end)
  UnknownState,  ///< the task on the path was in no known state (lost data, a mismatched switch)
  TaskUnseen,    ///< the trace shows nothing of the task on the path before this point
};
std::string_view toString(PathStop stop);

struct CriticalPath {
  std::vector<PathSegment> segments;  ///< in time order, contiguous, no zero-length pieces
  PathStop stop = PathStop::RangeStart;
  int64_t end = 0;  ///< where the walk began: min(range end, the task's end)
  int64_t from() const { return segments.empty() ? end : segments.front().from; }
};

/// The critical path of `utid` ending at min(range.to, the task's end: its exit,
/// or the trace's last event), walked backwards to range.from. At each step the
/// path is in one task T at a time t and takes T's state just before t (the state
/// row with ts < t; at an instant where T's state changes, the state before the
/// change):
/// - running, or runnable after a preemption: the segment is T's, back to the
///   start of that state (or range.from); the walk stays with T;
/// - runnable after a wakeup: the segment [wakeup, switch-in) is T's waiting for a
///   CPU; then the path follows the waker: it continues in the waker W at the
///   wakeup's time (W was running then: it issued the wakeup), so T's sleep before
///   the wakeup is covered by what W did meanwhile. The wakeup is the first that
///   made T runnable (later ones in the same runnable stretch had no effect);
/// - an interrupt wakeup (hard/soft-irq or NMI context, or issued by the idle
///   task) or a runnable state no traced wakeup explains has no waker to follow:
///   the chain of wakers ends and the path stays with T, whose sleep (state
///   sleeping or blocked) is then on the path;
/// - a task in no known state, or with nothing traced before t, ends the walk.
/// Runnable time stays with the waiting task (as Trace Compass's "preempted" and
/// Perfetto's runnable thread state do), naming who it waited behind; the
/// antagonists say who held the CPUs.
/// Adjacent pieces of the same task and state merge. The segments sum to
/// end - from() (= end - range.from when stop is RangeStart).
CriticalPath criticalPath(const TraceModel& model, Utid utid, TimeRange range);

struct WhyReport {
  Utid utid;
  TimeRange range;
  int64_t runningNs = 0;
  int64_t runnableNs = 0;
  int64_t sleepingNs = 0;
  int64_t blockedNs = 0;
  int64_t unknownNs = 0;
  int64_t idleWhileRunnableNs = 0;
  std::vector<Antagonist> antagonists;  ///< most time first (ties: lower tid first)
  std::vector<WakerShare> wakers;       ///< most wakeups first (ties: more sleep, then lower tid; interrupts last)
  CriticalPath criticalPath;
};

/// The breakdown and the critical path of one task over a range.
WhyReport explainTask(const TraceModel& model, Utid utid, TimeRange range);

/// explainTask() of the `count` tasks of `stats` that waited (were runnable) the
/// longest, longest first (reports show them).
std::vector<WhyReport> explainTopWaiters(const TraceModel& model, const RunStats& stats, size_t count);

/// The run's idle-while-runnable: wall time in the range during which some task
/// waited on a queue CPU running another task while a CPU it was allowed on was
/// idle (RunStats::idleWhileRunnableNs, `stats --json` totals).
int64_t idleWhileRunnableNs(const TraceModel& model, TimeRange range);

/// Tasks a user's `--task` names: a number is a tid (every identity of it), else
/// a comm (every task that had it last). Idle excluded.
std::vector<Utid> findTasks(const TraceModel& model, std::string_view tidOrComm);
/// The one of `tasks` that ran the most in the range (the first of equals); invalid if empty.
Utid busiestTask(const TraceModel& model, const std::vector<Utid>& tasks, TimeRange range);
/// The task of run `b` that stands for `utid` of run `a`: same comm and process
/// name (tids differ between runs), the busiest in b's whole trace if several.
Utid matchTask(const TraceModel& a, Utid utid, const TraceModel& b);

/// A breakdown of one task in two runs (a recording and its replay, two recordings).
struct WhyDiff {
  std::vector<MetricDelta> metrics;  ///< running_ns, runnable_ns, sleeping_ns, blocked_ns, idle_while_runnable_ns
  struct AntagonistDelta {
    std::string comm;  ///< antagonists are matched by comm across runs
    int64_t aNs = 0;
    int64_t bNs = 0;
  };
  std::vector<AntagonistDelta> antagonists;  ///< largest |change| first
};
WhyDiff diffWhy(const TraceModel& a, const WhyReport& whyA, const TraceModel& b, const WhyReport& whyB);

/// The `why --json` body (the stable names): "task", "range", the state
/// times, "idle_while_runnable_ns", "antagonists", "wakers", "critical_path" (and
/// "unknown_ns", "critical_path_stop") into an open object.
void writeWhyJson(JsonWriter& j, const TraceModel& model, const WhyReport& why);
void writeWhyDiffJson(JsonWriter& j, const WhyDiff& diff);

}  // namespace core::analysis
