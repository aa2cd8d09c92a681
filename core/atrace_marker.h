// Reads the text an application wrote to trace_marker in the atrace/systrace
// convention (Android's cutils/trace.h, as Perfetto's systrace parser reads
// it): "B|tgid|name", "E|tgid", "C|tgid|name|value", async "S|tgid|name|cookie"
// / "F|tgid|name|cookie", "I|tgid|name"; anything else is plain text, an
// instant marker. Called by SchedBuilder::onUserMark for every importer.
#pragma once

#include <cstdint>
#include <string_view>

namespace core {

struct AtraceMarker {
  enum class Type : uint8_t { Begin, End, Counter, AsyncBegin, AsyncEnd, Instant, Plain };
  Type type = Type::Plain;
  int32_t tgid = -1;      ///< -1 when the text does not say ("E" alone)
  std::string_view name;  ///< slice or counter name; the whole text (trimmed) for Plain
  double value = 0;       ///< Counter: its value
  int64_t cookie = 0;     ///< AsyncBegin/AsyncEnd: what pairs them
};

/// Never fails: text that is not a well-formed atrace record is Plain.
AtraceMarker parseAtraceMarker(std::string_view text);

}  // namespace core
