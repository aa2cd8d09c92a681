// Splits one line of ftrace text (tracefs trace/trace_pipe, trace-cmd report,
// Android atrace/systrace) into its columns, and decodes the payloads of the
// sched events. Pure functions over string_views, no allocation; the
// FtraceTextReader calls them once per line and the probe on the file's head.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/task_state.h"
#include "core/trace_model.h"

namespace importers::ftrace {

/// How the name after the timestamp was written.
enum class NameForm : uint8_t {
  Event,        ///< "sched_switch: ..." (the common case)
  SyscallEnter, ///< "sys_read(fd: 3, ...)": the syscalls enter event (sys_enter_read)
  SyscallExit,  ///< "sys_read -> 0x0": the syscalls exit event (sys_exit_read)
  Function,     ///< "do_sys_open <-do_syscall_64": the function tracer
};

/// The columns of one event line.
struct LineFields {
  std::string_view comm;     ///< TASK column as printed ("<...>" when the tracer had not saved it)
  int32_t tid = -1;          ///< the PID part of TASK-PID: the task current when the event fired
  int32_t tgid = -1;         ///< the optional "(tgid)" column; -1 when absent or "(-----)"
  int32_t cpu = -1;
  uint8_t irq = 0;           ///< core::IrqContext bits, from the irq-flags column when there is one
  bool hasFlags = false;     ///< an irq-flags column ("d..2.") was present
  bool relativeUs = false;   ///< latency-format timestamp ("45130us"), microseconds since the buffer start
  int64_t ts = 0;            ///< nanoseconds
  NameForm form = NameForm::Event;
  std::string_view name;     ///< event name ("sched_switch"), syscall name ("sys_read") or function
  std::string_view payload;  ///< what follows the name, leading padding removed
};

/// Parses an event line. Returns false for anything else (headers, comments,
/// garbage). Accepts every layout the tracefs and trace-cmd print: with and
/// without the irq-flags column, with the "(tgid)" column, and the latency
/// layout ("comm-pid  1d..2. 45130us : ..."). The TASK-PID column is split at the
/// last '-' before the pid, so comms holding spaces or dashes survive.
bool tokenizeLine(std::string_view line, LineFields& out);

/// "CPU:3 [LOST 120 EVENTS]" (tracefs) or "CPU:3 [120 EVENTS DROPPED]" /
/// "CPU:3 [EVENTS DROPPED]" (trace-cmd report). count is -1 when not printed.
struct LostEvents {
  int32_t cpu = -1;
  int64_t count = -1;
};
std::optional<LostEvents> parseLostEventsLine(std::string_view line);

/// Seconds with an optional fraction ("285.770047", "12.5", "1234") to
/// nanoseconds, exactly: integer and fraction digits are parsed apart.
std::optional<int64_t> parseSecondsToNs(std::string_view text);

// ---- sched payloads -------------------------------------------------------

/// How prev_state was written.
enum class StateForm : uint8_t {
  Letters,        ///< kernel print format: "R", "R+", "S", "D|K", "x"...
  Raw,            ///< a number: the raw bits (trace-cmd report -R, or old print formats)
  PluginLetters,  ///< libtraceevent's sched_switch plugin: letters of the bits "SDTtZXxW"
};

struct SwitchFields {
  std::string_view prevComm;
  int32_t prevTid = 0;
  int32_t prevPrio = core::kPrioUnknown;
  std::string_view prevState;
  StateForm stateForm = StateForm::Letters;
  std::string_view nextComm;
  int32_t nextTid = 0;
  int32_t nextPrio = core::kPrioUnknown;
};
/// "prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=b next_pid=2 next_prio=120",
/// the same without "==>" (raw field style), or the plugin's "a:1 [120] S ==> b:2 [120]".
bool parseSwitch(std::string_view payload, SwitchFields& out);

/// Raw value of a numeric prev_state ("64", "0x40"); nullopt if not numeric.
std::optional<uint64_t> parseRawState(std::string_view text);
/// Decodes the plugin letters ("S", "D|W", "R") back to the raw bits they stand for.
std::optional<uint64_t> pluginLettersToRaw(std::string_view text);

struct WakeFields {
  std::string_view comm;
  int32_t tid = 0;
  int32_t prio = core::kPrioUnknown;
  int32_t targetCpu = -1;
};
/// sched_waking / sched_wakeup / sched_wakeup_new: "comm=a pid=1 prio=120 [success=1 ]target_cpu=001"
/// or the plugin's "a:1 [120] [success=1 ]CPU:001".
bool parseWake(std::string_view payload, WakeFields& out);

struct MigrateFields {
  std::string_view comm;
  int32_t tid = 0;
  int32_t prio = core::kPrioUnknown;
  int32_t origCpu = -1;
  int32_t destCpu = -1;
};
bool parseMigrate(std::string_view payload, MigrateFields& out);

struct ForkFields {
  std::string_view parentComm;
  int32_t parentTid = 0;
  std::string_view childComm;
  int32_t childTid = 0;
};
/// "comm=a pid=1 child_comm=b child_pid=2" (or parent_comm/parent_pid, raw style).
bool parseFork(std::string_view payload, ForkFields& out);

struct ExecFields {
  std::string_view filename;
  int32_t tid = 0;
  int32_t oldTid = 0;
};
bool parseExec(std::string_view payload, ExecFields& out);

struct ExitFields {
  std::string_view comm;
  int32_t tid = 0;
  int32_t prio = core::kPrioUnknown;
};
/// sched_process_exit / sched_process_free: "comm=a pid=1 prio=120[ group_dead=true]".
bool parseExit(std::string_view payload, ExitFields& out);

struct RenameFields {
  int32_t tid = 0;
  std::string_view oldComm;
  std::string_view newComm;
};
/// task_rename: "pid=1 oldcomm=a newcomm=b oom_score_adj=0" (oom_adj= on old kernels).
bool parseRename(std::string_view payload, RenameFields& out);

}  // namespace importers::ftrace
