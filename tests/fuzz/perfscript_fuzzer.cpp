// libFuzzer target for the perf-script text importer (tests/fuzz/fuzz_support.h).
// Corpus tests/fuzz/corpus/perfscript (README there), dictionary tests/fuzz/dict/perfscript.dict.
//   build/fuzz/tests/fuzz/perfscript_fuzzer -max_len=2048 -dict=tests/fuzz/dict/perfscript.dict -timeout=20 CORPUS_DIR
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::importBytes(data, size, "perfscript", ".txt");
  return 0;
}
