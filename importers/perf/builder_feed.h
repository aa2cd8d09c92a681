// The perf.data reader's only way to the SchedBuilder. Direct: every decoded
// event goes to the builder at once. Threaded: the reader runs on a worker
// thread and the events travel in batches to the importing thread, which alone
// touches the builder — decoding and building then overlap on two cores.
// Used by perf_data_reader.cpp.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/sched_builder.h"
#include "importers/importer.h"
#include "importers/perf/decoded_event.h"

namespace importers::perf {

class BuilderFeed {
 public:
  explicit BuilderFeed(core::SchedBuilder& builder) : m_b(builder) {}
  BuilderFeed(const BuilderFeed&) = delete;
  BuilderFeed& operator=(const BuilderFeed&) = delete;

  /// From now on events are queued for drain(); call before the worker starts.
  void setThreaded() { m_threaded = true; }
  /// The files of the folder layout, by the number in each event's file tag.
  void setFiles(std::vector<std::string> paths) { m_files = std::move(paths); }
  bool threaded() const { return m_threaded; }

  // --- Producer side (the reader) ---
  /// A sample (Switch ... Uncounted), a rename (Comm), TaskInfo or DataLoss:
  /// counted under its countType, placed at its byte offset, applied.
  void event(const DecodedEvent& e) {
    if (e.op == EventOp::DataLoss && e.value() > 0) m_lostFed += static_cast<uint64_t>(e.value());
    if (!m_threaded) {
      apply(e, nullptr, nullptr);
      return;
    }
    if (!m_batch) m_batch = takeFreeBatch();
    m_batch->events.push_back(e);
    if (m_batch->events.size() >= kBatchSize) publish();
  }
  /// Located diagnostic; past the kept-record limit only counted.
  void diagnostic(core::DiagCode code, uint64_t off, std::string message, std::optional<int> cpu = {});
  /// Events the producer reported lost so far.
  uint64_t lostFed() const { return m_lostFed; }
  void progress(double fraction);
  /// Ends the stream: in threaded mode drain() returns `status` after the last batch.
  void finish(core::Status status);

  // --- Consumer side (the importing thread) ---
  /// Applies queued batches until finish(); returns the producer's status.
  core::Status drain(const ImportOptions& options);
  /// The consumer failed: the producer stops waiting and its batches are dropped.
  void abandon();

 private:
  struct Batch {
    std::vector<DecodedEvent> events;
    std::vector<std::string> messages;
  };
  static constexpr size_t kBatchSize = 2048;
  static constexpr size_t kMaxBatchesInFlight = 6;

  void apply(const DecodedEvent& e, const Batch* batch, const ImportOptions* options);
  void setPosition(uint64_t taggedOffset);
  std::unique_ptr<Batch> takeFreeBatch();
  void publish();

  core::SchedBuilder& m_b;
  bool m_threaded = false;
  std::vector<std::string> m_files;
  size_t m_currentFile = SIZE_MAX;  // none set yet: the builder names the folder
  std::array<uint64_t, core::kDiagCount> m_diagCounts{};
  uint64_t m_lostFed = 0;

  std::unique_ptr<Batch> m_batch;  // producer's batch being filled
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::deque<std::unique_ptr<Batch>> m_full;
  std::vector<std::unique_ptr<Batch>> m_free;
  size_t m_inFlight = 0;
  bool m_done = false;
  bool m_abandoned = false;
  core::Status m_status;
};

}  // namespace importers::perf
