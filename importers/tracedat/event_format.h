// Parses the kernel's event format files (events/<system>/<event>/format and
// events/header_page) the way trace.dat stores them: name, ID, field offsets and
// sizes, and the print fmt. Called by the trace.dat layout reader and the sched
// event decoder. Plain text scanning only: a corrupt format fails to parse, it
// cannot crash (libtraceevent's print-fmt parser can; see tracedat_importer.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace importers::tracedat {

/// One format file as the trace.dat stores it, with the event system it belongs to.
struct EventFormatText {
  std::string system;
  std::string text;
  uint64_t fileOffset = 0;  ///< where the format (or its compressed section) starts, for errors
};

struct FormatField {
  std::string name;
  uint32_t offset = 0;
  uint32_t size = 0;
  bool isSigned = false;
  bool isArray = false;    ///< e.g. char prev_comm[16]
  bool isDataLoc = false;  ///< __data_loc: a 32-bit (length << 16 | offset) into the record
};

struct EventFormat {
  std::string system;
  std::string name;
  int id = -1;
  std::vector<FormatField> fields;  ///< common_* fields included
  std::string printFmt;             ///< the text after "print fmt: "

  const FormatField* field(std::string_view fieldName) const;
};

/// Name and ID only, for the thousands of formats a trace.dat carries but whose
/// fields the importer never reads. nullopt when either is missing.
struct EventIdentity {
  std::string name;
  int id = -1;
};
std::optional<EventIdentity> parseEventIdentity(std::string_view text);

/// The whole format. nullopt when it has no name or no ID, or a field line is
/// malformed (offset/size missing or not numeric).
std::optional<EventFormat> parseEventFormat(std::string_view text, std::string_view system);

/// events/header_page: where a ring-buffer sub-buffer's commit word and data live.
struct HeaderPage {
  uint32_t timestampSize = 8;
  uint32_t commitOffset = 8;
  uint32_t commitSize = 8;  ///< the kernel's long: 4 or 8
  uint32_t dataOffset = 16;
  uint32_t dataSize = 4080;
};
/// nullopt when the commit or data field is missing or out of the sane range.
std::optional<HeaderPage> parseHeaderPage(std::string_view text);

}  // namespace importers::tracedat
