#include "importers/perfetto/perfetto_writer.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <vector>

#include "core/sched_builder.h"
#include "importers/perfetto/perfetto_fields.h"
#include "importers/perfetto/perfetto_wire.h"

namespace importers::perfetto {

namespace {

using core::TraceModel;
using core::Utid;

// Events of one bundle at most; a new bundle also starts after lost data.
constexpr size_t kBundleEvents = 1024;

// One event on its way into a bundle: its FtraceEvent bytes in the arena.
struct Pending {
  int64_t ts;
  uint8_t rank;  // at equal times: what comes before the switch (0), the switch (1), what follows (2)
  uint32_t seq;  // then the order written
  int32_t cpu;
  uint32_t off;
  uint32_t len;
  bool lossBefore;  // events were lost on the CPU just before this one
  // It begins a bundle read after every other bundle that begins by its time
  // (ties across CPUs are read in file order): what must precede it there does.
  bool follows = false;
};

// The model's CPU columns keep an unknown CPU (-1 in the trace) as its 16-bit pattern.
bool knownCpu(core::CpuId c) { return c < core::SchedBuilder::kMaxCpus; }

// prev_state as the kernel reports it since 4.14 (TASK_REPORT; core/task_state.h).
uint64_t rawState(core::TaskState s) {
  switch (s) {
    case core::TaskState::Running:
    case core::TaskState::Runnable:
    case core::TaskState::RunnablePreempted: return 256;
    case core::TaskState::Blocked: return 2;
    case core::TaskState::Stopped: return 4;
    case core::TaskState::Traced: return 8;
    case core::TaskState::Dead: return 16;
    case core::TaskState::Parked: return 64;
    case core::TaskState::Idle: return 128;
    case core::TaskState::Sleeping:
    case core::TaskState::Unknown: return 1;  // the builder takes an unknown prev_state as sleeping
  }
  return 1;
}

// A state as GenericKernelTaskStateEvent.TaskStateEnum has it; 0 (UNKNOWN) for
// those the enum has no place for (traced, parked, the idle states).
uint64_t genericTaskState(core::TaskState s) {
  switch (s) {
    case core::TaskState::Runnable:
    case core::TaskState::RunnablePreempted: return 2;
    case core::TaskState::Running: return 3;
    case core::TaskState::Sleeping: return 4;
    case core::TaskState::Blocked: return 5;
    case core::TaskState::Stopped: return 6;
    case core::TaskState::Dead: return 7;
    default: return 0;
  }
}

class Writer {
 public:
  explicit Writer(const TraceModel& m) : m_m(m) {}
  std::string run();
  PerfettoExportLosses losses() const { return {m_uncarriedStates, m_unplacedMarks}; }

 private:
  std::string_view commAt(Utid u, int64_t ts) const;
  int32_t tidOf(Utid u) const { return u.value < m_m.threads.size() ? m_m.threads.tid[u.value] : 0; }
  MessageWriter& begin(int64_t ts, int32_t cpu, bool lossBefore = false, uint8_t rank = 1) {
    m_ev.clear();
    m_ev.varint(kEventTimestamp, static_cast<uint64_t>(ts));
    m_pendingTs = ts;
    m_pendingCpu = cpu;
    m_pendingLoss = lossBefore;
    m_pendingRank = rank;
    return m_ev;
  }
  void end() {
    const auto off = static_cast<uint32_t>(m_arena.size());
    m_arena.append(m_ev.data());
    m_events.push_back({m_pendingTs, m_pendingRank, m_seq++, m_pendingCpu, off, static_cast<uint32_t>(m_ev.size()), m_pendingLoss});
  }
  void marker(int64_t ts, int32_t cpu, bool lossBefore = false) {
    begin(ts, cpu, lossBefore);
    end();
  }
  void payload(uint32_t id, const MessageWriter& p) {
    m_ev.message(id, p);
    end();
  }
  int cpuRunning(Utid u, int64_t ts) const;
  int prioFrom(Utid u, int64_t ts) const;
  int runPrio(const core::CpuSliceTable& s, size_t i) const;
  bool runEndsAt(int cpu, Utid u, int64_t ts) const;
  bool runStartsAt(int cpu, Utid u, int64_t ts) const;
  bool stateChangesAt(Utid u, int64_t ts) const;

  void writeSwitch(int64_t ts, int32_t cpu, Utid prev, int prevPrio, core::TaskState prevState, Utid next, int nextPrio,
                   bool forcedIdle, bool lossBefore, uint64_t repaired = 0);
  void switches();
  void wakeups();
  void orderAgainstRemoteSwitches(int32_t cpu, Utid wakee, int64_t ts);
  void taskEvents();
  void migrations();
  void writeMigration(size_t row, int32_t cpu, uint8_t rank, int32_t ctxTid);
  size_t wakeupMigration(size_t wakeupRow) const;
  int32_t cpuSeenBy(int32_t cpu, int64_t ts) const;
  void powerCounters();
  void userMarks();
  void bundles(MessageWriter& trace);
  void processTree(MessageWriter& trace);
  void ftraceStats(MessageWriter& trace);
  void initialStates(MessageWriter& trace);
  void systemPackets(MessageWriter& trace);
  void schedlabPackets(MessageWriter& trace);
  void namedTracks(MessageWriter& trace);

  const TraceModel& m_m;
  std::vector<std::vector<std::pair<int64_t, core::StringId>>> m_comms;  // by utid
  std::vector<int64_t> m_firstStart;  // by CPU: where its first slice begins
  std::vector<std::vector<std::pair<int64_t, int16_t>>> m_runPrios;  // by utid: its runs' known prios, by start
  std::string m_arena;
  std::vector<Pending> m_events;
  MessageWriter m_ev;
  int64_t m_pendingTs = 0;
  int32_t m_pendingCpu = 0;
  bool m_pendingLoss = false;
  uint8_t m_pendingRank = 1;
  uint32_t m_seq = 0;
  uint64_t m_unplacedMarks = 0;
  std::map<std::pair<int32_t, int64_t>, size_t> m_switchAt;  // the switch written on a CPU at a time
  std::vector<std::vector<uint32_t>> m_migrationsOf;  // by utid: its migrations' rows, in time order
  std::vector<char> m_migrationWritten;               // by migration row: written with its wakeup
  uint64_t m_uncarriedStates = 0;
  std::vector<Utid> m_knownWithoutEvents;  // by utid: tasks no event names, with no state
};

std::string_view Writer::commAt(Utid u, int64_t ts) const {
  if (u.value >= m_comms.size() || m_comms[u.value].empty()) return m_m.comm(u);
  const auto& c = m_comms[u.value];
  auto it = std::upper_bound(c.begin(), c.end(), ts, [](int64_t t, const auto& e) { return t < e.first; });
  return m_m.strings.get(it == c.begin() ? c.front().second : std::prev(it)->second);
}

// The prio `u` has from `ts` on: that of its next run with a known prio, else
// the last one seen. A slice keeps the prio of its switch-in only, so the prio
// a task is switched out with (the kernel's prev_prio, which can differ: a
// sched_setscheduler() while it ran) and that of a run whose switch-in the
// trace lacked are known only from what follows; writing the slice's own
// prio there would make the reader end with another last prio than the model.
int Writer::prioFrom(Utid u, int64_t ts) const {
  if (u == core::kIdleUtid || u.value >= m_runPrios.size()) return m_m.threads.prio[core::kIdleUtid.value];
  const auto& p = m_runPrios[u.value];
  auto it = std::lower_bound(p.begin(), p.end(), ts, [](const auto& e, int64_t t) { return e.first < t; });
  return it == p.end() ? m_m.threads.prio[u.value] : it->second;
}

// The CPU `u` runs on at `ts` (or is switched out of at `ts`), or -1.
int Writer::cpuRunning(Utid u, int64_t ts) const {
  for (size_t cpu = 0; cpu < m_m.cpuSlices.size(); ++cpu) {
    const auto& s = m_m.cpuSlices[cpu];
    auto it = std::upper_bound(s.ts.begin(), s.ts.end(), ts);
    if (it == s.ts.begin()) continue;
    const size_t i = static_cast<size_t>(it - s.ts.begin()) - 1;
    if (s.utid[i] == u && (s.dur[i] < 0 || ts <= s.end(i))) return static_cast<int>(cpu);
    // Switched out at `ts` itself, with the next run already begun.
    if (runEndsAt(static_cast<int>(cpu), u, ts)) return static_cast<int>(cpu);
  }
  return -1;
}

// Whether a run of `u` on `cpu` ends at `ts` (what it does at that instant comes before its switch out).
bool Writer::runEndsAt(int cpu, Utid u, int64_t ts) const {
  if (cpu < 0 || static_cast<size_t>(cpu) >= m_m.cpuSlices.size()) return false;
  const auto& s = m_m.cpuSlices[static_cast<size_t>(cpu)];
  auto it = std::lower_bound(s.ts.begin(), s.ts.end(), ts);
  for (size_t i = static_cast<size_t>(it - s.ts.begin()); i-- > 0;) {
    if (s.dur[i] >= 0 && s.end(i) < ts) break;
    if (s.utid[i] == u && s.dur[i] >= 0 && s.end(i) == ts) return true;
  }
  return false;
}

// Whether a run of `u` on `cpu` starts at `ts` (what leads to it at that instant comes before its switch in).
bool Writer::runStartsAt(int cpu, Utid u, int64_t ts) const {
  if (cpu < 0 || static_cast<size_t>(cpu) >= m_m.cpuSlices.size()) return false;
  const auto& s = m_m.cpuSlices[static_cast<size_t>(cpu)];
  for (auto it = std::lower_bound(s.ts.begin(), s.ts.end(), ts); it != s.ts.end() && *it == ts; ++it)
    if (s.utid[static_cast<size_t>(it - s.ts.begin())] == u) return true;
  return false;
}

// Whether one of `u`'s state rows begins at `ts`.
bool Writer::stateChangesAt(Utid u, int64_t ts) const {
  if (u == core::kIdleUtid || u.value >= m_m.threads.size()) return false;
  const auto [b, e] = m_m.stateRowsOf(u);
  const auto& st = m_m.threadStates.ts;
  auto it = std::lower_bound(st.begin() + b, st.begin() + e, ts);
  return it != st.begin() + e && *it == ts;
}

void Writer::writeSwitch(int64_t ts, int32_t cpu, Utid prev, int prevPrio, core::TaskState prevState, Utid next,
                         int nextPrio, bool forcedIdle, bool lossBefore, uint64_t repaired) {
  MessageWriter sw;
  sw.bytes(1, commAt(prev, ts));
  sw.sint(2, tidOf(prev));
  sw.sint(3, prevPrio);
  sw.sint(4, static_cast<int64_t>(rawState(prevState)));
  sw.bytes(5, commAt(next, ts));
  sw.sint(6, tidOf(next));
  sw.sint(7, nextPrio);
  if (forcedIdle) sw.varint(kSwitchSchedlabForcedIdle, 1);
  if (repaired) sw.varint(kSwitchSchedlabRepaired, repaired);
  begin(ts, cpu, lossBefore);
  payload(kSchedSwitch, sw);
  m_switchAt[{cpu, ts}] = m_events.size() - 1;
}

// The prio a run starts with: its slice's, or when the trace did not say, the first known after.
int Writer::runPrio(const core::CpuSliceTable& s, size_t i) const {
  return s.prio[i] != core::kPrioUnknown ? s.prio[i] : prioFrom(s.utid[i], s.ts[i]);
}

void Writer::switches() {
  for (size_t c = 0; c < m_m.cpuSlices.size(); ++c) {
    const auto& s = m_m.cpuSlices[c];
    const auto cpu = static_cast<int32_t>(c);
    bool afterLoss = false;
    int64_t lastEvent = INT64_MIN;  // the CPU's last event written
    for (size_t i = 0; i < s.size(); ++i) {
      if (s.kind[i] == core::SliceKind::Lost) {
        // The loss spans from the CPU's last event to the first one after it.
        if (lastEvent != s.ts[i]) marker(s.ts[i], cpu);
        afterLoss = true;
        continue;
      }
      const bool switchedIn = i > 0 && s.kind[i - 1] != core::SliceKind::Lost && s.end(i - 1) == s.ts[i] &&
                              (s.endReason[i - 1] == core::SliceEnd::Preempted || s.endReason[i - 1] == core::SliceEnd::Blocked ||
                               s.endReason[i - 1] == core::SliceEnd::Exited || s.endReason[i - 1] == core::SliceEnd::Mismatch);
      const bool idleKindChange = i > 0 && switchedIn && s.utid[i - 1] == core::kIdleUtid && s.utid[i] == core::kIdleUtid &&
                                  s.kind[i - 1] != s.kind[i];
      if (idleKindChange) {
        // Core scheduling forces an idle CPU idle (or lets it go) without a switch.
        begin(s.ts[i], cpu).varint(kEventSchedlabIdleKind, s.kind[i] == core::SliceKind::ForcedIdle ? 2 : 1);
        end();
        lastEvent = s.ts[i];
      } else if (!switchedIn && !(s.flags[i] & core::kSliceStartUnknown)) {
        // The CPU's record began with this slice's switch from idle (its first
        // event, or the first after lost data): a switch, so that it is counted.
        writeSwitch(s.ts[i], cpu, core::kIdleUtid, prioFrom(core::kIdleUtid, s.ts[i]), core::TaskState::RunnablePreempted,
                    s.utid[i], runPrio(s, i), s.kind[i] == core::SliceKind::ForcedIdle, afterLoss);
        lastEvent = s.ts[i];
      } else if (!switchedIn) {
        // The CPU is seen from here: its first slice starts here, forced idle
        // when core scheduling held the CPU idle before its first switch.
        if (s.kind[i] == core::SliceKind::ForcedIdle) {
          begin(s.ts[i], cpu, afterLoss).varint(kEventSchedlabIdleKind, 2);
          end();
        } else {
          marker(s.ts[i], cpu, afterLoss);
        }
        lastEvent = s.ts[i];
      }
      afterLoss = false;
      if (s.dur[i] < 0 || s.endReason[i] == core::SliceEnd::TraceEnd || s.endReason[i] == core::SliceEnd::DataLoss) {
        if (s.dur[i] >= 0 && s.endReason[i] == core::SliceEnd::DataLoss) {
          marker(s.end(i), cpu);
          lastEvent = s.end(i);
        }
        continue;
      }
      const int64_t ts = s.end(i);
      const bool nextHere = i + 1 < s.size() && s.ts[i + 1] == ts && s.kind[i + 1] != core::SliceKind::Lost;
      if (nextHere && s.utid[i] == core::kIdleUtid && s.utid[i + 1] == core::kIdleUtid && s.kind[i] != s.kind[i + 1])
        continue;  // an idle kind change, written with the next slice
      // A switch the import inferred is written as the repair it was; a run it
      // ended on another CPU (the task found running here) ends with it.
      const bool repaired = s.endReason[i] == core::SliceEnd::Mismatch;
      if (repaired && !(nextHere && (s.flags[i + 1] & core::kSliceStartInferred))) continue;
      // The import marks the task it displaces Unknown there (a row at the
      // switch's time, moved with it), unless it had inferred the switch only
      // after that task went on elsewhere: then its states went on without a
      // row here, and must read back so.
      const uint64_t repair = !repaired                                                 ? 0
                              : s.utid[i] == core::kIdleUtid || stateChangesAt(s.utid[i], ts) ? 1
                                                                                              : kRepairedKeepsPrevState;
      writeSwitch(ts, cpu, s.utid[i], prioFrom(s.utid[i], ts),
                  s.endReason[i] == core::SliceEnd::Exited ? core::TaskState::Dead : s.endState[i],
                  nextHere ? s.utid[i + 1] : core::kIdleUtid, nextHere ? runPrio(s, i + 1) : prioFrom(core::kIdleUtid, ts),
                  nextHere && s.kind[i + 1] == core::SliceKind::ForcedIdle, false, repair);
      lastEvent = ts;
    }
  }
}

void Writer::wakeups() {
  const auto& w = m_m.wakeups;
  for (size_t i = 0; i < w.ts.size(); ++i) {
    const bool fromIrq = (w.flags[i] & core::kWakeupFromIrq) || !w.waker[i].isValid();
    int32_t cpu = knownCpu(w.wakerCpu[i]) ? w.wakerCpu[i] : (knownCpu(w.targetCpu[i]) ? w.targetCpu[i] : 0);
    // At the instant of a switch here, a wakeup by the task switched out, or
    // of the task switched in (a simulated run may start the instant it is
    // woken), comes before the switch; any other follows it.
    const bool before = (!fromIrq && runEndsAt(cpu, w.waker[i], w.ts[i])) || runStartsAt(cpu, w.wakee[i], w.ts[i]);
    MessageWriter& e = begin(w.ts[i], cpu, false, before ? 0 : 2);
    if (!fromIrq) e.varint(kEventPid, static_cast<uint64_t>(static_cast<uint32_t>(tidOf(w.waker[i]))));
    if (w.flags[i] & core::kWakeupFromIrq) e.varint(kEventCommonFlags, 0x08);
    MessageWriter wk;
    wk.bytes(1, commAt(w.wakee[i], w.ts[i]));
    wk.sint(2, tidOf(w.wakee[i]));
    wk.sint(3, m_m.threads.prio[w.wakee[i].value]);
    // success as kernels before 4.3 wrote it: 0 when the wakee was running or
    // runnable already. Which it was is the import's judgement at that moment;
    // said here, the reader need not judge again after an inferred switch-in
    // it places earlier than the judgement saw it (the export writes it there).
    wk.varint(4, (w.flags[i] & core::kWakeupNoEffect) ? 0 : 1);
    const uint32_t id = (w.flags[i] & core::kWakeupNew)         ? kSchedWakeupNew
                        : (w.flags[i] & core::kWakeupHadWaking) ? kSchedWaking
                                                                : kSchedWakeup;
    // sched_waking names the CPU the wakee was on, as the kernel's does; the
    // move its wakeup made follows at once on the same CPU, in the same
    // context, where the reader takes it for the wakeup's target.
    const size_t moved = id == kSchedWaking ? wakeupMigration(i) : SIZE_MAX;
    const core::CpuId target = moved != SIZE_MAX ? m_m.migrations.origCpu[moved] : w.targetCpu[i];
    wk.sint(5, knownCpu(target) ? target : -1);
    payload(id, wk);
    if (moved != SIZE_MAX) {
      writeMigration(moved, cpu, before ? 0 : 2, fromIrq ? -1 : tidOf(w.waker[i]));
      m_migrationWritten[moved] = 1;
    }
    if (!(w.flags[i] & core::kWakeupNoEffect)) orderAgainstRemoteSwitches(cpu, w.wakee[i], w.ts[i]);
  }
}

// The move a wakeup made (select_task_rq() choosing another CPU): the wakee's
// first migration after it, onto the CPU the wakeup names, before the wakee
// runs again. SIZE_MAX: none (a move after it ran, or elsewhere, is not).
size_t Writer::wakeupMigration(size_t i) const {
  const auto& w = m_m.wakeups;
  if (w.flags[i] & core::kWakeupNoEffect) return SIZE_MAX;
  const Utid u = w.wakee[i];
  if (u.value >= m_migrationsOf.size()) return SIZE_MAX;
  const auto& rows = m_migrationsOf[u.value];
  const auto& mg = m_m.migrations;
  auto it = std::lower_bound(rows.begin(), rows.end(), w.ts[i], [&](uint32_t r, int64_t t) { return mg.ts[r] < t; });
  if (it == rows.end() || mg.destCpu[*it] != w.targetCpu[i] || mg.origCpu[*it] == mg.destCpu[*it] ||
      !knownCpu(mg.origCpu[*it]))
    return SIZE_MAX;
  // Runnable from the wakeup until it runs: the move must come in that stretch.
  const auto [b, e] = m_m.stateRowsOf(u);
  const auto& st = m_m.threadStates;
  auto row = std::upper_bound(st.ts.begin() + b, st.ts.begin() + e, w.ts[i]);
  for (; row != st.ts.begin() + e; ++row) {
    const auto r = static_cast<size_t>(row - st.ts.begin());
    if (st.ts[r] > mg.ts[*it]) break;
    if (st.state[r] != core::TaskState::Runnable) return SIZE_MAX;
  }
  return *it;
}

// A wakeup that made its wakee runnable, where the wakee's run on another CPU
// ends or starts at that very time: the reader must see the switch out before
// it and the switch in after it (else it finds the wakee running).
void Writer::orderAgainstRemoteSwitches(int32_t cpu, Utid wakee, int64_t ts) {
  for (size_t c = 0; c < m_m.cpuSlices.size(); ++c) {
    const auto other = static_cast<int32_t>(c);
    if (other == cpu) continue;
    if (runEndsAt(other, wakee, ts) && !runStartsAt(other, wakee, ts)) m_events.back().follows = true;
    if (runStartsAt(other, wakee, ts))
      if (auto it = m_switchAt.find({other, ts}); it != m_switchAt.end()) m_events[it->second].follows = true;
  }
}

void Writer::taskEvents() {
  const auto& t = m_m.taskEvents;
  for (size_t i = 0; i < t.size(); ++i) {
    const int64_t ts = t.ts[i];
    int cpu = cpuRunning(t.utid[i], ts);
    if (cpu < 0) {
      // Not running anywhere (an exit after the last switch): any CPU already seen.
      for (size_t c = 0; c < m_firstStart.size() && cpu < 0; ++c)
        if (m_firstStart[c] <= ts) cpu = static_cast<int>(c);
      if (cpu < 0) cpu = 0;
    }
    MessageWriter p;
    uint32_t id = 0;
    switch (t.kind[i]) {
      case core::TaskEventKind::Fork:
        id = kSchedProcessFork;
        p.bytes(1, commAt(t.utid[i], ts));
        p.sint(2, tidOf(t.utid[i]));
        p.bytes(3, commAt(t.other[i], ts));
        p.sint(4, tidOf(t.other[i]));
        break;
      case core::TaskEventKind::Exec:
        id = kSchedProcessExec;
        p.bytes(1, m_m.strings.get(t.text[i]));
        p.sint(2, tidOf(t.utid[i]));
        p.sint(3, tidOf(t.utid[i]));
        break;
      case core::TaskEventKind::Exit:
        id = kSchedProcessExit;
        p.bytes(1, commAt(t.utid[i], ts));
        p.sint(2, tidOf(t.utid[i]));
        p.sint(4, m_m.threads.prio[t.utid[i].value]);
        break;
    }
    // A task exits (or forks, or execs) before the switch that takes it off.
    begin(ts, cpu, false, runEndsAt(cpu, t.utid[i], ts) ? 0 : 2);
    payload(id, p);
  }
}

void Writer::migrations() {
  const auto& mg = m_m.migrations;
  for (size_t i = 0; i < mg.size(); ++i) {
    if (m_migrationWritten[i] || (mg.flags[i] & core::kMigrationInferred)) continue;
    const int64_t ts = mg.ts[i];
    const int32_t dest = knownCpu(mg.destCpu[i]) ? mg.destCpu[i] : 0;
    const int32_t orig = knownCpu(mg.origCpu[i]) ? mg.origCpu[i] : -1;
    // On a CPU already seen, so that it does not move that CPU's first slice.
    int32_t cpu = dest;
    if (static_cast<size_t>(dest) < m_firstStart.size() && m_firstStart[static_cast<size_t>(dest)] > ts && orig >= 0)
      cpu = orig;
    // A task moves to a CPU before the switch that puts it on there, and off a
    // CPU after the switch that takes it off.
    writeMigration(i, cpu, runStartsAt(cpu, mg.utid[i], ts) ? 0 : 2, -1);
  }
}

void Writer::writeMigration(size_t i, int32_t cpu, uint8_t rank, int32_t ctxTid) {
  const auto& mg = m_m.migrations;
  const int64_t ts = mg.ts[i];
  MessageWriter p;
  p.bytes(1, commAt(mg.utid[i], ts));
  p.sint(2, tidOf(mg.utid[i]));
  p.sint(3, m_m.threads.prio[mg.utid[i].value]);
  p.sint(4, knownCpu(mg.origCpu[i]) ? mg.origCpu[i] : -1);
  p.sint(5, knownCpu(mg.destCpu[i]) ? mg.destCpu[i] : 0);
  MessageWriter& e = begin(ts, cpu, false, rank);
  if (ctxTid >= 0) e.varint(kEventPid, static_cast<uint64_t>(static_cast<uint32_t>(ctxTid)));
  payload(kSchedMigrateTask, p);
}

// A CPU whose record has begun by `ts`, to carry an event about `cpu` (the
// kernel writes cpu_frequency and cpu_idle on the CPU that changes them, not
// always the one they name): an event on a CPU not seen yet would move where
// that CPU's first slice is seen to start. `cpu` itself when it has begun.
int32_t Writer::cpuSeenBy(int32_t cpu, int64_t ts) const {
  const auto seen = [&](size_t c) { return c < m_firstStart.size() && m_firstStart[c] <= ts; };
  if (cpu >= 0 && seen(static_cast<size_t>(cpu))) return cpu;
  for (size_t c = 0; c < m_firstStart.size(); ++c)
    if (seen(c)) return static_cast<int32_t>(c);
  return -1;
}

void Writer::powerCounters() {
  const auto& c = m_m.counters;
  for (size_t t = 0; t < c.tracks.size(); ++t) {
    const auto kind = c.tracks[t].kind;
    if (kind != core::CounterKind::CpuFrequencyKhz && kind != core::CounterKind::CpuIdleState) continue;
    const int32_t cpu = c.tracks[t].index;
    const int64_t first = static_cast<size_t>(cpu) < m_firstStart.size() ? m_firstStart[static_cast<size_t>(cpu)] : INT64_MIN;
    for (uint32_t r = c.rowsBegin[t]; r < c.rowsBegin[t + 1]; ++r) {
      MessageWriter p;
      // cpu_idle's state is the kernel's u32: leaving idle is (u32)-1.
      p.varint(1, kind == core::CounterKind::CpuIdleState ? static_cast<uint32_t>(static_cast<int64_t>(c.value[r]))
                                                          : static_cast<uint64_t>(std::max(0.0, c.value[r])));
      p.varint(2, static_cast<uint64_t>(cpu));
      // Before any CPU's record began (nothing else can carry it), a value
      // takes effect where the CPU's first slice does.
      const int32_t carrier = cpuSeenBy(cpu, c.ts[r]);
      begin(carrier >= 0 ? c.ts[r] : std::max(c.ts[r], first), carrier >= 0 ? carrier : cpu);
      payload(kind == core::CounterKind::CpuIdleState ? kCpuIdle : kCpuFrequency, p);
    }
  }
}

// atrace user slices as the trace_marker writes (print events) they were
// read from, each in its writer's context on the CPU it runs on.
void Writer::userMarks() {
  const auto& us = m_m.userSlices;
  auto mark = [&](Utid u, int64_t ts, const std::string& text, bool anyWriter = false) {
    int cpu = cpuRunning(u, ts);
    // An async slice may end on another thread than began it (which the model
    // does not keep): any task running then can write it, best one whose tgid
    // is known already (the text's tgid would become that of one unknown).
    for (size_t c = 0; cpu < 0 && anyWriter && c < m_m.cpuSlices.size(); ++c) {
      const auto& t = m_m.cpuSlices[c];
      auto it = std::upper_bound(t.ts.begin(), t.ts.end(), ts);
      if (it == t.ts.begin()) continue;
      const size_t i = static_cast<size_t>(it - t.ts.begin()) - 1;
      if (t.kind[i] == core::SliceKind::Lost || (t.dur[i] >= 0 && t.end(i) < ts)) continue;
      if (t.utid[i] == core::kIdleUtid || m_m.threads.tgid[t.utid[i].value] > 0) {
        u = t.utid[i];
        cpu = static_cast<int>(c);
      }
    }
    if (cpu < 0) {
      ++m_unplacedMarks;  // not running by the model: no CPU's context to write it in
      return;
    }
    // At the instant its run starts a mark follows the switch-in; where it ends, precedes the switch-out.
    MessageWriter& e = begin(ts, cpu, false, runEndsAt(cpu, u, ts) && !runStartsAt(cpu, u, ts) ? 0 : 2);
    e.varint(kEventPid, static_cast<uint64_t>(static_cast<uint32_t>(tidOf(u))));
    MessageWriter p;
    p.bytes(2, text);
    payload(kPrint, p);
  };
  for (size_t r = 0; r < us.size(); ++r) {
    const Utid u = us.utid[r];
    const std::string tgid = std::to_string(std::max(0, m_m.threads.tgid[u.value]));
    const std::string name(m_m.strings.get(us.name[r]));
    const bool ends = !(us.flags[r] & core::kUserSliceOpenAtEnd);
    switch (us.kind[r]) {
      case core::UserSliceKind::Sync:
        mark(u, us.ts[r], "B|" + tgid + "|" + name);
        if (ends) mark(u, us.ts[r] + us.dur[r], "E|" + tgid);
        break;
      case core::UserSliceKind::Async: {
        const std::string key = "|" + tgid + "|" + name + "|" + std::to_string(r);
        mark(u, us.ts[r], "S" + key);
        if (ends) mark(u, us.ts[r] + us.dur[r], "F" + key, true);
        break;
      }
      case core::UserSliceKind::Instant: mark(u, us.ts[r], name); break;
    }
  }
}

void Writer::bundles(MessageWriter& trace) {
  std::stable_sort(m_events.begin(), m_events.end(), [](const Pending& a, const Pending& b) {
    return a.cpu != b.cpu ? a.cpu < b.cpu : a.ts != b.ts ? a.ts < b.ts : a.rank != b.rank ? a.rank < b.rank : a.seq < b.seq;
  });
  // Bundles of each CPU, then all of them by their first event: read in that
  // order, every CPU stays near the others in time.
  struct Range {
    size_t begin, end;
  };
  std::vector<Range> ranges;
  for (size_t i = 0; i < m_events.size();) {
    size_t j = i + 1;
    while (j < m_events.size() && m_events[j].cpu == m_events[i].cpu && j - i < kBundleEvents && !m_events[j].lossBefore &&
           !m_events[j].follows)
      ++j;
    ranges.push_back({i, j});
    i = j;
  }
  std::stable_sort(ranges.begin(), ranges.end(),
                   [&](const Range& a, const Range& b) {
                     const Pending &x = m_events[a.begin], &y = m_events[b.begin];
                     return x.ts != y.ts ? x.ts < y.ts : x.follows < y.follows;
                   });
  std::vector<int64_t> previousEnd(m_m.cpuSlices.size() + 1, -1);
  MessageWriter bundle, packet;
  for (const Range& r : ranges) {
    const Pending& first = m_events[r.begin];
    bundle.clear();
    bundle.varint(kBundleCpu, static_cast<uint64_t>(first.cpu));
    if (first.lossBefore) bundle.varint(kBundleLostEvents, 1);
    auto& prev = previousEnd[std::min(static_cast<size_t>(first.cpu), previousEnd.size() - 1)];
    if (prev >= 0) bundle.varint(kBundlePreviousEnd, static_cast<uint64_t>(prev));
    for (size_t i = r.begin; i < r.end; ++i)
      bundle.bytes(kBundleEvent, std::string_view(m_arena).substr(m_events[i].off, m_events[i].len));
    prev = m_events[r.end - 1].ts;
    packet.clear();
    packet.message(kFtraceEvents, bundle);
    packet.varint(kTrustedSequenceId, 1);
    trace.message(kTracePacket, packet);
  }
}

void Writer::processTree(MessageWriter& trace) {
  MessageWriter tree, item, packet;
  const auto& p = m_m.processes;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p.tgid[i] <= 0) continue;
    item.clear();
    item.sint(kProcessPid, p.tgid[i]);
    item.bytes(kProcessCmdline, m_m.strings.get(p.name[i]));
    tree.message(kTreeProcess, item);
  }
  const auto& t = m_m.threads;
  for (size_t u = 1; u < t.size(); ++u) {
    if (t.tid[u] <= 0) continue;
    item.clear();
    item.sint(kThreadTid, t.tid[u]);
    item.bytes(kThreadName, m_m.strings.get(t.comm[u]));
    if (t.tgid[u] > 0) item.sint(kThreadTgid, t.tgid[u]);
    tree.message(kTreeThread, item);
  }
  packet.message(kProcessTree, tree);
  packet.varint(kPacketTimestamp, static_cast<uint64_t>(std::max<int64_t>(m_m.firstTs, 0)));
  trace.message(kTracePacket, packet);
}

// The counts of lost ranges, as Perfetto records them: each CPU's ring-buffer
// overrun statistic (FtraceCpuStats.overrun, cumulative), read at the start
// and at each flush (FtraceStats phases START_OF_TRACE and END_OF_TRACE). A
// reading right after each counted loss, timestamped where the loss ends,
// makes the overrun's growth between two readings that loss's count; the
// bundle after it says where it was (lost_events). trace_processor takes the
// last END reading minus the START one: the CPU's total. A range whose count
// is unknown adds nothing, so its stretch shows no growth and the reader
// leaves it uncounted; a loss of no known CPU has no FtraceCpuStats to go in.
void Writer::ftraceStats(MessageWriter& trace) {
  const auto& d = m_m.dataLoss;
  auto knownCpuOf = [&](size_t i) { return d.cpu[i] >= 0 && d.cpu[i] < core::SchedBuilder::kMaxCpus; };
  std::vector<char> cpuCounted;
  for (size_t i = 0; i < d.size(); ++i) {
    if (!knownCpuOf(i) || d.count[i] < 0) continue;
    if (static_cast<size_t>(d.cpu[i]) >= cpuCounted.size()) cpuCounted.resize(static_cast<size_t>(d.cpu[i]) + 1, 0);
    cpuCounted[static_cast<size_t>(d.cpu[i])] = 1;
  }
  // Every loss of those CPUs, uncounted ones too: a reading after each keeps
  // an uncounted loss out of the stretch that grew by a counted one.
  std::vector<size_t> losses;
  for (size_t i = 0; i < d.size(); ++i)
    if (knownCpuOf(i) && static_cast<size_t>(d.cpu[i]) < cpuCounted.size() && cpuCounted[static_cast<size_t>(d.cpu[i])])
      losses.push_back(i);
  if (losses.empty()) return;
  std::stable_sort(losses.begin(), losses.end(), [&](size_t a, size_t b) { return d.tsEnd[a] < d.tsEnd[b]; });
  std::vector<uint64_t> overrun(cpuCounted.size(), 0);
  auto reading = [&](uint64_t phase, int64_t ts) {
    MessageWriter stats, cpu, packet;
    stats.varint(kStatsPhase, phase);
    for (size_t c = 0; c < cpuCounted.size(); ++c) {
      if (!cpuCounted[c]) continue;
      cpu.clear();
      cpu.varint(kCpuStatsCpu, c);
      cpu.varint(kCpuStatsOverrun, overrun[c]);
      stats.message(kStatsCpu, cpu);
    }
    packet.varint(kPacketTimestamp, static_cast<uint64_t>(std::max<int64_t>(ts, 0)));
    packet.message(kFtraceStats, stats);
    trace.message(kTracePacket, packet);
  };
  reading(kPhaseStart, m_m.firstTs);
  for (size_t k = 0; k < losses.size(); ++k) {
    const size_t i = losses[k];
    if (d.count[i] > 0) overrun[static_cast<size_t>(d.cpu[i])] += static_cast<uint64_t>(d.count[i]);
    // Losses ending at one instant share a reading.
    if (k + 1 == losses.size() || d.tsEnd[losses[k + 1]] != d.tsEnd[i]) reading(kPhaseEnd, d.tsEnd[i]);
  }
}

// A task whose first state comes before every event that names it was known
// from outside the events (LTTng's statedump): the sched events cannot say it,
// Perfetto's stable task-state event can.
void Writer::initialStates(MessageWriter& trace) {
  struct TaskStatePacket {
    int64_t ts;
    Utid u;
    core::CpuId cpu;
    uint64_t generic;  // TaskStateEnum
  };
  std::vector<TaskStatePacket> taskStates;
  std::vector<int64_t> firstNamed(m_m.threads.size(), INT64_MAX);
  auto named = [&](Utid u, int64_t ts) {
    if (u.isValid() && u.value < firstNamed.size()) firstNamed[u.value] = std::min(firstNamed[u.value], ts);
  };
  for (const auto& s : m_m.cpuSlices)
    for (size_t i = 0; i < s.size(); ++i) named(s.utid[i], s.ts[i]);
  for (size_t i = 0; i < m_m.wakeups.ts.size(); ++i) {
    named(m_m.wakeups.wakee[i], m_m.wakeups.ts[i]);
    named(m_m.wakeups.waker[i], m_m.wakeups.ts[i]);
  }
  for (size_t i = 0; i < m_m.taskEvents.size(); ++i) {
    named(m_m.taskEvents.utid[i], m_m.taskEvents.ts[i]);
    named(m_m.taskEvents.other[i], m_m.taskEvents.ts[i]);
  }
  for (size_t i = 0; i < m_m.migrations.size(); ++i) named(m_m.migrations.utid[i], m_m.migrations.ts[i]);
  for (size_t i = 0; i < m_m.userSlices.size(); ++i) named(m_m.userSlices.utid[i], m_m.userSlices.ts[i]);
  const auto& st = m_m.threadStates;
  for (size_t u = 1; u < m_m.threads.size(); ++u) {
    const auto [b, e] = m_m.stateRowsOf(Utid(static_cast<uint32_t>(u)));
    // Known only from outside the events (a statedump entry without a state,
    // a saved comm): the process tree names it, but a reader makes the tasks
    // events name. TASK_STATE_UNKNOWN says it was there from when the import
    // knew it, in no state the trace tells.
    if (b >= e && firstNamed[u] == INT64_MAX && m_m.threads.tid[u] > 0) m_knownWithoutEvents.push_back(Utid(static_cast<uint32_t>(u)));
    if (b >= e || st.ts[b] >= firstNamed[u]) continue;
    const uint64_t state = genericTaskState(st.state[b]);
    if (state == 0) {
      ++m_uncarriedStates;
      continue;
    }
    taskStates.push_back({st.ts[b], Utid(static_cast<uint32_t>(u)), st.cpu[b], state});
  }
  for (const Utid u : m_knownWithoutEvents)
    taskStates.push_back({m_m.threads.startTs[u.value], u, 0, 0});
  // Each CPU's task states are a stream a reader merges by time: in time order,
  // and after the bundles, so that at equal times they follow the events, as
  // the import had them (a statedump entry after its event).
  std::stable_sort(taskStates.begin(), taskStates.end(),
                   [](const TaskStatePacket& a, const TaskStatePacket& b) { return a.ts < b.ts; });
  for (const TaskStatePacket& p : taskStates) {
    MessageWriter ev, packet;
    if (p.generic != 0) ev.varint(kGenericTaskCpu, p.cpu);
    ev.bytes(kGenericTaskComm, commAt(p.u, p.ts));
    ev.sint(kGenericTaskTid, m_m.threads.tid[p.u.value]);
    ev.varint(kGenericTaskStateField, p.generic);
    packet.varint(kPacketTimestamp, static_cast<uint64_t>(std::max<int64_t>(p.ts, 0)));
    packet.message(kGenericTaskState, ev);
    packet.varint(kTrustedSequenceId, 3);
    trace.message(kTracePacket, packet);
  }
}

void Writer::systemPackets(MessageWriter& trace) {
  const int cpus = std::max(m_m.topology.cpuCount(), m_m.cpuCount());
  MessageWriter info, packet;
  info.varint(kSysNumCpus, static_cast<uint64_t>(cpus));
  info.bytes(kSysServiceVersion, "SchedLab export");
  // The recording kernel's release decides the replay's baseline model.
  if (const std::string release = m_m.kernelRelease(); !release.empty()) {
    MessageWriter uts;
    uts.bytes(kUtsSysname, "Linux");
    uts.bytes(kUtsRelease, release);
    if (auto it = m_m.metadata.find("machine"); it != m_m.metadata.end() && !it->second.empty())
      uts.bytes(kUtsMachine, it->second);
    info.message(kSysUtsname, uts);
  }
  packet.message(kSystemInfo, info);
  trace.message(kTracePacket, packet);

  MessageWriter cpuInfo, cpu;
  for (int c = 0; c < cpus; ++c) {
    cpu.clear();
    cpu.bytes(kCpuProcessor, "cpu" + std::to_string(c));
    if (c < m_m.topology.cpuCount()) {
      if (const auto* place = m_m.topology.cpu(c)) {
        cpu.varint(kCpuSchedlabCore, static_cast<uint64_t>(place->core));
        cpu.varint(kCpuSchedlabPackage, static_cast<uint64_t>(place->package));
      }
    }
    cpuInfo.message(kCpuInfoCpu, cpu);
  }
  packet.clear();
  packet.message(kCpuInfo, cpuInfo);
  trace.message(kTracePacket, packet);
}

void Writer::schedlabPackets(MessageWriter& trace) {
  const auto& t = m_m.threads;
  MessageWriter tasks, task, packet;
  for (size_t u = 1; u < t.size(); ++u) {
    const bool attributes = t.cookie[u] != 0 || t.uclampMin[u] >= 0 || t.uclampMax[u] >= 0;
    if (!attributes && t.policy[u] == core::TaskPolicy::Unknown && t.affinity[u].empty()) continue;
    task.clear();
    task.sint(kTaskTid, t.tid[u]);
    task.varint(kTaskCookie, t.cookie[u]);
    task.sint(kTaskUclampMin, t.uclampMin[u]);
    task.sint(kTaskUclampMax, t.uclampMax[u]);
    task.varint(kTaskPolicy, static_cast<uint64_t>(t.policy[u]));
    MessageWriter cpus;
    for (const auto& c : t.affinity[u]) cpus.rawVarint(c);
    if (!t.affinity[u].empty()) task.packed(kTaskAffinity, cpus);
    tasks.message(kSchedlabTask, task);
  }
  if (m_m.replay) {
    const auto& r = *m_m.replay;
    MessageWriter replay, param;
    replay.bytes(kReplayModel, r.model);
    replay.bytes(kReplayRecording, r.recordingPath);
    for (const auto& p : r.params) {
      param.clear();
      param.bytes(1, p.key);
      param.bytes(2, p.value);
      param.bytes(3, p.doc);
      param.bytes(4, p.origin);
      replay.message(kReplayParam, param);
    }
    for (const auto& name : r.cookieNames) replay.bytes(kReplayCookieName, name);
    tasks.message(kSchedlabReplay, replay);
  }
  if (tasks.size() == 0) return;
  packet.message(kPacketSchedlab, tasks);
  trace.message(kTracePacket, packet);
}

// Forced-idle and lost-data spans as named tracks of slices, for the Perfetto UI.
void Writer::namedTracks(MessageWriter& trace) {
  uint64_t nextUuid = 0x5c4ed1ab00000000ull;
  bool first = true;
  auto track = [&](const std::string& name) {
    MessageWriter desc, packet;
    const uint64_t uuid = ++nextUuid;
    desc.varint(kTrackUuid, uuid);
    desc.bytes(kTrackName, name);
    packet.message(kTrackDescriptor, desc);
    packet.varint(kTrustedSequenceId, 2);
    if (first) packet.varint(kSequenceFlags, kSeqIncrementalStateCleared);
    first = false;
    trace.message(kTracePacket, packet);
    return uuid;
  };
  auto span = [&](uint64_t uuid, int64_t b, int64_t e, const std::string& name) {
    for (int k = 0; k < 2; ++k) {
      MessageWriter ev, packet;
      ev.varint(kTrackEventType, k == 0 ? kTypeSliceBegin : kTypeSliceEnd);
      ev.varint(kTrackEventTrackUuid, uuid);
      if (k == 0) ev.bytes(kTrackEventName, name);
      packet.varint(kPacketTimestamp, static_cast<uint64_t>(std::max<int64_t>(k == 0 ? b : e, 0)));
      packet.message(kTrackEvent, ev);
      packet.varint(kTrustedSequenceId, 2);
      trace.message(kTracePacket, packet);
    }
  };
  for (size_t c = 0; c < m_m.cpuSlices.size(); ++c) {
    const auto& s = m_m.cpuSlices[c];
    uint64_t uuid = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s.kind[i] != core::SliceKind::ForcedIdle || s.dur[i] < 0) continue;
      if (!uuid) uuid = track("CPU " + std::to_string(c) + " forced idle");
      span(uuid, s.ts[i], s.end(i), "forced idle");
    }
  }
  std::vector<uint64_t> lossTrack(m_m.cpuSlices.size() + 1, 0);
  const auto& d = m_m.dataLoss;
  for (size_t i = 0; i < d.size(); ++i) {
    const size_t slot = d.cpu[i] < 0 ? lossTrack.size() - 1 : std::min(static_cast<size_t>(d.cpu[i]), lossTrack.size() - 1);
    if (!lossTrack[slot]) lossTrack[slot] = track(d.cpu[i] < 0 ? "lost data" : "CPU " + std::to_string(d.cpu[i]) + " lost data");
    span(lossTrack[slot], d.tsBegin[i], d.tsEnd[i],
         d.count[i] >= 0 ? "lost data (" + std::to_string(d.count[i]) + " events)" : "lost data");
  }
}

std::string Writer::run() {
  m_comms.resize(m_m.threads.size());
  for (size_t i = 0; i < m_m.commChanges.size(); ++i)
    m_comms[m_m.commChanges.utid[i].value].emplace_back(m_m.commChanges.ts[i], m_m.commChanges.comm[i]);
  for (auto& c : m_comms) std::stable_sort(c.begin(), c.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  m_runPrios.resize(m_m.threads.size());
  for (const auto& s : m_m.cpuSlices)
    for (size_t i = 0; i < s.size(); ++i)
      if (s.kind[i] == core::SliceKind::Task && s.prio[i] != core::kPrioUnknown && s.utid[i].value < m_runPrios.size())
        m_runPrios[s.utid[i].value].emplace_back(s.ts[i], s.prio[i]);
  for (auto& p : m_runPrios) std::stable_sort(p.begin(), p.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  m_migrationsOf.resize(m_m.threads.size());
  // Moves are written as traced: an inferred one has no event, and the reader infers it again.
  for (size_t i = 0; i < m_m.migrations.size(); ++i)
    if (m_m.migrations.utid[i].value < m_migrationsOf.size() && !(m_m.migrations.flags[i] & core::kMigrationInferred))
      m_migrationsOf[m_m.migrations.utid[i].value].push_back(static_cast<uint32_t>(i));
  for (auto& rows : m_migrationsOf)
    std::stable_sort(rows.begin(), rows.end(),
                     [&](uint32_t x, uint32_t y) { return m_m.migrations.ts[x] < m_m.migrations.ts[y]; });
  m_migrationWritten.assign(m_m.migrations.size(), 0);
  m_firstStart.assign(m_m.cpuSlices.size(), INT64_MAX);
  for (size_t c = 0; c < m_m.cpuSlices.size(); ++c)
    if (m_m.cpuSlices[c].size()) m_firstStart[c] = m_m.cpuSlices[c].ts[0];

  // Written in this order, events of one instant and rank keep the kernel's
  // order: a fork before its child's wakeup, a waking before the migration it causes.
  switches();
  taskEvents();
  wakeups();
  migrations();
  powerCounters();
  userMarks();
  // The trace spans what the model spans, whatever ends it.
  if (!m_m.cpuSlices.empty()) {
    int last = 0;
    for (size_t c = 0; c < m_m.cpuSlices.size(); ++c)
      if (m_firstStart[c] <= m_m.lastTs) last = static_cast<int>(c);
    marker(m_m.lastTs, last);
  }

  MessageWriter trace;
  systemPackets(trace);
  processTree(trace);
  bundles(trace);
  initialStates(trace);
  ftraceStats(trace);
  schedlabPackets(trace);
  namedTracks(trace);
  return std::move(trace.data());
}

}  // namespace

std::string PerfettoExportLosses::describe() const {
  std::string out;
  if (initialStates)
    out += std::to_string(initialStates) + " task states at trace start (traced, parked or idle: no TaskStateEnum value)";
  if (userMarks)
    out += std::string(out.empty() ? "" : "; ") + std::to_string(userMarks) +
           " user-slice marks of a task running nowhere then (a print event needs its writer's context)";
  return out;
}

std::string encodePerfetto(const core::TraceModel& model, PerfettoExportLosses* losses) {
  Writer w(model);
  std::string bytes = w.run();
  if (losses) *losses = w.losses();
  return bytes;
}

core::Status writePerfetto(const core::TraceModel& model, const std::string& path, PerfettoExportLosses* losses) {
  const std::string bytes = encodePerfetto(model, losses);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return core::Error(path + ": cannot write");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return core::Error(path + ": cannot write (disk full?)");
  return {};
}

}  // namespace importers::perfetto
