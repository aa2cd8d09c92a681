#include "app/gui/sweep_view.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <memory>

#include "app/gui/main_window.h"
#include "app/gui/sort_header_view.h"
#include "app/report/report_document.h"
#include "app/report/sweep_report.h"

namespace app::gui {

namespace {

using sweep::JobResult;
using sweep::JobState;

constexpr int kVerdictColumns = 2;  // the replay's own fidelity, the trace's baseline fidelity

QString q(const std::string& s) { return QString::fromStdString(s); }

int metricColumn(size_t i) { return SweepTableModel::FirstMetric + static_cast<int>(i); }
int fidelityColumn() { return metricColumn(sweep::kMetricCount); }

QVariant verdictForeground(const std::string& verdict) {
  if (verdict == "fail") return report::theme().worseText;
  if (verdict == "pass") return report::theme().betterText;
  return {};
}

bool sameRequest(const ReplayRequest& a, const ReplayRequest& b) {
  return a.model == b.model && a.params == b.params &&
         (a.topology ? a.topology->describe() : std::string()) == (b.topology ? b.topology->describe() : std::string());
}

}  // namespace

void SweepTableModel::setResults(sweep::SweepResults results) {
  beginResetModel();
  m_results = std::move(results);
  endResetModel();
}

int SweepTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_results.jobs.size());
}

int SweepTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : FirstMetric + static_cast<int>(sweep::kMetricCount) + kVerdictColumns;
}

QVariant SweepTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Trace: return tr("Trace");
    case Model: return tr("Model");
    case Parameters: return tr("Parameters");
    case State: return tr("State");
    default: break;
  }
  if (section == fidelityColumn()) return tr("Fidelity");
  if (section == fidelityColumn() + 1) return tr("Baseline fidelity");
  return QString::fromUtf8(sweep::metricInfos()[static_cast<size_t>(section - FirstMetric)].label);
}

QVariant SweepTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const JobResult& r = m_results.jobs[static_cast<size_t>(index.row())];
  const int c = index.column();
  const std::string baseline = m_results.referenceVerdict(r.job.trace);
  if (c >= FirstMetric && c < fidelityColumn()) {
    const auto metric = sweep::metricInfos()[static_cast<size_t>(c - FirstMetric)].metric;
    const auto v = r.value(metric);
    if (role == Qt::DisplayRole) return v ? report::formatMetric(metric, *v) : QStringLiteral("\u2013");
    if (role == kSortRole) return v ? QVariant(*v) : QVariant();
    if (role == Qt::TextAlignmentRole) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    return {};
  }
  if (role == Qt::ForegroundRole) {
    if (c == fidelityColumn()) return verdictForeground(r.verdict);
    if (c == fidelityColumn() + 1) return verdictForeground(baseline);
    if (c == State && r.state == JobState::Failed) return report::theme().worseText;
    return {};
  }
  if (role == Qt::ToolTipRole) {
    if (c == Trace) return q(r.job.trace);
    if (r.state == JobState::Failed) return q(r.error);
    return tr("Double-click: open this replay beside its recording");
  }
  if (role != Qt::DisplayRole && role != kSortRole) return {};
  switch (c) {
    case Trace: return q(sweep::traceLabel(r.job.trace));
    case Model:
      return r.resolvedModel.empty() || r.resolvedModel == r.job.model
                 ? q(r.job.model)
                 : QStringLiteral("%1 (%2)").arg(q(r.job.model), q(r.resolvedModel));
    case Parameters: return r.job.reference ? tr("reference") : q(r.job.settingsText());
    case State:
      return r.state == JobState::Done ? tr("done") : r.state == JobState::Failed ? tr("failed") : tr("not run");
    default: break;
  }
  const std::string& verdict = c == fidelityColumn() ? r.verdict : baseline;
  return verdict.empty() ? QStringLiteral("\u2013") : q(verdict);
}

SweepView::SweepView(MainWindow& window, QWidget* parent)
    : QWidget(parent),
      m_window(window),
      m_summary(new QLabel(this)),
      m_table(new QTableView(this)),
      m_model(new SweepTableModel(this)),
      m_proxy(new QSortFilterProxyModel(this)) {
  m_proxy->setSourceModel(m_model);
  m_proxy->setSortRole(SweepTableModel::kSortRole);
  SortHeaderView::install(m_table);
  m_table->setModel(m_proxy);
  m_table->setSortingEnabled(true);
  m_table->sortByColumn(-1, Qt::AscendingOrder);  // the manifest's order until a header is clicked
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->setAlternatingRowColors(true);
  m_table->verticalHeader()->hide();
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_summary->setWordWrap(true);
  m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(m_summary);
  layout->addWidget(m_table, 1);
  connect(m_table, &QTableView::activated, this,
          [this](const QModelIndex& index) { openJob(m_proxy->mapToSource(index).row()); });
}

core::Status SweepView::load(const QString& dir) {
  auto results = sweep::readResults(dir.toStdString());
  if (!results) return results.error();
  m_summary->setText(tr("<b>%1</b>: %2 jobs over %3 traces, %4 done, %5 failed, %6 not run. "
                        "Double-click a row to open that replay beside its recording.")
                         .arg(dir.toHtmlEscaped())
                         .arg(results->jobs.size())
                         .arg(results->traces.size())
                         .arg(results->done)
                         .arg(results->failed)
                         .arg(results->pending));
  m_model->setResults(std::move(*results));
  m_table->resizeColumnsToContents();
  return {};
}

void SweepView::openJob(int row) {
  const auto& jobs = m_model->results().jobs;
  if (row < 0 || row >= static_cast<int>(jobs.size())) return;
  const sweep::Job job = jobs[static_cast<size_t>(row)].job;
  ReplayRequest request;
  request.model = job.model;
  for (const sweep::Param& p : job.params) request.params.emplace_back(p.key, p.value);
  if (!job.topology.empty()) {
    auto topology = core::Topology::parseSpec(job.topology);
    if (!topology) {
      m_window.statusBar()->showMessage(q(topology.error().message()), 10000);
      return;
    }
    request.topology = *topology;
  }
  const QString trace = QFileInfo(q(job.trace)).absoluteFilePath();
  auto replayOn = [this, request](int recordingId) {
    for (int id : m_window.runs()->replaysOf(recordingId))
      if (const Run* r = m_window.runs()->run(id); r->replayRequest && sameRequest(*r->replayRequest, request)) {
        m_window.statusBar()->showMessage(tr("That replay is open already: %1").arg(r->title), 8000);
        return;
      }
    m_window.startReplay(recordingId, request);
  };
  for (int id : m_window.runs()->recordings())
    if (m_window.runs()->run(id)->path == trace) {
      replayOn(id);
      return;
    }
  // Replay once the recording is open; forget it if the recording cannot be opened.
  auto opened = std::make_shared<QMetaObject::Connection>();
  auto failed = std::make_shared<QMetaObject::Connection>();
  *opened = connect(&m_window, &MainWindow::runOpened, this, [this, opened, failed, trace, replayOn](int id) {
    const Run* r = m_window.runs()->run(id);
    if (!r || r->isReplay() || r->path != trace) return;
    disconnect(*opened);
    disconnect(*failed);
    replayOn(id);
  });
  *failed = connect(&m_window, &MainWindow::jobFailed, this, [opened, failed] {
    disconnect(*opened);
    disconnect(*failed);
  });
  m_window.openFile(trace);
}

core::Result<SweepView*> openSweepResults(MainWindow& window, const QString& dir) {
  auto* view = window.tabs()->findChild<SweepView*>();
  const bool created = !view;
  if (created) view = new SweepView(window);
  if (auto st = view->load(dir); !st) {
    if (created) delete view;
    return core::Error(st.message());
  }
  if (created) window.tabs()->addTab(view, QObject::tr("Sweep"));
  window.tabs()->setCurrentWidget(view);
  return view;
}

void addSweepResultsAction(MainWindow& window, QMenu* fileMenu) {
  auto* action = fileMenu->addAction(QObject::tr("Open &Sweep Results\u2026"));
  action->setToolTip(QObject::tr("A results folder of schedlab-cli sweep, as a table; a row opens that replay"));
  QObject::connect(action, &QAction::triggered, &window, [&window] {
    const QString dir = QFileDialog::getExistingDirectory(&window, QObject::tr("Open Sweep Results"));
    if (dir.isEmpty()) return;
    if (auto view = openSweepResults(window, dir); !view)
      QMessageBox::critical(&window, QObject::tr("Cannot open sweep results"), q(view.error().message()));
  });
}

}  // namespace app::gui
