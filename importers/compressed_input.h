// Traces shared compressed (trace.txt.gz, perf-script.txt.zst, a Perfetto
// trace.gz, trace.dat.zst): recognised by their magic bytes, and a gzip or
// zstd file is decompressed into a copy in the temp folder that the format's
// importer then reads as if it were the file itself. Errors and diagnostics
// name the compressed file, never the copy.
//
// Why a copy on disk and not in memory: every importer reads a path (libtracecmd
// and libbabeltrace2 open files themselves, the others map them), and a trace
// inflates to many times its compressed size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "importers/importer.h"

namespace importers {

enum class Compression : uint8_t { None, Gzip, Zstd, Xz, Bzip2, Lz4 };

/// What the first bytes of a file say it is compressed with.
Compression compressionOf(std::span<const std::byte> head);
/// "gzip", "zstd", "xz", "bzip2", "lz4" ("" for None).
std::string_view compressionName(Compression c);
/// Gzip and zstd are read; the others are refused with the command that decompresses them.
bool canDecompress(Compression c);

/// `path` without a compression suffix (.gz, .zst, ...); unchanged without one.
std::string withoutCompressionSuffix(const std::string& path);

/// The first `maxBytes` bytes `path` decompresses to (fewer if it is shorter,
/// or corrupt past them): what probing needs to recognise the format inside.
core::Result<std::vector<std::byte>> decompressedHead(const std::string& path, Compression c, size_t maxBytes);

/// A decompressed copy of a trace in a folder of its own in the temp folder,
/// removed with it.
class DecompressedCopy {
 public:
  DecompressedCopy() = default;
  DecompressedCopy(const DecompressedCopy&) = delete;
  DecompressedCopy& operator=(const DecompressedCopy&) = delete;
  DecompressedCopy(DecompressedCopy&& other) noexcept;
  DecompressedCopy& operator=(DecompressedCopy&& other) noexcept;
  ~DecompressedCopy();

  /// Where the compressed data ended early or turned corrupt: what came before is in the copy.
  struct Damage {
    uint64_t offset = 0;  ///< byte offset in the compressed file
    std::string why;      ///< what was wrong there, and how much was read before it
  };

  const std::string& path() const { return m_path; }
  const std::optional<Damage>& damage() const { return m_damage; }

 private:
  friend core::Result<DecompressedCopy> decompressToTemp(const std::string&, Compression, const ImportOptions&);
  std::string m_folder;
  std::string m_path;
  std::optional<Damage> m_damage;
};

/// Decompresses `path` into a new folder of the temp folder (TMPDIR, else
/// /tmp). Progress is the share of the compressed bytes read; a stop request
/// cancels. Fails when nothing could be decompressed, the temp folder cannot
/// take the copy, or the import was cancelled.
core::Result<DecompressedCopy> decompressToTemp(const std::string& path, Compression c, const ImportOptions& options);

}  // namespace importers
