// The runs list: recordings at the top level, their replays as children, with
// format/topology or model/parameters beside the name. Used by MainWindow's
// runs dock; tested with QAbstractItemModelTester.
#pragma once

#include <QAbstractItemModel>

#include "app/gui/run_set.h"

namespace app::gui {

class RunsModel : public QAbstractItemModel {
  Q_OBJECT
 public:
  enum Column { NameColumn, DetailsColumn, ColumnCount };
  static constexpr int RunIdRole = Qt::UserRole + 1;

  explicit RunsModel(RunSet* runs, QObject* parent = nullptr);

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  QModelIndex indexOfRun(int runId) const;
  int runIdAt(const QModelIndex& index) const;

 private:
  void rebuild();
  RunSet* m_runs;
  std::vector<int> m_top;                    // recording ids (and orphaned replays)
  std::vector<std::vector<int>> m_children;  // per top row
};

/// "trace.dat v7 · 2 cores x 2 threads (perf.data header)" or "cfs: hz=250, smt_factor=0.6".
QString runDetails(const Run& run);
/// Multi-line description for tooltips: file, format, span, events, topology, parameters.
QString runToolTip(const Run& run);

}  // namespace app::gui
