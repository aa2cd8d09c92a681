#include "replay/sim/engine.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "core/sched_settings.h"

namespace replay {

void defineEngineParams(Params& params) {
  params.defineInt("hz", 250, 1, 10000,
                   "tick rate (CONFIG_HZ) of the replayed machine; Debian kernels use 250. Ticks run only on busy "
                   "CPUs (NO_HZ idle), aligned on all CPUs at multiples of 1/hz");
  params.defineInt("context_switch_ns", 0, 0, 1'000'000'000,
                   "CPU time each context switch costs before the next task makes progress (charged to the "
                   "incoming task's run time)");
  params.defineInt("migration_ns", 0, 0, 1'000'000'000,
                   "extra time a task needs after it runs on another CPU than last time (cache refill)");
  // What the kernel spends between a wakeup and the wakee's switch-in that is
  // not a scheduling decision: measured per path from the recording (see
  // trace_extractor: measureWakeupDelays), each wakeup drawing from the measured
  // distribution unless wakeup_delay_sampling=median.
  params.defineInt("idle_wakeup_ns", -1, -1, 1'000'000'000,
                   "IPI delivery and idle exit: an idle CPU woken from another CPU runs schedule() this much later "
                   "(also when balancing kicks an idle CPU). -1 = measured from the recording: from the waking to the "
                   "wakee's switch-in on the idle target CPU; 0 without a recording");
  params.defineInt("idle_irq_wakeup_ns", -1, -1, 1'000'000'000,
                   "idle exit after a local interrupt: an idle CPU whose own timer or interrupt wakes a task runs "
                   "schedule() this much later. -1 = measured from the recording (waking in the idle CPU's own "
                   "context to the switch-in); 0 without a recording");
  params.defineInt("preempt_ipi_ns", -1, -1, 1'000'000'000,
                   "a wakeup from another CPU that preempts the running task takes effect this much later (IPI, "
                   "need-resched, the switch). -1 = measured from the recording (waking to the switch from the "
                   "preempted task, within 250 us); 0 without a recording");
  params.defineInt("preempt_wakeup_ns", -1, -1, 1'000'000'000,
                   "a wakeup on the CPU it preempts (the waker itself, or an interrupt of the running task) takes "
                   "effect this much later (need-resched and the switch). -1 = measured from the recording; 0 "
                   "without a recording");
  params.defineInt("tick_delay_ns", -1, -1, 1'000'000,
                   "a tick runs this much after its instant on the HZ grid (the tick interrupt's latency and the path "
                   "to its switch), so that a task preempted at one tick and switched in at a later one waits a whole "
                   "number of ticks give or take a few us, as in the kernel; 0 = ticks exactly on the grid. -1 = "
                   "measured from the recording: the offsets from the HZ grid (placed where most of them crowd) of its "
                   "preemptions that no wakeup caused, within 100 us, less their 1st percentile, each tick drawing "
                   "one (0 without a recording, or when those preemptions are not on a grid of this hz; "
                   "docs/models.md §8.3)");
  params.defineChoice("wakeup_delay_sampling", "distribution", {"distribution", "median"},
                      "delays measured from the recording: each wakeup draws one from the measured distribution "
                      "(deterministically, from seed), or every wakeup takes the median");
  params.defineChoice("wakeup_dependency", "dataflow", {"dataflow", "exact", "counted"},
                      "how a task's blocks end (docs/models.md §8.1): exact = each block ends when the task that woke it "
                      "in the recording reaches the point of its own work where it did; dataflow = exact, plus a gate "
                      "wherever a task was switched in again after a preemption: it goes on there only once the task "
                      "that woke its burst has reached its recorded progress of that time, else it blocks (a reader "
                      "ahead of its writer finds nothing to read; applied when the workload is extracted from a "
                      "recording); counted = each wakeup of the recording is a token for its wakee, and a block ends "
                      "with the next token any of its wakers produces (a pipe or socket written by several tasks)");
  params.defineChoice("irq_wakeup_cpu", "kthreads", {"sleeper", "recorded", "kthreads"},
                      "the CPU in whose context a wakeup from interrupt context (a timer, a device) happens, which "
                      "select_task_rq() takes as this_cpu: sleeper = the sleeping task's own CPU; recorded = the CPU "
                      "whose interrupt woke it in the recording (timers of idle CPUs fire on busy ones), when the "
                      "replay's topology has it; kthreads = recorded for kernel threads (timer-wheel timeouts, which "
                      "timer migration expires on a busy CPU), sleeper for user tasks (hrtimers, which fire on the CPU "
                      "that armed them). docs/models.md §8.1");
  params.defineChoice("irq_wakeup_time", "measured", {"measured", "relative", "recorded"},
                      "when a sleep the recording saw ended by an interrupt (a timer, a device) or by nothing traced "
                      "ends: relative = its recorded length after the replayed task blocked; recorded = at the "
                      "recorded instant of its wakeup (an absolute timer, as clock_nanosleep(TIMER_ABSTIME)), or at "
                      "once when the replay blocked later than that; measured = recorded for the interrupt-woken "
                      "sleeps of the user tasks whose wakeups the recording shows on a grid of times (over at least 8 "
                      "consecutive timer cycles, their wakeup-to-wakeup intervals vary less than their sleeps), "
                      "relative for every other sleep. docs/models.md §8.1");
  params.defineInt("timer_slack_ns", 50'000, 0, 1'000'000'000,
                   "slack of a fair task's timer sleep (init_task's timer_slack_ns, init/init_task.c; RT tasks sleep "
                   "with none): its timer may fire from this much before its expiry, with any earlier timer interrupt "
                   "of its CPU (another task's timer, the tick), else at its expiry (hrtimer soft and hard expiry, "
                   "kernel/time/hrtimer.c). Applied to sleeps the recording saw end by an interrupt, whose recorded end "
                   "is taken as the hard expiry. docs/models.md §8.1");
  params.defineChoice("preempt", "settings", {"settings", "none", "voluntary", "full"},
                      "the recording kernel's preemption model (CONFIG_PREEMPT_*, or preempt= with PREEMPT_DYNAMIC), "
                      "which a sched trace does not record: with none, a parent that vforks runs on to its vfork wait "
                      "whatever reschedules its CPU in between, since clone() has no preemption point there (with "
                      "voluntary, might_sleep() in wait_for_completion() is one). The replay knows that span only "
                      "for vfork: a fork followed by an uninterruptible sleep that the child ends. settings = as "
                      "sched.preempt beside the recording says (schedlab-cli record saves it; lazy counts as none "
                      "there), else none, Kconfig's default. docs/models.md §8.1");
  params.defineInt("seed", 1, 0, INT64_MAX,
                   "seed of the draws from measured distributions and shares (wake_pack); same seed, same replay");
  params.defineText("cpu_speed", "1.0",
                    "work rate per CPU, ns of work per ns: one number for all CPUs or a comma list per CPU "
                    "(work is counted in ns at full speed, so a CPU at 0.5 takes twice as long)");
  params.defineDouble("smt.factor", 0.65, 0.01, 1.0,
                      "SMT contention, on topologies with SMT only: while another thread of its core runs a task, a "
                      "task progresses at this fraction of full speed (a forced-idle sibling does not count). "
                      "Default from docs/models.md §6.1: sysbench cpu beside sysbench memory on one core did ~850 "
                      "events/s against 1307 alone. A recording made on an SMT machine already contains its "
                      "contention in the measured work; replaying it on SMT counts it again");
  params.defineText("smt.task_factor", "",
                    "per-task override of smt.factor: rules SELECTOR=F separated by ';' (SELECTOR: comm:REGEX, "
                    "tgid:N, tid:N, all, rt, fair), e.g. comm:^stream$=0.9 for a memory-bound task that loses less");
}

void resolvePreempt(Params& params, bool isRecording, bool settingsKnown, const std::string& setting) {
  if (params.get("preempt") != "settings") return;
  const std::string name = core::kPreemptSetting;
  if (setting == "none" || setting == "voluntary" || setting == "full")
    (void)params.resolve("preempt", setting, settingBeside(name, setting));
  else if (setting == "lazy")  // a fair task's reschedule waits for the return to user space or the tick
    (void)params.resolve("preempt", "none", settingBeside(name, "lazy") + ", none's in a vfork");
  else
    (void)params.resolve("preempt", "none",
                         (isRecording ? settingNotBeside(name, settingsKnown) : "a written workload") +
                             ": Kconfig's default");
}

core::Result<EngineConfig> engineConfigFrom(const Params& params, int cpuCount) {
  EngineConfig c;
  c.hz = static_cast<int>(params.getInt("hz"));
  c.contextSwitchNs = params.getInt("context_switch_ns");
  c.migrationNs = params.getInt("migration_ns");
  const char* delays[kWakeupPaths] = {"idle_wakeup_ns", "idle_irq_wakeup_ns", "preempt_ipi_ns", "preempt_wakeup_ns"};
  for (size_t p = 0; p < kWakeupPaths; ++p) c.wakeupDelay[p].constantNs = std::max<int64_t>(0, params.getInt(delays[p]));
  c.tickDelay.constantNs = std::max<int64_t>(0, params.getInt("tick_delay_ns"));
  if (c.tickDelay.constantNs >= 1'000'000'000LL / std::max(1, c.hz))
    return core::Error("parameter tick_delay_ns=" + std::to_string(c.tickDelay.constantNs) +
                       ": a tick's delay must be shorter than the tick period (1/hz)");
  c.seed = static_cast<uint64_t>(params.getInt("seed"));
  c.timerSlackNs = params.getInt("timer_slack_ns");
  c.ttwuQueue = params.has("ttwu_queue") && params.getBool("ttwu_queue");
  c.preemptNone = params.get("preempt") == "none" || params.get("preempt") == "settings";  // unresolved: the default
  c.countedWakeups = params.get("wakeup_dependency") == "counted";
  const std::string& irqCpu = params.get("irq_wakeup_cpu");
  c.irqWakeupCpu = irqCpu == "recorded"   ? EngineConfig::IrqWakeupCpu::Recorded
                   : irqCpu == "kthreads" ? EngineConfig::IrqWakeupCpu::KernelThreadsRecorded
                                          : EngineConfig::IrqWakeupCpu::Sleeper;
  const std::string& sleepEnd = params.get("irq_wakeup_time");
  c.sleepEnd = sleepEnd == "recorded"   ? EngineConfig::SleepEnd::Recorded
               : sleepEnd == "relative" ? EngineConfig::SleepEnd::Relative
                                        : EngineConfig::SleepEnd::Measured;
  c.smtFactor = params.getDouble("smt.factor");
  const std::string& text = params.get("cpu_speed");
  std::vector<double> speeds;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || !std::isfinite(v) || v <= 0 || v > 100)
      return core::Error("parameter cpu_speed=" + text + ": expected numbers in (0, 100] separated by commas");
    speeds.push_back(v);
    pos = comma + 1;
  }
  if (speeds.size() == 1) {
    c.cpuSpeed.assign(static_cast<size_t>(cpuCount), speeds[0]);
  } else if (static_cast<int>(speeds.size()) == cpuCount) {
    c.cpuSpeed = speeds;
  } else {
    return core::Error("parameter cpu_speed lists " + std::to_string(speeds.size()) + " speeds for " +
                       std::to_string(cpuCount) + " CPUs");
  }
  return c;
}

Engine::Engine(const Workload& workload, const core::Topology& topology, Policy& policy, EngineConfig config,
               EventSink& sink)
    : m_workload(workload),
      m_topology(topology),
      m_policy(policy),
      m_config(std::move(config)),
      m_sink(sink),
      m_tickNs(1'000'000'000LL / std::max(1, m_config.hz)) {
  const int n = std::max(1, topology.cpuLimit());
  m_cpus.resize(static_cast<size_t>(n));
  for (int c = 0; c < n; ++c) {
    CpuRt& cpu = m_cpus[static_cast<size_t>(c)];
    cpu.online = topology.cpu(c) != nullptr;
    cpu.rate = static_cast<size_t>(c) < m_config.cpuSpeed.size() ? m_config.cpuSpeed[static_cast<size_t>(c)] : 1.0;
  }
  m_siblings.resize(static_cast<size_t>(n));
  for (int c = 0; c < n; ++c)
    for (int sib : topology.siblingsOf(c))
      if (sib != c && sib >= 0 && sib < n) m_siblings[static_cast<size_t>(c)].push_back(sib);
  m_smtContention = topology.hasSmt() &&
                    (m_config.smtFactor != 1.0 ||
                     std::any_of(m_config.taskAttrs.begin(), m_config.taskAttrs.end(),
                                 [](const TaskAttributes& a) { return a.smtFactor > 0 && a.smtFactor != 1.0; }));
  m_locality.assign(static_cast<size_t>(n) * static_cast<size_t>(n), 4);
  for (int a = 0; a < n; ++a) {
    const auto* ca = topology.cpu(a);
    for (int b = 0; b < n; ++b) {
      const auto* cb = topology.cpu(b);
      uint8_t l = 4;
      if (a == b) l = 0;
      else if (ca && cb && ca->core == cb->core) l = 1;
      else if (ca && cb && ca->llc == cb->llc) l = 2;
      else if (ca && cb && ca->node == cb->node) l = 3;
      m_locality[static_cast<size_t>(a) * static_cast<size_t>(n) + static_cast<size_t>(b)] = l;
    }
  }
  buildDomains(topology);
  m_tasks.resize(workload.tasks.size());
  m_outcome.resize(workload.tasks.size());
  m_masks.resize(workload.tasks.size());
  uint32_t flags = 0;
  for (size_t t = 0; t < workload.tasks.size(); ++t) {
    m_tasks[t].wokenBase = flags;
    flags += static_cast<uint32_t>(workload.tasks[t].bursts.size());
  }
  m_woken.assign(flags, 0);
  m_timerNext.assign(workload.timers.size(), -1);
}

void Engine::buildDomains(const core::Topology& topology) {
  const int n = static_cast<int>(m_cpus.size());
  m_cpuDomains.assign(static_cast<size_t>(n), {});
  // The span of `cpu` at a locality level: the online CPUs no farther than it.
  auto span = [&](int cpu, int level) {
    std::vector<int> out;
    for (int c = 0; c < n; ++c)
      if (m_cpus[static_cast<size_t>(c)].online && locality(cpu, c) <= level) out.push_back(c);
    return out;
  };
  std::map<std::vector<int>, size_t> known;  // span -> index in m_domains
  std::vector<std::vector<size_t>> chains(static_cast<size_t>(n));
  for (int cpu = 0; cpu < n; ++cpu) {
    if (!topology.cpu(cpu)) continue;
    std::vector<int> child{cpu};
    for (int level = 1; level <= 4; ++level) {
      std::vector<int> cpus = span(cpu, level);
      if (cpus.size() == child.size()) continue;  // degenerate: the same CPUs as the level below
      auto [it, fresh] = known.emplace(cpus, m_domains.size());
      if (fresh) {
        SchedDomain d;
        d.level = level;
        d.id = static_cast<int>(m_domains.size());
        d.cpus = std::move(cpus);
        m_domains.push_back(std::move(d));
      }
      chains[static_cast<size_t>(cpu)].push_back(it->second);
      child = m_domains[it->second].cpus;
    }
  }
  // Groups: the spans one level down (the previous domain of each member CPU, or the CPU).
  for (SchedDomain& d : m_domains) {
    for (int c : d.cpus) {
      const auto& chain = chains[static_cast<size_t>(c)];
      const auto self = std::find(chain.begin(), chain.end(), static_cast<size_t>(d.id));
      std::vector<int> group = self == chain.begin() ? std::vector<int>{c} : m_domains[*(self - 1)].cpus;
      if (std::find(d.groups.begin(), d.groups.end(), group) == d.groups.end()) d.groups.push_back(std::move(group));
    }
  }
  for (int cpu = 0; cpu < n; ++cpu)
    for (size_t id : chains[static_cast<size_t>(cpu)]) m_cpuDomains[static_cast<size_t>(cpu)].push_back(&m_domains[id]);
}

bool Engine::allowed(TaskId t, int cpu) const {
  if (cpu < 0 || cpu >= cpuCount() || !m_cpus[static_cast<size_t>(cpu)].online) return false;
  const auto& mask = m_masks[t];
  if (mask.empty()) return true;
  return (mask[static_cast<size_t>(cpu) / 64] >> (static_cast<size_t>(cpu) % 64)) & 1;
}

bool Engine::isRunning(TaskId t) const { return m_tasks[t].state == TState::Running; }
bool Engine::isQueued(TaskId t) const { return m_tasks[t].state == TState::Runnable; }

void Engine::resched(int cpu) {
  if (cpu < 0 || cpu >= cpuCount()) return;
  CpuRt& c = m_cpus[static_cast<size_t>(cpu)];
  const bool idle = c.curr == kNoTask;
  const bool local = cpu == m_ctxCpu;
  WakeupPath path = WakeupPath::RemoteIdle;
  if (m_inWakeup)
    path = idle ? (local ? WakeupPath::LocalIdle : WakeupPath::RemoteIdle)
                : (local ? WakeupPath::LocalPreempt : WakeupPath::RemotePreempt);
  else if (!idle || local) {  // a tick, a block, balancing on its own CPU: schedule() now
    c.needResched = m_reschedPending = true;
    return;
  }
  if (c.ipiPending || c.needResched) return;  // already on its way
  const int64_t delay = drawWakeupDelay(path);
  if (delay <= 0) {
    c.needResched = m_reschedPending = true;
    return;
  }
  c.ipiPending = true;
  push(m_now + delay, EvKind::Ipi, static_cast<uint32_t>(cpu), ++c.ipiGen);
}

int64_t Engine::workPosition(TaskId t) const {
  const TaskRt& r = m_tasks[t];
  int64_t done = r.done;
  if (r.state == TState::Running) {
    const CpuRt& c = m_cpus[static_cast<size_t>(r.cpu)];
    if (c.curr == t) done = std::min(c.target, done + unsettledProgress(c));
  }
  return r.workBefore + done;
}

void Engine::noteWakerDistance(TaskRt& r, uint32_t burst, const Burst& b, bool fired) {
  int64_t point = kNoMark;
  for (size_t i = 0; i < r.firedMarks.size(); ++i)
    if (r.firedMarks[i].first == burst) {
      point = r.firedMarks[i].second;
      r.firedMarks[i] = r.firedMarks.back();
      r.firedMarks.pop_back();
      break;
    }
  const bool measured = !b.gate && b.waker < m_tasks.size();
  if (fired && measured && point != kNoMark) m_stats.wakerPastNs.push_back(workPosition(b.waker) - point);
  r.blockMark = !fired && measured ? workPosition(b.waker) : kNoMark;
}

bool Engine::takeWakeup(TaskRt& r, uint32_t burst) {
  if (!m_config.countedWakeups) return m_woken[r.wokenBase + burst] != 0;
  if (r.tokens == 0) return false;
  --r.tokens;
  return true;
}

namespace {

// splitmix64: a fixed sequence from the seed, drawn in event order.
uint64_t nextDraw(uint64_t& rng) {
  uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int64_t draw(const WakeupDelay& d, uint64_t& rng) {
  if (!d.distribution || d.distribution->quantiles.empty()) return d.constantNs;
  const auto& q = d.distribution->quantiles;
  return q[nextDraw(rng) % q.size()];
}

}  // namespace

int64_t Engine::drawWakeupDelay(WakeupPath path) {
  return draw(m_config.wakeupDelay[static_cast<size_t>(path)], m_rng);
}

double Engine::drawPolicyChance() { return static_cast<double>(nextDraw(m_policyRng) >> 11) * 0x1.0p-53; }

int64_t Engine::nextTickAt(int64_t after) {
  // A tick's delay is below its period (engineConfigFrom() refuses a longer
  // one; measured ones stay within 200 us and are not taken at periods that
  // short), so `after` at a delayed tick still lies in that tick's period.
  return (after / m_tickNs + 1) * m_tickNs + draw(m_config.tickDelay, m_tickRng);
}

void Engine::fail(std::string message) {
  if (m_error.empty()) m_error = std::move(message);
}

void Engine::moveQueued(TaskId t, int dest) {
  TaskRt& r = m_tasks[t];
  // The task being switched out counts as queued inside its CPU's pickNext() (sched_exec()'s stopper moves it).
  const bool queued = r.state == TState::Runnable || (r.state == TState::Running && t == m_switchingOut);
  if (!queued || !allowed(t, dest)) {
    fail(std::string(m_policy.name()) + ": tried to move task " + std::to_string(m_workload.tasks[t].tid) +
         " which is not queued or not allowed on CPU " + std::to_string(dest));
    return;
  }
  if (r.cpu == dest) return;
  if (t == m_switchingOut) {
    // sched_exec()'s stopper moves the task once it is switched out: traced after that switch (schedule()).
    m_movedWhileSwitchingOut = {t, r.cpu, dest};
  } else {
    m_sink.onMigrate(m_now, dest, curr(dest), t, r.cpu, dest);
  }
  ++m_stats.migrations;
  r.cpu = dest;
}

void Engine::push(int64_t time, EvKind kind, uint32_t a, uint64_t b) {
  m_events.push({time, m_seq++, kind, a, b});
}

core::Status Engine::run(const std::stop_token& stop) {
  const int n = cpuCount();
  // Affinities must name CPUs of this topology.
  for (size_t t = 0; t < m_workload.tasks.size(); ++t) {
    const Task& task = m_workload.tasks[t];
    if (task.affinity.empty()) continue;
    auto& mask = m_masks[t];
    mask.assign(static_cast<size_t>(n + 63) / 64, 0);
    bool any = false;
    for (int cpu : task.affinity) {
      if (cpu < 0 || cpu >= n || !m_cpus[static_cast<size_t>(cpu)].online)
        return core::Error("task " + task.comm + " (tid " + std::to_string(task.tid) + ") is pinned to CPU " +
                           std::to_string(cpu) + ", which the replay topology (" + m_topology.describe() +
                           ") does not have");
      mask[static_cast<size_t>(cpu) / 64] |= uint64_t{1} << (static_cast<size_t>(cpu) % 64);
      any = true;
    }
    if (!any) return core::Error("task " + task.comm + " has an empty CPU affinity");
  }
  m_now = m_workload.originTs;
  m_policy.attach(*this);
  m_rng = m_config.seed;
  m_tickRng = ~m_config.seed;
  m_policyRng = m_config.seed ^ 0x5bd1e9955bd1e995ULL;
  for (size_t t = 0; t < m_workload.tasks.size(); ++t)
    if (m_workload.tasks[t].parent == kNoTask) push(m_workload.tasks[t].startTs, EvKind::Arrive, static_cast<uint32_t>(t), 0);
  if (m_workload.durationNs > 0) push(m_workload.originTs + m_workload.durationNs, EvKind::End, 0, 0);

  uint64_t handled = 0;
  while (!m_events.empty() && !m_ended) {
    const Event e = m_events.pop();
    m_now = std::max(m_now, e.time);
    handle(e);
    flushResched();
    if (!m_error.empty()) return core::Error(m_error);
    if ((++handled & 0xffff) == 0 && stop.stop_requested()) return core::Error("replay cancelled");
  }
  m_stats.events = handled;
  m_stats.endTs = m_now;
  // Work and run time of whatever still runs when the duration ends.
  for (int c = 0; c < n; ++c) {
    CpuRt& cpu = m_cpus[static_cast<size_t>(c)];
    if (cpu.curr == kNoTask) continue;
    settle(c);
    m_outcome[cpu.curr].runtimeNs += m_now - cpu.since;
  }
  for (size_t t = 0; t < m_tasks.size(); ++t) {
    const TaskRt& r = m_tasks[t];
    const Task& task = m_workload.tasks[t];
    TaskOutcome& o = m_outcome[t];
    o.finished = r.state == TState::Dead || r.state == TState::Done;
    // Summed once here for every reader: a big trace's bursts are tens of MB,
    // each pass over them about 10 ms of the command.
    o.workTotal = task.totalWork();
    int64_t work = 0;
    if (o.finished) {
      work = o.workTotal;
    } else if (r.state != TState::NotStarted) {
      for (uint32_t b = 0; b < r.burst && b < task.bursts.size(); ++b) work += task.bursts[b].work;
      work += r.done;
    }
    o.workDone = work;
  }
  // A duration-limited run ends at the duration (work still running is accounted
  // up to it); otherwise the model ends at its last event.
  if (m_ended) m_sink.onEnd(m_now);
  return {};
}

void Engine::handle(const Event& e) {
  switch (e.kind) {
    case EvKind::Arrive: {
      const Task& t = m_workload.tasks[e.a];
      m_ctxCpu = t.startCpu >= 0 ? t.startCpu : -1;
      startTask(e.a, kNoTask, -1);
      break;
    }
    case EvKind::TimerWake: {
      const TaskRt& r = m_tasks[e.a];
      if (r.state != TState::Blocked || r.burst != e.b) break;  // ended earlier with another timer's interrupt
      // The interrupt's CPU as recorded (a timer can fire away from the sleeper), else the sleeper's.
      const auto& bursts = m_workload.tasks[e.a].bursts;
      using IrqCpu = EngineConfig::IrqWakeupCpu;
      const bool recordedCpu =
          m_config.irqWakeupCpu == IrqCpu::Recorded ||
          (m_config.irqWakeupCpu == IrqCpu::KernelThreadsRecorded && m_workload.tasks[e.a].kernelThread);
      const int irqCpu = recordedCpu && e.b < bursts.size() ? bursts[e.b].wakeCpu : -1;
      const int ctx = irqCpu >= 0 && irqCpu < cpuCount() && online(irqCpu) ? irqCpu : r.cpu;
      m_ctxCpu = ctx;
      auto& own = m_cpus[static_cast<size_t>(r.cpu)].slackTimers;
      own.erase(std::remove_if(own.begin(), own.end(),
                               [&](const CpuRt::SlackTimer& s) { return s.task == e.a && s.burst == e.b; }),
                own.end());
      wake(e.a, static_cast<uint32_t>(e.b), ctx, true, false);
      expireSlackTimers(ctx);
      break;
    }
    case EvKind::Milestone: {
      const int cpu = static_cast<int>(e.a);
      m_ctxCpu = cpu;
      if (m_cpus[e.a].gen == e.b && m_cpus[e.a].curr != kNoTask) onMilestone(cpu);
      break;
    }
    case EvKind::Tick: {
      const int cpu = static_cast<int>(e.a);
      m_ctxCpu = cpu;
      CpuRt& c = m_cpus[e.a];
      if (c.curr == kNoTask) {
        c.tickArmed = false;  // NO_HZ idle: the tick stops until the CPU runs a task again
        break;
      }
      settle(cpu);
      c.lastTick = m_now;
      ++m_stats.ticks;
      m_policy.tick(cpu, c.curr);
      m_policy.balance(cpu);
      push(nextTickAt(m_now), EvKind::Tick, e.a, 0);
      expireSlackTimers(cpu);  // the tick is a timer of this CPU's hrtimer base too, and first in expiry order
      break;
    }
    case EvKind::Ipi: {
      CpuRt& c = m_cpus[e.a];
      m_ctxCpu = static_cast<int>(e.a);
      if (c.ipiPending && c.ipiGen == e.b) {
        c.ipiPending = false;
        c.needResched = m_reschedPending = true;
      }
      break;
    }
    case EvKind::Wakelist: takeFromWakelist(e.a, static_cast<uint32_t>(e.b)); break;
    case EvKind::End: m_ended = true; break;
  }
}

int64_t Engine::unsettledProgress(const CpuRt& c) const {
  if (m_now <= c.progressFrom) return 0;
  const int64_t elapsed = m_now - c.progressFrom;
  return c.rate == 1.0 ? elapsed : static_cast<int64_t>(std::floor(static_cast<double>(elapsed) * c.rate));
}

void Engine::settle(int cpu) {
  CpuRt& c = m_cpus[static_cast<size_t>(cpu)];
  if (c.curr == kNoTask || m_now <= c.progressFrom) return;
  TaskRt& r = m_tasks[c.curr];
  r.done = std::min(r.done + unsettledProgress(c), c.target);
  c.progressFrom = m_now;
}

void Engine::armMilestone(int cpu) {
  CpuRt& c = m_cpus[static_cast<size_t>(cpu)];
  const TaskId t = c.curr;
  const TaskRt& r = m_tasks[t];
  const Task& task = m_workload.tasks[t];
  int64_t target = task.bursts[r.burst].work;
  if (r.nextTrigger < task.triggers.size()) {
    const Trigger& tr = task.triggers[r.nextTrigger];
    if (tr.burst <= r.burst) target = std::min(target, std::max(tr.offset, r.done));
  }
  c.target = target;
  const int64_t need = std::max<int64_t>(0, target - r.done);
  int64_t dt = need;
  if (c.rate != 1.0) dt = static_cast<int64_t>(std::ceil(static_cast<double>(need) / c.rate));
  push(std::max(m_now, c.progressFrom + dt), EvKind::Milestone, static_cast<uint32_t>(cpu), ++c.gen);
}

void Engine::onMilestone(int cpu) {
  CpuRt& c = m_cpus[static_cast<size_t>(cpu)];
  const TaskId t = c.curr;
  settle(cpu);
  TaskRt& r = m_tasks[t];
  r.done = c.target;  // reached by construction; snaps float rounding of slow CPUs
  fireTriggers(cpu, t);
  if (r.done >= m_workload.tasks[t].bursts[r.burst].work)
    burstDone(cpu, t);
  else
    armMilestone(cpu);
}

void Engine::fireTriggers(int cpu, TaskId t) {
  TaskRt& r = m_tasks[t];
  const Task& task = m_workload.tasks[t];
  while (r.nextTrigger < task.triggers.size()) {
    const Trigger& tr = task.triggers[r.nextTrigger];
    if (tr.burst > r.burst || (tr.burst == r.burst && tr.offset > r.done)) break;
    ++r.nextTrigger;
    if (tr.target == kNoTask || tr.target >= m_tasks.size()) continue;
    if (tr.kind == TriggerKind::Fork) {
      if (m_config.preemptNone && r.burst + 1 < task.bursts.size()) {
        const Burst& wait = task.bursts[r.burst + 1];
        r.inVfork = wait.wake == WakeKind::Task && wait.waker == tr.target && !wait.gate &&
                    wait.blockState == core::TaskState::Blocked;
      }
      if (m_tasks[tr.target].state == TState::NotStarted) startTask(tr.target, t, cpu);
      continue;
    }
    if (tr.kind == TriggerKind::Exec) {
      m_policy.exec(cpu, t);
      continue;
    }
    TaskRt& target = m_tasks[tr.target];
    // The waker blocks right after: WF_SYNC (not before a dataflow gate, where the recorded task ran on).
    const bool sync = tr.offset >= task.bursts[r.burst].work &&
                      !(r.burst + 1 < task.bursts.size() && task.bursts[r.burst + 1].gate);
    if (m_config.countedWakeups) {
      // Any waker's wakeup ends the wakee's next wait for one (a pipe or socket with several writers).
      const Task& tt = m_workload.tasks[tr.target];
      if (target.state == TState::Blocked && target.burst < tt.bursts.size() &&
          tt.bursts[target.burst].wake == WakeKind::Task)
        wake(tr.target, target.burst, cpu, false, sync);
      else
        ++target.tokens;
      continue;
    }
    const bool waiting = target.state == TState::Blocked && target.burst == tr.targetBurst;
    const int64_t point = r.workBefore + tr.offset;
    if (!waiting) {
      target.firedMarks.emplace_back(tr.targetBurst, point);
    } else if (target.blockMark != kNoMark) {
      m_stats.wakerShortNs.push_back(point - target.blockMark);
      target.blockMark = kNoMark;
    }
    m_woken[target.wokenBase + tr.targetBurst] = 1;
    if (waiting) wake(tr.target, tr.targetBurst, cpu, false, sync);
  }
}

void Engine::burstDone(int cpu, TaskId t) {
  TaskRt& r = m_tasks[t];
  r.inVfork = false;  // it sleeps now, or (its child already released it) returns to user space
  const Task& task = m_workload.tasks[t];
  m_outcome[t].lastEnd = m_now;
  if (task.inMakespan) m_lastBurstEnd = std::max(m_lastBurstEnd, m_now);
  const uint32_t next = r.burst + 1;
  r.workBefore += task.bursts[r.burst].work;
  if (next < task.bursts.size()) {
    const Burst& nb = task.bursts[next];
    bool cont = false;
    int64_t wakeAt = -1;
    switch (nb.wake) {
      case WakeKind::None: cont = true; break;
      case WakeKind::Task:
        cont = takeWakeup(r, next);
        if (!m_config.countedWakeups) noteWakerDistance(r, next, nb, cont);
        ++(nb.gate ? (cont ? m_stats.gatesPassed : m_stats.gateBlocks) : (cont ? m_stats.taskBlocksSkipped : m_stats.taskBlocks));
        break;
      case WakeKind::Sleep:
        if (endsAtRecordedInstant(task, nb)) {
          if (nb.recordedStart > m_now) wakeAt = nb.recordedStart;
          else cont = true;
        } else if (nb.sleepNs <= 0) {
          cont = true;
        } else {
          wakeAt = m_now + nb.sleepNs;
        }
        break;
      case WakeKind::Timer: {
        // rt-app: the timer counts periods from the task's start; each wait ends
        // at the next period boundary; a task running late does not sleep and
        // catches up.
        int64_t& tn = m_timerNext[nb.timer];
        const int64_t period = m_workload.timers[nb.timer].periodNs;
        if (tn < 0) tn = std::max<int64_t>(m_outcome[t].firstStart, 0) + period;
        const int64_t at = tn;
        tn += period;
        if (at <= m_now) cont = true;
        else wakeAt = at;
        break;
      }
    }
    if (cont) {
      r.burst = next;
      r.done = 0;
      armMilestone(cpu);
      return;
    }
    r.state = TState::Blocked;
    r.burst = next;
    r.done = 0;
    if (wakeAt >= 0) {
      push(wakeAt, EvKind::TimerWake, t, next);
      if (nb.interruptWake && m_config.timerSlackNs > 0 && !isRtPolicy(task.policy))
        m_cpus[static_cast<size_t>(cpu)].slackTimers.push_back({wakeAt - m_config.timerSlackNs, wakeAt, t, next});
    }
    m_policy.dequeue(cpu, t, false);
    schedule(cpu);
    return;
  }
  // No work left: exit, or sleep for good (a task still alive at trace end).
  if (task.exits) {
    m_sink.onExit(m_now, cpu, t);
    ++m_stats.exits;
    r.state = TState::Dead;
  } else {
    r.state = TState::Done;
  }
  r.burst = static_cast<uint32_t>(task.bursts.size());
  r.done = 0;
  m_policy.dequeue(cpu, t, task.exits);
  schedule(cpu);
}

void Engine::expireSlackTimers(int cpu) {
  auto& timers = m_cpus[static_cast<size_t>(cpu)].slackTimers;
  while (!timers.empty()) {
    // Hard expiry order, as __hrtimer_run_queues() walks its timerqueue.
    auto due = timers.end();
    for (auto it = timers.begin(); it != timers.end(); ++it)
      if (it->soft <= m_now && (due == timers.end() || it->hard < due->hard)) due = it;
    if (due == timers.end()) return;
    const CpuRt::SlackTimer timer = *due;
    timers.erase(due);
    m_ctxCpu = cpu;
    wake(timer.task, timer.burst, cpu, true, false);
  }
}

void Engine::startTask(TaskId t, TaskId parent, int parentCpu) {
  TaskRt& r = m_tasks[t];
  const Task& task = m_workload.tasks[t];
  if (r.state != TState::NotStarted || task.bursts.empty()) return;
  if (parent != kNoTask) {
    r.cpu = parentCpu;
  } else if (task.startCpu >= 0 && allowed(t, task.startCpu)) {
    r.cpu = task.startCpu;
  } else {
    r.cpu = 0;
    while (r.cpu < cpuCount() && !allowed(t, r.cpu)) ++r.cpu;
  }
  if (parent == kNoTask && task.bursts[0].wake != WakeKind::None) {
    // Asleep since before the trace: its first burst waits for its recorded wakeup.
    r.state = TState::Blocked;
    r.burst = 0;
    m_policy.taskNew(t, kNoTask);
    const Burst& b = task.bursts[0];
    if (b.wake == WakeKind::Task && takeWakeup(r, 0)) {
      wake(t, 0, r.cpu, false, false);
    } else if (b.wake == WakeKind::Sleep) {
      push(m_workload.originTs + b.sleepNs, EvKind::TimerWake, t, 0);
    } else if (b.wake == WakeKind::Timer) {
      int64_t& tn = m_timerNext[b.timer];
      const int64_t period = m_workload.timers[b.timer].periodNs;
      if (tn < 0) tn = m_now + period;
      push(tn, EvKind::TimerWake, t, 0);
      tn += period;
    }
    return;
  }
  m_policy.taskNew(t, parent);
  // A task alive at trace start arrives on its recorded CPU; one with no
  // recorded CPU (rt-app) is placed like a new task (wake_up_new_task).
  const uint32_t flags = parent != kNoTask || task.startCpu < 0 ? kWakeFork : kWakeInitial;
  if (parent != kNoTask) {
    m_sink.onFork(m_now, parentCpu, parent, t);
    ++m_stats.forks;
  }
  r.state = TState::Runnable;
  r.burst = 0;
  r.done = 0;
  m_outcome[t].firstStart = m_now;
  if (task.inMakespan) m_firstBurstStart = std::min(m_firstBurstStart, m_now);
  const int cpu = m_policy.selectCpu(t, flags, parent != kNoTask ? parentCpu : r.cpu);
  if (!allowed(t, cpu)) {
    fail(std::string(m_policy.name()) + ": chose CPU " + std::to_string(cpu) + " for task " + task.comm +
         ", which it may not run on");
    return;
  }
  r.cpu = cpu;  // a new task's first placement is not a migration (__set_task_cpu)
  m_inWakeup = parent != kNoTask;  // a task already running when the trace began arrives without a wakeup
  m_policy.enqueue(cpu, t, flags);
  if (parent != kNoTask) {
    m_sink.onWakeup(m_now, parentCpu, parent, false, t, cpu, true);
    ++m_stats.wakeups;
  }
  m_policy.checkPreemptWakeup(cpu, t, flags);
  m_inWakeup = false;
}

void Engine::wake(TaskId t, uint32_t burst, int ctxCpu, bool irq, bool sync) {
  TaskRt& r = m_tasks[t];
  if (r.state != TState::Blocked || r.burst != burst) return;
  const TaskId ctxTask = curr(ctxCpu);  // the waker, or whatever the interrupt hit
  m_sink.onWaking(m_now, ctxCpu, ctxTask, irq, t, r.cpu);
  r.state = TState::Runnable;
  r.done = 0;
  TaskOutcome& o = m_outcome[t];
  if (o.firstStart < 0) o.firstStart = m_now;
  if (m_workload.tasks[t].inMakespan) m_firstBurstStart = std::min(m_firstBurstStart, m_now);
  const uint32_t flags = (sync ? kWakeSync : 0u) | (irq ? kWakeIrq : 0u);
  const int cpu = m_policy.selectCpu(t, flags, ctxCpu);
  if (!allowed(t, cpu)) {
    fail(std::string(m_policy.name()) + ": chose CPU " + std::to_string(cpu) + " for task " +
         m_workload.tasks[t].comm + ", which it may not run on");
    return;
  }
  if (cpu != r.cpu) {
    m_sink.onMigrate(m_now, ctxCpu, ctxTask, t, r.cpu, cpu);
    ++m_stats.migrations;
    r.cpu = cpu;
  }
  // ttwu_queue_wakelist(): a waker on another CPU leaves the wakee on an idle
  // CPU's wakelist, and that CPU queues it when the IPI has brought it out of
  // idle. Until then no runqueue holds it: a CPU going idle meanwhile finds
  // nothing to pull, where a wakee queued at once was taken by its idle
  // balance (docs/models.md 8.1).
  CpuRt& target = m_cpus[static_cast<size_t>(cpu)];
  if (m_config.ttwuQueue && cpu != ctxCpu && idle(cpu) && !target.needResched && !target.forcedIdle) {
    if (const int64_t delay = drawWakeupDelay(WakeupPath::RemoteIdle); delay > 0) {
      r.state = TState::Waking;
      ++target.wakelist;
      push(m_now + delay, EvKind::Wakelist, t, flags);
      return;
    }
  }
  m_inWakeup = true;  // whatever reschedules from here on (enqueue's update_curr too) is this wakeup's doing
  queueWoken(t, cpu, flags, ctxCpu, ctxTask, irq);
  m_inWakeup = false;
}

void Engine::takeFromWakelist(TaskId t, uint32_t flags) {
  TaskRt& r = m_tasks[t];
  const int cpu = r.cpu;
  --m_cpus[static_cast<size_t>(cpu)].wakelist;
  r.state = TState::Runnable;
  // sched_ttwu_pending() on the woken CPU, in its IPI: the delay is paid, so a
  // reschedule here is local and at once.
  m_ctxCpu = cpu;
  queueWoken(t, cpu, flags, cpu, curr(cpu), true);
}

void Engine::queueWoken(TaskId t, int cpu, uint32_t flags, int ctxCpu, TaskId ctxTask, bool irq) {
  m_policy.enqueue(cpu, t, flags);
  m_sink.onWakeup(m_now, ctxCpu, ctxTask, irq, t, cpu, false);
  ++m_stats.wakeups;
  m_policy.checkPreemptWakeup(cpu, t, flags);
}

core::TaskState Engine::blockStateOf(TaskId t) const {
  const TaskRt& r = m_tasks[t];
  if (r.state == TState::Dead) return core::TaskState::Dead;
  const Task& task = m_workload.tasks[t];
  if (r.state == TState::Blocked && r.burst < task.bursts.size()) return task.bursts[r.burst].blockState;
  return core::TaskState::Sleeping;
}

void Engine::schedule(int cpu) {
  CpuRt& c = m_cpus[static_cast<size_t>(cpu)];
  const TaskId prev = c.curr;
  settle(cpu);
  const bool prevRunnable = prev != kNoTask && m_tasks[prev].state == TState::Running;
  c.needResched = false;
  c.ipiPending = false;  // whatever made it schedule now, a pending IPI has nothing left to do
  m_switchingOut = prevRunnable ? prev : kNoTask;
  const TaskId next = m_policy.pickNext(cpu, prev, prevRunnable);
  m_switchingOut = kNoTask;
  const bool forcedIdle = next == kNoTask && m_policy.forcedIdle(cpu);
  if (next != kNoTask) {
    const bool ok = next == prev ? prevRunnable && m_tasks[prev].cpu == cpu
                                 : next < m_tasks.size() && m_tasks[next].state == TState::Runnable && allowed(next, cpu);
    if (!ok) {
      fail(std::string(m_policy.name()) + ": picked task " +
           (next < m_tasks.size() ? m_workload.tasks[next].comm : std::string("?")) + " on CPU " +
           std::to_string(cpu) + " though it is not runnable there");
      return;
    }
  }
  if (next == prev) {
    if (next == kNoTask && forcedIdle != c.forcedIdle) {
      c.forcedIdle = forcedIdle;
      m_sink.onIdleKind(m_now, cpu, forcedIdle);
    }
    return;
  }
  core::TaskState prevState = core::TaskState::RunnablePreempted;
  if (prev != kNoTask) {
    m_outcome[prev].runtimeNs += m_now - c.since;
    if (prevRunnable)
      m_tasks[prev].state = TState::Runnable;
    else
      prevState = blockStateOf(prev);
  }
  if (next != kNoTask) {
    TaskRt& nr = m_tasks[next];
    if (nr.cpu != cpu) {
      m_sink.onMigrate(m_now, cpu, prev, next, nr.cpu, cpu);
      ++m_stats.migrations;
      nr.cpu = cpu;
    }
  }
  m_sink.onSwitch(m_now, cpu, prev, prevState, next, forcedIdle);
  ++m_stats.switches;
  if (m_movedWhileSwitchingOut.task != kNoTask) {
    const auto [t, from, to] = std::exchange(m_movedWhileSwitchingOut, {});
    m_sink.onMigrate(m_now, to, curr(to), t, from, to);
  }
  // Scheduler work charged to prev and not yet done (chargeCpu, a switch cost
  // cut short) still occupies the CPU: the next task waits for it.
  const int64_t charged = c.pendingCharge + (prev != kNoTask ? std::max<int64_t>(0, c.progressFrom - m_now) : 0);
  c.pendingCharge = 0;
  c.curr = next;
  c.forcedIdle = forcedIdle;
  c.since = m_now;
  ++c.gen;  // whatever milestone was armed belonged to prev
  if (next != kNoTask) {
    TaskRt& nr = m_tasks[next];
    nr.state = TState::Running;
    int64_t cost = m_config.contextSwitchNs + charged;
    if (nr.lastRanCpu >= 0 && nr.lastRanCpu != cpu) cost += m_config.migrationNs;
    nr.lastRanCpu = cpu;
    c.progressFrom = m_now + cost;
    c.rate = rateOf(cpu);
    armMilestone(cpu);
    if (!c.tickArmed) startTick(cpu);
  }
  // A sibling's speed depends on whether this thread of the core is busy.
  if (m_smtContention && (prev == kNoTask || next == kNoTask))
    for (int s : m_siblings[static_cast<size_t>(cpu)]) refreshRate(s);
}

void Engine::flushResched() {
  if (!m_reschedPending) return;  // most events reschedule nothing: no walk over the CPUs
  for (int round = 0; round < 100000; ++round) {
    bool any = false, deferred = false;
    for (int cpu = 0; cpu < cpuCount(); ++cpu) {
      const CpuRt& c = m_cpus[static_cast<size_t>(cpu)];
      if (!c.needResched) continue;
      if (c.curr != kNoTask && m_tasks[c.curr].inVfork) {
        deferred = true;
        continue;
      }
      any = true;
      schedule(cpu);

      if (!m_error.empty()) return;
    }
    if (!any) {
      m_reschedPending = deferred;
      return;
    }
  }
  fail(std::string(m_policy.name()) + ": CPUs keep rescheduling each other without progress at t=" +
       std::to_string(m_now));
}

void Engine::startTick(int cpu) {
  CpuRt& c = m_cpus[static_cast<size_t>(cpu)];
  c.tickArmed = true;
  push(nextTickAt(m_now), EvKind::Tick, static_cast<uint32_t>(cpu), 0);
}

double Engine::rateOf(int cpu) const {
  const CpuRt& c = m_cpus[static_cast<size_t>(cpu)];
  double rate = static_cast<size_t>(cpu) < m_config.cpuSpeed.size() ? m_config.cpuSpeed[static_cast<size_t>(cpu)] : 1.0;
  rate *= c.freqScale;
  if (m_smtContention && c.curr != kNoTask) {
    bool siblingBusy = false;
    for (int s : m_siblings[static_cast<size_t>(cpu)]) siblingBusy |= m_cpus[static_cast<size_t>(s)].curr != kNoTask;
    if (siblingBusy) {
      const double own = attributes(c.curr).smtFactor;
      rate *= own > 0 ? own : m_config.smtFactor;
    }
  }
  return rate;
}

void Engine::refreshRate(int cpu) {
  CpuRt& c = m_cpus[static_cast<size_t>(cpu)];
  const double rate = rateOf(cpu);
  if (rate == c.rate) return;
  // Idle, or its task is blocking or exiting right now (a policy reacting to
  // the dequeue): the switch that follows arms whatever runs next at this rate.
  if (c.curr == kNoTask || m_tasks[c.curr].state != TState::Running) {
    c.rate = rate;
    return;
  }
  settle(cpu);
  c.rate = rate;
  armMilestone(cpu);
}

void Engine::chargeCpu(int cpu, int64_t ns) {
  if (cpu < 0 || cpu >= cpuCount() || ns <= 0) return;
  CpuRt& c = m_cpus[static_cast<size_t>(cpu)];
  if (c.curr == kNoTask) return;
  if (m_tasks[c.curr].state != TState::Running) {
    c.pendingCharge += ns;
    return;
  }
  settle(cpu);
  c.progressFrom = std::max(c.progressFrom, m_now) + ns;
  armMilestone(cpu);
}

void Engine::setFrequencyScale(int cpu, double scale) {
  CpuRt& c = m_cpus[static_cast<size_t>(cpu)];
  if (scale == c.freqScale) return;
  c.freqScale = scale;
  refreshRate(cpu);  // settles the running task's progress at the old rate first
}

}  // namespace replay
