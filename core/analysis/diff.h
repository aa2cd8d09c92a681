// Diff of two runs (two recordings, or a recording and a replay): tasks matched
// by comm within process (tids differ between runs), aggregated where a run has
// several tasks of one name; every metric with absolute and relative change;
// distributions compared by Kolmogorov–Smirnov distance. Used by `schedlab-cli
// diff`, the GUI's Diff tab and the reports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/stats.h"

namespace core::analysis {

/// A named scalar metric of a task group or a run, with its change.
struct MetricDelta {
  std::string name;
  double a = 0;
  double b = 0;
  double delta() const { return b - a; }
  /// (b - a) / a; nullopt when a is 0.
  std::optional<double> relative() const;
};

struct TaskDiff {
  std::string process;  ///< process name (leader's comm), or the comm when the process is unknown
  std::string comm;
  size_t tasksA = 0;  ///< how many task identities were aggregated on each side
  size_t tasksB = 0;
  std::optional<TaskStats> a;
  std::optional<TaskStats> b;
  std::vector<MetricDelta> metrics;
  double wakeupLatencyKs = 0;  ///< KS distance of the wakeup-latency distributions (0 if either is empty)
  double schedDelayKs = 0;
};

struct RunSummary {
  std::string label;
  int64_t spanNs = 0;
  int cpus = 0;
  RunStats stats;
};

struct RunDiff {
  RunSummary a;
  RunSummary b;
  std::vector<TaskDiff> tasks;        ///< sorted by |runtime change|, largest first
  std::vector<MetricDelta> summary;   ///< run-level metrics
  std::vector<MetricDelta> cpus;      ///< per-CPU utilisation ("cpu3 utilisation") and switches
  /// Per-CPU time-weighted mean frequency ("cpu3 mean_freq_mhz") where either
  /// run knows it: a recording's cpu_frequency beside a +uclamp replay's.
  std::vector<MetricDelta> frequencies;
  double wakeupLatencyKs = 0;
  double schedDelayKs = 0;
};

/// sup_x |F_a(x) - F_b(x)| over two sorted samples.
double ksDistance(const std::vector<int64_t>& sortedA, const std::vector<int64_t>& sortedB);

/// Sums a group of tasks (distributions merged).
TaskStats sumTasks(const std::vector<const TaskStats*>& tasks);

RunDiff diffRuns(const TraceModel& a, const RunStats& statsA, std::string labelA, const TraceModel& b,
                 const RunStats& statsB, std::string labelB);

// --- What counts as a significant change (one rule for the GUI's Diff tab and the reports) ---

/// How a metric's change is judged.
enum class MetricKind { Time, Latency, Share, Count, Index };

/// A change from a to b is significant when it is both large relative to A
/// (|b - a| >= 20% of |a|, or a is 0) and above the metric's noise floor:
/// - Time (runtime, wait, busy, lag): max(1 ms, 1% of the analysed range);
/// - Latency (mean, p99): 20 us, and at least 20 samples on each side;
/// - Share (CPU share, utilisation, involuntary fraction): 3 percentage points;
/// - Count (switches, migrations, tasks): 10;
/// - Index (Jain's fairness index): 0.05.
bool isSignificant(MetricKind kind, double a, double b, int64_t rangeNs, uint64_t samplesA = UINT64_MAX,
                   uint64_t samplesB = UINT64_MAX);
/// The two distributions differ at the 1% level by the two-sample KS test
/// (D > 1.63 * sqrt((n + m) / (n m))) and by at least 0.1; n, m >= 20.
bool ksSignificant(double distance, uint64_t n, uint64_t m);

/// The per-task metrics the diff views show and judge, by their names in TaskDiff::metrics.
struct TaskMetricSpec {
  const char* key;
  const char* label;
  MetricKind kind;
};
const std::vector<TaskMetricSpec>& diffTaskMetrics();
/// The range the floors scale with: the longer of the two analysed ranges.
int64_t diffRangeNs(const RunDiff& diff);
/// One metric of a task group; a task of one run only is judged by its runtime alone.
bool taskMetricSignificant(const TaskDiff& task, const TaskMetricSpec& metric, int64_t rangeNs);
/// The wakeup-latency distributions of a task group differ (ksSignificant).
bool taskLatencyShapeSignificant(const TaskDiff& task);
/// Any of the above.
bool taskSignificant(const TaskDiff& task, int64_t rangeNs);

}  // namespace core::analysis
