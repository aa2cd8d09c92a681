// CFS as in Linux <= 6.5 (docs/models.md §5.2): slices from the latency
// period, sleeper placement, wakeup granularity, buddies and the tick check.
#include <algorithm>

#include "replay/policies/fair/fair_sched.h"

namespace replay::fair {

int64_t FairPolicy::schedSlice(const Rq& r, uint32_t t, bool onRq) const {
  const FairRq::Entity& e = m_ents[t];
  int64_t slice = schedPeriod(r.cfs.nrRunning + (onRq ? 0 : 1));
  const int64_t ld = r.cfs.load + (onRq ? 0 : e.weight);
  slice = static_cast<int64_t>(calcDelta(static_cast<uint64_t>(slice), static_cast<uint64_t>(e.weight),
                                         static_cast<uint64_t>(ld), false));
  return std::max(slice, e.idlePolicy ? m_idleMinGran : m_minGran);  // BASE_SLICE
}

void FairPolicy::placeCfs(Rq& r, uint32_t t) {
  FairRq::Entity& e = m_ents[t];
  int64_t v = r.cfs.minVruntime;
  int64_t thresh = e.idlePolicy ? m_minGran : m_latency;
  if (m_gentle) thresh >>= 1;
  v -= thresh;
  e.vruntime = std::max(e.vruntime, v);  // sleepers get at most `thresh` of credit
}

// wakeup_preempt_entity(): 1 if `se` should preempt `curr`, 0 within the granularity, -1 if not ahead.
int FairPolicy::wakeupPreemptEntity(uint32_t curr, uint32_t se) const {
  const int64_t vdiff = m_ents[curr].vruntime - m_ents[se].vruntime;
  if (vdiff <= 0) return -1;
  const int64_t gran = calcDeltaFair(m_wakeupGran, m_ents[se]);
  return vdiff > gran ? 1 : 0;
}

uint32_t FairPolicy::pickCfs(Rq& r) {
  const uint32_t left = r.cfs.tree.begin()->id;
  uint32_t se = left;
  if (r.cfs.next != kNone && wakeupPreemptEntity(r.cfs.next, left) < 1)
    se = r.cfs.next;
  else if (r.cfs.last != kNone && wakeupPreemptEntity(r.cfs.last, left) < 1)
    se = r.cfs.last;
  clearBuddies(r.cfs, se);
  return se;
}

void FairPolicy::checkPreemptTick(int cpu, uint32_t c) {
  Rq& r = rq(cpu);
  const FairRq::Entity& e = m_ents[c];
  const int64_t ideal = std::min(schedSlice(r, c, true), m_latency);
  const int64_t deltaExec = e.sumExec - e.prevSumExec;
  if (deltaExec > ideal) {
    m_e->resched(cpu);
    clearBuddies(r.cfs, c);
    return;
  }
  if (deltaExec < m_minGran || r.cfs.tree.empty()) return;
  const int64_t delta = e.vruntime - r.cfs.tree.begin()->vruntime;
  if (delta < 0) return;
  if (delta > ideal) m_e->resched(cpu);
}

}  // namespace replay::fair
