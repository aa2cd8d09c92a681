#include "importers/tracedat/sched_event_decoder.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <optional>

#include "core/sched_builder.h"

namespace importers::tracedat {

namespace {

// --- A tiny evaluator for the integer expressions in print fmts: "(1024-1)",
// "((((0x0000 | 0x0001 | ... | 0x0040) + 1) << 1) - 1)". C precedence for the
// operators kernels use there: | ^ & << >> + - and parentheses.
class ExprParser {
 public:
  explicit ExprParser(std::string_view s) : m_s(s) {}
  std::optional<uint64_t> parse() {
    auto v = orExpr();
    skipSpace();
    if (!v || m_pos != m_s.size()) return std::nullopt;
    return v;
  }

 private:
  void skipSpace() {
    while (m_pos < m_s.size() && (m_s[m_pos] == ' ' || m_s[m_pos] == '\t' || m_s[m_pos] == '\n')) ++m_pos;
  }
  bool eat(std::string_view op) {
    skipSpace();
    if (m_s.substr(m_pos, op.size()) != op) return false;
    // "|" must not eat half of "||", "<" never appears alone here.
    if (op.size() == 1 && m_pos + 1 < m_s.size() && m_s[m_pos + 1] == op[0] && (op == "|" || op == "&"))
      return false;
    m_pos += op.size();
    return true;
  }
  std::optional<uint64_t> orExpr() {
    auto v = xorExpr();
    while (v && eat("|")) {
      auto r = xorExpr();
      if (!r) return std::nullopt;
      *v |= *r;
    }
    return v;
  }
  std::optional<uint64_t> xorExpr() {
    auto v = andExpr();
    while (v && eat("^")) {
      auto r = andExpr();
      if (!r) return std::nullopt;
      *v ^= *r;
    }
    return v;
  }
  std::optional<uint64_t> andExpr() {
    auto v = shiftExpr();
    while (v && eat("&")) {
      auto r = shiftExpr();
      if (!r) return std::nullopt;
      *v &= *r;
    }
    return v;
  }
  std::optional<uint64_t> shiftExpr() {
    auto v = addExpr();
    while (v) {
      if (eat("<<")) {
        auto r = addExpr();
        if (!r || *r >= 64) return std::nullopt;
        *v <<= *r;
      } else if (eat(">>")) {
        auto r = addExpr();
        if (!r || *r >= 64) return std::nullopt;
        *v >>= *r;
      } else {
        break;
      }
    }
    return v;
  }
  std::optional<uint64_t> addExpr() {
    auto v = primary();
    while (v) {
      if (eat("+")) {
        auto r = primary();
        if (!r) return std::nullopt;
        *v += *r;
      } else if (eat("-")) {
        auto r = primary();
        if (!r) return std::nullopt;
        *v -= *r;
      } else {
        break;
      }
    }
    return v;
  }
  std::optional<uint64_t> primary() {
    if (++m_depth > 64) return std::nullopt;
    skipSpace();
    std::optional<uint64_t> out;
    if (eat("(")) {
      out = orExpr();
      if (!out || !eat(")")) out.reset();
    } else {
      int base = 10;
      if (m_s.substr(m_pos, 2) == "0x" || m_s.substr(m_pos, 2) == "0X") {
        base = 16;
        m_pos += 2;
      }
      uint64_t v = 0;
      const char* b = m_s.data() + m_pos;
      const auto [p, ec] = std::from_chars(b, m_s.data() + m_s.size(), v, base);
      if (ec == std::errc() && p != b) {
        m_pos += static_cast<size_t>(p - b);
        while (m_pos < m_s.size() && (m_s[m_pos] == 'U' || m_s[m_pos] == 'L' || m_s[m_pos] == 'u' ||
                                      m_s[m_pos] == 'l'))
          ++m_pos;
        out = v;
      }
    }
    --m_depth;
    return out;
  }
  std::string_view m_s;
  size_t m_pos = 0;
  int m_depth = 0;
};

// Index of the ')' or ',' that ends the argument starting at `from` (depth 0),
// skipping string literals; npos if unbalanced.
size_t argumentEnd(std::string_view s, size_t from) {
  int depth = 0;
  bool inString = false;
  for (size_t i = from; i < s.size(); ++i) {
    const char c = s[i];
    if (inString) {
      if (c == '\\') ++i;
      else if (c == '"') inString = false;
      continue;
    }
    if (c == '"') inString = true;
    else if (c == '(' || c == '{') ++depth;
    else if (c == ')' || c == '}') {
      if (depth == 0) return i;
      --depth;
    } else if (c == ',' && depth == 0) {
      return i;
    }
  }
  return std::string_view::npos;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

// "REC->prev_state & (1024-1)" -> mask; "REC->prev_state" -> all bits.
std::optional<uint64_t> prevStateMask(std::string_view arg) {
  arg = trimmed(arg);
  while (arg.size() >= 2 && arg.front() == '(' && arg.back() == ')' && argumentEnd(arg, 1) == arg.size() - 1)
    arg = trimmed(arg.substr(1, arg.size() - 2));
  constexpr std::string_view kField = "REC->prev_state";
  if (!arg.starts_with(kField)) return std::nullopt;
  arg = trimmed(arg.substr(kField.size()));
  if (arg.empty()) return ~uint64_t{0};
  if (arg.front() != '&') return std::nullopt;
  return ExprParser(arg.substr(1)).parse();
}

std::optional<std::pair<uint64_t, std::string>> parseFlagPair(std::string_view s) {
  // { 0x0001, "S" }
  s = trimmed(s);
  if (s.size() < 2 || s.front() != '{' || s.back() != '}') return std::nullopt;
  s = s.substr(1, s.size() - 2);
  const size_t comma = argumentEnd(s, 0);
  if (comma == std::string_view::npos || s[comma] != ',') return std::nullopt;
  const auto value = ExprParser(s.substr(0, comma)).parse();
  std::string_view str = trimmed(s.substr(comma + 1));
  if (!value || str.size() < 2 || str.front() != '"' || str.back() != '"') return std::nullopt;
  return std::make_pair(*value, std::string(str.substr(1, str.size() - 2)));
}

std::optional<int> kernelMajorMinor(std::string_view uname) {
  // "Linux host 4.19.0-... aarch64": the first token that starts with a digit and has a dot.
  size_t pos = 0;
  while (pos < uname.size()) {
    const size_t end = std::min(uname.find(' ', pos), uname.size());
    const std::string_view tok = uname.substr(pos, end - pos);
    int major = 0, minor = 0;
    const auto [p1, e1] = std::from_chars(tok.data(), tok.data() + tok.size(), major);
    if (e1 == std::errc() && p1 < tok.data() + tok.size() && *p1 == '.') {
      const auto [p2, e2] = std::from_chars(p1 + 1, tok.data() + tok.size(), minor);
      if (e2 == std::errc()) return major * 1000 + minor;
    }
    pos = end + 1;
  }
  return std::nullopt;
}

}  // namespace

void PrevStateDecoder::configure(std::string_view fmt, std::string_view uname) {
  m_parsed = false;
  m_flags.clear();
  m_mask = ~uint64_t{0};
  m_plusBit = 0;
  const size_t pf = fmt.find("__print_flags(");
  if (pf != std::string_view::npos) {
    size_t pos = pf + 14;
    const size_t maskEnd = argumentEnd(fmt, pos);
    std::optional<uint64_t> mask;
    if (maskEnd != std::string_view::npos && fmt[maskEnd] == ',') mask = prevStateMask(fmt.substr(pos, maskEnd - pos));
    size_t delimEnd = mask ? argumentEnd(fmt, maskEnd + 1) : std::string_view::npos;
    bool ok = mask.has_value() && delimEnd != std::string_view::npos;
    if (ok) {
      const std::string_view delim = trimmed(fmt.substr(maskEnd + 1, delimEnd - maskEnd - 1));
      ok = delim.size() >= 2 && delim.front() == '"' && delim.back() == '"';
      if (ok) m_delim = std::string(delim.substr(1, delim.size() - 2));
      pos = delimEnd;
    }
    while (ok && pos < fmt.size() && fmt[pos] == ',') {
      const size_t end = argumentEnd(fmt, pos + 1);
      if (end == std::string_view::npos) {
        ok = false;
        break;
      }
      auto pair = parseFlagPair(fmt.substr(pos + 1, end - pos - 1));
      if (!pair) {
        ok = false;
        break;
      }
      m_flags.push_back(std::move(*pair));
      pos = end;
    }
    ok = ok && pos < fmt.size() && fmt[pos] == ')' && !m_flags.empty();
    if (ok) {
      m_mask = *mask;
      // The preempt marker: `<expr> ? "+" : ""` after the flags.
      const size_t plus = fmt.find("? \"+\"", pos);
      if (plus != std::string_view::npos) {
        const size_t argStart = fmt.rfind(',', plus);
        if (argStart != std::string_view::npos && argStart > pos) {
          if (auto bit = prevStateMask(fmt.substr(argStart + 1, plus - argStart - 1))) m_plusBit = *bit;
        }
      }
      m_parsed = true;
    } else {
      m_flags.clear();
    }
  }

  // The raw-bit encoding, for values the letters do not name (and formats we could not read).
  bool sawIdle = false, sawLegacy = false;
  for (const auto& [bit, letters] : m_flags) {
    sawIdle |= letters == "I";
    sawLegacy |= letters == "K" || letters == "x" || letters == "W";
  }
  if (sawIdle) {
    m_encoding = core::PrevStateEncoding::Report414;
  } else if (sawLegacy) {
    m_encoding = core::PrevStateEncoding::Legacy;
  } else if (auto v = kernelMajorMinor(uname)) {
    m_encoding = *v >= 4014 ? core::PrevStateEncoding::Report414 : core::PrevStateEncoding::Legacy;
  } else {
    m_encoding = core::PrevStateEncoding::Report414;
  }
  for (auto& known : m_decoded) known.store(0, std::memory_order_relaxed);
}

std::string PrevStateDecoder::letters(uint64_t raw) const {
  if (!m_parsed) return {};
  // libtraceevent's __print_flags: each flag whose bits are all set, in table
  // order, joined by the delimiter; leftover bits in hex.
  uint64_t val = raw & m_mask;
  std::string out;
  if (val == 0) {
    out = "R";
  } else {
    bool printed = false;
    for (const auto& [bit, str] : m_flags) {
      if (bit != 0 && (val & bit) == bit) {
        if (printed) out += m_delim;
        out += str;
        printed = true;
        val &= ~bit;
      }
    }
    if (val) {
      if (printed) out += m_delim;
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(val));
      out += buf;
    }
  }
  if (m_plusBit && (raw & m_plusBit)) out += "+";
  return out;
}

core::TaskState PrevStateDecoder::decodeSlow(uint64_t raw) const {
  if (m_parsed) {
    if (auto s = core::taskStateFromLetters(letters(raw))) return *s;
  }
  return core::taskStateFromRaw(raw, m_encoding).value_or(core::TaskState::Unknown);
}

// --- EventDecoderTable ---

namespace {

FieldRef ref(const FormatField* f) {
  FieldRef r;
  if (!f || f->size == 0 || f->size > 255 || f->offset > 0xFFFF) return r;
  r.offset = static_cast<uint16_t>(f->offset);
  r.size = static_cast<uint8_t>(f->size);
  r.isSigned = f->isSigned;
  return r;
}
FieldRef intRef(const FormatField* f) {
  FieldRef r = ref(f);
  if (f && (f->isArray || f->isDataLoc || (r.size != 1 && r.size != 2 && r.size != 4 && r.size != 8))) return {};
  return r;
}
FieldRef commRef(const FormatField* f) {
  FieldRef r = ref(f);
  if (f && !f->isArray) return {};
  return r;
}

struct HotEvent {
  std::string_view name;
  EventOp kind;
};
constexpr HotEvent kHotEvents[] = {
    {"sched_switch", EventOp::Switch},       {"sched_waking", EventOp::Waking},
    {"sched_wakeup", EventOp::Wakeup},       {"sched_wakeup_new", EventOp::WakeupNew},
    {"sched_migrate_task", EventOp::Migrate}, {"sched_process_fork", EventOp::Fork},
    {"sched_process_exec", EventOp::Exec},   {"sched_process_exit", EventOp::Exit},
    {"task_rename", EventOp::Rename},
};

uint32_t endOf(FieldRef f) { return f.size ? uint32_t{f.offset} + f.size : 0; }

}  // namespace

bool EventDecoderTable::build(const std::vector<EventFormatText>& formats, std::string_view uname,
                              const DecodeConfig& config, std::string& error) {
  m_config = config;
  bool haveCommon = false;
  for (const auto& text : formats) {
    auto identity = parseEventIdentity(text.text);
    if (!identity) continue;
    const auto id = static_cast<size_t>(identity->id);
    if (id >= m_names.size()) {
      m_names.resize(id + 1);
      m_index.resize(id + 1, kNoFormat);
    }
    if (!m_names[id].empty()) continue;  // the first format of an id wins
    m_names[id] = identity->name;
    m_index[id] = kNoDecoder;

    EventOp kind = EventOp::Other;
    for (const auto& h : kHotEvents)
      if (identity->name == h.name && (text.system == "sched" || text.system == "task")) kind = h.kind;
    const core::PowerEvent power = kind == EventOp::Other ? core::powerEventOf(identity->name) : core::PowerEvent::None;
    if (power != core::PowerEvent::None) kind = EventOp::Private;
    if (kind == EventOp::Other && haveCommon) continue;
    auto format = parseEventFormat(text.text, text.system);
    if (!format) continue;
    if (!haveCommon) {
      m_type = intRef(format->field("common_type"));
      m_flags = intRef(format->field("common_flags"));
      m_pid = intRef(format->field("common_pid"));
      haveCommon = m_type.size != 0;
      m_commonLength = std::max({endOf(m_type), endOf(m_flags), endOf(m_pid)});
    }
    if (kind == EventOp::Other) continue;

    EventDecoder d;
    d.kind = kind;
    const auto& f = *format;
    switch (kind) {
      case EventOp::Switch:
        d.comm = commRef(f.field("prev_comm"));
        d.tid = intRef(f.field("prev_pid"));
        d.prio = intRef(f.field("prev_prio"));
        d.prevState = intRef(f.field("prev_state"));
        d.otherComm = commRef(f.field("next_comm"));
        d.otherTid = intRef(f.field("next_pid"));
        d.otherPrio = intRef(f.field("next_prio"));
        if (!d.tid.size || !d.otherTid.size) d.kind = EventOp::Other;
        m_prevStates.configure(f.printFmt, uname);
        break;
      case EventOp::Waking:
      case EventOp::Wakeup:
      case EventOp::WakeupNew:
        d.comm = commRef(f.field("comm"));
        d.tid = intRef(f.field("pid"));
        d.prio = intRef(f.field("prio"));
        d.cpuA = intRef(f.field("target_cpu"));
        if (!d.tid.size) d.kind = EventOp::Other;
        break;
      case EventOp::Migrate:
        d.comm = commRef(f.field("comm"));
        d.tid = intRef(f.field("pid"));
        d.prio = intRef(f.field("prio"));
        d.cpuA = intRef(f.field("orig_cpu"));
        d.cpuB = intRef(f.field("dest_cpu"));
        if (!d.tid.size || !d.cpuB.size) d.kind = EventOp::Other;
        break;
      case EventOp::Fork:
        d.comm = commRef(f.field("parent_comm"));
        d.tid = intRef(f.field("parent_pid"));
        d.otherComm = commRef(f.field("child_comm"));
        d.otherTid = intRef(f.field("child_pid"));
        if (!d.tid.size || !d.otherTid.size) d.kind = EventOp::Other;
        break;
      case EventOp::Exec: {
        d.tid = intRef(f.field("pid"));
        d.otherTid = intRef(f.field("old_pid"));
        const FormatField* fn = f.field("filename");
        if (fn && fn->isDataLoc && fn->size == 4) d.filename = ref(fn);
        if (!d.tid.size) d.kind = EventOp::Other;
        break;
      }
      case EventOp::Exit:
        d.comm = commRef(f.field("comm"));
        d.tid = intRef(f.field("pid"));
        d.prio = intRef(f.field("prio"));
        if (!d.tid.size) d.kind = EventOp::Other;
        break;
      case EventOp::Rename:
        d.tid = intRef(f.field("pid"));
        d.comm = commRef(f.field("newcomm"));
        if (!d.tid.size || !d.comm.size) d.kind = EventOp::Other;
        break;
      case EventOp::Private:
        d.power = power;
        d.fields = f.fields;
        break;
      default:
        break;
    }
    d.minLength = std::max({m_commonLength, endOf(d.tid), endOf(d.otherTid), endOf(d.prio), endOf(d.otherPrio),
                            endOf(d.cpuA), endOf(d.cpuB), endOf(d.prevState), endOf(d.filename), endOf(d.comm),
                            endOf(d.otherComm)});
    if (m_decoders.size() >= 0x7fff) continue;
    m_index[id] = static_cast<int16_t>(m_decoders.size());
    m_decoders.push_back(d);
  }
  if (!haveCommon) {
    error = "no event format declares common_type: the records cannot be identified";
    return false;
  }
  return true;
}

int64_t EventDecoderTable::convertTs(uint64_t raw) const {
  if (m_config.haveTsc2Nsec) {
    // mul_u64_u32_shr(), as trace-cmd applies TSC2NSEC (shift <= 32, checked by the layout reader).
    const uint64_t lo = raw & 0xffffffffu;
    const uint64_t hi = raw >> 32;
    uint64_t v = (lo * m_config.tscMult) >> m_config.tscShift;
    if (hi) v += (hi * m_config.tscMult) << (32 - m_config.tscShift);
    raw = v;
  }
  return static_cast<int64_t>(raw) + m_config.tsOffset;
}

__attribute__((always_inline)) inline int64_t EventDecoderTable::readInt(const uint8_t* rec, FieldRef f) const {
  const uint8_t* p = rec + f.offset;
  switch (f.size) {
    case 1:
      return f.isSigned ? int64_t{static_cast<int8_t>(*p)} : int64_t{*p};
    case 2: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      if (m_config.swap) v = __builtin_bswap16(v);
      return f.isSigned ? int64_t{static_cast<int16_t>(v)} : int64_t{v};
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      if (m_config.swap) v = __builtin_bswap32(v);
      return f.isSigned ? int64_t{static_cast<int32_t>(v)} : int64_t{v};
    }
    case 8: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      if (m_config.swap) v = __builtin_bswap64(v);
      return static_cast<int64_t>(v);
    }
    default:
      return 0;
  }
}

__attribute__((always_inline)) inline uint8_t EventDecoderTable::copyComm(const uint8_t* rec, FieldRef f,
                                                                          char* out) const {
  const size_t n = std::min<size_t>(f.size, kCommLen);
  std::memcpy(out, rec + f.offset, n);
  // strnlen() per comm cost 13% of decoding, a byte loop 10%: find the first
  // zero byte of the two words at once (the lowest flagged byte is the first zero).
  if constexpr (std::endian::native == std::endian::little) {
    if (n == kCommLen) {
      uint64_t w[2];
      std::memcpy(w, out, sizeof w);
      for (int i = 0; i < 2; ++i) {
        const uint64_t zero = (w[i] - 0x0101010101010101ULL) & ~w[i] & 0x8080808080808080ULL;
        if (zero) return static_cast<uint8_t>(8 * i + __builtin_ctzll(zero) / 8);
      }
      return kCommLen;
    }
  }
  size_t len = 0;
  while (len < n && out[len] != '\0') ++len;
  return static_cast<uint8_t>(len);
}

namespace {
int32_t clampTid(int64_t v) { return v < INT32_MIN || v > INT32_MAX ? -1 : static_cast<int32_t>(v); }
// -1 is a prio (SCHED_DEADLINE), so a value that cannot be one is unknown, not -1.
int32_t prioOf(int64_t v) { return v < INT16_MIN || v > INT16_MAX ? core::kPrioUnknown : static_cast<int32_t>(v); }
}  // namespace

void EventDecoderTable::decode(const uint8_t* rec, uint32_t length, uint64_t rawTs, DecodedEvent& out,
                               std::string& strings) const {
  out.ts = convertTs(rawTs);
  out.externalText = 0;
  out.aux = -1;
  if (length < m_commonLength) {
    out.op = EventOp::Private;
    out.cpuA = kMalformedRecord;
    out.countKey = 0;
    return;
  }
  const auto id = static_cast<uint16_t>(readInt(rec, m_type));
  out.countKey = id;
  out.ctxTid = m_pid.size ? clampTid(readInt(rec, m_pid)) : -1;
  out.irq = m_flags.size ? core::irqFromTraceFlags(static_cast<uint32_t>(readInt(rec, m_flags))) : 0;
  const int16_t index = id < m_index.size() ? m_index[id] : kNoFormat;
  if (index < 0) {
    out.op = index == kNoDecoder ? EventOp::Other : EventOp::Private;
    out.cpuA = kMalformedRecord;
    return;
  }
  const EventDecoder* d = &m_decoders[static_cast<size_t>(index)];
  if (length < d->minLength) {
    out.op = EventOp::Private;
    out.cpuA = kMalformedRecord;
    return;
  }
  out.op = d->kind;
  switch (d->kind) {
    case EventOp::Switch:
      out.tid = clampTid(readInt(rec, d->tid));
      out.otherTid = clampTid(readInt(rec, d->otherTid));
      out.prio = d->prio.size ? prioOf(readInt(rec, d->prio)) : core::kPrioUnknown;
      out.otherPrio = d->otherPrio.size ? prioOf(readInt(rec, d->otherPrio)) : core::kPrioUnknown;
      out.state = d->prevState.size ? m_prevStates.decode(static_cast<uint64_t>(readInt(rec, d->prevState)))
                                        : core::TaskState::Unknown;
      out.textLen[0] = d->comm.size ? copyComm(rec, d->comm, out.text[0]) : 0;
      out.textLen[1] = d->otherComm.size ? copyComm(rec, d->otherComm, out.text[1]) : 0;
      break;
    case EventOp::Waking:
    case EventOp::Wakeup:
    case EventOp::WakeupNew:
    case EventOp::Migrate:
    case EventOp::Exit:
      out.tid = clampTid(readInt(rec, d->tid));
      out.prio = d->prio.size ? prioOf(readInt(rec, d->prio)) : core::kPrioUnknown;
      out.cpuA = d->cpuA.size ? clampTid(readInt(rec, d->cpuA)) : -1;
      out.cpuB = d->cpuB.size ? clampTid(readInt(rec, d->cpuB)) : -1;
      out.textLen[0] = d->comm.size ? copyComm(rec, d->comm, out.text[0]) : 0;
      break;
    case EventOp::Fork:
      out.tid = clampTid(readInt(rec, d->tid));
      out.otherTid = clampTid(readInt(rec, d->otherTid));
      out.textLen[0] = d->comm.size ? copyComm(rec, d->comm, out.text[0]) : 0;
      out.textLen[1] = d->otherComm.size ? copyComm(rec, d->otherComm, out.text[1]) : 0;
      break;
    case EventOp::Exec: {
      out.tid = clampTid(readInt(rec, d->tid));
      out.otherTid = d->otherTid.size ? clampTid(readInt(rec, d->otherTid)) : out.tid;
      out.aux = static_cast<int64_t>(strings.size());
      out.cpuB = 0;
      if (d->filename.size) {
        // __data_loc: (length << 16) | offset, both within the record.
        const auto loc = static_cast<uint32_t>(readInt(rec, d->filename));
        const uint32_t off = loc & 0xffff;
        uint32_t len = loc >> 16;
        if (off <= length && len <= length - off) {
          const char* s = reinterpret_cast<const char*>(rec + off);
          len = static_cast<uint32_t>(strnlen(s, len));
          strings.append(s, len);
          out.cpuB = static_cast<int32_t>(len);
        }
      }
      break;
    }
    case EventOp::Rename:
      out.tid = clampTid(readInt(rec, d->tid));
      out.textLen[0] = copyComm(rec, d->comm, out.text[0]);
      break;
    case EventOp::Private:
      // Rare events with fields the merger reads by name: keep the whole record.
      out.cpuA = kPowerRecord;
      out.aux = static_cast<int64_t>(strings.size());
      out.cpuB = static_cast<int32_t>(length);
      strings.append(reinterpret_cast<const char*>(rec), length);
      break;
    default:
      break;
  }
}

const FormatField* RecordFields::find(std::string_view field) const {
  for (const FormatField& f : m_decoder.fields)
    if (f.name == field) return &f;
  return nullptr;
}

std::optional<int64_t> RecordFields::number(std::string_view field) const {
  const FormatField* f = find(field);
  if (!f || f->isArray || f->isDataLoc || f->offset + f->size > m_record.size()) return std::nullopt;
  if (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8) return std::nullopt;
  const char* p = m_record.data() + f->offset;
  uint64_t v = 0;
  switch (f->size) {
    case 1: v = static_cast<uint8_t>(*p); break;
    case 2: {
      uint16_t x;
      std::memcpy(&x, p, 2);
      v = m_table.swapped() ? __builtin_bswap16(x) : x;
      break;
    }
    case 4: {
      uint32_t x;
      std::memcpy(&x, p, 4);
      v = m_table.swapped() ? __builtin_bswap32(x) : x;
      break;
    }
    default: {
      std::memcpy(&v, p, 8);
      if (m_table.swapped()) v = __builtin_bswap64(v);
      break;
    }
  }
  if (f->isSigned && f->size < 8) {
    const uint64_t sign = uint64_t{1} << (8 * f->size - 1);
    v = (v ^ sign) - sign;
  }
  return static_cast<int64_t>(v);
}

std::optional<std::string_view> RecordFields::text(std::string_view field) const {
  const FormatField* f = find(field);
  if (!f || f->offset > m_record.size()) return std::nullopt;
  std::string_view s;
  if (f->isDataLoc) {
    if (f->size != 4 || f->offset + 4 > m_record.size()) return std::nullopt;
    uint32_t loc;
    std::memcpy(&loc, m_record.data() + f->offset, 4);
    if (m_table.swapped()) loc = __builtin_bswap32(loc);
    const uint32_t off = loc & 0xffff;
    const uint32_t len = loc >> 16;
    if (off > m_record.size() || len > m_record.size() - off) return std::nullopt;
    s = m_record.substr(off, len);
  } else if (f->size == 0) {
    s = m_record.substr(f->offset);  // char buf[]: the rest of the record
  } else {
    if (f->offset + f->size > m_record.size()) return std::nullopt;
    s = m_record.substr(f->offset, f->size);
  }
  return s.substr(0, s.find('\0'));
}

}  // namespace importers::tracedat
