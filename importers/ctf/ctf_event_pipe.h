// Decoded CTF events on their way from the babeltrace2 thread to the
// SchedBuilder thread: compact records in chunks, a bounded queue of chunks,
// and their replay into the builder. Used by the CTF reader, which decodes on
// the importing thread while the model is built on a second one.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostics.h"
#include "core/sched_builder.h"
#include "core/task_state.h"

namespace importers::ctf {

enum class RecordKind : uint8_t {
  Event,       ///< one trace event: countEvent + the builder call named by `op`
  ClassName,   ///< `type` is a new event class, named text[0]
  TaskInfo,    ///< onTaskInfo(i[0] tid, i[1] tgid, text[0] comm)
  TaskSeed,    ///< onTaskStateSeed(ts, i[0] tid, state, cpu)
  DataLoss,    ///< onDataLoss(cpu, ts, count())
  Metadata,    ///< setMetadata(text[0], text[1])
  Format,      ///< setFormat(text[0])
  Diagnostic,  ///< recordDiagnostic(i[0] code, text[0] message)
};

/// Which builder call an Event record makes.
enum class EventOp : uint8_t { Other, Switch, Waking, Wakeup, WakeupNew, Migrate, Fork, Exec, Exit, Rename, Power };

/// One record (64 bytes). Event fields by op:
///   Switch:  i = prevTid, prevPrio, nextTid, nextPrio; text = prevComm, nextComm; state = prevState
///   Waking/Wakeup/WakeupNew: i = tid, prio, targetCpu; text = comm
///   Migrate: i = tid, prio, origCpu, destCpu; text = comm
///   Fork:    i = parentTid, childTid, childTgid; text = parentComm, childComm
///   Exec:    i = tid, oldTid; text = filename
///   Exit:    i = tid, prio; text = comm
///   Rename:  i = tid; text = newComm
///   Power:   a core::DecodedEvent of a power/PELT event: i = op, cpuA, tid, otherTid, aux (i[4..5]); text = text 0
struct Record {
  int64_t ts = 0;
  uint32_t type = 0;  ///< Event, ClassName: the reader's event class index
  int32_t cpu = 0;
  int32_t ctxTid = -1;
  int32_t i[6] = {};
  uint32_t text[2] = {};
  uint16_t textLen[2] = {};
  RecordKind kind = RecordKind::Event;
  EventOp op = EventOp::Other;
  uint8_t irq = 0;
  core::TaskState state = core::TaskState::Unknown;

  int64_t count() const { return static_cast<int64_t>((uint64_t{static_cast<uint32_t>(i[1])} << 32) | static_cast<uint32_t>(i[0])); }
  void setCount(int64_t n) {
    i[0] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(n)));
    i[1] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(n) >> 32));
  }
};
static_assert(sizeof(Record) == 64);

/// Records plus the bytes of their strings.
struct RecordChunk {
  static constexpr size_t kCapacity = 8192;
  std::vector<Record> records;
  std::string text;
  RecordChunk() { records.reserve(kCapacity); }
  bool full() const { return records.size() >= kCapacity; }
  void clear() {
    records.clear();
    text.clear();
  }
  /// Stores `s` (at most 64 KiB of it) and points slot `n` of `r` at it.
  void setText(Record& r, int n, std::string_view s) {
    const size_t len = std::min<size_t>(s.size(), UINT16_MAX);
    r.text[n] = static_cast<uint32_t>(text.size());
    r.textLen[n] = static_cast<uint16_t>(len);
    text.append(s.data(), len);
  }
  std::string_view textOf(const Record& r, int n) const { return {text.data() + r.text[n], r.textLen[n]}; }
};

/// A bounded queue of chunks between one producer and one consumer. The
/// producer blocks when kMaxChunks are in flight, so memory stays bounded
/// (about 9 MB); 16 rather than 2 lets decoding run on while the builder
/// thread waits for a core on a busy machine.
class RecordPipe {
 public:
  static constexpr size_t kMaxChunks = 16;

  /// Producer: an empty chunk (waits for one to come back when all are in use).
  std::unique_ptr<RecordChunk> acquire();
  /// Producer: hands a filled chunk to the consumer.
  void submit(std::unique_ptr<RecordChunk> chunk);
  /// Producer: no more chunks.
  void close();
  /// Consumer: the next chunk, or null once closed and drained.
  std::unique_ptr<RecordChunk> take();
  /// Consumer: gives a replayed chunk back for reuse.
  void recycle(std::unique_ptr<RecordChunk> chunk);
  /// Consumer: it cannot go on; the producer should stop reading.
  void fail() { m_failed.store(true, std::memory_order_relaxed); }
  bool failed() const { return m_failed.load(std::memory_order_relaxed); }

 private:
  std::mutex m_mutex;
  std::condition_variable m_filled;
  std::condition_variable m_emptied;
  std::deque<std::unique_ptr<RecordChunk>> m_full;
  std::vector<std::unique_ptr<RecordChunk>> m_free;
  size_t m_created = 0;
  bool m_closed = false;
  std::atomic<bool> m_failed{false};
};

/// Replays records into the builder, in order, on the builder thread.
class RecordReplayer {
 public:
  explicit RecordReplayer(core::SchedBuilder& builder) : m_builder(builder) {}
  /// Takes chunks until the pipe closes. Never throws: a failure (out of
  /// memory) is kept in error() and the remaining chunks are drained unread.
  void run(RecordPipe& pipe) noexcept;
  void replay(const RecordChunk& chunk);
  const std::string& error() const { return m_error; }

 private:
  core::SchedBuilder& m_builder;
  std::vector<uint32_t> m_typeOfClass;  ///< reader class index -> builder event type
  std::string m_error;
};

}  // namespace importers::ctf
