// The timeline renderer shared by the GUI panes, PNG export, `schedlab-cli
// render` and reports. Two phases, as in Tracy: computePane() turns the LOD
// index's draw items into pixel primitives (any thread, cost bounded by pixels),
// paintPane() only draws those primitives (GUI thread, never touches model rows).
#pragma once

#include <QColor>
#include <QImage>
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

/// Cpu and Task rows show one CPU or task; Group is the header of an expanded
/// group (timeline_layout.h), Summary one of a collapsed group's summary rows.
enum class RowType : uint8_t { Cpu, Task, Group, Summary };
/// What a Summary row plots per time bin over its group's members: the busy
/// share (CPUs busy / CPUs, or threads running / threads), or the runnable
/// tasks waiting (full height: one per CPU, or every thread).
enum class SummaryKind : uint8_t { Busy, Waiting };

/// A row of a pane: a CPU (grouped by core, SMT siblings adjacent), a task, or
/// a group's header or summary.
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
  int group = -1;  ///< Group and Summary rows: the group (TimelineLayout::groups())
  int depth = 0;   ///< nesting of the groups around it, for the gutter's indent
  SummaryKind summary = SummaryKind::Busy;
  bool memberCpus = true;  ///< Summary: members are CPU numbers (else utids)
  std::shared_ptr<const std::vector<uint32_t>> members;  ///< Summary rows
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
/// worker catches up. Rows outside `exposed` (the paint event's rectangle;
/// empty: all of `area`) are not drawn, so a tall pane in a scroll area costs
/// what is on screen.
void paintPane(QPainter& p, const QRect& area, const std::vector<TimelineRow>& rows, const PaneDrawList& list,
               const Viewport& view, const QRect& exposed = {});
/// Row backgrounds (core bands, group headers) and separators under the slices.
void paintRowBackgrounds(QPainter& p, const QRect& area, const std::vector<TimelineRow>& rows, const QRect& exposed = {});
/// The label column at the left of the rows.
void paintGutter(QPainter& p, const QRect& gutter, const std::vector<TimelineRow>& rows, const QRect& exposed = {});

/// Rows shorter than this are compact: no air between rows, no text, and a
/// fold drawn at full height with its busy share as opacity.
inline constexpr int kCompactRowHeight = 8;
/// Rows shorter than this carry no text (slice labels, gutter labels): a
/// line of the smallest font does not fit.
inline constexpr int kLabelMinRowHeight = 12;

enum class HeatMetric : uint8_t { Busy, Waiting };
/// The overview heat map: one pixel row per CPU of `cpus` (top to bottom), one
/// column per `columns` equal bins of [from, to) (relative ns): the busy share,
/// or the runnable tasks waiting (saturating at 4), as a colour (heatColor()).
/// Scaled to `size` by area averaging when that differs. Any thread.
QImage computeHeatmap(const RunRenderData& run, const std::vector<int>& cpus, int64_t from, int64_t to, QSize size,
                      HeatMetric metric);
/// 0 -> light grey, then light yellow through orange to dark red at 1.
QRgb heatColor(double value);

}  // namespace app::render
