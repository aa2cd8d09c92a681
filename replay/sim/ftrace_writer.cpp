// FtraceTextSink: the replayed schedule as tracefs `trace` text.
#include <cstdio>

#include "replay/sim/event_sink.h"

namespace replay {

namespace {
constexpr size_t kFlushBytes = 1 << 20;
// The header's entry count is written last, into a fixed-width field.
constexpr int kCountWidth = 20;
}  // namespace

core::Result<std::unique_ptr<FtraceTextSink>> FtraceTextSink::open(const std::string& path, const Workload& workload,
                                                                   int cpuCount) {
  std::unique_ptr<FtraceTextSink> sink(new FtraceTextSink(path, workload));
  sink->m_file = std::fopen(path.c_str(), "wb");
  if (!sink->m_file) return core::Error(path + ": cannot create the output trace");
  std::fputs("# tracer: nop\n#\n# entries-in-buffer/entries-written: ", sink->m_file);
  sink->m_countOffset = std::ftell(sink->m_file);
  std::fprintf(sink->m_file, "%-*s   #P:%d\n", kCountWidth, "0/0", cpuCount);
  std::fputs(
      "#\n"
      "#                                _-----=> irqs-off/BH-disabled\n"
      "#                               / _----=> need-resched\n"
      "#                              | / _---=> hardirq/softirq\n"
      "#                              || / _--=> preempt-depth\n"
      "#                              ||| / _-=> migrate-disable\n"
      "#                              |||| /     delay\n"
      "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
      "#              | |         |   |||||     |         |\n",
      sink->m_file);
  return sink;
}

FtraceTextSink::FtraceTextSink(const std::string& path, const Workload& workload)
    : m_path(path), m_workload(workload) {
  m_buf.reserve(kFlushBytes + 4096);
}

FtraceTextSink::~FtraceTextSink() {
  if (m_file) (void)close();
}

void FtraceTextSink::flushIfFull() {
  if (m_buf.size() < kFlushBytes) return;
  if (std::fwrite(m_buf.data(), 1, m_buf.size(), m_file) != m_buf.size()) m_failed = true;
  m_buf.clear();
}

void FtraceTextSink::prefix(TaskId ctx, int cpu, const char* flags, int64_t ts, const char* event) {
  char line[160];
  const char* comm = ctx == kNoTask ? "<idle>" : m_workload.tasks[ctx].comm.c_str();
  const int tid = ctx == kNoTask ? 0 : m_workload.tasks[ctx].tid;
  const auto uts = static_cast<unsigned long long>(ts < 0 ? 0 : ts);
  const int n = std::snprintf(line, sizeof line, "%16s-%-7d [%03d] %s %5llu.%09llu: %s: ", comm, tid, cpu, flags,
                              uts / 1000000000ULL, uts % 1000000000ULL, event);
  m_buf.append(line, static_cast<size_t>(n > 0 ? std::min<int>(n, sizeof line - 1) : 0));
  ++m_entries;
}

void FtraceTextSink::onSwitch(int64_t ts, int cpu, TaskId prev, core::TaskState prevState, TaskId next,
                              bool /*forcedIdle*/) {
  prefix(prev, cpu, "d..2.", ts, "sched_switch");
  char line[256];
  char swapper[24];
  std::snprintf(swapper, sizeof swapper, "swapper/%d", cpu);
  const Task* p = prev == kNoTask ? nullptr : &m_workload.tasks[prev];
  const Task* n = next == kNoTask ? nullptr : &m_workload.tasks[next];
  std::string_view state = p ? core::toLetters(prevState) : std::string_view("R");
  if (p && prevState == core::TaskState::Dead) state = p->tid == p->tgid ? "Z" : "X";
  if (prevState == core::TaskState::RunnablePreempted) state = "R";  // how 4.14+ kernels print a preempted task
  const int len = std::snprintf(
      line, sizeof line, "prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%.*s ==> next_comm=%s next_pid=%d next_prio=%d\n",
      p ? p->comm.c_str() : swapper, p ? p->tid : 0, p ? p->prio : 120, static_cast<int>(state.size()), state.data(),
      n ? n->comm.c_str() : swapper, n ? n->tid : 0, n ? n->prio : 120);
  m_buf.append(line, static_cast<size_t>(std::min<int>(len, sizeof line - 1)));
  flushIfFull();
}

void FtraceTextSink::onWaking(int64_t ts, int cpu, TaskId ctxTask, bool irq, TaskId wakee, int targetCpu) {
  prefix(ctxTask, cpu, irq ? "d.h2." : "d..2.", ts, "sched_waking");
  const Task& t = m_workload.tasks[wakee];
  char line[160];
  const int len = std::snprintf(line, sizeof line, "comm=%s pid=%d prio=%d target_cpu=%03d\n", t.comm.c_str(), t.tid,
                                t.prio, targetCpu);
  m_buf.append(line, static_cast<size_t>(std::min<int>(len, sizeof line - 1)));
  flushIfFull();
}

void FtraceTextSink::onWakeup(int64_t ts, int cpu, TaskId ctxTask, bool irq, TaskId wakee, int targetCpu, bool isNew) {
  prefix(ctxTask, cpu, irq ? "d.h3." : "d..3.", ts, isNew ? "sched_wakeup_new" : "sched_wakeup");
  const Task& t = m_workload.tasks[wakee];
  char line[160];
  const int len = std::snprintf(line, sizeof line, "comm=%s pid=%d prio=%d target_cpu=%03d\n", t.comm.c_str(), t.tid,
                                t.prio, targetCpu);
  m_buf.append(line, static_cast<size_t>(std::min<int>(len, sizeof line - 1)));
  flushIfFull();
}

void FtraceTextSink::onMigrate(int64_t ts, int cpu, TaskId ctxTask, TaskId p, int origCpu, int destCpu) {
  prefix(ctxTask, cpu, "d..2.", ts, "sched_migrate_task");
  const Task& t = m_workload.tasks[p];
  char line[160];
  const int len = std::snprintf(line, sizeof line, "comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d\n", t.comm.c_str(),
                                t.tid, t.prio, origCpu, destCpu);
  m_buf.append(line, static_cast<size_t>(std::min<int>(len, sizeof line - 1)));
  flushIfFull();
}

void FtraceTextSink::onFork(int64_t ts, int cpu, TaskId parent, TaskId child) {
  prefix(parent, cpu, ".....", ts, "sched_process_fork");
  const Task& p = m_workload.tasks[parent];
  const Task& c = m_workload.tasks[child];
  char line[160];
  const int len = std::snprintf(line, sizeof line, "comm=%s pid=%d child_comm=%s child_pid=%d\n", p.comm.c_str(), p.tid,
                                c.comm.c_str(), c.tid);
  m_buf.append(line, static_cast<size_t>(std::min<int>(len, sizeof line - 1)));
  flushIfFull();
}

void FtraceTextSink::onExit(int64_t ts, int cpu, TaskId p) {
  prefix(p, cpu, ".....", ts, "sched_process_exit");
  const Task& t = m_workload.tasks[p];
  char line[160];
  const int len = std::snprintf(line, sizeof line, "comm=%s pid=%d prio=%d group_dead=%s\n", t.comm.c_str(), t.tid,
                                t.prio, t.tid == t.tgid ? "true" : "false");
  m_buf.append(line, static_cast<size_t>(std::min<int>(len, sizeof line - 1)));
  flushIfFull();
}

void FtraceTextSink::onEnd(int64_t /*ts*/) {}

core::Status FtraceTextSink::close() {
  if (!m_file) return {};
  if (!m_buf.empty() && std::fwrite(m_buf.data(), 1, m_buf.size(), m_file) != m_buf.size()) m_failed = true;
  m_buf.clear();
  if (std::fseek(m_file, m_countOffset, SEEK_SET) == 0) {
    char count[64];
    std::snprintf(count, sizeof count, "%llu/%llu", static_cast<unsigned long long>(m_entries),
                  static_cast<unsigned long long>(m_entries));
    std::fprintf(m_file, "%-*s", kCountWidth, count);
  } else {
    m_failed = true;
  }
  if (std::fclose(m_file) != 0) m_failed = true;
  m_file = nullptr;
  if (m_failed) return core::Error(m_path + ": write error (disk full?)");
  return {};
}

}  // namespace replay
