// The Tasks tab: one row per task (matched across runs by comm and tid), a
// column group per run (runtime, CPU share, wait, wakeup latency p50/p99,
// switches, migrations) over the current range; plus the filter proxy for the
// search box. Tested with QAbstractItemModelTester.
#pragma once

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <memory>
#include <vector>

#include "core/analysis/stats.h"

namespace app::gui {

class TaskTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  static constexpr int SortRole = Qt::UserRole + 1;  ///< numbers for numeric columns
  static constexpr int TidRole = Qt::UserRole + 2;
  static constexpr int CommRole = Qt::UserRole + 3;

  enum FixedColumn { TaskColumn, TidColumn, TgidColumn };
  static constexpr int FixedColumns = 3;
  enum RunColumn { Runtime, CpuShare, Wait, LatencyP50, LatencyP99, Switches, Migrations };
  static constexpr int PerRunColumns = 7;

  struct RunColumns {
    int runId = -1;
    QString title;
    std::shared_ptr<const core::analysis::RunStats> stats;
  };

  explicit TaskTableModel(QObject* parent = nullptr);

  void setRuns(std::vector<RunColumns> runs);
  int runCount() const { return static_cast<int>(m_runs.size()); }
  const RunColumns& runAt(int i) const { return m_runs[static_cast<size_t>(i)]; }
  /// The task's stats in run i, or null when it did not exist there.
  const core::analysis::TaskStats* taskIn(int row, int runIndex) const;
  /// Whether any task of any run has a known tgid (many traces record none: the TGID column is then hidden).
  bool anyTgidKnown() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  static QString columnName(RunColumn c);

 private:
  struct Row {
    QString comm;
    int32_t tid = 0;
    int32_t tgid = -1;
    std::vector<int> statIndex;  // per run: index into stats->tasks, -1 when absent
  };
  std::vector<RunColumns> m_runs;
  std::vector<Row> m_rows;
};

/// Filters task rows by comm substring (case-insensitive) or tid prefix; sorts by SortRole.
class TaskFilterProxy : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  explicit TaskFilterProxy(QObject* parent = nullptr);
  void setFilterText(const QString& text);

 protected:
  bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

 private:
  QString m_text;
};

}  // namespace app::gui
