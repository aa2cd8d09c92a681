// The packet layout of a CTF trace (from its TSDL metadata) and a walk over
// the packets of a stream file, checking each one's size before babeltrace2
// sees it. Used by the CTF reader, which cuts a stream file before its first
// bad packet.
//
// Why: libbabeltrace2 2.0 indexes every packet when it opens a trace and trusts
// each packet's size: a packet_size of 0 makes it loop forever while its memory
// grows (found by ctf_fuzzer), one of 2^63 or more makes it abort. Only fixed
// integers and integer arrays are understood: what LTTng and perf write.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace importers::ctf {

/// Where each packet's size lies, for one trace.
class PacketLayout {
 public:
  /// Reads `metadataPath` (plain text or packetized TSDL). Fails (nullopt, with
  /// `why`) when the packet layout uses anything beyond fixed-size integers
  /// and arrays of them before the size fields: the caller then skips the check.
  static std::optional<PacketLayout> fromMetadata(const std::string& metadataPath, std::string* why = nullptr);

  struct Scan {
    uint64_t fileSize = 0;
    uint64_t packets = 0;    ///< good packets
    uint64_t goodBytes = 0;  ///< bytes before the first bad packet (fileSize if none)
    std::string problem;     ///< why the packet at goodBytes is bad; empty if none
    std::vector<uint64_t> packetOffsets;  ///< where each good packet starts, in order
  };
  /// Walks the packets of one stream file. Never throws; reads only the
  /// header and context of each packet.
  Scan scan(const std::string& streamFile) const;

  struct Field {  ///< an integer at a fixed bit offset from the packet start
    uint32_t offsetBits = 0;
    uint32_t sizeBits = 0;
    bool bigEndian = false;
    bool present() const { return sizeBits != 0; }
  };
  struct Context {  ///< one stream class's packet context
    uint64_t id = 0;
    uint32_t endBits = 0;  ///< end of header + context
    Field contentSize;
    Field packetSize;
  };

  PacketLayout(Field magic, Field streamId, uint32_t headerEndBits, std::vector<Context> contexts)
      : m_magic(magic), m_streamId(streamId), m_headerEndBits(headerEndBits), m_contexts(std::move(contexts)) {}

 private:
  Field m_magic;
  Field m_streamId;
  uint32_t m_headerEndBits = 0;
  std::vector<Context> m_contexts;
};

}  // namespace importers::ctf
