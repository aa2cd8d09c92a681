#include "app/gui/why_view.h"

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QTableWidget>
#include <QVBoxLayout>

#include "app/render/colors.h"
#include "app/render/time_axis.h"

namespace app::gui {

namespace {

// Colours of the states, as the task rows draw them.
const QColor kStateColors[5] = {QColor(0x2e, 0x7d, 0x32), QColor(0xf9, 0xa8, 0x25), QColor(0x90, 0xa4, 0xae),
                                QColor(0xc6, 0x28, 0x28), QColor(0xe0, 0xe0, 0xe0)};

QString taskText(const core::TraceModel& m, core::Utid u) {
  if (!u.isValid()) return QObject::tr("<irq>");
  return QStringLiteral("%1 (%2)").arg(QString::fromUtf8(m.comm(u).data(), static_cast<int>(m.comm(u).size())))
      .arg(m.threads.tid[u.value]);
}

QTableWidget* makeTable(const QStringList& headers, QWidget* parent) {
  auto* t = new QTableWidget(0, static_cast<int>(headers.size()), parent);
  t->setHorizontalHeaderLabels(headers);
  t->verticalHeader()->setVisible(false);
  t->verticalHeader()->setDefaultSectionSize(20);
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->horizontalHeader()->setStretchLastSection(true);
  t->setWordWrap(false);
  return t;
}

QTableWidgetItem* item(const QString& text, Qt::Alignment align = Qt::AlignLeft | Qt::AlignVCenter) {
  auto* i = new QTableWidgetItem(text);
  i->setTextAlignment(align);
  return i;
}

QTableWidgetItem* number(const QString& text) { return item(text, Qt::AlignRight | Qt::AlignVCenter); }

QWidget* titled(const QString& title, QWidget* body, QWidget* parent) {
  auto* box = new QWidget(parent);
  auto* l = new QVBoxLayout(box);
  l->setContentsMargins(0, 0, 0, 0);
  auto* label = new QLabel(QStringLiteral("<b>%1</b>").arg(title.toHtmlEscaped()), box);
  l->addWidget(label);
  l->addWidget(body);
  return box;
}

}  // namespace

StateBar::StateBar(QWidget* parent) : QWidget(parent) { setMinimumHeight(40); }

void StateBar::setReport(const core::analysis::WhyReport* r) {
  const int64_t zero[5] = {};
  const int64_t ns[5] = {r ? r->runningNs : 0, r ? r->runnableNs : 0, r ? r->sleepingNs : 0, r ? r->blockedNs : 0,
                         r ? r->unknownNs : 0};
  std::copy(r ? ns : zero, (r ? ns : zero) + 5, m_ns);
  update();
}

void StateBar::paintEvent(QPaintEvent*) {
  QPainter p(this);
  int64_t total = 0;
  for (int64_t n : m_ns) total += n;
  const QRect bar(0, 2, width() - 1, 18);
  p.fillRect(bar, QColor(0xf4, 0xf4, 0xf4));
  if (total <= 0) return;
  static const char* names[5] = {"running", "runnable", "sleeping", "blocked", "unknown"};
  double x = bar.left();
  int legendX = 0;
  for (int k = 0; k < 5; ++k) {
    const double w = bar.width() * static_cast<double>(m_ns[k]) / static_cast<double>(total);
    p.fillRect(QRectF(x, bar.top(), w, bar.height()), kStateColors[k]);
    x += w;
    if (m_ns[k] == 0) continue;
    const QString text = QStringLiteral("%1 %2 (%3%)")
                             .arg(QObject::tr(names[k]), render::formatDuration(m_ns[k]))
                             .arg(100.0 * static_cast<double>(m_ns[k]) / static_cast<double>(total), 0, 'f', 1);
    p.fillRect(QRect(legendX, bar.bottom() + 6, 10, 10), kStateColors[k]);
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(QPoint(legendX + 14, bar.bottom() + 15), text);
    legendX += 24 + p.fontMetrics().horizontalAdvance(text);
  }
}

WhyView::WhyView(QWidget* parent) : QWidget(parent) {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(6, 6, 6, 6);
  m_title = new QLabel(this);
  m_title->setTextFormat(Qt::RichText);
  m_title->setWordWrap(true);
  outer->addWidget(m_title);
  m_bar = new StateBar(this);
  outer->addWidget(m_bar);
  m_totals = new QLabel(this);
  m_totals->setTextFormat(Qt::RichText);
  outer->addWidget(m_totals);
  auto* grid = new QGridLayout;
  m_antagonists = makeTable({tr("antagonist"), tr("CPU time while it waited")}, this);
  m_antagonists->setToolTip(tr("Who ran on the CPUs it could run on while it was runnable (summed over CPUs)"));
  m_wakers = makeTable({tr("waker"), tr("wakeups"), tr("sleep ended")}, this);
  m_wakers->setToolTip(tr("Who made it runnable (<irq>: interrupt context or the idle task), and the sleep those wakeups ended"));
  m_path = makeTable({tr("from"), tr("length"), tr("state"), tr("task"), tr("waited behind")}, this);
  m_path->setToolTip(tr("Critical path, oldest first: double-click to see a piece on the timeline"));
  grid->addWidget(titled(tr("Antagonists"), m_antagonists, this), 0, 0);
  grid->addWidget(titled(tr("Wakers"), m_wakers, this), 0, 1);
  grid->addWidget(titled(tr("Critical path"), m_path, this), 0, 2);
  auto* compareBox = new QWidget(this);
  auto* cl = new QVBoxLayout(compareBox);
  cl->setContentsMargins(0, 0, 0, 0);
  auto* pick = new QHBoxLayout;
  pick->addWidget(new QLabel(QStringLiteral("<b>%1</b>").arg(tr("Compare with")), compareBox));
  m_compare = new QComboBox(compareBox);
  pick->addWidget(m_compare, 1);
  cl->addLayout(pick);
  m_diff = makeTable({tr("metric"), tr("this run"), tr("other run"), tr("change")}, compareBox);
  cl->addWidget(m_diff);
  grid->addWidget(compareBox, 0, 3);
  for (int c = 0; c < 4; ++c) grid->setColumnStretch(c, 1);
  outer->addLayout(grid, 1);
  connect(m_compare, &QComboBox::currentIndexChanged, this, &WhyView::compareRunChanged);
  connect(m_path, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
    if (!m_result || row < 0 || row >= static_cast<int>(m_result->why.criticalPath.segments.size())) return;
    const auto& s = m_result->why.criticalPath.segments[static_cast<size_t>(row)];
    emit jumpRequested(m_result->runId, s.utid, s.from, s.to);
  });
  setCompareChoices({});
  setMessage(tr("Click a slice or a task row to see why that task waited."));
}

void WhyView::setMessage(const QString& text) {
  m_result.reset();
  m_title->setText(QStringLiteral("<span style='color:#666'>%1</span>").arg(text.toHtmlEscaped()));
  m_bar->setReport(nullptr);
  m_totals->clear();
  for (QTableWidget* t : {m_antagonists, m_wakers, m_path, m_diff}) t->setRowCount(0);
}

void WhyView::setCompareChoices(const std::vector<std::pair<int, QString>>& runs) {
  const int current = compareRun();
  QSignalBlocker block(m_compare);
  m_compare->clear();
  m_compare->addItem(tr("(none)"), -1);
  for (const auto& [id, title] : runs) m_compare->addItem(title, id);
  const int index = m_compare->findData(current);
  m_compare->setCurrentIndex(index >= 0 ? index : 0);
}

int WhyView::compareRun() const { return m_compare->currentIndex() >= 0 ? m_compare->currentData().toInt() : -1; }

void WhyView::setResult(std::shared_ptr<const WhyResult> result) {
  m_result = std::move(result);
  if (!m_result) return setMessage(tr("No task selected."));
  const auto& m = *m_result->model;
  const auto& w = m_result->why;
  m_title->setText(tr("<b>%1</b> in %2, %3 \u2013 %4")
                       .arg(taskText(m, w.utid).toHtmlEscaped(), m_result->runTitle.toHtmlEscaped(),
                            render::formatDuration(w.range.from - m.firstTs), render::formatDuration(w.range.to - m.firstTs)));
  m_bar->setReport(&w);
  m_totals->setText(tr("Idle while runnable: <b>%1</b> (waited behind another task while a CPU it could use was idle) "
                       "\u00b7 critical path %2 segments, %3, from the %4")
                        .arg(render::formatDuration(w.idleWhileRunnableNs))
                        .arg(w.criticalPath.segments.size())
                        .arg(render::formatDuration(w.criticalPath.end - w.criticalPath.from()),
                             QString::fromUtf8(core::analysis::toString(w.criticalPath.stop).data())));
  m_antagonists->setRowCount(static_cast<int>(w.antagonists.size()));
  for (int i = 0; i < static_cast<int>(w.antagonists.size()); ++i) {
    const auto& a = w.antagonists[static_cast<size_t>(i)];
    m_antagonists->setItem(i, 0, item(taskText(m, a.utid)));
    m_antagonists->setItem(i, 1, number(render::formatDuration(a.ns)));
  }
  m_wakers->setRowCount(static_cast<int>(w.wakers.size()));
  for (int i = 0; i < static_cast<int>(w.wakers.size()); ++i) {
    const auto& k = w.wakers[static_cast<size_t>(i)];
    m_wakers->setItem(i, 0, item(taskText(m, k.utid)));
    m_wakers->setItem(i, 1, number(QString::number(k.count)));
    m_wakers->setItem(i, 2, number(render::formatDuration(k.sleepNs)));
  }
  const auto& segs = w.criticalPath.segments;
  m_path->setRowCount(static_cast<int>(segs.size()));
  for (int i = 0; i < static_cast<int>(segs.size()); ++i) {
    const auto& s = segs[static_cast<size_t>(i)];
    m_path->setItem(i, 0, number(render::formatDuration(s.from - m.firstTs)));
    m_path->setItem(i, 1, number(render::formatDuration(s.length())));
    m_path->setItem(i, 2, item(QString::fromUtf8(core::analysis::toString(s.state).data())));
    m_path->setItem(i, 3, item(taskText(m, s.utid)));
    if (s.waitedBehind.isValid()) m_path->setItem(i, 4, item(taskText(m, s.waitedBehind)));
  }
  m_diff->setRowCount(0);
  if (m_result->other) {
    const auto& d = m_result->other->diff;
    int row = 0;
    m_diff->setRowCount(static_cast<int>(d.metrics.size() + d.antagonists.size()));
    for (const auto& metric : d.metrics) {
      m_diff->setItem(row, 0, item(QString::fromStdString(metric.name)));
      m_diff->setItem(row, 1, number(render::formatDuration(static_cast<int64_t>(metric.a))));
      m_diff->setItem(row, 2, number(render::formatDuration(static_cast<int64_t>(metric.b))));
      const auto rel = metric.relative();
      m_diff->setItem(row, 3, number(rel ? QStringLiteral("%1%").arg(*rel * 100, 0, 'f', 0) : QStringLiteral("\u2014")));
      ++row;
    }
    for (const auto& a : d.antagonists) {
      m_diff->setItem(row, 0, item(tr("antagonist %1").arg(QString::fromStdString(a.comm))));
      m_diff->setItem(row, 1, number(render::formatDuration(a.aNs)));
      m_diff->setItem(row, 2, number(render::formatDuration(a.bNs)));
      m_diff->setItem(row, 3, number(render::formatDuration(a.bNs - a.aNs)));
      ++row;
    }
  }
  for (QTableWidget* t : {m_antagonists, m_wakers, m_path, m_diff}) t->resizeColumnToContents(0);
}

}  // namespace app::gui
