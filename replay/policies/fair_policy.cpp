// CFS (Linux <= 6.5) and EEVDF (6.6+) with the RT class, per docs/models.md §5.
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

std::pair<int64_t, int64_t> FairRq::sumsWithCurr(const std::vector<Entity>& ents) const {
  if (curr == kNone || !ents[curr].onRq) return {avgVruntime, avgLoad};
  const int64_t w = ents[curr].weight;
  return {avgVruntime + (ents[curr].vruntime - minVruntime) * w, avgLoad + w};
}

int64_t FairRq::avgVruntimeOf(const std::vector<Entity>& ents) const {
  const auto [avg0, ld] = sumsWithCurr(ents);
  int64_t avg = avg0;
  if (ld) {
    if (avg < 0) avg -= ld - 1;  // floor division for negative sums, as avg_vruntime() does
    avg /= ld;
  }
  return minVruntime + avg;
}

bool FairRq::eligible(const std::vector<Entity>& ents, uint32_t id) const {
  const auto [avg, ld] = sumsWithCurr(ents);
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
  advanceMinVruntime(v);  // never backwards: min_vruntime is monotonic
}

void FairRq::advanceMinVruntime(int64_t v) {
  if (v <= minVruntime) return;
  avgVruntime -= avgLoad * (v - minVruntime);
  minVruntime = v;
}

uint32_t FairRq::earliestEligible(const std::vector<Entity>& ents) const {
  const auto [avg, ld] = sumsWithCurr(ents);
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

  std::string_view name() const override { return m_variant == Variant::Cfs ? "cfs" : "eevdf"; }

  void attach(Engine& engine) override {
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
    touchCore(cpu);
    if (!isFair(t)) {
      rtInsert(cpu, t);
      ts.rqCpu = cpu;
      return;
    }
    Rq& r = rq(cpu);
    syncCoreMinVruntime(cpu);
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
    touchCore(cpu);
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
    if (m_csActive) return corePickNext(cpu, prev, true);
    if (r.rt.empty()) pullRt(cpu);
    if (!r.rt.empty()) return r.rt.begin()->id;
    if (r.cfs.tree.empty()) idleBalance(cpu);
    if (r.cfs.tree.empty()) return kNoTask;
    const uint32_t next = m_variant == Variant::Cfs ? pickCfs(r) : pickEevdfNext(r);
    setNextEntity(r, next);
    return next;
  }

  bool forcedIdle(int cpu) const override { return m_csActive && m_rqs[static_cast<size_t>(cpu)].pickForced; }

  void tick(int cpu, TaskId c) override {
    tickClass(cpu, c);
    if (m_csActive) coreTick(cpu, c);
  }

  void tickClass(int cpu, TaskId c) {
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
    // Core scheduling (rq->core_pick, core_sched_seq, min_vruntime_fi, ...).
    TaskId corePick = kNoTask;
    bool corePickSet = false;  // a sibling's selection left corePick for this CPU
    bool pickForced = false;   // the last selection left this CPU forced idle
    uint64_t coreSchedSeq = 0;
    int64_t minVruntimeFi = 0;
    uint64_t fiSeq = 0;
    int64_t fiSince = -1;      // v3-fiaccount: forced idle since (credited up to here)
    int64_t allowance = 0;     // v3-allowance: core_idle_allowance
  };
  struct CoreState {
    std::vector<int> cpus;
    uint64_t taskSeq = 0, pickSeq = 0;  // core_task_seq, core_pick_seq
    uint32_t cookie = 0;                // core_cookie
    int forceidleCount = 0;
    int occupation = 0;
    uint64_t forceidleSeq = 0;
    int64_t lastAccount = 0;
  };
  enum class CsVariant { V3, V3CoreVrt, V3FiAccount, V3Allowance, V3CoreschedIdle, Mainline };
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

  uint32_t pickEevdf(const Rq& r, bool withCurr) const {
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

  // set_next_entity(): `next` leaves the tree and becomes the running entity.
  void setNextEntity(Rq& r, uint32_t next) {
    r.cfs.treeErase(m_ents, next);
    r.cfs.curr = next;
    FairRq::Entity& e = m_ents[next];
    e.execStart = m_e->now();
    e.prevSumExec = e.sumExec;
    if (m_variant == Variant::Eevdf) e.vlag = e.deadline;  // RUN_TO_PARITY: slice granted at pick
  }

  // --- core scheduling (docs/models.md §3, the variants in §3.9) ---
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

  uint32_t cookieOf(TaskId t) const { return m_e->attributes(t).cookie; }
  CoreState& coreOf(int cpu) { return m_cores[static_cast<size_t>(m_coreOf[static_cast<size_t>(cpu)])]; }
  const CoreState& coreOf(int cpu) const { return m_cores[static_cast<size_t>(m_coreOf[static_cast<size_t>(cpu)])]; }

  // sched_core_enqueue()/dequeue(): any change of a runqueue invalidates pending picks.
  void touchCore(int cpu) {
    if (m_csActive) ++coreOf(cpu).taskSeq;
  }
  // sched_core_dequeue()'s forced-idle edge: a forced-idle CPU whose last task
  // was moved away reschedules, so that its forced idle ends there.
  void leftForcedIdleCpu(int cpu) {
    if (m_csActive && m_e->curr(cpu) == kNoTask && rq(cpu).pickForced && nrRunning(cpu) == 0 &&
        coreOf(cpu).forceidleCount)
      m_e->resched(cpu);
  }

  bool coreWideVruntime() const { return m_csv == CsVariant::V3CoreVrt || m_csv == CsVariant::V3CoreschedIdle; }

  // Aaron Lu's core-wide min_vruntime: every sibling uses the largest.
  void syncCoreMinVruntime(int cpu) {
    if (!m_csActive || !coreWideVruntime()) return;
    const CoreState& core = coreOf(cpu);
    int64_t v = INT64_MIN;
    for (int c : core.cpus) v = std::max(v, rq(c).cfs.minVruntime);
    for (int c : core.cpus) rq(c).cfs.advanceMinVruntime(v);
  }

  // __task_prio(): RT 0..99, every fair task 120 (one level); idle is never asked.
  int unifiedPrio(TaskId t) const { return isFair(t) ? 120 : m_e->task(t).prio; }

  // prio_less(a, b): a is lower priority than b.
  bool prioLess(TaskId a, TaskId b) const {
    const int pa = unifiedPrio(a), pb = unifiedPrio(b);
    if (pa != pb) return pa > pb;
    if (pa != 120) return false;  // RT of equal priority: neither is less
    return cfsPrioLess(a, b);
  }

  bool cfsPrioLess(TaskId a, TaskId b) const {
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
  TaskId peekBest(int cpu) const {
    const Rq& r = m_rqs[static_cast<size_t>(cpu)];
    if (!r.rt.empty()) return r.rt.begin()->id;
    uint32_t curr = r.cfs.curr;
    if (curr != kNone && !m_ents[curr].onRq) curr = kNone;
    if (m_variant == Variant::Eevdf) {
      if (r.cfs.nrRunning == 0) return kNoTask;
      return pickEevdf(r, true);
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
  TaskId coreFind(int cpu, uint32_t cookie) const {
    const Rq& r = m_rqs[static_cast<size_t>(cpu)];
    for (const RtKey& k : r.rt)
      if (cookieOf(k.id) == cookie) return k.id;
    TaskId best = kNoTask;
    auto consider = [&](uint32_t id) {
      if (cookieOf(id) == cookie && (best == kNoTask || m_ents[id].vruntime < m_ents[best].vruntime)) best = id;
    };
    if (r.cfs.curr != kNone && m_ents[r.cfs.curr].onRq) consider(r.cfs.curr);
    for (const auto& k : r.cfs.tree) consider(k.id);
    return best;
  }

  // The task becomes this CPU's running task (it is queued here, or prev put
  // back). `samePrev`: the fast path keeps prev running without set_next_task(),
  // so its slice keeps counting from its last pick (prev_sum_exec_runtime).
  void setNext(int cpu, TaskId t, bool samePrev = false) {
    Rq& r = rq(cpu);
    if (!isFair(t)) return;
    clearBuddies(r, t);
    const int64_t sliceStart = m_ents[t].prevSumExec;
    if (r.cfs.curr != t) setNextEntity(r, t);
    if (samePrev) m_ents[t].prevSumExec = sliceStart;
  }

  // se_fi_update(): mainline's min_vruntime_fi of one CPU's cfs_rq - tracks
  // min_vruntime outside forced idle, taken once per forced-idle episode inside.
  void fiSnapshot(int cpu, bool inForcedIdle, const CoreState& core) {
    Rq& r = rq(cpu);
    if (inForcedIdle) {
      if (r.fiSeq == core.forceidleSeq) return;
      r.fiSeq = core.forceidleSeq;
    }
    r.minVruntimeFi = r.cfs.minVruntime;
  }

  // Time-based bookkeeping of the variants, brought up to now.
  void coreAccount(CoreState& core) {
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

  TaskId corePickNext(int cpu, TaskId prev, bool mayBalance) {
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
  TaskId coreBalance(int cpu, TaskId prev) {
    Rq& r = rq(cpu);
    const CoreState& core = coreOf(cpu);
    if (!m_fiBalance || !r.pickForced || core.cookie == 0) return kNoTask;
    const int n = m_e->cpuCount();
    for (int level = 1; level <= 3; ++level) {
      for (int k = 1; k < n; ++k) {
        const int src = (cpu + k) % n;
        if (m_e->locality(cpu, src) != level || !m_e->online(src)) continue;
        if (coreOf(src).occupation > core.occupation) continue;
        if (trySteal(cpu, src, core.cookie)) return corePickNext(cpu, prev, false);
      }
    }
    return kNoTask;
  }

  bool trySteal(int dst, int src, uint32_t cookie) {
    const Rq& s = rq(src);
    auto stealable = [&](TaskId t) {
      return cookieOf(t) == cookie && !m_e->isRunning(t) && !(s.corePickSet && s.corePick == t) && m_e->allowed(t, dst);
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
  void coreTick(int cpu, TaskId curr) {
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

  // sched_cpu_cookie_match(): the core runs this cookie (select_idle_cpu's scan).
  bool cpuCookieMatch(int cpu, TaskId t) const { return !m_csActive || coreOf(cpu).cookie == cookieOf(t); }

  // sched_core_cookie_match(): an idle core, or one already running this cookie
  // (find_idlest_group_cpu, and balancing's task_hot()).
  bool coreCookieMatch(int cpu, TaskId t) const {
    if (!m_csActive) return true;
    const CoreState& core = coreOf(cpu);
    bool idleCore = true;
    for (int c : core.cpus) idleCore &= availableIdle(c);
    return idleCore || core.cookie == cookieOf(t);
  }

  // --- placement ---

  int findIdlest(TaskId t, int parentCpu) const {
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
    touchCore(fromCpu);
    touchCore(cpu);
    rtErase(fromCpu, best.id);
    m_e->moveQueued(best.id, cpu);
    m_ts[best.id].rqCpu = cpu;
    rtInsert(cpu, best.id);
    leftForcedIdleCpu(fromCpu);
  }

  bool hasMovableFor(int from, int to) const {
    const Rq& r = m_rqs[static_cast<size_t>(from)];
    for (const auto& k : r.cfs.tree)
      if (m_e->allowed(k.id, to)) return true;
    for (const RtKey& k : r.rt)
      if (!m_e->isRunning(k.id) && m_e->allowed(k.id, to)) return true;
    return false;
  }

  // detach_task() + attach_task() of a queued fair task; balancing then checks
  // wakeup preemption on the destination, a core-scheduling steal does not.
  void moveFair(int src, int dst, uint32_t t, bool checkPreempt = true) {
    Rq& s = rq(src);
    Rq& d = rq(dst);
    touchCore(src);
    touchCore(dst);
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
    if (checkPreempt) checkPreemptWakeup(dst, t, 0);
    leftForcedIdleCpu(src);
  }

  // task_hot(): ran recently, or (core scheduling) its cookie does not match the
  // destination core's, which balancing treats like a cache-hot task.
  bool cacheHot(uint32_t t, int dst) const {
    return m_e->now() - m_ents[t].lastRan < m_migrationCost || !coreCookieMatch(dst, t);
  }

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
      if (cacheHot(t, cpu)) continue;
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
      if (cacheHot(t, cpu) && r.balanceFailed <= 1) continue;  // cache_nice_tries = 1
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
  bool m_csConfigured = false, m_csActive = false, m_fiBalance = true;
  CsVariant m_csv = CsVariant::Mainline;
  int64_t m_allowanceNs = 5'000'000;
  std::vector<CoreState> m_cores;
  std::vector<int> m_coreOf;
  std::vector<TaskId> m_picks;  // scratch for the core-wide selection
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

std::unique_ptr<Policy> make(const Params& params, Variant variant, int cpuCount) {
  return std::make_unique<FairPolicy>(params, variant, cpuCount);
}

}  // namespace replay::fair
