// The immutable model of one run, recorded or replayed: columnar tables filled
// by SchedBuilder during import (or by the replay simulator), frozen by
// finalize(). Every view, metric, diff and report reads this one type.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/diagnostics.h"
#include "core/ids.h"
#include "core/string_pool.h"
#include "core/task_state.h"
#include "core/time_column.h"
#include "core/topology.h"

namespace core {

namespace analysis {
struct Fidelity;
}

/// A kernel prio as traces carry it (task_struct::prio): -1 SCHED_DEADLINE,
/// 0..99 RT (FIFO/RR), 100..139 fair (nice -20..19). kPrioUnknown when no event
/// said (importers pass it for a format without the field).
inline constexpr int16_t kPrioUnknown = INT16_MIN;
inline constexpr int16_t kPrioDeadline = -1;

/// Scheduling policy, where the run says so: replays know it, traces record
/// only the prio (Unknown there).
enum class TaskPolicy : uint8_t { Unknown, Normal, Batch, Idle, Fifo, RR, Iso, Deadline };

/// The kernel scheduling class a task runs in: its policy where known, else its
/// prio (< 0 SCHED_DEADLINE, 0..99 RT, else fair). Fair covers NORMAL, BATCH and
/// BFS's ISO (whose prio is a nice level); idle is SCHED_IDLE, the fair class at
/// the idle weight. An unknown prio counts as fair (at nice 0's weight).
enum class SchedClass : uint8_t { Deadline, RealTime, Fair, Idle };
SchedClass schedClassOf(int prio, TaskPolicy policy);
std::string_view toString(SchedClass schedClass);

/// What a CPU slice shows.
enum class SliceKind : uint8_t { Task, Idle, ForcedIdle, Lost };
/// How a run slice ended.
enum class SliceEnd : uint8_t {
  Preempted,  ///< switched out still runnable
  Blocked,    ///< switched out to sleep; the state says which sleep
  Exited,     ///< the task died
  TraceEnd,   ///< still running when the trace ended
  DataLoss,   ///< events were lost; we do not know how it ended
  Mismatch,   ///< ended by a switch the trace lacks (SchedBuilder::inferSwitchIn)
};
std::string_view toString(SliceKind kind);
std::string_view toString(SliceEnd end);
struct CpuSliceTable;
/// How the task of slice `i` left the CPU: its end reason, with a Mismatch whose
/// end was inferred (kSliceEndInferred) taken as the Preempted or Blocked it implies.
SliceEnd switchOutOf(const CpuSliceTable& slices, size_t i);
/// How slice `i` ended, for people: "blocked (sleeping)", "preempted", or for
/// an untraced switch out "mismatched switch, then preempted (inferred)".
std::string describeSliceEnd(const CpuSliceTable& slices, size_t i);

/// Flags on a CPU slice.
enum SliceFlags : uint8_t {
  kSliceStartUnknown = 1,  ///< began before the CPU's first event or after lost data: the start is a lower bound
  kSliceStartInferred = 2,  ///< the trace lacks its switch-in: the start is estimated (SchedBuilder::inferSwitchIn)
  /// SliceEnd::Mismatch whose end state was inferred from the task's next event:
  /// RunnablePreempted (it ran again with no wakeup) or Sleeping (it was woken).
  kSliceEndInferred = 4,
};

/// One CPU's run slices, sorted by ts, non-overlapping.
struct CpuSliceTable {
  TimeColumn ts;
  TimeColumn dur;
  std::vector<Utid> utid;
  std::vector<int16_t> prio;
  std::vector<TaskState> endState;
  std::vector<SliceEnd> endReason;
  std::vector<SliceKind> kind;
  std::vector<uint8_t> flags;
  size_t size() const { return ts.size(); }
  int64_t end(size_t i) const { return ts[i] + dur[i]; }
};

/// Per-thread state intervals, partitioned by utid (rows of utid u are
/// [rowsBegin[u], rowsBegin[u+1])) and sorted by ts within a thread. A state lasts
/// until the next row of the same thread, or the thread's endTs.
struct ThreadStateTable {
  TimeColumn ts;
  std::vector<TaskState> state;
  std::vector<CpuId> cpu;  ///< CPU it runs on, is queued on (target), or last ran on
  std::vector<uint32_t> rowsBegin;
  size_t size() const { return ts.size(); }
};

enum WakeupFlags : uint8_t {
  kWakeupNew = 1,        ///< sched_wakeup_new (first wakeup after fork)
  kWakeupFromIrq = 2,    ///< in hard/soft-irq context or on the idle task: no task woke it
  kWakeupHadWaking = 4,  ///< a sched_waking was seen (ts is the waking time)
  kWakeupHadWakeup = 8,  ///< a sched_wakeup was seen
  kWakeupNoEffect = 16,  ///< the wakee was already running or runnable
};

/// Wakeups, sorted by ts. One row per wakeup: sched_waking and the
/// sched_wakeup that follows it are merged (ts = the earlier of the two).
struct WakeupTable {
  TimeColumn ts;
  std::vector<Utid> wakee;
  std::vector<Utid> waker;  ///< invalid when woken from irq context or unknown
  std::vector<CpuId> targetCpu;
  std::vector<CpuId> wakerCpu;
  std::vector<uint8_t> flags;
  /// Row indices sorted by (wakee, ts); rows of utid u are byWakee[byWakeeBegin[u] .. byWakeeBegin[u+1]).
  std::vector<uint32_t> byWakee;
  std::vector<uint32_t> byWakeeBegin;
  size_t size() const { return ts.size(); }
};

/// A migration row the trace has no sched_migrate_task for: the task was next
/// seen on another CPU than its last (MigrationTable::flags).
inline constexpr uint8_t kMigrationInferred = 1;

struct MigrationTable {
  std::vector<int64_t> ts;
  std::vector<Utid> utid;
  std::vector<CpuId> origCpu;
  std::vector<CpuId> destCpu;
  std::vector<uint8_t> flags;  ///< kMigrationInferred
  size_t size() const { return ts.size(); }
};

enum class TaskEventKind : uint8_t { Fork, Exec, Exit };
/// Forks, execs and exits. For a fork, `utid` is the parent and `other` the child.
struct TaskEventTable {
  std::vector<int64_t> ts;
  std::vector<TaskEventKind> kind;
  std::vector<Utid> utid;
  std::vector<Utid> other;
  std::vector<StringId> text;  ///< exec filename
  size_t size() const { return ts.size(); }
};

struct DataLossTable {
  std::vector<int32_t> cpu;  ///< -1: all CPUs / unknown
  std::vector<int64_t> tsBegin;
  std::vector<int64_t> tsEnd;
  std::vector<int64_t> count;  ///< events lost; -1 when the tracer did not say
  size_t size() const { return cpu.size(); }
};

/// What a counter measures. The power ones come from power:cpu_frequency,
/// cpu_frequency_limits and cpu_idle; the PELT ones from the sched_pelt_* /
/// sched_util_est_* tracepoints (and the older out-of-tree sched_load_*), per
/// CPU (the root cfs_rq, or the rt/dl/irq signal) or per task (its sched_entity).
enum class CounterKind : uint8_t {
  CpuFrequencyKhz,
  NrRunning,
  UclampMin,
  UclampMax,
  Utilisation,     ///< PELT util_avg (0..1024)
  CpuIdleState,    ///< cpuidle state entered; kIdleStateRunning when the CPU left idle
  CpuFrequencyMinKhz,
  CpuFrequencyMaxKhz,
  PeltLoad,        ///< load_avg
  PeltRunnable,    ///< runnable_avg
  UtilEstEnqueued,
  UtilEstEwma,
  UtilRt,          ///< the rt_rq's util_avg
  UtilDl,
  UtilIrq,
  User,            ///< a user-space counter (atrace "C|tgid|name|value"): the track has a name
};
std::string_view toString(CounterKind kind);
/// power:cpu_idle's state when the CPU leaves idle (PWR_EVENT_EXIT, (u32)-1).
inline constexpr int64_t kIdleStateRunning = -1;
/// Whose a counter track is: `CounterTrack::index` is a CPU number, a utid or a tgid.
enum class CounterScope : uint8_t { Cpu, Task, Process };
struct CounterTrack {
  CounterTrack(CounterKind k, int32_t i, CounterScope s = CounterScope::Cpu, StringId n = {})
      : kind(k), index(i), scope(s), name(n) {}
  CounterKind kind;
  int32_t index;  ///< CPU number, utid or tgid (see scope)
  CounterScope scope;
  StringId name;  ///< user counters: the name the application gave it
};
/// Counters over time; each track's rows are contiguous after finalize.
struct CounterTable {
  std::vector<CounterTrack> tracks;
  std::vector<uint32_t> rowsBegin;  ///< per track, plus one
  std::vector<int64_t> ts;
  std::vector<double> value;
  /// The rows of a track, [first, last).
  std::pair<uint32_t, uint32_t> rowsOf(size_t track) const { return {rowsBegin[track], rowsBegin[track + 1]}; }
  /// The track of (kind, scope, index), SIZE_MAX if none; not for user counters
  /// (a process has several, told apart by name).
  size_t find(CounterKind kind, int32_t index, CounterScope scope = CounterScope::Cpu) const;
};

/// What a user-space slice is (atrace/systrace trace_marker writes).
enum class UserSliceKind : uint8_t {
  Sync,     ///< "B|tgid|name" .. "E|tgid": nested per thread
  Async,    ///< "S|tgid|name|cookie" .. "F|tgid|name|cookie": may end on another thread
  Instant,  ///< "I|tgid|name", or any other trace_marker text: a point in time
};
enum UserSliceFlags : uint8_t {
  kUserSliceOpenAtEnd = 1,  ///< no end was traced: the duration runs to the trace end
};
/// User-space slices, sorted by (utid, ts): the rows of utid u are
/// [rowsBegin[u], rowsBegin[u+1]). A sync slice's depth is how many of its
/// thread's slices were open when it began; an async slice's is its lane
/// among the async slices of its thread open at the same time.
struct UserSliceTable {
  std::vector<int64_t> ts;
  std::vector<int64_t> dur;  ///< 0 for instants
  std::vector<Utid> utid;    ///< the thread that wrote the begin
  std::vector<StringId> name;
  std::vector<uint8_t> depth;
  std::vector<UserSliceKind> kind;
  std::vector<uint8_t> flags;
  std::vector<uint32_t> rowsBegin;
  size_t size() const { return ts.size(); }
  std::pair<uint32_t, uint32_t> rowsOf(Utid u) const {
    if (u.value + 1 >= rowsBegin.size()) return {0, 0};
    return {rowsBegin[u.value], rowsBegin[u.value + 1]};
  }
};

/// One row per task identity (a reused tid gets a new row).
struct ThreadTable {
  std::vector<int32_t> tid;
  std::vector<int32_t> tgid;  ///< -1 when the trace does not say
  std::vector<Upid> upid;
  std::vector<StringId> comm;  ///< the last comm seen
  std::vector<int16_t> prio;   ///< the last kernel prio seen (see kPrioUnknown), kPrioUnknown if none
  std::vector<int64_t> startTs;  ///< first seen (fork time when forked in the trace)
  std::vector<int64_t> endTs;    ///< death, or last ts of the trace
  std::vector<Utid> parent;
  std::vector<uint8_t> flags;    ///< ThreadFlags
  // Attributes set by the user or by replay.
  std::vector<uint32_t> cookie;  ///< core-scheduling cookie, 0 = untagged
  std::vector<int16_t> uclampMin;  ///< requested, -1 unset
  std::vector<int16_t> uclampMax;
  std::vector<TaskPolicy> policy;  ///< Unknown in traces
  /// CPU time the kernel accounted to the task (sum of sched_stat_runtime within
  /// the trace, in the kernel's task clock: without steal time) from
  /// kernelRuntimeFromTs (where the first of them began counting) to
  /// kernelRuntimeUntilTs (the last); -1 when the trace has no sched_stat_runtime of it.
  std::vector<int64_t> kernelRuntimeNs;
  std::vector<int64_t> kernelRuntimeFromTs;
  std::vector<int64_t> kernelRuntimeUntilTs;
  std::vector<std::vector<CpuId>> affinity;  ///< allowed CPUs (replays); empty: every CPU (traces do not record it)
  /// The task's autogroup as saved beside a recording (core/autogroup_snapshot.h):
  /// -1 not saved, 0 the root task group, else /autogroup-N; and that group's nice.
  std::vector<int32_t> autogroup;
  std::vector<int8_t> autogroupNice;
  size_t size() const { return tid.size(); }
};
enum ThreadFlags : uint8_t { kThreadForked = 1, kThreadExited = 2, kThreadIdle = 4 };

struct CommChangeTable {
  std::vector<Utid> utid;
  std::vector<int64_t> ts;
  std::vector<StringId> comm;
  size_t size() const { return utid.size(); }
};

struct ProcessTable {
  std::vector<int32_t> tgid;
  std::vector<StringId> name;
  size_t size() const { return tgid.size(); }
};

/// A replay's model and every parameter with its value, shown wherever the replay is.
struct ReplayParam {
  std::string key;
  std::string value;
  std::string doc;
  std::string origin;  ///< "default", "user", or how the replay resolved it (measured, from the kernel release)
};
/// One count of what a replay's workload could not represent exactly
/// (replay/workload/workload.h, Unmodelled) and what that count means.
struct ReplayCaveat {
  std::string key;
  std::string what;
  uint64_t count = 0;
};
struct ReplayInfo {
  std::string model;
  std::string recordingPath;
  std::vector<ReplayParam> params;
  std::vector<std::string> cookieNames;  ///< core scheduling: name of each cookie value ([0] untagged)
  /// How faithfully it reproduces its recording, when it was replayed from one
  /// (core/analysis/fidelity.h); travels with the model to every view.
  std::shared_ptr<const analysis::Fidelity> fidelity;
  /// Every count of Unmodelled, zero or not, in the order replays show them:
  /// the GUI keeps models, not validation blocks.
  std::vector<ReplayCaveat> unmodelled;
};

class TraceModel {
 public:
  // Identity of the run.
  std::string format;                            ///< "ftrace-text", "trace.dat v7", ...
  std::vector<std::string> sourceFiles;
  std::map<std::string, std::string> metadata;   ///< hostname, osrelease, cmdline, clock, ...
  std::optional<ReplayInfo> replay;
  Topology topology;

  int64_t firstTs = 0;  ///< first event's timestamp (trace clock, ns)
  int64_t lastTs = 0;   ///< last event's timestamp
  int64_t span() const { return lastTs - firstTs; }
  uint64_t eventCount = 0;  ///< events read from the file (every type)
  std::vector<std::pair<std::string, uint64_t>> eventCounts;  ///< per event name, sorted by name

  bool partial = false;          ///< the file turned unreadable part-way; what is here is the valid prefix
  std::string partialReason;
  Diagnostics diagnostics;

  StringPool strings;
  ThreadTable threads;
  CommChangeTable commChanges;
  ProcessTable processes;
  std::vector<CpuSliceTable> cpuSlices;  ///< indexed by CPU number
  ThreadStateTable threadStates;
  WakeupTable wakeups;
  MigrationTable migrations;
  TaskEventTable taskEvents;
  DataLossTable dataLoss;
  CounterTable counters;
  UserSliceTable userSlices;

  int cpuCount() const { return static_cast<int>(cpuSlices.size()); }
  size_t threadCount() const { return threads.size(); }
  /// Threads other than the idle task (utid 0), which no task table lists: what "tasks" counts everywhere.
  size_t taskCount() const { return threads.size() == 0 ? 0 : threads.size() - 1; }
  std::string_view comm(Utid u) const { return strings.get(threads.comm[u.value]); }
  std::span<const uint32_t> wakeupsOf(Utid u) const;
  /// State rows of one thread: [first, last).
  std::pair<uint32_t, uint32_t> stateRowsOf(Utid u) const {
    return {threadStates.rowsBegin[u.value], threadStates.rowsBegin[u.value + 1]};
  }
  int64_t stateEnd(uint32_t row) const;  ///< end of a state interval
  /// The thread's state row in force just before `ts` (the last one that
  /// starts before it); nullopt when the thread has no row before `ts`.
  std::optional<uint32_t> stateRowBefore(Utid u, int64_t ts) const;
  Utid threadOfStateRow(uint32_t row) const;
  /// Total events lost (rows with unknown counts count as 0 here; see dataLoss).
  int64_t lostEvents() const;
  /// Loss rows whose count the tracer did not give (count < 0): lostEvents()
  /// is only a lower bound when there are any (core/data_loss_text.h says so).
  size_t lostRangesOfUnknownCount() const;
  uint64_t sliceCount() const;
  /// Bytes held by all tables (capacity, i.e. what the process really uses).
  size_t memoryBytes() const;
  /// The recording kernel's release ("6.18.44-fc-v857"), from the trace's
  /// osrelease or uname metadata; empty when the format does not record it.
  std::string kernelRelease() const;
};

using TraceModelPtr = std::shared_ptr<const TraceModel>;

}  // namespace core
