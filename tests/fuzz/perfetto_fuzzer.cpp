// libFuzzer target for the Perfetto importer (tests/fuzz/fuzz_support.h).
// Corpus tests/fuzz/corpus/perfetto (the fixtures of tests/data/perfetto, its
// corrupt ones and the nicemix fidelity fixture), dictionary
// tests/fuzz/dict/perfetto.dict (the protobuf tags the importer reads).
//   build/fuzz/tests/fuzz/perfetto_fuzzer -max_len=32768 -dict=tests/fuzz/dict/perfetto.dict -timeout=20 CORPUS_DIR
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::importBytes(data, size, "perfetto", ".perfetto-trace");
  return 0;
}
