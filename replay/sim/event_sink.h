// Where the simulator's scheduling events go, in time order: a SchedBuilder
// (the replayed core::TraceModel), an ftrace text file, or both. Implemented in
// builder_sink.cpp and ftrace_writer.cpp; called by replay::Engine.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/sched_builder.h"
#include "replay/workload/task_rules.h"
#include "replay/workload/workload.h"

namespace replay {

class EventSink {
 public:
  virtual ~EventSink() = default;
  /// `ctxTask` is the task current on `cpu` when the event fires (kNoTask: idle).
  /// `forcedIdle`: next is idle because core scheduling forces the CPU idle.
  virtual void onSwitch(int64_t ts, int cpu, TaskId prev, core::TaskState prevState, TaskId next,
                        bool forcedIdle) = 0;
  /// An idle CPU becomes forced idle, or stops being forced idle, without a switch.
  virtual void onIdleKind(int64_t ts, int cpu, bool forcedIdle) = 0;
  virtual void onCounter(int64_t ts, core::CounterKind kind, int32_t index, double value) = 0;
  virtual void onWaking(int64_t ts, int cpu, TaskId ctxTask, bool irq, TaskId wakee, int targetCpu) = 0;
  virtual void onWakeup(int64_t ts, int cpu, TaskId ctxTask, bool irq, TaskId wakee, int targetCpu, bool isNew) = 0;
  virtual void onMigrate(int64_t ts, int cpu, TaskId ctxTask, TaskId p, int origCpu, int destCpu) = 0;
  virtual void onFork(int64_t ts, int cpu, TaskId parent, TaskId child) = 0;
  virtual void onExit(int64_t ts, int cpu, TaskId p) = 0;
  /// The replay ends at `ts` (may be later than the last event: rt-app duration).
  virtual void onEnd(int64_t ts) = 0;
};

/// Feeds a core::SchedBuilder with the workload's tids, comms and prios.
class BuilderSink final : public EventSink {
 public:
  /// `attrs`: per task cookie and clamps to store in the model (may be empty).
  BuilderSink(core::SchedBuilder& builder, const Workload& workload, std::vector<TaskAttributes> attrs = {});
  void onSwitch(int64_t ts, int cpu, TaskId prev, core::TaskState prevState, TaskId next, bool forcedIdle) override;
  void onIdleKind(int64_t ts, int cpu, bool forcedIdle) override;
  void onCounter(int64_t ts, core::CounterKind kind, int32_t index, double value) override;
  void onWaking(int64_t ts, int cpu, TaskId ctxTask, bool irq, TaskId wakee, int targetCpu) override;
  void onWakeup(int64_t ts, int cpu, TaskId ctxTask, bool irq, TaskId wakee, int targetCpu, bool isNew) override;
  void onMigrate(int64_t ts, int cpu, TaskId ctxTask, TaskId p, int origCpu, int destCpu) override;
  void onFork(int64_t ts, int cpu, TaskId parent, TaskId child) override;
  void onExit(int64_t ts, int cpu, TaskId p) override;
  void onEnd(int64_t ts) override;

 private:
  int32_t tidOf(TaskId t) const { return t == kNoTask ? 0 : m_workload.tasks[t].tid; }
  // The builder creates a task's row at its first event; its attributes follow.
  void noteAttributes(TaskId t) {
    if (t == kNoTask || t >= m_attrs.size() || m_attrsDone[t]) return;
    m_attrsDone[t] = 1;
    const TaskAttributes& a = m_attrs[t];
    if (a.cookie || a.uclampMin >= 0 || a.uclampMax >= 0)
      m_b.setTaskAttributes(m_workload.tasks[t].tid, a.cookie, a.uclampMin, a.uclampMax);
    notePolicy(m_workload.tasks[t]);
  }
  // The fairness statistics judge a replay against the policy and affinity its workload gave each task.
  void notePolicy(const Task& task);
  core::SchedBuilder& m_b;
  const Workload& m_workload;
  std::vector<TaskAttributes> m_attrs;
  std::vector<uint8_t> m_attrsDone;
  uint32_t m_switch, m_waking, m_wakeup, m_wakeupNew, m_migrate, m_fork, m_exit;
  std::vector<std::string> m_swapperComm;
};

/// Writes the events as a tracefs `trace` text file (ftrace text), with
/// nanosecond timestamps, that the ftrace importer and other tools read.
class FtraceTextSink final : public EventSink {
 public:
  static core::Result<std::unique_ptr<FtraceTextSink>> open(const std::string& path, const Workload& workload,
                                                            int cpuCount);
  ~FtraceTextSink() override;
  /// Forced idle has no ftrace event: it is written as plain idle.
  void onSwitch(int64_t ts, int cpu, TaskId prev, core::TaskState prevState, TaskId next, bool forcedIdle) override;
  void onIdleKind(int64_t, int, bool) override {}
  /// Counters (CPU frequency) are not written: the text carries the schedule only.
  void onCounter(int64_t, core::CounterKind, int32_t, double) override {}
  void onWaking(int64_t ts, int cpu, TaskId ctxTask, bool irq, TaskId wakee, int targetCpu) override;
  void onWakeup(int64_t ts, int cpu, TaskId ctxTask, bool irq, TaskId wakee, int targetCpu, bool isNew) override;
  void onMigrate(int64_t ts, int cpu, TaskId ctxTask, TaskId p, int origCpu, int destCpu) override;
  void onFork(int64_t ts, int cpu, TaskId parent, TaskId child) override;
  void onExit(int64_t ts, int cpu, TaskId p) override;
  void onEnd(int64_t ts) override;
  /// Writes the entry count into the header and closes; errors name the file.
  core::Status close();

 private:
  FtraceTextSink(const std::string& path, const Workload& workload);
  void prefix(TaskId ctx, int cpu, const char* flags, int64_t ts, const char* event);
  void flushIfFull();
  std::string m_path;
  const Workload& m_workload;
  std::FILE* m_file = nullptr;
  long m_countOffset = 0;
  uint64_t m_entries = 0;
  std::string m_buf;
  bool m_failed = false;
};

/// Sends every event to two sinks.
class TeeSink final : public EventSink {
 public:
  TeeSink(EventSink& a, EventSink& b) : m_a(a), m_b(b) {}
  void onSwitch(int64_t ts, int cpu, TaskId prev, core::TaskState s, TaskId next, bool fi) override {
    m_a.onSwitch(ts, cpu, prev, s, next, fi), m_b.onSwitch(ts, cpu, prev, s, next, fi);
  }
  void onIdleKind(int64_t ts, int cpu, bool fi) override { m_a.onIdleKind(ts, cpu, fi), m_b.onIdleKind(ts, cpu, fi); }
  void onCounter(int64_t ts, core::CounterKind k, int32_t i, double v) override {
    m_a.onCounter(ts, k, i, v), m_b.onCounter(ts, k, i, v);
  }
  void onWaking(int64_t ts, int cpu, TaskId c, bool irq, TaskId w, int t) override {
    m_a.onWaking(ts, cpu, c, irq, w, t), m_b.onWaking(ts, cpu, c, irq, w, t);
  }
  void onWakeup(int64_t ts, int cpu, TaskId c, bool irq, TaskId w, int t, bool n) override {
    m_a.onWakeup(ts, cpu, c, irq, w, t, n), m_b.onWakeup(ts, cpu, c, irq, w, t, n);
  }
  void onMigrate(int64_t ts, int cpu, TaskId c, TaskId p, int o, int d) override {
    m_a.onMigrate(ts, cpu, c, p, o, d), m_b.onMigrate(ts, cpu, c, p, o, d);
  }
  void onFork(int64_t ts, int cpu, TaskId p, TaskId c) override { m_a.onFork(ts, cpu, p, c), m_b.onFork(ts, cpu, p, c); }
  void onExit(int64_t ts, int cpu, TaskId p) override { m_a.onExit(ts, cpu, p), m_b.onExit(ts, cpu, p); }
  void onEnd(int64_t ts) override { m_a.onEnd(ts), m_b.onEnd(ts); }

 private:
  EventSink& m_a;
  EventSink& m_b;
};

}  // namespace replay
