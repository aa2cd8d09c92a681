// The timeline part of the main window: one shared view state (viewport,
// selection, cursor) and, under one ruler, a pane per run stacked and
// synchronised in time. Panes compute draw lists on a worker pool and only
// paint primitives (app/render); they never walk model rows in paintEvent.
#pragma once

#include <QFutureWatcher>
#include <QPointer>
#include <QScrollArea>
#include <QWidget>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "app/gui/run_set.h"
#include "app/render/timeline_layout.h"
#include "app/render/timeline_renderer.h"

class QLabel;
class QThreadPool;
class QVBoxLayout;

namespace app::gui {

struct TimelineOverlay;

inline constexpr int kGutterWidth = 190;
inline constexpr int kRowHeight = 22;
using render::kHeatmapHeight;

/// A slice the user clicked: a CPU run slice, a task state interval or a
/// task's user-space (atrace) slice.
struct SliceRef {
  int runId = -1;
  render::RowType type = render::RowType::Cpu;
  int cpu = -1;
  core::Utid utid;
  uint32_t row = 0;        ///< cpuSlices[cpu] row, threadStates row, or userSlices row
  bool userSlice = false;  ///< a task row's user-space slice: row is a userSlices row
  bool operator==(const SliceRef&) const = default;
};
/// When a slice begins and ends (absolute ns).
std::pair<int64_t, int64_t> sliceSpan(const core::TraceModel& model, const SliceRef& slice);

/// What every pane shows: the viewport in relative time, the selected range and
/// the time under the mouse. Panes, the ruler and the status bar observe it.
class TimelineViewState : public QObject {
  Q_OBJECT
 public:
  using Range = std::pair<int64_t, int64_t>;
  explicit TimelineViewState(QObject* parent = nullptr);

  const render::Viewport& viewport() const { return m_view; }
  void setViewport(render::Viewport view);
  void setWidth(int width);
  /// Panning and zooming keep some of [-10%, 110%] of this span on screen.
  void setSpan(int64_t span) { setExtent(0, span); }
  /// As setSpan, for runs aligned at markers: relative time runs from `begin` (<= 0) to `end`.
  void setExtent(int64_t begin, int64_t end);
  int64_t span() const { return m_end; }
  int64_t begin() const { return m_begin; }
  void zoomAt(double x, double factor);
  void zoomCentered(double factor) { zoomAt(m_view.width / 2.0, factor); }
  void panPixels(double dx);
  void showRange(int64_t from, int64_t to, double margin = 0.0);
  void fitAll() { showRange(m_begin, std::max<int64_t>(m_end, m_begin + 1), 0.01); }

  const std::optional<Range>& selection() const { return m_selection; }
  /// While dragging; commitSelection() when the drag ends (statistics follow).
  void setSelection(std::optional<Range> range);
  void commitSelection();
  std::optional<int64_t> cursor() const { return m_cursor; }
  void setCursor(std::optional<int64_t> t);

 signals:
  void viewChanged();
  void selectionChanged();
  void selectionCommitted();
  void cursorChanged();

 private:
  render::Viewport clamp(render::Viewport v) const;
  render::Viewport m_view{0, 1e6, 800};
  int64_t m_begin = 0;
  int64_t m_end = 1;
  std::optional<Range> m_selection;
  std::optional<int64_t> m_cursor;
};

/// The time ruler above the panes; dragging on it selects a range.
class TimeRuler : public QWidget {
  Q_OBJECT
 public:
  explicit TimeRuler(TimelineViewState* view, QWidget* parent = nullptr);
  QSize sizeHint() const override { return {400, 28}; }

 protected:
  void paintEvent(QPaintEvent*) override;
  void mousePressEvent(QMouseEvent*) override;
  void mouseMoveEvent(QMouseEvent*) override;
  void mouseReleaseEvent(QMouseEvent*) override;

 private:
  TimelineViewState* m_view;
  std::optional<int64_t> m_dragFrom;
};

class TimelinePane : public QWidget {
  Q_OBJECT
 public:
  TimelinePane(const Run& run, TimelineViewState* view, QThreadPool* pool, QWidget* parent = nullptr);
  ~TimelinePane() override;

  int runId() const { return m_runId; }
  const Run& run() const { return m_run; }
  /// The run's origin or marker changed: redraw with the new render data.
  void updateRun(const Run& run);
  const std::vector<render::TimelineRow>& rows() const { return m_rows; }
  bool hasTaskRow(core::Utid utid) const;
  void addTaskRow(core::Utid utid);
  void removeTaskRow(core::Utid utid);
  /// Which frequency / idle / counter strips the pane shows (View menu).
  void setStrips(const render::StripOptions& strips);
  void setHighlight(std::shared_ptr<const render::HighlightSet> highlight);
  void setSelectedSlice(std::optional<SliceRef> slice);
  /// Wakeup arrows and the critical path of the selected task (why_overlay.h); null for none.
  void setOverlay(std::shared_ptr<const TimelineOverlay> overlay);
  const TimelineOverlay* overlay() const { return m_overlay.get(); }
  void setCollapsed(bool collapsed);
  bool isCollapsed() const { return m_collapsed; }
  /// The CPU and process groups (timeline_layout.h); changing them relays the rows out.
  const render::TimelineLayout& layout() const { return m_layout; }
  void toggleGroup(int group);
  void setAllGroupsCollapsed(bool collapsed);
  void setCpuGrouping(std::vector<render::GroupLevel> levels);
  void setRowHeight(int rowHeight);
  int rowHeight() const { return m_rowHeight; }
  /// The overview heat map above the rows (CPU x whole trace); nullopt hides it.
  void setHeatmap(std::optional<render::HeatMetric> metric);
  std::optional<render::HeatMetric> heatmap() const { return m_heatMetric; }
  bool heatmapReady() const { return !m_heatMetric || (!m_heatImage.isNull() && !m_heatWatcher->isRunning()); }
  /// The heat map's rectangle in the pane (empty when hidden).
  QRect heatmapRect() const;
  /// What a click at `pos` on the heat map does: centre the view on its time
  /// and bring its CPU's row into view (`rowScrollRequested`).
  void navigateFromHeatmap(const QPoint& pos);
  /// The top of row `row` in the pane's coordinates.
  int rowTop(int row) const;
  /// True once the draw list for the current viewport is painted-ready.
  bool drawListReady() const;
  /// Stats of the last draw list (benchmarks, tests).
  size_t lastDrawItems() const { return m_list.drawItems(); }
  /// Text for a tooltip at a point (also used by tests).
  QString toolTipAt(const QPoint& pos) const;
  /// The slice under a point, if any.
  std::optional<SliceRef> sliceAt(const QPoint& pos) const;
  void zoomToSlice(const SliceRef& slice);

 signals:
  void sliceClicked(const app::gui::SliceRef& slice);
  void drawListUpdated();
  void taskRowRequested(int runId, core::Utid utid);
  void highlightRequested(const QString& text);
  void verticalScrollRequested(int delta);
  void closeRequested(int runId);
  void markerRequested(int runId, int64_t absTs);
  void hovered(int runId);
  /// Scroll so that pane y `y` is visible (the heat map navigated to a CPU).
  void rowScrollRequested(int y);

 protected:
  void paintEvent(QPaintEvent*) override;
  void resizeEvent(QResizeEvent*) override;
  void mousePressEvent(QMouseEvent*) override;
  void mouseMoveEvent(QMouseEvent*) override;
  void mouseReleaseEvent(QMouseEvent*) override;
  void mouseDoubleClickEvent(QMouseEvent*) override;
  void wheelEvent(QWheelEvent*) override;
  void leaveEvent(QEvent*) override;
  void contextMenuEvent(QContextMenuEvent*) override;
  bool event(QEvent*) override;

 private:
  int headerHeight() const;
  int rowAtY(int y) const;
  QRect timelineRect() const;
  void relayoutRows();
  void ensureHeatmap();
  void updateHeight();
  void ensureDrawList();
  void onDrawListDone();
  int64_t absTimeAtX(double x) const;
  std::optional<uint32_t> userSliceAt(const QPoint& pos) const;
  QString counterToolTip(const render::TimelineRow& row, int64_t absTs) const;
  std::optional<uint32_t> trackRowAt(int row, double x, const core::TimelineTrack** track,
                                     std::shared_ptr<const core::TimelineTrack>* hold) const;

  Run m_run;
  int m_runId;
  TimelineViewState* m_view;
  QThreadPool* m_pool;
  std::vector<render::TimelineRow> m_rows;
  std::shared_ptr<const render::HighlightSet> m_highlight;
  std::optional<SliceRef> m_selected;
  std::shared_ptr<const TimelineOverlay> m_overlay;
  bool m_collapsed = false;
  int m_rowHeight = kRowHeight;
  render::StripOptions m_strips;
  render::TimelineLayout m_layout;
  std::optional<render::HeatMetric> m_heatMetric;
  QImage m_heatImage;
  QSize m_heatSize;  // what m_heatImage was computed for
  std::optional<QPoint> m_heatPress;
  QString m_subtitle;  // computed once: painting never walks model tables

  render::PaneDrawList m_list;
  bool m_hasList = false;
  uint64_t m_version = 1;      // bumped when rows or highlight change
  uint64_t m_listVersion = 0;  // version the list was computed for
  QFutureWatcher<render::PaneDrawList>* m_watcher;
  QFutureWatcher<QImage>* m_heatWatcher;  // the heat map's worker
  uint64_t m_jobVersion = 0;
  bool m_pending = false;

  enum class Drag { None, Pan, Select };
  Drag m_drag = Drag::None;
  QPoint m_pressPos;
  bool m_moved = false;
  int64_t m_pressStart = 0;
  int64_t m_selectFrom = 0;
};

/// The ruler and the stacked panes in a vertical scroll area; creates and
/// removes panes as runs come and go.
class TimelineArea : public QWidget {
  Q_OBJECT
 public:
  TimelineArea(RunSet* runs, TimelineViewState* view, QWidget* parent = nullptr);
  ~TimelineArea() override;

  TimelinePane* pane(int runId) const;
  std::vector<TimelinePane*> panes() const;
  bool allDrawListsReady() const;
  /// Highlights tasks matching `text` in every pane (computed off the GUI thread).
  void setSearch(const QString& text);
  const QString& search() const { return m_search; }
  void setSelectedSlice(std::optional<SliceRef> slice);
  /// Shows `overlay` over run `runId`'s pane and clears the others'.
  void setOverlay(int runId, std::shared_ptr<const TimelineOverlay> overlay);
  void showTaskRow(int runId, core::Utid utid);
  /// The strips every pane shows, now and when runs are added.
  void setStrips(const render::StripOptions& strips);
  QThreadPool* pool() const { return m_pool; }
  /// The run whose pane the mouse was last over (-1: none yet).
  int hoveredRun() const { return m_hoveredRun; }
  /// Recomputes the view's extent from the runs (after an alignment change).
  void updateExtent();

 signals:
  void sliceClicked(const app::gui::SliceRef& slice);
  void drawListsUpdated();
  void searchApplied();
  void closeRunRequested(int runId);
  void markerRequested(int runId, int64_t absTs);

 protected:
  void resizeEvent(QResizeEvent*) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void onRunAdded(int id);
  void onRunRemoved(int id);
  void relayout();
  void syncWidth();

  RunSet* m_runs;
  TimelineViewState* m_view;
  QThreadPool* m_pool;
  TimeRuler* m_ruler;
  render::StripOptions m_strips;
  QScrollArea* m_scroll;
  QWidget* m_container;
  QVBoxLayout* m_layout;
  QLabel* m_placeholder;
  std::map<int, TimelinePane*> m_panes;
  QString m_search;
  uint64_t m_searchGeneration = 0;
  int m_searchPending = 0;
  int m_hoveredRun = -1;
};

}  // namespace app::gui

Q_DECLARE_METATYPE(app::gui::SliceRef)
