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
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

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
  if (core::setByUser(core::kArenaMaxOption))
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
  if (core::setByUser(core::kMmapThresholdOption) || core::setByUser(core::kTrimThresholdOption))
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

// What the user set stays: by its variable or by its tunable, and only that option.
TEST(MallocArena, OptionsTheUserSetAreLeftAlone) {
  const auto saved = [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  const char* names[] = {"GLIBC_TUNABLES", "MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"};
  std::vector<std::optional<std::string>> before;
  for (const char* n : names) before.push_back(saved(n)), ::unsetenv(n);

  EXPECT_FALSE(core::setByUser(core::kArenaMaxOption));
  ::setenv("MALLOC_ARENA_MAX", "4", 1);
  EXPECT_TRUE(core::setByUser(core::kArenaMaxOption));
  EXPECT_FALSE(core::useOneMallocArena());
  ::unsetenv("MALLOC_ARENA_MAX");
  ::setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0:glibc.malloc.trim_threshold=4096", 1);
  EXPECT_TRUE(core::setByUser(core::kTrimThresholdOption));
  EXPECT_FALSE(core::setByUser(core::kMmapThresholdOption));
  EXPECT_FALSE(core::setByUser(core::kArenaMaxOption));
  EXPECT_FALSE(core::keepFreedMemory());
  EXPECT_FALSE(core::freedMemoryKept());

  for (size_t i = 0; i < std::size(names); ++i)
    if (before[i]) ::setenv(names[i], before[i]->c_str(), 1);
    else ::unsetenv(names[i]);
}

}  // namespace
