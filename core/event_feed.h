// The one way from an importer's decoder to the SchedBuilder, for every format.
// Direct: each event is applied at once. Threaded: the decoder runs on another
// thread and hands over batches of DecodedEvent plus side records (located
// diagnostics, run metadata, progress, event-type names); the importing thread,
// which alone touches the builder, applies them in the order they were made —
// decoding and building then overlap on two cores. Used threaded by the CTF
// reader, and by the perf.data, Perfetto and ftrace text readers when a core
// is idle; under the EventSorter by every importer.
//
// Failure modes: none of its own. A consumer that fails calls abandon(): the
// producer stops waiting and what it still hands over is dropped.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/decoded_event.h"
#include "core/result.h"
#include "core/sched_builder.h"

namespace core {

class EventFeed {
 public:
  /// What DecodedEvent::position and diagnostics' positions are: a line or a byte offset.
  enum class Position : uint8_t { Line, ByteOffset };

  EventFeed(SchedBuilder& builder, Position position) : m_b(builder), m_position(position) {}
  EventFeed(const EventFeed&) = delete;
  EventFeed& operator=(const EventFeed&) = delete;

  /// Whether a CPU is idle now (fewer running tasks in /proc/loadavg than the
  /// CPUs this process may run on): a worker thread would get a core of its own.
  static bool spareCpu();

  /// From now on everything is queued for drain(); call before the producer starts.
  void setThreaded() { m_threaded = true; }
  bool threaded() const { return m_threaded; }
  /// The files of an input of several, by the number fileTag() put in each
  /// position: diagnostics name the file and its own offset. Call before the
  /// producer starts.
  void setFiles(std::vector<std::string> paths) { m_files = std::move(paths); }

  // --- Producer side (the decoder) ---
  /// The countKey under which events of this name are counted (one per call:
  /// ask once per event type).
  uint16_t eventType(std::string_view name);
  /// Applies `e` (threaded: later, in order); its outside texts are copied.
  void event(const DecodedEvent& e) {
    if (!m_threaded) {
      apply(e);
      return;
    }
    Batch& b = batch();
    b.events.push_back(e);
    if (e.externalText) keepTexts(b, b.events.back());
    if (b.events.size() >= kBatchEvents) publish();
  }
  /// Counts a diagnostic of `code`; true while its records are still kept
  /// (then call diagnostic() with the message, else the count is all there is).
  bool keepsRecord(DiagCode code);
  /// A located diagnostic, after keepsRecord() said yes.
  void diagnostic(DiagCode code, uint64_t position, std::string_view message, std::optional<int> cpu = {},
                  std::optional<int64_t> ts = {});
  void metadata(std::string_view key, std::string_view value);
  void format(std::string_view name);
  void progress(double fraction);
  /// Ends the stream: drain() returns `status` after the last batch.
  void finish(Status status);

  /// Runs `produce` (which feeds this feed and returns how its input ended) on
  /// a worker thread while this thread applies what it hands over: decoding
  /// and building overlap on two cores. Returns the producer's status, or
  /// "SOURCE: building the model failed: why". Never throws.
  Status runThreaded(const std::function<Status()>& produce, const std::function<void(double)>& progress,
                     const std::string& source);

  // --- Consumer side (the importing thread) ---
  /// Applies what the producer hands over until finish(); returns its status.
  /// Direct: returns the status given to finish() at once.
  Status drain(const std::function<void(double)>& progress = {});
  /// The consumer failed: the producer stops waiting and its batches are dropped.
  void abandon();
  bool abandoned() const {
    std::lock_guard lock(m_mutex);
    return m_abandoned;
  }

 private:
  enum class SideKind : uint8_t { EventType, Diagnostic, Metadata, Format, Progress };
  // Made between two events: applied before events[beforeEvent].
  struct SideRecord {
    uint32_t beforeEvent = 0;
    SideKind kind = SideKind::Metadata;
    DiagCode code = DiagCode::Count;
    std::optional<int> cpu;
    std::optional<int64_t> ts;
    uint64_t position = 0;
    double value = 0;
    uint32_t text[2] = {};
    uint32_t textLen[2] = {};
  };
  struct Batch {
    std::vector<DecodedEvent> events;
    std::vector<SideRecord> side;
    std::string text;  // the side records' texts and the events' outside texts
    std::string_view textOf(uint32_t at, uint32_t len) const { return std::string_view(text).substr(at, len); }
    void clear() {
      events.clear();
      side.clear();
      text.clear();
    }
  };
  static constexpr size_t kBatchEvents = 2048;
  static constexpr size_t kMaxBatchesInFlight = 8;

  void apply(const DecodedEvent& e) {
    if (e.countKey != DecodedEvent::kNoCount) m_b.countEvent(m_typeOfKey[e.countKey]);
    setPosition(e.position);
    applyEvent(m_b, e);
  }
  // Consumer side: where the builder's next diagnostic points.
  void setPosition(uint64_t position) {
    if (m_position == Position::Line) {
      m_b.setLine(position);
      return;
    }
    if (!m_files.empty()) setFile(position >> kFileTagShift);
    m_b.setByteOffset(position & kPositionInFileMask);
  }
  void setFile(size_t file);
  void applySide(const Batch& b, const SideRecord& r, const std::function<void(double)>& progress);
  Batch& batch() {
    if (!m_batch) m_batch = takeFreeBatch();
    return *m_batch;
  }
  SideRecord& side(SideKind kind, std::string_view a, std::string_view b = {});
  static void keepTexts(Batch& b, DecodedEvent& e);
  std::unique_ptr<Batch> takeFreeBatch();
  void publish();

  SchedBuilder& m_b;
  Position m_position;
  bool m_threaded = false;
  std::vector<std::string> m_files;
  size_t m_currentFile = SIZE_MAX;  // none named yet: the builder names the input
  std::vector<uint32_t> m_typeOfKey;  // countKey -> the builder's event type (consumer side)
  uint16_t m_nextKey = 0;             // producer side
  std::array<uint64_t, kDiagCount> m_diagCounts{};
  Status m_status;

  std::unique_ptr<Batch> m_batch;  // the producer's batch being filled
  mutable std::mutex m_mutex;
  std::condition_variable m_changed;
  std::deque<std::unique_ptr<Batch>> m_full;
  std::vector<std::unique_ptr<Batch>> m_free;
  size_t m_inFlight = 0;
  bool m_done = false;
  bool m_abandoned = false;
};

}  // namespace core
