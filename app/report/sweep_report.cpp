#include "app/report/sweep_report.h"

#include <QFile>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include "app/render/chart_painter.h"
#include "app/render/colors.h"
#include "app/render/time_axis.h"
#include "app/report/report_data.h"
#include "core/json_writer.h"

namespace app::report {

namespace {

using sweep::JobResult;
using sweep::JobState;
using sweep::Metric;
using sweep::SweepResults;

QString q(const std::string& s) { return QString::fromStdString(s); }

QString stateText(JobState s) {
  switch (s) {
    case JobState::Done: return QStringLiteral("done");
    case JobState::Failed: return QStringLiteral("failed");
    case JobState::Pending: return QStringLiteral("pending");
  }
  return {};
}

Cell verdictCell(const std::string& verdict) {
  if (verdict.empty()) return Cell(QStringLiteral("–"), Tone::Muted);
  return Cell(q(verdict), verdict == "fail" ? Tone::Worse : Tone::Better);
}

QString modelText(const JobResult& r) {
  QString s = q(r.job.model);
  if (!r.resolvedModel.empty() && r.resolvedModel != r.job.model) s += QStringLiteral(" (%1)").arg(q(r.resolvedModel));
  return s;
}

QString settingText(const JobResult& r) { return q(r.job.model + " " + r.job.settingsText()); }

// Numbers in CSV and JSON as the job documents hold them: integers exactly.
std::string rawNumber(double v) {
  char buf[40];
  if (std::fabs(v) < 1e15 && std::floor(v) == v) std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  else std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Parameter values of a key, in the order a chart shows them: numerically when all are numbers.
std::vector<std::string> axisValues(const SweepResults& res, const std::string& key) {
  std::vector<std::string> values;
  for (const JobResult& r : res.jobs)
    for (const sweep::Param& p : r.job.params)
      if (p.key == key && std::find(values.begin(), values.end(), p.value) == values.end()) values.push_back(p.value);
  const bool numeric = std::all_of(values.begin(), values.end(), [](const std::string& v) {
    char* end = nullptr;
    std::strtod(v.c_str(), &end);
    return !v.empty() && end && *end == '\0';
  });
  if (numeric)
    std::stable_sort(values.begin(), values.end(),
                     [](const std::string& a, const std::string& b) { return std::strtod(a.c_str(), nullptr) < std::strtod(b.c_str(), nullptr); });
  return values;
}

const std::string* paramValue(const sweep::Job& job, const std::string& key) {
  for (const sweep::Param& p : job.params)
    if (p.key == key) return &p.value;
  return nullptr;
}

class SweepBuilder {
 public:
  SweepBuilder(const SweepResults& res, const QDateTime& date) : m_r(res), m_summaries(res.summaries()) {
    m_doc.title = QStringLiteral("SchedLab sweep report: ") + q(res.dir);
    m_doc.subtitle = q(res.dir);
    m_doc.dateText = QStringLiteral("Report date: ") + date.toString(QStringLiteral("yyyy-MM-dd HH:mm t"));
  }

  Document build() {
    titlePage();
    tracesSection();
    bestWorst();
    charts();
    jobsSection();
    return std::move(m_doc);
  }

 private:
  const sweep::MetricSummary* summary(Metric m) const {
    for (const auto& s : m_summaries)
      if (s.metric == m) return &s;
    return nullptr;
  }

  void titlePage() {
    m_doc.title1(QStringLiteral("SchedLab sweep report"));
    m_doc.paragraph(q(m_r.dir), Tone::Strong);
    m_doc.paragraph(m_doc.dateText, Tone::Muted);
    std::vector<std::string> models;
    for (const JobResult& r : m_r.jobs)
      if (!r.job.reference && std::find(models.begin(), models.end(), r.job.model) == models.end())
        models.push_back(r.job.model);
    QStringList modelNames;
    for (const auto& m : models) modelNames << q(m);
    QStringList keys;
    for (const auto& k : m_r.paramKeys) keys << q(k);
    m_doc.paragraph(QStringLiteral("%1 jobs: %2 traces replayed through %3%4. %5 done, %6 failed, %7 not run yet.")
                        .arg(m_r.jobs.size())
                        .arg(m_r.traces.size())
                        .arg(modelNames.join(QStringLiteral(", ")),
                             keys.isEmpty() ? QString() : QStringLiteral(" over %1").arg(keys.join(QStringLiteral(", "))))
                        .arg(m_r.done)
                        .arg(m_r.failed)
                        .arg(m_r.pending));
    m_doc.paragraph(QStringLiteral(
                        "Each job is one replay, its result the `schedlab-cli replay --json` document in jobs/. Each "
                        "trace's reference job replays it through the baseline (the model of the kernel that "
                        "recorded it) on the recorded topology with no parameter set: its fidelity verdict says "
                        "whether the model reproduces that recording within the identity bounds (README \"Replay "
                        "fidelity\"), and so how far the other replays of the trace can be trusted."),
                    Tone::Muted);
    m_doc.subheading(QStringLiteral("Contents"));
    m_doc.contents();
    m_doc.pageBreak();
  }

  void tracesSection() {
    m_doc.heading(QStringLiteral("Traces and their baseline fidelity"));
    Table t;
    t.columns = {{QStringLiteral("Trace"), 2.2},         {QStringLiteral("Path"), 3.8, false, true},
                 {QStringLiteral("Jobs done"), 1.0, true}, {QStringLiteral("failed"), 0.8, true},
                 {QStringLiteral("Baseline"), 1.6},       {QStringLiteral("Fidelity"), 1.0}};
    for (const std::string& trace : m_r.traces) {
      size_t done = 0, failed = 0;
      for (const JobResult& r : m_r.jobs)
        if (r.job.trace == trace) {
          done += r.state == JobState::Done;
          failed += r.state == JobState::Failed;
        }
      const JobResult* ref = m_r.reference(trace);
      t.rows.push_back({q(sweep::traceLabel(trace)), q(trace), QString::number(done), QString::number(failed),
                        ref ? modelText(*ref) : QStringLiteral("no reference"), verdictCell(m_r.referenceVerdict(trace))});
    }
    t.note = QStringLiteral("Fidelity: the reference job's verdict; – where it has none (not run, failed, or left out).");
    m_doc.table(std::move(t));
  }

  QString valueText(Metric m, size_t job) const {
    const auto v = m_r.jobs[job].value(m);
    return v ? formatMetric(m, *v) : QStringLiteral("–");
  }

  void bestWorst() {
    m_doc.heading(QStringLiteral("Best and worst settings"));
    m_doc.paragraph(QStringLiteral(
        "Per trace, the job with the best and the worst value of each metric (lower is better, but for Jain's "
        "index). Over all traces, each setting (model and parameters) that has a result for every trace is "
        "scored by its mean over the traces relative to each trace's reference job (1.000 = as the baseline at "
        "its defaults), or by the plain mean where some reference has no value other than 0."));
    for (const auto& s : m_summaries) {
      const auto& mi = sweep::info(s.metric);
      m_doc.subheading(QString::fromUtf8(mi.label));
      Table t;
      t.dense = true;
      t.columns = {{QStringLiteral("Trace"), 2.0},  {QStringLiteral("Best"), 3.2, false, true},
                   {QStringLiteral("value"), 1.1, true}, {QStringLiteral("Worst"), 3.2, false, true},
                   {QStringLiteral("value"), 1.1, true}};
      for (const auto& [trace, e] : s.perTrace) {
        if (!e.best) {
          t.rows.push_back({q(sweep::traceLabel(trace)), Cell(QStringLiteral("no result"), Tone::Muted), "", "", ""});
        } else if (e.tied) {
          t.rows.push_back({q(sweep::traceLabel(trace)), Cell(QStringLiteral("every job alike"), Tone::Muted),
                            valueText(s.metric, *e.best), "", ""});
        } else {
          auto named = [&](size_t job, size_t others) {
            return others ? settingText(m_r.jobs[job]) + QStringLiteral(" and %1 more alike").arg(others)
                          : settingText(m_r.jobs[job]);
          };
          t.rows.push_back({q(sweep::traceLabel(trace)), named(*e.best, e.othersAsBest),
                            Cell(valueText(s.metric, *e.best), Tone::Better), named(*e.worst, e.othersAsWorst),
                            Cell(valueText(s.metric, *e.worst), Tone::Worse)});
        }
      }
      auto score = [&](const sweep::SettingScore& sc) {
        return s.relative ? QString::number(*sc.relative, 'f', 3) : formatMetric(s.metric, sc.mean);
      };
      const QString all = s.relative ? QStringLiteral("all traces (relative)") : QStringLiteral("all traces (mean)");
      if (s.overall.empty()) {
        t.rows.push_back({Cell(all, Tone::Strong), Cell(QStringLiteral("no setting has a result for every trace"), Tone::Muted), "", "", ""});
      } else if (s.overall.front().score() == s.overall.back().score()) {
        t.rows.push_back({Cell(all, Tone::Strong), Cell(QStringLiteral("every setting alike"), Tone::Muted),
                          score(s.overall.front()), "", ""});
      } else {
        const auto& best = s.overall.front();
        const auto& worst = s.overall.back();
        t.rows.push_back({Cell(all, Tone::Strong), q(best.model + " " + best.settings), Cell(score(best), Tone::Better),
                          q(worst.model + " " + worst.settings), Cell(score(worst), Tone::Worse)});
      }
      m_doc.table(std::move(t));
    }
  }

  void charts() {
    m_doc.heading(QStringLiteral("Metrics against parameters"));
    bool any = false;
    for (const std::string& key : m_r.paramKeys) {
      const auto values = axisValues(m_r, key);
      if (values.size() < 2) continue;
      for (const auto& s : m_summaries) {
        if (chart(key, values, s)) any = true;
      }
    }
    if (!any)
      m_doc.paragraph(QStringLiteral("No parameter takes two values or more with results: nothing to chart."),
                      Tone::Muted);
  }

  // One chart: the metric (relative to the references where the summary is) at each value of `key`, a bar per model.
  bool chart(const std::string& key, const std::vector<std::string>& values, const sweep::MetricSummary& s) {
    std::map<std::string, double> refValue;
    for (const std::string& trace : m_r.traces)
      if (const JobResult* ref = m_r.reference(trace); ref && ref->value(s.metric)) refValue[trace] = *ref->value(s.metric);
    std::vector<std::string> models;
    std::map<std::string, std::vector<std::pair<double, size_t>>> sums;  // model -> per value: sum, count
    double lo = INFINITY, hi = -INFINITY;
    for (const JobResult& r : m_r.jobs) {
      const std::string* v = paramValue(r.job, key);
      const auto x = r.value(s.metric);
      if (!v || !x || r.state != JobState::Done) continue;
      const double y = s.relative ? *x / refValue[r.job.trace] : *x;
      auto& per = sums[r.job.model];
      if (per.empty()) {
        models.push_back(r.job.model);
        per.assign(values.size(), {0.0, 0});
      }
      const size_t i = static_cast<size_t>(std::find(values.begin(), values.end(), *v) - values.begin());
      per[i].first += y;
      ++per[i].second;
      lo = std::min(lo, y);
      hi = std::max(hi, y);
    }
    const auto& mi = sweep::info(s.metric);
    if (models.empty()) return false;
    if (lo == hi) {
      m_doc.paragraph(QStringLiteral("%1 against %2: %3 in every job (no chart).")
                          .arg(QString::fromUtf8(mi.label), q(key),
                               s.relative ? QString::number(lo, 'f', 3) : formatMetric(s.metric, lo)),
                      Tone::Muted);
      return true;
    }
    auto bars = std::make_shared<render::BarChart>();
    bars->title = QStringLiteral("%1 against %2%3")
                      .arg(QString::fromUtf8(mi.label), q(key),
                           s.relative ? QStringLiteral(" (relative to each trace's reference)") : QString());
    for (const std::string& v : values) bars->categories << q(v);
    for (size_t k = 0; k < models.size(); ++k) {
      render::BarSeries series{q(models[k]), render::runColor(static_cast<int>(k) + 1), {}, {}};
      for (const auto& [sum, n] : sums[models[k]]) series.values.push_back(n ? sum / static_cast<double>(n) : NAN);
      bars->series.push_back(std::move(series));
    }
    const Metric metric = s.metric;
    const bool relative = s.relative;
    bars->formatValue = [metric, relative](double v) {
      return relative ? QString::number(v, 'f', 3) : formatMetric(metric, v);
    };
    bars->valueLabels = models.size() * values.size() <= 24;
    Figure f;
    f.aspect = 0.42;
    f.alt = bars->title;
    f.caption = QStringLiteral("%1 at each value of %2, one bar per model: the mean over the traces%3 and over "
                               "the other parameters' values.")
                    .arg(QString::fromUtf8(mi.label), q(key),
                         relative ? QStringLiteral(" of the value relative to the trace's reference job") : QString());
    f.paint = [bars](QPainter& p, const QRectF& rect) { render::paintBarChart(p, rect, *bars); };
    m_doc.figure(std::move(f));
    return true;
  }

  void jobsSection() {
    m_doc.heading(QStringLiteral("Jobs"));
    Table t;
    t.dense = true;
    // Trace labels ("sysbench-mix/trace.dat") elide, so they get the room; settings wrap.
    t.columns = {{QStringLiteral("Trace"), 2.4},        {QStringLiteral("Model"), 1.3, false, true},
                 {QStringLiteral("Parameters"), 1.8, false, true}, {QStringLiteral("State"), 0.8},
                 {QStringLiteral("makespan"), 1.3, true}, {QStringLiteral("lat p50"), 1.0, true},
                 {QStringLiteral("lat p99"), 1.2, true},  {QStringLiteral("Jain"), 0.9, true},
                 {QStringLiteral("forced idle"), 1.1, true}, {QStringLiteral("energy"), 0.9, true},
                 {QStringLiteral("fidelity"), 0.9},       {QStringLiteral("baseline"), 1.1}};
    for (size_t i = 0; i < m_r.jobs.size(); ++i) {
      const JobResult& r = m_r.jobs[i];
      std::vector<Cell> row{q(sweep::traceLabel(r.job.trace)),
                            Cell(modelText(r), r.job.reference ? Tone::Muted : Tone::Normal),
                            r.job.reference ? Cell(QStringLiteral("reference"), Tone::Muted) : Cell(q(r.job.settingsText())),
                            Cell(stateText(r.state), r.state == JobState::Failed ? Tone::Worse : Tone::Normal)};
      for (Metric m : {Metric::Makespan, Metric::LatencyP50, Metric::LatencyP99, Metric::Jain, Metric::ForcedIdle,
                       Metric::Energy})
        row.emplace_back(valueText(m, i));
      row.push_back(verdictCell(r.verdict));
      row.push_back(verdictCell(m_r.referenceVerdict(r.job.trace)));
      t.rows.push_back(std::move(row));
    }
    t.note = QStringLiteral(
        "lat: wakeup latency. fidelity: the replay's own verdict against its recording (the identity bounds mean "
        "most for the baseline); baseline: the trace's reference verdict. energy: +uclamp models only.");
    m_doc.table(std::move(t));

    if (m_r.failed == 0) return;
    m_doc.subheading(QStringLiteral("Failed jobs"));
    Table f;
    f.dense = true;
    f.columns = {{QStringLiteral("Job"), 1.6}, {QStringLiteral("Trace"), 1.8}, {QStringLiteral("Model"), 1.4},
                 {QStringLiteral("Parameters"), 2.0, false, true}, {QStringLiteral("Error"), 5.0, false, true}};
    for (const JobResult& r : m_r.jobs)
      if (r.state == JobState::Failed)
        f.rows.push_back({q(r.job.id), q(sweep::traceLabel(r.job.trace)), q(r.job.model), q(r.job.settingsText()),
                          Cell(q(r.error), Tone::Worse)});
    m_doc.table(std::move(f));
  }

  const SweepResults& m_r;
  std::vector<sweep::MetricSummary> m_summaries;
  Document m_doc;
};

void writeExtreme(core::JsonWriter& j, const char* key, const SweepResults& res, std::optional<size_t> job, Metric m) {
  if (!job) {
    j.nullField(key);
    return;
  }
  const JobResult& r = res.jobs[*job];
  j.key(key).beginObject();
  j.field("id", r.job.id);
  j.field("model", r.job.model);
  j.field("settings", r.job.settingsText());
  j.field("value", *r.value(m));
  j.endObject();
}

}  // namespace

QString formatMetric(Metric metric, double value) {
  if (sweep::info(metric).nanoseconds) return render::formatDuration(std::llround(value));
  if (metric == Metric::Jain) return QString::number(value, 'f', 4);
  return QString::number(value, 'f', 3) + QStringLiteral(" J");
}

Document buildSweepDocument(const SweepResults& results, const QDateTime& date) {
  return SweepBuilder(results, date.isValid() ? date : QDateTime::currentDateTime()).build();
}

std::string sweepCsv(const SweepResults& res) {
  std::string out = "id,trace,model,resolved_model";
  for (const std::string& k : res.paramKeys) out += "," + csvField("param." + k);
  out += ",topology,reference,state";
  for (const auto& mi : sweep::metricInfos()) out += std::string(",") + mi.key;
  out += ",fidelity,baseline_fidelity,error\n";
  for (const JobResult& r : res.jobs) {
    out += r.job.id + "," + csvField(r.job.trace) + "," + csvField(r.job.model) + "," + csvField(r.resolvedModel);
    for (const std::string& k : res.paramKeys) {
      const std::string* v = paramValue(r.job, k);
      out += "," + (v ? csvField(*v) : std::string());
    }
    out += "," + csvField(r.job.topology) + "," + (r.job.reference ? "true" : "false") + "," +
           stateText(r.state).toStdString();
    for (const auto& mi : sweep::metricInfos()) {
      const auto v = r.value(mi.metric);
      out += "," + (v ? rawNumber(*v) : std::string());
    }
    out += "," + r.verdict + "," + res.referenceVerdict(r.job.trace) + "," + csvField(r.error) + "\n";
  }
  return out;
}

std::string sweepJson(const SweepResults& res) {
  core::JsonWriter j;
  j.beginObject();
  j.key("sweep").beginObject();
  j.field("results", res.dir);
  j.field("jobs", static_cast<uint64_t>(res.jobs.size()));
  j.field("done", static_cast<uint64_t>(res.done));
  j.field("failed", static_cast<uint64_t>(res.failed));
  j.field("pending", static_cast<uint64_t>(res.pending));
  j.key("traces").beginArray();
  for (const std::string& t : res.traces) {
    j.beginObject();
    j.field("trace", t);
    const std::string verdict = res.referenceVerdict(t);
    if (verdict.empty()) j.nullField("baseline_fidelity");
    else j.field("baseline_fidelity", verdict);
    j.endObject();
  }
  j.endArray();
  j.endObject();
  j.key("jobs").beginArray();
  for (const JobResult& r : res.jobs) {
    j.beginObject();
    j.field("id", r.job.id);
    j.field("trace", r.job.trace);
    j.field("model", r.job.model);
    j.field("resolved_model", r.resolvedModel);
    j.key("params").beginObject();
    for (const sweep::Param& p : r.job.params) j.field(p.key, p.value);
    j.endObject();
    j.field("topology", r.job.topology);
    j.field("reference", r.job.reference);
    j.field("state", stateText(r.state).toStdString());
    for (const auto& mi : sweep::metricInfos()) {
      if (const auto v = r.value(mi.metric)) j.field(mi.key, *v);
      else j.nullField(mi.key);
    }
    if (r.verdict.empty()) j.nullField("fidelity");
    else j.field("fidelity", r.verdict);
    const std::string baseline = res.referenceVerdict(r.job.trace);
    if (baseline.empty()) j.nullField("baseline_fidelity");
    else j.field("baseline_fidelity", baseline);
    if (r.error.empty()) j.nullField("error");
    else j.field("error", r.error);
    j.endObject();
  }
  j.endArray();
  j.key("best_worst").beginArray();
  for (const auto& s : res.summaries()) {
    j.beginObject();
    j.field("metric", sweep::info(s.metric).key);
    j.field("relative_to_reference", s.relative);
    j.key("per_trace").beginArray();
    for (const auto& [trace, e] : s.perTrace) {
      j.beginObject();
      j.field("trace", trace);
      j.field("tied", e.tied);
      j.field("others_as_best", static_cast<uint64_t>(e.othersAsBest));
      j.field("others_as_worst", static_cast<uint64_t>(e.othersAsWorst));
      writeExtreme(j, "best", res, e.best, s.metric);
      writeExtreme(j, "worst", res, e.worst, s.metric);
      j.endObject();
    }
    j.endArray();
    j.key("overall").beginArray();
    for (const auto& sc : s.overall) {
      j.beginObject();
      j.field("model", sc.model);
      j.field("settings", sc.settings);
      j.field("mean", sc.mean);
      if (sc.relative) j.field("relative", *sc.relative);
      else j.nullField("relative");
      j.field("traces", static_cast<uint64_t>(sc.traces));
      j.endObject();
    }
    j.endArray();
    j.endObject();
  }
  j.endArray();
  j.endObject();
  return j.str() + "\n";
}

core::Status writeSweepReport(const SweepResults& results, const QString& path, ReportFormat format, PageSize page,
                              const QDateTime& date) {
  if (format == ReportFormat::Json || format == ReportFormat::Csv)
    return writeTextFile(path, format == ReportFormat::Json ? sweepJson(results) : sweepCsv(results));
  const Document doc = buildSweepDocument(results, date);
  auto status = format == ReportFormat::Pdf ? writePdf(doc, path, page, {}, {}) : writeHtml(doc, path, {}, {});
  if (!status) QFile::remove(path);
  return status;
}

}  // namespace app::report
