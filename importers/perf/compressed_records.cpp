#include "importers/perf/compressed_records.h"

#include <zstd.h>

#include <cstring>

#include "importers/perf/perf_data_format.h"

namespace importers::perf {

namespace {
constexpr size_t kWindowBytes = size_t{1} << 20;
}  // namespace

struct CompressedRecords::Stream {
  ZSTD_DStream* ds = ZSTD_createDStream();
  ~Stream() { ZSTD_freeDStream(ds); }
};

CompressedRecords::CompressedRecords() : m_zstd(std::make_unique<Stream>()), m_window(new uint8_t[kWindowBytes]) {}
CompressedRecords::~CompressedRecords() = default;

core::Status CompressedRecords::feed(std::span<const uint8_t> payload, uint64_t maxOutput, const OnRecord& onRecord,
                                     bool swapped) {
  if (!m_zstd->ds) return core::Error("zstd could not allocate a decompression stream");
  ZSTD_inBuffer in{payload.data(), payload.size(), 0};
  uint64_t produced = 0;
  while (true) {
    ZSTD_outBuffer out{m_window.get(), kWindowBytes, m_filled};
    const size_t consumedBefore = in.pos;
    const size_t ret = ZSTD_decompressStream(m_zstd->ds, &out, &in);
    if (ZSTD_isError(ret))
      return core::Error("zstd cannot decompress the data after decompressed byte " +
                         std::to_string(m_streamBytes + m_filled) + " (" + ZSTD_getErrorName(ret) + ")");
    const size_t got = out.pos - m_filled;
    const bool windowFull = out.pos == out.size;
    produced += got;
    m_filled = out.pos;
    // perf decompresses each record into a buffer of the recording's mmap size
    // (session.c, perf_session__process_compressed_event): more is not its data.
    if (produced > maxOutput)
      return core::Error("one compressed record decompresses to more than " + std::to_string(maxOutput) +
                         " bytes (the recording's ring-buffer size)");
    size_t pos = 0;
    while (m_filled - pos >= kRecordHeaderSize) {
      uint16_t size;
      std::memcpy(&size, m_window.get() + pos + 6, 2);
      if (swapped) size = byteSwap(size);
      if (size < kRecordHeaderSize)
        return core::Error("decompressed byte " + std::to_string(m_streamBytes + pos) + ": record size " +
                           std::to_string(size) + " is smaller than a record header");
      if (size > m_filled - pos) break;  // completed by a later compressed record
      if (auto st = onRecord(m_window.get() + pos, size, m_streamBytes + pos); !st) return st;
      pos += size;
    }
    std::memmove(m_window.get(), m_window.get() + pos, m_filled - pos);
    m_filled -= pos;
    m_streamBytes += pos;
    // Done when the input is used up and zstd had room to flush all it holds.
    if (in.pos == in.size && !windowFull) break;
    if (got == 0 && in.pos == consumedBefore) break;  // no progress: nothing more to get from this payload
  }
  return core::Status::ok();
}

}  // namespace importers::perf
