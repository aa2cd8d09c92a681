#include "app/gui/stats_view.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QBoxPlotSeries>
#include <QBoxSet>
#include <QChart>
#include <QChartView>
#include <QGridLayout>
#include <QHorizontalBarSeries>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPen>
#include <QScrollArea>
#include <QValueAxis>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "app/render/colors.h"
#include "app/render/cpu_categories.h"
#include "app/render/time_axis.h"

namespace app::gui {

std::vector<std::pair<double, double>> cdfPoints(const std::vector<int64_t>& sortedNs, size_t maxPoints) {
  std::vector<std::pair<double, double>> out;
  const size_t n = sortedNs.size();
  if (n == 0) return out;
  // The curve rises from 0 at the smallest sample: its first step shows, even where many samples share that value.
  out.emplace_back(std::max(0.1, static_cast<double>(sortedNs.front()) / 1000.0), 0.0);
  const size_t step = std::max<size_t>(1, n / std::max<size_t>(1, maxPoints));
  for (size_t i = 0; i < n; i += step) {
    const double us = std::max(0.1, static_cast<double>(sortedNs[i]) / 1000.0);
    out.emplace_back(us, static_cast<double>(i + 1) / static_cast<double>(n));
  }
  if (out.back().second < 1.0) out.emplace_back(std::max(0.1, static_cast<double>(sortedNs.back()) / 1000.0), 1.0);
  return out;
}

double logAxisMinUs(double smallestUs) {
  // A decade strictly below: the axis starts at a labelled tick, and a first sample on a decade is not on the edge.
  return std::pow(10.0, std::ceil(std::log10(std::max(smallestUs, 1e-3))) - 1);
}

QChart* baseChart(const QString& title) {
  auto* chart = new QChart;
  chart->setTitle(title);
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setMargins(QMargins(4, 4, 4, 4));
  QFont f = chart->titleFont();
  f.setBold(true);
  chart->setTitleFont(f);
  return chart;
}

namespace {
QChartView* makeView(QWidget* parent) {
  auto* v = new QChartView(parent);
  v->setRenderHint(QPainter::Antialiasing);
  v->setMinimumSize(420, 280);
  return v;
}

QString shortTitle(const QString& t) { return t.size() > 28 ? t.left(26) + QStringLiteral("\u2026") : t; }
}  // namespace

StatsView::StatsView(QWidget* parent) : QWidget(parent) {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  auto* inner = new QWidget(scroll);
  auto* grid = new QGridLayout(inner);
  grid->setContentsMargins(6, 6, 6, 6);
  m_summary = new QLabel(inner);
  m_summary->setTextFormat(Qt::RichText);
  m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_summary->setWordWrap(true);
  grid->addWidget(m_summary, 0, 0, 1, 2);
  m_latency = makeView(inner);
  m_share = makeView(inner);
  m_util = makeView(inner);
  m_forcedIdle = makeView(inner);
  m_fairness = makeView(inner);
  m_frequency = makeView(inner);
  grid->addWidget(m_latency, 1, 0);
  grid->addWidget(m_share, 1, 1);
  grid->addWidget(m_util, 2, 0);
  grid->addWidget(m_forcedIdle, 2, 1);
  grid->addWidget(m_fairness, 3, 0);
  grid->addWidget(m_frequency, 3, 1);
  // Where a chart would only draw empty axes, a line says why instead, in the chart's place.
  m_forcedIdleNote = new QLabel(inner);
  m_frequencyNote = new QLabel(inner);
  for (QLabel* note : {m_forcedIdleNote, m_frequencyNote}) {
    note->setWordWrap(true);
    note->setStyleSheet(QStringLiteral("color:#666; padding:6px"));
    note->hide();
  }
  m_frequencyNote->setToolTip(tr("Frequencies come from power:cpu_frequency events in a recording, or from "
                                 "schedutil in a +uclamp replay."));
  grid->addWidget(m_forcedIdleNote, 2, 1, Qt::AlignTop);
  grid->addWidget(m_frequencyNote, 3, 1, Qt::AlignTop);
  scroll->setWidget(inner);
  outer->addWidget(scroll);
  setRuns({}, QString());
}

void StatsView::replaceChart(QChartView* view, QChart* chart) {
  QChart* old = view->chart();
  view->setChart(chart);
  delete old;
}

std::vector<QChart*> StatsView::charts() const {
  return {m_latency->chart(), m_share->chart(),     m_util->chart(),
          m_forcedIdle->chart(), m_fairness->chart(), m_frequency->chart()};
}

QString StatsView::summaryHtml() const { return m_summary->text(); }

QStringList StatsView::notesShown() const {
  QStringList out;
  for (const QLabel* note : {m_forcedIdleNote, m_frequencyNote})
    if (!note->isHidden()) out << note->text();
  return out;
}

void StatsView::showChartOrNote(QChartView* view, QLabel* noteLabel, const QString& note) {
  noteLabel->setText(note);
  noteLabel->setHidden(note.isEmpty());
  view->setHidden(!note.isEmpty());
}

// Time in each atrace slice name, per run that has them: the names with the most time.
QString StatsView::userSlicesHtml(const std::vector<const RunEntry*>& ready) const {
  constexpr size_t kShown = 10;
  QString html;
  for (size_t i = 0; i < ready.size(); ++i) {
    const auto& slices = ready[i]->stats->userSlices;
    if (slices.empty()) continue;
    html += tr("<p style='margin:8px 0 2px 0'><span style='color:%1'>\u25a0</span> %2: user-space slices, %3 of %4 "
               "names by time</p>")
                .arg(render::runColor(static_cast<int>(i)).name(), ready[i]->title.toHtmlEscaped())
                .arg(std::min(kShown, slices.size()))
                .arg(slices.size());
    html += QStringLiteral("<table cellspacing='0' cellpadding='3'><tr style='background:#e8ecf1'>");
    for (const QString& h : {tr("slice"), tr("count"), tr("total"), tr("p50"), tr("p99"), tr("max"), tr("open")})
      html += QStringLiteral("<th align='left'>%1</th>").arg(h);
    html += QStringLiteral("</tr>");
    for (size_t k = 0; k < slices.size() && k < kShown; ++k) {
      const auto& u = slices[k];
      html += QStringLiteral("<tr><td>%1</td><td>%L2</td><td>%3</td><td>%4</td><td>%5</td><td>%6</td><td>%L7</td></tr>")
                  .arg(QString::fromStdString(u.name).toHtmlEscaped())
                  .arg(u.count)
                  .arg(render::formatDuration(u.totalNs), render::formatDuration(u.p50Ns),
                       render::formatDuration(u.p99Ns), render::formatDuration(u.maxNs))
                  .arg(u.open);
    }
    html += QStringLiteral("</table>");
  }
  return html;
}

void StatsView::setRuns(const std::vector<RunEntry>& runs, const QString& rangeText) {
  std::vector<const RunEntry*> ready;
  for (const auto& r : runs)
    if (r.stats && r.model) ready.push_back(&r);

  // Summary table.
  QString html = QStringLiteral("<b>%1</b>").arg(rangeText.toHtmlEscaped());
  if (ready.empty()) {
    html += tr("<br><span style='color:#666'>%1</span>")
                .arg(runs.empty() ? tr("Open a trace to see its statistics.") : tr("computing\u2026"));
  } else {
    html += QStringLiteral("<table cellspacing='0' cellpadding='3' style='margin-top:4px'><tr style='background:#e8ecf1'>");
    for (const QString& h : {tr("run"), tr("busy"), tr("switches vol / invol"), tr("migrations"), tr("wakeup p50"),
                             tr("wakeup p99"), tr("sched delay p99"), tr("Jain's index"), tr("GPS lag max"), tr("forced idle")})
      html += QStringLiteral("<th align='left'>%1</th>").arg(h);
    html += QStringLiteral("</tr>");
    for (size_t i = 0; i < ready.size(); ++i) {
      const auto& s = *ready[i]->stats;
      html += QStringLiteral("<tr><td><span style='color:%1'>\u25a0</span> %2</td>")
                  .arg(render::runColor(static_cast<int>(i)).name(), ready[i]->title.toHtmlEscaped());
      html += QStringLiteral("<td>%1</td><td>%L2 / %L3</td><td>%L4</td><td>%5</td><td>%6</td><td>%7</td><td>%8</td><td>%9</td>")
                  .arg(render::formatDuration(s.busyNs))
                  .arg(s.switchesVoluntary)
                  .arg(s.switchesInvoluntary)
                  .arg(s.migrations)
                  .arg(s.wakeupLatency.count ? render::formatDuration(s.wakeupLatency.p50) : QStringLiteral("\u2014"))
                  .arg(s.wakeupLatency.count ? render::formatDuration(s.wakeupLatency.p99) : QStringLiteral("\u2014"))
                  .arg(s.schedDelay.count ? render::formatDuration(s.schedDelay.p99) : QStringLiteral("\u2014"))
                  .arg(s.fairness.competingTasks ? QString::number(s.fairness.jain, 'f', 3) : QStringLiteral("\u2014"))
                  .arg(s.fairness.competingTasks ? render::formatDuration(s.fairness.gpsLagMaxNs) : QStringLiteral("\u2014"));
      html += QStringLiteral("<td>%1</td></tr>").arg(render::formatDuration(s.forcedIdleNs));
    }
    html += QStringLiteral("</table>");
    html += userSlicesHtml(ready);
  }
  m_summary->setText(html);

  // Wakeup-latency CDF, every run overlaid on a log axis.
  {
    QChart* chart = baseChart(tr("Wakeup latency (CDF)"));
    auto* x = new QLogValueAxis;
    x->setTitleText(tr("latency (\u00b5s, log)"));
    x->setLabelFormat(QStringLiteral("%g"));
    x->setBase(10);
    auto* y = new QValueAxis;
    y->setRange(0, 1);
    y->setTitleText(tr("fraction of wakeups"));
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    double lo = 1e12, hi = 0;
    for (size_t i = 0; i < ready.size(); ++i) {
      const auto pts = cdfPoints(ready[i]->stats->wakeupLatency.sorted);
      if (pts.empty()) continue;
      auto* series = new QLineSeries;
      series->setName(shortTitle(ready[i]->title));
      series->setColor(render::runColor(static_cast<int>(i)));
      for (const auto& [px, py] : pts) {
        series->append(px, py);
        lo = std::min(lo, px);
        hi = std::max(hi, px);
      }
      chart->addSeries(series);
      series->attachAxis(x);
      series->attachAxis(y);
    }
    if (hi > 0) x->setRange(logAxisMinUs(lo), hi * 1.25);
    else x->setRange(0.1, 1000);
    replaceChart(m_latency, chart);
  }

  // CPU share per task per run: the busiest tasks over all runs. Runs of one
  // recording (a recording and its replays) share tids, so a task is comm + tid;
  // two recordings do not, so there a task is comm within its process, summed
  // over its threads (as the Diff tab matches them).
  {
    std::set<const core::TraceModel*> sources;
    for (const auto* r : ready) sources.insert(r->model->replay ? nullptr : r->model.get());
    const bool byName = sources.size() - sources.count(nullptr) > 1;
    using Key = std::pair<std::string, int64_t>;  // comm, tid (or -1 when matched by name)
    auto keyOf = [&](const core::TraceModel& m, const core::analysis::TaskStats& t) -> Key {
      if (!byName) return {t.comm, t.tid};
      std::string process = t.comm;
      if (t.upid.isValid() && t.upid.value < m.processes.size()) process = std::string(m.strings.get(m.processes.name[t.upid.value]));
      return {process == t.comm ? t.comm : process + "/" + t.comm, -1};
    };
    std::vector<std::map<Key, double>> shares(ready.size());
    std::map<Key, double> best;
    for (size_t i = 0; i < ready.size(); ++i) {
      for (const auto& t : ready[i]->stats->tasks) {
        double& v = shares[i][keyOf(*ready[i]->model, t)];
        v = byName ? v + t.cpuShare : std::max(v, t.cpuShare);
      }
      for (const auto& [k, v] : shares[i]) best[k] = std::max(best[k], v);
    }
    std::vector<std::pair<double, Key>> order;
    for (const auto& [k, v] : best) order.push_back({v, k});
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    // More bars than this leave each a few pixels high at the chart's usual size.
    constexpr size_t kShownTasks = 8;
    const size_t taskCount = order.size();
    if (order.size() > kShownTasks) order.resize(kShownTasks);
    const QString shown = taskCount > kShownTasks ? tr(", the %1 busiest of %2").arg(kShownTasks).arg(taskCount) : QString();
    QChart* chart = baseChart(byName ? tr("CPU share per task name (%, tasks of one name summed%1)").arg(shown)
                                     : tr("CPU share per task (%%1)").arg(shown));
    std::reverse(order.begin(), order.end());  // horizontal bars fill bottom-up
    QStringList categories;
    for (const auto& o : order)
      categories << (o.second.second < 0 ? QString::fromStdString(o.second.first)
                                         : QStringLiteral("%1 %2").arg(QString::fromStdString(o.second.first)).arg(o.second.second));
    auto* series = new QHorizontalBarSeries;
    series->setBarWidth(0.9);
    double maxV = 1;
    for (size_t i = 0; i < ready.size(); ++i) {
      auto* set = new QBarSet(shortTitle(ready[i]->title));
      set->setColor(render::runColor(static_cast<int>(i)));
      for (const auto& o : order) {
        auto it = shares[i].find(o.second);
        const double v = it == shares[i].end() ? 0.0 : it->second * 100.0;
        set->append(v);
        maxV = std::max(maxV, v);
      }
      series->append(set);
    }
    chart->addSeries(series);
    auto* y = new QBarCategoryAxis;
    y->append(categories);
    QFont small = y->labelsFont();
    small.setPointSizeF(std::max(6.5, small.pointSizeF() * 0.85));
    y->setLabelsFont(small);
    auto* x = new QValueAxis;
    x->setRange(0, maxV * 1.1);
    x->applyNiceNumbers();
    // One thread's share cannot pass 100 %; rounding up to nice numbers must not suggest it can.
    if (!byName && x->max() > 100) {
      x->setRange(0, 100);
      x->setTickCount(5);  // 0, 25, 50, 75, 100
    }
    x->setLabelFormat(QStringLiteral("%.0f"));
    chart->addAxis(y, Qt::AlignLeft);
    chart->addAxis(x, Qt::AlignBottom);
    series->attachAxis(x);
    series->attachAxis(y);
    replaceChart(m_share, chart);
  }

  // Per-CPU utilisation and forced idle per sibling; on a big machine, box
  // plots of the CPUs of each topology group (render::cpuCategories).
  std::vector<render::CpuRun> cpuRuns;
  for (const auto* r : ready) cpuRuns.push_back({&r->model->topology, &r->stats->cpus});
  const render::CpuCategories categories = render::cpuCategoriesOf(cpuRuns);
  auto cpuChart = [&](const QString& title, const QString& unit, auto value, double floorMax) {
    QChart* chart = baseChart(categories.grouped() ? tr("%1, CPUs of each %2").arg(title, categories.level) : title);
    QStringList labels;
    for (size_t g = 0; g < categories.cpus.size(); ++g) {
      // Grouped: the axis names the level, so each label is the group's number.
      QString label = categories.grouped() ? categories.labels[g].section(QLatin1Char(' '), 1) : categories.labels[g];
      const core::Topology& topo = ready.front()->model->topology;  // categories exist only with a run
      if (const auto* info = topo.cpu(categories.cpus[g].front()); !categories.grouped() && info && topo.hasSmt())
        label += QStringLiteral("\n%1\u00b7%2").arg(info->core).arg(info->thread);
      labels << label;
    }
    std::vector<QAbstractSeries*> series;
    double maxV = floorMax;
    if (categories.grouped()) {
      for (size_t i = 0; i < ready.size(); ++i) {
        auto* boxes = new QBoxPlotSeries;
        boxes->setName(shortTitle(ready[i]->title));
        boxes->setBrush(render::runColor(static_cast<int>(i)));
        // The default dark grey pen is all that shows of a flat box (an idle group): draw it in the run's colour too.
        boxes->setPen(QPen(render::runColor(static_cast<int>(i)).darker(140), 1.5));
        for (const auto& sp : render::spreadsByCategory(categories, ready[i]->stats->cpus, value)) {
          boxes->append(new QBoxSet(sp.min, sp.q1, sp.median, sp.q3, sp.max));
          maxV = std::max(maxV, sp.max);
        }
        series.push_back(boxes);
      }
    } else {
      auto* bars = new QBarSeries;
      for (size_t i = 0; i < ready.size(); ++i) {
        auto* set = new QBarSet(shortTitle(ready[i]->title));
        set->setColor(render::runColor(static_cast<int>(i)));
        for (const auto& sp : render::spreadsByCategory(categories, ready[i]->stats->cpus, value)) {
          set->append(sp.count ? sp.median : 0.0);
          maxV = std::max(maxV, sp.median);
        }
        bars->append(set);
      }
      series.push_back(bars);
    }
    for (auto* s : series) chart->addSeries(s);
    auto* x = new QBarCategoryAxis;
    x->append(labels);
    if (categories.grouped()) x->setTitleText(categories.level);
    auto* y = new QValueAxis;
    y->setRange(0, floorMax >= 100 ? 100.0 : std::max(maxV * 1.08, 1.0));
    if (floorMax < 100) y->applyNiceNumbers();
    y->setTitleText(unit);
    y->setLabelFormat(QStringLiteral("%.3g"));
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    for (auto* s : series) {
      s->attachAxis(x);
      s->attachAxis(y);
    }
    return chart;
  };
  replaceChart(m_util, cpuChart(tr("CPU utilisation (%)"), tr("% busy"),
                                [](const core::analysis::CpuStats& c) { return c.utilisation * 100.0; }, 100.0));
  bool anyForced = false, anySmt = false;
  for (const auto* r : ready) {
    anyForced = anyForced || r->stats->forcedIdleNs > 0;
    anySmt = anySmt || r->model->topology.hasSmt();
  }
  // A chart replaced by its note is not built: at 512 CPUs each is hundreds of box plots.
  const QString forcedIdleTitle = tr("Forced idle per SMT sibling (ms)");
  const QString forcedIdleNote = ready.empty() || anyForced ? QString()
                                 : anySmt                   ? tr("Forced idle per SMT sibling: none in these runs.")
                                                            : tr("Forced idle per SMT sibling: none (no SMT siblings in these runs).");
  replaceChart(m_forcedIdle,
               forcedIdleNote.isEmpty()
                   ? cpuChart(forcedIdleTitle, tr("ms"),
                              [](const core::analysis::CpuStats& c) { return static_cast<double>(c.forcedIdleNs) / 1e6; }, 0.001)
                   : baseChart(forcedIdleTitle));
  showChartOrNote(m_forcedIdle, m_forcedIdleNote, forcedIdleNote);
  // The time-weighted mean frequency per CPU: recorded (power:cpu_frequency) beside
  // what schedutil chose in +uclamp replays.
  bool anyFrequency = false;
  for (const auto* r : ready)
    for (const auto& c : r->stats->cpus) anyFrequency = anyFrequency || !c.freqResidencyNs.empty();
  const QString frequencyTitle = tr("Mean CPU frequency (GHz: cpu_frequency recorded, schedutil in +uclamp replays)");
  const QString frequencyNote =
      ready.empty() || anyFrequency ? QString() : tr("Mean CPU frequency: no frequency data in these runs.");
  replaceChart(m_frequency, frequencyNote.isEmpty()
                                ? cpuChart(frequencyTitle, tr("GHz"),
                                           [](const core::analysis::CpuStats& c) { return c.meanFreqKhz / 1e6; }, 0.001)
                                : baseChart(frequencyTitle));
  showChartOrNote(m_frequency, m_frequencyNote, frequencyNote);

  // Fairness per run.
  {
    QChart* chart = baseChart(tr("Fairness: Jain's index per run (1 = weight-fair)"));
    auto* series = new QBarSeries;
    for (size_t i = 0; i < ready.size(); ++i) {
      auto* set = new QBarSet(shortTitle(ready[i]->title));
      set->setColor(render::runColor(static_cast<int>(i)));
      set->append(ready[i]->stats->fairness.competingTasks ? ready[i]->stats->fairness.jain : 0.0);
      series->append(set);
    }
    chart->addSeries(series);
    auto* x = new QBarCategoryAxis;
    x->append(tr("competing tasks"));
    auto* y = new QValueAxis;
    y->setRange(0, 1.0);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
    replaceChart(m_fairness, chart);
  }
}

}  // namespace app::gui
