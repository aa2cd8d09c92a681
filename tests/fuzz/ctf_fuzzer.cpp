// libFuzzer target for the CTF importer. CTF is a folder: a metadata file that
// describes the binary layout, and stream files. The fuzzer keeps the metadata
// valid (one of the fixtures of tests/data/ctf, chosen by the input's first
// byte) and writes the rest of the input as the trace's only stream file, in a
// temporary folder, then imports it through importers::importTrace.
//
//   LSAN_OPTIONS=suppressions=tests/sanitizers/lsan.supp build/fuzz/tests/fuzz/ctf_fuzzer -max_len=4097 \
//     -dict=tests/fuzz/dict/ctf.dict -timeout=30 CORPUS_DIR
// The committed corpus tests/fuzz/corpus/ctf started from the fixtures' stream
// files with their selector byte in front (tests/fuzz/corpus/README.md).
// SCHEDLAB_CTF_FUZZ_DATA overrides where tests/data/ctf is.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

#include "importers/importer.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

namespace fs = std::filesystem;

struct Fixture {
  std::string metadata;  ///< bytes of a valid metadata file
  std::string streamName;
};

std::vector<Fixture> loadFixtures() {
  const char* env = std::getenv("SCHEDLAB_CTF_FUZZ_DATA");
  const fs::path data = env ? fs::path(env) : fs::path(SCHEDLAB_TEST_DATA) / "ctf";
  std::vector<Fixture> fixtures;
  for (const auto& [dir, stream] : {std::pair{"perf-sleep/ctf", "perf_stream_0"}, std::pair{"synthetic-lttng", "chan_0"}}) {
    std::ifstream in(data / dir / "metadata", std::ios::binary);
    if (!in) continue;
    fixtures.push_back({std::string(std::istreambuf_iterator<char>(in), {}), stream});
  }
  if (fixtures.empty()) std::abort();  // misconfigured: nothing to fuzz
  return fixtures;
}

struct Workspace {
  std::vector<Fixture> fixtures = loadFixtures();
  fs::path root = fs::path(fuzz::scratchDir()) / ("schedlab-ctf-fuzz-" + std::to_string(::getpid()));
  std::vector<fs::path> dirs;
  Workspace() {
    for (size_t i = 0; i < fixtures.size(); ++i) {
      dirs.push_back(root / std::to_string(i));
      fs::create_directories(dirs.back());
      std::ofstream(dirs.back() / "metadata", std::ios::binary) << fixtures[i].metadata;
    }
  }
  ~Workspace() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
};

}  // namespace

// babeltrace2's plugins have no frame pointers: only the slow unwinder finds the
// libbabeltrace2 frames that lsan.supp matches (tests/sanitizers/full_unwind.cpp).
// run-fuzzers.sh searches with fast stacks and no leak checks, then runs what
// it kept again with these options (leaks_checked_after there).
extern "C" const char* __asan_default_options() { return "fast_unwind_on_malloc=0"; }

// Beyond tests/sanitizers/lsan.supp, for what only corrupt streams reach: the
// ctf plugin's message iterator loses what it was building when a packet turns
// out corrupt and it returns an error (80 + 104 bytes under
// bt_message_iterator_next, "Cannot handle state" on a garbled event payload),
// and after a babeltrace2 abort the crash guard abandons the graph with it
// (importers/ctf/ctf_crash_guard.h). Not in lsan.supp: in the test suite a
// message our sink forgets to release would have this frame too.
extern "C" const char* __lsan_default_suppressions() { return "leak:bt_message_iterator_next\n"; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Workspace ws;
  if (size < 1) return 0;
  const size_t which = data[0] % ws.fixtures.size();
  const fs::path& dir = ws.dirs[which];
  {
    std::ofstream out(dir / ws.fixtures[which].streamName, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  (void)importers::importTrace(dir.string());
  return 0;
}
