// The program's large C++ allocations ask the kernel for transparent huge
// pages.
//
// Why: the trace model's columns, the replay's workload arrays and the
// statistics' sweeps are tens to hundreds of MB, grown by doubling and then
// filled once. With 4 KiB pages every fresh page is a fault: on a 2.7M-event
// trace.dat, `info` took 32k faults and a third of its CPU time in the
// kernel. Debian's kernels give huge pages only to ranges advised with
// MADV_HUGEPAGE (transparent_hugepage/enabled = madvise). glibc can advise
// its own large chunks (GLIBC_TUNABLES=glibc.malloc.hugetlb=1), but reads
// that only from the environment at start-up, so the allocations advise
// themselves here: one madvise per allocation of at least a huge page.
//
// Only the throwing single-object operator new is replaced: libstdc++'s
// array and nothrow forms call it, and its operator delete frees what
// malloc returned. Sanitizer runtimes bring their own operator new (which
// checks new/delete pairing), so under them this file replaces nothing.

#include "core/huge_page_new.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define SCHEDLAB_SANITIZER_NEW 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SCHEDLAB_SANITIZER_NEW 1
#endif

#ifdef SCHEDLAB_SANITIZER_NEW

bool core::largeAllocationsAdviseHugePages() { return false; }

#else

bool core::largeAllocationsAdviseHugePages() { return true; }

namespace {

// x86-64's and 4 KiB-page arm64's PMD size. Smaller blocks cannot hold a
// huge page.
constexpr std::size_t kHugePage = std::size_t{2} << 20;

// As glibc's own advice does (malloc.c, madvise_thp): the whole pages of the
// block, its header's page included. Whole huge pages inside them become huge
// as they are touched; a page-aligned range outside the block but inside the
// same mapping or heap only gets the advice.
void adviseHugePages(void* block, std::size_t size) {
  const auto pageSize = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
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
      if (size >= kHugePage) adviseHugePages(block, size);
      return block;
    }
    const std::new_handler handler = std::get_new_handler();
    if (!handler) throw std::bad_alloc();
    handler();
  }
}

#endif
