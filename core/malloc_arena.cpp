// One malloc arena for the whole program.
//
// Why: glibc gives each new thread an arena of its own, and memory freed in
// one arena serves only that arena's threads. The pipeline's stages run on
// helper threads: `replay` computes the recording's statistics on one while
// the main thread simulates, after the extraction has freed tens of MB of
// tables. In a second arena the statistics took new memory instead, and new
// memory is not free: the kernel zeroes every page (a fifth of the `replay`
// command's CPU time on this project's machine, about 1 ms per MB). The
// threads allocate rarely and in large blocks, so sharing one arena's lock
// costs nothing measurable; docs/performance.md ("One malloc arena") gives the figures.

// Freed memory kept in the heap, for the command-line program.
//
// Why: by default glibc gives blocks above a threshold (which it raises as
// they are freed) their own mappings and unmaps them when freed, and returns
// the top of the heap to the kernel when it grows past a threshold. Each
// stage of an import or a replay frees tens of MB that the next one then
// takes again as fresh memory, and fresh memory is the costliest there is on
// this project's machine: a virtual machine whose host backs a guest page
// only when it is first touched. A C program touching 64 MiB: 12-17 ms to
// populate it, then 85-95 ms for the first write and 3 ms for the second
// (180 ms when the first write also takes the guest's faults). A process
// that exits after one command gains nothing by handing memory back early.

#include "core/malloc_arena.h"

#include <malloc.h>

#include <cstdlib>
#include <limits>

#include "core/huge_pages.h"

namespace core {
namespace {
bool g_oneArena = false;
bool g_freedMemoryKept = false;
}  // namespace

bool setByUser(const MallocOption& option) {
  if (std::getenv(option.variable)) return true;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  return tunables && !glibcTunableIn(tunables, option.tunable).empty();
}

bool useOneMallocArena() {
  if (setByUser(kArenaMaxOption)) return false;
  g_oneArena = mallopt(M_ARENA_MAX, 1) == 1;  // a sanitizer's allocator ignores it and says 0
  return g_oneArena;
}

bool oneMallocArena() { return g_oneArena; }

bool keepFreedMemory() {
  if (setByUser(kMmapThresholdOption) || setByUser(kTrimThresholdOption)) return false;
  // 32 MiB: glibc's ceiling for this threshold on 64-bit systems.
  constexpr int kMmapThreshold = 32 << 20;
  g_freedMemoryKept = mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1 &&
                      mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max()) == 1;
  return g_freedMemoryKept;
}

bool freedMemoryKept() { return g_freedMemoryKept; }

}  // namespace core
