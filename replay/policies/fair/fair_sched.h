// The fair-class policy (CFS or EEVDF, with the RT class and optional core
// scheduling) split by concern, as kernel/sched splits fair.c, rt.c and
// core_sched.c: the shared runqueue state and the Policy entry points here and
// in fair_policy.cpp; cfs.cpp and eevdf.cpp the class's own placement, pick and
// preemption rules; rt.cpp the RT class; placement.cpp select_task_rq() and
// load balancing; core_sched.cpp core scheduling. Internal to replay/policies;
// the public face is replay/policies/fair_policy.h.
#pragma once

#include <cstdint>
#include <set>
#include <string_view>
#include <vector>

#include "replay/policies/fair_policy.h"
#include "replay/sim/engine.h"

namespace replay::fair {

inline constexpr int kIdleWeight = 3;  // WEIGHT_IDLEPRIO
inline constexpr uint32_t kNone = UINT32_MAX;

class FairPolicy final : public Policy {
 public:
  FairPolicy(const Params& p, Variant variant, int cpuCount);

  // --- Policy (fair_policy.cpp; selectCpu and balance in placement.cpp) ---
  std::string_view name() const override { return m_variant == Variant::Cfs ? "cfs" : "eevdf"; }
  void attach(Engine& engine) override;
  void taskNew(TaskId t, TaskId parent) override;
  int selectCpu(TaskId t, uint32_t flags, int wakerCpu) override;
  void enqueue(int cpu, TaskId t, uint32_t flags) override;
  void checkPreemptWakeup(int cpu, TaskId t, uint32_t flags) override;
  void dequeue(int cpu, TaskId t, bool /*dying*/) override;
  TaskId pickNext(int cpu, TaskId prev, bool prevRunnable) override;
  bool forcedIdle(int cpu) const override { return m_csActive && m_rqs[static_cast<size_t>(cpu)].pickForced; }
  ModelCounters counters(int64_t busyNs) const override;
  void tick(int cpu, TaskId c) override;
  void balance(int cpu) override;
  void exec(int cpu, TaskId t) override;

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
    // Per scheduling domain of this CPU, innermost first: when it last
    // balanced (sd->last_balance, in jiffies' ns; due one interval later,
    // stretched by busy_factor while the CPU is busy: get_sd_balance_interval())
    // and sd->nr_balance_failed.
    struct DomainBalance {
      static constexpr int64_t kNever = INT64_MIN;
      int64_t last = kNever;
      int failed = 0;
    };
    std::vector<DomainBalance> sd;
    bool nohzKicked = false;  // idle, kicked by a busy CPU's tick: its next pick balances as CPU_IDLE
    int idleTasks = 0;  // SCHED_IDLE entities on the fair queue
    // PELT load (cfs_rq->avg.load_avg): the runnable weight, decayed, with the
    // blocked load of tasks that last ran here; up to date at loadStamp.
    double loadAvg = 0;
    int64_t loadStamp = 0;
    // PELT util (cfs_rq->avg.util_avg) as this CPU's time running fair tasks,
    // decayed; up to date at utilStamp (SIS_UTIL only).
    double utilAvg = 0;
    int64_t utilStamp = 0;
    // The util of the tasks that exited here, decayed alike, up to date at
    // exitedStamp: fork_lone_parent reads utilAvg without it (ownCpuView()).
    double exitedUtil = 0;
    int64_t exitedStamp = 0;
    // The running fair task (rq->curr when fair): with autogroup the root's
    // cfs.curr may be its group's entity instead.
    uint32_t running = kNone;
    int hNr = 0;  // autogroup: fair tasks queued here, delayed ones included (cfs.h_nr_queued)
    int nrIdleScan = 0;  // sd_llc_shared->nr_idle_scan of this CPU's LLC, as its last periodic balance left it
    int delayed = 0;    // entities kept queued by DELAY_DEQUEUE (in cfs.nrRunning, not runnable)
    // Integrals over time of (delayed > 0) and of delayed, up to delayedStamp (counters()).
    int64_t delayedHeldNs = 0, delayedSumNs = 0, delayedStamp = 0;
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
    // PELT load (se->avg.load_avg), up to date at loadStamp, and the CPU whose load holds it.
    double loadAvg = 0;
    int64_t loadStamp = 0;
    int loadCpu = -1;
    int recentUsedCpu = -1;  // p->recent_used_cpu
    int execDest = -1;       // sched_exec() chose this CPU: the next pickNext() of its CPU moves it there
    // PELT util (se->avg.util_avg) as its running time decayed, up to date at utilStamp (fork_lone_parent only).
    double utilAvg = 0;
    int64_t utilStamp = 0;
  };

  // --- Runqueue bookkeeping shared by the classes (fair_policy.cpp) ---
  Rq& rq(int cpu) { return m_rqs[static_cast<size_t>(cpu)]; }
  bool isFair(TaskId t) const { return !isRtPolicy(m_e->task(t).policy); }
  int nrRunning(int cpu) const {
    const Rq& r = m_rqs[static_cast<size_t>(cpu)];
    return static_cast<int>(r.rt.size()) + fairQueued(r);
  }
  // Fair tasks queued on the CPU, running and delayed ones included.
  int fairQueued(const Rq& r) const { return m_grouped ? r.hNr : r.cfs.nrRunning; }
  // Fair tasks queued and not running (the flat tree's size).
  size_t fairWaiting(int cpu) const {
    const Rq& r = m_rqs[static_cast<size_t>(cpu)];
    if (!m_grouped) return r.cfs.tree.size();
    return static_cast<size_t>(r.hNr - (r.running != kNone ? 1 : 0));
  }
  int64_t load(int cpu) const { return m_rqs[static_cast<size_t>(cpu)].cfs.load; }
  int firstAllowed(TaskId t) const;
  bool availableIdle(int cpu) const;
  int64_t calcDeltaFair(int64_t delta, const FairRq::Entity& e) const {
    if (e.weight == 1024 || delta <= 0) return delta;
    return static_cast<int64_t>(calcDelta(static_cast<uint64_t>(delta), 1024, static_cast<uint64_t>(e.weight), true));
  }
  void tickClass(int cpu, TaskId c);
  void updateCurr(int cpu);
  void chargeCurr(int cpu, FairRq& q);
  // PELT load tracking (fair_policy.cpp), kept only for wake_affine_load=pelt,
  // and the CPUs' util, only for sis_util.
  int cpuOf(const Rq& r) const { return static_cast<int>(&r - m_rqs.data()); }
  void setCurr(Rq& r, uint32_t t);
  void setRunning(Rq& r, uint32_t t);
  void updateUtil(int cpu);
  double utilNow(const Rq& r) const;
  double cpuUtil(int cpu) const;
  double utilOfTasksHere(int cpu) const;
  void updateLoadAvg(int cpu, uint32_t t);
  void attachLoad(int cpu, uint32_t t);
  void detachLoad(uint32_t t);
  double cpuLoadAvg(int cpu) const;
  double taskLoadAvg(uint32_t t) const;
  double runningTaskLoadAvg(uint32_t t) const;
  void addToRq(Rq& r, uint32_t t);
  void removeFromRq(Rq& r, uint32_t t);
  void enqueueEntityOn(FairRq& q, uint32_t id);
  void dequeueEntityFrom(FairRq& q, uint32_t id);
  void clearBuddies(FairRq& q, uint32_t id);
  void setNextBuddy(FairRq& q, uint32_t id);
  void setNextEntity(Rq& r, uint32_t next);
  void setNextEntityOn(FairRq& q, uint32_t id);

  // --- CFS, Linux <= 6.5 (cfs.cpp) ---
  int64_t schedPeriod(int nr) const { return nr > m_nrLatency ? nr * m_minGran : m_latency; }
  int64_t schedSlice(const Rq& r, uint32_t t, bool onRq) const;
  void placeCfs(Rq& r, uint32_t t);
  int wakeupPreemptEntity(uint32_t curr, uint32_t se) const;
  uint32_t pickCfs(Rq& r);
  void checkPreemptTick(int cpu, uint32_t c);

  // --- EEVDF, Linux 6.6+ (eevdf.cpp) ---
  void updateDeadline(int cpu, FairRq& q, uint32_t c);
  void updateEntityLag(FairRq& q, uint32_t id);
  void placeEevdf(FairRq& q, uint32_t id, bool initial);
  /// pick_eevdf(); `protect` = false ignores the running entity's protected slice (PREEMPT_SHORT).
  uint32_t pickEevdf(const FairRq& q, bool withCurr, bool protect = true) const;
  /// pick_next_entity(): NEXT_BUDDY's buddy while eligible, else pick_eevdf(); may be a delayed entity.
  uint32_t pickEntity(FairRq& q, bool withCurr);
  /// The wakeup preemption test of the wakee's entity `pse` against the running `se` on their common runqueue `q`.
  void preemptEevdf(int cpu, FairRq& q, uint32_t se, uint32_t pse, uint32_t flags);
  /// The next fair task to run on `cpu`, dequeuing delayed entities it would pick; kNone if none is left.
  uint32_t pickEevdfNext(int cpu);
  /// check_preempt_wakeup_fair() from 6.18.33 for a wakee without a shorter slice.
  void preemptBuddy(int cpu, FairRq& q, uint32_t c, uint32_t t, uint32_t flags);
  uint32_t wakeupPick(int cpu, const FairRq& q, bool protect);
  int64_t sliceOf(uint32_t t) const;
  int64_t queuedSliceBound(const FairRq& q, bool wantMax, uint32_t except) const;
  bool protectedSlice(uint32_t c) const;
  void cancelProtectedSlice(uint32_t c);
  void protectSliceAtPick(FairRq& q, uint32_t next);
  void shortenProtectedSlice(FairRq& q, uint32_t c);
  void finishDelayedDequeue(int cpu, uint32_t id);
  void dropDelayedPicks(int cpu);
  void requeueDelayed(int cpu, FairRq& q, uint32_t id);
  void countDelayed(Rq& r, int delta);

  // --- Autogroup: one level of group scheduling under EEVDF (autogroup.cpp) ---
  bool isGroupSe(uint32_t id) const { return id >= m_nTasks; }
  int groupOf(uint32_t t) const { return m_grouped && t < m_nTasks ? m_groupOf[t] : -1; }
  uint32_t groupSe(int g, int cpu) const {
    return m_nTasks + static_cast<uint32_t>(g * m_e->cpuCount() + cpu);
  }
  FairRq& groupRq(int g, int cpu) { return m_groupRqs[static_cast<size_t>(g * m_e->cpuCount() + cpu)]; }
  FairRq& ownRq(uint32_t gse) { return m_groupRqs[gse - m_nTasks]; }
  /// The cfs_rq a task is queued on (its group's on `cpu`, or the CPU's root).
  FairRq& cfsRqOf(int cpu, uint32_t t) { const int g = groupOf(t); return g < 0 ? rq(cpu).cfs : groupRq(g, cpu); }
  void assignGroups();
  void enqueueGroupEntity(int cpu, int g);
  void groupLeft(int cpu, int g, bool taskSleep);
  void putRootCurr(Rq& r);
  TaskId pickGrouped(int cpu, TaskId prev, bool prevRunnable);
  void updateGroupShares(int cpu, int g);
  void reweightGroupEntity(int cpu, uint32_t gse, int weight);
  /// Calls `stop(task)` for the queued, not running, fair tasks of `cpu` (its
  /// tree's, with autogroup its groups' trees' too) until it returns true;
  /// whether it did.
  template <class F>
  bool anyWaitingTask(int cpu, F&& stop) const {
    const FairRq& root = m_rqs[static_cast<size_t>(cpu)].cfs;
    const auto inGroup = [&](uint32_t gse) {
      for (const auto& k : m_groupRqs[gse - m_nTasks].tree)
        if (stop(k.id)) return true;
      return false;
    };
    for (const auto& k : root.tree)
      if (isGroupSe(k.id) ? inGroup(k.id) : stop(k.id)) return true;
    return root.curr != kNone && isGroupSe(root.curr) && inGroup(root.curr);
  }
  /// task_h_load() as a weight: the task's share of its group entity's weight on its CPU.
  int64_t hierarchicalWeight(int cpu, uint32_t t) const;

  // --- RT class (rt.cpp) ---
  int selectRt(TaskId t, int prev) const;
  int runningPrio(int cpu) const;
  void rtInsert(int cpu, TaskId t);
  void rtErase(int cpu, TaskId t) { rq(cpu).rt.erase({m_e->task(t).prio, m_ts[t].rtSeq, t}); }
  void pullRt(int cpu);

  // --- Core scheduling (core_sched.cpp) ---
  uint32_t cookieOf(TaskId t) const { return m_e->attributes(t).cookie; }
  CoreState& coreOf(int cpu) { return m_cores[static_cast<size_t>(m_coreOf[static_cast<size_t>(cpu)])]; }
  const CoreState& coreOf(int cpu) const { return m_cores[static_cast<size_t>(m_coreOf[static_cast<size_t>(cpu)])]; }
  void touchCore(int cpu);
  void leftForcedIdleCpu(int cpu);
  bool coreWideVruntime() const { return m_csv == CsVariant::V3CoreVrt || m_csv == CsVariant::V3CoreschedIdle; }
  void syncCoreMinVruntime(int cpu);
  // __task_prio(): RT 0..99, every fair task 120 (one level); idle is never asked.
  int unifiedPrio(TaskId t) const { return isFair(t) ? 120 : m_e->task(t).prio; }
  bool prioLess(TaskId a, TaskId b) const;
  bool cfsPrioLess(TaskId a, TaskId b) const;
  TaskId peekBest(int cpu) const;
  TaskId coreFind(int cpu, uint32_t cookie) const;
  void setNext(int cpu, TaskId t, bool samePrev = false);
  void fiSnapshot(int cpu, bool inForcedIdle, const CoreState& core);
  void coreAccount(CoreState& core);
  TaskId corePickNext(int cpu, TaskId prev, bool mayBalance);
  TaskId coreBalance(int cpu, TaskId prev);
  bool trySteal(int dst, int src, uint32_t cookie);
  void coreTick(int cpu, TaskId curr);
  // sched_cpu_cookie_match(): the core runs this cookie (select_idle_cpu's scan).
  bool cpuCookieMatch(int cpu, TaskId t) const { return !m_csActive || coreOf(cpu).cookie == cookieOf(t); }
  bool coreCookieMatch(int cpu, TaskId t) const;

  // --- Wakeup placement and load balancing (placement.cpp) ---
  enum class Balance { Fork, Exec };
  /// The asking task's CPU as fork or exec balancing counts it (ownCpuView()).
  struct CpuView {
    int cpu;
    int nr;
    int64_t load;
    bool idle;
  };
  int findIdlest(TaskId t, int fromCpu, Balance why) const;
  CpuView ownCpuView(TaskId t, int cpu, Balance why) const;
  const std::vector<int>* idlestGroup(TaskId t, const Engine::SchedDomain& d, int local, const CpuView& own) const;
  const Engine::SchedDomain* spanningDomain(int cpu, int other) const;
  int64_t imbalancePct(const Engine::SchedDomain& d) const;
  int64_t balanceIntervalMs(const Engine::SchedDomain& d) const;
  bool balanceDue(const Rq::DomainBalance& sd, const Engine::SchedDomain& d, int64_t jiffies, int64_t busyFactor) const;
  void recordWakee(TaskId waker, TaskId wakee);
  bool wakeWide(TaskId waker, TaskId wakee) const;
  int llcSize(int cpu) const;
  int wakeAffine(TaskId t, int self, int prev, bool sync) const;
  int selectIdleSibling(TaskId t, int prev, int target);
  /// wake_pack: whether this wakeup of `t` stays on busy CPU `busy` rather than go to idle `idle`,
  /// its previous CPU or the one the idle search found.
  bool packedWakeup(TaskId t, int busy, int idle, bool idleIsPrevious) const;
  /// Whether `t` may stay on busy CPU `busy` instead of taking `idle`, an
  /// available idle CPU of a domain they share (the measured packing rules).
  bool busyBesideIdle(TaskId t, int busy, int idle) const;
  /// irq_wake_pack: whether this interrupt's wakeup of `t` stays on busy CPU
  /// `busy` rather than go to its idle previous CPU `prev`.
  bool keptOnBusyCpu(TaskId t, int busy, int prev) const;
  void updateIdleScan(const Engine::SchedDomain& d);
  bool hasMovableFor(int from, int to) const;
  void moveFair(int src, int dst, uint32_t t, bool checkPreempt = true);
  bool cacheHot(uint32_t t, int dst) const;
  bool keptForCache(uint32_t t, int dst, const Rq::DomainBalance& sd, const Engine::SchedDomain& d) const;
  std::vector<uint32_t> movable(int src, int dst) const;
  void idleBalance(int cpu);
  void newidleBalance(int cpu);
  void nohzIdleBalance(int cpu);
  int idlePullSource(int cpu, int inner, int level) const;
  void loadBalance(int cpu, size_t level);

  Engine* m_e = nullptr;
  Variant m_variant;
  int m_factor = 1;
  int64_t m_latency = 0, m_minGran = 0, m_wakeupGran = 0, m_idleMinGran = 0, m_baseSlice = 0;
  int m_nrLatency = 8;
  int64_t m_migrationCost = 0, m_balanceIntervalMs = 0, m_busyFactor = 1, m_imbalancePct = 117;
  int64_t m_rrTimesliceMs = 100, m_rrTicks = 25;
  bool m_peltWakeAffine = false;  // wake_affine_weight() on PELT loads (else runnable weights)
  bool m_sisUtil = true;          // SIS_UTIL: the LLC's utilisation bounds select_idle_cpu()'s scan
  bool m_forkLoneParent = false;  // the measured fork rule of ownCpuView()
  bool m_wakePack = false;        // the measured wakeup packing of packedWakeup()
  bool m_irqWakePack = false;     // irq_wake_pack=measured: keptOnBusyCpu()
  // The wakee keptOnBusyCpu() left on the busy CPU: it does not preempt there.
  // In the recordings about half of such wakees waited a whole tick (most for
  // a balance to pull them) and the others preempted at once; waiting for the
  // busy CPU's next tick sits between the two (docs/models.md 5.5).
  TaskId m_keptBusyWakee = kNoTask;
  bool m_nohzKick = true, m_wakeupPreemption = true;
  bool m_gentle = true, m_startDebit = true, m_nextBuddy = false, m_lastBuddy = true;
  bool m_runToParity = true, m_placeLag = true, m_placeDeadlineInitial = true;
  // EEVDF by release (docs/models.md §5.3): switches from the parameters, and
  // code paths that changed without a switch, from the release itself.
  KernelVersion m_release = kNewestEevdf;
  int m_customSlices = 0;  // tasks with task_slice set
  bool m_delayDequeue = false, m_delayZero = false, m_preemptShort = false, m_placeRelDeadline = false;
  bool m_requeueLagStale = false;  // requeue_lag_curr=stale: no update_curr() before the requeue's lag
  bool m_forkPreempt = true;
  bool m_wakeRqSelected = false;  // WF_RQ_SELECTED: the last enqueue followed select_task_rq(), not ttwu_runnable()
  bool initialDeadlineHalved() const { return m_placeDeadlineInitial && m_release >= KernelVersion{6, 11, 0}; }
  bool protectedSliceVprot() const { return m_release >= KernelVersion{6, 17, 0}; }  // vprot, min queued slice
  bool lagLimitFromMaxSlice() const { return m_release >= KernelVersion{6, 18, 17}; }
  // e837456fdca8 (6.18.33): the wakeup test's buddy rules and PICK_BUDDY inside __pick_eevdf().
  bool buddyWakeupRules() const { return m_release >= KernelVersion{6, 18, 33}; }
  // ac8e69e69363 (6.18.33): the wakeup test's pick dequeues the delayed entities it reaches.
  bool wakeupPickDequeuesDelayed() const { return m_release >= KernelVersion{6, 18, 33}; }
  bool syncAffineIgnoresDelayed() const { return m_release >= KernelVersion{6, 18, 0}; }
  uint64_t m_rtSeq = 0;
  bool m_csConfigured = false, m_csActive = false, m_fiBalance = true;
  CsVariant m_csv = CsVariant::Mainline;
  int64_t m_allowanceNs = 5'000'000;
  int64_t m_startNs = 0;  // when the replay began (attach)
  // DELAY_DEQUEUE over the run: sleepers kept queued, and how each left the queue.
  uint64_t m_delayedDequeues = 0, m_delayedWoken = 0, m_delayedPicked = 0;
  std::vector<CoreState> m_cores;
  std::vector<int> m_coreOf;
  std::vector<TaskId> m_picks;  // scratch for the core-wide selection
  std::vector<Rq> m_rqs;
  // Autogroup: whether asked for (autogroup=on), and in force for this replay
  // (EEVDF without core scheduling); task i's group or -1 for the root; group
  // g's cfs_rq and entity on CPU c at g * cpus + c, the entities after the tasks'.
  bool m_autogroup = false, m_grouped = false;
  uint32_t m_nTasks = 0;
  int m_nGroups = 0;
  std::vector<int> m_groupOf;
  std::vector<FairRq> m_groupRqs;
  std::vector<int64_t> m_groupLoad;  // sum over CPUs of each group's cfs_rq load.weight
  std::vector<int> m_groupShares;    // each group's tg->shares, from its nice
  uint32_t m_tasksInSavedGroups = 0;  // tasks whose group the autogroups saved beside the recording named
  uint64_t m_groupsDelayedTotal = 0;  // group entities DELAY_DEQUEUE kept queued over the run
  std::vector<FairRq::Entity> m_ents;
  std::vector<TaskSched> m_ts;
};

}  // namespace replay::fair
