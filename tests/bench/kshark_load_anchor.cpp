// The performance anchor for the trace.dat importer: KernelShark's own loader
// (libkshark: kshark_open + kshark_load_entries) over one file, reporting wall
// time and peak RSS of this process as one JSON line. run-import-bench.sh runs it
// in its own process so its memory never mixes with SchedLab's.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

// libkshark.h pulls in json-c headers, which are not installed here (only the
// runtime library is); the four entry points used are declared by hand, with the
// signatures of libkshark 2.2 (/usr/include/kernelshark/libkshark.h).
extern "C" {
struct kshark_context;
struct kshark_entry;
bool kshark_instance(kshark_context** ctx);
int kshark_open(kshark_context* ctx, const char* file);
ssize_t kshark_load_entries(kshark_context* ctx, int sd, kshark_entry*** dataRows);
void kshark_free(kshark_context* ctx);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: kshark_load_anchor TRACE.dat\n");
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  kshark_context* ctx = nullptr;
  if (!kshark_instance(&ctx)) {
    std::fprintf(stderr, "kshark_instance failed\n");
    return 1;
  }
  const int sd = kshark_open(ctx, argv[1]);
  if (sd < 0) {
    std::fprintf(stderr, "%s: kshark_open failed (%d)\n", argv[1], sd);
    return 1;
  }
  kshark_entry** rows = nullptr;
  const ssize_t n = kshark_load_entries(ctx, sd, &rows);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("{\"reader\": \"kshark\", \"events\": %zd, \"seconds\": %.4f, \"peak_rss_kb\": %ld}\n", n, seconds,
              usage.ru_maxrss);
  // The entries are left to process exit: freeing 4M of them one by one would only
  // add to the anchor's time, and the measurement is already taken.
  return n < 0 ? 1 : 0;
}
