// Import diagnostics: every contradiction, repair and loss an importer or the
// SchedBuilder meets is counted under a named code with a severity, declared
// once in the table below (like Perfetto's stats.h). Nothing is dropped silently.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace core {

enum class Severity : uint8_t { Info, DataLoss, Error };
std::string_view toString(Severity severity);

// X(name, severity, description)
#define SCHEDLAB_DIAGNOSTICS(X)                                                                                   \
  X(mismatched_switch_prev_tid, DataLoss,                                                                         \
    "the task last switched in on a CPU was replaced without a traced switch out; how it left comes from its next " \
    "event (switch_out_state_inferred), or stays unknown")                                                         \
  X(switch_in_inferred, DataLoss,                                                                                 \
    "a task ran on a CPU (an event in its context) that no traced sched_switch put it on; switch-in inferred")   \
  X(unknown_prev_state, Error, "prev_state value not recognised; the task was treated as sleeping")              \
  X(out_of_order_timestamp, Error, "event timestamp earlier than the previous event on its CPU; clamped to it")   \
  X(reordered_events, Info, "events read after a later event of another CPU; moved back into time order")        \
  X(sort_window_exceeded, Error, "events later than the sort window allows; placed at the window's edge")        \
  X(unsorted_input, Error, "event earlier than one already built on another CPU (input not merged by time); clamped") \
  X(wakeup_unknown_task, Info, "wakeup of a task never seen before")                                             \
  X(wakeup_of_running_task, Info, "wakeup of a task that was running or runnable (no state change)")              \
  X(switch_in_not_runnable, Info, "task switched in without a wakeup seen (state before it was not runnable)")    \
  X(tid_reused_without_fork, Info, "tid came back after its task died without a fork event; new task created")    \
  X(fork_of_existing_tid, Info, "fork child tid already had a live task; the old one was ended")                  \
  X(cpu_out_of_range, Error, "event on a CPU number beyond the supported range; event dropped")                   \
  X(lost_events, DataLoss, "events the tracer reported as lost (ring-buffer overrun, perf LOST, CTF discarded)")  \
  X(lost_event_ranges, DataLoss, "ranges of a CPU's timeline with lost events")                                   \
  X(malformed_record, Error, "record or line that could not be decoded; skipped")                                 \
  X(unsupported_event, Info, "sched event of a known name whose fields could not be read")                        \
  X(truncated_input, Error, "input ended inside a record; valid prefix kept")                                     \
  X(slice_open_at_end, Info, "slices still running at trace end (closed at the last timestamp)")                  \
  X(migrate_wrong_cpu, Info, "migration orig_cpu differs from the CPU the task was last seen on")                 \
  X(migration_inferred, Info,                                                                                     \
    "a task ran or was woken on another CPU than it was last seen on, with no sched_migrate_task between (perf "  \
    "record traces none of its own moves); migration inferred")                                                  \
  X(user_slice_end_unmatched, Info, "user-space slice end (atrace E/F) with no open slice to end; ignored")       \
  X(user_slice_open_at_end, Info, "user-space slices still open at trace end (run to the last timestamp)")        \
  X(topology_snapshot_unreadable, Error,                                                                          \
    "the topology snapshot beside the trace could not be read; the trace's own topology was used")                \
  X(runtime_differs_from_kernel, Info,                                                                            \
    "a task's run slices add up to more or less than the kernel accounted to it (sched_stat_runtime), by more "   \
    "than a tick")                                                                                                \
  X(compact_switch_prev_unknown, DataLoss,                                                                        \
    "first compact_sched switch on a CPU (Perfetto): the task it switched out is not recorded; the task it "      \
    "switched in runs from there")                                                                                 \
  X(switch_out_state_inferred, Info,                                                                              \
    "a task replaced without a traced switch out was next woken, so it had slept (S assumed: the trace cannot "   \
    "tell S from D), or next ran with no wakeup, so it had been preempted")

enum class DiagCode : uint16_t {
#define SCHEDLAB_DIAG_ENUM(name, sev, desc) name,
  SCHEDLAB_DIAGNOSTICS(SCHEDLAB_DIAG_ENUM)
#undef SCHEDLAB_DIAG_ENUM
      Count
};
inline constexpr size_t kDiagCount = static_cast<size_t>(DiagCode::Count);

std::string_view diagName(DiagCode code);
std::string_view diagDescription(DiagCode code);
Severity diagSeverity(DiagCode code);

/// `text` with every `from` in it replaced by `to` (a file's name in a message).
std::string withFileRenamed(std::string text, const std::string& from, const std::string& to);

/// One located problem: which file, where in it, what. The first few of each
/// code are kept with their location; the rest are only counted.
struct DiagnosticRecord {
  DiagCode code;
  std::string file;
  std::optional<uint64_t> line;        ///< 1-based, text formats
  std::optional<uint64_t> byteOffset;  ///< binary formats
  std::optional<int> cpu;
  std::optional<int64_t> ts;
  std::string message;
  /// "FILE: line N: message" or "FILE: byte offset 0xN (cpu 3): message".
  std::string format() const;
};

class Diagnostics {
 public:
  static constexpr size_t kRecordsKeptPerCode = 8;

  void add(DiagCode code, uint64_t count = 1) { m_counts[static_cast<size_t>(code)] += count; }
  void record(DiagnosticRecord rec);
  uint64_t count(DiagCode code) const { return m_counts[static_cast<size_t>(code)]; }
  const std::vector<DiagnosticRecord>& records() const { return m_records; }
  uint64_t total(Severity severity) const;
  void merge(const Diagnostics& other);
  /// The records that name `from`, as their file or in their message, name
  /// `to` instead (a decompressed copy read in place of the file the user gave).
  void renameFile(const std::string& from, const std::string& to);

 private:
  std::array<uint64_t, kDiagCount> m_counts{};
  std::vector<DiagnosticRecord> m_records;
};

}  // namespace core
