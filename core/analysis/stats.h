// Scheduling statistics of one run over a time range: per task, per process,
// per CPU and for the run. Everything the CLI's `stats`, the GUI's tables and
// charts, the diff and the reports show comes from computeStats().
//
// Definitions (also in `schedlab-cli stats --help` and the README):
// - runtime: time on a CPU (the task's run slices, clipped to the range);
// - wait: time runnable but not running (woken or preempted, waiting on a runqueue);
// - sleep: interruptible sleep (S), TASK_IDLE (I), stopped, traced or parked;
// - blocked: uninterruptible sleep (D);
// - CPU share: runtime / covered length (the part of the range the trace covers);
// - voluntary switches: switched out not runnable (blocked, slept, exited);
//   involuntary: switched out still runnable (preempted);
// - migrations: sched_migrate_task rows in the range, and the moves the trace
//   shows without one (migrationsInferred; core::kMigrationInferred);
// - wakeup latency: from the wakeup (sched_waking, or sched_wakeup when no
//   waking was traced) to the task's next switch-in, for wakeups that made a
//   sleeping task runnable;
// - scheduling delay: from the start of any runnable interval (after a wakeup or
//   a preemption) to the switch-in that ends it;
// - switches (per CPU): run slices (task or idle) that begin at a context
//   switch in the range (not the slice a CPU's record starts with);
// - fairness, over the fair-class tasks (fair and SCHED_IDLE; RT and DL tasks
//   only take CPUs away), against the ideal weighted-fair service S*_i each task
//   could have had (fair_share.h): a fluid schedule that at every instant shares
//   the CPUs no RT/DL task runs on among the tasks with unserved demand, weighted
//   max-min fair under their CPU affinities and at most one CPU each, serving
//   each burst (a stretch of wanting a CPU) the CPU time it took, or without
//   bound if it still wanted one at the range end. Competing tasks: those that
//   waited, or that the ideal gave less than a whole CPU, for some time.
//   Jain's index: x_i = S_i / S*_i, J = (sum x)^2 / (n sum x^2) over competing
//   tasks; 1 is weight-fair, 1/n is one task served. GPS lag: per task the
//   maximum over time of |S*_i(t) - S_i(t)|, reported as max and mean over the
//   competing tasks. Jain's index of cookies: the same over cookies, x_K = sum
//   of S_i / sum of S*_i of their competing tasks (cookie 0 included);
// - CPU utilisation: busy (non-idle) time / covered length;
// - idle while runnable: wall time during which some task waited on a CPU
//   running another task while a CPU it was allowed on was idle (why.h);
// - frequency and idle-state residency (per CPU): covered time at each
//   cpu_frequency / cpu_idle value, each sample holding until the next; before
//   the CPU's first sample the value is unknown (counted apart). Mean frequency
//   weighted by time, and by busy time (time running a task);
// - user-space slices (atrace B/E, S/F): per task and per name, count and
//   duration distribution of the slices that began in the range.
// Ranges are half-open, [from, to): an interval counts for its overlap with the
// range, an instantaneous event (a switch, a wakeup, a migration, the start of
// the wait a latency sample measures) iff from <= its time < to. The whole trace
// is [first event, last event + 1 ns), the smallest such range holding every
// event; lengths count only what the trace covers, [first event, last event].
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/trace_model.h"

namespace core::analysis {

struct TimeRange {
  int64_t from = 0;  ///< absolute trace time, inclusive
  int64_t to = 0;    ///< absolute trace time, exclusive
  int64_t length() const { return to - from; }
};
TimeRange wholeTrace(const TraceModel& model);
/// The end of window w (1-based) of `windows` equal windows over [from, to), for
/// the sweeps that take a range a window at a time; computed modulo 2^64, so
/// that no two times overflow it. `from` when the range is empty.
inline int64_t windowBound(int64_t from, int64_t to, int64_t w, int64_t windows) {
  if (to <= from || windows <= 0) return from;
  const uint64_t span = static_cast<uint64_t>(to) - static_cast<uint64_t>(from);
  return static_cast<int64_t>(static_cast<uint64_t>(from) +
                              span / static_cast<uint64_t>(windows) * static_cast<uint64_t>(w));
}
/// Whether a task existed in the range: from its first state (which can precede
/// its first mention, when a CPU's first slice is its) through its death, inclusive.
bool existedIn(const TraceModel& model, Utid utid, TimeRange range);

/// Summary of a set of durations (ns), with the sorted samples for plots.
struct Distribution {
  uint64_t count = 0;
  double mean = 0;
  int64_t p50 = 0, p90 = 0, p99 = 0, max = 0;
  std::vector<int64_t> sorted;
  static Distribution of(std::vector<int64_t> values);
  /// The distribution of the union of samples kept in parts (each task's):
  /// one copy, sorted in place, with no scratch beside the result.
  static Distribution ofParts(const std::vector<const std::vector<int64_t>*>& parts);
  /// Nearest-rank percentile (p in [0, 100]).
  int64_t percentile(double p) const;
};

/// Time in one user-space slice name (atrace's time in state): the slices that
/// began in the range, with their whole durations. Slices without a traced end
/// are only counted in `open`.
struct UserSliceStats {
  std::string name;
  uint64_t count = 0;
  uint64_t open = 0;
  int64_t totalNs = 0;
  int64_t p50Ns = 0, p99Ns = 0, maxNs = 0;
};

struct TaskStats {
  Utid utid;
  int32_t tid = 0;
  int32_t tgid = -1;
  Upid upid;
  std::string comm;
  int16_t prio = kPrioUnknown;
  SchedClass schedClass = SchedClass::Fair;
  int64_t runtimeNs = 0;
  int64_t waitNs = 0;
  int64_t sleepNs = 0;
  int64_t blockedNs = 0;
  double cpuShare = 0;
  uint64_t switchesVoluntary = 0;
  uint64_t switchesInvoluntary = 0;
  uint64_t migrations = 0;
  uint64_t migrationsInferred = 0;  ///< of them, moves with no sched_migrate_task traced
  uint64_t wakeups = 0;  ///< wakeups that made it runnable
  Distribution wakeupLatency;
  Distribution schedDelay;
  /// mainline core_forceidle_sum: time it ran while an SMT sibling was forced
  /// idle, scaled by forced-idle siblings / running siblings (1 with two threads per core)
  int64_t forceidleSumNs = 0;
  // Fair share (fair and idle classes; see fair_share.h).
  bool competing = false;   ///< counted in Jain's index and the GPS lag
  int64_t idealNs = 0;      ///< S*: the ideal weighted-fair service
  int64_t gpsLagMaxNs = 0;  ///< max over the range of |S*(t) - S(t)|
  std::vector<UserSliceStats> userSlices;  ///< by total time, longest first
};

struct ProcessStats {
  int32_t tgid = -1;  ///< -1: a thread whose process is unknown, shown alone
  std::string name;
  size_t threads = 0;
  TaskStats total;  ///< sums over its threads (GPS lag: the largest); distributions merged
};

struct CpuStats {
  int cpu = 0;
  int64_t busyNs = 0;
  int64_t idleNs = 0;
  int64_t forcedIdleNs = 0;
  int64_t lostNs = 0;
  double utilisation = 0;
  uint64_t switches = 0;
  /// Time at each frequency (kHz -> ns) within the covered range, from the
  /// model's cpu_frequency counter of this CPU (time_in_state: busy and idle
  /// alike); a sample holds until the next. Empty without such a counter.
  std::map<int64_t, int64_t> freqResidencyNs;
  /// Covered time before the CPU's first frequency sample: the frequency is not
  /// known there. freqResidencyNs + freqUnknownNs = the covered length.
  int64_t freqUnknownNs = 0;
  double meanFreqKhz = 0;      ///< weighted by time at each frequency (0 without samples)
  double meanBusyFreqKhz = 0;  ///< weighted by the busy (task) time at each frequency
  /// Time in each cpuidle state (state -> ns; kIdleStateRunning: not idle),
  /// from power:cpu_idle, as freqResidencyNs from cpu_frequency.
  std::map<int64_t, int64_t> idleResidencyNs;
  int64_t idleUnknownNs = 0;
};

struct Fairness {
  double jain = 1.0;
  /// Jain's index over the cookies' service ratios (CookieStats::serviceRatio; 1 without cookies).
  double jainCookies = 1.0;
  int64_t gpsLagMaxNs = 0;
  int64_t gpsLagMeanNs = 0;
  size_t competingTasks = 0;
};

/// One SMT core (topologies with SMT only).
struct CoreStats {
  int core = 0;
  std::vector<int> cpus;
  int64_t forcedIdleNs = 0;     ///< sum over its siblings
  int64_t anyForcedIdleNs = 0;  ///< wall time during which at least one sibling was forced idle
};

/// Core scheduling: what the tasks of one cookie did (replays with cookies).
struct CookieStats {
  uint32_t cookie = 0;  ///< 0 = untagged
  std::string name;     ///< as the replay named it ("tgid:1234", a --cookie NAME), empty if unknown
  size_t tasks = 0;
  int64_t runtimeNs = 0;
  int64_t forcedIdleCausedNs = 0;  ///< sum of its tasks' forceidle_sum: ran while a sibling was forced idle
  /// Service of its competing tasks over their ideal service (unset when none competed).
  std::optional<double> serviceRatio;
};

struct RunStats {
  TimeRange range;
  /// The part of the range the trace covers, [from, to) ∩ [firstTs, lastTs]: the
  /// denominator of CPU share and utilisation.
  int64_t coveredNs = 0;
  std::vector<TaskStats> tasks;  ///< one per task identity that existed in the range (idle excluded)
  std::vector<CpuStats> cpus;
  Fairness fairness;
  Distribution wakeupLatency;  ///< all tasks
  Distribution schedDelay;
  uint64_t switchesVoluntary = 0;
  uint64_t switchesInvoluntary = 0;
  uint64_t migrations = 0;
  uint64_t migrationsInferred = 0;
  int64_t busyNs = 0;
  int64_t forcedIdleNs = 0;
  int64_t idleWhileRunnableNs = 0;  ///< see idleWhileRunnableNs() in why.h
  std::vector<CookieStats> cookies;  ///< empty when no task has a cookie
  std::vector<CoreStats> cores;      ///< empty without SMT
  std::vector<UserSliceStats> userSlices;  ///< every task's, by name, longest total first
};

/// Kernel sched_prio_to_weight for a prio (100..139 -> nice -20..19); RT prios get nice 0's weight.
int weightOfPrio(int prio);
/// The weight a task competes with in the fair class: SCHED_IDLE's WEIGHT_IDLEPRIO (3), else its prio's.
int fairWeight(int prio, TaskPolicy policy);

/// The statistics of `range`. The ideal fair share is swept on another thread;
/// `whileFairShareRuns`, when given, is called meanwhile with every field
/// filled but the fair share's (RunStats::fairness, TaskStats::idealNs,
/// gpsLagMaxNs and competing), for work that needs nothing else.
RunStats computeStats(const TraceModel& model, TimeRange range,
                      const std::function<void(const RunStats&)>& whileFairShareRuns = {});
struct FairShare;  // fair_share.h
/// The ideal fair share of `range` (fair_share.h), swept on a thread of its
/// own from now: for a caller with a core to spare before the rest of the
/// statistics can run. `model` must outlive the future.
std::future<std::vector<FairShare>> startFairShare(const TraceModel& model, TimeRange range);
/// As above, with the fair share startFairShare() began.
RunStats computeStats(const TraceModel& model, TimeRange range, std::future<std::vector<FairShare>> fairShare,
                      const std::function<void(const RunStats&)>& whileFairShareRuns = {});
inline RunStats computeStats(const TraceModel& model) { return computeStats(model, wholeTrace(model)); }

std::vector<ProcessStats> aggregateByProcess(const RunStats& stats);

}  // namespace core::analysis
