#include "importers/perfetto/perfetto_writer.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
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

class Writer {
 public:
  explicit Writer(const TraceModel& m) : m_m(m) {}
  std::string run();

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
  bool runEndsAt(int cpu, Utid u, int64_t ts) const;
  bool runStartsAt(int cpu, Utid u, int64_t ts) const;

  void writeSwitch(int64_t ts, int32_t cpu, Utid prev, int prevPrio, core::TaskState prevState, Utid next, int nextPrio,
                   bool forcedIdle, bool lossBefore, bool repaired = false);
  void switches();
  void wakeups();
  void taskEvents();
  void migrations();
  void frequencies();
  void bundles(MessageWriter& trace);
  void processTree(MessageWriter& trace);
  void systemPackets(MessageWriter& trace);
  void schedlabPackets(MessageWriter& trace);
  void namedTracks(MessageWriter& trace);

  const TraceModel& m_m;
  std::vector<std::vector<std::pair<int64_t, core::StringId>>> m_comms;  // by utid
  std::vector<int64_t> m_firstStart;  // by CPU: where its first slice begins
  std::string m_arena;
  std::vector<Pending> m_events;
  MessageWriter m_ev;
  int64_t m_pendingTs = 0;
  int32_t m_pendingCpu = 0;
  bool m_pendingLoss = false;
  uint8_t m_pendingRank = 1;
  uint32_t m_seq = 0;
};

std::string_view Writer::commAt(Utid u, int64_t ts) const {
  if (u.value >= m_comms.size() || m_comms[u.value].empty()) return m_m.comm(u);
  const auto& c = m_comms[u.value];
  auto it = std::upper_bound(c.begin(), c.end(), ts, [](int64_t t, const auto& e) { return t < e.first; });
  return m_m.strings.get(it == c.begin() ? c.front().second : std::prev(it)->second);
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

void Writer::writeSwitch(int64_t ts, int32_t cpu, Utid prev, int prevPrio, core::TaskState prevState, Utid next,
                         int nextPrio, bool forcedIdle, bool lossBefore, bool repaired) {
  MessageWriter sw;
  sw.bytes(1, commAt(prev, ts));
  sw.sint(2, tidOf(prev));
  sw.sint(3, prevPrio);
  sw.sint(4, static_cast<int64_t>(rawState(prevState)));
  sw.bytes(5, commAt(next, ts));
  sw.sint(6, tidOf(next));
  sw.sint(7, nextPrio);
  if (forcedIdle) sw.varint(kSwitchSchedlabForcedIdle, 1);
  if (repaired) sw.varint(kSwitchSchedlabRepaired, 1);
  begin(ts, cpu, lossBefore);
  payload(kSchedSwitch, sw);
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
        writeSwitch(s.ts[i], cpu, core::kIdleUtid, core::kPrioUnknown, core::TaskState::RunnablePreempted, s.utid[i],
                    s.prio[i], s.kind[i] == core::SliceKind::ForcedIdle, afterLoss);
        lastEvent = s.ts[i];
      } else if (!switchedIn) {
        marker(s.ts[i], cpu, afterLoss);  // the CPU is seen from here: its first slice starts here
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
      writeSwitch(ts, cpu, s.utid[i], s.prio[i], s.endReason[i] == core::SliceEnd::Exited ? core::TaskState::Dead : s.endState[i],
                  nextHere ? s.utid[i + 1] : core::kIdleUtid, nextHere ? s.prio[i + 1] : core::kPrioUnknown,
                  nextHere && s.kind[i + 1] == core::SliceKind::ForcedIdle, false, repaired);
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
    wk.varint(4, 1);
    wk.sint(5, knownCpu(w.targetCpu[i]) ? w.targetCpu[i] : -1);
    const uint32_t id = (w.flags[i] & core::kWakeupNew)         ? kSchedWakeupNew
                        : (w.flags[i] & core::kWakeupHadWaking) ? kSchedWaking
                                                                : kSchedWakeup;
    payload(id, wk);
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
    const int64_t ts = mg.ts[i];
    const int32_t dest = knownCpu(mg.destCpu[i]) ? mg.destCpu[i] : 0;
    const int32_t orig = knownCpu(mg.origCpu[i]) ? mg.origCpu[i] : -1;
    // On a CPU already seen, so that it does not move that CPU's first slice.
    int32_t cpu = dest;
    if (static_cast<size_t>(dest) < m_firstStart.size() && m_firstStart[static_cast<size_t>(dest)] > ts && orig >= 0)
      cpu = orig;
    MessageWriter p;
    p.bytes(1, commAt(mg.utid[i], ts));
    p.sint(2, tidOf(mg.utid[i]));
    p.sint(3, m_m.threads.prio[mg.utid[i].value]);
    p.sint(4, orig);
    p.sint(5, dest);
    // A task moves to a CPU before the switch that puts it on there, and off a
    // CPU after the switch that takes it off.
    begin(ts, cpu, false, runStartsAt(cpu, mg.utid[i], ts) ? 0 : 2);
    payload(kSchedMigrateTask, p);
  }
}

void Writer::frequencies() {
  const auto& c = m_m.counters;
  for (size_t t = 0; t < c.tracks.size(); ++t) {
    if (c.tracks[t].kind != core::CounterKind::CpuFrequencyKhz) continue;
    const int32_t cpu = c.tracks[t].index;
    const int64_t first = static_cast<size_t>(cpu) < m_firstStart.size() ? m_firstStart[static_cast<size_t>(cpu)] : INT64_MIN;
    for (uint32_t r = c.rowsBegin[t]; r < c.rowsBegin[t + 1]; ++r) {
      MessageWriter p;
      p.varint(1, static_cast<uint64_t>(std::max(0.0, c.value[r])));
      p.varint(2, static_cast<uint64_t>(cpu));
      // A value set before the CPU's first slice takes effect there (an event
      // earlier would move where that slice is seen to start).
      begin(std::max(c.ts[r], first), cpu);
      payload(kCpuFrequency, p);
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
    while (j < m_events.size() && m_events[j].cpu == m_events[i].cpu && j - i < kBundleEvents && !m_events[j].lossBefore) ++j;
    ranges.push_back({i, j});
    i = j;
  }
  std::stable_sort(ranges.begin(), ranges.end(),
                   [&](const Range& a, const Range& b) { return m_events[a.begin].ts < m_events[b.begin].ts; });
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

void Writer::systemPackets(MessageWriter& trace) {
  const int cpus = std::max(m_m.topology.cpuCount(), m_m.cpuCount());
  MessageWriter info, packet;
  info.varint(kSysNumCpus, static_cast<uint64_t>(cpus));
  info.bytes(kSysServiceVersion, "SchedLab export");
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
  m_firstStart.assign(m_m.cpuSlices.size(), INT64_MAX);
  for (size_t c = 0; c < m_m.cpuSlices.size(); ++c)
    if (m_m.cpuSlices[c].size()) m_firstStart[c] = m_m.cpuSlices[c].ts[0];

  // Written in this order, events of one instant and rank keep the kernel's
  // order: a fork before its child's wakeup, a waking before the migration it causes.
  switches();
  taskEvents();
  wakeups();
  migrations();
  frequencies();
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
  schedlabPackets(trace);
  namedTracks(trace);
  return std::move(trace.data());
}

}  // namespace

std::string encodePerfetto(const core::TraceModel& model) { return Writer(model).run(); }

core::Status writePerfetto(const core::TraceModel& model, const std::string& path) {
  const std::string bytes = encodePerfetto(model);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return core::Error(path + ": cannot write");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return core::Error(path + ": cannot write (disk full?)");
  return {};
}

}  // namespace importers::perfetto
