// libFuzzer target for the ftrace-text importer (tests/fuzz/fuzz_support.h).
// Seeds: tests/data/ftrace/** and the shared traces' text traces.
//   build/fuzz/tests/fuzz/ftrace_fuzzer -max_len=1048576 -timeout=20 CORPUS_DIR
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::importBytes(data, size, "ftrace", ".txt");
  return 0;
}
