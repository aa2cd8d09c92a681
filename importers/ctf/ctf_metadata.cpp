#include "importers/ctf/ctf_metadata.h"

#include <algorithm>
#include <cctype>
#include <fstream>

namespace importers::ctf {

namespace {
constexpr uint32_t kMetadataMagic = 0x75D11D57;
constexpr size_t kMetadataPacketHeaderBytes = 37;  // CTF 1.8 §7.1 metadata_packet_header
constexpr size_t kMaxMetadataBytes = 64u << 20;
}  // namespace

uint64_t readUnsigned(const unsigned char* p, uint32_t bytes, bool bigEndian) {
  uint64_t v = 0;
  for (uint32_t i = 0; i < bytes; ++i) {
    const uint64_t b = p[bigEndian ? i : bytes - 1 - i];
    v = (v << 8) | b;
  }
  return v;
}

std::optional<std::string> metadataText(const std::string& path, std::string* why) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    if (why) *why = path + ": cannot open";
    return std::nullopt;
  }
  // The file's size, not the cap: zero-filling 64 MiB for every import cost
  // more than the rest of a small trace's import (found by ctf_fuzzer's pace).
  const auto size = static_cast<uint64_t>(std::max<std::streamoff>(0, in.tellg()));
  in.seekg(0);
  std::string raw;
  raw.resize(static_cast<size_t>(std::min<uint64_t>(size, kMaxMetadataBytes)));
  in.read(raw.data(), static_cast<std::streamsize>(raw.size()));
  raw.resize(static_cast<size_t>(in.gcount()));
  if (raw.size() < 4) return raw;
  const auto* bytes = reinterpret_cast<const unsigned char*>(raw.data());
  bool bigEndian = false;
  if (readUnsigned(bytes, 4, false) == kMetadataMagic)
    bigEndian = false;
  else if (readUnsigned(bytes, 4, true) == kMetadataMagic)
    bigEndian = true;
  else
    return raw;
  std::string text;
  for (size_t off = 0; off + kMetadataPacketHeaderBytes <= raw.size();) {
    const unsigned char* p = bytes + off;
    if (readUnsigned(p, 4, bigEndian) != kMetadataMagic) break;
    const uint64_t contentBytes = readUnsigned(p + 24, 4, bigEndian) / 8;
    const uint64_t packetBytes = readUnsigned(p + 28, 4, bigEndian) / 8;
    if (packetBytes < kMetadataPacketHeaderBytes || contentBytes < kMetadataPacketHeaderBytes ||
        contentBytes > packetBytes || off + contentBytes > raw.size())
      break;
    text.append(raw, off + kMetadataPacketHeaderBytes, contentBytes - kMetadataPacketHeaderBytes);
    off += packetBytes;
  }
  return text;
}

std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  auto isIdent = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (s.compare(i, 2, "/*") == 0) {
      const size_t end = s.find("*/", i + 2);
      i = end == std::string_view::npos ? s.size() : end + 2;
    } else if (s.compare(i, 2, "//") == 0) {
      const size_t end = s.find('\n', i);
      i = end == std::string_view::npos ? s.size() : end + 1;
    } else if (c == '"') {
      size_t j = i + 1;
      while (j < s.size() && s[j] != '"') j += s[j] == '\\' ? 2 : 1;
      out.push_back({Token::String, std::string(s.substr(i + 1, std::min(j, s.size()) - i - 1))});
      i = j + 1;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])))) ++j;
      out.push_back({Token::Number, std::string(s.substr(i, j - i))});
      i = j;
    } else if (isIdent(c)) {
      size_t j = i;
      while (j < s.size() && isIdent(s[j])) ++j;
      out.push_back({Token::Ident, std::string(s.substr(i, j - i))});
      i = j;
    } else if (s.compare(i, 2, ":=") == 0) {
      out.push_back({Token::Punct, ":="});
      i += 2;
    } else {
      out.push_back({Token::Punct, std::string(1, c)});
      ++i;
    }
  }
  out.push_back({Token::End, {}});
  return out;
}

}  // namespace importers::ctf
