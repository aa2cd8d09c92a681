// A value per thread id, kept in pages of 4096 tids, each page made when one
// of its tids is first written.
//
// Why not an array indexed by tid: a trace names a few hundred tids spread
// over all of pid_max, which systemd raises to 4,194,304, and a machine up for
// a while hands out tids in the millions. The array then holds megabytes of
// zeros that must be written before use (16 MiB of uint32_t for one tid near
// the limit): more than a small trace's whole import costs. Pages keep a
// lookup to two loads and the memory to the pages the tids fall in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace core {

template <class T, T kAbsent = T{}>
class TidTable {
 public:
  /// No tid reaches PID_MAX_LIMIT (4M on 64-bit kernels); a corrupt or made-up one may.
  static constexpr int32_t kLimit = 1 << 22;
  static constexpr bool holds(int32_t tid) { return tid >= 0 && tid < kLimit; }

  /// `tid`'s value: kAbsent when none was written, or when the table cannot hold it.
  T get(int32_t tid) const {
    if (!holds(tid)) return kAbsent;
    const auto page = static_cast<size_t>(tid) >> kPageShift;
    if (page >= m_pageAt.size() || m_pageAt[page] == 0) return kAbsent;
    return m_values[m_pageAt[page] - kPageSize + (static_cast<size_t>(tid) & kPageMask)];
  }

  /// `tid`'s value to write (kAbsent until written); valid until the next
  /// call makes a page. Requires holds(tid).
  T& at(int32_t tid) {
    const auto page = static_cast<size_t>(tid) >> kPageShift;
    if (page >= m_pageAt.size()) m_pageAt.resize(page + 1, 0);
    if (m_pageAt[page] == 0) {
      m_values.resize(m_values.size() + kPageSize, kAbsent);
      m_pageAt[page] = m_values.size();
    }
    return m_values[m_pageAt[page] - kPageSize + (static_cast<size_t>(tid) & kPageMask)];
  }

  /// Pages made so far, of 4096 values each.
  size_t pages() const { return m_values.size() >> kPageShift; }

 private:
  static constexpr int kPageShift = 12;
  static constexpr size_t kPageSize = size_t{1} << kPageShift;
  static constexpr size_t kPageMask = kPageSize - 1;
  std::vector<size_t> m_pageAt;  // per 4096 tids: where its page ends in m_values, 0 for none yet
  std::vector<T> m_values;       // the pages, in the order they were made
};

}  // namespace core
