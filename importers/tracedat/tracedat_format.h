// The constants of the trace-cmd trace.dat format that its reader
// (tracedat_layout.cpp) and its writer (tracedat_writer.cpp) share: the magic,
// the option and section ids (trace-cmd lib/trace-cmd/include/private/
// trace-cmd-private.h; documented in trace-cmd.dat.v7(5)) and the section flags.
#pragma once

#include <cstdint>
#include <string_view>

namespace importers::tracedat {

inline constexpr std::string_view kMagic("\x17\x08\x44tracing", 10);

// v7 sections carry the id of the option that points at them.
enum OptionId : uint16_t {
  kOptDone = 0,
  kOptDate = 1,
  kOptCpuStat = 2,
  kOptBuffer = 3,
  kOptTraceClock = 4,
  kOptUname = 5,
  kOptHook = 6,
  kOptOffset = 7,
  kOptCpuCount = 8,
  kOptVersion = 9,
  kOptTraceId = 11,
  kOptTsc2Nsec = 14,
  kOptStrings = 15,
  kOptHeaderInfo = 16,
  kOptFtraceEvents = 17,
  kOptEventFormats = 18,
  kOptKallsyms = 19,
  kOptPrintk = 20,
  kOptCmdlines = 21,
  kOptBufferText = 22,
};
inline constexpr uint16_t kSectionCompressed = 1;

}  // namespace importers::tracedat
