// A private tracefs instance (instances/schedlab-PID-N-nsPIDNS) that one recording
// configures and reads: its own ring buffer, event enables, buffer_size_kb and
// tracing_on. The machine's top-level tracing state is never written, so there is
// nothing of it to restore, whether the recording ends, is stopped, or its
// command crashes; and recordings (or trace-cmd, or perf) running at the same time
// do not disturb each other. A guardian process removes the instance if the
// recording process dies without doing so (SIGKILL, a crash). Used by recorder.cpp.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "recorder/event_selection.h"

namespace recorder {

/// The tracefs mount to use: `requested` if given (it must be one), else
/// /sys/kernel/tracing, mounting tracefs there if nothing is, else
/// /sys/kernel/debug/tracing. Errors say what is missing and what to do,
/// in one line; without root that is the root message.
core::Result<std::string> locateTracefs(const std::string& requested);

/// The one-line message for a user who is not root.
std::string needRootMessage();
/// Whether this process may create tracefs instances; without root, the root message.
core::Status checkTracefsAccess(const std::string& tracefs);

class TracefsInstance {
 public:
  static constexpr std::string_view kNamePrefix = "schedlab-";

  /// Creates the instance (tracing off) and its guardian; first removes the
  /// instances of SchedLab processes of this PID namespace that no longer exist. Call
  /// checkTracefsAccess() first for the message a user without root needs.
  static core::Result<std::unique_ptr<TracefsInstance>> create(const std::string& tracefs);
  /// Tracing off, instance removed, guardian released (errors ignored: see remove()).
  ~TracefsInstance();
  TracefsInstance(const TracefsInstance&) = delete;
  TracefsInstance& operator=(const TracefsInstance&) = delete;

  const std::string& path() const { return m_path; }
  const std::string& tracefs() const { return m_tracefs; }

  /// Writes a file of the instance ("buffer_size_kb"); the error names it and the cause.
  core::Status write(const std::string& relative, const std::string& value);
  core::Result<std::string> read(const std::string& relative) const;
  core::Status setBufferKb(int kb);
  core::Status enable(const std::vector<TraceEvent>& events);
  core::Status setTracing(bool on) { return write("tracing_on", on ? "1" : "0"); }
  /// The CPUs the instance has a ring buffer for (per_cpu/cpuN).
  std::vector<int> cpus() const;
  /// Tracing off and the instance gone (every file of it must be closed first).
  core::Status remove();
  /// Should this process die with the instance in place, the guardian also ends
  /// this process group (the traced command's), with SIGTERM.
  void endWithUs(pid_t processGroup);

 private:
  TracefsInstance(std::string tracefs, std::string name);
  core::Status startGuardian();

  std::string m_tracefs;
  std::string m_name;
  std::string m_path;
  bool m_removed = false;
  pid_t m_guardian = -1;
  int m_guardianPipe = -1;  // write end: 'd' = removed, nothing to do; 'g' + pid = a group to end; EOF = we died
};

}  // namespace recorder
