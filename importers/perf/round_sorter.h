// Puts perf.data records into timestamp order the way perf's ordered_events
// does: records are only sorted within the window FINISHED_ROUND allows, ties
// keep file order. perf record drains each CPU's ring buffer in turn, so every
// CPU's records arrive almost sorted: one queue per CPU, kept sorted on append,
// and a k-way merge on flush. Used by perf_data_reader.cpp (and its tests).
// T needs a `ts` member and an operator< that orders by (ts, file order).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace importers::perf {

template <typename T>
class RoundSorter {
 public:
  /// `queue` is the CPU number + 1 (0 for records without a CPU); callers bound it.
  void push(uint32_t queue, const T& r) {
    if (queue >= m_queues.size()) m_queues.resize(queue + 1);
    Queue& q = m_queues[queue];
    if (q.size() == q.ring.size()) q.grow();
    size_t i = q.tail++;
    if (q.dirty) {
      q.at(i) = r;
      return;
    }
    // A record that arrives late within its CPU (an interrupt that fired
    // between taking a timestamp and reserving buffer space) is moved back a few
    // places; a CPU stream far out of order is sorted once at flush instead.
    size_t moved = 0;
    while (i > q.head && r < q.at(i - 1)) {
      if (++moved > kMaxShift) {
        q.dirty = true;  // the ring stays a permutation: sorted once at flush
        break;
      }
      q.at(i) = q.at(i - 1);
      --i;
    }
    q.at(i) = r;
  }

  /// Hands every queued record with ts <= limit to `deliver`, in (ts, file
  /// order) order. `deliver` gets a mutable reference, valid during the call.
  template <typename Deliver>
  void flush(uint64_t limit, Deliver&& deliver) {
    m_active.clear();
    for (auto& q : m_queues) {
      if (q.size() == 0) continue;
      if (q.dirty) q.sortPending();
      m_active.push_back(&q);
    }
    if (m_active.size() == 1) {
      Queue& q = *m_active.front();
      while (q.head < q.tail && q.at(q.head).ts <= limit) deliver(q.at(q.head++));
    } else if (m_active.size() <= kLinearMergeMax) {
      while (true) {
        Queue* best = nullptr;
        for (Queue* q : m_active)
          if (q->head < q->tail && q->at(q->head).ts <= limit && (!best || q->at(q->head) < best->at(best->head)))
            best = q;
        if (!best) break;
        deliver(best->at(best->head++));
      }
    } else {
      mergeWithHeap(limit, deliver);
    }
  }

  bool empty() const {
    for (const auto& q : m_queues)
      if (q.size() != 0) return false;
    return true;
  }

 private:
  static constexpr size_t kMaxShift = 64;
  static constexpr size_t kLinearMergeMax = 8;

  // A ring of records: head and tail only grow; the ring's size is a power of two.
  struct Queue {
    std::vector<T> ring;
    size_t head = 0;
    size_t tail = 0;
    bool dirty = false;

    size_t size() const { return tail - head; }
    T& at(size_t i) { return ring[i & (ring.size() - 1)]; }
    void grow() {
      std::vector<T> bigger(std::max<size_t>(1024, ring.size() * 2));
      for (size_t i = head; i < tail; ++i) bigger[i & (bigger.size() - 1)] = at(i);
      ring.swap(bigger);
    }
    void sortPending() {
      std::vector<T> pending;
      pending.reserve(size());
      for (size_t i = head; i < tail; ++i) pending.push_back(at(i));
      std::sort(pending.begin(), pending.end());
      for (size_t i = head; i < tail; ++i) at(i) = pending[i - head];
      dirty = false;
    }
  };

  template <typename Deliver>
  void mergeWithHeap(uint64_t limit, Deliver& deliver) {
    struct Head {
      const T* r;
      Queue* q;
    };
    std::vector<Head> heap;
    for (Queue* q : m_active)
      if (q->at(q->head).ts <= limit) heap.push_back({&q->at(q->head), q});
    // A min-heap on (ts, file order).
    const auto later = [](const Head& x, const Head& y) { return *y.r < *x.r; };
    std::make_heap(heap.begin(), heap.end(), later);
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), later);
      Queue* q = heap.back().q;
      heap.pop_back();
      deliver(q->at(q->head++));
      if (q->head < q->tail && q->at(q->head).ts <= limit) {
        heap.push_back({&q->at(q->head), q});
        std::push_heap(heap.begin(), heap.end(), later);
      }
    }
  }

  std::vector<Queue> m_queues;
  std::vector<Queue*> m_active;
};

}  // namespace importers::perf
