// libFuzzer target for the trace.dat importer (tests/fuzz/fuzz_support.h).
// Corpus tests/fuzz/corpus/tracedat (README there: v6, v7, v7 zstd), dictionary
// tests/fuzz/dict/tracedat.dict. Inputs that lose the magic are not claimed by
// the importer; the corpus and the dictionary keep it, so no selector byte is
// needed.
//   build/fuzz/tests/fuzz/tracedat_fuzzer -max_len=16384 -dict=tests/fuzz/dict/tracedat.dict -timeout=20 CORPUS_DIR
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::importBytes(data, size, "tracedat", ".dat");
  return 0;
}
