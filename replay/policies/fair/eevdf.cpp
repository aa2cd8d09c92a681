// EEVDF (docs/models.md §5.3): lag, eligibility, virtual deadlines and the pick.
#include <algorithm>

#include "replay/policies/fair/fair_sched.h"

namespace replay::fair {

void FairPolicy::updateDeadline(int cpu, uint32_t c) {
  FairRq::Entity& e = m_ents[c];
  if (e.vruntime - e.deadline < 0) return;
  e.slice = m_baseSlice;
  e.deadline = e.vruntime + calcDeltaFair(e.slice, e);
  Rq& r = rq(cpu);
  if (r.cfs.nrRunning > 1) {
    m_e->resched(cpu);
    clearBuddies(r, c);
  }
}

void FairPolicy::updateEntityLag(Rq& r, uint32_t t) {
  FairRq::Entity& e = m_ents[t];
  const int64_t lag = r.cfs.avgVruntimeOf(m_ents) - e.vruntime;
  const int64_t limit = calcDeltaFair(std::max<int64_t>(2 * e.slice, m_e->tickNs()), e);
  e.vlag = std::clamp(lag, -limit, limit);
}

void FairPolicy::placeEevdf(Rq& r, uint32_t t, bool initial) {
  FairRq::Entity& e = m_ents[t];
  const int64_t v = r.cfs.avgVruntimeOf(m_ents);
  int64_t lag = 0;
  e.slice = m_baseSlice;
  int64_t vslice = calcDeltaFair(e.slice, e);
  if (m_placeLag && r.cfs.nrRunning) {
    int64_t ld = r.cfs.avgLoad;
    if (r.cfs.curr != kNone && m_ents[r.cfs.curr].onRq) ld += m_ents[r.cfs.curr].weight;
    lag = e.vlag * (ld + e.weight);
    if (ld == 0) ld = 1;
    lag /= ld;
  }
  e.vruntime = v - lag;
  if (m_placeDeadlineInitial && initial) vslice /= 2;
  e.deadline = e.vruntime + vslice;
}

uint32_t FairPolicy::pickEevdf(const Rq& r, bool withCurr) const {
  uint32_t c = withCurr ? r.cfs.curr : kNone;
  if (c != kNone && !m_ents[c].onRq) c = kNone;
  if (r.cfs.nrRunning == 1) return c != kNone ? c : (r.cfs.tree.empty() ? kNone : r.cfs.tree.begin()->id);
  if (c != kNone && !r.cfs.eligible(m_ents, c)) c = kNone;
  if (m_runToParity && c != kNone && m_ents[c].vlag == m_ents[c].deadline) return c;
  uint32_t best = r.cfs.earliestEligible(m_ents);
  if (best == kNone || (c != kNone && m_ents[c].deadline < m_ents[best].deadline)) best = c;
  return best;
}

uint32_t FairPolicy::pickEevdfNext(Rq& r) {
  if (m_nextBuddy && r.cfs.next != kNone && r.cfs.eligible(m_ents, r.cfs.next)) {
    const uint32_t n = r.cfs.next;
    clearBuddies(r, n);
    return n;
  }
  uint32_t best = pickEevdf(r, false);
  if (best == kNone) best = r.cfs.tree.begin()->id;  // cannot happen with a non-empty tree
  return best;
}

}  // namespace replay::fair
