// The "perf-script" importer: the text `perf script` prints for sched
// tracepoints (default fields, optionally pid/tid and --ns), line by line into
// the SchedBuilder through a core::EventSorter: perf script prints in time
// order only what perf's own sorting put in order (a perf.data without
// FINISHED_ROUND records, or read while recording, comes out with CPUs
// interleaved). Registered by importers/builtin.cpp.
#include <array>
#include <vector>

#include "core/decoded_event.h"
#include "core/event_sorter.h"
#include "core/mapped_file.h"
#include "core/power_events.h"
#include "importers/importer.h"
#include "importers/perfscript/perf_script_tokenizer.h"
#include "importers/registered.h"

namespace importers {

namespace {

using perfscript::intValue;
using perfscript::LineKind;
using perfscript::splitFields;
using perfscript::ScriptLine;
using perfscript::valueBetween;

constexpr uint64_t kProgressEvery = 1 << 16;
// So many unreadable lines before the first sample: this is not perf script text.
constexpr uint64_t kMaxLeadingMalformed = 1000;

enum class Kind : uint8_t { Other, Switch, Wakeup, Waking, WakeupNew, Migrate, Fork, Exit, Exec };

struct EventKind {
  std::string name;  // system-less
  uint32_t type = 0;
  Kind kind = Kind::Other;
  core::PowerEvent power = core::PowerEvent::None;  // power:* and the PELT tracepoints
};

Kind kindOf(std::string_view system, std::string_view event) {
  if (system != "sched") return Kind::Other;
  static constexpr std::pair<std::string_view, Kind> kKinds[] = {
      {"sched_switch", Kind::Switch},         {"sched_wakeup", Kind::Wakeup},
      {"sched_waking", Kind::Waking},         {"sched_wakeup_new", Kind::WakeupNew},
      {"sched_migrate_task", Kind::Migrate},  {"sched_process_fork", Kind::Fork},
      {"sched_process_exit", Kind::Exit},     {"sched_process_exec", Kind::Exec}};
  for (const auto& [name, kind] : kKinds)
    if (name == event) return kind;
  return Kind::Other;
}

int32_t toI32(std::optional<int64_t> v, int32_t fallback) { return v ? static_cast<int32_t>(*v) : fallback; }

class ScriptReader {
 public:
  ScriptReader(const std::string& path, core::SchedBuilder& b, const ImportOptions& o)
      : m_path(path), m_b(b), m_opt(o), m_sorter(b, core::EventSorter::Position::Line) {}

  core::Status run() {
    core::Status status = readLines();
    m_sorter.finish();  // also after an error: what was read is kept
    return status;
  }

 private:
  core::Status readLines() {
    core::MappedFile file;
    if (auto st = file.open(m_path); !st) return st;
    const std::string_view text = file.text();
    uint64_t lineNo = 0;
    size_t pos = 0;
    uint64_t untilProgress = kProgressEvery;
    uint64_t firstBadLine = 0;
    while (pos < text.size()) {
      const size_t nl = text.find('\n', pos);
      const bool lastUnterminated = nl == std::string_view::npos;
      const std::string_view line = text.substr(pos, lastUnterminated ? std::string_view::npos : nl - pos);
      pos = lastUnterminated ? text.size() : nl + 1;
      ++lineNo;
      if (--untilProgress == 0) {
        untilProgress = kProgressEvery;
        file.releaseBefore(pos);
        if (m_opt.stop.stop_requested()) return errorAt(lineNo, "import cancelled");
        if (m_opt.progress) m_opt.progress(static_cast<double>(pos) / static_cast<double>(text.size()));
      }
      if (line.find('\0') != std::string_view::npos) return errorAt(lineNo, "binary data (NUL byte) in a text file");
      ScriptLine sl;
      switch (perfscript::tokenizeLine(line, sl)) {
        case LineKind::Skip: continue;
        case LineKind::Malformed:
          if (lastUnterminated) return errorAt(lineNo, "the file ends inside a line (truncated?)");
          if (!firstBadLine) firstBadLine = lineNo;
          if (m_samples == 0 && ++m_leadingBad >= kMaxLeadingMalformed)
            return errorAt(firstBadLine, "no perf script sample line found in the first " +
                                             std::to_string(kMaxLeadingMalformed) + " unreadable lines");
          diag(core::DiagCode::malformed_record, lineNo, "not a perf script sample line; skipped");
          continue;
        case LineKind::Sample: break;
      }
      if (!handle(sl, lineNo) && lastUnterminated) return errorAt(lineNo, "the file ends inside a line (truncated?)");
    }
    if (m_samples == 0)
      return errorAt(firstBadLine ? firstBadLine : 1, "no perf script sample lines (expected \"comm tid [cpu] secs.usecs: sched:sched_switch: ...\")");
    return core::Status::ok();
  }

  core::Error errorAt(uint64_t line, const std::string& what) const {
    return core::Error(m_path + ": line " + std::to_string(line) + ": " + what);
  }
  void diag(core::DiagCode code, uint64_t line, std::string what) {
    if (m_b.diagnostics().count(code) >= core::Diagnostics::kRecordsKeptPerCode) {
      m_b.diagnostics().add(code);
      return;
    }
    m_b.setLine(line);
    m_b.recordDiagnostic(code, std::move(what));
  }

  const EventKind& kindFor(const ScriptLine& sl) {
    // A handful of distinct events: a linear scan beats hashing the name.
    if (m_last && m_last->name == sl.event) return *m_last;
    for (auto& k : m_kinds)
      if (k.name == sl.event) return *(m_last = &k);
    EventKind k;
    k.name = std::string(sl.event);
    k.type = m_b.eventType(k.name);
    k.kind = kindOf(sl.system, sl.event);
    if (k.kind == Kind::Other) {
      k.power = core::powerEventOf(sl.event);
      // ftrace:print is no perf tracepoint (perf cannot enable the ftrace
      // system): trace_marker text never reaches perf script.
      if (k.power == core::PowerEvent::Print) k.power = core::PowerEvent::None;
    }
    m_kinds.push_back(std::move(k));
    m_last = nullptr;
    return m_kinds.back();
  }

  // Returns false when a sched event's fields could not be read.
  bool handle(const ScriptLine& sl, uint64_t lineNo) {
    const EventKind& k = kindFor(sl);
    m_b.countEvent(k.type);
    ++m_samples;
    if (sl.cpu < 0) {
      // Without a cpu column the per-CPU schedule cannot be rebuilt; count it once per line.
      diag(core::DiagCode::cpu_out_of_range, lineNo, "no [cpu] column; event dropped");
      return true;
    }
    core::DecodedEvent e;
    e.ts = sl.ts;
    e.position = lineNo;
    e.cpu = sl.cpu;
    e.ctxTid = sl.tid;
    if (k.power != core::PowerEvent::None) return pushPower(k, sl.args, e, lineNo);
    if (!decode(k, sl.args, e)) return bad(k, lineNo);
    m_sorter.push(e);
    return true;
  }

  bool pushPower(const EventKind& k, std::string_view args, const core::DecodedEvent& base, uint64_t lineNo) {
    std::array<core::DecodedEvent, core::kMaxPowerEventsPerRecord> out;
    const auto n = core::decodePowerEvent(k.power, core::TextFields(args), base, out);
    if (!n) return bad(k, lineNo);
    if (*n == 0) m_sorter.push(base);
    for (size_t i = 0; i < *n; ++i) m_sorter.push(out[i]);
    return true;
  }

  bool decode(const EventKind& k, std::string_view a, core::DecodedEvent& e) {
    std::string_view v[7];
    switch (k.kind) {
      case Kind::Switch: {
        e.op = core::EventOp::Switch;
        if (splitFields(a, {"prev_comm=", " prev_pid=", " prev_prio=", " prev_state=", " next_comm=", " next_pid=", " next_prio="}, v)) {
          // prev_state's value runs up to " next_comm=": "S ==>".
          std::string_view state = v[3];
          if (state.size() >= 4 && state.substr(state.size() - 4) == " ==>") state.remove_suffix(4);
          const auto prevTid = perfscript::toInt(v[1]);
          const auto nextTid = perfscript::toInt(v[5]);
          if (prevTid && nextTid) {
            e.setText(0, v[0]);
            e.tid = static_cast<int32_t>(*prevTid);
            e.prio = toI32(perfscript::toInt(v[2]), core::kPrioUnknown);
            e.state = perfscript::decodePrevState(state);
            e.setText(1, v[4]);
            e.otherTid = static_cast<int32_t>(*nextTid);
            e.otherPrio = toI32(perfscript::toInt(v[6]), core::kPrioUnknown);
            return true;
          }
        }
        const auto prevComm = valueBetween(a, "prev_comm", "prev_pid");
        const auto prevTid = intValue(a, "prev_pid");
        const auto prevState = valueBetween(a, "prev_state", {});
        const auto nextComm = valueBetween(a, "next_comm", "next_pid");
        const auto nextTid = intValue(a, "next_pid");
        if (!prevComm || !prevTid || !prevState || !nextComm || !nextTid) return false;
        e.setText(0, *prevComm);
        e.tid = static_cast<int32_t>(*prevTid);
        e.prio = toI32(intValue(a, "prev_prio"), core::kPrioUnknown);
        e.state = perfscript::decodePrevState(*prevState);
        e.setText(1, *nextComm);
        e.otherTid = static_cast<int32_t>(*nextTid);
        e.otherPrio = toI32(intValue(a, "next_prio"), core::kPrioUnknown);
        return true;
      }
      case Kind::Wakeup:
      case Kind::Waking:
      case Kind::WakeupNew: {
        e.op = k.kind == Kind::Waking   ? core::EventOp::Waking
               : k.kind == Kind::Wakeup ? core::EventOp::Wakeup
                                        : core::EventOp::WakeupNew;
        if (splitFields(a, {"comm=", " pid=", " prio=", " target_cpu="}, v)) {
          if (const auto tid = perfscript::toInt(v[1])) {
            e.tid = static_cast<int32_t>(*tid);
            e.setText(0, v[0]);
            e.prio = toI32(perfscript::toInt(v[2]), core::kPrioUnknown);
            e.cpuA = toI32(perfscript::toInt(v[3]), -1);
            return true;
          }
        }
        const auto tid = intValue(a, "pid");
        if (!tid) return false;
        e.tid = static_cast<int32_t>(*tid);
        e.setText(0, valueBetween(a, "comm", "pid").value_or(std::string_view{}));
        e.prio = toI32(intValue(a, "prio"), core::kPrioUnknown);
        e.cpuA = toI32(intValue(a, "target_cpu"), -1);
        return true;
      }
      case Kind::Migrate: {
        e.op = core::EventOp::Migrate;
        if (splitFields(a, {"comm=", " pid=", " prio=", " orig_cpu=", " dest_cpu="}, v)) {
          const auto tid = perfscript::toInt(v[1]);
          const auto dest = perfscript::toInt(v[4]);
          if (tid && dest) {
            e.tid = static_cast<int32_t>(*tid);
            e.setText(0, v[0]);
            e.prio = toI32(perfscript::toInt(v[2]), core::kPrioUnknown);
            e.cpuA = toI32(perfscript::toInt(v[3]), -1);
            e.cpuB = static_cast<int32_t>(*dest);
            return true;
          }
        }
        const auto tid = intValue(a, "pid");
        const auto dest = intValue(a, "dest_cpu");
        if (!tid || !dest) return false;
        e.tid = static_cast<int32_t>(*tid);
        e.setText(0, valueBetween(a, "comm", "pid").value_or(std::string_view{}));
        e.prio = toI32(intValue(a, "prio"), core::kPrioUnknown);
        e.cpuA = toI32(intValue(a, "orig_cpu"), -1);
        e.cpuB = static_cast<int32_t>(*dest);
        return true;
      }
      case Kind::Fork: {
        const auto parent = intValue(a, "pid");
        const auto child = intValue(a, "child_pid");
        if (!parent || !child) return false;
        e.op = core::EventOp::Fork;
        e.tid = static_cast<int32_t>(*parent);
        e.setText(0, valueBetween(a, "comm", "pid").value_or(std::string_view{}));
        e.otherTid = static_cast<int32_t>(*child);
        e.setText(1, valueBetween(a, "child_comm", "child_pid").value_or(std::string_view{}));
        return true;
      }
      case Kind::Exit: {
        const auto tid = intValue(a, "pid");
        if (!tid) return false;
        e.op = core::EventOp::Exit;
        e.tid = static_cast<int32_t>(*tid);
        e.setText(0, valueBetween(a, "comm", "pid").value_or(std::string_view{}));
        e.prio = toI32(intValue(a, "prio"), core::kPrioUnknown);
        return true;
      }
      case Kind::Exec: {
        const auto tid = intValue(a, "pid");
        const auto filename = valueBetween(a, "filename", "pid");
        if (!tid || !filename) return false;
        e.op = core::EventOp::Exec;
        e.tid = static_cast<int32_t>(*tid);
        e.otherTid = toI32(intValue(a, "old_pid"), static_cast<int32_t>(*tid));
        e.setText(0, *filename);
        return true;
      }
      case Kind::Other: e.op = core::EventOp::Other; return true;
    }
    return true;
  }

  bool bad(const EventKind& k, uint64_t lineNo) {
    diag(core::DiagCode::malformed_record, lineNo, k.name + " fields not understood; event skipped");
    return false;
  }

  std::string m_path;
  core::SchedBuilder& m_b;
  const ImportOptions& m_opt;
  std::vector<EventKind> m_kinds;
  EventKind* m_last = nullptr;
  core::EventSorter m_sorter;
  uint64_t m_samples = 0;
  uint64_t m_leadingBad = 0;
};

class PerfScriptImporter final : public Importer {
 public:
  std::string_view name() const override { return "perf-script"; }

  int probe(const ProbeInput& input) const override {
    if (input.isDirectory) return 0;
    std::string_view text = input.headText();
    // A full probe buffer ends mid-line: leave the partial last line out.
    if (text.size() >= 64 * 1024)
      if (const size_t nl = text.rfind('\n'); nl != std::string_view::npos) text = text.substr(0, nl);
    int samples = 0;
    int tracepoints = 0;
    int malformed = 0;
    size_t pos = 0;
    for (int lines = 0; pos < text.size() && lines < 64; ++lines) {
      const size_t nl = text.find('\n', pos);
      const std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
      pos = nl == std::string_view::npos ? text.size() : nl + 1;
      if (line.find('\0') != std::string_view::npos) break;  // binary from here: judge the text before it
      ScriptLine sl;
      switch (perfscript::tokenizeLine(line, sl)) {
        case LineKind::Sample:
          ++samples;
          tracepoints += !sl.system.empty();
          break;
        case LineKind::Malformed: ++malformed; break;
        case LineKind::Skip: break;
      }
    }
    if (tracepoints == 0 || samples < malformed) return 0;
    return samples >= 3 ? 90 : 60;
  }

  core::Status read(const std::string& path, core::SchedBuilder& builder, const ImportOptions& options) override {
    ScriptReader reader(path, builder, options);
    return reader.run();
  }
};

}  // namespace

std::unique_ptr<Importer> makePerfScriptImporter() { return std::make_unique<PerfScriptImporter>(); }

}  // namespace importers
