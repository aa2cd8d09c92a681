// libFuzzer target for the Perfetto importer (tests/fuzz/fuzz_support.h).
// Seeds (tests/fuzz/run-fuzzers.sh): tests/data/perfetto/*.perfetto-trace and
// tests/data/perfetto/corrupt/; the public Android traces are past its 1 MiB seed cap.
//   build/fuzz/tests/fuzz/perfetto_fuzzer -max_len=1048576 -timeout=20 CORPUS_DIR
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::importBytes(data, size, "perfetto", ".perfetto-trace");
  return 0;
}
