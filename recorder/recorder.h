// Records a scheduler trace of this machine: enables tracepoints in a private
// tracefs instance, runs a command (or waits), streams each CPU's ring buffer
// to a spool file while it runs, then writes a trace.dat v7 (zstd) and the
// topology snapshot beside it. Shared by `schedlab-cli record` and the GUI's
// Record dialog; depends on core and the trace.dat writer, never on Qt.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/result.h"
#include "recorder/event_selection.h"

namespace recorder {

struct RecordOptions {
  std::string output;               ///< the trace.dat to write; its topology goes to OUTPUT.topology
  std::string events = "sched";     ///< see selectEvents()
  int bufferKb = 8192;              ///< ring buffer per CPU
  std::optional<std::chrono::nanoseconds> duration;  ///< stop after this long (ends the command too)
  std::vector<std::string> command;  ///< traced from its start to its end; empty: until duration or stop
  /// How often the ring buffers are read into the spool files. Longer than the
  /// recording: read once at the end, so a small buffer overruns (tests).
  std::chrono::milliseconds drainInterval{100};
  std::string tracefs;  ///< empty: /sys/kernel/tracing (mounted if need be)
};

inline constexpr int kMinBufferKb = 16;
inline constexpr int kMaxBufferKb = 4 << 20;

enum class Phase { Recording, Writing };

struct RecordProgress {
  Phase phase = Phase::Recording;
  std::chrono::nanoseconds elapsed{0};  ///< since tracing started
  uint64_t bytes = 0;                   ///< ring-buffer data captured so far
  uint64_t lostEvents = 0;              ///< events the ring buffers overwrote before they were read
  double fraction = -1;                 ///< of this phase, when known (a duration, the writing); else -1
};
using ProgressFn = std::function<void(const RecordProgress&)>;

struct CpuLoss {
  int cpu = 0;
  uint64_t overrun = 0;  ///< per_cpu/cpuN/stats "overrun": events lost to a full ring buffer
};

struct RecordResult {
  std::string output;
  std::string topologyFile;       ///< empty when sysfs had no topology to save
  std::string schedSettingsFile;  ///< /proc/sys/kernel/sched_* beside the trace; empty when none could be read
  std::string autogroupsFile;     ///< each task's /proc/PID/autogroup beside the trace; empty without autogroups
  std::vector<TraceEvent> events;
  uint64_t bytes = 0;  ///< ring-buffer data written (before compression)
  std::chrono::nanoseconds elapsed{0};
  std::vector<CpuLoss> losses;  ///< CPUs that lost events
  bool stoppedEarly = false;    ///< by the stop token (Ctrl+C, Stop)
  std::string commandExit;      ///< "exited with status 0"; empty without a command
  std::vector<std::string> notes;  ///< what the user should know: events left out, a failed command...
  uint64_t lostTotal() const;
};

/// Needs root and tracefs. On failure the error is one line naming what failed
/// and what to do (no root, no tracefs, events this kernel lacks, disk full, a
/// command that cannot start), and no output file is left. `stop` ends the
/// recording early; what was recorded is still written. `progress` is called
/// from this thread. The machine's own tracing state is never changed (see
/// tracefs_instance.h).
core::Result<RecordResult> record(const RecordOptions& options, const ProgressFn& progress = {},
                                  std::stop_token stop = {});

}  // namespace recorder
