// A small streaming JSON writer: the CLI, the replay output and the reports
// emit the same stable schemas through it. No parsing here (workload JSON is
// read by replay/workload with its own reader).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace core {

class JsonWriter {
 public:
  explicit JsonWriter(bool pretty = true) : m_pretty(pretty) {}

  JsonWriter& beginObject();
  JsonWriter& endObject();
  JsonWriter& beginArray();
  JsonWriter& endArray();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view v);
  JsonWriter& value(const char* v) { return value(std::string_view(v)); }
  JsonWriter& value(const std::string& v) { return value(std::string_view(v)); }
  JsonWriter& value(int64_t v);
  JsonWriter& value(uint64_t v);
  JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(unsigned v) { return value(static_cast<uint64_t>(v)); }
  JsonWriter& value(double v);
  JsonWriter& value(bool v);
  JsonWriter& null();
  /// key + value in one call.
  template <typename T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }
  JsonWriter& nullField(std::string_view k) {
    key(k);
    return null();
  }

  const std::string& str() const { return m_out; }
  static std::string escape(std::string_view s);

 private:
  void beforeValue();
  JsonWriter& closeContainer(char closer);
  void newline();
  std::string m_out;
  std::vector<bool> m_hasItems;  // per open container
  bool m_afterKey = false;
  bool m_pretty;
};

}  // namespace core
