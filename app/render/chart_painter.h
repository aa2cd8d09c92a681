// Charts drawn with plain QPainter calls (vector on PDF, crisp on screen):
// latency CDFs on a log time axis and grouped bars. Used by the reports and
// reusable by the GUI's statistics tab. Not Qt Charts: its QChart is a
// QGraphicsWidget, which needs QtWidgets, which the headless CLI must not load.
#pragma once

#include <QColor>
#include <QRectF>
#include <QString>
#include <QStringList>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "app/render/cpu_categories.h"

class QPainter;

namespace app::render {

/// Sizes are in typographic points and are converted to the painter's device
/// resolution, so one style looks the same on a 96-dpi widget, a 1200-dpi PDF
/// and a 2x PNG.
struct ChartStyle {
  QString fontFamily = QStringLiteral("DejaVu Sans");
  double fontPt = 7.0;
  double titlePt = 8.5;
  double lineWidthPt = 1.1;
  QColor text{0x22, 0x22, 0x22};
  QColor muted{0x66, 0x6b, 0x73};
  QColor axis{0x7a, 0x80, 0x8a};
  QColor grid{0xe4, 0xe7, 0xeb};
  QColor background{0xff, 0xff, 0xff};
};

/// Device units per point for the painter's device (1 on a 72-dpi device).
double unitsPerPoint(const QPainter& p);

struct CdfSeries {
  QString name;
  QColor color;
  std::span<const int64_t> sorted;  ///< ascending samples (ns); the caller keeps them alive while painting
};

struct CdfChart {
  QString title;
  QString xLabel;  ///< e.g. "wakeup latency"; the unit is chosen per tick
  std::vector<CdfSeries> series;
};

/// Empirical CDFs, one step line per series, x logarithmic in time (decade
/// ticks labelled "1 µs", "10 µs", ...), y from 0 to 1 with the median and the
/// 99th percentile marked by dotted guides. Samples <= 0 sit on the left edge.
/// A chart without samples says so instead of drawing empty axes.
void paintCdfChart(QPainter& p, const QRectF& rect, const CdfChart& chart, const ChartStyle& style = {});

struct BarSeries {
  QString name;
  QColor color;
  std::vector<double> values;  ///< one per category; NaN draws nothing
  /// One per category, or empty: a box (quartiles, median) with whiskers to
  /// the minimum and maximum instead of a bar, for categories that summarise
  /// several values (the CPUs of an LLC). A spread of no values draws nothing.
  std::vector<Spread> spreads;
};

/// Auto: logarithmic when the positive values span more than kBarLogSpan and
/// none is negative, so that small bars beside big ones stay visible; linear
/// otherwise. Linear suits parts of a whole (percentages).
enum class BarScale : uint8_t { Auto, Linear, Log };
inline constexpr double kBarLogSpan = 100;

struct BarChart {
  QString title;
  QString yLabel;
  QStringList categories;
  std::vector<BarSeries> series;
  double minValue = 0;
  double maxValue = 0;  ///< 0: the largest value rounded up to a 1-2-5 step (a decade on a log axis)
  std::function<QString(double)> formatValue;  ///< tick and value labels; default "%g"
  bool valueLabels = true;  ///< print each bar's value above it when there is room
  BarScale scale = BarScale::Auto;
};

/// The value axis paintBarChart() draws: [lo, hi] with its gridline values.
struct BarAxis {
  bool log = false;
  double lo = 0, hi = 1;
  std::vector<double> ticks;
  /// Where `v` sits from the bottom (0) to the top (1); clamped; on a log axis
  /// values at or below `lo` (zeros) sit at the bottom.
  double fraction(double v) const;
};
BarAxis barAxis(const BarChart& chart);

/// Grouped vertical bars (or boxes): one group per category, one per series.
/// A log axis has decade gridlines and says "log scale" along it.
void paintBarChart(QPainter& p, const QRectF& rect, const BarChart& chart, const ChartStyle& style = {});

/// The legend both charts draw: coloured keys with names, left to right,
/// wrapping; returns the height used.
double paintChartLegend(QPainter& p, const QRectF& rect, const std::vector<std::pair<QString, QColor>>& entries,
                        const ChartStyle& style = {});

}  // namespace app::render
