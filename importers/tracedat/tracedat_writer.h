// Writes trace-cmd trace.dat files, version 7 (zstd, zlib or uncompressed), from
// ring-buffer pages and the tracefs texts that describe them. SchedLab's
// recorder (recorder/) is its caller; the importer in this folder, `trace-cmd
// report` and KernelShark read what it writes. It sits beside the reader so that
// the format's constants (tracedat_format.h) and codecs live in one place.
//
// Why SchedLab writes the file itself: Debian 12's libtracecmd (trace-cmd 3.1.6)
// installs only the input API (trace-cmd.h); its tracecmd_output_* functions are
// exported but declared in trace-cmd-private.h, which is not shipped, so they are
// no interface to build on. The layout follows trace-cmd.dat.v7(5) and what
// trace-cmd 3.1 writes: metadata sections, the flyrecord section with each CPU's
// data page-aligned in chunks of 10 pages, then the options and the strings.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/result.h"
#include "importers/tracedat/tracedat_compress.h"
#include "importers/tracedat/tracedat_layout.h"

namespace importers::tracedat {

struct EventSystemFormats {
  std::string name;                  ///< "sched"
  std::vector<std::string> formats;  ///< events/<system>/<event>/format texts
};

/// One CPU's ring-buffer data: whole pages as tracefs trace_pipe_raw gives them.
struct CpuPages {
  int cpu = 0;
  int fd = -1;          ///< read with pread(); not closed
  uint64_t offset = 0;  ///< where the pages start in `fd`
  uint64_t size = 0;    ///< bytes, a multiple of the page size
  std::string stats;  ///< per_cpu/cpuN/stats, saved as its CPUSTAT option (empty: none)
};

struct TraceDatContent {
  uint32_t pageSize = 4096;  ///< the ring buffer's sub-buffer size
  Compression compression = Compression::Zstd;
  std::string headerPage;   ///< events/header_page
  std::string headerEvent;  ///< events/header_event
  std::vector<std::string> ftraceFormats;  ///< events/ftrace/*/format
  std::vector<EventSystemFormats> eventSystems;
  std::string kallsyms;       ///< /proc/kallsyms
  std::string printkFormats;  ///< printk_formats
  std::string cmdlines;       ///< saved_cmdlines
  std::string traceClock;     ///< the trace_clock file: "[local] global counter ..."
  std::string clock = "local";
  std::string uname;    ///< "Linux host 6.18.44 x86_64"
  std::string version;  ///< who wrote the file: "SchedLab 0.1.0"
  uint64_t traceId = 0;
  int cpuCount = 0;
  std::vector<CpuPages> cpus;  ///< in CPU order; CPUs without data are left out of the file
};

/// Writes `content` to `path` through a temporary file beside it that is renamed
/// over `path` only once complete: a failed write (disk full, I/O error) leaves
/// no file and returns an error naming `path` and the cause. `progress` gets the
/// fraction of the CPU data written so far.
/// What a trace.dat read back says of its recording (page size, header_page and
/// header_event, every event format by system, saved_cmdlines, clock, uname,
/// CPU count), to write it again around other CPU data: no CPU data, no
/// version, trace id or trace_clock text.
TraceDatContent metadataOf(const TraceLayout& layout);

core::Status writeTraceDat(const std::string& path, const TraceDatContent& content,
                           const std::function<void(double)>& progress = {});

}  // namespace importers::tracedat
