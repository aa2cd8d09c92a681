// Reports of one or two recorded runs and their replays, over the whole trace or
// a range: vector PDF, self-contained HTML, JSON (stats/diff schemas plus replay
// blocks) or CSV. Called by `schedlab-cli report` and the GUI's File → Export
// report…, which get the same content from the same ReportSpec.
#pragma once

#include <QDateTime>
#include <QString>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/topology.h"
#include "core/trace_model.h"
#include "replay/replay.h"

namespace app::report {

/// A recorded run as it appears in the report.
struct ReportRecording {
  std::shared_ptr<const core::TraceModel> model;
  QString label;  ///< empty: the file name
};

/// A replay of one of the recordings. The parameters (key, value, doc) come
/// from model->replay; the validation block is shown when present. A caller
/// that kept only the replayed model (the GUI's run list) can get the block
/// back with makeReplay() and the model's own parameters: replays are
/// deterministic, so the model is the same one.
struct ReportReplay {
  std::shared_ptr<const core::TraceModel> model;
  std::optional<replay::Validation> validation;
  size_t workloadTasks = 0;
  size_t recording = 0;  ///< index into ReportSpec::runs of the recording it replays
  QString label;         ///< empty: "replay: MODEL"
};

enum class PageSize { A4, Letter };
enum class ReportFormat { Pdf, Html, Json, Csv };

struct ReportSpec {
  std::vector<ReportRecording> runs;  ///< one or two; with two, the report compares them (A then B)
  std::vector<ReportReplay> replays;
  /// Analysed range, relative to each run's start (a replay uses its recording's start). Default: whole runs.
  std::optional<int64_t> fromNs;
  std::optional<int64_t> toNs;
  PageSize page = PageSize::A4;
  size_t topTasks = 20;    ///< rows of the per-task tables
  size_t topDiffTasks = 30;  ///< rows of the diff's task table
  QString title;           ///< empty: derived from the runs
  QDateTime date;          ///< invalid: now
};

using ProgressFn = std::function<void(double fraction)>;

/// "pdf", "html" (or "htm"), "json", "csv"; nullopt otherwise.
std::optional<ReportFormat> formatFromName(std::string_view name);
/// "pdf", "html", "json", "csv": the --format name and the file extension.
QString formatName(ReportFormat format);
/// From the file name's extension; nullopt when it names no format.
std::optional<ReportFormat> formatFromPath(std::string_view path);

/// Writes the report. Errors: no run, more than two recordings, a replay of a
/// missing recording, an empty range, cancellation, an unwritable file (named).
/// PDF and HTML painting needs a QGuiApplication (the offscreen platform will do).
core::Status writeReport(const ReportSpec& spec, const QString& path, ReportFormat format,
                         const ProgressFn& progress = {}, std::stop_token stop = {});

/// Replays `recording` (index `recordingIndex` of the spec) through `model` with
/// "key=value" overrides, as `schedlab-cli replay` does, keeping the validation
/// block. Overrides of the form "model.key=value" apply only to that model;
/// plain "key=value" ones are dropped for models that lack the key (set
/// `strict` to make that an error). Errors: unknown model, bad parameter,
/// a recording without replayable tasks, cancellation.
core::Result<ReportReplay> makeReplay(const std::shared_ptr<const core::TraceModel>& recording, size_t recordingIndex,
                                      const std::string& model, const std::vector<std::string>& params,
                                      const std::optional<core::Topology>& topology, std::stop_token stop = {},
                                      bool strict = false);

/// True when `key` (of "key=value" or "model.key=value") names a parameter of at least one of `models`.
bool paramKnownToAny(const std::string& assignment, const std::vector<std::string>& models);

}  // namespace app::report
