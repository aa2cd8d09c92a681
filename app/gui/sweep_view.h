// The Sweep tab: a sweep's results folder (app/sweep) as a sortable table, one
// row per job with its metrics and fidelity verdicts; a double-click opens
// that replay beside its recording (the recording is opened if need be, and
// replayed with the job's model and parameters: replays are deterministic, so
// it is the job's replay). Added by File -> Open Sweep Results... and by
// `schedlab --sweep RESULTS/`.
#pragma once

#include <QAbstractTableModel>
#include <QWidget>

#include "app/sweep/sweep_results.h"
#include "core/result.h"

class QLabel;
class QMenu;
class QSortFilterProxyModel;
class QTableView;

namespace app::gui {

class MainWindow;

class SweepTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Trace, Model, Parameters, State, FirstMetric };
  /// Raw value for sorting: numbers as numbers, missing values last.
  static constexpr int kSortRole = Qt::UserRole + 1;

  explicit SweepTableModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
  void setResults(sweep::SweepResults results);
  const sweep::SweepResults& results() const { return m_results; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  sweep::SweepResults m_results;
};

class SweepView : public QWidget {
  Q_OBJECT
 public:
  explicit SweepView(MainWindow& window, QWidget* parent = nullptr);
  /// Reads RESULTS/ (errors: not a sweep's results).
  core::Status load(const QString& dir);
  const SweepTableModel* model() const { return m_model; }
  /// Opens job `row` (in the manifest's order) beside its recording.
  void openJob(int row);

 private:
  MainWindow& m_window;
  QLabel* m_summary;
  QTableView* m_table;
  SweepTableModel* m_model;
  QSortFilterProxyModel* m_proxy;
};

/// The window's Sweep tab (made on first use), showing RESULTS/.
core::Result<SweepView*> openSweepResults(MainWindow& window, const QString& dir);
/// File -> Open Sweep Results...
void addSweepResultsAction(MainWindow& window, QMenu* fileMenu);

}  // namespace app::gui
