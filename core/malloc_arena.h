#pragma once

namespace core {

/// Has every thread of the program allocate from glibc's main arena
/// (mallopt(M_ARENA_MAX, 1); why: core/malloc_arena.cpp). Leaves the limit
/// as it is when the user set one (MALLOC_ARENA_MAX, or glibc.malloc.arena_max
/// in GLIBC_TUNABLES). Call it in main() before any thread starts. Returns
/// whether the limit is now one: false as well under a sanitizer's allocator,
/// which ignores mallopt.
bool useOneMallocArena();

/// Whether useOneMallocArena() set the limit, for benchmark output.
bool oneMallocArena();

}  // namespace core
