// The ordering stage between an importer's decoder and the SchedBuilder: puts
// events read with CPUs interleaved out of order (per-CPU buffers merged,
// trace_pipe read while recording, `perf script` of unordered perf.data) back
// into time order within a bounded window, as perf's ordered_events and
// Perfetto's TraceSorter do, and says what it had to change. Fed by the text
// importers (ftrace, perf script); made to take the binary ones too (issue 14).
//
// Each CPU keeps its own order exactly: one queue per CPU, in the order read;
// a timestamp that runs backwards within its CPU is clamped to that CPU's
// previous one (not to the latest event of any CPU). The queues are merged by
// (ts, position): events of equal time keep the order they were read in.
//
// Failure modes: none; what it changes is counted as named diagnostics in the
// builder (reordered_events, out_of_order_timestamp, sort_window_exceeded),
// the first few of each with the event's line or byte offset.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "core/decoded_event.h"
#include "core/sched_builder.h"

namespace core {

class EventSorter {
 public:
  enum class Position : uint8_t { Line, ByteOffset };
  /// How far back in trace time an event may arrive and still be put in its
  /// place. Real text traces interleave by a few microseconds (trace_pipe) to a
  /// few milliseconds (perf's rounds); 100 ms of a busy 2-CPU trace is ~150k
  /// events (14 MB) in flight.
  static constexpr int64_t kDefaultWindowNs = 100'000'000;
  /// Bound on events in flight, whatever their times (a trace whose clock
  /// jumps): past it the oldest go out early and the window shrinks.
  static constexpr size_t kDefaultMaxQueued = size_t{1} << 19;

  EventSorter(SchedBuilder& builder, Position position, int64_t windowNs = kDefaultWindowNs,
              size_t maxQueued = kDefaultMaxQueued);
  EventSorter(const EventSorter&) = delete;
  EventSorter& operator=(const EventSorter&) = delete;

  /// Queues `e` (copying texts it points to) and hands the builder every event
  /// the window lets go. Events on a CPU outside [0, SchedBuilder::kMaxCpus) go
  /// to the builder at once, which counts and drops them.
  void push(const DecodedEvent& e);
  /// Every CPU the trace has is known (a header's CPU count): an event then
  /// goes out as soon as every CPU has been read up to its time (each CPU's own
  /// order is kept, so nothing earlier can follow), not a window later. An event
  /// on a CPU beyond the count falls back to the window alone.
  void setCpuCount(int cpus);
  /// Hands the builder everything still queued. Call at the end of the input,
  /// also when it ended in an error (what was read is kept).
  void finish();

  uint64_t reordered() const { return m_reordered; }
  uint64_t late() const { return m_late; }
  uint64_t cpuRegressions() const { return m_cpuRegressions; }
  /// Largest distance in time an event was moved back (ns).
  int64_t maxReorderNs() const { return m_maxReorderNs; }

 private:
  // One CPU's events in the order read; head and tail only grow, the ring's
  // size is a power of two. Grows by doubling while the window fills, then
  // stays: no allocation per event.
  struct Queue {
    std::vector<DecodedEvent> ring;
    size_t head = 0;
    size_t tail = 0;
    int64_t lastTs = INT64_MIN;  // after clamping: the queue is sorted by ts
    size_t size() const { return tail - head; }
    DecodedEvent& at(size_t i) { return ring[i & (ring.size() - 1)]; }
    const DecodedEvent& front() const { return ring[head & (ring.size() - 1)]; }
    void grow();
  };
  // Long texts (exec file names) of queued events; slots are reused, and a
  // deque never moves them.
  struct TextSlots {
    std::deque<std::string> slots;
    std::vector<uint32_t> free;
    std::string_view store(std::string_view s, uint32_t& slot);
  };

  void flush(int64_t limit, size_t keepAtMost);
  void deliver(DecodedEvent& e);
  void setPosition(const DecodedEvent& e);
  void keepTexts(DecodedEvent& e);
  void updateCpuBound();
  void note(DiagCode code, const DecodedEvent& e, int64_t from, int64_t to);
  static bool earlier(const DecodedEvent& a, const DecodedEvent& b) {
    return a.ts != b.ts ? a.ts < b.ts : a.position < b.position;
  }

  SchedBuilder& m_builder;
  Position m_position;
  int64_t m_windowNs;
  size_t m_maxQueued;
  std::vector<Queue> m_queues;  // by CPU
  std::vector<uint32_t> m_heap;  // flush scratch: CPUs by their queue's head
  TextSlots m_texts;
  size_t m_queued = 0;
  int64_t m_maxTs = INT64_MIN;    // latest time pushed
  int64_t m_horizon = INT64_MIN;  // time of the last event delivered
  int64_t m_flushedTo = INT64_MIN;
  int m_cpuCount = 0;               // 0: not known
  int64_t m_cpuBound = INT64_MIN;   // every known CPU has been read up to here
  int m_boundCpu = 0;               // the CPU read least far
  uint64_t m_reordered = 0;
  uint64_t m_late = 0;
  uint64_t m_cpuRegressions = 0;
  int64_t m_maxReorderNs = 0;
};

}  // namespace core
