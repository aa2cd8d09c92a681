// The zstd stream inside PERF_RECORD_COMPRESSED / COMPRESSED2 records (perf
// record -z): one stream per file perf writes, cut into records of at most 64
// KiB, whose decompressed bytes are ordinary perf records — one of which may
// straddle two compressed records. Decompressed in a bounded window as the
// records come; used by perf_data_reader.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "core/result.h"

namespace importers::perf {

class CompressedRecords {
 public:
  /// One whole record of the decompressed stream (header included; size >= 8 and
  /// as its header says), and where it starts in that stream.
  using OnRecord = std::function<core::Status(const uint8_t* record, uint32_t size, uint64_t streamOffset)>;

  CompressedRecords();
  ~CompressedRecords();
  CompressedRecords(const CompressedRecords&) = delete;
  CompressedRecords& operator=(const CompressedRecords&) = delete;

  /// Decompresses one record's payload and hands over every record it completes.
  /// Fails, with a message that says where in the decompressed stream, when zstd
  /// rejects the data, when a record header declares fewer than 8 bytes, when the
  /// payload decompresses to more than `maxOutput` bytes, or with the first
  /// failure of `onRecord`.
  core::Status feed(std::span<const uint8_t> payload, uint64_t maxOutput, const OnRecord& onRecord, bool swapped);

  /// Bytes of a record the stream has begun but not finished (0 at a clean end).
  size_t pendingBytes() const { return m_filled; }
  /// Decompressed bytes so far.
  uint64_t streamBytes() const { return m_streamBytes; }

 private:
  struct Stream;
  std::unique_ptr<Stream> m_zstd;
  // Decompressed bytes not yet handed over. Larger than any record (sizes are
  // u16), so a record always fits once the bytes before it are gone.
  std::unique_ptr<uint8_t[]> m_window;
  size_t m_filled = 0;
  uint64_t m_streamBytes = 0;
};

}  // namespace importers::perf
