// Wakeup placement (select_task_rq) and load balancing of the fair class.
//
// Load balancing model (simplified from fair.c; also in the params' docs and
// docs/models.md §5.4-5.5):
// - Wakeup placement (select_task_rq_fair): a forked child goes to the least
//   loaded allowed CPU (an idle one first, the parent's CPU on ties); a woken
//   task considers the waker's CPU when it shares the package cache with the
//   task's previous CPU (wake_affine: the waker's CPU if it is idle, or if the
//   wakeup is sync and the waker is alone there, the previous CPU if that is
//   idle, else the one with the lower instantaneous load, the previous CPU's
//   load weighted by imbalance_pct/2 extra); then select_idle_sibling(): the
//   target if idle, else the previous CPU if idle, else a fully idle core,
//   else the first idle CPU of the package scanning from the target. "Idle"
//   counts a CPU running only SCHED_IDLE tasks. wake_wide() (wakee flips) turns
//   the affine step off for many-to-many wakers. PELT is not modelled: loads
//   are the weights of the runnable tasks.
// - Periodic balance: each busy CPU, every balance_interval_ms x busy_factor,
//   pulls queued fair tasks from the most loaded CPU when that CPU's load
//   exceeds its own by imbalance_pct, coldest (least recently run) first,
//   skipping tasks that ran within migration_cost_ns, until it has moved half
//   the load difference; a task heavier than what is left to move is skipped
//   unless earlier attempts failed (its weight is halved per failed attempt,
//   as nr_balance_failed does), which is what rotates equal CPU hogs.
// - Idle balance: a CPU about to go idle pulls the coldest non-cache-hot queued
//   task of the CPU with the most queued tasks; a busy CPU with queued tasks
//   kicks an idle CPU at its tick (nohz idle balance) so that it does the same.
#include <algorithm>

#include "replay/policies/fair/fair_sched.h"

namespace replay::fair {

int FairPolicy::selectCpu(TaskId t, uint32_t flags, int wakerCpu) {
  const int prev = m_e->taskCpu(t);
  // A delayed task is still queued: try_to_wake_up() takes ttwu_runnable() on its CPU, no select_task_rq().
  if (isFair(t) && m_ents[t].delayed) return m_ts[t].rqCpu;
  if (flags & kWakeInitial) return m_e->allowed(t, prev) ? prev : firstAllowed(t);
  if (!isFair(t)) return selectRt(t, prev);
  if (flags & kWakeFork) return findIdlest(t, wakerCpu);
  int target = m_e->allowed(t, prev) ? prev : firstAllowed(t);
  const int self = wakerCpu;
  bool wantAffine = !(flags & kWakeIrq);
  if (wantAffine) {
    const TaskId waker = m_e->curr(self);
    if (waker != kNoTask) {
      recordWakee(waker, t);
      wantAffine = !wakeWide(waker, t);
    }
  }
  if (wantAffine && self != prev && m_e->allowed(t, self) && m_e->locality(self, prev) <= 2)
    target = wakeAffine(t, self, prev, (flags & kWakeSync) != 0);
  return selectIdleSibling(t, prev, target);
}

void FairPolicy::balance(int cpu) {
  Rq& r = rq(cpu);
  const int64_t now = m_e->now();
  if (m_nohzKick && nrRunning(cpu) >= 2) {
    // nohz_balancer_kick(): wake an idle CPU that can take one of our queued tasks.
    const int n = m_e->cpuCount();
    for (int i = 1; i < n; ++i) {
      const int c = (cpu + i) % n;
      if (!m_e->online(c) || nrRunning(c) != 0) continue;
      if (hasMovableFor(cpu, c)) {
        m_e->resched(c);
        break;
      }
    }
  }
  if (now < r.nextBalance) return;
  r.nextBalance = now + m_balanceIntervalMs * 1'000'000 * m_busyFactor;
  loadBalance(cpu);
}

// --- placement ---
int FairPolicy::findIdlest(TaskId t, int parentCpu) const {
  // find_idlest_group_cpu() skips CPUs whose core runs another cookie; with
  // none left, find_idlest_cpu() keeps the task on the parent's CPU.
  if (m_csActive) {
    bool anyMatch = false;
    for (int c = 0; c < m_e->cpuCount() && !anyMatch; ++c) anyMatch = m_e->allowed(t, c) && coreCookieMatch(c, t);
    if (!anyMatch) return m_e->allowed(t, parentCpu) ? parentCpu : firstAllowed(t);
  }
  int best = -1;
  int bestNr = INT_MAX;
  int64_t bestLoad = INT64_MAX;
  const int n = m_e->cpuCount();
  for (int i = 0; i < n; ++i) {
    const int c = (parentCpu + i) % n;  // the parent's CPU first: it wins ties
    if (!m_e->allowed(t, c) || !coreCookieMatch(c, t)) continue;
    const int nr = nrRunning(c);
    const int64_t ld = load(c);
    if (nr < bestNr || (nr == bestNr && ld < bestLoad)) best = c, bestNr = nr, bestLoad = ld;
  }
  return best < 0 ? firstAllowed(t) : best;
}

// record_wakee(): a waker that keeps switching between wakees flips; the
// count halves every second.
void FairPolicy::recordWakee(TaskId waker, TaskId wakee) {
  TaskSched& w = m_ts[waker];
  const int64_t jiffies = m_e->now() / m_e->tickNs();
  if (jiffies > w.wakeeFlipDecay + m_e->hz()) {
    w.wakeeFlips >>= 1;
    w.wakeeFlipDecay = jiffies;
  }
  if (w.lastWakee != wakee) {
    w.lastWakee = wakee;
    ++w.wakeeFlips;
  }
}

// wake_wide(): many-to-many wakeups (both sides flip more than the LLC has
// CPUs) spread out instead of being pulled to the waker's CPU.
bool FairPolicy::wakeWide(TaskId waker, TaskId wakee) const {
  uint32_t master = m_ts[waker].wakeeFlips;
  uint32_t slave = m_ts[wakee].wakeeFlips;
  const auto factor = static_cast<uint32_t>(llcSize(m_e->taskCpu(wakee)));
  if (master < slave) std::swap(master, slave);
  return !(slave < factor || master < slave * factor);
}

int FairPolicy::llcSize(int cpu) const {
  int n = 0;
  for (int c = 0; c < m_e->cpuCount(); ++c) n += m_e->online(c) && m_e->locality(cpu, c) <= 2;
  return n;
}

int FairPolicy::wakeAffine(TaskId t, int self, int prev, bool sync) const {
  if (availableIdle(self)) return availableIdle(prev) ? prev : self;
  // The waker alone on its CPU (6.18 does not count delayed tasks).
  if (sync && nrRunning(self) - (syncAffineIgnoresDelayed() ? m_rqs[static_cast<size_t>(self)].delayed : 0) == 1) return self;
  if (availableIdle(prev)) return prev;
  // wake_affine_weight() with instantaneous loads.
  const int64_t taskLoad = m_ents[t].weight;
  int64_t thisEff = load(self);
  if (sync) {
    const TaskId waker = m_e->curr(self);
    const int64_t currentLoad = waker != kNoTask && isFair(waker) ? m_ents[waker].weight : 0;
    if (currentLoad > thisEff) return self;
    thisEff -= currentLoad;
  }
  thisEff = (thisEff + taskLoad) * 100;
  int64_t prevEff = std::max<int64_t>(0, load(prev) - taskLoad) * (100 + (m_imbalancePct - 100) / 2);
  if (sync) prevEff += 1;
  return thisEff < prevEff ? self : prev;
}

int FairPolicy::selectIdleSibling(TaskId t, int prev, int target) const {
  if (m_e->allowed(t, target) && availableIdle(target)) return target;
  if (prev != target && m_e->allowed(t, prev) && m_e->locality(prev, target) <= 2 && availableIdle(prev)) return prev;
  const int n = m_e->cpuCount();
  const auto& topo = m_e->topology();
  if (topo.hasSmt()) {
    // select_idle_core(): a core whose every thread is idle.
    for (int i = 1; i <= n; ++i) {
      const int c = (target + i) % n;
      if (!m_e->allowed(t, c) || m_e->locality(c, target) > 2 || !availableIdle(c)) continue;
      bool coreIdle = true;
      for (int s : m_e->siblings(c)) coreIdle &= availableIdle(s);
      if (coreIdle) return c;
    }
  }
  for (int i = 1; i <= n; ++i) {
    const int c = (target + i) % n;
    if (m_e->allowed(t, c) && m_e->locality(c, target) <= 2 && availableIdle(c) && cpuCookieMatch(c, t)) return c;
  }
  if (m_e->allowed(t, target)) return target;
  return m_e->allowed(t, prev) ? prev : firstAllowed(t);
}

bool FairPolicy::hasMovableFor(int from, int to) const {
  const Rq& r = m_rqs[static_cast<size_t>(from)];
  for (const auto& k : r.cfs.tree)
    if (!m_ents[k.id].delayed && m_e->allowed(k.id, to)) return true;
  for (const RtKey& k : r.rt)
    if (!m_e->isRunning(k.id) && m_e->allowed(k.id, to)) return true;
  return false;
}

// detach_task() + attach_task() of a queued fair task; balancing then checks
// wakeup preemption on the destination, a core-scheduling steal does not.
void FairPolicy::moveFair(int src, int dst, uint32_t t, bool checkPreempt) {
  Rq& s = rq(src);
  Rq& d = rq(dst);
  touchCore(src);
  touchCore(dst);
  updateCurr(src);
  FairRq::Entity& e = m_ents[t];
  if (m_variant == Variant::Eevdf) {
    updateEntityLag(s, t);
    if (m_placeRelDeadline) {  // a dequeue that is not a sleep keeps the request relative
      e.relDeadline = e.deadline - e.vruntime;
      e.hasRelDeadline = true;
    }
  }
  clearBuddies(s, t);
  s.cfs.treeErase(m_ents, t);
  removeFromRq(s, t);
  if (m_variant == Variant::Cfs) e.vruntime -= s.cfs.minVruntime;
  s.cfs.updateMinVruntime(m_ents);
  m_e->moveQueued(t, dst);
  m_ts[t].rqCpu = dst;
  updateCurr(dst);
  if (m_variant == Variant::Cfs)
    e.vruntime += d.cfs.minVruntime;
  else
    placeEevdf(d, t, false);
  addToRq(d, t);
  if (checkPreempt) checkPreemptWakeup(dst, t, 0);
  leftForcedIdleCpu(src);
}

// task_hot(): ran recently, or (core scheduling) its cookie does not match the
// destination core's, which balancing treats like a cache-hot task.
bool FairPolicy::cacheHot(uint32_t t, int dst) const {
  return m_e->now() - m_ents[t].lastRan < m_migrationCost || !coreCookieMatch(dst, t);
}

// Queued fair tasks of `src` that may run on `dst`, coldest first.
std::vector<uint32_t> FairPolicy::movable(int src, int dst) const {
  std::vector<uint32_t> out;
  // Delayed tasks sleep as far as the engine knows; 6.14+ balancing leaves them too.
  for (const auto& k : m_rqs[static_cast<size_t>(src)].cfs.tree)
    if (!m_ents[k.id].delayed && m_e->allowed(k.id, dst)) out.push_back(k.id);
  std::sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) {
    return m_ents[a].lastRan != m_ents[b].lastRan ? m_ents[a].lastRan < m_ents[b].lastRan : a < b;
  });
  return out;
}

void FairPolicy::idleBalance(int cpu) {
  const int n = m_e->cpuCount();
  int src = -1;
  size_t most = 0;
  for (int i = 1; i < n; ++i) {
    const int c = (cpu + i) % n;
    const size_t q = m_rqs[static_cast<size_t>(c)].cfs.tree.size();
    if (q > most && hasMovableFor(c, cpu)) src = c, most = q;
  }
  if (src < 0) return;
  for (uint32_t t : movable(src, cpu)) {
    if (cacheHot(t, cpu)) continue;
    moveFair(src, cpu, t);
    return;
  }
}

void FairPolicy::loadBalance(int cpu) {
  Rq& r = rq(cpu);
  const int n = m_e->cpuCount();
  int busiest = -1;
  int64_t busiestLoad = -1;
  for (int c = 0; c < n; ++c) {
    if (c == cpu || !m_e->online(c) || rq(c).cfs.tree.empty()) continue;
    if (load(c) > busiestLoad) busiest = c, busiestLoad = load(c);
  }
  if (busiest < 0) return;
  const int64_t thisLoad = load(cpu);
  if (busiestLoad * 100 <= thisLoad * m_imbalancePct) {
    r.balanceFailed = 0;
    return;
  }
  int64_t imbalance = (busiestLoad - thisLoad) / 2;
  int moved = 0;
  for (uint32_t t : movable(busiest, cpu)) {
    if (imbalance <= 0 || moved >= 32) break;
    if (cacheHot(t, cpu) && r.balanceFailed <= 1) continue;  // cache_nice_tries = 1
    const int64_t w = m_ents[t].weight;
    if ((w >> std::min(r.balanceFailed, 62)) > imbalance) continue;
    moveFair(busiest, cpu, t);
    imbalance -= w;
    ++moved;
  }
  r.balanceFailed = moved ? 0 : std::min(r.balanceFailed + 1, 62);
}

}  // namespace replay::fair
