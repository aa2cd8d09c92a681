// What the file-based fuzzers share: each input is written to a temporary file
// (one per fuzzer process) and imported through importers::importTrace, the
// path every user file takes (probe, read, finalize). Included by the
// tests/fuzz/*_fuzzer.cpp targets only.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "importers/importer.h"

namespace fuzz {

/// Where the inputs are written: memory (/dev/shm) where there is one, since
/// rewriting a file on disk for every input costs more than a small import.
inline std::string scratchDir() {
  std::error_code ec;
  return std::filesystem::is_directory("/dev/shm", ec) ? "/dev/shm" : std::filesystem::temp_directory_path().string();
}

/// Imports `data` as a file named <scratchDir>/schedlab-<tag>-fuzz-<pid><suffix>.
inline void importBytes(const uint8_t* data, size_t size, const char* tag, const char* suffix) {
  static const std::string path =
      scratchDir() + "/schedlab-" + tag + "-fuzz-" + std::to_string(::getpid()) + suffix;
  // Removed when the fuzzer exits (libFuzzer ends with exit()): /dev/shm is memory.
  static const struct Remove {
    const std::string& file;
    ~Remove() { std::remove(file.c_str()); }
  } remove{path};
  // An input the fuzzer makes gzip or zstd is decompressed into a copy in the
  // temp folder before its importer reads it: in memory too.
  [[maybe_unused]] static const bool copiesInMemory = ::setenv("TMPDIR", scratchDir().c_str(), 1) == 0;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return;
  if (size > 0) std::fwrite(data, 1, size, f);
  std::fclose(f);
  auto result = importers::importTrace(path);
  if (result.has_value() && result->model) {
    // Touch what the views read first, so model inconsistencies surface under ASan.
    volatile uint64_t sink = result->model->eventCount + result->model->sliceCount();
    (void)sink;
  }
}

}  // namespace fuzz
