// libFuzzer target for the trace.dat importer (tests/fuzz/fuzz_support.h).
// Seeds: tests/data/tracedat/*.dat (v6, v7, v7 zstd) and the shared traces'
// *.dat (tests/fuzz/run-fuzzers.sh). Inputs that lose the magic are not claimed
// by the importer; libFuzzer finds the magic from the seeds quickly, so no
// selector byte is needed.
//   build/fuzz/tests/fuzz/tracedat_fuzzer -max_len=262144 -timeout=20 CORPUS_DIR
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::importBytes(data, size, "tracedat", ".dat");
  return 0;
}
