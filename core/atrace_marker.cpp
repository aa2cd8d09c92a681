#include "core/atrace_marker.h"

#include <charconv>

namespace core {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\0'))
    s.remove_suffix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return s;
}

// Splits off the text before the next '|'; the rest stays in `s` (empty at the end).
std::string_view nextField(std::string_view& s) {
  const size_t bar = s.find('|');
  const std::string_view field = s.substr(0, bar);
  s = bar == std::string_view::npos ? std::string_view{} : s.substr(bar + 1);
  return field;
}

bool parseTgid(std::string_view field, int32_t& out) {
  field = trim(field);
  if (field.empty()) return false;
  const auto [p, ec] = std::from_chars(field.data(), field.data() + field.size(), out);
  return ec == std::errc() && p == field.data() + field.size();
}

}  // namespace

AtraceMarker parseAtraceMarker(std::string_view raw) {
  const std::string_view text = trim(raw);
  AtraceMarker m;
  m.name = text;
  if (text.size() < 1 || (text.size() > 1 && text[1] != '|')) return m;
  std::string_view rest = text.size() > 2 ? text.substr(2) : std::string_view{};
  const char type = text[0];
  if (type == 'E') {
    // "E", "E|tgid" or "E|tgid|name": the end of the thread's innermost slice.
    int32_t tgid = -1;
    if (!rest.empty() && !parseTgid(nextField(rest), tgid)) return m;
    m.type = AtraceMarker::Type::End;
    m.tgid = tgid;
    m.name = {};
    return m;
  }
  int32_t tgid = -1;
  if (rest.empty() || !parseTgid(nextField(rest), tgid)) return m;
  switch (type) {
    case 'B':
    case 'I': {
      // The name is the rest: names may hold '|' themselves.
      if (rest.empty()) return m;
      m.type = type == 'B' ? AtraceMarker::Type::Begin : AtraceMarker::Type::Instant;
      m.tgid = tgid;
      m.name = rest;
      return m;
    }
    case 'C': {
      // "C|tgid|name|value", newer writers append "|category".
      const std::string_view name = nextField(rest);
      const std::string_view value = trim(nextField(rest));
      double v = 0;
      const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (name.empty() || ec != std::errc() || p != value.data() + value.size()) return m;
      m.type = AtraceMarker::Type::Counter;
      m.tgid = tgid;
      m.name = name;
      m.value = v;
      return m;
    }
    case 'S':
    case 'F': {
      const std::string_view name = nextField(rest);
      const std::string_view cookie = trim(nextField(rest));
      int64_t c = 0;
      const auto [p, ec] = std::from_chars(cookie.data(), cookie.data() + cookie.size(), c);
      if (name.empty() || ec != std::errc() || p != cookie.data() + cookie.size()) return m;
      m.type = type == 'S' ? AtraceMarker::Type::AsyncBegin : AtraceMarker::Type::AsyncEnd;
      m.tgid = tgid;
      m.name = name;
      m.cookie = c;
      return m;
    }
    default: return m;
  }
}

}  // namespace core
