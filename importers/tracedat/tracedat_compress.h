// Compression of trace.dat v7 blocks (metadata sections and the per-CPU data
// chunks), for the two algorithms trace-cmd 3.x writes: zstd and zlib. The
// reader decompresses, the writer (tracedat_writer.cpp) compresses. One
// Decompressor or Compressor per thread (each keeps its library context).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

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

class Compressor {
 public:
  /// zstd at its default level, zlib at Z_DEFAULT_COMPRESSION, as trace-cmd does.
  explicit Compressor(Compression algorithm);
  ~Compressor();
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;

  /// Replaces `out` with `src` compressed. False if the library fails (or for None).
  bool compress(const uint8_t* src, size_t srcSize, std::vector<uint8_t>& out);
  /// The library's version as the file header names it ("1.5.4").
  static std::string libraryVersion(Compression algorithm);

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace importers::tracedat
