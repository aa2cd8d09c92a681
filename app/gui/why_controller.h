// Ties the why-not-running views to the main window: when a task is selected
// (a slice clicked, --select-slice), computes its breakdown, critical path and
// wakeup arrows off the GUI thread and shows them in the Why tab and over its
// timeline pane; keeps the Latency tab on the current runs and range; turns
// jumps from either tab into a view of that time and task. MainWindow owns one.
#pragma once

#include <QObject>
#include <memory>
#include <optional>

#include "app/gui/timeline_view.h"

class QAction;
class QMenu;
class QTabWidget;

namespace app::gui {

class LatencyView;
class RunSet;
class WhyView;
struct TimelineOverlay;

class WhyController : public QObject {
  Q_OBJECT
 public:
  /// Adds the Why and Latency tabs to `tabs` and the overlay toggles to `viewMenu`.
  WhyController(RunSet* runs, TimelineArea* area, TimelineViewState* view, QTabWidget* tabs, QMenu* viewMenu,
                QObject* parent = nullptr);
  WhyView* whyView() const { return m_whyView; }
  LatencyView* latencyView() const { return m_latencyView; }
  QAction* arrowsAction() const { return m_arrows; }
  QAction* pathAction() const { return m_path; }
  /// The task of a clicked slice (idle slices select nothing).
  void selectSlice(const SliceRef& slice);
  void selectTask(int runId, core::Utid utid);
  /// No breakdown or latency computation under way.
  bool isIdle() const;

 private:
  void recompute();
  /// The runs the Why tab offers to compare with: every run but the selected task's.
  void updateCompareChoices();
  void refreshLatency();
  void applyOverlay();
  void jumpTo(int runId, core::Utid utid, int64_t from, int64_t to);
  std::optional<core::analysis::TimeRange> rangeOf(int runId) const;

  RunSet* m_runs;
  TimelineArea* m_area;
  TimelineViewState* m_view;
  QTabWidget* m_tabs;
  WhyView* m_whyView;
  LatencyView* m_latencyView;
  QAction* m_arrows;
  QAction* m_path;
  std::optional<std::pair<int, core::Utid>> m_task;
  std::shared_ptr<const TimelineOverlay> m_overlay;
  int m_overlayRun = -1;
  uint64_t m_generation = 0;
  int m_pending = 0;
};

}  // namespace app::gui
