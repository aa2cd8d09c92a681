// The timeline renderer shared by the GUI panes, PNG export, `schedlab-cli
// render` and reports. Two phases, as in Tracy: computePane() turns the LOD
// index's draw items into pixel primitives (any thread, cost bounded by pixels),
// paintPane() only draws those primitives (GUI thread, never touches model rows).
#pragma once

#include <QColor>
#include <QRect>
#include <QString>
#include <memory>
#include <optional>
#include <vector>

#include "app/render/time_axis.h"
#include "core/timeline_index.h"

class QPainter;

namespace app::render {

/// One run ready to draw: the LOD index (which keeps the model alive) and the
/// colour of every task, computed once.
struct RunRenderData {
  std::shared_ptr<const core::TimelineIndex> index;
  std::vector<QRgb> taskColors;  ///< per utid
  /// Absolute time of relative 0: the model's first timestamp, or for a replay
  /// its recording's, so that replays line up with what they replay.
  int64_t origin = 0;
  const core::TraceModel& model() const { return index->model(); }
  static std::shared_ptr<RunRenderData> create(std::shared_ptr<const core::TraceModel> model,
                                               std::optional<int64_t> origin = std::nullopt);
};

enum class RowType : uint8_t { Cpu, Task };

/// A row of a pane: a CPU (grouped by core, SMT siblings adjacent) or a task.
struct TimelineRow {
  RowType type = RowType::Cpu;
  int cpu = -1;
  core::Utid utid;
  int core = -1;
  int thread = 0;
  bool smt = false;
  bool firstOfCore = true;
  QString label;     ///< "CPU 3", or the task's comm
  QString sublabel;  ///< "core 1 · thread 1", or "tid 1234"
  int height = 20;
};

/// CPU rows in topology order: core by core, siblings adjacent and labelled.
std::vector<TimelineRow> cpuRows(const core::TraceModel& model, int rowHeight = 20);
TimelineRow taskRow(const core::TraceModel& model, core::Utid utid, int rowHeight = 20);
int rowsHeight(const std::vector<TimelineRow>& rows);

/// Tasks matching a search, per run: an LOD track per CPU with only their slices.
struct HighlightSet {
  std::vector<core::TimelineTrack> cpuTracks;  ///< indexed by CPU
  std::vector<char> utidMatch;                 ///< per utid
  bool active() const { return !utidMatch.empty(); }
  bool matches(core::Utid u) const { return u.value < utidMatch.size() && utidMatch[u.value]; }
  /// Tasks whose comm contains `text` (case-insensitive) or whose tid equals it.
  static std::shared_ptr<HighlightSet> build(const core::TraceModel& model, const QString& text);
};

enum class PrimStyle : uint8_t { Solid, Hatched, Loss, Highlight, Frame };
/// A rectangle in pixels: x relative to the computed viewport's left edge, y as
/// fractions of the row height (0 = top).
struct Prim {
  float x0, x1;
  float y0, y1;
  QRgb color;
  PrimStyle style;
};
struct PrimLabel {
  float x0, x1;
  QRgb color;
  QString text;
};
struct RowDrawList {
  std::vector<Prim> prims;
  std::vector<PrimLabel> labels;
  size_t drawItems = 0;  ///< items the index returned (for benchmarks)
};
/// Everything one pane draws, for one viewport.
struct PaneDrawList {
  Viewport view;
  std::vector<RowDrawList> rows;
  bool dimmed = false;  ///< a search is active: non-matching slices were faded
  size_t drawItems() const;
};

/// Computes the primitives of `rows` for `view` (any thread).
PaneDrawList computePane(const RunRenderData& run, const std::vector<TimelineRow>& rows, const Viewport& view,
                         const HighlightSet* highlight = nullptr);
RowDrawList computeRow(const RunRenderData& run, const TimelineRow& row, const Viewport& view,
                       const HighlightSet* highlight = nullptr);

/// Draws a pane's rows into `area` (the timeline part, gutter excluded) for the
/// current viewport `view`; `list` may have been computed for another viewport
/// (it is shifted and scaled), so panning and zooming stay smooth while the
/// worker catches up.
void paintPane(QPainter& p, const QRect& area, const std::vector<TimelineRow>& rows, const PaneDrawList& list,
               const Viewport& view);
/// Row backgrounds (core bands) and separators under the slices.
void paintRowBackgrounds(QPainter& p, const QRect& area, const std::vector<TimelineRow>& rows);
/// The label column at the left of the rows.
void paintGutter(QPainter& p, const QRect& gutter, const std::vector<TimelineRow>& rows);

}  // namespace app::render
