#include "replay/workload/json_reader.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace replay::json {

std::string_view toString(Type type) {
  switch (type) {
    case Type::Null: return "null";
    case Type::Bool: return "a boolean";
    case Type::Number: return "a number";
    case Type::String: return "a string";
    case Type::Array: return "an array";
    case Type::Object: return "an object";
  }
  return "?";
}

const Value* Value::find(std::string_view key) const {
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

namespace {

constexpr int kMaxDepth = 256;

class Parser {
 public:
  Parser(std::string_view text, const std::string& name) : m_text(text), m_name(name) {}

  core::Result<Value> document() {
    skipSpace();
    Value v;
    if (!value(v, 0)) return core::Error(m_error);
    skipSpace();
    if (m_pos < m_text.size()) {
      fail("unexpected text after the JSON value");
      return core::Error(m_error);
    }
    return v;
  }

 private:
  bool fail(const std::string& what) {
    if (m_error.empty())
      m_error = m_name + ": line " + std::to_string(m_line) + ", column " + std::to_string(column()) + ": " + what;
    return false;
  }
  int column() const { return static_cast<int>(m_pos - m_lineStart) + 1; }
  bool atEnd() const { return m_pos >= m_text.size(); }
  char peek() const { return m_text[m_pos]; }

  void skipSpace() {
    while (m_pos < m_text.size()) {
      const char c = m_text[m_pos];
      if (c == '\n') {
        ++m_pos;
        ++m_line;
        m_lineStart = m_pos;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++m_pos;
      } else {
        break;
      }
    }
  }

  std::string describeHere() const {
    if (atEnd()) return "end of input";
    const char c = peek();
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) return "a control or non-ASCII byte";
    return std::string("'") + c + "'";
  }

  bool value(Value& out, int depth) {
    if (depth > kMaxDepth) return fail("nesting deeper than 256 levels");
    out.line = m_line;
    out.column = column();
    if (atEnd()) return fail("expected a value, found end of input");
    const char c = peek();
    if (c == '{') return object(out, depth);
    if (c == '[') return array(out, depth);
    if (c == '"') {
      out.type = Type::String;
      return string(out.string);
    }
    if (c == '-' || (c >= '0' && c <= '9')) return number(out);
    if (literal("true")) {
      out.type = Type::Bool;
      out.boolean = true;
      return true;
    }
    if (literal("false")) {
      out.type = Type::Bool;
      return true;
    }
    if (literal("null")) return true;
    return fail("expected a value, found " + describeHere());
  }

  bool literal(std::string_view word) {
    if (m_text.substr(m_pos, word.size()) != word) return false;
    m_pos += word.size();
    return true;
  }

  bool object(Value& out, int depth) {
    out.type = Type::Object;
    ++m_pos;  // '{'
    skipSpace();
    if (!atEnd() && peek() == '}') {
      ++m_pos;
      return true;
    }
    for (;;) {
      skipSpace();
      if (atEnd() || peek() != '"') return fail("expected a quoted key, found " + describeHere());
      std::string key;
      if (!string(key)) return false;
      skipSpace();
      if (atEnd() || peek() != ':') return fail("expected ':' after key \"" + key + "\", found " + describeHere());
      ++m_pos;
      skipSpace();
      Value v;
      if (!value(v, depth + 1)) return false;
      out.members.push_back({std::move(key), std::move(v)});
      skipSpace();
      if (atEnd()) return fail("expected ',' or '}', found end of input");
      if (peek() == ',') {
        ++m_pos;
        continue;
      }
      if (peek() == '}') {
        ++m_pos;
        return true;
      }
      return fail("expected ',' or '}', found " + describeHere());
    }
  }

  bool array(Value& out, int depth) {
    out.type = Type::Array;
    ++m_pos;  // '['
    skipSpace();
    if (!atEnd() && peek() == ']') {
      ++m_pos;
      return true;
    }
    for (;;) {
      skipSpace();
      Value v;
      if (!value(v, depth + 1)) return false;
      out.items.push_back(std::move(v));
      skipSpace();
      if (atEnd()) return fail("expected ',' or ']', found end of input");
      if (peek() == ',') {
        ++m_pos;
        continue;
      }
      if (peek() == ']') {
        ++m_pos;
        return true;
      }
      return fail("expected ',' or ']', found " + describeHere());
    }
  }

  static void appendUtf8(std::string& s, uint32_t cp) {
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      s += static_cast<char>(0xc0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      s += static_cast<char>(0xe0 | (cp >> 12));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      s += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      s += static_cast<char>(0xf0 | (cp >> 18));
      s += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      s += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }

  bool hex4(uint32_t& out) {
    out = 0;
    for (int i = 0; i < 4; ++i) {
      if (atEnd()) return fail("unterminated \\u escape");
      const char c = peek();
      uint32_t d;
      if (c >= '0' && c <= '9') d = static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') d = static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') d = static_cast<uint32_t>(c - 'A' + 10);
      else return fail("bad hex digit in \\u escape");
      out = out * 16 + d;
      ++m_pos;
    }
    return true;
  }

  bool string(std::string& out) {
    ++m_pos;  // opening quote
    for (;;) {
      if (atEnd()) return fail("unterminated string");
      const char c = peek();
      if (c == '"') {
        ++m_pos;
        return true;
      }
      if (c == '\n') return fail("unterminated string (newline inside)");
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character inside a string");
      if (c != '\\') {
        out += c;
        ++m_pos;
        continue;
      }
      ++m_pos;
      if (atEnd()) return fail("unterminated escape");
      const char e = peek();
      ++m_pos;
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xd800 && cp < 0xdc00 && m_text.substr(m_pos, 2) == "\\u") {
            m_pos += 2;
            uint32_t lo = 0;
            if (!hex4(lo)) return false;
            if (lo >= 0xdc00 && lo < 0xe000) cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          }
          appendUtf8(out, cp);
          break;
        }
        default:
          --m_pos;
          return fail(std::string("unknown escape '\\") + e + "'");
      }
    }
  }

  bool number(Value& out) {
    const size_t start = m_pos;
    bool integral = true;
    if (peek() == '-') ++m_pos;
    if (atEnd() || !(peek() >= '0' && peek() <= '9')) return fail("expected a digit");
    if (peek() == '0') {
      ++m_pos;
    } else {
      while (!atEnd() && peek() >= '0' && peek() <= '9') ++m_pos;
    }
    if (!atEnd() && peek() == '.') {
      integral = false;
      ++m_pos;
      if (atEnd() || !(peek() >= '0' && peek() <= '9')) return fail("expected a digit after '.'");
      while (!atEnd() && peek() >= '0' && peek() <= '9') ++m_pos;
    }
    if (!atEnd() && (peek() == 'e' || peek() == 'E')) {
      integral = false;
      ++m_pos;
      if (!atEnd() && (peek() == '+' || peek() == '-')) ++m_pos;
      if (atEnd() || !(peek() >= '0' && peek() <= '9')) return fail("expected a digit in the exponent");
      while (!atEnd() && peek() >= '0' && peek() <= '9') ++m_pos;
    }
    const std::string text(m_text.substr(start, m_pos - start));
    out.type = Type::Number;
    out.number = std::strtod(text.c_str(), nullptr);
    if (!std::isfinite(out.number)) return fail("number out of range");
    if (integral) {
      errno = 0;
      const long long v = std::strtoll(text.c_str(), nullptr, 10);
      if (errno == ERANGE) return fail("integer out of range");
      out.integral = true;
      out.integer = v;
    }
    return true;
  }

  std::string_view m_text;
  const std::string& m_name;
  size_t m_pos = 0;
  int m_line = 1;
  size_t m_lineStart = 0;
  std::string m_error;
};

}  // namespace

core::Result<Value> parse(std::string_view text, const std::string& name) { return Parser(text, name).document(); }

}  // namespace replay::json
