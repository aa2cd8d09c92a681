#include "core/event_sorter.h"

#include <algorithm>
#include <cstdio>

namespace core {

namespace {
constexpr size_t kFirstRingSize = 256;  // small traces (tests, fuzzers) stay small
// With every CPU known, events go out in batches this large: queues stay in cache.
constexpr size_t kCpuBoundBatch = 64;
// Explicit release: how far a record may be moved back within its CPU on
// arrival; a CPU further out of order is sorted once at the next release.
constexpr size_t kMaxShift = 64;

// a - b without overflow, for timestamps that may be wild in corrupt input.
uint64_t gap(int64_t a, int64_t b) { return static_cast<uint64_t>(a) - static_cast<uint64_t>(b); }

// Replaces the root of a heap (std::make_heap's layout, `later` its
// comparison) with `moving`, a later key, and restores the heap.
template <typename T, typename Later>
void replaceRoot(std::vector<T>& heap, const T moving, Later later) {
  const size_t n = heap.size();
  size_t i = 0;
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && later(heap[child], heap[child + 1])) ++child;
    if (!later(moving, heap[child])) break;
    heap[i] = heap[child];
    i = child;
  }
  heap[i] = moving;
}

// Bookkeeping (a loss before an event, a tgid after it) rides along with its
// event: clamped like it, never counted apart from it.
bool isBookkeeping(EventOp op) {
  return op == EventOp::TaskInfo || op == EventOp::DataLoss || op == EventOp::TaskSeed || op == EventOp::Private ||
         op == EventOp::IdleKind || op == EventOp::TaskAttributes;
}
}  // namespace

void EventSorter::Queue::grow() {
  std::vector<DecodedEvent> bigger(std::max(kFirstRingSize, ring.size() * 2));
  for (size_t i = head; i < tail; ++i) bigger[i & (bigger.size() - 1)] = at(i);
  ring.swap(bigger);
}

void EventSorter::Queue::sortRing() {
  std::vector<DecodedEvent> pending;
  pending.reserve(tail - head);
  for (size_t i = head; i < tail; ++i) pending.push_back(at(i));
  std::stable_sort(pending.begin(), pending.end(), earlier);
  for (size_t i = head; i < tail; ++i) at(i) = pending[i - head];
  dirty = false;
}

std::string_view EventSorter::TextSlots::store(std::string_view s, uint32_t& slot) {
  if (free.empty()) {
    slot = static_cast<uint32_t>(slots.size());
    slots.emplace_back();
  } else {
    slot = free.back();
    free.pop_back();
  }
  std::string& kept = slots[slot];
  kept.assign(s);
  return kept;
}

EventSorter::EventSorter(EventFeed& feed, int64_t windowNs, size_t maxQueued)
    : m_feed(feed), m_windowNs(std::max<int64_t>(windowNs, 0)), m_maxQueued(std::max<size_t>(maxQueued, 1)) {}

EventSorter::EventSorter(SchedBuilder& builder, Position position, int64_t windowNs, size_t maxQueued)
    : m_ownFeed(std::make_unique<EventFeed>(builder, position)), m_feed(*m_ownFeed),
      m_windowNs(std::max<int64_t>(windowNs, 0)), m_maxQueued(std::max<size_t>(maxQueued, 1)) {}

void EventSorter::push(const DecodedEvent& in) {
  if (in.cpu < 0 || in.cpu >= SchedBuilder::kMaxCpus) {
    // No queue to wait in; the builder counts the CPU as out of range.
    DecodedEvent e = in;
    if (m_sink)
      m_sink->take(e);
    else
      m_feed.event(e);
    return;
  }
  const auto cpu = static_cast<size_t>(in.cpu);
  if (cpu >= m_queues.size()) m_queues.resize(cpu + 1);
  Queue& q = m_queues[cpu];
  if (q.tail - q.head == q.ring.size()) q.grow();
  DecodedEvent& e = q.at(q.tail);
  e = in;
  const bool counted = !isBookkeeping(e.op);
  if (!m_explicit && e.ts < q.lastTs) {
    if (counted) {
      ++m_cpuRegressions;
      note(DiagCode::out_of_order_timestamp, e, e.ts, q.lastTs);
    }
    e.ts = q.lastTs;
  }
  if (e.ts < m_horizon) {
    if (counted) {
      ++m_late;
      note(DiagCode::sort_window_exceeded, e, e.ts, m_horizon);
    }
    e.ts = m_horizon;
  } else if (!m_explicit && e.ts < m_maxTs && counted) {
    ++m_reordered;
    m_maxReorderNs = std::max(m_maxReorderNs, static_cast<int64_t>(std::min<uint64_t>(gap(m_maxTs, e.ts), INT64_MAX)));
    note(DiagCode::reordered_events, e, e.ts, m_maxTs);
  }
  if (e.externalText) keepTexts(e);
  ++q.tail;
  ++m_queued;
  ++m_pushedSinceFlush;
  if (e.ts < q.lastTs)
    insertLate(q);  // explicit release only: elsewhere it was clamped
  else
    q.lastTs = e.ts;
  m_maxTs = std::max(m_maxTs, q.lastTs);
  if (!m_explicit) afterPush(in.cpu);
}

void EventSorter::insertLate(Queue& q) {
  if (q.dirty) return;
  size_t i = q.tail - 1;
  const DecodedEvent r = q.at(i);
  size_t moved = 0;
  while (i > q.head && earlier(r, q.at(i - 1))) {
    if (++moved > kMaxShift) {
      q.dirty = true;  // the ring stays a permutation: sorted once at the release
      break;
    }
    q.at(i) = q.at(i - 1);
    --i;
  }
  q.at(i) = r;
}

void EventSorter::pushBlock(int stream, std::span<DecodedEvent> block, int64_t maxTs, void* token) {
  if (stream < 0 || stream >= SchedBuilder::kMaxCpus) {
    for (DecodedEvent& e : block) {
      if (m_sink)
        m_sink->take(e);
      else
        m_feed.event(e);
    }
    if (m_sink) m_sink->blockDone(token);
    return;
  }
  const auto c = static_cast<size_t>(stream);
  if (c >= m_queues.size()) m_queues.resize(c + 1);
  Queue& q = m_queues[c];
  q.lastTs = std::max(q.lastTs, maxTs);
  m_maxTs = std::max(m_maxTs, q.lastTs);
  if (block.empty()) {
    if (m_sink) m_sink->blockDone(token);
  } else {
    q.blocks.push_back({block.data(), block.size(), token});
    q.blockEvents += block.size();
    m_queued += block.size();
    m_pushedSinceFlush += block.size();
    if (q.blocks.size() == 1) settleBlockHead(q);
  }
  afterPush(stream);
}

// A block's event becomes its queue's head: only now is it compared with the
// events before it (a pass over the block on arrival would cost a copy's time).
void EventSorter::settleBlockHead(Queue& q) {
  DecodedEvent& e = q.blocks.front().events[q.blockPos];
  const bool counted = !isBookkeeping(e.op);
  if (e.ts < q.prevTs) {
    if (counted) {
      ++m_cpuRegressions;
      note(DiagCode::out_of_order_timestamp, e, e.ts, q.prevTs);
    }
    e.ts = q.prevTs;
  }
  if (e.ts < m_horizon) {
    if (counted) {
      ++m_late;
      note(DiagCode::sort_window_exceeded, e, e.ts, m_horizon);
    }
    e.ts = m_horizon;
  }
}

void EventSorter::afterPush(int cpu) {
  if (m_cpuCount > 0) {
    if (cpu >= m_cpuCount)
      m_cpuCount = 0;  // the count was wrong: only the window is safe
    else if (cpu == m_boundCpu)
      updateCpuBound();
  }
  // Flushing in steps of an eighth of the window (one merge set-up per step,
  // not per event), or, as the limit moves on, in batches of events pushed
  // since the last flush: each flush sets up a heap over every queue, so a
  // batch is at least twice the queues. (Counting the events queued instead
  // flushed on every push once the window held 64: with 128 CPUs, a 5M-event
  // perf script spent two thirds of its import setting up heaps.)
  const int64_t windowLimit = m_maxTs < INT64_MIN + m_windowNs ? INT64_MIN : m_maxTs - m_windowNs;
  const int64_t limit = m_cpuCount > 0 ? std::max(windowLimit, m_cpuBound) : windowLimit;
  if (m_queued > m_maxQueued)
    flush(limit, m_maxQueued - m_maxQueued / 4);
  else if (limit >= m_flushedTo &&
           (gap(limit, m_flushedTo) >= static_cast<uint64_t>(m_windowNs / 8) ||
            (limit > m_flushedTo && m_pushedSinceFlush >= std::max(kCpuBoundBatch, 2 * m_queues.size()))))
    flush(limit, m_maxQueued);
}

void EventSorter::setCpuCount(int cpus) {
  if (cpus <= 0 || cpus > SchedBuilder::kMaxCpus) return;
  m_cpuCount = cpus;
  if (m_queues.size() < static_cast<size_t>(cpus)) m_queues.resize(static_cast<size_t>(cpus));
  updateCpuBound();
}

void EventSorter::endCpu(int cpu) {
  if (cpu < 0 || static_cast<size_t>(cpu) >= m_queues.size()) return;
  m_queues[static_cast<size_t>(cpu)].ended = true;
  if (m_cpuCount > 0 && cpu < m_cpuCount) {
    updateCpuBound();
    if (m_cpuBound > m_flushedTo) flush(m_cpuBound, m_maxQueued);
  }
}

void EventSorter::updateCpuBound() {
  m_cpuBound = INT64_MAX;
  for (int cpu = 0; cpu < m_cpuCount; ++cpu) {
    const Queue& q = m_queues[static_cast<size_t>(cpu)];
    if (!q.ended && q.lastTs < m_cpuBound) {
      m_cpuBound = q.lastTs;
      m_boundCpu = cpu;
    }
  }
}

void EventSorter::finish() {
  flush(INT64_MAX, 0);
  if (m_reordered == 0) return;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%llu events moved back into time order, the furthest by %.3f ms (window %lld ms)",
                static_cast<unsigned long long>(m_reordered), static_cast<double>(m_maxReorderNs) / 1e6,
                static_cast<long long>(m_windowNs / 1'000'000));
  m_feed.metadata("sort_window", buf);
}

void EventSorter::pop(Queue& q) {
  --m_queued;
  if (q.blocks.empty()) {
    ++q.head;
    return;
  }
  q.prevTs = q.blocks.front().events[q.blockPos].ts;
  --q.blockEvents;
  if (++q.blockPos == q.blocks.front().count) {
    void* token = q.blocks.front().token;
    q.blocks.pop_front();
    q.blockPos = 0;
    if (m_sink) m_sink->blockDone(token);
  }
  if (!q.blocks.empty()) settleBlockHead(q);
}

void EventSorter::flush(int64_t limit, size_t keepAtMost) {
  // A min-heap of CPUs by their queue's head, the head's key copied into the
  // entry; a CPU then delivers its run of events up to the runner-up's head in
  // one go, and its entry is sifted down in place. With a hundred CPUs and
  // runs of an event or two, reading each head through its queue and a pop
  // plus a push per run were a quarter of a trace.dat import.
  const auto later = [](const HeapEntry& a, const HeapEntry& b) {
    return b.ts != a.ts ? b.ts < a.ts : b.position < a.position;
  };
  m_heap.clear();
  for (uint32_t cpu = 0; cpu < m_queues.size(); ++cpu) {
    Queue& q = m_queues[cpu];
    if (q.size() == 0) continue;
    if (q.dirty) q.sortRing();
    m_heap.push_back({q.front().ts, q.front().position, cpu});
  }
  std::make_heap(m_heap.begin(), m_heap.end(), later);
  while (!m_heap.empty()) {
    Queue& q = m_queues[m_heap.front().cpu];
    const HeapEntry* runnerUp = nullptr;
    if (m_heap.size() > 1) runnerUp = m_heap.size() > 2 && later(m_heap[1], m_heap[2]) ? &m_heap[2] : &m_heap[1];
    bool done = false;
    do {
      const bool inRing = q.blocks.empty();
      DecodedEvent& e = q.front();
      // The events were written long ago (or by another core): fetch ahead.
      if (inRing)
        __builtin_prefetch(&q.at(q.head + 4));
      else if (q.blockPos + 4 < q.blocks.front().count)
        __builtin_prefetch(&e + 4);
      if (e.ts > limit && m_queued <= keepAtMost) {
        done = true;
        break;
      }
      deliver(e);
      if (inRing && e.externalText)
        for (int k = 0; k < 2; ++k)
          if (e.externalText & (1u << k)) m_texts.free.push_back(e.externalTag(k));
      pop(q);
    } while (q.size() != 0 && (!runnerUp || !later(HeapEntry{q.front().ts, q.front().position, 0}, *runnerUp)));
    if (done) break;
    if (q.size() != 0) {
      replaceRoot(m_heap, HeapEntry{q.front().ts, q.front().position, m_heap.front().cpu}, later);
    } else {
      std::pop_heap(m_heap.begin(), m_heap.end(), later);
      m_heap.pop_back();
    }
  }
  m_flushedTo = std::max(m_flushedTo, limit);
  m_pushedSinceFlush = 0;
}

void EventSorter::deliver(DecodedEvent& e) {
  m_horizon = e.ts;  // the merge delivers in time order
  if (m_sink)
    m_sink->take(e);
  else
    m_feed.event(e);
}

void EventSorter::keepTexts(DecodedEvent& e) {
  for (int k = 0; k < 2; ++k) {
    if (!(e.externalText & (1u << k))) continue;
    uint32_t slot = 0;
    e.setText(k, m_texts.store(e.textAt(k), slot));
    e.setExternalTag(k, slot);
  }
}

void EventSorter::note(DiagCode code, const DecodedEvent& e, int64_t from, int64_t to) {
  if (!m_feed.keepsRecord(code)) return;
  char buf[192];
  const auto ns = static_cast<unsigned long long>(gap(to, from));
  switch (code) {
    case DiagCode::out_of_order_timestamp:
      std::snprintf(buf, sizeof buf, "timestamp %lld is %llu ns before the previous event on its CPU; clamped to it",
                    static_cast<long long>(from), ns);
      break;
    case DiagCode::sort_window_exceeded:
      std::snprintf(buf, sizeof buf,
                    "timestamp %lld arrived %llu ns behind events already built (sort window %lld ms); placed at %lld",
                    static_cast<long long>(from), ns, static_cast<long long>(m_windowNs / 1'000'000),
                    static_cast<long long>(to));
      break;
    default:
      std::snprintf(buf, sizeof buf, "timestamp %lld read after one %llu ns later; moved back into time order",
                    static_cast<long long>(from), ns);
      break;
  }
  m_feed.diagnostic(code, e.position, buf, e.cpu, from);
}

}  // namespace core
