#include "app/report/report.h"

#include <QFile>
#include <algorithm>
#include <cctype>

#include "app/render/colors.h"
#include "app/render/timeline_image.h"
#include "app/report/report_data.h"
#include "replay/policies/registry.h"
#include "replay/workload/trace_extractor.h"

namespace app::report {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "model.key=value" -> {"model", "key=value"}; plain assignments get an empty model.
// "MODEL.KEY=VALUE" names one model; keys have dots of their own
// (coresched.cookie, smt.factor), so only a prefix that is a model is a scope.
std::pair<std::string, std::string> splitScoped(const std::string& assignment) {
  const auto eq = assignment.find('=');
  const auto dot = assignment.find('.');
  if (dot != std::string::npos && (eq == std::string::npos || dot < eq) && replay::parseModel(assignment.substr(0, dot)))
    return {assignment.substr(0, dot), assignment.substr(dot + 1)};
  return {{}, assignment};
}

std::string keyOf(const std::string& assignment) { return assignment.substr(0, assignment.find('=')); }

core::Status cancelled() { return core::Error("report cancelled"); }

}  // namespace

QString formatName(ReportFormat format) {
  switch (format) {
    case ReportFormat::Pdf: return QStringLiteral("pdf");
    case ReportFormat::Html: return QStringLiteral("html");
    case ReportFormat::Json: return QStringLiteral("json");
    case ReportFormat::Csv: return QStringLiteral("csv");
  }
  return {};
}

std::optional<ReportFormat> formatFromName(std::string_view name) {
  const std::string n = lower(name);
  if (n == "pdf") return ReportFormat::Pdf;
  if (n == "html" || n == "htm") return ReportFormat::Html;
  if (n == "json") return ReportFormat::Json;
  if (n == "csv") return ReportFormat::Csv;
  return std::nullopt;
}

std::optional<ReportFormat> formatFromPath(std::string_view path) {
  const auto slash = path.find_last_of('/');
  const auto dot = path.find_last_of('.');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) return std::nullopt;
  return formatFromName(path.substr(dot + 1));
}

bool paramKnownToAny(const std::string& assignment, const std::vector<std::string>& models) {
  const auto [scope, rest] = splitScoped(assignment);
  const std::string key = keyOf(rest);
  for (const auto& m : models) {
    if (!scope.empty() && scope != m) continue;
    // "baseline" is checked as eevdf until the recording says its kernel, as `replay` checks it.
    auto params = replay::defaultParams(replay::resolveBaseline(m, ""));
    if (params && params->has(key)) return true;
  }
  return false;
}

core::Result<ReportReplay> makeReplay(const std::shared_ptr<const core::TraceModel>& recording, size_t recordingIndex,
                                      const std::string& model, const std::vector<std::string>& params,
                                      const std::optional<core::Topology>& topology, std::stop_token stop,
                                      bool strict) {
  if (!recording) return core::Error("no recording to replay");
  const std::string concrete = replay::resolveBaseline(model, recording->kernelRelease());
  auto defaults = replay::defaultParams(concrete);
  if (!defaults) return defaults.error();
  replay::ReplayOptions options;
  options.model = concrete;
  options.topology = topology;
  options.stop = stop;
  options.recordingPath = recording->sourceFiles.empty() ? std::string() : recording->sourceFiles.front();
  for (const auto& assignment : params) {
    const auto [scope, rest] = splitScoped(assignment);
    if (!scope.empty() && scope != model) continue;
    if (!defaults->has(keyOf(rest))) {
      if (strict || !scope.empty())
        return core::Error("--param " + assignment + ": model " + model + " has no parameter '" + keyOf(rest) + "'");
      continue;
    }
    if (auto st = defaults->setAssignment(rest); !st) return core::Error("--param " + assignment + ": " + st.message());
    options.params.push_back(rest);
  }
  auto replayed = replay::replayRecording(*recording, options);
  if (stop.stop_requested()) return cancelled();
  if (!replayed) return replayed.error();
  ReportReplay out;
  out.model = replayed->result.model;
  out.validation = replayed->result.validation;
  out.workloadTasks = replayed->workload.tasks.size();
  out.recording = recordingIndex;
  return out;
}

core::Result<std::shared_ptr<const ReportData>> computeReportData(const ReportSpec& spec, const ProgressFn& progress,
                                                                  std::stop_token stop) {
  if (spec.runs.empty()) return core::Error("a report needs at least one run");
  if (spec.runs.size() > 2) return core::Error("a report compares at most two recorded runs");
  for (const auto& r : spec.runs)
    if (!r.model) return core::Error("a run of the report has no model");
  for (const auto& r : spec.replays) {
    if (!r.model) return core::Error("a replay of the report has no model");
    if (r.recording >= spec.runs.size()) return core::Error("a replay names a recording the report does not have");
  }
  if (spec.fromNs && spec.toNs && *spec.toNs <= *spec.fromNs) return core::Error("the report's range is empty (--to must be after --from)");

  auto data = std::make_shared<ReportData>();
  data->spec = spec;
  data->date = spec.date.isValid() ? spec.date : QDateTime::currentDateTime();
  data->recordings = spec.runs.size();
  const size_t total = spec.runs.size() + spec.replays.size();
  size_t done = 0;
  auto step = [&] {
    ++done;
    if (progress) progress(0.3 * static_cast<double>(done) / static_cast<double>(total));
  };
  auto rangeOf = [&](const core::TraceModel& m, int64_t origin) -> std::optional<core::analysis::TimeRange> {
    core::analysis::TimeRange r = core::analysis::wholeTrace(m);
    if (spec.fromNs) r.from = std::max(r.from, origin + *spec.fromNs);
    if (spec.toNs) r.to = std::min(r.to, origin + *spec.toNs);
    if (r.to <= r.from) return std::nullopt;
    return r;
  };

  for (size_t i = 0; i < spec.runs.size(); ++i) {
    if (stop.stop_requested()) return cancelled();
    RunEntry e;
    e.model = spec.runs[i].model;
    e.label = spec.runs[i].label.isEmpty() ? render::runTitle(*e.model) : spec.runs[i].label;
    e.tag = spec.runs.size() == 1 ? QStringLiteral("recorded") : QString(QChar(u'A' + static_cast<char16_t>(i)));
    e.color = render::runColor(static_cast<int>(i));
    e.origin = e.model->firstTs;
    auto range = rangeOf(*e.model, e.origin);
    if (!range) return core::Error("the report's range lies outside " + e.label.toStdString());
    e.stats = core::analysis::computeStats(*e.model, *range);
    e.why = core::analysis::explainTopWaiters(*e.model, e.stats, kReportWhyTasks);
    data->runs.push_back(std::move(e));
    step();
  }
  for (size_t k = 0; k < spec.replays.size(); ++k) {
    if (stop.stop_requested()) return cancelled();
    const ReportReplay& rp = data->spec.replays[k];
    RunEntry e;
    e.model = rp.model;
    e.replay = &rp;
    e.recording = rp.recording;
    const QString name = rp.model->replay ? QString::fromStdString(rp.model->replay->model) : QStringLiteral("replay");
    QString tag = name;
    if (spec.runs.size() > 1) tag += QStringLiteral(" (%1)").arg(data->runs[rp.recording].tag);
    int same = 0;
    for (const auto& other : data->runs)
      if (other.tag == tag || other.tag.startsWith(tag + QStringLiteral(" #"))) ++same;
    if (same > 0) tag += QStringLiteral(" #%1").arg(same + 1);
    e.tag = tag;
    e.label = rp.label.isEmpty()
                  ? QStringLiteral("replay: %1 of %2").arg(name, data->runs[rp.recording].label)
                  : rp.label;
    e.color = render::runColor(static_cast<int>(data->runs.size()));
    e.origin = data->runs[rp.recording].origin;
    auto range = rangeOf(*e.model, e.origin);
    if (!range) return core::Error("the report's range lies outside the replay " + tag.toStdString());
    e.stats = core::analysis::computeStats(*e.model, *range);
    e.why = core::analysis::explainTopWaiters(*e.model, e.stats, kReportWhyTasks);
    data->runs.push_back(std::move(e));
    step();
  }
  if (data->recordings == 2) {
    const RunEntry& a = data->runs[0];
    const RunEntry& b = data->runs[1];
    data->diff = core::analysis::diffRuns(*a.model, a.stats, a.label.toStdString(), *b.model, b.stats,
                                          b.label.toStdString());
  }
  for (size_t i = data->recordings; i < data->runs.size(); ++i) {
    if (stop.stop_requested()) return cancelled();
    const RunEntry& rec = data->runs[data->runs[i].recording];
    const RunEntry& rep = data->runs[i];
    data->replayDiffs.push_back(core::analysis::diffRuns(*rec.model, rec.stats, rec.label.toStdString(), *rep.model,
                                                         rep.stats, rep.tag.toStdString()));
  }
  if (!spec.title.isEmpty()) {
    data->title = spec.title;
  } else if (data->recordings == 2) {
    data->title = QStringLiteral("%1 vs %2").arg(data->runs[0].label, data->runs[1].label);
  } else {
    data->title = data->runs[0].label;
  }
  return std::shared_ptr<const ReportData>(std::move(data));
}

core::Status writeTextFile(const QString& path, const std::string& text) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
      file.write(text.data(), static_cast<qint64>(text.size())) != static_cast<qint64>(text.size()) || !file.flush())
    return core::Error("cannot write " + path.toStdString() + ": " + file.errorString().toStdString());
  return {};
}

core::Status writeReport(const ReportSpec& spec, const QString& path, ReportFormat format, const ProgressFn& progress,
                         std::stop_token stop) {
  auto data = computeReportData(spec, progress, stop);
  if (!data) return data.error();
  auto sub = [&](double base, double share) -> ProgressFn {
    if (!progress) return {};
    return [progress, base, share](double f) { progress(base + share * std::clamp(f, 0.0, 1.0)); };
  };
  core::Status status;
  if (format == ReportFormat::Json || format == ReportFormat::Csv) {
    if (auto st = writeTextFile(path, format == ReportFormat::Json ? reportJson(**data) : reportCsv(**data)); !st)
      return st;
  } else {
    const Document doc = buildDocument(*data);
    if (stop.stop_requested()) return cancelled();
    status = format == ReportFormat::Pdf ? writePdf(doc, path, spec.page, sub(0.3, 0.7), stop)
                                         : writeHtml(doc, path, sub(0.3, 0.7), stop);
    if (!status) {
      QFile::remove(path);
      return status;
    }
  }
  if (progress) progress(1.0);
  return status;
}

}  // namespace app::report
