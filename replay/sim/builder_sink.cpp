#include "replay/sim/event_sink.h"

namespace replay {

BuilderSink::BuilderSink(core::SchedBuilder& builder, const Workload& workload, std::vector<TaskAttributes> attrs)
    : m_b(builder), m_workload(workload), m_attrs(std::move(attrs)), m_attrsDone(m_attrs.size(), 0) {
  m_switch = m_b.eventType("sched_switch");
  m_waking = m_b.eventType("sched_waking");
  m_wakeup = m_b.eventType("sched_wakeup");
  m_wakeupNew = m_b.eventType("sched_wakeup_new");
  m_migrate = m_b.eventType("sched_migrate_task");
  m_fork = m_b.eventType("sched_process_fork");
  m_exit = m_b.eventType("sched_process_exit");
}

void BuilderSink::onSwitch(int64_t ts, int cpu, TaskId prev, core::TaskState prevState, TaskId next,
                           bool forcedIdle) {
  if (static_cast<size_t>(cpu) >= m_swapperComm.size()) {
    for (size_t c = m_swapperComm.size(); c <= static_cast<size_t>(cpu); ++c)
      m_swapperComm.push_back("swapper/" + std::to_string(c));
  }
  core::SwitchArgs a;
  const std::string& swapper = m_swapperComm[static_cast<size_t>(cpu)];
  a.prevTid = tidOf(prev);
  a.prevComm = prev == kNoTask ? std::string_view(swapper) : std::string_view(m_workload.tasks[prev].comm);
  a.prevPrio = prev == kNoTask ? 120 : m_workload.tasks[prev].prio;
  a.prevState = prev == kNoTask ? core::TaskState::RunnablePreempted : prevState;
  a.nextTid = tidOf(next);
  a.nextComm = next == kNoTask ? std::string_view(swapper) : std::string_view(m_workload.tasks[next].comm);
  a.nextPrio = next == kNoTask ? 120 : m_workload.tasks[next].prio;
  a.forcedIdle = forcedIdle;
  m_b.countEvent(m_switch);
  m_b.onSwitch({ts, cpu, a.prevTid, 0}, a);
  noteAttributes(prev);
  noteAttributes(next);
}

void BuilderSink::notePolicy(const Task& task) {
  core::TaskPolicy policy = core::TaskPolicy::Normal;
  switch (task.policy) {
    case SchedPolicy::Normal: policy = core::TaskPolicy::Normal; break;
    case SchedPolicy::Batch: policy = core::TaskPolicy::Batch; break;
    case SchedPolicy::Idle: policy = core::TaskPolicy::Idle; break;
    case SchedPolicy::Fifo: policy = core::TaskPolicy::Fifo; break;
    case SchedPolicy::RR: policy = core::TaskPolicy::RR; break;
    case SchedPolicy::Iso: policy = core::TaskPolicy::Iso; break;
  }
  m_b.setTaskPolicy(task.tid, policy, std::vector<core::CpuId>(task.affinity.begin(), task.affinity.end()));
}

void BuilderSink::onIdleKind(int64_t ts, int cpu, bool forcedIdle) { m_b.onIdleKind({ts, cpu, 0, 0}, forcedIdle); }

void BuilderSink::onCounter(int64_t ts, core::CounterKind kind, int32_t index, double value) {
  m_b.onCounter(kind, index, ts, value);
}

void BuilderSink::onWaking(int64_t ts, int cpu, TaskId ctxTask, bool irq, TaskId wakee, int targetCpu) {
  const Task& t = m_workload.tasks[wakee];
  m_b.countEvent(m_waking);
  m_b.onWaking({ts, cpu, tidOf(ctxTask), static_cast<uint8_t>(irq ? core::kCtxHardIrq : 0)},
               {t.tid, t.comm, t.prio, targetCpu});
  noteAttributes(wakee);
}

void BuilderSink::onWakeup(int64_t ts, int cpu, TaskId ctxTask, bool irq, TaskId wakee, int targetCpu, bool isNew) {
  const Task& t = m_workload.tasks[wakee];
  m_b.countEvent(isNew ? m_wakeupNew : m_wakeup);
  m_b.onWakeup({ts, cpu, tidOf(ctxTask), static_cast<uint8_t>(irq ? core::kCtxHardIrq : 0)},
               {t.tid, t.comm, t.prio, targetCpu}, isNew);
}

void BuilderSink::onMigrate(int64_t ts, int cpu, TaskId ctxTask, TaskId p, int origCpu, int destCpu) {
  const Task& t = m_workload.tasks[p];
  m_b.countEvent(m_migrate);
  m_b.onMigrate({ts, cpu, tidOf(ctxTask), 0}, t.tid, t.comm, t.prio, origCpu, destCpu);
}

void BuilderSink::onFork(int64_t ts, int cpu, TaskId parent, TaskId child) {
  const Task& p = m_workload.tasks[parent];
  const Task& c = m_workload.tasks[child];
  m_b.countEvent(m_fork);
  m_b.onFork({ts, cpu, p.tid, 0}, p.tid, p.comm, c.tid, c.comm, c.tgid);
  noteAttributes(parent);
  noteAttributes(child);
}

void BuilderSink::onExit(int64_t ts, int cpu, TaskId p) {
  const Task& t = m_workload.tasks[p];
  m_b.countEvent(m_exit);
  m_b.onExit({ts, cpu, t.tid, 0}, t.tid, t.comm, t.prio);
}

void BuilderSink::onEnd(int64_t ts) {
  // Not an event of the trace: it only moves the model's end, so that work
  // still running when an rt-app duration ends is accounted up to that instant.
  m_b.onOtherEvent({ts, 0, -1, 0});
}

}  // namespace replay
