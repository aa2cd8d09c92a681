// CTF 1.8 metadata as text and tokens: the file itself (plain TSDL) or the
// text of its metadata packets, split into TSDL tokens. Shared by the packet
// check (ctf_packet_check.cpp) and the trace finder, which reads `trace` and
// `env` to tell which traces belong to one recording session.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace importers::ctf {

/// The unsigned integer of `bytes` bytes at `p` in the given byte order.
uint64_t readUnsigned(const unsigned char* p, uint32_t bytes, bool bigEndian);

/// Metadata text: the file itself, or the text of its metadata packets (at
/// most 64 MiB read). Fails (nullopt, with `why`) only when the file cannot be opened.
std::optional<std::string> metadataText(const std::string& path, std::string* why = nullptr);

struct Token {
  enum Kind : uint8_t { Ident, Number, String, Punct, End } kind = End;
  std::string text;
};
/// TSDL tokens, comments dropped, string quotes removed; ends with an End token.
std::vector<Token> tokenize(std::string_view s);

}  // namespace importers::ctf
