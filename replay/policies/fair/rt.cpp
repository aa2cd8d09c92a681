// The RT class (docs/models.md §5.4): FIFO/RR queues per CPU. A woken RT task
// goes to its previous CPU unless that runs an RT task of equal or higher
// priority, then to the CPU running the lowest priority; a CPU with no RT work
// pulls a queued RT task from another CPU before fair work.
#include <algorithm>

#include "replay/policies/fair/fair_sched.h"

namespace replay::fair {

int FairPolicy::selectRt(TaskId t, int prev) const {
  const int prio = m_e->task(t).prio;
  const int start = m_e->allowed(t, prev) ? prev : firstAllowed(t);
  const TaskId c = m_e->curr(start);
  const bool busyRt = c != kNoTask && !isFair(c) && m_e->task(c).prio <= prio;
  if (!busyRt && m_e->allowed(t, start)) return start;
  // find_lowest_rq(): the CPU running the lowest priority (idle lowest of all).
  int best = start;
  int bestPrio = runningPrio(start);
  const int n = m_e->cpuCount();
  for (int i = 0; i < n; ++i) {
    const int cpu = (start + i) % n;
    if (!m_e->allowed(t, cpu)) continue;
    const int p = runningPrio(cpu);
    if (p > bestPrio) best = cpu, bestPrio = p;
  }
  return bestPrio > prio ? best : start;
}

int FairPolicy::runningPrio(int cpu) const {
  const Rq& r = m_rqs[static_cast<size_t>(cpu)];
  if (!r.rt.empty()) return r.rt.begin()->prio;
  return fairQueued(r) ? 120 : 200;  // any fair work ranks below RT; idle below everything
}

void FairPolicy::rtInsert(int cpu, TaskId t) {
  TaskSched& ts = m_ts[t];
  ts.rtSeq = ++m_rtSeq;
  rq(cpu).rt.insert({m_e->task(t).prio, ts.rtSeq, t});
}

void FairPolicy::pullRt(int cpu) {
  // pull_rt_task(): take the highest-priority RT task queued (not running) elsewhere.
  const int n = m_e->cpuCount();
  int fromCpu = -1;
  RtKey best{INT_MAX, 0, 0};
  for (int i = 1; i < n; ++i) {
    const int c = (cpu + i) % n;
    const Rq& r = m_rqs[static_cast<size_t>(c)];
    if (r.rt.size() < 2) continue;
    for (const RtKey& k : r.rt) {
      if (m_e->isRunning(k.id) || !m_e->allowed(k.id, cpu)) continue;
      if (k < best || best.prio == INT_MAX) best = k, fromCpu = c;
      break;
    }
  }
  if (fromCpu < 0) return;
  touchCore(fromCpu);
  touchCore(cpu);
  rtErase(fromCpu, best.id);
  m_e->moveQueued(best.id, cpu);
  m_ts[best.id].rqCpu = cpu;
  rtInsert(cpu, best.id);
  leftForcedIdleCpu(fromCpu);
}

}  // namespace replay::fair
