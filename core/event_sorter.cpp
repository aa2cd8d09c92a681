#include "core/event_sorter.h"

#include <algorithm>
#include <cstdio>

namespace core {

namespace {
constexpr size_t kFirstRingSize = 256;  // small traces (tests, fuzzers) stay small
// With every CPU known, events go out in batches this large: queues stay in cache.
constexpr size_t kCpuBoundBatch = 64;

// a - b without overflow, for timestamps that may be wild in corrupt input.
uint64_t gap(int64_t a, int64_t b) { return static_cast<uint64_t>(a) - static_cast<uint64_t>(b); }

bool isBookkeeping(EventOp op) { return op == EventOp::TaskInfo || op == EventOp::DataLoss; }
}  // namespace

void EventSorter::Queue::grow() {
  std::vector<DecodedEvent> bigger(std::max(kFirstRingSize, ring.size() * 2));
  for (size_t i = head; i < tail; ++i) bigger[i & (bigger.size() - 1)] = at(i);
  ring.swap(bigger);
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

EventSorter::EventSorter(SchedBuilder& builder, Position position, int64_t windowNs, size_t maxQueued)
    : m_builder(builder), m_position(position), m_windowNs(std::max<int64_t>(windowNs, 0)),
      m_maxQueued(std::max<size_t>(maxQueued, 1)) {}

void EventSorter::push(const DecodedEvent& in) {
  if (in.cpu < 0 || in.cpu >= SchedBuilder::kMaxCpus) {
    // No queue to wait in; the builder counts the CPU as out of range.
    setPosition(in);
    applyEvent(m_builder, in);
    return;
  }
  const auto cpu = static_cast<size_t>(in.cpu);
  if (cpu >= m_queues.size()) m_queues.resize(cpu + 1);
  Queue& q = m_queues[cpu];
  if (q.size() == q.ring.size()) q.grow();
  DecodedEvent& e = q.at(q.tail);
  e = in;
  // Bookkeeping (a loss before an event, a tgid after it) rides along with its
  // event: clamped like it, never counted apart from it.
  const bool counted = !isBookkeeping(e.op);
  if (e.ts < q.lastTs) {
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
  } else if (e.ts < m_maxTs && counted) {
    ++m_reordered;
    m_maxReorderNs = std::max(m_maxReorderNs, static_cast<int64_t>(std::min<uint64_t>(gap(m_maxTs, e.ts), INT64_MAX)));
    note(DiagCode::reordered_events, e, e.ts, m_maxTs);
  }
  if (e.externalText) keepTexts(e);
  q.lastTs = e.ts;
  ++q.tail;
  ++m_queued;
  m_maxTs = std::max(m_maxTs, e.ts);
  if (m_cpuCount > 0) {
    if (in.cpu >= m_cpuCount)
      m_cpuCount = 0;  // the count was wrong: only the window is safe
    else if (in.cpu == m_boundCpu)
      updateCpuBound();
  }

  // Flushing in steps of an eighth of the window (one merge set-up per step,
  // not per event), or, while every CPU is read past some time, in batches up to it.
  const int64_t windowLimit = m_maxTs < INT64_MIN + m_windowNs ? INT64_MIN : m_maxTs - m_windowNs;
  const int64_t limit = m_cpuCount > 0 ? std::max(windowLimit, m_cpuBound) : windowLimit;
  if (m_queued > m_maxQueued)
    flush(limit, m_maxQueued - m_maxQueued / 4);
  else if (limit >= m_flushedTo && (gap(limit, m_flushedTo) >= static_cast<uint64_t>(m_windowNs / 8) ||
                                    (limit > m_flushedTo && m_queued >= kCpuBoundBatch)))
    flush(limit, m_maxQueued);
}

void EventSorter::setCpuCount(int cpus) {
  if (cpus <= 0 || cpus > SchedBuilder::kMaxCpus) return;
  m_cpuCount = cpus;
  if (m_queues.size() < static_cast<size_t>(cpus)) m_queues.resize(static_cast<size_t>(cpus));
  updateCpuBound();
}

void EventSorter::updateCpuBound() {
  m_cpuBound = INT64_MAX;
  for (int cpu = 0; cpu < m_cpuCount; ++cpu) {
    const int64_t last = m_queues[static_cast<size_t>(cpu)].lastTs;
    if (last < m_cpuBound) {
      m_cpuBound = last;
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
  m_builder.setMetadata("sort_window", buf);
}

void EventSorter::flush(int64_t limit, size_t keepAtMost) {
  // A min-heap of CPUs by their queue's head; a CPU then delivers its run of
  // events up to the runner-up's head in one go (per-CPU runs are long).
  const auto later = [this](uint32_t a, uint32_t b) { return earlier(m_queues[b].front(), m_queues[a].front()); };
  m_heap.clear();
  for (uint32_t cpu = 0; cpu < m_queues.size(); ++cpu)
    if (m_queues[cpu].size() != 0) m_heap.push_back(cpu);
  std::make_heap(m_heap.begin(), m_heap.end(), later);
  while (!m_heap.empty()) {
    std::pop_heap(m_heap.begin(), m_heap.end(), later);
    Queue& q = m_queues[m_heap.back()];
    const DecodedEvent* runnerUp = m_heap.size() > 1 ? &m_queues[m_heap.front()].front() : nullptr;
    bool done = false;
    do {
      DecodedEvent& e = q.at(q.head);
      __builtin_prefetch(&q.at(q.head + 4));  // the ring was written long ago: fetch ahead
      if (e.ts > limit && m_queued <= keepAtMost) {
        done = true;
        break;
      }
      deliver(e);
      ++q.head;
      --m_queued;
    } while (q.size() != 0 && (!runnerUp || !earlier(*runnerUp, q.front())));
    if (done) break;
    if (q.size() != 0)
      std::push_heap(m_heap.begin(), m_heap.end(), later);
    else
      m_heap.pop_back();
  }
  m_flushedTo = std::max(m_flushedTo, limit);
}

void EventSorter::setPosition(const DecodedEvent& e) {
  if (m_position == Position::Line)
    m_builder.setLine(e.position);
  else
    m_builder.setByteOffset(e.position);
}

void EventSorter::deliver(DecodedEvent& e) {
  m_horizon = e.ts;  // the merge delivers in time order
  setPosition(e);
  applyEvent(m_builder, e);
  if (e.externalText)
    for (int k = 0; k < 2; ++k)
      if (e.externalText & (1u << k)) m_texts.free.push_back(e.externalTag(k));
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
  Diagnostics& d = m_builder.diagnostics();
  if (d.count(code) >= Diagnostics::kRecordsKeptPerCode) {
    d.add(code);
    return;
  }
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
  setPosition(e);
  m_builder.recordDiagnostic(code, buf, e.cpu, from);
}

}  // namespace core
