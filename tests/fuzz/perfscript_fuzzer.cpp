// libFuzzer target for the perf-script text importer (tests/fuzz/fuzz_support.h).
// Seeds: tests/data/perfscript/*.txt, tests/data/perf/*.txt and the
// perf-script.txt files of shared/traces/recorded.
//   build/fuzz/tests/fuzz/perfscript_fuzzer -max_len=1048576 -timeout=20 CORPUS_DIR
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::importBytes(data, size, "perfscript", ".txt");
  return 0;
}
