// The "Latency" tab: for one run over the current range, a scatter of every
// wakeup latency (or scheduling delay) over time — one dot per sample, log y,
// coloured by task, click to jump there — its histogram beside its CDF, and a
// per-task table sortable by p99 or max whose rows jump to the worst instance.
// Samples come from core::analysis::latencySamples(), computed off the GUI thread.
#pragma once

#include <QAbstractTableModel>
#include <QFutureWatcher>
#include <QWidget>
#include <memory>
#include <optional>

#include "app/gui/latency_scatter.h"
#include "core/analysis/latency.h"

class QChartView;
class QComboBox;
class QLabel;
class QSortFilterProxyModel;
class QTableView;

namespace app::gui {

struct LatencyData {
  int runId = -1;
  std::shared_ptr<const core::TraceModel> model;
  core::analysis::TimeRange range;
  std::vector<core::analysis::LatencySample> samples;
  std::vector<core::analysis::TaskLatency> tasks;
  /// What the charts show of one kind ([0] wakeup latency, [1] scheduling delay),
  /// prepared with the samples so that the GUI thread only paints.
  struct Plot {
    core::analysis::Distribution distribution;
    std::vector<LatencyScatter::Dot> dots;  ///< grey ones first, coloured tasks on top
    std::vector<LatencyScatter::LegendEntry> legend;
  };
  Plot plots[2];
};

/// Per-task latency rows: task, tid, samples, p50, p90, p99, max, worst at.
class TaskLatencyModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Task, Tid, Count, P50, P90, P99, Max, WorstAt, ColumnCount };
  using QAbstractTableModel::QAbstractTableModel;
  void setData(std::shared_ptr<const LatencyData> data, bool wakeups);
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;
  const core::analysis::TaskLatency* row(int r) const;
  /// The worst sample of a row, of the kind shown.
  const core::analysis::LatencySample& worst(int r) const;
  static constexpr int kSortRole = Qt::UserRole + 1;

 private:
  std::shared_ptr<const LatencyData> m_data;
  std::vector<int> m_rows;  // indices into m_data->tasks with samples of the kind shown
  bool m_wakeups = true;
};

class LatencyView : public QWidget {
  Q_OBJECT
 public:
  struct RunChoice {
    int runId = -1;
    QString title;
    std::shared_ptr<const core::TraceModel> model;
    core::analysis::TimeRange range;
  };
  explicit LatencyView(QWidget* parent = nullptr);
  ~LatencyView() override;
  /// The runs to choose from; the samples of the chosen one are computed when
  /// the view is shown (at once if it is): a hidden tab costs nothing, which
  /// on a 50M-event trace is ~40 bytes per sample and seconds at open.
  void setRuns(const std::vector<RunChoice>& runs);
  bool wakeupsShown() const;
  const LatencyData* data() const { return m_data.get(); }
  bool isComputing() const;
  QTableView* table() const { return m_table; }
  LatencyScatter* scatter() const { return m_scatter; }
  /// Jumps to the sample nearest a point of the scatter (x in ms from the run's start, y in us).
  void jumpToNearest(double xMs, double yUs);

 signals:
  void jumpRequested(int runId, core::Utid utid, int64_t from, int64_t to);
  void dataReady();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void recompute();
  void rebuildCharts();
  std::vector<RunChoice> m_runs;
  QComboBox* m_run;
  QComboBox* m_kind;
  QLabel* m_note;
  LatencyScatter* m_scatter;
  QChartView* m_histogram;
  QChartView* m_cdf;
  QTableView* m_table;
  TaskLatencyModel* m_model;
  QSortFilterProxyModel* m_proxy;
  std::shared_ptr<const LatencyData> m_data;
  QFutureWatcher<std::shared_ptr<const LatencyData>>* m_watcher;
  bool m_again = false;
  bool m_stale = false;  // the choice changed while hidden: computed on show
};

}  // namespace app::gui
