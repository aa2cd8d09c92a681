#include "app/gui/latency_view.h"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QValueAxis>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <map>

#include "app/gui/latency_scatter.h"
#include "app/gui/sort_header_view.h"
#include "app/gui/stats_view.h"
#include "app/render/colors.h"
#include "app/render/time_axis.h"

namespace app::gui {

namespace {

constexpr size_t kColouredTasks = 8;
constexpr size_t kMaxDots = 250000;  // beyond it, thin the dots below the run's p99 (all above it stay)
constexpr double kMinUs = 0.1;      // log axes cannot show 0

QString commOf(const core::TraceModel& m, core::Utid u) {
  const auto c = m.comm(u);
  return QString::fromUtf8(c.data(), static_cast<int>(c.size()));
}

double usOf(int64_t ns) { return std::max(kMinUs, static_cast<double>(ns) / 1e3); }

void replace(QChartView* view, QChart* c) {
  QChart* old = view->chart();
  view->setChart(c);
  delete old;
}

QLogValueAxis* logAxis(const QString& title) {
  auto* a = new QLogValueAxis;
  a->setTitleText(title);
  a->setBase(10);
  a->setLabelFormat(QStringLiteral("%g"));
  a->setMinorTickCount(-1);
  return a;
}

// The scatter's dots and legend and the distribution of one kind of sample
// (worker thread: nothing here touches a widget).
LatencyData::Plot plotOf(const LatencyData& d, bool wakeups) {
  LatencyData::Plot plot;
  const auto& m = *d.model;
  std::vector<const core::analysis::LatencySample*> shown;
  for (const auto& s : d.samples)
    if (!wakeups || s.woken) shown.push_back(&s);

  // Colour the tasks with the most samples; the rest share grey.
  std::map<uint32_t, size_t> perTask;
  for (const auto* s : shown) ++perTask[s->utid.value];
  std::vector<std::pair<size_t, uint32_t>> byCount;
  for (const auto& [u, n] : perTask) byCount.emplace_back(n, u);
  std::sort(byCount.rbegin(), byCount.rend());
  std::map<uint32_t, QRgb> colorOf;
  for (size_t k = 0; k < byCount.size() && k < kColouredTasks; ++k) {
    const core::Utid u(byCount[k].second);
    const QRgb c = render::taskColor(m.comm(u), m.threads.tid[u.value]).rgba();
    colorOf[u.value] = c;
    plot.legend.push_back({QStringLiteral("%1 (%2)").arg(commOf(m, u)).arg(m.threads.tid[u.value]), c});
  }
  const QRgb grey = QColor(0x9e, 0x9e, 0x9e, 0xb0).rgba();
  plot.legend.push_back({QObject::tr("other tasks"), grey});
  std::vector<int64_t> values;
  values.reserve(shown.size());
  for (const auto* s : shown) values.push_back(s->ns);
  plot.distribution = core::analysis::Distribution::of(std::move(values));
  const int64_t p99 = plot.distribution.p99;
  const size_t stride = shown.size() > kMaxDots ? (shown.size() + kMaxDots - 1) / kMaxDots : 1;
  std::vector<LatencyScatter::Dot> coloured;
  size_t index = 0;
  for (const auto* s : shown) {
    const bool keep = stride == 1 || s->ns >= p99 || index++ % stride == 0;
    if (!keep) continue;
    const auto it = colorOf.find(s->utid.value);
    const LatencyScatter::Dot dot{static_cast<float>(static_cast<double>(s->ts - m.firstTs) / 1e6),
                                  static_cast<float>(usOf(s->ns)), it != colorOf.end() ? it->second : grey};
    (it != colorOf.end() ? coloured : plot.dots).push_back(dot);
  }
  plot.dots.insert(plot.dots.end(), coloured.begin(), coloured.end());
  return plot;
}

}  // namespace

// ---------------------------------------------------------------- table model

void TaskLatencyModel::setData(std::shared_ptr<const LatencyData> data, bool wakeups) {
  beginResetModel();
  m_data = std::move(data);
  m_wakeups = wakeups;
  m_rows.clear();
  if (m_data)
    for (size_t i = 0; i < m_data->tasks.size(); ++i)
      if ((wakeups ? m_data->tasks[i].wakeupLatency : m_data->tasks[i].schedDelay).count > 0)
        m_rows.push_back(static_cast<int>(i));
  endResetModel();
}

int TaskLatencyModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(m_rows.size()); }
int TaskLatencyModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

const core::analysis::TaskLatency* TaskLatencyModel::row(int r) const {
  return r >= 0 && r < static_cast<int>(m_rows.size()) ? &m_data->tasks[static_cast<size_t>(m_rows[static_cast<size_t>(r)])] : nullptr;
}

const core::analysis::LatencySample& TaskLatencyModel::worst(int r) const {
  const auto* t = row(r);
  return m_wakeups ? t->worstWakeup : t->worstDelay;
}

QVariant TaskLatencyModel::data(const QModelIndex& index, int role) const {
  const auto* t = row(index.row());
  if (!t || (role != Qt::DisplayRole && role != kSortRole && role != Qt::TextAlignmentRole)) return {};
  if (role == Qt::TextAlignmentRole)
    return index.column() == Task ? QVariant(Qt::AlignLeft | Qt::AlignVCenter) : QVariant(Qt::AlignRight | Qt::AlignVCenter);
  const auto& m = *m_data->model;
  const auto& d = m_wakeups ? t->wakeupLatency : t->schedDelay;
  const bool sort = role == kSortRole;
  const auto time = [&](int64_t ns) -> QVariant { return sort ? QVariant(static_cast<qlonglong>(ns)) : QVariant(render::formatDuration(ns)); };
  switch (index.column()) {
    case Task: return commOf(m, t->utid);
    case Tid: return m.threads.tid[t->utid.value];
    case Count: return static_cast<qulonglong>(d.count);
    case P50: return time(d.p50);
    case P90: return time(d.p90);
    case P99: return time(d.p99);
    case Max: return time(d.max);
    case WorstAt: return time(worst(index.row()).ts - m.firstTs);
  }
  return {};
}

QVariant TaskLatencyModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"task", "tid", "samples", "p50", "p90", "p99", "max", "worst at"};
  return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

// ---------------------------------------------------------------- view

LatencyView::LatencyView(QWidget* parent) : QWidget(parent) {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(6, 6, 6, 6);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Run:"), this));
  m_run = new QComboBox(this);
  bar->addWidget(m_run, 1);
  m_kind = new QComboBox(this);
  m_kind->addItem(tr("Wakeup latency (woken \u2192 running)"));
  m_kind->addItem(tr("Scheduling delay (runnable \u2192 running)"));
  bar->addWidget(m_kind);
  m_note = new QLabel(this);
  bar->addWidget(m_note, 2);
  outer->addLayout(bar);
  auto* grid = new QGridLayout;
  m_scatter = new LatencyScatter(this);
  m_histogram = new QChartView(this);
  m_cdf = new QChartView(this);
  for (QChartView* v : {m_histogram, m_cdf}) {
    v->setRenderHint(QPainter::Antialiasing);
    v->setMinimumSize(320, 240);
  }
  m_scatter->setToolTip(tr("One dot per sample; click a dot to jump there"));
  connect(m_scatter, &LatencyScatter::clicked, this, &LatencyView::jumpToNearest);
  m_table = new QTableView(this);
  m_model = new TaskLatencyModel(this);
  m_proxy = new QSortFilterProxyModel(this);
  m_proxy->setSourceModel(m_model);
  m_proxy->setSortRole(TaskLatencyModel::kSortRole);
  SortHeaderView::install(m_table);
  m_table->setModel(m_proxy);
  m_table->setSortingEnabled(true);
  m_table->sortByColumn(TaskLatencyModel::P99, Qt::DescendingOrder);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->verticalHeader()->setVisible(false);
  m_table->verticalHeader()->setDefaultSectionSize(20);
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->setToolTip(tr("Sort by p99 or max; double-click a task to jump to its worst instance"));
  grid->addWidget(m_scatter, 0, 0, 1, 2);
  grid->addWidget(m_histogram, 1, 0);
  grid->addWidget(m_cdf, 1, 1);
  grid->addWidget(m_table, 0, 2, 2, 1);
  grid->setColumnStretch(0, 2);
  grid->setColumnStretch(1, 2);
  grid->setColumnStretch(2, 2);
  grid->setRowStretch(0, 3);
  grid->setRowStretch(1, 2);
  outer->addLayout(grid, 1);

  m_watcher = new QFutureWatcher<std::shared_ptr<const LatencyData>>(this);
  connect(m_watcher, &QFutureWatcherBase::finished, this, [this] {
    m_data = m_watcher->result();
    if (m_again) {
      m_again = false;
      recompute();
      return;
    }
    rebuildCharts();
    emit dataReady();
  });
  connect(m_run, &QComboBox::currentIndexChanged, this, &LatencyView::recompute);
  connect(m_kind, &QComboBox::currentIndexChanged, this, &LatencyView::rebuildCharts);
  connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    const int r = m_proxy->mapToSource(index).row();
    if (!m_data || !m_model->row(r)) return;
    const auto& s = m_model->worst(r);
    emit jumpRequested(m_data->runId, s.utid, s.ts, s.ts + s.ns);
  });
  rebuildCharts();
}

LatencyView::~LatencyView() { m_watcher->waitForFinished(); }

bool LatencyView::wakeupsShown() const { return m_kind->currentIndex() == 0; }
bool LatencyView::isComputing() const { return m_watcher->isRunning(); }

void LatencyView::setRuns(const std::vector<RunChoice>& runs) {
  const int current = m_run->currentIndex() >= 0 ? m_run->currentData().toInt() : -1;
  m_runs = runs;
  {
    QSignalBlocker block(m_run);
    m_run->clear();
    for (const auto& r : runs) m_run->addItem(r.title, r.runId);
    const int index = m_run->findData(current);
    m_run->setCurrentIndex(index >= 0 ? index : 0);
  }
  recompute();
}

void LatencyView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (m_stale) recompute();
}

void LatencyView::recompute() {
  if (!isVisible()) {
    m_stale = true;
    return;
  }
  m_stale = false;
  if (m_watcher->isRunning()) {
    m_again = true;
    return;
  }
  const int index = m_run->currentIndex();
  if (index < 0 || index >= static_cast<int>(m_runs.size())) {
    m_data.reset();
    rebuildCharts();
    return;
  }
  const RunChoice choice = m_runs[static_cast<size_t>(index)];
  m_note->setText(tr("computing\u2026"));
  m_watcher->setFuture(QtConcurrent::run([choice] {
    auto d = std::make_shared<LatencyData>();
    d->runId = choice.runId;
    d->model = choice.model;
    d->range = choice.range;
    d->samples = core::analysis::latencySamples(*choice.model, choice.range);
    d->tasks = core::analysis::taskLatencies(*choice.model, d->samples);
    d->plots[0] = plotOf(*d, true);
    d->plots[1] = plotOf(*d, false);
    return std::shared_ptr<const LatencyData>(std::move(d));
  }));
}

void LatencyView::rebuildCharts() {
  const bool wakeups = wakeupsShown();
  m_model->setData(m_data, wakeups);
  const QString what = wakeups ? tr("Wakeup latency") : tr("Scheduling delay");
  auto* histogram = baseChart(tr("%1: histogram").arg(what));
  auto* cdf = baseChart(tr("%1: CDF").arg(what));
  if (!m_data || !m_data->model) {
    m_note->setText(m_runs.empty() ? tr("Open a trace to see its latencies.") : QString());
    m_scatter->setData(tr("%1 over time").arg(what), {}, 0, 1, {});
    replace(m_histogram, histogram), replace(m_cdf, cdf);
    return;
  }
  const auto& m = *m_data->model;
  const LatencyData::Plot& plot = m_data->plots[wakeups ? 0 : 1];
  const std::vector<int64_t>& sorted = plot.distribution.sorted;
  m_scatter->setData(tr("%1 over time").arg(what), plot.dots, static_cast<double>(m_data->range.from - m.firstTs) / 1e6,
                     static_cast<double>(std::min(m_data->range.to, m.lastTs) - m.firstTs) / 1e6, plot.legend);
  m_note->setText(plot.dots.size() == sorted.size()
                      ? tr("%1 samples").arg(sorted.size())
                      : tr("%1 of %2 samples drawn (every one at or above p99)").arg(plot.dots.size()).arg(sorted.size()));

  // Histogram over log-spaced bins (5 per decade), and the CDF.
  if (!sorted.empty()) {
    const double lo = std::floor(std::log10(usOf(sorted.front())) * 5) / 5;
    const double hi = std::ceil(std::log10(usOf(sorted.back())) * 5) / 5 + 0.2;
    const int bins = std::max(1, static_cast<int>(std::lround((hi - lo) * 5)));
    std::vector<int> counts(static_cast<size_t>(bins), 0);
    for (int64_t ns : sorted) {
      const int b = std::clamp(static_cast<int>((std::log10(usOf(ns)) - lo) * 5), 0, bins - 1);
      ++counts[static_cast<size_t>(b)];
    }
    auto* steps = new QLineSeries;
    steps->setName(tr("samples per bin (5 bins per decade)"));
    double ymax = 1;
    for (int b = 0; b < bins; ++b) {
      const double x0 = std::pow(10.0, lo + b / 5.0), x1 = std::pow(10.0, lo + (b + 1) / 5.0);
      steps->append(x0, counts[static_cast<size_t>(b)]);
      steps->append(x1, counts[static_cast<size_t>(b)]);
      ymax = std::max(ymax, static_cast<double>(counts[static_cast<size_t>(b)]));
    }
    histogram->addSeries(steps);
    auto* hx = logAxis(tr("\u00b5s"));
    auto* hy = new QValueAxis;
    hy->setRange(0, ymax * 1.05);
    hy->setLabelFormat(QStringLiteral("%d"));
    histogram->addAxis(hx, Qt::AlignBottom);
    histogram->addAxis(hy, Qt::AlignLeft);
    steps->attachAxis(hx);
    steps->attachAxis(hy);
    auto* line = new QLineSeries;
    line->setName(what);
    const auto points = cdfPoints(sorted);
    for (const auto& [x, y] : points) line->append(x, y);
    cdf->addSeries(line);
    auto* cx = logAxis(tr("\u00b5s"));
    cx->setRange(logAxisMinUs(points.front().first), points.back().first * 1.25);
    auto* cy = new QValueAxis;
    cy->setRange(0, 1);
    cdf->addAxis(cx, Qt::AlignBottom);
    cdf->addAxis(cy, Qt::AlignLeft);
    line->attachAxis(cx);
    line->attachAxis(cy);
  }
  replace(m_histogram, histogram);
  replace(m_cdf, cdf);
  // A reset model keeps the proxy's sort column but not its order: sort again (p99, worst first, at the start).
  m_proxy->sort(m_proxy->sortColumn(), m_proxy->sortOrder());
  m_table->resizeColumnsToContents();
}

void LatencyView::jumpToNearest(double xMs, double yUs) {
  if (!m_data || !m_data->model) return;
  const auto& m = *m_data->model;
  const bool wakeups = wakeupsShown();
  // Distance in the scatter's own terms: time as a share of the range, latency in decades.
  const double span = std::max(1.0, static_cast<double>(m_data->range.length()) / 1e6);
  const core::analysis::LatencySample* best = nullptr;
  double bestD = 0;
  for (const auto& s : m_data->samples) {
    if (wakeups && !s.woken) continue;
    const double dx = (static_cast<double>(s.ts - m.firstTs) / 1e6 - xMs) / span;
    const double dy = std::log10(usOf(s.ns)) - std::log10(std::max(kMinUs, yUs));
    const double d = dx * dx * 25 + dy * dy;
    if (!best || d < bestD) best = &s, bestD = d;
  }
  if (best) emit jumpRequested(m_data->runId, best->utid, best->ts, best->ts + best->ns);
}

}  // namespace app::gui
