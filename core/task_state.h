// The version-neutral task state stored in the model. Importers decode the
// kernel's prev_state (letters, or raw bits whose meaning changed in 4.14) once,
// here, so nothing downstream depends on the traced kernel's version.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace core {

enum class TaskState : uint8_t {
  Running,            ///< on a CPU
  Runnable,           ///< on a runqueue after a wakeup (or fork)
  RunnablePreempted,  ///< on a runqueue after being preempted ("R+", or prev_state R)
  Sleeping,           ///< TASK_INTERRUPTIBLE ("S")
  Blocked,            ///< TASK_UNINTERRUPTIBLE ("D", "D|K" killable included)
  Idle,               ///< TASK_IDLE ("I"): uninterruptible but not counted as load
  Stopped,            ///< "T"
  Traced,             ///< "t"
  Parked,             ///< "P" (kthread parked)
  Dead,               ///< "X", "Z", "x": exited
  Unknown,            ///< not known: before the task's first event, or after lost data
};
inline constexpr int kTaskStateCount = 11;

std::string_view toString(TaskState state);
/// One-letter code as ftrace prints it ("R", "R+", "S", "D", ...).
std::string_view toLetters(TaskState state);

/// How the stats classify a state. "sleep" and "blocked" are reported apart:
/// blocked is uninterruptible sleep (D), usually I/O or a lock; everything else
/// off a runqueue and alive is sleep.
enum class StateClass : uint8_t { Running, Runnable, Sleep, Blocked, Dead, Unknown };
StateClass classify(TaskState state);
inline bool isRunnable(TaskState s) { return s == TaskState::Runnable || s == TaskState::RunnablePreempted; }

/// Decodes the letter form printed by ftrace/perf ("R", "R+", "S", "D|K", "x", "I"...).
/// Returns nullopt for text it does not recognise (callers count a diagnostic).
std::optional<TaskState> taskStateFromLetters(std::string_view letters);

/// Raw prev_state bit encodings. Linux 4.14 (commit efb40f588b43, "sched/tracing:
/// Fix trace_sched_switch task-state printing") folded the state to TASK_REPORT
/// bits: S=1 D=2 T=4 t=8 X=16 Z=32 P=64 I=128, preempted=256. Before it, raw
/// task->state was printed: ... X=16 Z=32 x=64 K=128 W=256 P=512 N=1024, with the
/// preempted flag at TASK_STATE_MAX (1024, 2048 or 4096 by version).
enum class PrevStateEncoding : uint8_t { Report414, Legacy };

/// Picks the encoding from raw values seen in a trace: any value with a bit at or
/// above 1024 can only be the legacy encoding's preempt flag or high states.
PrevStateEncoding guessPrevStateEncoding(uint64_t orOfAllRawValues);

std::optional<TaskState> taskStateFromRaw(uint64_t raw, PrevStateEncoding encoding);

}  // namespace core
