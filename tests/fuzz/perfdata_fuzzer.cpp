// libFuzzer target for the perf.data importer (tests/fuzz/fuzz_support.h).
// An input is one perf.data file, or — starting with kFolderMagic — the folder
// of perf record --threads: a count byte, then per file a u32 length and its
// bytes, written as `data`, `data.0`, `data.1`... (the header file first).
// Corpus tests/fuzz/corpus/perfdata (README there: file and pipe layout),
// dictionary tests/fuzz/dict/perfdata.dict; folders are packed as above by
// tests/data/perf/pack_perf_folder.py.
//   build/fuzz/tests/fuzz/perfdata_fuzzer -max_len=24576 -dict=tests/fuzz/dict/perfdata.dict -timeout=20 CORPUS_DIR
// Leaks inside libtraceevent are suppressed by tests/sanitizers/lsan.supp
// (run-fuzzers.sh passes it), not here.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "tests/fuzz/fuzz_support.h"

namespace {

constexpr char kFolderMagic[8] = {'P', 'E', 'R', 'F', 'D', 'I', 'R', '1'};
constexpr size_t kMaxFiles = 8;

void importFolder(const uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  static const fs::path folder = fs::temp_directory_path() / ("schedlab-perfdir-fuzz-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove_all(folder, ec);
  fs::create_directories(folder, ec);
  size_t pos = sizeof kFolderMagic;
  if (pos >= size) return;
  const size_t files = std::min<size_t>(data[pos++], kMaxFiles);
  for (size_t i = 0; i < files && pos + 4 <= size; ++i) {
    uint32_t len;
    std::memcpy(&len, data + pos, 4);
    pos += 4;
    len = static_cast<uint32_t>(std::min<size_t>(len, size - pos));
    const std::string name = i == 0 ? "data" : "data." + std::to_string(i - 1);
    std::ofstream(folder / name, std::ios::binary).write(reinterpret_cast<const char*>(data + pos), len);
    pos += len;
  }
  auto result = importers::importTrace(folder.string());
  if (result.has_value() && result->model) {
    volatile uint64_t sink = result->model->eventCount + result->model->sliceCount();
    (void)sink;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size >= sizeof kFolderMagic && std::memcmp(data, kFolderMagic, sizeof kFolderMagic) == 0)
    importFolder(data, size);
  else
    fuzz::importBytes(data, size, "perfdata", ".data");
  return 0;
}
