// core/prefault.h: the pages of a column's next rows are mapped by one call,
// and the capacity beyond them stays untouched (it would count in the RSS).
#include "core/prefault.h"

#include <linux/perf_event.h>
#include <malloc.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
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

// Why the faults below cannot be counted here, or null when they can.
const char* faultsUncountable() {
#if defined(__SANITIZE_ADDRESS__)
  // Every instrumented access, memcpy() included, reads the shadow memory of
  // what it touches, and those pages fault in on their own.
  return "under AddressSanitizer the shadow memory's own page faults are counted too";
#else
  return nullptr;
#endif
}

// The page faults this thread traps into while `work` runs, counted by the
// kernel's software event: pages that madvise() populates are not trapped for,
// and not counted (getrusage() counts them too). -1 when they cannot be
// counted: faultsUncountable(), or perf events not allowed here.
template <class Work>
long trappedFaultsDuring(Work work) {
  if (faultsUncountable()) {
    work();
    return -1;
  }
  perf_event_attr attr{};
  attr.type = PERF_TYPE_SOFTWARE;
  attr.size = sizeof attr;
  attr.config = PERF_COUNT_SW_PAGE_FAULTS;
  attr.disabled = 1;
  const int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
  if (fd < 0) {
    work();  // the test's other checks still need it done
    return -1;
  }
  ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
  work();
  ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  uint64_t count = 0;
  const bool read = ::read(fd, &count, sizeof count) == sizeof count;
  close(fd);
  return read ? static_cast<long>(count) : -1;
}

// Every big block from a fresh mapping: glibc otherwise raises its mmap
// threshold as blocks are freed and serves them from heap pages that earlier
// tests left resident, where there is nothing left to fault.
void freshMappingsForBigBlocks() { mallopt(M_MMAP_THRESHOLD, 128 * 1024); }

std::vector<int64_t> countingColumn(size_t rows) {
  std::vector<int64_t> column(rows);
  std::iota(column.begin(), column.end(), 0);
  return column;
}

bool holdsCountingRows(const std::vector<int64_t>& column, size_t rows) {
  if (column.size() != rows) return false;
  for (size_t i = 0; i < rows; ++i)
    if (column[i] != static_cast<int64_t>(i)) return false;
  return true;
}

// 8 MiB of rows: each move below goes to a fresh mapping of 2048 pages or more.
constexpr size_t kRows = size_t{1} << 20;

TEST(Prefault, AColumnThatMustGrowDoublesIntoPagesMappedBeforeItsRowsMove) {
  if (!kernelPopulatesForWriting()) GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux 5.14)";
  freshMappingsForBigBlocks();
  std::vector<int64_t> column = countingColumn(kRows);
  ASSERT_EQ(column.capacity(), kRows);
  const size_t ahead = 64 * kPage / sizeof(int64_t);
  const long faults = trappedFaultsDuring([&] { core::growMapped(column, ahead); });
  EXPECT_EQ(column.capacity(), 2 * kRows) << "grows as push_back() would";
  EXPECT_TRUE(holdsCountingRows(column, kRows));
  // Copied into 2048 pages, plus 64 of rows ahead: a few faults, not one per page.
  if (faults < 0) GTEST_SKIP() << (faultsUncountable() ? faultsUncountable() : "perf events are not allowed here");
  EXPECT_LT(faults, 64) << faults << " faults";
  const int64_t* next = column.data() + kRows;
  EXPECT_GE(residentPages(next, ahead * sizeof(int64_t)), 63u);
  EXPECT_EQ(residentPages(next + ahead + kPage / sizeof(int64_t), 64 * kPage), 0u) << "the rest stays unmapped";
}

TEST(Prefault, AColumnWithFewerRowsThanAskedIsLeftToGrowByItself) {
  std::vector<int64_t> column = countingColumn(10);
  core::growMapped(column, 8192);
  EXPECT_EQ(column.capacity(), 10u);
  EXPECT_TRUE(holdsCountingRows(column, 10));
}

TEST(Prefault, ReservingPastTheCapacityMovesTheRowsIntoMappedPages) {
  if (!kernelPopulatesForWriting()) GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux 5.14)";
  freshMappingsForBigBlocks();
  std::vector<int64_t> column = countingColumn(kRows);
  const long faults = trappedFaultsDuring([&] { core::reserveMapped(column, kRows / 2); });
  EXPECT_EQ(column.capacity(), kRows + kRows / 2) << "exactly what was asked";
  EXPECT_TRUE(holdsCountingRows(column, kRows));
  if (faults < 0) GTEST_SKIP() << (faultsUncountable() ? faultsUncountable() : "perf events are not allowed here");
  EXPECT_LT(faults, 64) << faults << " faults";
  EXPECT_GE(residentPages(column.data() + kRows, kRows / 2 * sizeof(int64_t)), kRows / 2 * sizeof(int64_t) / kPage - 1);
}

TEST(Prefault, ShrinkingMovesTheRowsIntoMappedPages) {
  if (!kernelPopulatesForWriting()) GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux 5.14)";
  freshMappingsForBigBlocks();
  std::vector<int64_t> column = countingColumn(kRows);
  column.reserve(2 * kRows);
  const long faults = trappedFaultsDuring([&] { core::shrinkMapped(column); });
  EXPECT_EQ(column.capacity(), kRows);
  EXPECT_TRUE(holdsCountingRows(column, kRows));
  if (faults < 0) GTEST_SKIP() << (faultsUncountable() ? faultsUncountable() : "perf events are not allowed here");
  EXPECT_LT(faults, 64) << faults << " faults";
}

TEST(Prefault, AssigningFillsPagesMappedFirst) {
  if (!kernelPopulatesForWriting()) GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux 5.14)";
  freshMappingsForBigBlocks();
  std::vector<uint32_t> column;
  const long faults = trappedFaultsDuring([&] { core::assignMapped(column, kRows, UINT32_MAX); });
  EXPECT_EQ(column.size(), kRows);
  EXPECT_EQ(column.capacity(), kRows);
  EXPECT_EQ(column.front(), UINT32_MAX);
  EXPECT_EQ(column.back(), UINT32_MAX);
  if (faults < 0) GTEST_SKIP() << (faultsUncountable() ? faultsUncountable() : "perf events are not allowed here");
  EXPECT_LT(faults, 64) << faults << " faults";
}

TEST(Prefault, ATimeColumnShrinksIntoMappedPages) {
  if (!kernelPopulatesForWriting()) GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux 5.14)";
  freshMappingsForBigBlocks();
  core::TimeColumn column;
  column.reserve(2 * kRows);
  for (size_t i = 0; i < kRows; ++i) column.push_back(static_cast<int64_t>(i) * 1000);
  const long faults = trappedFaultsDuring([&] { column.shrink_to_fit(); });
  EXPECT_EQ(column.capacity(), kRows);
  EXPECT_EQ(column[kRows - 1], static_cast<int64_t>(kRows - 1) * 1000);
  if (faults < 0) GTEST_SKIP() << (faultsUncountable() ? faultsUncountable() : "perf events are not allowed here");
  EXPECT_LT(faults, 64) << faults << " faults";
}

}  // namespace
