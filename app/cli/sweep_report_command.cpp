// `schedlab-cli sweep-report RESULTS/ -o OUT`: the report of a sweep's results
// (app/report/sweep_report.h): every job, the best and worst settings, charts.
#include <ostream>

#include "app/cli/cli.h"
#include "app/cli/drawing_commands.h"

#ifdef SCHEDLAB_HAVE_REPORT
#include <QFileInfo>

#include "app/cli/offscreen_gui.h"
#include "app/report/sweep_report.h"
#endif

namespace app::cli {

namespace {
constexpr const char* kSweepReportUsage =
    "usage: schedlab-cli sweep-report RESULTS/ -o REPORT.pdf|.html|.csv|.json [--format F] [--page a4|letter]\n"
    "The results of `schedlab-cli sweep` as one report: a row per job (trace, model, parameters ->\n"
    "makespan, wakeup latency p50/p99, Jain's index, forced idle, energy, the replay's fidelity and the\n"
    "trace's baseline fidelity verdict), the best and worst settings per trace and over all traces,\n"
    "and charts of each metric against each swept parameter, per model. Jobs not run yet or failed\n"
    "are listed as such.\n"
    "  -o FILE     output; the format follows the extension unless --format is given\n"
    "  --format F  pdf, html, csv (one row per job, a column per parameter) or json\n";
}  // namespace

int sweepReportCommand(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  std::string error;
  auto args = Args::parse(argv, {"-o", "--output", "--format", "--page"}, {"--help"}, error);
  if (!args || args->flag("--help") || args->positional().size() != 1 || (!args->has("-o") && !args->has("--output"))) {
    const bool help = args && args->flag("--help");
    std::string why;
    if (!args) why = error;
    else if (!help && args->positional().size() != 1) why = "expected one RESULTS/ folder";
    else if (!help) why = "-o FILE is required";
    (help ? out : err) << (why.empty() ? std::string() : "schedlab-cli sweep-report: " + why + "\n")
                       << kSweepReportUsage;
    return help ? kExitOk : kExitUsage;
  }
#ifndef SCHEDLAB_HAVE_REPORT
  (void)out;
  err << "schedlab-cli sweep-report: this build has no report generator (configure with -DSCHEDLAB_ENABLE_GUI=ON)\n";
  return kExitFailure;
#else
  const std::string outPath = args->value("-o").value_or(args->value("--output").value_or(""));
  const auto format = args->value("--format") ? report::formatFromName(*args->value("--format"))
                                              : report::formatFromPath(outPath);
  if (!format) {
    err << "schedlab-cli sweep-report: name the output .pdf, .html, .csv or .json, or give --format with one of them\n";
    return kExitUsage;
  }
  report::PageSize page = report::PageSize::A4;
  if (auto p = args->value("--page")) {
    if (*p == "letter" || *p == "Letter") page = report::PageSize::Letter;
    else if (*p != "a4" && *p != "A4") {
      err << "schedlab-cli sweep-report: --page must be a4 or letter\n";
      return kExitUsage;
    }
  }
  auto results = sweep::readResults(args->positional()[0]);
  if (!results) {
    err << "schedlab-cli sweep-report: " << results.error().message() << "\n";
    return kExitFailure;
  }
  const auto app = makeOffscreenGuiApp();
  const QString qpath = QString::fromStdString(outPath);
  if (auto st = report::writeSweepReport(*results, qpath, *format, page); !st) {
    err << "schedlab-cli sweep-report: " << st.message() << "\n";
    return kExitFailure;
  }
  out << "wrote " << outPath << " (" << QFileInfo(qpath).size() << " bytes): " << results->jobs.size() << " jobs, "
      << results->done << " done, " << results->failed << " failed, " << results->pending << " not run\n";
  return kExitOk;
#endif
}

}  // namespace app::cli
