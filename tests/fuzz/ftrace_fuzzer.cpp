// libFuzzer target for the ftrace-text importer (tests/fuzz/fuzz_support.h).
// Corpus tests/fuzz/corpus/ftrace (README there), dictionary tests/fuzz/dict/ftrace.dict.
//   build/fuzz/tests/fuzz/ftrace_fuzzer -max_len=2048 -dict=tests/fuzz/dict/ftrace.dict -timeout=20 CORPUS_DIR
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::importBytes(data, size, "ftrace", ".txt");
  return 0;
}
