#include "app/gui/runs_model.h"

#include <QIcon>
#include <QStringList>

#include "app/render/colors.h"
#include "app/render/time_axis.h"
#include "core/data_loss_text.h"

namespace app::gui {

namespace {
// Top-level rows carry internalId 0; children carry their parent's row + 1.
constexpr quintptr kTopLevel = 0;
}  // namespace

RunsModel::RunsModel(RunSet* runs, QObject* parent) : QAbstractItemModel(parent), m_runs(runs) {
  rebuild();
  auto reset = [this] {
    beginResetModel();
    rebuild();
    endResetModel();
  };
  connect(runs, &RunSet::runAdded, this, reset);
  connect(runs, &RunSet::runRemoved, this, reset);
}

void RunsModel::rebuild() {
  m_top.clear();
  m_children.clear();
  for (int id : m_runs->ids()) {
    const Run* r = m_runs->run(id);
    if (r->isReplay() && m_runs->run(r->parentId)) {
      for (size_t i = 0; i < m_top.size(); ++i)
        if (m_top[i] == r->parentId) m_children[i].push_back(id);
    } else {
      m_top.push_back(id);
      m_children.emplace_back();
    }
  }
}

QModelIndex RunsModel::index(int row, int column, const QModelIndex& parent) const {
  if (row < 0 || column < 0 || column >= ColumnCount) return {};
  if (!parent.isValid()) {
    if (row >= static_cast<int>(m_top.size())) return {};
    return createIndex(row, column, kTopLevel);
  }
  if (parent.internalId() != kTopLevel || parent.column() != 0) return {};
  const auto p = static_cast<size_t>(parent.row());
  if (p >= m_children.size() || row >= static_cast<int>(m_children[p].size())) return {};
  return createIndex(row, column, static_cast<quintptr>(p + 1));
}

QModelIndex RunsModel::parent(const QModelIndex& child) const {
  if (!child.isValid() || child.internalId() == kTopLevel) return {};
  return createIndex(static_cast<int>(child.internalId() - 1), 0, kTopLevel);
}

int RunsModel::rowCount(const QModelIndex& parent) const {
  if (!parent.isValid()) return static_cast<int>(m_top.size());
  if (parent.internalId() != kTopLevel || parent.column() != 0) return 0;
  const auto p = static_cast<size_t>(parent.row());
  return p < m_children.size() ? static_cast<int>(m_children[p].size()) : 0;
}

int RunsModel::columnCount(const QModelIndex&) const { return ColumnCount; }

int RunsModel::runIdAt(const QModelIndex& index) const {
  if (!index.isValid()) return -1;
  if (index.internalId() == kTopLevel)
    return index.row() < static_cast<int>(m_top.size()) ? m_top[static_cast<size_t>(index.row())] : -1;
  const auto p = static_cast<size_t>(index.internalId() - 1);
  if (p >= m_children.size() || index.row() >= static_cast<int>(m_children[p].size())) return -1;
  return m_children[p][static_cast<size_t>(index.row())];
}

QModelIndex RunsModel::indexOfRun(int runId) const {
  for (size_t i = 0; i < m_top.size(); ++i) {
    if (m_top[i] == runId) return index(static_cast<int>(i), 0);
    for (size_t j = 0; j < m_children[i].size(); ++j)
      if (m_children[i][j] == runId) return index(static_cast<int>(j), 0, index(static_cast<int>(i), 0));
  }
  return {};
}

QVariant RunsModel::data(const QModelIndex& index, int role) const {
  const Run* r = m_runs->run(runIdAt(index));
  if (!r) return {};
  switch (role) {
    case Qt::DisplayRole:
      if (index.column() == NameColumn) return r->title;
      return runDetails(*r);
    case Qt::ToolTipRole:
      // The details column is narrow and elided: its tooltip opens with its whole text.
      if (index.column() == DetailsColumn)
        return QStringLiteral("%1<hr>%2").arg(runDetails(*r).toHtmlEscaped(), runToolTip(*r));
      return runToolTip(*r);
    case Qt::DecorationRole:
      if (index.column() == NameColumn)
        return QIcon::fromTheme(r->isReplay() ? QStringLiteral("media-playlist-repeat")
                                              : QStringLiteral("document-open"));
      return {};
    case Qt::ForegroundRole:
      if (!r->warning.isEmpty() && index.column() == NameColumn) return QColor(0x9a, 0x5b, 0x00);
      return {};
    case RunIdRole: return r->id;
    default: return {};
  }
}

QVariant RunsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  if (section == NameColumn) return tr("Run");
  if (section == DetailsColumn) return tr("Details");
  return {};
}

QString runDetails(const Run& run) {
  if (!run.model) return {};
  const core::TraceModel& m = *run.model;
  if (m.replay) {
    QStringList params;
    for (const auto& p : m.replay->params) params << QString::fromStdString(p.key + "=" + p.value);
    return QString::fromStdString(m.replay->model) + (params.isEmpty() ? QString() : QStringLiteral(": ") + params.join(QStringLiteral(", ")));
  }
  return QString::fromStdString(m.format) + QStringLiteral(" \u00b7 ") + QString::fromStdString(m.topology.describe());
}

QString runToolTip(const Run& run) {
  if (!run.model) return run.title;
  const core::TraceModel& m = *run.model;
  QStringList lines;
  lines << QStringLiteral("<b>%1</b>").arg(run.title.toHtmlEscaped());
  if (!run.path.isEmpty()) lines << run.path.toHtmlEscaped();
  if (m.replay) {
    lines << QStringLiteral("replay with model <b>%1</b>").arg(QString::fromStdString(m.replay->model).toHtmlEscaped());
    for (const auto& p : m.replay->params) {
      const QString origin = p.origin == "default" ? QString()
                                                   : QStringLiteral(" (%1)").arg(QString::fromStdString(p.origin).toHtmlEscaped());
      lines << QStringLiteral("&nbsp;&nbsp;%1 = %2%3 <i>%4</i>")
                   .arg(QString::fromStdString(p.key).toHtmlEscaped(), QString::fromStdString(p.value).toHtmlEscaped(),
                        origin, QString::fromStdString(p.doc).toHtmlEscaped());
    }
  } else {
    lines << QStringLiteral("format: %1").arg(QString::fromStdString(m.format).toHtmlEscaped());
  }
  lines << QStringLiteral("topology: %1").arg(QString::fromStdString(m.topology.describe()).toHtmlEscaped());
  lines << QStringLiteral("span: %1, %L2 events, %L3 slices, %L4 tasks")
               .arg(render::formatDuration(m.span()))
               .arg(m.eventCount)
               .arg(m.sliceCount())
               .arg(m.taskCount());
  if (m.dataLoss.size() > 0)
    lines << QStringLiteral("lost events: %1").arg(QString::fromStdString(core::describeLostEvents(m)).toHtmlEscaped());
  if (!run.warning.isEmpty()) lines << QStringLiteral("<span style='color:#9a5b00'>partial: %1</span>").arg(run.warning.toHtmlEscaped());
  return lines.join(QStringLiteral("<br>"));
}

}  // namespace app::gui
