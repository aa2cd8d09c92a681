#include "importers/ctf/ctf_packet_check.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string_view>

#include "importers/ctf/ctf_metadata.h"

namespace importers::ctf {

namespace {

constexpr uint32_t kPacketMagic = 0xC1FC1FC1;

std::optional<uint64_t> parseNumber(std::string_view t) {
  uint64_t v = 0;
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    t.remove_prefix(2);
    base = 16;
  } else if (t.size() > 1 && t[0] == '0') {
    t.remove_prefix(1);
    base = 8;
  }
  while (!t.empty() && (t.back() == 'u' || t.back() == 'U' || t.back() == 'l' || t.back() == 'L')) t.remove_suffix(1);
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v, base);
  if (ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
  return v;
}

enum class ByteOrder : uint8_t { Trace, Little, Big };

struct Type;
using TypePtr = std::shared_ptr<const Type>;
struct Member {
  std::string name;
  TypePtr type;
  std::vector<uint64_t> dims;  ///< fixed array lengths
};
struct Type {
  enum Kind : uint8_t { Integer, Struct, Variable } kind = Variable;
  uint32_t sizeBits = 0;   ///< Integer
  uint32_t alignBits = 8;  ///< Integer: its own; Struct: explicit align() (max with members at layout)
  ByteOrder order = ByteOrder::Trace;
  std::vector<Member> members;  ///< Struct
};

/// Reads the TSDL statements that shape packet headers and contexts; skips
/// the rest (events, clocks, env...). Any construct it does not understand
/// where it matters makes the layout unknown rather than wrong.
class TsdlLayoutParser {
 public:
  explicit TsdlLayoutParser(std::vector<Token> tokens) : m_t(std::move(tokens)) {}

  std::optional<PacketLayout> parse(std::string* why) {
    while (peek().kind != Token::End && m_ok) {
      const std::string& w = peek().text;
      if (w == "typealias") {
        parseTypealias();
      } else if (w == "typedef") {
        parseTypedef();
      } else if (w == "trace") {
        next();
        parseBlock(true);
      } else if (w == "stream") {
        next();
        parseBlock(false);
      } else if (w == "struct") {
        parseTypeSpec();
        expect(";");
      } else {
        skipStatement();
      }
    }
    if (!m_ok) return fail(why, "cannot read the metadata: " + m_error);
    if (!m_header) return fail(why, "the metadata declares no packet header");
    return buildLayout(why);
  }

 private:
  const Token& peek(size_t ahead = 0) const { return m_t[std::min(m_pos + ahead, m_t.size() - 1)]; }
  const Token& next() {
    const Token& t = peek();
    if (m_pos < m_t.size() - 1) ++m_pos;
    return t;
  }
  bool accept(std::string_view p) {
    if (peek().kind != Token::End && peek().text == p) {
      next();
      return true;
    }
    return false;
  }
  void expect(std::string_view p) {
    if (!accept(p)) error("expected '" + std::string(p) + "' near '" + peek().text + "'");
  }
  void error(std::string what) {
    if (m_ok) m_error = std::move(what);
    m_ok = false;
  }
  static std::optional<PacketLayout> fail(std::string* why, std::string what) {
    if (why) *why = std::move(what);
    return std::nullopt;
  }

  /// Skips to the ';' ending the current statement, over balanced braces.
  void skipStatement() {
    int depth = 0;
    while (peek().kind != Token::End) {
      const std::string t = next().text;
      if (t == "{") ++depth;
      if (t == "}") --depth;
      if (t == ";" && depth <= 0) return;
    }
  }
  void skipBalanced() {  // at '{'
    int depth = 0;
    do {
      const std::string t = next().text;
      if (t == "{") ++depth;
      if (t == "}") --depth;
    } while (depth > 0 && peek().kind != Token::End);
  }

  TypePtr parseIntegerBody() {
    auto type = std::make_shared<Type>();
    type->kind = Type::Integer;
    bool alignSet = false;
    expect("{");
    while (m_ok && !accept("}")) {
      const std::string key = next().text;
      expect("=");
      std::string value;
      while (m_ok && peek().kind != Token::End && peek().text != ";") value += next().text;
      expect(";");
      if (key == "size") {
        type->sizeBits = static_cast<uint32_t>(parseNumber(value).value_or(0));
      } else if (key == "align") {
        type->alignBits = static_cast<uint32_t>(parseNumber(value).value_or(8));
        alignSet = true;
      } else if (key == "byte_order") {
        if (value == "be" || value == "network")
          type->order = ByteOrder::Big;
        else if (value == "le")
          type->order = ByteOrder::Little;
        else
          type->order = ByteOrder::Trace;  // native
      }
    }
    if (type->sizeBits == 0 || type->sizeBits > 64) error("integer of unsupported size");
    if (!alignSet) type->alignBits = type->sizeBits % 8 == 0 ? 8 : 1;
    return type;
  }

  /// A type specifier: integer {...}, struct [name] [{...}] [align(N)],
  /// enum [name] [: type] {...}, string, variant, floating_point, or an alias.
  /// In a field, the alias words stop before the declarator (`stopBeforeLast`).
  TypePtr parseTypeSpec(bool stopBeforeLast = false) {
    const std::string w = peek().text;
    if (w == "integer") {
      next();
      return parseIntegerBody();
    }
    if (w == "struct") {
      next();
      std::string name;
      if (peek().kind == Token::Ident) name = next().text;
      std::shared_ptr<Type> type;
      if (peek().text == "{") {
        type = std::make_shared<Type>();
        type->kind = Type::Struct;
        type->alignBits = 1;
        next();
        while (m_ok && !accept("}")) parseField(*type);
        if (!name.empty()) m_structs[name] = type;
      } else if (auto it = m_structs.find(name); it != m_structs.end()) {
        type = std::make_shared<Type>(*it->second);
      } else {
        error("unknown struct '" + name + "'");
        return std::make_shared<Type>();
      }
      if (accept("align")) {
        expect("(");
        const auto a = parseNumber(next().text);
        expect(")");
        type->alignBits = std::max<uint32_t>(type->alignBits, static_cast<uint32_t>(a.value_or(1) * 8));
      }
      return type;
    }
    if (w == "enum") {
      next();
      if (peek().kind == Token::Ident) next();  // name
      TypePtr container;
      if (accept(":")) container = parseTypeSpec();
      if (peek().text == "{") skipBalanced();
      if (!container || container->kind != Type::Integer) return std::make_shared<Type>();
      return container;
    }
    if (w == "string" || w == "variant" || w == "floating_point") {
      next();
      if (peek().kind == Token::Ident && w == "variant") next();
      if (peek().text == "<") {
        while (m_ok && peek().kind != Token::End && next().text != ">") {
        }
      }
      if (peek().text == "{") skipBalanced();
      return std::make_shared<Type>();  // not of fixed size
    }
    // An alias, possibly of several words ("unsigned long").
    std::string name;
    while (peek().kind == Token::Ident &&
           !(stopBeforeLast && peek(1).kind != Token::Ident)) {
      if (!name.empty()) name += ' ';
      name += next().text;
    }
    if (auto it = m_aliases.find(name); it != m_aliases.end()) return it->second;
    error("unknown type '" + name + "'");
    return std::make_shared<Type>();
  }

  void parseField(Type& parent) {
    Member m;
    m.type = parseTypeSpec(true);
    if (!m_ok) return;
    if (peek().kind != Token::Ident) {
      error("expected a field name near '" + peek().text + "'");
      return;
    }
    m.name = next().text;
    while (accept("[")) {
      const Token& len = next();
      const auto n = len.kind == Token::Number ? parseNumber(len.text) : std::nullopt;
      m.dims.push_back(n.value_or(UINT64_MAX));  // a sequence: not of fixed size
      expect("]");
    }
    expect(";");
    parent.members.push_back(std::move(m));
  }

  void parseTypealias() {
    next();  // typealias
    TypePtr type = parseTypeSpec();
    expect(":=");
    std::string name;
    while (m_ok && peek().kind == Token::Ident) {
      if (!name.empty()) name += ' ';
      name += next().text;
    }
    expect(";");
    if (m_ok) m_aliases[name] = type;
  }

  void parseTypedef() {
    next();  // typedef
    TypePtr type = parseTypeSpec(true);
    if (peek().kind == Token::Ident) m_aliases[next().text] = type;
    skipStatement();
  }

  /// trace { ... } or stream { ... }
  void parseBlock(bool isTrace) {
    expect("{");
    uint64_t id = 0;
    TypePtr context;
    while (m_ok && !accept("}")) {
      const std::string key = next().text;
      if (accept(":=")) {
        TypePtr type = parseTypeSpec();
        expect(";");
        if (isTrace && key == "packet.header") m_header = type;
        if (!isTrace && key == "packet.context") context = type;
        continue;
      }
      expect("=");
      std::string value;
      while (m_ok && peek().kind != Token::End && peek().text != ";") value += next().text;
      expect(";");
      if (isTrace && key == "byte_order") m_bigEndian = value == "be" || value == "network";
      if (!isTrace && key == "id") id = parseNumber(value).value_or(0);
    }
    expect(";");
    if (!isTrace) m_contexts.emplace_back(id, context);
  }

  // --- layout ---

  struct Placed {
    std::map<std::string, PacketLayout::Field> fields;
    uint32_t endBits = 0;
    bool variable = false;  ///< a field of unknown size: later offsets unknown
  };

  static uint32_t alignUp(uint32_t v, uint32_t a) { return a <= 1 ? v : (v + a - 1) / a * a; }

  uint32_t alignOf(const Type& t) const {
    if (t.kind == Type::Integer) return t.alignBits;
    if (t.kind != Type::Struct) return 8;
    uint32_t a = t.alignBits;
    for (const auto& m : t.members) a = std::max(a, alignOf(*m.type));
    return a;
  }

  void place(const Type& t, uint32_t& cur, const std::string& prefix, Placed& out) const {
    for (const auto& m : t.members) {
      if (out.variable) return;
      const Type& mt = *m.type;
      uint64_t count = 1;
      for (uint64_t d : m.dims) count = d == UINT64_MAX || count * d > (1u << 20) ? UINT64_MAX : count * d;
      if (mt.kind == Type::Variable || count == UINT64_MAX) {
        out.variable = true;
        return;
      }
      cur = alignUp(cur, alignOf(mt));
      if (mt.kind == Type::Integer) {
        if (m.dims.empty()) {
          const bool be = mt.order == ByteOrder::Big || (mt.order == ByteOrder::Trace && m_bigEndian);
          out.fields[prefix + m.name] = {cur, mt.sizeBits, be};
        }
        cur += static_cast<uint32_t>(count) * alignUp(mt.sizeBits, mt.alignBits);
      } else {
        for (uint64_t k = 0; k < count && !out.variable; ++k) {
          cur = alignUp(cur, alignOf(mt));
          place(mt, cur, prefix + m.name + ".", out);
        }
      }
      if (cur > (1u << 30)) {
        out.variable = true;
        return;
      }
    }
  }

  static bool byteAddressable(const PacketLayout::Field& f) {
    return f.offsetBits % 8 == 0 && f.sizeBits % 8 == 0 && f.sizeBits <= 64;
  }

  std::optional<PacketLayout> buildLayout(std::string* why) const {
    PacketLayout::Field magic;
    PacketLayout::Field streamId;
    std::vector<PacketLayout::Context> contexts;
    Placed header;
    uint32_t cur = 0;
    if (m_header->kind != Type::Struct) return fail(why, "the packet header is not a structure");
    place(*m_header, cur, "", header);
    if (auto it = header.fields.find("magic"); it != header.fields.end() && it->second.sizeBits == 32)
      magic = it->second;
    if (auto it = header.fields.find("stream_id"); it != header.fields.end()) streamId = it->second;
    if (header.variable) return fail(why, "the packet header has a field of variable size");
    for (const auto& [id, context] : m_contexts) {
      PacketLayout::Context c;
      c.id = id;
      c.endBits = cur;
      if (context) {
        if (context->kind != Type::Struct) return fail(why, "a packet context is not a structure");
        Placed placed;
        uint32_t at = alignUp(cur, alignOf(*context));
        place(*context, at, "", placed);
        if (auto it = placed.fields.find("content_size"); it != placed.fields.end()) c.contentSize = it->second;
        if (auto it = placed.fields.find("packet_size"); it != placed.fields.end()) c.packetSize = it->second;
        // Fields after a variable one are missing; the known ones still count.
        c.endBits = placed.variable ? std::max({c.contentSize.offsetBits + c.contentSize.sizeBits,
                                                c.packetSize.offsetBits + c.packetSize.sizeBits, cur})
                                    : at;
      }
      contexts.push_back(c);
    }
    for (const auto* f : {&magic, &streamId})
      if (f->present() && !byteAddressable(*f)) return fail(why, "packet header fields are not byte-aligned");
    for (const auto& c : contexts)
      for (const auto* f : {&c.contentSize, &c.packetSize})
        if (f->present() && !byteAddressable(*f)) return fail(why, "packet size fields are not byte-aligned");
    return PacketLayout(magic, streamId, cur, std::move(contexts));
  }

  std::vector<Token> m_t;
  size_t m_pos = 0;
  bool m_ok = true;
  std::string m_error;
  bool m_bigEndian = false;
  std::map<std::string, TypePtr> m_aliases;
  std::map<std::string, std::shared_ptr<Type>> m_structs;
  TypePtr m_header;
  std::vector<std::pair<uint64_t, TypePtr>> m_contexts;
};

}  // namespace

std::optional<PacketLayout> PacketLayout::fromMetadata(const std::string& metadataPath, std::string* why) {
  auto text = metadataText(metadataPath, why);
  if (!text) return std::nullopt;
  try {
    return TsdlLayoutParser(tokenize(*text)).parse(why);
  } catch (const std::exception& e) {  // out of memory on absurd metadata
    if (why) *why = e.what();
    return std::nullopt;
  }
}

PacketLayout::Scan PacketLayout::scan(const std::string& streamFile) const {
  Scan s;
  std::ifstream in(streamFile, std::ios::binary | std::ios::ate);
  if (!in) {
    s.problem = "cannot open";
    return s;
  }
  s.fileSize = static_cast<uint64_t>(in.tellg());
  uint32_t maxEndBits = m_headerEndBits;
  for (const auto& c : m_contexts) maxEndBits = std::max(maxEndBits, c.endBits);
  const uint64_t maxEndBytes = (maxEndBits + 7) / 8;
  std::vector<unsigned char> buf(std::max<uint64_t>(maxEndBytes, 8));
  auto readAt = [&](const Field& f) { return readUnsigned(buf.data() + f.offsetBits / 8, f.sizeBits / 8, f.bigEndian); };
  auto problem = [&](std::string what) {
    s.problem = std::move(what);
    return s;
  };

  uint64_t off = 0;
  while (off < s.fileSize) {
    s.goodBytes = off;
    const uint64_t avail = std::min<uint64_t>(maxEndBytes, s.fileSize - off);
    in.clear();
    in.seekg(static_cast<std::streamoff>(off));
    in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(avail));
    if (static_cast<uint64_t>(in.gcount()) != avail) return problem("cannot read the packet header");
    if (avail * 8 < m_headerEndBits) return problem("packet header cut short by the end of the file");
    if (m_magic.present() && readAt(m_magic) != kPacketMagic) {
      char hex[16];
      std::snprintf(hex, sizeof hex, "0x%08llx", static_cast<unsigned long long>(readAt(m_magic)));
      return problem(std::string("no CTF packet magic (found ") + hex + ")");
    }
    const Context* ctx = nullptr;
    if (m_streamId.present()) {
      const uint64_t id = readAt(m_streamId);
      for (const auto& c : m_contexts)
        if (c.id == id) ctx = &c;
      if (!ctx) return problem("packet of unknown stream class " + std::to_string(id));
    } else if (m_contexts.size() == 1) {
      ctx = &m_contexts.front();
    }
    uint64_t packetBits = (s.fileSize - off) * 8;  // CTF 1.8 §5: no size fields, the packet is the rest of the file
    uint64_t contentBits = packetBits;
    if (ctx) {
      if (avail * 8 < ctx->endBits) return problem("packet context cut short by the end of the file");
      if (ctx->packetSize.present()) packetBits = readAt(ctx->packetSize);
      if (ctx->contentSize.present()) contentBits = readAt(ctx->contentSize);
      if (!ctx->packetSize.present() && ctx->contentSize.present()) packetBits = contentBits;
    }
    const uint64_t headBits = ctx ? ctx->endBits : m_headerEndBits;
    if (packetBits % 8 != 0) return problem("packet_size " + std::to_string(packetBits) + " bits is not whole bytes");
    if (packetBits < headBits || packetBits == 0)
      return problem("packet_size " + std::to_string(packetBits) + " bits is smaller than its own header");
    if (contentBits > packetBits || contentBits < headBits)
      return problem("content_size " + std::to_string(contentBits) + " bits does not fit packet_size " +
                     std::to_string(packetBits));
    if (packetBits / 8 > s.fileSize - off)
      return problem("packet of " + std::to_string(packetBits / 8) + " bytes cut short by the end of the file (" +
                     std::to_string(s.fileSize - off) + " bytes left)");
    s.packetOffsets.push_back(off);
    off += packetBits / 8;
    ++s.packets;
  }
  s.goodBytes = s.fileSize;
  return s;
}

}  // namespace importers::ctf
