// libFuzzer target for the perf.data importer: writes each input to a temporary
// file and imports it through importers::importTrace (probe, read, finalize).
// Seeds: tests/data/perf/*.perf.data (file and pipe layout) and the small
// perf.data files of shared/traces/recorded.
//   build/fuzz/tests/fuzz/perfdata_fuzzer -max_len=1048576 -timeout=20 CORPUS_DIR
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "importers/importer.h"

// libtraceevent (1.7) leaks a few bytes on some parse-error paths of
// tep_parse_format when an event format is garbled; that is its code, not ours.
extern "C" const char* __lsan_default_suppressions() { return "leak:libtraceevent.so\n"; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/schedlab-perfdata-fuzz-" + std::to_string(::getpid()) + ".data";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  if (size > 0) std::fwrite(data, 1, size, f);
  std::fclose(f);
  auto result = importers::importTrace(path);
  if (result.has_value() && result->model) {
    // Touch what the views read first, so model inconsistencies surface under ASan.
    volatile uint64_t sink = result->model->eventCount + result->model->sliceCount();
    (void)sink;
  }
  return 0;
}
