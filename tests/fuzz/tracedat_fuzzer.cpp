// libFuzzer target for the trace.dat importer: writes each input to a temporary
// file and imports it through importers::importTrace (probe, read, finalize),
// the path every user file takes. Seeds: tests/data/tracedat/*.dat (v6, v7,
// v7 zstd) and the shared traces' *.dat (tests/fuzz/run-fuzzers.sh). Inputs
// that lose the magic are not claimed by the importer; libFuzzer finds the
// magic from the seeds quickly, so no selector byte is needed.
//   build/fuzz/tests/fuzz/tracedat_fuzzer -max_len=262144 -timeout=20 CORPUS_DIR
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "importers/importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/schedlab-tracedat-fuzz-" + std::to_string(::getpid()) + ".dat";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  if (size > 0) std::fwrite(data, 1, size, f);
  std::fclose(f);
  auto result = importers::importTrace(path);
  if (result.has_value() && result->model) {
    // Touch what the views read first, so model inconsistencies surface under ASan.
    volatile uint64_t sink = result->model->eventCount + result->model->sliceCount();
    (void)sink;
  }
  return 0;
}
