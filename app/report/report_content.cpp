// Builds the report document from the computed ReportData: title page,
// summary with headline changes, per-task tables, fairness, latency CDFs,
// CPU utilisation, SMT/forced idle, timelines, the diff and the replays.
#include <QLocale>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "app/render/chart_painter.h"
#include "app/render/colors.h"
#include "app/render/time_axis.h"
#include "app/render/timeline_image.h"
#include "app/report/report_data.h"
#include "core/analysis/fidelity.h"
#include "core/data_loss_text.h"
#include "app/report/report_figures.h"
#include "replay/policies/registry.h"

namespace app::report {

const Theme& theme() {
  static const Theme t;
  return t;
}

namespace {

using core::analysis::MetricDelta;
using core::analysis::RunDiff;
using core::analysis::RunStats;
using core::analysis::TaskStats;

// ---- number formatting (one place, so every table reads the same) ----

QString num(double v, int decimals) { return QString::number(v, 'f', decimals); }
QString count(uint64_t v) { return QLocale(QLocale::English).toString(static_cast<qulonglong>(v)); }
QString ms(int64_t ns) { return num(static_cast<double>(ns) / 1e6, 3); }
QString us(double ns) { return num(ns / 1e3, 1); }
QString dur(int64_t ns) { return render::formatDuration(ns); }
QString pct(double fraction, int decimals = 1) { return num(100.0 * fraction, decimals) + QStringLiteral("%"); }
QString jain(double v) { return num(v, 4); }
QString signedPct(std::optional<double> rel) {
  if (!rel) return QStringLiteral("–");
  return (*rel >= 0 ? QStringLiteral("+") : QString()) + num(100.0 * *rel, 1) + QStringLiteral("%");
}

double utilisation(const RunStats& s) {
  const double cap = static_cast<double>(s.range.length()) * static_cast<double>(std::max<size_t>(1, s.cpus.size()));
  return cap > 0 ? static_cast<double>(s.busyNs) / cap : 0.0;
}
double involuntaryFraction(const RunStats& s) {
  const uint64_t all = s.switchesVoluntary + s.switchesInvoluntary;
  return all ? static_cast<double>(s.switchesInvoluntary) / static_cast<double>(all) : 0.0;
}

// ---- metric semantics for headline changes ----

enum class Unit : uint8_t { Duration, Count, Fraction, Index };
struct MetricInfo {
  const char* name;   // diff.summary name, or a derived one
  const char* label;
  Unit unit;
  int better;         // -1: lower is better, +1: higher is better, 0: neither
};
constexpr MetricInfo kHeadline[] = {
    {"span_ns", "Span (trace length)", Unit::Duration, 0},
    {"busy_ns", "Busy CPU time", Unit::Duration, 0},
    {"utilisation", "CPU utilisation", Unit::Fraction, 0},
    {"switches_voluntary", "Voluntary switches", Unit::Count, 0},
    {"switches_involuntary", "Involuntary switches (preempted)", Unit::Count, -1},
    {"involuntary_fraction", "Involuntary fraction of switches", Unit::Fraction, -1},
    {"wakeup_latency_p50_ns", "Wakeup latency p50", Unit::Duration, -1},
    {"wakeup_latency_p99_ns", "Wakeup latency p99", Unit::Duration, -1},
    {"sched_delay_p99_ns", "Scheduling delay p99", Unit::Duration, -1},
    {"jain", "Jain's fairness index", Unit::Index, +1},
    {"gps_lag_max_ns", "GPS lag max", Unit::Duration, -1},
    {"migrations", "Migrations", Unit::Count, 0},
    {"forced_idle_ns", "Forced idle", Unit::Duration, -1},
    {"makespan_ns", "Makespan (workload)", Unit::Duration, -1},
};

// "sched_delay_mean_ns" -> "sched delay mean" for metrics the headline does not name.
QString metricLabel(const std::string& name) {
  QString s = QString::fromStdString(name);
  if (s.endsWith(QStringLiteral("_ns"))) s.chop(3);
  s.replace(u'_', u' ');
  if (!s.isEmpty()) s[0] = s[0].toUpper();
  return s;
}

QString formatValue(double v, Unit unit) {
  switch (unit) {
    case Unit::Duration: return dur(static_cast<int64_t>(std::llround(v)));
    case Unit::Count: return count(static_cast<uint64_t>(std::llround(std::max(0.0, v))));
    case Unit::Fraction: return pct(v);
    case Unit::Index: return jain(v);
  }
  return {};
}

// A change worth a reader's eye: 10% or more, on a value that is not noise.
bool significantChange(const MetricDelta& m, Unit unit) {
  const auto rel = m.relative();
  if (!rel || std::fabs(*rel) < 0.10) return false;
  switch (unit) {
    case Unit::Duration: return std::fabs(m.delta()) >= 1000;  // 1 µs
    case Unit::Count: return std::fabs(m.delta()) >= 5;
    case Unit::Fraction: return std::fabs(m.delta()) >= 0.01;
    case Unit::Index: return std::fabs(m.delta()) >= 0.01;
  }
  return false;
}

Tone toneOf(const MetricDelta& m, const MetricInfo& info) {
  if (!significantChange(m, info.unit)) return Tone::Normal;
  if (info.better == 0) return Tone::Strong;
  return (m.delta() > 0) == (info.better > 0) ? Tone::Better : Tone::Worse;
}

// The run-level metrics of a diff, plus the derived ones the headline needs.
std::vector<MetricDelta> headlineMetrics(const RunDiff& d, std::optional<std::pair<int64_t, int64_t>> makespan) {
  std::vector<MetricDelta> out = d.summary;
  out.push_back({"utilisation", utilisation(d.a.stats), utilisation(d.b.stats)});
  if (makespan)
    out.push_back({"makespan_ns", static_cast<double>(makespan->first), static_cast<double>(makespan->second)});
  return out;
}

struct Headline {
  const MetricInfo* info;
  MetricDelta m;
};
std::vector<Headline> headlines(const RunDiff& d, std::optional<std::pair<int64_t, int64_t>> makespan) {
  std::vector<Headline> out;
  const auto all = headlineMetrics(d, makespan);
  for (const MetricInfo& info : kHeadline) {
    for (const MetricDelta& m : all)
      if (m.name == info.name) {
        if (m.a == 0 && m.b == 0) continue;
        out.push_back({&info, m});
      }
  }
  std::stable_sort(out.begin(), out.end(), [](const Headline& x, const Headline& y) {
    const double rx = x.m.relative() ? std::fabs(*x.m.relative()) : (x.m.b != 0 ? 1e9 : 0);
    const double ry = y.m.relative() ? std::fabs(*y.m.relative()) : (y.m.b != 0 ? 1e9 : 0);
    return rx > ry;
  });
  return out;
}

Table headlineTable(const std::vector<Headline>& hs, const QString& tagA, const QString& tagB) {
  Table t;
  t.columns = {{QStringLiteral("Metric"), 3.0}, {tagA, 1.5, true}, {tagB, 1.5, true},
               {QStringLiteral("Change"), 1.2, true}};
  for (const Headline& h : hs) {
    const Tone tone = toneOf(h.m, *h.info);
    t.rows.push_back({Cell(QString::fromUtf8(h.info->label), tone == Tone::Normal ? Tone::Normal : Tone::Strong),
                      formatValue(h.m.a, h.info->unit), formatValue(h.m.b, h.info->unit),
                      Cell(signedPct(h.m.relative()), tone)});
  }
  t.note = QStringLiteral(
      "Sorted by the size of the relative change. Coloured: a change of 10% or more (red where it is worse for "
      "latency or fairness, green where better, bold where neither).");
  return t;
}

QString headlineSentence(const std::vector<Headline>& hs, const QString& what) {
  QStringList parts;
  for (const Headline& h : hs) {
    if (!significantChange(h.m, h.info->unit)) continue;
    parts << QStringLiteral("%1 %2 (%3 → %4)")
                 .arg(QString::fromUtf8(h.info->label), signedPct(h.m.relative()), formatValue(h.m.a, h.info->unit),
                      formatValue(h.m.b, h.info->unit));
    if (parts.size() == 4) break;
  }
  if (parts.isEmpty()) return QStringLiteral("%1: no run-level metric changed by 10% or more.").arg(what);
  return QStringLiteral("%1: %2.").arg(what, parts.join(QStringLiteral("; ")));
}

// ---- the sections ----

class Builder {
 public:
  explicit Builder(std::shared_ptr<const ReportData> data) : m_data(std::move(data)), m_d(*m_data) {}

  Document build() {
    m_doc.title = QStringLiteral("SchedLab report: ") + m_d.title;
    m_doc.subtitle = m_d.title;
    m_doc.dateText = QStringLiteral("Report date: ") + m_d.date.toString(QStringLiteral("yyyy-MM-dd HH:mm t"));
    titlePage();
    summary();
    tasks();
    fairness();
    latency();
    whySection();
    utilisationSection();
    userSlicesSection();
    smt();
    timelines();
    if (m_d.diff) diffSection();
    for (size_t i = m_d.recordings; i < m_d.runs.size(); ++i) replaySection(i);
    return std::move(m_doc);
  }

 private:
  const RunEntry& run(size_t i) const { return m_d.runs[i]; }
  Cell tagCell(const RunEntry& r) const { return Cell(r.tag, Tone::Strong, r.color); }

  QString rangeText() const {
    if (!m_d.spec.fromNs && !m_d.spec.toNs) return QStringLiteral("the whole of each run");
    return QStringLiteral("from %1 to %2 after each run's start")
        .arg(m_d.spec.fromNs ? dur(*m_d.spec.fromNs) : QStringLiteral("the start"),
             m_d.spec.toNs ? dur(*m_d.spec.toNs) : QStringLiteral("the end"));
  }

  void titlePage() {
    m_doc.title1(QStringLiteral("SchedLab report"));
    m_doc.paragraph(m_d.title, Tone::Strong);
    m_doc.paragraph(m_doc.dateText, Tone::Muted);
    QString what;
    if (m_d.recordings == 2)
      what = QStringLiteral("Compares two recorded runs, A and B, task by task and as a whole");
    else
      what = QStringLiteral("Describes one recorded run");
    if (m_d.runs.size() > m_d.recordings) {
      QStringList models;
      for (size_t i = m_d.recordings; i < m_d.runs.size(); ++i) models << m_d.runs[i].tag;
      what += QStringLiteral(", with replays of the workload through %1").arg(models.join(QStringLiteral(", ")));
    }
    m_doc.paragraph(what + QStringLiteral(". Statistics cover %1.").arg(rangeText()));

    m_doc.subheading(QStringLiteral("Runs"));
    Table runs;
    runs.columns = {{QStringLiteral("Run"), 1.3}, {QStringLiteral("Source"), 3.4, false, true},
                    {QStringLiteral("Format"), 1.5, false, true}, {QStringLiteral("Topology"), 1.9, false, true},
                    {QStringLiteral("Span"), 1.4, true}, {QStringLiteral("Events"), 1.0, true},
                    {QStringLiteral("Tasks"), 0.8, true}};
    for (const auto& r : m_d.runs) {
      const core::TraceModel& m = *r.model;
      QString source = r.isReplay() ? r.label
                                    : (m.sourceFiles.empty() ? r.label : QString::fromStdString(m.sourceFiles.front()));
      runs.rows.push_back({tagCell(r), source, QString::fromStdString(m.format),
                           QString::fromStdString(m.topology.describe()), dur(m.span()), count(m.eventCount),
                           count(m.taskCount())});
    }
    runs.note = QStringLiteral("Tasks: the threads seen in the whole run, the idle task not counted (as in every task table).");
    m_doc.table(std::move(runs));

    // Trace spans in the trace's own clock, and what the analysis covers.
    Table spans;
    spans.columns = {{QStringLiteral("Run"), 1.3}, {QStringLiteral("First event (s)"), 2, true},
                     {QStringLiteral("Last event (s)"), 2, true}, {QStringLiteral("Analysed"), 2.6, true}};
    for (const auto& r : m_d.runs) {
      const core::TraceModel& m = *r.model;
      spans.rows.push_back({tagCell(r), num(static_cast<double>(m.firstTs) / 1e9, 6),
                            num(static_cast<double>(m.lastTs) / 1e9, 6),
                            QStringLiteral("%1 .. %2")
                                .arg(dur(r.stats.range.from - r.origin), dur(r.stats.range.to - r.origin))});
    }
    m_doc.table(std::move(spans));

    machines();
    for (const auto& r : m_d.runs) {
      const core::TraceModel& m = *r.model;
      if (m.partial)
        m_doc.paragraph(QStringLiteral("%1 is partial: %2. Everything here covers what was readable only.")
                            .arg(r.tag, QString::fromStdString(m.partialReason)),
                        Tone::Warning);
      if (m.dataLoss.size() > 0)
        m_doc.paragraph(QStringLiteral("%1 lost events: %2; statistics across those ranges are uncertain.")
                            .arg(r.tag, QString::fromStdString(core::describeLostEvents(m))),
                        Tone::Warning);
    }
    m_doc.subheading(QStringLiteral("Contents"));
    m_doc.contents();
    m_doc.pageBreak();
  }

  void machines() {
    // Machines and kernels, where the trace says (replays run on no machine).
    static const char* const preferred[] = {"hostname", "osrelease", "kernel_release", "kernel", "kernel_version",
                                            "sysname", "machine", "arch", "cmdline", "nrcpus", "nrcpus_avail",
                                            "clock", "tracer", "recorder"};
    std::vector<std::string> keys;
    std::set<std::string> seen;
    for (const char* k : preferred)
      for (size_t i = 0; i < m_d.recordings; ++i)
        if (run(i).model->metadata.count(k) && seen.insert(k).second) keys.push_back(k);
    for (size_t i = 0; i < m_d.recordings; ++i)
      for (const auto& [k, v] : run(i).model->metadata)
        if (seen.insert(k).second) keys.push_back(k);
    m_doc.subheading(QStringLiteral("Machines and kernels"));
    if (keys.empty()) {
      m_doc.paragraph(QStringLiteral("The recordings name no machine or kernel (ftrace text keeps neither)."),
                      Tone::Muted);
      return;
    }
    Table t;
    t.columns.push_back({QStringLiteral("Property"), 1.6});
    for (size_t i = 0; i < m_d.recordings; ++i) t.columns.push_back({run(i).tag, 3.0, false, true});
    for (const auto& k : keys) {
      std::vector<Cell> row{Cell(QString::fromStdString(k), Tone::Muted)};
      for (size_t i = 0; i < m_d.recordings; ++i) {
        const auto& md = run(i).model->metadata;
        auto it = md.find(k);
        row.emplace_back(it == md.end() ? QStringLiteral("–") : QString::fromStdString(it->second));
      }
      t.rows.push_back(std::move(row));
    }
    m_doc.table(std::move(t));
  }

  Table keyNumbers() const {
    Table t;
    t.columns.push_back({QStringLiteral("Metric"), 2.6});
    for (const auto& r : m_d.runs) t.columns.push_back({r.tag, 1.3, true});
    auto row = [&](const QString& name, auto&& value) {
      std::vector<Cell> cells{Cell(name)};
      for (const auto& r : m_d.runs) cells.emplace_back(value(r));
      t.rows.push_back(std::move(cells));
    };
    row(QStringLiteral("Analysed span"), [](const RunEntry& r) { return dur(r.stats.coveredNs); });
    row(QStringLiteral("CPUs"), [](const RunEntry& r) { return QString::number(r.stats.cpus.size()); });
    row(QStringLiteral("Busy CPU time"), [](const RunEntry& r) { return dur(r.stats.busyNs); });
    row(QStringLiteral("CPU utilisation"), [](const RunEntry& r) { return pct(utilisation(r.stats)); });
    row(QStringLiteral("Tasks"), [](const RunEntry& r) { return count(r.stats.tasks.size()); });
    row(QStringLiteral("Voluntary switches"), [](const RunEntry& r) { return count(r.stats.switchesVoluntary); });
    row(QStringLiteral("Involuntary switches"), [](const RunEntry& r) { return count(r.stats.switchesInvoluntary); });
    row(QStringLiteral("Involuntary fraction"), [](const RunEntry& r) { return pct(involuntaryFraction(r.stats)); });
    row(QStringLiteral("Migrations"), [](const RunEntry& r) { return count(r.stats.migrations); });
    row(QStringLiteral("Wakeups (latency samples)"), [](const RunEntry& r) { return count(r.stats.wakeupLatency.count); });
    row(QStringLiteral("Wakeup latency mean"), [](const RunEntry& r) { return dur(std::llround(r.stats.wakeupLatency.mean)); });
    row(QStringLiteral("Wakeup latency p50"), [](const RunEntry& r) { return dur(r.stats.wakeupLatency.p50); });
    row(QStringLiteral("Wakeup latency p90"), [](const RunEntry& r) { return dur(r.stats.wakeupLatency.p90); });
    row(QStringLiteral("Wakeup latency p99"), [](const RunEntry& r) { return dur(r.stats.wakeupLatency.p99); });
    row(QStringLiteral("Wakeup latency max"), [](const RunEntry& r) { return dur(r.stats.wakeupLatency.max); });
    row(QStringLiteral("Scheduling delay p50"), [](const RunEntry& r) { return dur(r.stats.schedDelay.p50); });
    row(QStringLiteral("Scheduling delay p99"), [](const RunEntry& r) { return dur(r.stats.schedDelay.p99); });
    row(QStringLiteral("Jain's fairness index"), [](const RunEntry& r) { return jain(r.stats.fairness.jain); });
    row(QStringLiteral("Competing tasks"), [](const RunEntry& r) { return count(r.stats.fairness.competingTasks); });
    row(QStringLiteral("GPS lag max"), [](const RunEntry& r) { return dur(r.stats.fairness.gpsLagMaxNs); });
    row(QStringLiteral("GPS lag mean"), [](const RunEntry& r) { return dur(r.stats.fairness.gpsLagMeanNs); });
    bool anyForced = false;
    for (const auto& r : m_d.runs) anyForced |= r.stats.forcedIdleNs > 0;
    if (anyForced) row(QStringLiteral("Forced idle"), [](const RunEntry& r) { return dur(r.stats.forcedIdleNs); });
    bool anyReplay = m_d.runs.size() > m_d.recordings;
    if (anyReplay)
      row(QStringLiteral("Makespan (workload)"), [](const RunEntry& r) -> QString {
        if (!r.replay || !r.replay->validation) return QStringLiteral("–");
        return dur(r.replay->validation->makespanReplayNs);
      });
    if (anyReplay) {
      // The recorded makespan sits in each replay's validation block.
      for (size_t i = m_d.recordings; i < m_d.runs.size(); ++i) {
        const auto& v = run(i).replay->validation;
        if (v && v->makespanRecordedNs >= 0) t.rows.back()[1 + run(i).recording] = Cell(dur(v->makespanRecordedNs));
      }
    }
    return t;
  }

  void summary() {
    m_doc.heading(QStringLiteral("Summary"));
    if (m_d.diff) {
      const auto hs = headlines(*m_d.diff, std::nullopt);
      m_doc.paragraph(headlineSentence(hs, QStringLiteral("B against A")), Tone::Strong);
      // The tasks whose CPU time moved most, by name.
      QStringList moved;
      for (const auto& t : m_d.diff->tasks) {
        if (moved.size() == 3) break;
        const auto rel = t.metrics[0].relative();
        if (!t.a || !t.b) continue;
        moved << QStringLiteral("%1 %2 (%3 → %4 ms)")
                     .arg(QString::fromStdString(t.comm), signedPct(rel), ms(t.a->runtimeNs), ms(t.b->runtimeNs));
      }
      if (!moved.isEmpty())
        m_doc.paragraph(QStringLiteral("Largest CPU-time changes of tasks present in both runs: %1.")
                            .arg(moved.join(QStringLiteral("; "))));
      m_doc.subheading(QStringLiteral("Headline changes: B against A"));
      m_doc.table(headlineTable(hs, QStringLiteral("A"), QStringLiteral("B")));
    }
    for (size_t k = 0; k < m_d.replayDiffs.size(); ++k) {
      const RunEntry& rep = run(m_d.recordings + k);
      const auto& v = rep.replay->validation;
      std::optional<std::pair<int64_t, int64_t>> mk;
      if (v && v->makespanRecordedNs >= 0) mk = std::make_pair(v->makespanRecordedNs, v->makespanReplayNs);
      m_doc.paragraph(headlineSentence(headlines(m_d.replayDiffs[k], mk),
                                       QStringLiteral("Replay %1 against %2").arg(rep.tag, run(rep.recording).tag)));
    }
    m_doc.subheading(QStringLiteral("Key numbers"));
    m_doc.table(keyNumbers());
    m_doc.paragraph(QStringLiteral(
                        "Wakeup latency: from the wakeup (sched_waking) to the task's next switch-in, for wakeups of "
                        "sleeping tasks. Scheduling delay: from any runnable start (wakeup or preemption) to the "
                        "switch-in. Voluntary switches: the task left the CPU not runnable; involuntary: preempted "
                        "while still runnable."),
                    Tone::Muted);
  }

  void taskTable(const RunEntry& r) {
    std::vector<const TaskStats*> rows;
    for (const auto& t : r.stats.tasks) rows.push_back(&t);
    std::stable_sort(rows.begin(), rows.end(),
                     [](const TaskStats* a, const TaskStats* b) { return a->runtimeNs > b->runtimeNs; });
    Table t;
    t.dense = true;
    t.columns = {{QStringLiteral("Task"), 2.6},          {QStringLiteral("tid"), 0.9, true},
                 {QStringLiteral("prio"), 0.6, true},    {QStringLiteral("runtime ms"), 1.3, true},
                 {QStringLiteral("share"), 0.9, true},   {QStringLiteral("wait ms"), 1.2, true},
                 {QStringLiteral("vol"), 0.9, true},     {QStringLiteral("invol"), 0.9, true},
                 {QStringLiteral("migr"), 0.7, true},    {QStringLiteral("lat p50 µs"), 1.1, true},
                 {QStringLiteral("lat p99 µs"), 1.1, true}, {QStringLiteral("delay p99 µs"), 1.2, true}};
    const size_t n = std::min(rows.size(), m_d.spec.topTasks);
    for (size_t i = 0; i < n; ++i) {
      const TaskStats& s = *rows[i];
      t.rows.push_back({Cell(QString::fromStdString(s.comm), Tone::Normal, render::taskColor(s.comm, s.tid)),
                        QString::number(s.tid),
                        s.prio != core::kPrioUnknown ? QString::number(s.prio) : QStringLiteral("–"),
                        ms(s.runtimeNs), pct(s.cpuShare), ms(s.waitNs), count(s.switchesVoluntary),
                        count(s.switchesInvoluntary), count(s.migrations),
                        s.wakeupLatency.count ? us(static_cast<double>(s.wakeupLatency.p50)) : QStringLiteral("–"),
                        s.wakeupLatency.count ? us(static_cast<double>(s.wakeupLatency.p99)) : QStringLiteral("–"),
                        s.schedDelay.count ? us(static_cast<double>(s.schedDelay.p99)) : QStringLiteral("–")});
    }
    t.note = QStringLiteral("%1 of %2 tasks, by CPU time. share: runtime / analysed span (one CPU = 100%).")
                 .arg(n)
                 .arg(rows.size());
    m_doc.subheading(QStringLiteral("%1: %2").arg(r.tag, r.label));
    m_doc.table(std::move(t));
  }

  void tasks() {
    m_doc.heading(QStringLiteral("Tasks"));
    for (const auto& r : m_d.runs) taskTable(r);
  }

  void fairness() {
    m_doc.heading(QStringLiteral("Fairness"));
    Table t;
    t.columns = {{QStringLiteral("Run"), 1.4},
                 {QStringLiteral("Jain's index"), 1.2, true},
                 {QStringLiteral("competing tasks"), 1.3, true},
                 {QStringLiteral("GPS lag max"), 1.3, true},
                 {QStringLiteral("GPS lag mean"), 1.3, true},
                 {QStringLiteral("utilisation"), 1.1, true}};
    for (const auto& r : m_d.runs)
      t.rows.push_back({tagCell(r), Cell(jain(r.stats.fairness.jain), Tone::Strong),
                        count(r.stats.fairness.competingTasks), dur(r.stats.fairness.gpsLagMaxNs),
                        dur(r.stats.fairness.gpsLagMeanNs), pct(utilisation(r.stats))});
    m_doc.table(std::move(t));
    m_doc.paragraph(QStringLiteral(
                        "Both judge each fair-class task against its ideal service: what a fluid weighted-fair "
                        "scheduler would have given it, sharing the CPUs that RT and deadline tasks leave by weight "
                        "among the tasks with work left, within each task's CPU affinity, at most one CPU each, and "
                        "serving each burst the CPU time it took. Jain's index over the service / ideal service of the "
                        "competing tasks (those that waited, or got less than a CPU in the ideal): 1 is weight-fair, "
                        "1/n is one task served. GPS lag: ideal minus received service; per task the largest |lag| "
                        "over time."),
                    Tone::Muted);

    // CPU time of the busiest task names, side by side across the runs.
    std::map<std::string, std::vector<double>> byComm;
    for (size_t i = 0; i < m_d.runs.size(); ++i)
      for (const auto& ts : m_d.runs[i].stats.tasks) {
        auto& v = byComm[ts.comm];
        v.resize(m_d.runs.size(), 0.0);
        v[i] += static_cast<double>(ts.runtimeNs) / 1e6;
      }
    std::vector<std::pair<std::string, std::vector<double>>> ranked(byComm.begin(), byComm.end());
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
      return *std::max_element(a.second.begin(), a.second.end()) > *std::max_element(b.second.begin(), b.second.end());
    });
    if (ranked.size() > 8) ranked.resize(8);
    auto chart = std::make_shared<render::BarChart>();
    chart->title = QStringLiteral("CPU time of the busiest task names (ms, tasks of one name summed)");
    for (const auto& [comm, values] : ranked) chart->categories << QString::fromStdString(comm);
    for (size_t i = 0; i < m_d.runs.size(); ++i) {
      render::BarSeries s{m_d.runs[i].tag, m_d.runs[i].color, {}, {}};
      for (const auto& [comm, values] : ranked) s.values.push_back(values[i]);
      chart->series.push_back(std::move(s));
    }
    chart->formatValue = [](double v) { return QString::number(v, 'f', v >= 100 ? 0 : 1); };
    chart->valueLabels = m_d.runs.size() <= 3;
    Figure f;
    f.aspect = 0.36;
    f.caption = QStringLiteral("CPU time per task name and run: how the workload's CPU was shared.");
    f.alt = chart->title;
    f.paint = [chart](QPainter& p, const QRectF& rect) { render::paintBarChart(p, rect, *chart); };
    m_doc.figure(std::move(f));
  }

  void latencyTable(const QString& what, const core::analysis::Distribution RunStats::*member) {
    Table t;
    t.columns = {{QStringLiteral("Run"), 1.4},         {QStringLiteral("samples"), 1.1, true},
                 {QStringLiteral("mean"), 1.2, true},  {QStringLiteral("p50"), 1.2, true},
                 {QStringLiteral("p90"), 1.2, true},   {QStringLiteral("p99"), 1.2, true},
                 {QStringLiteral("max"), 1.2, true}};
    for (const auto& r : m_d.runs) {
      const auto& dist = r.stats.*member;
      t.rows.push_back({tagCell(r), count(dist.count), dur(std::llround(dist.mean)), dur(dist.p50), dur(dist.p90),
                        dur(dist.p99), dur(dist.max)});
    }
    t.note = what;
    m_doc.table(std::move(t));
  }

  void cdfFigure(const QString& title, const QString& xLabel, const core::analysis::Distribution RunStats::*member) {
    auto chart = std::make_shared<render::CdfChart>();
    chart->title = title;
    chart->xLabel = xLabel;
    for (const auto& r : m_d.runs) {
      const auto& dist = r.stats.*member;
      chart->series.push_back({r.tag, r.color, std::span<const int64_t>(dist.sorted)});
    }
    Figure f;
    f.aspect = 0.42;
    f.alt = title;
    f.caption = QStringLiteral("%1: fraction of samples at or below each value, one line per run.").arg(title);
    // The chart points into the stats held by the report data, which the figure keeps alive.
    f.paint = [chart, keep = m_data](QPainter& p, const QRectF& rect) { render::paintCdfChart(p, rect, *chart); };
    m_doc.figure(std::move(f));
  }

  void latency() {
    m_doc.heading(QStringLiteral("Latency"));
    cdfFigure(QStringLiteral("Wakeup latency CDF"), QStringLiteral("wakeup latency"), &RunStats::wakeupLatency);
    latencyTable(QStringLiteral("Wakeup latency: waking → running."), &RunStats::wakeupLatency);
    cdfFigure(QStringLiteral("Scheduling delay CDF"), QStringLiteral("scheduling delay"), &RunStats::schedDelay);
    latencyTable(QStringLiteral("Scheduling delay: runnable (woken or preempted) → running."), &RunStats::schedDelay);
  }

  // Per run, the tasks that waited longest: where their time went and why they
  // waited (core/analysis/why.h; README "Why a task waited, defined").
  void whySection() {
    m_doc.heading(QStringLiteral("Why tasks waited"));
    m_doc.paragraph(QStringLiteral(
        "The tasks that were runnable the longest in each run. Antagonists: who ran on the CPUs the task could use "
        "while it waited (CPU time, summed over CPUs). Idle while runnable: the time it waited behind another task "
        "while a CPU it could use was idle. Critical path: from the task's end back through its wakeup chain; the "
        "tasks it passes through, by time on it."));
    for (const auto& r : m_d.runs) {
      if (r.why.empty()) continue;
      const core::TraceModel& m = *r.model;
      const auto name = [&](core::Utid u) {
        if (!u.isValid()) return QStringLiteral("<irq>");
        return QStringLiteral("%1 (%2)").arg(QString::fromUtf8(m.comm(u).data(), static_cast<int>(m.comm(u).size())))
            .arg(m.threads.tid[u.value]);
      };
      Table t;
      t.dense = true;
      t.columns = {{QStringLiteral("Task"), 1.6, false, true}, {QStringLiteral("Running"), 0.9, true},
                   {QStringLiteral("Runnable"), 0.9, true}, {QStringLiteral("Asleep"), 0.9, true},
                   {QStringLiteral("Idle while runnable"), 0.9, true},
                   {QStringLiteral("Top antagonists"), 2.4, false, true}, {QStringLiteral("Top wakers"), 1.8, false, true},
                   {QStringLiteral("Critical path through"), 2.2, false, true}};
      for (const auto& w : r.why) {
        QStringList antagonists, wakers, path;
        for (size_t i = 0; i < w.antagonists.size() && i < 3; ++i)
          antagonists << QStringLiteral("%1 %2").arg(name(w.antagonists[i].utid), dur(w.antagonists[i].ns));
        for (size_t i = 0; i < w.wakers.size() && i < 2; ++i)
          wakers << QStringLiteral("%1 \u00d7%2").arg(name(w.wakers[i].utid)).arg(w.wakers[i].count);
        std::map<uint32_t, int64_t> onPath;
        for (const auto& s : w.criticalPath.segments) onPath[s.utid.value] += s.length();
        std::vector<std::pair<int64_t, uint32_t>> byTime;
        for (const auto& [u, ns] : onPath) byTime.emplace_back(ns, u);
        std::sort(byTime.rbegin(), byTime.rend());
        for (size_t i = 0; i < byTime.size() && i < 3; ++i)
          path << QStringLiteral("%1 %2").arg(name(core::Utid(byTime[i].second)), dur(byTime[i].first));
        t.rows.push_back({name(w.utid), dur(w.runningNs), dur(w.runnableNs), dur(w.sleepingNs + w.blockedNs),
                          dur(w.idleWhileRunnableNs), antagonists.join(QStringLiteral(", ")),
                          wakers.join(QStringLiteral(", ")), path.join(QStringLiteral(", "))});
      }
      t.note = QStringLiteral("Run %1; idle while runnable over the whole run: %2.").arg(r.tag, dur(r.stats.idleWhileRunnableNs));
      m_doc.subheading(QStringLiteral("%1: %2").arg(r.tag, r.label));
      m_doc.table(std::move(t));
    }
  }

  // The categories of the per-CPU figures and tables: each CPU, or on a big
  // machine the groups of the topology of the run with the most CPUs.
  render::CpuCategories cpuCategories() const {
    std::vector<render::CpuRun> runs;
    for (const auto& r : m_d.runs) runs.push_back({&r.model->topology, &r.stats.cpus});
    return render::cpuCategoriesOf(runs);
  }

  // "41.2% (12.0–88.1%)": a group's median with its range; a CPU's value alone.
  static QString spreadText(const render::Spread& sp, const std::function<QString(double)>& format) {
    if (sp.count == 0) return QStringLiteral("–");
    if (sp.count == 1) return format(sp.median);
    return QStringLiteral("%1 (%2\u2013%3)").arg(format(sp.median), format(sp.min), format(sp.max));
  }

  void utilisationSection() {
    m_doc.heading(QStringLiteral("CPU utilisation"));
    const render::CpuCategories categories = cpuCategories();
    auto busy = [](const core::analysis::CpuStats& c) { return 100.0 * c.utilisation; };
    auto chart = std::make_shared<render::BarChart>();
    chart->title = categories.grouped()
                       ? QStringLiteral("Busy time of the CPUs of each %1 (% of the analysed span)").arg(categories.level)
                       : QStringLiteral("Busy time per CPU (% of the analysed span)");
    for (const auto& label : categories.labels) chart->categories << label;
    std::vector<std::vector<render::Spread>> busyOf, switchesOf;
    for (const auto& r : m_d.runs) {
      busyOf.push_back(render::spreadsByCategory(categories, r.stats.cpus, busy));
      switchesOf.push_back(render::spreadsByCategory(
          categories, r.stats.cpus, [](const core::analysis::CpuStats& c) { return static_cast<double>(c.switches); }));
      render::BarSeries s{r.tag, r.color, {}, {}};
      if (categories.grouped()) {
        s.spreads = busyOf.back();
      } else {
        for (const auto& sp : busyOf.back()) s.values.push_back(sp.count ? sp.median : std::nan(""));
      }
      chart->series.push_back(std::move(s));
    }
    chart->maxValue = 100;
    chart->scale = render::BarScale::Linear;  // shares of one CPU read as parts of a whole
    chart->formatValue = [](double v) { return QString::number(v, 'f', 0); };
    chart->valueLabels = !categories.grouped() && categories.labels.size() * m_d.runs.size() <= 24;
    Figure f;
    f.aspect = 0.34;
    f.alt = chart->title;
    f.caption = categories.grouped()
                    ? QStringLiteral("Per-CPU utilisation (non-idle time over the analysed span) of the CPUs of each %1: "
                                     "the box spans the middle half of its CPUs, the line is their median, the whiskers "
                                     "reach the least and the most busy CPU.")
                          .arg(categories.level)
                    : QStringLiteral("Per-CPU utilisation: non-idle time over the analysed span.");
    f.paint = [chart](QPainter& p, const QRectF& rect) { render::paintBarChart(p, rect, *chart); };
    m_doc.figure(std::move(f));

    Table t;
    t.dense = true;
    t.columns = {{categories.grouped() ? categories.level : QStringLiteral("CPU"), 0.8}};
    if (categories.grouped()) t.columns.push_back({QStringLiteral("CPUs"), 1.4});
    for (const auto& r : m_d.runs) {
      t.columns.push_back({r.tag + (categories.grouped() ? QStringLiteral(" busy, median (range)") : QStringLiteral(" busy")),
                           categories.grouped() ? 2.0 : 1.2, true});
      t.columns.push_back({r.tag + QStringLiteral(" switches"), 1.2, true});
    }
    for (size_t g = 0; g < categories.cpus.size(); ++g) {
      std::vector<Cell> row{categories.grouped() ? categories.labels[g].section(QLatin1Char(' '), 1)
                                                 : QString::number(categories.cpus[g].front())};
      if (categories.grouped()) row.emplace_back(render::cpuListText(categories.cpus[g]));
      for (size_t i = 0; i < m_d.runs.size(); ++i) {
        const render::Spread& b = busyOf[i][g];
        const render::Spread& sw = switchesOf[i][g];
        row.emplace_back(spreadText(b, [](double v) { return pct(v / 100.0); }));
        // A group's switches are its CPUs' sum.
        row.emplace_back(sw.count ? count(static_cast<uint64_t>(std::llround(sw.mean * sw.count))) : QStringLiteral("–"));
      }
      t.rows.push_back(std::move(row));
    }
    m_doc.table(std::move(t));
  }

  // The atrace equivalent of a latency table: time in each user-space slice
  // name, per recording that has them (replays do not replay trace_marker writes).
  void userSlicesSection() {
    bool any = false;
    for (const auto& r : m_d.runs) any |= !r.stats.userSlices.empty();
    if (!any) return;
    m_doc.heading(QStringLiteral("User-space slices"));
    constexpr size_t kShown = 20;
    for (const auto& r : m_d.runs) {
      if (r.stats.userSlices.empty()) continue;
      Table t;
      t.dense = true;
      t.columns = {{QStringLiteral("Slice"), 3.0},      {QStringLiteral("count"), 0.9, true},
                   {QStringLiteral("total"), 1.1, true}, {QStringLiteral("p50"), 1.0, true},
                   {QStringLiteral("p99"), 1.0, true},   {QStringLiteral("max"), 1.0, true},
                   {QStringLiteral("open"), 0.7, true}};
      for (size_t i = 0; i < r.stats.userSlices.size() && i < kShown; ++i) {
        const auto& u = r.stats.userSlices[i];
        t.rows.push_back({QString::fromStdString(u.name), count(u.count), dur(u.totalNs), dur(u.p50Ns), dur(u.p99Ns),
                          dur(u.maxNs), count(u.open)});
      }
      t.note = QStringLiteral(
                   "Run %1: %2 slice names, the %3 with the most time shown. atrace B/E and S/F slices that began in "
                   "the range, by name over all tasks; open: no end traced (not in the durations).")
                   .arg(r.tag)
                   .arg(r.stats.userSlices.size())
                   .arg(std::min(kShown, r.stats.userSlices.size()));
      m_doc.subheading(QStringLiteral("%1: %2").arg(r.tag, r.label));
      m_doc.table(std::move(t));
    }
  }

  void smt() {
    bool applies = false;
    for (const auto& r : m_d.runs) applies |= r.model->topology.hasSmt() || r.stats.forcedIdleNs > 0;
    if (!applies) return;
    m_doc.heading(QStringLiteral("SMT and forced idle"));
    m_doc.paragraph(QStringLiteral(
        "Forced idle: a CPU kept idle by core scheduling while its SMT sibling ran a task of another cookie. "
        "forceidle_sum (as in mainline's core_forceidle_sum): time a task ran while a sibling was forced idle."));
    for (const auto& r : m_d.runs) {
      const core::Topology& topo = r.model->topology;
      Table t;
      t.dense = true;
      const render::CpuCategories categories = render::cpuCategoriesOf({{&topo, &r.stats.cpus}});
      if (categories.grouped()) {
        // A big machine: one row per group, forced idle summed over its CPUs.
        t.columns = {{categories.level, 0.7},
                     {QStringLiteral("CPUs"), 1.4},
                     {QStringLiteral("busy, median (range)"), 2.0, true},
                     {QStringLiteral("forced idle"), 1.3, true},
                     {QStringLiteral("forced idle %"), 1.2, true}};
        const auto busy = render::spreadsByCategory(categories, r.stats.cpus,
                                                    [](const core::analysis::CpuStats& c) { return c.utilisation; });
        const auto forced = render::spreadsByCategory(
            categories, r.stats.cpus, [](const core::analysis::CpuStats& c) { return static_cast<double>(c.forcedIdleNs); });
        for (size_t g = 0; g < categories.cpus.size(); ++g) {
          const auto forcedNs = static_cast<int64_t>(std::llround(forced[g].mean * forced[g].count));
          const double span = static_cast<double>(r.stats.coveredNs) * forced[g].count;
          t.rows.push_back({categories.labels[g].section(QLatin1Char(' '), 1), render::cpuListText(categories.cpus[g]),
                            spreadText(busy[g], [](double v) { return pct(v); }),
                            Cell(dur(forcedNs), forcedNs > 0 ? Tone::Strong : Tone::Normal),
                            pct(span > 0 ? static_cast<double>(forcedNs) / span : 0.0)});
        }
      } else {
        t.columns = {{QStringLiteral("CPU"), 0.7},          {QStringLiteral("core"), 0.7},
                     {QStringLiteral("siblings"), 1.2},     {QStringLiteral("busy"), 1.0, true},
                     {QStringLiteral("forced idle"), 1.3, true}, {QStringLiteral("forced idle %"), 1.2, true}};
        for (const auto& cs : r.stats.cpus) {
          const auto* info = topo.cpu(cs.cpu);
          QStringList sib;
          for (int s : topo.siblingsOf(cs.cpu)) sib << QString::number(s);
          const double share =
              r.stats.coveredNs > 0 ? static_cast<double>(cs.forcedIdleNs) / static_cast<double>(r.stats.coveredNs) : 0.0;
          t.rows.push_back({QString::number(cs.cpu), info ? QString::number(info->core) : QStringLiteral("–"),
                            sib.isEmpty() ? QStringLiteral("–") : sib.join(QStringLiteral(", ")), pct(cs.utilisation),
                            Cell(dur(cs.forcedIdleNs), cs.forcedIdleNs > 0 ? Tone::Strong : Tone::Normal), pct(share)});
        }
      }
      m_doc.subheading(QStringLiteral("%1: %2 (%3)").arg(r.tag, r.label, QString::fromStdString(topo.describe())));
      m_doc.table(std::move(t));
      std::vector<const TaskStats*> fi;
      for (const auto& ts : r.stats.tasks)
        if (ts.forceidleSumNs > 0) fi.push_back(&ts);
      std::stable_sort(fi.begin(), fi.end(),
                       [](const TaskStats* a, const TaskStats* b) { return a->forceidleSumNs > b->forceidleSumNs; });
      if (fi.empty()) continue;
      Table ft;
      ft.columns = {{QStringLiteral("Task"), 2.5}, {QStringLiteral("tid"), 1, true},
                    {QStringLiteral("runtime"), 1.3, true}, {QStringLiteral("forceidle_sum"), 1.4, true}};
      for (size_t i = 0; i < std::min<size_t>(fi.size(), 15); ++i)
        ft.rows.push_back({Cell(QString::fromStdString(fi[i]->comm), Tone::Normal, render::taskColor(fi[i]->comm, fi[i]->tid)),
                           QString::number(fi[i]->tid), dur(fi[i]->runtimeNs), dur(fi[i]->forceidleSumNs)});
      ft.note = QStringLiteral("Tasks that ran while a sibling was forced idle, largest first.");
      m_doc.table(std::move(ft));
    }
  }

  void timelines() {
    m_doc.pageBreak();
    m_doc.heading(QStringLiteral("Timelines"));
    m_doc.paragraph(QStringLiteral(
        "One row per CPU (grouped by core, SMT siblings adjacent), slices coloured by task (a task keeps its "
        "colour in every run). The zoomed view is each run's busiest window: the stretch with the most switch-ins. "
        "Above 64 CPUs an overview heat map heads each view: every CPU's busy share over the whole run, the "
        "view's range framed."));
    Figure legend;
    legend.aspect = legendAspect();
    legend.alt = QStringLiteral("legend");
    legend.rasterWidthPx = 2200;
    legend.rasterDpi = kTimelineDpi;
    legend.paint = [](QPainter& p, const QRectF& rect) { paintTimelineLegend(p, rect); };
    m_doc.figure(std::move(legend));
    // The whole-range views share one time scale, so runs and replays line up.
    int64_t commonTo = 0;
    for (const auto& r : m_d.runs) commonTo = std::max(commonTo, r.stats.range.to - r.origin);
    for (const auto& r : m_d.runs) {
      auto data = render::RunRenderData::create(r.model, r.origin);
      const int64_t from = r.stats.range.from - r.origin;
      const int64_t to = r.stats.range.to - r.origin;
      const int64_t span = to - from;
      const int64_t len = std::max<int64_t>(1000, std::max(span / 100, std::min<int64_t>(span / 10, 2'000'000)));
      const int64_t zoomFrom = busiestWindow(*r.model, r.origin, from, to, len);
      m_doc.subheading(QStringLiteral("%1: %2").arg(r.tag, r.label));
      TimelineFigure whole{data, from, std::max(to, commonTo), QStringLiteral("%1 · whole range").arg(r.tag)};
      TimelineFigure zoom{data, zoomFrom, zoomFrom + len, QStringLiteral("%1 · busiest window").arg(r.tag)};
      for (const auto& tf : {whole, zoom}) {
        Figure f;
        f.aspect = timelineAspect(tf);
        f.alt = tf.title;
        f.caption = QStringLiteral("%1: %2 to %3").arg(tf.title, dur(tf.from), dur(tf.to));
        f.rasterWidthPx = 2200;
        f.rasterDpi = kTimelineDpi;
        f.paint = [tf](QPainter& p, const QRectF& rect) { paintTimelineFigure(p, rect, tf); };
        m_doc.figure(std::move(f));
      }
    }
  }

  void diffSection() {
    const RunDiff& df = *m_d.diff;
    m_doc.pageBreak();
    m_doc.heading(QStringLiteral("Differences: B against A"));
    m_doc.paragraph(QStringLiteral("A: %1 · B: %2. Tasks are matched by comm within their process (tids differ "
                                   "between runs); several tasks of one name in a process are summed.")
                        .arg(run(0).label, run(1).label));
    Table s;
    s.dense = true;
    s.columns = {{QStringLiteral("Metric"), 2.6}, {QStringLiteral("A"), 1.4, true}, {QStringLiteral("B"), 1.4, true},
                 {QStringLiteral("B − A"), 1.4, true}, {QStringLiteral("change"), 1.0, true}};
    for (const auto& m : df.summary) {
      const MetricInfo* info = nullptr;
      for (const auto& k : kHeadline)
        if (m.name == k.name) info = &k;
      const Unit unit = info ? info->unit : (m.name.find("_ns") != std::string::npos ? Unit::Duration : Unit::Count);
      const MetricInfo fallback{"", "", unit, 0};
      const Tone tone = toneOf(m, info ? *info : fallback);
      const QString delta = unit == Unit::Duration ? dur(std::llround(m.delta()))
                            : unit == Unit::Fraction ? num(100 * m.delta(), 1) + QStringLiteral(" pt")
                            : unit == Unit::Index   ? num(m.delta(), 4)
                                                    : num(m.delta(), 0);
      const QString name = info ? QString::fromUtf8(info->label) : metricLabel(m.name);
      s.rows.push_back({name, formatValue(m.a, unit), formatValue(m.b, unit), delta, Cell(signedPct(m.relative()), tone)});
    }
    for (const auto& m : df.cpus)
      s.rows.push_back({QString::fromStdString(m.name), pct(m.a), pct(m.b), num(100 * m.delta(), 1) + QStringLiteral(" pt"),
                        signedPct(m.relative())});
    for (const auto& m : df.frequencies)
      s.rows.push_back({QString::fromStdString(m.name).replace(QStringLiteral(" mean_freq_mhz"), QStringLiteral(" mean MHz")),
                        num(m.a, 0), num(m.b, 0), num(m.delta(), 0), signedPct(m.relative())});
    m_doc.subheading(QStringLiteral("Run metrics"));
    m_doc.table(std::move(s));
    m_doc.paragraph(QStringLiteral("Kolmogorov–Smirnov distance between the two runs' distributions (largest gap "
                                   "between the CDFs, 0..1): wakeup latency %1, scheduling delay %2.")
                        .arg(num(df.wakeupLatencyKs, 3), num(df.schedDelayKs, 3)));

    // A process column only when it says more than the comm (ftrace text rarely knows the tgid).
    bool processes = false;
    for (const auto& td : df.tasks) processes |= td.process != td.comm;
    Table t;
    t.dense = true;
    if (processes) t.columns.push_back({QStringLiteral("Process"), 1.6});
    const std::vector<Column> cols = {
        {QStringLiteral("Comm"), 1.8},           {QStringLiteral("n A/B"), 0.95, true},
        {QStringLiteral("run A ms"), 1.15, true}, {QStringLiteral("run B ms"), 1.15, true},
        {QStringLiteral("Δrun"), 0.95, true},     {QStringLiteral("Δwait"), 0.95, true},
        {QStringLiteral("vol A"), 0.85, true},    {QStringLiteral("vol B"), 0.85, true},
        {QStringLiteral("invol A"), 0.85, true},  {QStringLiteral("invol B"), 0.85, true},
        {QStringLiteral("lat p99 A"), 1.25, true}, {QStringLiteral("lat p99 B"), 1.25, true},
        {QStringLiteral("KS lat"), 0.6, true}};
    t.columns.insert(t.columns.end(), cols.begin(), cols.end());
    const int64_t rangeNs = core::analysis::diffRangeNs(df);
    size_t shown = 0, significant = 0;
    for (const auto& td : df.tasks) {
      const TaskStats none;
      const TaskStats& a = td.a ? *td.a : none;
      const TaskStats& b = td.b ? *td.b : none;
      const MetricDelta& run = td.metrics[0];
      const MetricDelta& wait = td.metrics[1];
      // The Diff tab's rule (core/analysis/diff.h), so both count the same tasks.
      const bool bigRun = core::analysis::taskMetricSignificant(td, core::analysis::diffTaskMetrics()[0], rangeNs);
      const bool bigKs = core::analysis::taskLatencyShapeSignificant(td);
      const bool sig = core::analysis::taskSignificant(td, rangeNs);
      significant += sig ? 1 : 0;
      if (shown >= m_d.spec.topDiffTasks) continue;
      ++shown;
      const Tone tone = sig ? Tone::Strong : Tone::Normal;
      QString rel = signedPct(run.relative());
      if (!td.a) rel = QStringLiteral("new");
      if (!td.b) rel = QStringLiteral("gone");
      auto lat = [](const TaskStats& x) { return x.wakeupLatency.count ? dur(x.wakeupLatency.p99) : QStringLiteral("–"); };
      std::vector<Cell> row;
      if (processes) row.emplace_back(QString::fromStdString(td.process), tone);
      const std::vector<Cell> cells = {
          Cell(QString::fromStdString(td.comm), tone, render::taskColor(td.comm, td.a ? td.a->tid : b.tid)),
          QStringLiteral("%1/%2").arg(td.tasksA).arg(td.tasksB),
          ms(a.runtimeNs),
          ms(b.runtimeNs),
          Cell(rel, !bigRun              ? Tone::Normal
                    : !td.a || !td.b     ? Tone::Strong
                    : run.delta() > 0    ? Tone::Worse
                                         : Tone::Better),
          signedPct(wait.relative()),
          count(a.switchesVoluntary),
          count(b.switchesVoluntary),
          count(a.switchesInvoluntary),
          count(b.switchesInvoluntary),
          lat(a),
          lat(b),
          Cell(num(td.wakeupLatencyKs, 2), bigKs ? Tone::Strong : Tone::Normal)};
      row.insert(row.end(), cells.begin(), cells.end());
      t.rows.push_back(std::move(row));
    }
    t.note = QStringLiteral(
                 "%1 of %2 task groups, sorted by |CPU-time change|; %3 significant (bold), as in the GUI's Diff "
                 "tab: a change of at least 20% of A and above its floor - times max(1 ms, 1% of the range), "
                 "latencies 20 µs with 20+ wakeups a side, CPU share 3 points, counts 10 - or wakeup-latency "
                 "distributions that differ at the 1% level by the KS test (and D ≥ 0.1). Δrun: red more, green "
                 "less. n: tasks of that name in A and B. vol/invol: voluntary and involuntary switches. lat p99: "
                 "wakeup latency.")
                 .arg(shown)
                 .arg(df.tasks.size())
                 .arg(significant);
    m_doc.subheading(QStringLiteral("Task changes"));
    m_doc.table(std::move(t));
  }

  // "2.00 GHz 61.3%, 1.20 GHz 38.7%": a CPU's time at each frequency, fastest first.
  static QString frequencyShares(const core::analysis::CpuStats& c) {
    int64_t total = 0;
    for (const auto& [khz, ns] : c.freqResidencyNs) total += ns;
    QStringList parts;
    for (auto f = c.freqResidencyNs.rbegin(); f != c.freqResidencyNs.rend(); ++f)
      if (f->second > 0 && total > 0)
        parts << QStringLiteral("%1 GHz %2%").arg(static_cast<double>(f->first) / 1e6, 0, 'f', 2)
                     .arg(100.0 * static_cast<double>(f->second) / static_cast<double>(total), 0, 'f', 1);
    return parts.join(QStringLiteral(", "));
  }

  // A replay's frequency residency (+uclamp) beside the recording's own
  // (power:cpu_frequency): which frequencies the tasks drove each CPU to, modelled and recorded.
  void frequencyTable(const RunEntry& r, const RunEntry& rec) {
    const auto recorded = [&](int cpu) -> const core::analysis::CpuStats* {
      for (const auto& c : rec.stats.cpus)
        if (c.cpu == cpu && !c.freqResidencyNs.empty()) return &c;
      return nullptr;
    };
    Table t;
    t.columns = {{QStringLiteral("CPU"), 0.5},
                 {QStringLiteral("Replay (%1)").arg(r.tag), 3.0, false, true},
                 {QStringLiteral("Recorded (%1)").arg(rec.label), 3.0, false, true}};
    for (const auto& c : r.stats.cpus) {
      const core::analysis::CpuStats* other = recorded(c.cpu);
      if (c.freqResidencyNs.empty() && !other) continue;
      t.rows.push_back({QString::number(c.cpu), c.freqResidencyNs.empty() ? QStringLiteral("—") : frequencyShares(c),
                        other ? frequencyShares(*other) : QStringLiteral("not traced")});
    }
    if (t.rows.empty()) return;
    t.note = QStringLiteral(
        "Time at each frequency over the covered range: the replay's from its +uclamp frequency model, the "
        "recording's from its power:cpu_frequency events (each holds until the next; the time before a CPU's "
        "first event is left out).");
    m_doc.subheading(QStringLiteral("CPU frequencies"));
    m_doc.table(std::move(t));
  }

  void replaySection(size_t index) {
    const RunEntry& r = run(index);
    const RunEntry& rec = run(r.recording);
    const core::TraceModel& m = *r.model;
    const std::string modelName = m.replay ? m.replay->model : std::string();
    const auto policy = replay::parseModel(modelName);
    m_doc.pageBreak();
    m_doc.heading(QStringLiteral("Replay: %1").arg(r.tag));
    if (policy)
      m_doc.paragraph(QStringLiteral("%1. Source: %2.")
                          .arg(QString::fromStdString(policy->title()), QString::fromStdString(policy->source())));
    Table setup;
    setup.header = false;
    setup.columns = {{QStringLiteral("What"), 1.4}, {QStringLiteral("Value"), 4.0, false, true}};
    setup.rows.push_back({Cell(QStringLiteral("Model"), Tone::Muted), QString::fromStdString(modelName)});
    setup.rows.push_back({Cell(QStringLiteral("Recording"), Tone::Muted), QStringLiteral("%1: %2").arg(rec.tag, rec.label)});
    setup.rows.push_back({Cell(QStringLiteral("Topology"), Tone::Muted), QString::fromStdString(m.topology.describe())});
    if (r.replay->workloadTasks)
      setup.rows.push_back({Cell(QStringLiteral("Workload"), Tone::Muted),
                            QStringLiteral("%1 tasks extracted from the recording").arg(r.replay->workloadTasks)});
    // +uclamp: the energy estimate and where each CPU's time went by frequency.
    if (auto it = m.metadata.find("replay.energy_j"); it != m.metadata.end())
      setup.rows.push_back({Cell(QStringLiteral("Energy (estimate)"), Tone::Muted),
                            QStringLiteral("%1 J over the replay (OPP power table in the parameters)")
                                .arg(QString::fromStdString(it->second))});
    // What the model counted of its own mechanics (EEVDF: DELAY_DEQUEUE), as `replay` prints it.
    if (auto it = m.metadata.find("replay.model_counters"); it != m.metadata.end())
      setup.rows.push_back({Cell(QStringLiteral("Model counts"), Tone::Muted), QString::fromStdString(it->second)});
    // How many recorded blocks the replay kept, and how far it had drifted where it lost them.
    if (auto it = m.metadata.find("replay.blocks"); it != m.metadata.end())
      setup.rows.push_back({Cell(QStringLiteral("Blocks"), Tone::Muted), QString::fromStdString(it->second)});
    m_doc.table(std::move(setup));
    frequencyTable(r, rec);

    m_doc.subheading(QStringLiteral("Validation"));
    if (const auto& v = r.replay->validation) {
      Table vt;
      vt.header = false;
      vt.columns = {{QStringLiteral("What"), 2.2}, {QStringLiteral("Value"), 3.0, false, true}};
      if (v->makespanRecordedNs >= 0)
        vt.rows.push_back({Cell(QStringLiteral("Makespan recorded vs replay"), Tone::Muted),
                           QStringLiteral("%1 recorded, %2 replayed (replay/recorded %3)")
                               .arg(dur(v->makespanRecordedNs), dur(v->makespanReplayNs), num(v->makespanRatio(), 3))});
      else
        vt.rows.push_back({Cell(QStringLiteral("Makespan"), Tone::Muted),
                           QStringLiteral("%1 replayed (no recording)").arg(dur(v->makespanReplayNs))});
      vt.rows.push_back(
          {Cell(QStringLiteral("Work conserved"), Tone::Muted),
           v->workConserved
               ? Cell(QStringLiteral("yes: every task did exactly its recorded work (%1)").arg(dur(v->workRecordedNs)),
                      Tone::Better)
               : Cell(QStringLiteral("NO: %1 tasks unfinished, %2 with other work; %3 of %4 done")
                          .arg(v->tasksUnfinished)
                          .arg(v->tasksWorkMismatch)
                          .arg(dur(v->workReplayNs), dur(v->workRecordedNs)),
                      Tone::Worse)});
      m_doc.table(std::move(vt));
      const auto& u = v->unmodelled;
      Table ut;
      ut.columns = {{QStringLiteral("Not modelled exactly"), 5.0, false, true}, {QStringLiteral("count"), 0.8, true}};
      for (const auto& item : u.items())
        ut.rows.push_back({QString::fromUtf8(item.what), Cell(count(item.count), item.count ? Tone::Strong : Tone::Muted)});
      m_doc.table(std::move(ut));
      if (v->fidelity) fidelityTable(*v->fidelity);
    } else {
      m_doc.paragraph(QStringLiteral("No validation block was kept with this replay."), Tone::Muted);
    }

    m_doc.subheading(QStringLiteral("Parameters"));
    Table pt;
    pt.dense = true;
    pt.columns = {{QStringLiteral("Parameter"), 1.7},
                  {QStringLiteral("Value"), 1.2},
                  {QStringLiteral("Set by"), 2.0, false, true},
                  {QStringLiteral("Meaning"), 4.2, false, true}};
    if (m.replay)
      for (const auto& prm : m.replay->params)
        pt.rows.push_back({Cell(QString::fromStdString(prm.key), Tone::Strong), QString::fromStdString(prm.value),
                           Cell(QString::fromStdString(prm.origin), prm.origin == "default" ? Tone::Muted : Tone::Normal),
                           QString::fromStdString(prm.doc)});
    pt.note = QStringLiteral(
        "Every parameter of the engine and the model, with the value this replay used and what set it: the "
        "model's default (its source is in the meaning), the user, or the replay itself (measured from the "
        "recording, or the recording kernel's release).");
    m_doc.table(std::move(pt));

    const RunDiff& df = m_d.replayDiffs[index - m_d.recordings];
    const auto& v = r.replay->validation;
    std::optional<std::pair<int64_t, int64_t>> mk;
    if (v && v->makespanRecordedNs >= 0) mk = std::make_pair(v->makespanRecordedNs, v->makespanReplayNs);
    m_doc.subheading(QStringLiteral("Against the recording"));
    m_doc.table(headlineTable(headlines(df, mk), rec.tag, r.tag));
  }

  // Every fidelity metric against the identity bounds (README "Replay fidelity"), verdicts coloured.
  void fidelityTable(const core::analysis::Fidelity& f) {
    using core::analysis::FidelityMetric;
    using core::analysis::Verdict;
    m_doc.subheading(QStringLiteral("Fidelity against the recording"));
    const auto value = [](const FidelityMetric& mt, double x) {
      switch (mt.unit) {
        case FidelityMetric::Unit::Ns: return dur(static_cast<int64_t>(x));
        case FidelityMetric::Unit::Count: return count(static_cast<uint64_t>(x));
        case FidelityMetric::Unit::Distance: return num(x, 3);
        case FidelityMetric::Unit::Pp: return num(x, 2) + QStringLiteral(" pp");
      }
      return QString();
    };
    Table ft;
    ft.dense = true;
    ft.columns = {{QStringLiteral("Metric"), 3.2, false, true}, {QStringLiteral("Recorded"), 1.3, true},
                  {QStringLiteral("Replay"), 1.3, true},        {QStringLiteral("Ratio"), 0.8, true},
                  {QStringLiteral("Bound"), 1.4},               {QStringLiteral("Verdict"), 0.8}};
    for (const auto& mt : f.metrics) {
      const Tone tone = mt.verdict == Verdict::Pass ? Tone::Better : mt.verdict == Verdict::Fail ? Tone::Worse : Tone::Muted;
      ft.rows.push_back({QString::fromStdString(mt.label), mt.recorded ? value(mt, *mt.recorded) : QString(),
                         mt.replayed ? value(mt, *mt.replayed) : value(mt, mt.measure),
                         mt.ratio ? num(*mt.ratio, 3) : QStringLiteral("\u2013"), QString::fromStdString(mt.bound),
                         Cell(QString::fromStdString(std::string(core::analysis::toString(mt.verdict))), tone)});
    }
    ft.note = QStringLiteral("%1 of the judged metrics outside their bounds. The bounds are an identity replay's: "
                             "the recording kernel's own model on the recorded topology.")
                  .arg(f.failed());
    m_doc.table(std::move(ft));
  }

  std::shared_ptr<const ReportData> m_data;
  const ReportData& m_d;
  Document m_doc;
};

}  // namespace

Document buildDocument(const std::shared_ptr<const ReportData>& data) { return Builder(data).build(); }

}  // namespace app::report
