#include "importers/tracedat/tracedat_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "importers/tracedat/tracedat_format.h"

namespace importers::tracedat {

namespace {

constexpr uint32_t kPagesPerChunk = 10;  // what trace-cmd 3.1 compresses at a time (PAGES_IN_CHUNK)

// Little-endian host assumed throughout: the file says which it is, and every
// number is written in the host's order (as trace-cmd does).
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "tracedat_writer writes little-endian files");

class Bytes {
 public:
  void u8(uint8_t v) { raw(&v, 1); }
  void u16(uint16_t v) { raw(&v, 2); }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void cstr(const std::string& s) { raw(s.c_str(), s.size() + 1); }
  void raw(const void* p, size_t n) { m_data.insert(m_data.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n); }
  const std::vector<uint8_t>& data() const { return m_data; }

 private:
  std::vector<uint8_t> m_data;
};

// The output file, written sequentially; the first failure sticks and is reported once.
class Output {
 public:
  Output(int fd, std::string path) : m_fd(fd), m_path(std::move(path)) {}
  uint64_t pos() const { return m_pos; }
  bool ok() const { return m_error.empty(); }
  const std::string& error() const { return m_error; }

  void write(const void* p, size_t n) {
    const auto* bytes = static_cast<const uint8_t*>(p);
    while (ok() && n > 0) {
      const ssize_t w = ::write(m_fd, bytes, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        fail(w < 0 ? errno : ENOSPC);
        return;
      }
      bytes += w;
      n -= static_cast<size_t>(w);
      m_pos += static_cast<uint64_t>(w);
    }
  }
  void write(const Bytes& b) { write(b.data().data(), b.data().size()); }
  void padTo(uint64_t alignment) {
    static const std::vector<uint8_t> zeros(65536, 0);
    while (ok() && m_pos % alignment) write(zeros.data(), std::min<uint64_t>(alignment - m_pos % alignment, zeros.size()));
  }
  /// Overwrites bytes already written (sizes and offsets known only later).
  void patch(uint64_t at, const void* p, size_t n) {
    if (!ok()) return;
    if (::pwrite(m_fd, p, n, static_cast<off_t>(at)) != static_cast<ssize_t>(n)) fail(errno ? errno : EIO);
  }
  void patch64(uint64_t at, uint64_t v) { patch(at, &v, 8); }
  void fail(int err) {
    if (!ok()) return;
    m_error = m_path + ": " + (err == ENOSPC ? "disk full" : "cannot write") + " (" + std::strerror(err) + ")";
  }
  void failWith(std::string message) {
    if (ok()) m_error = m_path + ": " + std::move(message);
  }
  int fd() const { return m_fd; }

 private:
  int m_fd;
  std::string m_path;
  uint64_t m_pos = 0;
  std::string m_error;
};

class Writer {
 public:
  Writer(const TraceDatContent& content, Output& out, const std::function<void(double)>& progress)
      : m_c(content), m_out(out), m_progress(progress), m_compressor(content.compression) {}
  void write();

 private:
  uint32_t stringId(const std::string& s);
  /// Section header (id, flags, description, size to be patched); returns where the size sits.
  uint64_t beginSection(uint16_t id, const std::string& description, bool compressed);
  void endSection(uint64_t sizeAt) { m_out.patch64(sizeAt, m_out.pos() - sizeAt - 8); }
  void metadataSection(uint16_t id, const std::string& description, const Bytes& body);
  void cpuData(const CpuPages& cpu, uint64_t& written);

  const TraceDatContent& m_c;
  Output& m_out;
  const std::function<void(double)>& m_progress;
  Compressor m_compressor;
  std::string m_strings;  // the strings section: section descriptions, NUL-separated
  Bytes m_options;        // the options section's body
  uint64_t m_totalCpuBytes = 0;
  uint64_t m_doneCpuBytes = 0;
};

uint32_t Writer::stringId(const std::string& s) {
  const auto id = static_cast<uint32_t>(m_strings.size());
  m_strings.append(s);
  m_strings.push_back('\0');
  return id;
}

uint64_t Writer::beginSection(uint16_t id, const std::string& description, bool compressed) {
  Bytes h;
  h.u16(id);
  h.u16(compressed && m_c.compression != Compression::None ? kSectionCompressed : 0);
  h.u32(stringId(description));
  m_out.write(h);
  const uint64_t sizeAt = m_out.pos();
  const uint64_t zero = 0;
  m_out.write(&zero, 8);
  return sizeAt;
}

void Writer::metadataSection(uint16_t id, const std::string& description, const Bytes& body) {
  const uint64_t at = m_out.pos();
  const uint64_t sizeAt = beginSection(id, description, true);
  if (m_c.compression == Compression::None) {
    m_out.write(body);
  } else {
    std::vector<uint8_t> packed;
    if (!m_compressor.compress(body.data().data(), body.data().size(), packed)) {
      m_out.failWith("cannot compress the " + description + " section");
      return;
    }
    Bytes h;
    h.u32(static_cast<uint32_t>(packed.size()));
    h.u32(static_cast<uint32_t>(body.data().size()));
    m_out.write(h);
    m_out.write(packed.data(), packed.size());
  }
  endSection(sizeAt);
  m_options.u16(id);
  m_options.u32(8);
  m_options.u64(at);
}

void Writer::cpuData(const CpuPages& cpu, uint64_t& written) {
  const uint64_t start = m_out.pos();
  const size_t chunkBytes = size_t{kPagesPerChunk} * m_c.pageSize;
  std::vector<uint8_t> chunk(chunkBytes);
  std::vector<uint8_t> packed;
  uint32_t chunks = 0;
  const bool compress = m_c.compression != Compression::None;
  if (compress) m_out.write(&chunks, 4);  // the count, patched at the end
  for (uint64_t offset = 0; offset < cpu.size && m_out.ok();) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(chunkBytes, cpu.size - offset));
    const ssize_t got = ::pread(cpu.fd, chunk.data(), want, static_cast<off_t>(cpu.offset + offset));
    if (got != static_cast<ssize_t>(want)) {
      m_out.failWith("cannot read the recorded data of CPU " + std::to_string(cpu.cpu) + " (" +
                     std::strerror(got < 0 ? errno : EIO) + ")");
      return;
    }
    if (compress) {
      if (!m_compressor.compress(chunk.data(), want, packed)) {
        m_out.failWith("cannot compress the data of CPU " + std::to_string(cpu.cpu));
        return;
      }
      Bytes h;
      h.u32(static_cast<uint32_t>(packed.size()));
      h.u32(static_cast<uint32_t>(want));
      m_out.write(h);
      m_out.write(packed.data(), packed.size());
      ++chunks;
    } else {
      m_out.write(chunk.data(), want);
    }
    offset += want;
    m_doneCpuBytes += want;
    if (m_progress && m_totalCpuBytes) m_progress(static_cast<double>(m_doneCpuBytes) / static_cast<double>(m_totalCpuBytes));
  }
  if (compress) m_out.patch(start, &chunks, 4);
  written = m_out.pos() - start;
}

void Writer::write() {
  // Initial header: magic, version, endianness, long size, page size, compression.
  Bytes init;
  init.raw(kMagic.data(), kMagic.size());
  init.cstr("7");
  init.u8(0);  // little endian
  init.u8(sizeof(long));
  init.u32(m_c.pageSize);
  init.cstr(m_c.compression == Compression::Zstd ? "zstd" : m_c.compression == Compression::Zlib ? "zlib" : "none");
  init.cstr(Compressor::libraryVersion(m_c.compression));
  m_out.write(init);
  const uint64_t firstOptionsAt = m_out.pos();
  const uint64_t zero = 0;
  m_out.write(&zero, 8);

  Bytes headers;
  headers.cstr("header_page");
  headers.u64(m_c.headerPage.size());
  headers.raw(m_c.headerPage.data(), m_c.headerPage.size());
  headers.cstr("header_event");
  headers.u64(m_c.headerEvent.size());
  headers.raw(m_c.headerEvent.data(), m_c.headerEvent.size());
  metadataSection(kOptHeaderInfo, "headers", headers);

  Bytes ftrace;
  ftrace.u32(static_cast<uint32_t>(m_c.ftraceFormats.size()));
  for (const auto& f : m_c.ftraceFormats) {
    ftrace.u64(f.size());
    ftrace.raw(f.data(), f.size());
  }
  metadataSection(kOptFtraceEvents, "ftrace events", ftrace);

  Bytes events;
  events.u32(static_cast<uint32_t>(m_c.eventSystems.size()));
  for (const auto& system : m_c.eventSystems) {
    events.cstr(system.name);
    events.u32(static_cast<uint32_t>(system.formats.size()));
    for (const auto& f : system.formats) {
      events.u64(f.size());
      events.raw(f.data(), f.size());
    }
  }
  metadataSection(kOptEventFormats, "events format", events);

  Bytes kallsyms;
  kallsyms.u32(static_cast<uint32_t>(m_c.kallsyms.size()));
  kallsyms.raw(m_c.kallsyms.data(), m_c.kallsyms.size());
  metadataSection(kOptKallsyms, "kallsyms", kallsyms);

  Bytes printk;
  printk.u32(static_cast<uint32_t>(m_c.printkFormats.size()));
  printk.raw(m_c.printkFormats.data(), m_c.printkFormats.size());
  metadataSection(kOptPrintk, "printk", printk);

  Bytes cmdlines;
  cmdlines.u64(m_c.cmdlines.size());
  cmdlines.raw(m_c.cmdlines.data(), m_c.cmdlines.size());
  metadataSection(kOptCmdlines, "command lines", cmdlines);

  // The flyrecord section: each CPU's data page-aligned, one after the other.
  for (const auto& cpu : m_c.cpus) m_totalCpuBytes += cpu.size;
  const uint64_t flyrecordAt = m_out.pos();
  const uint64_t flyrecordSizeAt = beginSection(kOptBuffer, "buffer flyrecord ", true);
  struct Placed {
    uint32_t cpu;
    uint64_t offset;
    uint64_t size;
  };
  std::vector<Placed> placed;
  for (const auto& cpu : m_c.cpus) {
    if (cpu.size == 0) continue;
    m_out.padTo(m_c.pageSize);
    const uint64_t offset = m_out.pos();
    uint64_t written = 0;
    cpuData(cpu, written);
    placed.push_back({static_cast<uint32_t>(cpu.cpu), offset, written});
  }
  endSection(flyrecordSizeAt);

  auto textOption = [&](uint16_t id, const std::string& text) {
    m_options.u16(id);
    m_options.u32(static_cast<uint32_t>(text.size() + 1));
    m_options.cstr(text);
  };
  if (!m_c.traceClock.empty()) textOption(kOptTraceClock, m_c.traceClock);
  if (!m_c.uname.empty()) textOption(kOptUname, m_c.uname);
  if (!m_c.version.empty()) textOption(kOptVersion, m_c.version);
  m_options.u16(kOptTraceId);
  m_options.u32(8);
  m_options.u64(m_c.traceId);
  for (const auto& cpu : m_c.cpus)
    if (!cpu.stats.empty()) textOption(kOptCpuStat, "CPU: " + std::to_string(cpu.cpu) + "\n" + cpu.stats);
  Bytes buffer;  // offset, name, clock, page size, CPU count, {cpu, offset, size}...
  buffer.u64(flyrecordAt);
  buffer.cstr("");
  buffer.cstr(m_c.clock);
  buffer.u32(m_c.pageSize);
  buffer.u32(static_cast<uint32_t>(placed.size()));
  for (const auto& p : placed) {
    buffer.u32(p.cpu);
    buffer.u64(p.offset);
    buffer.u64(p.size);
  }
  m_options.u16(kOptBuffer);
  m_options.u32(static_cast<uint32_t>(buffer.data().size()));
  m_options.raw(buffer.data().data(), buffer.data().size());
  m_options.u16(kOptCpuCount);
  m_options.u32(4);
  m_options.u32(static_cast<uint32_t>(m_c.cpuCount));
  m_options.u16(kOptDone);
  m_options.u32(8);
  m_options.u64(0);  // no further options section

  const uint64_t optionsAt = m_out.pos();
  const uint64_t optionsSizeAt = beginSection(kOptDone, "options", false);
  m_out.write(m_options);
  endSection(optionsSizeAt);
  m_out.patch64(firstOptionsAt, optionsAt);

  // The strings last: every description above is in them, this section's own too.
  const uint32_t stringsId = stringId("strings");
  Bytes stringsHeader;
  stringsHeader.u16(kOptStrings);
  stringsHeader.u16(0);
  stringsHeader.u32(stringsId);
  stringsHeader.u64(m_strings.size());
  m_out.write(stringsHeader);
  m_out.write(m_strings.data(), m_strings.size());
}

}  // namespace

TraceDatContent metadataOf(const TraceLayout& layout) {
  TraceDatContent c;
  c.pageSize = layout.pageSize;
  c.headerPage = layout.headerPageText;
  c.headerEvent = layout.headerEventText;
  for (const auto& f : layout.formats) {
    if (f.system == "ftrace") {
      c.ftraceFormats.push_back(f.text);
      continue;
    }
    auto system = std::find_if(c.eventSystems.begin(), c.eventSystems.end(),
                               [&](const EventSystemFormats& s) { return s.name == f.system; });
    if (system == c.eventSystems.end()) system = c.eventSystems.insert(system, {f.system, {}});
    system->formats.push_back(f.text);
  }
  c.cmdlines = layout.cmdlines;
  c.clock = layout.clock;
  c.uname = layout.uname;
  c.cpuCount = layout.cpuCount;
  return c;
}

core::Status writeTraceDat(const std::string& path, const TraceDatContent& content,
                           const std::function<void(double)>& progress) {
  namespace fs = std::filesystem;
  const std::string temp = path + ".part";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return core::Error(path + ": cannot create (" + std::strerror(errno) + ")");
  Output out(fd, path);
  Writer(content, out, progress).write();
  if (out.ok() && ::fsync(fd) != 0) out.fail(errno);
  if (::close(fd) != 0) out.fail(errno);
  std::error_code ec;
  if (out.ok()) {
    fs::rename(temp, path, ec);
    if (ec) out.failWith("cannot rename " + temp + " to it (" + ec.message() + ")");
  }
  if (!out.ok()) {
    fs::remove(temp, ec);
    return core::Error(out.error());
  }
  return core::Status::ok();
}

}  // namespace importers::tracedat
