// Turns ring-buffer records into core::DecodedEvent, which the trace.dat importer
// merges across CPUs (core::EventSorter) and feeds to core::SchedBuilder. Field offsets of the scheduler
// events are resolved once per event format (EventDecoderTable::build), so
// decoding a record is a few loads at fixed offsets. Called by the per-CPU stream
// workers (cpu_stream.cpp), concurrently: everything here is read-only after build.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "core/decoded_event.h"
#include "core/power_events.h"
#include "core/task_state.h"
#include "core/trace_model.h"
#include "importers/tracedat/event_format.h"

namespace importers::tracedat {

inline constexpr size_t kCommLen = 16;  // TASK_COMM_LEN

using core::DecodedEvent;
using core::EventOp;
/// Records the importer reports rather than applies (op Private): too short
/// for their format, or of an event id no format declares.
inline constexpr int32_t kMalformedRecord = 0;
/// A power, PELT or print record (core/power_events.h), op Private: text 0 is
/// the whole record, whose fields the merger reads by name (RecordFields).
inline constexpr int32_t kPowerRecord = 1;

/// prev_state decoded the way the traced kernel prints it: the sched_switch print
/// fmt carries the kernel's own flag table (letters per bit, the mask, and the
/// preempt "+" bit, whose position moved between versions: 1024/2048/4096 before
/// 4.14, 256 after). Evaluating that table, then core::taskStateFromLetters, gives
/// the same state the ftrace text of the same trace gives. Without a usable
/// print fmt, the raw bits are read with core::taskStateFromRaw in the encoding
/// the format's letters or the kernel version (uname) point to.
class PrevStateDecoder {
 public:
  void configure(std::string_view printFmt, std::string_view uname);
  core::TaskState decode(uint64_t raw) const {
    if (raw >= m_decoded.size()) return decodeSlow(raw);
    if (const uint8_t known = m_decoded[raw].load(std::memory_order_relaxed)) return core::TaskState(known - 1);
    const core::TaskState state = decodeSlow(raw);
    m_decoded[raw].store(static_cast<uint8_t>(static_cast<uint8_t>(state) + 1), std::memory_order_relaxed);
    return state;
  }
  /// What `trace-cmd report`/tracefs print for `raw` ("S", "D|K", "R+", ...);
  /// empty when the print fmt could not be evaluated.
  std::string letters(uint64_t raw) const;
  bool usesPrintFmt() const { return m_parsed; }
  core::PrevStateEncoding encoding() const { return m_encoding; }

 private:
  core::TaskState decodeSlow(uint64_t raw) const;
  bool m_parsed = false;
  uint64_t m_mask = ~uint64_t{0};
  uint64_t m_plusBit = 0;
  std::string m_delim = "|";
  std::vector<std::pair<uint64_t, std::string>> m_flags;
  core::PrevStateEncoding m_encoding = core::PrevStateEncoding::Report414;
  // The state of each small value, + 1, once decoded; 0 before. Filled as the
  // values show up, by whichever decoder thread meets one first (both write
  // the same): a trace shows a handful, and evaluating all 8192 up front cost
  // more than the whole import of a small trace.
  mutable std::array<std::atomic<uint8_t>, 8192> m_decoded{};
};

struct FieldRef {
  uint16_t offset = 0;
  uint8_t size = 0;  ///< 0: the format lacks the field
  bool isSigned = false;
};

struct EventDecoder {
  EventOp kind = EventOp::Other;
  uint32_t minLength = 0;  ///< hot fields lie below this; shorter records are malformed
  FieldRef tid, otherTid, prio, otherPrio, cpuA, cpuB, prevState, filename;
  FieldRef comm, otherComm;  ///< char arrays
  core::PowerEvent power = core::PowerEvent::None;
  std::vector<FormatField> fields;  ///< Power: the format's fields, read by name off the hot path
};

class EventDecoderTable;
/// The fields of one Power record, by name, for core::decodePowerEvent.
class RecordFields final : public core::EventFields {
 public:
  RecordFields(const EventDecoderTable& table, const EventDecoder& decoder, std::string_view record)
      : m_table(table), m_decoder(decoder), m_record(record) {}
  std::optional<int64_t> number(std::string_view field) const override;
  std::optional<std::string_view> text(std::string_view field) const override;

 private:
  const FormatField* find(std::string_view field) const;
  const EventDecoderTable& m_table;
  const EventDecoder& m_decoder;
  std::string_view m_record;
};

struct DecodeConfig {
  bool swap = false;
  bool haveTsc2Nsec = false;
  uint32_t tscMult = 0;
  uint32_t tscShift = 0;
  int64_t tsOffset = 0;
};

class EventDecoderTable {
 public:
  /// Builds the per-id decoders from the file's formats. Fails (returns false,
  /// with a message) only when no format declares the common fields.
  bool build(const std::vector<EventFormatText>& formats, std::string_view uname, const DecodeConfig& config,
             std::string& error);

  /// Name of event `id` ("sched_switch"), or empty for ids no format declares.
  std::string_view name(uint16_t id) const { return id < m_names.size() ? std::string_view(m_names[id]) : ""; }
  size_t idLimit() const { return m_names.size(); }
  const PrevStateDecoder& prevStates() const { return m_prevStates; }
  const EventDecoder* decoder(uint16_t id) const {
    return id < m_index.size() && m_index[id] >= 0 ? &m_decoders[static_cast<size_t>(m_index[id])] : nullptr;
  }
  int64_t convertTs(uint64_t raw) const;
  bool swapped() const { return m_config.swap; }

  /// Decodes one record into `out` (a reused slot: every field the event's op
  /// reads is written). `strings` receives exec filenames and power records;
  /// `out` keeps their offset and length in aux/cpuB until the block points at them.
  void decode(const uint8_t* rec, uint32_t length, uint64_t rawTs, DecodedEvent& out, std::string& strings) const;

 private:
  int64_t readInt(const uint8_t* rec, FieldRef f) const;
  uint8_t copyComm(const uint8_t* rec, FieldRef f, char* out) const;

  DecodeConfig m_config;
  FieldRef m_type, m_flags, m_pid;
  uint32_t m_commonLength = 0;
  std::vector<std::string> m_names;  // by id
  // By id: index into m_decoders, or one of these (one lookup per record).
  static constexpr int16_t kNoDecoder = -1;  // a known event without a SchedBuilder method
  static constexpr int16_t kNoFormat = -2;   // no format declares this id
  std::vector<int16_t> m_index;
  std::vector<EventDecoder> m_decoders;
  PrevStateDecoder m_prevStates;
};

}  // namespace importers::tracedat
