#include "app/gui/latency_scatter.h"

#include <QMouseEvent>
#include <QPainter>
#include <algorithm>
#include <cmath>

namespace app::gui {

namespace {
constexpr int kLeft = 56, kRight = 12, kTop = 26, kBottom = 52;

// 1, 2 or 5 times a power of ten: at most `most` steps over `span`.
double niceStep(double span, int most) {
  const double raw = span / std::max(1, most);
  const double p = std::pow(10.0, std::floor(std::log10(std::max(raw, 1e-12))));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}
}  // namespace

LatencyScatter::LatencyScatter(QWidget* parent) : QWidget(parent) {
  setMinimumSize(320, 200);
  setCursor(Qt::CrossCursor);
}

void LatencyScatter::setData(QString title, std::vector<Dot> dots, double x0Ms, double x1Ms,
                             std::vector<LegendEntry> legend) {
  m_title = std::move(title);
  m_dots = std::move(dots);
  m_legend = std::move(legend);
  m_x0 = x0Ms;
  m_x1 = std::max(x1Ms, x0Ms + 1e-6);
  float lo = 1, hi = 10;
  if (!m_dots.empty()) {
    lo = hi = m_dots.front().yUs;
    for (const Dot& d : m_dots) lo = std::min(lo, d.yUs), hi = std::max(hi, d.yUs);
  }
  m_logY0 = std::floor(std::log10(static_cast<double>(lo)));
  m_logY1 = std::max(m_logY0 + 1, std::ceil(std::log10(static_cast<double>(hi))));
  render();
  update();
}

QRect LatencyScatter::plotRect() const {
  return QRect(kLeft, kTop, std::max(10, width() - kLeft - kRight), std::max(10, height() - kTop - kBottom));
}

double LatencyScatter::xOf(double ms, const QRect& plot) const {
  return plot.left() + (ms - m_x0) / (m_x1 - m_x0) * plot.width();
}

double LatencyScatter::yOf(double us, const QRect& plot) const {
  return plot.bottom() - (std::log10(std::max(us, 1e-3)) - m_logY0) / (m_logY1 - m_logY0) * plot.height();
}

QPointF LatencyScatter::valueAt(QPoint pos) const {
  const QRect plot = plotRect();
  const double ms = m_x0 + (pos.x() - plot.left()) * (m_x1 - m_x0) / plot.width();
  const double us = std::pow(10.0, m_logY0 + (plot.bottom() - pos.y()) * (m_logY1 - m_logY0) / plot.height());
  return {ms, us};
}

void LatencyScatter::resizeEvent(QResizeEvent* e) {
  QWidget::resizeEvent(e);
  render();
}

void LatencyScatter::mousePressEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton || !plotRect().contains(e->pos()) || m_dots.empty()) return;
  const QPointF v = valueAt(e->pos());
  emit clicked(v.x(), v.y());
}

// The whole picture into the cache: axes, grid, dots (later dots on top), legend.
void LatencyScatter::render() {
  const qreal dpr = devicePixelRatioF();
  m_image = QImage(size() * dpr, QImage::Format_ARGB32_Premultiplied);
  m_image.setDevicePixelRatio(dpr);
  m_image.fill(palette().color(QPalette::Base));
  QPainter p(&m_image);
  const QRect plot = plotRect();
  QFont f = font();
  f.setBold(true);
  p.setFont(f);
  p.setPen(palette().color(QPalette::Text));
  p.drawText(QRect(0, 2, width(), kTop - 4), Qt::AlignCenter, m_title);
  p.setFont(font());
  const QColor grid(0xe4, 0xe4, 0xe4), text(0x55, 0x55, 0x55);
  for (int d = static_cast<int>(m_logY0); d <= static_cast<int>(m_logY1); ++d) {
    const double y = yOf(std::pow(10.0, d), plot);
    p.setPen(grid);
    p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
    p.setPen(text);
    p.drawText(QRectF(0, y - 8, kLeft - 6, 16), Qt::AlignRight | Qt::AlignVCenter, QString::number(std::pow(10.0, d), 'g', 6));
  }
  const double step = niceStep(m_x1 - m_x0, std::max(2, plot.width() / 90));
  for (double x = std::ceil(m_x0 / step) * step; x <= m_x1 + 1e-9; x += step) {
    const double px = xOf(x, plot);
    p.setPen(grid);
    p.drawLine(QPointF(px, plot.top()), QPointF(px, plot.bottom()));
    p.setPen(text);
    p.drawText(QRectF(px - 40, plot.bottom() + 2, 80, 16), Qt::AlignCenter, QString::number(x, 'g', 6));
  }
  p.drawText(QRect(plot.left(), plot.bottom() + 16, plot.width(), 16), Qt::AlignCenter, tr("time (ms from the trace start)"));
  p.save();
  p.translate(12, plot.center().y());
  p.rotate(-90);
  p.drawText(QRect(-60, -10, 120, 16), Qt::AlignCenter, tr("\u00b5s (log)"));
  p.restore();
  p.setPen(QColor(0x99, 0x99, 0x99));
  p.drawRect(plot);
  int x = plot.left();
  const int y = height() - 16;
  for (const LegendEntry& e : m_legend) {
    const int w = p.fontMetrics().horizontalAdvance(e.name);
    if (x + w + 16 > width()) break;
    p.fillRect(QRect(x, y - 4, 8, 8), QColor::fromRgba(e.color));
    p.setPen(text);
    p.drawText(QPoint(x + 11, y + 4), e.name);
    x += w + 24;
  }
  p.end();
  // Dots go straight into the pixels (3x3, opaque): a fillRect per dot was most
  // of the GUI thread's time with a few hundred thousand of them.
  {
    const int imageW = m_image.width(), imageH = m_image.height();
    const QRect px(static_cast<int>(plot.left() * dpr) + 1, static_cast<int>(plot.top() * dpr) + 1,
                   static_cast<int>(plot.width() * dpr) - 2, static_cast<int>(plot.height() * dpr) - 2);
    for (const Dot& d : m_dots) {
      const int cx = static_cast<int>(std::lround(xOf(d.xMs, plot) * dpr));
      const int cy = static_cast<int>(std::lround(yOf(d.yUs, plot) * dpr));
      const QRgb c = d.color | 0xff000000u;
      for (int row = std::max(cy - 1, px.top()); row <= std::min({cy + 1, px.bottom(), imageH - 1}); ++row) {
        auto* line = reinterpret_cast<QRgb*>(m_image.scanLine(row));
        for (int col = std::max(cx - 1, px.left()); col <= std::min({cx + 1, px.right(), imageW - 1}); ++col) line[col] = c;
      }
    }
  }
}

void LatencyScatter::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.drawImage(0, 0, m_image);
}

}  // namespace app::gui
