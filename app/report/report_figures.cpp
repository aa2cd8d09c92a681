#include "app/report/report_figures.h"

#include <QPainter>
#include <algorithm>
#include <vector>

#include "app/render/colors.h"
#include "app/render/timeline_image.h"
#include "app/render/timeline_layout.h"

namespace app::report {

namespace {

constexpr int kGutter = 130;

QFont timelineFont() {
  QFont f(QStringLiteral("DejaVu Sans"));
  f.setPixelSize(11);
  f.setStyleStrategy(QFont::PreferNoShaping);  // no ligatures: task names stay searchable in the PDF
  return f;
}

// The GUI's overview heat map goes above a big machine's rows here too.
int logicalHeight(const core::TraceModel& m, const std::vector<render::TimelineRow>& rows) {
  return render::kRulerHeight + render::kPaneHeaderHeight + render::rowsHeight(rows) +
         (render::TimelineLayout::defaultHeatmap(m) ? render::kHeatmapHeight : 0);
}

// Maps logical timeline pixels onto `rect`. The renderer mixes pixel-sized
// fonts with point-sized ones (derived from the device's dpi), so the target
// device must have a screen-like 96 dpi: the PDF writer is set up that way and
// the HTML writer rasterises timeline figures at 96 dpi (Figure::rasterDpi).
// (A QPicture detour does not work: Qt replays its text at the wrong size.)
void beginScaled(QPainter& p, const QRectF& rect, QSizeF size) {
  p.save();
  p.translate(rect.topLeft());
  p.scale(rect.width() / size.width(), rect.height() / size.height());
  p.setClipRect(QRectF(QPointF(0, 0), size));
}

}  // namespace

int timelineRowHeight(int cpus) { return std::clamp(160 / std::max(1, cpus), 6, 34); }

double timelineAspect(const TimelineFigure& fig) {
  const auto rows = render::cpuRows(fig.data->model(), timelineRowHeight(fig.data->model().cpuCount()));
  return static_cast<double>(logicalHeight(fig.data->model(), rows)) / kTimelineLogicalWidth;
}

void paintTimelineFigure(QPainter& p, const QRectF& rect, const TimelineFigure& fig) {
  const core::TraceModel& m = fig.data->model();
  const auto rows = render::cpuRows(m, timelineRowHeight(m.cpuCount()));
  const int width = kTimelineLogicalWidth;
  const int height = logicalHeight(m, rows);
  const render::Viewport view = render::viewportFor(fig.from, fig.to, width - kGutter);
  const render::PaneDrawList list = render::computePane(*fig.data, rows, view);

  beginScaled(p, rect, QSizeF(width, height));
  {
    QPainter& pp = p;  // everything below is in logical timeline pixels
    pp.setFont(timelineFont());
    pp.fillRect(QRect(0, 0, width, height), render::palette().background);
    render::paintRuler(pp, QRect(0, 0, width, render::kRulerHeight), kGutter, view);
    int y = render::kRulerHeight;
    const QString warning =
        m.partial ? QStringLiteral("partial: ") + QString::fromStdString(m.partialReason) : QString();
    render::paintPaneHeader(pp, QRect(0, y, width, render::kPaneHeaderHeight), fig.title, render::runSubtitle(m),
                            m.replay.has_value(), warning);
    y += render::kPaneHeaderHeight;
    if (const auto metric = render::TimelineLayout::defaultHeatmap(m)) {
      std::vector<int> cpus;
      for (const auto& r : rows) cpus.push_back(r.cpu);
      const int64_t span = std::max<int64_t>(1, m.lastTs - fig.data->origin);
      const QImage heat = render::computeHeatmap(*fig.data, cpus, 0, span, QSize(width - kGutter, render::kHeatmapHeight), *metric);
      render::paintHeatOverview(pp, QRect(0, y, width, render::kHeatmapHeight), kGutter, *metric, heat,
                                static_cast<double>(fig.from) / span, static_cast<double>(fig.to) / span);
      y += render::kHeatmapHeight;
    }
    const int h = render::rowsHeight(rows);
    const QRect area(kGutter, y, width - kGutter, h);
    render::paintRowBackgrounds(pp, area, rows);
    render::paintPane(pp, area, rows, list, view);
    render::paintGutter(pp, QRect(0, y, kGutter, h), rows);
    pp.setPen(render::palette().separator);
    pp.setBrush(Qt::NoBrush);
    pp.drawRect(QRect(0, 0, width - 1, height - 1));
  }
  p.restore();
}

double legendAspect() { return static_cast<double>(render::kLegendHeight) / kTimelineLogicalWidth; }

void paintTimelineLegend(QPainter& p, const QRectF& rect) {
  beginScaled(p, rect, QSizeF(kTimelineLogicalWidth, render::kLegendHeight));
  p.setFont(timelineFont());
  render::paintLegend(p, QRect(0, 0, kTimelineLogicalWidth, render::kLegendHeight));
  p.restore();
}

int64_t busiestWindow(const core::TraceModel& model, int64_t origin, int64_t from, int64_t to, int64_t length) {
  std::vector<int64_t> starts;
  for (const auto& t : model.cpuSlices)
    for (size_t i = 0; i < t.size(); ++i) {
      if (t.kind[i] != core::SliceKind::Task) continue;
      const int64_t rel = t.ts[i] - origin;
      if (rel >= from && rel < to) starts.push_back(rel);
    }
  if (starts.empty() || to - from <= length) return from;
  std::sort(starts.begin(), starts.end());
  size_t best = 0, bestCount = 0, j = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    if (starts[i] + length > to) break;
    while (j < starts.size() && starts[j] < starts[i] + length) ++j;
    if (j - i > bestCount) {
      bestCount = j - i;
      best = i;
    }
  }
  // Centre the busy stretch a little: start a tenth of the window before it.
  return std::clamp(starts[best] - length / 10, from, to - length);
}

}  // namespace app::report
