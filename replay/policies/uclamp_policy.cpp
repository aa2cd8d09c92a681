#include "replay/policies/uclamp_policy.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "replay/sim/engine.h"

namespace replay::uclamp {

// --- Effective clamps (docs/models.md §4.1, §4.2, §4.6) ---

EffectiveClamps effectiveClamps(int requestMin, int requestMax, bool rt, const Sysctls& s) {
  EffectiveClamps e;
  e.min = requestMin >= 0 ? requestMin : (rt ? s.utilClampMinRtDefault : 0);
  e.max = requestMax >= 0 ? requestMax : kCapacity;
  // uclamp_eff_get(): "system default restrictions always apply".
  e.min = std::min(e.min, s.utilClampMin);
  e.max = std::min(e.max, s.utilClampMax);
  return e;
}

// --- Per-rq aggregation (docs/models.md §4.3) ---

UclampRq::UclampRq(int buckets) : m_buckets(std::clamp(buckets, 1, kCapacity)), m_delta(bucketDelta(m_buckets)) {
  for (PerId& id : m_ids) id.bucket.assign(static_cast<size_t>(m_buckets), Bucket{});
  // init_uclamp_rq(): MAX starts at uclamp_none(UCLAMP_MAX) with the rq idle.
  m_ids[static_cast<size_t>(ClampId::Max)].value = kCapacity;
}

int UclampRq::bucketDelta(int buckets) { return (kCapacity + buckets / 2) / buckets; }

int UclampRq::bucketId(int clampValue) const { return std::min(clampValue / m_delta, m_buckets - 1); }

void UclampRq::inc(const EffectiveClamps& task) {
  incId(ClampId::Min, task.min);
  incId(ClampId::Max, task.max);
  m_idle = false;  // uclamp_rq_inc() clears UCLAMP_FLAG_IDLE after both ids
}

void UclampRq::dec(const EffectiveClamps& task) {
  decId(ClampId::Min, task.min);
  decId(ClampId::Max, task.max);
}

void UclampRq::incId(ClampId id, int clampValue) {
  PerId& r = m_ids[static_cast<size_t>(id)];
  Bucket& b = r.bucket[static_cast<size_t>(bucketId(clampValue))];
  ++b.tasks;
  // uclamp_idle_reset(): the first task after idle resets the held value.
  if (m_idle) r.value = clampValue;
  // "Local max aggregation": a bucket tracks the max of the tasks that entered it.
  if (b.tasks == 1 || clampValue > b.value) b.value = clampValue;
  if (clampValue > r.value) r.value = clampValue;
}

void UclampRq::decId(ClampId id, int clampValue) {
  PerId& r = m_ids[static_cast<size_t>(id)];
  Bucket& b = r.bucket[static_cast<size_t>(bucketId(clampValue))];
  if (b.tasks > 0) --b.tasks;
  // Still refcounted: its value may stay above the remaining tasks' (over-boost).
  if (b.tasks > 0) return;
  if (b.value < r.value) return;
  // uclamp_rq_max_value(): the highest non-empty bucket.
  for (int i = m_buckets - 1; i >= 0; --i) {
    const Bucket& h = r.bucket[static_cast<size_t>(i)];
    if (h.tasks > 0) {
      r.value = h.value;
      return;
    }
  }
  // uclamp_idle_value(): MAX holds the last task's value until the next enqueue
  // (so a CPU waking a capped task does not flash to max), MIN drops to 0.
  if (id == ClampId::Max) {
    m_idle = true;
    r.value = clampValue;
  } else {
    r.value = 0;
  }
}

// --- Parameters ---

namespace {

constexpr const char* kDefaultOpps = "800000,1100000,1400000,1700000,2000000,2300000,2600000,3000000";
constexpr const char* kDefaultPower = "454,751,1133,1610,2190,2884,3702,5000";

core::Result<std::vector<int64_t>> parseList(const Params& params, const char* key) {
  const std::string& text = params.get(key);
  std::vector<int64_t> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    std::string item = text.substr(pos, comma - pos);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || end != item.c_str() + item.size() || v <= 0 || v > 1'000'000'000)
      return core::Error(std::string(key) + ": '" + item + "' is not a positive whole number (expected a comma list, " +
                         "e.g. " + (std::string(key) == "schedutil.opp_khz" ? kDefaultOpps : kDefaultPower) + ")");
    out.push_back(v);
    pos = comma + 1;
  }
  return out;
}

}  // namespace

void defineParams(Params& p) {
  p.defineText("uclamp.clamp", "",
               "per-task uclamp requests, as sched_setattr(SCHED_FLAG_UTIL_CLAMP_MIN/MAX) would set them: rules "
               "SELECTOR=MIN:MAX separated by ';' (SELECTOR: comm:REGEX, tgid:N, tid:N, all, rt, fair; MIN and MAX "
               "in 0..1024, either may be empty = not set), later rules winning, inherited across fork. Unset values "
               "take the class default: min 0 (fair) or sysctl.sched_util_clamp_min_rt_default (RT), max 1024. No "
               "cgroups are modelled: the effective clamp is the request capped by sysctl.sched_util_clamp_min/max. "
               "Here uclamp changes frequencies only: placement, preemption and picks stay the base model's "
               "(uclamp-aware placement, docs/models.md §4.5, is EAS and capacity fitting on asymmetric CPUs; replay "
               "topologies are symmetric, so it is not modelled)");
  p.defineInt("uclamp.buckets", 5, 5, 20,
              "CONFIG_UCLAMP_BUCKETS_COUNT: clamp buckets per runqueue; bucket delta = round(1024 / buckets) (205 for "
              "5). Tasks in one bucket share its max value while it is refcounted (the accepted over-boost)");
  p.defineChoice("uclamp.static_key", "auto", {"auto", "on"},
                 "sched_uclamp_used (5.9+): auto = enabled only when some task has a uclamp request or a "
                 "sched_util_clamp_* sysctl differs from its default, as if written; until then uclamp is a no-op "
                 "and schedutil runs any CPU with a runnable RT task at max. on = as if something else on the "
                 "machine had used uclamp: RT tasks are boosted only through their uclamp.min");
  p.defineInt("uclamp.rq_update_cost_ns", 0, 0, 1'000'000,
              "CPU time each enqueue and dequeue spends updating the runqueue's clamp buckets while uclamp is in "
              "use (docs/models.md §4.7: with the static key on, Qais Yousef measured activate/deactivate_task at "
              "2.3-4.6% of cycles against 0.1%, and -2.6% on `perf bench sched pipe`); charged to the CPU doing the "
              "enqueue (the waker's) or the dequeue. 0 = not modelled; about 50-100 ns reproduces that order of "
              "cost on a pipe ping-pong");
  p.defineInt("sysctl.sched_util_clamp_min", kCapacity, 0, kCapacity,
              "/proc/sys/kernel/sched_util_clamp_min: system-wide cap on every effective uclamp.min (must not exceed "
              "sched_util_clamp_max)");
  p.defineInt("sysctl.sched_util_clamp_max", kCapacity, 0, kCapacity,
              "/proc/sys/kernel/sched_util_clamp_max: system-wide cap on every effective uclamp.max");
  p.defineInt("sysctl.sched_util_clamp_min_rt_default", kCapacity, 0, kCapacity,
              "/proc/sys/kernel/sched_util_clamp_min_rt_default (5.9+): uclamp.min of RT (FIFO/RR) tasks that did "
              "not request one; 1024 runs the CPU at its top OPP whenever an RT task is runnable, 0 lets RT tasks "
              "run at the frequency their utilisation asks for");
  p.defineInt("pelt.halflife_ms", 32, 1, 1000,
              "PELT half-life in periods of 1024 us (32 -> 32.768 ms, the kernel's y^32 = 1/2). Modelled as "
              "continuous-time exponential averaging with that half-life, not in 1024-us steps; utilisation is "
              "frequency-invariant (running at f counts f / f_max of capacity). Per CPU: the sum of its attached "
              "fair tasks' util_avg (blocked tasks keep decaying there; moved on migration, removed on exit; a new "
              "task starts at half the CPU's spare capacity, post_init_entity_util_avg's cap) plus the RT class's "
              "running signal. No util_est, no IRQ or DL utilisation");
  p.defineText("schedutil.opp_khz", kDefaultOpps,
               "the CPUs' operating points (cpufreq frequency table), kHz, increasing. Default: an illustrative "
               "8-step laptop-class range from 0.8 to 3.0 GHz (not a specific CPU). The highest is "
               "cpuinfo.max_freq: frequency scale = f / max");
  p.defineText("schedutil.power_mw", kDefaultPower,
               "busy power of one CPU at each OPP, mW, same length as schedutil.opp_khz. Default: dynamic power "
               "C f V^2 with V rising linearly from 0.70 V at 0.8 GHz to 1.20 V at 3.0 GHz and C set for 5 W at "
               "3.0 GHz (illustrative, not measured)");
  p.defineDouble("schedutil.idle_power_mw", 50.0, 0.0, 1e6,
                 "power of an idle (or forced-idle) CPU, mW, at any OPP (a shallow C-state; order of magnitude only)");
  p.defineInt("schedutil.rate_limit_us", 1000, 0, 10'000'000,
              "rate_limit_us: a frequency domain changes frequency at most once per this interval (updates within "
              "it are dropped, sugov_should_update_freq). [U] default: cpufreq's 1000-us fallback "
              "(LATENCY_MULTIPLIER) before 6.8; intel_cpufreq uses 500, 6.8+ defaults to 2000");
  p.defineChoice("schedutil.domain", "core", {"cpu", "core", "all"},
                 "frequency domains (cpufreq policies): cpu = each CPU its own; core = the SMT threads of a core "
                 "share one (hardware cannot clock siblings apart; same as cpu without SMT); all = one policy for "
                 "every CPU. A shared domain runs at the max of its CPUs' requests (sugov_next_freq_shared)");
}

core::Status validateParams(const Params& params) {
  auto opps = parseList(params, "schedutil.opp_khz");
  if (!opps) return opps.error();
  auto power = parseList(params, "schedutil.power_mw");
  if (!power) return power.error();
  if (power->size() != opps->size())
    return core::Error("schedutil.power_mw has " + std::to_string(power->size()) + " values but schedutil.opp_khz " +
                       std::to_string(opps->size()) + " (one power per OPP)");
  for (size_t i = 1; i < opps->size(); ++i)
    if ((*opps)[i] <= (*opps)[i - 1])
      return core::Error("schedutil.opp_khz must be increasing (" + std::to_string((*opps)[i - 1]) + " then " +
                         std::to_string((*opps)[i]) + ")");
  if (params.getInt("sysctl.sched_util_clamp_min") > params.getInt("sysctl.sched_util_clamp_max"))
    return core::Error(
        "sysctl.sched_util_clamp_min is above sysctl.sched_util_clamp_max (the kernel refuses that "
        "write)");
  return core::Status();
}

// --- The decorator ---

namespace {

// A PELT signal in continuous time: each ns of input i moves util toward i by
// exp(-lambda) per ns; i = 1024 x frequency scale while running, 0 otherwise.
struct Pelt {
  double util = 0;
  int64_t last = 0;
  void advance(int64_t now, double input, double lambda) {
    if (now <= last) return;
    const double d = std::exp(-lambda * static_cast<double>(now - last));
    util = util * d + input * (1.0 - d);
    last = now;
  }
};

class UclampPolicy final : public Policy {
 public:
  UclampPolicy(std::unique_ptr<Policy> inner, const Params& p)
      : m_inner(std::move(inner)), m_name(std::string(m_inner->name()) + "+uclamp") {
    m_sysctls.utilClampMin = static_cast<int>(p.getInt("sysctl.sched_util_clamp_min"));
    m_sysctls.utilClampMax = static_cast<int>(p.getInt("sysctl.sched_util_clamp_max"));
    m_sysctls.utilClampMinRtDefault = static_cast<int>(p.getInt("sysctl.sched_util_clamp_min_rt_default"));
    m_buckets = static_cast<int>(p.getInt("uclamp.buckets"));
    m_forceKey = p.get("uclamp.static_key") == "on";
    m_sysctlWritten = m_sysctls.utilClampMin != kCapacity || m_sysctls.utilClampMax != kCapacity ||
                      m_sysctls.utilClampMinRtDefault != kCapacity;
    m_lambda = std::log(2.0) / (static_cast<double>(p.getInt("pelt.halflife_ms")) * 1024.0 * 1000.0);
    // Validated by validateParams; fall back to one OPP rather than crash if a caller skipped it.
    auto opps = parseList(p, "schedutil.opp_khz");
    auto power = parseList(p, "schedutil.power_mw");
    if (opps && power && opps->size() == power->size()) {
      m_oppKhz = std::move(*opps);
      m_powerMw = std::move(*power);
    } else {
      m_oppKhz = {1'000'000};
      m_powerMw = {1000};
    }
    m_idlePowerMw = p.getDouble("schedutil.idle_power_mw");
    m_rateLimitNs = p.getInt("schedutil.rate_limit_us") * 1000;
    m_rqUpdateCostNs = p.getInt("uclamp.rq_update_cost_ns");
    m_domainKind = p.get("schedutil.domain");
  }

  std::string_view name() const override { return m_name; }

  void attach(Engine& engine) override {
    m_inner->attach(engine);
    m_engine = &engine;
    const int n = engine.cpuCount();
    m_cpus.assign(static_cast<size_t>(n), Cpu(m_buckets));
    for (Cpu& c : m_cpus) c.busyNs.assign(m_oppKhz.size(), 0);
    // Frequency domains.
    m_domains.clear();
    std::vector<int> domainOf(static_cast<size_t>(n), -1);
    for (int cpu = 0; cpu < n; ++cpu) {
      if (!engine.online(cpu) || domainOf[static_cast<size_t>(cpu)] >= 0) continue;
      std::vector<int> members;
      if (m_domainKind == "all") {
        for (int c = 0; c < n; ++c)
          if (engine.online(c)) members.push_back(c);
      } else if (m_domainKind == "core") {
        for (int c : engine.topology().siblingsOf(cpu))
          if (c >= 0 && c < n && engine.online(c)) members.push_back(c);
        if (std::find(members.begin(), members.end(), cpu) == members.end()) members.push_back(cpu);
      } else {
        members.push_back(cpu);
      }
      const int d = static_cast<int>(m_domains.size());
      for (int c : members) domainOf[static_cast<size_t>(c)] = d;
      m_domains.push_back(Domain{std::move(members)});
    }
    for (int cpu = 0; cpu < n; ++cpu) m_cpus[static_cast<size_t>(cpu)].domain = domainOf[static_cast<size_t>(cpu)];

    m_tasks.assign(engine.taskCount(), TaskSt{});
    bool anyRequest = false;
    for (TaskId t = 0; t < engine.taskCount(); ++t) {
      const TaskAttributes& a = engine.attributes(t);
      TaskSt& s = m_tasks[t];
      s.rt = isRtPolicy(engine.task(t).policy);
      s.clamps = effectiveClamps(a.uclampMin, a.uclampMax, s.rt, m_sysctls);
      anyRequest |= a.uclampMin >= 0 || a.uclampMax >= 0;
    }
    m_keyOn = m_forceKey || m_sysctlWritten || anyRequest;
  }

  void taskNew(TaskId p, TaskId parent) override { m_inner->taskNew(p, parent); }
  int selectCpu(TaskId p, uint32_t wakeFlags, int wakerCpu) override {
    return m_inner->selectCpu(p, wakeFlags, wakerCpu);
  }

  void enqueue(int cpu, TaskId p, uint32_t wakeFlags) override {
    start();
    TaskSt& t = m_tasks[p];
    if (!t.rt) {
      advanceCpu(cpu);
      if (!t.seen) {
        // post_init_entity_util_avg(): half the spare capacity (its upper bound).
        Cpu& c = m_cpus[static_cast<size_t>(cpu)];
        t.util.util = std::max(0.0, (kCapacity - c.cfs.util) / 2.0);
        t.util.last = m_engine->now();
        c.cfs.util += t.util.util;
        t.attached = cpu;
      } else if (t.attached != cpu) {
        moveUtil(p, cpu);
      }
    }
    t.seen = true;
    addRunnable(p, cpu);
    if (m_keyOn && m_rqUpdateCostNs > 0)
      m_engine->chargeCpu(m_engine->contextCpu() >= 0 ? m_engine->contextCpu() : cpu, m_rqUpdateCostNs);
    m_inner->enqueue(cpu, p, wakeFlags);
    updateFreq(cpu);
  }

  void checkPreemptWakeup(int cpu, TaskId p, uint32_t wakeFlags) override {
    m_inner->checkPreemptWakeup(cpu, p, wakeFlags);
  }

  void dequeue(int cpu, TaskId p, bool dying) override {
    start();
    advanceCpu(cpu);
    TaskSt& t = m_tasks[p];
    removeRunnable(p);
    if (m_keyOn && m_rqUpdateCostNs > 0) m_engine->chargeCpu(cpu, m_rqUpdateCostNs);
    if (dying && !t.rt && t.attached >= 0) {
      // task_dead_fair() -> remove_entity_load_avg(): its util leaves the CPU.
      Cpu& c = m_cpus[static_cast<size_t>(t.attached)];
      advanceTask(p);
      c.cfs.util = std::max(0.0, c.cfs.util - t.util.util);
      t.attached = -1;
    }
    m_inner->dequeue(cpu, p, dying);
    updateFreq(cpu);
  }

  TaskId pickNext(int cpu, TaskId prev, bool prevRunnable) override {
    start();
    const TaskId next = m_inner->pickNext(cpu, prev, prevRunnable);
    reconcile(cpu, next);
    Cpu& c = m_cpus[static_cast<size_t>(cpu)];
    if (next != c.curr) {
      advanceCpu(cpu);
      account(cpu);
      if (next != kNoTask && !m_tasks[next].rt) advanceTask(next);
      c.curr = next;
      c.currRt = next != kNoTask && m_tasks[next].rt;
    }
    return next;
  }

  void tick(int cpu, TaskId curr) override {
    start();
    m_inner->tick(cpu, curr);
    updateFreq(cpu);
  }

  void balance(int cpu) override {
    m_inner->balance(cpu);
    reconcile(-1, kNoTask);
  }

  bool forcedIdle(int cpu) const override { return m_inner->forcedIdle(cpu); }
  ModelCounters counters(int64_t busyNs) const override { return m_inner->counters(busyNs); }

  double energyJoules(int64_t endTs) const {
    double mwNs = 0;
    for (size_t cpu = 0; cpu < m_cpus.size(); ++cpu) {
      const Cpu& c = m_cpus[cpu];
      if (c.domain < 0) continue;
      for (size_t i = 0; i < c.busyNs.size(); ++i)
        mwNs += static_cast<double>(c.busyNs[i]) * static_cast<double>(m_powerMw[i]);
      mwNs += static_cast<double>(c.idleNs) * m_idlePowerMw;
      if (!m_started || endTs <= c.acctFrom) continue;
      const double tail = static_cast<double>(endTs - c.acctFrom);
      mwNs += c.curr != kNoTask ? tail * static_cast<double>(m_powerMw[oppOf(static_cast<int>(cpu))])
                                : tail * m_idlePowerMw;
    }
    return mwNs * 1e-12;  // mW x ns = 1e-3 W x 1e-9 s
  }

 private:
  struct TaskSt {
    EffectiveClamps clamps;
    bool rt = false;
    bool seen = false;  // enqueued once: util initialised
    int rq = -1;        // CPU whose uclamp buckets count it (runnable), -1 when not runnable
    int attached = -1;  // CPU whose cfs util holds its util (fair tasks)
    uint32_t runnableIdx = 0;
    Pelt util;  // fair tasks only (RT tasks have no per-task util in the kernel)
  };
  struct Cpu {
    explicit Cpu(int buckets) : rq(buckets) {}
    UclampRq rq;
    Pelt cfs, rt;
    TaskId curr = kNoTask;
    bool currRt = false;
    int nrRt = 0;  // runnable RT tasks (rt_rq_is_runnable)
    int domain = -1;
    int64_t acctFrom = 0;
    std::vector<int64_t> busyNs;  // per OPP
    int64_t idleNs = 0;
  };
  struct Domain {
    std::vector<int> cpus;
    size_t opp = 0;
    int64_t lastUpdate = 0;
    bool updated = false;
  };

  size_t oppOf(int cpu) const { return m_domains[static_cast<size_t>(m_cpus[static_cast<size_t>(cpu)].domain)].opp; }
  double scaleOf(size_t opp) const { return static_cast<double>(m_oppKhz[opp]) / static_cast<double>(m_oppKhz.back()); }

  // The first callback happens at the replay's first event: frequencies start
  // at the lowest OPP there (schedutil raises them at the first enqueue).
  void start() {
    if (m_started) return;
    m_started = true;
    const int64_t now = m_engine->now();
    for (int cpu = 0; cpu < static_cast<int>(m_cpus.size()); ++cpu) {
      Cpu& c = m_cpus[static_cast<size_t>(cpu)];
      c.acctFrom = now;
      c.cfs.last = c.rt.last = now;
      if (c.domain < 0) continue;
      m_engine->setFrequencyScale(cpu, scaleOf(0));
      m_engine->emitCounter(core::CounterKind::CpuFrequencyKhz, cpu, static_cast<double>(m_oppKhz[0]));
    }
  }

  void advanceTask(TaskId p) {
    TaskSt& t = m_tasks[p];
    t.util.advance(m_engine->now(), 0.0, m_lambda);
  }

  // Brings the CPU's signals (and its running fair task's) to now at the
  // frequency that held since their last update.
  void advanceCpu(int cpu) {
    Cpu& c = m_cpus[static_cast<size_t>(cpu)];
    const int64_t now = m_engine->now();
    const double in = c.domain >= 0 ? kCapacity * scaleOf(oppOf(cpu)) : 0.0;
    const bool running = c.curr != kNoTask;
    c.cfs.advance(now, running && !c.currRt ? in : 0.0, m_lambda);
    c.rt.advance(now, running && c.currRt ? in : 0.0, m_lambda);
    if (running && !c.currRt) m_tasks[c.curr].util.advance(now, in, m_lambda);
  }

  void account(int cpu) {
    Cpu& c = m_cpus[static_cast<size_t>(cpu)];
    const int64_t now = m_engine->now();
    if (c.domain < 0 || now <= c.acctFrom) return;
    if (c.curr != kNoTask)
      c.busyNs[oppOf(cpu)] += now - c.acctFrom;
    else
      c.idleNs += now - c.acctFrom;
    c.acctFrom = now;
  }

  // attach/detach_entity_load_avg on migration: the task's util moves along.
  void moveUtil(TaskId p, int dest) {
    TaskSt& t = m_tasks[p];
    advanceTask(p);
    if (t.attached >= 0) {
      advanceCpu(t.attached);
      Cpu& src = m_cpus[static_cast<size_t>(t.attached)];
      src.cfs.util = std::max(0.0, src.cfs.util - t.util.util);
    }
    advanceCpu(dest);
    m_cpus[static_cast<size_t>(dest)].cfs.util += t.util.util;
    t.attached = dest;
  }

  void addRunnable(TaskId p, int cpu) {
    TaskSt& t = m_tasks[p];
    t.rq = cpu;
    t.runnableIdx = static_cast<uint32_t>(m_runnable.size());
    m_runnable.push_back(p);
    Cpu& c = m_cpus[static_cast<size_t>(cpu)];
    if (m_keyOn) c.rq.inc(t.clamps);
    if (t.rt) ++c.nrRt;
  }

  void removeRunnable(TaskId p) {
    TaskSt& t = m_tasks[p];
    if (t.rq < 0) return;
    Cpu& c = m_cpus[static_cast<size_t>(t.rq)];
    if (m_keyOn) c.rq.dec(t.clamps);
    if (t.rt) --c.nrRt;
    const TaskId last = m_runnable.back();
    m_runnable[t.runnableIdx] = last;
    m_tasks[last].runnableIdx = t.runnableIdx;
    m_runnable.pop_back();
    t.rq = -1;
  }

  void moveRunnable(TaskId p, int dest) {
    TaskSt& t = m_tasks[p];
    const int src = t.rq;
    Cpu& s = m_cpus[static_cast<size_t>(src)];
    Cpu& d = m_cpus[static_cast<size_t>(dest)];
    if (m_keyOn) {
      s.rq.dec(t.clamps);
      d.rq.inc(t.clamps);
    }
    if (t.rt) {
      --s.nrRt;
      ++d.nrRt;
    }
    t.rq = dest;
    if (!t.rt && t.attached != dest) moveUtil(p, dest);
    m_moved.push_back(src);
    m_moved.push_back(dest);
  }

  // Tasks the inner policy moved between runqueues (load balancing, newidle
  // pulls, cookie stealing) follow in the buckets: the engine's migration
  // count says when to look.
  void reconcile(int cpu, TaskId next) {
    if (next != kNoTask && m_tasks[next].rq >= 0 && m_tasks[next].rq != cpu) moveRunnable(next, cpu);
    const uint64_t migrations = m_engine->stats().migrations;
    if (migrations != m_seenMigrations) {
      m_seenMigrations = migrations;
      for (const TaskId t : m_runnable) {
        if (t == next) continue;
        const int at = m_engine->taskCpu(t);
        if (at != m_tasks[t].rq) moveRunnable(t, at);
      }
    }
    // The kernel updates both CPUs' frequency at the dequeue/enqueue of a
    // migration; a newidle pull's destination waits for its next update
    // (its engine state is mid-switch here).
    for (int c : m_moved)
      if (c != cpu) updateFreq(c);
    m_moved.clear();
  }

  // sugov_get_util(): CFS + RT utilisation, clamped by the rq (docs/models.md §4.4).
  double cpuUtil(int cpu) {
    advanceCpu(cpu);
    const Cpu& c = m_cpus[static_cast<size_t>(cpu)];
    if (!m_keyOn && c.nrRt > 0) return kCapacity;
    double util = std::min<double>(kCapacity, std::min<double>(kCapacity, c.cfs.util) + c.rt.util);
    // uclamp_rq_util_with(rq, util, NULL); an idle-held MAX is ignored.
    if (m_keyOn && !c.rq.idle()) {
      const double lo = c.rq.value(ClampId::Min), hi = c.rq.value(ClampId::Max);
      util = lo >= hi ? lo : std::clamp(util, lo, hi);
    }
    return util;
  }

  void updateFreq(int cpu) {
    Cpu& c0 = m_cpus[static_cast<size_t>(cpu)];
    if (c0.domain < 0) return;
    Domain& d = m_domains[static_cast<size_t>(c0.domain)];
    const int64_t now = m_engine->now();
    if (d.updated && now - d.lastUpdate < m_rateLimitNs) return;
    double util = 0;
    for (int c : d.cpus) util = std::max(util, cpuUtil(c));
    // get_next_freq(): (F + F/4) x util / max with F = cpuinfo.max_freq (frequency-invariant util).
    const uint64_t fmax = static_cast<uint64_t>(m_oppKhz.back());
    const uint64_t target = (fmax + (fmax >> 2)) * static_cast<uint64_t>(util) / kCapacity;
    size_t opp = m_oppKhz.size() - 1;
    for (size_t i = 0; i < m_oppKhz.size(); ++i)
      if (static_cast<uint64_t>(m_oppKhz[i]) >= target) {
        opp = i;  // CPUFREQ_RELATION_L: the lowest OPP at or above the target
        break;
      }
    if (opp == d.opp) return;  // no change: last_freq_update_time stays
    for (int c : d.cpus) {
      advanceCpu(c);
      account(c);
    }
    d.opp = opp;
    d.lastUpdate = now;
    d.updated = true;
    for (int c : d.cpus) {
      m_engine->emitCounter(core::CounterKind::CpuFrequencyKhz, c, static_cast<double>(m_oppKhz[opp]));
      // A CPU whose task is blocking or exiting right now gets the rate at its next switch.
      m_engine->setFrequencyScale(c, scaleOf(opp));
    }
  }

  std::unique_ptr<Policy> m_inner;
  std::string m_name;
  Engine* m_engine = nullptr;
  Sysctls m_sysctls;
  int m_buckets = 5;
  bool m_forceKey = false;
  bool m_sysctlWritten = false;
  bool m_keyOn = false;
  double m_lambda = 0;
  std::vector<int64_t> m_oppKhz;
  std::vector<int64_t> m_powerMw;
  double m_idlePowerMw = 0;
  int64_t m_rateLimitNs = 0;
  int64_t m_rqUpdateCostNs = 0;
  std::string m_domainKind;
  bool m_started = false;
  uint64_t m_seenMigrations = 0;
  std::vector<TaskSt> m_tasks;
  std::vector<Cpu> m_cpus;
  std::vector<Domain> m_domains;
  std::vector<TaskId> m_runnable;
  std::vector<int> m_moved;
};

}  // namespace

std::unique_ptr<Policy> wrap(std::unique_ptr<Policy> inner, const Params& params, int /*cpuCount*/) {
  return std::make_unique<UclampPolicy>(std::move(inner), params);
}

std::optional<double> energyJoules(const Policy& policy, int64_t endTs) {
  const auto* u = dynamic_cast<const UclampPolicy*>(&policy);
  if (!u) return std::nullopt;
  return u->energyJoules(endTs);
}

}  // namespace replay::uclamp
