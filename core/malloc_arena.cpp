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
// costs nothing measurable; the README ("Huge pages") gives the figures.

#include "core/malloc_arena.h"

#include <malloc.h>

#include <cstdlib>

#include "core/huge_pages.h"

namespace core {
namespace {
bool g_oneArena = false;
}  // namespace

bool useOneMallocArena() {
  if (std::getenv("MALLOC_ARENA_MAX")) return false;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && !glibcTunableIn(tunables, "glibc.malloc.arena_max").empty()) return false;
  g_oneArena = mallopt(M_ARENA_MAX, 1) == 1;  // a sanitizer's allocator ignores it and says 0
  return g_oneArena;
}

bool oneMallocArena() { return g_oneArena; }

}  // namespace core
