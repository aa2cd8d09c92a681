#include "importers/ftrace/ftrace_text_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>

namespace importers::ftrace {

namespace {

constexpr size_t kBufferBytes = 8u << 20;  // also the longest line we accept
constexpr uint64_t kGiveUpLines = 1000;    // non-comment lines without one event: not ftrace text
constexpr int64_t kNoLoss = -2;

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string_view trimLeft(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

// Text inside a JavaScript string literal (legacy systrace): each line ends in
// "\n\" and the last one in "\n";.
std::string_view stripJsEscape(std::string_view line) {
  if (line.size() >= 3 && line.substr(line.size() - 3) == "\\n\\") return line.substr(0, line.size() - 3);
  if (line.size() >= 4 && line.substr(line.size() - 4) == "\\n\";") return line.substr(0, line.size() - 4);
  return line;
}

bool looksLikeHtml(std::string_view head) {
  head = trimLeft(head);
  if (startsWith(head, "\xEF\xBB\xBF")) head.remove_prefix(3);
  auto lower = [](std::string_view s, size_t n) {
    std::string out(s.substr(0, n));
    for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    return out;
  };
  return lower(head, 14) == "<!doctype html" || lower(head, 5) == "<html";
}

// Header lines trace-cmd report prints before the events.
bool isTraceCmdHeader(std::string_view line, int* cpus) {
  int value = 0;
  if (startsWith(line, "version = ")) return true;
  if (startsWith(line, "cpus=")) {
    auto [p, ec] = std::from_chars(line.data() + 5, line.data() + line.size(), value);
    if (ec != std::errc()) return false;
    if (cpus) *cpus = value;
    return true;
  }
  // "CPU 3 is empty", "cpu 1 buffer started" and the like.
  if (startsWith(line, "CPU ") && (line.find(" is empty") != std::string_view::npos)) return true;
  return false;
}

// OR of every numeric prev_state in the file, read apart from the main pass so
// that the encoding is known before the first switch is decoded.
uint64_t orOfRawPrevStates(const std::string& path) {
  static constexpr std::string_view kKey = "prev_state=";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  constexpr size_t kScanBytes = 1u << 20;
  std::unique_ptr<char[]> buf(new char[kScanBytes]);
  uint64_t orBits = 0;
  size_t keep = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buf.get() + keep, kScanBytes - keep);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    const size_t filled = keep + static_cast<size_t>(n);
    const std::string_view text(buf.get(), filled);
    size_t pos = 0;
    for (;;) {
      const void* hit = memmem(text.data() + pos, text.size() - pos, kKey.data(), kKey.size());
      if (!hit) break;
      const size_t at = static_cast<size_t>(static_cast<const char*>(hit) - text.data()) + kKey.size();
      const size_t end = text.find_first_of(" \n", at);
      if (end == std::string_view::npos) {  // the value runs past this chunk: look again in the next
        pos = at - kKey.size();
        break;
      }
      if (auto raw = parseRawState(text.substr(at, end - at))) orBits |= *raw;
      pos = at;
    }
    keep = std::min<size_t>(filled - std::min(pos, filled), 64);
    std::memmove(buf.get(), buf.get() + filled - keep, keep);
  }
  ::close(fd);
  return orBits;
}

}  // namespace

int probeFtraceText(std::string_view head) {
  if (head.empty()) return 0;
  const bool html = looksLikeHtml(head);
  int events = 0;
  int bad = 0;
  bool tracerHeader = false;
  bool traceCmdHeader = false;
  bool jsEscaped = false;
  bool first = true;
  size_t pos = 0;
  LineFields f;
  while (pos < head.size()) {
    const size_t nl = head.find('\n', pos);
    if (nl == std::string_view::npos && pos > 0) break;  // the head cut this line: do not judge it
    std::string_view line = head.substr(pos, (nl == std::string_view::npos ? head.size() : nl) - pos);
    pos = nl == std::string_view::npos ? head.size() : nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (first && !trimLeft(line).empty()) {
      first = false;
      jsEscaped = line.size() >= 3 && line.substr(line.size() - 3) == "\\n\\";
    }
    if (jsEscaped || html) line = stripJsEscape(line);
    const std::string_view t = trimLeft(line);
    if (t.empty()) continue;
    if (t.front() == '#') {
      tracerHeader |= startsWith(t, "# tracer:");
      continue;
    }
    if (isTraceCmdHeader(t, nullptr)) {
      traceCmdHeader = true;
      continue;
    }
    if (tokenizeLine(line, f)) {
      ++events;
    } else if (!parseLostEventsLine(t)) {
      ++bad;
    }
  }
  if (html) {
    // Legacy systrace keeps the ftrace text deep inside the page, usually past the head.
    if (events > 0 || head.find("linuxPerfData") != std::string_view::npos ||
        head.find("# tracer:") != std::string_view::npos)
      return 70;
    return 0;
  }
  if (events > 0 && events >= 4 * bad) return (tracerHeader || traceCmdHeader) ? 95 : 90;
  if (events > 0) return 50;
  // A tracefs header with no event in the head: an empty trace, or a damaged one
  // whose read should say which line is wrong.
  if (tracerHeader) return 60;
  return 0;
}

FtraceTextReader::FtraceTextReader(core::SchedBuilder& builder, const ImportOptions& options, Threading threading)
    : m_builder(builder),
      m_options(options),
      m_threading(threading),
      m_feed(builder, core::EventFeed::Position::Line),
      m_sorter(m_feed) {}

core::Status FtraceTextReader::read(const std::string& path) {
  const auto readAll = [&] {
    core::Status status = readLines(path);
    m_sorter.finish();  // also after an error: what was read is kept
    return status;
  };
  struct stat st {};
  const uint64_t bytes = ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
  core::Status status = decodeOnAWorker(m_threading, bytes) ? m_feed.runThreaded(readAll, m_options.progress, path) : readAll();
  if (m_headerCpus > 0 && m_headerCpus <= core::SchedBuilder::kMaxCpus)
    m_builder.setTopology(core::Topology::flat(m_headerCpus, "trace header"));
  return status;
}

core::Status FtraceTextReader::readLines(const std::string& path) {
  m_path = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return core::Error(path + ": cannot open: " + std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return core::Error(path + ": cannot stat: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return core::Error(path + ": is a folder, not an ftrace text trace");
  const double totalBytes = S_ISREG(st.st_mode) && st.st_size > 0 ? static_cast<double>(st.st_size) : 0.0;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);

  // Small files get a buffer of their size (the fuzzer and the tests read
  // thousands); it grows up to kBufferBytes if a file grows while read.
  size_t capacity = kBufferBytes;
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) < kBufferBytes)
    capacity = std::max<size_t>(static_cast<size_t>(st.st_size) + 1, 4096);
  std::unique_ptr<char[]> buf(new char[capacity]);
  size_t filled = 0;
  uint64_t bytesRead = 0;
  bool skippingLongLine = false;
  bool eof = false;
  while (!eof) {
    if (m_options.stop.stop_requested()) return core::Error(path + ": import cancelled");
    ssize_t n = ::read(fd, buf.get() + filled, capacity - filled);
    if (n < 0) {
      if (errno == EINTR) continue;
      return core::Error(path + ": byte offset " + std::to_string(bytesRead) + ": read failed: " + std::strerror(errno));
    }
    eof = n == 0;
    bytesRead += static_cast<uint64_t>(n);
    filled += static_cast<size_t>(n);

    size_t start = 0;
    while (start < filled) {
      const void* hit = std::memchr(buf.get() + start, '\n', filled - start);
      if (!hit) break;
      const auto nl = static_cast<size_t>(static_cast<const char*>(hit) - buf.get());
      ++m_lineNo;
      if (skippingLongLine) {
        skippingLongLine = false;  // the rest of an over-long line, already reported
      } else {
        processLine(std::string_view(buf.get() + start, nl - start), false);
      }
      start = nl + 1;
    }
    if (eof) {
      if (start < filled && !skippingLongLine) {
        ++m_lineNo;
        processLine(std::string_view(buf.get() + start, filled - start), true);
      }
      break;
    }
    if (start == 0 && filled == capacity && capacity < kBufferBytes) {
      const size_t grown = std::min(capacity * 2, kBufferBytes);
      std::unique_ptr<char[]> bigger(new char[grown]);
      std::memcpy(bigger.get(), buf.get(), filled);
      buf = std::move(bigger);
      capacity = grown;
      continue;
    }
    if (start == 0 && filled == capacity) {
      // One line fills the whole buffer: report it once and skip to its end.
      if (!skippingLongLine) {
        ++m_malformed;
        if (m_firstBadLine == 0) m_firstBadLine = m_lineNo + 1;
        if (m_feed.keepsRecord(core::DiagCode::malformed_record))
          m_feed.diagnostic(core::DiagCode::malformed_record, m_lineNo + 1,
                            "line longer than " + std::to_string(kBufferBytes >> 20) + " MiB skipped");
      }
      skippingLongLine = true;
      filled = 0;
      continue;
    }
    std::memmove(buf.get(), buf.get() + start, filled - start);
    filled -= start;

    if (m_events == 0 && !m_html && m_candidates >= kGiveUpLines)
      return core::Error(path + ": line " + std::to_string(m_firstBadLine) + ": not an ftrace text trace");
    if (totalBytes > 0) progress(std::min(1.0, static_cast<double>(bytesRead) / totalBytes));
  }

  // Losses reported after the last event of their CPU end at the trace's end.
  if (m_anyPendingLoss)
    for (size_t cpu = 0; cpu < m_pendingLoss.size(); ++cpu) flushLoss(static_cast<int32_t>(cpu), m_lastTs);

  if (m_events == 0) {
    if (m_html) return core::Error(path + ": no ftrace text found in this HTML file (only legacy systrace HTML is read)");
    if (m_firstBadLine != 0)
      return core::Error(path + ": line " + std::to_string(m_firstBadLine) + ": not an ftrace text trace");
    if (!m_haveHeader) return core::Error(path + ": line 1: not an ftrace text trace (no event lines)");
  }
  progress(1.0);
  return core::Status::ok();
}

void FtraceTextReader::processLine(std::string_view line, bool lastWithoutNewline) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!m_sawFirstLine) {
    const std::string_view t = trimLeft(line);
    if (t.empty()) return;
    m_sawFirstLine = true;
    m_html = looksLikeHtml(t);
    m_jsEscaped = m_html || (line.size() >= 3 && line.substr(line.size() - 3) == "\\n\\");
    if (m_html) m_feed.metadata("container", "systrace html");
  }
  if (m_jsEscaped) line = stripJsEscape(line);

  LineFields f;
  if (tokenizeLine(line, f)) {
    m_inUnterminatedLine = lastWithoutNewline;
    handleEvent(f);
    m_inUnterminatedLine = false;
    return;
  }
  const std::string_view t = trimLeft(line);
  if (t.empty()) return;
  if (t.front() == '#') {
    processHeaderComment(t);
    return;
  }
  if (processOtherText(t)) return;
  if (m_html) return;  // page markup and script around the trace text
  ++m_candidates;
  noteMalformed(line, lastWithoutNewline);
}

void FtraceTextReader::processHeaderComment(std::string_view t) {
  if (startsWith(t, "# tracer:")) {
    m_haveHeader = true;
    std::string_view tracer = trimLeft(t.substr(9));
    while (!tracer.empty() && tracer.back() == ' ') tracer.remove_suffix(1);
    if (!tracer.empty()) m_feed.metadata("tracer", tracer);
    return;
  }
  if (const size_t p = t.find("#P:"); p != std::string_view::npos) {
    int cpus = 0;
    auto [ptr, ec] = std::from_chars(t.data() + p + 3, t.data() + t.size(), cpus);
    if (ec == std::errc() && cpus > 0) noteHeaderCpus(cpus);
  }
  if (const size_t p = t.find("entries-in-buffer/entries-written: "); p != std::string_view::npos) {
    // "A/B": B > A means the ring buffer overwrote its oldest B-A events.
    uint64_t inBuffer = 0;
    uint64_t written = 0;
    const char* s = t.data() + p + 35;
    const char* end = t.data() + t.size();
    auto r1 = std::from_chars(s, end, inBuffer);
    if (r1.ec == std::errc() && r1.ptr < end && *r1.ptr == '/') {
      auto r2 = std::from_chars(r1.ptr + 1, end, written);
      if (r2.ec == std::errc() && written > inBuffer)
        m_feed.metadata("overwritten_events", std::to_string(written - inBuffer));
    }
  }
  // Latency layout: "# nop latency trace v1.1.5 on 6.18.44-fc-v669".
  if (const size_t p = t.find(" latency trace v"); p != std::string_view::npos) {
    m_haveHeader = true;
    if (const size_t on = t.find(" on ", p); on != std::string_view::npos) {
      std::string_view rel = t.substr(on + 4);
      while (!rel.empty() && rel.back() == ' ') rel.remove_suffix(1);
      if (!rel.empty()) m_feed.metadata("osrelease", rel);
    }
  }
}

bool FtraceTextReader::processOtherText(std::string_view t) {
  if (auto lost = parseLostEventsLine(t)) {
    if (lost->cpu >= core::SchedBuilder::kMaxCpus) return true;
    const auto cpu = static_cast<size_t>(lost->cpu);
    if (cpu >= m_pendingLoss.size()) m_pendingLoss.resize(cpu + 1, kNoLoss);
    int64_t& pending = m_pendingLoss[cpu];
    if (pending == kNoLoss || lost->count < 0 || pending < 0)
      pending = pending == kNoLoss ? lost->count : -1;
    else
      pending += lost->count;
    m_anyPendingLoss = true;
    return true;
  }
  int cpus = 0;
  if (isTraceCmdHeader(t, &cpus)) {
    m_haveHeader = true;
    if (cpus > 0) noteHeaderCpus(cpus);
    if (startsWith(t, "version = ")) m_feed.metadata("trace_cmd_file_version", t.substr(10));
    return true;
  }
  return false;
}

void FtraceTextReader::noteHeaderCpus(int cpus) {
  m_headerCpus = cpus;
  // Before the first event, the count tells the sorter every CPU there is to wait for.
  if (m_events == 0) m_sorter.setCpuCount(cpus);
}

void FtraceTextReader::flushLoss(int32_t cpu, int64_t ts) {
  if (cpu < 0 || static_cast<size_t>(cpu) >= m_pendingLoss.size()) return;
  int64_t& pending = m_pendingLoss[static_cast<size_t>(cpu)];
  if (pending == kNoLoss) return;
  core::DecodedEvent e;
  e.op = core::EventOp::DataLoss;
  e.ts = ts;
  e.position = m_lineNo;
  e.cpu = cpu;
  e.aux = pending;
  m_sorter.push(e);
  pending = kNoLoss;
}

void FtraceTextReader::noteMalformed(std::string_view line, bool truncated) {
  ++m_malformed;
  if (m_firstBadLine == 0) m_firstBadLine = m_lineNo;
  const auto code = truncated ? core::DiagCode::truncated_input : core::DiagCode::malformed_record;
  if (!m_feed.keepsRecord(code)) return;
  // Quote a short, printable excerpt so the message stays one readable line.
  std::string excerpt;
  for (char c : line.substr(0, 60)) excerpt += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (line.size() > 60) excerpt += "...";
  m_feed.diagnostic(code, m_lineNo, (truncated ? "last line is truncated: \"" : "cannot parse line: \"") + excerpt + "\"");
}

void FtraceTextReader::noteUnsupported(const LineFields& f) {
  const std::string_view eventName = f.name;
  if (m_inUnterminatedLine) {
    // The file stops inside this line: its fields are cut, not unknown.
    if (m_feed.keepsRecord(core::DiagCode::truncated_input))
      m_feed.diagnostic(core::DiagCode::truncated_input, m_lineNo,
                        "last line is truncated inside the fields of " + std::string(eventName), f.cpu, f.ts);
    return;
  }
  if (!m_feed.keepsRecord(core::DiagCode::unsupported_event)) return;
  m_feed.diagnostic(core::DiagCode::unsupported_event, m_lineNo,
                    "cannot read the fields of " + std::string(eventName) + "; counted only", f.cpu, f.ts);
}

const FtraceTextReader::TypeInfo& FtraceTextReader::typeFor(const LineFields& f) {
  std::string_view name = f.name;
  switch (f.form) {
    case NameForm::Event:
      // Old kernels print trace_marker writes as "0:"; they are tracing_mark_write events.
      if (name == "0") name = "tracing_mark_write";
      break;
    case NameForm::SyscallEnter:
    case NameForm::SyscallExit:
      // The syscalls tracer prints "sys_read(...)" / "sys_read -> 0x0" for the
      // events sys_enter_read / sys_exit_read.
      m_nameScratch.assign(f.form == NameForm::SyscallEnter ? "sys_enter_" : "sys_exit_");
      m_nameScratch.append(startsWith(name, "sys_") ? name.substr(4) : name);
      name = m_nameScratch;
      break;
    case NameForm::Function: name = "function"; break;
  }
  // Most traces use a handful of names: a direct-mapped cache in front of the
  // hash map keeps the per-line cost to one short compare.
  TypeCacheSlot& slot = m_typeCache[(name.size() * 7 + static_cast<unsigned char>(name.back()) +
                                     static_cast<unsigned char>(name[name.size() / 2])) %
                                    m_typeCache.size()];
  if (slot.info && slot.name == name) return *slot.info;
  slot.name.assign(name);
  if (auto it = m_types.find(name); it != m_types.end()) {
    slot.info = &it->second;
    return it->second;
  }
  TypeInfo info;
  info.countKey = m_feed.eventType(name);
  static constexpr std::pair<std::string_view, Kind> kKinds[] = {
      {"sched_switch", Kind::Switch},       {"sched_waking", Kind::Waking},
      {"sched_wakeup", Kind::Wakeup},       {"sched_wakeup_new", Kind::WakeupNew},
      {"sched_migrate_task", Kind::Migrate}, {"sched_process_fork", Kind::Fork},
      {"sched_process_exec", Kind::Exec},   {"sched_process_exit", Kind::Exit},
      {"sched_process_free", Kind::Free},   {"task_rename", Kind::Rename},
      {"tracing_mark_write", Kind::Marker}, {"print", Kind::Print},
  };
  for (const auto& [n, k] : kKinds)
    if (n == name) info.kind = k;
  if (info.kind == Kind::Other) {
    info.power = core::powerEventOf(name);
    if (info.power != core::PowerEvent::None) info.kind = Kind::Power;
  }
  // Map nodes never move, so the cache may point into the map.
  slot.info = &m_types.emplace(std::string(name), info).first->second;
  return *slot.info;
}

core::TaskState FtraceTextReader::decodeState(const SwitchFields& sw) {
  switch (sw.stateForm) {
    case StateForm::Letters: return core::taskStateFromLetters(sw.prevState).value_or(core::TaskState::Unknown);
    case StateForm::Raw: {
      const auto raw = parseRawState(sw.prevState);
      if (!raw) return core::TaskState::Unknown;
      if (!m_rawEncodingKnown) {
        m_rawEncodingKnown = true;
        m_rawEncoding = core::guessPrevStateEncoding(orOfRawPrevStates(m_path) | *raw);
        m_feed.metadata("prev_state_encoding",
                        m_rawEncoding == core::PrevStateEncoding::Legacy ? "pre-4.14 raw bits" : "4.14+ report bits");
      }
      return core::taskStateFromRaw(*raw, m_rawEncoding).value_or(core::TaskState::Unknown);
    }
    case StateForm::PluginLetters: {
      // The plugin prints TASK_REPORT bits with a pre-4.14 letter table, so
      // "W" is really I (idle, 0x80) and "x" P (parked, 0x40) on 4.14+ kernels,
      // which are the kernels trace-cmd 3 meets. The preempt bit is not printed.
      const auto raw = pluginLettersToRaw(sw.prevState);
      if (!raw) return core::TaskState::Unknown;
      return core::taskStateFromRaw(*raw, core::PrevStateEncoding::Report414).value_or(core::TaskState::Unknown);
    }
  }
  return core::TaskState::Unknown;
}

bool FtraceTextReader::decodeSchedEvent(Kind kind, const LineFields& f, core::DecodedEvent& e) {
  switch (kind) {
    case Kind::Switch: {
      SwitchFields sw;
      if (!parseSwitch(f.payload, sw)) return false;
      e.op = core::EventOp::Switch;
      e.tid = sw.prevTid;
      e.setText(0, sw.prevComm);
      e.prio = sw.prevPrio;
      e.state = decodeState(sw);
      e.otherTid = sw.nextTid;
      e.setText(1, sw.nextComm);
      e.otherPrio = sw.nextPrio;
      return true;
    }
    case Kind::Waking:
    case Kind::Wakeup:
    case Kind::WakeupNew: {
      WakeFields w;
      if (!parseWake(f.payload, w)) return false;
      e.op = kind == Kind::Waking ? core::EventOp::Waking
             : kind == Kind::Wakeup ? core::EventOp::Wakeup
                                    : core::EventOp::WakeupNew;
      e.tid = w.tid;
      e.setText(0, w.comm);
      e.prio = w.prio;
      e.cpuA = w.targetCpu;
      return true;
    }
    case Kind::Migrate: {
      MigrateFields m;
      if (!parseMigrate(f.payload, m)) return false;
      e.op = core::EventOp::Migrate;
      e.tid = m.tid;
      e.setText(0, m.comm);
      e.prio = m.prio;
      e.cpuA = m.origCpu;
      e.cpuB = m.destCpu;
      return true;
    }
    case Kind::Fork: {
      ForkFields k;
      if (!parseFork(f.payload, k)) return false;
      e.op = core::EventOp::Fork;
      e.tid = k.parentTid;
      e.setText(0, k.parentComm);
      e.otherTid = k.childTid;
      e.setText(1, k.childComm);
      return true;
    }
    case Kind::Exec: {
      ExecFields x;
      if (!parseExec(f.payload, x)) return false;
      e.op = core::EventOp::Exec;
      e.tid = x.tid;
      e.otherTid = x.oldTid;
      e.setText(0, x.filename);
      return true;
    }
    case Kind::Exit: {
      ExitFields x;
      if (!parseExit(f.payload, x)) return false;
      e.op = core::EventOp::Exit;
      e.tid = x.tid;
      e.setText(0, x.comm);
      e.prio = x.prio;
      return true;
    }
    case Kind::Rename: {
      RenameFields r;
      if (!parseRename(f.payload, r)) return false;
      e.op = core::EventOp::Rename;
      e.tid = r.tid;
      e.setText(0, r.newComm);
      return true;
    }
    case Kind::Marker:
    case Kind::Print:
      e = core::userMarkEvent(e, f.tid, kind == Kind::Print ? core::printedMarkerText(f.payload) : f.payload);
      return true;
    case Kind::Power:
    case Kind::Free:
    case Kind::Other: e.op = core::EventOp::Other; return true;
  }
  return false;
}

bool FtraceTextReader::pushPowerEvent(core::PowerEvent kind, const LineFields& f, const core::DecodedEvent& base) {
  std::array<core::DecodedEvent, core::kMaxPowerEventsPerRecord> out;
  const auto n = core::decodePowerEvent(kind, core::TextFields(f.payload), base, out);
  if (!n) return false;
  if (*n == 0) m_sorter.push(base);  // not modelled (a task group's signal): its time still counts
  for (size_t i = 0; i < *n; ++i) {
    if (i > 0) out[i].countKey = core::DecodedEvent::kNoCount;  // one line, one event counted
    m_sorter.push(out[i]);
  }
  return true;
}

void FtraceTextReader::handleEvent(const LineFields& f) {
  ++m_events;
  const TypeInfo& info = typeFor(f);
  if (m_anyPendingLoss) flushLoss(f.cpu, f.ts);
  m_lastTs = std::max(m_lastTs, f.ts);

  if ((info.kind == Kind::Marker || info.kind == Kind::Print) && f.ts == 0 &&
      startsWith(info.kind == Kind::Print ? core::printedMarkerText(f.payload) : f.payload, "trace_event_clock_sync:")) {
    // systrace's clock-sync marker carries no trace time: counted, not placed on the timeline.
    m_feed.metadata("clock_sync", trimLeft(f.payload.substr(23)));
    core::DecodedEvent counted;
    counted.op = core::EventOp::CountOnly;
    counted.countKey = info.countKey;
    m_feed.event(counted);
    return;
  }
  core::DecodedEvent e;
  e.countKey = info.countKey;
  e.ts = f.ts;
  e.position = m_lineNo;
  e.cpu = f.cpu;
  e.ctxTid = f.tid;
  e.irq = f.irq;
  if (info.kind == Kind::Power) {
    if (!pushPowerEvent(info.power, f, e)) {
      noteUnsupported(f);
      m_sorter.push(e);
    }
  } else {
    if (!decodeSchedEvent(info.kind, f, e)) {
      // A sched event whose fields did not read: count it and keep its time.
      noteUnsupported(f);
      e.op = core::EventOp::Other;
    }
    m_sorter.push(e);
  }

  if (f.tgid > 0 && f.tid > 0 && m_knownTgid.holds(f.tid)) {
    if (int32_t& known = m_knownTgid.at(f.tid); known != f.tgid) {
      known = f.tgid;
      core::DecodedEvent identity;
      identity.op = core::EventOp::TaskInfo;
      identity.ts = f.ts;
      identity.position = m_lineNo;
      identity.cpu = f.cpu;
      identity.tid = f.tid;
      identity.aux = f.tgid;
      identity.setText(0, f.comm);
      m_sorter.push(identity);
    }
  }
}

}  // namespace importers::ftrace
