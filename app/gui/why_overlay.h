// What the timeline draws over a pane for the selected task: wakeup arrows (from
// the waker's CPU at the wakeup to the wakee's CPU at its switch-in, interrupt
// wakeups marked, the latency on the arrow) and its critical path across the
// task rows. Built off the GUI thread (buildTimelineOverlay); painting walks
// only the overlay's own few items in the visible window, never model rows.
#pragma once

#include <QRect>
#include <memory>
#include <vector>

#include "app/render/timeline_renderer.h"
#include "core/analysis/why.h"

class QPainter;

namespace app::gui {

struct WakeupArrow {
  int64_t wakeTs = 0;  ///< absolute: the wakeup
  int64_t runTs = 0;   ///< absolute: the wakee's next switch-in
  int fromCpu = 0;     ///< where the wakeup ran (the waker's CPU, or the interrupted one)
  int toCpu = 0;       ///< where the wakee was switched in
  bool irq = false;    ///< interrupt context: no waker task
  bool incoming = true;  ///< a wakeup of the selected task (else one it issued)
};

struct TimelineOverlay {
  core::Utid utid;
  std::vector<WakeupArrow> arrows;  ///< by wakeTs
  int64_t longestArrowNs = 0;
  std::vector<core::analysis::PathSegment> path;
  bool showArrows = true;
  bool showPath = true;
};

/// Arrows of every effective wakeup of `utid` and by it that led to a switch-in,
/// and `path` (may be null) as the overlay's critical path.
std::shared_ptr<TimelineOverlay> buildTimelineOverlay(const core::TraceModel& model, core::Utid utid,
                                                      const core::analysis::CriticalPath* path);

/// Draws the overlay over a pane's rows; `origin` maps absolute time to the viewport's relative time.
void paintTimelineOverlay(QPainter& p, const QRect& area, const std::vector<render::TimelineRow>& rows,
                          const TimelineOverlay& overlay, const render::Viewport& view, int64_t origin);

/// Most arrows drawn in one frame: beyond it the view is too far out for arrows to be read.
inline constexpr size_t kMaxArrowsPerFrame = 1500;

}  // namespace app::gui
