// Level-of-detail index over the timeline's tracks: one per CPU (run slices),
// one per task on demand (state intervals). query() turns a time window and a
// zoom into at most a few draw items per pixel, whatever the number of rows, so
// the renderer's cost grows with pixels, not events. Built off the GUI thread
// by app/render and app/gui; no Qt here.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/trace_model.h"

namespace core {

/// What one row of a track shows. Empty rows (idle CPU, dead or unknown task)
/// are not drawn but still split folds, so gaps stay visible.
enum class TrackKind : uint8_t { Empty, Running, Runnable, Sleeping, Blocked, ForcedIdle, Loss };

/// The time-weighted categories a fold reports fractions for (Empty and Loss excluded).
inline constexpr int kFoldCategories = 5;  // Running, Runnable, Sleeping, Blocked, ForcedIdle
inline constexpr int foldCategory(TrackKind k) { return static_cast<int>(k) - 1; }

enum class DrawKind : uint8_t { Running, Runnable, Sleeping, Blocked, ForcedIdle, Loss, Folded };

/// One thing to draw. A single row (count 1, kind from the row) when it is at
/// least kMinVisiblePx wide; otherwise a Folded run of consecutive narrow rows
/// covering about kFoldPx pixels, with the share of its time in each category.
struct DrawItem {
  DrawKind kind = DrawKind::Folded;
  uint32_t firstIdx = 0;  ///< first track row (see TimelineTrack::sourceRow)
  uint32_t count = 0;
  int64_t ts = 0;   ///< start of the first row (absolute trace time)
  int64_t end = 0;  ///< end of the last row
  /// Folded: the longest Running row inside (for its colour), UINT32_MAX if none ran.
  uint32_t dominantIdx = UINT32_MAX;
  /// Folded: fraction of [ts, end) in each foldCategory().
  std::array<float, kFoldCategories> share{};
};

/// One track: rows sorted by ts, non-overlapping. Immutable after construction;
/// query() may be called from any number of threads at once.
class TimelineTrack {
 public:
  static constexpr double kMinVisiblePx = 3.0;  ///< narrower rows are folded (Tracy's MinVisSize)
  static constexpr double kFoldPx = 2.0;        ///< width of a fold bin
  static constexpr uint32_t kNoRow = UINT32_MAX;

  /// Run slices of one CPU; rows are the CPU's cpuSlices rows.
  static TimelineTrack fromCpu(const TraceModel& model, int cpu);
  /// Run slices of one CPU whose task satisfies `keep` (search highlights); rows map back with sourceRow().
  static TimelineTrack fromCpuFiltered(const TraceModel& model, int cpu, const std::function<bool(Utid)>& keep);
  /// State intervals of one task; rows map to threadStates rows with sourceRow().
  static TimelineTrack fromThread(const TraceModel& model, Utid utid);

  TimelineTrack() = default;
  TimelineTrack(const TimelineTrack&) = delete;
  TimelineTrack& operator=(const TimelineTrack&) = delete;
  TimelineTrack(TimelineTrack&&) noexcept = default;
  TimelineTrack& operator=(TimelineTrack&&) noexcept = default;

  size_t size() const { return m_kind.size(); }
  bool empty() const { return m_kind.empty(); }
  int64_t ts(uint32_t i) const { return tsColumn()[m_tsOffset + i]; }
  int64_t dur(uint32_t i) const { return durColumn()[i]; }
  int64_t end(uint32_t i) const { return ts(i) + dur(i); }
  TrackKind kind(uint32_t i) const { return m_kind[i]; }
  /// Row of the model table behind track row i (cpuSlices[cpu] or threadStates).
  uint32_t sourceRow(uint32_t i) const { return m_rowMap.empty() ? m_rowOffset + i : m_rowMap[i]; }

  /// Draw items covering [t0, t1) at `nsPerPx` nanoseconds per pixel. Fold bins
  /// are aligned to absolute multiples of their width, so panning at a fixed
  /// zoom yields the same bins where two windows overlap. Zoomed in, items come
  /// in time order; zoomed far out (more than ~16 rows per fold bin) the bins
  /// come from the time pyramid first, then the rows wide enough to stand alone.
  std::vector<DrawItem> query(int64_t t0, int64_t t1, double nsPerPx) const;
  void query(int64_t t0, int64_t t1, double nsPerPx, std::vector<DrawItem>& out) const;

  /// The row that covers time t, if any (ties go to the later row).
  std::optional<uint32_t> rowAt(int64_t t) const;
  /// The non-empty row nearest to t within `slack` ns (for clicks on thin rows).
  std::optional<uint32_t> rowNear(int64_t t, int64_t slack) const;

  /// Time in category c over rows [a, b).
  int64_t categoryTime(int c, uint32_t a, uint32_t b) const;
  /// First row in [a, b) at least `minDur` long (Loss rows always qualify), or b.
  uint32_t findFirstWide(uint32_t a, uint32_t b, int64_t minDur) const;
  /// Longest Running row in [a, b), or kNoRow.
  uint32_t longestRunning(uint32_t a, uint32_t b) const;
  /// out[i] = time in category c before absolute time edges[i] (ascending).
  /// Walks forward edge by edge, so a row of bins costs O(bins + log rows):
  /// the time in bin i is out[i+1] - out[i] (group summaries, heat maps).
  void categoryIntegral(int c, std::span<const int64_t> edges, std::span<int64_t> out) const;

  size_t memoryBytes() const;

 private:
  static constexpr uint32_t kBlockShift = 4;  // mipmap fan-out and prefix-sum block: 16 rows
  static constexpr uint32_t kBlock = 1u << kBlockShift;
  void buildIndex();
  void buildPyramid();
  void queryRows(int64_t t0, int64_t t1, int64_t minVis, int64_t binNs, std::vector<DrawItem>& out) const;
  void queryPyramid(size_t level, int64_t t0, int64_t t1, int64_t minVis, std::vector<DrawItem>& out) const;
  int64_t wideKey(uint32_t i) const { return m_kind[i] == TrackKind::Loss ? INT64_MAX : dur(i); }
  int64_t runningKey(uint32_t i) const { return m_kind[i] == TrackKind::Running ? dur(i) : -1; }
  // The model's columns when the track reads them in place (CPU slices, a
  // thread's rows from m_tsOffset), else the track's own: resolved on each read
  // so that moving a track keeps it valid.
  const TimeColumn& tsColumn() const { return m_modelTs ? *m_modelTs : m_ownTs; }
  const TimeColumn& durColumn() const { return m_modelDur ? *m_modelDur : m_ownDur; }
  /// The track's row starts, from row 0, for binary and galloping searches.
  TimeColumn::const_iterator rowStarts() const { return tsColumn().begin() + m_tsOffset; }
  /// First row in [from, to) starting after t (upper) or at or after t (lower).
  uint32_t upperBound(uint32_t from, uint32_t to, int64_t t) const;
  uint32_t lowerBound(uint32_t from, uint32_t to, int64_t t) const;
  uint32_t betterRunning(uint32_t a, uint32_t b) const;
  int64_t prefix(int c, uint32_t x) const;

  const TimeColumn* m_modelTs = nullptr;
  const TimeColumn* m_modelDur = nullptr;
  uint32_t m_tsOffset = 0;
  TimeColumn m_ownTs;  // when the model has no such column (thread states, filtered tracks)
  TimeColumn m_ownDur;
  std::vector<TrackKind> m_kind;
  std::vector<uint32_t> m_rowMap;
  uint32_t m_rowOffset = 0;
  // Mipmaps: level l holds one entry per 16^(l+1) rows.
  std::vector<std::vector<int64_t>> m_maxWide;
  std::vector<std::vector<uint32_t>> m_argRunning;
  // Per-category time before each 16-row block: m_cum[block * kFoldCategories + c].
  std::vector<int64_t> m_cum;
  // Time pyramid for far zoom: level l cuts time into bins of width w0 * 2^l at
  // absolute multiples of it, each summarising the rows it overlaps, so a whole
  // trace view reads about a thousand bins whatever the event count.
  struct FoldBin {
    std::array<uint16_t, kFoldCategories> share;  ///< fraction of the bin, 0..65535
    uint32_t dominant;                            ///< longest Running row overlapping it
    uint32_t firstRow;                            ///< first row starting at or after its start
  };
  struct PyramidLevel {
    int64_t width = 0;
    int64_t base = 0;  ///< absolute index (time / width) of bins[0]
    std::vector<FoldBin> bins;
  };
  std::vector<PyramidLevel> m_pyramid;
};

/// A count that changes over time (the tasks waiting on one CPU's runqueue),
/// kept as its integral at each change, so its mean over any interval is two
/// lookups. Immutable after construction.
class CountIntegral {
 public:
  /// Each interval [start, end) adds one to the count while it lasts.
  static CountIntegral fromIntervals(std::vector<std::pair<int64_t, int64_t>> intervals);
  /// out[i] = integral of the count (ns x tasks) before edges[i] (ascending).
  void integral(std::span<const int64_t> edges, std::span<int64_t> out) const;
  size_t memoryBytes() const { return m_t.size() * (sizeof(int64_t) * 2 + sizeof(int32_t)); }

 private:
  std::vector<int64_t> m_t;      // change times, ascending
  std::vector<int64_t> m_cum;    // integral up to m_t[i]
  std::vector<int32_t> m_level;  // count from m_t[i] on
};

/// The tracks of one model: every CPU eagerly, tasks lazily. Keeps the model
/// alive. Thread-safe: tracks are immutable, the lazy cache is locked.
class TimelineIndex {
 public:
  explicit TimelineIndex(std::shared_ptr<const TraceModel> model);
  const TraceModel& model() const { return *m_model; }
  const std::shared_ptr<const TraceModel>& modelPtr() const { return m_model; }
  /// Track of CPU number `cpu` (an empty track for CPUs without slices).
  const TimelineTrack& cpuTrack(int cpu) const;
  std::shared_ptr<const TimelineTrack> threadTrack(Utid utid) const;
  /// Runnable tasks queued on `cpu` but not running, over time (every CPU's is
  /// built from the thread states on the first call).
  const CountIntegral& waitingOn(int cpu) const;
  size_t memoryBytes() const;

 private:
  std::shared_ptr<const TraceModel> m_model;
  std::vector<TimelineTrack> m_cpuTracks;
  TimelineTrack m_emptyTrack;
  mutable std::mutex m_mutex;
  mutable std::unordered_map<uint32_t, std::shared_ptr<const TimelineTrack>> m_threadTracks;
  mutable std::once_flag m_waitingOnce;
  mutable std::vector<CountIntegral> m_waiting;
  CountIntegral m_emptyCount;
};

TrackKind trackKindOf(SliceKind kind);
TrackKind trackKindOf(TaskState state);

}  // namespace core
