// What a report is made of, computed once from a ReportSpec: every run
// (recordings, then replays) with its statistics over the range, the diff of
// the two recordings and of each replay against its recording. The document
// builder and the JSON/CSV writers read only this. Internal to app/report.
#pragma once

#include <QColor>
#include <QDateTime>
#include <QString>
#include <memory>
#include <optional>
#include <vector>

#include "app/report/report.h"
#include "app/report/report_document.h"
#include "core/analysis/diff.h"
#include "core/analysis/stats.h"
#include "core/analysis/why.h"

namespace app::report {

/// Tasks per run in the report's "Why tasks waited" section.
inline constexpr size_t kReportWhyTasks = 5;

struct RunEntry {
  QString label;  ///< file name, or "replay: cfs"
  QString tag;    ///< short column header: "A", "B", "cfs"
  QColor color;
  std::shared_ptr<const core::TraceModel> model;
  core::analysis::RunStats stats;
  std::vector<core::analysis::WhyReport> why;  ///< the tasks that waited longest (explainTopWaiters)
  int64_t origin = 0;  ///< absolute time of relative 0 (a replay: its recording's start)
  const ReportReplay* replay = nullptr;  ///< points into ReportData::spec
  size_t recording = 0;                  ///< for a replay: index of its recording in runs
  bool isReplay() const { return replay != nullptr; }
};

struct ReportData {
  ReportSpec spec;
  std::vector<RunEntry> runs;  ///< recordings first (A, B), then replays
  size_t recordings = 0;
  std::optional<core::analysis::RunDiff> diff;  ///< A vs B
  std::vector<core::analysis::RunDiff> replayDiffs;  ///< per replay: its recording vs the replay
  QDateTime date;
  QString title;
};

/// Errors: no run, more than two recordings, a replay of a missing recording,
/// an empty or inverted range, cancellation.
core::Result<std::shared_ptr<const ReportData>> computeReportData(const ReportSpec& spec, const ProgressFn& progress,
                                                                  std::stop_token stop);

/// The document every visual format shows. `data` must outlive it (figures paint from it).
Document buildDocument(const std::shared_ptr<const ReportData>& data);

core::Status writePdf(const Document& doc, const QString& path, PageSize page, const ProgressFn& progress,
                      std::stop_token stop);
core::Status writeHtml(const Document& doc, const QString& path, const ProgressFn& progress, std::stop_token stop);
std::string reportJson(const ReportData& data);
std::string reportCsv(const ReportData& data);
/// A CSV field, quoted when it holds a comma, a quote or a newline.
std::string csvField(const std::string& s);
/// JSON and CSV reports: the whole text or an error naming the file.
core::Status writeTextFile(const QString& path, const std::string& text);

}  // namespace app::report
