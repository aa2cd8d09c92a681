// The program's memory on transparent huge pages, when the user asks for them
// (SCHEDLAB_HUGE_PAGES=1).
//
// Why they can help: the trace model's columns, the extraction's arrays, the
// simulation's tables and the statistics' sweeps are tens to hundreds of MB,
// filled once and then read at random. With 4 KiB pages every fresh page is a
// fault and every random read risks a TLB miss. Debian's kernels give huge
// pages only to memory advised with MADV_HUGEPAGE (transparent_hugepage/
// enabled = madvise).
// Why they are not the default: on a virtual machine whose host takes free
// guest memory back (free page reporting), a fresh huge page can cost far
// more than the 512 small pages it replaces. On this project's machine, a
// few seconds after the last run freed its memory: 300 MB touched once took
// 2.5-3.4 s on huge pages against 0.12-0.17 s on small ones, and `info` on a
// 3.3M-event trace.dat 1.30 s against 0.52 s (docs/performance.md, "Huge pages"). Warm, they
// saved at most a few percent. The worst case of small pages is bounded; that
// of huge pages is not something a user can see coming.
// Two things ask for them:
//  - glibc advises its heaps and its mapped chunks under
//    GLIBC_TUNABLES=glibc.malloc.hugetlb=1, but reads tunables only when a
//    program starts: rerunWithHugePageMalloc() re-executes the program with it
//    set. Advising the heap from outside malloc does not work: glibc writes
//    each heap extension's header before the caller sees it, and a range with
//    a small page already in it stays small.
//  - operator new advises every block of a huge page or more itself, as
//    glibc's madvise_thp does. glibc under its tunable leaves a large block
//    that it takes from a heap's free space as it is.
// Only the throwing single-object operator new is replaced: libstdc++'s array
// and nothrow forms call it, and its operator delete frees what malloc
// returned. Sanitizer runtimes bring their own allocator and operator new
// (which checks new/delete pairing), so under them this file does neither.

#include "core/huge_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <new>
#include <string>
#include <string_view>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define SCHEDLAB_SANITIZER_MALLOC 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SCHEDLAB_SANITIZER_MALLOC 1
#endif

namespace core {
namespace {

constexpr const char* kTunable = "glibc.malloc.hugetlb";

}  // namespace

bool hugePagesRequested() {
  const char* asked = std::getenv("SCHEDLAB_HUGE_PAGES");
  return asked && *asked && std::string_view(asked) != "0";
}

bool kernelGivesHugePages() {
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  return std::getline(mode, text) && text.find("[never]") == std::string::npos;
}

bool hugePagesPossible() {
#ifdef SCHEDLAB_SANITIZER_MALLOC
  return false;
#else
  return true;
#endif
}

void rerunWithHugePageMalloc(char** argv) {
  if (!hugePagesPossible() || !hugePagesRequested()) return;
  const char* current = std::getenv("GLIBC_TUNABLES");
  const bool hadTunables = current != nullptr;
  const std::string before = current ? current : "";
  std::string tunables = before;
  if (!hugePageMallocSettingIn(tunables).empty() || !kernelGivesHugePages()) return;
  tunables += (tunables.empty() ? "" : ":") + std::string(kTunable) + "=1";
  if (setenv("GLIBC_TUNABLES", tunables.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // No exec (no /proc, say): go on as this process is, with the environment
  // as it was, so that hugePageMallocSetting() says what glibc applied.
  if (hadTunables)
    setenv("GLIBC_TUNABLES", before.c_str(), 1);
  else
    unsetenv("GLIBC_TUNABLES");
}

std::string hugePageMallocSettingIn(std::string_view tunables) { return glibcTunableIn(tunables, kTunable); }

std::string glibcTunableIn(std::string_view tunables, std::string_view name) {
  const std::string key = std::string(name) + "=";
  std::string value;
  while (!tunables.empty()) {
    const size_t end = tunables.find(':');
    const std::string_view item = tunables.substr(0, end);
    if (item.substr(0, key.size()) == key) value = item.substr(key.size());
    tunables = end == std::string_view::npos ? std::string_view() : tunables.substr(end + 1);
  }
  return value;
}

std::string hugePageMallocSetting() {
  const char* current = std::getenv("GLIBC_TUNABLES");
  return hugePageMallocSettingIn(current ? current : "");
}

}  // namespace core

#ifndef SCHEDLAB_SANITIZER_MALLOC

namespace {

// x86-64's and 4 KiB-page arm64's PMD size. Smaller blocks cannot hold a
// huge page.
constexpr std::size_t kHugePage = std::size_t{2} << 20;

// The whole pages of the block, its header's page included. Whole huge pages
// inside them become huge as they are touched; a page-aligned range outside
// the block but inside the same mapping or heap only gets the advice.
void adviseHugePages(void* block, std::size_t size) {
  static const auto pageSize = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(block) & ~(pageSize - 1);
  const auto end = reinterpret_cast<std::uintptr_t>(block) + size;
  // Advice only: a kernel without THP says EINVAL and the block stays as it is.
  madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}  // namespace

void* operator new(std::size_t size) {
  if (size == 0) size = 1;
  for (;;) {
    if (void* block = std::malloc(size)) {
      // Read at each large block (a getenv beside a mapping of 2 MiB or more).
      if (size >= kHugePage && core::hugePagesRequested()) adviseHugePages(block, size);
      return block;
    }
    const std::new_handler handler = std::get_new_handler();
    if (!handler) throw std::bad_alloc();
    handler();
  }
}

#endif
