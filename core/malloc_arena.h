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

/// For a program that runs one command and exits: memory it frees stays in
/// the heap for its next allocations instead of going back to the kernel
/// (why: core/malloc_arena.cpp). Blocks of up to 32 MiB come from the heap;
/// the heap is never trimmed. Leaves glibc's own policy when the user set
/// either (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_, or the same in
/// GLIBC_TUNABLES). Returns whether both were set.
bool keepFreedMemory();

/// Whether keepFreedMemory() set them, for benchmark output.
bool freedMemoryKept();

}  // namespace core
