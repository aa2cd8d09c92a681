// A column of nanosecond times (timestamps, durations) in about half the memory
// of a std::vector<int64_t>: rows in blocks of 64, each row stored as a 32-bit
// difference from its block's first value. Neighbouring rows of a scheduler
// table lie microseconds apart, so nearly every block fits; a block with a value
// more than ~2.1 s from its first one is stored whole in 64 bits ("wide": its
// 32-bit slots then index a side table). The model's biggest columns use it:
// they were 7 of the model's 31 bytes per event at 50M events (issue 17's
// budget is 24).
// Why 64 rows and not more: the thread states are stored thread by thread, and
// a thread's rows lie further apart than a CPU's. In a 2.7M-event hackbench
// trace.dat (325 tasks, 42 s), blocks of 256 rows left 77% of the 2.7M state
// rows wide (8 more bytes each); blocks of 64, 2%, for 0.125 bytes of base per
// row instead of 0.03 (model: 27.1 -> 21.3 bytes per event).
//
// Read-only access is by value (operator[], a random-access const_iterator for
// std::lower_bound and friends); writes are push_back and set().
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <vector>

namespace core {

class TimeColumn {
 public:
  static constexpr unsigned kBlockShift = 6;
  static constexpr size_t kBlockRows = size_t{1} << kBlockShift;

  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = int64_t;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = int64_t;

    const_iterator() = default;
    const_iterator(const TimeColumn* c, size_t i) : m_c(c), m_i(i) {}
    int64_t operator*() const { return (*m_c)[m_i]; }
    int64_t operator[](difference_type n) const { return *(*this + n); }
    const_iterator& operator++() { return ++m_i, *this; }
    const_iterator& operator--() { return --m_i, *this; }
    const_iterator operator++(int) { return {m_c, m_i++}; }
    const_iterator operator--(int) { return {m_c, m_i--}; }
    const_iterator& operator+=(difference_type n) {
      m_i = static_cast<size_t>(static_cast<difference_type>(m_i) + n);
      return *this;
    }
    const_iterator& operator-=(difference_type n) { return *this += -n; }
    friend const_iterator operator+(const_iterator it, difference_type n) { return it += n; }
    friend const_iterator operator+(difference_type n, const_iterator it) { return it += n; }
    friend const_iterator operator-(const_iterator it, difference_type n) { return it -= n; }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return static_cast<difference_type>(a.m_i) - static_cast<difference_type>(b.m_i);
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.m_i == b.m_i; }
    friend auto operator<=>(const const_iterator& a, const const_iterator& b) { return a.m_i <=> b.m_i; }

   private:
    const TimeColumn* m_c = nullptr;
    size_t m_i = 0;
  };
  using value_type = int64_t;

  TimeColumn() = default;
  TimeColumn(std::initializer_list<int64_t> values) {
    for (int64_t v : values) push_back(v);
  }

  int64_t operator[](size_t i) const {
    const int64_t base = m_base[i >> kBlockShift];
    if (base != kWide) [[likely]]
      return plus(base, m_low[i]);
    return m_wide[static_cast<uint32_t>(m_low[i])];
  }
  size_t size() const { return m_low.size(); }
  bool empty() const { return m_low.empty(); }
  int64_t front() const { return (*this)[0]; }
  int64_t back() const { return (*this)[size() - 1]; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }

  void push_back(int64_t v) {
    const size_t i = m_low.size();
    if ((i & (kBlockRows - 1)) == 0) m_base.push_back(v == kWide ? kWide : v);
    if (const int64_t base = m_base.back(); base != kWide) {
      const int64_t d = minus(v, base);
      if (d >= kMinLow && d <= kMaxLow) {
        m_low.push_back(static_cast<int32_t>(d));
        return;
      }
      widen(i >> kBlockShift);
    }
    m_low.push_back(static_cast<int32_t>(m_wide.size()));
    m_wide.push_back(v);
  }

  void set(size_t i, int64_t v) {
    const size_t block = i >> kBlockShift;
    if (m_base[block] != kWide) {
      const int64_t d = minus(v, m_base[block]);
      if (d >= kMinLow && d <= kMaxLow) {
        m_low[i] = static_cast<int32_t>(d);
        return;
      }
      widen(block);
    }
    m_wide[static_cast<uint32_t>(m_low[i])] = v;
  }

  /// The column built over `rows`'s own storage, which holds each row in some
  /// other 32-bit form: valueOf(raw) gives the time of the next row, rows in
  /// order. A large column gets no second copy (import memory, issue 17).
  template <class ValueOf>
  void adopt(std::vector<int32_t>&& rows, ValueOf valueOf) {
    clear();
    m_low = std::move(rows);
    const size_t n = m_low.size();
    m_base.reserve((n + kBlockRows - 1) >> kBlockShift);
    int64_t values[kBlockRows];
    for (size_t first = 0; first < n; first += kBlockRows) {
      const size_t count = std::min(kBlockRows, n - first);
      int32_t* low = m_low.data() + first;
      for (size_t r = 0; r < count; ++r) values[r] = valueOf(low[r]);
      // Wide on the same terms as push_back().
      bool fits = values[0] != kWide;
      for (size_t r = 0; r < count && fits; ++r) {
        const int64_t d = minus(values[r], values[0]);
        fits = d >= kMinLow && d <= kMaxLow;
      }
      if (fits) {
        m_base.push_back(values[0]);
        for (size_t r = 0; r < count; ++r) low[r] = static_cast<int32_t>(minus(values[r], values[0]));
      } else {
        m_base.push_back(kWide);
        for (size_t r = 0; r < count; ++r) {
          low[r] = static_cast<int32_t>(m_wide.size());
          m_wide.push_back(values[r]);
        }
      }
    }
  }

  void reserve(size_t n) {
    m_low.reserve(n);
    m_base.reserve((n + kBlockRows - 1) >> kBlockShift);
  }
  size_t capacity() const { return m_low.capacity(); }
  /// core/prefault.h: the pages of the next `rows` rows, mapped now.
  void prefaultRows(size_t rows) const;
  /// core/prefault.h: room for `rows` rows more, their pages mapped now.
  void growMapped(size_t rows);
  void clear() {
    m_low.clear();
    m_base.clear();
    m_wide.clear();
  }
  void shrink_to_fit();  // core/prefault.cpp: into pages mapped beforehand
  void swap(TimeColumn& other) noexcept {
    m_low.swap(other.m_low);
    m_base.swap(other.m_base);
    m_wide.swap(other.m_wide);
  }
  size_t memoryBytes() const {
    return m_low.capacity() * sizeof(int32_t) + (m_base.capacity() + m_wide.capacity()) * sizeof(int64_t);
  }
  /// Rows stored in 64 bits (blocks with a value too far from their first).
  size_t wideRows() const { return m_wide.size(); }

  friend bool operator==(const TimeColumn& a, const TimeColumn& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i]) return false;
    return true;
  }

 private:
  static constexpr int64_t kWide = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kMinLow = std::numeric_limits<int32_t>::min();
  static constexpr int64_t kMaxLow = std::numeric_limits<int32_t>::max();

  // Differences and sums modulo 2^64: a corrupt trace's times can be any two
  // int64 values, whose difference overflows; modulo 2^64 the stored step
  // still gives back the exact value.
  static int64_t minus(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  }
  static int64_t plus(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  }

  // The block's values move to the side table; its slots index them from now on.
  void widen(size_t block) {
    const int64_t base = m_base[block];
    const size_t first = block << kBlockShift;
    const size_t end = std::min(first + kBlockRows, m_low.size());  // set() widens blocks before the last
    for (size_t r = first; r < end; ++r) {
      const int64_t v = plus(base, m_low[r]);
      m_low[r] = static_cast<int32_t>(m_wide.size());
      m_wide.push_back(v);
    }
    m_base[block] = kWide;
  }

  std::vector<int32_t> m_low;   ///< per row: difference from the block's base, or a wide slot
  std::vector<int64_t> m_base;  ///< per block: its first value, or kWide
  std::vector<int64_t> m_wide;  ///< values of wide blocks
};

}  // namespace core
