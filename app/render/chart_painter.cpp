#include "app/render/chart_painter.h"

#include <QFontMetricsF>
#include <QPaintDevice>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>
#include <limits>

namespace app::render {

namespace {

QFont chartFont(const ChartStyle& s, double pt, bool bold = false) {
  QFont f(s.fontFamily);
  f.setPointSizeF(pt);
  f.setBold(bold);
  f.setStyleStrategy(QFont::PreferNoShaping);  // no ligatures: PDF text stays searchable
  return f;
}

// Decade labels of the log axis: "1 ns" .. "100 s".
QString decadeLabel(double ns) {
  static const char* const units[] = {"ns", "\u00b5s", "ms", "s"};
  int unit = 0;
  double v = ns;
  while (v >= 1000 && unit < 3) {
    v /= 1000;
    ++unit;
  }
  if (v >= 1) return QStringLiteral("%1 %2").arg(std::llround(v)).arg(QString::fromUtf8(units[unit]));
  return QStringLiteral("%1 %2").arg(v, 0, 'g', 2).arg(QString::fromUtf8(units[unit]));
}

double niceCeil(double v) {
  if (v <= 0) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0})
    if (m * p >= v * (1 - 1e-9)) return m * p;
  return 10 * p;
}

double niceStepFor(double range, int maxTicks) {
  const double raw = range / std::max(1, maxTicks);
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

// Draws the title and legend at the top of `rect`; returns the rect left for the plot.
QRectF paintHeader(QPainter& p, const QRectF& rect, const QString& title,
                   const std::vector<std::pair<QString, QColor>>& legend, const ChartStyle& s) {
  const double u = unitsPerPoint(p);
  double top = rect.top();
  if (!title.isEmpty()) {
    const QFont tf = chartFont(s, s.titlePt, true);
    const QFontMetricsF fm(tf, p.device());
    p.setFont(tf);
    p.setPen(s.text);
    p.drawText(QRectF(rect.left(), top, rect.width(), fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
               fm.elidedText(title, Qt::ElideRight, rect.width()));
    top += fm.height() + 2 * u;
  }
  if (!legend.empty()) top += paintChartLegend(p, QRectF(rect.left(), top, rect.width(), rect.bottom() - top), legend, s) + 3 * u;
  return QRectF(rect.left(), top, rect.width(), std::max(1.0, rect.bottom() - top));
}

void paintNoData(QPainter& p, const QRectF& plot, const QString& text, const ChartStyle& s) {
  const double u = unitsPerPoint(p);
  p.setPen(QPen(s.axis, 0.6 * u));
  p.setBrush(Qt::NoBrush);
  p.drawRect(plot);
  p.setFont(chartFont(s, s.fontPt));
  p.setPen(s.muted);
  p.drawText(plot, Qt::AlignCenter, text);
}

}  // namespace

double unitsPerPoint(const QPainter& p) {
  const QPaintDevice* d = p.device();
  if (!d) return 1.0;
  const int dpi = d->logicalDpiY();
  return dpi > 0 ? dpi / 72.0 : 1.0;
}

double paintChartLegend(QPainter& p, const QRectF& rect, const std::vector<std::pair<QString, QColor>>& entries,
                        const ChartStyle& s) {
  if (entries.empty()) return 0;
  const double u = unitsPerPoint(p);
  const QFont f = chartFont(s, s.fontPt);
  const QFontMetricsF fm(f, p.device());
  p.save();
  p.setFont(f);
  const double lineH = fm.height() + 2 * u;
  const double key = 12 * u;
  double x = rect.left();
  double y = rect.top();
  for (const auto& [name, color] : entries) {
    const double w = key + 4 * u + fm.horizontalAdvance(name) + 12 * u;
    if (x > rect.left() && x + w > rect.right()) {
      x = rect.left();
      y += lineH;
    }
    const double cy = y + lineH / 2;
    p.setPen(QPen(color, 2.2 * u, Qt::SolidLine, Qt::FlatCap));
    p.drawLine(QPointF(x, cy), QPointF(x + key, cy));
    p.setPen(s.text);
    p.drawText(QRectF(x + key + 4 * u, y, w - key - 4 * u, lineH), Qt::AlignLeft | Qt::AlignVCenter, name);
    x += w;
  }
  p.restore();
  return y + lineH - rect.top();
}

void paintCdfChart(QPainter& p, const QRectF& rect, const CdfChart& chart, const ChartStyle& s) {
  p.save();
  p.setRenderHint(QPainter::Antialiasing, true);
  const double u = unitsPerPoint(p);
  p.fillRect(rect, s.background);
  std::vector<std::pair<QString, QColor>> legend;
  int64_t maxV = 0;
  int64_t minPos = std::numeric_limits<int64_t>::max();
  size_t samples = 0;
  for (const auto& se : chart.series) {
    legend.emplace_back(QStringLiteral("%1 (n=%L2)").arg(se.name).arg(se.sorted.size()), se.color);
    if (se.sorted.empty()) continue;
    samples += se.sorted.size();
    maxV = std::max(maxV, se.sorted.back());
    const auto it = std::upper_bound(se.sorted.begin(), se.sorted.end(), int64_t{0});
    if (it != se.sorted.end()) minPos = std::min(minPos, *it);
  }
  const QRectF area = paintHeader(p, rect, chart.title, legend, s);
  const QFont f = chartFont(s, s.fontPt);
  const QFontMetricsF fm(f, p.device());
  p.setFont(f);
  const double leftPad = fm.horizontalAdvance(QStringLiteral("0.99")) + 5 * u;
  const double bottomPad = fm.height() * (chart.xLabel.isEmpty() ? 1.2 : 2.3) + 2 * u;
  const QRectF plot(area.left() + leftPad, area.top() + fm.height() / 2, area.width() - leftPad - fm.horizontalAdvance(QStringLiteral("100 ms")) / 2,
                    std::max(1.0, area.height() - bottomPad - fm.height() / 2));
  if (samples == 0 || maxV <= 0) {
    paintNoData(p, plot, QStringLiteral("no samples in this range"), s);
    p.restore();
    return;
  }
  if (minPos == std::numeric_limits<int64_t>::max()) minPos = 1;
  double lo = std::pow(10.0, std::floor(std::log10(static_cast<double>(std::max<int64_t>(1, minPos)))));
  // Samples sitting on the lowest decade (µs-resolution clocks) would hide
  // their jump in the y axis: start one decade lower then.
  if (static_cast<double>(minPos) < lo * 1.5 && lo >= 10) lo /= 10;
  double hi = std::pow(10.0, std::ceil(std::log10(static_cast<double>(maxV))));
  if (hi <= lo) hi = lo * 10;
  const double llo = std::log10(lo), lhi = std::log10(hi);
  bool belowAxis = false;
  for (const auto& se : chart.series) belowAxis |= !se.sorted.empty() && static_cast<double>(se.sorted.front()) < lo;
  auto xOf = [&](double v) {
    const double lv = std::log10(std::max(v, lo));
    return plot.left() + (lv - llo) / (lhi - llo) * plot.width();
  };
  auto yOf = [&](double q) { return plot.bottom() - q * plot.height(); };

  // Grid: decades (with minor 2..9), quartiles, then the p50 / p99 guides.
  const int decades = static_cast<int>(std::lround(lhi - llo));
  p.setPen(QPen(s.grid, 0.5 * u));
  for (int d = 0; d < decades; ++d)
    for (int m = 2; m <= 9; ++m) {
      const double x = xOf(lo * std::pow(10.0, d) * m);
      if (decades <= 6) p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
    }
  p.setPen(QPen(s.grid.darker(112), 0.7 * u));
  for (double q : {0.25, 0.5, 0.75, 1.0}) p.drawLine(QPointF(plot.left(), yOf(q)), QPointF(plot.right(), yOf(q)));
  const int labelEvery = decades > 8 ? 2 : 1;
  for (int d = 0; d <= decades; ++d) {
    const double v = lo * std::pow(10.0, d);
    const double x = xOf(v);
    p.setPen(QPen(s.grid.darker(112), 0.7 * u));
    p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
    if (d % labelEvery) continue;
    p.setPen(s.muted);
    // Samples below the axis (zero latencies) are drawn on its left edge: say so.
    const QString label = (d == 0 && belowAxis ? QStringLiteral("\u2264 ") : QString()) + decadeLabel(v);
    const double w = fm.horizontalAdvance(label);
    p.drawText(QRectF(x - w / 2 - 2 * u, plot.bottom() + 2 * u, w + 4 * u, fm.height()), Qt::AlignCenter, label);
  }
  p.setPen(s.muted);
  for (double q : {0.0, 0.25, 0.5, 0.75, 1.0})
    p.drawText(QRectF(area.left(), yOf(q) - fm.height() / 2, leftPad - 3 * u, fm.height()),
               Qt::AlignRight | Qt::AlignVCenter, QString::number(q, 'g', 2));
  p.setPen(QPen(s.axis, 0.6 * u, Qt::DotLine));
  p.drawLine(QPointF(plot.left(), yOf(0.99)), QPointF(plot.right(), yOf(0.99)));
  p.setPen(s.muted);
  p.drawText(QRectF(plot.right() - 30 * u, yOf(0.99) + 0.5 * u, 29 * u, fm.height()), Qt::AlignRight | Qt::AlignTop,
             QStringLiteral("p99"));
  p.drawText(QRectF(plot.right() - 30 * u, yOf(0.5) + 0.5 * u, 29 * u, fm.height()), Qt::AlignRight | Qt::AlignTop,
             QStringLiteral("p50"));
  if (!chart.xLabel.isEmpty()) {
    p.drawText(QRectF(plot.left(), plot.bottom() + fm.height() + 3 * u, plot.width(), fm.height()), Qt::AlignCenter,
               chart.xLabel + QStringLiteral(" (log scale)"));
  }

  // Step lines; long series are sampled at 800 evenly spaced ranks, which keeps
  // the PDF small and loses nothing visible at print resolution.
  p.setClipRect(plot.adjusted(-u, -u, u, u));
  for (const auto& se : chart.series) {
    if (se.sorted.empty()) continue;
    const size_t n = se.sorted.size();
    const size_t points = std::min<size_t>(n, 800);
    QPainterPath path;
    double prevQ = 0;
    path.moveTo(xOf(static_cast<double>(se.sorted.front())), yOf(0));
    for (size_t k = 0; k < points; ++k) {
      const size_t i = points == n ? k : static_cast<size_t>(std::llround(static_cast<double>(k) * (n - 1) / (points - 1)));
      // F at v_i counts every sample <= v_i: skip to the last equal one.
      size_t last = i;
      while (last + 1 < n && se.sorted[last + 1] == se.sorted[i]) ++last;
      const double x = xOf(static_cast<double>(se.sorted[i]));
      const double q = static_cast<double>(last + 1) / static_cast<double>(n);
      path.lineTo(x, yOf(prevQ));
      path.lineTo(x, yOf(q));
      prevQ = q;
    }
    path.lineTo(plot.right(), yOf(prevQ));
    p.setPen(QPen(se.color, s.lineWidthPt * u, Qt::SolidLine, Qt::FlatCap, Qt::MiterJoin));
    p.setBrush(Qt::NoBrush);
    p.drawPath(path);
  }
  p.setClipping(false);
  p.setPen(QPen(s.axis, 0.8 * u));
  p.drawLine(plot.bottomLeft(), plot.bottomRight());
  p.drawLine(plot.bottomLeft(), plot.topLeft());
  p.restore();
}

double BarAxis::fraction(double v) const {
  if (log) {
    const double llo = std::log10(lo);
    return std::clamp((std::log10(std::max(v, lo)) - llo) / (std::log10(hi) - llo), 0.0, 1.0);
  }
  return std::clamp((v - lo) / (hi - lo), 0.0, 1.0);
}

BarAxis barAxis(const BarChart& chart) {
  double maxV = chart.minValue;
  double minPos = std::numeric_limits<double>::infinity();
  bool negative = false;
  auto see = [&](double v) {
    if (!std::isfinite(v)) return;
    maxV = std::max(maxV, v);
    if (v > 0) minPos = std::min(minPos, v);
    negative = negative || v < 0;
  };
  for (const auto& se : chart.series) {
    for (double v : se.values) see(v);
    for (const Spread& sp : se.spreads)
      if (sp.count > 0) see(sp.min), see(sp.max);
  }
  BarAxis a;
  const bool positives = std::isfinite(minPos);
  a.log = positives && (chart.scale == BarScale::Log ||
                        (chart.scale == BarScale::Auto && !negative && chart.minValue >= 0 && maxV > minPos * kBarLogSpan));
  if (a.log) {
    int first = static_cast<int>(std::floor(std::log10(minPos)));
    // The smallest bar would stand on the axis with no height: start a decade lower.
    if (minPos < 1.5 * std::pow(10.0, first)) --first;
    a.lo = std::pow(10.0, first);
    a.hi = chart.maxValue > a.lo ? chart.maxValue : std::pow(10.0, std::ceil(std::log10(maxV)));
    for (int d = first; std::pow(10.0, d) <= a.hi * (1 + 1e-9); ++d) a.ticks.push_back(std::pow(10.0, d));
    return a;
  }
  a.lo = chart.minValue;
  a.hi = chart.maxValue > chart.minValue ? chart.maxValue : niceCeil(maxV > chart.minValue ? maxV : chart.minValue + 1);
  const double step = niceStepFor(a.hi - a.lo, 5);
  for (double v = a.lo; v <= a.hi + step * 1e-6; v += step) a.ticks.push_back(v);
  return a;
}

void paintBarChart(QPainter& p, const QRectF& rect, const BarChart& chart, const ChartStyle& s) {
  p.save();
  p.setRenderHint(QPainter::Antialiasing, true);
  const double u = unitsPerPoint(p);
  p.fillRect(rect, s.background);
  std::vector<std::pair<QString, QColor>> legend;
  for (const auto& se : chart.series) legend.emplace_back(se.name, se.color);
  const BarAxis axis = barAxis(chart);
  // Said twice, in the title and along the axis: a log bar reads wrongly if taken for linear.
  const QString title = axis.log && !chart.title.isEmpty() ? chart.title + QStringLiteral(" \u2014 log scale") : chart.title;
  const QRectF area = paintHeader(p, rect, title, chart.series.size() > 1 ? legend : decltype(legend){}, s);
  const QFont f = chartFont(s, s.fontPt);
  const QFontMetricsF fm(f, p.device());
  p.setFont(f);
  auto format = chart.formatValue ? chart.formatValue : [](double v) { return QString::number(v, 'g', 4); };

  const QString yLabel = !axis.log            ? chart.yLabel
                         : chart.yLabel.isEmpty() ? QStringLiteral("log scale")
                                                  : chart.yLabel + QStringLiteral(" (log scale)");
  // Decades below the format's precision ("0.0" for 0.01) are written plainly.
  auto tickLabel = [&](double v) {
    const QString text = format(v);
    bool number = false;
    const double back = text.toDouble(&number);
    return axis.log && number && std::abs(back - v) > v * 0.01 ? QString::number(v, 'g', 3) : text;
  };
  double leftPad = 0;
  for (double v : axis.ticks) leftPad = std::max(leftPad, fm.horizontalAdvance(tickLabel(v)));
  leftPad += 5 * u + (yLabel.isEmpty() ? 0 : fm.height() + 2 * u);
  const QRectF plot(area.left() + leftPad, area.top() + fm.height(), area.width() - leftPad,
                    std::max(1.0, area.height() - fm.height() * 2.4));
  const size_t groups = static_cast<size_t>(chart.categories.size());
  if (groups == 0 || chart.series.empty()) {
    paintNoData(p, plot, QStringLiteral("no data"), s);
    p.restore();
    return;
  }
  auto yOf = [&](double v) { return plot.bottom() - axis.fraction(v) * plot.height(); };
  if (axis.log && axis.ticks.size() <= 7) {
    p.setPen(QPen(s.grid, 0.3 * u));
    for (size_t d = 0; d + 1 < axis.ticks.size(); ++d)
      for (int m = 2; m <= 9; ++m) p.drawLine(QPointF(plot.left(), yOf(axis.ticks[d] * m)), QPointF(plot.right(), yOf(axis.ticks[d] * m)));
  }
  for (double v : axis.ticks) {
    p.setPen(QPen(s.grid, 0.6 * u));
    p.drawLine(QPointF(plot.left(), yOf(v)), QPointF(plot.right(), yOf(v)));
    p.setPen(s.muted);
    p.drawText(QRectF(plot.left() - leftPad, yOf(v) - fm.height() / 2, leftPad - 4 * u, fm.height()),
               Qt::AlignRight | Qt::AlignVCenter, tickLabel(v));
  }
  if (!yLabel.isEmpty()) {
    p.save();
    p.translate(area.left() + fm.height() / 2, plot.center().y());
    p.rotate(-90);
    p.setPen(s.muted);
    p.drawText(QRectF(-plot.height() / 2, -fm.height() / 2, plot.height(), fm.height()), Qt::AlignCenter, yLabel);
    p.restore();
  }
  const double groupW = plot.width() / static_cast<double>(groups);
  const double barW = groupW * 0.78 / static_cast<double>(chart.series.size());
  // Labels are elided to their group; with groups narrower than a short
  // label, every k-th category is labelled so labels never collide.
  const double minLabel = fm.horizontalAdvance(QStringLiteral("CPU 00")) + 4 * u;
  const size_t labelEvery = std::max<size_t>(1, static_cast<size_t>(std::ceil(minLabel / groupW)));
  for (size_t g = 0; g < groups; ++g) {
    const double gx = plot.left() + groupW * static_cast<double>(g) + groupW * 0.11;
    for (size_t k = 0; k < chart.series.size(); ++k) {
      const auto& se = chart.series[k];
      const double left = gx + barW * static_cast<double>(k);
      const double right = gx + barW * static_cast<double>(k + 1) - 0.6 * u;
      if (g < se.spreads.size()) {
        const Spread& sp = se.spreads[g];
        if (sp.count == 0) continue;
        const double mid = (left + right) / 2;
        p.setPen(QPen(se.color.darker(140), 0.8 * u));
        p.drawLine(QPointF(mid, yOf(sp.max)), QPointF(mid, yOf(sp.q3)));
        p.drawLine(QPointF(mid, yOf(sp.q1)), QPointF(mid, yOf(sp.min)));
        p.drawLine(QPointF(left + (right - left) * 0.25, yOf(sp.max)), QPointF(right - (right - left) * 0.25, yOf(sp.max)));
        p.drawLine(QPointF(left + (right - left) * 0.25, yOf(sp.min)), QPointF(right - (right - left) * 0.25, yOf(sp.min)));
        // A box at least a hairline tall, so equal quartiles still show where they are.
        const QRectF box(QPointF(left, yOf(sp.q3)), QPointF(right, std::max(yOf(sp.q1), yOf(sp.q3) + 0.8 * u)));
        p.fillRect(box, se.color);
        p.drawRect(box);
        p.setPen(QPen(s.background, 1.2 * u));
        p.drawLine(QPointF(left + 0.6 * u, yOf(sp.median)), QPointF(right - 0.6 * u, yOf(sp.median)));
        continue;
      }
      if (g >= se.values.size() || !std::isfinite(se.values[g])) continue;
      const double v = se.values[g];
      const QRectF bar(QPointF(left, yOf(v)), QPointF(right, yOf(axis.lo)));
      p.fillRect(bar, se.color);
      const QString label = format(v);
      if (chart.valueLabels && v != 0 && fm.horizontalAdvance(label) <= barW - u) {
        p.setPen(s.text);
        p.drawText(QRectF(bar.left() - u, bar.top() - fm.height(), bar.width() + 2 * u, fm.height()),
                   Qt::AlignHCenter | Qt::AlignBottom, label);
      }
    }
    if (g % labelEvery == 0) {
      const double room = groupW * static_cast<double>(labelEvery) - 3 * u;
      const QString label = fm.elidedText(chart.categories[static_cast<qsizetype>(g)], Qt::ElideMiddle, room);
      p.setPen(s.text);
      p.drawText(QRectF(plot.left() + groupW * (static_cast<double>(g) + 0.5) - room / 2, plot.bottom() + 2 * u, room,
                        fm.height()),
                 Qt::AlignHCenter | Qt::AlignTop, label);
    }
  }
  p.setPen(QPen(s.axis, 0.8 * u));
  p.drawLine(plot.bottomLeft(), plot.bottomRight());
  p.drawLine(plot.bottomLeft(), plot.topLeft());
  p.restore();
}

}  // namespace app::render
