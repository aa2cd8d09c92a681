// The structure of a trace-cmd trace.dat file, version 6 or 7 (v7 optionally
// zstd/zlib compressed): the initial header, the metadata (header_page, event
// formats, saved cmdlines, options) and where each CPU's ring-buffer data lies.
// Read once per import by the trace.dat importer, before any event is decoded.
// Every size and offset is checked against the file; errors name the byte offset.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "importers/tracedat/event_format.h"
#include "importers/tracedat/tracedat_compress.h"

namespace importers::tracedat {

/// A read-only trace file read with pread(), so worker threads can share it and
/// nothing but the bytes being decoded is resident (no mmap of the whole file).
class TraceFile {
 public:
  static core::Result<std::unique_ptr<TraceFile>> open(const std::string& path);
  ~TraceFile();
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;

  const std::string& path() const { return m_path; }
  uint64_t size() const { return m_size; }
  /// Reads exactly `len` bytes at `offset`. False past the end of the file or on an I/O error.
  bool read(uint64_t offset, void* dst, size_t len) const;
  /// Reads up to `len` bytes; returns how many (0 at or past the end).
  size_t readSome(uint64_t offset, void* dst, size_t len) const;

 private:
  TraceFile(int fd, uint64_t size, std::string path) : m_fd(fd), m_size(size), m_path(std::move(path)) {}
  int m_fd;
  uint64_t m_size;
  std::string m_path;
};

struct CpuDataRef {
  int cpu = 0;
  uint64_t offset = 0;  ///< file offset of the CPU's pages, or of its chunk table when compressed
  uint64_t size = 0;    ///< as the file declares it (compressed size for v7 compressed data)
};

/// A CPU's ring-buffer statistics as the recorder saved them (CPUSTAT option).
struct CpuStat {
  int cpu = 0;
  int64_t overrun = 0;  ///< events overwritten before they were read
};

struct TraceLayout {
  int version = 0;
  bool bigEndian = false;
  bool swap = false;  ///< file endianness differs from the host's
  uint8_t longSize = 8;
  uint32_t pageSize = 4096;
  Compression compression = Compression::None;
  std::string compressionName;  ///< "zstd 1.5.4"
  int cpuCount = 0;             ///< CPUs of the traced machine, as the file says
  std::string clock;            ///< "local", "global", "x86-tsc"... empty when not recorded
  std::string uname;
  std::string tracerVersion;
  int64_t tsOffset = 0;  ///< OFFSET option: added to every timestamp
  bool haveTsc2Nsec = false;
  uint32_t tscMult = 0;
  uint32_t tscShift = 0;
  uint64_t tscOffset = 0;
  HeaderPage headerPage;
  std::string headerPageText;   ///< events/header_page as the recorder saved it
  std::string headerEventText;  ///< events/header_event
  std::vector<EventFormatText> formats;  ///< ftrace formats (system "ftrace") and event formats
  std::string cmdlines;                  ///< saved_cmdlines: "tid comm" lines
  std::string bufferName;                ///< the instance read ("" = top)
  std::vector<std::string> otherBuffers;  ///< instances present but not read
  std::vector<CpuDataRef> cpuData;
  std::vector<CpuStat> cpuStats;
  uint64_t dataStart = 0;  ///< first byte of ring-buffer data
  /// v7 only: the option listing the CPU data was lost (file cut); the data was
  /// found by walking the flyrecord section instead. CPU numbers are assumed in order.
  bool recoveredByScan = false;
  /// v7: the sections, walked one after the other, run past the end of the file
  /// (the file was cut there): the section that is cut, and where it starts.
  std::string cutSection;
  uint64_t cutSectionOffset = 0;
};

/// Reads the layout. The error names the file, the byte offset and what is wrong.
core::Result<TraceLayout> readLayout(const TraceFile& file);

}  // namespace importers::tracedat
