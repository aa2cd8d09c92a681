// core/malloc_arena.cpp: after useOneMallocArena(), a new thread allocates
// from glibc's main arena, where otherwise glibc gives it an arena of its own.
// malloc_info() lists one <heap> element per arena. Each count is taken in a
// fresh process (a threadsafe death test re-executes the test binary), where
// no earlier test has made arenas.
#include "core/malloc_arena.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

#include "core/huge_pages.h"

namespace {

// The arenas once a new thread has allocated; 0 when the limit could not be set.
int arenasAfterAThreadAllocates(bool oneArena) {
  if (oneArena && !core::useOneMallocArena()) return 0;
  std::thread([] {
    void* block = std::malloc(4096);
    std::free(block);
  }).join();
  char* text = nullptr;
  size_t length = 0;
  FILE* out = open_memstream(&text, &length);
  malloc_info(0, out);
  std::fclose(out);
  int heaps = 0;
  for (size_t at = std::string_view(text, length).find("<heap nr="); at != std::string_view::npos;
       at = std::string_view(text, length).find("<heap nr=", at + 1))
    ++heaps;
  std::free(text);
  return heaps;
}

TEST(MallocArena, ThreadsAllocateFromTheMainArena) {
  if (!core::hugePagesPossible()) GTEST_SKIP() << "sanitizer build: its runtime's allocator has no arenas to limit";
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (std::getenv("MALLOC_ARENA_MAX") || (tunables && !core::glibcTunableIn(tunables, "glibc.malloc.arena_max").empty()))
    GTEST_SKIP() << "the environment sets glibc's arena limit itself";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::_Exit(arenasAfterAThreadAllocates(true)), testing::ExitedWithCode(1), "");
  // The control: without the limit the thread gets a second arena.
  EXPECT_EXIT(std::_Exit(arenasAfterAThreadAllocates(false)), testing::ExitedWithCode(2), "");
}

// 1 when a freed 16 MiB block stays in the heap (it came from the heap, not
// a mapping of its own, and the heap was not trimmed after it); 2 otherwise;
// 0 when the settings could not be made.
int freedBlockStaysInTheHeap(bool keep) {
  if (keep && !core::keepFreedMemory()) return 0;
  constexpr size_t kBlock = size_t{16} << 20;
  const size_t mappedBefore = mallinfo2().hblks;
  char* volatile block = static_cast<char*>(std::malloc(kBlock));  // volatile: not elided with its free()
  block[kBlock - 1] = 1;
  const bool fromTheHeap = mallinfo2().hblks == mappedBefore;
  std::free(block);
  const bool notTrimmed = mallinfo2().arena >= kBlock;
  return fromTheHeap && notTrimmed ? 1 : 2;
}

TEST(MallocArena, FreedMemoryStaysInTheHeapForTheNextAllocation) {
  if (!core::hugePagesPossible()) GTEST_SKIP() << "sanitizer build: its runtime's allocator ignores mallopt";
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") || std::getenv("MALLOC_TRIM_THRESHOLD_") ||
      (tunables && (!core::glibcTunableIn(tunables, "glibc.malloc.mmap_threshold").empty() ||
                    !core::glibcTunableIn(tunables, "glibc.malloc.trim_threshold").empty())))
    GTEST_SKIP() << "the environment sets glibc's thresholds itself";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::_Exit(freedBlockStaysInTheHeap(true)), testing::ExitedWithCode(1), "");
  // The control: by default glibc maps a block this big on its own.
  EXPECT_EXIT(std::_Exit(freedBlockStaysInTheHeap(false)), testing::ExitedWithCode(2), "");
}

TEST(MallocArena, TunableIsReadFromTheTunablesString) {
  EXPECT_EQ(core::glibcTunableIn("glibc.malloc.hugetlb=1:glibc.malloc.arena_max=4", "glibc.malloc.arena_max"), "4");
  EXPECT_EQ(core::glibcTunableIn("glibc.malloc.hugetlb=1", "glibc.malloc.arena_max"), "");
}

}  // namespace
