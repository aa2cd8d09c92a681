// The tracepoint formats a perf.data file carries (HEADER_TRACING_DATA, or the
// PERF_RECORD_HEADER_TRACING_DATA record in pipe mode; the same layout as the
// start of a trace-cmd trace.dat). Parsed once with libtraceevent and reduced to
// plain field layouts, so the per-sample path never calls into libtraceevent.
// Called by perf_data_reader.cpp.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace importers::perf {

struct TracepointField {
  std::string name;
  uint32_t offset = 0;
  uint32_t size = 0;
  bool isSigned = false;
  bool isDynamic = false;   ///< __data_loc: a u32 holding (length << 16 | offset)
  bool isRelative = false;  ///< __rel_loc: like __data_loc, offset counted from the end of the field
};

struct TracepointFormat {
  int id = -1;
  std::string system;
  std::string name;
  std::vector<TracepointField> fields;  ///< common fields included
  std::string printFmt;                 ///< the raw "print fmt:" text (prev_state flag tables live here)
  const TracepointField* field(std::string_view fieldName) const {
    for (const auto& f : fields)
      if (f.name == fieldName) return &f;
    return nullptr;
  }
};

struct TracingData {
  bool bigEndian = false;
  int longSize = 8;
  std::string version;
  std::vector<TracepointFormat> formats;
};

/// Parses tracing data. `fileOffset` is where `data` starts in the file, so that
/// errors name the byte offset in the file: "byte offset N: what". Never throws.
core::Result<TracingData> parseTracingData(std::span<const uint8_t> data, uint64_t fileOffset);

}  // namespace importers::perf
