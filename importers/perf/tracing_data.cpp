#include "importers/perf/tracing_data.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

extern "C" {
#include <traceevent/event-parse.h>
}

#include "importers/perf/perf_data_format.h"

namespace importers::perf {

namespace {

constexpr size_t kMaxSystems = 1 << 16;
constexpr size_t kMaxFormatsPerSystem = 1 << 16;

struct TepDeleter {
  void operator()(tep_handle* tep) const { tep_free(tep); }
};

// Walks the tracing data in order, the way tools/perf/util/trace-event-read.c does,
// but from memory and with every length checked against what is left.
class Cursor {
 public:
  Cursor(std::span<const uint8_t> data, uint64_t fileOffset) : m_data(data), m_fileOffset(fileOffset) {}

  void setBigEndian(bool big) { m_swap = big != (std::endian::native == std::endian::big); }
  uint64_t pos() const { return m_pos; }
  bool failed() const { return !m_error.empty(); }
  const std::string& error() const { return m_error; }

  void fail(const std::string& what) {
    if (!failed()) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "byte offset %llu (0x%llx): ", static_cast<unsigned long long>(m_fileOffset + m_pos),
                    static_cast<unsigned long long>(m_fileOffset + m_pos));
      m_error = buf + what;
    }
  }
  bool need(uint64_t n, const char* what) {
    if (failed()) return false;
    if (n > m_data.size() - m_pos) {
      fail(std::string("tracing data ends inside ") + what);
      return false;
    }
    return true;
  }
  std::string_view bytes(uint64_t n, const char* what) {
    if (!need(n, what)) return {};
    std::string_view s(reinterpret_cast<const char*>(m_data.data() + m_pos), static_cast<size_t>(n));
    m_pos += n;
    return s;
  }
  uint32_t u32(const char* what) {
    const auto s = bytes(4, what);
    if (s.empty()) return 0;
    uint32_t v;
    std::memcpy(&v, s.data(), 4);
    return m_swap ? byteSwap(v) : v;
  }
  uint64_t u64(const char* what) {
    const auto s = bytes(8, what);
    if (s.empty()) return 0;
    uint64_t v;
    std::memcpy(&v, s.data(), 8);
    return m_swap ? byteSwap(v) : v;
  }
  std::string_view cstring(const char* what, size_t maxLen) {
    if (failed()) return {};
    const auto* begin = m_data.data() + m_pos;
    const size_t left = m_data.size() - m_pos;
    const auto* nul = static_cast<const uint8_t*>(std::memchr(begin, 0, std::min(left, maxLen + 1)));
    if (!nul) {
      fail(std::string("unterminated ") + what);
      return {};
    }
    const auto len = static_cast<size_t>(nul - begin);
    m_pos += len + 1;
    return {reinterpret_cast<const char*>(begin), len};
  }

 private:
  std::span<const uint8_t> m_data;
  uint64_t m_fileOffset;
  uint64_t m_pos = 0;
  bool m_swap = false;
  std::string m_error;
};

TracepointFormat toFormat(const tep_event& ev, std::string_view text) {
  TracepointFormat f;
  f.id = ev.id;
  f.system = ev.system ? ev.system : "";
  f.name = ev.name ? ev.name : "";
  for (const tep_format_field* list : {ev.format.common_fields, ev.format.fields}) {
    for (const tep_format_field* fld = list; fld; fld = fld->next) {
      if (!fld->name || fld->offset < 0 || fld->size < 0) continue;
      TracepointField out;
      out.name = fld->name;
      out.offset = static_cast<uint32_t>(fld->offset);
      out.size = static_cast<uint32_t>(fld->size);
      out.isSigned = (fld->flags & TEP_FIELD_IS_SIGNED) != 0;
      out.isDynamic = (fld->flags & TEP_FIELD_IS_DYNAMIC) != 0;
      out.isRelative = (fld->flags & TEP_FIELD_IS_RELATIVE) != 0;
      f.fields.push_back(std::move(out));
    }
  }
  if (const auto at = text.find("print fmt:"); at != std::string_view::npos) f.printFmt = std::string(text.substr(at));
  return f;
}

bool isPrintable(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

bool isDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Consumes `key` and the digits up to the ';' after them.
bool numberField(std::string_view& line, std::string_view key) {
  if (!line.starts_with(key)) return false;
  line.remove_prefix(key.size());
  const size_t semi = line.find(';');
  if (semi == std::string_view::npos || !isDigits(line.substr(0, semi))) return false;
  line.remove_prefix(semi + 1);
  return true;
}

// "\tfield:DECL;\toffset:N;\tsize:N;" with an optional "\tsigned:N;", DECL
// printable ASCII.
bool isFieldLine(std::string_view line) {
  if (!line.starts_with("\tfield:")) return false;
  line.remove_prefix(7);
  const size_t semi = line.find(';');
  if (semi == std::string_view::npos) return false;
  if (!isPrintable(line.substr(0, semi))) return false;
  line.remove_prefix(semi + 1);
  if (!numberField(line, "\toffset:") || !numberField(line, "\tsize:")) return false;
  return line.empty() || (numberField(line, "\tsigned:") && line.empty());
}

// Whether libtraceevent may parse this format text (the part before its
// print fmt). libtraceevent 1.7 dereferences a NULL token on some garbled
// formats: a byte of 0x7f or above starting a token ("char comm[\x9d6]"), or
// the text ending inside a field's brackets ("char next_comm["), both found by
// perfdata_fuzzer, each a crash of every import of such a file. The kernel
// writes only whole lines of these kinds: text with any other is no format,
// and is left out.
bool isFormatText(std::string_view text) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    if (nl == std::string_view::npos) return false;  // a line cut short
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    if (line.empty() || line == "format:") continue;
    if (line.starts_with("name: ")) {
      const std::string_view name = line.substr(6);
      if (name.empty() || !isPrintable(name) || name.find(' ') != std::string_view::npos) return false;
      continue;
    }
    if (line.starts_with("ID: ") && isDigits(line.substr(4))) continue;
    if (!isFieldLine(line)) return false;
  }
  return true;
}

}  // namespace

core::Result<TracingData> parseTracingData(std::span<const uint8_t> data, uint64_t fileOffset) {
  Cursor in(data, fileOffset);
  TracingData out;
  static constexpr uint8_t kTag[3] = {23, 8, 68};
  const auto tag = in.bytes(3, "the tracing data magic");
  if (in.failed() || std::memcmp(tag.data(), kTag, 3) != 0 || in.bytes(7, "the tracing data magic") != "tracing") {
    in.fail("no tracing data magic (\\027\\010Dtracing)");
    return core::Error(in.error());
  }
  out.version = std::string(in.cstring("tracing data version", 32));
  const auto endianAndLong = in.bytes(2, "the tracing data header");
  if (in.failed()) return core::Error(in.error());
  out.bigEndian = endianAndLong[0] != 0;
  out.longSize = static_cast<uint8_t>(endianAndLong[1]);
  in.setBigEndian(out.bigEndian);
  const uint32_t pageSize = in.u32("the tracing data header");
  if (in.failed()) return core::Error(in.error());
  if (out.longSize != 4 && out.longSize != 8) {
    in.fail("tracing data long size " + std::to_string(out.longSize) + " is neither 4 nor 8");
    return core::Error(in.error());
  }

  std::unique_ptr<tep_handle, TepDeleter> tep(tep_alloc());
  if (!tep) return core::Error("cannot allocate a libtraceevent handle");
  tep_set_file_bigendian(tep.get(), out.bigEndian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
  tep_set_local_bigendian(tep.get(), std::endian::native == std::endian::big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
  tep_set_long_size(tep.get(), out.longSize);
  tep_set_page_size(tep.get(), static_cast<int>(pageSize));

  if (in.bytes(12, "header_page") != std::string_view("header_page\0", 12)) {
    in.fail("expected \"header_page\" in the tracing data");
    return core::Error(in.error());
  }
  // header_page and header_event describe ftrace ring-buffer pages, which perf
  // samples do not use: skipped, so no more text than needed meets libtraceevent's parser.
  in.bytes(in.u64("header_page size"), "header_page");
  if (in.bytes(13, "header_event") != std::string_view("header_event\0", 13)) {
    in.fail("expected \"header_event\" in the tracing data");
    return core::Error(in.error());
  }
  in.bytes(in.u64("header_event size"), "header_event");

  // ftrace's own formats (function, print...): not sched tracepoints, skipped.
  const uint32_t ftraceCount = in.u32("the ftrace format count");
  if (ftraceCount > kMaxFormatsPerSystem) in.fail("implausible ftrace format count " + std::to_string(ftraceCount));
  for (uint32_t i = 0; i < ftraceCount && !in.failed(); ++i) in.bytes(in.u64("ftrace format size"), "an ftrace format");

  const uint32_t systems = in.u32("the event system count");
  if (systems > kMaxSystems) in.fail("implausible event system count " + std::to_string(systems));
  for (uint32_t s = 0; s < systems && !in.failed(); ++s) {
    const std::string sys(in.cstring("event system name", 256));
    const uint32_t count = in.u32("the event format count");
    if (count > kMaxFormatsPerSystem) in.fail("implausible event format count " + std::to_string(count));
    for (uint32_t e = 0; e < count && !in.failed(); ++e) {
      const uint64_t size = in.u64("event format size");
      const auto text = in.bytes(size, "an event format");
      if (in.failed()) break;
      // libtraceevent only sees the name, ID and field list. Its print-fmt parser
      // crashes on some garbled input (found by fuzzing; libtraceevent 1.7), and
      // decoding needs only the field layout: the print fmt stays raw text here.
      // Without it libtraceevent reports a failure but still builds the event.
      const size_t printAt = text.find("print fmt:");
      const std::string_view fields = text.substr(0, printAt);
      if (!isFormatText(fields)) continue;
      tep_event* ev = nullptr;
      {
        // Its tokenizer keeps the input in globals: one parse at a time.
        static std::mutex parserMutex;
        std::lock_guard lock(parserMutex);
        tep_parse_format(tep.get(), &ev, fields.data(), fields.size(), sys.c_str());
      }
      if (!ev || !ev->name) continue;
      out.formats.push_back(toFormat(*ev, text));
    }
  }
  // kallsyms and printk formats: sized blobs, not needed.
  in.bytes(in.u32("the kallsyms size"), "kallsyms");
  in.bytes(in.u32("the printk formats size"), "printk formats");
  if (!in.failed() && std::strtod(out.version.c_str(), nullptr) >= 0.6) in.bytes(in.u64("saved cmdlines size"), "saved cmdlines");
  if (in.failed()) return core::Error(in.error());
  return out;
}

}  // namespace importers::perf
