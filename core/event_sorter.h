// The one ordering stage between every importer's decoder and the EventFeed:
// puts events read with CPUs interleaved (per-CPU buffers merged, trace_pipe
// read while recording, perf's rounds, Perfetto's per-CPU bundles) into time
// order, as perf's ordered_events and Perfetto's TraceSorter do, and says what
// it had to change.
//
// One queue per CPU, merged by (ts, position): events of equal time keep the
// order they were read in. A queue is fed either event by event (push: copied
// into a ring) or by whole blocks the decoder keeps alive until the sorter is
// done with them (pushBlock: merged in place, no copy; trace.dat's and
// Perfetto's decoders fill such blocks). An event goes on when one of the
// release rules lets it:
//   - time window: it is `window` older than the latest event read;
//   - every CPU read past: with the CPU count known (setCpuCount), every CPU has
//     been read up to its time — each CPU's own order is kept, so nothing
//     earlier can follow;
//   - explicit (setExplicitRelease): only releaseUpTo(limit) lets events go
//     (perf's FINISHED_ROUND); records of one CPU are then only nearly sorted,
//     and a record late within its CPU is moved back into place.
// Otherwise a timestamp that runs backwards within its CPU is clamped to that
// CPU's previous one (not to the latest event of any CPU).
//
// Failure modes: none; what it changes is counted as named diagnostics
// (reordered_events, out_of_order_timestamp, sort_window_exceeded), the first
// few of each with the event's line or byte offset.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/decoded_event.h"
#include "core/event_feed.h"
#include "core/sched_builder.h"

namespace core {

/// Where ordered events go when an importer has its own work to do with them
/// in time order (its task table, its counts) before they reach the feed.
class EventSink {
 public:
  /// `e` in time order; the sink hands it (or what it makes of it) to the feed.
  virtual void take(DecodedEvent& e) = 0;
  /// Every event of a block given to pushBlock() went out: the block may be reused.
  virtual void blockDone(void* /*token*/) {}

 protected:
  ~EventSink() = default;
};

class EventSorter {
 public:
  using Position = EventFeed::Position;
  /// How far back in trace time an event may arrive and still be put in its
  /// place. Real text traces interleave by a few microseconds (trace_pipe) to a
  /// few milliseconds (perf's rounds); 100 ms of a busy 2-CPU trace is ~150k
  /// events (14 MB) in flight.
  static constexpr int64_t kDefaultWindowNs = 100'000'000;
  /// Bound on events in flight, whatever their times (a trace whose clock
  /// jumps): past it the oldest go out early and the window shrinks.
  static constexpr size_t kDefaultMaxQueued = size_t{1} << 19;

  EventSorter(EventFeed& feed, int64_t windowNs = kDefaultWindowNs, size_t maxQueued = kDefaultMaxQueued);
  /// A sorter straight into `builder` (a direct feed of its own).
  EventSorter(SchedBuilder& builder, Position position, int64_t windowNs = kDefaultWindowNs,
              size_t maxQueued = kDefaultMaxQueued);
  EventSorter(const EventSorter&) = delete;
  EventSorter& operator=(const EventSorter&) = delete;

  EventFeed& feed() { return m_feed; }
  /// Ordered events go to `sink` instead of the feed.
  void setSink(EventSink* sink) { m_sink = sink; }

  /// Queues `e` (copying texts it points to) and passes on every event the
  /// release rules let go. Events on a CPU outside [0, SchedBuilder::kMaxCpus)
  /// go on at once (the builder counts and drops them).
  void push(const DecodedEvent& e);
  /// Queues the events of `block`, in their order, on queue `stream` without
  /// copying them: they stay where they are until the sink's blockDone(token).
  /// A stream is one CPU's events in time order (its number is the CPU's, or,
  /// for a format with several streams per CPU, the decoder's own: the events
  /// keep their CPU). `maxTs` is the latest timestamp in the block. A queue is
  /// fed by push() or by pushBlock(), not both.
  void pushBlock(int stream, std::span<DecodedEvent> block, int64_t maxTs, void* token);

  /// Every CPU the trace has is known (a header's CPU count): events then also
  /// go on once every CPU has been read past them. An event on a CPU beyond
  /// the count falls back to the window alone.
  void setCpuCount(int cpus);
  /// CPU `cpu` has nothing more to read: it no longer holds the others back.
  void endCpu(int cpu);
  /// The CPU whose reading holds back the most events (read least far, not
  /// ended), or -1: the one to read next when the decoder may choose.
  int starvedCpu() const { return m_cpuCount > 0 && m_cpuBound != INT64_MAX ? m_boundCpu : -1; }

  /// Only releaseUpTo() and finish() let events go; records late within their
  /// CPU are moved back into place (and not counted: the format allows it).
  void setExplicitRelease() { m_explicit = true; }
  /// Passes on every event up to `limit` (explicit release).
  void releaseUpTo(int64_t limit) { flush(limit, SIZE_MAX); }

  /// Passes on everything still queued. Call at the end of the input, also
  /// when it ended in an error (what was read is kept).
  void finish();

  uint64_t reordered() const { return m_reordered; }
  uint64_t late() const { return m_late; }
  uint64_t cpuRegressions() const { return m_cpuRegressions; }
  /// Largest distance in time an event was moved back (ns).
  int64_t maxReorderNs() const { return m_maxReorderNs; }

 private:
  struct Block {
    DecodedEvent* events;
    size_t count;
    void* token;
  };
  // One CPU's events in the order read. Pushed events sit in a ring (head and
  // tail only grow, its size a power of two; it grows by doubling while the
  // window fills, then stays: no allocation per event); pushed blocks are
  // read in place.
  struct Queue {
    std::vector<DecodedEvent> ring;
    size_t head = 0;
    size_t tail = 0;
    std::deque<Block> blocks;
    size_t blockPos = 0;
    size_t blockEvents = 0;  // events of `blocks` not yet passed on
    int64_t lastTs = INT64_MIN;  // latest time read (after clamping: the ring is sorted by ts)
    int64_t prevTs = INT64_MIN;  // blocks: time of the event before the head
    bool dirty = false;          // explicit release: the ring is a permutation, sorted at flush
    bool ended = false;
    size_t size() const { return tail - head + blockEvents; }
    DecodedEvent& at(size_t i) { return ring[i & (ring.size() - 1)]; }
    DecodedEvent& front() { return blocks.empty() ? at(head) : blocks.front().events[blockPos]; }
    void grow();
    void sortRing();
  };
  // Long texts (exec file names) of queued events; slots are reused, and a
  // deque never moves them.
  struct TextSlots {
    std::deque<std::string> slots;
    std::vector<uint32_t> free;
    std::string_view store(std::string_view s, uint32_t& slot);
  };

  void insertLate(Queue& q);
  void afterPush(int cpu);
  void flush(int64_t limit, size_t keepAtMost);
  void pop(Queue& q);
  void settleBlockHead(Queue& q);
  void deliver(DecodedEvent& e);
  void keepTexts(DecodedEvent& e);
  void updateCpuBound();
  void note(DiagCode code, const DecodedEvent& e, int64_t from, int64_t to);
  static bool earlier(const DecodedEvent& a, const DecodedEvent& b) {
    return a.ts != b.ts ? a.ts < b.ts : a.position < b.position;
  }

  std::unique_ptr<EventFeed> m_ownFeed;
  EventFeed& m_feed;
  EventSink* m_sink = nullptr;
  int64_t m_windowNs;
  size_t m_maxQueued;
  bool m_explicit = false;
  std::vector<Queue> m_queues;  // by CPU
  struct HeapEntry {
    int64_t ts;
    uint64_t position;
    uint32_t cpu;
  };
  std::vector<HeapEntry> m_heap;  // flush scratch: CPUs by their queue's head
  TextSlots m_texts;
  size_t m_queued = 0;
  size_t m_pushedSinceFlush = 0;
  int64_t m_maxTs = INT64_MIN;    // latest time pushed
  int64_t m_horizon = INT64_MIN;  // time of the last event passed on
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
