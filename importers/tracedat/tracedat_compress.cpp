#include "importers/tracedat/tracedat_compress.h"

#include <zlib.h>
#include <zstd.h>

namespace importers::tracedat {

bool compressionFromName(std::string_view name, Compression& out) {
  if (name == "none" || name.empty()) {
    out = Compression::None;
  } else if (name == "zstd") {
    out = Compression::Zstd;
  } else if (name == "zlib") {
    out = Compression::Zlib;
  } else {
    return false;
  }
  return true;
}

struct Decompressor::Impl {
  Compression algorithm;
  ZSTD_DCtx* zstd = nullptr;
};

Decompressor::Decompressor(Compression algorithm) : m_impl(std::make_unique<Impl>()) {
  m_impl->algorithm = algorithm;
  if (algorithm == Compression::Zstd) m_impl->zstd = ZSTD_createDCtx();
}

Decompressor::~Decompressor() {
  if (m_impl->zstd) ZSTD_freeDCtx(m_impl->zstd);
}

bool Decompressor::decompress(const uint8_t* src, size_t srcSize, uint8_t* dst, size_t dstSize) {
  switch (m_impl->algorithm) {
    case Compression::None:
      return false;
    case Compression::Zstd: {
      if (!m_impl->zstd) return false;
      const size_t n = ZSTD_decompressDCtx(m_impl->zstd, dst, dstSize, src, srcSize);
      return !ZSTD_isError(n) && n == dstSize;
    }
    case Compression::Zlib: {
      // trace-cmd's zlib protocol writes one zlib stream per block (compress2()).
      uLongf n = static_cast<uLongf>(dstSize);
      if (srcSize > UINT32_MAX || dstSize > UINT32_MAX) return false;
      const int rc = uncompress(dst, &n, src, static_cast<uLong>(srcSize));
      return rc == Z_OK && n == dstSize;
    }
  }
  return false;
}

struct Compressor::Impl {
  Compression algorithm;
  ZSTD_CCtx* zstd = nullptr;
};

Compressor::Compressor(Compression algorithm) : m_impl(std::make_unique<Impl>()) {
  m_impl->algorithm = algorithm;
  if (algorithm == Compression::Zstd) m_impl->zstd = ZSTD_createCCtx();
}

Compressor::~Compressor() {
  if (m_impl->zstd) ZSTD_freeCCtx(m_impl->zstd);
}

bool Compressor::compress(const uint8_t* src, size_t srcSize, std::vector<uint8_t>& out) {
  switch (m_impl->algorithm) {
    case Compression::None:
      return false;
    case Compression::Zstd: {
      if (!m_impl->zstd) return false;
      out.resize(ZSTD_compressBound(srcSize));
      const size_t n = ZSTD_compressCCtx(m_impl->zstd, out.data(), out.size(), src, srcSize, ZSTD_CLEVEL_DEFAULT);
      if (ZSTD_isError(n)) return false;
      out.resize(n);
      return true;
    }
    case Compression::Zlib: {
      if (srcSize > UINT32_MAX) return false;
      uLongf n = compressBound(static_cast<uLong>(srcSize));
      out.resize(n);
      if (compress2(out.data(), &n, src, static_cast<uLong>(srcSize), Z_DEFAULT_COMPRESSION) != Z_OK) return false;
      out.resize(n);
      return true;
    }
  }
  return false;
}

std::string Compressor::libraryVersion(Compression algorithm) {
  switch (algorithm) {
    case Compression::None:
      return "";
    case Compression::Zstd:
      return ZSTD_versionString();
    case Compression::Zlib:
      return zlibVersion();
  }
  return "";
}

}  // namespace importers::tracedat
