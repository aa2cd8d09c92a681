#include "app/render/time_axis.h"

#include <QPainter>
#include <QRegularExpression>
#include <algorithm>

#include "app/render/colors.h"

namespace app::render {

namespace {
const QString kMicro = QStringLiteral("\u00b5s");

struct Unit {
  int64_t ns;
  QString name;
};
Unit unitFor(int64_t magnitude) {
  if (magnitude >= 1000000000) return {1000000000, QStringLiteral("s")};
  if (magnitude >= 1000000) return {1000000, QStringLiteral("ms")};
  if (magnitude >= 1000) return {1000, kMicro};
  return {1, QStringLiteral("ns")};
}
int decimalsFor(int64_t unitNs, int64_t resolutionNs) {
  int d = 0;
  int64_t r = std::max<int64_t>(1, resolutionNs);
  for (int64_t u = unitNs; u > r && d < 9; u /= 10) ++d;
  return d;
}
QString number(int64_t ns, const Unit& u, int decimals) {
  return QString::number(static_cast<double>(ns) / static_cast<double>(u.ns), 'f', decimals) + QLatin1Char(' ') + u.name;
}
}  // namespace

Viewport Viewport::zoomedAt(double x, double factor) const {
  Viewport v = *this;
  const double pivot = static_cast<double>(start) + x * nsPerPx;
  v.nsPerPx = std::clamp(nsPerPx * factor, 1e-3, 1e12);
  v.start = static_cast<int64_t>(std::llround(pivot - x * v.nsPerPx));
  return v;
}

int64_t niceStep(double minNs) {
  int64_t base = 1;
  while (true) {
    for (int64_t m : {1, 2, 5})
      if (static_cast<double>(base * m) >= minNs) return base * m;
    if (base > INT64_MAX / 100) return base * 10;
    base *= 10;
  }
}

QString formatDuration(int64_t ns) {
  const int64_t a = ns < 0 ? -ns : ns;
  if (a >= 1000000000) return QString::number(static_cast<double>(ns) / 1e9, 'f', 3) + QStringLiteral(" s");
  if (a >= 1000000) return QString::number(static_cast<double>(ns) / 1e6, 'f', 3) + QStringLiteral(" ms");
  if (a >= 1000) return QString::number(static_cast<double>(ns) / 1e3, 'f', 1) + QLatin1Char(' ') + kMicro;
  return QString::number(ns) + QStringLiteral(" ns");
}

QString formatTime(int64_t ns, int64_t resolutionNs) {
  const Unit u = unitFor(ns < 0 ? -ns : ns);
  return number(ns, u, decimalsFor(u.ns, resolutionNs));
}

bool parseDuration(const QString& text, int64_t& ns) {
  static const QRegularExpression re(QStringLiteral(R"(^\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(ns|us|µs|ms|s)?\s*$)"));
  const auto m = re.match(text);
  if (!m.hasMatch()) return false;
  bool ok = false;
  const double v = m.captured(1).toDouble(&ok);
  if (!ok) return false;
  const QString unit = m.captured(2);
  double scale = 1e9;
  if (unit == QLatin1String("ns")) scale = 1;
  else if (unit == QLatin1String("us") || unit == QStringLiteral("\u00b5s")) scale = 1e3;
  else if (unit == QLatin1String("ms")) scale = 1e6;
  ns = static_cast<int64_t>(std::llround(v * scale));
  return true;
}

TimeTicks computeTicks(const Viewport& view, double minMajorPx) {
  TimeTicks out;
  if (view.width <= 0 || !(view.nsPerPx > 0)) return out;
  const int64_t major = niceStep(minMajorPx * view.nsPerPx);
  out.majorStep = major;
  int64_t mantissa = major;
  while (mantissa >= 10 && mantissa % 10 == 0) mantissa /= 10;
  const int64_t minor = std::max<int64_t>(1, mantissa == 2 ? major / 4 : major / 5);
  const int64_t t0 = view.start;
  const int64_t t1 = view.end();
  const int64_t maxMagnitude = std::max(t0 < 0 ? -t0 : t0, t1 < 0 ? -t1 : t1);
  const Unit u = unitFor(maxMagnitude);
  int decimals = decimalsFor(u.ns, major);
  if (decimals > 3) {
    // Deep zoom far from 0: "5.123456789 s" on every tick is unreadable; show
    // offsets from an anchor printed once.
    out.anchored = true;
    const int64_t grain = major * 1000;
    out.anchor = (t0 >= 0 ? t0 / grain : (t0 - grain + 1) / grain) * grain;
    out.anchorLabel = formatTime(out.anchor, major);
  }
  auto floorTo = [](int64_t v, int64_t step) { return (v >= 0 ? v / step : (v - step + 1) / step) * step; };
  for (int64_t t = floorTo(t0, minor); t <= t1; t += minor) {
    Tick tick;
    tick.t = t;
    tick.x = view.xOf(t);
    tick.major = floorTo(t, major) == t;
    if (tick.major) {
      if (out.anchored) {
        const int64_t off = t - out.anchor;
        const Unit ou = unitFor(std::max<int64_t>(off < 0 ? -off : off, major));
        tick.label = QStringLiteral("+") + number(off, ou, decimalsFor(ou.ns, major));
      } else {
        tick.label = number(t, u, t == 0 ? 0 : decimals);
      }
    }
    out.ticks.push_back(std::move(tick));
    if (out.ticks.size() > 4096) break;
  }
  return out;
}

void paintRuler(QPainter& p, const QRect& rect, int gutterWidth, const Viewport& view) {
  const Palette& pal = palette();
  p.save();
  p.fillRect(rect, pal.rulerBack);
  const QRect area(rect.left() + gutterWidth, rect.top(), rect.width() - gutterWidth, rect.height());
  const TimeTicks ticks = computeTicks(view);
  QFont f = p.font();
  f.setPointSizeF(std::max(7.0, f.pointSizeF() * 0.85));
  p.setFont(f);
  const QFontMetrics fm(f);
  p.setClipRect(area);
  int labelsEnd = area.left();  // right end of the last label drawn
  for (const Tick& t : ticks.ticks) {
    const int x = area.left() + static_cast<int>(std::lround(t.x));
    p.setPen(pal.rulerTick);
    const int h = t.major ? rect.height() / 2 : rect.height() / 5;
    p.drawLine(x, rect.bottom() - h, x, rect.bottom());
    if (t.major && t.x >= 0) {  // a tick left of the area would show a clipped label
      // Labels sit right of their tick; one that would run past the area's end sits left of it,
      // or is left out where that would cover the label before.
      const int width = fm.horizontalAdvance(t.label);
      int left = x + 3;
      if (left + width > area.right()) {
        left = x - 3 - width;
        if (left < labelsEnd + 4) continue;
      }
      p.setPen(pal.rulerText);
      p.drawText(left, rect.top() + fm.ascent() + 2, t.label);
      labelsEnd = left + width;
    }
  }
  p.setClipping(false);
  p.setPen(pal.separator);
  p.drawLine(rect.left(), rect.bottom(), rect.right(), rect.bottom());
  if (gutterWidth > 0) {
    const QRect g(rect.left(), rect.top(), gutterWidth, rect.height());
    p.fillRect(g, pal.gutter);
    p.setPen(pal.gutterSubText);
    const QString text = ticks.anchored ? QStringLiteral("@ ") + ticks.anchorLabel : QStringLiteral("time from start");
    p.drawText(g.adjusted(6, 0, -4, 0), Qt::AlignVCenter | Qt::AlignLeft, fm.elidedText(text, Qt::ElideRight, g.width() - 10));
    p.setPen(pal.separator);
    p.drawLine(g.right(), g.top(), g.right(), g.bottom());
  }
  p.restore();
}

}  // namespace app::render
