// The one format-neutral state machine that turns scheduler events into the
// trace model. Every importer decodes its format and calls the on*() methods in
// timestamp order; the replay simulator does the same. No importer contains
// scheduling logic, so all formats build identical models from identical events.
//
// Failure modes: nothing here fails hard. Contradictions (mismatched switch
// tids, wakeups of unknown tasks, time going backwards...) are counted as named
// diagnostics and repaired deterministically; see diagnostics.h.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/tid_table.h"
#include "core/trace_model.h"

namespace core {

/// Context common to every event: when, where, and in whose context it fired.
struct EventContext {
  int64_t ts = 0;
  int32_t cpu = 0;
  int32_t ctxTid = -1;  ///< common_pid: the task current when the event fired; -1 if the format does not say
  uint8_t irq = 0;      ///< IrqContext bits (from common_flags or the text irq column)
};
enum IrqContext : uint8_t { kCtxHardIrq = 1, kCtxSoftIrq = 2, kCtxNmi = 4 };

// Prios are the kernel's (-1 for SCHED_DEADLINE); kPrioUnknown when the format has no such field.
struct SwitchArgs {
  int32_t prevTid = 0;
  std::string_view prevComm;
  int32_t prevPrio = kPrioUnknown;
  TaskState prevState = TaskState::Unknown;
  int32_t nextTid = 0;
  std::string_view nextComm;
  int32_t nextPrio = kPrioUnknown;
  bool forcedIdle = false;  ///< replay: the CPU goes idle because core scheduling forces it
};

struct WakeArgs {
  int32_t tid = 0;
  std::string_view comm;
  int32_t prio = kPrioUnknown;
  int32_t targetCpu = -1;
  /// The trace itself says the wakeup had no effect: the task was running or
  /// runnable already (sched_wakeup's `success` 0, as kernels before 4.3 set
  /// it from try_to_wake_up(); later ones always write 1).
  bool foundActive = false;
};

class SchedBuilder {
 public:
  static constexpr int kMaxCpus = 4096;

  SchedBuilder();
  ~SchedBuilder();
  SchedBuilder(const SchedBuilder&) = delete;
  SchedBuilder& operator=(const SchedBuilder&) = delete;

  /// Optional: pre-sizes the tables for about this many events (avoids regrowth copies).
  void reserve(uint64_t expectedEvents);

  // --- Run metadata ---
  void setFormat(std::string format);
  void addSourceFile(std::string path);
  void setMetadata(std::string key, std::string value);
  void setTopology(Topology topology);
  void setReplayInfo(ReplayInfo info);
  /// The input turned unreadable: keep what was built, mark the model partial.
  void setPartial(std::string reason);
  Diagnostics& diagnostics();

  /// Where the importer is in its input, for diagnostics raised by the builder.
  void setLine(uint64_t line) { m_line = line; m_positionIsLine = true; }
  void setByteOffset(uint64_t offset) { m_line = offset; m_positionIsLine = false; }
  void setCurrentFile(std::string file) { m_file = std::move(file); }
  void recordDiagnostic(DiagCode code, std::string message, std::optional<int> cpu = {}, std::optional<int64_t> ts = {});

  // --- Event counting (every event read, sched or not) ---
  uint32_t eventType(std::string_view name);
  void countEvent(uint32_t type, uint64_t n = 1) { m_eventTypeCounts[type] += n; }
  /// Marks a timestamp as seen on a CPU (for events the builder has no method for).
  void onOtherEvent(EventContext ctx);

  // --- Scheduler events ---
  void onSwitch(EventContext ctx, const SwitchArgs& args);
  /// A switch-in this builder once inferred (a run ended by SliceEnd::Mismatch,
  /// the next one kSliceStartInferred), read back from an export that wrote it
  /// where it was placed: repaired again the same way, at that time.
  /// `prevKeepsState`: that import had inferred it only once the task it
  /// displaced had gone on elsewhere, so it left that task's states alone;
  /// so does this (else the task would become Unknown here).
  void onRepairedSwitch(EventContext ctx, int32_t nextTid, std::string_view nextComm, int32_t nextPrio,
                        bool prevKeepsState = false);
  void onWaking(EventContext ctx, const WakeArgs& args);
  void onWakeup(EventContext ctx, const WakeArgs& args, bool isNew);
  void onMigrate(EventContext ctx, int32_t tid, std::string_view comm, int32_t prio, int32_t origCpu,
                 int32_t destCpu);
  void onFork(EventContext ctx, int32_t parentTid, std::string_view parentComm, int32_t childTid,
              std::string_view childComm, int32_t childTgid = -1);
  void onExec(EventContext ctx, int32_t tid, int32_t oldTid, std::string_view filename);
  void onExit(EventContext ctx, int32_t tid, std::string_view comm, int32_t prio);
  void onRename(EventContext ctx, int32_t tid, std::string_view newComm);
  /// sched_stat_runtime: the kernel accounted `runtimeNs` of CPU time to `tid`
  /// (which ran until ctx.ts, on ctx.cpu or, for a remote update, elsewhere).
  void onRuntimeStat(EventContext ctx, int32_t tid, int64_t runtimeNs);
  /// Task identity known from outside the event stream (saved cmdlines/tgids,
  /// perf COMM records, LTTng statedump). Applies to the current task of `tid`.
  void onTaskInfo(int32_t tid, int32_t tgid, std::string_view comm);
  /// A task's state at trace start (LTTng statedump).
  void onTaskStateSeed(int64_t ts, int32_t tid, TaskState state, int32_t cpu);
  /// Events lost on `cpu` (-1: unknown CPU) before `ts`; count -1 if unknown.
  void onDataLoss(int32_t cpu, int64_t ts, int64_t count);
  /// The tracer's own total of events lost on `cpu` (ftrace's per-CPU "overrun"
  /// statistic, saved in trace.dat): when exactly one of the CPU's losses came
  /// without a count, it is given what the counted ones leave of the total.
  /// Several uncounted losses stay uncounted: how the total splits is unknown.
  void settleLostCount(int32_t cpu, int64_t totalLost);
  /// The tracer's count of events lost on `cpu` between two readings of its
  /// overrun statistic, at `after` and at `upTo` (Perfetto's ftrace_stats):
  /// given to the CPU's one loss without a count that ends in (after, upTo].
  /// Returns how many such losses there are; with none or several, none is
  /// given it (it was lost elsewhere, or how it splits is unknown).
  size_t settleLostCountBetween(int32_t cpu, int64_t after, int64_t upTo, int64_t count);
  void onCounter(CounterKind kind, int32_t index, int64_t ts, double value);
  /// A sample of any counter track: per CPU, per task (index = utid) or a
  /// process's named user counter (index = tgid). Not an event: no CPU is marked seen.
  void onCounter(const CounterTrack& track, int64_t ts, double value);

  // --- Power, PELT and user-space events (each an event on ctx.cpu) ---
  // The CPU they describe is their own argument (cpu_frequency fires on the CPU
  // that changed a whole policy's frequency); one out of range is counted
  // (cpu_out_of_range) and dropped.
  void onCpuFrequency(EventContext ctx, int32_t cpu, int64_t khz);
  void onCpuFrequencyLimits(EventContext ctx, int32_t cpu, int64_t minKhz, int64_t maxKhz);
  /// `state` is the cpuidle state entered, kIdleStateRunning when the CPU leaves idle.
  void onCpuIdle(EventContext ctx, int32_t cpu, int64_t state);
  /// A PELT or util_est signal (CounterKind::Utilisation, PeltLoad...) of a CPU
  /// (tid < 0) or of a task's sched_entity.
  void onPelt(EventContext ctx, CounterKind kind, int32_t cpu, int32_t tid, std::string_view comm, int64_t value);
  /// Text written to trace_marker by `tid` (the event's context where known):
  /// atrace begin/end/counter/async/instant records (core/atrace_marker.h)
  /// become user slices and counters, other text an instant marker. Unmatched
  /// ends are counted (user_slice_end_unmatched); slices open at the end run
  /// to it (user_slice_open_at_end). devlib's "cpu_frequency_devlib: state=K
  /// cpu_id=C" (or "cpu_frequency: ...", written at trace start so that tools
  /// know the frequencies the trace began with) is a cpu_frequency sample.
  void onUserMark(EventContext ctx, int32_t tid, std::string_view text);
  /// Replay: an idle CPU becomes forced idle (core scheduling) or stops being
  /// so without a context switch; splits its idle slice there.
  void onIdleKind(EventContext ctx, bool forcedIdle);
  void setTaskAttributes(int32_t tid, uint32_t cookie, int16_t uclampMin, int16_t uclampMax);
  /// Replay: the policy and CPU affinity (empty: every CPU) the workload gave the task.
  void setTaskPolicy(int32_t tid, TaskPolicy policy, std::vector<CpuId> affinity);

  uint64_t eventsSeen() const { return m_eventsSeen; }
  bool empty() const { return m_eventsSeen == 0; }

  /// Closes what is still open, builds the indexes, freezes the model.
  std::shared_ptr<TraceModel> finalize();

 private:
  struct ThreadRt;
  struct CpuRt;
  bool accept(EventContext& ctx);
  void noteClamped(DiagCode code, EventContext& ctx, int64_t to);
  Utid threadFor(int32_t tid, std::string_view comm, int64_t ts, bool* created = nullptr);
  Utid newThread(int32_t tid, int64_t ts);
  uint32_t latestRowOf(int32_t tid) const;  // the newest thread row of `tid`, dead or alive; UINT32_MAX if none
  void noteComm(Utid u, std::string_view comm, int64_t ts);
  void notePrio(Utid u, int32_t prio);
  void setState(Utid u, int64_t ts, TaskState state, int cpu);
  void addMigration(int64_t ts, Utid u, int origCpu, int destCpu, uint8_t flags);
  void inferMigration(Utid u, int64_t ts, int cpu);
  void openSlice(CpuRt& c, int cpu, Utid u, int64_t ts, uint8_t flags, bool forcedIdle);
  void closeSlice(CpuRt& c, int cpu, int64_t ts, TaskState endState, SliceEnd reason);
  void wake(EventContext ctx, const WakeArgs& args, bool isWaking, bool isNew);
  void killThread(Utid u, int64_t ts);
  void endExitBlock(Utid u);
  void markDead(Utid u, int64_t ts);
  void inferSwitchIn(CpuRt& c, int cpu, Utid u, int64_t ts, bool displacedKeepsState = false);
  void resolveUntracedSwitchOut(ThreadRt& rt, TaskState next);
  void placeInferredSwitchIns();
  CpuRt& cpuRt(int cpu);

  // What set an inferred switch-in's lower bound: an event of the CPU in another
  // task's context (e.g. the wakeup's IPI there), or the wakee's own wakeup.
  enum BoundKind : uint8_t { kBoundLocalEvent, kBoundWakeup, kBoundKinds };
  static BoundKind boundKind(int64_t localEventTs, int64_t wakeupTs) {
    return localEventTs >= wakeupTs ? kBoundLocalEvent : kBoundWakeup;
  }
  // A thread-state row as finalize() finds it once rows are grouped by thread:
  // the thread's ordinal-th row.
  struct StateRowRef {
    Utid thread;
    uint32_t ordinal = UINT32_MAX;  // none
  };
  // A switch-in the trace lacks, found at `firstSeen` (the task's first event
  // on that CPU); finalize() moves it back into (lowerBound, firstSeen].
  struct InferredSwitchIn {
    int32_t cpu;
    uint32_t prevSlice;  // the slice that ended there; the inferred one follows it
    StateRowRef running;    // the task's Running row
    StateRowRef displaced;  // the replaced task's row that ends its run there (task to task)
    int64_t lowerBound;  // the latest event that shows it was not yet running there
    int64_t firstSeen;
    BoundKind kind;
    // It was blocked, and no wakeup of it is traced: when it was woken is
    // unknown, and the delays measured from traced wakeups do not apply.
    bool unwoken;
  };
  std::vector<InferredSwitchIn> m_inferred;
  // Traced switches from idle to a woken task: the delay from the same lower
  // bound, per BoundKind.
  struct DelaySamples {
    std::vector<int64_t> kept;  // an even spread over the trace, bounded
    uint64_t seen = 0;
    uint64_t stride = 1;
    void add(int64_t delay);
    int64_t median();  // -1 without samples
  };
  DelaySamples m_switchInDelays[kBoundKinds];
  size_t m_inferredRunningRow = SIZE_MAX;

  std::shared_ptr<TraceModel> m_model;
  std::vector<ThreadRt> m_threads;
  std::vector<CpuRt> m_cpus;
  TidTable<uint32_t, UINT32_MAX> m_tidToUtid;
  std::unordered_map<int32_t, uint32_t> m_bigTidToUtid;  // tids the table cannot hold (corrupt input)
  // Thread-state rows during import, in event order; finalize() groups them by
  // thread into the model. Each row's thread, in 16 bits until a trace has more
  // threads than that holds (import memory, issue 17: 4 B a row at 3M rows).
  struct RowThreads {
    std::vector<uint16_t> narrow;
    std::vector<uint32_t> wide;  // used instead of narrow from the 65536th thread on
    bool isWide = false;
    void push_back(Utid u);
    uint32_t back() const { return isWide ? wide.back() : narrow.back(); }
    size_t size() const { return isWide ? wide.size() : narrow.size(); }
  };
  RowThreads m_stateUtid;
  // Each row's time as its distance from the same thread's previous row, which
  // grouping by thread (stable) keeps: 4 B a row instead of 8. A thread's first
  // row, and one after more than 4.29 s, has kFarDt and its time in
  // m_stateTsFar, in event order. The distances are unsigned in int32_t slots:
  // the model's time column takes their storage over (TimeColumn::adopt()).
  static constexpr int32_t kFarDt = -1;
  std::vector<int32_t> m_stateDt;
  struct FarTime {
    Utid thread;
    int64_t ts;
  };
  std::vector<FarTime> m_stateTsFar;
  // Inferred switch-ins moved back (placeInferredSwitchIns()) move their state
  // rows too; done once the rows are grouped and their times whole.
  struct StateRowMove {
    StateRowRef row;
    int64_t from, to;
  };
  std::vector<StateRowMove> m_stateRowMoves;
  StateRowRef lastStateRow(Utid u) const;
  // core/prefault.h: when m_stateDt reaches this size, the tables' next pages are mapped.
  size_t m_prefaultMark = 0;
  void prefaultNextRows();
  std::vector<uint32_t> m_counterTrackOfRow;
  using CounterTrackKey = std::tuple<CounterKind, CounterScope, int32_t, uint32_t>;  // kind, scope, index, name
  std::map<CounterTrackKey, uint32_t> m_counterTrackIndex;
  // User slices being built: the open sync slices of each thread (innermost
  // last), and the open async ones by (tgid, name, cookie).
  std::unordered_map<uint32_t, std::vector<uint32_t>> m_openUserSlices;
  struct AsyncKey {
    int32_t tgid;
    uint32_t name;
    int64_t cookie;
    bool operator==(const AsyncKey&) const = default;
  };
  struct AsyncKeyHash {
    size_t operator()(const AsyncKey& k) const noexcept {
      return std::hash<int64_t>{}(k.cookie) ^ (static_cast<size_t>(k.name) << 20) ^ static_cast<size_t>(k.tgid);
    }
  };
  std::unordered_map<AsyncKey, uint32_t, AsyncKeyHash> m_openAsyncSlices;
  std::unordered_map<int32_t, std::array<uint32_t, 256>> m_asyncLaneUse;  // per tgid: open async slices per lane
  uint32_t addUserSlice(int64_t ts, Utid u, std::string_view name, uint8_t depth, UserSliceKind kind);
  bool acceptPowerCpu(EventContext& ctx, int32_t cpu);
  std::unordered_map<std::string, uint32_t> m_eventTypeIndex;
  std::vector<std::string> m_eventTypeNames;
  std::vector<uint64_t> m_eventTypeCounts;
  int64_t m_lastTs = INT64_MIN;
  uint64_t m_eventsSeen = 0;
  uint64_t m_line = 0;
  bool m_positionIsLine = true;
  std::string m_file;
};

}  // namespace core
