// Page faults taken in batches: pages of memory about to be written, mapped in
// one system call (MADV_POPULATE_WRITE, Linux 5.14) instead of one fault each
// when first touched.
//
// Why: the model's columns are written once, row after row, into fresh memory,
// and a fault per 4 KiB page was a fifth to a third of an import's CPU time on
// this project's machine (a virtual machine, where each fault is a trap to the
// guest kernel and its page-table update costs more than on bare metal). One
// madvise over the next rows' pages does the same work without the traps.
// Only memory about to be written is populated: reserved capacity that a wrong
// estimate leaves unused must stay untouched, or it would count in the RSS.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/time_column.h"

namespace core {

/// Maps the whole pages inside [begin, end) for writing now. Best effort: a
/// kernel without MADV_POPULATE_WRITE, or a failure, leaves them to fault in
/// one by one as before, and the result is false.
bool prefaultForWriting(const void* begin, const void* end);

/// The pages of the next `rows` rows of `column`'s capacity beyond its size.
template <class T>
void prefaultRows(const std::vector<T>& column, size_t rows) {
  const size_t end = std::min(column.capacity(), column.size() + rows);
  if (end > column.size()) prefaultForWriting(column.data() + column.size(), column.data() + end);
}

inline void prefaultRows(const TimeColumn& column, size_t rows) { column.prefaultRows(rows); }

/// reserve() for a column about to get exactly `rows` rows more, their pages mapped now.
template <class T>
void reserveMapped(std::vector<T>& column, size_t rows) {
  column.reserve(column.size() + rows);
  prefaultRows(column, rows);
}

}  // namespace core
