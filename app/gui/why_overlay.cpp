#include "app/gui/why_overlay.h"

#include <QFontMetrics>
#include <QObject>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>

#include "app/render/time_axis.h"

namespace app::gui {

namespace {

// The switch-in that ends the runnable stretch a wakeup at `ts` began: u's
// first Running row at or after ts.
std::optional<uint32_t> switchInAfter(const core::TraceModel& m, core::Utid u, int64_t ts) {
  const auto& st = m.threadStates;
  const auto [b, e] = m.stateRowsOf(u);
  auto r = static_cast<uint32_t>(std::lower_bound(st.ts.begin() + b, st.ts.begin() + e, ts) - st.ts.begin());
  for (; r < e; ++r) {
    if (st.state[r] == core::TaskState::Running) return r;
    if (!core::isRunnable(st.state[r])) return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::shared_ptr<TimelineOverlay> buildTimelineOverlay(const core::TraceModel& m, core::Utid utid,
                                                      const core::analysis::CriticalPath* path) {
  auto out = std::make_shared<TimelineOverlay>();
  out->utid = utid;
  const auto& w = m.wakeups;
  for (size_t i = 0; i < w.size(); ++i) {
    const bool incoming = w.wakee[i] == utid;
    if ((!incoming && w.waker[i] != utid) || (w.flags[i] & core::kWakeupNoEffect)) continue;
    const auto run = switchInAfter(m, w.wakee[i], w.ts[i]);
    if (!run) continue;
    WakeupArrow a;
    a.wakeTs = w.ts[i];
    a.runTs = m.threadStates.ts[*run];
    a.fromCpu = w.wakerCpu[i];
    a.toCpu = m.threadStates.cpu[*run];
    a.irq = (w.flags[i] & core::kWakeupFromIrq) != 0;
    a.incoming = incoming;
    out->longestArrowNs = std::max(out->longestArrowNs, a.runTs - a.wakeTs);
    out->arrows.push_back(a);
  }
  if (path) out->path = path->segments;
  return out;
}

namespace {

int rowTopOf(const QRect& area, const std::vector<render::TimelineRow>& rows, size_t index) {
  int y = area.top();
  for (size_t i = 0; i < index; ++i) y += rows[i].height;
  return y;
}

template <typename Pred>
std::optional<size_t> findRow(const std::vector<render::TimelineRow>& rows, Pred pred) {
  for (size_t i = 0; i < rows.size(); ++i)
    if (pred(rows[i])) return i;
  return std::nullopt;
}

void drawArrowHead(QPainter& p, QPointF tip, QPointF from, const QColor& c) {
  const double angle = std::atan2(tip.y() - from.y(), tip.x() - from.x());
  constexpr double kLen = 7, kSpread = 0.45;
  const QPointF a = tip - QPointF(kLen * std::cos(angle - kSpread), kLen * std::sin(angle - kSpread));
  const QPointF b = tip - QPointF(kLen * std::cos(angle + kSpread), kLen * std::sin(angle + kSpread));
  p.save();
  p.setPen(Qt::NoPen);
  p.setBrush(c);
  const QPointF tri[3] = {tip, a, b};
  p.drawPolygon(tri, 3);
  p.restore();
}

void paintArrows(QPainter& p, const QRect& area, const std::vector<render::TimelineRow>& rows,
                 const TimelineOverlay& o, const render::Viewport& v, int64_t origin) {
  const int64_t visFrom = origin + v.start, visTo = origin + v.end();
  auto it = std::lower_bound(o.arrows.begin(), o.arrows.end(), visFrom - o.longestArrowNs,
                             [](const WakeupArrow& a, int64_t t) { return a.wakeTs < t; });
  std::vector<const WakeupArrow*> visible;
  for (; it != o.arrows.end() && it->wakeTs <= visTo; ++it)
    if (it->runTs >= visFrom) visible.push_back(&*it);
  if (visible.size() > kMaxArrowsPerFrame) {
    p.setPen(QColor(0x55, 0x55, 0x55));
    p.drawText(area.adjusted(6, 2, -6, 0), Qt::AlignTop | Qt::AlignRight,
               QObject::tr("%1 wakeups in view: zoom in to see their arrows").arg(visible.size()));
    return;
  }
  QFont f = p.font();
  f.setPointSizeF(std::max(6.5, f.pointSizeF() - 1.5));
  p.setFont(f);
  for (const WakeupArrow* a : visible) {
    const auto fromRow = findRow(rows, [&](const render::TimelineRow& r) { return r.type == render::RowType::Cpu && r.cpu == a->fromCpu; });
    const auto toRow = findRow(rows, [&](const render::TimelineRow& r) { return r.type == render::RowType::Cpu && r.cpu == a->toCpu; });
    if (!fromRow || !toRow) continue;
    const double y0 = rowTopOf(area, rows, *fromRow) + rows[*fromRow].height * 0.5;
    const double y1 = rowTopOf(area, rows, *toRow) + rows[*toRow].height * (a->fromCpu == a->toCpu ? 0.15 : 0.5);
    const QPointF start(area.left() + v.xOf(a->wakeTs - origin), y0);
    const QPointF end(area.left() + v.xOf(a->runTs - origin), y1);
    const QColor c = a->irq ? QColor(0xd8, 0x43, 0x15) : a->incoming ? QColor(0x15, 0x3e, 0x9e) : QColor(0x2e, 0x7d, 0x32);
    // A light halo under each arrow and label keeps them readable over any slice colour.
    QPainterPath curve(start);
    const QPointF mid((start.x() + end.x()) / 2, std::min(y0, y1) - (a->fromCpu == a->toCpu ? 9 : 0));
    curve.quadTo(mid, end);
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(QColor(255, 255, 255, 190), 3.6));
    p.drawPath(curve);
    p.setPen(QPen(c, 1.6, a->irq ? Qt::DashLine : Qt::SolidLine));
    p.drawPath(curve);
    drawArrowHead(p, end, mid, c);
    p.setBrush(c);
    p.setPen(Qt::NoPen);
    p.drawEllipse(start, 2.5, 2.5);
    QString label = render::formatDuration(a->runTs - a->wakeTs);
    if (a->irq) label = QObject::tr("irq ") + label;
    const double width = std::abs(end.x() - start.x());
    const QFontMetrics fm(p.font());
    if (width > fm.horizontalAdvance(label) + 6 || a->irq) {
      if (width <= fm.horizontalAdvance(label) + 6) label = QObject::tr("irq");
      const QRectF box(mid.x() - fm.horizontalAdvance(label) / 2.0 - 2, mid.y() - fm.height() - 1,
                       fm.horizontalAdvance(label) + 4, fm.height());
      p.setBrush(QColor(255, 255, 255, 215));
      p.drawRoundedRect(box, 2, 2);
      p.setPen(c);
      p.drawText(box, Qt::AlignCenter, label);
    }
  }
}

void paintPath(QPainter& p, const QRect& area, const std::vector<render::TimelineRow>& rows,
               const TimelineOverlay& o, const render::Viewport& v, int64_t origin) {
  const QColor edge(0xff, 0x6f, 0x00);
  QPointF previousEnd;
  core::Utid previous;  // the task of the last segment drawn; invalid after one without a row
  for (const auto& s : o.path) {
    const auto row = findRow(rows, [&](const render::TimelineRow& r) { return r.type == render::RowType::Task && r.utid == s.utid; });
    if (!row) {
      previous = core::Utid();
      continue;
    }
    const double top = rowTopOf(area, rows, *row);
    const double h = rows[*row].height;
    const double x0 = area.left() + v.xOf(s.from - origin);
    const double x1 = std::max(x0 + 1.5, area.left() + v.xOf(s.to - origin));
    if (previous.isValid() && previous != s.utid) {
      // The wakeup that hands the path from the waker's row to the wakee's.
      p.setPen(QPen(edge, 2));
      p.drawLine(previousEnd, QPointF(x0, top + h / 2));
    }
    if (x1 >= area.left() && x0 <= area.right()) {
      // A light fill keeps the task row's own state colours readable under the path.
      QColor fill = edge;
      fill.setAlpha(s.state == core::analysis::PathState::Running ? 70 : 40);
      p.setPen(QPen(edge, 2));
      p.setBrush(s.state == core::analysis::PathState::Running || s.state == core::analysis::PathState::Runnable
                     ? QBrush(fill)
                     : QBrush(fill, Qt::BDiagPattern));
      p.drawRect(QRectF(x0, top + h * 0.2, x1 - x0, h * 0.6));
    }
    previousEnd = QPointF(x1, top + h / 2);
    previous = s.utid;
  }
}

}  // namespace

void paintTimelineOverlay(QPainter& p, const QRect& area, const std::vector<render::TimelineRow>& rows,
                          const TimelineOverlay& overlay, const render::Viewport& view, int64_t origin) {
  p.save();
  p.setClipRect(area);
  p.setRenderHint(QPainter::Antialiasing);
  if (overlay.showPath) paintPath(p, area, rows, overlay, view, origin);
  if (overlay.showArrows) paintArrows(p, area, rows, overlay, view, origin);
  p.restore();
}

}  // namespace app::gui
