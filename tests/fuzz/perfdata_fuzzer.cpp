// libFuzzer target for the perf.data importer (tests/fuzz/fuzz_support.h).
// Corpus tests/fuzz/corpus/perfdata (README there: file and pipe layout),
// dictionary tests/fuzz/dict/perfdata.dict.
//   build/fuzz/tests/fuzz/perfdata_fuzzer -max_len=24576 -dict=tests/fuzz/dict/perfdata.dict -timeout=20 CORPUS_DIR
// Leaks inside libtraceevent are suppressed by tests/sanitizers/lsan.supp
// (run-fuzzers.sh passes it), not here.
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::importBytes(data, size, "perfdata", ".data");
  return 0;
}
