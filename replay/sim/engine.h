// The deterministic discrete-event simulator: owns simulated time, each CPU's
// current task and work progress, blocking and wakeup dependencies, ticks, and
// the output event stream; asks a Policy for every scheduling decision. Same
// workload, topology, policy and parameters give the same events, bit for bit
// (no wall clock, no randomness, no unordered iteration). Driven by
// replay::runReplay; policies call its query/resched methods.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/topology.h"
#include "replay/sim/event_sink.h"
#include "replay/sim/params.h"
#include "replay/sim/policy.h"
#include "replay/workload/task_rules.h"
#include "replay/workload/workload.h"

namespace replay {

// Work progresses at rate(cpu) ns of work per ns of time (1.0 = full speed):
// cpu_speed x the frequency scale a policy sets (schedutil) x the SMT factor
// of the running task while another thread of its core runs a task. The
// engine settles progress at the old rate before any of these change.
/// How long a CPU takes from a wakeup that makes it reschedule to its
/// schedule(): a constant, or draws from a measured distribution.
struct WakeupDelay {
  int64_t constantNs = 0;
  const DelayDistribution* distribution = nullptr;  ///< set: each wakeup draws from it
};

struct EngineConfig {
  int hz = 250;
  int64_t contextSwitchNs = 0;  ///< CPU time of a switch, before the next task makes progress
  int64_t migrationNs = 0;      ///< extra time when a task runs on another CPU than last time
  /// Per WakeupPath; a kick of an idle CPU outside a wakeup (balancing) takes RemoteIdle's.
  std::array<WakeupDelay, kWakeupPaths> wakeupDelay;
  /// tick_delay_ns: a tick runs this long after its instant on the HZ grid (the
  /// tick interrupt's and the switch's delay), drawn per tick when measured.
  WakeupDelay tickDelay;
  uint64_t seed = 1;  ///< of the draws from measured distributions and shares
  bool countedWakeups = false;  ///< wakeup_dependency=counted
  /// irq_wakeup_cpu: whose context an interrupt's wakeup runs in.
  enum class IrqWakeupCpu : uint8_t { Sleeper, Recorded, KernelThreadsRecorded } irqWakeupCpu = IrqWakeupCpu::Sleeper;
  /// irq_wakeup_time: when an interrupt's sleep ends.
  enum class SleepEnd : uint8_t { Measured, Relative, Recorded } sleepEnd = SleepEnd::Measured;
  int64_t timerSlackNs = 0;  ///< timer_slack_ns of fair tasks' timer sleeps (RT tasks sleep with none)
  /// ttwu_queue: a remote wakeup onto an idle CPU is queued there only when
  /// that CPU takes it in (core.c's wakelist), not when the waker picks it.
  bool ttwuQueue = false;
  /// preempt=none: a vfork parent runs on to its vfork wait whatever reschedules
  /// its CPU meanwhile (no preemption point in that system call).
  bool preemptNone = false;
  std::vector<double> cpuSpeed;  ///< per CPU (missing CPUs: 1.0)
  double smtFactor = 1.0;        ///< a task's rate while an SMT sibling is busy (topologies with SMT only)
  std::vector<TaskAttributes> taskAttrs;  ///< per workload task (missing: defaults)
};

/// Declares the engine's parameters (hz, context_switch_ns, migration_ns, the
/// wakeup delays, cpu_speed, smt.factor, smt.task_factor).
void defineEngineParams(Params& params);
/// preempt=settings: the preemption model the settings beside a recording
/// name (core::kPreemptSetting), else none, with where it came from.
void resolvePreempt(Params& params, bool isRecording, bool settingsKnown, const std::string& setting);
/// Reads them back; errors for malformed cpu_speed lists. Per-task attributes
/// (smt.task_factor and the policies' cookies and clamps) are resolved by the caller.
core::Result<EngineConfig> engineConfigFrom(const Params& params, int cpuCount);

/// What happened to each task in the replay, for validation.
struct TaskOutcome {
  int64_t runtimeNs = 0;   ///< time on a CPU
  int64_t workDone = 0;    ///< work consumed (ns at full speed)
  int64_t workTotal = 0;   ///< the task's work in the workload (Task::totalWork())
  int64_t firstStart = -1; ///< when its first burst became runnable
  int64_t lastEnd = -1;    ///< when its last completed burst ended
  bool finished = false;   ///< every burst done (exited, or asleep for good)
};

struct EngineStats {
  uint64_t switches = 0, wakeups = 0, migrations = 0, ticks = 0, events = 0, forks = 0, exits = 0;
  /// Ends of bursts before a WakeKind::Task block: blocked there, or went on
  /// because the waker had already passed its point (the recorded block lost);
  /// the same for dataflow gates (Burst::gate).
  uint64_t taskBlocks = 0, taskBlocksSkipped = 0, gateBlocks = 0, gatesPassed = 0;
  /// Per recorded block on a task's wakeup (not gates), when the wakee ended
  /// the burst before it: how far the waker's work was past its recorded
  /// wakeup point (the block lost), or short of it (kept; measured when the
  /// waker gets there). How far the replay has drifted from the recorded
  /// interleaving where it decides the blocking.
  std::vector<int64_t> wakerPastNs, wakerShortNs;
  int64_t endTs = 0;
};

class Engine {
 public:
  Engine(const Workload& workload, const core::Topology& topology, Policy& policy, EngineConfig config,
         EventSink& sink);

  /// Runs to completion (or to the workload's duration). Errors: invalid
  /// affinities for the topology, a policy decision that breaks the rules
  /// (picking a task that cannot run), or cancellation.
  core::Status run(const std::stop_token& stop = {});

  const std::vector<TaskOutcome>& outcomes() const { return m_outcome; }
  const EngineStats& stats() const { return m_stats; }
  /// From the first burst's start to the last completed burst's end, over the
  /// makespan tasks (Task::inMakespan).
  int64_t makespan() const { return m_lastBurstEnd >= m_firstBurstStart ? m_lastBurstEnd - m_firstBurstStart : 0; }

  // --- Queries and actions for policies ---
  int64_t now() const { return m_now; }
  int cpuCount() const { return static_cast<int>(m_cpus.size()); }
  const core::Topology& topology() const { return m_topology; }
  bool online(int cpu) const { return m_cpus[static_cast<size_t>(cpu)].online; }
  size_t taskCount() const { return m_workload.tasks.size(); }
  const Task& task(TaskId t) const { return m_workload.tasks[t]; }
  /// The CPU the task runs on, is queued on, or last ran on (task_cpu()).
  int taskCpu(TaskId t) const { return m_tasks[t].cpu; }
  bool allowed(TaskId t, int cpu) const;
  TaskId curr(int cpu) const { return m_cpus[static_cast<size_t>(cpu)].curr; }
  bool idle(int cpu) const { return curr(cpu) == kNoTask; }
  /// Wakeups on their way to idle `cpu` by its wakelist (ttwu_queue), not yet
  /// queued there: rq->ttwu_pending, for which idle_cpu() says no.
  bool wakelistPending(int cpu) const { return m_cpus[static_cast<size_t>(cpu)].wakelist != 0; }
  /// When `cpu` last switched: to its current task, or to idle while it is idle.
  int64_t switchedAt(int cpu) const { return m_cpus[static_cast<size_t>(cpu)].since; }
  /// A draw in [0, 1) for a policy's measured rule that holds some of the
  /// time: a fixed sequence from `seed`, apart from the delays' draws.
  double drawPolicyChance();
  bool isRunning(TaskId t) const;
  bool isQueued(TaskId t) const;  ///< runnable and not on a CPU
  /// resched_curr(): `cpu` runs schedule() once the current event is handled.
  void resched(int cpu);
  /// A reschedule is pending on `cpu` (flagged, or an IPI on its way to an idle CPU).
  bool needResched(int cpu) const {
    const CpuRt& c = m_cpus[static_cast<size_t>(cpu)];
    return c.needResched || c.ipiPending;
  }
  /// A policy moved a queued task to `dest` (load balancing): set_task_cpu().
  void moveQueued(TaskId t, int dest);
  int hz() const { return m_config.hz; }
  int64_t tickNs() const { return m_tickNs; }
  /// The last instant of the HZ grid at or before now(): the kernel's jiffies,
  /// in ns. A tick delayed by tick_delay_ns runs in its grid instant's jiffy.
  int64_t jiffiesNs() const { return m_now / m_tickNs * m_tickNs; }
  /// Time of the last tick on `cpu` (-1 before the first).
  int64_t lastTick(int cpu) const { return m_cpus[static_cast<size_t>(cpu)].lastTick; }
  /// When the current task of `cpu` was switched in.
  int64_t runningSince(int cpu) const { return m_cpus[static_cast<size_t>(cpu)].since; }
  /// BFS's cpu_locality, also the fair class's domain levels: 0 same CPU, 1 SMT
  /// sibling, 2 shares the last-level cache, 3 another LLC of the same NUMA
  /// node, 4 another node (or a CPU outside the topology).
  int locality(int a, int b) const {
    return m_locality[static_cast<size_t>(a) * m_cpus.size() + static_cast<size_t>(b)];
  }
  /// A scheduling domain as the kernel builds them (build_sched_domains): SMT
  /// spans a core, MC an LLC, PKG a NUMA node, NUMA every CPU; a level whose
  /// span equals its child's is left out, as the kernel degenerates it. `groups`
  /// are the child level's spans inside `cpus` (single CPUs under the lowest
  /// level). Shared by the CPUs it spans; `id` is dense, for per-domain state.
  struct SchedDomain {
    int level = 0;  ///< the locality() of the CPUs it adds: 1 SMT, 2 MC, 3 PKG, 4 NUMA
    int id = 0;
    std::vector<int> cpus;
    std::vector<std::vector<int>> groups;
  };
  /// `cpu`'s domains, innermost first (empty on a one-CPU machine).
  const std::vector<const SchedDomain*>& domains(int cpu) const { return m_cpuDomains[static_cast<size_t>(cpu)]; }
  int domainCount() const { return static_cast<int>(m_domains.size()); }
  /// The other SMT threads of `cpu`'s core (empty without SMT).
  const std::vector<int>& siblings(int cpu) const { return m_siblings[static_cast<size_t>(cpu)]; }
  /// Current work rate of `cpu`.
  double rate(int cpu) const { return m_cpus[static_cast<size_t>(cpu)].rate; }
  /// The task's cookie, clamps and SMT factor as the replay options set them.
  const TaskAttributes& attributes(TaskId t) const {
    static const TaskAttributes kDefaults;
    return t < m_config.taskAttrs.size() ? m_config.taskAttrs[t] : kDefaults;
  }
  /// Frequency as a fraction of the CPU's maximum (schedutil): work slows in proportion.
  void setFrequencyScale(int cpu, double scale);
  double frequencyScale(int cpu) const { return m_cpus[static_cast<size_t>(cpu)].freqScale; }
  /// Core scheduling changed whether idle `cpu` is forced idle without it
  /// scheduling (its pick stayed idle): the output marks the change now.
  void setIdleForced(int cpu, bool forced) {
    CpuRt& c = m_cpus[static_cast<size_t>(cpu)];
    if (c.curr != kNoTask || c.forcedIdle == forced) return;
    c.forcedIdle = forced;
    m_sink.onIdleKind(m_now, cpu, forced);
  }
  /// Scheduler work (e.g. uclamp's runqueue updates) takes `ns` of `cpu`'s time
  /// now: its running task progresses that much later; a CPU switching away
  /// from a blocking task charges it to the next one; an idle CPU absorbs it.
  void chargeCpu(int cpu, int64_t ns);
  /// The CPU the current event runs on (the waker's for a wakeup), -1 if none.
  int contextCpu() const { return m_ctxCpu; }
  /// Records a counter sample (e.g. CPU frequency) at the current time.
  void emitCounter(core::CounterKind kind, int32_t index, double value) { m_sink.onCounter(m_now, kind, index, value); }

 private:
  // Waking: woken onto a CPU's wakelist, not yet queued on it.
  enum class TState : uint8_t { NotStarted, Blocked, Waking, Runnable, Running, Dead, Done };
  static constexpr int64_t kNoMark = INT64_MIN;
  struct TaskRt {
    TState state = TState::NotStarted;
    int cpu = 0;
    uint32_t burst = 0;       // current burst, or the one it waits for when blocked
    int64_t done = 0;         // work done in the current burst
    uint32_t nextTrigger = 0;
    uint32_t wokenBase = 0;   // index of its bursts' flags in m_woken
    int64_t workBefore = 0;   // work of its bursts before the current one
    // For EngineStats::wakerPastNs/wakerShortNs: the waker's work position when
    // this task blocked on its recorded wakeup, and the recorded wakeup points
    // of triggers that fired for bursts it has not reached yet (few: kept here,
    // beside what both sides touch anyway, rather than in a per-burst array).
    int64_t blockMark = kNoMark;
    std::vector<std::pair<uint32_t, int64_t>> firedMarks;
    uint32_t tokens = 0;      // counted wakeups it has received and not yet used
    int lastRanCpu = -1;
    bool inVfork = false;  // forked a child it now waits for in the same system call (CLONE_VFORK)
  };
  struct CpuRt {
    TaskId curr = kNoTask;
    bool online = false;
    bool needResched = false;
    bool tickArmed = false;
    bool ipiPending = false;    // an IPI is waking this idle CPU
    uint32_t wakelist = 0;      // wakeups on their way to it (ttwu_queue)
    uint64_t ipiGen = 0;
    int64_t since = 0;          // curr switched in
    int64_t progressFrom = 0;   // curr makes progress from here (after switch costs)
    int64_t pendingCharge = 0;  // chargeCpu() while its task was leaving: paid by the next task
    int64_t target = 0;         // work point of the armed milestone
    double rate = 1.0;
    double freqScale = 1.0;
    bool forcedIdle = false;    // idle because core scheduling forces it (Policy::forcedIdle at the last pick)
    uint64_t gen = 0;           // invalidates stale milestone events
    int64_t lastTick = -1;
    // The timer sleeps armed here with slack, by hard expiry: any interrupt of
    // this CPU's timers from a sleep's soft expiry on ends it (hrtimer slack).
    struct SlackTimer {
      int64_t soft;
      int64_t hard;
      TaskId task;
      uint32_t burst;
    };
    std::vector<SlackTimer> slackTimers;
  };
  enum class EvKind : uint8_t { Arrive, TimerWake, Milestone, Tick, Ipi, Wakelist, End };
  struct Event {
    int64_t time;
    uint64_t seq;
    EvKind kind;
    uint32_t a;
    uint64_t b;
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };
  /// Pending events by (time, seq). The earliest is held outside the heap
  /// while it is known: a running task's next milestone is usually due before
  /// anything else queued, and is then pushed and popped without moving the
  /// heap (the milestones are nine in ten events of a hackbench replay).
  class EventQueue {
   public:
    bool empty() const { return !m_hasFront && m_heap.empty(); }
    void push(const Event& e) {
      if (m_hasFront ? m_front > e : m_heap.empty() || m_heap.front() > e) {
        if (m_hasFront) heapPush(m_front);
        m_front = e;
        m_hasFront = true;
      } else {
        heapPush(e);
      }
    }
    Event pop() {
      if (m_hasFront) {
        m_hasFront = false;
        return m_front;
      }
      std::pop_heap(m_heap.begin(), m_heap.end(), std::greater<>());
      const Event e = m_heap.back();
      m_heap.pop_back();
      return e;
    }

   private:
    void heapPush(const Event& e) {
      m_heap.push_back(e);
      std::push_heap(m_heap.begin(), m_heap.end(), std::greater<>());
    }
    std::vector<Event> m_heap;
    Event m_front{};  // earlier than every event of m_heap while m_hasFront
    bool m_hasFront = false;
  };

  void push(int64_t time, EvKind kind, uint32_t a, uint64_t b);
  void handle(const Event& e);
  /// The timer interrupt of `cpu` at m_now also ends the slack timer sleeps due by then.
  void expireSlackTimers(int cpu);
  void settle(int cpu);
  void armMilestone(int cpu);
  void onMilestone(int cpu);
  void fireTriggers(int cpu, TaskId t);
  void burstDone(int cpu, TaskId t);
  void block(int cpu, TaskId t, uint32_t waitBurst);
  void wake(TaskId t, uint32_t burst, int ctxCpu, bool irq, bool sync);
  void takeFromWakelist(TaskId t, uint32_t flags);
  /// The woken task joins `cpu`'s runqueue: sched_wakeup, and the wakeup preemption check.
  void queueWoken(TaskId t, int cpu, uint32_t flags, int ctxCpu, TaskId ctxTask, bool irq);
  void startTask(TaskId t, TaskId parent, int parentCpu);
  void schedule(int cpu);
  void flushResched();
  void startTick(int cpu);
  double rateOf(int cpu) const;
  void refreshRate(int cpu);
  core::TaskState blockStateOf(TaskId t) const;
  void fail(std::string message);
  int64_t drawWakeupDelay(WakeupPath path);
  int64_t nextTickAt(int64_t after);  // the first tick instant of the HZ grid after `after`, plus its delay
  /// Whether the wait before `burst` is already over (its wakeup came early), using it up.
  bool takeWakeup(TaskRt& r, uint32_t burst);
  /// `r` ended the burst before `burst`, a block on a task's wakeup: the
  /// waker's distance from its point, now (fired) or when it gets there.
  void noteWakerDistance(TaskRt& r, uint32_t burst, const Burst& b, bool fired);
  /// Work `t` has done over all its bursts, up to now if it is running.
  int64_t workPosition(TaskId t) const;
  /// The work the CPU's task has done since its progress was last settled.
  int64_t unsettledProgress(const CpuRt& c) const;
  /// A WakeKind::Sleep burst of `task` whose sleep ends at its recorded instant (irq_wakeup_time).
  bool endsAtRecordedInstant(const Task& task, const Burst& b) const {
    if (b.recordedStart < 0) return false;
    return m_config.sleepEnd == EngineConfig::SleepEnd::Recorded ||
           (m_config.sleepEnd == EngineConfig::SleepEnd::Measured && task.absoluteTimers && b.interruptWake);
  }

  const Workload& m_workload;
  const core::Topology& m_topology;
  Policy& m_policy;
  EngineConfig m_config;
  EventSink& m_sink;
  int64_t m_tickNs;
  int64_t m_now = 0;
  int m_ctxCpu = -1;  // CPU the current event runs on
  uint64_t m_seq = 0;
  EventQueue m_events;
  std::vector<TaskRt> m_tasks;
  std::vector<CpuRt> m_cpus;
  std::vector<uint8_t> m_woken;  // per burst: a trigger targeting it has fired
  std::vector<std::vector<uint64_t>> m_masks;  // per task: allowed CPUs bitmap (empty = all)
  std::vector<uint8_t> m_locality;
  std::vector<SchedDomain> m_domains;
  std::vector<std::vector<const SchedDomain*>> m_cpuDomains;
  void buildDomains(const core::Topology& topology);
  std::vector<std::vector<int>> m_siblings;  // per CPU: the other threads of its core
  std::vector<int64_t> m_timerNext;
  std::vector<TaskOutcome> m_outcome;
  EngineStats m_stats;
  int64_t m_firstBurstStart = INT64_MAX;
  int64_t m_lastBurstEnd = INT64_MIN;
  std::string m_error;
  bool m_ended = false;
  bool m_smtContention = false;
  bool m_reschedPending = false;  // some CPU's needResched may be set: flushResched() has work
  bool m_inWakeup = false;  // resched() calls come from a wakeup's preemption check
  TaskId m_switchingOut = kNoTask;  // prev inside its CPU's pickNext(): movable (moveQueued)
  struct DeferredMove {
    TaskId task = kNoTask;
    int from = -1, to = -1;
  } m_movedWhileSwitchingOut;  // traced after prev's switch out, as the kernel's stopper moves it
  uint64_t m_rng = 0;
  uint64_t m_tickRng = 0;  // a stream of its own: tick delays leave the wakeup delays' draws as they were
  uint64_t m_policyRng = 0;  // the same for policies' draws
};

}  // namespace replay
