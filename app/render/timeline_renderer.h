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
#include <utility>
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
  /// Per utid, the longest user-space slice: how far before a viewport one can
  /// begin and still reach into it (empty without user slices).
  std::vector<int64_t> userSliceMaxDur;
  /// Per counter track, what its strip or line is scaled to (counterScale()).
  std::vector<std::pair<double, double>> counterRange;
  /// Absolute time of relative 0: the model's first timestamp, or for a replay
  /// its recording's, so that replays line up with what they replay.
  int64_t origin = 0;
  const core::TraceModel& model() const { return index->model(); }
  static std::shared_ptr<RunRenderData> create(std::shared_ptr<const core::TraceModel> model,
                                               std::optional<int64_t> origin = std::nullopt);
};

/// Cpu: a CPU's run slices; Task: a task's states, with its user-space slices
/// in lanes below them; CpuFrequency / CpuIdle: a CPU's strip of its
/// cpu_frequency / cpu_idle counter; Counter: any other counter as a line (a
/// task's own signal has the task's utid);
/// Group: the header of an expanded group (timeline_layout.h); Summary: one of
/// a collapsed group's summary rows.
enum class RowType : uint8_t { Cpu, Task, CpuFrequency, CpuIdle, Counter, Group, Summary };
/// What a Summary row plots per time bin over its group's members: the busy
/// share (CPUs busy / CPUs, or threads running / threads), or the runnable
/// tasks waiting (full height: one per CPU, or every thread).
enum class SummaryKind : uint8_t { Busy, Waiting };

/// A row of a pane: a CPU (grouped by core, SMT siblings adjacent), a task, a
/// counter strip, or a group's header or summary.
struct TimelineRow {
  RowType type = RowType::Cpu;
  int cpu = -1;
  core::Utid utid;
  int counter = -1;   ///< CpuFrequency, CpuIdle, Counter: the track in model.counters
  int userLanes = 0;  ///< Task: lanes of user-space slices below the state bar (sync lanes, then async)
  int asyncLane = 0;  ///< Task: the first async lane
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
/// A task's row; `rowHeight` is its state bar's, user-space slices add lanes below.
TimelineRow taskRow(const core::TraceModel& model, core::Utid utid, int rowHeight = 20);
inline constexpr int kUserLaneHeight = 15;
inline constexpr int kMaxUserLanes = 8;  ///< deeper slices are drawn in the last lane

/// Where a task row's user-space lanes begin, as a fraction of its height from the top.
float userLanesTop(const TimelineRow& row);
/// The user-space slice (a model.userSlices row) under a point of a task row:
/// `yFraction` of the row's height from its top, at `absTs` give or take
/// `slackNs`; the innermost where several are. Instants span every lane.
std::optional<uint32_t> userSliceAt(const RunRenderData& run, const TimelineRow& row, double yFraction, int64_t absTs,
                                    int64_t slackNs);

/// Which counter rows a pane shows (View menu; `render --strips`).
struct StripOptions {
  bool frequency = false;  ///< a frequency strip under each CPU with cpu_frequency samples
  bool idle = false;       ///< an idle-state strip under each CPU with cpu_idle samples
  bool counters = false;   ///< the other per-CPU and user-space counters, as lines after the CPUs
  bool taskSignals = false;  ///< a task's own PELT and util_est signals, as lines under its task row
  bool any() const { return frequency || idle || counters || taskSignals; }
};
inline constexpr int kStripHeight = 14;
/// `rows` (CPU rows, task rows...) with the strips `options` asks for: a CPU's
/// strips right under its row, counter lines after the last CPU row, a task's
/// signals (sched_pelt_se / sched_load_se, sched_util_est_se) right under its row.
std::vector<TimelineRow> withStrips(std::vector<TimelineRow> rows, const core::TraceModel& model,
                                    const StripOptions& options);
/// What a counter track's strip or line spans: its smallest to largest value;
/// a PELT or util_est signal from 0 to its largest (at least 1).
std::pair<double, double> counterScale(const core::TraceModel& model, size_t track);
/// What a counter track is called in a row label ("util", "VSYNC (tgid 124)").
QString counterName(const core::TraceModel& model, size_t track);
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
  float y0 = 0, y1 = 1;  ///< as Prim's
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
/// "busy", "waiting" or "off" (no heat map: an empty inner optional); nullopt
/// for any other word. The GUI's and `render`'s --heatmap.
std::optional<std::optional<HeatMetric>> parseHeatMetric(const QString& text);
/// Runnable tasks waiting on one CPU at which the waiting scale is full.
inline constexpr double kHeatWaitingSaturation = 4;
/// Where `value` sits on `metric`'s colour scale, 0 to 1: a busy share as it
/// is; tasks waiting per CPU on a square-root scale full at
/// kHeatWaitingSaturation, so that one waiting task is already half-way and
/// the 1-3 that matter most stay apart.
double heatFraction(HeatMetric metric, double value);
/// The colour of a fraction of a heat scale: exactly 0 is a light grey;
/// anything above starts at a light orange that reads on white and grey, and
/// darkens steadily (ColorBrewer YlOrRd without its two palest classes) to dark
/// red at 1. Heat maps, summary rows and their legends all use it.
QRgb heatColor(double fraction);
/// The overview heat map: one pixel row per CPU of `cpus` (top to bottom), one
/// column per `columns` equal bins of [from, to) (relative ns): the busy share,
/// or the runnable tasks waiting, as heatColor(heatFraction()).
/// Scaled to `size` by area averaging when that differs. Any thread.
QImage computeHeatmap(const RunRenderData& run, const std::vector<int>& cpus, int64_t from, int64_t to, QSize size,
                      HeatMetric metric);

/// Height of the overview band (heat map and its label) above a pane's rows.
inline constexpr int kHeatmapHeight = 112;
/// A labelled point of a heat scale's legend, at `fraction` of its colour bar.
struct HeatTick {
  double fraction;
  QString label;
};
/// Busy: 0%, 50%, 100%. Waiting: 1, 2 and "≥4" where the square root puts them.
std::vector<HeatTick> heatLegendTicks(HeatMetric metric);
/// The legend's colour bar in the overview's label cell `cell`: along its
/// bottom, right of the swatch for exactly 0, above the tick labels.
QRect heatLegendBar(const QRect& cell);
/// The overview band `rect`: in its left `gutterWidth` pixels what the heat
/// map shows and its legend; across the rest `image` (computeHeatmap(); null:
/// not computed yet, left blank) with [x0, x1), fractions of its width, framed:
/// the range the rows below show. The GUI, `render --heatmap` and reports of
/// big machines all draw it.
void paintHeatOverview(QPainter& p, const QRect& rect, int gutterWidth, HeatMetric metric, const QImage& image,
                       double x0, double x1);

}  // namespace app::render
