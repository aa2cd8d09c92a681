#include "core/json_writer.h"

#include <cmath>
#include <cstdio>

namespace core {

std::string JsonWriter::escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

void JsonWriter::newline() {
  if (!m_pretty) return;
  m_out += '\n';
  m_out.append(m_hasItems.size() * 2, ' ');
}

void JsonWriter::beforeValue() {
  if (m_afterKey) {
    m_afterKey = false;
    return;
  }
  if (!m_hasItems.empty()) {
    if (m_hasItems.back()) m_out += ',';
    m_hasItems.back() = true;
    newline();
  }
}

JsonWriter& JsonWriter::beginObject() {
  beforeValue();
  m_out += '{';
  m_hasItems.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::endObject() { return closeContainer('}'); }

JsonWriter& JsonWriter::closeContainer(char closer) {
  const bool had = m_hasItems.back();
  m_hasItems.pop_back();
  if (had) newline();
  m_out += closer;
  return *this;
}

JsonWriter& JsonWriter::beginArray() {
  beforeValue();
  m_out += '[';
  m_hasItems.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::endArray() { return closeContainer(']'); }

JsonWriter& JsonWriter::key(std::string_view k) {
  beforeValue();
  m_out += '"';
  m_out += escape(k);
  m_out += m_pretty ? "\": " : "\":";
  m_afterKey = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view v) {
  beforeValue();
  m_out += '"';
  m_out += escape(v);
  m_out += '"';
  return *this;
}

JsonWriter& JsonWriter::value(int64_t v) {
  beforeValue();
  m_out += std::to_string(v);
  return *this;
}

JsonWriter& JsonWriter::value(uint64_t v) {
  beforeValue();
  m_out += std::to_string(v);
  return *this;
}

JsonWriter& JsonWriter::value(double v) {
  beforeValue();
  if (!std::isfinite(v)) {
    m_out += "null";
    return *this;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  m_out += buf;
  return *this;
}

JsonWriter& JsonWriter::value(bool v) {
  beforeValue();
  m_out += v ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null() {
  beforeValue();
  m_out += "null";
  return *this;
}

}  // namespace core
