// Builds small models event by event for unit tests, with comms derived from
// tids ("t<tid>") unless given. Thin sugar over core::SchedBuilder so tests read
// like the trace they describe.
#pragma once

#include <memory>
#include <string>

#include "core/sched_builder.h"

namespace testing_support {

class TraceBuilder {
 public:
  static std::string commOf(int tid) { return tid == 0 ? "swapper" : "t" + std::to_string(tid); }

  /// prevState in ftrace letters ("R", "R+", "S", "D", "X").
  TraceBuilder& sw(int64_t ts, int cpu, int prevTid, const char* prevState, int nextTid, int prevPrio = 120,
                   int nextPrio = 120) {
    const std::string prevComm = commOf(prevTid), nextComm = commOf(nextTid);
    core::SwitchArgs a;
    a.prevTid = prevTid;
    a.prevComm = prevComm;
    a.prevPrio = prevPrio;
    a.prevState = core::taskStateFromLetters(prevState).value_or(core::TaskState::Unknown);
    a.nextTid = nextTid;
    a.nextComm = nextComm;
    a.nextPrio = nextPrio;
    count("sched_switch");
    m_b.onSwitch({ts, cpu, prevTid, 0}, a);
    return *this;
  }
  TraceBuilder& waking(int64_t ts, int cpu, int wakerTid, int tid, int targetCpu, uint8_t irq = 0) {
    const std::string comm = commOf(tid);
    count("sched_waking");
    m_b.onWaking({ts, cpu, wakerTid, irq}, {tid, comm, 120, targetCpu});
    return *this;
  }
  TraceBuilder& wakeup(int64_t ts, int cpu, int wakerTid, int tid, int targetCpu, bool isNew = false) {
    const std::string comm = commOf(tid);
    count(isNew ? "sched_wakeup_new" : "sched_wakeup");
    m_b.onWakeup({ts, cpu, wakerTid, 0}, {tid, comm, 120, targetCpu}, isNew);
    return *this;
  }
  TraceBuilder& fork(int64_t ts, int cpu, int parent, int child) {
    count("sched_process_fork");
    m_b.onFork({ts, cpu, parent, 0}, parent, commOf(parent), child, commOf(child));
    return *this;
  }
  TraceBuilder& exec(int64_t ts, int cpu, int tid, const char* file) {
    count("sched_process_exec");
    m_b.onExec({ts, cpu, tid, 0}, tid, tid, file);
    return *this;
  }
  TraceBuilder& exit(int64_t ts, int cpu, int tid) {
    count("sched_process_exit");
    m_b.onExit({ts, cpu, tid, 0}, tid, commOf(tid), 120);
    return *this;
  }
  TraceBuilder& migrate(int64_t ts, int cpu, int tid, int orig, int dest) {
    count("sched_migrate_task");
    m_b.onMigrate({ts, cpu, -1, 0}, tid, commOf(tid), 120, orig, dest);
    return *this;
  }
  TraceBuilder& other(int64_t ts, int cpu, int ctxTid) {
    count("other");
    m_b.onOtherEvent({ts, cpu, ctxTid, 0});
    return *this;
  }
  TraceBuilder& runtimeStat(int64_t ts, int cpu, int ctxTid, int tid, int64_t runtimeNs) {
    count("sched_stat_runtime");
    m_b.onRuntimeStat({ts, cpu, ctxTid, 0}, tid, runtimeNs);
    return *this;
  }
  TraceBuilder& loss(int cpu, int64_t ts, int64_t n) {
    m_b.onDataLoss(cpu, ts, n);
    return *this;
  }
  core::SchedBuilder& builder() { return m_b; }
  std::shared_ptr<core::TraceModel> build() { return m_b.finalize(); }

 private:
  void count(const char* name) { m_b.countEvent(m_b.eventType(name)); }
  core::SchedBuilder m_b;
};

}  // namespace testing_support
