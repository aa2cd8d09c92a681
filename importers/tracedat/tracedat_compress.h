// Decompression of trace.dat v7 blocks (metadata sections and the per-CPU data
// chunks), for the two algorithms trace-cmd 3.x writes: zstd and zlib. One
// Decompressor per thread (it keeps the library context between calls).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace importers::tracedat {

enum class Compression : uint8_t { None, Zstd, Zlib };

/// "zstd", "zlib", "none"; nullopt-like false for anything else.
bool compressionFromName(std::string_view name, Compression& out);

class Decompressor {
 public:
  explicit Decompressor(Compression algorithm);
  ~Decompressor();
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;

  /// Decompresses `src` into exactly `dstSize` bytes at `dst`. Returns false if
  /// the data is corrupt or does not decompress to exactly that size.
  bool decompress(const uint8_t* src, size_t srcSize, uint8_t* dst, size_t dstSize);

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace importers::tracedat
