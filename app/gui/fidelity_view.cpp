#include "app/gui/fidelity_view.h"

#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>

#include "core/analysis/fidelity.h"

namespace app::gui {

namespace {

using core::analysis::FidelityMetric;
using core::analysis::Verdict;

const core::analysis::Fidelity* fidelityOf(const Run* r) {
  return r && r->model && r->model->replay ? r->model->replay->fidelity.get() : nullptr;
}

// Rounded before it is printed, so a difference of two printed values is
// worked out from what the user reads, and -0.004 prints as 0.00, not -0.00.
double roundedTo(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  const double r = std::round(v * scale) / scale;
  return r == 0 ? 0.0 : r;
}

QString fixed(double v, int decimals) { return QString::number(roundedTo(v, decimals), 'f', decimals); }

QString valueText(const FidelityMetric& m, double v) {
  switch (m.unit) {
    case FidelityMetric::Unit::Ns:
      if (std::abs(v) >= 1e9) return QString::number(v / 1e9, 'f', 3) + QStringLiteral(" s");
      if (std::abs(v) >= 1e6) return QString::number(v / 1e6, 'f', 3) + QStringLiteral(" ms");
      if (std::abs(v) >= 1e3) return QString::number(v / 1e3, 'f', 1) + QStringLiteral(" \u00b5s");
      return QString::number(v, 'f', 0) + QStringLiteral(" ns");
    case FidelityMetric::Unit::Count: return QString::number(v, 'f', 0);
    case FidelityMetric::Unit::Distance: return QString::number(v, 'f', 3);
    case FidelityMetric::Unit::Pp: return fixed(v, 2) + QStringLiteral(" pp");
  }
  return {};
}

// Pass green, fail red, info grey: the colours the report uses too.
QColor verdictColour(Verdict v) {
  switch (v) {
    case Verdict::Pass: return QColor(0xd5, 0xf0, 0xd5);
    case Verdict::Fail: return QColor(0xf6, 0xcf, 0xcf);
    case Verdict::Info: return QColor(0xe8, 0xe8, 0xe8);
  }
  return {};
}

QTableWidgetItem* cell(const QString& text, Qt::Alignment align = Qt::AlignRight | Qt::AlignVCenter) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(item->flags() & ~Qt::ItemIsEditable);
  item->setTextAlignment(align);
  return item;
}

}  // namespace

FidelityView::FidelityView(const RunSet& runs, QWidget* parent)
    : QWidget(parent),
      m_runs(runs),
      m_choice(new QComboBox(this)),
      m_summary(new QLabel(this)),
      m_unmodelled(new QLabel(this)),
      m_metrics(new QTableWidget(this)),
      m_tasks(new QTableWidget(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(m_choice);
  m_summary->setWordWrap(true);
  m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(m_summary);
  m_unmodelled->setWordWrap(true);
  m_unmodelled->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_unmodelled->setTextFormat(Qt::PlainText);
  layout->addWidget(m_unmodelled);
  m_metrics->setColumnCount(6);
  m_metrics->setHorizontalHeaderLabels(
      {tr("Metric"), tr("Recorded"), tr("Replay"), tr("Ratio / distance"), tr("Bound"), tr("Verdict")});
  m_metrics->horizontalHeaderItem(3)->setToolTip(
      tr("Replay \u00f7 recorded; for a metric that compares the two runs (a KS distance, the largest CPU-share "
         "difference), that comparison"));
  m_tasks->setColumnCount(9);
  m_tasks->setHorizontalHeaderLabels({tr("TID"), tr("Comm"), tr("CPU % rec"), tr("CPU % rep"), tr("\u0394 pp"),
                                      tr("Wait ms rec"), tr("Wait ms rep"), tr("Vol rec/rep"), tr("Invol rec/rep")});
  for (auto* t : {m_metrics, m_tasks}) {
    t->verticalHeader()->setVisible(false);
    t->verticalHeader()->setDefaultSectionSize(20);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setWordWrap(false);
  }
  layout->addWidget(m_metrics, 3);
  layout->addWidget(m_tasks, 2);
  connect(m_choice, &QComboBox::currentIndexChanged, this, [this] { showSelected(); });
  connect(&m_runs, &RunSet::runAdded, this, [this](int id) {
    refill();
    if (fidelityOf(m_runs.run(id))) showRun(id);
  });
  connect(&m_runs, &RunSet::runRemoved, this, [this] { refill(); });
  refill();
}

void FidelityView::refill() {
  const int current = shownRun();
  const QSignalBlocker block(m_choice);
  m_choice->clear();
  for (int id : m_runs.ids()) {
    const Run* r = m_runs.run(id);
    if (!fidelityOf(r)) continue;
    const Run* parent = m_runs.run(r->parentId);
    m_choice->addItem(parent ? tr("%1 \u2014 %2").arg(r->title, parent->title) : r->title, id);
  }
  const int at = m_choice->findData(current);
  m_choice->setCurrentIndex(at >= 0 ? at : 0);
  showSelected();
}

void FidelityView::showRun(int runId) {
  const Run* r = m_runs.run(runId);
  if (r && !r->isReplay())
    for (int replay : m_runs.replaysOf(runId))
      if (fidelityOf(m_runs.run(replay))) {
        runId = replay;
        break;
      }
  const int at = m_choice->findData(runId);
  if (at >= 0) m_choice->setCurrentIndex(at);
}

int FidelityView::shownRun() const { return m_choice->count() ? m_choice->currentData().toInt() : -1; }

QString FidelityView::verdictOf(const QString& metricKey) const {
  for (int row = 0; row < m_metrics->rowCount(); ++row)
    if (m_metrics->item(row, 0)->data(Qt::UserRole).toString() == metricKey) return m_metrics->item(row, 5)->text();
  return {};
}

QString FidelityView::unmodelledText() const { return m_unmodelled->text(); }

void FidelityView::showSelected() {
  m_metrics->clearSpans();
  m_metrics->setRowCount(0);
  m_tasks->setRowCount(0);
  m_unmodelled->clear();
  const Run* run = m_runs.run(shownRun());
  const auto* f = fidelityOf(run);
  if (!f) {
    m_summary->setText(tr("No replay with a fidelity check yet: replay a recording (Replay\u2026) and its "
                          "identity check against the recording shows here."));
    return;
  }
  size_t judged = 0;
  for (const auto& m : f->metrics) judged += m.verdict != Verdict::Info;
  m_summary->setText(
      tr("<b>%1</b>: %2 of %3 judged metrics outside their bounds. The bounds are those of an identity replay "
         "(the recording kernel's own model on the recorded topology); a replay through another model is expected "
         "to differ.")
          .arg(f->overall() == Verdict::Pass ? tr("Within every bound") : tr("Outside some bounds"))
          .arg(f->failed())
          .arg(judged));
  // A replay read back from a file has no counts: nothing is said rather than "none".
  const auto& unmodelled = run->model->replay->unmodelled;
  QStringList caveats;
  for (const auto& c : unmodelled)
    if (c.count) caveats << tr("%1: %2").arg(QString::fromStdString(c.what)).arg(c.count);
  QString text;
  if (!unmodelled.empty())
    text = caveats.isEmpty() ? tr("Not modelled exactly: none of the counted kinds.")
                             : tr("Not modelled exactly: %1.").arg(caveats.join(QStringLiteral("; ")));
  if (auto it = run->model->metadata.find("replay.model_counters"); it != run->model->metadata.end())
    text += (text.isEmpty() ? QString() : QStringLiteral("\n")) + tr("Model: %1.").arg(QString::fromStdString(it->second));
  if (auto it = run->model->metadata.find("replay.blocks"); it != run->model->metadata.end())
    text += (text.isEmpty() ? QString() : QStringLiteral("\n")) + tr("Blocks: %1.").arg(QString::fromStdString(it->second));
  m_unmodelled->setText(text);
  m_metrics->setRowCount(static_cast<int>(f->metrics.size()));
  int row = 0;
  for (const auto& m : f->metrics) {
    auto* name = cell(QString::fromStdString(m.label), Qt::AlignLeft | Qt::AlignVCenter);
    name->setData(Qt::UserRole, QString::fromStdString(m.key));
    if (m.key == "makespan_ns")
      name->setToolTip(tr("From the first burst's start to the end of the last burst that completed, in each run: "
                          "not the span in the pane header, which runs from the first to the last traced event."));
    m_metrics->setItem(row, 0, name);
    if (m.recorded && m.replayed) {
      m_metrics->setItem(row, 1, cell(valueText(m, *m.recorded)));
      m_metrics->setItem(row, 2, cell(valueText(m, *m.replayed)));
      m_metrics->setItem(row, 3, cell(m.ratio ? QString::number(*m.ratio, 'f', 3) : QStringLiteral("\u2013")));
    } else {
      // A metric of the two runs together (a distance, a difference) has no value per run.
      m_metrics->setSpan(row, 1, 1, 2);
      auto* between = cell(tr("between the two \u2192"), Qt::AlignCenter);
      between->setForeground(QColor(0x77, 0x77, 0x77));
      m_metrics->setItem(row, 1, between);
      m_metrics->setItem(row, 3, cell(valueText(m, m.measure)));
    }
    m_metrics->setItem(row, 4, cell(QString::fromStdString(m.bound), Qt::AlignLeft | Qt::AlignVCenter));
    auto* verdict = cell(QString::fromStdString(std::string(core::analysis::toString(m.verdict))), Qt::AlignCenter);
    verdict->setBackground(verdictColour(m.verdict));
    m_metrics->setItem(row, 5, verdict);
    ++row;
  }
  // The names take the width they need; the bounds (short text, left-aligned) take what is left.
  m_metrics->resizeColumnsToContents();
  m_metrics->horizontalHeader()->setSectionResizeMode(4, QHeaderView::Stretch);
  const int shown = static_cast<int>(std::min<size_t>(f->tasks.size(), 200));
  m_tasks->setRowCount(shown);
  for (int i = 0; i < shown; ++i) {
    const auto& t = f->tasks[static_cast<size_t>(i)];
    m_tasks->setItem(i, 0, cell(QString::number(t.tid)));
    m_tasks->setItem(i, 1, cell(QString::fromStdString(t.comm), Qt::AlignLeft | Qt::AlignVCenter));
    m_tasks->setItem(i, 2, cell(fixed(100 * t.shareRecorded, 2)));
    m_tasks->setItem(i, 3, cell(fixed(100 * t.shareReplayed, 2)));
    // The difference of the two shares as shown; the verdict judged the exact one.
    auto* diff = cell(fixed(roundedTo(100 * t.shareReplayed, 2) - roundedTo(100 * t.shareRecorded, 2), 2));
    diff->setToolTip(tr("%1 pp exactly").arg(t.shareDiffPp(), 0, 'f', 4));
    diff->setBackground(verdictColour(t.verdict));
    m_tasks->setItem(i, 4, diff);
    m_tasks->setItem(i, 5, cell(QString::number(static_cast<double>(t.waitRecordedNs) / 1e6, 'f', 3)));
    m_tasks->setItem(i, 6, cell(QString::number(static_cast<double>(t.waitReplayedNs) / 1e6, 'f', 3)));
    m_tasks->setItem(i, 7, cell(QStringLiteral("%1 / %2").arg(t.voluntaryRecorded).arg(t.voluntaryReplayed)));
    m_tasks->setItem(i, 8, cell(QStringLiteral("%1 / %2").arg(t.involuntaryRecorded).arg(t.involuntaryReplayed)));
  }
  m_tasks->resizeColumnsToContents();
  m_tasks->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
}

}  // namespace app::gui
