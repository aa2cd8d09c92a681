// The Diff tab's item models over core::analysis::diffRuns(): one row per task
// group (comm within process, as the core diff matches them) with A, B, change
// and relative change of the main metrics, and the run-level summary; plus the
// rule that marks a change significant. Used by DiffView; tested with
// QAbstractItemModelTester.
#pragma once

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <memory>
#include <vector>

#include "core/analysis/diff.h"

namespace app::gui {

// The significance rule is core's (core/analysis/diff.h), shared with the reports.
using core::analysis::isSignificant;
using core::analysis::ksSignificant;
using core::analysis::MetricKind;

/// The rules above, as rich text for tooltips and the help button.
QString significanceHelp();

/// Per task group: process, comm, how many tasks on each side, then per metric
/// A, B, delta and relative delta, and the KS distance of the wakeup latencies.
class DiffTaskModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  static constexpr int SortRole = Qt::UserRole + 1;         ///< numbers for numeric columns
  static constexpr int SignificantRole = Qt::UserRole + 2;  ///< bool: this cell (or, on fixed columns, this row) changed significantly
  static constexpr int RowSignificantRole = Qt::UserRole + 3;

  enum FixedColumn { ProcessColumn, CommColumn, TasksColumn };
  static constexpr int FixedColumns = 3;
  enum Part { ValueA, ValueB, Delta, Relative };
  static constexpr int PartsPerMetric = 4;

  explicit DiffTaskModel(QObject* parent = nullptr);
  void setDiff(std::shared_ptr<const core::analysis::RunDiff> diff);
  const core::analysis::RunDiff* diff() const { return m_diff.get(); }

  static int metricCount();
  /// Column of a metric's part; the KS column comes after every metric.
  static int column(int metric, Part part) { return FixedColumns + metric * PartsPerMetric + part; }
  static int ksColumn() { return FixedColumns + metricCount() * PartsPerMetric; }
  /// Which metric and part a column shows (metric -1 for fixed and KS columns).
  static std::pair<int, Part> metricAt(int column);
  static QString metricName(int metric);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  bool rowSignificant(int row) const;
  int significantRows() const;

 private:
  bool cellSignificant(int row, int metric) const;
  bool ksCellSignificant(int row) const;
  std::shared_ptr<const core::analysis::RunDiff> m_diff;
  int64_t m_rangeNs = 0;
  std::vector<char> m_rowSignificant;
};

/// The run-level summary: one row per metric (totals, voluntary and
/// involuntary switches, involuntary fraction, migrations, latency, fairness,
/// forced idle, per-CPU utilisation, KS distances), columns A, B, delta, relative.
class DiffSummaryModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { MetricColumn, AColumn, BColumn, DeltaColumn, RelativeColumn, ColumnCount };
  explicit DiffSummaryModel(QObject* parent = nullptr);
  void setDiff(std::shared_ptr<const core::analysis::RunDiff> diff);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    QString label;
    MetricKind kind = MetricKind::Count;
    double a = 0, b = 0;
    bool ks = false;  ///< a KS distance: only the delta column, holding D
    uint64_t samplesA = 0, samplesB = 0;
    bool significant = false;
  };
  std::vector<Row> m_rows;
};

/// "Only significant" and a comm/process substring filter; sorts by SortRole.
class DiffFilterProxy : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  explicit DiffFilterProxy(QObject* parent = nullptr);
  void setOnlySignificant(bool on);
  void setFilterText(const QString& text);

 protected:
  bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

 private:
  bool m_onlySignificant = false;
  QString m_text;
};

/// "1.2 ms", "34.5 %", "1,234", "0.912" for a value of that kind; a difference
/// of two values is signed ("+1.2 ms"), and shares differ in points ("+3.1 pp").
QString formatMetric(MetricKind kind, double value, bool difference = false);

}  // namespace app::gui
