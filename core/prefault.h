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
#include <iterator>
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
inline void growMapped(TimeColumn& column, size_t rows) { column.growMapped(rows); }
inline void shrinkMapped(TimeColumn& column) { column.shrink_to_fit(); }

/// For a column filled row after row into capacity reserved beforehand: called
/// before appending, it maps the next 2 * `rows` rows' pages each time the
/// column has grown `rows` rows past the last call that did (`mark`, from 0).
template <class T>
void prefaultAhead(const std::vector<T>& column, size_t& mark, size_t rows = 8192) {
  if (column.size() < mark) return;
  prefaultRows(column, 2 * rows);
  mark = column.size() + rows;
}

namespace prefault_detail {
// Moves the column into a new buffer of `capacity` rows whose first `mapped`
// rows' pages are mapped before the rows move in: reserve() and
// shrink_to_fit() would fault each page in as they copy.
template <class T>
void moveToMapped(std::vector<T>& column, size_t capacity, size_t mapped) {
  std::vector<T> moved;
  moved.reserve(capacity);
  prefaultRows(moved, mapped);
  moved.insert(moved.end(), std::make_move_iterator(column.begin()), std::make_move_iterator(column.end()));
  column.swap(moved);
}
}  // namespace prefault_detail

/// reserve() for a column about to get exactly `rows` rows more, their pages mapped now.
template <class T>
void reserveMapped(std::vector<T>& column, size_t rows) {
  const size_t wanted = column.size() + rows;
  if (wanted > column.capacity() && !column.empty()) return prefault_detail::moveToMapped(column, wanted, wanted);
  column.reserve(wanted);
  prefaultRows(column, rows);
}

/// For a column of unknown final size: room for `rows` rows more, their pages
/// mapped now. A column that must grow doubles, as push_back() would. One
/// that has fewer rows than that is left to grow by itself: it may stay small.
template <class T>
void growMapped(std::vector<T>& column, size_t rows) {
  const size_t wanted = column.size() + rows;
  if (wanted > column.capacity() && column.size() >= rows)
    return prefault_detail::moveToMapped(column, std::max(wanted, 2 * column.capacity()), wanted);
  prefaultRows(column, rows);
}

/// assign(rows, value) into pages mapped first.
template <class T>
void assignMapped(std::vector<T>& column, size_t rows, const T& value = T()) {
  column.clear();
  reserveMapped(column, rows);
  column.assign(rows, value);
}

/// shrink_to_fit(), into pages mapped before the rows move in.
template <class T>
void shrinkMapped(std::vector<T>& column) {
  if (column.capacity() > column.size()) prefault_detail::moveToMapped(column, column.size(), column.size());
}

}  // namespace core
