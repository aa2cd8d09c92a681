// The time axis shared by every timeline pane: the viewport (relative time at
// the left edge and zoom), tick placement with 1-2-5 steps, time formatting in
// sensible units, and the ruler drawing. Used by the GUI, PNG export and reports.
#pragma once

#include <QRect>
#include <QString>
#include <cmath>
#include <cstdint>
#include <vector>

class QPainter;

namespace app::render {

/// What part of time the timeline area shows. Times are relative to each run's
/// first timestamp, so recordings and replays line up.
struct Viewport {
  int64_t start = 0;   ///< relative ns at x = 0 of the timeline area
  double nsPerPx = 1;  ///< zoom
  int width = 0;       ///< pixels of the timeline area

  int64_t end() const { return start + static_cast<int64_t>(std::llround(width * nsPerPx)); }
  int64_t span() const { return end() - start; }
  double xOf(int64_t rel) const { return static_cast<double>(rel - start) / nsPerPx; }
  int64_t timeAt(double x) const { return start + static_cast<int64_t>(std::llround(x * nsPerPx)); }
  /// Zoom by `factor` (<1 zooms in) keeping the time under pixel x in place.
  Viewport zoomedAt(double x, double factor) const;
  bool operator==(const Viewport&) const = default;
};

struct Tick {
  double x = 0;
  int64_t t = 0;
  bool major = false;
  QString label;  ///< major ticks only
};

struct TimeTicks {
  std::vector<Tick> ticks;
  int64_t majorStep = 0;
  bool anchored = false;  ///< labels are offsets from `anchor` (deep zoom far from 0)
  int64_t anchor = 0;
  QString anchorLabel;
};

/// Ticks for the viewport with major ticks at least `minMajorPx` apart.
TimeTicks computeTicks(const Viewport& view, double minMajorPx = 100);

/// "1.234 s", "12.345 ms", "12.3 us" style (micro sign), adaptive.
QString formatDuration(int64_t ns);
/// A time (relative) printed with enough digits to resolve `resolutionNs`.
QString formatTime(int64_t ns, int64_t resolutionNs);
/// Parses "1.5s", "250ms", "10us", "300ns" (or plain seconds) to ns; false if malformed.
bool parseDuration(const QString& text, int64_t& ns);

/// The 1-2-5 step at least `minNs` long.
int64_t niceStep(double minNs);

/// Draws the ruler: background, minor and major ticks, labels; `gutter` is the
/// label column at its left (the anchor goes there when labels are offsets).
void paintRuler(QPainter& p, const QRect& rect, int gutterWidth, const Viewport& view);

}  // namespace app::render
