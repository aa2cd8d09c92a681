// The replayable workload: per task, bursts of CPU work separated by blocks,
// each block ended by a dependency (another task's progress, a sleep of known
// length, or a periodic timer). Built from a recorded model (trace_extractor.h)
// or from rt-app style JSON (rtapp_reader.h); consumed by the simulator.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/task_state.h"
#include "core/topology.h"

namespace replay {

using TaskId = uint32_t;
inline constexpr TaskId kNoTask = UINT32_MAX;

/// Scheduling policy as the workload asks for it. Traces do not record the
/// policy, only the prio: prio < 100 is read as FIFO, everything else Normal.
enum class SchedPolicy : uint8_t { Normal, Batch, Idle, Fifo, RR, Iso };
std::string_view toString(SchedPolicy policy);
inline bool isRtPolicy(SchedPolicy p) { return p == SchedPolicy::Fifo || p == SchedPolicy::RR; }

/// How the block before a burst ends.
enum class WakeKind : uint8_t {
  None,    ///< no block: the burst follows at once (first burst of a task that arrives runnable)
  Task,    ///< another task wakes it when that task reaches a recorded point of its own work
  Sleep,   ///< interrupt/timer context or unknown waker: wakes `sleepNs` after it blocks
  Timer,   ///< rt-app periodic timer: wakes at the timer's next period boundary
};

struct Burst {
  int64_t work = 0;                ///< CPU work, in ns at full CPU speed
  WakeKind wake = WakeKind::None;  ///< how the block before this burst ends
  core::TaskState blockState = core::TaskState::Sleeping;  ///< state of that block (S, D, ...)
  /// A dataflow gate (ExtractOptions::dataflowGates): not a recorded block but
  /// a split of a recorded burst at a switch-in after a preemption, passed at
  /// once unless the replay's `waker` is behind its recorded progress there.
  bool gate = false;
  /// WakeKind::Sleep: the recording's wakeup came from interrupt context (a timer, a device).
  bool interruptWake = false;
  TaskId waker = kNoTask;          ///< WakeKind::Task: who wakes it
  int64_t sleepNs = 0;             ///< WakeKind::Sleep: recorded block length
  int wakeCpu = -1;                ///< WakeKind::Sleep: the CPU whose interrupt woke it in the recording (-1: unknown)
  uint32_t timer = 0;              ///< WakeKind::Timer: index into Workload::timers
  // Recorded times (absolute trace ns), -1 for synthetic workloads: when the
  // burst became runnable and when its work was done. Used for the recorded makespan.
  int64_t recordedStart = -1;
  int64_t recordedEnd = -1;

  bool operator==(const Burst&) const = default;
};
// Millions on a big trace: the flags sit in the padding after the enums.
static_assert(sizeof(Burst) == 48);

/// What a trigger does.
enum class TriggerKind : uint8_t {
  Wake,  ///< wakes `target`'s burst `targetBurst`
  Fork,  ///< starts `target` (its parent is the acting task)
  Exec,  ///< the acting task execs: sched_exec() may move it (`target` is the acting task)
};

/// Something a task does when its work reaches a point: wake a task's burst, fork a child, exec.
struct Trigger {
  int64_t offset = 0;     ///< work done in `burst` when it fires (0..burst.work)
  uint32_t burst = 0;     ///< the burst of the acting task
  TaskId target = kNoTask;
  uint32_t targetBurst = 0;  ///< the target's burst this wakes (Wake only)
  TriggerKind kind = TriggerKind::Wake;

  bool operator==(const Trigger&) const = default;
};
// Millions on a big trace: the offset leads, so no padding sits before it.
static_assert(sizeof(Trigger) == 24);

/// Fewer of Task::irqWakeupsBesideIdle than this tell no share (irq_wake_pack).
inline constexpr uint32_t kMinIrqWakeupsBesideIdle = 8;

struct Task {
  int32_t tid = 0;
  int32_t tgid = -1;
  std::string comm;
  int prio = 120;  ///< kernel prio: 0..99 RT (lower is higher), 100..139 nice -20..19
  SchedPolicy policy = SchedPolicy::Normal;
  int nice() const { return prio >= 100 ? prio - 120 : 0; }
  int rtPriority() const { return prio < 100 ? 99 - prio : 0; }  ///< sched_param priority (1..99)
  std::vector<int> affinity;  ///< allowed CPUs; empty = all
  bool kernelThread = false;  ///< has no mm (BFS's SMT nice always lets kernel threads run)
  /// Its autogroup as saved beside the recording: -1 not saved, 0 the root task
  /// group, else /autogroup-N (docs/models.md §5.6); and the group's nice.
  int32_t autogroup = -1;
  int8_t autogroupNice = 0;
  /// Its interrupt-ended sleeps end at fixed times, not a fixed length after
  /// it blocks (measured from the recording; see irq_wakeup_time).
  bool absoluteTimers = false;
  /// Its wakeups from interrupt context on a busy CPU while its previous CPU
  /// idled, in the recording, and how many of them the kernel left on the busy
  /// CPU rather than send to the idle one (see irq_wake_pack).
  uint32_t irqWakeupsBesideIdle = 0;
  uint32_t irqWakeupsKeptBusy = 0;

  TaskId parent = kNoTask;  ///< set when a parent's fork trigger starts it
  int64_t startTs = 0;      ///< absolute time it arrives (ignored when forked)
  int startCpu = -1;        ///< recorded CPU at arrival (placement hint), -1 unknown
  std::vector<Burst> bursts;
  std::vector<Trigger> triggers;  ///< sorted by (burst, offset)
  bool exits = false;             ///< dies after its last burst (else it sleeps for ever)
  /// Counted in the makespan: for a recording, the tasks created during the
  /// trace (the traced command and its descendants), or every task when the
  /// trace created none; for rt-app, every task.
  bool inMakespan = true;

  int64_t totalWork() const;
  bool operator==(const Task&) const = default;
};

/// A periodic timer of an rt-app workload (one per task and "ref").
struct TimerSpec {
  int64_t periodNs = 0;
};

/// What extraction could not model exactly, by reason. Every entry is a count.
struct Unmodelled {
  uint64_t wakeupsFromInterrupt = 0;  ///< woken from irq/idle context: replayed as sleeps of the recorded length
  uint64_t wakeupsUnknownWaker = 0;   ///< waker not a replayed task (or not running then): replayed as sleeps
  uint64_t wakeupsSelf = 0;           ///< woken by itself: replayed as sleeps
  uint64_t blocksWithoutWakeup = 0;   ///< switched in again with no wakeup seen: replayed as sleeps
  uint64_t tasksStartedBeforeTrace = 0;  ///< already alive at trace start: how their first burst began is unknown
  uint64_t tasksRunningAtTraceEnd = 0;   ///< their last burst was cut by the trace end
  uint64_t tasksNeverRan = 0;            ///< seen (fork, wakeup) but never ran: not replayed
  uint64_t forksOfUnreplayedParent = 0;  ///< child started at its recorded time, not at a parent's work point
  uint64_t execsNotRunning = 0;          ///< execs at no point of the task's replayed work: not replayed
  uint64_t unknownStateIntervals = 0;    ///< intervals of unknown state (lost data): no work counted there
  uint64_t lostEventRanges = 0;          ///< data-loss ranges in the recording
  uint64_t tasksLeftOut = 0;             ///< left out by ExtractOptions::onlyCreatedTasks or treeOf
  uint64_t switchInsInferred = 0;        ///< runs whose switch-in the trace lacks (inferred at import)
  /// 1: the settings beside the trace say autogroup was on; a replay that models it (autogroup=on) clears it.
  uint64_t recordedWithAutogroup = 0;
  uint64_t total() const;
  Unmodelled& operator+=(const Unmodelled& o);
  bool operator==(const Unmodelled&) const = default;

  /// One count: its JSON key, what it means (for tables), how many.
  struct Item {
    const char* key;
    const char* what;
    uint64_t count;
  };
  /// Every count above, in the order replays, the CLI and reports show them.
  std::vector<Item> items() const;
};

/// Where a wakeup that makes the wakee run at once takes it: onto an idle CPU
/// or preempting the running task, on the waker's own CPU (local: a timer or
/// the waker itself) or on another one (an IPI on the way).
enum class WakeupPath : uint8_t { RemoteIdle, LocalIdle, RemotePreempt, LocalPreempt };
inline constexpr size_t kWakeupPaths = 4;

/// A delay's distribution as measured: up to kQuantiles evenly spaced quantiles
/// of the samples (a draw picks one uniformly), and how many samples there were.
struct DelayDistribution {
  static constexpr size_t kQuantiles = 1024;
  std::vector<int64_t> quantiles;  ///< ascending
  uint64_t samples = 0;
  static DelayDistribution of(std::vector<int64_t> samples);
  int64_t median() const { return quantiles.empty() ? -1 : quantiles[quantiles.size() / 2]; }
  bool operator==(const DelayDistribution&) const = default;
};

/// The delay from the tick to its switch: the offsets of `switches` from a
/// grid of `periodNs` (1/HZ) whose phase is where most of them crowd (the
/// median of the fullest 20 us window of phases), those within 100 us of it,
/// less their 1st percentile (the grid is not in the trace, so the earliest
/// switches stand for the tick itself). Empty when fewer than half of at
/// least 8 switches lie that close: not on a grid of this HZ.
DelayDistribution tickSwitchDelays(const std::vector<int64_t>& switches, int64_t periodNs);

struct Workload {
  std::string source;  ///< file it came from
  std::string kind;    ///< "trace" or "rt-app"
  std::vector<Task> tasks;
  std::vector<TimerSpec> timers;
  int64_t originTs = 0;    ///< absolute time the replay starts (the recording's first event)
  int64_t durationNs = 0;  ///< rt-app global.duration; 0 = run until every task is done
  std::optional<core::Topology> recordedTopology;
  std::string kernelRelease;  ///< the recording kernel's release ("6.18.44-fc-v857"), empty if unknown
  /// The recording machine's scheduler settings were saved beside the trace (core/sched_settings.h).
  bool schedSettingsKnown = false;
  std::string vcpuPackSetting;  ///< kernel.sched_vcpu_pack among them; empty when not set there
  std::string autogroupSetting;  ///< kernel.sched_autogroup_enabled among them; empty when not set there
  std::string preemptSetting;    ///< sched.preempt (the preemption model) among them; empty when not set there
  Unmodelled unmodelled;
  uint64_t dataflowGates = 0;  ///< bursts split by ExtractOptions::dataflowGates (Burst::gate)
  /// From the first burst's start to the last burst's end of the makespan tasks
  /// (Task::inMakespan), in the recording; -1 when not recorded.
  int64_t recordedMakespanNs = -1;
  /// How many user tasks had enough consecutive timer sleeps to be judged for
  /// Task::absoluteTimers.
  size_t timerTasksJudged = 0;
  /// What the kernel spent, in the recording, from a wakeup to the wakee's
  /// switch-in outside the scheduler's decisions, per WakeupPath (IPI delivery,
  /// idle exit, the way back to schedule()); empty when not measured.
  std::array<DelayDistribution, kWakeupPaths> wakeupDelays;
  /// Recorded times of the preemptions no wakeup caused (none aimed at that
  /// CPU in the 250 us before): on a busy CPU, the tick's. Their offsets from
  /// the HZ grid are the tick's delay to its switch (tickSwitchDelays()).
  std::vector<int64_t> tickPreemptions;

  int64_t totalWork() const;
  size_t burstCount() const;
};

}  // namespace replay
