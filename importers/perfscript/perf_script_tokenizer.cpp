#include "importers/perfscript/perf_script_tokenizer.h"

#include <charconv>
#include <cstdint>

namespace importers::perfscript {

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isSpace(char c) { return c == ' ' || c == '\t'; }
bool isHex(char c) { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && isSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && isSpace(s.back())) s.remove_suffix(1);
  return s;
}

template <typename T>
bool parseNumber(std::string_view s, T& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

// perf prints "%lu.%06lu" (or "%lu.%09lu" with --ns). A timestamp token ends
// right before `colon`; returns its start, or npos.
size_t timestampStart(std::string_view line, size_t colon, int& fracDigits) {
  size_t j = colon;
  size_t frac = 0;
  while (j > 0 && isDigit(line[j - 1])) --j, ++frac;
  if (frac == 0 || frac > 9 || j == 0 || line[j - 1] != '.') return std::string_view::npos;
  --j;
  size_t secs = 0;
  while (j > 0 && isDigit(line[j - 1])) --j, ++secs;
  if (secs == 0 || secs > 12 || (j > 0 && !isSpace(line[j - 1]))) return std::string_view::npos;
  fracDigits = static_cast<int>(frac);
  return j;
}

// Parses "[comm] tid|pid/tid [[cpu]]" ending at `end`.
bool parsePrefix(std::string_view line, size_t end, ScriptLine& out) {
  size_t p = end;
  while (p > 0 && isSpace(line[p - 1])) --p;
  out.cpu = -1;
  if (p > 0 && line[p - 1] == ']') {
    const size_t close = p - 1;
    const size_t open = line.rfind('[', close);
    if (open == std::string_view::npos) return false;
    int cpu = 0;
    if (!parseNumber(line.substr(open + 1, close - open - 1), cpu) || cpu < 0) return false;
    out.cpu = cpu;
    p = open;
    while (p > 0 && isSpace(line[p - 1])) --p;
  }
  const size_t tokEnd = p;
  while (p > 0 && !isSpace(line[p - 1])) --p;
  const std::string_view tok = line.substr(p, tokEnd - p);
  const size_t slash = tok.find('/');
  int32_t tid = 0;
  if (slash == std::string_view::npos) {
    if (!parseNumber(tok, tid)) return false;
    out.pid = -1;
  } else {
    int32_t pid = 0;
    if (!parseNumber(tok.substr(0, slash), pid) || !parseNumber(tok.substr(slash + 1), tid)) return false;
    out.pid = pid;
  }
  out.tid = tid;
  out.comm = trim(line.substr(0, p));
  return true;
}

// "sched:sched_switch" -> ("sched", "sched_switch"); "cycles:u" stays whole:
// a short all-letter suffix is an event modifier, not a tracepoint name.
void splitEventName(std::string_view name, ScriptLine& out) {
  const size_t colon = name.find(':');
  out.system = {};
  out.event = name;
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == name.size()) return;
  const std::string_view suffix = name.substr(colon + 1);
  if (suffix.size() <= 3 && suffix.find('_') == std::string_view::npos) return;
  out.system = name.substr(0, colon);
  out.event = suffix;
}

}  // namespace

LineKind tokenizeLine(std::string_view line, ScriptLine& out) {
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  const std::string_view body = trim(line);
  if (body.empty() || body.front() == '#') return LineKind::Skip;

  for (size_t colon = line.find(':'); colon != std::string_view::npos; colon = line.find(':', colon + 1)) {
    if (colon + 1 < line.size() && line[colon + 1] != ' ') continue;
    int frac = 0;
    const size_t tsBegin = timestampStart(line, colon, frac);
    if (tsBegin == std::string_view::npos) continue;
    if (!parsePrefix(line, tsBegin, out)) continue;
    const std::string_view tsText = line.substr(tsBegin, colon - tsBegin);
    const size_t dot = tsText.find('.');
    int64_t secs = 0;
    int64_t fraction = 0;
    if (!parseNumber(tsText.substr(0, dot), secs) || !parseNumber(tsText.substr(dot + 1), fraction)) continue;
    // Beyond 9223372035 s the nanoseconds overflow int64: corrupt text, not a time.
    if (secs > INT64_MAX / 1000000000 - 1) continue;
    for (int d = frac; d < 9; ++d) fraction *= 10;
    out.ts = secs * 1000000000 + fraction;
    out.fractionDigits = frac;

    // The event name is the first token after the timestamp that ends in ':'
    // (a period or other numeric column may come first with -F).
    std::string_view rest = line.substr(colon + 1);
    while (true) {
      rest = trim(rest);
      if (rest.empty()) return LineKind::Malformed;
      const size_t sp = rest.find_first_of(" \t");
      const std::string_view tok = rest.substr(0, sp);
      rest = sp == std::string_view::npos ? std::string_view{} : rest.substr(sp);
      if (tok.size() > 1 && tok.back() == ':') {
        splitEventName(tok.substr(0, tok.size() - 1), out);
        out.args = trim(rest);
        return LineKind::Sample;
      }
      int64_t ignored = 0;
      if (!parseNumber(tok, ignored)) return LineKind::Malformed;
    }
  }
  // Callchain lines: an indented hex address, then the symbol.
  if (isSpace(line.front())) {
    size_t n = 0;
    while (n < body.size() && isHex(body[n])) ++n;
    if (n >= 4 && (n == body.size() || isSpace(body[n]))) return LineKind::Skip;
  }
  return LineKind::Malformed;
}

std::optional<std::string_view> valueBetween(std::string_view args, std::string_view key, std::string_view nextKey) {
  size_t at = 0;
  // "key=" must start the text or follow a space, so "comm=" does not match "prev_comm=".
  while (true) {
    at = args.find(key, at);
    if (at == std::string_view::npos) return std::nullopt;
    if ((at == 0 || args[at - 1] == ' ') && at + key.size() < args.size() && args[at + key.size()] == '=') break;
    ++at;
  }
  const size_t begin = at + key.size() + 1;
  if (nextKey.empty()) {
    const size_t sp = args.find(' ', begin);
    return args.substr(begin, sp == std::string_view::npos ? std::string_view::npos : sp - begin);
  }
  for (size_t end = args.find(nextKey, begin); end != std::string_view::npos; end = args.find(nextKey, end + 1)) {
    if (end > 0 && args[end - 1] == ' ' && end + nextKey.size() < args.size() && args[end + nextKey.size()] == '=')
      return args.substr(begin, end - 1 - begin);
  }
  return std::nullopt;
}

std::optional<int64_t> intValue(std::string_view args, std::string_view key) {
  const auto v = valueBetween(args, key, {});
  if (!v) return std::nullopt;
  int64_t out = 0;
  if (!parseNumber(*v, out)) return std::nullopt;
  return out;
}

bool splitFields(std::string_view args, std::initializer_list<std::string_view> needles, std::string_view* values) {
  const std::string_view* needle = needles.begin();
  if (args.substr(0, needle->size()) != *needle) return false;
  size_t pos = needle->size();
  for (size_t i = 0; i < needles.size(); ++i, ++needle) {
    if (i + 1 == needles.size()) {
      const size_t sp = args.find(' ', pos);
      values[i] = args.substr(pos, sp == std::string_view::npos ? std::string_view::npos : sp - pos);
      return true;
    }
    const std::string_view next = needle[1];
    const size_t end = args.find(next, pos);
    if (end == std::string_view::npos) return false;
    values[i] = args.substr(pos, end - pos);
    pos = end + next.size();
  }
  return false;
}

std::optional<int64_t> toInt(std::string_view value) {
  int64_t out = 0;
  if (!parseNumber(value, out)) return std::nullopt;
  return out;
}

core::TaskState decodePrevState(std::string_view text) {
  if (text.empty()) return core::TaskState::Unknown;
  if (isDigit(text.front())) {
    uint64_t raw = 0;
    const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    const std::string_view digits = hex ? text.substr(2) : text;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), raw, hex ? 16 : 10);
    if (ec != std::errc() || p != digits.data() + digits.size()) return core::TaskState::Unknown;
    return core::taskStateFromRaw(raw, core::guessPrevStateEncoding(raw)).value_or(core::TaskState::Unknown);
  }
  return core::taskStateFromLetters(text).value_or(core::TaskState::Unknown);
}

}  // namespace importers::perfscript
