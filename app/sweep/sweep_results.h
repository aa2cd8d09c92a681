// The results of a sweep as one table: per job its state and the metrics a
// sweep compares (read from its `replay --json` document), the fidelity
// verdict of each trace's reference replay, and the best and worst settings
// per trace and over all traces. Read by `schedlab-cli sweep-report` (through
// app/report) and the GUI's sweep view. No Qt.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "app/sweep/sweep_plan.h"
#include "core/result.h"

namespace app::sweep {

enum class Metric : uint8_t { Makespan, LatencyP50, LatencyP99, Jain, ForcedIdle, Energy };
inline constexpr size_t kMetricCount = 6;

struct MetricInfo {
  Metric metric;
  const char* key;    ///< CSV/JSON column: "makespan_ns"
  const char* label;  ///< "makespan"
  bool higherIsBetter;
  bool nanoseconds;   ///< a time (else an index or joules)
};
const std::array<MetricInfo, kMetricCount>& metricInfos();
const MetricInfo& info(Metric metric);

struct JobResult {
  Job job;
  JobState state = JobState::Pending;
  std::string error;          ///< failed: what the replay said; done: why the document could not be read
  std::string resolvedModel;  ///< the model that ran: "eevdf" for baseline on a 6.18 recording
  std::string verdict;        ///< this replay's own fidelity against its recording: "pass", "fail" or ""
  std::array<std::optional<double>, kMetricCount> values;  ///< energy only for +uclamp models
  std::optional<double> value(Metric m) const { return values[static_cast<size_t>(m)]; }
};

/// The best and worst job of a set for one metric; none when no job has the
/// metric, `tied` when every job has the same value (then naming one would mislead).
struct Extremes {
  std::optional<size_t> best, worst;  ///< indexes into SweepResults::jobs
  bool tied = false;
  /// Other jobs with the best (worst) value: the one named is the first of them.
  size_t othersAsBest = 0, othersAsWorst = 0;
};

/// One setting (model and parameters) over every trace it ran on.
struct SettingScore {
  std::string setting;   ///< Job::settingKey()
  std::string model;
  std::string settings;  ///< Job::settingsText()
  double mean = 0;       ///< of the metric over the traces
  /// Mean over the traces of the metric relative to that trace's reference
  /// replay (1 = as the baseline at its defaults); only when every trace's
  /// reference has a value other than 0.
  std::optional<double> relative;
  size_t traces = 0;
  double score() const { return relative ? *relative : mean; }
};

struct MetricSummary {
  Metric metric;
  std::vector<std::pair<std::string, Extremes>> perTrace;  ///< trace path, its extremes
  /// Settings that ran (done) on every trace of the sweep, best first.
  std::vector<SettingScore> overall;
  bool relative = false;  ///< the overall scores are relative to the references
};

struct SweepResults {
  std::string dir;
  std::vector<JobResult> jobs;  ///< the manifest's order
  std::vector<std::string> traces;  ///< in the manifest's order
  std::vector<std::string> paramKeys;  ///< every key any job sets, in order of appearance
  size_t done = 0, failed = 0, pending = 0;

  /// The fidelity verdict of the trace's reference replay: "pass", "fail", or
  /// "" when the sweep has none done for it.
  std::string referenceVerdict(const std::string& trace) const;
  const JobResult* reference(const std::string& trace) const;
  /// Per metric that any done job has: best and worst per trace and overall.
  std::vector<MetricSummary> summaries() const;
};

/// Reads RESULTS/: the manifest and every job's result or error. Errors: no
/// manifest. A result that does not parse is a failed job saying why.
core::Result<SweepResults> readResults(const std::string& dir);

}  // namespace app::sweep
