// libFuzzer target for the perf.data importer (tests/fuzz/fuzz_support.h).
// Seeds: tests/data/perf/*.perf.data (file and pipe layout) and the small
// perf.data files of shared/traces/recorded.
//   build/fuzz/tests/fuzz/perfdata_fuzzer -max_len=1048576 -timeout=20 CORPUS_DIR
// Leaks inside libtraceevent are suppressed by tests/sanitizers/lsan.supp
// (run-fuzzers.sh passes it), not here.
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::importBytes(data, size, "perfdata", ".data");
  return 0;
}
