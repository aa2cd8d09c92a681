#pragma once

namespace core {

/// A glibc malloc option the user can set: its environment variable, and its
/// name in GLIBC_TUNABLES.
struct MallocOption {
  const char* variable;
  const char* tunable;
};
inline constexpr MallocOption kArenaMaxOption{"MALLOC_ARENA_MAX", "glibc.malloc.arena_max"};
inline constexpr MallocOption kMmapThresholdOption{"MALLOC_MMAP_THRESHOLD_", "glibc.malloc.mmap_threshold"};
inline constexpr MallocOption kTrimThresholdOption{"MALLOC_TRIM_THRESHOLD_", "glibc.malloc.trim_threshold"};

/// Whether the environment sets `option` itself, by either name.
bool setByUser(const MallocOption& option);

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
