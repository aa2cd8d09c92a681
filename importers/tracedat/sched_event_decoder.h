// Turns ring-buffer records into the compact events the trace.dat importer merges
// across CPUs and feeds to core::SchedBuilder. Field offsets of the scheduler
// events are resolved once per event format (EventDecoderTable::build), so
// decoding a record is a few loads at fixed offsets. Called by the per-CPU stream
// workers (cpu_stream.cpp), concurrently: everything here is read-only after build.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "core/power_events.h"
#include "core/task_state.h"
#include "core/trace_model.h"
#include "importers/tracedat/event_format.h"

namespace importers::tracedat {

enum class EventKind : uint8_t {
  Other,  ///< any event without a SchedBuilder method: counted, marks its CPU's time
  Switch,
  Waking,
  Wakeup,
  WakeupNew,
  Migrate,
  Fork,
  Exec,
  Exit,
  Rename,
  Power,      ///< power, PELT and print events (core/power_events.h): the record's bytes go to the block's strings
  DataLoss,   ///< not a record: the page says events were lost before it
  Malformed,  ///< a record too short for its format, or of an unknown event id
};

inline constexpr size_t kCommLen = 16;  // TASK_COMM_LEN

/// One decoded record. The meaning of the generic fields depends on `kind`:
///   Switch:   tid/otherTid = prev/next, prio/otherPrio, comm/otherComm, prevState
///   Waking, Wakeup, WakeupNew: tid, comm, prio, cpuA = target_cpu
///   Migrate:  tid, comm, prio, cpuA = orig_cpu, cpuB = dest_cpu
///   Fork:     tid/comm = parent, otherTid/otherComm = child
///   Exec:     tid, otherTid = old_pid, cpuA/cpuB = filename offset/length in the block's strings
///   Exit:     tid, comm, prio
///   Rename:   tid, comm = new comm
///   Power:    cpuA/cpuB = the record's offset/length in the block's strings (RecordFields reads it)
///   DataLoss: aux = events lost (-1 unknown)
struct DecodedEvent {
  int64_t ts = 0;
  uint64_t fileOffset = 0;  ///< the record's byte offset, or its compressed chunk's
  int64_t aux = 0;
  int32_t ctxTid = -1;      ///< common_pid
  int32_t tid = 0;
  int32_t otherTid = 0;
  int32_t prio = core::kPrioUnknown;
  int32_t otherPrio = core::kPrioUnknown;
  int32_t cpuA = -1;
  int32_t cpuB = -1;
  uint16_t eventId = 0;
  EventKind kind = EventKind::Other;
  uint8_t irq = 0;  ///< core::IrqContext bits from common_flags
  core::TaskState prevState = core::TaskState::Unknown;
  uint8_t commLen = 0;  ///< strnlen of comm / otherComm, done on the worker
  uint8_t otherCommLen = 0;
  char comm[kCommLen];
  char otherComm[kCommLen];
};

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
    return raw < m_table.size() ? m_table[raw] : decodeSlow(raw);
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
  std::array<core::TaskState, 8192> m_table{};
};

struct FieldRef {
  uint16_t offset = 0;
  uint8_t size = 0;  ///< 0: the format lacks the field
  bool isSigned = false;
};

struct EventDecoder {
  EventKind kind = EventKind::Other;
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

  /// Decodes one record. `strings` receives exec filenames.
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
