#include "app/gui/diff_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QScrollBar>
#include <QSplitter>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

#include "app/gui/diff_table_model.h"
#include "app/gui/sort_header_view.h"
#include "app/render/colors.h"

namespace app::gui {

namespace {
QIcon swatch(const QColor& c) {
  QPixmap pm(12, 12);
  pm.fill(c);
  return QIcon(pm);
}
}  // namespace

DiffView::DiffView(QWidget* parent) : QWidget(parent) {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(4, 4, 4, 0);
  outer->setSpacing(4);

  auto* bar = new QHBoxLayout;
  bar->setSpacing(6);
  m_a = new QComboBox(this);
  m_b = new QComboBox(this);
  for (QComboBox* c : {m_a, m_b}) {
    c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    c->setMinimumContentsLength(22);
  }
  m_a->setToolTip(tr("Run A: the reference"));
  m_b->setToolTip(tr("Run B: compared against A (changes are B \u2212 A)"));
  auto* swap = new QToolButton(this);
  swap->setText(QStringLiteral("\u21c4"));
  swap->setToolTip(tr("Swap A and B"));
  connect(swap, &QToolButton::clicked, this, [this] { setPair(runB(), runA()); });
  m_onlySignificant = new QCheckBox(tr("Only significant"), this);
  m_onlySignificant->setToolTip(significanceHelp());
  m_showValues = new QCheckBox(tr("A and B values"), this);
  m_showValues->setToolTip(tr("Show each metric's values in A and B beside its change (runtime always shows them)"));
  m_filter = new QLineEdit(this);
  m_filter->setPlaceholderText(tr("Filter tasks\u2026"));
  m_filter->setClearButtonEnabled(true);
  m_filter->setMaximumWidth(200);
  auto* help = new QToolButton(this);
  help->setText(QStringLiteral("?"));
  help->setToolTip(significanceHelp());
  connect(help, &QToolButton::clicked, this,
          [this] { QMessageBox::information(this, tr("Diff: what is significant"), significanceHelp()); });
  bar->addWidget(new QLabel(tr("A:"), this));
  bar->addWidget(m_a, 1);
  bar->addWidget(swap);
  bar->addWidget(new QLabel(tr("B:"), this));
  bar->addWidget(m_b, 1);
  bar->addSpacing(8);
  bar->addWidget(m_onlySignificant);
  bar->addWidget(m_showValues);
  bar->addWidget(m_filter);
  bar->addWidget(help);
  outer->addLayout(bar);

  m_status = new QLabel(this);
  m_status->setTextFormat(Qt::RichText);
  m_status->setToolTip(significanceHelp());
  outer->addWidget(m_status);

  m_summaryModel = new DiffSummaryModel(this);
  m_summaryView = new QTableView(this);
  m_summaryView->setModel(m_summaryModel);
  m_summaryView->verticalHeader()->setVisible(false);
  m_summaryView->verticalHeader()->setDefaultSectionSize(20);
  m_summaryView->horizontalHeader()->setStretchLastSection(false);
  m_summaryView->setSelectionMode(QAbstractItemView::NoSelection);
  m_summaryView->setWordWrap(false);
  m_summaryView->setToolTip(significanceHelp());

  m_taskModel = new DiffTaskModel(this);
  m_proxy = new DiffFilterProxy(this);
  m_proxy->setSourceModel(m_taskModel);
  m_taskView = new QTableView(this);
  SortHeaderView::install(m_taskView);
  m_taskView->setModel(m_proxy);
  m_taskView->setSortingEnabled(true);
  // Unsorted is the core diff's order: the largest runtime change (either way) first.
  m_taskView->sortByColumn(-1, Qt::AscendingOrder);
  m_taskView->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_taskView->verticalHeader()->setVisible(false);
  m_taskView->verticalHeader()->setDefaultSectionSize(20);
  m_taskView->horizontalHeader()->setDefaultSectionSize(86);
  m_taskView->horizontalHeader()->setTextElideMode(Qt::ElideRight);
  m_taskView->setWordWrap(false);
  m_taskView->setColumnWidth(DiffTaskModel::ProcessColumn, 120);
  m_taskView->setColumnWidth(DiffTaskModel::CommColumn, 140);
  m_taskView->setColumnWidth(DiffTaskModel::TasksColumn, 76);
  connect(m_taskView, &QTableView::doubleClicked, this, [this](const QModelIndex& idx) {
    emit highlightRequested(m_proxy->index(idx.row(), DiffTaskModel::CommColumn).data().toString());
  });

  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(m_summaryView);
  split->addWidget(m_taskView);
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 1);
  split->setSizes({470, 1000});
  m_split = split;
  outer->addWidget(split, 1);

  connect(m_onlySignificant, &QCheckBox::toggled, m_proxy, &DiffFilterProxy::setOnlySignificant);
  connect(m_showValues, &QCheckBox::toggled, this, &DiffView::updateColumns);
  connect(m_filter, &QLineEdit::textChanged, m_proxy, &DiffFilterProxy::setFilterText);
  connect(m_a, qOverload<int>(&QComboBox::currentIndexChanged), this, &DiffView::emitPair);
  connect(m_b, qOverload<int>(&QComboBox::currentIndexChanged), this, &DiffView::emitPair);
  updateColumns();
  setDiff(nullptr, QString(), tr("Open two traces (File \u2192 Compare\u2026) to compare them."));
}

void DiffView::setRunChoices(const std::vector<RunChoice>& runs) {
  const int a = runA(), b = runB();
  m_updating = true;
  for (QComboBox* c : {m_a, m_b}) {
    c->clear();
    for (const auto& r : runs) c->addItem(r.title, r.runId);
  }
  m_a->setItemIcon(-1, {});
  for (int i = 0; i < m_a->count(); ++i) {
    m_a->setItemIcon(i, swatch(render::runColor(0)));
    m_b->setItemIcon(i, swatch(render::runColor(1)));
  }
  auto has = [&](int id) { return id >= 0 && m_a->findData(id) >= 0; };
  int na = has(a) ? a : -1, nb = has(b) ? b : -1;
  if (na < 0 && !runs.empty()) na = runs.front().runId;
  if (nb < 0 || nb == na)
    for (const auto& r : runs)
      if (r.runId != na) {
        nb = r.runId;
        break;
      }
  m_a->setCurrentIndex(m_a->findData(na));
  m_b->setCurrentIndex(m_b->findData(nb));
  m_updating = false;
  emitPair();
}

void DiffView::setPair(int runA, int runB) {
  m_updating = true;
  if (int i = m_a->findData(runA); i >= 0) m_a->setCurrentIndex(i);
  if (int i = m_b->findData(runB); i >= 0) m_b->setCurrentIndex(i);
  m_updating = false;
  emitPair();
}

int DiffView::runA() const { return m_a->currentIndex() >= 0 ? m_a->currentData().toInt() : -1; }
int DiffView::runB() const { return m_b->currentIndex() >= 0 ? m_b->currentData().toInt() : -1; }

void DiffView::emitPair() {
  if (m_updating) return;
  if (runA() == m_lastA && runB() == m_lastB) return;
  m_lastA = runA();
  m_lastB = runB();
  emit pairChanged(m_lastA, m_lastB);
}

void DiffView::setDiff(std::shared_ptr<const core::analysis::RunDiff> diff, const QString& rangeText, const QString& message) {
  m_summaryModel->setDiff(diff);
  m_taskModel->setDiff(diff);
  if (!diff) {
    m_status->setText(QStringLiteral("<span style='color:#666'>%1</span>").arg(message.toHtmlEscaped()));
  } else {
    const int sig = m_taskModel->significantRows();
    m_status->setText(tr("<b>%1</b> \u00b7 <span style='color:%2'>\u25a0</span> A: %3 \u00b7 "
                         "<span style='color:%4'>\u25a0</span> B: %5 \u00b7 %L6 task groups, <b>%L7</b> changed significantly "
                         "<span style='color:#666'>(orange: B higher, blue: B lower, bold KS: distributions differ; hover for the rule)</span>")
                         .arg(rangeText.toHtmlEscaped(), render::runColor(0).name(),
                              QString::fromStdString(diff->a.label).toHtmlEscaped(), render::runColor(1).name(),
                              QString::fromStdString(diff->b.label).toHtmlEscaped())
                         .arg(m_taskModel->rowCount())
                         .arg(sig));
  }
  m_summaryView->resizeColumnsToContents();
  // Where no task's process differs from its comm (no tgid in either trace), the Process column
  // only repeats the Task column and takes the room of the changes; the report leaves it out too.
  const bool processesKnown = diff && std::any_of(diff->tasks.begin(), diff->tasks.end(),
                                                  [](const auto& t) { return t.process != t.comm; });
  m_taskView->setColumnHidden(DiffTaskModel::ProcessColumn, !processesKnown);
  if (diff) {
    // Numbers never elide (bold significant cells are wider); the view measures visible rows only.
    for (int c = DiffTaskModel::TasksColumn; c < m_proxy->columnCount(); ++c) {
      m_taskView->resizeColumnToContents(c);
      m_taskView->setColumnWidth(c, std::max(64, m_taskView->columnWidth(c) + 4));
    }
  }
  // The summary shows whole: give it the width its columns need, the tasks the rest.
  int want = m_summaryView->frameWidth() * 2 + 2;
  for (int c = 0; c < m_summaryModel->columnCount(); ++c) want += m_summaryView->columnWidth(c);
  if (m_summaryView->verticalScrollBar()) want += m_summaryView->verticalScrollBar()->sizeHint().width();
  const int total = m_split->width() > 100 ? m_split->width() : 1400;
  const int summaryWidth = std::min(want, total * 9 / 20);
  if (diff) m_split->setSizes({summaryWidth, std::max(100, total - summaryWidth)});
  updateColumns();
}

void DiffView::setShowValues(bool on) { m_showValues->setChecked(on); }
void DiffView::setOnlySignificant(bool on) { m_onlySignificant->setChecked(on); }
QString DiffView::statusText() const { return m_status->text(); }

void DiffView::updateColumns() {
  for (int c = DiffTaskModel::FixedColumns; c < DiffTaskModel::ksColumn(); ++c) {
    const auto [metric, part] = DiffTaskModel::metricAt(c);
    const bool value = part == DiffTaskModel::ValueA || part == DiffTaskModel::ValueB;
    m_taskView->setColumnHidden(c, value && metric != 0 && !m_showValues->isChecked());
  }
}

}  // namespace app::gui
