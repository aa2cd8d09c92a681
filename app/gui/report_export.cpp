#include "app/gui/report_export.h"

#include <QFileInfo>
#include <algorithm>

#include "app/render/time_axis.h"

namespace app::gui {

namespace {
QString quoted(const QString& s) {
  if (!s.contains(QLatin1Char(' ')) && !s.contains(QLatin1Char('\'')) && !s.isEmpty()) return s;
  QString q = s;
  q.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
  return QLatin1Char('\'') + q + QLatin1Char('\'');
}

}  // namespace

core::Result<ExportPlan> planExport(const RunSet& runs, const ExportOptions& options) {
  ExportPlan plan;
  plan.path = options.path;
  plan.format = options.format;
  plan.spec.page = options.page;
  std::vector<int> recordings;
  for (int id : runs.recordings())
    if (std::find(options.runIds.begin(), options.runIds.end(), id) != options.runIds.end()) recordings.push_back(id);
  if (recordings.empty()) return core::Error("choose one or two recordings for the report");
  if (recordings.size() > 2) return core::Error("a report compares at most two recordings (A and B)");
  for (int id : recordings) plan.spec.runs.push_back({runs.run(id)->model, {}});
  for (int id : runs.ids()) {
    const Run* r = runs.run(id);
    if (!r || !r->isReplay() || std::find(options.runIds.begin(), options.runIds.end(), id) == options.runIds.end())
      continue;
    auto rec = std::find(recordings.begin(), recordings.end(), r->parentId);
    if (rec == recordings.end())
      return core::Error("the replay \"" + r->title.toStdString() + "\" needs its recording in the report");
    plan.replays.push_back({r->model, static_cast<size_t>(rec - recordings.begin()), r->replayRequest});
  }
  if (options.range) {
    // The view's 0 is run A's origin (its start, or its marker when aligned at
    // markers); the report, like `--from/--to`, counts from each run's start.
    const Run* a = runs.run(recordings.front());
    const int64_t shift = (a->render ? a->render->origin : a->model->firstTs) - a->model->firstTs;
    const int64_t from = std::max<int64_t>(0, options.range->first + shift);
    const int64_t to = options.range->second + shift;
    if (to <= from) return core::Error("the selected range is empty or lies before the start of " + a->title.toStdString());
    plan.spec.fromNs = from;
    plan.spec.toNs = to;
  }
  return plan;
}

core::Status runExport(const ExportPlan& plan, const std::function<void(double)>& progress, std::stop_token stop) {
  report::ReportSpec spec = plan.spec;
  const size_t n = plan.replays.size();
  // Replays are re-made: the GUI kept the models, not the validation blocks; a
  // replay is deterministic, so this is the model the window shows.
  const double replayShare = n ? 0.4 : 0.0;
  for (size_t i = 0; i < n; ++i) {
    if (stop.stop_requested()) return core::Error("report cancelled");
    const auto& p = plan.replays[i];
    if (!p.request) {
      report::ReportReplay rr;
      rr.model = p.model;
      rr.recording = p.recording;
      spec.replays.push_back(std::move(rr));
      continue;
    }
    std::vector<std::string> params;
    for (const auto& [k, v] : p.request->params) params.push_back(k + "=" + v);
    auto made = report::makeReplay(spec.runs[p.recording].model, p.recording, p.request->model, params,
                                   p.request->topology, stop, true);
    if (!made) return core::Error("replay through " + p.request->model + ": " + made.error().message());
    spec.replays.push_back(std::move(*made));
    if (progress) progress(replayShare * static_cast<double>(i + 1) / static_cast<double>(n));
  }
  auto sub = [&](double f) {
    if (progress) progress(replayShare + (1.0 - replayShare) * f);
  };
  return report::writeReport(spec, plan.path, plan.format, sub, stop);
}

QString equivalentCommand(const RunSet& runs, const ExportOptions& options) {
  auto plan = planExport(runs, options);
  if (!plan) return {};
  QStringList args{QStringLiteral("schedlab-cli"), QStringLiteral("report")};
  for (const auto& r : plan->spec.runs)
    args << quoted(r.model->sourceFiles.empty() ? QStringLiteral("?") : QString::fromStdString(r.model->sourceFiles.front()));
  for (const auto& p : plan->replays) {
    if (!p.request || p.recording != 0) return {};  // the CLI replays A only
    args << QStringLiteral("--replay") << QString::fromStdString(p.request->model);
    for (const auto& [k, v] : p.request->params)
      args << QStringLiteral("--param") << quoted(QString::fromStdString(p.request->model + "." + k + "=" + v));
    if (p.request->topology) return {};  // the CLI's --topology applies to the imports too
  }
  if (plan->spec.fromNs) args << QStringLiteral("--from") << QStringLiteral("%1ns").arg(*plan->spec.fromNs);
  if (plan->spec.toNs) args << QStringLiteral("--to") << QStringLiteral("%1ns").arg(*plan->spec.toNs);
  if (options.format == report::ReportFormat::Pdf && options.page == report::PageSize::Letter)
    args << QStringLiteral("--page") << QStringLiteral("letter");
  args << QStringLiteral("--format") << report::formatName(options.format) << QStringLiteral("-o") << quoted(options.path);
  return args.join(QLatin1Char(' '));
}

}  // namespace app::gui
