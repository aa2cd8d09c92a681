// The command a recording traces (`record -- COMMAND ARGS...`): forked before
// tracing starts and held until released, so that the fork itself is not in the
// trace and a command that cannot start is known before anything is enabled.
// It runs in its own process group with stdin from /dev/null; a recording that
// stops first ends the group (SIGTERM, then SIGKILL). Used by recorder.cpp.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace recorder {

class TracedCommand {
 public:
  /// Finds argv[0] (on PATH unless it holds a '/') and forks the waiting child.
  /// Errors: "cannot start 'x': command not found" and the like.
  static core::Result<std::unique_ptr<TracedCommand>> prepare(const std::vector<std::string>& argv);
  /// Ends the command if it still runs, and reaps it.
  ~TracedCommand();
  TracedCommand(const TracedCommand&) = delete;
  TracedCommand& operator=(const TracedCommand&) = delete;

  /// Lets the child exec; returns once it did, or with the exec's error.
  core::Status release();
  /// Readable (poll) when the command has exited; -1 if the kernel has no pidfd.
  int exitFd() const { return m_pidfd; }
  /// Reaps the command if it exited; true once it has.
  bool checkExited();
  /// SIGTERM to its process group, SIGKILL to it after `grace`; reaps it.
  void terminate(std::chrono::milliseconds grace);
  /// "exited with status 1", "was killed by signal 11 (Segmentation fault)"; empty while running.
  std::string exitDescription() const;
  bool succeeded() const;
  const std::string& name() const { return m_name; }
  /// Its process group (the child's pid).
  pid_t processGroup() const { return m_pid; }

 private:
  TracedCommand() = default;
  std::string m_name;
  pid_t m_pid = -1;
  int m_pidfd = -1;
  int m_goPipe = -1;     // write end: one byte releases the child
  int m_errorPipe = -1;  // read end: the exec's errno, or EOF when exec succeeded
  std::optional<int> m_status;  // waitpid status once reaped
};

}  // namespace recorder
