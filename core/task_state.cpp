#include "core/task_state.h"

#include <array>

namespace core {

std::string_view toString(TaskState state) {
  static constexpr std::array<std::string_view, kTaskStateCount> kNames = {
      "running", "runnable", "runnable (preempted)", "sleeping", "blocked (D)", "idle (I)",
      "stopped", "traced", "parked", "dead", "unknown"};
  return kNames[static_cast<size_t>(state)];
}

std::string_view toLetters(TaskState state) {
  static constexpr std::array<std::string_view, kTaskStateCount> kLetters = {"R", "R", "R+", "S", "D", "I",
                                                                               "T", "t", "P", "X", "?"};
  return kLetters[static_cast<size_t>(state)];
}

StateClass classify(TaskState state) {
  switch (state) {
    case TaskState::Running: return StateClass::Running;
    case TaskState::Runnable:
    case TaskState::RunnablePreempted: return StateClass::Runnable;
    case TaskState::Blocked: return StateClass::Blocked;
    case TaskState::Sleeping:
    case TaskState::Idle:
    case TaskState::Stopped:
    case TaskState::Traced:
    case TaskState::Parked: return StateClass::Sleep;
    case TaskState::Dead: return StateClass::Dead;
    case TaskState::Unknown: return StateClass::Unknown;
  }
  return StateClass::Unknown;
}

std::optional<TaskState> taskStateFromLetters(std::string_view s) {
  if (s.empty()) return std::nullopt;
  // Flags joined with '|' ("D|K", "S|W"): the first letter names the state;
  // K (killable), W (waking) and N (noload) only qualify it.
  switch (s.front()) {
    case 'R': return TaskState::RunnablePreempted;  // switched out still runnable: "R" and "R+" alike
    case 'S': return TaskState::Sleeping;
    case 'D': return TaskState::Blocked;
    case 'K': return TaskState::Blocked;  // bare wakekill: killable sleep
    case 'I': return TaskState::Idle;
    case 'T': return TaskState::Stopped;
    case 't': return TaskState::Traced;
    case 'P': return TaskState::Parked;
    case 'X':
    case 'Z':
    case 'x': return TaskState::Dead;
    case 'W': return TaskState::Runnable;  // TASK_WAKING: already being woken
    default: return std::nullopt;
  }
}

PrevStateEncoding guessPrevStateEncoding(uint64_t orOfAllRawValues) {
  return (orOfAllRawValues & ~uint64_t{1023}) != 0 ? PrevStateEncoding::Legacy : PrevStateEncoding::Report414;
}

std::optional<TaskState> taskStateFromRaw(uint64_t raw, PrevStateEncoding encoding) {
  if (encoding == PrevStateEncoding::Report414) {
    if (raw & 0x100) return TaskState::RunnablePreempted;
    const uint64_t bits = raw & 0xff;
    if (bits == 0) return TaskState::RunnablePreempted;  // "R": still runnable when switched out
    if (bits & 0x30) return TaskState::Dead;
    if (bits & 0x02) return TaskState::Blocked;
    if (bits & 0x01) return TaskState::Sleeping;
    if (bits & 0x04) return TaskState::Stopped;
    if (bits & 0x08) return TaskState::Traced;
    if (bits & 0x40) return TaskState::Parked;
    if (bits & 0x80) return TaskState::Idle;
    return std::nullopt;
  }
  // Legacy: the preempt flag is the single bit at TASK_STATE_MAX (1024..4096).
  if (raw & (0x400 | 0x800 | 0x1000)) {
    // 1024 was TASK_NOLOAD in 4.2+ (TASK_IDLE = D|N); combined with D it is idle.
    if ((raw & 0x400) && (raw & 0x2) && !(raw & 0x1800)) return TaskState::Idle;
    return TaskState::RunnablePreempted;
  }
  if (raw == 0) return TaskState::RunnablePreempted;
  if (raw & (0x10 | 0x20 | 0x40)) return TaskState::Dead;
  if (raw & 0x02) return TaskState::Blocked;
  if (raw & 0x01) return TaskState::Sleeping;
  if (raw & 0x04) return TaskState::Stopped;
  if (raw & 0x08) return TaskState::Traced;
  if (raw & 0x200) return TaskState::Parked;
  if (raw & 0x80) return TaskState::Blocked;    // K alone: killable
  if (raw & 0x100) return TaskState::Runnable;  // W: waking
  return std::nullopt;
}

}  // namespace core
