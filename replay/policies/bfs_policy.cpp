// BFS v0.463, -gc (v4.1_0463_1) and VRQ 0.89, following docs/models.md §1 and
// §2.2-2.3 and, where those are silent, the 0.463 source (kernelOfTruth/linux
// kernel/sched/bfs.c) and VRQ 0.89 (cchalpha/linux-gc kernel/sched/bfs.c).
// Choices where the sources leave it open ([U] there) are marked "Choice:".
//
// Time: niffies is the simulated clock (absolute trace time, so deadlines are
// of the size they had on the traced machine and the sticky-task shift
// penalty is as large). Slices are in BFS µs (ns >> 10) and are charged at
// ticks and switches, each charge truncated, as update_cpu_clock_*() does.
#include "replay/policies/bfs_policy.h"

#include <algorithm>
#include <array>
#include <climits>
#include <set>
#include <vector>

#include "replay/sim/engine.h"

namespace replay::bfs {

namespace {
constexpr std::array<int, 40> makeRatios() {
  std::array<int, 40> r{};
  r[0] = 128;
  for (size_t i = 1; i < r.size(); ++i) r[i] = r[i - 1] * 11 / 10;
  return r;
}
constexpr std::array<int, 40> kPrioRatios = makeRatios();
constexpr int64_t kMinVisibleDeadline = 256;  // VRQ: a forked child's deadline is this much earlier
}  // namespace

int prioRatio(int userPrio) { return kPrioRatios[static_cast<size_t>(std::clamp(userPrio, 0, 39))]; }

int64_t deadlineDiff(int nice, int rrIntervalMs) {
  return static_cast<int64_t>(prioRatio(nice + 20)) * rrIntervalMs * ((int64_t{1} << 20) / 128);
}

namespace {

// State and rules shared by the three variants: slices, deadlines, the tick,
// ISO accounting and SMT nice.
class BfsFamily : public Policy {
 public:
  BfsFamily(const Params& p, Variant v) : m_variant(v) {
    m_rrInterval = static_cast<int>(p.getInt("rr_interval"));
    m_isoCpu = p.getInt("iso_cpu");
    m_rtAsIso = p.getBool("unprivileged_rt");
    if (v != Variant::Vrq) {
      m_smtNice = p.getBool("smt_nice");
      m_smtBiasCycling = p.get("smt_bias") == "cycling";
    }
  }

  void attach(Engine& e) override {
    m_e = &e;
    m_ts.assign(e.taskCount(), TaskSched());
    m_rq.assign(static_cast<size_t>(e.cpuCount()), RqMirror());
    m_iso.assign(static_cast<size_t>(e.cpuCount()), IsoState());
    m_onlineCpus = 0;
    for (int c = 0; c < e.cpuCount(); ++c) m_onlineCpus += e.online(c);
  }

  void tick(int cpu, TaskId curr) override {
    // task_running_tick(), after update_cpu_clock_tick() charged the slice.
    RqMirror& rq = m_rq[static_cast<size_t>(cpu)];
    account(cpu);
    IsoState& iso = isoOf(cpu);
    const int64_t period = isoPeriod();
    if (rq.prio < 100 || (rq.policy == SchedPolicy::Iso && !iso.refractory)) {
      if (iso.ticks <= period * 128 - 128) iso.ticks += 100;
    } else if (iso.ticks) {
      iso.ticks -= iso.ticks / period + 1;
      if (iso.refractory && iso.ticks < period * (m_isoCpu * 115 / 128)) iso.refractory = false;
    }
    if (rq.policy == SchedPolicy::Iso) {
      if (testIsoRefractory(iso) && rq.prio == kIsoPrio) rq.timeSlice = 0;  // over its share: run as NORMAL
    }
    if (policyOf(curr) == SchedPolicy::Fifo) return;
    // Dither: a task switched in within half a jiffy of the last tick must not
    // run into the second half of the next tick once its slice is nearly gone.
    if (rq.dither) {
      if (rq.timeSlice > halfJiffyUs()) return;
      rq.timeSlice = 0;
    } else if (rq.timeSlice >= kReschedUs) {
      return;
    }
    m_e->resched(cpu);
  }

 protected:
  struct TaskSched {
    int64_t deadline = 0;
    int64_t timeSlice = 0;  // BFS µs
    int prio = kNormalPrio;
    bool sticky = false;
    bool queued = false;
    uint64_t seq = 0;
    int64_t lastRan = 0;
    int smtBias = 0;
    enum class Fork : uint8_t { None, Split, Expired } fork = Fork::None;
  };
  struct RqMirror {
    int64_t deadline = 0;
    int64_t timeSlice = 0;
    int prio = kPrioLimit;
    SchedPolicy policy = SchedPolicy::Normal;
    int64_t timekeep = 0;  // when the slice was last charged
    int smtBias = 0;
    bool userTask = false;
    bool dither = false;
    TaskId running = kNoTask;
    TaskId sticky = kNoTask;
  };
  struct IsoState {
    int64_t ticks = 0;
    bool refractory = false;
  };

  SchedPolicy policyOf(TaskId t) const {
    const SchedPolicy p = m_e->task(t).policy;
    if (m_rtAsIso && isRtPolicy(p)) return SchedPolicy::Iso;  // unprivileged RT requests become SCHED_ISO
    return p;
  }
  bool isRt(TaskId t) const { return isRtPolicy(policyOf(t)); }
  int nice(TaskId t) const { return m_e->task(t).nice(); }
  int64_t halfJiffyUs() const { return 1000000 / m_e->hz() / 2; }
  int64_t halfJiffyNs() const { return 1000000000LL / m_e->hz() / 2; }
  // BFS: one ISO budget for the machine, ISO_PERIOD = 5 HZ (online CPUs) + 1.
  // VRQ: per runqueue, ISO_PERIOD = 5 HZ + 1.
  int64_t isoPeriod() const {
    return m_variant == Variant::Vrq ? 5LL * m_e->hz() + 1 : 5LL * m_e->hz() * m_onlineCpus + 1;
  }
  IsoState& isoOf(int cpu) { return m_variant == Variant::Vrq ? m_iso[static_cast<size_t>(cpu)] : m_iso[0]; }
  bool testIsoRefractory(IsoState& iso) const {
    const int64_t period = isoPeriod();
    if (!iso.refractory) {
      if (iso.ticks > period * m_isoCpu) iso.refractory = true;
    } else if (iso.ticks < period * (m_isoCpu * 115 / 128)) {
      iso.refractory = false;
    }
    return iso.refractory;
  }

  // The level a task is queued at (enqueue_task()).
  int effectivePrio(TaskId t, int cpu) {
    const SchedPolicy p = policyOf(t);
    if (isRtPolicy(p)) return m_e->task(t).prio;
    if (p == SchedPolicy::Idle) return kIdlePrio;  // SCHED_IDLE is SCHED_IDLEPRIO in BFS; always "suitable" here
    if (p == SchedPolicy::Iso && !isoOf(cpu).refractory) return kIsoPrio;
    return kNormalPrio;
  }

  void timeSliceExpired(TaskId t) {
    TaskSched& s = m_ts[t];
    s.timeSlice = timesliceUs(m_rrInterval);
    s.deadline = m_e->now() + deadlineDiff(nice(t), m_rrInterval);
    if (m_smtBiasCycling) {
      // docs/models.md §1.10: cycles 20-nice .. 1, decrementing at each expiry.
      if (--s.smtBias < 1) s.smtBias = 20 - nice(t);
    }
  }
  // check_deadline(): nearly used up slices, and SCHED_BATCH at every schedule, get a new deadline.
  void checkDeadline(TaskId t) {
    if (m_ts[t].timeSlice < kReschedUs || policyOf(t) == SchedPolicy::Batch) timeSliceExpired(t);
  }

  // update_cpu_clock_tick/_switch(): charge the running task's slice.
  void account(int cpu) {
    RqMirror& rq = m_rq[static_cast<size_t>(cpu)];
    const int64_t now = m_e->now();
    if (rq.running != kNoTask && rq.policy != SchedPolicy::Fifo) rq.timeSlice -= (now - rq.timekeep) >> 10;
    rq.timekeep = now;
  }

  int taskPrioBias(TaskId t) const {
    if (isRt(t)) return 1 << 30;
    if (m_ts[t].prio == kIsoPrio) return 1 << 29;
    if (m_ts[t].prio == kIdlePrio) return 0;
    if (m_smtBiasCycling) return m_ts[t].smtBias;
    return 20 - nice(t);  // MAX_PRIO - static_prio
  }

  void setRqTask(int cpu, TaskId t) {
    RqMirror& rq = m_rq[static_cast<size_t>(cpu)];
    rq.running = t;
    rq.timekeep = m_e->now();
    if (t == kNoTask) {
      rq.prio = kPrioLimit;
      rq.policy = SchedPolicy::Normal;
      rq.deadline = 0;
      rq.timeSlice = 0;
      rq.smtBias = 0;
      rq.userTask = false;
      return;
    }
    const TaskSched& s = m_ts[t];
    rq.timeSlice = s.timeSlice;
    rq.deadline = s.deadline;
    rq.prio = s.prio;
    rq.policy = policyOf(t);
    rq.smtBias = taskPrioBias(t);
    rq.userTask = !m_e->task(t).kernelThread;
  }

  uint64_t priodl(TaskId t) const {
    return (static_cast<uint64_t>(m_ts[t].prio) << 56) |
           (isRt(t) || m_ts[t].prio == kIsoPrio ? 0 : static_cast<uint64_t>(m_ts[t].deadline) >> 8);
  }
  uint64_t runningPriodl(int cpu) const {
    const RqMirror& rq = m_rq[static_cast<size_t>(cpu)];
    if (rq.running == kNoTask) return ~uint64_t{0};
    return (static_cast<uint64_t>(rq.prio) << 56) |
           (rq.prio < kNormalPrio ? 0 : static_cast<uint64_t>(rq.deadline) >> 8);
  }

  // smt_should_schedule(): SMT nice keeps a lower-priority task off a thread
  // whose sibling runs a higher-priority user task.
  bool smtShouldSchedule(TaskId t, int cpu) const {
    if (!m_smtNice) return true;
    if (m_e->task(t).kernelThread || isRt(t)) return true;
    int best = 0;
    for (int s : m_e->topology().siblingsOf(cpu)) {
      const RqMirror& rq = m_rq[static_cast<size_t>(s)];
      if (rq.running == kNoTask || !rq.userTask) continue;
      best = std::max(best, rq.smtBias);
    }
    if (best < 1) return true;
    const int bias = taskPrioBias(t);
    if (bias < 1) return false;
    if (bias >= best) return true;
    return best % 4 == 1;  // lets lower tasks in about a quarter of the time
  }

  // In the idle map: running the idle task. Choice: a CPU already kicked in
  // this instant (resched pending) counts as taken, as it would be by the time
  // a second, real wakeup arrives microseconds later.
  bool cpuIdle(int cpu) const { return m_e->idle(cpu) && !m_e->needResched(cpu); }

  bool allIdle(const std::vector<int>& cpus, int self) const {
    if (!cpuIdle(self)) return false;
    for (int c : cpus)
      if (!cpuIdle(c)) return false;
    return true;
  }

  Variant m_variant;
  Engine* m_e = nullptr;
  int m_rrInterval = 6;
  int64_t m_isoCpu = 70;
  bool m_rtAsIso = false;
  bool m_smtNice = false;
  bool m_smtBiasCycling = false;
  int m_onlineCpus = 1;
  std::vector<TaskSched> m_ts;
  std::vector<RqMirror> m_rq;
  std::vector<IsoState> m_iso;
};

// --- BFS 0.463 and -gc: one global queue ---

class GlobalQueuePolicy final : public BfsFamily {
 public:
  GlobalQueuePolicy(const Params& p, Variant v) : BfsFamily(p, v) {}
  std::string_view name() const override { return m_variant == Variant::Gc ? "gc" : "bfs"; }

  void attach(Engine& e) override {
    BfsFamily::attach(e);
    m_rt.clear();
    for (auto& l : m_levels) l.clear();
    m_qnr = 0;
    m_packageCpus.clear();
    const auto& topo = e.topology();
    for (int c = 0; c < e.cpuCount(); ++c) {
      std::vector<int> same;
      const auto* me = topo.cpu(c);
      for (const auto& info : topo.cpus())
        if (me && info.package == me->package && info.cpu != c) same.push_back(info.cpu);
      m_packageCpus.push_back(same);
    }
  }

  void taskNew(TaskId t, TaskId parent) override {
    TaskSched& s = m_ts[t];
    s = TaskSched();
    s.smtBias = 20 - nice(t);
    if (parent == kNoTask) {
      timeSliceExpired(t);
      return;
    }
    // wake_up_new_task(): the child inherits the parent's current deadline and
    // half its remaining slice; a parent with too little left is rescheduled and
    // the child starts afresh.
    const int pcpu = m_e->taskCpu(parent);
    RqMirror& prq = m_rq[static_cast<size_t>(pcpu)];
    s.deadline = prq.deadline;
    s.timeSlice = m_ts[parent].timeSlice;
    if (policyOf(t) == SchedPolicy::Fifo) {
      s.fork = TaskSched::Fork::Split;
    } else if (prq.timeSlice >= kReschedUs * 2) {
      prq.timeSlice /= 2;
      s.timeSlice = prq.timeSlice;
      s.fork = TaskSched::Fork::Split;
    } else {
      prq.timeSlice = 0;
      m_e->resched(pcpu);
      timeSliceExpired(t);
      s.fork = TaskSched::Fork::Expired;
    }
  }

  int selectCpu(TaskId t, uint32_t flags, int wakerCpu) override {
    // BFS does not place at wakeup: whichever CPU schedules first takes the task.
    const int cpu = (flags & kWakeFork) ? wakerCpu : m_e->taskCpu(t);
    if (m_e->allowed(t, cpu)) return cpu;
    for (int c = 0; c < m_e->cpuCount(); ++c)
      if (m_e->allowed(t, c)) return c;
    return cpu;
  }

  void enqueue(int cpu, TaskId t, uint32_t /*flags*/) override {
    m_ts[t].sticky = false;  // a woken task is never sticky
    enqueueTask(t, cpu);
  }

  void checkPreemptWakeup(int /*cpu*/, TaskId t, uint32_t flags) override {
    TaskSched& s = m_ts[t];
    if (flags & kWakeFork) {
      const auto mode = s.fork;
      s.fork = TaskSched::Fork::None;
      if (mode == TaskSched::Fork::Expired) return;  // the parent was rescheduled already
      const TaskId parent = m_e->task(t).parent;
      const int pcpu = parent != kNoTask ? m_e->taskCpu(parent) : -1;
      if (parent != kNoTask && m_e->curr(pcpu) == parent && !suitableIdle(t)) {
        m_e->resched(pcpu);  // child runs first, in anticipation of an exec
        return;
      }
      tryPreempt(t);
      return;
    }
    // A sync wakeup only preempts when an idle CPU can take the task.
    if (!(flags & kWakeSync) || suitableIdle(t)) tryPreempt(t);
  }

  void dequeue(int /*cpu*/, TaskId t, bool /*dying*/) override { m_ts[t].sticky = false; }

  TaskId pickNext(int cpu, TaskId prev, bool prevRunnable) override {
    RqMirror& rq = m_rq[static_cast<size_t>(cpu)];
    const int64_t now = m_e->now();
    const int64_t lastTick = m_e->lastTick(cpu);
    rq.dither = lastTick >= 0 && now - lastTick <= halfJiffyNs();
    if (prev != kNoTask) {
      account(cpu);
      TaskSched& p = m_ts[prev];
      p.timeSlice = rq.timeSlice;
      p.deadline = rq.deadline;
      checkDeadline(prev);
      p.lastRan = now;
      if (prevRunnable) {
        if (m_qnr == 0) {  // nothing else waits: run prev again without a search
          setRqTask(cpu, prev);
          return prev;
        }
        swapSticky(cpu, prev);
        enqueueTask(prev, cpu);
      }
    }
    TaskId next = m_qnr > 0 ? earliestDeadlineTask(cpu) : kNoTask;
    if (next != prev) {
      if (prev != kNoTask && prevRunnable && m_ts[prev].queued) reschedSuitableIdle(prev);
      if (next != kNoTask && isRt(next) && prev != kNoTask) unstickTask(cpu, prev);
    }
    setRqTask(cpu, next);
    return next;
  }

 private:
  struct Key {
    int64_t deadline;
    uint64_t seq;
    uint32_t id;
    bool operator<(const Key& o) const { return deadline != o.deadline ? deadline < o.deadline : seq < o.seq; }
  };
  struct RtKey {
    int prio;
    uint64_t seq;
    uint32_t id;
    bool operator<(const RtKey& o) const { return prio != o.prio ? prio < o.prio : seq < o.seq; }
  };

  std::set<Key>& level(int prio) { return m_levels[static_cast<size_t>(prio - kIsoPrio)]; }

  void enqueueTask(TaskId t, int cpu) {
    TaskSched& s = m_ts[t];
    s.prio = effectivePrio(t, cpu);
    s.seq = ++m_seq;
    s.queued = true;
    if (s.prio < 100)
      m_rt.insert({s.prio, s.seq, t});
    else
      level(s.prio).insert({s.deadline, s.seq, t});
    ++m_qnr;
  }

  void takeTask(TaskId t) {
    TaskSched& s = m_ts[t];
    if (s.prio < 100)
      m_rt.erase({s.prio, s.seq, t});
    else
      level(s.prio).erase({s.deadline, s.seq, t});
    s.queued = false;
    s.sticky = false;
    --m_qnr;
  }

  // earliest_deadline_task(): RT by priority then FIFO; ISO, NORMAL and IDLE by
  // deadline, a sticky task of another CPU keyed deadline << locality.
  TaskId earliestDeadlineTask(int cpu) {
    for (const RtKey& k : m_rt) {
      if (!m_e->allowed(k.id, cpu)) continue;
      const TaskId t = k.id;  // takeTask() erases k
      takeTask(t);
      return t;
    }
    for (int prio = kIsoPrio; prio <= kIdlePrio; ++prio) {
      TaskId best = kNoTask;
      uint64_t bestKey = ~uint64_t{0};
      for (const Key& k : level(prio)) {
        if (static_cast<uint64_t>(k.deadline) >= bestKey) break;  // every later key is at least its deadline
        const TaskId t = k.id;
        if (!m_e->allowed(t, cpu)) continue;
        uint64_t key = static_cast<uint64_t>(k.deadline);
        const int tcpu = m_e->taskCpu(t);
        if (m_ts[t].sticky && tcpu != cpu) key <<= m_e->locality(cpu, tcpu);  // no CPU is ever "scaling" here
        if (!smtShouldSchedule(t, cpu)) continue;
        if (key < bestKey) best = t, bestKey = key;
      }
      if (best != kNoTask) {
        takeTask(best);
        return best;
      }
    }
    return kNoTask;
  }

  bool suitableIdle(TaskId t) const {
    for (int c = 0; c < m_e->cpuCount(); ++c)
      if (cpuIdle(c) && m_e->allowed(t, c)) return true;
    return false;
  }

  // best_mask_cpu(): `best` if it is in the mask, else the lowest ranking
  // (distance and business flags, docs/models.md §1.7) seen from `from`. -gc walks levels:
  // the CPU itself, SMT siblings, the package (LLC), then any.
  int bestMaskCpu(int best, int from, const std::vector<int>& mask) const {
    if (std::find(mask.begin(), mask.end(), best) != mask.end()) return best;
    if (m_variant == Variant::Gc) {
      for (int level = 1; level <= 3; ++level)
        for (int c : mask)
          if (m_e->locality(best, c) == level) return c;
      return mask.front();
    }
    int bestRanking = 127;
    int bestCpu = best;
    const auto& topo = m_e->topology();
    for (int c : mask) {
      int ranking = 0;
      const int locality = m_e->locality(from, c);
      if (locality > 3) ranking |= 64;
      else if (locality > 2) ranking |= 8;
      else if (locality == 2) ranking |= 2;
      if (!allIdle(m_packageCpus[static_cast<size_t>(c)], c)) ranking |= 4;  // its cache busy
      if (locality == 1) ranking |= 1;
      if (!allIdle(topo.siblingsOf(c), c)) ranking |= 16;  // its SMT siblings busy
      if (ranking < bestRanking) bestCpu = c, bestRanking = ranking;
    }
    return bestCpu;
  }

  std::vector<int> idleAllowed(TaskId t, int except = -1) const {
    std::vector<int> out;
    for (int c = 0; c < m_e->cpuCount(); ++c)
      if (c != except && cpuIdle(c) && m_e->allowed(t, c)) out.push_back(c);
    return out;
  }

  bool reschedBestIdle(TaskId t) {
    const auto mask = idleAllowed(t);
    if (mask.empty()) return false;
    const int tcpu = m_e->taskCpu(t);
    const int best = bestMaskCpu(tcpu, tcpu, mask);
    if (!smtShouldSchedule(t, best)) return false;
    m_e->resched(best);
    return true;
  }
  void reschedSuitableIdle(TaskId t) {
    if (suitableIdle(t)) reschedBestIdle(t);
  }
  void reschedClosestIdle(int cpu, TaskId t) {
    const auto mask = idleAllowed(t, cpu);
    if (mask.empty()) return;
    m_e->resched(bestMaskCpu(cpu, cpu, mask));
  }

  // swap_sticky(): a task preempted with other work queued sticks to its CPU;
  // the CPU's previous sticky task is released and an idle CPU kicked for it.
  void swapSticky(int cpu, TaskId p) {
    RqMirror& rq = m_rq[static_cast<size_t>(cpu)];
    if (rq.sticky != kNoTask) {
      if (rq.sticky == p) {
        m_ts[p].sticky = true;
        return;
      }
      if (m_ts[rq.sticky].sticky) {
        m_ts[rq.sticky].sticky = false;
        reschedClosestIdle(cpu, rq.sticky);
      }
    }
    if (!isRt(p)) {
      m_ts[p].sticky = true;
      rq.sticky = p;
    } else {
      reschedClosestIdle(cpu, p);
      rq.sticky = kNoTask;
    }
  }
  void unstickTask(int cpu, TaskId p) {
    m_rq[static_cast<size_t>(cpu)].sticky = kNoTask;
    m_ts[p].sticky = false;
  }

  bool canPreempt(TaskId t, int prio, int64_t deadline) const {
    const TaskSched& s = m_ts[t];
    if (s.prio < prio) return true;
    if (s.prio > prio) return false;
    return s.deadline < deadline;
  }

  // try_preempt(): an idle CPU if any, else the CPU running the lowest
  // priority (latest deadline among equals) if the woken task beats it.
  void tryPreempt(TaskId t) {
    m_ts[t].sticky = false;
    if (suitableIdle(t) && reschedBestIdle(t)) return;
    if (policyOf(t) == SchedPolicy::Idle) return;  // IDLEPRIO never preempts a busy CPU
    if (m_variant == Variant::Gc) {
      int target = -1;
      uint64_t worst = 0;
      for (int c = 0; c < m_e->cpuCount(); ++c) {
        if (!m_e->allowed(t, c)) continue;
        const uint64_t pd = runningPriodl(c);
        if (target < 0 || pd > worst) target = c, worst = pd;
      }
      if (target < 0 || !smtShouldSchedule(t, target)) return;
      if (priodl(t) < worst) m_e->resched(target);
      return;
    }
    int highest = -1;
    int highestPrio = 0;
    int64_t latestDeadline = 0;
    for (int c = 0; c < m_e->cpuCount(); ++c) {
      if (!m_e->allowed(t, c)) continue;
      const RqMirror& rq = m_rq[static_cast<size_t>(c)];
      if (rq.prio < highestPrio) continue;
      if (rq.prio > highestPrio || rq.deadline > latestDeadline) {
        latestDeadline = rq.deadline;
        highestPrio = rq.prio;
        highest = c;
      }
    }
    if (highest < 0 || !smtShouldSchedule(t, highest)) return;
    if (canPreempt(t, highestPrio, m_rq[static_cast<size_t>(highest)].deadline)) m_e->resched(highest);
  }

  std::set<RtKey> m_rt;
  std::array<std::set<Key>, 3> m_levels;  // ISO, NORMAL, IDLEPRIO
  int64_t m_qnr = 0;
  uint64_t m_seq = 0;
  std::vector<std::vector<int>> m_packageCpus;
};

// --- VRQ 0.89: per-CPU queues ordered by priodl ---

class VrqPolicy final : public BfsFamily {
 public:
  explicit VrqPolicy(const Params& p) : BfsFamily(p, Variant::Vrq) {}
  std::string_view name() const override { return "vrq"; }

  void attach(Engine& e) override {
    BfsFamily::attach(e);
    m_queues.assign(static_cast<size_t>(e.cpuCount()), {});
  }

  void taskNew(TaskId t, TaskId parent) override {
    TaskSched& s = m_ts[t];
    s = TaskSched();
    if (parent == kNoTask) {
      timeSliceExpired(t);
      return;
    }
    // sched_fork(): the child's deadline is just before the parent's so it runs
    // first; it keeps the slice copied from the parent (split only for FIFO,
    // as the 0.89 source has it).
    const TaskSched& p = m_ts[parent];
    s.deadline = p.deadline - kMinVisibleDeadline;
    s.timeSlice = p.timeSlice;
    if (policyOf(t) == SchedPolicy::Fifo) {
      RqMirror& prq = m_rq[static_cast<size_t>(m_e->taskCpu(parent))];
      prq.timeSlice /= 2;
      s.timeSlice = prq.timeSlice;
      if (s.timeSlice < kReschedUs) timeSliceExpired(t);
    }
  }

  int selectCpu(TaskId t, uint32_t flags, int /*wakerCpu*/) override {
    if (flags & kWakeInitial) {
      const int c = m_e->taskCpu(t);
      if (m_e->allowed(t, c)) return c;
    }
    // Sync wakeups only look for an idle CPU; the fork path never counts as sync.
    int cpu = preemptibleCpu(t, (flags & kWakeSync) != 0 && !(flags & kWakeFork));
    if (cpu < 0) cpu = balanceCpu(t);
    return cpu;
  }

  void enqueue(int cpu, TaskId t, uint32_t /*flags*/) override { enqueueTask(cpu, t); }

  void checkPreemptWakeup(int cpu, TaskId t, uint32_t /*flags*/) override {
    if (priodl(t) < runningPriodl(cpu)) m_e->resched(cpu);
  }

  void dequeue(int /*cpu*/, TaskId /*t*/, bool /*dying*/) override {}

  TaskId pickNext(int cpu, TaskId prev, bool prevRunnable) override {
    RqMirror& rq = m_rq[static_cast<size_t>(cpu)];
    const int64_t now = m_e->now();
    const int64_t lastTick = m_e->lastTick(cpu);
    rq.dither = lastTick >= 0 && now - lastTick < halfJiffyNs();
    TaskId prefer = kNoTask;
    if (prev != kNoTask) {
      account(cpu);
      TaskSched& p = m_ts[prev];
      p.timeSlice = rq.timeSlice;
      checkDeadline(prev);
      p.lastRan = now;
      if (prevRunnable) prefer = prev;
    }
    // The still-runnable prev is preferred; the local head replaces it only
    // with a smaller priodl.
    auto& q = m_queues[static_cast<size_t>(cpu)];
    TaskId next = prefer;
    if (!q.empty() && (prefer == kNoTask || q.begin()->priodl < priodl(prefer))) {
      next = q.begin()->id;
      erase(cpu, next);
    }
    if (next == kNoTask) next = takeOtherRqTask(cpu);
    if (next != prefer && prefer != kNoTask) enqueueTask(cpu, prefer);
    setRqTask(cpu, next);
    return next;
  }

 private:
  struct Key {
    uint64_t priodl;
    uint64_t seq;
    uint32_t id;
    bool operator<(const Key& o) const { return priodl != o.priodl ? priodl < o.priodl : seq < o.seq; }
  };

  void enqueueTask(int cpu, TaskId t) {
    TaskSched& s = m_ts[t];
    s.prio = effectivePrio(t, cpu);
    s.seq = ++m_seq;
    s.queued = true;
    m_queues[static_cast<size_t>(cpu)].insert({priodl(t), s.seq, t});
  }
  void erase(int cpu, TaskId t) {
    TaskSched& s = m_ts[t];
    m_queues[static_cast<size_t>(cpu)].erase({priodl(t), s.seq, t});
    s.queued = false;
  }

  // best_mask_cpu() of VRQ: the task's CPU if in the mask, else the first CPU
  // of the nearest level (SMT siblings, package, any).
  int bestMaskCpu(int cpu, const std::vector<int>& mask) const {
    if (std::find(mask.begin(), mask.end(), cpu) != mask.end()) return cpu;
    for (int level = 1; level <= 3; ++level)
      for (int c : mask)
        if (m_e->locality(cpu, c) == level) return c;
    return mask.front();
  }

  // task_preemptible_rq(): an idle CPU, else the first CPU (in CPU order) whose
  // running priodl the task beats. Choice: an idle CPU that already has a task
  // queued for it (woken in the same instant, not yet scheduled) no longer
  // counts as idle, as it would not by the time a real wakeup comes.
  int preemptibleCpu(TaskId t, bool onlyIdle) const {
    std::vector<int> idle;
    for (int c = 0; c < m_e->cpuCount(); ++c)
      if (m_e->allowed(t, c) && cpuIdle(c) && m_queues[static_cast<size_t>(c)].empty()) idle.push_back(c);
    if (!idle.empty()) return bestMaskCpu(m_e->taskCpu(t), idle);
    if (onlyIdle || policyOf(t) == SchedPolicy::Idle) return -1;
    const uint64_t pd = priodlFor(t);
    for (int c = 0; c < m_e->cpuCount(); ++c)
      if (m_e->allowed(t, c) && pd < runningPriodl(c)) return c;
    return -1;
  }
  // task_balance_rq(): the allowed CPU with the fewest queued tasks.
  int balanceCpu(TaskId t) const {
    int best = -1;
    size_t fewest = SIZE_MAX;
    for (int c = 0; c < m_e->cpuCount(); ++c) {
      if (!m_e->allowed(t, c)) continue;
      const size_t n = m_queues[static_cast<size_t>(c)].size();
      if (n < fewest) best = c, fewest = n;
      if (n == 0) break;
    }
    return best < 0 ? m_e->taskCpu(t) : best;
  }
  // The priodl a waking task will have once queued (its level is decided at enqueue).
  uint64_t priodlFor(TaskId t) const {
    const int prio = const_cast<VrqPolicy*>(this)->effectivePrio(t, m_e->taskCpu(t));
    const bool noDeadline = prio < kNormalPrio;
    return (static_cast<uint64_t>(prio) << 56) | (noDeadline ? 0 : static_cast<uint64_t>(m_ts[t].deadline) >> 8);
  }

  // take_other_rq_task(): an idle CPU pulls the first queue head (in CPU order)
  // that may run on it. Choice: CPU order is ascending from CPU 0
  // (docs/models.md §2.3 says "in order").
  TaskId takeOtherRqTask(int cpu) {
    for (int c = 0; c < m_e->cpuCount(); ++c) {
      if (c == cpu) continue;
      auto& q = m_queues[static_cast<size_t>(c)];
      if (q.empty()) continue;
      const TaskId head = q.begin()->id;
      if (!m_e->allowed(head, cpu)) continue;
      erase(c, head);
      return head;
    }
    return kNoTask;
  }

  std::vector<std::set<Key>> m_queues;
  uint64_t m_seq = 0;
};

}  // namespace

void defineParams(Params& p, Variant v) {
  p.defineInt("rr_interval", 6, 1, 1000,
              "kernel.rr_interval in BFS ms (2^20 ns): the slice every task gets (6 -> 6.29 ms); not scaled by "
              "CPU count in 0.463");
  p.defineInt("iso_cpu", 70, 0, 100,
              "sched_iso_cpu: percent of CPU SCHED_ISO (and RT) tasks may use over the ISO period before ISO "
              "tasks run as SCHED_NORMAL (refractory until below iso_cpu x 115/128)");
  p.defineBool("unprivileged_rt", false,
               "treat the workload's SCHED_FIFO/RR tasks as unprivileged requests, which BFS runs as SCHED_ISO "
               "(traced RT tasks are kernel threads, hence privileged, by default)");
  if (v != Variant::Vrq) {
    p.defineBool("smt_nice", true,
                 "CONFIG_SMT_NICE: keep a lower-priority user task off an SMT thread whose sibling runs a "
                 "higher-priority one (25% dither). Choice: a denied task waits for the next natural reschedule "
                 "(docs/models.md §1.10 notes check_smt_siblings may do nothing on 2-way SMT)");
    p.defineChoice("smt_bias", "static", {"static", "cycling"},
                   "the SMT-nice bias of a normal task: 'static' = 20 - nice as task_prio_bias() has it in the "
                   "0.463 source read (kernelOfTruth/linux bfs.c); 'cycling' = docs/models.md §1.10's bias that "
                   "counts down 20-nice..1 at each slice expiry");
  }
}

std::unique_ptr<Policy> make(const Params& params, Variant variant) {
  if (variant == Variant::Vrq) return std::make_unique<VrqPolicy>(params);
  return std::make_unique<GlobalQueuePolicy>(params, variant);
}

}  // namespace replay::bfs
