#include "replay/workload/workload.h"

namespace replay {

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
  return wakeupsFromInterrupt + wakeupsUnknownWaker + wakeupsSelf + blocksWithoutWakeup + tasksStartedBeforeTrace +
         tasksRunningAtTraceEnd + tasksNeverRan + forksOfUnreplayedParent + unknownStateIntervals + lostEventRanges +
         missingSwitchIns + tasksLeftOut;
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
