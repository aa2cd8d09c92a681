// core/prefault.h: the pages of a column's next rows are mapped by one call,
// and the capacity beyond them stays untouched (it would count in the RSS).
#include "core/prefault.h"

#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older headers lack it
#endif

namespace {

const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));

// Resident pages among the whole pages of [begin, begin + bytes).
size_t residentPages(const void* begin, size_t bytes) {
  const auto first = (reinterpret_cast<uintptr_t>(begin) + kPage - 1) & ~(kPage - 1);
  const auto last = (reinterpret_cast<uintptr_t>(begin) + bytes) & ~(kPage - 1);
  if (last <= first) return 0;
  std::vector<unsigned char> vec((last - first) / kPage);
  if (mincore(reinterpret_cast<void*>(first), last - first, vec.data()) != 0) return SIZE_MAX;
  size_t n = 0;
  for (unsigned char v : vec) n += v & 1;
  return n;
}

// Asked of the kernel directly, not through prefaultForWriting(): a
// prefaultForWriting() that did nothing must fail this test, not skip it.
bool kernelPopulatesForWriting() {
  void* page = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return false;
  const bool ok = madvise(page, kPage, MADV_POPULATE_WRITE) == 0;
  munmap(page, kPage);
  return ok;
}

TEST(Prefault, MapsThePagesOfTheNextRowsAndNoMore) {
  std::vector<int64_t> column;
  column.reserve(size_t{4} << 20);  // 32 MiB: a fresh mapping, untouched
  column.push_back(1);
  const int64_t* next = column.data() + 1;
  const size_t ahead = 64 * kPage / sizeof(int64_t);  // 64 pages of rows
  ASSERT_EQ(residentPages(next + 2 * ahead, 64 * kPage), 0u) << "the allocator touched the capacity";
  if (!kernelPopulatesForWriting()) GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux 5.14)";
  core::prefaultRows(column, ahead);
  // All whole pages of the next rows; the page holding row 0 was touched already.
  EXPECT_EQ(residentPages(next, ahead * sizeof(int64_t)), 63u);
  EXPECT_EQ(residentPages(next + ahead + kPage / sizeof(int64_t), 64 * kPage), 0u);
  // Never past the capacity, even asked for more rows than it has.
  std::vector<int64_t> small;
  small.reserve(16);
  core::prefaultRows(small, size_t{1} << 30);
  EXPECT_EQ(small.size(), 0u);
}

}  // namespace
