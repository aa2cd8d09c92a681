#include "core/prefault.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older headers lack it
#endif

namespace core {

bool prefaultForWriting(const void* begin, const void* end) {
  static const auto pageSize = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  // Whole pages only: a page shared with memory outside the range is already
  // mapped or is someone else's to touch.
  const auto first = (reinterpret_cast<std::uintptr_t>(begin) + pageSize - 1) & ~(pageSize - 1);
  const auto last = reinterpret_cast<std::uintptr_t>(end) & ~(pageSize - 1);
  return last > first && madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_WRITE) == 0;
}

void TimeColumn::prefaultRows(size_t rows) const {
  core::prefaultRows(m_low, rows);
  core::prefaultRows(m_base, (rows >> kBlockShift) + 1);
}

void TimeColumn::growMapped(size_t rows) {
  core::growMapped(m_low, rows);
  core::growMapped(m_base, (rows >> kBlockShift) + 1);
}

void TimeColumn::shrink_to_fit() {
  shrinkMapped(m_low);
  shrinkMapped(m_base);
  shrinkMapped(m_wide);
}

}  // namespace core
