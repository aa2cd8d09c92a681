// Core scheduling over CFS/EEVDF (docs/models.md §3, the variants in §3.9).
//
// Selection follows mainline's pick_next_task() for every variant: a
// sibling's pending pick is taken while nothing was enqueued or dequeued on
// the core since (core_pick_seq == core_task_seq); else, unless the core has
// a cookie or was forced idle, this CPU's own untagged best task runs
// unconstrained; else pass 1 takes each sibling's best task and the highest
// by prio_less() sets the core cookie, pass 2 keeps picks with that cookie,
// takes the sibling's best task with it (sched_core_find; none for cookie 0,
// whose tasks are not in the core tree) or idles, forced when it has
// runnable tasks. The RFC v3 restart loop reaches the same picks ([U] on its
// exact termination). The variants differ in prio_less() between CPUs, in
// what keeps a forced-idle sibling from starving (coreTick), and in their
// accounting (coreAccount):
// - v3: vruntimes normalised by each CPU's min_vruntime; no tick check, so a
//   forced-idle sibling waits until the other side sleeps (the v3 stall).
// - v3-corevrt: one core-wide min_vruntime (the max over siblings), raw
//   vruntime comparison; the tick's slice check runs with nr_running = 1.
// - v3-fiaccount: v3 comparison; a forced-idle CPU's min_vruntime grows by
//   its forced-idle wall time; the same tick check as v3-corevrt ([U]: the
//   thread's tests carried Aaron's stall fix).
// - v3-allowance: 5 ms core_idle_allowance per CPU, spent while running next
//   to a forced-idle sibling, refilled when all are spent; between tasks of
//   different cookies on different CPUs the larger allowance wins (an
//   untagged task is as incompatible as a tagged one: [U], the patch speaks
//   of tagged tasks); the tick reschedules a CPU whose allowance is spent.
// - v3-coresched-idle: v3-corevrt, plus the forced-idle sibling runs the
//   coresched_idle kthread, so its ticks go on: at each tick (ticks are
//   aligned on all CPUs) its best task takes the core once it is ahead by
//   prio_less and the running task had min_granularity ([U]: that thread's
//   policy and priority).
// - mainline: cfs_prio_less() with min_vruntime_fi snapshots, taken at every
//   pick outside forced idle and once per forced-idle episode; task_tick_core()
//   reschedules when the core is forced idle, this CPU runs one fair task and
//   it used half its slice.
#include <algorithm>

#include "replay/policies/fair/fair_sched.h"

namespace replay::fair {

// sched_core_enqueue()/dequeue(): any change of a runqueue invalidates pending picks.
void FairPolicy::touchCore(int cpu) {
  if (m_csActive) ++coreOf(cpu).taskSeq;
}

// sched_core_dequeue()'s forced-idle edge: a forced-idle CPU whose last task
// was moved away reschedules, so that its forced idle ends there.
void FairPolicy::leftForcedIdleCpu(int cpu) {
  if (m_csActive && m_e->curr(cpu) == kNoTask && rq(cpu).pickForced && nrRunning(cpu) == 0 &&
      coreOf(cpu).forceidleCount)
    m_e->resched(cpu);
}

// Aaron Lu's core-wide min_vruntime: every sibling uses the largest.
void FairPolicy::syncCoreMinVruntime(int cpu) {
  if (!m_csActive || !coreWideVruntime()) return;
  const CoreState& core = coreOf(cpu);
  int64_t v = INT64_MIN;
  for (int c : core.cpus) v = std::max(v, rq(c).cfs.minVruntime);
  for (int c : core.cpus) rq(c).cfs.advanceMinVruntime(v);
}

// prio_less(a, b): a is lower priority than b.
bool FairPolicy::prioLess(TaskId a, TaskId b) const {
  const int pa = unifiedPrio(a), pb = unifiedPrio(b);
  if (pa != pb) return pa > pb;
  if (pa != 120) return false;  // RT of equal priority: neither is less
  return cfsPrioLess(a, b);
}

bool FairPolicy::cfsPrioLess(TaskId a, TaskId b) const {
  const Rq& ra = m_rqs[static_cast<size_t>(m_ts[a].rqCpu)];
  const Rq& rb = m_rqs[static_cast<size_t>(m_ts[b].rqCpu)];
  const int64_t va = m_ents[a].vruntime, vb = m_ents[b].vruntime;
  const auto v3 = [&] { return (va - ra.cfs.minVruntime) - (vb - rb.cfs.minVruntime) > 0; };
  switch (m_csv) {
    case CsVariant::V3:
    case CsVariant::V3FiAccount: return v3();
    case CsVariant::V3Allowance:
      if (&ra != &rb && cookieOf(a) != cookieOf(b) && ra.allowance != rb.allowance)
        return ra.allowance < rb.allowance;
      return v3();
    case CsVariant::V3CoreVrt:
    case CsVariant::V3CoreschedIdle: return va - vb > 0;
    case CsVariant::Mainline: return (va - vb) + (rb.minVruntimeFi - ra.minVruntimeFi) > 0;
  }
  return false;
}

// pick_task(): what the CPU would run now, its current task included, with no side effects.
TaskId FairPolicy::peekBest(int cpu) const {
  const Rq& r = m_rqs[static_cast<size_t>(cpu)];
  if (!r.rt.empty()) return r.rt.begin()->id;
  uint32_t curr = r.cfs.curr;
  if (curr != kNone && !m_ents[curr].onRq) curr = kNone;
  if (m_variant == Variant::Eevdf) {
    if (r.cfs.nrRunning == 0) return kNoTask;
    return pickEevdf(r.cfs, true);
  }
  uint32_t left = r.cfs.tree.empty() ? kNone : r.cfs.tree.begin()->id;
  if (left == kNone || (curr != kNone && m_ents[curr].vruntime < m_ents[left].vruntime)) left = curr;
  if (left == kNone) return kNoTask;
  // pick_next_entity()'s buddies, as pickCfs() applies them.
  if (r.cfs.next != kNone && r.cfs.next != left && m_ents[r.cfs.next].onRq &&
      wakeupPreemptEntity(r.cfs.next, left) < 1)
    return r.cfs.next;
  if (r.cfs.last != kNone && r.cfs.last != left && m_ents[r.cfs.last].onRq &&
      wakeupPreemptEntity(r.cfs.last, left) < 1)
    return r.cfs.last;
  return left;
}

// sched_core_find(): the highest-priority task of `cookie` on the CPU, running or queued.
TaskId FairPolicy::coreFind(int cpu, uint32_t cookie) const {
  const Rq& r = m_rqs[static_cast<size_t>(cpu)];
  for (const RtKey& k : r.rt)
    if (cookieOf(k.id) == cookie) return k.id;
  TaskId best = kNoTask;
  auto consider = [&](uint32_t id) {
    if (cookieOf(id) == cookie && !m_ents[id].delayed &&
        (best == kNoTask || m_ents[id].vruntime < m_ents[best].vruntime))
      best = id;
  };
  if (r.cfs.curr != kNone && m_ents[r.cfs.curr].onRq) consider(r.cfs.curr);
  for (const auto& k : r.cfs.tree) consider(k.id);
  return best;
}

// The task becomes this CPU's running task (it is queued here, or prev put
// back). `samePrev`: the fast path keeps prev running without set_next_task(),
// so its slice keeps counting from its last pick (prev_sum_exec_runtime).
void FairPolicy::setNext(int cpu, TaskId t, bool samePrev) {
  Rq& r = rq(cpu);
  if (!isFair(t)) return;
  clearBuddies(r.cfs, t);
  if (r.cfs.curr == t) return;
  if (samePrev) {  // as pickNext(): the running task picked again keeps its slice and protection
    r.cfs.treeErase(m_ents, t);
    setCurr(r, t);
    return;
  }
  setNextEntity(r, t);
}

// se_fi_update(): mainline's min_vruntime_fi of one CPU's cfs_rq - tracks
// min_vruntime outside forced idle, taken once per forced-idle episode inside.
void FairPolicy::fiSnapshot(int cpu, bool inForcedIdle, const CoreState& core) {
  Rq& r = rq(cpu);
  if (inForcedIdle) {
    if (r.fiSeq == core.forceidleSeq) return;
    r.fiSeq = core.forceidleSeq;
  }
  r.minVruntimeFi = r.cfs.minVruntime;
}

// Time-based bookkeeping of the variants, brought up to now.
void FairPolicy::coreAccount(CoreState& core) {
  const int64_t now = m_e->now();
  if (m_csv == CsVariant::V3FiAccount) {
    for (int c : core.cpus) {
      Rq& r = rq(c);
      if (r.fiSince < 0 || now <= r.fiSince) continue;
      r.cfs.advanceMinVruntime(r.cfs.minVruntime + (now - r.fiSince));
      r.fiSince = now;
    }
  } else if (m_csv == CsVariant::V3Allowance && core.forceidleCount > 0) {
    const int64_t dt = now - core.lastAccount;
    bool allSpent = true;
    for (int c : core.cpus) {
      if (m_e->curr(c) != kNoTask) rq(c).allowance -= dt;
      allSpent &= rq(c).allowance <= 0;
    }
    if (allSpent)
      for (int c : core.cpus) rq(c).allowance += m_allowanceNs;
  }
  core.lastAccount = now;
  if (coreWideVruntime()) syncCoreMinVruntime(core.cpus.front());
}

TaskId FairPolicy::corePickNext(int cpu, TaskId prev, bool mayBalance) {
  Rq& r = rq(cpu);
  CoreState& core = coreOf(cpu);
  if (r.corePickSet && core.pickSeq == core.taskSeq && r.coreSchedSeq != core.pickSeq) {
    r.coreSchedSeq = core.pickSeq;
    r.corePickSet = false;
    const TaskId next = r.corePick;
    if (next != kNoTask) {
      setNext(cpu, next, next == prev);
      return next;
    }
    return mayBalance ? coreBalance(cpu, prev) : kNoTask;
  }
  // A selection replaces every pending pick of the core (the kernel rewrites core_pick).
  for (int c : core.cpus) rq(c).corePickSet = false;
  // Preemptions can select again on an unchanged task set: every selection
  // bumps core_task_seq too, so that no CPU mistakes it for one it consumed.
  ++core.taskSeq;
  // put_prev_task_balance(): RT pull and newidle balance before the pick.
  if (r.rt.empty()) pullRt(cpu);
  if (r.rt.empty() && r.cfs.tree.empty()) idleBalance(cpu);
  for (int c : core.cpus) dropDelayedPicks(c);  // what each sibling would pick must be able to run
  coreAccount(core);
  bool needSync = core.cookie != 0;
  bool fiBefore = false;
  if (core.forceidleCount) {
    core.forceidleCount = 0;
    core.occupation = 0;
    needSync = true;
    fiBefore = true;
  }
  core.cookie = 0;
  if (!needSync) {
    const TaskId next = peekBest(cpu);
    if (next == kNoTask || cookieOf(next) == 0) {  // the unconstrained common case
      r.pickForced = false;
      if (next != kNoTask && isFair(next)) fiSnapshot(cpu, false, core);
      if (next != kNoTask) setNext(cpu, next);
      return next;
    }
  }
  for (int c : core.cpus) updateCurr(c);
  // pick_task_fair() dequeues the delayed entities it meets after its
  // update_curr(): the time just charged moves V and can make one the pick.
  for (int c : core.cpus) dropDelayedPicks(c);
  const size_t n = core.cpus.size();
  const size_t self = static_cast<size_t>(std::find(core.cpus.begin(), core.cpus.end(), cpu) - core.cpus.begin());
  m_picks.assign(n, kNoTask);
  TaskId max = kNoTask;
  for (size_t k = 0; k < n; ++k) {  // pass 1, from this CPU on: it wins ties
    const size_t i = (self + k) % n;
    m_picks[i] = peekBest(core.cpus[i]);
    const TaskId p = m_picks[i];
    if (p == kNoTask) continue;
    if (max != kNoTask && isFair(max) && isFair(p)) {
      // cfs_prio_less() refreshes both sides' snapshots first (se_fi_update
      // with in_fi = fi_before, as with CONFIG_FAIR_GROUP_SCHED).
      fiSnapshot(m_ts[max].rqCpu, fiBefore, core);
      fiSnapshot(m_ts[p].rqCpu, fiBefore, core);
    }
    if (max == kNoTask || prioLess(max, p)) max = p;
  }
  const uint32_t cookie = max == kNoTask ? 0 : cookieOf(max);
  core.cookie = cookie;
  int occupation = 0;
  for (size_t i = 0; i < n; ++i) {  // pass 2
    const int c = core.cpus[i];
    TaskId p = m_picks[i];
    if (p != kNoTask && cookieOf(p) != cookie) p = cookie ? coreFind(c, cookie) : kNoTask;
    m_picks[i] = p;
    Rq& ri = rq(c);
    ri.pickForced = p == kNoTask && nrRunning(c) > 0;
    if (ri.pickForced) {
      ++core.forceidleCount;
      if (!fiBefore) ++core.forceidleSeq;
    } else if (p != kNoTask) {
      ++occupation;
    }
  }
  core.occupation = occupation;
  core.pickSeq = core.taskSeq;
  r.coreSchedSeq = core.pickSeq;
  const bool inForcedIdle = core.forceidleCount > 0;
  const int64_t now = m_e->now();
  for (size_t i = 0; i < n; ++i) {
    const int c = core.cpus[i];
    Rq& ri = rq(c);
    // task_vruntime_update(): fair picks only; not while staying in forced idle.
    if (!(fiBefore && inForcedIdle) && m_picks[i] != kNoTask && isFair(m_picks[i])) fiSnapshot(c, inForcedIdle, core);
    if (m_csv == CsVariant::V3FiAccount) ri.fiSince = ri.pickForced ? (ri.fiSince < 0 ? now : ri.fiSince) : -1;
    if (c == cpu) continue;
    // An idle sibling is forced idle from this selection on, or no longer
    // (a task for it is on its way: its forced idle ends here, not at the IPI).
    if (m_e->curr(c) == kNoTask) m_e->setIdleForced(c, ri.pickForced);
    if (m_e->curr(c) == m_picks[i]) continue;
    ri.corePick = m_picks[i];
    ri.corePickSet = true;
    m_e->resched(c);
  }
  const TaskId next = m_picks[self];
  if (next != kNoTask) {
    setNext(cpu, next);
    return next;
  }
  return mayBalance ? coreBalance(cpu, prev) : kNoTask;
}

// sched_core_balance(): a CPU going forced idle steals a queued task of the
// core's cookie, nearest CPUs first, from a core no busier than its own (by
// current occupation: a simplification of p->core_occupation); then selects again.
TaskId FairPolicy::coreBalance(int cpu, TaskId prev) {
  Rq& r = rq(cpu);
  const CoreState& core = coreOf(cpu);
  if (!m_fiBalance || !r.pickForced || core.cookie == 0) return kNoTask;
  const int n = m_e->cpuCount();
  for (int level = 1; level <= 4; ++level) {  // every domain, as for_each_domain()
    for (int k = 1; k < n; ++k) {
      const int src = (cpu + k) % n;
      if (m_e->locality(cpu, src) != level || !m_e->online(src)) continue;
      if (coreOf(src).occupation > core.occupation) continue;
      if (trySteal(cpu, src, core.cookie)) return corePickNext(cpu, prev, false);
    }
  }
  return kNoTask;
}

bool FairPolicy::trySteal(int dst, int src, uint32_t cookie) {
  const Rq& s = rq(src);
  auto stealable = [&](TaskId t) {
    return cookieOf(t) == cookie && m_e->isQueued(t) && !(s.corePickSet && s.corePick == t) && m_e->allowed(t, dst);
  };
  for (const RtKey& k : s.rt) {
    if (!stealable(k.id)) continue;
    const TaskId t = k.id;
    touchCore(src), touchCore(dst);
    rtErase(src, t);
    m_e->moveQueued(t, dst);
    m_ts[t].rqCpu = dst;
    rtInsert(dst, t);
    leftForcedIdleCpu(src);
    return true;
  }
  for (const auto& k : s.cfs.tree) {
    if (!stealable(k.id)) continue;
    moveFair(src, dst, k.id, false);
    return true;
  }
  return false;
}

// What keeps a forced-idle sibling from waiting for ever (see the variants above).
void FairPolicy::coreTick(int cpu, TaskId curr) {
  CoreState& core = coreOf(cpu);
  coreAccount(core);
  if (!core.forceidleCount || !isFair(curr) || m_e->needResched(cpu)) return;
  Rq& r = rq(cpu);
  const FairRq::Entity& e = m_ents[curr];
  const int64_t ran = e.sumExec - e.prevSumExec;
  const int64_t slice = m_variant == Variant::Cfs ? std::min(schedSlice(r, curr, true), m_latency) : e.slice;
  switch (m_csv) {
    case CsVariant::V3: return;
    case CsVariant::V3CoreVrt:
    case CsVariant::V3FiAccount:
      if (r.cfs.nrRunning == 1 && ran > slice) m_e->resched(cpu);
      return;
    case CsVariant::V3Allowance:
      if (r.allowance <= 0) m_e->resched(cpu);
      return;
    case CsVariant::V3CoreschedIdle: {
      if (r.cfs.nrRunning == 1 && ran > slice) {
        m_e->resched(cpu);
        return;
      }
      const int64_t minRun = m_variant == Variant::Cfs ? m_minGran : m_baseSlice;
      if (ran < minRun) return;
      for (int c : core.cpus) {
        if (c == cpu || !rq(c).pickForced || m_e->curr(c) != kNoTask) continue;
        const TaskId waiting = peekBest(c);
        if (waiting != kNoTask && prioLess(curr, waiting)) {
          m_e->resched(cpu);
          return;
        }
      }
      return;
    }
    case CsVariant::Mainline:
      if (r.cfs.nrRunning == 1 && ran * 2 > slice) m_e->resched(cpu);  // MIN_NR_TASKS_DURING_FORCEIDLE
      return;
  }
}

// sched_core_cookie_match(): an idle core, or one already running this cookie
// (find_idlest_group_cpu, and balancing's task_hot()).
bool FairPolicy::coreCookieMatch(int cpu, TaskId t) const {
  if (!m_csActive) return true;
  const CoreState& core = coreOf(cpu);
  bool idleCore = true;
  for (int c : core.cpus) idleCore &= availableIdle(c);
  return idleCore || core.cookie == cookieOf(t);
}

}  // namespace replay::fair
