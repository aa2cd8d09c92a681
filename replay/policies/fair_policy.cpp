// CFS (Linux <= 6.5) and EEVDF (6.6+) with the RT class, per SPEC.md §5.
//
// Load balancing model (simplified from fair.c; also in the params' docs):
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
// - RT: a woken RT task goes to its previous CPU unless that runs an RT task of
//   equal or higher priority, then to the CPU running the lowest priority; a
//   CPU with no RT work pulls a queued RT task from another CPU before fair work.
#include "replay/policies/fair_policy.h"

#include <algorithm>
#include <climits>

#include "replay/sim/engine.h"

namespace replay::fair {

namespace {

constexpr int kNiceWeights[40] = {88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
                                  9548,  7620,  6100,  4904,  3906,  3121,  2501,  1991,  1586,  1277,
                                  1024,  820,   655,   526,   423,   335,   272,   215,   172,   137,
                                  110,   87,    70,    56,    45,    36,    29,    23,    18,    15};
constexpr int kIdleWeight = 3;  // WEIGHT_IDLEPRIO
constexpr uint32_t kNone = UINT32_MAX;

__extension__ typedef unsigned __int128 U128;

int ilog2(int v) {
  int r = 0;
  while (v > 1) v >>= 1, ++r;
  return r;
}

}  // namespace

int niceToWeight(int nice) { return kNiceWeights[std::clamp(nice, -20, 19) + 20]; }

uint64_t calcDelta(uint64_t delta, uint64_t weight, uint64_t lwWeight, bool lwIsTaskWeight) {
  // Task weights carry sched_prio_to_wmult[] = 2^32 / w; load sums compute
  // WMULT_CONST / w with WMULT_CONST = 2^32 - 1 (__update_inv_weight()).
  uint64_t inv = 0xffffffffULL;
  if (lwWeight != 0) inv = lwIsTaskWeight ? (uint64_t{1} << 32) / lwWeight : 0xffffffffULL / lwWeight;
  if (inv > 0xffffffffULL) inv = 0xffffffffULL;
  uint64_t fact = weight * inv;
  int shift = 32;
  const auto factHi = static_cast<uint32_t>(fact >> 32);
  if (factHi) {
    const int fs = 32 - __builtin_clz(factHi);
    shift -= fs;
    fact >>= fs;
  }
  return static_cast<uint64_t>((static_cast<U128>(delta) * fact) >> shift);
}

// --- FairRq ---

int64_t FairRq::avgVruntimeOf(const std::vector<Entity>& ents) const {
  int64_t avg = avgVruntime;
  int64_t ld = avgLoad;
  if (curr != kNone && ents[curr].onRq) {
    const int64_t w = ents[curr].weight;
    avg += (ents[curr].vruntime - minVruntime) * w;
    ld += w;
  }
  if (ld) {
    if (avg < 0) avg -= ld - 1;  // floor division for negative sums, as avg_vruntime() does
    avg /= ld;
  }
  return minVruntime + avg;
}

bool FairRq::eligible(const std::vector<Entity>& ents, uint32_t id) const {
  int64_t avg = avgVruntime;
  int64_t ld = avgLoad;
  if (curr != kNone && ents[curr].onRq) {
    const int64_t w = ents[curr].weight;
    avg += (ents[curr].vruntime - minVruntime) * w;
    ld += w;
  }
  return avg >= (ents[id].vruntime - minVruntime) * ld;
}

void FairRq::treeInsert(std::vector<Entity>& ents, uint32_t id) {
  Entity& e = ents[id];
  e.seq = ++m_seq;
  tree.insert({e.vruntime, e.seq, id});
  avgVruntime += (e.vruntime - minVruntime) * e.weight;
  avgLoad += e.weight;
}

void FairRq::treeErase(std::vector<Entity>& ents, uint32_t id) {
  Entity& e = ents[id];
  tree.erase({e.vruntime, e.seq, id});
  avgVruntime -= (e.vruntime - minVruntime) * e.weight;
  avgLoad -= e.weight;
}

void FairRq::updateMinVruntime(const std::vector<Entity>& ents) {
  int64_t v = minVruntime;
  const bool haveCurr = curr != kNone && ents[curr].onRq;
  if (haveCurr) v = ents[curr].vruntime;
  if (!tree.empty()) v = haveCurr ? std::min(v, tree.begin()->vruntime) : tree.begin()->vruntime;
  if (v > minVruntime) {  // never backwards: min_vruntime is monotonic
    avgVruntime -= avgLoad * (v - minVruntime);
    minVruntime = v;
  }
}

uint32_t FairRq::earliestEligible(const std::vector<Entity>& ents) const {
  int64_t avg = avgVruntime;
  int64_t ld = avgLoad;
  if (curr != kNone && ents[curr].onRq) {
    const int64_t w = ents[curr].weight;
    avg += (ents[curr].vruntime - minVruntime) * w;
    ld += w;
  }
  uint32_t best = kNone;
  // Eligibility falls with vruntime, so the eligible entities are a prefix of the tree.
  for (const Key& k : tree) {
    if (avg < (k.vruntime - minVruntime) * ld) break;
    if (best == kNone || ents[k.id].deadline < ents[best].deadline) best = k.id;
  }
  return best;
}

// --- The policy ---

namespace {

class FairPolicy final : public Policy {
 public:
  FairPolicy(const Params& p, Variant variant, int cpuCount) : m_variant(variant) {
    const std::string& scaling = p.get("tunable_scaling");
    const int cpus = std::min(cpuCount, 8);
    m_factor = scaling == "none" ? 1 : scaling == "linear" ? cpus : 1 + ilog2(cpus);
    m_idleMinGran = p.getInt("idle_min_granularity_ns");
    m_migrationCost = p.getInt("migration_cost_ns");
    m_balanceIntervalMs = p.getInt("balance_interval_ms");
    if (m_balanceIntervalMs == 0) m_balanceIntervalMs = std::max(1, cpuCount);
    m_busyFactor = p.getInt("busy_factor");
    m_imbalancePct = p.getInt("imbalance_pct");
    m_nohzKick = p.getBool("nohz_idle_balance");
    m_rrTimesliceMs = p.getInt("rr_timeslice_ms");
    m_wakeupPreemption = p.getBool("wakeup_preemption");
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
      m_baseSlice = p.getInt("base_slice_ns") * m_factor;
      m_runToParity = p.getBool("run_to_parity");
      m_placeLag = p.getBool("place_lag");
      m_placeDeadlineInitial = p.getBool("place_deadline_initial");
      m_nextBuddy = p.getBool("next_buddy");
    }
  }

  std::string_view name() const override { return m_variant == Variant::Cfs ? "cfs" : "eevdf"; }

  void attach(Engine& engine) override {
    m_e = &engine;
    m_rqs.assign(static_cast<size_t>(engine.cpuCount()), Rq());
    m_ents.assign(engine.taskCount(), FairRq::Entity());
    m_ts.assign(engine.taskCount(), TaskSched());
    m_rrTicks = std::max<int64_t>(1, m_rrTimesliceMs * engine.hz() / 1000);
  }

  void taskNew(TaskId t, TaskId parent) override {
    FairRq::Entity& e = m_ents[t];
    const Task& task = m_e->task(t);
    e = FairRq::Entity();
    e.idlePolicy = task.policy == SchedPolicy::Idle;
    e.weight = e.idlePolicy ? kIdleWeight : niceToWeight(task.nice());
    e.slice = m_baseSlice;
    m_ts[t].rqCpu = -1;
    m_ts[t].forkRelative = false;
    m_ts[t].rrTicksLeft = m_rrTicks;
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

  int selectCpu(TaskId t, uint32_t flags, int wakerCpu) override {
    const int prev = m_e->taskCpu(t);
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

  void enqueue(int cpu, TaskId t, uint32_t flags) override {
    TaskSched& ts = m_ts[t];
    if (!isFair(t)) {
      rtInsert(cpu, t);
      ts.rqCpu = cpu;
      return;
    }
    Rq& r = rq(cpu);
    FairRq::Entity& e = m_ents[t];
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
      placeEevdf(r, t, (flags & kWakeFork) != 0);
    }
    addToRq(r, t);
    ts.rqCpu = cpu;
  }

  void checkPreemptWakeup(int cpu, TaskId t, uint32_t flags) override {
    const TaskId c = m_e->curr(cpu);
    if (c == kNoTask) {
      m_e->resched(cpu);
      return;
    }
    if (c == t) return;
    if (!isFair(t)) {
      if (isFair(c) || m_e->task(t).prio < m_e->task(c).prio) m_e->resched(cpu);
      return;
    }
    if (!isFair(c) || m_e->needResched(cpu)) return;
    Rq& r = rq(cpu);
    FairRq::Entity& ec = m_ents[c];
    const FairRq::Entity& ep = m_ents[t];
    if (ec.idlePolicy && !ep.idlePolicy) {
      m_e->resched(cpu);
      return;
    }
    const SchedPolicy pol = m_e->task(t).policy;
    if ((pol != SchedPolicy::Normal && pol != SchedPolicy::Iso) || !m_wakeupPreemption) return;
    if (m_variant == Variant::Cfs) {
      const bool scale = r.cfs.nrRunning >= m_nrLatency;
      bool marked = false;
      if (m_nextBuddy && scale && !(flags & kWakeFork)) {
        setNextBuddy(r, t);
        marked = true;
      }
      updateCurr(cpu);
      if (wakeupPreemptEntity(c, t) == 1) {
        if (!marked) setNextBuddy(r, t);
        m_e->resched(cpu);
        if (m_lastBuddy && scale) r.cfs.last = c;
      }
    } else {
      if (m_nextBuddy && !(flags & kWakeFork)) setNextBuddy(r, t);
      updateCurr(cpu);
      if (pickEevdf(r, true) == t) m_e->resched(cpu);
    }
  }

  void dequeue(int cpu, TaskId t, bool /*dying*/) override {
    if (!isFair(t)) {
      rtErase(cpu, t);
      return;
    }
    Rq& r = rq(cpu);
    updateCurr(cpu);
    if (m_variant == Variant::Eevdf) updateEntityLag(r, t);
    clearBuddies(r, t);
    m_ents[t].lastRan = m_e->now();
    if (r.cfs.curr == t)
      r.cfs.curr = kNone;
    else
      r.cfs.treeErase(m_ents, t);
    removeFromRq(r, t);
    r.cfs.updateMinVruntime(m_ents);
  }

  TaskId pickNext(int cpu, TaskId prev, bool prevRunnable) override {
    Rq& r = rq(cpu);
    if (prev != kNoTask && prevRunnable && isFair(prev) && r.cfs.curr == prev) {
      // put_prev_entity(): back into the tree.
      updateCurr(cpu);
      r.cfs.curr = kNone;
      r.cfs.treeInsert(m_ents, prev);
      m_ents[prev].lastRan = m_e->now();
    } else if (prev != kNoTask && prevRunnable && !isFair(prev)) {
      m_ents[prev].lastRan = m_e->now();
    }
    if (r.rt.empty()) pullRt(cpu);
    if (!r.rt.empty()) return r.rt.begin()->id;
    if (r.cfs.tree.empty()) idleBalance(cpu);
    if (r.cfs.tree.empty()) return kNoTask;
    const uint32_t next = m_variant == Variant::Cfs ? pickCfs(r) : pickEevdfNext(r);
    // set_next_entity()
    r.cfs.treeErase(m_ents, next);
    r.cfs.curr = next;
    FairRq::Entity& e = m_ents[next];
    e.execStart = m_e->now();
    e.prevSumExec = e.sumExec;
    if (m_variant == Variant::Eevdf) e.vlag = e.deadline;  // RUN_TO_PARITY: slice granted at pick
    return next;
  }

  void tick(int cpu, TaskId c) override {
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
    if (m_variant == Variant::Cfs && r.cfs.nrRunning > 1) checkPreemptTick(cpu, c);
  }

  void balance(int cpu) override {
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

 private:
  struct RtKey {
    int prio;
    uint64_t seq;
    uint32_t id;
    bool operator<(const RtKey& o) const { return prio != o.prio ? prio < o.prio : seq < o.seq; }
  };
  struct Rq {
    FairRq cfs;
    std::set<RtKey> rt;  // queued and running RT tasks of this CPU
    int64_t nextBalance = 0;
    int balanceFailed = 0;
    int idleTasks = 0;  // SCHED_IDLE entities on the fair queue
  };
  struct TaskSched {
    int rqCpu = -1;
    uint64_t rtSeq = 0;
    int64_t rrTicksLeft = 0;
    bool forkRelative = false;
    uint32_t wakeeFlips = 0;
    int64_t wakeeFlipDecay = 0;  // jiffies
    TaskId lastWakee = kNoTask;
  };

  Rq& rq(int cpu) { return m_rqs[static_cast<size_t>(cpu)]; }
  bool isFair(TaskId t) const { return !isRtPolicy(m_e->task(t).policy); }
  int nrRunning(int cpu) const {
    const Rq& r = m_rqs[static_cast<size_t>(cpu)];
    return static_cast<int>(r.rt.size()) + r.cfs.nrRunning;
  }
  int64_t load(int cpu) const { return m_rqs[static_cast<size_t>(cpu)].cfs.load; }
  int firstAllowed(TaskId t) const {
    for (int c = 0; c < m_e->cpuCount(); ++c)
      if (m_e->allowed(t, c)) return c;
    return 0;
  }
  // available_idle_cpu() || sched_idle_cpu(): nothing runnable, or only SCHED_IDLE tasks.
  bool availableIdle(int cpu) const {
    const Rq& r = m_rqs[static_cast<size_t>(cpu)];
    if (!r.rt.empty()) return false;
    if (r.cfs.nrRunning == 0) return true;
    return r.cfs.nrRunning == r.idleTasks;
  }

  int64_t calcDeltaFair(int64_t delta, const FairRq::Entity& e) const {
    if (e.weight == 1024 || delta <= 0) return delta;
    return static_cast<int64_t>(calcDelta(static_cast<uint64_t>(delta), 1024, static_cast<uint64_t>(e.weight), true));
  }

  void updateCurr(int cpu) {
    Rq& r = rq(cpu);
    const uint32_t c = r.cfs.curr;
    if (c == kNone) return;
    FairRq::Entity& e = m_ents[c];
    const int64_t delta = m_e->now() - e.execStart;
    if (delta <= 0) return;
    e.execStart = m_e->now();
    e.sumExec += delta;
    e.vruntime += calcDeltaFair(delta, e);
    if (m_variant == Variant::Eevdf) updateDeadline(cpu, c);
    r.cfs.updateMinVruntime(m_ents);
  }

  void updateDeadline(int cpu, uint32_t c) {
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

  void updateEntityLag(Rq& r, uint32_t t) {
    FairRq::Entity& e = m_ents[t];
    const int64_t lag = r.cfs.avgVruntimeOf(m_ents) - e.vruntime;
    const int64_t limit = calcDeltaFair(std::max<int64_t>(2 * e.slice, m_e->tickNs()), e);
    e.vlag = std::clamp(lag, -limit, limit);
  }

  int64_t schedPeriod(int nr) const { return nr > m_nrLatency ? nr * m_minGran : m_latency; }

  int64_t schedSlice(const Rq& r, uint32_t t, bool onRq) const {
    const FairRq::Entity& e = m_ents[t];
    int64_t slice = schedPeriod(r.cfs.nrRunning + (onRq ? 0 : 1));
    const int64_t ld = r.cfs.load + (onRq ? 0 : e.weight);
    slice = static_cast<int64_t>(calcDelta(static_cast<uint64_t>(slice), static_cast<uint64_t>(e.weight),
                                           static_cast<uint64_t>(ld), false));
    return std::max(slice, e.idlePolicy ? m_idleMinGran : m_minGran);  // BASE_SLICE
  }

  void placeCfs(Rq& r, uint32_t t) {
    FairRq::Entity& e = m_ents[t];
    int64_t v = r.cfs.minVruntime;
    int64_t thresh = e.idlePolicy ? m_minGran : m_latency;
    if (m_gentle) thresh >>= 1;
    v -= thresh;
    e.vruntime = std::max(e.vruntime, v);  // sleepers get at most `thresh` of credit
  }

  void placeEevdf(Rq& r, uint32_t t, bool initial) {
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

  void addToRq(Rq& r, uint32_t t) {
    FairRq::Entity& e = m_ents[t];
    e.onRq = true;
    r.cfs.treeInsert(m_ents, t);
    r.cfs.nrRunning++;
    r.cfs.load += e.weight;
    if (e.idlePolicy) r.idleTasks++;
  }
  void removeFromRq(Rq& r, uint32_t t) {
    FairRq::Entity& e = m_ents[t];
    e.onRq = false;
    r.cfs.nrRunning--;
    r.cfs.load -= e.weight;
    if (e.idlePolicy) r.idleTasks--;
  }

  void clearBuddies(Rq& r, uint32_t t) {
    if (r.cfs.next == t) r.cfs.next = kNone;
    if (r.cfs.last == t) r.cfs.last = kNone;
  }
  void setNextBuddy(Rq& r, uint32_t t) {
    if (!m_ents[t].idlePolicy) r.cfs.next = t;
  }

  // wakeup_preempt_entity(): 1 if `se` should preempt `curr`, 0 within the granularity, -1 if not ahead.
  int wakeupPreemptEntity(uint32_t curr, uint32_t se) const {
    const int64_t vdiff = m_ents[curr].vruntime - m_ents[se].vruntime;
    if (vdiff <= 0) return -1;
    const int64_t gran = calcDeltaFair(m_wakeupGran, m_ents[se]);
    return vdiff > gran ? 1 : 0;
  }

  uint32_t pickCfs(Rq& r) {
    const uint32_t left = r.cfs.tree.begin()->id;
    uint32_t se = left;
    if (r.cfs.next != kNone && wakeupPreemptEntity(r.cfs.next, left) < 1)
      se = r.cfs.next;
    else if (r.cfs.last != kNone && wakeupPreemptEntity(r.cfs.last, left) < 1)
      se = r.cfs.last;
    clearBuddies(r, se);
    return se;
  }

  uint32_t pickEevdf(Rq& r, bool withCurr) const {
    uint32_t c = withCurr ? r.cfs.curr : kNone;
    if (c != kNone && !m_ents[c].onRq) c = kNone;
    if (r.cfs.nrRunning == 1) return c != kNone ? c : (r.cfs.tree.empty() ? kNone : r.cfs.tree.begin()->id);
    if (c != kNone && !r.cfs.eligible(m_ents, c)) c = kNone;
    if (m_runToParity && c != kNone && m_ents[c].vlag == m_ents[c].deadline) return c;
    uint32_t best = r.cfs.earliestEligible(m_ents);
    if (best == kNone || (c != kNone && m_ents[c].deadline < m_ents[best].deadline)) best = c;
    return best;
  }

  uint32_t pickEevdfNext(Rq& r) {
    if (m_nextBuddy && r.cfs.next != kNone && r.cfs.eligible(m_ents, r.cfs.next)) {
      const uint32_t n = r.cfs.next;
      clearBuddies(r, n);
      return n;
    }
    uint32_t best = pickEevdf(r, false);
    if (best == kNone) best = r.cfs.tree.begin()->id;  // cannot happen with a non-empty tree
    return best;
  }

  void checkPreemptTick(int cpu, uint32_t c) {
    Rq& r = rq(cpu);
    const FairRq::Entity& e = m_ents[c];
    const int64_t ideal = std::min(schedSlice(r, c, true), m_latency);
    const int64_t deltaExec = e.sumExec - e.prevSumExec;
    if (deltaExec > ideal) {
      m_e->resched(cpu);
      clearBuddies(r, c);
      return;
    }
    if (deltaExec < m_minGran || r.cfs.tree.empty()) return;
    const int64_t delta = e.vruntime - r.cfs.tree.begin()->vruntime;
    if (delta < 0) return;
    if (delta > ideal) m_e->resched(cpu);
  }

  // --- placement ---

  int findIdlest(TaskId t, int parentCpu) const {
    int best = -1;
    int bestNr = INT_MAX;
    int64_t bestLoad = INT64_MAX;
    const int n = m_e->cpuCount();
    for (int i = 0; i < n; ++i) {
      const int c = (parentCpu + i) % n;  // the parent's CPU first: it wins ties
      if (!m_e->allowed(t, c)) continue;
      const int nr = nrRunning(c);
      const int64_t ld = load(c);
      if (nr < bestNr || (nr == bestNr && ld < bestLoad)) best = c, bestNr = nr, bestLoad = ld;
    }
    return best < 0 ? firstAllowed(t) : best;
  }

  // record_wakee(): a waker that keeps switching between wakees flips; the
  // count halves every second.
  void recordWakee(TaskId waker, TaskId wakee) {
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
  bool wakeWide(TaskId waker, TaskId wakee) const {
    uint32_t master = m_ts[waker].wakeeFlips;
    uint32_t slave = m_ts[wakee].wakeeFlips;
    const auto factor = static_cast<uint32_t>(llcSize(m_e->taskCpu(wakee)));
    if (master < slave) std::swap(master, slave);
    return !(slave < factor || master < slave * factor);
  }
  int llcSize(int cpu) const {
    int n = 0;
    for (int c = 0; c < m_e->cpuCount(); ++c) n += m_e->online(c) && m_e->locality(cpu, c) <= 2;
    return n;
  }

  int wakeAffine(TaskId t, int self, int prev, bool sync) const {
    if (availableIdle(self)) return availableIdle(prev) ? prev : self;
    if (sync && nrRunning(self) == 1) return self;
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

  int selectIdleSibling(TaskId t, int prev, int target) const {
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
        for (int s : topo.siblingsOf(c)) coreIdle &= availableIdle(s);
        if (coreIdle) return c;
      }
    }
    for (int i = 1; i <= n; ++i) {
      const int c = (target + i) % n;
      if (m_e->allowed(t, c) && m_e->locality(c, target) <= 2 && availableIdle(c)) return c;
    }
    if (m_e->allowed(t, target)) return target;
    return m_e->allowed(t, prev) ? prev : firstAllowed(t);
  }

  int selectRt(TaskId t, int prev) const {
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
  int runningPrio(int cpu) const {
    const Rq& r = m_rqs[static_cast<size_t>(cpu)];
    if (!r.rt.empty()) return r.rt.begin()->prio;
    return r.cfs.nrRunning ? 120 : 200;  // any fair work ranks below RT; idle below everything
  }

  void rtInsert(int cpu, TaskId t) {
    TaskSched& ts = m_ts[t];
    ts.rtSeq = ++m_rtSeq;
    rq(cpu).rt.insert({m_e->task(t).prio, ts.rtSeq, t});
  }
  void rtErase(int cpu, TaskId t) { rq(cpu).rt.erase({m_e->task(t).prio, m_ts[t].rtSeq, t}); }

  void pullRt(int cpu) {
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
    rtErase(fromCpu, best.id);
    m_e->moveQueued(best.id, cpu);
    m_ts[best.id].rqCpu = cpu;
    rtInsert(cpu, best.id);
  }

  bool hasMovableFor(int from, int to) const {
    const Rq& r = m_rqs[static_cast<size_t>(from)];
    for (const auto& k : r.cfs.tree)
      if (m_e->allowed(k.id, to)) return true;
    for (const RtKey& k : r.rt)
      if (!m_e->isRunning(k.id) && m_e->allowed(k.id, to)) return true;
    return false;
  }

  // detach_task() + attach_task() of a queued fair task.
  void moveFair(int src, int dst, uint32_t t) {
    Rq& s = rq(src);
    Rq& d = rq(dst);
    updateCurr(src);
    if (m_variant == Variant::Eevdf) updateEntityLag(s, t);
    clearBuddies(s, t);
    s.cfs.treeErase(m_ents, t);
    removeFromRq(s, t);
    FairRq::Entity& e = m_ents[t];
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
    checkPreemptWakeup(dst, t, 0);
  }

  bool cacheHot(uint32_t t) const { return m_e->now() - m_ents[t].lastRan < m_migrationCost; }

  // Queued fair tasks of `src` that may run on `dst`, coldest first.
  std::vector<uint32_t> movable(int src, int dst) const {
    std::vector<uint32_t> out;
    for (const auto& k : m_rqs[static_cast<size_t>(src)].cfs.tree)
      if (m_e->allowed(k.id, dst)) out.push_back(k.id);
    std::sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) {
      return m_ents[a].lastRan != m_ents[b].lastRan ? m_ents[a].lastRan < m_ents[b].lastRan : a < b;
    });
    return out;
  }

  void idleBalance(int cpu) {
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
      if (cacheHot(t)) continue;
      moveFair(src, cpu, t);
      return;
    }
  }

  void loadBalance(int cpu) {
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
      if (cacheHot(t) && r.balanceFailed <= 1) continue;  // cache_nice_tries = 1
      const int64_t w = m_ents[t].weight;
      if ((w >> std::min(r.balanceFailed, 62)) > imbalance) continue;
      moveFair(busiest, cpu, t);
      imbalance -= w;
      ++moved;
    }
    r.balanceFailed = moved ? 0 : std::min(r.balanceFailed + 1, 62);
  }

  Engine* m_e = nullptr;
  Variant m_variant;
  int m_factor = 1;
  int64_t m_latency = 0, m_minGran = 0, m_wakeupGran = 0, m_idleMinGran = 0, m_baseSlice = 0;
  int m_nrLatency = 8;
  int64_t m_migrationCost = 0, m_balanceIntervalMs = 0, m_busyFactor = 1, m_imbalancePct = 117;
  int64_t m_rrTimesliceMs = 100, m_rrTicks = 25;
  bool m_nohzKick = true, m_wakeupPreemption = true;
  bool m_gentle = true, m_startDebit = true, m_nextBuddy = false, m_lastBuddy = true;
  bool m_runToParity = true, m_placeLag = true, m_placeDeadlineInitial = true;
  uint64_t m_rtSeq = 0;
  std::vector<Rq> m_rqs;
  std::vector<FairRq::Entity> m_ents;
  std::vector<TaskSched> m_ts;
};

}  // namespace

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
    p.defineInt("base_slice_ns", 750'000, 100'000, 1'000'000'000,
                "sysctl_sched_base_slice before scaling (0.70 ms from 6.15 on, commit 2ae891b82695)");
    p.defineBool("run_to_parity", true, "RUN_TO_PARITY: the running task keeps the CPU until it used the slice it "
                                        "was granted at pick, even when no longer the best choice");
    p.defineBool("place_lag", true, "PLACE_LAG: a waking task keeps the lag it had when it slept");
    p.defineBool("place_deadline_initial", true, "PLACE_DEADLINE_INITIAL: a new task's first deadline is half a slice");
    p.defineBool("next_buddy", false, "NEXT_BUDDY: prefer the last woken task at the next pick if eligible");
  }
  p.defineInt("idle_min_granularity_ns", 750'000, 0, 1'000'000'000,
              "sysctl_sched_idle_min_granularity: shortest slice of a SCHED_IDLE task (not scaled)");
  p.defineBool("wakeup_preemption", true, "WAKEUP_PREEMPTION: woken SCHED_NORMAL tasks may preempt");
  p.defineInt("migration_cost_ns", 500'000, 0, 1'000'000'000,
              "sysctl_sched_migration_cost: a task that ran this recently is cache-hot and not moved by balancing");
  p.defineInt("balance_interval_ms", 0, 0, 100'000,
              "periodic balance interval of an idle CPU; 0 = the number of CPUs (sd->balance_interval starts at "
              "the domain's weight in ms). Balance model: each busy CPU, every interval x busy_factor, pulls the "
              "coldest non-cache-hot queued fair tasks of the most loaded CPU while that CPU's load (sum of "
              "runnable weights) exceeds its own by imbalance_pct, moving at most half the difference (a task "
              "heavier than what is left is skipped, its weight halved per failed attempt); a CPU about to go idle "
              "pulls one such task from the CPU with most queued tasks; a busy CPU with queued tasks kicks an idle "
              "CPU at its tick to do that (nohz_idle_balance)");
  p.defineInt("busy_factor", 16, 1, 1000, "sd->busy_factor: busy CPUs balance this many times less often");
  p.defineInt("imbalance_pct", 117, 100, 1000, "sd->imbalance_pct of the package (MC) domain");
  p.defineBool("nohz_idle_balance", true, "a busy CPU with queued tasks kicks an idle CPU at its tick to pull one");
  p.defineInt("rr_timeslice_ms", 100, 1, 100'000, "sched_rr_timeslice_ms: SCHED_RR round-robin slice");
}

std::unique_ptr<Policy> make(const Params& params, Variant variant, int cpuCount) {
  return std::make_unique<FairPolicy>(params, variant, cpuCount);
}

}  // namespace replay::fair
