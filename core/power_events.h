// The power, PELT and trace_marker events, by event and field name, for every
// importer: which events they are (powerEventOf) and what DecodedEvents their
// fields make (decodePowerEvent). The text importers read the fields from the
// printed "key=value" payload (TextFields); the binary ones from the record
// through the event's format. One mapping of those tracepoints for all formats.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "core/decoded_event.h"

namespace core {

enum class PowerEvent : uint8_t {
  None,
  CpuFrequency,        ///< power:cpu_frequency (state=kHz, cpu_id)
  CpuFrequencyLimits,  ///< power:cpu_frequency_limits (min_freq, max_freq, cpu_id)
  CpuIdle,             ///< power:cpu_idle (state, cpu_id; state (u32)-1 = leaves idle)
  PeltCfs,             ///< sched_pelt_cfs / sched_load_cfs_rq / sched_load_avg_cpu: the CPU's root cfs_rq
  PeltSe,              ///< sched_pelt_se / sched_load_se / sched_load_avg_task: a task's sched_entity
  UtilEstCfs,          ///< sched_util_est_cfs
  UtilEstSe,           ///< sched_util_est_se / sched_util_est_task
  PeltRt,              ///< sched_pelt_rt
  PeltDl,              ///< sched_pelt_dl
  PeltIrq,             ///< sched_pelt_irq
  Print,               ///< ftrace print / tracing_mark_write: user-space text
};

/// The kind of an event name, with or without its system ("power:cpu_idle"),
/// in LTTng's spelling ("power_cpu_idle") and in LISA's module's ("lisa__sched_pelt_se").
PowerEvent powerEventOf(std::string_view name);

/// Where decodePowerEvent reads an event's fields.
class EventFields {
 public:
  virtual ~EventFields() = default;
  virtual std::optional<int64_t> number(std::string_view field) const = 0;
  virtual std::optional<std::string_view> text(std::string_view field) const = 0;
};

/// Fields of a printed payload: "state=850000 cpu_id=0"; a value runs to the next white space.
class TextFields final : public EventFields {
 public:
  explicit TextFields(std::string_view payload) : m_payload(payload) {}
  std::optional<int64_t> number(std::string_view field) const override;
  std::optional<std::string_view> text(std::string_view field) const override;

 private:
  std::string_view m_payload;
};

inline constexpr size_t kMaxPowerEventsPerRecord = 3;
/// The events one record of `kind` makes (none for a record the model does not
/// keep: a task group's cfs_rq or entity). `base` gives ts, cpu, ctxTid, irq
/// and position. Returns how many were written to `out`, or nullopt when a
/// field the event needs is missing (the importer counts it as unsupported).
/// Print needs its text from the importer: use userMarkEvent().
std::optional<size_t> decodePowerEvent(PowerEvent kind, const EventFields& fields, const DecodedEvent& base,
                                       std::span<DecodedEvent, kMaxPowerEventsPerRecord> out);

/// The UserMark event of a trace_marker write (`text` must outlive the event
/// or go through the EventSorter, which copies it).
DecodedEvent userMarkEvent(const DecodedEvent& base, int32_t writerTid, std::string_view text);

/// The text of a printed print event: "tracing_mark_write: B|1|x" (the
/// event's own "%ps: %s" format) or just the text; the ip's symbol is dropped.
std::string_view printedMarkerText(std::string_view payload);

}  // namespace core
