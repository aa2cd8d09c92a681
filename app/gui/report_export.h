// File → Export report…: turns the runs chosen in the window (one or two
// recordings and replays of them, the selected range or the whole runs) into
// the app/report ReportSpec that `schedlab-cli report` builds from its
// arguments, and writes it with the same writeReport(). planExport() runs on
// the GUI thread; runExport() on a worker (replays are made again through
// report::makeReplay with the request that made them, for the validation block).
#pragma once

#include <QString>
#include <functional>
#include <optional>
#include <stop_token>
#include <vector>

#include "app/gui/run_set.h"
#include "app/report/report.h"
#include "core/result.h"

namespace app::gui {

struct ExportOptions {
  QString path;
  report::ReportFormat format = report::ReportFormat::Pdf;
  report::PageSize page = report::PageSize::A4;
  std::vector<int> runIds;  ///< recordings (A then B) and replays of them, in any order
  /// Range relative to the view's 0 (TimelineViewState's selection); nullopt: whole runs.
  std::optional<std::pair<int64_t, int64_t>> range;
};

/// A copy of what the worker needs, independent of the RunSet.
struct ExportPlan {
  QString path;
  report::ReportFormat format = report::ReportFormat::Pdf;
  report::ReportSpec spec;  ///< runs and range filled; replays come from `replays`
  struct PlannedReplay {
    std::shared_ptr<const core::TraceModel> model;  ///< the replay as shown (used when it cannot be made again)
    size_t recording = 0;
    std::optional<ReplayRequest> request;
  };
  std::vector<PlannedReplay> replays;
};

/// Errors: no recording chosen, more than two, a replay whose recording is not
/// in the report, an empty range. Recordings keep the order the window lists them.
core::Result<ExportPlan> planExport(const RunSet& runs, const ExportOptions& options);

/// Makes the replays again (report::makeReplay, as `--replay MODEL --param K=V`
/// does) and writes the report through report::writeReport. Errors: a replay or
/// the writer failed (message names which), cancellation.
core::Status runExport(const ExportPlan& plan, const std::function<void(double)>& progress, std::stop_token stop);

/// The `schedlab-cli report` command line that writes the same report.
QString equivalentCommand(const RunSet& runs, const ExportOptions& options);

}  // namespace app::gui
