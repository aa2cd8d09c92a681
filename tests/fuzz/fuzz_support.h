// What the file-based fuzzers share: each input is written to a temporary file
// (one per fuzzer process) and imported through importers::importTrace, the
// path every user file takes (probe, read, finalize). Included by the
// tests/fuzz/*_fuzzer.cpp targets only.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "importers/importer.h"

namespace fuzz {

/// Imports `data` as a file named /tmp/schedlab-<tag>-fuzz-<pid><suffix>.
inline void importBytes(const uint8_t* data, size_t size, const char* tag, const char* suffix) {
  static const std::string path =
      std::string("/tmp/schedlab-") + tag + "-fuzz-" + std::to_string(::getpid()) + suffix;
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
