// Wakeup placement (select_task_rq) and load balancing of the fair class over
// the engine's scheduling domains (Engine::domains(): SMT, MC = LLC, PKG =
// NUMA node, NUMA = all CPUs, degenerate levels left out).
//
// Model (simplified from fair.c; also in the params' docs and docs/models.md §5.5):
// - Fork (find_idlest_cpu): from the top domain down, find_idlest_group() at
//   every level whose groups hold more than one CPU: the least busy group
//   (spare capacity before fully busy before overloaded; then the most idle
//   CPUs, or the lowest average load), the parent's own group unless another
//   is strictly better (by imbalance_pct on load); inside the last group the
//   allowed CPU with the fewest running tasks, then the lowest load, the
//   parent's CPU first so it wins ties. Measured on 6.18 (fork_lone_parent):
//   a parent alone on its CPU with util below 875 keeps the child there.
// - Exec (sched_exec): the same with the exec'ing task left out of its own
//   CPU; a move goes through the stopper (exec(), then pickNext()).
// - Wakeup (select_task_rq_fair): a woken task considers the waker's CPU (or
//   the CPU whose interrupt woke it) when a domain of it spans the task's
//   previous CPU (wake_affine; every
//   level is taken to have SD_WAKE_AFFINE, as on machines whose NUMA distances
//   are within node_reclaim_distance): the waker's CPU if it is idle and shares
//   the LLC with the previous CPU, or if the wakeup is sync and the waker is
//   alone there, the previous CPU if that is idle, else the one with the lower
//   instantaneous load, the previous CPU's load weighted by half the spanning
//   domain's imbalance_pct extra; then select_idle_sibling() in the target's
//   LLC: the target if idle, else the previous CPU if idle and in that LLC,
//   else the task's recent_used_cpu if idle there, else (unless SIS_UTIL's
//   nr_idle_scan, set from the LLC's PELT util at its periodic balance, is 0)
//   a fully idle core, else the first idle CPU among nr_idle_scan of the LLC
//   scanning from the target. "Idle" counts a CPU running only SCHED_IDLE
//   tasks. wake_wide() (wakee flips against the LLC's size) turns the affine step off for
//   many-to-many wakers. wake_affine_weight() compares the weights queued now,
//   or with wake_affine_load=pelt PELT load averages (fair_policy.cpp); the
//   balancer's loads are runnable weights.
// - Periodic balance: each busy CPU balances each of its domains every
//   interval x busy_factor (the interval is balance_interval_ms, or with 0 the
//   domain's CPU count in ms, as sd->balance_interval starts): it finds the
//   busiest other group of the domain by average load and, when that exceeds
//   its own group's by the domain's imbalance_pct (110 at SMT, the parameter
//   above), pulls queued fair tasks from the group's most loaded CPU, coldest
//   (least recently run) first, skipping tasks that ran within migration_cost_ns
//   unless more balance attempts at that domain failed than its
//   cache_nice_tries (2 at NUMA, else 1), until it has moved half the two CPUs'
//   load difference; a task heavier than what is left to move is skipped unless
//   earlier attempts failed (its weight is halved per failed attempt, as
//   nr_balance_failed does), which is what rotates equal CPU hogs.
// - Idle balance: a CPU about to go idle walks its domains innermost first and
//   pulls the coldest non-cache-hot queued task of the CPU with the most
//   queued tasks among those the domain adds, stopping at the first pull; a
//   busy CPU with queued tasks kicks an idle CPU at its tick (nohz idle
//   balance) so that it does the same.
#include <algorithm>
#include <climits>
#include <cmath>
#include <utility>

#include "replay/policies/fair/fair_sched.h"

namespace replay::fair {

int FairPolicy::selectCpu(TaskId t, uint32_t flags, int wakerCpu) {
  const int prev = m_e->taskCpu(t);
  // A delayed task is still queued: try_to_wake_up() takes ttwu_runnable() on its CPU, no select_task_rq().
  if (isFair(t) && m_ents[t].delayed) return m_ts[t].rqCpu;
  if (flags & kWakeInitial) return m_e->allowed(t, prev) ? prev : firstAllowed(t);
  if (!isFair(t)) return selectRt(t, prev);
  if (flags & kWakeFork) return findIdlest(t, wakerCpu, Balance::Fork);
  int target = m_e->allowed(t, prev) ? prev : firstAllowed(t);
  const int self = wakerCpu;
  // An interrupt's wakeup is affine too (select_task_rq_fair() does not ask
  // in_task(); wake_affine_idle() handles the idle CPU it interrupted): the
  // task it interrupted is the one that records the wakee.
  bool wantAffine = true;
  const TaskId waker = m_e->curr(self);
  if (waker != kNoTask) {
    recordWakee(waker, t);
    wantAffine = !wakeWide(waker, t);
  }
  m_keptBusyWakee = kNoTask;
  if ((flags & kWakeIrq) && m_irqWakePack && keptOnBusyCpu(t, self, prev)) {
    m_keptBusyWakee = t;
    return self;
  }
  if (m_wakePack && packedWakeup(t, self, prev, true)) return self;
  if (wantAffine && self != prev && m_e->allowed(t, self) && spanningDomain(self, prev))
    target = wakeAffine(t, self, prev, (flags & kWakeSync) != 0);
  return selectIdleSibling(t, prev, target);
}

// wake_pack=measured: the kernel that recorded the fifth fidelity set
// (6.18.44-fc-v1272, booted with sched_vcpu_pack=15, which upstream does not
// have) wakes a task on its waker's busy vCPU rather than on its idle previous
// one once that has idled a while, if the waker's vCPU has room; and keeps a
// task that slept a while on its busy previous vCPU rather than send it to
// the idle one the idle search finds. Not always, but for a share of the
// wakeups that grows with the time.
// tools/experiments/idle-prev-wakeup.c measured that share for futex, pipe and
// softirq wakeups alike (docs/models.md 5.5). Per wakeup the replay draws it:
// the share is 1 / (1 + (H / time)^k), H the measured half-way point for the
// busy CPU's util, linear between the measured points; from 72% util on
// nothing moves (at 75%, 3 of 80 did at 100 ms of idle, none before).
//  - Idle previous CPU (measuredPackingShare): the time is that CPU's idle
//    time, k = 5. E.g. at 50% util 26%, 61% and 95% were measured at 4, 6 and
//    8 ms, and this gives 17%, 61% and 87%; at 62% 5% and 95% at 4 and 20 ms,
//    and this 1% and 97%. The curve is a logistic in the time's logarithm:
//    one in the idle time itself left about a percent at the tens of
//    microseconds a pipe ping-pong's CPU idles, where none moved (at 50% use,
//    0 of 240 at 100 and 500 us), and so put the pipe replays' two ends on one
//    CPU.
//  - Busy previous CPU (measuredStayShare): the time is how long the wakee
//    slept, not the idle CPU's idle time (a thread waking that CPU every
//    millisecond changed nothing), and the split is a step, k = 20: at 10%
//    util 0-2 of 40 stayed after 2 ms asleep, 33-35 after 3 ms, 39-40 from
//    4 ms; at 50% none up to 6 ms and 39-40 from 8 ms; at 62% none up to
//    8 ms, 0-39 at 10 ms, all at 20 ms.
namespace {

struct HalfWay {
  double util;
  double ms;
};

template <size_t N>
double measuredShare(const HalfWay (&measured)[N], double exponent, double util, double ms) {
  if (util >= measured[N - 1].util || ms <= 0) return 0;
  double halfWayMs = measured[0].ms;
  for (size_t i = 1; i < N; ++i)
    if (util < measured[i].util) {
      const HalfWay& a = measured[i - 1];
      const HalfWay& b = measured[i];
      halfWayMs = a.ms + (b.ms - a.ms) * (std::max(util, 0.0) - a.util) / (b.util - a.util);
      break;
    }
  return 1 / (1 + std::pow(halfWayMs / ms, exponent));
}

}  // namespace

double measuredPackingShare(double util, double idleMs) {
  static constexpr HalfWay kMeasured[] = {{0.0, 4.0},  {0.10, 4.0},  {0.25, 3.5},
                                          {0.50, 5.5}, {0.62, 10.0}, {0.72, 40.0}};
  return measuredShare(kMeasured, 5, util, idleMs);
}

double measuredStayShare(double util, double sleptMs) {
  // 62% to 72% is not measured in this case: the idle previous CPU's rise is kept.
  static constexpr HalfWay kMeasured[] = {{0.0, 2.9},  {0.10, 2.9},  {0.25, 3.0},
                                          {0.50, 7.0}, {0.62, 10.0}, {0.72, 40.0}};
  return measuredShare(kMeasured, 20, util, sleptMs);
}

bool FairPolicy::busyBesideIdle(TaskId t, int busy, int idle) const {
  return busy != idle && !m_e->idle(busy) && m_e->idle(idle) && availableIdle(idle) && m_e->allowed(t, busy) &&
         spanningDomain(busy, idle);
}

bool FairPolicy::packedWakeup(TaskId t, int busy, int idle, bool idleIsPrevious) const {
  if (!busyBesideIdle(t, busy, idle)) return false;
  const double util = cpuUtil(busy) / 1024.0;
  const double share =
      idleIsPrevious ? measuredPackingShare(util, static_cast<double>(m_e->now() - m_e->switchedAt(idle)) / 1e6)
                     : measuredStayShare(util, static_cast<double>(m_e->now() - m_ents[t].lastRan) / 1e6);
  // No draw where nothing can move: the draws that follow stay as they were.
  return share > 0 && m_e->drawPolicyChance() < share;
}

bool FairPolicy::keptOnBusyCpu(TaskId t, int busy, int prev) const {
  const Task& task = m_e->task(t);
  if (task.irqWakeupsBesideIdle < kMinIrqWakeupsBesideIdle || task.irqWakeupsKeptBusy == 0) return false;
  if (!busyBesideIdle(t, busy, prev)) return false;
  return m_e->drawPolicyChance() < static_cast<double>(task.irqWakeupsKeptBusy) / task.irqWakeupsBesideIdle;
}

// sched_exec(): select_task_rq_fair() with WF_EXEC, the find_idlest_cpu() of
// forks with the task left out of its own CPU (ownCpuView()). A move goes
// through the stopper: the CPU reschedules, and its pickNext() moves the task,
// queued again by then. RT tasks stay (select_task_rq_rt() ignores WF_EXEC).
void FairPolicy::exec(int cpu, TaskId t) {
  if (!isFair(t)) return;
  const int dest = findIdlest(t, cpu, Balance::Exec);
  if (dest == cpu) return;
  m_ts[t].execDest = dest;
  m_e->resched(cpu);
}

void FairPolicy::balance(int cpu) {
  Rq& r = rq(cpu);
  if (m_nohzKick && nrRunning(cpu) >= 2) {
    // nohz_balancer_kick(): wake an idle CPU that can take one of our queued tasks.
    const int n = m_e->cpuCount();
    for (int i = 1; i < n; ++i) {
      const int c = (cpu + i) % n;
      if (!m_e->online(c) || nrRunning(c) != 0) continue;
      if (hasMovableFor(cpu, c)) {
        rq(c).nohzKicked = true;
        m_e->resched(c);
        break;
      }
    }
  }
  // rebalance_domains() counts its intervals in jiffies: a tick that runs late
  // (tick_delay_ns) must not push a domain's balance to the tick after.
  const int64_t jiffies = m_e->jiffiesNs();
  const auto& domains = m_e->domains(cpu);
  r.sd.resize(domains.size());
  for (size_t level = 0; level < domains.size(); ++level) {
    if (!balanceDue(r.sd[level], *domains[level], jiffies, m_busyFactor)) continue;
    r.sd[level].last = jiffies;
    loadBalance(cpu, level);
  }
}

// sd_init(): SMT domains balance at 110%, the others at the parameter's 117%.
int64_t FairPolicy::imbalancePct(const Engine::SchedDomain& d) const { return d.level == 1 ? 110 : m_imbalancePct; }

bool FairPolicy::balanceDue(const Rq::DomainBalance& sd, const Engine::SchedDomain& d, int64_t jiffies,
                             int64_t busyFactor) const {
  return sd.last == Rq::DomainBalance::kNever || jiffies >= sd.last + balanceIntervalMs(d) * 1'000'000 * busyFactor;
}

int64_t FairPolicy::balanceIntervalMs(const Engine::SchedDomain& d) const {
  return m_balanceIntervalMs > 0 ? m_balanceIntervalMs : static_cast<int64_t>(d.cpus.size());
}

// The innermost domain of `cpu` that also spans `other` (nullptr: none does).
const Engine::SchedDomain* FairPolicy::spanningDomain(int cpu, int other) const {
  const int distance = m_e->locality(cpu, other);
  for (const Engine::SchedDomain* d : m_e->domains(cpu))
    if (d->level >= distance) return d;
  return nullptr;
}

// --- placement ---
int FairPolicy::findIdlest(TaskId t, int fromCpu, Balance why) const {
  // find_idlest_group_cpu() skips CPUs whose core runs another cookie; with
  // none left, find_idlest_cpu() keeps the task where it is.
  if (m_csActive) {
    bool anyMatch = false;
    for (int c = 0; c < m_e->cpuCount() && !anyMatch; ++c) anyMatch = m_e->allowed(t, c) && coreCookieMatch(c, t);
    if (!anyMatch) return m_e->allowed(t, fromCpu) ? fromCpu : firstAllowed(t);
  }
  const CpuView own = ownCpuView(t, fromCpu, why);
  // Narrow the candidates from the whole machine down, group by group.
  const auto& domains = m_e->domains(fromCpu);
  std::vector<int> candidates;
  if (domains.empty()) {
    candidates.push_back(fromCpu);
  } else {
    candidates = domains.back()->cpus;
    int from = fromCpu;  // the CPU whose domains we descend: the task's own, then the chosen group's
    for (size_t level = domains.size(); level-- > 0;) {
      const Engine::SchedDomain* d = nullptr;
      for (const Engine::SchedDomain* sd : m_e->domains(from))
        if (sd->cpus == candidates) d = sd;
      if (!d || d->groups.front().size() == 1) break;  // single-CPU groups: the CPU choice below
      const std::vector<int>* chosen = idlestGroup(t, *d, from, own);
      candidates = *chosen;
      if (std::find(chosen->begin(), chosen->end(), from) == chosen->end()) from = chosen->front();
    }
  }
  int best = -1;
  int bestNr = INT_MAX;
  int64_t bestLoad = INT64_MAX;
  const int n = m_e->cpuCount();
  for (int i = 0; i < n; ++i) {
    const int c = (fromCpu + i) % n;  // the task's own CPU first: it wins ties
    if (!m_e->allowed(t, c) || !coreCookieMatch(c, t)) continue;
    if (std::find(candidates.begin(), candidates.end(), c) == candidates.end()) continue;
    const int nr = c == own.cpu ? own.nr : nrRunning(c);
    const int64_t ld = c == own.cpu ? own.load : load(c);
    if (nr < bestNr || (nr == bestNr && ld < bestLoad)) best = c, bestNr = nr, bestLoad = ld;
  }
  return best < 0 ? (m_e->allowed(t, fromCpu) ? fromCpu : firstAllowed(t)) : best;
}

// How fork and exec balancing see the CPU the task asks from. fair.c as read:
// a forking parent's CPU counts the parent; an exec'ing task is left out of its
// own CPU (task_running_on_cpu(), cpu_load_without()), which counts as idle if
// nothing else is there (measured so, tools/experiments/fork-placement.c).
// Measured on Linux 6.18.44 and not in fair.c as read (fork_lone_parent,
// docs/models.md 5.5): the CPU of a parent that runs alone there counts as
// idle while its util is below capacity x 100 / imbalance_pct (as
// group_has_capacity() reads it), even with another CPU idle. The replay's
// util starts at 0, a guess about the time before the trace, so that rule
// waits until four PELT half-lives have made the guess weigh less than 1/16.
FairPolicy::CpuView FairPolicy::ownCpuView(TaskId t, int cpu, Balance why) const {
  constexpr int64_t kPeltSettleNs = 4 * 32 * 1'024'000;
  const CpuView counted{cpu, nrRunning(cpu), load(cpu), availableIdle(cpu)};
  const TaskId asking = why == Balance::Exec ? t : m_e->task(t).parent;
  if (asking == kNoTask || m_e->curr(cpu) != asking) return counted;  // an rt-app arrival: no parent running
  if (why == Balance::Fork) {
    const bool lone = m_forkLoneParent && counted.nr == 1 && m_e->now() - m_startNs >= kPeltSettleNs;
    const bool spare = lone && utilOfTasksHere(cpu) * static_cast<double>(m_imbalancePct) < 1024.0 * 100;
    return spare ? CpuView{cpu, 0, 0, true} : counted;
  }
  const int others = counted.nr - 1;
  return {cpu, others, counted.load - m_ents[t].weight, others == 0};
}

// find_idlest_group(): group_has_spare < group_fully_busy < group_overloaded,
// then the most idle CPUs (spare) or the lowest average load (busy). The group
// of `local` stays unless the idlest other group is of a less busy type, has
// more idle CPUs, or is less loaded by more than imbalance_pct. `own` is the
// asking task's CPU as ownCpuView() sees it.
const std::vector<int>* FairPolicy::idlestGroup(TaskId t, const Engine::SchedDomain& d, int local,
                                                 const CpuView& own) const {
  struct Stats {
    int type = 0;  // 0 has spare, 1 fully busy, 2 overloaded
    int idle = 0;
    int64_t avgLoad = 0;
    bool allowed = false;
  };
  auto statsOf = [&](const std::vector<int>& g) {
    Stats s;
    int nr = 0;
    int64_t ld = 0;
    for (int c : g) {
      const bool ownCpu = c == own.cpu;
      nr += ownCpu ? own.nr : nrRunning(c);
      ld += ownCpu ? own.load : load(c);
      s.idle += ownCpu ? own.idle : availableIdle(c);
      s.allowed = s.allowed || (m_e->allowed(t, c) && coreCookieMatch(c, t));
    }
    const int size = static_cast<int>(g.size());
    s.type = nr < size ? 0 : nr == size ? 1 : 2;
    s.avgLoad = ld * 1024 / size;
    return s;
  };
  const std::vector<int>* localGroup = nullptr;
  const std::vector<int>* idlest = nullptr;
  Stats localStats, idlestStats;
  for (const auto& g : d.groups) {
    const Stats s = statsOf(g);
    if (std::find(g.begin(), g.end(), local) != g.end()) {
      localGroup = &g;
      localStats = s;
      continue;
    }
    if (!s.allowed) continue;
    const bool better = !idlest || s.type < idlestStats.type ||
                        (s.type == idlestStats.type &&
                         (s.type == 0 ? s.idle > idlestStats.idle : s.avgLoad < idlestStats.avgLoad));
    if (better) idlest = &g, idlestStats = s;
  }
  if (!idlest) return localGroup ? localGroup : &d.groups.front();
  if (!localGroup || !localStats.allowed) return idlest;
  if (localStats.type != idlestStats.type) return localStats.type < idlestStats.type ? localGroup : idlest;
  if (localStats.type == 0) return localStats.idle >= idlestStats.idle ? localGroup : idlest;
  return 100 * localStats.avgLoad <= imbalancePct(d) * idlestStats.avgLoad ? localGroup : idlest;
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
  // wake_affine_idle(): an idle waker CPU draws the wakee only within the LLC.
  if (availableIdle(self) && m_e->locality(self, prev) <= 2) return availableIdle(prev) ? prev : self;
  // The waker alone on its CPU (6.18 does not count delayed tasks).
  if (sync && nrRunning(self) - (syncAffineIgnoresDelayed() ? m_rqs[static_cast<size_t>(self)].delayed : 0) == 1) return self;
  if (availableIdle(prev)) return prev;
  // wake_affine_weight(): PELT loads as the kernel compares them (or the weights queued now).
  const Engine::SchedDomain* affine = spanningDomain(self, prev);
  const int64_t pct = affine ? imbalancePct(*affine) : m_imbalancePct;
  const TaskId waker = m_e->curr(self);
  const bool fairWaker = waker != kNoTask && isFair(waker);
  if (m_peltWakeAffine) {
    const double taskLoad = taskLoadAvg(t);
    double thisEff = cpuLoadAvg(self);
    if (sync) {
      // current's load is kept up to date while it runs (update_load_avg() at every update_curr()).
      const double currentLoad = fairWaker ? runningTaskLoadAvg(waker) : 0;
      if (currentLoad > thisEff) return self;
      thisEff -= currentLoad;
    }
    thisEff = (thisEff + taskLoad) * 100;
    double prevEff = (cpuLoadAvg(prev) - taskLoad) * static_cast<double>(100 + (pct - 100) / 2);
    if (sync) prevEff += 1;
    return thisEff < prevEff ? self : prev;
  }
  const int64_t taskLoad = m_ents[t].weight;
  int64_t thisEff = load(self);
  if (sync) {
    const int64_t currentLoad = fairWaker ? m_ents[waker].weight : 0;
    if (currentLoad > thisEff) return self;
    thisEff -= currentLoad;
  }
  thisEff = (thisEff + taskLoad) * 100;
  int64_t prevEff = std::max<int64_t>(0, load(prev) - taskLoad) * (100 + (pct - 100) / 2);
  if (sync) prevEff += 1;
  return thisEff < prevEff ? self : prev;
}

int FairPolicy::selectIdleSibling(TaskId t, int prev, int target) {
  if (m_e->allowed(t, target) && availableIdle(target)) return target;
  if (prev != target && m_e->allowed(t, prev) && m_e->locality(prev, target) <= 2 && availableIdle(prev)) return prev;
  // The CPU it was on before prev, if idle: kept from wakeup to wakeup.
  const int recent = std::exchange(m_ts[t].recentUsedCpu, prev);
  // wake_pack: the search's idle CPU may lose to a busy target, by the wakee's sleep.
  const auto found = [&](int idle) { return m_wakePack && packedWakeup(t, target, idle, false) ? target : idle; };
  if (recent >= 0 && recent != prev && recent != target && m_e->locality(recent, target) <= 2 &&
      m_e->allowed(t, recent) && availableIdle(recent))
    return found(recent);
  // select_idle_cpu(): SIS_UTIL's budget of CPUs to look at (none: the LLC is
  // too busy to be worth a scan).
  int budget = m_sisUtil ? rq(target).nrIdleScan : INT_MAX;
  const int n = m_e->cpuCount();
  if (budget > 0 && m_e->topology().hasSmt()) {
    // select_idle_core(): a core whose every thread is idle.
    for (int i = 1; i <= n; ++i) {
      const int c = (target + i) % n;
      if (!m_e->allowed(t, c) || m_e->locality(c, target) > 2 || !availableIdle(c)) continue;
      bool coreIdle = true;
      for (int s : m_e->siblings(c)) coreIdle &= availableIdle(s);
      if (coreIdle) return found(c);
    }
  }
  for (int i = 1; i <= n && budget > 0; ++i) {
    const int c = (target + i) % n;
    if (!m_e->allowed(t, c) || m_e->locality(c, target) > 2) continue;
    --budget;
    if (availableIdle(c) && cpuCookieMatch(c, t)) return found(c);
  }
  if (m_e->allowed(t, target)) return target;
  return m_e->allowed(t, prev) ? prev : firstAllowed(t);
}

// update_idle_cpu_scan(), at a periodic balance of the domain that spans the
// LLC: y = 1 - (x * pct / 100)^2 of the LLC's CPUs, x the summed util over
// the LLC's capacity, so the scan stops at 100/pct (85% with 117).
void FairPolicy::updateIdleScan(const Engine::SchedDomain& d) {
  double sumUtil = 0;
  for (int c : d.cpus) sumUtil += cpuUtil(c);
  const auto weight = static_cast<int64_t>(d.cpus.size());
  const int64_t x = static_cast<int64_t>(sumUtil) / weight;
  const int64_t pct = imbalancePct(d);
  const int64_t tmp = std::min<int64_t>(x * x * pct * pct / (10000 * 1024), 1024);
  const auto scan = static_cast<int>((1024 - tmp) * weight / 1024);
  for (int c : d.cpus) rq(c).nrIdleScan = scan;
}

bool FairPolicy::hasMovableFor(int from, int to) const {
  const Rq& r = m_rqs[static_cast<size_t>(from)];
  if (anyWaitingTask(from, [&](uint32_t t) { return !m_ents[t].delayed && m_e->allowed(t, to); })) return true;
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
  FairRq& from = cfsRqOf(src, t);
  if (m_variant == Variant::Eevdf) {
    updateEntityLag(from, t);
    if (m_placeRelDeadline) {  // a dequeue that is not a sleep keeps the request relative
      e.relDeadline = e.deadline - e.vruntime;
      e.hasRelDeadline = true;
    }
  }
  clearBuddies(from, t);
  from.treeErase(m_ents, t);
  removeFromRq(s, t);
  if (m_variant == Variant::Cfs) e.vruntime -= from.minVruntime;
  from.updateMinVruntime(m_ents);
  const int g = groupOf(t);
  if (g >= 0) groupLeft(src, g, false);
  m_e->moveQueued(t, dst);
  m_ts[t].rqCpu = dst;
  updateCurr(dst);
  if (m_variant == Variant::Cfs)
    e.vruntime += d.cfs.minVruntime;
  else
    placeEevdf(cfsRqOf(dst, t), t, false);
  addToRq(d, t);
  if (g >= 0) enqueueGroupEntity(dst, g);
  if (checkPreempt) checkPreemptWakeup(dst, t, 0);
  leftForcedIdleCpu(src);
}

// task_hot(): ran recently, or (core scheduling) its cookie does not match the
// destination core's, which balancing treats like a cache-hot task.
bool FairPolicy::cacheHot(uint32_t t, int dst) const {
  return m_e->now() - m_ents[t].lastRan < m_migrationCost || !coreCookieMatch(dst, t);
}

// can_migrate_task()'s cache rule for a balance that counts its failures: a
// cache-hot task stays until more attempts at the domain have failed than its
// cache_nice_tries (2 at NUMA, else 1).
bool FairPolicy::keptForCache(uint32_t t, int dst, const Rq::DomainBalance& sd, const Engine::SchedDomain& d) const {
  const int cacheNiceTries = d.level == 4 ? 2 : 1;
  return cacheHot(t, dst) && sd.failed <= cacheNiceTries;
}

// Queued fair tasks of `src` that may run on `dst`, coldest first.
std::vector<uint32_t> FairPolicy::movable(int src, int dst) const {
  std::vector<uint32_t> out;
  // Delayed tasks sleep as far as the engine knows; 6.14+ balancing leaves them too.
  anyWaitingTask(src, [&](uint32_t t) {
    if (!m_ents[t].delayed && m_e->allowed(t, dst)) out.push_back(t);
    return false;
  });
  std::sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) {
    return m_ents[a].lastRan != m_ents[b].lastRan ? m_ents[a].lastRan < m_ents[b].lastRan : a < b;
  });
  return out;
}

// The CPU an idle `cpu` pulls from at a domain: the one with the most queued
// fair tasks among the CPUs it adds to the domain below (those nearer than
// `inner` were tried there).
int FairPolicy::idlePullSource(int cpu, int inner, int level) const {
  const int n = m_e->cpuCount();
  int src = -1;
  size_t most = 0;
  for (int i = 1; i < n; ++i) {
    const int c = (cpu + i) % n;
    const int distance = m_e->locality(cpu, c);
    if (distance <= inner || distance > level) continue;
    // detach_tasks() takes nothing from a runqueue of one task (nr_running
    // <= 1, the current one included): a wakee queued on a CPU that is still
    // leaving idle stays there.
    const size_t q = fairWaiting(c);
    if (q > most && nrRunning(c) >= 2 && hasMovableFor(c, cpu)) src = c, most = q;
  }
  return src;
}

// A CPU about to go idle (its pick found no task): the newidle pull, or,
// when a busy CPU's tick kicked it (nohz_balancer_kick()), the nohz idle
// balance, which it runs once the kick's IPI reaches it: after the busy CPU
// has switched at that tick.
void FairPolicy::idleBalance(int cpu) {
  if (std::exchange(rq(cpu).nohzKicked, false))
    nohzIdleBalance(cpu);
  else
    newidleBalance(cpu);
}

void FairPolicy::newidleBalance(int cpu) {
  int inner = 0;  // locality of the CPUs the previous domain already covered
  for (const Engine::SchedDomain* d : m_e->domains(cpu)) {
    const int src = idlePullSource(cpu, inner, d->level);
    inner = d->level;
    if (src < 0) continue;
    for (uint32_t t : movable(src, cpu)) {
      if (cacheHot(t, cpu)) continue;
      moveFair(src, cpu, t);
      return;
    }
  }
}

// nohz_idle_balance(): rebalance_domains() as CPU_IDLE. Each domain balances
// at its own interval (an idle CPU's is not stretched by busy_factor); with
// the CPU idle, calculate_imbalance() asks the busiest group for a task
// (migrate_task: counts, not weights), and the attempt counts as a periodic
// balance's does: once more than cache_nice_tries have failed, a cache-hot
// task moves. A newidle pull never counts: two hogs taking turns on one CPU
// are each cache-hot when the kick lands, just after the tick switched them,
// and while the kick pulled as newidle the other CPU idled for good (129 ms
// of the 2026-12-07 nicemix perf.data's replay).
void FairPolicy::nohzIdleBalance(int cpu) {
  const int64_t jiffies = m_e->jiffiesNs();
  const auto& domains = m_e->domains(cpu);
  Rq& r = rq(cpu);
  r.sd.resize(domains.size());
  int inner = 0;
  for (size_t level = 0; level < domains.size(); ++level) {
    const Engine::SchedDomain& d = *domains[level];
    const int covered = inner;
    inner = d.level;
    Rq::DomainBalance& sd = r.sd[level];
    if (!balanceDue(sd, d, jiffies, 1)) continue;
    sd.last = jiffies;
    const int src = idlePullSource(cpu, covered, d.level);
    if (src < 0) continue;
    for (uint32_t t : movable(src, cpu)) {
      if (keptForCache(t, cpu, sd, d)) continue;
      moveFair(src, cpu, t);
      sd.failed = 0;
      return;
    }
    sd.failed = std::min(sd.failed + 1, 62);
  }
}

void FairPolicy::loadBalance(int cpu, size_t level) {
  Rq& r = rq(cpu);
  const Engine::SchedDomain& d = *m_e->domains(cpu)[level];
  Rq::DomainBalance& sd = r.sd[level];
  if (m_sisUtil && static_cast<int>(d.cpus.size()) == llcSize(cpu)) updateIdleScan(d);
  // find_busiest_group(): the other group with the highest average load.
  auto avgLoad = [&](const std::vector<int>& g) {
    int64_t ld = 0;
    for (int c : g) ld += load(c);
    return ld * 1024 / static_cast<int64_t>(g.size());
  };
  const std::vector<int>* busiestGroup = nullptr;
  int64_t busiestAvg = -1;
  int64_t localAvg = 0;
  for (const auto& g : d.groups) {
    if (std::find(g.begin(), g.end(), cpu) != g.end()) {
      localAvg = avgLoad(g);
      continue;
    }
    const bool queued = std::any_of(g.begin(), g.end(), [&](int c) { return fairWaiting(c) > 0; });
    if (queued && avgLoad(g) > busiestAvg) busiestGroup = &g, busiestAvg = avgLoad(g);
  }
  if (!busiestGroup) return;
  if (busiestAvg * 100 <= localAvg * imbalancePct(d)) {
    sd.failed = 0;
    return;
  }
  // find_busiest_queue(): its most loaded CPU with queued fair tasks.
  int busiest = -1;
  int64_t busiestLoad = -1;
  for (int c : *busiestGroup)
    if (fairWaiting(c) > 0 && load(c) > busiestLoad) busiest = c, busiestLoad = load(c);
  int64_t imbalance = (busiestLoad - load(cpu)) / 2;
  int moved = 0;
  // detach_tasks(): nothing from a runqueue of one task, and an idle puller
  // leaves the source one.
  const bool idle = m_e->curr(cpu) == kNoTask;
  const bool onlyOne = nrRunning(busiest) <= 1;
  for (uint32_t t : movable(busiest, cpu)) {
    if (onlyOne || imbalance <= 0 || moved >= 32 || (idle && nrRunning(busiest) <= 1)) break;
    if (keptForCache(t, cpu, sd, d)) continue;
    const int64_t w = hierarchicalWeight(busiest, t);
    if ((w >> std::min(sd.failed, 62)) > imbalance) continue;
    moveFair(busiest, cpu, t);
    imbalance -= w;
    ++moved;
  }
  sd.failed = moved ? 0 : std::min(sd.failed + 1, 62);
}

}  // namespace replay::fair
