#include "importers/ftrace/ftrace_line_tokenizer.h"

#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/sched_builder.h"

namespace importers::ftrace {

namespace {

constexpr size_t npos = std::string_view::npos;

inline bool isDigit(char c) { return c >= '0' && c <= '9'; }
inline bool isNameChar(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.';
}
// The latency layout prints a mark after "us" telling how far the next event is.
inline bool isLatencyMark(char c) {
  return c == ' ' || c == '+' || c == '!' || c == '#' || c == '*' || c == '@' || c == '$';
}

// Decimal integer at `pos` (optionally negative). A hand loop rather than
// std::from_chars: it runs several times per line and dominated the profile.
template <typename Int>
inline bool parseIntAt(std::string_view s, size_t& pos, Int& value) {
  static_assert(sizeof(Int) <= 8);
  const size_t n = s.size();
  size_t p = pos;
  const bool negative = p < n && s[p] == '-';
  if (negative) ++p;
  const size_t start = p;
  uint64_t v = 0;
  while (p < n && isDigit(s[p])) {
    if (p - start >= 18) return false;  // cannot fit; no real field is that long
    v = v * 10 + static_cast<uint64_t>(s[p] - '0');
    ++p;
  }
  if (p == start) return false;
  if (negative) {
    if (v > static_cast<uint64_t>(std::numeric_limits<Int>::max()) + 1) return false;
    value = static_cast<Int>(0 - v);
  } else {
    if (v > static_cast<uint64_t>(std::numeric_limits<Int>::max())) return false;
    value = static_cast<Int>(v);
  }
  pos = p;
  return true;
}

inline bool startsWithAt(std::string_view s, size_t pos, std::string_view prefix) {
  return s.size() >= pos + prefix.size() && std::memcmp(s.data() + pos, prefix.data(), prefix.size()) == 0;
}

// If `key` is at `pos`, steps over it and reads an int after it.
template <typename Int>
bool optionalIntField(std::string_view s, size_t& pos, std::string_view key, Int& value) {
  if (!startsWithAt(s, pos, key)) return false;
  size_t p = pos + key.size();
  if (!parseIntAt(s, p, value)) return false;
  pos = p;
  return true;
}

// "comm=VALUE pid=": the comm may hold spaces, so it ends where the next key starts.
bool stringUntil(std::string_view s, size_t& pos, std::string_view nextKey, std::string_view& value) {
  const size_t q = s.find(nextKey, pos);
  if (q == npos) return false;
  value = s.substr(pos, q - pos);
  pos = q + nextKey.size();
  return true;
}

std::string_view trimRight(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// libtraceevent plugin form "comm:tid [prio]" (the comm may hold ':').
bool parseCommTidPrio(std::string_view s, std::string_view& comm, int32_t& tid, int32_t& prio) {
  s = trimRight(s);
  if (s.size() < 5 || s.back() != ']') return false;
  const size_t lb = s.rfind('[');
  if (lb == npos || lb == 0 || s[lb - 1] != ' ') return false;
  size_t p = lb + 1;
  if (!parseIntAt(s, p, prio) || p != s.size() - 1) return false;
  const std::string_view head = s.substr(0, lb - 1);
  const size_t colon = head.rfind(':');
  if (colon == npos) return false;
  p = colon + 1;
  if (!parseIntAt(head, p, tid) || p != head.size()) return false;
  comm = head.substr(0, colon);
  return true;
}

}  // namespace

std::optional<int64_t> parseSecondsToNs(std::string_view t) {
  size_t i = 0;
  int64_t sec = 0;
  const size_t n = t.size();
  while (i < n && isDigit(t[i])) {
    if (i >= 12) return std::nullopt;  // beyond any trace clock in seconds; would overflow in ns
    sec = sec * 10 + (t[i] - '0');
    ++i;
  }
  if (i == 0) return std::nullopt;
  int64_t frac = 0;
  int digits = 0;
  if (i < n && t[i] == '.') {
    ++i;
    while (i < n && isDigit(t[i])) {
      if (digits < 9) {
        frac = frac * 10 + (t[i] - '0');
        ++digits;
      }
      ++i;
    }
  }
  if (i != n) return std::nullopt;
  // 12 digits still overflow int64 nanoseconds past 9223372035 s (~292 years).
  if (sec > INT64_MAX / 1000000000 - 1) return std::nullopt;
  static constexpr int64_t kScale[10] = {1000000000, 100000000, 10000000, 1000000, 100000,
                                         10000,      1000,      100,      10,      1};
  return sec * 1000000000 + frac * kScale[digits];
}

namespace {

// Everything before the ':' that ends the timestamp, read backwards so that the
// comm, which comes first and may hold anything, is simply what is left.
bool parseHead(std::string_view line, size_t colon, LineFields& out) {
  size_t i = colon;
  bool relative = false;
  if (i >= 3 && isLatencyMark(line[i - 1]) && line[i - 3] == 'u' && line[i - 2] == 's') {
    relative = true;
    i -= 3;
  }
  const size_t tsEnd = i;
  while (i > 0 && (isDigit(line[i - 1]) || line[i - 1] == '.')) --i;
  if (i == tsEnd || i == 0 || line[i - 1] != ' ') return false;
  const std::string_view tsText = line.substr(i, tsEnd - i);
  if (relative) {
    int64_t us = 0;
    size_t p = 0;
    if (!parseIntAt(tsText, p, us) || p != tsText.size() || us > INT64_MAX / 1000) return false;
    out.ts = us * 1000;
  } else {
    const auto ns = parseSecondsToNs(tsText);
    if (!ns) return false;
    out.ts = *ns;
  }
  out.relativeUs = relative;

  while (i > 0 && line[i - 1] == ' ') --i;
  size_t tokEnd = i;
  while (i > 0 && line[i - 1] != ' ') --i;
  std::string_view tok = line.substr(i, tokEnd - i);
  if (tok.empty()) return false;

  std::string_view flags;
  bool haveCpu = false;
  if (tok.front() != '[' && tok.back() != ']') {
    if (isDigit(tok.front())) {
      // Latency layout: "%3d" CPU glued to the flags ("1d..2.").
      size_t p = 0;
      if (!parseIntAt(tok, p, out.cpu)) return false;
      flags = tok.substr(p);
      haveCpu = true;
    } else {
      flags = tok;
      while (i > 0 && line[i - 1] == ' ') --i;
      tokEnd = i;
      while (i > 0 && line[i - 1] != ' ') --i;
      tok = line.substr(i, tokEnd - i);
    }
    if (flags.size() > 8) return false;
  }
  if (!haveCpu) {
    if (tok.size() < 3 || tok.front() != '[' || tok.back() != ']') return false;
    size_t p = 1;
    if (!parseIntAt(tok, p, out.cpu) || p != tok.size() - 1) return false;
  }
  if (out.cpu < 0) return false;
  out.hasFlags = !flags.empty();
  out.irq = 0;
  if (flags.size() >= 3) {
    // Third flag: hardirq/softirq context (kernel/trace/trace_output.c, trace_print_lat_fmt).
    switch (flags[2]) {
      case 'h': out.irq = core::kCtxHardIrq; break;
      case 's': out.irq = core::kCtxSoftIrq; break;
      case 'H': out.irq = core::kCtxHardIrq | core::kCtxSoftIrq; break;
      case 'z': out.irq = core::kCtxNmi; break;
      case 'Z': out.irq = core::kCtxNmi | core::kCtxHardIrq; break;
      default: break;
    }
  }

  while (i > 0 && line[i - 1] == ' ') --i;
  out.tgid = -1;
  if (i > 0 && line[i - 1] == ')') {
    // "( 1234)" or "(-----)" from the record-tgid option.
    const size_t close = i - 1;
    size_t open = close;
    while (open > 0 && line[open] != '(' && close - open < 16) --open;
    if (line[open] != '(') return false;
    std::string_view inside = line.substr(open + 1, close - open - 1);
    while (!inside.empty() && inside.front() == ' ') inside.remove_prefix(1);
    if (!inside.empty() && isDigit(inside.front())) {
      size_t p = 0;
      if (!parseIntAt(inside, p, out.tgid) || p != inside.size()) return false;
    } else if (inside.find_first_not_of('-') != npos) {
      return false;
    }
    i = open;
    while (i > 0 && line[i - 1] == ' ') --i;
  }
  const size_t pidEnd = i;
  while (i > 0 && isDigit(line[i - 1])) --i;
  if (i == pidEnd || pidEnd - i > 10 || i == 0 || line[i - 1] != '-') return false;
  size_t p = i;
  if (!parseIntAt(line, p, out.tid)) return false;
  const size_t dash = i - 1;
  size_t commStart = 0;
  while (commStart < dash && line[commStart] == ' ') ++commStart;
  out.comm = line.substr(commStart, dash - commStart);
  return true;
}

bool parseTail(std::string_view line, size_t pos, LineFields& out) {
  const size_t n = line.size();
  while (pos < n && line[pos] == ' ') ++pos;
  const size_t nameStart = pos;
  while (pos < n && isNameChar(line[pos])) ++pos;
  if (pos == nameStart) return false;
  out.name = line.substr(nameStart, pos - nameStart);
  if (pos < n && line[pos] == ':') {
    out.form = NameForm::Event;
    ++pos;
    while (pos < n && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
    out.payload = line.substr(pos);
    return true;
  }
  if (pos < n && line[pos] == '(') {
    out.form = NameForm::SyscallEnter;
    out.payload = line.substr(pos);
    return true;
  }
  if (startsWithAt(line, pos, " -> ")) {
    out.form = NameForm::SyscallExit;
    out.payload = line.substr(pos + 4);
    return true;
  }
  if (startsWithAt(line, pos, " <-")) {
    out.form = NameForm::Function;
    out.payload = line.substr(pos + 3);
    return true;
  }
  return false;
}

}  // namespace

bool tokenizeLine(std::string_view line, LineFields& out) {
  // The timestamp ends in ": ". A ':' inside a comm ("kworker/u12:1") is passed
  // over; a comm holding ": " only costs an attempt.
  int attempts = 0;
  size_t from = 0;
  while (attempts < 4 && from < line.size()) {
    const void* hit = std::memchr(line.data() + from, ':', line.size() - from);
    if (!hit) return false;
    const auto colon = static_cast<size_t>(static_cast<const char*>(hit) - line.data());
    from = colon + 1;
    if (from >= line.size() || line[from] != ' ') continue;
    ++attempts;
    if (parseHead(line, colon, out)) return parseTail(line, colon + 2, out);
  }
  return false;
}

std::optional<LostEvents> parseLostEventsLine(std::string_view line) {
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  line = trimRight(line);
  if (!startsWithAt(line, 0, "CPU:")) return std::nullopt;
  size_t p = 4;
  LostEvents lost;
  if (!parseIntAt(line, p, lost.cpu) || lost.cpu < 0) return std::nullopt;
  if (!startsWithAt(line, p, " [")) return std::nullopt;
  p += 2;
  if (startsWithAt(line, p, "LOST ")) {
    p += 5;
    if (!parseIntAt(line, p, lost.count)) return std::nullopt;
    if (line.substr(p) != " EVENTS]") return std::nullopt;
    return lost;
  }
  if (line.substr(p) == "EVENTS DROPPED]") return lost;
  if (!parseIntAt(line, p, lost.count)) return std::nullopt;
  if (line.substr(p) != " EVENTS DROPPED]") return std::nullopt;
  return lost;
}

std::optional<uint64_t> parseRawState(std::string_view text) {
  uint64_t v = 0;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    auto [ptr, ec] = std::from_chars(text.data() + 2, text.data() + text.size(), v, 16);
    if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
    return v;
  }
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

std::optional<uint64_t> pluginLettersToRaw(std::string_view text) {
  // libtraceevent plugin_sched_switch.c write_state(): one letter per bit of
  // "SDTtZXxW", joined by '|'; no bit set prints "R".
  static constexpr std::string_view kBits = "SDTtZXxW";
  if (text == "R" || text == "R+") return 0;
  uint64_t raw = 0;
  for (char c : text) {
    if (c == '|') continue;
    const size_t bit = kBits.find(c);
    if (bit == npos) return std::nullopt;
    raw |= uint64_t{1} << bit;
  }
  if (raw == 0) return std::nullopt;
  return raw;
}

bool parseSwitch(std::string_view s, SwitchFields& out) {
  if (startsWithAt(s, 0, "prev_comm=")) {
    size_t p = 10;
    if (!stringUntil(s, p, " prev_pid=", out.prevComm)) return false;
    if (!parseIntAt(s, p, out.prevTid)) return false;
    out.prevPrio = core::kPrioUnknown;
    optionalIntField(s, p, " prev_prio=", out.prevPrio);
    if (!startsWithAt(s, p, " prev_state=")) return false;
    p += 12;
    const size_t stateEnd = s.find(' ', p);
    if (stateEnd == npos) return false;
    out.prevState = s.substr(p, stateEnd - p);
    out.stateForm = !out.prevState.empty() && isDigit(out.prevState.front()) ? StateForm::Raw : StateForm::Letters;
    p = stateEnd;
    while (p < s.size() && s[p] == ' ') ++p;
    if (startsWithAt(s, p, "==>")) {
      p += 3;
      while (p < s.size() && s[p] == ' ') ++p;
    }
    if (!startsWithAt(s, p, "next_comm=")) return false;
    p += 10;
    if (!stringUntil(s, p, " next_pid=", out.nextComm)) return false;
    if (!parseIntAt(s, p, out.nextTid)) return false;
    out.nextPrio = core::kPrioUnknown;
    optionalIntField(s, p, " next_prio=", out.nextPrio);
    return true;
  }
  // Plugin form: "prev:1 [120] S ==> next:2 [120]".
  const size_t arrow = s.find(" ==> ");
  if (arrow == npos) return false;
  const std::string_view left = trimRight(s.substr(0, arrow));
  const size_t sp = left.rfind(' ');
  if (sp == npos) return false;
  out.prevState = left.substr(sp + 1);
  out.stateForm = !out.prevState.empty() && isDigit(out.prevState.front()) ? StateForm::Raw : StateForm::PluginLetters;
  if (!parseCommTidPrio(left.substr(0, sp), out.prevComm, out.prevTid, out.prevPrio)) return false;
  return parseCommTidPrio(s.substr(arrow + 5), out.nextComm, out.nextTid, out.nextPrio);
}

bool parseWake(std::string_view s, WakeFields& out) {
  out.prio = core::kPrioUnknown;
  out.targetCpu = -1;
  if (startsWithAt(s, 0, "comm=")) {
    size_t p = 5;
    if (!stringUntil(s, p, " pid=", out.comm)) return false;
    if (!parseIntAt(s, p, out.tid)) return false;
    optionalIntField(s, p, " prio=", out.prio);
    int32_t success = 0;
    optionalIntField(s, p, " success=", success);
    optionalIntField(s, p, " target_cpu=", out.targetCpu);
    return true;
  }
  // Plugin form: "comm:1 [120] [success=1 ]CPU:001".
  std::string_view rest = trimRight(s);
  const size_t cpuPos = rest.rfind(" CPU:");
  if (cpuPos != npos) {
    size_t p = cpuPos + 5;
    if (!parseIntAt(rest, p, out.targetCpu) || p != rest.size()) return false;
    rest = rest.substr(0, cpuPos);
  }
  if (const size_t succ = rest.rfind(" success="); succ != npos && rest.back() != ']') rest = rest.substr(0, succ);
  return parseCommTidPrio(rest, out.comm, out.tid, out.prio);
}

bool parseMigrate(std::string_view s, MigrateFields& out) {
  if (!startsWithAt(s, 0, "comm=")) return false;
  size_t p = 5;
  if (!stringUntil(s, p, " pid=", out.comm)) return false;
  if (!parseIntAt(s, p, out.tid)) return false;
  out.prio = core::kPrioUnknown;
  optionalIntField(s, p, " prio=", out.prio);
  if (!optionalIntField(s, p, " orig_cpu=", out.origCpu)) return false;
  return optionalIntField(s, p, " dest_cpu=", out.destCpu);
}

bool parseFork(std::string_view s, ForkFields& out) {
  size_t p = 0;
  std::string_view pidKey;
  if (startsWithAt(s, 0, "comm=")) {
    p = 5;
    pidKey = " pid=";
  } else if (startsWithAt(s, 0, "parent_comm=")) {
    p = 12;
    pidKey = " parent_pid=";
  } else {
    return false;
  }
  if (!stringUntil(s, p, pidKey, out.parentComm)) return false;
  if (!parseIntAt(s, p, out.parentTid)) return false;
  if (!startsWithAt(s, p, " child_comm=")) return false;
  p += 12;
  if (!stringUntil(s, p, " child_pid=", out.childComm)) return false;
  return parseIntAt(s, p, out.childTid);
}

bool parseExec(std::string_view s, ExecFields& out) {
  if (!startsWithAt(s, 0, "filename=")) return false;
  size_t p = 9;
  if (!stringUntil(s, p, " pid=", out.filename)) return false;
  if (!parseIntAt(s, p, out.tid)) return false;
  out.oldTid = out.tid;
  optionalIntField(s, p, " old_pid=", out.oldTid);
  return true;
}

bool parseExit(std::string_view s, ExitFields& out) {
  if (!startsWithAt(s, 0, "comm=")) return false;
  size_t p = 5;
  if (!stringUntil(s, p, " pid=", out.comm)) return false;
  if (!parseIntAt(s, p, out.tid)) return false;
  out.prio = core::kPrioUnknown;
  optionalIntField(s, p, " prio=", out.prio);
  return true;
}

bool parseRename(std::string_view s, RenameFields& out) {
  if (!startsWithAt(s, 0, "pid=")) return false;
  size_t p = 4;
  if (!parseIntAt(s, p, out.tid)) return false;
  if (!startsWithAt(s, p, " oldcomm=")) return false;
  p += 9;
  if (!stringUntil(s, p, " newcomm=", out.oldComm)) return false;
  const size_t oom = s.find(" oom_", p);
  out.newComm = trimRight(s.substr(p, oom == npos ? npos : oom - p));
  return true;
}

}  // namespace importers::ftrace
