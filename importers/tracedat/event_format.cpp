#include "importers/tracedat/event_format.h"

#include <charconv>

namespace importers::tracedat {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

template <typename F>
void forEachLine(std::string_view text, F&& f) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    if (!f(line, nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1))) return;
    if (nl == std::string_view::npos) return;
    text.remove_prefix(nl + 1);
  }
}

std::optional<int64_t> parseInt(std::string_view s) {
  s = trim(s);
  int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// "offset:8" within "field:...;\toffset:8;\tsize:4;\tsigned:1;"
std::optional<int64_t> attribute(std::string_view line, std::string_view key) {
  size_t pos = 0;
  while ((pos = line.find(key, pos)) != std::string_view::npos) {
    const bool atStart = pos == 0 || line[pos - 1] == ';' || line[pos - 1] == '\t' || line[pos - 1] == ' ';
    if (atStart && pos + key.size() < line.size() && line[pos + key.size()] == ':') {
      std::string_view rest = line.substr(pos + key.size() + 1);
      rest = rest.substr(0, rest.find(';'));
      return parseInt(rest);
    }
    pos += key.size();
  }
  return std::nullopt;
}

// "field:unsigned long prev_state;" / "field:char prev_comm[16];" / "field special:..."
std::optional<FormatField> parseFieldLine(std::string_view line) {
  const size_t colon = line.find(':');
  const size_t semi = line.find(';');
  if (colon == std::string_view::npos || semi == std::string_view::npos || semi < colon) return std::nullopt;
  std::string_view decl = trim(line.substr(colon + 1, semi - colon - 1));
  FormatField f;
  f.isDataLoc = decl.find("__data_loc") != std::string_view::npos || decl.find("__rel_loc") != std::string_view::npos;
  // "char prev_comm[16]": the name before a trailing [...]; "__data_loc char[] filename": after it.
  if (!decl.empty() && decl.back() == ']') {
    if (const size_t br = decl.rfind('['); br != std::string_view::npos) {
      f.isArray = true;
      decl = trim(decl.substr(0, br));
    }
  }
  const size_t sp = decl.find_last_of(" \t*");
  f.name = std::string(sp == std::string_view::npos ? decl : decl.substr(sp + 1));
  const auto offset = attribute(line, "offset");
  const auto size = attribute(line, "size");
  if (f.name.empty() || !offset || !size || *offset < 0 || *size < 0 || *offset > 0xFFFF || *size > 0xFFFF)
    return std::nullopt;
  f.offset = static_cast<uint32_t>(*offset);
  f.size = static_cast<uint32_t>(*size);
  f.isSigned = attribute(line, "signed").value_or(0) != 0;
  return f;
}

}  // namespace

const FormatField* EventFormat::field(std::string_view fieldName) const {
  for (const auto& f : fields)
    if (f.name == fieldName) return &f;
  return nullptr;
}

std::optional<EventIdentity> parseEventIdentity(std::string_view text) {
  EventIdentity e;
  forEachLine(text, [&](std::string_view line, std::string_view) {
    line = trim(line);
    if (line.starts_with("name:")) {
      e.name = std::string(trim(line.substr(5)));
    } else if (line.starts_with("ID:")) {
      if (auto id = parseInt(line.substr(3)); id && *id >= 0 && *id <= 0xFFFF) e.id = static_cast<int>(*id);
    } else if (line.starts_with("format:")) {
      return false;  // name and ID come first in every kernel since 2.6.31
    }
    return true;
  });
  if (e.name.empty() || e.id < 0) return std::nullopt;
  return e;
}

std::optional<EventFormat> parseEventFormat(std::string_view text, std::string_view system) {
  EventFormat e;
  e.system = std::string(system);
  bool bad = false;
  forEachLine(text, [&](std::string_view raw, std::string_view rest) {
    const std::string_view line = trim(raw);
    if (line.starts_with("name:")) {
      e.name = std::string(trim(line.substr(5)));
    } else if (line.starts_with("ID:")) {
      if (auto id = parseInt(line.substr(3)); id && *id >= 0 && *id <= 0xFFFF) e.id = static_cast<int>(*id);
    } else if (line.starts_with("field")) {
      auto f = parseFieldLine(line);
      if (!f) {
        bad = true;
        return false;
      }
      e.fields.push_back(std::move(*f));
    } else if (line.starts_with("print fmt:")) {
      // The print fmt is the rest of the file (it may span lines on old kernels).
      const std::string_view first = trim(line.substr(10));
      e.printFmt = std::string(first);
      if (!rest.empty()) e.printFmt.append("\n").append(rest);
      return false;
    }
    return true;
  });
  if (bad || e.name.empty() || e.id < 0) return std::nullopt;
  return e;
}

std::optional<HeaderPage> parseHeaderPage(std::string_view text) {
  HeaderPage h;
  bool haveCommit = false;
  bool haveData = false;
  forEachLine(text, [&](std::string_view line, std::string_view) {
    line = trim(line);
    if (!line.starts_with("field")) return true;
    auto f = parseFieldLine(line);
    if (!f) return true;
    if (f->name == "timestamp") {
      h.timestampSize = f->size;
    } else if (f->name == "commit") {
      h.commitOffset = f->offset;
      h.commitSize = f->size;
      haveCommit = true;
    } else if (f->name == "data") {
      h.dataOffset = f->offset;
      h.dataSize = f->size;
      haveData = true;
    }
    return true;
  });
  if (!haveCommit || !haveData || h.timestampSize != 8 || (h.commitSize != 4 && h.commitSize != 8) ||
      h.commitOffset != 8 || h.dataOffset < h.commitOffset + h.commitSize || h.dataOffset > 64)
    return std::nullopt;
  return h;
}

}  // namespace importers::tracedat
