// The perf.data on-disk layout (tools/perf/Documentation/perf.data-file-format.txt,
// include/uapi/linux/perf_event.h, tools/perf/util/header.h): record types, sample
// bits, feature ids and a bounds-checked, endian-aware view of bytes. Used by
// perf_data_reader.cpp only; no third-party types.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace importers::perf {

/// "PERFILE2" read as a little-endian u64; byte-swapped it marks a file written
/// on a machine of the other endianness.
inline constexpr uint64_t kMagic2 = 0x32454c4946524550ULL;
inline constexpr uint64_t kMagic2Swapped = 0x50455246494c4532ULL;
inline constexpr size_t kFileHeaderSize = 104;  // magic, size, attr_size, 3 sections, 256-bit feature map
inline constexpr size_t kPipeHeaderSize = 16;   // magic, size
inline constexpr size_t kAttrMinSize = 64;      // PERF_ATTR_SIZE_VER0
inline constexpr size_t kRecordHeaderSize = 8;  // u32 type, u16 misc, u16 size

enum RecordType : uint32_t {
  kRecordMmap = 1,
  kRecordLost = 2,
  kRecordComm = 3,
  kRecordExit = 4,
  kRecordFork = 7,
  kRecordSample = 9,
  kRecordLostSamples = 13,
  kRecordHeaderAttr = 64,
  kRecordHeaderEventType = 65,
  kRecordHeaderTracingData = 66,
  kRecordHeaderBuildId = 67,
  kRecordFinishedRound = 68,
  kRecordAuxtrace = 71,
  kRecordHeaderFeature = 80,
  kRecordCompressed = 81,   ///< perf record -z: zstd data from the header to the record's end
  kRecordCompressed2 = 83,  ///< perf 6.15+: u64 data_size, zstd data, padding to 8 bytes
};

enum SampleBits : uint64_t {
  kSampleIp = 1u << 0,
  kSampleTid = 1u << 1,
  kSampleTime = 1u << 2,
  kSampleAddr = 1u << 3,
  kSampleRead = 1u << 4,
  kSampleCallchain = 1u << 5,
  kSampleId = 1u << 6,
  kSampleCpu = 1u << 7,
  kSamplePeriod = 1u << 8,
  kSampleStreamId = 1u << 9,
  kSampleRaw = 1u << 10,
  kSampleIdentifier = 1u << 16,
};

enum ReadFormatBits : uint64_t {
  kReadTotalTimeEnabled = 1,
  kReadTotalTimeRunning = 2,
  kReadId = 4,
  kReadGroup = 8,
  kReadLost = 16,
};

enum Feature : int {
  kFeatTracingData = 1,
  kFeatHostname = 3,
  kFeatOsRelease = 4,
  kFeatVersion = 5,
  kFeatArch = 6,
  kFeatNrCpus = 7,
  kFeatCpuDesc = 8,
  kFeatCmdline = 11,
  kFeatEventDesc = 12,
  kFeatCpuTopology = 13,
  kFeatNumaTopology = 14,
  kFeatCache = 20,
  kFeatDirFormat = 24,   ///< perf record --threads: the data lies in data.N files beside the header file
  kFeatCompressed = 27,  ///< u32 version, type (1 = zstd), level, ratio, mmap_len
  kFeatBits = 256,
};

inline constexpr uint32_t kPerfTypeTracepoint = 2;
inline constexpr uint16_t kMiscCommExec = 1u << 13;

inline uint16_t byteSwap(uint16_t v) { return __builtin_bswap16(v); }
inline uint32_t byteSwap(uint32_t v) { return __builtin_bswap32(v); }
inline uint64_t byteSwap(uint64_t v) { return __builtin_bswap64(v); }

/// Bytes of the file with the file's endianness. Every read is bounds-checked:
/// nothing here trusts a size or offset found in the data.
class Bytes {
 public:
  Bytes() = default;
  Bytes(const uint8_t* data, size_t size, bool swap) : m_data(data), m_size(size), m_swap(swap) {}

  size_t size() const { return m_size; }
  const uint8_t* data() const { return m_data; }
  bool swapped() const { return m_swap; }
  bool has(uint64_t offset, uint64_t len) const { return offset <= m_size && len <= m_size - offset; }
  Bytes sub(uint64_t offset, uint64_t len) const {
    return has(offset, len) ? Bytes(m_data + offset, static_cast<size_t>(len), m_swap) : Bytes(nullptr, 0, m_swap);
  }

  // Unchecked reads: callers have checked has() for the whole structure.
  uint16_t u16(uint64_t off) const { return load<uint16_t>(off); }
  uint32_t u32(uint64_t off) const { return load<uint32_t>(off); }
  uint64_t u64(uint64_t off) const { return load<uint64_t>(off); }

  std::optional<uint32_t> checkedU32(uint64_t off) const {
    if (!has(off, 4)) return std::nullopt;
    return u32(off);
  }
  std::optional<uint64_t> checkedU64(uint64_t off) const {
    if (!has(off, 8)) return std::nullopt;
    return u64(off);
  }
  std::string_view text(uint64_t off, uint64_t len) const {
    if (!has(off, len)) return {};
    return {reinterpret_cast<const char*>(m_data + off), static_cast<size_t>(len)};
  }

 private:
  template <typename T>
  T load(uint64_t off) const {
    T v;
    std::memcpy(&v, m_data + off, sizeof v);
    return m_swap ? byteSwap(v) : v;
  }

  const uint8_t* m_data = nullptr;
  size_t m_size = 0;
  bool m_swap = false;
};

}  // namespace importers::perf
