// Splits one line of `perf script` text into its columns: comm, [pid/]tid,
// [cpu], timestamp (µs, or ns with --ns), event name and the tracepoint's
// printed fields. Used by the perf-script importer for reading and probing.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>

#include "core/task_state.h"

namespace importers::perfscript {

struct ScriptLine {
  std::string_view comm;    ///< may contain spaces; empty when not printed
  int32_t tid = -1;
  int32_t pid = -1;         ///< only with -F pid,tid ("pid/tid" column)
  int32_t cpu = -1;         ///< -1 when the cpu column is absent
  int64_t ts = 0;           ///< nanoseconds
  int fractionDigits = 0;   ///< 6 (µs, the default) or 9 (--ns)
  std::string_view system;  ///< "sched"; empty for events without one ("cycles")
  std::string_view event;   ///< "sched_switch": the name without its system
  std::string_view args;    ///< what the tracepoint printed, after the event name
};

enum class LineKind : uint8_t {
  Sample,     ///< a sample line, `out` filled
  Skip,       ///< blank, a comment (# ...), or a callchain/continuation line
  Malformed,  ///< none of the above
};

LineKind tokenizeLine(std::string_view line, ScriptLine& out);

/// The text between "key=" and the next " nextKey=" (or the end). For values
/// that may contain spaces (comms, file names). nullopt when key= is missing.
std::optional<std::string_view> valueBetween(std::string_view args, std::string_view key, std::string_view nextKey);
/// The integer after "key=". nullopt when missing or not a number.
std::optional<int64_t> intValue(std::string_view args, std::string_view key);
/// One forward pass over "k1=v1 k2=v2 ..." when the fields come in the order the
/// kernel's print fmt puts them: `needles` are "k1=", " k2=", " k3=" ...; a value
/// runs to the next needle (so it may hold spaces), the last one to the next
/// space. False when the text is laid out otherwise (callers then look fields
/// up one by one with valueBetween/intValue).
bool splitFields(std::string_view args, std::initializer_list<std::string_view> needles, std::string_view* values);
/// A whole value as a number (what splitFields gives); nullopt when it is not one.
std::optional<int64_t> toInt(std::string_view value);
/// prev_state as perf prints it: letters ("S", "R+", "D|K") or a raw number.
core::TaskState decodePrevState(std::string_view text);

}  // namespace importers::perfscript
