// The protobuf wire format, read in place and written without a schema
// compiler: Perfetto traces are millions of small messages, and decoding them
// the way Perfetto's protozero does (fields read where they lie, strings as
// views, nothing allocated per message) is what keeps the import near the
// speed of the binary ftrace formats. libprotobuf would build a message object
// per event. Used by the Perfetto reader, its exporter and their tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace importers::perfetto {

enum class WireType : uint8_t { Varint = 0, Fixed64 = 1, Bytes = 2, Fixed32 = 5 };

/// Reads a varint at `p` (advanced past it); false when it runs past `end` or past 10 bytes.
inline bool readVarint(const uint8_t*& p, const uint8_t* end, uint64_t& out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64 && p < end; shift += 7) {
    const uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      out = v;
      return true;
    }
  }
  return false;
}

/// One field of a message: its number, and its value (an integer, or the bytes
/// of a length-delimited field, pointing into the message).
struct Field {
  uint32_t id = 0;
  WireType type = WireType::Varint;
  uint64_t value = 0;  ///< varint / fixed value
  const uint8_t* data = nullptr;  ///< Bytes: where they are
  size_t size = 0;                ///< Bytes: how many
  int64_t asInt64() const { return static_cast<int64_t>(value); }
  int32_t asInt32() const { return static_cast<int32_t>(value); }
  std::string_view text() const { return {reinterpret_cast<const char*>(data), size}; }
};

/// Iterates over the fields of one message. After a malformed field, next()
/// returns false and error() says what, at errorAt() (a pointer into the message).
class MessageReader {
 public:
  MessageReader(const uint8_t* begin, size_t size) : m_p(begin), m_end(begin + size) {}
  explicit MessageReader(const Field& f) : MessageReader(f.data, f.size) {}

  bool next(Field& f) {
    if (m_p >= m_end) return false;
    const uint8_t* start = m_p;
    uint64_t key;
    if (!varint(key)) return fail(start, "truncated varint (field key)");
    f.id = static_cast<uint32_t>(key >> 3);
    if (f.id == 0) return fail(start, "field number 0");
    switch (key & 7) {
      case 0:
        f.type = WireType::Varint;
        if (!varint(f.value)) return fail(start, "truncated varint (value of field " + std::to_string(f.id) + ")");
        return true;
      case 1:
        f.type = WireType::Fixed64;
        if (m_end - m_p < 8) return fail(start, "fixed64 field " + std::to_string(f.id) + " runs past the end");
        std::memcpy(&f.value, m_p, 8);
        m_p += 8;
        return true;
      case 5: {
        f.type = WireType::Fixed32;
        if (m_end - m_p < 4) return fail(start, "fixed32 field " + std::to_string(f.id) + " runs past the end");
        uint32_t v;
        std::memcpy(&v, m_p, 4);
        f.value = v;
        m_p += 4;
        return true;
      }
      case 2: {
        f.type = WireType::Bytes;
        uint64_t len;
        if (!varint(len)) return fail(start, "truncated varint (length of field " + std::to_string(f.id) + ")");
        if (len > static_cast<uint64_t>(m_end - m_p))
          return fail(start, "field " + std::to_string(f.id) + " declares " + std::to_string(len) +
                                 " bytes, past the end of its message (" + std::to_string(m_end - m_p) + " left)");
        f.data = m_p;
        f.size = static_cast<size_t>(len);
        m_p += len;
        return true;
      }
      default:
        return fail(start, "wire type " + std::to_string(key & 7) + " of field " + std::to_string(f.id) +
                               " (groups and unknown types are not valid here)");
    }
  }

  bool ok() const { return m_error.empty(); }
  const std::string& error() const { return m_error; }
  const uint8_t* errorAt() const { return m_errorAt; }
  const uint8_t* position() const { return m_p; }

 private:
  bool varint(uint64_t& out) { return readVarint(m_p, m_end, out); }
  bool fail(const uint8_t* at, std::string why) {
    m_error = std::move(why);
    m_errorAt = at;
    m_p = m_end;
    return false;
  }

  const uint8_t* m_p;
  const uint8_t* m_end;
  std::string m_error;
  const uint8_t* m_errorAt = nullptr;
};

/// The varints of a packed repeated field; ok() false once one is cut short.
class PackedVarints {
 public:
  PackedVarints() = default;
  explicit PackedVarints(const Field& f) : m_p(f.data), m_end(f.data + f.size) {}
  bool next(uint64_t& out) {
    if (m_p >= m_end) return false;
    if (readVarint(m_p, m_end, out)) return true;
    m_ok = false;
    return false;
  }
  bool ok() const { return m_ok; }

 private:
  const uint8_t* m_p = nullptr;
  const uint8_t* m_end = nullptr;
  bool m_ok = true;
};

/// Appends protobuf fields to a byte string. Nested messages are written into
/// a scratch writer and then added as one length-delimited field.
class MessageWriter {
 public:
  void varint(uint32_t id, uint64_t v) {
    key(id, 0);
    raw(v);
  }
  void sint(uint32_t id, int64_t v) { varint(id, static_cast<uint64_t>(v)); }  ///< int32/int64: two's complement
  void bytes(uint32_t id, std::string_view b) {
    key(id, 2);
    raw(b.size());
    m_out.append(b);
  }
  void message(uint32_t id, const MessageWriter& m) { bytes(id, m.m_out); }
  /// A packed repeated varint field from already encoded varints.
  void packed(uint32_t id, const MessageWriter& encoded) { bytes(id, encoded.m_out); }
  void rawVarint(uint64_t v) { raw(v); }
  const std::string& data() const { return m_out; }
  std::string& data() { return m_out; }
  size_t size() const { return m_out.size(); }
  void clear() { m_out.clear(); }

 private:
  void key(uint32_t id, int type) { raw((static_cast<uint64_t>(id) << 3) | static_cast<uint64_t>(type)); }
  void raw(uint64_t v) {
    while (v >= 0x80) {
      m_out.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    m_out.push_back(static_cast<char>(v));
  }
  std::string m_out;
};

}  // namespace importers::perfetto
