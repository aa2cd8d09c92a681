// `schedlab-cli report A [B]`: a PDF (or HTML, JSON, CSV) report of one run, or
// of two runs compared, with replays of A through scheduler models. The content
// comes from app/report, the same library the GUI's Export report… uses.
#include <ostream>

#include "app/cli/cli.h"
#include "app/cli/drawing_commands.h"

#ifdef SCHEDLAB_HAVE_REPORT
#include <QFileInfo>

#include "app/cli/offscreen_gui.h"
#include "app/report/report.h"
#include "replay/policies/registry.h"
#endif

namespace app::cli {

namespace {
constexpr const char* kReportUsage =
    "usage: schedlab-cli report A [B] -o REPORT.pdf [--format pdf|html|json|csv] [--replay MODEL]...\n"
    "                          [--param [MODEL.]KEY=VALUE]... [--from T] [--to T] [--page a4|letter]\n"
    "                          [--topology CxT | --topology-from DIR] [--top N] [--title TEXT]\n"
    "A report of one recorded run, or of two runs of a workload compared (B against A): title page\n"
    "(runs, machines and kernels where the trace says, spans), summary with the headline changes,\n"
    "per-task table, fairness (Jain, GPS lag), wakeup-latency and scheduling-delay CDFs, per-CPU\n"
    "utilisation, SMT and forced idle where they apply, timelines (whole range and the busiest\n"
    "window), the task-by-task diff, and for each --replay MODEL the replay of A through that model\n"
    "with every parameter and the validation block.\n"
    "  -o FILE            output; the format follows the extension unless --format is given\n"
    "  --format F         pdf (vector, text searchable), html (one self-contained page with PNG figures),\n"
    "                     json (the stats/diff schemas plus replay blocks), csv (per-task rows of every run)\n"
    "  --replay MODEL     replay A through MODEL (repeatable; models: `schedlab-cli replay --help`)\n"
    "  --param K=V        a replay parameter for every model that has K; MODEL.K=V for one model\n"
    "  --from/--to T      analysed range, relative to each run's start (see `stats --help`)\n"
    "  --page a4|letter   PDF page size (default a4)\n"
    "  --top N            rows of the per-task tables (default 20)\n"
    "PDF and HTML are drawn offscreen; no display is needed.\n";

}  // namespace

int reportCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  std::string error;
  auto args = Args::parse(argv,
                          {"-o", "--output", "--format", "--replay", "--param", "--from", "--to", "--page",
                           "--topology", "--topology-from", "--top", "--title"},
                          {"--help", "--quiet"}, error);
  if (!args || args->flag("--help") || args->positional().empty() || args->positional().size() > 2 ||
      (!args->has("-o") && !args->has("--output"))) {
    const bool help = args && args->flag("--help");
    std::string why;
    if (!args) why = error;
    else if (!help && args->positional().empty()) why = "expected one or two runs";
    else if (!help && args->positional().size() > 2) why = "at most two runs (A and B); replays come from --replay";
    else if (!help) why = "-o FILE is required";
    (help ? out : err) << (why.empty() ? std::string() : "schedlab-cli report: " + why + "\n") << kReportUsage;
    return help ? kExitOk : kExitUsage;
  }
#ifndef SCHEDLAB_HAVE_REPORT
  (void)out;
  err << "schedlab-cli report: this build has no report generator (configure with -DSCHEDLAB_ENABLE_GUI=ON)\n";
  return kExitFailure;
#else
  const std::string outPath = args->value("-o").value_or(args->value("--output").value_or(""));
  std::optional<report::ReportFormat> format;
  if (auto f = args->value("--format")) {
    format = report::formatFromName(*f);
    if (!format) {
      err << "schedlab-cli report: unknown --format '" << *f << "' (pdf, html, json, csv)\n";
      return kExitUsage;
    }
  } else {
    format = report::formatFromPath(outPath);
    if (!format) {
      err << "schedlab-cli report: cannot tell the format from '" << outPath
          << "'; name it .pdf, .html, .json or .csv, or give --format\n";
      return kExitUsage;
    }
  }
  report::ReportSpec spec;
  if (auto page = args->value("--page")) {
    if (*page == "a4" || *page == "A4") spec.page = report::PageSize::A4;
    else if (*page == "letter" || *page == "Letter") spec.page = report::PageSize::Letter;
    else {
      err << "schedlab-cli report: --page must be a4 or letter\n";
      return kExitUsage;
    }
  }
  if (auto top = args->value("--top")) {
    const int n = std::atoi(top->c_str());
    if (n < 1 || n > 10000) {
      err << "schedlab-cli report: --top must be between 1 and 10000\n";
      return kExitUsage;
    }
    spec.topTasks = static_cast<size_t>(n);
  }
  if (auto title = args->value("--title")) spec.title = QString::fromStdString(*title);

  // Check the models and parameters before the (slow) imports.
  const std::vector<std::string> models = args->values("--replay");
  for (const auto& m : models)
    if (auto parsed = replay::parseModel(replay::resolveBaseline(m, "")); !parsed) {  // baseline: as `replay` checks it
      err << "schedlab-cli report: " << parsed.error().message() << "\n";
      return kExitUsage;
    }
  const std::vector<std::string> params = args->values("--param");
  if (!params.empty() && models.empty()) {
    err << "schedlab-cli report: --param needs a --replay MODEL\n";
    return kExitUsage;
  }
  for (const auto& p : params)
    if (p.find('=') == std::string::npos || !report::paramKnownToAny(p, models)) {
      err << "schedlab-cli report: --param " << p << ": no model of this report has that parameter (see "
          << "`schedlab-cli replay --model MODEL --help`)\n";
      return kExitUsage;
    }

  // PDF and HTML paint through QtGui: a QGuiApplication, offscreen unless the caller chose a platform.
  const auto app = makeOffscreenGuiApp();

  bool failed = false;
  for (const auto& path : args->positional()) {
    auto model = loadTrace(path, *args, err, failed);
    if (!model) return kExitFailure;
    spec.runs.push_back({model, {}});
  }
  const int64_t firstA = spec.runs.front().model->firstTs;
  if (auto f = args->value("--from")) {
    spec.fromNs = relativeTime(*f, firstA);
    if (!spec.fromNs) {
      err << "schedlab-cli report: cannot read time '" << *f << "'\n";
      return kExitUsage;
    }
  }
  if (auto t = args->value("--to")) {
    spec.toNs = relativeTime(*t, firstA);
    if (!spec.toNs) {
      err << "schedlab-cli report: cannot read time '" << *t << "'\n";
      return kExitUsage;
    }
  }
  std::optional<core::Topology> topology;
  if (args->has("--topology") || args->has("--topology-from")) topology = spec.runs.front().model->topology;
  for (const auto& m : models) {
    auto replayed = report::makeReplay(spec.runs.front().model, 0, m, params, topology);
    if (!replayed) {
      err << "schedlab-cli report: replay through " << m << ": " << replayed.error().message() << "\n";
      return kExitFailure;
    }
    spec.replays.push_back(std::move(*replayed));
  }
  const QString qpath = QString::fromStdString(outPath);
  auto status = report::writeReport(spec, qpath, *format);
  if (!status) {
    err << "schedlab-cli report: " << status.message() << "\n";
    return kExitFailure;
  }
  if (!args->flag("--quiet"))
    out << "wrote " << outPath << " (" << QFileInfo(qpath).size() << " bytes)\n";
  return failed ? kExitFailure : kExitOk;
#endif
}

}  // namespace app::cli
