#include "replay/workload/workload.h"

#include <algorithm>

namespace replay {

DelayDistribution DelayDistribution::of(std::vector<int64_t> samples) {
  DelayDistribution d;
  d.samples = samples.size();
  if (samples.empty()) return d;
  std::sort(samples.begin(), samples.end());
  const size_t n = std::min(samples.size(), kQuantiles);
  d.quantiles.reserve(n);
  for (size_t i = 0; i < n; ++i) d.quantiles.push_back(samples[(2 * i + 1) * samples.size() / (2 * n)]);
  return d;
}

std::string_view toString(SchedPolicy policy) {
  switch (policy) {
    case SchedPolicy::Normal: return "SCHED_OTHER";
    case SchedPolicy::Batch: return "SCHED_BATCH";
    case SchedPolicy::Idle: return "SCHED_IDLE";
    case SchedPolicy::Fifo: return "SCHED_FIFO";
    case SchedPolicy::RR: return "SCHED_RR";
    case SchedPolicy::Iso: return "SCHED_ISO";
  }
  return "?";
}

int64_t Task::totalWork() const {
  int64_t sum = 0;
  for (const Burst& b : bursts) sum += b.work;
  return sum;
}

uint64_t Unmodelled::total() const {
  uint64_t n = 0;
  for (const Item& i : items()) n += i.count;
  return n;
}

Unmodelled& Unmodelled::operator+=(const Unmodelled& o) {
  wakeupsFromInterrupt += o.wakeupsFromInterrupt;
  wakeupsUnknownWaker += o.wakeupsUnknownWaker;
  wakeupsSelf += o.wakeupsSelf;
  blocksWithoutWakeup += o.blocksWithoutWakeup;
  tasksStartedBeforeTrace += o.tasksStartedBeforeTrace;
  tasksRunningAtTraceEnd += o.tasksRunningAtTraceEnd;
  tasksNeverRan += o.tasksNeverRan;
  forksOfUnreplayedParent += o.forksOfUnreplayedParent;
  execsNotRunning += o.execsNotRunning;
  unknownStateIntervals += o.unknownStateIntervals;
  lostEventRanges += o.lostEventRanges;
  tasksLeftOut += o.tasksLeftOut;
  switchInsInferred += o.switchInsInferred;
  return *this;
}

std::vector<Unmodelled::Item> Unmodelled::items() const {
  return {
      {"wakeups_from_interrupt", "wakeups from interrupt/idle context, replayed as sleeps of the recorded length",
       wakeupsFromInterrupt},
      {"wakeups_unknown_waker", "wakeups whose waker is not replayed, replayed as sleeps", wakeupsUnknownWaker},
      {"wakeups_self", "wakeups by the task itself, replayed as sleeps", wakeupsSelf},
      {"blocks_without_wakeup", "blocks ended without a wakeup event, replayed as sleeps", blocksWithoutWakeup},
      {"tasks_started_before_trace", "tasks alive at trace start (how their first burst began is unknown)",
       tasksStartedBeforeTrace},
      {"tasks_running_at_trace_end", "tasks still running at trace end (last burst cut by the trace end)",
       tasksRunningAtTraceEnd},
      {"tasks_never_ran", "tasks seen but never running (not replayed)", tasksNeverRan},
      {"forks_of_unreplayed_parent", "forks by a task not replayed (child started at its recorded time)",
       forksOfUnreplayedParent},
      {"execs_not_replayed", "execs at no point of the task's replayed work (no sched_exec() balancing there)",
       execsNotRunning},
      {"unknown_state_intervals", "intervals of unknown state (no work counted)", unknownStateIntervals},
      {"lost_event_ranges", "lost-event ranges in the recording", lostEventRanges},
      {"switch_ins_inferred", "runs whose switch-in the trace lacks (inferred at import, start estimated)",
       switchInsInferred},
      {"tasks_left_out", "tasks left out (--tasks created or tree:COMM)", tasksLeftOut},
  };
}

int64_t Workload::totalWork() const {
  int64_t sum = 0;
  for (const Task& t : tasks) sum += t.totalWork();
  return sum;
}

size_t Workload::burstCount() const {
  size_t n = 0;
  for (const Task& t : tasks) n += t.bursts.size();
  return n;
}

}  // namespace replay
