// Figures of the report that are not plain charts: timeline panes painted as
// vector graphics through the shared renderer (app/render), and the choice of
// the zoomed window. Internal to app/report.
#pragma once

#include <QRectF>
#include <QString>
#include <cstdint>
#include <memory>

#include "app/render/timeline_renderer.h"

class QPainter;

namespace app::report {

/// Logical pixel width timelines are laid out at before being scaled to the page.
inline constexpr int kTimelineLogicalWidth = 960;
/// The device resolution timeline figures must be painted at.
inline constexpr int kTimelineDpi = 96;

struct TimelineFigure {
  std::shared_ptr<const render::RunRenderData> data;
  int64_t from = 0;  ///< relative ns
  int64_t to = 0;
  QString title;
};

/// Row height (logical px) that keeps a pane of `cpus` rows readable on a page.
int timelineRowHeight(int cpus);
/// height / width of the figure for this run.
double timelineAspect(const TimelineFigure& fig);
/// Ruler, pane header, the overview heat map above 64 CPUs (the GUI's
/// default), CPU rows (grouped by core) and gutter, as vector
/// drawing scaled into `rect`. The painter's device must have 96 dpi logical
/// resolution (the renderer sizes some fonts in pixels, some in points).
void paintTimelineFigure(QPainter& p, const QRectF& rect, const TimelineFigure& fig);
double legendAspect();
void paintTimelineLegend(QPainter& p, const QRectF& rect);

/// The busiest window (most switch-ins) of length `length` within [from, to)
/// (relative ns); returns its start.
int64_t busiestWindow(const core::TraceModel& model, int64_t origin, int64_t from, int64_t to, int64_t length);

}  // namespace app::report
