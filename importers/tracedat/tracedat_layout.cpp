#include "importers/tracedat/tracedat_layout.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <string_view>

#include "importers/tracedat/tracedat_format.h"

namespace importers::tracedat {

// --- TraceFile ---

core::Result<std::unique_ptr<TraceFile>> TraceFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return core::Error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return core::Error(path + ": not a regular file");
  }
  return std::unique_ptr<TraceFile>(new TraceFile(fd, static_cast<uint64_t>(st.st_size), path));
}

TraceFile::~TraceFile() { ::close(m_fd); }

size_t TraceFile::readSome(uint64_t offset, void* dst, size_t len) const {
  if (offset >= m_size) return 0;
  len = static_cast<size_t>(std::min<uint64_t>(len, m_size - offset));
  size_t done = 0;
  while (done < len) {
    const ssize_t n = ::pread(m_fd, static_cast<char*>(dst) + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

bool TraceFile::read(uint64_t offset, void* dst, size_t len) const {
  if (offset > m_size || len > m_size - offset) return false;
  return readSome(offset, dst, len) == len;
}

namespace {

constexpr uint64_t kMaxFormatBytes = 1 << 20;         // one event format file
constexpr uint64_t kMaxCmdlinesBytes = 64ULL << 20;   // saved_cmdlines
constexpr uint64_t kMaxOptionBytes = 64ULL << 20;     // one option's payload
constexpr uint64_t kMaxSectionBytes = 128ULL << 20;   // one decompressed metadata section (formats: ~2 MB)
constexpr uint32_t kMaxCount = 1 << 20;               // formats, systems, events per system
constexpr int kMaxCpus = 8192;

std::string hexOffset(uint64_t offset) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "byte offset %llu (0x%llx)", static_cast<unsigned long long>(offset),
                static_cast<unsigned long long>(offset));
  return buf;
}

// Sequential reader over the file (through a window buffer) or over a
// decompressed section in memory. The first failure sticks: later reads return
// zeros, so parsing code checks ok() at its decision points only.
class Cursor {
 public:
  Cursor(const TraceFile& file, uint64_t pos, bool swap)
      : m_file(&file), m_pos(pos), m_end(file.size()), m_swap(swap) {}
  // `where` names the section for errors: its file offset is what gets reported.
  Cursor(std::string_view mem, uint64_t sectionOffset, bool swap, std::string where)
      : m_mem(mem), m_end(mem.size()), m_swap(swap), m_sectionOffset(sectionOffset), m_where(std::move(where)) {}

  bool ok() const { return m_error.empty(); }
  const std::string& error() const { return m_error; }
  uint64_t errorOffset() const { return m_errorOffset; }
  uint64_t pos() const { return m_pos; }
  uint64_t remaining() const { return m_pos < m_end ? m_end - m_pos : 0; }
  void setSwap(bool swap) { m_swap = swap; }

  void fail(const std::string& message) { failAt(m_pos, message); }
  void failAt(uint64_t pos, const std::string& message) {
    if (!ok()) return;
    if (m_file) {
      m_errorOffset = pos;
      m_error = message;
    } else {
      m_errorOffset = m_sectionOffset;
      char buf[80];
      std::snprintf(buf, sizeof buf, " (at byte %llu of the decompressed %s)", static_cast<unsigned long long>(pos),
                    m_where.c_str());
      m_error = message + buf;
    }
  }

  bool need(uint64_t n, const char* what) {
    if (!ok()) return false;
    if (n > remaining()) {
      fail(std::string("file ends inside ") + what);
      return false;
    }
    return true;
  }

  bool bytes(void* dst, size_t n, const char* what) {
    if (!need(n, what)) {
      std::memset(dst, 0, n);
      return false;
    }
    if (m_file) {
      if (!m_file->read(m_pos, dst, n)) {
        fail(std::string("cannot read ") + what);
        std::memset(dst, 0, n);
        return false;
      }
    } else {
      std::memcpy(dst, m_mem.data() + m_pos, n);
    }
    m_pos += n;
    return true;
  }
  uint8_t u8(const char* what) {
    uint8_t v = 0;
    bytes(&v, 1, what);
    return v;
  }
  uint16_t u16(const char* what) {
    uint16_t v = 0;
    bytes(&v, 2, what);
    return m_swap ? __builtin_bswap16(v) : v;
  }
  uint32_t u32(const char* what) {
    uint32_t v = 0;
    bytes(&v, 4, what);
    return m_swap ? __builtin_bswap32(v) : v;
  }
  uint64_t u64(const char* what) {
    uint64_t v = 0;
    bytes(&v, 8, what);
    return m_swap ? __builtin_bswap64(v) : v;
  }
  std::string blob(uint64_t n, uint64_t maxN, const char* what) {
    if (!ok()) return {};
    if (n > maxN) {
      fail(std::string(what) + " declares " + std::to_string(n) + " bytes, more than the " +
           std::to_string(maxN) + " it can hold");
      return {};
    }
    if (!need(n, what)) return {};
    std::string out(static_cast<size_t>(n), '\0');
    bytes(out.data(), out.size(), what);
    return out;
  }
  void skip(uint64_t n, const char* what) {
    if (need(n, what)) m_pos += n;
  }
  std::string cstring(size_t maxLen, const char* what) {
    std::string out;
    while (ok()) {
      const char c = static_cast<char>(u8(what));
      if (!ok()) break;
      if (c == '\0') return out;
      if (out.size() >= maxLen) {
        fail(std::string(what) + " is not terminated");
        break;
      }
      out.push_back(c);
    }
    return {};
  }
  bool expect(std::string_view literal, const char* what) {
    const uint64_t at = m_pos;
    std::string got(literal.size(), '\0');
    if (!bytes(got.data(), got.size(), what)) return false;
    if (got != literal) {
      failAt(at, std::string("expected ") + what);
      return false;
    }
    return true;
  }

 private:
  const TraceFile* m_file = nullptr;
  std::string_view m_mem;
  uint64_t m_pos = 0;
  uint64_t m_end = 0;
  bool m_swap = false;
  uint64_t m_sectionOffset = 0;
  std::string m_where;
  std::string m_error;
  uint64_t m_errorOffset = 0;
};

core::Error fileError(const TraceFile& file, uint64_t offset, const std::string& message) {
  return core::Error(file.path() + ": " + hexOffset(offset) + ": " + message);
}
core::Error cursorError(const TraceFile& file, const Cursor& c) { return fileError(file, c.errorOffset(), c.error()); }

bool hostBigEndian() {
  const uint16_t probe = 1;
  uint8_t first;
  std::memcpy(&first, &probe, 1);
  return first == 0;
}

// "[local] global counter" -> "local"
std::string selectedClock(std::string_view text) {
  const size_t open = text.find('[');
  const size_t close = text.find(']', open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || close == std::string_view::npos) return {};
  return std::string(text.substr(open + 1, close - open - 1));
}

std::string cString(const std::string& payload) { return payload.substr(0, payload.find('\0')); }

// "CPU: 1\nentries: 0\noverrun: 21204\ncommit overrun: 0\n..." -> {1, 21204}
std::optional<CpuStat> parseCpuStat(std::string_view text) {
  std::optional<int64_t> cpu;
  std::optional<int64_t> overrun;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    auto number = [&](std::string_view key, std::optional<int64_t>& out) {
      if (!line.starts_with(key)) return;
      std::string_view v = line.substr(key.size());
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      int64_t n = 0;
      const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec == std::errc() && n >= 0) out = n;
    };
    number("CPU:", cpu);
    number("overrun:", overrun);
  }
  if (!cpu || !overrun || *cpu >= kMaxCpus) return std::nullopt;
  return CpuStat{static_cast<int>(*cpu), *overrun};
}

class LayoutReader {
 public:
  explicit LayoutReader(const TraceFile& file) : m_file(file) {}
  core::Result<TraceLayout> read();

 private:
  // The blocks that v6 stores one after the other and v7 keeps in sections.
  bool readHeaderInfo(Cursor& c);
  bool readFtraceFormats(Cursor& c, uint64_t reportOffset);
  bool readEventFormats(Cursor& c, uint64_t reportOffset);
  bool readCmdlines(Cursor& c);
  // Options, v6 and v7 alike (v7 adds section offsets and the BUFFER layout).
  bool handleOption(uint16_t id, const std::string& payload, uint64_t payloadOffset);
  bool handleBufferOption(const std::string& payload, uint64_t payloadOffset);
  core::Status readV6(Cursor& c);
  core::Status readV7(Cursor& c);
  core::Status readSection(uint64_t offset, uint16_t expectedId, const char* name, std::string& out);
  core::Status recoverFlyrecordByScan();
  void checkSectionChain();

  const TraceFile& m_file;
  TraceLayout m_layout;
  bool m_haveTraceClockOption = false;
  std::string m_failure;  // set by option handlers
  uint64_t m_failureOffset = 0;
  // v7: where the metadata sections are.
  uint64_t m_sectionOffset[32] = {};
  struct Buffer {
    std::string name;
    std::string clock;
    std::vector<CpuDataRef> cpus;
    uint64_t sectionOffset = 0;
  };
  std::vector<Buffer> m_buffers;
};

bool LayoutReader::readHeaderInfo(Cursor& c) {
  if (!c.expect(std::string_view("header_page\0", 12), "the \"header_page\" marker")) return false;
  const uint64_t pageSize = c.u64("the header_page size");
  m_layout.headerPageText = c.blob(pageSize, kMaxFormatBytes, "header_page");
  if (!c.expect(std::string_view("header_event\0", 13), "the \"header_event\" marker")) return false;
  const uint64_t eventSize = c.u64("the header_event size");
  m_layout.headerEventText = c.blob(eventSize, kMaxFormatBytes, "header_event");
  return c.ok();
}

bool LayoutReader::readFtraceFormats(Cursor& c, uint64_t reportOffset) {
  const uint32_t count = c.u32("the ftrace format count");
  if (count > kMaxCount) {
    c.fail("implausible ftrace format count " + std::to_string(count));
    return false;
  }
  for (uint32_t i = 0; i < count && c.ok(); ++i) {
    const uint64_t at = c.pos();
    const uint64_t size = c.u64("an ftrace format size");
    std::string text = c.blob(size, kMaxFormatBytes, "an ftrace event format");
    if (c.ok()) m_layout.formats.push_back({"ftrace", std::move(text), reportOffset ? reportOffset : at});
  }
  return c.ok();
}

bool LayoutReader::readEventFormats(Cursor& c, uint64_t reportOffset) {
  const uint32_t systems = c.u32("the event system count");
  if (systems > kMaxCount) {
    c.fail("implausible event system count " + std::to_string(systems));
    return false;
  }
  for (uint32_t s = 0; s < systems && c.ok(); ++s) {
    const std::string system = c.cstring(256, "an event system name");
    const uint32_t count = c.u32("an event count");
    if (count > kMaxCount) {
      c.fail("implausible event count " + std::to_string(count) + " in system " + system);
      return false;
    }
    for (uint32_t i = 0; i < count && c.ok(); ++i) {
      const uint64_t at = c.pos();
      const uint64_t size = c.u64("an event format size");
      std::string text = c.blob(size, kMaxFormatBytes, "an event format");
      if (c.ok()) m_layout.formats.push_back({system, std::move(text), reportOffset ? reportOffset : at});
    }
  }
  return c.ok();
}

bool LayoutReader::readCmdlines(Cursor& c) {
  const uint64_t size = c.u64("the saved cmdlines size");
  m_layout.cmdlines = c.blob(size, kMaxCmdlinesBytes, "the saved cmdlines");
  return c.ok();
}

bool LayoutReader::handleBufferOption(const std::string& p, uint64_t at) {
  // offset8, name\0, then (v7) clock\0, [page size 4], cpu count 4, {cpu4, offset8, size8}...
  Cursor c(p, at, m_layout.swap, "BUFFER option");
  Buffer b;
  b.sectionOffset = c.u64("the BUFFER option");
  b.name = c.cstring(4096, "the buffer instance name");
  if (m_layout.version >= 7) {
    b.clock = c.cstring(256, "the buffer clock");
    if (!c.ok()) {
      m_failure = c.error();
      m_failureOffset = c.errorOffset();
      return false;
    }
    // trace-cmd 3.1 added the sub-buffer size before the CPU count; earlier v7
    // writers did not. Whichever reading makes the byte count add up is the one.
    const uint64_t rest = c.remaining();
    bool hasPageSize = false;
    if (rest >= 8) {
      uint32_t n = 0;
      std::memcpy(&n, p.data() + c.pos() + 4, 4);
      if (m_layout.swap) n = __builtin_bswap32(n);
      hasPageSize = uint64_t{n} * 20 == rest - 8;
    }
    if (hasPageSize) (void)c.u32("the buffer page size");
    const uint32_t cpus = c.u32("the buffer CPU count");
    if (cpus > kMaxCpus) c.fail("implausible CPU count " + std::to_string(cpus));
    for (uint32_t i = 0; i < cpus && c.ok(); ++i) {
      CpuDataRef ref;
      const uint32_t cpu = c.u32("a CPU number");
      ref.offset = c.u64("a CPU data offset");
      ref.size = c.u64("a CPU data size");
      if (cpu >= static_cast<uint32_t>(kMaxCpus)) c.fail("CPU number " + std::to_string(cpu) + " out of range");
      ref.cpu = static_cast<int>(cpu);
      b.cpus.push_back(ref);
    }
  }
  if (!c.ok()) {
    m_failure = c.error();
    m_failureOffset = c.errorOffset();
    return false;
  }
  m_buffers.push_back(std::move(b));
  return true;
}

bool LayoutReader::handleOption(uint16_t id, const std::string& p, uint64_t at) {
  switch (id) {
    case kOptBuffer:
      return handleBufferOption(p, at);
    case kOptTraceClock:
      m_haveTraceClockOption = true;
      if (m_layout.clock.empty()) m_layout.clock = selectedClock(p);
      return true;
    case kOptUname:
      m_layout.uname = cString(p);
      return true;
    case kOptVersion:
      m_layout.tracerVersion = cString(p);
      return true;
    case kOptOffset: {
      const std::string s = cString(p);
      int64_t v = 0;
      const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec == std::errc()) m_layout.tsOffset += v;
      return true;
    }
    case kOptCpuStat:
      // The per_cpu/cpuN/stats file after a "CPU: N" line.
      if (auto stat = parseCpuStat(cString(p))) m_layout.cpuStats.push_back(*stat);
      return true;
    case kOptCpuCount:
      if (p.size() >= 4) {
        uint32_t n;
        std::memcpy(&n, p.data(), 4);
        if (m_layout.swap) n = __builtin_bswap32(n);
        if (n > 0 && n <= static_cast<uint32_t>(kMaxCpus)) m_layout.cpuCount = static_cast<int>(n);
      }
      return true;
    case kOptTsc2Nsec:
      if (p.size() >= 16) {
        Cursor c(p, at, m_layout.swap, "TSC2NSEC option");
        m_layout.tscMult = c.u32("mult");
        m_layout.tscShift = c.u32("shift");
        m_layout.tscOffset = c.u64("offset");
        m_layout.haveTsc2Nsec = m_layout.tscMult != 0 && m_layout.tscShift <= 32;
      }
      return true;
    case kOptHeaderInfo:
    case kOptFtraceEvents:
    case kOptEventFormats:
    case kOptKallsyms:
    case kOptPrintk:
    case kOptCmdlines:
      if (p.size() >= 8) {
        uint64_t off;
        std::memcpy(&off, p.data(), 8);
        m_sectionOffset[id] = m_layout.swap ? __builtin_bswap64(off) : off;
      }
      return true;
    default:
      // DATE, HOOK, PROCMAPS, TRACEID, TIME_SHIFT, GUEST...: nothing a
      // schedule needs. (DATE maps to wall-clock time; the model keeps trace time.)
      return true;
  }
}

core::Status LayoutReader::readV6(Cursor& c) {
  if (!readHeaderInfo(c) || !readFtraceFormats(c, 0) || !readEventFormats(c, 0)) return cursorError(m_file, c);
  const uint32_t kallsyms = c.u32("the kallsyms size");
  c.skip(kallsyms, "kallsyms");
  const uint32_t printk = c.u32("the printk formats size");
  c.skip(printk, "the printk formats");
  if (!c.ok() || !readCmdlines(c)) return cursorError(m_file, c);
  const uint64_t cpusAt = c.pos();
  const uint32_t cpus = c.u32("the CPU count");
  if (!c.ok()) return cursorError(m_file, c);
  if (cpus == 0 || cpus > static_cast<uint32_t>(kMaxCpus))
    return fileError(m_file, cpusAt, "implausible CPU count " + std::to_string(cpus));
  m_layout.cpuCount = static_cast<int>(cpus);

  char tag[10];
  uint64_t tagAt = c.pos();
  c.bytes(tag, sizeof tag, "the options/flyrecord marker");
  if (c.ok() && std::string_view(tag, 7) == "options") {
    for (int n = 0;; ++n) {
      const uint64_t at = c.pos();
      const uint16_t id = c.u16("an option id");
      if (!c.ok() || id == kOptDone) break;
      const uint32_t size = c.u32("an option size");
      const std::string payload = c.blob(size, kMaxOptionBytes, "an option");
      if (!c.ok()) break;
      if (!handleOption(id, payload, at + 6)) return fileError(m_file, m_failureOffset, m_failure);
      if (n > 100000) {
        c.failAt(at, "endless option list");
        break;
      }
    }
    tagAt = c.pos();
    c.bytes(tag, sizeof tag, "the latency/flyrecord marker");
  }
  if (!c.ok()) return cursorError(m_file, c);
  if (std::string_view(tag, 7) == "latency")
    return fileError(m_file, tagAt, "latency-tracer file: it holds trace text, no per-CPU ring-buffer data");
  if (std::string_view(tag, 10) != std::string_view("flyrecord\0", 10))
    return fileError(m_file, tagAt, "expected the \"flyrecord\" marker");
  for (uint32_t cpu = 0; cpu < cpus; ++cpu) {
    CpuDataRef ref;
    ref.cpu = static_cast<int>(cpu);
    ref.offset = c.u64("the CPU data table");
    ref.size = c.u64("the CPU data table");
    m_layout.cpuData.push_back(ref);
  }
  if (!c.ok()) return cursorError(m_file, c);
  for (const auto& b : m_buffers) m_layout.otherBuffers.push_back(b.name);
  if (m_haveTraceClockOption) {
    // v6 writes the trace_clock file after the CPU table when the option says so.
    Cursor clock = c;
    const uint64_t size = clock.u64("the trace clock size");
    const std::string text = clock.blob(size, 4096, "the trace clock");
    if (clock.ok() && !selectedClock(text).empty()) m_layout.clock = selectedClock(text);
  }
  return core::Status::ok();
}

core::Status LayoutReader::readSection(uint64_t offset, uint16_t expectedId, const char* name, std::string& out) {
  if (offset >= m_file.size())
    return fileError(m_file, offset,
                     std::string("the ") + name + " section lies past the end of the file (" +
                         std::to_string(m_file.size()) + " bytes): the file is cut");
  Cursor c(m_file, offset, m_layout.swap);
  const uint16_t id = c.u16("a section header");
  const uint16_t flags = c.u16("a section header");
  (void)c.u32("a section header");
  const uint64_t size = c.u64("a section header");
  if (!c.ok()) return cursorError(m_file, c);
  if (id != expectedId)
    return fileError(m_file, offset,
                     std::string("expected the ") + name + " section (id " + std::to_string(expectedId) +
                         "), found id " + std::to_string(id));
  if (size > c.remaining())
    return fileError(m_file, offset,
                     std::string("the ") + name + " section declares " + std::to_string(size) +
                         " bytes but the file ends after " + std::to_string(c.remaining()));
  if (!(flags & kSectionCompressed)) {
    out = c.blob(size, size, name);
    return c.ok() ? core::Status::ok() : core::Status(cursorError(m_file, c));
  }
  const uint64_t at = c.pos();
  const uint32_t csize = c.u32("a compressed section header");
  const uint32_t usize = c.u32("a compressed section header");
  if (!c.ok()) return cursorError(m_file, c);
  if (csize > size - std::min<uint64_t>(size, 8) || usize > kMaxSectionBytes)
    return fileError(m_file, at,
                     std::string("the compressed ") + name + " section declares sizes " + std::to_string(csize) +
                         "/" + std::to_string(usize) + " that do not fit");
  const std::string packed = c.blob(csize, csize, name);
  if (!c.ok()) return cursorError(m_file, c);
  out.assign(usize, '\0');
  Decompressor d(m_layout.compression);
  if (!d.decompress(reinterpret_cast<const uint8_t*>(packed.data()), packed.size(),
                    reinterpret_cast<uint8_t*>(out.data()), out.size()))
    return fileError(m_file, at, std::string("the ") + name + " section does not decompress (" +
                                     m_layout.compressionName + ")");
  return core::Status::ok();
}

core::Status LayoutReader::readV7(Cursor& c) {
  const std::string algo = c.cstring(64, "the compression name");
  const std::string algoVersion = c.cstring(64, "the compression version");
  uint64_t next = c.u64("the offset of the first options section");
  if (!c.ok()) return cursorError(m_file, c);
  m_layout.dataStart = c.pos();  // the first section; the scan recovery starts here
  if (!compressionFromName(algo, m_layout.compression))
    return fileError(m_file, 0, "unsupported compression \"" + algo + "\" (supported: zstd, zlib, none)");
  m_layout.compressionName = algo == "none" ? "" : algo + (algoVersion.empty() ? "" : " " + algoVersion);

  // The options sections form a chain; each ends with DONE holding the next one's offset.
  std::set<uint64_t> seen;
  core::Status chainError = core::Status::ok();
  while (next != 0) {
    if (!seen.insert(next).second || seen.size() > 4096) {
      chainError = fileError(m_file, next, "options sections form a loop");
      break;
    }
    std::string payload;
    const uint64_t sectionAt = next;
    if (auto st = readSection(sectionAt, kOptDone, "options", payload); !st) {
      chainError = st;
      break;
    }
    Cursor o(payload, sectionAt, m_layout.swap, "options section");
    next = 0;
    while (o.ok() && o.remaining() > 0) {
      const uint16_t id = o.u16("an option id");
      const uint32_t size = o.u32("an option size");
      const std::string data = o.blob(size, o.remaining(), "an option");
      if (!o.ok()) break;
      if (id == kOptDone) {
        if (data.size() >= 8) {
          std::memcpy(&next, data.data(), 8);
          if (m_layout.swap) next = __builtin_bswap64(next);
        }
        break;
      }
      if (!handleOption(id, data, sectionAt)) {
        chainError = fileError(m_file, sectionAt, m_failure + " (in the options section)");
        break;
      }
    }
    if (!o.ok()) {
      chainError = cursorError(m_file, o);
      break;
    }
    if (!chainError) break;
  }

  // Metadata sections the importer needs.
  if (!m_sectionOffset[kOptHeaderInfo]) {
    if (!chainError) return chainError;
    return fileError(m_file, 0, "no HEADER_INFO section: the file holds no ring-buffer layout");
  }
  {
    std::string s;
    if (auto st = readSection(m_sectionOffset[kOptHeaderInfo], kOptHeaderInfo, "HEADER_INFO", s); !st) return st;
    Cursor h(s, m_sectionOffset[kOptHeaderInfo], m_layout.swap, "HEADER_INFO section");
    if (!readHeaderInfo(h)) return cursorError(m_file, h);
  }
  if (m_sectionOffset[kOptFtraceEvents]) {
    std::string s;
    if (auto st = readSection(m_sectionOffset[kOptFtraceEvents], kOptFtraceEvents, "FTRACE_EVENTS", s); !st)
      return st;
    Cursor h(s, m_sectionOffset[kOptFtraceEvents], m_layout.swap, "FTRACE_EVENTS section");
    if (!readFtraceFormats(h, m_sectionOffset[kOptFtraceEvents])) return cursorError(m_file, h);
  }
  if (m_sectionOffset[kOptEventFormats]) {
    std::string s;
    if (auto st = readSection(m_sectionOffset[kOptEventFormats], kOptEventFormats, "EVENT_FORMATS", s); !st)
      return st;
    Cursor h(s, m_sectionOffset[kOptEventFormats], m_layout.swap, "EVENT_FORMATS section");
    if (!readEventFormats(h, m_sectionOffset[kOptEventFormats])) return cursorError(m_file, h);
  }
  if (m_sectionOffset[kOptCmdlines]) {
    std::string s;
    if (auto st = readSection(m_sectionOffset[kOptCmdlines], kOptCmdlines, "CMDLINES", s); !st) return st;
    Cursor h(s, m_sectionOffset[kOptCmdlines], m_layout.swap, "CMDLINES section");
    if (!readCmdlines(h)) return cursorError(m_file, h);
  }

  // The top instance's flyrecord data; other instances are listed but not read.
  const Buffer* chosen = nullptr;
  for (const auto& b : m_buffers)
    if (b.name.empty()) chosen = &b;
  if (!chosen && !m_buffers.empty()) chosen = &m_buffers.front();
  for (const auto& b : m_buffers)
    if (&b != chosen) m_layout.otherBuffers.push_back(b.name);
  if (!chosen) {
    // trace-cmd writes the BUFFER option last, after the data: a cut file loses it.
    if (auto st = recoverFlyrecordByScan(); st) {
      checkSectionChain();
      return st;
    }
    if (!chainError) return chainError;
    return fileError(m_file, 0, "no BUFFER option: the file lists no ring-buffer data");
  }
  checkSectionChain();
  m_layout.bufferName = chosen->name;
  if (m_layout.clock.empty()) m_layout.clock = chosen->clock;
  m_layout.cpuData = chosen->cpus;
  // The file's CPU count (CPUCOUNT option) may be missing or smaller than the data.
  for (const auto& ref : chosen->cpus) m_layout.cpuCount = std::max(m_layout.cpuCount, ref.cpu + 1);
  if (chosen->sectionOffset) {
    Cursor s(m_file, chosen->sectionOffset, m_layout.swap);
    const uint16_t id = s.u16("the flyrecord section header");
    if (s.ok() && id != kOptBuffer)
      return fileError(m_file, chosen->sectionOffset,
                       "expected the flyrecord section (id 3), found id " + std::to_string(id));
  }
  return core::Status::ok();
}

// v7 sections follow one another to the end of the file (libtracecmd walks them
// the same way to find the strings). A walk that runs past the end means the
// file was cut, even where the cut part (the strings, the last options) is
// nothing the import needs.
void LayoutReader::checkSectionChain() {
  uint64_t pos = m_layout.dataStart;
  const uint64_t size = m_file.size();
  for (int n = 0; n < 4096 && pos < size; ++n) {
    Cursor c(m_file, pos, m_layout.swap);
    const uint16_t id = c.u16("a section header");
    (void)c.u16("a section header");
    (void)c.u32("a section header");
    const uint64_t len = c.u64("a section header");
    if (!c.ok() || len > size - c.pos()) {
      m_layout.cutSection = c.ok() ? "section " + std::to_string(id) : "a section header";
      m_layout.cutSectionOffset = pos;
      return;
    }
    if (id > 64) return;  // not a section: the chain is damaged, not cut
    pos = c.pos() + len;
  }
}

// trace-cmd 3.x writes, in order: the metadata sections, the first options
// section, the flyrecord section (each CPU's data page-aligned, one after the
// other), then the options section with the BUFFER option that lists them. When
// the file was cut, walk the sections from the start, find the flyrecord section
// and split it at the CPU boundaries the compressed chunk tables give.
core::Status LayoutReader::recoverFlyrecordByScan() {
  if (m_layout.compression == Compression::None || m_layout.cpuCount <= 0) return core::Error("");
  uint64_t pos = m_layout.dataStart;
  uint64_t flyrecordData = 0;
  for (int n = 0; n < 1024 && pos + 16 <= m_file.size(); ++n) {
    Cursor c(m_file, pos, m_layout.swap);
    const uint16_t id = c.u16("a section header");
    (void)c.u16("a section header");
    (void)c.u32("a section header");
    const uint64_t size = c.u64("a section header");
    if (!c.ok()) break;
    if (id == kOptBuffer) {
      flyrecordData = c.pos();
      break;
    }
    if (size > m_file.size() - c.pos()) break;
    pos = c.pos() + size;
  }
  if (!flyrecordData) return core::Error("");
  const uint64_t page = m_layout.pageSize;
  uint64_t at = (flyrecordData + page - 1) / page * page;
  for (int cpu = 0; cpu < m_layout.cpuCount && at < m_file.size(); ++cpu) {
    CpuDataRef ref;
    ref.cpu = cpu;
    ref.offset = at;
    // Walk the chunk table to find where this CPU's data ends.
    Cursor c(m_file, at, m_layout.swap);
    const uint32_t chunks = c.u32("a chunk count");
    uint64_t end = c.pos();
    for (uint32_t i = 0; i < chunks && c.ok(); ++i) {
      const uint32_t csize = c.u32("a chunk header");
      (void)c.u32("a chunk header");
      if (!c.ok()) break;
      if (csize > c.remaining()) {
        end = m_file.size();
        break;
      }
      c.skip(csize, "a chunk");
      end = c.pos();
    }
    ref.size = end - at;
    m_layout.cpuData.push_back(ref);
    at = (end + page - 1) / page * page;
  }
  if (m_layout.cpuData.empty()) return core::Error("");
  m_layout.recoveredByScan = true;
  m_layout.bufferName = "";
  return core::Status::ok();
}

core::Result<TraceLayout> LayoutReader::read() {
  Cursor c(m_file, 0, false);
  if (m_file.size() == 0) return fileError(m_file, 0, "empty file");
  if (!c.expect(kMagic, "the trace.dat magic (\\x17\\x08\\x44tracing)"))
    return cursorError(m_file, c);
  const uint64_t versionAt = c.pos();
  const std::string version = c.cstring(16, "the file version");
  if (!c.ok()) return cursorError(m_file, c);
  int v = 0;
  const auto [p, ec] = std::from_chars(version.data(), version.data() + version.size(), v);
  if (ec != std::errc() || p != version.data() + version.size() || (v != 6 && v != 7))
    return fileError(m_file, versionAt, "unsupported trace.dat version \"" + version + "\" (supported: 6 and 7)");
  m_layout.version = v;
  const uint64_t endianAt = c.pos();
  const uint8_t endian = c.u8("the endianness flag");
  const uint64_t longAt = c.pos();
  const uint8_t longSize = c.u8("the long size");
  if (!c.ok()) return cursorError(m_file, c);
  if (endian > 1) return fileError(m_file, endianAt, "bad endianness flag " + std::to_string(endian));
  if (longSize != 4 && longSize != 8) return fileError(m_file, longAt, "bad long size " + std::to_string(longSize));
  m_layout.bigEndian = endian == 1;
  m_layout.swap = m_layout.bigEndian != hostBigEndian();
  m_layout.longSize = longSize;
  c.setSwap(m_layout.swap);
  const uint64_t pageAt = c.pos();
  const uint32_t pageSize = c.u32("the page size");
  if (!c.ok()) return cursorError(m_file, c);
  if (pageSize < 1024 || pageSize > (1u << 20) || (pageSize & (pageSize - 1)))
    return fileError(m_file, pageAt, "implausible page size " + std::to_string(pageSize));
  m_layout.pageSize = pageSize;

  core::Status st = core::Status::ok();
  if (v == 6) {
    st = readV6(c);
    m_layout.dataStart = 0;
  } else {
    st = readV7(c);
  }
  if (!st) return core::Error(st.message());

  auto header = parseHeaderPage(m_layout.headerPageText);
  if (!header) return fileError(m_file, 0, "header_page format is missing or malformed");
  if (header->dataOffset >= pageSize)
    return fileError(m_file, 0, "header_page data offset beyond the page size");
  m_layout.headerPage = *header;

  uint64_t first = UINT64_MAX;
  for (const auto& ref : m_layout.cpuData)
    if (ref.size) first = std::min(first, ref.offset);
  m_layout.dataStart = first == UINT64_MAX ? m_file.size() : first;
  if (m_layout.cpuCount <= 0) m_layout.cpuCount = static_cast<int>(m_layout.cpuData.size());
  return std::move(m_layout);
}

}  // namespace

core::Result<TraceLayout> readLayout(const TraceFile& file) { return LayoutReader(file).read(); }

}  // namespace importers::tracedat
