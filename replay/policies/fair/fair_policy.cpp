// The fair-class policy's entry points (the Policy interface the engine
// calls) and the cfs_rq bookkeeping CFS and EEVDF share; the parameters with
// their defaults and docs. See fair_sched.h for how the class is split.
#include <algorithm>
#include <cmath>

#include "core/sched_settings.h"
#include "replay/policies/fair/fair_sched.h"

namespace replay::fair {

namespace {

// PELT's decay: y^32 = 1/2 per 1024 us period (kernel/sched/pelt.c), taken continuously.
constexpr double kPeltHalfLifeNs = 32.0 * 1024 * 1000;
double peltDecay(int64_t dt) { return dt <= 0 ? 1.0 : std::exp2(-static_cast<double>(dt) / kPeltHalfLifeNs); }

int ilog2(int v) {
  int r = 0;
  while (v > 1) v >>= 1, ++r;
  return r;
}

}  // namespace

FairPolicy::FairPolicy(const Params& p, Variant variant, int cpuCount) : m_variant(variant) {
  const std::string& scaling = p.get("tunable_scaling");
  const int cpus = std::min(cpuCount, 8);
  m_factor = scaling == "none" ? 1 : scaling == "linear" ? cpus : 1 + ilog2(cpus);
  m_idleMinGran = p.getInt("idle_min_granularity_ns");
  m_migrationCost = p.getInt("migration_cost_ns");
  m_balanceIntervalMs = p.getInt("balance_interval_ms");
  m_busyFactor = p.getInt("busy_factor");
  m_imbalancePct = p.getInt("imbalance_pct");
  m_nohzKick = p.getBool("nohz_idle_balance");
  m_rrTimesliceMs = p.getInt("rr_timeslice_ms");
  m_wakeupPreemption = p.getBool("wakeup_preemption");
  m_peltWakeAffine = p.get("wake_affine_load") == "pelt";
  m_sisUtil = p.getBool("sis_util");
  if (variant == Variant::Cfs) {
    m_latency = p.getInt("latency_ns") * m_factor;
    m_minGran = p.getInt("min_granularity_ns") * m_factor;
    m_wakeupGran = p.getInt("wakeup_granularity_ns") * m_factor;
    m_nrLatency = static_cast<int>(p.getInt("nr_latency"));
    m_gentle = p.getBool("gentle_fair_sleepers");
    m_startDebit = p.getBool("start_debit");
    m_nextBuddy = p.getBool("next_buddy");
    m_lastBuddy = p.getBool("last_buddy");
  } else {
    // Unresolved ("auto", "release") when a caller built the policy without
    // resolveEevdfRelease(): the newest modelled release.
    m_release = parseKernelVersion(p.get("release")).value_or(kNewestEevdf);
    const auto flag = [&](const char* key, KernelVersion since) {
      return p.get(key) == "release" ? m_release >= since : p.getBool(key);
    };
    const int64_t baseSlice = p.getInt("base_slice_ns");
    m_baseSlice = (baseSlice >= 0 ? baseSlice : m_release >= KernelVersion{6, 15, 0} ? 700'000 : 750'000) * m_factor;
    m_runToParity = p.getBool("run_to_parity");
    m_placeLag = p.getBool("place_lag");
    m_placeDeadlineInitial = p.getBool("place_deadline_initial");
    m_nextBuddy = p.getBool("next_buddy");
    m_requeueLagStale = p.get("requeue_lag_curr") == "stale";
    m_delayDequeue = flag("delay_dequeue", {6, 12, 0});
    m_delayZero = flag("delay_zero", {6, 12, 0});
    m_preemptShort = flag("preempt_short", {6, 12, 0});
    m_placeRelDeadline = flag("place_rel_deadline", {6, 12, 0});
    m_forkPreempt = p.get("wakeup_preempt_fork") == "release" ? m_release < KernelVersion{6, 18, 33}
                                                              : p.getBool("wakeup_preempt_fork");
    m_autogroup = p.get("autogroup") == "on";
  }
  // Measured on 6.18 only: the CFS releases and older EEVDF ones keep fair.c's reading.
  m_forkLoneParent = p.get("fork_lone_parent") == "release"
                         ? variant == Variant::Eevdf && m_release >= KernelVersion{6, 18, 0}
                         : p.getBool("fork_lone_parent");
  m_wakePack = p.get("wake_pack") == "measured";
  m_irqWakePack = p.get("irq_wake_pack") == "measured";
  if (p.has("coresched.variant")) {
    m_csConfigured = true;
    const std::string& v = p.get("coresched.variant");
    m_csv = v == "v3"               ? CsVariant::V3
            : v == "v3-corevrt"     ? CsVariant::V3CoreVrt
            : v == "v3-fiaccount"   ? CsVariant::V3FiAccount
            : v == "v3-allowance"   ? CsVariant::V3Allowance
            : v == "v3-coresched-idle" ? CsVariant::V3CoreschedIdle
                                       : CsVariant::Mainline;
    m_allowanceNs = p.getInt("coresched.idle_allowance_ns");
    m_fiBalance = p.getBool("coresched.forceidle_balance");
  }
}

void FairPolicy::attach(Engine& engine) {
  m_e = &engine;
  m_rqs.assign(static_cast<size_t>(engine.cpuCount()), Rq());
  m_ents.assign(engine.taskCount(), FairRq::Entity());
  m_ts.assign(engine.taskCount(), TaskSched());
  m_rrTicks = std::max<int64_t>(1, m_rrTimesliceMs * engine.hz() / 1000);
  // The core-scheduling static key: on only while some task has a cookie, and
  // only where there are SMT siblings to keep apart (prctl needs SMT).
  m_csActive = false;
  if (m_csConfigured && engine.topology().hasSmt())
    for (TaskId t = 0; t < engine.taskCount(); ++t) m_csActive |= engine.attributes(t).cookie != 0;
  assignGroups();
  m_coreOf.assign(static_cast<size_t>(engine.cpuCount()), 0);
  m_cores.clear();
  for (const auto& cpus : engine.topology().cores()) {
    CoreState core;
    for (int c : cpus)
      if (c >= 0 && c < engine.cpuCount()) core.cpus.push_back(c);
    if (core.cpus.empty()) continue;
    for (int c : core.cpus) m_coreOf[static_cast<size_t>(c)] = static_cast<int>(m_cores.size());
    m_cores.push_back(std::move(core));
  }
  for (Rq& r : m_rqs) r.allowance = m_allowanceNs;
  // SIS_UTIL's scan depth starts as an idle machine's balance leaves it: the whole LLC.
  for (int c = 0; c < engine.cpuCount(); ++c) rq(c).nrIdleScan = llcSize(c);
  m_customSlices = 0;
  m_startNs = engine.now();
  for (TaskId t = 0; t < engine.taskCount(); ++t) m_customSlices += engine.attributes(t).sliceNs > 0;
}

void FairPolicy::taskNew(TaskId t, TaskId parent) {
  FairRq::Entity& e = m_ents[t];
  const Task& task = m_e->task(t);
  e = FairRq::Entity();
  e.idlePolicy = task.policy == SchedPolicy::Idle;
  e.weight = e.idlePolicy ? kIdleWeight : niceToWeight(task.nice());
  e.customSlice = m_e->attributes(t).sliceNs;
  e.slice = m_variant == Variant::Eevdf ? sliceOf(t) : m_baseSlice;
  m_ts[t].rqCpu = -1;
  m_ts[t].execDest = -1;
  m_ts[t].utilAvg = 0;
  m_ts[t].utilStamp = m_e->now();
  m_ts[t].forkRelative = false;
  m_ts[t].rrTicksLeft = m_rrTicks;
  // init_entity_runnable_average(): a new task starts with its full weight as load.
  m_ts[t].loadAvg = e.weight;
  m_ts[t].loadStamp = m_e->now();
  m_ts[t].loadCpu = -1;
  // wake_up_new_task(): the CPU it was forked on.
  m_ts[t].recentUsedCpu = parent != kNoTask ? m_e->taskCpu(parent) : -1;
  if (m_variant == Variant::Cfs && parent != kNoTask && isFair(t)) {
    // task_fork_fair(): start from the parent's vruntime, START_DEBIT, then relative.
    const int pcpu = m_e->taskCpu(parent);
    Rq& prq = rq(pcpu);
    updateCurr(pcpu);
    if (prq.cfs.curr != kNone) e.vruntime = m_ents[prq.cfs.curr].vruntime;
    int64_t base = prq.cfs.minVruntime;
    if (m_startDebit) base += calcDeltaFair(schedSlice(prq, t, false), e);
    e.vruntime = std::max(e.vruntime, base);
    e.vruntime -= prq.cfs.minVruntime;
    m_ts[t].forkRelative = true;
  }
}

void FairPolicy::enqueue(int cpu, TaskId t, uint32_t flags) {
  TaskSched& ts = m_ts[t];
  touchCore(cpu);
  if (!isFair(t)) {
    rtInsert(cpu, t);
    ts.rqCpu = cpu;
    return;
  }
  Rq& r = rq(cpu);
  syncCoreMinVruntime(cpu);
  FairRq::Entity& e = m_ents[t];
  m_wakeRqSelected = !e.delayed;
  if (e.delayed) {  // ttwu_runnable(): still queued here (selectCpu kept its CPU)
    requeueDelayed(cpu, cfsRqOf(cpu, t), t);
    ts.rqCpu = cpu;
    return;
  }
  updateCurr(cpu);
  if (m_variant == Variant::Cfs) {
    if ((flags & kWakeFork) && ts.forkRelative) {
      e.vruntime += r.cfs.minVruntime;
      ts.forkRelative = false;
    } else if (flags & (kWakeInitial | kWakeFork)) {
      e.vruntime = r.cfs.minVruntime;
    } else {
      if (ts.rqCpu >= 0 && ts.rqCpu != cpu)  // migrated while waking: relative to the new queue
        e.vruntime = e.vruntime - rq(ts.rqCpu).cfs.minVruntime + r.cfs.minVruntime;
      placeCfs(r, t);
    }
  } else {
    if (flags & (kWakeInitial | kWakeFork)) e.vlag = 0;
    placeEevdf(cfsRqOf(cpu, t), t, (flags & kWakeFork) != 0);
  }
  addToRq(r, t);
  if (const int g = groupOf(t); g >= 0) enqueueGroupEntity(cpu, g);
  ts.rqCpu = cpu;
}

void FairPolicy::checkPreemptWakeup(int cpu, TaskId t, uint32_t flags) {
  const TaskId c = m_e->curr(cpu);
  if (c == kNoTask) {
    m_e->resched(cpu);
    return;
  }
  if (c == t) return;
  if (t == m_keptBusyWakee) {
    m_keptBusyWakee = kNoTask;
    return;
  }
  if (!isFair(t)) {
    if (isFair(c) || m_e->task(t).prio < m_e->task(c).prio) m_e->resched(cpu);
    return;
  }
  if (!isFair(c) || m_e->needResched(cpu)) return;
  Rq& r = rq(cpu);
  if (m_nextBuddy && m_variant == Variant::Eevdf && !buddyWakeupRules() && !(flags & kWakeFork)) {
    setNextBuddy(cfsRqOf(cpu, t), t);
    if (const int g = groupOf(t); g >= 0) setNextBuddy(r.cfs, groupSe(g, cpu));
  }
  // find_matching_se(): the two tasks, or their entities on the first runqueue they share.
  uint32_t se = c, pse = t;
  FairRq* q = &r.cfs;
  if (m_grouped) {
    const int gc = groupOf(c), gt = groupOf(t);
    if (gc >= 0 && gc == gt) {
      q = &groupRq(gc, cpu);
    } else {
      if (gc >= 0) se = groupSe(gc, cpu);
      if (gt >= 0) pse = groupSe(gt, cpu);
    }
  }
  if (m_ents[se].idlePolicy && !m_ents[pse].idlePolicy) {
    m_e->resched(cpu);
    return;
  }
  const SchedPolicy pol = m_e->task(t).policy;
  if ((pol != SchedPolicy::Normal && pol != SchedPolicy::Iso) || !m_wakeupPreemption) return;
  if (m_variant == Variant::Cfs) {
    const bool scale = r.cfs.nrRunning >= m_nrLatency;
    bool marked = false;
    if (m_nextBuddy && scale && !(flags & kWakeFork)) {
      setNextBuddy(r.cfs, t);
      marked = true;
    }
    updateCurr(cpu);
    if (wakeupPreemptEntity(c, t) == 1) {
      if (!marked) setNextBuddy(r.cfs, t);
      m_e->resched(cpu);
      if (m_lastBuddy && scale) r.cfs.last = c;
    }
  } else {
    updateCurr(cpu);
    preemptEevdf(cpu, *q, se, pse, flags);
  }
}

void FairPolicy::preemptEevdf(int cpu, FairRq& q, uint32_t c, uint32_t t, uint32_t flags) {
  const FairRq::Entity& ec = m_ents[c];
  const FairRq::Entity& ep = m_ents[t];
  const bool shorter = m_preemptShort && ep.slice < ec.slice;
  if ((flags & kWakeFork) && !m_forkPreempt && !shorter) return;
  if (buddyWakeupRules() && !shorter) {
    preemptBuddy(cpu, q, c, t, flags);
    return;
  }
  bool protect = true;
  if (m_release >= KernelVersion{6, 17, 0}) {
    protect = !shorter;  // a shorter-slice wakee ignores the protection for this pick
  } else if (shorter && q.eligible(m_ents, t) && (ep.deadline < ec.deadline || !q.eligible(m_ents, c))) {
    cancelProtectedSlice(c);  // 6.12's do_preempt_short(): the cut stays even if the wakee loses now
  }
  if (wakeupPick(cpu, q, protect) == t) {
    if (shorter && m_release >= KernelVersion{6, 17, 0}) cancelProtectedSlice(c);
    m_e->resched(cpu);
  } else if (m_runToParity && shorter && protectedSliceVprot()) {
    shortenProtectedSlice(q, c);
  }
}

void FairPolicy::dequeue(int cpu, TaskId t, bool dying) {
  touchCore(cpu);
  if (!isFair(t)) {
    rtErase(cpu, t);
    return;
  }
  Rq& r = rq(cpu);
  FairRq& q = cfsRqOf(cpu, t);
  updateCurr(cpu);
  clearBuddies(q, t);
  m_ents[t].lastRan = m_e->now();
  if (m_variant == Variant::Eevdf && m_delayDequeue && !dying && !q.eligible(m_ents, t)) {
    // DELAY_DEQUEUE: it sleeps behind its fair share, so it stays queued (in the
    // load and in V) until the pick reaches it or a wakeup comes first.
    m_ents[t].delayed = true;
    countDelayed(r, 1);
    ++m_delayedDequeues;
    return;
  }
  if (m_variant == Variant::Eevdf) updateEntityLag(q, t);
  if (q.curr == t) {
    if (r.running == t) setRunning(r, kNone);
    q.curr = kNone;
  } else {
    q.treeErase(m_ents, t);
  }
  removeFromRq(r, t);
  q.updateMinVruntime(m_ents);
  if (const int g = groupOf(t); g >= 0) groupLeft(cpu, g, true);
  if (dying && m_peltWakeAffine) detachLoad(t);  // task_dead_fair(): remove_entity_load_avg()
  if (dying && m_forkLoneParent) {  // ... which takes its util off the CPU too (for fork_lone_parent only)
    r.exitedUtil = r.exitedUtil * peltDecay(m_e->now() - r.exitedStamp) + m_ts[t].utilAvg;
    r.exitedStamp = m_e->now();
  }
}

TaskId FairPolicy::pickNext(int cpu, TaskId prev, bool prevRunnable) {
  Rq& r = rq(cpu);
  // A kick is for this pick only (idleBalance() reads it): a CPU that found a
  // task queued meanwhile has nothing to balance for.
  struct KickEnds {
    bool& kicked;
    ~KickEnds() { kicked = false; }
  } kickEnds{r.nohzKicked};
  if (prev != kNoTask && isFair(prev) && r.running == prev && (prevRunnable || m_ents[prev].delayed)) {
    // put_prev_entity(): back into the tree (a delayed sleeper too: it is still
    // queued). A group's entity stays current until the pick leaves the group.
    updateCurr(cpu);
    FairRq& q = cfsRqOf(cpu, prev);
    setRunning(r, kNone);
    q.curr = kNone;
    q.treeInsert(m_ents, prev);
    if (prevRunnable) m_ents[prev].lastRan = m_e->now();
  } else if (prev != kNoTask && prevRunnable && !isFair(prev)) {
    m_ents[prev].lastRan = m_e->now();
  }
  if (prev != kNoTask && m_ts[prev].execDest >= 0) {
    // sched_exec()'s stopper took the CPU from prev, now queued again: migration_cpu_stop() moves it.
    const int dest = std::exchange(m_ts[prev].execDest, -1);
    if (prevRunnable && isFair(prev) && m_e->allowed(prev, dest)) moveFair(cpu, dest, prev, true);
  }
  if (m_csActive) return corePickNext(cpu, prev, true);
  if (r.rt.empty()) pullRt(cpu);
  if (!r.rt.empty()) {
    putRootCurr(r);
    return r.rt.begin()->id;
  }
  if (m_grouped) return pickGrouped(cpu, prev, prevRunnable);
  for (;;) {
    if (r.cfs.tree.empty()) idleBalance(cpu);
    if (r.cfs.tree.empty()) return kNoTask;
    const uint32_t next = m_variant == Variant::Cfs ? pickCfs(r) : pickEevdfNext(cpu);
    if (next == kNone) continue;  // only delayed entities were left: they are gone now
    if (next == prev && prevRunnable) {
      // pick_next_task_fair() picked the running task again: no put_prev/set_next,
      // so its slice keeps counting from its last real pick and a protection
      // that ran out (vprot, or RUN_TO_PARITY's vlag mark) stays out.
      r.cfs.treeErase(m_ents, next);
      setCurr(r, next);
      return next;
    }
    setNextEntity(r, next);
    return next;
  }
}

void FairPolicy::tick(int cpu, TaskId c) {
  tickClass(cpu, c);
  if (m_csActive) coreTick(cpu, c);
}

void FairPolicy::tickClass(int cpu, TaskId c) {
  if (!isFair(c)) {
    if (m_e->task(c).policy != SchedPolicy::RR) return;
    TaskSched& ts = m_ts[c];
    if (--ts.rrTicksLeft > 0) return;
    ts.rrTicksLeft = m_rrTicks;
    // Round robin only among tasks of the same priority.
    Rq& r = rq(cpu);
    const int prio = m_e->task(c).prio;
    int same = 0;
    for (const RtKey& k : r.rt) same += k.prio == prio;
    if (same > 1) {
      rtErase(cpu, c);
      rtInsert(cpu, c);
      m_e->resched(cpu);
    }
    return;
  }
  Rq& r = rq(cpu);
  updateCurr(cpu);
  if (const int g = groupOf(c); g >= 0) updateGroupShares(cpu, g);  // entity_tick(): update_cfs_group()
  if (m_variant == Variant::Cfs && r.cfs.nrRunning > 1) checkPreemptTick(cpu, c);
}

int FairPolicy::firstAllowed(TaskId t) const {
  for (int c = 0; c < m_e->cpuCount(); ++c)
    if (m_e->allowed(t, c)) return c;
  return 0;
}

// available_idle_cpu() || sched_idle_cpu(): nothing runnable, or only SCHED_IDLE tasks.
bool FairPolicy::availableIdle(int cpu) const {
  if (m_e->wakelistPending(cpu)) return false;  // idle_cpu(): rq->ttwu_pending
  const Rq& r = m_rqs[static_cast<size_t>(cpu)];
  if (!r.rt.empty()) return false;
  const int queued = fairQueued(r);
  return queued == 0 || queued == r.idleTasks;
}

// update_curr() of every level the running task is on: each entity is charged
// the time since its own exec_start (the kernel updates a level as its paths
// reach it; here every call brings all levels up to date).
void FairPolicy::updateCurr(int cpu) {
  Rq& r = rq(cpu);
  if (r.running != kNone)
    if (const int g = groupOf(r.running); g >= 0) chargeCurr(cpu, groupRq(g, cpu));
  chargeCurr(cpu, r.cfs);
}

void FairPolicy::chargeCurr(int cpu, FairRq& q) {
  const uint32_t c = q.curr;
  if (c == kNone) return;
  FairRq::Entity& e = m_ents[c];
  const int64_t delta = m_e->now() - e.execStart;
  if (delta <= 0) return;
  e.execStart = m_e->now();
  e.sumExec += delta;
  e.vruntime += calcDeltaFair(delta, e);
  if (m_variant == Variant::Eevdf) updateDeadline(cpu, q, c);
  q.updateMinVruntime(m_ents);
}

// ___update_load_avg() of the CPU and of the task, with what was runnable since their last update.
void FairPolicy::updateLoadAvg(int cpu, uint32_t t) {
  Rq& r = rq(cpu);
  const int64_t now = m_e->now();
  const double fr = peltDecay(now - r.loadStamp);
  r.loadAvg = r.loadAvg * fr + static_cast<double>(r.cfs.load) * (1 - fr);
  r.loadStamp = now;
  TaskSched& ts = m_ts[t];
  const double ft = peltDecay(now - ts.loadStamp);
  ts.loadAvg = ts.loadAvg * ft + (m_ents[t].onRq ? m_ents[t].weight : 0) * (1 - ft);
  ts.loadStamp = now;
}

// The task's load moves with it (migrate_task_rq_fair(): removed from the old
// CPU; attached at the enqueue on the new one); both decay alike meanwhile.
void FairPolicy::attachLoad(int cpu, uint32_t t) {
  TaskSched& ts = m_ts[t];
  if (ts.loadCpu != cpu) detachLoad(t);
  updateLoadAvg(cpu, t);
  if (ts.loadCpu == cpu) return;
  rq(cpu).loadAvg += ts.loadAvg;
  ts.loadCpu = cpu;
}

void FairPolicy::detachLoad(uint32_t t) {
  TaskSched& ts = m_ts[t];
  if (ts.loadCpu < 0) return;
  updateLoadAvg(ts.loadCpu, t);
  Rq& from = rq(ts.loadCpu);
  from.loadAvg = std::max(0.0, from.loadAvg - ts.loadAvg);
  ts.loadCpu = -1;
}

// The running fair entity changes; the CPU's util changes course only when it
// starts or stops running fair tasks.
void FairPolicy::setCurr(Rq& r, uint32_t t) {
  setRunning(r, t);
  r.cfs.curr = t;
}

void FairPolicy::setRunning(Rq& r, uint32_t t) {
  if ((m_sisUtil || m_forkLoneParent || m_wakePack) && (r.running == kNone) != (t == kNone)) updateUtil(cpuOf(r));
  if (m_forkLoneParent) {
    // The tasks' own util, for what an exiting task takes off its CPU's.
    const int64_t now = m_e->now();
    if (r.running != kNone) {
      TaskSched& was = m_ts[r.running];
      const double f = peltDecay(now - was.utilStamp);
      was.utilAvg = was.utilAvg * f + 1024 * (1 - f);
      was.utilStamp = now;
    }
    if (t != kNone) {
      TaskSched& next = m_ts[t];
      next.utilAvg *= peltDecay(now - next.utilStamp);
      next.utilStamp = now;
    }
  }
  r.running = t;
}

// ___update_load_avg() of the CPU's util, brought to now with whether it ran fair tasks since.
void FairPolicy::updateUtil(int cpu) {
  Rq& r = rq(cpu);
  r.utilAvg = utilNow(r);
  r.utilStamp = m_e->now();
}

double FairPolicy::utilNow(const Rq& r) const {
  const double f = peltDecay(m_e->now() - r.utilStamp);
  return r.utilAvg * f + (r.running != kNone ? 1024 * (1 - f) : 0);
}

// cpu_util_cfs(): the CPU's util brought to now, at most its capacity. Choice:
// the CPU's running time decayed, not the sum of its tasks' util: a task's
// util is not moved at migration nor removed at exit, and there is no util_est
// (per-task tracking made a pipe ping-pong's simulation 50% slower for verdicts within the noise).
double FairPolicy::cpuUtil(int cpu) const { return std::min(1024.0, utilNow(m_rqs[static_cast<size_t>(cpu)])); }

// The CPU's util without that of the tasks that exited on it, which
// task_dead_fair() removes (remove_entity_load_avg()). Only fork_lone_parent reads
// it: SIS_UTIL keeps cpuUtil(), the choice above; taking exits off it too moved
// the shared hackbench-proc's latency p50, chaotic (docs/models.md 8.3), out of
// bounds at a second seed of six (0.834 -> 0.687 at seed 5).
double FairPolicy::utilOfTasksHere(int cpu) const {
  const Rq& r = m_rqs[static_cast<size_t>(cpu)];
  return std::max(0.0, cpuUtil(cpu) - r.exitedUtil * peltDecay(m_e->now() - r.exitedStamp));
}

// cpu_load(): the CPU's load_avg brought to now.
double FairPolicy::cpuLoadAvg(int cpu) const {
  const Rq& r = m_rqs[static_cast<size_t>(cpu)];
  const double f = peltDecay(m_e->now() - r.loadStamp);
  return r.loadAvg * f + static_cast<double>(r.cfs.load) * (1 - f);
}

// task_h_load() without groups: the load_avg as of the task's last update (a
// sleeping wakee's is not synced before wake_affine() reads it).
double FairPolicy::taskLoadAvg(uint32_t t) const { return m_ts[t].loadAvg; }

double FairPolicy::runningTaskLoadAvg(uint32_t t) const {
  const double f = peltDecay(m_e->now() - m_ts[t].loadStamp);
  return m_ts[t].loadAvg * f + m_ents[t].weight * (1 - f);
}

// A task joins the CPU's fair queue (its group's, with autogroup): in the tree, the counts and the load.
void FairPolicy::addToRq(Rq& r, uint32_t t) {
  const int cpu = cpuOf(r);
  if (m_peltWakeAffine) attachLoad(cpu, t);
  enqueueEntityOn(cfsRqOf(cpu, t), t);
  if (m_ents[t].idlePolicy) r.idleTasks++;
  if (m_grouped) r.hNr++;
}

// ... and leaves it; the tree is the caller's (the running task is not in it).
void FairPolicy::removeFromRq(Rq& r, uint32_t t) {
  const int cpu = cpuOf(r);
  if (m_peltWakeAffine) updateLoadAvg(cpu, t);
  dequeueEntityFrom(cfsRqOf(cpu, t), t);
  if (m_ents[t].idlePolicy) r.idleTasks--;
  if (m_grouped) r.hNr--;
}

void FairPolicy::enqueueEntityOn(FairRq& q, uint32_t id) {
  FairRq::Entity& e = m_ents[id];
  e.onRq = true;
  q.treeInsert(m_ents, id);
  q.nrRunning++;
  q.load += e.weight;
  if (const int g = groupOf(id); g >= 0) m_groupLoad[static_cast<size_t>(g)] += e.weight;
}

void FairPolicy::dequeueEntityFrom(FairRq& q, uint32_t id) {
  FairRq::Entity& e = m_ents[id];
  e.onRq = false;
  q.nrRunning--;
  q.load -= e.weight;
  if (const int g = groupOf(id); g >= 0) m_groupLoad[static_cast<size_t>(g)] -= e.weight;
}

void FairPolicy::clearBuddies(FairRq& q, uint32_t id) {
  if (q.next == id) q.next = kNone;
  if (q.last == id) q.last = kNone;
}

void FairPolicy::setNextBuddy(FairRq& q, uint32_t id) {
  if (!m_ents[id].idlePolicy) q.next = id;
}

// set_next_entity(): `next` leaves the tree and becomes the running entity.
void FairPolicy::setNextEntity(Rq& r, uint32_t next) {
  setRunning(r, next);
  setNextEntityOn(r.cfs, next);
}

void FairPolicy::setNextEntityOn(FairRq& q, uint32_t id) {
  clearBuddies(q, id);
  q.treeErase(m_ents, id);
  q.curr = id;
  FairRq::Entity& e = m_ents[id];
  e.execStart = m_e->now();
  e.prevSumExec = e.sumExec;
  if (m_variant == Variant::Eevdf) protectSliceAtPick(q, id);
}

void defineParams(Params& p, Variant variant) {
  p.defineChoice("tunable_scaling", "log", {"none", "log", "linear"},
                 "SCHED_TUNABLESCALING: the time tunables below are multiplied by 1 (none), 1+ilog2(min(cpus,8)) "
                 "(log, the default) or min(cpus,8) (linear)");
  if (variant == Variant::Cfs) {
    p.defineInt("latency_ns", 6'000'000, 100'000, 1'000'000'000,
                "sysctl_sched_latency before scaling: the period in which every runnable task runs once");
    p.defineInt("min_granularity_ns", 750'000, 100'000, 1'000'000'000,
                "sysctl_sched_min_granularity before scaling: the shortest slice (period = nr x this when more "
                "than nr_latency tasks run)");
    p.defineInt("wakeup_granularity_ns", 1'000'000, 0, 1'000'000'000,
                "sysctl_sched_wakeup_granularity before scaling: a woken task preempts when its vruntime is this "
                "much (converted to its weight) behind the current task's");
    p.defineInt("nr_latency", 8, 1, 1000, "sched_nr_latency: tasks that fit in one latency period");
    p.defineBool("gentle_fair_sleepers", true, "GENTLE_FAIR_SLEEPERS: sleeper credit is latency/2 instead of latency");
    p.defineBool("start_debit", true, "START_DEBIT: a forked child starts one virtual slice after min_vruntime");
    p.defineBool("next_buddy", false, "NEXT_BUDDY: prefer the last woken task at the next pick");
    p.defineBool("last_buddy", true, "LAST_BUDDY: prefer the preempted task at the next pick (with >= nr_latency tasks)");
  } else {
    p.defineText("release", "auto",
                 "the kernel release whose EEVDF to follow (docs/models.md §5.3): 6.6 ... 6.18.44, or auto = the "
                 "recording kernel's release (perf.data osrelease, trace.dat uname, CTF env), else the newest "
                 "modelled (" + kNewestEevdf.text() + "). It sets every switch below left at 'release'");
    p.defineInt("base_slice_ns", -1, -1, 1'000'000'000,
                "sysctl_sched_base_slice before scaling; -1 = the release's: 0.75 ms up to 6.14, 0.70 ms from 6.15 "
                "(commit 2ae891b82695, 'Reduce the default slice to avoid tasks getting an extra tick')");
    const std::vector<std::string> sw = {"release", "true", "false"};
    p.defineChoice("delay_dequeue", "release", sw,
                   "DELAY_DEQUEUE (6.12+): a task that sleeps with negative lag stays queued (counted in the load and "
                   "in V) until it is picked, then leaves, or is woken, then stays on its CPU");
    p.defineChoice("delay_zero", "release", sw,
                   "DELAY_ZERO (6.12+): a delayed task leaves with no positive lag; woken after it became eligible, "
                   "it is placed anew at V");
    p.defineChoice("preempt_short", "release", sw,
                   "PREEMPT_SHORT (6.12+): a woken task with a shorter slice (task_slice) cuts the running task's "
                   "protected slice");
    p.defineChoice("place_rel_deadline", "release", sw,
                   "PLACE_REL_DEADLINE (6.12+): a task moved by load balancing keeps its deadline relative to its "
                   "vruntime instead of a fresh slice");
    p.defineChoice("wakeup_preempt_fork", "release", sw,
                   "whether a forked child may preempt its parent at wake_up_new_task(): yes up to 6.18.32, no from "
                   "6.18.33 (e837456fdca8 'Reimplement NEXT_BUDDY to align with EEVDF goals' returns early on "
                   "WF_FORK unless the child's slice is shorter)");
    p.defineBool("run_to_parity", true,
                 "RUN_TO_PARITY: an eligible running task keeps the CPU until the deadline it was granted at pick "
                 "(from 6.17: or until it ran the shortest slice of the queued tasks, if that ends first)");
    p.defineBool("place_lag", true, "PLACE_LAG: a waking task keeps the lag it had when it slept");
    p.defineBool("place_deadline_initial", true,
                 "PLACE_DEADLINE_INITIAL: a new task's first deadline is half a slice (in effect from 6.11: in 6.6 "
                 "the child is placed again at its first enqueue, with a full slice)");
    p.defineBool("next_buddy", false,
                 "NEXT_BUDDY: prefer the last woken task at the next pick if eligible (from 6.18.33 with "
                 "e837456fdca8's rules: the buddy unless an earlier-deadline one is set, a sync wakeup preempting only "
                 "a waker that ran migration_cost_ns, docs/models.md 5.3)");
    p.defineChoice("requeue_lag_curr", "stale", {"stale", "updated"},
                   "the running task's vruntime a delayed task's lag is taken against when a wakeup requeues it "
                   "(DELAY_ZERO's test, docs/models.md 8.3): stale = as 6.12-6.18 do it, as of the running task's "
                   "last update_curr() (ttwu_runnable() and requeue_delayed_entity() do not call it; the wakeup "
                   "preemption test after them does); updated = brought up to date first, not the kernel's (the "
                   "default until 2026-12-05)");
    p.defineChoice("autogroup", "settings", {"settings", "on", "off"},
                   "autogroup (kernel.sched_autogroup_enabled, docs/models.md 5.6): on = the tasks of each session "
                   "compete inside their group, which competes as one entity on each CPU's root queue beside the "
                   "kernel threads (a task forked in the trace joins its parent's session; one alive when the "
                   "trace began, its process's own); off = one flat queue per CPU; settings = as the settings "
                   "saved beside the recording say, on when there are none (the kernel's default when built with "
                   "CONFIG_SCHED_AUTOGROUP), off for a written workload. Not with core scheduling");
    p.defineText("task_slice", "",
                 "custom slices (sched_attr.sched_runtime, 6.12+): rules SELECTOR=NS separated by ';' (SELECTOR: "
                 "comm:REGEX, tgid:N, tid:N, all, rt, fair), NS from 100000 to 100000000; children inherit");

  }
  p.defineInt("idle_min_granularity_ns", 750'000, 0, 1'000'000'000,
              "sysctl_sched_idle_min_granularity: shortest slice of a SCHED_IDLE task (not scaled)");
  p.defineBool("wakeup_preemption", true, "WAKEUP_PREEMPTION: woken SCHED_NORMAL tasks may preempt");
  p.defineChoice("wake_affine_load", "pelt", {"runnable", "pelt"},
                 "the loads wake_affine_weight() compares (docs/models.md 5.5): pelt = the kernel's cpu_load() and "
                 "task_h_load(), PELT load averages (runnable weight decayed with y^32 = 1/2 per 1024 us period, a "
                 "sleeping task's load staying on its last CPU; no task groups); runnable = the weights queued now, "
                 "the default before 2026-12-05 (docs/fidelity.md)");
  p.defineBool("sis_util", true,
               "SIS_UTIL (5.20+, every EEVDF release): select_idle_cpu() scans at most nr_idle_scan CPUs of the "
               "LLC for an idle one, none once the LLC's summed PELT util passes about 85% of its capacity "
               "(update_idle_cpu_scan() at each periodic balance of the LLC domain; each CPU's util is its time "
               "running fair tasks, decayed as PELT's, docs/models.md 5.5); false = the scan always covers the LLC");
  p.defineChoice("fork_lone_parent", "release", {"release", "true", "false"},
                 "fork balancing (find_idlest_cpu()) from a parent that runs alone on its CPU: true = that CPU "
                 "counts as idle while its util, without that of tasks that exited there, is below capacity x 100 "
                 "/ imbalance_pct, so the child stays though another CPU is idle (counted once the replay has run "
                 "four PELT half-lives, 131 ms), measured on Linux 6.18.44 with tools/experiments/fork-placement.c "
                 "(docs/models.md 5.5), not found in fair.c; false = fair.c as read, the parent counted; release = "
                 "true from 6.18, false before (not measured)");
  p.defineChoice("wake_pack", "settings", {"settings", "measured", "off"},
                 "wakeup packing measured on Linux 6.18.44-fc-v1272 (kernel.sched_vcpu_pack = 15) with "
                 "tools/experiments/idle-prev-wakeup.c (docs/models.md 5.5), not in fair.c: measured = a wakee "
                 "whose previous CPU has idled a while goes to the waker's busy CPU instead, and one that slept a "
                 "while stays on its busy previous CPU rather than take the idle CPU the idle search finds, while "
                 "the busy CPU's util is below 72% of its capacity, for a share of the wakeups drawn per wakeup "
                 "(seed): half of them at 3.5-4 ms of idle (3 ms asleep) up to 25% util, 5.5 ms (7 ms) at 50%, "
                 "10 ms at 62%, fewer before and more after; off = fair.c as read, the idle CPU; settings = "
                 "measured when the scheduler settings saved beside the recording set "
                 "kernel.sched_vcpu_pack (a vendor knob upstream does not have), else off");
  p.defineChoice("irq_wake_pack", "measured", {"measured", "off"},
                 "wakeups from interrupt context on a busy CPU, of a task whose previous CPU is idle: measured = "
                 "each stays on the busy CPU (where it does not preempt, and waits for the CPU's next tick or a "
                 "balance to pull it) with the share of such "
                 "wakeups of that task the recording kept there, once it had at least 8 of them, drawn per wakeup "
                 "(seed); the recording kernels did this for rcu_preempt woken from the RCU softirq (docs/models.md "
                 "5.5), which fair.c does not (wake_affine_idle() takes the idle previous CPU); off = fair.c as "
                 "read");
  p.defineBool("ttwu_queue", true,
               "core.c's wakelist (TTWU_QUEUE; idle targets in the waker's LLC since Linux 6.0, commit \"sched: "
               "Remove the limitation of WF_ON_CPU on wakelist if wakee cpu is idle\"): a wakeup from another CPU "
               "onto an idle CPU is queued there only when that CPU has left idle (idle_wakeup_ns later), so until "
               "then no other CPU's balancing can take it and the CPU is not available as idle; false = queued at "
               "once, as before 6.0 (docs/models.md 8.1)");
  p.defineInt("migration_cost_ns", 500'000, 0, 1'000'000'000,
              "sysctl_sched_migration_cost: a task that ran this recently is cache-hot and not moved by balancing");
  p.defineInt("balance_interval_ms", 0, 0, 100'000,
              "periodic balance interval of every scheduling domain; 0 = each domain's number of CPUs in ms "
              "(sd->balance_interval starts at the domain's weight). Balance model (docs/models.md 5.5): each busy "
              "CPU, per domain (SMT, LLC, NUMA node, machine) every interval x busy_factor, pulls the coldest "
              "non-cache-hot queued fair tasks of the most loaded CPU of the busiest other group while that group's "
              "average load (sum of runnable weights) exceeds its own group's by the domain's imbalance_pct, moving "
              "at most half the two CPUs' difference (a task heavier than what is left is skipped, its weight "
              "halved per failed attempt); a CPU about to go idle pulls one such task from the CPU with most "
              "queued tasks, nearest domain first; a busy CPU with queued tasks kicks an idle CPU at its tick, "
              "which then balances as CPU_IDLE (nohz_idle_balance: every interval, one task, a cache-hot one after "
              "failed attempts)");
  p.defineInt("busy_factor", 16, 1, 1000, "sd->busy_factor: busy CPUs balance this many times less often");
  p.defineInt("imbalance_pct", 117, 100, 1000, "sd->imbalance_pct of the LLC (MC), node (PKG) and NUMA domains; SMT domains use 110");
  p.defineBool("nohz_idle_balance", true,
               "a busy CPU with queued tasks kicks an idle CPU at its tick, which then balances as CPU_IDLE: per "
               "domain every interval (not stretched by busy_factor), one queued task, a cache-hot one once more "
               "than cache_nice_tries attempts failed (docs/models.md 5.5)");
  p.defineInt("rr_timeslice_ms", 100, 1, 100'000, "sched_rr_timeslice_ms: SCHED_RR round-robin slice");
}

void defineCoreschedParams(Params& p) {
  p.defineChoice("coresched.variant", "mainline",
                 {"v3", "v3-corevrt", "v3-fiaccount", "v3-allowance", "v3-coresched-idle", "mainline"},
                 "core-scheduling selection (docs/models.md §3.9): v3 = RFC v3 (May 2019), vruntimes normalised per "
                 "CPU, no tick check (a forced-idle sibling waits for the other side to sleep); v3-corevrt = Aaron "
                 "Lu's core-wide min_vruntime + the tick check with nr_running 1; v3-fiaccount = Tim Chen v1, "
                 "forced-idle time added to the idle CPU's min_vruntime (with the same tick check, [U]); v3-allowance "
                 "= Tim Chen v2, 5 ms idle allowance per CPU; v3-coresched-idle = v3-corevrt + the coresched_idle "
                 "kthread, whose ticks let the forced-idle side take the core once ahead ([U] its policy); mainline = "
                 "5.14+ min_vruntime_fi snapshots and task_tick_core(). Core scheduling is active only on SMT "
                 "topologies and only while some task has a cookie (the kernel's static key)");
  p.defineText("coresched.cookie", "",
               "cookies, as prctl(PR_SCHED_CORE) would set them: rules separated by ';', later ones winning: "
               "per-process (each tgid its own cookie; kernel threads stay untagged), per-thread, none, or "
               "SELECTOR=NAME with SELECTOR comm:REGEX, tgid:N, tid:N, all, rt or fair (tasks with the same NAME share "
               "a cookie). Children inherit their parent's cookie; untagged tasks share cookie 0, which is "
               "incompatible with every tagged one");
  p.defineInt("coresched.idle_allowance_ns", 5'000'000, 1'000, 1'000'000'000,
              "v3-allowance: core_idle_allowance of each CPU, spent by running while a sibling is forced idle and "
              "refilled by this much when every CPU of the core has spent it");
  p.defineBool("coresched.forceidle_balance", true,
               "sched_core_balance(): a CPU going forced idle steals a queued task of the core's cookie from another "
               "CPU (not running, not picked, allowed here, from a core no busier than its own)");
}

std::string KernelVersion::text() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::optional<KernelVersion> parseKernelVersion(std::string_view text) {
  KernelVersion v;
  int* parts[3] = {&v.major, &v.minor, &v.patch};
  size_t pos = 0;
  for (int i = 0; i < 3; ++i) {
    if (i > 0) {
      if (pos >= text.size() || text[pos] != '.') {
        if (i == 2) break;  // "6.18": no patch level
        return std::nullopt;
      }
      ++pos;
    }
    const size_t start = pos;
    int n = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && pos - start < 6) n = n * 10 + (text[pos++] - '0');
    if (pos == start) return std::nullopt;
    *parts[i] = n;
  }
  return v;
}

core::Status resolveEevdfRelease(Params& p, std::string_view recordedRelease) {
  if (!p.has("release")) return {};
  KernelVersion v = kNewestEevdf;
  const std::string requested = p.get("release");
  if (requested == "auto") {
    std::string origin;
    const auto recorded = parseKernelVersion(recordedRelease);
    if (recorded && *recorded >= KernelVersion{6, 6, 0}) {
      v = *recorded;
      origin = "the recording's kernel (" + std::string(recordedRelease) + ")";
    } else if (recorded) {
      origin = "the recording's kernel (" + std::string(recordedRelease) +
               ") predates EEVDF (6.6): the newest modelled release instead";
    } else {
      origin = "the recording does not say its kernel: the newest modelled release";
    }
    if (auto st = p.resolve("release", v.text(), origin); !st) return st;
  } else {
    const auto given = parseKernelVersion(requested);
    if (!given) return core::Error("parameter release=" + requested + ": expected auto or a kernel release such as 6.12");
    if (*given < KernelVersion{6, 6, 0})
      return core::Error("parameter release=" + requested + ": EEVDF starts with 6.6 (earlier kernels: --model cfs)");
    v = *given;
  }
  const std::string why = "release " + v.text();
  for (const char* key : {"delay_dequeue", "delay_zero", "preempt_short", "place_rel_deadline"})
    if (p.get(key) == "release")
      if (auto st = p.resolve(key, v >= KernelVersion{6, 12, 0} ? "true" : "false", why); !st) return st;
  if (p.get("wakeup_preempt_fork") == "release")
    if (auto st = p.resolve("wakeup_preempt_fork", v >= KernelVersion{6, 18, 33} ? "false" : "true", why); !st)
      return st;
  if (p.getInt("base_slice_ns") < 0)
    if (auto st = p.resolve("base_slice_ns", v >= KernelVersion{6, 15, 0} ? "700000" : "750000", why); !st) return st;
  return {};
}

void resolveWakePack(Params& p, bool settingsKnown, const std::string& vcpuPack) {
  if (!p.has("wake_pack") || p.get("wake_pack") != "settings") return;
  // A vendor knob (docs/models.md 5.5): present and non-zero on the kernels measured to pack.
  const std::string setting = core::kVcpuPackSetting;
  (void)p.resolve("wake_pack", !vcpuPack.empty() && vcpuPack != "0" ? "measured" : "off",
                  !vcpuPack.empty() ? settingBeside(setting, vcpuPack)
                                    : settingNotBeside(setting, settingsKnown) +
                                          (settingsKnown ? "" : "; schedlab-cli record saves them"));
}

void resolveAutogroup(Params& p, bool isRecording, bool settingsKnown, const std::string& setting) {
  if (!p.has("autogroup") || p.get("autogroup") != "settings") return;
  const std::string name = core::kAutogroupSetting;
  if (!isRecording)
    (void)p.resolve("autogroup", "off", "a written workload has no sessions");
  else if (!setting.empty())
    (void)p.resolve("autogroup", setting == "0" ? "off" : "on", settingBeside(name, setting));
  else
    (void)p.resolve("autogroup", "on",
                    settingNotBeside(name, settingsKnown) + ": the kernel's default, on when built with CONFIG_SCHED_AUTOGROUP");
}

std::unique_ptr<Policy> make(const Params& params, Variant variant, int cpuCount) {
  return std::make_unique<FairPolicy>(params, variant, cpuCount);
}

}  // namespace replay::fair
