// One scheduler event as an importer decodes it, in a format-neutral,
// self-contained value (comms copied in) that can wait in the EventSorter and
// travel through the EventFeed; and applyEvent(), the one place that turns such
// a value into a SchedBuilder call. Made by every importer's decoder.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/sched_builder.h"
#include "core/task_state.h"

namespace core {

/// Which builder call an event makes, and what its generic fields mean:
enum class EventOp : uint8_t {
  Other,      ///< any event without its own builder call: marks its CPU busy at ts
  Switch,     ///< tid/otherTid = prev/next, prio/otherPrio, text 0/1 = prev/next comm, state = prev_state,
              ///< aux = 1: to forced idle (replays' core scheduling), 2: a switch-in an
              ///< import inferred, as its export wrote it (onRepairedSwitch), 3: the
              ///< same, leaving the state of the task it displaces as it is
  Waking,     ///< tid, prio, cpuA = target_cpu, text 0 = comm, aux = 0: the trace says the
              ///< wakeup found the task running or runnable (WakeArgs::foundActive)
  Wakeup,     ///< as Waking
  WakeupNew,  ///< as Waking
  Migrate,    ///< tid, prio, cpuA = orig_cpu, cpuB = dest_cpu, text 0 = comm
  Fork,       ///< tid/text 0 = parent, otherTid/text 1 = child, aux = child tgid (-1 unknown)
  Exec,       ///< tid, otherTid = old tid, text 0 = file name
  Exit,       ///< tid, prio, text 0 = comm
  RuntimeStat,  ///< tid, aux = CPU time (ns) the kernel accounted to it (sched_stat_runtime)
  Rename,     ///< tid, text 0 = new comm
  TaskInfo,   ///< tid, aux = tgid, text 0 = comm: identity told outside the events (onTaskInfo)
  DataLoss,   ///< aux = events lost on cpu before ts (-1 unknown)
  CpuFrequency,        ///< cpuA = the CPU whose frequency changed, aux = kHz
  CpuFrequencyLimits,  ///< cpuA = the CPU, aux = max kHz, otherTid = min kHz
  CpuIdle,             ///< cpuA = the CPU, aux = idle state (kIdleStateRunning: left idle)
  Pelt,                ///< otherTid = CounterKind, cpuA = CPU, tid = task (-1: the CPU's signal), text 0 = comm, aux = value
  UserMark,            ///< tid = the writer, text 0 = what it wrote to trace_marker (atrace or plain)
  TaskSeed,   ///< tid, state, cpu: a task's state at trace start (onTaskStateSeed)
  IdleKind,   ///< aux = 1: the idle CPU becomes forced idle, 0: no longer (onIdleKind)
  /// What a replay set for the current task of tid: aux = core-scheduling
  /// cookie, prio/otherPrio = uclamp min/max (-1 unset), cpuA = TaskPolicy,
  /// text 0 = its CPU affinity as a bit mask (empty: every CPU)
  TaskAttributes,
  CountOnly,  ///< an event that is counted under its countKey and nothing else (not placeable)
  /// An importer's own record on its way through the EventSorter to its
  /// EventSink (cpuA says which kind); never applied to the builder.
  Private,
};

inline constexpr int kFileTagShift = 48;
inline constexpr uint64_t kPositionInFileMask = (uint64_t{1} << kFileTagShift) - 1;
inline constexpr uint64_t fileTag(size_t file) { return static_cast<uint64_t>(file) << kFileTagShift; }

struct DecodedEvent {
  static constexpr size_t kInlineText = 16;  ///< TASK_COMM_LEN: every comm fits

  int64_t ts = 0;
  /// Line (text formats) or byte offset of the event: where the builder's
  /// diagnostics point, and the order of events with equal timestamps. An
  /// input of several files (perf record --threads) puts the file's number in
  /// the top bits (fileTag()): ties then keep file order, and diagnostics name
  /// the file (EventFeed::setFiles).
  uint64_t position = 0;
  int64_t aux = -1;  ///< see EventOp; -1 is "unknown" for each use
  int32_t cpu = 0;
  int32_t ctxTid = -1;  ///< common_pid; -1 if the format does not say
  int32_t tid = 0;
  int32_t otherTid = 0;
  int32_t prio = kPrioUnknown;
  int32_t otherPrio = kPrioUnknown;
  int32_t cpuA = -1;
  int32_t cpuB = -1;
  EventOp op = EventOp::Other;
  uint8_t irq = 0;  ///< IrqContext bits
  TaskState state = TaskState::Unknown;
  uint8_t externalText = 0;  ///< bit k: text k lies outside the event (longer than kInlineText)
  uint8_t textLen[2] = {};
  /// What the event is counted as: the key EventFeed::eventType() gave its
  /// name, or a format's own key its EventSink counts by; kNoCount: not counted.
  uint16_t countKey = kNoCount;
  char text[2][kInlineText];

  static constexpr uint16_t kNoCount = UINT16_MAX;

  EventContext context() const { return {ts, cpu, ctxTid, irq}; }

  /// Texts of at most kInlineText bytes are copied in; longer ones are only
  /// pointed to, valid as long as the caller keeps them (EventSorter::push copies them).
  void setText(int k, std::string_view s) {
    const auto bit = static_cast<uint8_t>(1u << k);
    if (s.size() <= kInlineText) {
      if (!s.empty()) std::memcpy(text[k], s.data(), s.size());
      textLen[k] = static_cast<uint8_t>(s.size());
      externalText = static_cast<uint8_t>(externalText & ~bit);
      return;
    }
    const char* p = s.data();
    const auto n = static_cast<uint32_t>(std::min<size_t>(s.size(), UINT32_MAX));
    std::memcpy(text[k], &p, sizeof p);
    std::memcpy(text[k] + 8, &n, sizeof n);
    externalText |= bit;
  }
  std::string_view textAt(int k) const {
    if (!(externalText & (1u << k))) return {text[k], textLen[k]};
    const char* p;
    uint32_t n;
    std::memcpy(&p, text[k], sizeof p);
    std::memcpy(&n, text[k] + 8, sizeof n);
    return {p, n};
  }
  /// Four bytes beside an outside text for whoever keeps it (the sorter's slot number).
  uint32_t externalTag(int k) const {
    uint32_t tag;
    std::memcpy(&tag, text[k] + 12, sizeof tag);
    return tag;
  }
  void setExternalTag(int k, uint32_t tag) { std::memcpy(text[k] + 12, &tag, sizeof tag); }
};
static_assert(sizeof(DecodedEvent) == 96);
static_assert(offsetof(DecodedEvent, countKey) == 62, "the key fills the bytes the texts' alignment left");

/// IrqContext bits from ftrace's common_flags: TRACE_FLAG_HARDIRQ 0x08,
/// TRACE_FLAG_SOFTIRQ 0x10, TRACE_FLAG_NMI 0x40 (kernel/trace/trace.h).
inline uint8_t irqFromTraceFlags(uint64_t flags) {
  return static_cast<uint8_t>(((flags & 0x08) ? kCtxHardIrq : 0) | ((flags & 0x10) ? kCtxSoftIrq : 0) |
                              ((flags & 0x40) ? kCtxNmi : 0));
}

/// Makes the builder call `e` stands for. Never fails: the builder counts what
/// it cannot use (see SchedBuilder).
inline void applyEvent(SchedBuilder& b, const DecodedEvent& e) {
  const EventContext ctx = e.context();
  switch (e.op) {
    case EventOp::Other: b.onOtherEvent(ctx); break;
    case EventOp::Switch: {
      SwitchArgs a;
      a.prevTid = e.tid;
      a.prevComm = e.textAt(0);
      a.prevPrio = e.prio;
      a.prevState = e.state;
      a.nextTid = e.otherTid;
      a.nextComm = e.textAt(1);
      a.nextPrio = e.otherPrio;
      a.forcedIdle = e.aux == 1;
      if (e.aux == 2 || e.aux == 3)
        b.onRepairedSwitch(ctx, a.nextTid, a.nextComm, a.nextPrio, e.aux == 3);
      else
        b.onSwitch(ctx, a);
      break;
    }
    case EventOp::Waking:
    case EventOp::Wakeup:
    case EventOp::WakeupNew: {
      const WakeArgs a{e.tid, e.textAt(0), e.prio, e.cpuA, e.aux == 0};
      if (e.op == EventOp::Waking)
        b.onWaking(ctx, a);
      else
        b.onWakeup(ctx, a, e.op == EventOp::WakeupNew);
      break;
    }
    case EventOp::Migrate: b.onMigrate(ctx, e.tid, e.textAt(0), e.prio, e.cpuA, e.cpuB); break;
    case EventOp::Fork:
      b.onFork(ctx, e.tid, e.textAt(0), e.otherTid, e.textAt(1), static_cast<int32_t>(e.aux));
      break;
    case EventOp::Exec: b.onExec(ctx, e.tid, e.otherTid, e.textAt(0)); break;
    case EventOp::Exit: b.onExit(ctx, e.tid, e.textAt(0), e.prio); break;
    case EventOp::RuntimeStat: b.onRuntimeStat(ctx, e.tid, e.aux); break;
    case EventOp::Rename: b.onRename(ctx, e.tid, e.textAt(0)); break;
    case EventOp::TaskInfo: b.onTaskInfo(e.tid, static_cast<int32_t>(e.aux), e.textAt(0)); break;
    case EventOp::DataLoss: b.onDataLoss(e.cpu, e.ts, e.aux); break;
    case EventOp::CpuFrequency: b.onCpuFrequency(ctx, e.cpuA, e.aux); break;
    case EventOp::CpuFrequencyLimits: b.onCpuFrequencyLimits(ctx, e.cpuA, e.otherTid, e.aux); break;
    case EventOp::CpuIdle: b.onCpuIdle(ctx, e.cpuA, e.aux); break;
    case EventOp::Pelt:
      b.onPelt(ctx, static_cast<CounterKind>(e.otherTid), e.cpuA, e.tid, e.textAt(0), e.aux);
      break;
    case EventOp::UserMark: b.onUserMark(ctx, e.tid, e.textAt(0)); break;
    case EventOp::TaskSeed: b.onTaskStateSeed(e.ts, e.tid, e.state, e.cpu); break;
    case EventOp::IdleKind: b.onIdleKind(ctx, e.aux == 1); break;
    case EventOp::TaskAttributes: {
      if (e.aux > 0 || e.prio >= 0 || e.otherPrio >= 0)
        b.setTaskAttributes(e.tid, static_cast<uint32_t>(e.aux), static_cast<int16_t>(e.prio),
                            static_cast<int16_t>(e.otherPrio));
      std::vector<CpuId> affinity;
      const std::string_view mask = e.textAt(0);
      for (size_t i = 0; i < mask.size() * 8; ++i)
        if (static_cast<uint8_t>(mask[i / 8]) >> (i % 8) & 1) affinity.push_back(static_cast<CpuId>(i));
      const auto policy = static_cast<TaskPolicy>(e.cpuA);
      if (policy != TaskPolicy::Unknown || !affinity.empty()) b.setTaskPolicy(e.tid, policy, std::move(affinity));
      break;
    }
    case EventOp::CountOnly:
    case EventOp::Private: break;
  }
}

}  // namespace core
