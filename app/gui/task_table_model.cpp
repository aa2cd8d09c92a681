#include "app/gui/task_table_model.h"

#include <QColor>
#include <algorithm>
#include <map>

#include "app/render/colors.h"
#include "app/render/time_axis.h"

namespace app::gui {

TaskTableModel::TaskTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void TaskTableModel::setRuns(std::vector<RunColumns> runs) {
  beginResetModel();
  m_runs = std::move(runs);
  m_rows.clear();
  std::map<std::pair<QString, int32_t>, size_t> byKey;
  for (size_t r = 0; r < m_runs.size(); ++r) {
    if (!m_runs[r].stats) continue;
    const auto& tasks = m_runs[r].stats->tasks;
    for (size_t i = 0; i < tasks.size(); ++i) {
      const auto key = std::make_pair(QString::fromStdString(tasks[i].comm), tasks[i].tid);
      auto it = byKey.find(key);
      if (it == byKey.end()) {
        Row row;
        row.comm = key.first;
        row.tid = key.second;
        row.tgid = tasks[i].tgid;
        row.statIndex.assign(m_runs.size(), -1);
        it = byKey.emplace(key, m_rows.size()).first;
        m_rows.push_back(std::move(row));
      }
      Row& row = m_rows[it->second];
      // A tid reused by a task with the same comm: keep the busier one.
      const int prev = row.statIndex[r];
      if (prev < 0 || tasks[static_cast<size_t>(prev)].runtimeNs < tasks[i].runtimeNs) row.statIndex[r] = static_cast<int>(i);
    }
  }
  endResetModel();
}

const core::analysis::TaskStats* TaskTableModel::taskIn(int row, int runIndex) const {
  if (row < 0 || row >= rowCount() || runIndex < 0 || runIndex >= runCount()) return nullptr;
  const int i = m_rows[static_cast<size_t>(row)].statIndex[static_cast<size_t>(runIndex)];
  if (i < 0) return nullptr;
  return &m_runs[static_cast<size_t>(runIndex)].stats->tasks[static_cast<size_t>(i)];
}

bool TaskTableModel::anyTgidKnown() const {
  return std::any_of(m_rows.begin(), m_rows.end(), [](const Row& r) { return r.tgid >= 0; });
}

int TaskTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int TaskTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : FixedColumns + PerRunColumns * runCount();
}

QString TaskTableModel::columnName(RunColumn c) {
  switch (c) {
    case Runtime: return tr("Runtime");
    case CpuShare: return tr("CPU %");
    case Wait: return tr("Wait");
    case LatencyP50: return tr("Wakeup p50");
    case LatencyP99: return tr("Wakeup p99");
    case Switches: return tr("Switches vol/inv");
    case Migrations: return tr("Migr.");
  }
  return {};
}

QVariant TaskTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount()) return {};
  const Row& row = m_rows[static_cast<size_t>(index.row())];
  const int col = index.column();
  if (role == TidRole) return row.tid;
  if (role == CommRole) return row.comm;
  if (col < FixedColumns) {
    if (role == Qt::DisplayRole || role == SortRole) {
      if (col == TaskColumn) return row.comm;
      if (col == TidColumn) return row.tid;
      return row.tgid >= 0 ? QVariant(row.tgid) : (role == SortRole ? QVariant(-1) : QVariant(QString()));
    }
    if (role == Qt::DecorationRole && col == TaskColumn) return render::taskColor(row.comm.toStdString(), row.tid);
    if (role == Qt::TextAlignmentRole && col != TaskColumn) return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
  }
  const int run = (col - FixedColumns) / PerRunColumns;
  const auto which = static_cast<RunColumn>((col - FixedColumns) % PerRunColumns);
  const core::analysis::TaskStats* t = taskIn(index.row(), run);
  if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ForegroundRole && !t) return QColor(0x99, 0x99, 0x99);
  if (!t) {
    if (role == Qt::DisplayRole) return QStringLiteral("\u2014");
    if (role == SortRole) return -1.0;
    return {};
  }
  const bool sort = role == SortRole;
  if (role != Qt::DisplayRole && !sort) return {};
  switch (which) {
    case Runtime: return sort ? QVariant(static_cast<double>(t->runtimeNs)) : QVariant(render::formatDuration(t->runtimeNs));
    case CpuShare: return sort ? QVariant(t->cpuShare) : QVariant(QString::number(t->cpuShare * 100.0, 'f', 1));
    case Wait: return sort ? QVariant(static_cast<double>(t->waitNs)) : QVariant(render::formatDuration(t->waitNs));
    case LatencyP50:
      if (t->wakeupLatency.count == 0) return sort ? QVariant(-1.0) : QVariant(QStringLiteral("\u2014"));
      return sort ? QVariant(static_cast<double>(t->wakeupLatency.p50)) : QVariant(render::formatDuration(t->wakeupLatency.p50));
    case LatencyP99:
      if (t->wakeupLatency.count == 0) return sort ? QVariant(-1.0) : QVariant(QStringLiteral("\u2014"));
      return sort ? QVariant(static_cast<double>(t->wakeupLatency.p99)) : QVariant(render::formatDuration(t->wakeupLatency.p99));
    case Switches:
      return sort ? QVariant(static_cast<double>(t->switchesVoluntary + t->switchesInvoluntary))
                  : QVariant(QStringLiteral("%L1 / %L2").arg(t->switchesVoluntary).arg(t->switchesInvoluntary));
    case Migrations: return sort ? QVariant(static_cast<double>(t->migrations)) : QVariant(QString::number(t->migrations));
  }
  return {};
}

QVariant TaskTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= columnCount()) return {};
  if (section < FixedColumns) {
    if (role != Qt::DisplayRole) return {};
    if (section == TaskColumn) return tr("Task");
    if (section == TidColumn) return tr("TID");
    return tr("TGID");
  }
  const int run = (section - FixedColumns) / PerRunColumns;
  const auto which = static_cast<RunColumn>((section - FixedColumns) % PerRunColumns);
  const QString title = m_runs[static_cast<size_t>(run)].title;
  if (role == Qt::DisplayRole) {
    // "hackbench-proc txt" -> two lines, so the tag that tells runs of one folder apart stays visible.
    QString shortTitle = title.size() > 30 ? title.left(28) + QStringLiteral("\u2026") : title;
    shortTitle.replace(QLatin1Char(' '), QLatin1Char('\n'));
    return shortTitle + QLatin1Char('\n') + columnName(which);
  }
  if (role == Qt::ToolTipRole) return title + QStringLiteral(": ") + columnName(which);
  if (role == Qt::ForegroundRole) return render::runColor(run);
  return {};
}

TaskFilterProxy::TaskFilterProxy(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(TaskTableModel::SortRole);
  setDynamicSortFilter(true);
}

void TaskFilterProxy::setFilterText(const QString& text) {
  m_text = text.trimmed();
  invalidateFilter();
}

bool TaskFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
  if (m_text.isEmpty()) return true;
  const QModelIndex idx = sourceModel()->index(sourceRow, TaskTableModel::TaskColumn, sourceParent);
  if (idx.data(TaskTableModel::CommRole).toString().contains(m_text, Qt::CaseInsensitive)) return true;
  return QString::number(idx.data(TaskTableModel::TidRole).toInt()).startsWith(m_text);
}

}  // namespace app::gui
