// Streams an ftrace text trace into a core::SchedBuilder: the tracefs trace and
// trace_pipe layouts, trace-cmd report output, Android atrace text and the
// legacy systrace HTML/JS string that wraps it. Used by the "ftrace-text"
// importer (ftrace_importer.cpp); tests drive it through importers::importTrace.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/decoded_event.h"
#include "core/event_sorter.h"
#include "core/power_events.h"
#include "core/result.h"
#include "core/sched_builder.h"
#include "core/task_state.h"
#include "core/tid_table.h"
#include "importers/ftrace/ftrace_line_tokenizer.h"
#include "importers/importer.h"

namespace importers::ftrace {

/// Confidence 0..100 that `head` (the first bytes of a file) is ftrace text.
int probeFtraceText(std::string_view head);

/// One read of one file. Lines that do not parse are counted as malformed_record
/// (with their line number) and skipped; a file in which nothing parses is an
/// error "FILE: line N: not an ftrace text trace". Events go to the builder
/// through a core::EventSorter: CPUs interleaved out of order are put back in
/// time order, and counted. With a core to spare (Threading::Auto) the lines
/// are read, parsed and sorted on a worker thread while this one builds the
/// model: parsing is half of a large import, building most of the rest.
class FtraceTextReader {
 public:
  FtraceTextReader(core::SchedBuilder& builder, const ImportOptions& options, Threading threading = Threading::Auto);
  /// Reads the whole file. Fails (keeping what was fed) on I/O errors, on
  /// cancel, and when the file holds no ftrace text at all.
  core::Status read(const std::string& path);

  uint64_t lineCount() const { return m_lineNo; }
  uint64_t eventCount() const { return m_events; }
  uint64_t malformedCount() const { return m_malformed; }

 private:
  // Marker: tracefs prints a trace_marker write as "tracing_mark_write: TEXT";
  // Print: trace-cmd report as "print: tracing_mark_write: TEXT".
  enum class Kind : uint8_t {
    Other, Switch, Waking, Wakeup, WakeupNew, Migrate, Fork, Exec, Exit, Free, Rename, Marker, Print, Power
  };
  struct TypeInfo {
    uint16_t countKey = core::DecodedEvent::kNoCount;  // the feed's key for the event's name
    Kind kind = Kind::Other;
    core::PowerEvent power = core::PowerEvent::None;
  };
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };

  core::Status readLines(const std::string& path);
  void processLine(std::string_view line, bool lastWithoutNewline);
  void processHeaderComment(std::string_view line);
  bool processOtherText(std::string_view line);
  void handleEvent(const LineFields& f);
  /// false when the payload of a sched event did not parse.
  bool decodeSchedEvent(Kind kind, const LineFields& f, core::DecodedEvent& e);
  /// Power and PELT events; false when their fields did not read.
  bool pushPowerEvent(core::PowerEvent kind, const LineFields& f, const core::DecodedEvent& base);
  const TypeInfo& typeFor(const LineFields& f);
  core::TaskState decodeState(const SwitchFields& sw);
  void noteHeaderCpus(int cpus);
  void flushLoss(int32_t cpu, int64_t ts);
  void noteMalformed(std::string_view line, bool truncated);
  void noteUnsupported(const LineFields& f);
  /// Direct: the caller's callback; threaded: handed over with the events.
  void progress(double fraction) {
    if (m_feed.threaded())
      m_feed.progress(fraction);
    else if (m_options.progress)
      m_options.progress(fraction);
  }

  // While lines are read the builder is touched only through the feed (which
  // applies what a worker hands over on the importing thread); read() sets
  // the header's CPU count after the last line.
  core::SchedBuilder& m_builder;
  const ImportOptions& m_options;
  Threading m_threading;
  core::EventFeed m_feed;
  core::EventSorter m_sorter;
  std::string m_path;

  // What the file turned out to be, decided from its first lines.
  bool m_sawFirstLine = false;
  bool m_html = false;        // systrace HTML: only the lines that parse are the trace
  bool m_jsEscaped = false;   // lines end in "\n\" (text inside a JavaScript string)
  bool m_inUnterminatedLine = false;  // the last line, which has no '\n'
  bool m_haveHeader = false;  // "# tracer:" or trace-cmd's "version = N"
  int m_headerCpus = 0;       // "#P:N" or "cpus=N"

  // Raw prev_state bits mean different things before and after Linux 4.14; the
  // encoding is guessed once over all values of the file (a pre-scan).
  bool m_rawEncodingKnown = false;
  core::PrevStateEncoding m_rawEncoding = core::PrevStateEncoding::Report414;

  uint64_t m_lineNo = 0;
  uint64_t m_events = 0;
  uint64_t m_malformed = 0;
  uint64_t m_firstBadLine = 0;
  uint64_t m_candidates = 0;  // non-comment lines seen, to give up early on a file that is not ftrace
  int64_t m_lastTs = 0;

  std::unordered_map<std::string, TypeInfo, NameHash, std::equal_to<>> m_types;
  struct TypeCacheSlot {
    std::string name;
    const TypeInfo* info = nullptr;
  };
  std::array<TypeCacheSlot, 32> m_typeCache;
  std::string m_nameScratch;
  std::vector<int64_t> m_pendingLoss;  // per CPU: events lost before its next event; -2 none, -1 unknown count
  bool m_anyPendingLoss = false;
  core::TidTable<int32_t> m_knownTgid;  // tgid already told to the builder
};

}  // namespace importers::ftrace
