// Whole timeline images: one pane per run (header, CPU rows grouped by core,
// optional task rows) under one ruler, plus a legend. Used by PNG export in the
// GUI, `schedlab-cli render` and PDF reports; QtGui only (works offscreen).
#pragma once

#include <QImage>
#include <QString>
#include <memory>
#include <optional>
#include <vector>

#include "app/render/timeline_renderer.h"

namespace app::render {

struct ImageRun {
  std::shared_ptr<const RunRenderData> data;
  QString title;                 ///< empty: derived from the model (file name, or replay model)
  std::vector<TimelineRow> rows;  ///< empty: the CPU rows
  std::shared_ptr<const HighlightSet> highlight;
  /// The overview heat map's lines, top to bottom; empty: the CPU rows' order.
  std::vector<int> heatCpus;
};

struct ImageOptions {
  int width = 1920;
  std::optional<int64_t> from;  ///< relative ns; default 0
  std::optional<int64_t> to;    ///< relative ns; default the longest run's span
  int rowHeight = 20;
  int gutterWidth = 170;
  bool legend = true;
  /// An overview heat map over each pane's rows (the whole trace, the image's range framed).
  std::optional<HeatMetric> heatmap;
};

inline constexpr int kRulerHeight = 26;
inline constexpr int kPaneHeaderHeight = 22;
inline constexpr int kLegendHeight = 24;

/// The viewport that shows [from, to) across `timelineWidth` pixels.
Viewport viewportFor(int64_t from, int64_t to, int timelineWidth);
/// Longest span (lastTs - firstTs) over the runs.
int64_t longestSpan(const std::vector<ImageRun>& runs);

/// Title shown in a pane header: "trace.dat — trace.dat v7, 2 CPUs" or "replay: cfs (cookies=...)".
QString runTitle(const core::TraceModel& model);
/// A few characters for column headers and legends: "nicemix txt", "cfs".
QString runShortTitle(const core::TraceModel& model);
QString runSubtitle(const core::TraceModel& model);

void paintPaneHeader(QPainter& p, const QRect& rect, const QString& title, const QString& subtitle, bool replay,
                     const QString& warning);
void paintLegend(QPainter& p, const QRect& rect);

/// Renders every run, stacked, for the options' time range.
QImage renderTimelineImage(const std::vector<ImageRun>& runs, const ImageOptions& options);
/// The same, with the pane draw lists already computed (benchmarks time the two phases apart).
QImage paintTimelineImage(const std::vector<ImageRun>& runs, const std::vector<PaneDrawList>& lists,
                          const ImageOptions& options, const Viewport& view);

}  // namespace app::render
